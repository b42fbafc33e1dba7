// tests/unit/layouts_test.cpp — the token layouts of tokenizer/layouts.h: llama.cpp server's
// fill-in-the-middle prompt (format_infill: the repo-level pattern, its budgets) and the
// query/document pair of a cross-encoder (format_rerank), on the bundled stories260K
// vocabulary given FIM token ids and on the WordPiece vocabulary of tests/data/embed.
#include <boost/test/unit_test.hpp>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_util.h"
#include "tokenizer/layouts.h"

namespace strata::tokenizer {
namespace {

using Ids = std::vector<int32_t>;

// stories260K's vocabulary with `keys` set to ids (the byte tokens <0x00>.. stand for FIM tokens).
std::unique_ptr<Tokenizer> stories(const std::vector<std::pair<std::string, uint32_t>>& keys) {
    const auto file = gguf::File::open((test::source_dir() / "daemon/models/stories260K.gguf").string());
    gguf::Writer w;
    for (const auto& [key, value] : file->metadata())
        if (key.starts_with("tokenizer.ggml.")) w.set_value(key, value);
    for (const auto& [key, id] : keys) w.set_u32(key, id);
    const auto bytes = w.bytes();
    return Tokenizer::from_gguf(*gguf::File::parse(bytes));
}

constexpr int32_t kPre = 3, kSuf = 4, kMid = 5, kRep = 6, kSep = 7;

const std::vector<std::pair<std::string, uint32_t>> kFim{{"tokenizer.ggml.fim_pre_token_id", kPre},
                                                         {"tokenizer.ggml.fim_suf_token_id", kSuf},
                                                         {"tokenizer.ggml.fim_mid_token_id", kMid}};

Ids cat(std::initializer_list<Ids> parts) {
    Ids out;
    for (const Ids& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(infill_prefix_suffix_middle_as_llama_cpp) {
    const auto t = stories(kFim);
    const InfillInput input{"Once upon a time", " the end.", "there", {}};
    const Ids want = cat({{t->bos(), kPre}, t->encode("Once upon a time", false, false), t->encode("there", false, true), {kSuf},
                          t->encode(" the end.", false, false), {kMid}});
    BOOST_TEST(infill_tokens(*t, input, {512, 16, 2048}) == want);
}

BOOST_AUTO_TEST_CASE(infill_older_keys_and_missing_tokens) {
    const auto old = stories({{"tokenizer.ggml.prefix_token_id", kPre}, {"tokenizer.ggml.suffix_token_id", kSuf},
                              {"tokenizer.ggml.middle_token_id", kMid}});
    BOOST_TEST(old->fim().pre == kPre);
    BOOST_TEST(old->fim().mid == kMid);
    const auto none = stories({{"tokenizer.ggml.fim_pre_token_id", kPre}});
    BOOST_TEST(missing_fim_tokens(*none) == "suffix token is missing. middle token is missing. ");
    BOOST_CHECK_THROW(infill_tokens(*none, {"a", "b", "", {}}, {512, 16, 2048}), TokenizerError);
}

BOOST_AUTO_TEST_CASE(infill_tokens_found_by_their_text) {
    // As llama.cpp's loader: without ids in the file, tokens spelled as Qwen's FIM tokens are
    // taken (and become control tokens, so a prompt's special text matches them).
    const auto file = gguf::File::open((test::source_dir() / "daemon/models/stories260K.gguf").string());
    gguf::Writer w;
    for (const auto& [key, value] : file->metadata())
        if (key.starts_with("tokenizer.ggml.")) w.set_value(key, value);
    const gguf::Value& texts = *file->get_array("tokenizer.ggml.tokens");
    std::vector<std::string> tokens(texts.strings.begin(), texts.strings.end());
    tokens[509] = "<|fim_prefix|>";
    tokens[510] = "<|fim_suffix|>";
    tokens[511] = "<|fim_middle|>";
    w.set_strings("tokenizer.ggml.tokens", tokens);
    const auto bytes = w.bytes();
    const auto t = Tokenizer::from_gguf(*gguf::File::parse(bytes));
    BOOST_TEST(t->fim().pre == 509);
    BOOST_TEST(t->fim().suf == 510);
    BOOST_TEST(t->fim().mid == 511);
    BOOST_TEST(t->fim().rep == -1);
    BOOST_TEST(t->encode("<|fim_middle|>", false, true) == Ids{511});
}

BOOST_AUTO_TEST_CASE(infill_repo_level_with_files) {
    auto keys = kFim;
    keys.insert(keys.end(), {{"tokenizer.ggml.fim_rep_token_id", kRep}, {"tokenizer.ggml.fim_sep_token_id", kSep}});
    const auto t = stories(keys);
    const InfillInput input{"a cat", "a dog", "", {{"x.py", "Lily"}, {"tmp", "Tom"}}};
    const Ids extra = cat({{kRep}, t->encode("myproject\n", false, false), {kSep}, t->encode("x.py\n", false, false),
                           t->encode("Lily", false, false), {kSep}, t->encode("tmp\n", false, false), t->encode("Tom", false, false),
                           {kSep}, t->encode("filename\n", false, false)});
    const Ids fim = cat({{t->bos(), kPre}, t->encode("a cat", false, false), {kSuf}, t->encode("a dog", false, false), {kMid}});
    BOOST_TEST(infill_tokens(*t, input, {512, 16, 2048}) == cat({extra, fim}));
    // The extra context keeps its last context - batch - 2 x predict tokens.
    const Ids cut = infill_tokens(*t, input, {512, 16, 512 + 32 + 3});
    BOOST_TEST(cut == cat({Ids(extra.end() - 3, extra.end()), fim}));
    // Without a file separator the files are joined by llama.cpp's snippet line.
    const auto plain = stories(kFim);
    const Ids snippet = cat({plain->encode("\n\n--- snippet ---\n\n", false, false), plain->encode("Tom", false, false)});
    const Ids joined = infill_tokens(*plain, {"a", "b", "", {{"f", "Tom"}}}, {512, 16, 2048});
    BOOST_TEST(Ids(joined.begin(), joined.begin() + std::ptrdiff_t(snippet.size())) == snippet);
}

BOOST_AUTO_TEST_CASE(infill_budgets_cut_prefix_head_and_suffix_tail) {
    const auto t = stories(kFim);
    const Ids prefix = t->encode("Once upon a time there was a little girl named Lily", false, false);
    const Ids suffix = t->encode("She liked to play with her ball in the park", false, false);
    const int32_t batch = 16;  // prefix keeps 12 tokens, the suffix 16/4 - 2 - prompt(0) = 2
    const Ids got = infill_tokens(*t, {"Once upon a time there was a little girl named Lily",
                                       "She liked to play with her ball in the park", "", {}},
                                  {batch, 4, 64});
    const Ids want = cat({{t->bos(), kPre}, Ids(prefix.end() - 12, prefix.end()), {kSuf}, Ids(suffix.begin(), suffix.begin() + 2), {kMid}});
    BOOST_TEST(got == want);
}

BOOST_AUTO_TEST_CASE(rerank_pair_as_llama_cpp_wordpiece) {
    const auto t = Tokenizer::from_gguf(*gguf::File::open((test::data_dir() / "embed/models/bert-cls-f16.gguf").string()));
    // WordPiece: [CLS] query [SEP] document (llama.cpp: add_bos, add_sep, no add_eos).
    const Ids want = cat({{t->bos()}, t->encode("the cat", false, false), {t->pair().sep}, t->encode("a dog sat", false, false)});
    BOOST_TEST(pair_tokens(*t, "the cat", "a dog sat") == want);
    BOOST_TEST(t->pair().sep == 3);
    // llama.cpp's ids of this pair (tests/data/rerank/scores.json, make_rerank.sh).
    const auto rank = Tokenizer::from_gguf(*gguf::File::open((test::data_dir() / "rerank/bert-rank-f16.gguf").string()));
    BOOST_TEST(pair_tokens(*rank, "the cat sat on the mat", "a cat is on the mat") ==
               (Ids{2, 97, 98, 100, 101, 97, 102, 3, 5, 98, 110, 101, 97, 102}));
}

}  // namespace strata::tokenizer
