// sampling/rng.h — the sampler's random numbers, identical on every platform.
// Owns: xoshiro256** (Blackman & Vigna) seeded through splitmix64, and the conversion of its
// output to a double in [0, 1). Nothing here uses <random>: std:: distributions differ between
// standard libraries. Must not touch: probabilities (sampler.cpp).
#pragma once

#include <cstdint>

namespace strata::sampling {

class Rng {
public:
    explicit Rng(uint64_t seed) { reseed(seed); }

    // The four state words are consecutive splitmix64 outputs of the seed, as the xoshiro
    // authors recommend (a zero state is then impossible).
    void reseed(uint64_t seed) {
        for (uint64_t& word : s_) {
            seed += 0x9e3779b97f4a7c15ull;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            word = z ^ (z >> 31);
        }
    }

    // Sets the raw state (for known-answer tests of the generator itself).
    void set_state(uint64_t a, uint64_t b, uint64_t c, uint64_t d) { s_[0] = a, s_[1] = b, s_[2] = c, s_[3] = d; }

    uint64_t next() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // The top 53 bits as a double in [0, 1): exact, so the same on every IEEE-754 machine.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t s_[4];
};

}  // namespace strata::sampling
