// tests/unit/tensor_test.cpp — element types: quantizers byte-identical with llama.cpp's,
// dequantizers against llama.cpp and against the independent numpy reference (gguf_ref.py),
// F16/BF16 conversions at their edges, quantization error bounds, unsupported types.
// Fixtures: tests/data/quant (make_fixtures.py there regenerates them from llama.cpp).
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor/blocks.h"
#include "tensor/dot_ref.h"
#include "tensor/dtype.h"
#include "tensor/fp16.h"
#include "tensor/quantize.h"
#include "tensor/repack.h"
#include "test_util.h"

using namespace strata;

namespace {

constexpr int64_t kRows = 8, kCols = 512;  // input.f32, as make_fixtures.py writes it

const DType kQuantTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                             DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                             DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4};
// Read only (GGML writes them only with an importance matrix); their fixtures hold 4 rows.
const DType kLatticeTypes[] = {DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS,
                               DType::IQ3_S, DType::IQ1_S, DType::IQ1_M};

std::filesystem::path fixture(const std::string& name) { return test::data_dir() / "quant" / name; }

template <class T>
std::vector<T> read_fixture(const std::string& name) {
    std::ifstream in(fixture(name), std::ios::binary | std::ios::ate);
    BOOST_REQUIRE_MESSAGE(in, "missing fixture " << fixture(name));
    const auto size = static_cast<size_t>(in.tellg());
    BOOST_REQUIRE_MESSAGE(size % sizeof(T) == 0, fixture(name) << ": size " << size);
    std::vector<T> v(size / sizeof(T));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(size));
    return v;
}

