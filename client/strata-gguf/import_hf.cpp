// client/strata-gguf/import_hf.cpp — the Hugging Face tokenizer files: tokenizer.json
// (BPE models, byte-level or SentencePiece-style with byte fallback), vocab.json/encoder.json
// with merges.txt/vocab.bpe, and tokenizer_config.json / special_tokens_map.json /
// added_tokens.json for added tokens, special-token names, BOS/EOS flags and the chat template.
#include <boost/json.hpp>
#include <map>
#include <set>

#include "import_common.h"
#include "tokenizer/vocab.h"

namespace strata::tool {
namespace json = boost::json;
namespace {

// The pre-tokenizer regexes of tokenizer.json files, by family.
constexpr std::string_view kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
const std::map<std::string, std::string, std::less<>> kKnownSplits = {
    {std::string(kGpt2Regex), "gpt-2"},
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "llama-bpe"},
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen2"},
    {"digits|" + std::string(kGpt2Regex), "starcoder"},
};

json::value parse_json(const std::string& path) {
    std::string text = read_file(path);
    boost::system::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec) fail(path, "not valid JSON: " + ec.message());
    return v;
}

const json::object& as_object(const json::value& v, const std::string& path, const char* what) {
    if (!v.is_object()) fail(path, std::string(what) + " is not a JSON object");
    return v.get_object();
}

std::string string_or_content(const json::value* v) {
    if (!v) return {};
    if (v->is_string()) return std::string(v->get_string());
    if (v->is_object())
        if (auto c = v->get_object().if_contains("content"); c && c->is_string()) return std::string(c->get_string());
    return {};
}

bool bool_field(const json::object& o, const char* key, bool fallback) {
    auto v = o.if_contains(key);
    return v && v->is_bool() ? v->get_bool() : fallback;
}

// Calls `f` on every pre-tokenizer / decoder / post-processor object, descending into Sequences.
template <typename F>
void for_each_step(const json::value* v, const F& f) {
    if (!v || !v->is_object()) return;
    const json::object& o = v->get_object();
    f(o);
    for (const char* list : {"pretokenizers", "decoders", "processors", "normalizers"})
        if (auto items = o.if_contains(list); items && items->is_array())
            for (const auto& item : items->get_array()) for_each_step(&item, f);
}

bool has_step(const json::value* v, std::string_view type) {
    bool found = false;
    for_each_step(v, [&](const json::object& o) {
        if (auto t = o.if_contains("type"); t && t->is_string() && t->get_string() == type) found = true;
    });
    return found;
}

// The pre-tokenizer family of a byte-level tokenizer.json, "" when not one we know.
std::string detect_pre(const json::value* pre_tokenizer) {
    std::string key;
    for_each_step(pre_tokenizer, [&](const json::object& o) {
        auto type = o.if_contains("type");
        if (!type || !type->is_string()) return;
        auto append = [&](std::string_view part) { key.append(key.empty() ? "" : "|").append(part); };
        if (type->get_string() == "Split") {
            if (auto pattern = o.if_contains("pattern"); pattern && pattern->is_object())
                if (auto re = pattern->get_object().if_contains("Regex"); re && re->is_string()) append(re->get_string());
        } else if (type->get_string() == "ByteLevel" && bool_field(o, "use_regex", true)) {
            append(kGpt2Regex);
        } else if (type->get_string() == "Digits" && bool_field(o, "individual_digits", false)) {
            key.append(key.empty() ? "" : "|").append("digits");
        }
    });
    auto it = kKnownSplits.find(key);
    return it == kKnownSplits.end() ? "" : it->second;
}

// BOS/EOS that TemplateProcessing puts around a single sequence.
void read_post_processor(const json::value* post, TokenizerSpec& spec) {
    for_each_step(post, [&](const json::object& o) {
        auto type = o.if_contains("type");
        auto single = o.if_contains("single");
        if (!type || *type != "TemplateProcessing" || !single || !single->is_array()) return;
        const json::array& items = single->get_array();
        auto special_id = [&](const json::value& item) -> int32_t {
            if (!item.is_object()) return -1;
            auto st = item.get_object().if_contains("SpecialToken");
            return st && st->is_object() ? find_token(spec, string_or_content(st->get_object().if_contains("id"))) : -1;
        };
        if (items.empty()) return;
        if (int32_t bos = special_id(items.front()); bos >= 0) spec.special_ids["bos"] = bos;
        if (int32_t eos = special_id(items.back()); eos >= 0) spec.special_ids["eos"] = eos;
        spec.add_bos = special_id(items.front()) >= 0;
        spec.add_eos = special_id(items.back()) >= 0;
    });
}

