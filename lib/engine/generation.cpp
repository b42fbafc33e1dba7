// engine/generation.cpp — a request's generation token by token (see generation.h).
#include "engine/generation.h"

#include <algorithm>

#include "sampling/logprobs.h"

namespace strata::engine {
namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The sampler with the penalty window primed with the sequence's last tokens.
sampling::Sampler primed_sampler(const GenerateRequest& r, int32_t n_vocab, const std::vector<int32_t>& history) {
    sampling::Sampler sampler(r.sampling, n_vocab);
    const size_t window = std::min<size_t>(history.size(), r.sampling.penalty_last_n);
    for (size_t i = history.size() - window; i < history.size(); ++i) sampler.accept(history[i]);
    return sampler;
}

bool only_bos(const tokenizer::Tokenizer& tok, const std::vector<int32_t>& history) {
    return std::all_of(history.begin(), history.end(), [&](int32_t t) { return t == tok.bos(); });
}

}  // namespace

Generation::Generation(const tokenizer::Tokenizer& tokenizer, const GenerateRequest& r,
                       std::shared_ptr<const sampling::ConstraintVocab> grammar_vocab, int32_t n_vocab, int32_t context,
                       std::vector<int32_t> history)
    : tokenizer_(&tokenizer),
      context_(context),
      max_tokens_(r.max_tokens),
      logprobs_(r.logprobs),
      ignore_eos_(r.ignore_eos),
      sampler_(primed_sampler(r, n_vocab, history)),
      decoder_(tokenizer, {.at_start = only_bos(tokenizer, history), .replace_invalid = true}),
      stop_(r.stop),
      history_(std::move(history)) {
    if (r.grammar) constraint_.emplace(r.grammar, std::move(grammar_vocab));
}

int32_t Generation::sample(std::span<const float> logits) {
    return constraint_ ? constraint_->sample(sampler_, logits) : sampler_.sample(logits);
}

Generation::Outcome Generation::accept(int32_t token, std::span<const float> logits) {
    if (!first_token_) first_token_ = Clock::now();
    if (tokenizer_->is_eog(token) && !ignore_eos_) return Outcome::Stop;
    sampler_.accept(token);
    if (constraint_) constraint_->accept(token);
    if (logprobs_ >= 0) {
        const sampling::Logprobs lp = sampling::logprobs_of(logits, token, logprobs_);
        auto choice = [&](const sampling::TokenLogprob& t) {
            return TokenChoice{t.id, t.id < tokenizer_->n_vocab() ? std::string(tokenizer_->piece(t.id, false)) : std::string(), t.logprob};
        };
        TokenLogprobs entry{choice(lp.chosen), {}};
        for (const auto& t : lp.top) entry.top.push_back(choice(t));
        out_.logprobs.push_back(entry);
        logprobs_all_.push_back(std::move(entry));
    }
    history_.push_back(token);
    ++generated_;
    if (token < tokenizer_->n_vocab()) {
        auto step = stop_.feed(decoder_.push(token));
        emit(std::move(step.text));
        if (step.stop) return Outcome::Stop;
    }
    // Feeding the token takes one more position: the sequence holds history_ but this token.
    if (generated_ >= max_tokens_ || history_.size() > static_cast<size_t>(context_)) return Outcome::Length;
    return Outcome::Continue;
}

size_t Generation::admissible(std::span<const int32_t> guesses) const {
    std::optional<sampling::Constraint> grammar = constraint_;
    size_t n = 0;
    for (; n < guesses.size(); ++n) {
        const int32_t g = guesses[n];
        if (tokenizer_->is_eog(g) || (grammar && !grammar->allows(g))) break;
        if (grammar) grammar->accept(g);
    }
    return n;
}

void Generation::finish() {
    if (!stop_.stopped()) emit(stop_.feed(decoder_.flush()).text + stop_.finish());
}

void Generation::emit(std::string text) {
    text_ += text;
    out_.text += text;
}

Generation::Output Generation::take_output() { return std::exchange(out_, {}); }

void Generation::mark_pass(Clock::time_point t) {
    if (!first_pass_) first_pass_ = t;
}

Result Generation::result(Usage usage, Clock::time_point submitted, Clock::time_point now, const std::string& finish_reason) const {
    Result r;
    r.text = text_;
    r.logprobs = logprobs_all_;
    r.finish_reason = finish_reason;
    usage.completion_tokens = generated_;
    r.usage = usage;
    Timings& t = r.timings;
    if (!first_pass_) {
        t.queued_ms = ms(now - submitted);
        return r;
    }
    t.queued_ms = ms(*first_pass_ - submitted);
    const auto prefill_end = generated_ ? *first_token_ : now;
    t.prompt_ms = ms(prefill_end - *first_pass_);
    t.generate_ms = generated_ ? ms(now - *first_token_) : 0;
    t.prompt_tps = t.prompt_ms > 0 ? (usage.prompt_tokens - usage.cached_tokens) / (t.prompt_ms / 1000) : 0;
    t.generate_tps = t.generate_ms > 0 && generated_ > 1 ? (generated_ - 1) / (t.generate_ms / 1000) : 0;
    return r;
}

}  // namespace strata::engine