std::string lower(std::string_view s) {
    std::string r(s);
    for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::vector<uint8_t> quantize(DType t, const std::vector<float>& x) {
    std::vector<uint8_t> q(dtype_bytes(t, x.size()));
    quantize_row(t, x.data(), q.data(), static_cast<int64_t>(x.size()));
    return q;
}

std::vector<float> dequantize(DType t, const std::vector<uint8_t>& q, size_t n) {
    std::vector<float> y(n);
    dequantize_row(t, q.data(), y.data(), static_cast<int64_t>(n));
    return y;
}

// Index of the first block where a and b differ, or -1.
int64_t first_different_block(DType t, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    const size_t bb = dtype_info(t).block_bytes;
    for (size_t i = 0; i < a.size(); i += bb)
        if (std::memcmp(a.data() + i, b.data() + i, bb) != 0) return static_cast<int64_t>(i / bb);
    return -1;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

double relative_rmse(const std::vector<float>& x, const std::vector<float>& y) {
    double err = 0, ref = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        err += (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
        ref += static_cast<double>(x[i]) * x[i];
    }
    return std::sqrt(err / ref);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantizers)

BOOST_AUTO_TEST_CASE(bytes_match_llama_cpp) {
    const auto x = read_fixture<float>("input.f32");
    BOOST_REQUIRE_EQUAL(x.size(), static_cast<size_t>(kRows * kCols));
    for (DType t : kQuantTypes) {
        BOOST_TEST_CONTEXT("type " << dtype_name(t)) {
            const auto expected = read_fixture<uint8_t>(lower(dtype_name(t)) + ".q");
            const auto got = quantize(t, x);
            BOOST_REQUIRE_EQUAL(got.size(), expected.size());
            const int64_t bad = first_different_block(t, got, expected);
            BOOST_TEST(bad == -1, "first differing block " << bad << " (row " << bad * dtype_info(t).block_elems / kCols
                                                           << ")");
        }
    }
}

BOOST_AUTO_TEST_CASE(row_by_row_equals_whole) {
    const auto x = read_fixture<float>("input.f32");
    for (DType t : kQuantTypes) {
        const auto whole = quantize(t, x);
        const size_t row_bytes = dtype_bytes(t, kCols);
        for (int64_t r = 0; r < kRows; ++r) {
            std::vector<uint8_t> row(row_bytes);
            quantize_row(t, x.data() + r * kCols, row.data(), kCols);
            BOOST_TEST(std::memcmp(row.data(), whole.data() + r * row_bytes, row_bytes) == 0,
                       dtype_name(t) << " row " << r);
        }
    }
}

BOOST_AUTO_TEST_CASE(all_zero_input_gives_zeros) {
    const std::vector<float> zeros(1024, 0.0f);
    for (DType t : kQuantTypes) {
        const auto y = dequantize(t, quantize(t, zeros), zeros.size());
        bool all_zero = true;
        for (float v : y) all_zero = all_zero && v == 0.0f;
        BOOST_TEST(all_zero, dtype_name(t));
    }
}

// Relative RMS error of quantize -> dequantize on N(0, 1) data, with bounds about 1.2x
// what the formats reach (Q8_0 0.53 %, Q6_K 1.8 %, Q4_K 7.1 %, Q2_K 30 %, ...): a wrong
// scale or a lost bit shows up as a multiple of these.
BOOST_AUTO_TEST_CASE(error_bounds) {
    struct Bound {
        DType t;
        double max_rel_rmse;
    };
    const Bound bounds[] = {
        {DType::F16, 2.5e-4}, {DType::BF16, 2.0e-3}, {DType::Q8_0, 6.5e-3}, {DType::Q6_K, 2.2e-2},
        {DType::Q5_0, 5.0e-2}, {DType::Q5_1, 4.5e-2}, {DType::Q5_K, 4.4e-2}, {DType::Q4_0, 1.0e-1},
        {DType::Q4_1, 9.5e-2}, {DType::Q4_K, 8.5e-2}, {DType::IQ4_NL, 1.0e-1}, {DType::IQ4_XS, 1.0e-1}, {DType::MXFP4, 1.4e-1}, {DType::Q3_K, 1.8e-1}, {DType::Q2_K, 3.6e-1},
    };
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(256 * 64);
    for (float& v : x) v = normal(rng);
    for (const auto& b : bounds) {
        const double e = relative_rmse(x, dequantize(b.t, quantize(b.t, x), x.size()));
        BOOST_TEST_MESSAGE(dtype_name(b.t) << " relative RMSE " << e);
        BOOST_TEST(e <= b.max_rel_rmse, dtype_name(b.t) << ": relative RMSE " << e << " > " << b.max_rel_rmse);
        BOOST_TEST(e > 0.0, dtype_name(b.t) << " is lossy on random data");
    }
}

// Q8_0's per-element error is at most half a step (amax/127) plus the F16 rounding of the
// step (2^-11 relative, times up to 127 steps), in blocks whose step is a normal F16.
BOOST_AUTO_TEST_CASE(q8_0_elementwise_bound) {
    const auto x = read_fixture<float>("input.f32");
    const auto y = dequantize(DType::Q8_0, quantize(DType::Q8_0, x), x.size());
    int blocks_checked = 0, bad = 0;
    for (size_t b = 0; b < x.size(); b += 32) {
        float amax = 0;
        for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b + j]));
        if (amax / 127 < std::ldexp(1.0f, -14)) continue;
        ++blocks_checked;
        for (size_t j = 0; j < 32; ++j) bad += std::fabs(y[b + j] - x[b + j]) > amax / 127 * 0.5f + amax / 2048;
    }
    BOOST_TEST(blocks_checked > 100);
    BOOST_TEST(bad == 0);
}

