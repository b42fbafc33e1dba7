// tokenizer/vocab.cpp — reading and validating the tokenizer.* GGUF keys (see vocab.h).
// The special-token conventions (default ids, end-of-turn tokens found by their text,
// the Phi-3 whitespace stripping) follow llama.cpp's loader so that both treat a file alike.
#include "tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "gguf/gguf.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/byte_level.h"

namespace strata::tokenizer {
namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";

// Texts that mark a token as ending a turn when the file names no EOT token, in order of preference.
constexpr std::array kEotTexts{"<|eot_id|>",    "<|im_end|>", "<|end|>", "<end_of_turn>",      "<|endoftext|>",
                               "<|end_of_text|>", "<EOT>",      "_<EOT>", "<end_of_utterance>"};
constexpr std::array kEomTexts{"<|eom_id|>"};
// Texts of tokens that end generation whatever the file says.
constexpr std::array kEogTexts{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",   "<|endoftext|>", "</s>",
                               "<|eom_id|>", "<EOT>",      "_<EOT>",  "<|end_of_text|>", "<end_of_utterance>",
                               "<|return|>", "<|call|>"};
// Fill-in-the-middle tokens, found by text when the file has no id for them (as llama.cpp's
// loader: Qwen, StarCoder, Granite, DeepSeek, CodeLlama, GLM-4.5, Falcon-H1 spellings). The
// pad, repo and file-separator tokens also end generation.
constexpr std::array kFimPreTexts{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>",
                                  "<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"};
constexpr std::array kFimSufTexts{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "hole\xef\xbd\x9c>",
                                  "<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"};
constexpr std::array kFimMidTexts{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>",
                                  "<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"};
constexpr std::array kFimPadTexts{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"};
constexpr std::array kFimRepTexts{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::array kFimSepTexts{"<|file_sep|>"};

TokenizerError error(std::string_view key, const std::string& what) {
    return TokenizerError(std::string(key) + ": " + what);
}

void check_count(std::string_view key, uint64_t count, size_t n_tokens) {
    if (count != n_tokens)
        throw error(key, "has " + std::to_string(count) + " entries but " + std::string(kTokensKey) + " has " +
                             std::to_string(n_tokens));
}

const gguf::Value& required_array(const gguf::File& f, std::string_view key, gguf::ValueType element, const char* what) {
    const gguf::Value* v = f.get_array(key);
    if (!v) throw error(key, std::string("missing (") + what + ")");
    if (v->array_type != element)
        throw error(key, std::string("expected an array of ") + std::string(gguf::value_type_name(element)) +
                             ", found " + std::string(gguf::value_type_name(v->array_type)));
    return *v;
}

void read_tokens(const gguf::File& f, Vocab& v) {
    const gguf::Value& tokens = required_array(f, kTokensKey, gguf::ValueType::STRING, "the token texts");
    if (tokens.array_count == 0) throw error(kTokensKey, "the vocabulary is empty");
    if (tokens.array_count > uint64_t(INT32_MAX)) throw error(kTokensKey, "too many tokens");
    v.text.assign(tokens.strings.begin(), tokens.strings.end());
    v.by_text.reserve(v.text.size());
    for (int32_t id = 0; id < v.size(); ++id) {
        if (v.text[id].empty()) continue;  // never matched, decodes to nothing
        auto [it, added] = v.by_text.emplace(v.text[id], id);
        if (!added)
            throw error(kTokensKey, "token " + std::to_string(id) + " has the same text as token " +
                                        std::to_string(it->second));
    }
}

void read_scores(const gguf::File& f, Vocab& v) {
    v.score.assign(v.text.size(), 0.0f);
    const gguf::Value* scores = f.get_array(kScoresKey);
    if (!scores) {
        if (v.kind == VocabKind::Spm) throw error(kScoresKey, "missing (the SentencePiece merge order needs them)");
        return;
    }
    check_count(kScoresKey, scores->array_count, v.text.size());
    for (size_t i = 0; i < v.text.size(); ++i) {
        auto x = scores->number_at(i);
        if (!x) throw error(kScoresKey, "is not an array of numbers");
        v.score[i] = static_cast<float>(*x);
    }
}

void read_types(const gguf::File& f, Vocab& v) {
    v.type.assign(v.text.size(), TokenType::Normal);
    const gguf::Value* types = f.get_array(kTypesKey);
    if (!types) return;
    check_count(kTypesKey, types->array_count, v.text.size());
    for (size_t i = 0; i < v.text.size(); ++i) {
        auto t = types->int_at(i);
        if (!t) throw error(kTypesKey, "is not an array of integers");
        if (*t < 0 || *t > 6)
            throw error(kTypesKey, "token " + std::to_string(i) + " has type " + std::to_string(*t) + " (valid: 0..6)");
        v.type[i] = static_cast<TokenType>(*t);
        if (v.type[i] == TokenType::Byte && byte_token_value(v.text[i]) < 0)
            throw error(kTypesKey, "token " + std::to_string(i) + " is a byte token but its text is not <0xNN>");
    }
}

void read_merges(const gguf::File& f, Vocab& v) {
    const gguf::Value& merges = required_array(f, kMergesKey, gguf::ValueType::STRING, "the BPE merges");
    v.merges.assign(merges.strings.begin(), merges.strings.end());
    for (size_t i = 0; i < v.merges.size(); ++i)
        if (v.merges[i].find(' ', 1) == std::string_view::npos)
            throw error(kMergesKey, "merge " + std::to_string(i) + " is not of the form \"left right\"");
}

// A special id: nullopt when absent; -1 when set to none (-1 or 0xFFFFFFFF); an id
// outside the vocabulary is an error.
std::optional<int32_t> read_special_id(const gguf::File& f, const Vocab& v, std::string_view key) {
    auto id = f.get_int(key);
    if (!id) return std::nullopt;
    if (*id == -1 || *id == 0xFFFFFFFFll) return -1;
    if (*id < 0 || *id >= v.size())
        throw error(key, "token id " + std::to_string(*id) + " is outside the vocabulary of " +
                             std::to_string(v.size()) + " tokens");
    return static_cast<int32_t>(*id);
}

int32_t read_special_id(const gguf::File& f, const Vocab& v, std::string_view key, int32_t fallback) {
    auto id = read_special_id(f, v, key);
    if (id) return *id;
    return fallback < v.size() ? fallback : -1;
}

// The special id under `key`, or else the first token spelled as one of `texts`, which
// (as llama.cpp does) becomes a control token whatever type the file gave it.
template <size_t N>
int32_t read_special_id(const gguf::File& f, Vocab& v, std::string_view key, const std::array<const char*, N>& texts) {
    if (auto id = read_special_id(f, v, key)) return *id;
    for (const char* t : texts) {
        if (int32_t id = v.find(t); id >= 0) {
            v.type[id] = TokenType::Control;
            return id;
        }
    }
    return -1;
}

bool read_flag(const gguf::File& f, std::string_view key, bool fallback) {
    auto b = f.get_bool(key);
    return b ? *b : fallback;
}

// A fill-in-the-middle id under its key, else its older key (tokenizer.ggml.prefix_token_id,
// ...), else found by text.
template <size_t N>
int32_t read_fim_id(const gguf::File& f, Vocab& v, std::string_view key, std::string_view old_key,
                    const std::array<const char*, N>& texts) {
    if (auto id = read_special_id(f, v, key)) return *id;
    return read_special_id(f, v, old_key, texts);
}

void read_fim(const gguf::File& f, Vocab& v) {
    v.fim.pre = read_fim_id(f, v, "tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id", kFimPreTexts);
    v.fim.suf = read_fim_id(f, v, "tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id", kFimSufTexts);
    v.fim.mid = read_fim_id(f, v, "tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id", kFimMidTexts);
}

void read_specials(const gguf::File& f, Vocab& v) {
    bool spm = v.kind == VocabKind::Spm, wpm = v.kind == VocabKind::Wpm;
    v.bos = read_special_id(f, v, "tokenizer.ggml.bos_token_id", wpm ? read_special_id(f, v, "tokenizer.ggml.cls_token_id", -1) : spm ? 1 : -1);
    v.eos = read_special_id(f, v, "tokenizer.ggml.eos_token_id", spm ? 2 : -1);
    v.unk = read_special_id(f, v, "tokenizer.ggml.unknown_token_id", spm ? 0 : -1);
    v.eot = read_special_id(f, v, "tokenizer.ggml.eot_token_id", kEotTexts);
    v.eom = read_special_id(f, v, "tokenizer.ggml.eom_token_id", kEomTexts);
    v.fim.rep = read_special_id(f, v, "tokenizer.ggml.fim_rep_token_id", kFimRepTexts);
    v.fim.sep = read_special_id(f, v, "tokenizer.ggml.fim_sep_token_id", kFimSepTexts);
    v.eog = {v.eos, v.eot, v.eom, read_special_id(f, v, "tokenizer.ggml.fim_pad_token_id", kFimPadTexts), v.fim.rep, v.fim.sep};
    for (const char* t : kEogTexts) {
        if (int32_t id = v.find(t); id >= 0) {
            v.type[id] = TokenType::Control;
            v.eog.push_back(id);
        }
    }
    // Harmony (o200k_harmony): "<|end|>" closes a message, not the reply, when the vocabulary
    // also ends replies with "<|return|>" and tool calls with "<|call|>" (llama.cpp's rule).
    if (v.find("<|return|>") >= 0 && v.find("<|call|>") >= 0) std::erase(v.eog, v.find("<|end|>"));
    std::erase(v.eog, -1);
    std::sort(v.eog.begin(), v.eog.end());
    v.eog.erase(std::unique(v.eog.begin(), v.eog.end()), v.eog.end());

    // WordPiece encoders wrap every text in [CLS] ... [SEP] (BOS and the separator), as llama.cpp.
    bool family_bos = v.kind == VocabKind::Bpe && pre_tokenizer_family(v.pre).add_bos;
    v.add_bos = read_flag(f, "tokenizer.ggml.add_bos_token", spm || wpm || family_bos);
    v.add_eos = wpm ? read_flag(f, "tokenizer.ggml.add_sep_token", true) : read_flag(f, "tokenizer.ggml.add_eos_token", false);
    v.tail = wpm ? read_special_id(f, v, "tokenizer.ggml.seperator_token_id", v.eos) : v.eos;
    v.sep = read_special_id(f, v, "tokenizer.ggml.seperator_token_id", wpm ? 102 : -1);
    v.pair_add_eos = read_flag(f, "tokenizer.ggml.add_eos_token", false);
    v.pair_add_sep = read_flag(f, "tokenizer.ggml.add_sep_token", wpm);
    v.add_space_prefix = (spm && read_flag(f, "tokenizer.ggml.add_space_prefix", true)) || wpm;
    if (v.add_bos && v.bos < 0) throw error("tokenizer.ggml.add_bos_token", "is set but there is no BOS token");
    if (v.add_eos && v.tail < 0) throw error(wpm ? "tokenizer.ggml.seperator_token_id" : "tokenizer.ggml.add_eos_token",
                                             wpm ? "missing (WordPiece ends every text with the separator)" : "is set but there is no EOS token");
    if (wpm && v.unk < 0) throw error("tokenizer.ggml.unknown_token_id", "missing (WordPiece needs an unknown token)");
}

// llama.cpp's stand-in for the per-token rstrip flags Phi-3's tokenizer.json has and
// GGUF lacks: the whitespace after a special token is dropped, except after these three.
void read_strip_flags(const gguf::File& f, Vocab& v) {
    v.strip.assign(v.text.size(), 0);
    std::string name(f.get_string("general.name").value_or(""));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name.find("phi-3") == std::string::npos && name.find("phi3") == std::string::npos) return;
    for (int32_t id = 0; id < v.size(); ++id)
        if (is_special(v.type[id])) v.strip[id] = Vocab::kStripRight;
    if (int32_t id = v.find("</s>"); id >= 0) v.strip[id] = Vocab::kStripRight;
    for (const char* t : {"<unk>", "<s>", "<|endoftext|>"})
        if (int32_t id = v.find(t); id >= 0) v.strip[id] = 0;
}

std::string spm_piece(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        if (text.compare(i, 3, "\xE2\x96\x81") == 0) {
            out += ' ';
            i += 3;
        } else {
            out += text[i++];
        }
    }
    return out;
}

void build_pieces(Vocab& v) {
    v.piece.resize(v.text.size());
    for (int32_t id = 0; id < v.size(); ++id) {
        const std::string& text = v.text[id];
        switch (v.type[id]) {
            case TokenType::Normal:
                if (v.kind != VocabKind::Bpe) v.piece[id] = spm_piece(text);
                else v.piece[id] = byte_level::decode(text).value_or(text);
                break;
            case TokenType::Byte:
                if (v.kind == VocabKind::Spm) v.piece[id] = std::string(1, static_cast<char>(byte_token_value(text)));
                break;
            case TokenType::Control:
            case TokenType::Unknown:
            case TokenType::UserDefined: v.piece[id] = text; break;
            case TokenType::Undefined:
            case TokenType::Unused: break;
        }
    }
}

}  // namespace

