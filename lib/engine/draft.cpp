// engine/draft.cpp — the draft model: loading and checking it, catching its caches up,
// its greedy guesses in shared passes.
#include "engine/draft.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace strata::engine {
namespace {

// A token's text for a message: printable ASCII as is, other bytes as \xNN, at most 40 bytes.
std::string shown(std::string_view text) {
    std::string out;
    for (const unsigned char c : text.substr(0, 40)) {
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out += static_cast<char>(c);
        } else {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return '"' + out + (text.size() > 40 ? "...\"" : "\"");
}

// Refuses a draft whose vocabulary is not the target's: another kind, sizes further apart
// than kDraftVocabSlack, other special tokens, or an id both have naming another token.
void check_vocabulary(const tokenizer::Tokenizer& target, const tokenizer::Tokenizer& draft, const std::string& path) {
    const std::string who = "the draft model " + path;
    const std::string theirs = "; a draft must have the target's vocabulary";
    if (draft.model() != target.model() || draft.pre() != target.pre())
        throw std::runtime_error(who + " has a " + std::string(draft.model()) + "/" + std::string(draft.pre()) +
                                 " tokenizer, the target a " + std::string(target.model()) + "/" + std::string(target.pre()) + " one" + theirs);
    if (std::abs(draft.n_vocab() - target.n_vocab()) > kDraftVocabSlack)
        throw std::runtime_error(who + " has " + std::to_string(draft.n_vocab()) + " tokens, the target " +
                                 std::to_string(target.n_vocab()) + theirs);
    if (draft.bos() != target.bos() || draft.eos() != target.eos() || draft.add_bos() != target.add_bos())
        throw std::runtime_error(who + " has other special tokens (bos " + std::to_string(draft.bos()) + ", eos " +
                                 std::to_string(draft.eos()) + ") than the target (bos " + std::to_string(target.bos()) + ", eos " +
                                 std::to_string(target.eos()) + ")" + theirs);
    for (int32_t id = 0; id < std::min(draft.n_vocab(), target.n_vocab()); ++id)
        if (draft.token_text(id) != target.token_text(id))
            throw std::runtime_error(who + "'s token " + std::to_string(id) + " is " + shown(draft.token_text(id)) + ", the target's " +
                                     shown(target.token_text(id)) + theirs);
}

}  // namespace

Draft::Draft(const std::string& path, const tokenizer::Tokenizer& target, int threads, int32_t batch_tokens, kv::KvType kv_type,
             float p_min)
    : path_(path), kv_type_(kv_type), p_min_(p_min) {
    auto file = gguf::File::open(path);
    const auto vocabulary = tokenizer::Tokenizer::from_gguf(*file);
    check_vocabulary(target, *vocabulary, path);
    model_ = model::Model::load(file, {.n_threads = threads, .max_batch_tokens = batch_tokens});
    model_->set_max_batch_tokens(batch_tokens);
    try {
        if (model_->new_cache(1, nullptr, kv_type).recurrent())
            throw std::runtime_error("the draft model " + path + " has recurrent layers, whose state cannot be cut back to the "
                                     "guesses the target accepts; choose an attention-only draft");
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error("the draft model " + path + ": " + e.what());
    }
    guessable_ = std::min({target.n_vocab(), vocabulary->n_vocab(), model_->hparams().n_vocab});
    weight_bytes_ = file->file_size();
}

DraftSequence Draft::new_sequence(int32_t context, std::shared_ptr<kv::Ledger> ledger) const {
    return {model_->new_cache(context, std::move(ledger), kv_type_), {}};
}

uint64_t Draft::kv_bytes_for(int32_t positions, int32_t pass) const {
    return model_->new_cache(1, nullptr, kv_type_).bytes_for(positions, pass);
}

// Cuts the sequence's draft cache back to what it shares with the history (rejected guesses
// go; the history's last token is always fed again, for its logits) and says what to feed.
void Draft::catch_up(Ask& ask, std::vector<int32_t>& feed) const {
    DraftSequence& s = *ask.seq;
    const size_t limit = std::min(s.tokens.size(), ask.history.size() - 1);
    size_t same = 0;
    while (same < limit && s.tokens[same] == ask.history[same]) ++same;
    s.tokens.resize(size_t(s.cache.truncate(static_cast<int32_t>(same))));
    feed.assign(ask.history.begin() + static_cast<std::ptrdiff_t>(s.tokens.size()), ask.history.end());
}

// The draft's most likely next token in `row` and its probability.
float Draft::take_guess(const float* row, int32_t& token) const {
    const float* best = std::max_element(row, row + guessable_);
    token = static_cast<int32_t>(best - row);
    double sum = 0;
    for (int32_t i = 0; i < model_->hparams().n_vocab; ++i) sum += std::exp(double(row[i] - *best));
    return static_cast<float>(1.0 / sum);
}

void Draft::guess(std::vector<Ask>& asks) {
    struct Timed {  // adds the time until it goes out of scope (returned or thrown through) to seconds_
        double& seconds;
        std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
        ~Timed() { seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    } timed{seconds_};
    std::vector<std::vector<int32_t>> feeds(asks.size());
    for (size_t i = 0; i < asks.size(); ++i)
        if (asks[i].max > 0 && !asks[i].history.empty()) catch_up(asks[i], feeds[i]);
    const size_t n_vocab = size_t(model_->hparams().n_vocab);
    for (;;) {
        std::vector<model::SequenceBatch> batch;
        std::vector<size_t> who;
        for (size_t i = 0; i < asks.size(); ++i)
            if (!feeds[i].empty()) {
                batch.push_back({&asks[i].seq->cache, feeds[i], model::Logits::Last});
                who.push_back(i);
            }
        if (batch.empty()) return;
        model_->forward(batch, logits_);
        ++passes_;
        for (size_t j = 0; j < who.size(); ++j) {
            Ask& ask = asks[who[j]];
            std::vector<int32_t>& feed = feeds[who[j]];
            ask.seq->tokens.insert(ask.seq->tokens.end(), feed.begin(), feed.end());
            feed.clear();
            int32_t token = -1;
            if (take_guess(logits_.data() + j * n_vocab, token) < p_min_) continue;
            ask.guesses.push_back(token);
            if (static_cast<int32_t>(ask.guesses.size()) < ask.max) feed = {token};
        }
    }
}

}  // namespace strata::engine
