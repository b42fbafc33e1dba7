// tests/unit/kernels_test.cpp — the kernels of lib/kernels/ on every ISA this CPU has:
// gemm against the scalar reference and against a float64 dot of the dequantized
// operands, activation conversion bit-identical to tensor/quantize.h, the vector ops
// against the scalar ones, and the thread pool.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "kernels/gemm_routes.h"
#include "kernels/kernels.h"
#include "kernels/threadpool.h"
#include "tensor/blocks.h"
#include "tensor/dot_ref.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"
#include "tensor/repack.h"
#include "test_isa.h"

namespace k = strata::kernels;
using strata::DType;
using strata::test::supported_isas;
using strata::test::UseIsa;

namespace {

const std::vector<DType> kWeightTypes = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                                         DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                                         DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS,
                                         DType::Q4_K_R, DType::Q4_K_R8, DType::Q5_K_R8, DType::Q6_K_R8, DType::IQ4_XS_R8,
                                         DType::Q8_0_R8, DType::Q4_0_R8, DType::IQ4_NL_R8,
                                         DType::MXFP4, DType::IQ1_S, DType::IQ1_M, DType::IQ2_XXS, DType::IQ2_XS,
                                         DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S};

// The weight types whose products are tensor/dot_ref.h's references (scalar_dot.cpp).
const std::vector<DType> kDotRefTypes = {DType::MXFP4, DType::IQ1_S, DType::IQ1_M, DType::IQ2_XXS,
                                         DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S};

bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }
int64_t block_elems(DType t) { return strata::dtype_info(t).block_elems; }
size_t row_bytes(DType t, int64_t n) { return strata::dtype_bytes(t, n); }

std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.0f) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

uint16_t random_scale(std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> mag(lo, hi);
    const float s = (rng() & 1) ? -mag(rng) : mag(rng);
    return strata::fp32_to_fp16(s);
}

