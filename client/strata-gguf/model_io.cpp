// client/strata-gguf/model_io.cpp — shared helpers of the model-running subcommands.
#include "model_io.h"

#include <fstream>
#include <iterator>

namespace strata::tool {

std::unique_ptr<model::Model> load_model(const std::string& path, const Args& args) {
    model::Options opt;
    opt.n_threads = static_cast<int>(args.get_int("threads", 0, 0, 1024));
    return model::Model::load(gguf::File::open(path), opt);
}

std::vector<int32_t> read_tokens(const Args& args) {
    if (auto t = args.get("tokens")) return parse_ids(*t);
    if (auto f = args.get("tokens-file")) {
        std::ifstream in(*f);
        if (!in) throw UsageError("cannot read " + *f);
        return parse_ids(std::string(std::istreambuf_iterator<char>(in), {}));
    }
    throw UsageError("give the tokens with --tokens \"IDS\" or --tokens-file FILE");
}

int32_t argmax(const float* v, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; ++i)
        if (v[i] > v[best]) best = i;
    return best;
}

int64_t copy_model(const gguf::File& model, gguf::Writer& w, const std::function<bool(std::string_view)>& keep) {
    for (const auto& [key, value] : model.metadata())
        if (keep(key)) w.set_value(key, value);
    for (const auto& t : model.tensors()) w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data);
    const gguf::TensorInfo* embd = model.tensor("token_embd.weight");
    return embd && embd->n_dims == 2 ? embd->ne[1] : 0;
}

}  // namespace strata::tool
