// engine/generation.h — one request's generation, token by token.
// Owns: the request's sampler, grammar constraint, incremental detokenizer, stop-string
// matcher, log-probabilities, the tokens of its sequence so far, its text and timings; what
// each new token means for the request (go on, stop, out of length); the output not yet
// handed to the request's sink.
// Must not touch: sinks, sessions, KV caches, the model. A Generation is a value: a copy is
// a snapshot, and assigning it back rolls the generation back (speculative decoding keeps
// the tokens the model accepts and rolls back the rest).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/request.h"
#include "sampling/constraint.h"
#include "sampling/sampler.h"
#include "sampling/stop.h"
#include "tokenizer/tokenizer.h"

namespace strata::engine {

class Generation {
public:
    enum class Outcome { Continue, Stop, Length };

    // `history`: the sequence's tokens before the first generated one; `context`: the most
    // positions the sequence may hold. Throws sampling::SamplingError for bad parameters.
    Generation(const tokenizer::Tokenizer& tokenizer, const GenerateRequest& request,
               std::shared_ptr<const sampling::ConstraintVocab> grammar_vocab, int32_t n_vocab, int32_t context,
               std::vector<int32_t> history);

    // The next token from a position's logits (the sampler under the constraint, if any).
    // Throws what sampling throws (no candidate left).
    int32_t sample(std::span<const float> logits);
    // Takes the sampled token: Stop for an end-of-generation token or a stop string, Length
    // when max_tokens or the context is reached, else Continue (the token is to be fed).
    Outcome accept(int32_t token, std::span<const float> logits);
    // How many of `guesses`, in order, may follow the sequence: the grammar (a copy of the
    // constraint) allows them, and none is an end-of-generation token. Speculative decoding
    // verifies only those.
    size_t admissible(std::span<const int32_t> guesses) const;
    // The end of the generation: releases text held back (an unfinished UTF-8 character or
    // a possible stop string) unless a stop string ended it.
    void finish();

    // Output since the last call, for the request's sink: log-probabilities (each before the
    // text that carries its token) and text.
    struct Output {
        std::vector<TokenLogprobs> logprobs;
        std::string text;
    };
    Output take_output();

    // Timings: the first forward pass it was in, the first generated token.
    void mark_pass(Clock::time_point t);
    bool started() const { return first_pass_.has_value(); }
    // The request's result: its text, log-probabilities, `usage` (the prompt's figures) with
    // the completion tokens, timings from `submitted` to `now`, and `finish_reason`.
    Result result(Usage usage, Clock::time_point submitted, Clock::time_point now, const std::string& finish_reason) const;

    const std::vector<int32_t>& history() const { return history_; }
    int32_t generated() const { return generated_; }
    const std::string& text() const { return text_; }

private:
    void emit(std::string text);

    const tokenizer::Tokenizer* tokenizer_;
    int32_t context_;
    int32_t max_tokens_;
    int32_t logprobs_;
    bool ignore_eos_;
    sampling::Sampler sampler_;
    std::optional<sampling::Constraint> constraint_;
    tokenizer::StreamDecoder decoder_;
    sampling::StopMatcher stop_;
    std::vector<int32_t> history_;
    int32_t generated_ = 0;
    std::string text_;
    std::vector<TokenLogprobs> logprobs_all_;
    Output out_;
    std::optional<Clock::time_point> first_pass_, first_token_;
};

}  // namespace strata::engine