// A row of k weights of type w: random quant bits with random (finite) block scales, so
// every bit pattern of the format is exercised, not only what a quantizer would produce.
// A quantized row's bytes are random, or all `fill` (the scale fields stay random).
void random_weight_row(DType w, uint8_t* row, int64_t k, std::mt19937& rng, std::optional<uint8_t> fill = std::nullopt) {
    if (is_float(w)) {
        const std::vector<float> v = random_floats(rng, k);
        if (w == DType::F32) std::memcpy(row, v.data(), k * sizeof(float));
        else strata::quantize_row(w, v.data(), row, k);
        return;
    }
    for (size_t i = 0; i < row_bytes(w, k); ++i) row[i] = fill ? *fill : static_cast<uint8_t>(rng());
    const int64_t nb = k / block_elems(w);
    auto each = [&](auto* blocks, auto set) {
        for (int64_t b = 0; b < nb; ++b) set(blocks[b]);
    };
    using namespace strata;
    switch (w) {
        case DType::Q4_0: each(reinterpret_cast<BlockQ4_0*>(row), [&](BlockQ4_0& b) { b.d = random_scale(rng, 1e-3f, 2e-2f); }); break;
        case DType::Q5_0: each(reinterpret_cast<BlockQ5_0*>(row), [&](BlockQ5_0& b) { b.d = random_scale(rng, 1e-3f, 2e-2f); }); break;
        case DType::Q8_0: each(reinterpret_cast<BlockQ8_0*>(row), [&](BlockQ8_0& b) { b.d = random_scale(rng, 1e-4f, 2e-3f); }); break;
        case DType::Q4_1: each(reinterpret_cast<BlockQ4_1*>(row), [&](BlockQ4_1& b) {
            b.d = random_scale(rng, 1e-3f, 2e-2f);
            b.m = random_scale(rng, 1e-3f, 1e-1f);
        }); break;
        case DType::Q5_1: each(reinterpret_cast<BlockQ5_1*>(row), [&](BlockQ5_1& b) {
            b.d = random_scale(rng, 1e-3f, 2e-2f);
            b.m = random_scale(rng, 1e-3f, 1e-1f);
        }); break;
        case DType::Q2_K: each(reinterpret_cast<BlockQ2_K*>(row), [&](BlockQ2_K& b) {
            b.d = random_scale(rng, 1e-3f, 2e-2f);
            b.dmin = random_scale(rng, 1e-3f, 2e-2f);
        }); break;
        case DType::Q3_K: each(reinterpret_cast<BlockQ3_K*>(row), [&](BlockQ3_K& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::Q4_K: each(reinterpret_cast<BlockQ4_K*>(row), [&](BlockQ4_K& b) {
            b.d = random_scale(rng, 1e-4f, 1e-3f);
            b.dmin = random_scale(rng, 1e-4f, 1e-3f);
        }); break;
        case DType::Q5_K: each(reinterpret_cast<BlockQ5_K*>(row), [&](BlockQ5_K& b) {
            b.d = random_scale(rng, 1e-4f, 1e-3f);
            b.dmin = random_scale(rng, 1e-4f, 1e-3f);
        }); break;
        case DType::Q6_K: each(reinterpret_cast<BlockQ6_K*>(row), [&](BlockQ6_K& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::IQ4_NL: each(reinterpret_cast<BlockIQ4_NL*>(row), [&](BlockIQ4_NL& b) { b.d = random_scale(rng, 1e-4f, 2e-3f); }); break;
        case DType::IQ4_XS: each(reinterpret_cast<BlockIQ4_XS*>(row), [&](BlockIQ4_XS& b) { b.d = random_scale(rng, 1e-5f, 1e-4f); }); break;
        case DType::MXFP4:  // E8M0 exponents 2^-12 .. 2^-3
            each(reinterpret_cast<BlockMXFP4*>(row), [&](BlockMXFP4& b) { b.e = static_cast<uint8_t>(115 + rng() % 10); }); break;
        case DType::IQ1_S: each(reinterpret_cast<BlockIQ1_S*>(row), [&](BlockIQ1_S& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::IQ1_M: each(reinterpret_cast<BlockIQ1_M*>(row), [&](BlockIQ1_M& b) {
            // The F16 scale is the top nibbles of the four 16-bit scale words.
            const uint16_t d = random_scale(rng, 1e-4f, 1e-3f);
            for (int i = 0; i < 4; ++i)
                b.scales[2 * i + 1] = static_cast<uint8_t>((b.scales[2 * i + 1] & 0x0F) | (((d >> (4 * i)) & 0xF) << 4));
        }); break;
        case DType::IQ2_XXS: each(reinterpret_cast<BlockIQ2_XXS*>(row), [&](BlockIQ2_XXS& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::IQ2_XS: each(reinterpret_cast<BlockIQ2_XS*>(row), [&](BlockIQ2_XS& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::IQ2_S: each(reinterpret_cast<BlockIQ2_S*>(row), [&](BlockIQ2_S& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::IQ3_XXS: each(reinterpret_cast<BlockIQ3_XXS*>(row), [&](BlockIQ3_XXS& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::IQ3_S: each(reinterpret_cast<BlockIQ3_S*>(row), [&](BlockIQ3_S& b) { b.d = random_scale(rng, 1e-4f, 1e-3f); }); break;
        case DType::Q4_K_R:  // a Q4_K row as the weights' loader rearranges it
            random_weight_row(DType::Q4_K, row, k, rng, fill);
            strata::rearrange(DType::Q4_K, DType::Q4_K_R, row, 1, row_bytes(DType::Q4_K, k));
            break;
        default: BOOST_FAIL("no random rows for " << strata::dtype_name(w));
    }
}

// One gemm problem: weights rows [0, r1 + 2) (rows outside [r0, r1) must not be read into
// Y), nt activation rows, all with strides larger than a row. The bytes between weight rows
// are 0xFF, NaN as F16 and F32, so that a kernel using bytes past a row's end (a masked load
// with the wrong mask) fails.
struct Problem {
    DType w;
    int64_t k, r0, r1, nt;
    size_t ldw, ldx, ldy;
    std::vector<uint8_t> W, X;

    // With `fill`, every quant byte of the weights is fill and every activation `level`
    // (so every quantized activation is +-127): the largest sums the kernels' integer
    // steps meet.
    Problem(DType w_, int64_t k_, int64_t r0_, int64_t r1_, int64_t nt_, std::mt19937& rng, std::optional<uint8_t> fill = std::nullopt,
            float level = 1.0f)
        : w(w_), k(k_), r0(r0_), r1(r1_), nt(nt_) {
        const DType at = k::activation_type(w);
        ldw = row_bytes(w, k) + 64;
        ldx = row_bytes(at, k) + 96;
        ldy = static_cast<size_t>(r1) + 5;
        if (strata::file_type_of_r8(w)) {
            r8_groups(rng, fill);
        } else {
            W.assign(ldw * (r1 + 2), 0xFF);
            for (int64_t r = 0; r < r1 + 2; ++r) random_weight_row(w, W.data() + r * ldw, k, rng, fill);
        }
        X.assign(ldx * nt, 0x5A);
        const UseIsa scalar(k::Isa::Scalar);
        for (int64_t t = 0; t < nt; ++t) {
            const std::vector<float> x = fill ? std::vector<float>(k, level) : random_floats(rng, k);
            k::convert_activations(at, x.data(), X.data() + t * ldx, k);
        }
    }

    // Y filled with a sentinel, then the product; entries outside [r0, r1) keep it.
    std::vector<float> run() const {
        std::vector<float> Y(ldy * nt, -12345.0f);
        k::gemm(w, k, W.data(), ldw, r0, r1, X.data(), ldx, nt, Y.data(), ldy);
        return Y;
    }

    std::vector<double> dequantized(DType t, const uint8_t* row) const {
        std::vector<float> f(k);
        strata::dequantize_row(t, row, f.data(), k);
        return {f.begin(), f.end()};
    }

    // Weight row r's values (a row of an 8-row layout taken back out of its group).
    std::vector<double> weight_row(int64_t r) const {
        const auto file = strata::file_type_of_r8(w);
        if (!file) return dequantized(w, W.data() + r * ldw);
        std::vector<uint8_t> row(row_bytes(*file, k));
        const int64_t g = r / strata::kR8Rows * strata::kR8Rows;
        strata::row_from_r8(w, W.data() + g * ldw, static_cast<int>(r - g), row.data(), k / block_elems(*file));
        return dequantized(*file, row.data());
    }

    // An 8-row layout: groups of 8 random rows of its file type as the weights' loader
    // rearranges them, each group's 8 rows of bytes followed by 8 strides' worth of 0xFF, up
    // to a whole group past row r1 + 1.
    void r8_groups(std::mt19937& rng, std::optional<uint8_t> fill) {
        constexpr int64_t G = strata::kR8Rows;
        const DType file = *strata::file_type_of_r8(w);
        const size_t rb = row_bytes(file, k);
        const int64_t groups = (r1 + 2 + G - 1) / G;
        W.assign(ldw * static_cast<size_t>(groups * G), 0xFF);
        std::vector<uint8_t> group(G * rb);
        for (int64_t g = 0; g < groups; ++g) {
            for (int64_t r = 0; r < G; ++r) random_weight_row(file, group.data() + r * rb, k, rng, fill);
            strata::rearrange(file, w, group.data(), G, rb);
            std::memcpy(W.data() + g * G * ldw, group.data(), group.size());
        }
    }
};

// Q4_1/Q5_1 against Q8_1: GGML takes the activation block's sum from its stored F16 field
// s (= d * sum q, rounded), so the min term is m * s, not m * sum(a). Returns the exact
// difference this makes to the float64 dot.
double stored_sum_correction(DType w, const uint8_t* wrow, const uint8_t* xrow, int64_t k) {
    if (w != DType::Q4_1 && w != DType::Q5_1) return 0;
    const size_t wbytes = strata::dtype_info(w).block_bytes;
    auto* a = reinterpret_cast<const strata::BlockQ8_1*>(xrow);
    double c = 0;
    for (int64_t b = 0; b < k / 32; ++b) {
        uint16_t m;  // Q4_1 and Q5_1 both start with the F16 fields d, m
        std::memcpy(&m, wrow + b * wbytes + 2, sizeof m);
        double block_sum = 0;
        for (int i = 0; i < 32; ++i) block_sum += static_cast<double>(strata::fp16_to_fp32(a[b].d)) * a[b].qs[i];
        c += strata::fp16_to_fp32(m) * (strata::fp16_to_fp32(a[b].s) - block_sum);
    }
    return c;
}

// Every float term of any summation order of a dot product (block products, mins, lane
// sums) is bounded by S = max|w| * sum|a|; a float32 sum of n such terms, each rounded a
// few times, errs by at most about (n + few) * 2^-24 * S. Sequential terms per lane: one
// per block for quantized types, k / 8 for float types (lanes of 8 or more). The bound is
// taken with a factor 4 of slack and 16 extra terms for the final reductions.
double tolerance(DType w, int64_t k, double S) {
    const int64_t terms = is_float(w) ? k / 8 : k / block_elems(w);
    return (static_cast<double>(terms) + 16.0) * std::ldexp(1.0, -22) * S;
}

void check_gemm(const Problem& p) {
    const DType at = k::activation_type(p.w);
    std::vector<std::vector<double>> wd, ad;
    for (int64_t r = p.r0; r < p.r1; ++r) wd.push_back(p.weight_row(r));
    for (int64_t t = 0; t < p.nt; ++t) ad.push_back(p.dequantized(at, p.X.data() + t * p.ldx));

    std::vector<float> ref;
    {
        const UseIsa scalar(k::Isa::Scalar);
        ref = p.run();
    }
    for (k::Isa isa : supported_isas()) {
        const UseIsa use(isa);
        const std::vector<float> Y = isa == k::Isa::Scalar ? ref : p.run();
        for (int64_t t = 0; t < p.nt; ++t) {
            for (size_t r = 0; r < p.ldy; ++r) {
                const float y = Y[t * p.ldy + r];
                const bool inside = static_cast<int64_t>(r) >= p.r0 && static_cast<int64_t>(r) < p.r1;
                if (!inside) {
                    BOOST_TEST_REQUIRE(y == -12345.0f, "row " << r << " outside the range was written");
                    continue;
                }
                const std::vector<double>& w = wd[r - p.r0];
                const std::vector<double>& a = ad[t];
                double exact = 0, wmax = 0, asum = 0;
                for (int64_t i = 0; i < p.k; ++i) {
                    exact += w[i] * a[i];
                    wmax = std::max(wmax, std::fabs(w[i]));
                    asum += std::fabs(a[i]);
                }
                exact += stored_sum_correction(p.w, p.W.data() + r * p.ldw, p.X.data() + t * p.ldx, p.k);
                const double tol = tolerance(p.w, p.k, wmax * asum);
                BOOST_TEST_CONTEXT(k::isa_name(isa) << " " << strata::dtype_name(p.w) << " k=" << p.k << " r=" << r
                                                    << " t=" << t << " nt=" << p.nt) {
                    BOOST_TEST(std::fabs(y - exact) <= tol, "vs float64: " << y << " vs " << exact << " tol " << tol);
                    const float s = ref[t * p.ldy + r];
                    BOOST_TEST(std::fabs(y - s) <= tol, "vs scalar: " << y << " vs " << s << " tol " << tol);
                }
            }
        }
    }
}

std::vector<int64_t> test_ks(DType w) {
    if (is_float(w)) return {1, 7, 31, 300, 4096};
    // 32-element blocks: 11 blocks are two of AVX-512's one-token quads and a part one.
    const int64_t b = block_elems(w);
    if (b == 32) return {b, 3 * b, 11 * b, 4096};
    return {b, 3 * b, 11 * b};
}

// Rows for the conversion tests: random rows at several magnitudes, then edge cases.
std::vector<std::vector<float>> conversion_rows(std::mt19937& rng) {
    const int64_t n = 256 * 5;
    std::vector<std::vector<float>> rows;
    for (float scale : {1e-4f, 1.0f, 3.0f, 1e3f}) rows.push_back(random_floats(rng, n, scale));
    // An all-zero super-block; a block whose max is 127, so the scale is 1 and the halves
    // are exact rounding ties; super-blocks whose largest magnitude occurs with both signs
    // (the first one sets Q8_K's sign), in different vectors and within one.
    std::vector<float> x = random_floats(rng, n, 3.0f);
    std::fill(x.begin() + 256, x.begin() + 512, 0.0f);
    for (int i = 0; i < 32; ++i) x[512 + i] = static_cast<float>(i - 16) + 0.5f;
    x[512] = 127.0f;
    x[900] = -70.0f;
    x[950] = 70.0f;
    x[1025] = 60.0f;
    x[1030] = -60.0f;
    rows.push_back(x);
    return rows;
}


// Scalar emulations of llama.cpp's (AVX-512) summation orders, which the SIMD variants
// reproduce bit for bit (std::fma rounds once, as the FMA instruction does).

// _mm512_reduce_add_ps: upper 8 lanes onto the lower 8, then 4, then (0+2) + (1+3).
float reduce16(const float* l) {
    float h[8], q[4];
    for (int i = 0; i < 8; ++i) h[i] = l[i + 8] + l[i];
    for (int i = 0; i < 4; ++i) q[i] = h[i + 4] + h[i];
    return (q[0] + q[2]) + (q[1] + q[3]);
}

// The 8-lane horizontal sum of GGML's AVX code and tinyBLAS (same tree).
float reduce8(const float* l) {
    float q[4];
    for (int i = 0; i < 4; ++i) q[i] = l[i + 4] + l[i];
    return (q[0] + q[2]) + (q[1] + q[3]);
}

// GGML's vec_dot_f16/f32 for one token: four 16-lane FMA chains over 64-element steps,
// reduced (c0 + c2) + (c1 + c3), then the k % 64 tail (double for F16, float FMAs for F32).
float ggml_vec_dot(DType w, const std::vector<double>& wd, const std::vector<double>& ad) {
    const size_t k = wd.size(), whole = k / 64 * 64;
    float lanes[4][16] = {};
    for (size_t i = 0; i < whole; i += 64)
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 16; ++l)
                lanes[c][l] = std::fma(float(wd[i + 16 * c + l]), float(ad[i + 16 * c + l]), lanes[c][l]);
    float x[16];
    for (int l = 0; l < 16; ++l) x[l] = (lanes[0][l] + lanes[2][l]) + (lanes[1][l] + lanes[3][l]);
    const float vec = reduce16(x);
    if (w == DType::F32) {  // GGML's sum += x * y, which GCC compiles to an FMA
        float sum = vec;
        for (size_t i = whole; i < k; ++i) sum = std::fma(float(wd[i]), float(ad[i]), sum);
        return sum;
    }
    double sum = vec;
    for (size_t i = whole; i < k; ++i) sum += double(float(wd[i]) * float(ad[i]));
    return float(sum);
}

// tinyBLAS (several tokens): one 16-lane FMA chain per (row, token), k a multiple of 16.
float tinyblas_dot(const std::vector<double>& wd, const std::vector<double>& ad) {
    float lanes[16] = {};
    for (size_t i = 0; i < wd.size(); i += 16)
        for (int l = 0; l < 16; ++l) lanes[l] = std::fma(float(wd[i + l]), float(ad[i + l]), lanes[l]);
    return reduce16(lanes);
}

// Q8_0 x Q8_0, 1-2 tokens (gemm_legacy.h's narrow_row): per block, 8 int32 lanes of 4
// products, each folded into its float lane with fma(lane, dw * da, acc), even and odd
// blocks in separate lanes; then the two added and the 8-lane sum. (GGML's AVX vec_dot and
// tinyBLAS take one chain over all blocks, which strata did until 2026-11-29.)
float q8_0_dot(const uint8_t* wrow, const uint8_t* xrow, int64_t k) {
    auto* w = reinterpret_cast<const strata::BlockQ8_0*>(wrow);
    auto* a = reinterpret_cast<const strata::BlockQ8_0*>(xrow);
    float lanes[2][8] = {};
    for (int64_t b = 0; b < k / 32; ++b) {
        const float scale = strata::fp16_to_fp32(w[b].d) * strata::fp16_to_fp32(a[b].d);
        for (int l = 0; l < 8; ++l) {
            int sum = 0;
            for (int i = 4 * l; i < 4 * l + 4; ++i) sum += w[b].qs[i] * a[b].qs[i];
            lanes[b % 2][l] = std::fma(float(sum), scale, lanes[b % 2][l]);
        }
    }
    for (int l = 0; l < 8; ++l) lanes[0][l] += lanes[1][l];
    return reduce8(lanes[0]);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernels)

BOOST_AUTO_TEST_CASE(activation_types_follow_ggml) {
    BOOST_TEST((k::activation_type(DType::F16) == DType::F16));
    BOOST_TEST((k::activation_type(DType::BF16) == DType::BF16));
    BOOST_TEST((k::activation_type(DType::Q4_0) == DType::Q8_0));
    BOOST_TEST((k::activation_type(DType::Q5_1) == DType::Q8_1));
    BOOST_TEST((k::activation_type(DType::Q6_K) == DType::Q8_K));
    BOOST_TEST((k::activation_type(DType::IQ4_NL) == DType::Q8_0));
    BOOST_TEST((k::activation_type(DType::IQ4_XS) == DType::Q8_K));
    BOOST_TEST((k::activation_type(DType::Q4_K_R) == DType::Q8_K));
    BOOST_TEST((k::activation_type(DType::Q4_K_R8) == DType::Q8_K));
    BOOST_TEST((k::activation_type(DType::Q6_K_R8) == DType::Q8_K));
    BOOST_TEST((k::activation_type(DType::IQ4_XS_R8) == DType::Q8_K));
    BOOST_TEST((k::activation_type(DType::Q8_0_R8) == DType::Q8_0));
    BOOST_TEST((k::activation_type(DType::MXFP4) == DType::Q8_0));
    for (DType w : kDotRefTypes)
        if (w != DType::MXFP4) BOOST_TEST((k::activation_type(w) == DType::Q8_K), strata::dtype_name(w));
    BOOST_TEST(!k::can_be_weight(DType::Q8_K));
    BOOST_CHECK_THROW(k::activation_type(DType::Q8_K), std::invalid_argument);
    BOOST_CHECK_THROW(k::activation_type(DType::I32), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_rejected) {
    std::vector<uint8_t> buf(4096);
    float y[4];
    BOOST_CHECK_THROW(k::gemm(DType::Q4_K, 100, buf.data(), 144, 0, 1, buf.data(), 292, 1, y, 1), std::invalid_argument);
    BOOST_CHECK_THROW(k::gemm(DType::Q8_0, 32, buf.data(), 34, 2, 1, buf.data(), 34, 1, y, 1), std::invalid_argument);
    BOOST_CHECK_THROW(k::convert_activations(DType::Q4_0, nullptr, buf.data(), 32), std::invalid_argument);
    BOOST_CHECK_THROW(k::convert_activations(DType::Q8_0, nullptr, buf.data(), 33), std::invalid_argument);
    BOOST_CHECK_THROW(k::set_isa(static_cast<k::Isa>(77)), std::invalid_argument);
}

// Resident weights take the layout the active variant's products read fastest: with SIMD
// the rows of Q4_K, Q5_K, Q6_K, IQ4_XS, Q8_0, Q4_0 and IQ4_NL interleaved 8 at a time where
// they allow it, else (and on the scalar reference) Q4_K_R for Q4_K and the others as they
// are; other types stay as they are.
BOOST_AUTO_TEST_CASE(resident_layouts_follow_the_isa) {
    for (k::Isa isa : supported_isas()) {
        const UseIsa use(isa);
        const bool simd = isa != k::Isa::Scalar;
        BOOST_TEST((k::resident_layout(DType::Q4_K, 2048) == (simd ? DType::Q4_K_R8 : DType::Q4_K_R)));
        BOOST_TEST((k::resident_layout(DType::Q4_K, 2044) == DType::Q4_K_R));
        for (DType file : {DType::Q5_K, DType::Q6_K, DType::IQ4_XS, DType::Q8_0, DType::Q4_0, DType::IQ4_NL}) {
            BOOST_TEST((k::resident_layout(file, 2048) == (simd ? *strata::r8_layout_of(file) : file)));
            BOOST_TEST((k::resident_layout(file, 2044) == file));
        }
        BOOST_TEST((k::resident_layout(DType::Q5_0, 2048) == DType::Q5_0));
        BOOST_TEST((k::resident_layout(DType::F32, 2048) == DType::F32));
    }
}

BOOST_AUTO_TEST_CASE(isa_selection) {
    BOOST_TEST(k::isa_supported(k::Isa::Scalar));
    BOOST_TEST(k::isa_supported(k::detected_isa()));
    for (k::Isa isa : supported_isas()) {
        const UseIsa use(isa);
        BOOST_TEST((k::active_isa() == isa));
    }
}

BOOST_AUTO_TEST_CASE(gemm_matches_scalar_and_float64) {
    std::mt19937 rng(1234);
    for (DType w : kWeightTypes) {
        for (int64_t kk : test_ks(w)) {
            // Row counts 1, 3, 6, 43 leave every remainder of 2-, 4- and 16-row tiles (43 =
            // 16 + 16 + 11: three groups of 4); token counts cover every size of the fused
            // paths (1..8, batched decode), the first past them (9: two chunks of them) and
            // full and partial tiles of 2, 4 and 16 tokens (11 = three groups of 4; 37);
            // 66 is past the fused chunks on AVX-512 too (the 4 x 4 lanes) and ends in a
            // token block of 2 (64 tokens share an unpacking when k is small), which must
            // not take the fused paths' preparation.
            for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, 1}, {2, 5}, {1, 7}, {5, 48}}) {
                for (int64_t nt : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 37}) check_gemm(Problem(w, kk, r0, r1, nt, rng));
            }
            check_gemm(Problem(w, kk, 1, 7, 66, rng));
        }
    }
    // Q4_K_R takes more tokens through Q4_K's product, converting 64 rows at a time.
    for (int64_t nt : {1, 8, 9, 66}) check_gemm(Problem(DType::Q4_K_R, 512, 3, 140, nt, rng));
    // The 8-row layouts: ranges of whole groups, and cut by r0, r1 or both, within one group
    // and not.
    for (DType w : {DType::Q4_K_R8, DType::Q5_K_R8, DType::Q6_K_R8, DType::IQ4_XS_R8, DType::Q8_0_R8, DType::Q4_0_R8,
                    DType::IQ4_NL_R8})
        for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, 64}, {8, 136}, {3, 140}, {9, 14}, {16, 21}})
            for (int64_t nt : {1, 8, 9, 66}) check_gemm(Problem(w, 1024, r0, r1, nt, rng));
}

// MXFP4 and the lattice formats: every ISA's product (simd/gemm_lattice.h on AVX2 and
// AVX-512) is tensor/dot_ref.h's reference (GGML's generic dot), bit for bit (MXFP4: within
// float rounding, its blocks summed in lanes as GGML's x86 kernel sums them), for 1 token,
// partial and full groups of the lattice kernel's tokens (4 on AVX2, 16 on AVX-512, the wide path from 4),
// tiles of 64 tokens and a partial last tile (100);
// MXFP4 also on rows whose blocks end in a partial group of 8 (96 = 3 blocks, 2848 = 89).
BOOST_AUTO_TEST_CASE(dot_ref_types_match_dot_ref_exactly) {
    std::mt19937 rng(777);
    for (DType w : kDotRefTypes) {
        std::vector<int64_t> ks = {256, 768, 2816};
        if (w == DType::MXFP4) ks.insert(ks.end(), {96, 2848});
        for (int64_t kk : ks) {
            for (int64_t nt : {1, 3, 4, 5, 19, 64, 100}) {
                const Problem p(w, kk, 1, 6, nt, rng);
                for (k::Isa isa : supported_isas()) {
                    const UseIsa use(isa);
                    const std::vector<float> Y = p.run();
                    for (int64_t t = 0; t < nt; ++t)
                        for (int64_t r = p.r0; r < p.r1; ++r) {
                            const float want = strata::dot_ref(w, p.W.data() + r * p.ldw, p.X.data() + t * p.ldx, kk);
                            BOOST_TEST_CONTEXT(k::isa_name(isa) << " " << strata::dtype_name(w) << " k=" << kk << " nt=" << nt
                                                                << " r=" << r << " t=" << t) {
                                if (w == DType::MXFP4 && isa != k::Isa::Scalar) {  // its float sums in lanes, as GGML's x86 kernel
                                    BOOST_TEST(std::abs(Y[t * p.ldy + r] - want) <= 2e-6f * (1.0f + std::abs(want)));
                                    std::vector<float> alone(size_t(r) + 1);  // and a token's result does not depend on its batch
                                    k::gemm(w, kk, p.W.data(), p.ldw, r, r + 1, p.X.data() + t * p.ldx, p.ldx, 1, alone.data(), alone.size());
                                    BOOST_TEST(Y[t * p.ldy + r] == alone[size_t(r)]);
                                } else
                                    BOOST_TEST(Y[t * p.ldy + r] == want);
                            }
                        }
                }
            }
        }
    }
}

// The products' table (kernels/gemm_routes.h) is their dispatch: on every variant this CPU
// runs, each type that can be a weight and each token count (one, batched decode, the
// chunks, the lanes of many) falls in exactly one row, and gemm runs that row's kernel.
BOOST_AUTO_TEST_CASE(gemm_rows_cover_every_weight_type_and_token_count) {
    namespace d = strata::kernels::detail;
    for (uint32_t id = 0; id < strata::kDTypeIdLimit; ++id) {
        const auto w = static_cast<DType>(id);
        if (!k::can_be_weight(w)) continue;
        BOOST_TEST((std::find(kWeightTypes.begin(), kWeightTypes.end(), w) != kWeightTypes.end()), "untested weight type " << id);
        for (k::Isa isa : supported_isas()) {
            const UseIsa use(isa);
            for (int64_t nt : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 64, 65, 66, 512, 100000}) {
                const d::GemmRow* hit = nullptr;
                int rows = 0;
                for (const d::GemmRow& row : d::kGemmRows)
                    if (row.isa == isa && row.w == w && nt >= row.min_tokens && nt <= row.max_tokens) hit = &row, ++rows;
                BOOST_TEST_CONTEXT(k::isa_name(isa) << " " << strata::dtype_name(w) << " nt=" << nt) {
                    BOOST_TEST_REQUIRE(rows == 1);
                    BOOST_TEST(k::gemm_kernel(w, nt) == d::kernel_name(hit->kernel));
                }
            }
        }
    }
}

// Each row's kernel against the scalar reference and float64, at both ends of its token
// range (and 66 tokens for the rows without end), on ranges of rows that cut tiles and 8-row
// groups.
BOOST_AUTO_TEST_CASE(every_gemm_row_matches_scalar) {
    namespace d = strata::kernels::detail;
    std::mt19937 rng(4321);
    for (const d::GemmRow& row : d::kGemmRows) {
        if (row.isa == k::Isa::Scalar || !k::isa_supported(row.isa)) continue;
        const UseIsa use(row.isa);
        const int64_t kk = is_float(row.w) ? 300 : 512;
        const int64_t last = row.max_tokens == d::kAnyTokens ? std::max<int64_t>(row.min_tokens, 66) : row.max_tokens;
        for (int64_t nt : {row.min_tokens, last}) {
            BOOST_TEST_CONTEXT(k::isa_name(row.isa) << " " << strata::dtype_name(row.w) << " " << d::kernel_name(row.kernel)
                                                    << " nt=" << nt) {
                BOOST_TEST(k::gemm_kernel(row.w, nt) == d::kernel_name(row.kernel));
                check_gemm(Problem(row.w, kk, 3, 45, nt, rng));
            }
        }
    }
}

// Saturation: weights at their largest codes (and the smallest, and mixed bytes) against
// activations all +-127, which no random row reaches, so that a kernel summing int16 pair
// products over too many positions fails here.
BOOST_AUTO_TEST_CASE(gemm_survives_the_largest_integer_sums) {
    std::mt19937 rng(99);
    for (DType w : kWeightTypes) {
        if (is_float(w)) continue;
        for (uint8_t fill : {uint8_t{0x00}, uint8_t{0xFF}, uint8_t{0x80}, uint8_t{0x7F}, uint8_t{0x88}, uint8_t{0x77}})
            for (float level : {1.0f, -1.0f})
                for (int64_t nt : {1, 2, 3, 4, 8, 9, 66}) check_gemm(Problem(w, 512, 5, 48, nt, rng, fill, level));
    }
}

// F32/F16 products sum in llama.cpp's order, so that they reproduce its products bit for bit;
// Q8_0's 1-2 tokens (the decode path) in an order of their own (q8_0_dot), the same on every
// ISA. From 3 tokens Q8_0 takes a row per lane on both ISAs (and AVX-512 prefill a faster
// 4 x 4 lane layout), each with its own order.
BOOST_AUTO_TEST_CASE(simd_products_follow_the_reference_summation_order) {
    std::mt19937 rng(4242);
    for (DType w : {DType::F32, DType::F16, DType::Q8_0}) {
        for (int64_t kk : {int64_t{256}, int64_t{4096}, int64_t{96}, int64_t{1008}}) {
            if (kk % 32 != 0 || (w != DType::Q8_0 && kk % 16 != 0)) continue;
            for (int64_t nt : {1, 2, 5, 9}) {
                if (w == DType::Q8_0 && nt > 2) continue;
                const Problem p(w, kk, 1, 7, nt, rng);
                const DType at = k::activation_type(w);
                for (k::Isa isa : supported_isas()) {
                    if (isa == k::Isa::Scalar) continue;
                    const UseIsa use(isa);
                    const std::vector<float> Y = p.run();
                    for (int64_t t = 0; t < nt; ++t) {
                        for (int64_t r = p.r0; r < p.r1; ++r) {
                            const uint8_t* wrow = p.W.data() + r * p.ldw;
                            const uint8_t* xrow = p.X.data() + t * p.ldx;
                            float want;
                            if (w == DType::Q8_0) want = q8_0_dot(wrow, xrow, kk);
                            else if (nt == 1) want = ggml_vec_dot(w, p.dequantized(w, wrow), p.dequantized(at, xrow));
                            else want = tinyblas_dot(p.dequantized(w, wrow), p.dequantized(at, xrow));
                            BOOST_TEST_CONTEXT(k::isa_name(isa) << " " << strata::dtype_name(w) << " k=" << kk << " nt=" << nt
                                                                << " r=" << r << " t=" << t) {
                                if (w == DType::MXFP4 && isa != k::Isa::Scalar) {  // its float sums in lanes, as GGML's x86 kernel
                                    BOOST_TEST(std::abs(Y[t * p.ldy + r] - want) <= 2e-6f * (1.0f + std::abs(want)));
                                    std::vector<float> alone(size_t(r) + 1);  // and a token's result does not depend on its batch
                                    k::gemm(w, kk, p.W.data(), p.ldw, r, r + 1, p.X.data() + t * p.ldx, p.ldx, 1, alone.data(), alone.size());
                                    BOOST_TEST(Y[t * p.ldy + r] == alone[size_t(r)]);
                                } else
                                    BOOST_TEST(Y[t * p.ldy + r] == want);
                            }
                        }
                    }
                }
            }
        }
    }
}

// Q8_0 / Q8_1 activations as ggml-cpu's x86 quantize_row_q8_0 / _q8_1 compute them (the test's
// own statement of it): scale amax / 127 stored F16, values x * (127 / amax) rounded half to
// even, Q8_1's s = F16(d * sum).
std::vector<uint8_t> ggml_x86_q8(DType at, const std::vector<float>& x) {
    const size_t block = at == DType::Q8_0 ? 34 : 36, qs = block - 32;
    std::vector<uint8_t> out(x.size() / 32 * block);
    for (size_t b = 0; b < x.size() / 32; ++b) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
        const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
        uint8_t* y = out.data() + b * block;
        const uint16_t dh = strata::fp32_to_fp16(d);
        std::memcpy(y, &dh, 2);
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            const auto q = static_cast<int8_t>(std::nearbyint(x[b * 32 + j] * id));
            sum += q;
            y[qs + j] = static_cast<uint8_t>(q);
        }
        const uint16_t s = strata::fp32_to_fp16(static_cast<float>(sum) * d);
        if (at == DType::Q8_1) std::memcpy(y + 2, &s, 2);
    }
    return out;
}

BOOST_AUTO_TEST_CASE(convert_activations_bit_identical) {
    std::mt19937 rng(99);
    for (const std::vector<float>& x : conversion_rows(rng)) {
        const auto n = static_cast<int64_t>(x.size());
        for (DType at : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q8_1, DType::Q8_K}) {
            std::vector<uint8_t> ref(row_bytes(at, n));
            if (at == DType::F32) std::memcpy(ref.data(), x.data(), n * sizeof(float));
            else if (at == DType::Q8_0 || at == DType::Q8_1) ref = ggml_x86_q8(at, x);
            else strata::quantize_row(at, x.data(), ref.data(), n);
            for (k::Isa isa : supported_isas()) {
                const UseIsa use(isa);
                std::vector<uint8_t> got(ref.size() + 16, 0xEE);
                k::convert_activations(at, x.data(), got.data(), n);
                BOOST_TEST_CONTEXT(k::isa_name(isa) << " " << strata::dtype_name(at)) {
                    BOOST_TEST(std::memcmp(got.data(), ref.data(), ref.size()) == 0);
                    BOOST_TEST(got[ref.size()] == 0xEE, "wrote past the row");
                }
            }
        }
    }
}

// A value halfway between two steps: llama.cpp's activations round it to even (2.5 -> 2), the
// weight quantizer away from zero (-> 3).
BOOST_AUTO_TEST_CASE(q8_0_activations_round_half_to_even_as_ggml_x86) {
    std::vector<float> x(32, 0.0f);
    x[0] = 127.0f;
    x[1] = 2.5f;
    x[2] = -3.5f;
    std::vector<uint8_t> weights(34);
    strata::quantize_row(DType::Q8_0, x.data(), weights.data(), 32);
    BOOST_TEST(int(int8_t(weights[2 + 1])) == 3);
    for (k::Isa isa : supported_isas()) {
        const UseIsa use(isa);
        std::vector<uint8_t> got(34);
        k::convert_activations(DType::Q8_0, x.data(), got.data(), 32);
        BOOST_TEST(int(int8_t(got[2 + 1])) == 2, k::isa_name(isa));
        BOOST_TEST(int(int8_t(got[2 + 2])) == -4, k::isa_name(isa));
    }
}

BOOST_AUTO_TEST_CASE(vector_ops_match_scalar) {
    std::mt19937 rng(7);
    for (int64_t n : {1, 5, 16, 17, 100, 4096, 4099}) {
        const std::vector<float> x = random_floats(rng, n, 4.0f), w = random_floats(rng, n), u = random_floats(rng, n);
        std::vector<uint16_t> h(n), h2(n);
        for (int64_t i = 0; i < n; ++i) {
            h[i] = strata::fp32_to_fp16(x[i]);
            h2[i] = strata::fp32_to_fp16(u[i]);
        }
        struct Out {
            std::vector<float> norm, silu, sum, widened, axpy;
            std::vector<uint16_t> narrowed;
            float dot;
        };
        auto compute = [&](k::Isa isa) {
            const UseIsa use(isa);
            Out o;
            o.norm.assign(n + 1, 99.0f);
            k::rms_norm(x.data(), w.data(), o.norm.data(), n, 1e-5f);
            o.silu = x;
            k::silu_mul(o.silu.data(), u.data(), n);
            o.sum = x;
            k::add(o.sum.data(), u.data(), n);
            o.narrowed.assign(n + 1, 0xBEEF);
            k::f32_to_f16(x.data(), o.narrowed.data(), n);
            o.widened.assign(n + 1, 99.0f);
            k::f16_to_f32(h.data(), o.widened.data(), n);
            o.dot = k::dot_f16(h.data(), h2.data(), n);
            o.axpy = u;
            k::axpy_f16(o.axpy.data(), 0.75f, h.data(), n);
            return o;
        };
        const Out ref = compute(k::Isa::Scalar);
        double abs_dot = 0;
        for (int64_t i = 0; i < n; ++i) abs_dot += std::fabs(strata::fp16_to_fp32(h[i]) * strata::fp16_to_fp32(h2[i]));
        for (k::Isa isa : supported_isas()) {
            const Out o = compute(isa);
            BOOST_TEST_CONTEXT(k::isa_name(isa) << " n=" << n) {
                BOOST_TEST(o.norm[n] == 99.0f);
                BOOST_TEST(o.narrowed[n] == 0xBEEF);
                BOOST_TEST(o.widened[n] == 99.0f);
                for (int64_t i = 0; i < n; ++i) {
                    // rms_norm: the same float products summed in double, then identical
                    // float steps; silu: exp to within a few ulp.
                    BOOST_TEST(std::fabs(o.norm[i] - ref.norm[i]) <= 2e-7f * std::fabs(ref.norm[i]));
                    BOOST_TEST(std::fabs(o.silu[i] - ref.silu[i]) <= 1e-6f * (std::fabs(ref.silu[i]) + 1e-30f));
                    BOOST_TEST(o.sum[i] == ref.sum[i]);
                    BOOST_TEST(o.narrowed[i] == ref.narrowed[i]);
                    BOOST_TEST(o.widened[i] == ref.widened[i]);
                    BOOST_TEST(o.axpy[i] == ref.axpy[i]);
                }
                // float accumulation of n exact products against the scalar's double sum,
                // and exactly GGML's vec_dot_f16 order on the SIMD variants.
                BOOST_TEST(std::fabs(o.dot - ref.dot) <= (n / 8.0 + 8) * 6e-8 * abs_dot);
                if (isa != k::Isa::Scalar) {
                    std::vector<double> hd(n), h2d(n);
                    for (int64_t i = 0; i < n; ++i) {
                        hd[i] = strata::fp16_to_fp32(h[i]);
                        h2d[i] = strata::fp16_to_fp32(h2[i]);
                    }
                    BOOST_TEST(o.dot == ggml_vec_dot(DType::F16, hd, h2d));
                }
            }
        }
    }
}

// The Gated DeltaNet step on every variant, against the same arithmetic in double: rows of
// 128 (the SIMD loops) and of 20 (the scalar fallback), several tokens through one state.
BOOST_AUTO_TEST_CASE(delta_rule_matches_double) {
    std::mt19937 rng(11);
    for (int64_t n : {128, 20}) {
        std::vector<float> S0 = random_floats(rng, n * n, 0.5f), q = random_floats(rng, n), k = random_floats(rng, n),
                           v = random_floats(rng, n);
        for (k::Isa isa : supported_isas()) {
            const UseIsa use(isa);
            std::vector<float> S = S0, o(n);
            std::vector<double> Sd(S0.begin(), S0.end()), od(n);
            for (int step = 0; step < 3; ++step) {
                k::delta_rule(S.data(), n, q.data(), k.data(), v.data(), 0.9f, 0.6f, 0.125f, o.data());
                for (int64_t j = 0; j < n; ++j) {
                    double sk = 0, sq = 0;
                    for (int64_t i = 0; i < n; ++i) sk += (Sd[j * n + i] *= 0.9f) * k[i];
                    const double d = (v[j] - sk) * 0.6f;
                    for (int64_t i = 0; i < n; ++i) sq += (Sd[j * n + i] += d * k[i]) * q[i];
                    od[j] = sq * 0.125f;
                }
            }
            double worst = 0, scale = 0;
            for (int64_t j = 0; j < n; ++j) {
                worst = std::max(worst, std::fabs(o[j] - od[j]));
                scale = std::max(scale, std::fabs(od[j]));
            }
            BOOST_TEST(worst <= 1e-5 * scale, k::isa_name(isa) << " n=" << n << ": " << worst << " of " << scale);
        }
    }
}

// GELU(tanh) as GGML's geglu: 0 below -10, x above 10, else the F16-rounded gelu of the
// F16-rounded input, times u.
// Flash attention over several KV blocks (keys transposed per block), each ISA against a
// float64 softmax of the same F16 inputs: groups of 1 to 9 queries, head sizes that do
// and do not fill a vector, partial first and last blocks, whole blocks that do and do not
// raise the running max, the soft-cap, and two halves computed apart and merged as the
// model merges its chunks.
BOOST_AUTO_TEST_CASE(attention_matches_a_float64_softmax) {
    constexpr int B = 16;
    std::mt19937 rng(11);
    for (int hd : {8, 64, 128})
        for (int G : {1, 2, 4, 5, 9})
            for (float cap : {0.0f, 20.0f}) {
                const int blocks = 8, lo = 3, hi = 7 * B + 7;  // positions [lo, hi): 5 whole blocks
                const std::vector<float> qf = random_floats(rng, int64_t(G) * hd, 1.0f);
                std::vector<uint16_t> kt(size_t(blocks) * hd * B), v(size_t(blocks) * B * hd);
                for (auto& x : kt) x = strata::fp32_to_fp16(std::uniform_real_distribution<float>(-1, 1)(rng));
                for (auto& x : v) x = strata::fp32_to_fp16(std::uniform_real_distribution<float>(-1, 1)(rng));
                std::vector<float> q(qf.size());
                for (size_t i = 0; i < q.size(); ++i) q[i] = strata::fp16_to_fp32(strata::fp32_to_fp16(qf[i]));
                const float scale = 1.0f / std::sqrt(float(hd)) * 4;
                // float64 reference
                std::vector<double> want(size_t(G) * hd, 0.0);
                for (int g = 0; g < G; ++g) {
                    std::vector<double> s;
                    for (int p = lo; p < hi; ++p) {
                        double d = 0;
                        for (int i = 0; i < hd; ++i)
                            d += double(q[size_t(g) * hd + i]) * strata::fp16_to_fp32(kt[(size_t(p / B) * hd + i) * B + p % B]);
                        d *= scale;
                        if (cap > 0) d = cap * std::tanh(d / cap);
                        s.push_back(d);
                    }
                    const double mx = *std::max_element(s.begin(), s.end());
                    double sum = 0;
                    for (double& x : s) sum += x = std::exp(x - mx);
                    for (int p = lo; p < hi; ++p)
                        for (int i = 0; i < hd; ++i)
                            want[size_t(g) * hd + i] += s[size_t(p - lo)] / sum * strata::fp16_to_fp32(v[(size_t(p / B) * B + p % B) * hd + i]);
                }
                for (k::Isa isa : supported_isas()) {
                    const UseIsa use(isa);
                    // Two halves, [lo, 40) and [40, hi), each its own online softmax, merged. The
                    // second brings the keys in meanwhile (from an odd address: more lines than
                    // the key loop has steps), which must not change a result.
                    std::vector<float> m[2], l[2], acc[2];
                    for (int h = 0; h < 2; ++h) {
                        m[h].assign(G, -INFINITY);
                        l[h].assign(G, 0.0f);
                        acc[h].assign(size_t(G) * hd, 0.0f);
                        const int from = h ? 40 : lo, to = h ? hi : 40;
                        for (int p = from; p < to;) {
                            const int first = p - p % B, end = std::min(to - first, B);
                            k::attend_f16(q.data(), G, hd, kt.data() + size_t(first / B) * hd * B, v.data() + size_t(first) * hd, hd, p - first,
                                          end, scale, cap, m[h].data(), l[h].data(), acc[h].data(),
                                          h ? k::Ahead{reinterpret_cast<const uint8_t*>(kt.data()) + 1, kt.size() * 2 - 1} : k::Ahead{});
                            p = first + end;
                        }
                    }
                    for (int g = 0; g < G; ++g) {
                        const float mx = std::max(m[0][g], m[1][g]);
                        const float w0 = std::exp(m[0][g] - mx), w1 = std::exp(m[1][g] - mx);
                        const float total = l[0][g] * w0 + l[1][g] * w1;
                        for (int i = 0; i < hd; ++i) {
                            const float got = (acc[0][size_t(g) * hd + i] * w0 + acc[1][size_t(g) * hd + i] * w1) / total;
                            BOOST_TEST(std::abs(got - want[size_t(g) * hd + i]) < 2e-5,
                                       k::isa_name(isa) << " hd " << hd << " G " << G << " cap " << cap << ": " << got << " vs "
                                                        << want[size_t(g) * hd + i]);
                        }
                    }
                }
            }
}

// The Q8_0 block variant against a float64 softmax of the dequantized keys and values.
BOOST_AUTO_TEST_CASE(q8_0_attention_matches_a_float64_softmax) {
    constexpr int B = 16;
    std::mt19937 rng(13);
    std::uniform_int_distribution<int> i8(-127, 127);
    for (int hd : {32, 64, 128})
        for (int G : {1, 3, 4, 8}) {
            const int lo = 2, hi = 13;
            std::vector<float> q = random_floats(rng, size_t(G) * hd, 1.0f);
            std::vector<int8_t> kq(size_t(hd) * B);
            std::vector<uint16_t> ks(size_t(hd / 32) * B);
            const size_t ldv = size_t(hd / 32) * 34;
            std::vector<uint8_t> v(ldv * B);
            for (auto& x : kq) x = static_cast<int8_t>(i8(rng));
            for (auto& x : ks) x = strata::fp32_to_fp16(std::uniform_real_distribution<float>(0.001f, 0.02f)(rng));
            for (int j = 0; j < B; ++j)
                for (int c = 0; c < hd / 32; ++c) {
                    uint8_t* block = v.data() + size_t(j) * ldv + size_t(c) * 34;
                    const uint16_t d = strata::fp32_to_fp16(std::uniform_real_distribution<float>(0.001f, 0.02f)(rng));
                    std::memcpy(block, &d, 2);
                    for (int i = 0; i < 32; ++i) block[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(i8(rng)));
                }
            auto key = [&](int d, int j) { return double(strata::fp16_to_fp32(ks[size_t(d / 32) * B + j])) * kq[size_t(d) * B + j]; };
            auto value = [&](int j, int i) {
                const uint8_t* block = v.data() + size_t(j) * ldv + size_t(i / 32) * 34;
                uint16_t d;
                std::memcpy(&d, block, 2);
                return double(strata::fp16_to_fp32(d)) * static_cast<int8_t>(block[2 + i % 32]);
            };
            const float scale = 1.0f / std::sqrt(float(hd));
            for (k::Isa isa : supported_isas()) {
                const UseIsa use(isa);
                std::vector<float> m(G, -INFINITY), l(G, 0.0f), acc(size_t(G) * hd, 0.0f);
                k::attend_q8_0(q.data(), G, hd, kq.data(), ks.data(), v.data(), ldv, lo, hi, scale, 0.0f, m.data(), l.data(), acc.data(),
                               k::Ahead{v.data() + 5, v.size() - 5});
                for (int g = 0; g < G; ++g) {
                    std::vector<double> s;
                    for (int j = lo; j < hi; ++j) {
                        double d = 0;
                        for (int i = 0; i < hd; ++i) d += double(q[size_t(g) * hd + i]) * key(i, j);
                        s.push_back(d * scale);
                    }
                    const double mx = *std::max_element(s.begin(), s.end());
                    double sum = 0;
                    for (double& x : s) sum += x = std::exp(x - mx);
                    for (int i = 0; i < hd; ++i) {
                        double want = 0;
                        for (int j = lo; j < hi; ++j) want += s[size_t(j - lo)] / sum * value(j, i);
                        const double got = acc[size_t(g) * hd + i] / l[g];
                        BOOST_TEST(std::abs(got - want) < 2e-5, k::isa_name(isa) << " hd " << hd << " G " << G << ": " << got << " vs " << want);
                    }
                }
            }
        }
}

BOOST_AUTO_TEST_CASE(gelu_mul_follows_ggml_table) {
    const std::vector<float> x = {-12.0f, -10.0f, -3.3f, -0.5f, 0.0f, 0.1234f, 1.0f, 2.71828f, 9.99f, 10.0f, 15.0f};
    std::vector<float> g = x, u(x.size(), 2.0f);
    k::gelu_mul(g.data(), u.data(), static_cast<int64_t>(g.size()));
    for (size_t i = 0; i < x.size(); ++i) {
        float want;
        if (x[i] <= -10.0f) want = 0.0f;
        else if (x[i] >= 10.0f) want = x[i] * 2.0f;
        else {
            const float h = strata::fp16_to_fp32(strata::fp32_to_fp16(x[i]));
            const float gelu = 0.5f * h * (1.0f + std::tanh(0.7978845608f * h * (1.0f + 0.044715f * h * h)));
            want = strata::fp16_to_fp32(strata::fp32_to_fp16(gelu)) * 2.0f;
        }
        BOOST_TEST(g[i] == want, "gelu_mul(" << x[i] << ") = " << g[i] << ", want " << want);
    }
    // Near 0 the rounding is invisible; at 1 it is gelu(1) = 0.8412 to F16 precision.
    BOOST_TEST(std::abs(g[6] / 2.0f - 0.841192f) < 1e-3f);
}

BOOST_AUTO_TEST_CASE(thread_pool_parallel_for_covers_each_index_once) {
    for (int threads : {1, 2, 3}) {
        k::ThreadPool pool(threads);
        BOOST_TEST(pool.size() == threads);
        for (int64_t n : {0, 1, 7, 1000}) {
            for (int64_t grain : {1, 3, 64}) {
                std::vector<std::atomic<int>> hits(n);
                std::atomic<int> bad_thread{0};
                // Boost.Test is not thread-safe: workers only count, the test checks after.
                pool.parallel_for(n, grain, [&](int64_t b, int64_t e, int t) {
                    if (t < 0 || t >= threads || e - b > grain) bad_thread.fetch_add(1);
                    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
                });
                BOOST_TEST(bad_thread.load() == 0);
                for (int64_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(hits[i].load() == 1, "index " << i);
            }
        }
    }
}

// Guided chunks: every index once, each chunk starting at a multiple of the unit and
// (but the last) a multiple of it long, none longer than a (2 x threads)-th of what was
// left when it was taken (or one unit), and far fewer chunks than units.
BOOST_AUTO_TEST_CASE(thread_pool_guided_chunks_shrink_in_units) {
    for (int threads : {1, 2, 3}) {
        k::ThreadPool pool(threads);
        for (int64_t n : {0, 5, 16, 17, 1000, 14336}) {
            for (int64_t unit : {1, 16}) {
                std::vector<std::atomic<int>> hits(n);
                std::mutex m;
                std::vector<std::pair<int64_t, int64_t>> chunks;
                pool.parallel_for_guided(n, unit, [&](int64_t b, int64_t e, int) {
                    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
                    const std::lock_guard lock(m);
                    chunks.emplace_back(b, e);
                });
                for (int64_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(hits[i].load() == 1, "index " << i);
                for (const auto& [b, e] : chunks) {
                    BOOST_TEST(b % unit == 0, "chunk [" << b << ", " << e << ")");
                    BOOST_TEST((e == n || (e - b) % unit == 0), "chunk [" << b << ", " << e << ")");
                    const int64_t most = std::max(unit, (n - b) / (2 * threads) / unit * unit);
                    BOOST_TEST((e - b) <= most, "chunk [" << b << ", " << e << ") of " << n);
                }
                if (n >= 2 * threads * unit * 4)
                    BOOST_TEST(chunks.size() < static_cast<size_t>(n / unit), "n " << n << ": " << chunks.size() << " chunks");
            }
        }
    }
}

// Many small jobs back to back, on more threads than the machine has cores (so workers
// are often preempted or late): every index runs exactly once, on a valid thread, and
// every job returns (the caller never waits for a worker that did not join).
BOOST_AUTO_TEST_CASE(thread_pool_repeated_dispatch_oversubscribed) {
    k::ThreadPool pool(8);
    std::vector<std::atomic<int>> runs_on(8);
    for (int rep = 0; rep < 2000; ++rep) {
        const int64_t n = 1 + rep % 37;
        std::vector<std::atomic<int>> hits(n);
        pool.parallel_for(n, 1 + rep % 3, [&](int64_t b, int64_t e, int t) {
            BOOST_TEST_REQUIRE((t >= 0 && t < 8));
            runs_on[t].fetch_add(1);
            for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        for (int64_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(hits[i].load() == 1, "job " << rep << " index " << i);
    }
    BOOST_TEST(runs_on[0].load() > 0);  // the caller takes part
}

BOOST_AUTO_TEST_SUITE_END()