BOOST_AUTO_TEST_CASE(rejects_partial_blocks) {
    std::vector<float> x(300, 1.0f);
    std::vector<uint8_t> q(4096);
    BOOST_CHECK_THROW(quantize_row(DType::Q4_K, x.data(), q.data(), 300), std::invalid_argument);
    BOOST_CHECK_THROW(quantize_row(DType::Q4_0, x.data(), q.data(), 40), std::invalid_argument);
    BOOST_CHECK_THROW(dequantize_row(DType::Q6_K, q.data(), x.data(), 100), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(unsupported_types_are_named) {
    std::vector<float> x(32, 1.0f);
    std::vector<uint8_t> q(256);
    for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64, DType::F64}) {
        BOOST_TEST(!can_quantize(t));
        try {
            quantize_row(t, x.data(), q.data(), 32);
            BOOST_FAIL("quantize_row accepted " << dtype_name(t));
        } catch (const std::invalid_argument& e) {
            BOOST_TEST(std::string(e.what()).find(dtype_name(t)) != std::string::npos, e.what());
        }
        try {
            dequantize_row(t, q.data(), x.data(), 32);
            BOOST_FAIL("dequantize_row accepted " << dtype_name(t));
        } catch (const std::invalid_argument& e) {
            BOOST_TEST(std::string(e.what()).find(dtype_name(t)) != std::string::npos, e.what());
        }
    }
    BOOST_TEST(!dtype_info(34u).has_value());  // TQ1_0: a GGML type strata does not read
    BOOST_TEST(!dtype_info(1000u).has_value());
    for (DType t : kQuantTypes) BOOST_TEST(can_quantize(t));
    for (DType t : kLatticeTypes) {
        BOOST_TEST((can_dequantize(t) && !can_quantize(t)), dtype_name(t));
        try {
            quantize_row(t, x.data(), q.data(), 256);
            BOOST_FAIL("quantize_row accepted " << dtype_name(t));
        } catch (const std::invalid_argument& e) {
            BOOST_TEST(std::string(e.what()).find(dtype_name(t)) != std::string::npos, e.what());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(dequantizers)

// Q4_K_R (tensor/repack.h): Q4_K's bytes rearranged in place and back, the same values,
// only ever made in memory.
BOOST_AUTO_TEST_CASE(q4_k_r_is_q4_k_rearranged) {
    BOOST_TEST(can_keep_as(DType::Q4_K, DType::Q4_K_R, 3));
    BOOST_TEST(can_keep_as(DType::Q6_K, DType::Q6_K, 3));
    BOOST_TEST(!can_keep_as(DType::Q6_K, DType::Q4_K_R, 3));
    BOOST_TEST(!can_quantize(DType::Q4_K_R));
    BOOST_TEST(can_dequantize(DType::Q4_K_R));
    BOOST_TEST(!dtype_info(static_cast<uint32_t>(DType::Q4_K_R)).has_value());  // no file holds it
    const int64_t n = 256 * 6;
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> x(n), natural_values(n), resident_values(n);
    for (float& v : x) v = dist(rng);
    std::vector<uint8_t> natural(dtype_bytes(DType::Q4_K, n));
    quantize_row(DType::Q4_K, x.data(), natural.data(), n);
    std::vector<uint8_t> resident = natural, back(natural.size());
    rearrange(DType::Q4_K, DType::Q4_K_R, resident.data(), 1, resident.size());
    BOOST_TEST(resident != natural);
    q4_k_from_resident(resident.data(), back.data(), n / 256);
    BOOST_TEST(back == natural);
    dequantize_row(DType::Q4_K, natural.data(), natural_values.data(), n);
    dequantize_row(DType::Q4_K_R, resident.data(), resident_values.data(), n);
    BOOST_TEST(resident_values == natural_values);
    std::vector<uint8_t> plain = natural;
    rearrange(DType::Q6_K, DType::Q6_K, plain.data(), 1, plain.size());  // its own layout: untouched
    BOOST_TEST(plain == natural);
    BOOST_CHECK_THROW(rearrange(DType::Q4_K, DType::Q4_K_R, resident.data(), 1, 100), std::invalid_argument);
    BOOST_CHECK_THROW(rearrange(DType::Q6_K, DType::Q4_K_R, plain.data(), 1, plain.size()), std::invalid_argument);
}

// A Q6_K block in the Q6_K planes order (tensor/repack.h), from its 6-bit values as Q6_K
// defines them (llama.cpp's dequantize_row_q6_K).
std::vector<uint8_t> q6_k_in_planes(const uint8_t* block) {
    std::vector<uint8_t> out(block, block + sizeof(strata::BlockQ6_K));
    for (int n = 0; n < 2; ++n)
        for (int l = 0; l < 32; ++l) {
            const uint8_t* ql = block + 64 * n;
            const uint8_t h = block[128 + 32 * n + l];
            int v[4];
            for (int r = 0; r < 4; ++r) v[r] = (r < 2 ? ql[32 * r + l] & 15 : ql[32 * (r - 2) + l] >> 4) | (h >> 2 * r & 3) << 4;
            out[96 * n + l] = static_cast<uint8_t>(v[0] | (v[2] >> 4) << 6);
            out[96 * n + 32 + l] = static_cast<uint8_t>(v[1] | (v[3] >> 4) << 6);
            out[96 * n + 64 + l] = static_cast<uint8_t>((v[2] & 15) | (v[3] & 15) << 4);
        }
    return out;
}

// The 8-row layouts: 16 rows rearranged in place, two groups of 8; every row comes back
// out of its group as it was, and each piece of row r's block s (the bytes before its dwords,
// Q8_0's d; each dword; the bytes after them, Q6_K's d) of n bytes at offset o of the block
// sits at 8 o + n (r % 8) of the group's block s (Q6_K_R8: of the block in planes order).
BOOST_AUTO_TEST_CASE(r8_layouts_interleave_eight_rows) {
    for (DType layout : {DType::Q4_K_R8, DType::Q5_K_R8, DType::Q6_K_R8, DType::IQ4_XS_R8, DType::Q8_0_R8, DType::Q4_0_R8,
                         DType::IQ4_NL_R8}) {
        const DType file = *file_type_of_r8(layout);
        BOOST_TEST_CONTEXT(dtype_name(layout)) {
            BOOST_TEST(can_keep_as(file, layout, 16));
            BOOST_TEST(!can_keep_as(file, layout, 12));
            BOOST_TEST(!can_dequantize(layout));  // a row alone is not readable
            BOOST_TEST(!dtype_info(static_cast<uint32_t>(layout)).has_value());
            const int64_t rows = 16, blocks = 3, n = dtype_info(file).block_elems * blocks;
            const size_t row_bytes = dtype_bytes(file, n), block = dtype_info(file).block_bytes;
            const size_t head = dtype_info(file).block_elems == 32 ? 2 : 0;  // the 32-element types' d
            const size_t dwords = (block - head) / 4, tail = head + 4 * dwords;
            std::mt19937 rng(8);
            std::vector<uint8_t> natural(rows * row_bytes);
            for (uint8_t& b : natural) b = static_cast<uint8_t>(rng());
            std::vector<uint8_t> r8 = natural;
            rearrange(file, layout, r8.data(), rows, row_bytes);
            BOOST_TEST(r8 != natural);
            for (int64_t r = 0; r < rows; ++r) {
                const uint8_t* group = r8.data() + r / 8 * 8 * row_bytes;
                std::vector<uint8_t> back(row_bytes);
                row_from_r8(layout, group, static_cast<int>(r % 8), back.data(), blocks);
                BOOST_TEST(std::memcmp(back.data(), natural.data() + r * row_bytes, row_bytes) == 0, "row " << r);
                for (int64_t s = 0; s < blocks; ++s) {
                    const uint8_t* in_group = group + s * 8 * block;
                    const uint8_t* in_file = natural.data() + r * row_bytes + s * block;
                    const std::vector<uint8_t> expected =
                        layout == DType::Q6_K_R8 ? q6_k_in_planes(in_file) : std::vector<uint8_t>(in_file, in_file + block);
                    const uint8_t* in_row = expected.data();
                    auto at = [&](size_t o, size_t bytes) { return in_group + 8 * o + bytes * (r % 8); };
                    BOOST_TEST(std::memcmp(at(0, head), in_row, head) == 0);
                    for (size_t c = 0; c < dwords; ++c) BOOST_TEST(std::memcmp(at(head + 4 * c, 4), in_row + head + 4 * c, 4) == 0);
                    BOOST_TEST(std::memcmp(at(tail, block - tail), in_row + tail, block - tail) == 0);
                }
            }
            BOOST_CHECK_THROW(rearrange(file, layout, r8.data(), 12, row_bytes), std::invalid_argument);
        }
    }
    BOOST_TEST(!file_type_of_r8(DType::Q4_K_R).has_value());
    BOOST_TEST((r8_layout_of(DType::Q6_K) == DType::Q6_K_R8));
    BOOST_TEST(!r8_layout_of(DType::Q5_0).has_value());
    static_assert(r8_file_of(DType::IQ4_NL_R8) == DType::IQ4_NL && r8_file_of(DType::Q4_K_R) == DType::Q4_K_R);
    static_assert(row_layout_of(DType::Q4_K) == DType::Q4_K_R && row_layout_of(DType::Q5_K) == DType::Q5_K);
    BOOST_TEST(can_keep_as(DType::Q4_K, row_layout_of(DType::Q4_K), 3));
    uint8_t row[144];
    BOOST_CHECK_THROW(row_from_r8(DType::Q4_K_R, row, 0, row, 1), std::invalid_argument);
    BOOST_CHECK_THROW(rearrange(DType::Q5_K, DType::Q6_K_R8, nullptr, 8, 176), std::invalid_argument);
}

// <type>.q dequantized gives <type>.deq.f32 (llama.cpp's dequantize_row_<type>) bit for bit.
void check_dequantization_fixture(DType t) {
    const std::string stem = lower(dtype_name(t));
    const auto q = read_fixture<uint8_t>(stem + ".q");
    const auto expected = read_fixture<float>(stem + ".deq.f32");
    BOOST_REQUIRE_EQUAL(q.size(), dtype_bytes(t, expected.size()));
    const auto got = dequantize(t, q, expected.size());
    size_t mismatches = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (!same_bits(got[i], expected[i]) && mismatches++ == 0) first = i;
    BOOST_TEST(mismatches == 0u, dtype_name(t) << ": " << mismatches << " values differ, first at " << first);
}

BOOST_AUTO_TEST_CASE(bits_match_llama_cpp) {
    for (DType t : kQuantTypes) check_dequantization_fixture(t);
}

// Two rows quantized by llama.cpp (with an importance matrix) and two rows of random blocks:
// every grid, sign and scale field against GGML's decoding.
BOOST_AUTO_TEST_CASE(lattice_bits_match_llama_cpp) {
    for (DType t : kLatticeTypes) check_dequantization_fixture(t);
}

// Tensors of llama.cpp-quantized golden models, dequantized in float64 by gguf_ref.py. Our
// float32 arithmetic may differ by rounding only.
BOOST_AUTO_TEST_CASE(golden_tensors_match_gguf_ref) {
    struct Slice {
        const char* stem;
        DType t;
    };
    const Slice slices[] = {
        {"golden_llama-q8_0.blk.0.attn_q.weight", DType::Q8_0},
        {"golden_llama-q4_0.blk.0.ffn_down.weight", DType::Q4_0},
        {"golden_llama-q4_0.output.weight", DType::Q6_K},
        {"golden_llama-q4_k_m.blk.0.ffn_gate.weight", DType::Q4_K},
        {"golden_llama-q4_k_m.blk.1.ffn_down.weight", DType::Q6_K},
        {"golden_llama-q6_k.token_embd.weight", DType::Q6_K},
    };
    for (const auto& s : slices) {
        const auto q = read_fixture<uint8_t>(std::string(s.stem) + ".q");
        const auto ref = read_fixture<double>(std::string(s.stem) + ".f64");
        BOOST_REQUIRE_EQUAL(q.size(), dtype_bytes(s.t, ref.size()));
        const auto got = dequantize(s.t, q, ref.size());
        double max_ref = 0, max_err = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
            max_ref = std::max(max_ref, std::fabs(ref[i]));
            max_err = std::max(max_err, std::fabs(got[i] - ref[i]));
        }
        BOOST_TEST(max_ref > 0.0, s.stem);
        BOOST_TEST(max_err <= 1e-6 * max_ref, s.stem << ": max error " << max_err << " of " << max_ref);
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(half_precision)

BOOST_AUTO_TEST_CASE(conversions_match_llama_cpp_on_edges) {
    const auto x = read_fixture<float>("fp_edges.f32");
    const auto f16 = read_fixture<uint16_t>("fp_edges.f16");
    const auto bf16 = read_fixture<uint16_t>("fp_edges.bf16");
    BOOST_REQUIRE(f16.size() == x.size() && bf16.size() == x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        BOOST_TEST(fp32_to_fp16(x[i]) == f16[i], "F16 of " << x[i] << " (edge " << i << ")");
        BOOST_TEST(fp32_to_bf16(x[i]) == bf16[i], "BF16 of " << x[i] << " (edge " << i << ")");
    }
}

BOOST_AUTO_TEST_CASE(f16_rounding_rules) {
    BOOST_TEST(fp32_to_fp16(65504.0f) == 0x7BFF);                 // largest finite
    BOOST_TEST(fp32_to_fp16(65520.0f) == 0x7C00);                 // halfway to 2^16 rounds to inf
    BOOST_TEST(fp32_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);    // smallest subnormal
    BOOST_TEST(fp32_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);    // tie between 0 and 2^-24: even
    BOOST_TEST(fp32_to_fp16(std::ldexp(3.0f, -25)) == 0x0002);    // tie between 1 and 2 ulps: even
    BOOST_TEST(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
    BOOST_TEST(fp32_to_fp16(1.0f + std::ldexp(3.0f, -11)) == 0x3C02);
    BOOST_TEST(fp32_to_fp16(-0.0f) == 0x8000);
    BOOST_TEST(fp32_to_fp16(-INFINITY) == 0xFC00);
    BOOST_TEST((fp32_to_fp16(NAN) & 0x7FFF) > 0x7C00);
    BOOST_TEST(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
    BOOST_TEST(fp32_to_bf16(1.0f + std::ldexp(3.0f, -8)) == 0x3F82);
    BOOST_TEST(fp32_to_bf16(std::bit_cast<float>(0x7F800001u)) == 0x7FC0);  // signalling NaN turns quiet
    BOOST_TEST(fp32_to_bf16(1e-40f) == 0x0001);                   // subnormals are kept, not flushed
}

// Every F16 bit pattern decodes to sign * mantissa * 2^exponent (computed here with ldexp),
// NaNs stay NaN with their sign, and encoding the value gives the pattern back.
BOOST_AUTO_TEST_CASE(f16_decoding_is_exact_for_all_patterns) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const int exp = (h >> 10) & 0x1F;
        const int mant = h & 0x3FF;
        const float sign = (h & 0x8000) ? -1.0f : 1.0f;
        const float f = fp16_to_fp32(static_cast<uint16_t>(h));
        if (exp == 31 && mant != 0) {
            bad += !(std::isnan(f) && std::signbit(f) == (sign < 0));
            continue;
        }
        const float expected = exp == 31   ? sign * INFINITY
                               : exp == 0 ? sign * std::ldexp(static_cast<float>(mant), -24)
                                          : sign * std::ldexp(static_cast<float>(1024 + mant), exp - 25);
        bad += !same_bits(f, expected);
        bad += fp32_to_fp16(f) != h;
    }
    BOOST_TEST(bad == 0);
}

BOOST_AUTO_TEST_CASE(bf16_round_trips_all_patterns) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = bf16_to_fp32(static_cast<uint16_t>(h));
        bad += !same_bits(f, std::bit_cast<float>(h << 16));
        if (!std::isnan(f)) bad += fp32_to_bf16(f) != h;
    }
    BOOST_TEST(bad == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(mxfp4_and_lattice)

BOOST_AUTO_TEST_CASE(ggml_ids_and_geometry) {
    struct Expect {
        uint32_t id;
        std::string_view name;
        uint32_t elems, bytes;
    };
    const Expect expected[] = {{16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74}, {18, "IQ3_XXS", 256, 98},
                               {19, "IQ1_S", 256, 50},   {21, "IQ3_S", 256, 110}, {22, "IQ2_S", 256, 82},
                               {29, "IQ1_M", 256, 56},   {39, "MXFP4", 32, 17}};
    for (const auto& e : expected) {
        const auto info = dtype_info(e.id);
        BOOST_REQUIRE_MESSAGE(info.has_value(), "type id " << e.id);
        BOOST_TEST(info->name == e.name);
        BOOST_TEST(info->block_elems == e.elems);
        BOOST_TEST(info->block_bytes == e.bytes);
        BOOST_TEST((dtype_from_name(e.name) == info->type));
    }
}

BlockMXFP4 mxfp4_block(uint8_t e) {
    BlockMXFP4 b{};
    b.e = e;
    for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    return b;
}

// Code c of a block with exponent byte e is kMXFP4Values[c] * 2^(e - 128): E2M1 times 2^(e - 127).
BOOST_AUTO_TEST_CASE(mxfp4_known_values) {
    const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, 0, -0.5f, -1, -1.5f, -2, -3, -4, -6};
    for (int e : {0, 1, 2, 100, 127, 130, 200}) {
        const BlockMXFP4 b = mxfp4_block(static_cast<uint8_t>(e));
        float y[32];
        dequantize_row(DType::MXFP4, &b, y, 32);
        for (int j = 0; j < 16; ++j) {
            BOOST_TEST(same_bits(y[j], e2m1[j] * std::ldexp(1.0f, e - 127)), "e " << e << " code " << j << ": " << y[j]);
            BOOST_TEST(same_bits(y[j + 16], e2m1[15 - j] * std::ldexp(1.0f, e - 127)), "e " << e << " code " << 15 - j);
        }
    }
}

// Multiples of an E2M1 value by a power of two are stored exactly; the scale is the largest
// magnitude's exponent minus 2 (6 = 1.5 * 2^2), so 6 * 2^k has e = 127 + k.
BOOST_AUTO_TEST_CASE(mxfp4_exact_values_round_trip) {
    const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (int k : {-20, -3, 0, 5, 40}) {
        std::vector<float> x(64);
        for (size_t j = 0; j < x.size(); ++j) x[j] = (j % 3 ? 1.0f : -1.0f) * std::ldexp(e2m1[j % 8], k);
        const auto q = quantize(DType::MXFP4, x);
        BOOST_TEST(q[0] == 127 + k);
        const auto y = dequantize(DType::MXFP4, q, x.size());
        for (size_t j = 0; j < x.size(); ++j) BOOST_TEST(y[j] == x[j], "k " << k << " element " << j);
    }
}

// Halfway between two codes the first code in table order wins (GGML's strict <): 2.5 -> 2,
// 5 -> 4, -2.5 -> -2; below a quarter step a value becomes 0; an all-zero block has e = 0.
BOOST_AUTO_TEST_CASE(mxfp4_rounding) {
    std::vector<float> x(32, 0.0f);
    x[0] = 6;  // e = 127: the codes are the E2M1 values themselves
    x[1] = 2.5f, x[2] = 5, x[3] = -2.5f, x[4] = 0.24f, x[5] = -0.26f, x[6] = 5.1f;
    const auto y = dequantize(DType::MXFP4, quantize(DType::MXFP4, x), 32);
    const float want[7] = {6, 2, 4, -2, 0, -0.5f, 6};
    for (int j = 0; j < 7; ++j) BOOST_TEST(y[j] == want[j], "element " << j << ": " << y[j]);
    BOOST_TEST(quantize(DType::MXFP4, std::vector<float>(32, 0.0f))[0] == 0);
}

// iq_lowbit.cpp computes GGML's sub-block scales d * (0.5 + s) / 4 (IQ2) and d * (0.5 + s) / 2
// (IQ3_XXS) as (d * (2s + 1)) * c: the same float for every finite F16 d and 4-bit s.
BOOST_AUTO_TEST_CASE(lattice_scale_identity) {
    int differ = 0;
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float d = fp16_to_fp32(static_cast<uint16_t>(h));
        if (!std::isfinite(d)) continue;
        for (int s = 0; s < 16; ++s) {
            differ += !same_bits(d * (0.5f + s) * 0.25f, d * (2 * s + 1) * 0.125f);
            differ += !same_bits(d * (0.5f + s) * 0.5f, d * (2 * s + 1) * 0.25f);
        }
    }
    BOOST_TEST(differ == 0);
}

// dot_ref gives the floats of GGML's generic ggml_vec_dot_<type>_<act> bit for bit (act.*: row
// 7 of input.f32 as GGML quantizes it, which strata's quantizers must reproduce first).
BOOST_AUTO_TEST_CASE(dot_ref_bits_match_llama_cpp) {
    const auto x = read_fixture<float>("input.f32");
    const std::vector<float> row(x.begin() + 7 * kCols, x.begin() + 8 * kCols);
    std::vector<DType> types(std::begin(kLatticeTypes), std::end(kLatticeTypes));
    types.push_back(DType::MXFP4);
    for (DType t : types) {
        const DType at = dot_ref_activation(t);
        const auto a = quantize(at, row);
        BOOST_REQUIRE_MESSAGE(a == read_fixture<uint8_t>("act." + lower(dtype_name(at))), dtype_name(at) << " activations");
        const auto w = read_fixture<uint8_t>(lower(dtype_name(t)) + ".q");
        const auto expected = read_fixture<float>(lower(dtype_name(t)) + ".dot.f32");
        const size_t row_bytes = dtype_bytes(t, kCols);
        for (size_t r = 0; r < expected.size(); ++r) {
            const float got = dot_ref(t, w.data() + r * row_bytes, a.data(), kCols);
            BOOST_TEST(same_bits(got, expected[r]), dtype_name(t) << " row " << r << ": " << got << " vs " << expected[r]);
        }
    }
}

// dot_ref against the float64 dot of the dequantized rows: the same value up to float rounding.
BOOST_AUTO_TEST_CASE(dot_ref_matches_dequantized_dot) {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<DType> types(std::begin(kLatticeTypes), std::end(kLatticeTypes));
    types.push_back(DType::MXFP4);
    for (DType t : types) {
        const auto w = read_fixture<uint8_t>(lower(dtype_name(t)) + ".q");
        const int64_t k = kCols;
        const DType at = dot_ref_activation(t);
        BOOST_TEST((at == (t == DType::MXFP4 ? DType::Q8_0 : DType::Q8_K)));
        for (int r = 0; r < 4; ++r) {
            std::vector<float> x(k);
            for (float& v : x) v = normal(rng);
            const auto a = quantize(at, x);
            const std::vector<uint8_t> wrow(w.begin() + r * dtype_bytes(t, k), w.begin() + (r + 1) * dtype_bytes(t, k));
            const auto wf = dequantize(t, wrow, k), af = dequantize(at, a, k);
            double want = 0, mag = 0;
            for (int64_t i = 0; i < k; ++i) {
                want += static_cast<double>(wf[i]) * af[i];
                mag += std::fabs(static_cast<double>(wf[i]) * af[i]);
            }
            const float got = dot_ref(t, wrow.data(), a.data(), k);
            BOOST_TEST(std::fabs(got - want) <= 1e-5 * mag, dtype_name(t) << " row " << r << ": " << got << " vs " << want);
        }
    }
    uint8_t buf[512] = {};
    BOOST_CHECK_THROW(dot_ref(DType::Q4_0, buf, buf, 32), std::invalid_argument);
    BOOST_CHECK_THROW(dot_ref(DType::MXFP4, buf, buf, 16), std::invalid_argument);
    BOOST_CHECK_THROW(dot_ref(DType::IQ2_XXS, buf, buf, 128), std::invalid_argument);
    BOOST_TEST(!has_dot_ref(DType::Q4_K));
}

BOOST_AUTO_TEST_SUITE_END()
