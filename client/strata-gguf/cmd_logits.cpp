// client/strata-gguf/cmd_logits.cpp — `strata-gguf logits FILE --tokens IDS --out OUT.f32`:
// evaluates the ids as one batch and writes float32 little-endian logits of every
// position, [n_tokens][n_vocab], the format of llama.cpp's golden files.
#include <cstdio>
#include <fstream>

#include "commands.h"
#include "model_io.h"

namespace strata::tool {

int cmd_logits(const Argv& argv) {
    Args args(argv, {"tokens", "tokens-file", "out", "threads"}, {});
    auto model = load_model(args.pos(0, "FILE"), args);
    const auto tokens = read_tokens(args);
    if (tokens.empty()) throw UsageError("no tokens given");
    const std::string out = args.get("out").value_or("");
    if (out.empty()) throw UsageError("missing --out OUT.f32");

    auto cache = model->new_cache(static_cast<int32_t>(tokens.size()));
    if (cache.capacity() < static_cast<int32_t>(tokens.size()))
        throw std::runtime_error(std::to_string(tokens.size()) + " tokens exceed the model's context of " + std::to_string(cache.capacity()));
    std::vector<float> logits;
    const model::SequenceBatch seq{&cache, tokens, model::Logits::All};
    model->forward({&seq, 1}, logits);

    std::ofstream f(out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * sizeof(float)));
    if (!f) throw std::runtime_error("cannot write " + out);
    std::fprintf(stderr, "wrote %zu x %d logits to %s\n", tokens.size(), model->hparams().n_vocab, out.c_str());
    return 0;
}

}  // namespace strata::tool
