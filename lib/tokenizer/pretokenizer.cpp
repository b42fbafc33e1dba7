// tokenizer/pretokenizer.cpp — the split rules of each `tokenizer.ggml.pre` family (the
// same regex lists llama.cpp applies) and their evaluation with PCRE2.
//
// Adjustments that keep the results identical to llama.cpp's: `$` matches only at the very
// end of a piece (PCRE2_DOLLAR_ENDONLY, as in ECMAScript); \s and \S stand for Unicode's
// White_Space set, written out (PCRE2's \s also takes U+180E, which llama.cpp does not);
// the Unicode 15 additions are added to the general categories (see kUnicode15);
// and explicit character classes leave out non-ASCII white space, because llama.cpp
// matches regexes without \p{..} classes on text whose non-ASCII white space was replaced
// by U+000B. "\s+$" is written "(?<!\s)\s+$", which matches the same but in linear time.
// Invalid UTF-8 never matches (PCRE2_MATCH_INVALID_UTF): such bytes end up in the gaps
// between matches, as words of their own, so no byte of the input is lost.
#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <map>

#include "tokenizer/tokenizer.h"

namespace strata::tokenizer {
namespace {

// GPT-2's split, also the core of several others.
constexpr std::string_view kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kPoro = R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)";
// Han, the rest of U+0800..U+4E00 (less its white space) and Hangul, as DeepSeek splits them.
constexpr std::string_view kDeepSeekCjk =
    R"([\x{4E00}-\x{9FA5}\x{800}-\x{167F}\x{1681}-\x{1FFF}\x{200B}-\x{2027}\x{202A}-\x{202E}\x{2030}-\x{205E}\x{2060}-\x{2FFF}\x{3001}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

constexpr std::string_view kDeepSeekLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373})"
    R"(\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481})"
    R"(\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D})"
    R"(\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})"
    R"(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107})"
    R"(\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139})"
    R"(\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2})"
    R"(\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF})"
    R"(\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3})"
    R"(\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)";

