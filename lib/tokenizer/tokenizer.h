// tokenizer/tokenizer.h — turning text into token ids and back exactly as the model's own
// tokenizer does, from the vocabulary in a GGUF file.
// Owns: the three vocabulary kinds of `tokenizer.ggml.model` — "llama" (SentencePiece-style
// BPE over scored pieces, with <0xNN> byte fallback), "gpt2" (byte-level BPE with ranked
// merges after a `tokenizer.ggml.pre` pre-tokenizer split) and "bert" (WordPiece, wpm.h:
// [CLS] text [SEP]) — special and control
// tokens, BOS/EOS and the end-of-generation set, detokenizing, and the streaming
// detokenizer. Chat formats are chat/'s (chat/prompt.h).
// Must not touch: model weights, sampling, anything that does I/O with users.
//
// Behaviour follows llama.cpp's (the ids are identical for valid UTF-8 input), with three
// choices of our own: bytes that are not valid UTF-8 are tokenized losslessly as byte
// tokens (llama.cpp turns them into U+FFFD); decode() is the plain concatenation of the
// token pieces (no clean-up of spaces before punctuation), dropping only the SentencePiece
// dummy-prefix space of the first token after any leading BOS; and broken vocabulary
// metadata is an error rather than a warning.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata::gguf {
class File;
}

namespace strata::tokenizer {

class TokenizerError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// `tokenizer.ggml.token_type`, numbered as in GGUF.
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,  // always matched as a whole in input text, even without parse_special
    Unused = 5,
    Byte = 6,  // <0xNN> fallback tokens of SentencePiece vocabularies
};

// The fill-in-the-middle tokens of the vocabulary (-1: none): prefix, suffix and middle
// (tokenizer.ggml.fim_pre/suf/mid_token_id, or the older prefix/suffix/middle_token_id, or
// found by their text), and the repository and file separators of repo-level prompts.
struct FimTokens {
    int32_t pre = -1, suf = -1, mid = -1, rep = -1, sep = -1;
};

// How llama.cpp's server joins a query and a document for a cross-encoder: [BOS if add_bos]
// query [EOS if add_eos] [SEP if add_sep] document [EOS if add_eos], with llama.cpp's
// defaults for each vocabulary kind (WordPiece: no EOS, a [SEP]); `eos` is the separator when
// the vocabulary has no EOS.
struct PairTokens {
    int32_t bos = -1, eos = -1, sep = -1;
    bool add_bos = false, add_eos = false, add_sep = false;
};

class Tokenizer {
public:
    // Builds the tokenizer from the `tokenizer.*` metadata of a GGUF file (the file may be
    // dropped afterwards). Throws TokenizerError naming the key that is missing or wrong.
    static std::unique_ptr<Tokenizer> from_gguf(const gguf::File& file);
    ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    // add_special: BOS/EOS as the vocabulary asks (add_bos_token / add_eos_token; WordPiece:
    // [CLS] and [SEP]).
    // parse_special: text spelling a control token ("<|eot_id|>") becomes that token;
    // otherwise it is tokenized as plain text. USER_DEFINED tokens are matched either way.
    // Any bytes are accepted (NULs, invalid UTF-8); throws TokenizerError only when the
    // vocabulary cannot represent a byte at all.
    std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;
    // Text that continues earlier text (a session's next prompt): no BOS/EOS, and no
    // SentencePiece dummy-prefix space (the text's own spaces are kept as they are).
    std::vector<int32_t> encode_continuation(std::string_view text, bool parse_special) const;

    // The bytes of the ids, concatenated. Control and unknown tokens contribute their text
    // only when render_special is set. Throws TokenizerError for an id outside the vocabulary.
    std::string decode(std::span<const int32_t> ids, bool render_special) const;

    // What token `id` contributes to decoded text (without the leading-space rule).
    std::string_view piece(int32_t id, bool render_special) const;
    // The token's text as stored in the vocabulary ("▁the", "Ġthe", "<0x0A>", "<s>").
    std::string_view token_text(int32_t id) const;
    TokenType token_type(int32_t id) const;
    // The id whose stored text is exactly `text`, of any type.
    std::optional<int32_t> find_token(std::string_view text) const;

    int32_t n_vocab() const;
    int32_t bos() const;  // -1 when the vocabulary has none
    int32_t eos() const;  // -1 when the vocabulary has none
    int32_t eot() const;  // end of turn (<|eot_id|>, <|im_end|>, <end_of_turn>...), or -1
    bool add_bos() const;
    bool add_eos() const;
    const FimTokens& fim() const;
    PairTokens pair() const;
    // Ends generation: EOS, EOT, EOM and the other end-of-turn tokens of the vocabulary.
    bool is_eog(int32_t id) const;
    std::span<const int32_t> eog_ids() const;

    std::string_view model() const;  // "llama", "gpt2" or "bert"
    std::string_view pre() const;    // the pre-tokenizer family ("" for "llama")
    // SentencePiece vocabularies prefix text with a space that decoding drops again.
    bool adds_space_prefix() const;

private:
    struct Impl;
    explicit Tokenizer(std::unique_ptr<Impl> impl);
    void check_id(int32_t id) const;
    std::vector<int32_t> encode_text(std::string_view text, bool add_special, bool parse_special, bool at_start) const;
    std::unique_ptr<Impl> impl_;
};

// Detokenizes a stream of ids one at a time for streaming output. Each push() returns the
// text that is complete so far and never ends in the middle of a UTF-8 sequence that later
// bytes could still complete (an emoji or CJK character spread over byte tokens is held
// back until its last byte arrives). The outputs of push() and flush() concatenated equal
// decode() of the same ids (with replace_invalid: utf8::replace_invalid of it). The
// Tokenizer must outlive the decoder.
class StreamDecoder {
public:
    struct Options {
        bool render_special = false;
        // The ids start a text: the dummy-prefix space of the first token after any leading
        // BOS is dropped, as decode() does. False when continuing after a prompt.
        bool at_start = true;
        // Replace invalid UTF-8 with U+FFFD, so every output is valid UTF-8.
        bool replace_invalid = false;
    };
    StreamDecoder(const Tokenizer& tokenizer, Options options);
    explicit StreamDecoder(const Tokenizer& tokenizer) : StreamDecoder(tokenizer, Options{}) {}

    std::string push(int32_t id);
    // The bytes held back at the end of the stream (an unfinished UTF-8 sequence).
    std::string flush();

private:
    std::string release(std::string_view text);
    const Tokenizer* tokenizer_;  // a pointer, so that a decoder can be assigned (a generation rolled back)
    Options options_;
    bool strip_pending_;
    std::string held_;
};

}  // namespace strata::tokenizer
