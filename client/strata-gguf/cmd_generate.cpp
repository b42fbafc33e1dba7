// client/strata-gguf/cmd_generate.cpp — `strata-gguf generate FILE (--tokens IDS | --prompt TEXT) -n N`:
// greedy continuation (argmax, lowest id on ties). With --tokens it prints token ids;
// with --prompt it tokenizes the text with the model's own tokenizer (BOS as the
// vocabulary asks; "" starts from BOS alone) and streams the generated text, stopping
// at an end-of-generation token.
#include <cstdio>
#include <optional>

#include "commands.h"
#include "model_io.h"
#include "tokenizer/tokenizer.h"

namespace strata::tool {
namespace {

// Feeds `prompt`, then n greedy steps; calls emit(id) for each new token until it returns false.
template <class Emit>
void greedy(model::Model& m, const std::vector<int32_t>& prompt, int64_t n, Emit emit) {
    auto cache = m.new_cache(static_cast<int32_t>(prompt.size() + n));
    std::vector<float> logits;
    std::vector<int32_t> next = prompt;
    for (int64_t i = 0; i < n; ++i) {
        const model::SequenceBatch seq{&cache, next, model::Logits::Last};
        m.forward({&seq, 1}, logits);
        const int32_t id = argmax(logits.data(), m.hparams().n_vocab);
        if (!emit(id)) return;
        next.assign(1, id);
    }
}

}  // namespace

int cmd_generate(const Argv& argv) {
    Args args(argv, {"tokens", "tokens-file", "prompt", "n", "threads"}, {});
    auto model = load_model(args.pos(0, "FILE"), args);
    const int64_t n = args.get_int("n", 32, 0, 1 << 20);
    const auto prompt_text = args.get("prompt");
    if (!prompt_text) {
        const auto prompt = read_tokens(args);
        if (prompt.empty()) throw UsageError("no tokens given");
        bool first = true;
        greedy(*model, prompt, n, [&](int32_t id) {
            std::printf(first ? "%d" : " %d", id);
            std::fflush(stdout);
            first = false;
            return true;
        });
        std::printf("\n");
        return 0;
    }
    const auto tok = tokenizer::Tokenizer::from_gguf(model->file());
    const auto prompt = tok->encode(*prompt_text, true, false);
    if (prompt.empty()) throw UsageError("the prompt is empty and the vocabulary has no BOS token");
    tokenizer::StreamDecoder decoder(*tok, {.at_start = prompt_text->empty()});
    std::fwrite(prompt_text->data(), 1, prompt_text->size(), stdout);
    greedy(*model, prompt, n, [&](int32_t id) {
        if (tok->is_eog(id)) return false;
        const std::string piece = decoder.push(id);
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        return true;
    });
    const std::string rest = decoder.flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::printf("\n");
    return 0;
}

}  // namespace strata::tool
