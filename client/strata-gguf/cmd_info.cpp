// client/strata-gguf/cmd_info.cpp — `strata-gguf info FILE`: metadata, tensor table,
// sizes, parameter count and a histogram of tensor types; with --budget, the memory plan
// the daemon would make (the same planner and reserves) and the tokens/s bound it implies
// at the file's measured read speed.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>

#include "args.h"
#include "commands.h"
#include "engine/memory.h"
#include "gguf/gguf.h"
#include "weights/streamed.h"

namespace strata::tool {
namespace {

std::string human_bytes(uint64_t b) {
    char buf[32];
    if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(1ull << 30));
    else if (b >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", b / double(1ull << 20));
    else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
    else std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
    return buf;
}

// A string from the file, quoted, cut at 60 bytes, control bytes escaped (a file must
// not be able to drive the terminal).
std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s.substr(0, 60)) {
        if (c >= 0x20 && c != 0x7f) {
            out += static_cast<char>(c);
            continue;
        }
        char esc[8];
        std::snprintf(esc, sizeof esc, c == '\n' ? "\\n" : "\\x%02x", c);
        out += esc;
    }
    out += '"';
    if (s.size() > 60) out.append("...(").append(std::to_string(s.size())).append(" bytes)");
    return out;
}

// A one-line rendering of a metadata value; long strings and arrays are abbreviated.
std::string render(const gguf::Value& v) {
    using gguf::ValueType;
    if (auto s = v.as_string()) return quoted(*s);
    if (v.type == ValueType::ARRAY) {
        std::string out = "[";
        out.append(std::to_string(v.array_count)).append(" x ").append(gguf::value_type_name(v.array_type)).append("]");
        uint64_t shown = std::min<uint64_t>(v.array_count, 4);
        for (uint64_t i = 0; i < shown; ++i) {
            out += i ? ", " : " ";
            if (v.array_type == ValueType::STRING) out += quoted(v.strings[i]);
            else if (v.array_type == ValueType::ARRAY) out += render(v.items[i]);
            else if (auto n = v.int_at(i)) out += std::to_string(*n);
            else if (auto x = v.number_at(i)) out += std::to_string(*x);
        }
        if (v.array_count > shown) out += ", ...";
        return out;
    }
    if (v.type == ValueType::BOOL) return *v.as_bool() ? "true" : "false";
    if (v.type == ValueType::F32 || v.type == ValueType::F64) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", *v.as_float());
        return buf;
    }
    if (auto i = v.as_int()) return std::to_string(*i);
    return std::to_string(static_cast<uint64_t>(*v.as_float()));
}

// The plan stratad would make for this file with these settings, and what it implies.
void show_plan(const std::string& path, const Args& args) {
    engine::Config c;
    c.model_path = path;
    c.memory.budget = *args.get("budget");
    c.memory.mode = args.get_or("mode", "auto");
    c.context = static_cast<int32_t>(args.get_int("context", c.context, 16, 1 << 24));
    c.batch_tokens = static_cast<int32_t>(args.get_int("batch-tokens", 0, 0, 1 << 16));
    auto file = gguf::File::open(path);
    const auto hp = model::HParams::from_gguf(*file);
    engine::MemoryPlanner planner(c, hp, engine::session_context(c.context, hp.n_ctx_train), 1);
    model::Options mo;
    mo.n_threads = 1;
    mo.weights = planner.factory(true);
    model::Model::load(file, mo);
    const auto& setup = planner.setup();
    double speed = 0;
    if (setup.plan.streamed_bytes) {
        std::fprintf(stderr, "measuring the read speed of %s...\n", path.c_str());
        speed = weights::measure_read_speed(*file, std::min<uint64_t>(setup.plan.streamed_bytes, 1ull << 30));
    }
    std::printf("\nbudget: %s\n%s", setup.budget.source.c_str(), setup.plan.describe(speed).c_str());
    std::printf("  tokens per pass       %d (engine.batch_tokens)\n", setup.batch_tokens);
    if (speed > 0)
        std::printf("  read speed            %.0f MB/s (measured now, O_DIRECT); one session decodes at most %.3f tokens/s,\n"
                    "                        N sessions together up to N times that\n",
                    speed / 1e6, setup.plan.pass_bound(speed));
}

}  // namespace

int cmd_info(const Argv& argv) {
    Args args(argv, {"budget", "mode", "context", "batch-tokens"}, {"no-tensors"});
    const std::string& path = args.pos(0, "FILE");
    auto f = gguf::File::open(path);
    std::printf("file: %s\nGGUF version %u, %s, alignment %u, data at byte %" PRIu64 "\n", path.c_str(), f->version(),
                human_bytes(f->file_size()).c_str(), f->alignment(), f->data_offset());

    std::printf("\nmetadata (%zu keys):\n", f->metadata().size());
    for (const auto& [key, value] : f->metadata()) std::printf("  %-44s %s\n", key.c_str(), render(value).c_str());

    std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;  // type -> (count, bytes)
    uint64_t params = 0, bytes = 0;
    if (!args.flag("no-tensors")) std::printf("\ntensors (%zu):\n", f->tensors().size());
    for (const auto& t : f->tensors()) {
        params += static_cast<uint64_t>(t.elements());
        bytes += t.nbytes;
        auto& h = by_type[std::string(dtype_name(t.type))];
        h.first++;
        h.second += t.nbytes;
        if (args.flag("no-tensors")) continue;
        std::string shape;
        for (int d = 0; d < t.n_dims; ++d) {
            if (d) shape += " x ";
            shape += std::to_string(t.ne[d]);
        }
        std::printf("  %-32s %-5s %-22s %12s  @%" PRIu64 "\n", t.name.c_str(), std::string(dtype_name(t.type)).c_str(),
                    shape.c_str(), human_bytes(t.nbytes).c_str(), t.file_offset);
    }
    std::printf("\nparameters: %" PRIu64 " (%.3f B), tensor data %s, %.2f bits per weight\n", params, params / 1e9,
                human_bytes(bytes).c_str(), params ? bytes * 8.0 / params : 0.0);
    std::printf("types:\n");
    for (const auto& [name, h] : by_type) std::printf("  %-5s %4" PRIu64 " tensors  %s\n", name.c_str(), h.first, human_bytes(h.second).c_str());
    if (args.get("budget")) show_plan(path, args);
    return 0;
}

}  // namespace strata::tool
