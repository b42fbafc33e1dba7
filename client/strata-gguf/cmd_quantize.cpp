// client/strata-gguf/cmd_quantize.cpp — `strata-gguf quantize IN OUT TYPE`: whole-model
// quantization with llama.cpp's mixes (model/quantize_model), printing each tensor as it
// is written and the totals.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <thread>

#include "args.h"
#include "commands.h"
#include "model/quantize_model.h"

namespace strata::tool {
namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s;
    for (size_t d = 0; d < shape.size(); ++d) s += (d ? " x " : "") + std::to_string(shape[d]);
    return s;
}

std::string type_list() {
    std::string s;
    for (const auto& ft : model::file_types()) s += (s.empty() ? "" : " ") + std::string(ft.name);
    return s;
}

void print_tensor(const model::TensorDone& d) {
    const model::TensorPlan& p = *d.plan;
    const std::string from(dtype_name(p.src->type)), to(dtype_name(p.type));
    std::printf("[%4zu/%4zu] %-36s %-16s %-5s -> %-5s %9.2f MiB -> %9.2f MiB %7.2f s%s\n", d.index + 1, d.count,
                p.src->name.c_str(), shape_text(p.shape).c_str(), from.c_str(), p.type == p.src->type ? "copy" : to.c_str(),
                mib(d.bytes_in), mib(d.bytes_out), d.seconds, p.fallback.empty() ? "" : "  (fallback)");
    if (!p.fallback.empty()) std::printf("            %s: %s, so %s\n", p.src->name.c_str(), p.fallback.c_str(), to.c_str());
    std::fflush(stdout);
}

}  // namespace

int cmd_quantize(const Argv& argv) {
    Args args(argv, {"threads"}, {"allow-requantize"});
    const std::string& in = args.pos(0, "IN");
    const std::string& out = args.pos(1, "OUT");
    const std::string& type = args.pos(2, "TYPE");
    if (args.positional().size() > 3) throw UsageError("unexpected argument '" + args.positional()[3] + "'");
    const auto ft = model::file_type_from_name(type);
    if (!ft) throw UsageError("unknown TYPE '" + type + "'; one of: " + type_list());

    model::QuantizeOptions opt;
    opt.threads = static_cast<int>(args.get_int("threads", std::max(1u, std::thread::hardware_concurrency()), 1, 1024));
    opt.allow_requantize = args.flag("allow-requantize");
    uint64_t params = 0;
    opt.on_tensor = [&](const model::TensorDone& d) {
        params += static_cast<uint64_t>(d.plan->src->elements());
        print_tensor(d);
    };
    std::printf("quantizing %s -> %s as %s (general.file_type %u) with %d threads\n", in.c_str(), out.c_str(),
                std::string(ft->name).c_str(), ft->id, opt.threads);
    const model::QuantizeResult r = model::quantize_model(in, out, *ft, opt);
    std::printf("done: %zu tensors, %zu converted, %zu copied, %zu fallbacks; %.2f MiB -> %.2f MiB (%.2f bits per weight) "
                "in %.2f s\n",
                r.tensors, r.converted, r.tensors - r.converted, r.fallbacks, mib(r.bytes_in), mib(r.bytes_out),
                params ? static_cast<double>(r.bytes_out) * 8 / static_cast<double>(params) : 0.0, r.seconds);
    return 0;
}

}  // namespace strata::tool