void add_token(TokenizerSpec& spec, int64_t id, const std::string& content, bool special) {
    bool unknown = spec.special_ids.count("unknown") && spec.special_ids.at("unknown") == id;
    TokenType type = unknown                            ? TokenType::Unknown
                     : (special || looks_special(content)) ? TokenType::Control
                                                          : TokenType::UserDefined;
    set_token(spec, id, content, type, -1000.0f);
}

std::pair<std::string, std::string> split_merge(const json::value& m, const std::string& path) {
    if (m.is_string()) {
        std::string_view s = m.get_string();
        size_t space = s.find(' ', 1);
        if (space == std::string_view::npos) fail(path, "merge \"" + std::string(s) + "\" is not of the form \"left right\"");
        return {std::string(s.substr(0, space)), std::string(s.substr(space + 1))};
    }
    if (m.is_array() && m.get_array().size() == 2 && m.get_array()[0].is_string() && m.get_array()[1].is_string())
        return {std::string(m.get_array()[0].get_string()), std::string(m.get_array()[1].get_string())};
    fail(path, "a merge is neither \"left right\" nor [left, right]");
}

// SentencePiece-style BPE has piece scores, not merges: the earlier the first merge that
// builds a piece, the higher its score; pieces no merge builds come after, in id order.
void scores_from_merges(const json::array& merges, const std::string& path, TokenizerSpec& spec) {
    std::vector<bool> scored(spec.tokens.size(), false);
    float next = -1.0f;
    for (const auto& m : merges) {
        auto [left, right] = split_merge(m, path);
        int32_t id = find_token(spec, left + right);
        if (id < 0 || scored[id]) continue;
        spec.scores[id] = next--;
        scored[id] = true;
    }
    for (size_t id = 0; id < spec.tokens.size(); ++id)
        if (!scored[id] && spec.types[id] == static_cast<int32_t>(TokenType::Normal)) spec.scores[id] = next--;
}

void read_vocab_object(const json::object& vocab, const std::string& path, TokenizerSpec& spec, bool spm) {
    for (const auto& [text, id] : vocab) {
        if (!id.is_int64()) fail(path, "the id of token \"" + std::string(text) + "\" is not an integer");
        TokenType type = spm && tokenizer::byte_token_value(text) >= 0 ? TokenType::Byte
                         : !spm && looks_special(text)                 ? TokenType::Control
                                                                       : TokenType::Normal;
        set_token(spec, id.get_int64(), std::string(text), type, 0.0f);
    }
}

}  // namespace

void read_hf_tokenizer_json(const std::string& path, TokenizerSpec& spec) {
    json::value root_value = parse_json(path);
    const json::object& root = as_object(root_value, path, "the file");
    auto model_value = root.if_contains("model");
    if (!model_value) fail(path, "has no \"model\"");
    const json::object& model = as_object(*model_value, path, "\"model\"");
    std::string type = string_or_content(model.if_contains("type"));
    if (type != "BPE") fail(path, "model type \"" + type + "\" is not supported (only BPE)");
    auto vocab = model.if_contains("vocab");
    auto merges = model.if_contains("merges");
    if (!vocab || !vocab->is_object() || !merges || !merges->is_array()) fail(path, "the BPE model has no vocab or merges");

    bool byte_level = has_step(root.if_contains("pre_tokenizer"), "ByteLevel") || has_step(root.if_contains("decoder"), "ByteLevel");
    bool spm = !byte_level && (bool_field(model, "byte_fallback", false) || has_step(root.if_contains("pre_tokenizer"), "Metaspace") ||
                               has_step(root.if_contains("normalizer"), "Prepend"));
    if (!byte_level && !spm) fail(path, "the BPE model is neither byte-level nor SentencePiece-style");
    spec.model = spm ? "llama" : "gpt2";
    read_vocab_object(vocab->get_object(), path, spec, spm);
    if (spm) {
        scores_from_merges(merges->get_array(), path, spec);
        if (std::string unk = string_or_content(model.if_contains("unk_token")); !unk.empty())
            if (int32_t id = find_token(spec, unk); id >= 0) spec.special_ids["unknown"] = id;
    } else {
        for (const auto& m : merges->get_array()) {
            auto [left, right] = split_merge(m, path);
            spec.merges.push_back(left + " " + right);
        }
        spec.pre = detect_pre(root.if_contains("pre_tokenizer"));
    }
    if (auto added = root.if_contains("added_tokens"); added && added->is_array()) {
        for (const auto& t : added->get_array()) {
            if (!t.is_object()) continue;
            const json::object& o = t.get_object();
            auto id = o.if_contains("id");
            if (!id || !id->is_int64()) fail(path, "an added token has no integer id");
            add_token(spec, id->get_int64(), string_or_content(o.if_contains("content")), bool_field(o, "special", false));
        }
    }
    read_post_processor(root.if_contains("post_processor"), spec);
}