const std::map<std::string, PreTokenizerFamily, std::less<>>& families() {
    static const std::map<std::string, PreTokenizerFamily, std::less<>> table = [] {
        const PreTokenizerFamily gpt2{{kGpt2}};
        const PreTokenizerFamily llama3{{kLlama3}, true, true};
        const PreTokenizerFamily qwen2{{kQwen2}};
        const PreTokenizerFamily starcoder{{R"(\p{N})", kGpt2}};
        const PreTokenizerFamily poro{{kPoro}};
        std::map<std::string, PreTokenizerFamily, std::less<>> t;
        t["default"] = {{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}};
        for (auto name : {"llama3", "llama-v3", "llama-bpe", "falcon3"}) t[name] = llama3;
        for (auto name : {"dbrx", "smaug-bpe"}) t[name] = {{kLlama3}};
        t["deepseek-llm"] = {{"[\r\n]", kDeepSeekLetters,
                              R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3001}-\x{3002}]+)",
                              R"((?<!\s)\s+$)", kDeepSeekCjk, R"(\p{N}+)"}};
        t["deepseek-coder"] = {{"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepSeekCjk, R"(\p{N})"}};
        t["deepseek-v3"] = {{R"(\p{N}{1,3})", R"([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)",
                             R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}};
        t["falcon"] = {{R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}};
        for (auto name : {"gpt-2", "mpt", "phi-2", "roberta-bpe", "olmo", "jais", "gigachat", "jina-es", "jina-de",
                          "jina-v1-en", "jina-v2-es", "jina-v2-de", "jina-v2-code"})
            t[name] = gpt2;
        for (auto name : {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"})
            t[name] = starcoder;
        for (auto name : {"qwen2", "qwen2.5", "deepseek-r1-qwen", "stablelm2", "megrez"}) t[name] = qwen2;
        for (auto name : {"poro-chat", "bloom", "gpt3-finnish"}) t[name] = poro;
        t["viking"] = {{kPoro, R"(\p{N})"}};
        t["chatglm-bpe"] = {{kLlama3}};
        t["tekken"] = {{R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
                       true, true};
        // o200k (gpt-oss, GPT-4o, Llama 4): tekken's letter runs with an optional contraction, digits in threes.
        const PreTokenizerFamily o200k{{R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}};
        for (auto name : {"gpt-4o", "llama4"}) t[name] = o200k;
        t["chameleon"] = {{"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", R"(([\t\n]|    |  ))",
                           R"(\p{N})", R"([\p{P}!-/:-@\[-`{-~])", kGpt2},
                          false, true};
        return t;
    }();
    return table;
}

// Per-thread matching state: PCRE2's JIT stack grows on demand up to kMaxJitStack, so
// that group repetitions over a very long word do not fail.
constexpr size_t kMaxJitStack = size_t(64) << 20;

struct MatchState {
    pcre2_match_context* context = nullptr;
    pcre2_jit_stack* jit_stack = nullptr;
    MatchState() {
        context = pcre2_match_context_create(nullptr);
        jit_stack = pcre2_jit_stack_create(32 * 1024, kMaxJitStack, nullptr);
        if (!context || !jit_stack) throw TokenizerError("pre-tokenizer: out of memory creating the PCRE2 match state");
        pcre2_jit_stack_assign(context, nullptr, jit_stack);
    }
    ~MatchState() {
        pcre2_jit_stack_free(jit_stack);
        pcre2_match_context_free(context);
    }
    MatchState(const MatchState&) = delete;
    MatchState& operator=(const MatchState&) = delete;
};

MatchState& match_state() {
    thread_local MatchState state;
    return state;
}

// The members of \s, for use inside a character class.
constexpr std::string_view kWhiteSpace = R"(\t\n\x0B\f\r\x20\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// Code points assigned in Unicode 15.0/15.1, which PCRE2 10.42 (Unicode 14) does not yet
// know, by general category; appended to \p{L}, \p{M}, ... so that they split as in
// llama.cpp, whose tables are newer.
constexpr std::pair<char, std::string_view> kUnicode15[] = {
    {'L', R"(\x{1123F}-\x{11240}\x{11F02}\x{11F04}-\x{11F10}\x{11F12}-\x{11F33}\x{1342F}\x{13441}-\x{13446}\x{1B132})"
          R"(\x{1B155}\x{1DF25}-\x{1DF2A}\x{1E030}-\x{1E06D}\x{1E4D0}-\x{1E4EB}\x{2B739}\x{2EBF0}-\x{2EE5D}\x{31350}-\x{323AF})"},
    {'M', R"(\x{CF3}\x{ECE}\x{10EFD}-\x{10EFF}\x{11241}\x{11F00}-\x{11F01}\x{11F03}\x{11F34}-\x{11F3A}\x{11F3E}-\x{11F42})"
          R"(\x{13440}\x{13447}-\x{13455}\x{1E08F}\x{1E4EC}-\x{1E4EF})"},
    {'N', R"(\x{11F50}-\x{11F59}\x{1D2C0}-\x{1D2D3}\x{1E4F0}-\x{1E4F9})"},
    {'P', R"(\x{11B00}-\x{11B09}\x{11F43}-\x{11F4F})"},
    {'S', R"(\x{2FFC}-\x{2FFF}\x{31EF}\x{1F6DC}\x{1F774}-\x{1F776}\x{1F77B}-\x{1F77F}\x{1F7D9}\x{1FA75}-\x{1FA77})"
          R"(\x{1FA87}-\x{1FA88}\x{1FAAD}-\x{1FAAF}\x{1FABB}-\x{1FABD}\x{1FABF}\x{1FACE}-\x{1FACF}\x{1FADA}-\x{1FADB})"
          R"(\x{1FAE8}\x{1FAF7}-\x{1FAF8})"},
};

// The class members that stand for \s, or for \p{C} (C one of kUnicode15's categories),
// when written inside a character class; empty for anything else.
std::string class_members(std::string_view escape) {
    if (escape == R"(\s)") return std::string(kWhiteSpace);
    for (auto [category, extra] : kUnicode15)
        if (escape.size() == 5 && escape.substr(0, 3) == R"(\p{)" && escape[3] == category && escape[4] == '}')
            return std::string(escape).append(extra);
    return {};
}

// `pattern` with \s, \S and \p{L}/\p{M}/\p{N}/\p{P}/\p{S} written out as class members.
std::string expand_classes(std::string_view pattern) {
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            std::string_view escape = pattern.substr(i, pattern[i + 1] == 'p' ? 5 : 2);
            std::string members = class_members(escape);
            if (escape == R"(\S)") out.append("[^").append(kWhiteSpace).append("]");
            else if (members.empty()) out.append(escape);
            else if (in_class) out.append(members);
            else out.append("[").append(members).append("]");
            i += escape.size() - 1;
            continue;
        }
        if (c == '[') in_class = true;
        if (c == ']') in_class = false;
        out += c;
    }
    return out;
}

}  // namespace

