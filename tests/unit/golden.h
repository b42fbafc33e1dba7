// tests/unit/golden.h — the llama.cpp golden cases (tests/data/golden/manifest.json):
// loading them and comparing engine logits with the recommended metrics
// (max-abs and RMS relative error, and top-1 agreement that tolerates near-ties).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kv/kv_cache.h"

namespace strata::model {
class Model;
}

namespace strata::test {

struct GoldenCase {
    std::string name;        // "llama-q4_0.seven"
    std::string weights;     // "Q4_0"
    std::filesystem::path model;
    std::vector<int32_t> tokens;
    int32_t n_vocab = 0;
    std::vector<float> logits;  // [n_tokens][n_vocab]
    double tol_max_rel = 0, tol_rms_rel = 0;
};

std::vector<GoldenCase> golden_cases();  // from tests/data/golden (llama, qwen2)
std::vector<GoldenCase> arch_cases();    // from tests/data/archs (one small model per further family)

struct Comparison {
    double max_rel = 0;      // max|a - g| / max|g|
    double rms_rel = 0;      // rms(a - g) / rms(g)
    int top1_strict = 0;     // positions where argmax agrees
    int top1_in_band = 0;    // positions where the engine's pick is within the golden error band
    int positions = 0;
};

Comparison compare_logits(const std::vector<float>& engine, const std::vector<float>& golden, int32_t n_vocab, double tol_rms_rel);

// The logits of every position of `tokens`, fed to a fresh cache `chunk` tokens per forward call.
std::vector<float> logits_in_chunks(model::Model& m, const std::vector<int32_t>& tokens, size_t chunk,
                                    kv::KvType kv_type = kv::KvType::F16);

}  // namespace strata::test
