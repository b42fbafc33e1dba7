// tokenizer/tokenizer.cpp — the Tokenizer: special-token partition, then SentencePiece or
// pre-tokenizer + byte-level BPE for the text between special tokens; decoding from the
// per-token pieces (see tokenizer.h).
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <optional>

#include "gguf/gguf.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/special.h"
#include "tokenizer/spm.h"
#include "tokenizer/vocab.h"
#include "tokenizer/wpm.h"

namespace strata::tokenizer {

struct Tokenizer::Impl {
    Vocab vocab;
    SpecialMatcher specials;
    std::optional<SpmModel> spm;
    std::optional<PreTokenizer> pre;
    std::optional<BpeModel> bpe;
    std::optional<WpmModel> wpm;

    explicit Impl(Vocab v) : vocab(std::move(v)), specials(vocab) {
        if (vocab.kind == VocabKind::Spm) {
            spm.emplace(vocab);
        } else if (vocab.kind == VocabKind::Wpm) {
            wpm.emplace(vocab);
        } else {
            pre.emplace(vocab.pre);
            bpe.emplace(vocab, pre_tokenizer_family(vocab.pre).ignore_merges);
        }
        vocab.merges.clear();  // views into the GGUF file, which need not outlive us
    }

    void encode_spm(std::string_view text, bool after_special, std::vector<int32_t>& out) const;
    void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;
};

void Tokenizer::Impl::encode_spm(std::string_view text, bool after_special, std::vector<int32_t>& out) const {
    // SentencePiece writes spaces as U+2581 and (with add_space_prefix) starts the text, and
    // any text that follows a special token, with one.
    std::string escaped;
    escaped.reserve(text.size() + 8);
    if (vocab.add_space_prefix && after_special) escaped += "\xE2\x96\x81";
    for (char c : text) {
        if (c == ' ') escaped += "\xE2\x96\x81";
        else escaped += c;
    }
    spm->encode(escaped, out);
}

void Tokenizer::Impl::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
    std::vector<std::string_view> words;
    pre->split(text, words);
    for (auto word : words) bpe->encode_word(word, out);
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::File& file) {
    try {
        return std::unique_ptr<Tokenizer>(new Tokenizer(std::make_unique<Impl>(Vocab::from_gguf(file))));
    } catch (const gguf::GgufError& e) {
        throw TokenizerError(e.what());
    }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
    return encode_text(text, add_special, parse_special, true);
}

std::vector<int32_t> Tokenizer::encode_continuation(std::string_view text, bool parse_special) const {
    return encode_text(text, false, parse_special, false);
}

std::vector<int32_t> Tokenizer::encode_text(std::string_view text, bool add_special, bool parse_special, bool at_start) const {
    const Vocab& v = impl_->vocab;
    std::vector<int32_t> out;
    out.reserve(text.size() / 3 + 2);
    if (add_special && v.add_bos) out.push_back(v.bos);
    bool after_special = at_start;
    for (const Fragment& f : impl_->specials.partition(text, parse_special)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            after_special = true;
        } else if (v.kind == VocabKind::Spm) {
            impl_->encode_spm(f.text, after_special, out);
            after_special = false;
        } else if (v.kind == VocabKind::Wpm) {
            impl_->wpm->encode(f.text, out);
        } else {
            impl_->encode_bpe(f.text, out);
        }
    }
    if (add_special && v.add_eos) out.push_back(v.tail);
    return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
    StreamDecoder stream(*this, {render_special, true, false});
    std::string out;
    for (int32_t id : ids) out += stream.push(id);
    out += stream.flush();
    return out;
}

void Tokenizer::check_id(int32_t id) const {
    if (id < 0 || id >= n_vocab())
        throw TokenizerError("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                             std::to_string(n_vocab() - 1) + ")");
}

std::string_view Tokenizer::piece(int32_t id, bool render_special) const {
    check_id(id);
    TokenType t = impl_->vocab.type[id];
    if (!render_special && (t == TokenType::Control || t == TokenType::Unknown)) return {};
    return impl_->vocab.piece[id];
}

std::string_view Tokenizer::token_text(int32_t id) const {
    check_id(id);
    return impl_->vocab.text[id];
}

TokenType Tokenizer::token_type(int32_t id) const {
    check_id(id);
    return impl_->vocab.type[id];
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
    int32_t id = impl_->vocab.find(text);
    return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
}

int32_t Tokenizer::n_vocab() const { return impl_->vocab.size(); }
int32_t Tokenizer::bos() const { return impl_->vocab.bos; }
int32_t Tokenizer::eos() const { return impl_->vocab.eos; }
int32_t Tokenizer::eot() const { return impl_->vocab.eot; }
bool Tokenizer::add_bos() const { return impl_->vocab.add_bos; }
bool Tokenizer::add_eos() const { return impl_->vocab.add_eos; }
const FimTokens& Tokenizer::fim() const { return impl_->vocab.fim; }
PairTokens Tokenizer::pair() const {
    const Vocab& v = impl_->vocab;
    return {v.bos, v.eos >= 0 ? v.eos : v.sep, v.sep, v.add_bos, v.pair_add_eos, v.pair_add_sep};
}
bool Tokenizer::adds_space_prefix() const { return impl_->vocab.add_space_prefix; }
std::string_view Tokenizer::model() const { return impl_->vocab.model; }
std::string_view Tokenizer::pre() const { return impl_->vocab.pre; }
std::span<const int32_t> Tokenizer::eog_ids() const { return impl_->vocab.eog; }

bool Tokenizer::is_eog(int32_t id) const {
    return std::binary_search(impl_->vocab.eog.begin(), impl_->vocab.eog.end(), id);
}

}  // namespace strata::tokenizer