const PreTokenizerFamily& pre_tokenizer_family(std::string_view pre) {
    auto it = families().find(pre);
    if (it == families().end()) throw TokenizerError("unknown pre-tokenizer '" + std::string(pre) + "' (tokenizer.ggml.pre)");
    return it->second;
}

struct PreTokenizer::Regex {
    pcre2_code* code = nullptr;

    explicit Regex(std::string_view family_pattern) {
        std::string pattern = expand_classes(family_pattern);
        int error = 0;
        PCRE2_SIZE offset = 0;
        code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &error, &offset,
                             nullptr);
        if (!code) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(error, message, sizeof message);
            throw TokenizerError("pre-tokenizer regex does not compile at offset " + std::to_string(offset) + ": " +
                                 reinterpret_cast<const char*>(message));
        }
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT, pcre2_match interprets
    }
    ~Regex() { pcre2_code_free(code); }
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Splits `piece` into matches and the gaps between them, appending to `out`.
    void split(std::string_view piece, pcre2_match_data* md, std::vector<std::string_view>& out) const {
        auto subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
        size_t gap_start = 0, pos = 0;
        while (pos < piece.size()) {
            int rc = pcre2_match(code, subject, piece.size(), pos, 0, md, match_state().context);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {
                PCRE2_UCHAR message[256];
                pcre2_get_error_message(rc, message, sizeof message);
                throw TokenizerError("pre-tokenizer regex failed on a " + std::to_string(piece.size()) +
                                     "-byte piece: " + reinterpret_cast<const char*>(message));
            }
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
            size_t begin = ov[0], end = ov[1];
            if (begin > gap_start) out.push_back(piece.substr(gap_start, begin - gap_start));
            if (end > begin) out.push_back(piece.substr(begin, end - begin));
            gap_start = end;
            pos = end > begin ? end : end + 1;
        }
        if (gap_start < piece.size()) out.push_back(piece.substr(gap_start));
    }
};

PreTokenizer::PreTokenizer(std::string_view pre) {
    for (auto pattern : pre_tokenizer_family(pre).regexes) regexes_.push_back(std::make_unique<Regex>(pattern));
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& words) const {
    std::vector<std::string_view> pieces{text}, next;
    for (const auto& regex : regexes_) {
        pcre2_match_data* md = pcre2_match_data_create_from_pattern(regex->code, nullptr);
        if (!md) throw TokenizerError("pre-tokenizer: out of memory creating PCRE2 match data");
        try {
            next.clear();
            for (auto piece : pieces) regex->split(piece, md, next);
        } catch (...) {
            pcre2_match_data_free(md);
            throw;
        }
        pcre2_match_data_free(md);
        pieces.swap(next);
    }
    words.insert(words.end(), pieces.begin(), pieces.end());
}

}  // namespace strata::tokenizer
