// tests/fuzz/gguf_fuzz.cpp — libFuzzer target for the GGUF reader: parses arbitrary bytes
// and walks everything a parsed file exposes (metadata accessors, strings, arrays, the
// first and last byte of every tensor), so that ASan flags any view outside the input and
// the checks below flag any tensor whose bounds the reader got wrong.
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "gguf/gguf.h"

using namespace strata;
using namespace strata::gguf;

namespace {

volatile uint8_t g_sink;

void touch(const void* p, uint64_t n) {
    if (n == 0) return;
    auto* b = static_cast<const uint8_t*>(p);
    g_sink = static_cast<uint8_t>(b[0] ^ b[n - 1]);
}

void check(bool ok) {
    if (!ok) std::abort();
}

void walk(const Value& v) {
    touch(v.raw.data(), v.raw.size());
    (void)v.as_int();
    (void)v.as_float();
    (void)v.as_bool();
    if (auto s = v.as_string()) touch(s->data(), s->size());
    if (v.type != ValueType::ARRAY) return;
    for (std::string_view s : v.strings) touch(s.data(), s.size());
    for (const Value& item : v.items) walk(item);
    for (uint64_t i = 0; i <= v.array_count; ++i) {  // one past the end must be refused
        auto n = v.number_at(i);
        auto k = v.int_at(i);
        check(i < v.array_count || (!n && !k));
    }
}

// Every typed lookup either answers or throws GgufError; none may read outside the file.
template <class F>
void lookup(F&& f) {
    try {
        f();
    } catch (const GgufError&) {
    }
}

void walk(const File& f) {
    for (const auto& kv : f.metadata()) {
        const std::string& key = kv.first;  // a plain name: clang 14 cannot capture structured bindings
        check(f.find(key) == &kv.second);
        walk(kv.second);
        lookup([&] { f.get_int(key); });
        lookup([&] { f.get_int(key, 1, 1 << 20); });
        lookup([&] { f.get_float(key); });
        lookup([&] { f.get_float(key, 0.0, 1.0); });
        lookup([&] { f.get_bool(key); });
        lookup([&] { f.get_string(key); });
        lookup([&] { f.get_array(key); });
        lookup([&] { f.get_array(key, ValueType::STRING); });
    }
    check(f.data_offset() <= f.file_size());
    for (const TensorInfo& t : f.tensors()) {
        check(f.tensor(t.name) == &t);
        check(t.nbytes > 0 && t.file_offset % f.alignment() == 0);
        check(t.file_offset >= f.data_offset() && t.nbytes <= f.file_size() - t.file_offset);
        check(t.data == f.bytes().data() + t.file_offset);
        check(t.elements() > 0 && dtype_bytes(t.type, static_cast<uint64_t>(t.elements())) == t.nbytes);
        touch(t.data, t.nbytes);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::shared_ptr<const File> f;
    try {
        f = File::parse({data, size});
    } catch (const GgufError&) {
        return 0;
    }
    walk(*f);
    return 0;
}