void read_bpe_vocab_and_merges(const std::string& vocab_path, const std::string& merges_path, TokenizerSpec& spec) {
    spec.model = "gpt2";
    json::value vocab = parse_json(vocab_path);
    read_vocab_object(as_object(vocab, vocab_path, "the file"), vocab_path, spec, false);
    std::string text = read_file(merges_path);
    for_each_line(text, [&](std::string_view line, size_t line_no) {
        if (line.empty() || (line_no == 1 && line.substr(0, 9) == "#version:")) return;
        if (line.find(' ', 1) == std::string_view::npos)
            fail(merges_path, "line " + std::to_string(line_no) + " is not of the form \"left right\"");
        spec.merges.emplace_back(line);
    });
}

void apply_hf_config(const std::string& path, TokenizerSpec& spec) {
    json::value root_value = parse_json(path);
    const json::object& root = as_object(root_value, path, "the file");
    if (path.size() >= 17 && path.compare(path.size() - 17, 17, "added_tokens.json") == 0) {
        for (const auto& [content, id] : root) {
            if (!id.is_int64()) fail(path, "the id of \"" + std::string(content) + "\" is not an integer");
            add_token(spec, id.get_int64(), std::string(content), false);
        }
        return;
    }
    if (auto decoder = root.if_contains("added_tokens_decoder"); decoder && decoder->is_object()) {
        for (const auto& [id_text, t] : decoder->get_object()) {
            int64_t id = 0;
            try {
                id = std::stoll(std::string(id_text));
            } catch (const std::exception&) {
                fail(path, "added_tokens_decoder key \"" + std::string(id_text) + "\" is not a token id");
            }
            if (!t.is_object()) continue;
            std::string content = string_or_content(&t);
            if (id < static_cast<int64_t>(spec.tokens.size()) && spec.tokens[id] == content &&
                spec.types[id] != static_cast<int32_t>(TokenType::Normal))
                continue;  // already known with its type (e.g. <unk> from the model)
            add_token(spec, id, content, bool_field(t.get_object(), "special", false));
        }
    }
    for (const auto& [field, name] : {std::pair{"bos_token", "bos"}, {"eos_token", "eos"}, {"unk_token", "unknown"},
                                      {"pad_token", "padding"}}) {
        std::string content = string_or_content(root.if_contains(field));
        if (content.empty()) continue;
        int32_t id = find_token(spec, content);
        if (id < 0) fail(path, std::string(field) + " \"" + content + "\" is not in the vocabulary");
        spec.special_ids[name] = id;
    }
    if (auto v = root.if_contains("add_bos_token"); v && v->is_bool()) spec.add_bos = v->get_bool();
    if (auto v = root.if_contains("add_eos_token"); v && v->is_bool()) spec.add_eos = v->get_bool();
    if (auto t = root.if_contains("chat_template")) {
        if (t->is_string()) spec.chat_template = std::string(t->get_string());
        else if (t->is_array())
            for (const auto& named : t->get_array())
                if (named.is_object() && string_or_content(named.get_object().if_contains("name")) == "default")
                    spec.chat_template = string_or_content(named.get_object().if_contains("template"));
    }
}

}  // namespace strata::tool