int byte_token_value(std::string_view text) {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
    int value = 0;
    for (char c : text.substr(3, 2)) {
        int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                    : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                                                                : -1;
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

std::string hex_byte(char byte) {
    static const char digits[] = "0123456789ABCDEF";
    auto b = static_cast<uint8_t>(byte);
    return {digits[b >> 4], digits[b & 15]};
}

Vocab Vocab::from_gguf(const gguf::File& f) {
    Vocab v;
    auto model = f.get_string(kModelKey);
    if (!model) throw error(kModelKey, "missing (the file has no tokenizer)");
    v.model = *model;
    if (v.model == "llama") {
        v.kind = VocabKind::Spm;
    } else if (v.model == "gpt2") {
        v.kind = VocabKind::Bpe;
        v.pre = f.get_string("tokenizer.ggml.pre").value_or("default");
        pre_tokenizer_family(v.pre);  // rejects an unknown family early
    } else if (v.model == "bert") {
        v.kind = VocabKind::Wpm;
    } else {
        throw error(kModelKey, "unsupported tokenizer '" + v.model + "' (supported: llama, gpt2, bert)");
    }
    read_tokens(f, v);
    read_scores(f, v);
    read_types(f, v);
    if (v.kind == VocabKind::Bpe) read_merges(f, v);
    read_specials(f, v);
    read_fim(f, v);
    read_strip_flags(f, v);
    build_pieces(v);
    return v;
}

}  // namespace strata::tokenizer
