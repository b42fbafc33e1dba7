// client/strata-gguf/cmd_generate.cpp — `strata-gguf generate FILE --tokens IDS -n N`:
// greedy continuation (argmax, lowest id on ties), printed as token ids.
#include <cstdio>

#include "commands.h"
#include "model_io.h"

namespace strata::tool {

int cmd_generate(const Argv& argv) {
    Args args(argv, {"tokens", "tokens-file", "n", "threads"}, {});
    auto model = load_model(args.pos(0, "FILE"), args);
    const auto prompt = read_tokens(args);
    if (prompt.empty()) throw UsageError("no tokens given");
    const int64_t n = args.get_int("n", 32, 0, 1 << 20);
    const int32_t n_vocab = model->hparams().n_vocab;

    auto cache = model->new_cache(static_cast<int32_t>(prompt.size() + n));
    std::vector<float> logits;
    std::vector<int32_t> next = prompt;
    for (int64_t i = 0; i < n; ++i) {
        const model::SequenceBatch seq{&cache, next, model::Logits::Last};
        model->forward({&seq, 1}, logits);
        const int32_t id = argmax(logits.data(), n_vocab);
        std::printf(i ? " %d" : "%d", id);
        std::fflush(stdout);
        next.assign(1, id);
    }
    std::printf("\n");
    return 0;
}

}  // namespace strata::tool
