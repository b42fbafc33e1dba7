// tests/fuzz/gguf_seeds.cpp — writes the seed corpus of gguf_fuzz (tests/fuzz/corpus/gguf/):
// tiny valid files from the Writer covering every metadata type, several tensor types,
// a non-default alignment, nested arrays and GGUF v2. Usage: gguf_seeds DIR
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/writer.h"

using namespace strata;
using namespace strata::gguf;

namespace {

void save(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// [[1, 2], [3]] as int32, hand-encoded (the Writer copies nested arrays but does not build them).
std::vector<uint8_t> nested_array_file() {
    std::vector<uint8_t> b;
    auto put = [&](auto v) { b.insert(b.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + sizeof v); };
    put(kMagic), put(uint32_t{3}), put(uint64_t{0}), put(uint64_t{1}), put(uint64_t{1}), b.push_back('n');
    put(uint32_t{9}), put(uint32_t{9}), put(uint64_t{2});
    put(uint32_t{5}), put(uint64_t{2}), put(int32_t{1}), put(int32_t{2});
    put(uint32_t{5}), put(uint64_t{1}), put(int32_t{3});
    return b;
}

std::vector<uint8_t> every_metadata_type() {
    Writer w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 2);
    w.set_i32("llama.signed", -3);
    w.set_u64("llama.context_length", 128);
    w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_bool("tokenizer.ggml.add_bos_token", true);
    w.set_strings("tokenizer.ggml.tokens", {"<unk>", "a", "bc"});
    w.set_f32s("tokenizer.ggml.scores", {0.f, -1.f, -2.f});
    w.set_i32s("tokenizer.ggml.token_type", {2, 1, 1});
    auto nested_bytes = nested_array_file();
    w.set_value("nested", *File::parse(nested_bytes)->find("n"));
    static const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    w.add_tensor("token_embd.weight", DType::F32, {4, 2}, x);
    return w.bytes();
}

std::vector<uint8_t> quantized_tensors_aligned_64() {
    Writer w(64);
    static const std::vector<uint8_t> zeros(256, 0);
    w.add_tensor("f16", DType::F16, {8}, zeros.data());
    w.add_tensor("q4_0", DType::Q4_0, {32}, zeros.data());
    w.add_tensor("q8_0", DType::Q8_0, {32, 2}, zeros.data());
    w.add_tensor("q4_k", DType::Q4_K, {256}, zeros.data());
    return w.bytes();
}

std::vector<uint8_t> version_2() {
    Writer w;
    w.set_string("general.name", "v2");
    static const uint16_t h[4] = {0x3c00, 0, 0, 0};
    w.add_tensor("t", DType::BF16, {4}, h);
    auto b = w.bytes();
    b[4] = 2;
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: gguf_seeds DIR\n");
        return 2;
    }
    std::string dir = argv[1];
    save(dir + "/empty.gguf", Writer().bytes());
    save(dir + "/metadata.gguf", every_metadata_type());
    save(dir + "/quantized.gguf", quantized_tensors_aligned_64());
    save(dir + "/v2.gguf", version_2());
    return 0;
}
