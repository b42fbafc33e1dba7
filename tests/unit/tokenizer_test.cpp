// tests/unit/tokenizer_test.cpp — the tokenizers against llama.cpp's test vectors (WordPiece:
// tests/data/embed/wpm.vectors.jsonl on the synthetic BERT vocabulary), the
// pre-tokenizer splits against llama.cpp's, special tokens, detokenizing and streaming,
// the importer, and bad input. Vocabularies come from tests/data/tokenizer (imported from
// the original tokenizer files, so a fresh clone runs them) and from ../shared when present.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include <boost/json.hpp>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "import_tokenizer.h"
#include "test_util.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"
#include "utf8/utf8.h"

using namespace strata;
using namespace strata::tokenizer;
using strata::tool::ImportOptions;
using strata::tool::TokenizerSpec;

namespace {

std::filesystem::path data(const std::string& rel) { return test::data_dir() / "tokenizer" / rel; }
std::filesystem::path shared(const std::string& rel) { return test::shared_dir() / rel; }

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    BOOST_REQUIRE_MESSAGE(in, "cannot open " << path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// llama.cpp's .inp format: each text followed by "\n__ggml_vocab_test__\n".
std::vector<std::string> read_cases(const std::filesystem::path& path) {
    std::string all = read_all(path), sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> cases;
    for (size_t pos = 0, next; (next = all.find(sep, pos)) != std::string::npos; pos = next + sep.size())
        cases.push_back(all.substr(pos, next - pos));
    return cases;
}

std::vector<int32_t> parse_ids(const std::string& line) {
    std::istringstream in(line);
    std::vector<int32_t> ids;
    for (int32_t id; in >> id;) ids.push_back(id);
    return ids;
}

struct Vectors {
    std::vector<std::string> texts;
    std::vector<std::vector<int32_t>> ids;
};

Vectors load_vectors(const std::string& family) {
    Vectors v;
    v.texts = read_cases(data("vectors/" + family + ".inp"));
    std::istringstream out(read_all(data("vectors/" + family + ".out")));
    for (std::string line; std::getline(out, line);) v.ids.push_back(parse_ids(line));
    BOOST_REQUIRE_EQUAL(v.texts.size(), v.ids.size());
    return v;
}

std::unique_ptr<Tokenizer> from_bytes(const std::vector<uint8_t>& bytes) {
    auto file = gguf::File::parse(bytes);
    return Tokenizer::from_gguf(*file);
}

std::vector<uint8_t> gguf_bytes(const TokenizerSpec& spec, const std::string& name = "") {
    gguf::Writer w;
    tool::write_tokenizer(spec, w);
    if (!name.empty()) w.set_string("general.name", name);
    return w.bytes();
}

TokenizerSpec import_spec(std::vector<std::string> sources, const std::string& pre = "", int64_t vocab_size = 0) {
    ImportOptions options;
    options.sources = std::move(sources);
    options.pre = pre;
    options.vocab_size = vocab_size;
    return tool::import_tokenizer(options);
}

std::unique_ptr<Tokenizer> import(std::vector<std::string> sources, const std::string& pre = "", const std::string& name = "") {
    return from_bytes(gguf_bytes(import_spec(std::move(sources), pre), name));
}

std::unique_ptr<Tokenizer> load_gguf(const std::filesystem::path& path) {
    auto file = gguf::File::open(path.string());
    return Tokenizer::from_gguf(*file);
}

// The vocabularies a fresh clone can build from tests/data/tokenizer.
const Tokenizer& gpt2() {
    static auto tok = import({data("gpt2").string()}, "gpt-2");
    return *tok;
}
const Tokenizer& llama2() {
    static auto tok = import({data("llama2/tokenizer.model").string()});
    return *tok;
}
// Phi-3 is the Llama 2 vocabulary plus the added tokens of its tokenizer_config.json.
const Tokenizer& phi3() {
    static auto tok = import({data("llama2/tokenizer.model").string(), data("phi-3/tokenizer_config.json").string()}, "", "Phi3");
    return *tok;
}
const Tokenizer& tok512() {
    static auto tok = import({data("stories260K/tok512.model").string()});
    return *tok;
}

// Every vector reproduced exactly (add_special=false, parse_special=false); prints the count.
void check_vectors(const Tokenizer& tok, const std::string& family, const std::string& source) {
    Vectors v = load_vectors(family);
    size_t pass = 0;
    for (size_t i = 0; i < v.texts.size(); ++i) {
        auto got = tok.encode(v.texts[i], false, false);
        BOOST_TEST_CONTEXT(family << " case " << i << " [" << v.texts[i] << "]") { BOOST_TEST(got == v.ids[i], boost::test_tools::per_element()); }
        pass += got == v.ids[i];
    }
    BOOST_TEST_MESSAGE(family << " (" << source << "): " << pass << "/" << v.texts.size() << " vectors exact");
}

std::vector<std::string> tricky_texts() {
    return {"",
            " ",
            "Hello world",
            "  leading and trailing  ",
            std::string("nul\0inside\0", 11),
            "\xff\xfe invalid \xc3 bytes \xe2\x82 cut \xed\xa0\x80 surrogate \xf4\x90\x80\x80 past max",
            "\xf0\x9f\xa6\x99 llama \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\xb6\xe2\x80\x8d\xf0\x9f\x8c\xab\xef\xb8\x8f",
            "tabs\t\tand\nnewlines\r\n\n",
            "<s> </s> <|endoftext|> <0x41> text that looks special"};
}

std::string random_bytes(std::mt19937& rng, size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xFF);
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(vectors)

BOOST_AUTO_TEST_CASE(gpt2_from_vocab_json_and_merges) { check_vectors(gpt2(), "gpt-2", "vocab.json + merges.txt"); }
BOOST_AUTO_TEST_CASE(llama_spm_from_sentencepiece_model) { check_vectors(llama2(), "llama-spm", "tokenizer.model"); }
BOOST_AUTO_TEST_CASE(phi3_from_model_and_config) { check_vectors(phi3(), "phi-3", "tokenizer.model + tokenizer_config.json"); }

BOOST_AUTO_TEST_CASE(llama_spm_gguf, *test::shared("data/vocab-gguf/ggml-vocab-llama-spm.gguf")) {
    check_vectors(*load_gguf(shared("data/vocab-gguf/ggml-vocab-llama-spm.gguf")), "llama-spm", "llama.cpp GGUF");
}
BOOST_AUTO_TEST_CASE(phi3_gguf, *test::shared("data/vocab-gguf/ggml-vocab-phi-3.gguf")) {
    check_vectors(*load_gguf(shared("data/vocab-gguf/ggml-vocab-phi-3.gguf")), "phi-3", "llama.cpp GGUF");
}
BOOST_AUTO_TEST_CASE(gpt2_gguf, *test::shared("data/vocab-gguf/ggml-vocab-gpt-2.gguf")) {
    check_vectors(*load_gguf(shared("data/vocab-gguf/ggml-vocab-gpt-2.gguf")), "gpt-2", "llama.cpp GGUF");
}
BOOST_AUTO_TEST_CASE(llama_bpe_gguf, *test::shared("data/vocab-gguf/ggml-vocab-llama-bpe.gguf")) {
    check_vectors(*load_gguf(shared("data/vocab-gguf/ggml-vocab-llama-bpe.gguf")), "llama-bpe", "GGUF");
}
BOOST_AUTO_TEST_CASE(qwen2_and_deepseek_r1_qwen_gguf, *test::shared("data/vocab-gguf/ggml-vocab-qwen2.gguf")) {
    auto tok = load_gguf(shared("data/vocab-gguf/ggml-vocab-qwen2.gguf"));
    check_vectors(*tok, "qwen2", "GGUF");
    check_vectors(*tok, "deepseek-r1-qwen", "qwen2 GGUF");
}

BOOST_AUTO_TEST_CASE(llama_bpe_from_encoder_json, *test::shared("data/tokenizers/llama3.2-bpe/vocab.bpe")) {
    check_vectors(*import({shared("data/tokenizers/llama3.2-bpe").string()}, "llama-bpe"), "llama-bpe",
                  "encoder.json + vocab.bpe");
}
BOOST_AUTO_TEST_CASE(qwen2_from_tiktoken, *test::shared("data/tokenizers/qwen/qwen.tiktoken")) {
    auto tok = import({shared("data/tokenizers/qwen/qwen.tiktoken").string(),
                       shared("data/tokenizers/qwen/qwen2.5-tokenizer_config.json").string()},
                      "qwen2");
    check_vectors(*tok, "qwen2", "qwen.tiktoken");
    check_vectors(*tok, "deepseek-r1-qwen", "qwen.tiktoken");
}
// gpt-oss's o200k vocabulary: OpenAI's o200k_base ranks from the npm package js-tiktoken
// (pinned in tests/clients), written here as a .tiktoken file whose merges the importer
// re-derives, with the gpt-4o pre-tokenizer; its ids equal llama.cpp's on the shared test
// strings and the extra pre-tokenizer texts (vectors/o200k.*: README there).
BOOST_AUTO_TEST_CASE(o200k_from_tiktoken_ranks, *test::npm("js-tiktoken/dist/ranks/o200k_base.cjs")) {
    const std::string module = read_all(test::npm_dir() / "js-tiktoken/dist/ranks/o200k_base.cjs");
    const auto ranks = boost::json::parse(module.substr(module.find('{'), module.rfind('}') - module.find('{') + 1)).as_object();
    const std::string tiktoken = (std::filesystem::temp_directory_path() / ("strata-o200k-" + std::to_string(::getpid()) + ".tiktoken")).string();
    {
        std::ofstream out(tiktoken);
        std::istringstream lines(std::string(ranks.at("bpe_ranks").as_string()));
        for (std::string line; std::getline(lines, line);) {  // "<key> <first rank> <base64 token> ..."
            std::istringstream words(line);
            std::string key, token;
            int64_t rank = 0;
            words >> key >> rank;
            while (words >> token) out << token << ' ' << rank++ << '\n';
        }
    }
    auto tok = import({tiktoken}, "gpt-4o");
    std::filesystem::remove(tiktoken);
    BOOST_TEST(tok->n_vocab() == 199998);
    check_vectors(*tok, "o200k", "js-tiktoken's o200k_base ranks");
}
BOOST_AUTO_TEST_CASE(llama_spm_from_tokenizer_json, *test::shared("data/tokenizers/llama2-hf/tokenizer.json")) {
    check_vectors(*import({shared("data/tokenizers/llama2-hf").string()}), "llama-spm", "tokenizer.json");
}
BOOST_AUTO_TEST_CASE(llama_spm_from_llama2c_bin, *test::shared("data/tokenizers/llama2/tokenizer.bin")) {
    check_vectors(*import({shared("data/tokenizers/llama2/tokenizer.bin").string()}), "llama-spm", "llama2.c tokenizer.bin");
}
BOOST_AUTO_TEST_CASE(phi3_from_tokenizer_json, *test::shared("data/tokenizers/phi-3-mini/tokenizer.json")) {
    check_vectors(*import({shared("data/tokenizers/phi-3-mini").string()}), "phi-3", "tokenizer.json");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pretokenizer)

// Families without an obtainable vocabulary are checked here, word by word, against the
// splits llama.cpp computes (tests/data/tokenizer/pretokenizer-splits.txt).
// WordPiece ([CLS] ... [SEP], lowercasing, accents stripped, punctuation and CJK split off,
// unknown words) as llama.cpp tokenizes the texts of make_embed.sh; decoding joins the pieces.
BOOST_AUTO_TEST_CASE(wordpiece_matches_llama_cpp) {
    const auto dir = test::data_dir() / "embed";
    const auto tok = Tokenizer::from_gguf(*gguf::File::open((dir / "models/bert-mean-f16.gguf").string()));
    BOOST_TEST(tok->model() == "bert");
    std::istringstream lines(read_all(dir / "wpm.vectors.jsonl"));
    int n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
        const auto v = boost::json::parse(line).as_object();
        const std::string text(v.at("text").as_string());
        std::vector<int32_t> ids;
        for (const auto& id : v.at("ids").as_array()) ids.push_back(static_cast<int32_t>(id.as_int64()));
        BOOST_TEST(tok->encode(text, true, false) == ids, "text: " << text);
    }
    BOOST_TEST(n == 11);
    const auto ids = tok->encode("The cat sat", true, false);
    BOOST_TEST(tok->decode(ids, false) == "the cat sat");
    BOOST_TEST(tok->encode("The cat", false, false).front() != tok->bos());
}

BOOST_AUTO_TEST_CASE(splits_match_llama_cpp) {
    std::map<std::string, std::vector<std::string>> texts = {
        {"llama-spm.inp", read_cases(data("vectors/llama-spm.inp"))},
        {"pretokenizer-extra.inp", read_cases(data("pretokenizer-extra.inp"))}};
    std::map<std::string, std::pair<int, int>> per_family;  // passed, total
    std::istringstream golden(read_all(data("pretokenizer-splits.txt")));
    for (std::string line; std::getline(golden, line);) {
        std::istringstream fields(line);
        std::string family, where, lengths;
        std::getline(fields, family, '\t');
        std::getline(fields, where, '\t');
        std::getline(fields, lengths);
        size_t colon = where.find(':');
        const std::string& text = texts.at(where.substr(0, colon)).at(std::stoul(where.substr(colon + 1)));
        PreTokenizer pre(family);
        std::vector<std::string_view> words;
        pre.split(text, words);
        std::vector<int32_t> got;
        for (auto w : words) got.push_back(static_cast<int32_t>(w.size()));
        auto expected = parse_ids(lengths);
        BOOST_TEST_CONTEXT(family << " " << where) { BOOST_TEST(got == expected, boost::test_tools::per_element()); }
        auto& [pass, total] = per_family[family];
        pass += got == expected;
        ++total;
    }
    BOOST_TEST(per_family.size() == 17u);
    for (const auto& [family, counts] : per_family)
        BOOST_TEST_MESSAGE("pre-tokenizer " << family << ": " << counts.first << "/" << counts.second << " splits exact");
}

BOOST_AUTO_TEST_CASE(split_is_lossless_and_linear_on_megabyte_words) {
    // Each of these is one long word or run for some family; a quadratic matcher would not
    // finish within the test timeout.
    auto run = [](std::string_view before, char c, std::string_view after) {
        return std::string(before).append(1 << 20, c).append(after);
    };
    std::vector<std::string> inputs = {run("", 'a', ""), run("", ' ', ""),  run("", '7', ""),
                                       run("x", ' ', "\xf0\x9f\x98\x80"), run("", '\n', ""), run("", 'A', "a")};
    for (const char* family : {"llama-bpe", "qwen2", "gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "starcoder",
                               "tekken", "gpt-4o", "chameleon", "poro-chat", "default"}) {
        PreTokenizer pre(family);
        for (const auto& in : inputs) {
            std::vector<std::string_view> words;
            pre.split(in, words);
            std::string joined;
            for (auto w : words) joined.append(w);
            BOOST_TEST((joined == in), family << ": the words do not add up to the input");
        }
    }
}

BOOST_AUTO_TEST_CASE(unknown_family_is_an_error) {
    BOOST_CHECK_EXCEPTION(PreTokenizer("no-such-family"), TokenizerError, [](const TokenizerError& e) {
        return std::string(e.what()).find("no-such-family") != std::string::npos;
    });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(special_tokens)

BOOST_AUTO_TEST_CASE(control_tokens_only_with_parse_special) {
    const Tokenizer& tok = gpt2();
    BOOST_TEST(tok.encode("<|endoftext|>", false, true) == std::vector<int32_t>{50256});
    auto plain = tok.encode("<|endoftext|>", false, false);
    BOOST_TEST(std::count(plain.begin(), plain.end(), 50256) == 0);
    BOOST_TEST(tok.decode(plain, false) == "<|endoftext|>");
    BOOST_TEST(tok.decode(tok.encode("a<|endoftext|>b", false, true), false) == "ab");
    BOOST_TEST(tok.decode(tok.encode("a<|endoftext|>b", false, true), true) == "a<|endoftext|>b");
}

// Reference ids from llama.cpp (peer-tokenize --parse-special) on the Phi-3 vocabulary:
// the whitespace after Phi-3's special tokens is stripped, and SentencePiece starts the
// text after a special token with a space.
BOOST_AUTO_TEST_CASE(phi3_chat_text_as_llama_cpp_tokenizes_it) {
    const Tokenizer& tok = phi3();
    BOOST_TEST(tok.encode("<|user|>\nHello</s> x<|end|>\n<|assistant|>", false, true) ==
               (std::vector<int32_t>{32010, 15043, 2, 921, 32007, 32001}));
    BOOST_TEST(tok.encode("<|user|>\nHello</s> x<|end|>\n<|assistant|>", false, false) ==
               (std::vector<int32_t>{529, 29989, 1792, 29989, 29958, 13, 10994, 829, 29879, 29958, 921, 29966, 29989, 355,
                                     29989, 29958, 13, 29966, 29989, 465, 22137, 29989, 29958}));
    BOOST_TEST(tok.is_eog(32007));  // <|end|>
    BOOST_TEST(tok.is_eog(32000));  // <|endoftext|>
    BOOST_TEST(tok.eot() == 32007);
}

BOOST_AUTO_TEST_CASE(user_defined_tokens_always_match) {
    TokenizerSpec spec = import_spec({data("gpt2").string()}, "gpt-2");
    spec.tokens.insert(spec.tokens.end(), {"<tool>", "<ctl>"});
    spec.types.insert(spec.types.end(), {int32_t(TokenType::UserDefined), int32_t(TokenType::Control)});
    auto tok = from_bytes(gguf_bytes(spec));
    BOOST_TEST(tok->encode("a<tool>b", false, false) == tok->encode("a<tool>b", false, true));
    auto ids = tok->encode("<tool><ctl>", false, false);
    BOOST_TEST(ids.front() == 50257);
    BOOST_TEST(std::count(ids.begin(), ids.end(), 50258) == 0);
    BOOST_TEST(tok->encode("<tool><ctl>", false, true) == (std::vector<int32_t>{50257, 50258}));
    BOOST_TEST(tok->decode(std::vector<int32_t>{50257, 50258}, false) == "<tool>");  // user-defined text is content
}

BOOST_AUTO_TEST_CASE(longer_special_text_wins) {
    TokenizerSpec spec = import_spec({data("gpt2").string()}, "gpt-2");
    spec.tokens.insert(spec.tokens.end(), {"<a>", "<a><b>", "<b>"});
    spec.types.insert(spec.types.end(), 3, int32_t(TokenType::Control));
    auto tok = from_bytes(gguf_bytes(spec));
    BOOST_TEST(tok->encode("<a><a><b><b>", false, true) == (std::vector<int32_t>{50257, 50258, 50259}));
}

BOOST_AUTO_TEST_CASE(bos_and_eos) {
    BOOST_TEST(llama2().add_bos());
    BOOST_TEST(!llama2().add_eos());
    BOOST_TEST(llama2().encode("Hello", true, false) == (std::vector<int32_t>{1, 15043}));
    BOOST_TEST(llama2().encode("", true, false) == std::vector<int32_t>{1});
    BOOST_TEST(llama2().encode("", false, false).empty());
    BOOST_TEST(llama2().is_eog(2));
    BOOST_TEST(!gpt2().add_bos());
    BOOST_TEST(gpt2().encode("Hello", true, false) == gpt2().encode("Hello", false, false));

    TokenizerSpec spec = import_spec({data("stories260K/tok512.model").string()});
    spec.add_eos = true;
    auto tok = from_bytes(gguf_bytes(spec));
    BOOST_TEST(tok->encode("Once upon a time", true, false) == (std::vector<int32_t>{1, 403, 407, 261, 378, 2}));
}

BOOST_AUTO_TEST_CASE(llama3_special_tokens, *test::shared("data/vocab-gguf/ggml-vocab-llama-bpe.gguf")) {
    auto tok = load_gguf(shared("data/vocab-gguf/ggml-vocab-llama-bpe.gguf"));
    BOOST_TEST(tok->encode("<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>", true, true) ==
               (std::vector<int32_t>{128000, 128006, 882, 128007, 271, 13347, 128009}));
    for (int32_t id : {128001, 128008, 128009}) BOOST_TEST(tok->is_eog(id));
    BOOST_TEST(!tok->is_eog(128006));
    BOOST_TEST(tok->find_token("<|eot_id|>").value_or(-1) == 128009);
    BOOST_TEST((tok->token_type(128009) == TokenType::Control));
}

BOOST_AUTO_TEST_CASE(qwen2_user_defined_and_eog, *test::shared("data/vocab-gguf/ggml-vocab-qwen2.gguf")) {
    auto tok = load_gguf(shared("data/vocab-gguf/ggml-vocab-qwen2.gguf"));
    BOOST_TEST(tok->encode("<tool_call>x<|im_end|>\n", true, false) ==
               (std::vector<int32_t>{151657, 87, 27, 91, 318, 6213, 91, 397}));
    BOOST_TEST(tok->encode("<tool_call>x<|im_end|>\n", true, true) == (std::vector<int32_t>{151657, 87, 151645, 198}));
    BOOST_TEST(tok->is_eog(151645));
    BOOST_TEST(tok->is_eog(151643));
    BOOST_TEST(!tok->add_bos());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(detokenize)

BOOST_AUTO_TEST_CASE(round_trip_is_exact) {
    std::vector<std::string> texts = load_vectors("gpt-2").texts;
    auto extra = tricky_texts();
    texts.insert(texts.end(), extra.begin(), extra.end());
    std::mt19937 rng(7);
    for (int i = 0; i < 50; ++i) texts.push_back(random_bytes(rng, rng() % 64));
    for (const Tokenizer* tok : {&gpt2(), &llama2(), &tok512()}) {
        for (const auto& text : texts) {
            BOOST_TEST(tok->decode(tok->encode(text, false, false), false) == text);
            BOOST_TEST(tok->decode(tok->encode(text, true, false), false) == text);  // BOS renders as nothing
        }
    }
}

BOOST_AUTO_TEST_CASE(sentencepiece_leading_space) {
    const Tokenizer& tok = llama2();
    BOOST_TEST(tok.adds_space_prefix());
    BOOST_TEST(tok.decode(std::vector<int32_t>{1, 15043, 3186}, false) == "Hello world");
    BOOST_TEST(tok.decode(std::vector<int32_t>{15043, 3186}, false) == "Hello world");
    BOOST_TEST(tok.decode(std::vector<int32_t>{1, 15043}, true) == "<s>Hello");
    StreamDecoder continuing(tok, {false, false, false});
    BOOST_TEST(continuing.push(3186) == " world");
    BOOST_TEST(tok.piece(3186, false) == " world");
    BOOST_TEST(tok.token_text(3186) == "\xe2\x96\x81world");
    // Continuing text gets no dummy-prefix space: " world" is ▁world, "world" is world.
    BOOST_TEST(tok.encode_continuation(" world", false) == std::vector<int32_t>{3186}, boost::test_tools::per_element());
    BOOST_TEST(tok.encode_continuation(" world", false) == tok.encode("world", false, false), boost::test_tools::per_element());
    BOOST_TEST(tok.decode(tok.encode_continuation("world", false), false) == "world");
    BOOST_TEST(tok.encode_continuation("<s>", true) == std::vector<int32_t>{1}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(stories260k_greedy_text_from_its_ids) {
    auto ids = parse_ids(read_all(data("stories260K/expected-greedy-200steps.ids.txt")));
    BOOST_TEST(ids.size() == 200u);
    std::string expected = read_all(data("stories260K/expected-greedy-200steps.txt"));
    BOOST_TEST(tok512().decode(ids, false) == expected);
    // The prompt as llama.cpp tokenizes it (peer-tokenize stories260K.gguf "Once upon a time").
    BOOST_TEST(tok512().encode("Once upon a time", true, false) == (std::vector<int32_t>{1, 403, 407, 261, 378}));
}

BOOST_AUTO_TEST_CASE(stories260k_gguf_vocabulary, *test::shared("data/models/stories260K/stories260K.gguf")) {
    auto tok = load_gguf(shared("data/models/stories260K/stories260K.gguf"));
    auto ids = parse_ids(read_all(data("stories260K/expected-greedy-200steps.ids.txt")));
    BOOST_TEST(tok->decode(ids, false) == read_all(data("stories260K/expected-greedy-200steps.txt")));
    BOOST_TEST(tok->encode("Once upon a time", true, false) == (std::vector<int32_t>{1, 403, 407, 261, 378}));
    for (int32_t id = 0; id < tok->n_vocab(); ++id) BOOST_TEST(tok->token_text(id) == tok512().token_text(id));
}

BOOST_AUTO_TEST_CASE(ids_outside_the_vocabulary) {
    for (int32_t id : {-1, 50257, INT32_MAX}) {
        BOOST_CHECK_THROW(gpt2().decode(std::vector<int32_t>{id}, false), TokenizerError);
        BOOST_CHECK_THROW(gpt2().token_text(id), TokenizerError);
    }
    BOOST_TEST(!gpt2().is_eog(-1));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(streaming)

std::string stream_all(const Tokenizer& tok, const std::vector<int32_t>& ids, StreamDecoder::Options options,
                       std::vector<std::string>* pushed = nullptr) {
    StreamDecoder stream(tok, options);
    std::string out;
    for (int32_t id : ids) {
        std::string part = stream.push(id);
        if (pushed) pushed->push_back(part);
        out += part;
    }
    return out + stream.flush();
}

BOOST_AUTO_TEST_CASE(one_by_one_equals_decode) {
    auto texts = load_vectors("gpt-2").texts;
    for (const Tokenizer* tok : {&gpt2(), &llama2()}) {
        for (const auto& text : texts) {
            auto ids = tok->encode(text, true, false);
            std::vector<std::string> pushed;
            BOOST_TEST(stream_all(*tok, ids, {}, &pushed) == tok->decode(ids, false));
            for (const auto& part : pushed) BOOST_TEST(utf8::is_valid(part));  // the texts are valid UTF-8
        }
    }
}

BOOST_AUTO_TEST_CASE(characters_split_over_byte_tokens_come_out_whole) {
    // "🦙" is four <0xNN> tokens in Llama 2; "龘" is several byte-level tokens in GPT-2.
    for (auto [tok, text] : {std::pair{&llama2(), std::string("\xf0\x9f\xa6\x99")}, {&gpt2(), std::string("\xe9\xbe\x98")}}) {
        auto ids = tok->encode(text, false, false);
        BOOST_TEST(ids.size() > 1u);
        std::vector<std::string> pushed;
        BOOST_TEST(stream_all(*tok, ids, {}, &pushed) == text);
        for (size_t i = 0; i + 1 < pushed.size(); ++i) BOOST_TEST(pushed[i].empty());
        BOOST_TEST(pushed.back() == text);
    }
}

BOOST_AUTO_TEST_CASE(invalid_bytes_are_exact_or_replaced) {
    std::mt19937 rng(3);
    for (int round = 0; round < 200; ++round) {
        std::vector<int32_t> ids;  // byte tokens <0x00>..<0xFF> are ids 3..258 in Llama 2
        for (size_t n = rng() % 12; n > 0; --n) ids.push_back(3 + static_cast<int32_t>(rng() % 256));
        std::string exact = llama2().decode(ids, false);
        BOOST_TEST(stream_all(llama2(), ids, {}) == exact);
        std::vector<std::string> pushed;
        BOOST_TEST(stream_all(llama2(), ids, {false, true, true}, &pushed) == utf8::replace_invalid(exact));
        for (const auto& part : pushed) BOOST_TEST(utf8::is_valid(part));
    }
}

BOOST_AUTO_TEST_CASE(flush_returns_an_unfinished_sequence) {
    StreamDecoder stream(llama2(), {false, true, true});
    BOOST_TEST(stream.push(3 + 0xE4) == "");
    BOOST_TEST(stream.push(3 + 0xB8) == "");
    BOOST_TEST(stream.flush() == "\xef\xbf\xbd");
    BOOST_TEST(stream.flush() == "");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(importer)

BOOST_AUTO_TEST_CASE(sentencepiece_model_and_llama2c_bin_agree, *test::shared("data/models/stories260K/tok512.bin")) {
    TokenizerSpec a = import_spec({data("stories260K/tok512.model").string()});
    TokenizerSpec b = import_spec({shared("data/models/stories260K/tok512.bin").string()});
    BOOST_TEST(a.tokens == b.tokens);
    BOOST_TEST(a.scores == b.scores);
    BOOST_TEST(a.types == b.types);
    BOOST_TEST(a.special_ids == b.special_ids);
}

BOOST_AUTO_TEST_CASE(padding_up_to_a_vocabulary_size) {
    TokenizerSpec spec = import_spec({data("stories260K/tok512.model").string()}, "", 520);
    BOOST_TEST(spec.tokens.size() == 520u);
    BOOST_TEST(spec.tokens[519] == "[PAD519]");
    BOOST_TEST(spec.types[519] == int32_t(TokenType::Unused));
    BOOST_CHECK_THROW(import_spec({data("stories260K/tok512.model").string()}, "", 100), tool::ImportError);
}

BOOST_AUTO_TEST_CASE(bad_sources_are_named) {
    auto fails_with = [](std::vector<std::string> sources, const std::string& pre, const std::string& needle) {
        try {
            import_spec(std::move(sources), pre);
        } catch (const tool::ImportError& e) {
            BOOST_TEST_CONTEXT(e.what()) { BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos); }
            return;
        }
        BOOST_FAIL("expected an ImportError mentioning " << needle);
    };
    auto dir = std::filesystem::temp_directory_path() / ("strata-tok-import-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    auto write = [&](const std::string& name, const std::string& content) {
        std::ofstream(dir / name, std::ios::binary) << content;
        return (dir / name).string();
    };
    fails_with({(dir / "missing.model").string()}, "", "no such file");
    fails_with({data("gpt2").string()}, "", "--pre");
    fails_with({data("gpt2").string()}, "no-such-family", "no-such-family");
    fails_with({data("gpt2/vocab.json").string()}, "gpt-2", "merges");
    fails_with({write("bad.tiktoken", "YQ== 0\nYg== 2\n")}, "gpt-2", "rank 1");
    fails_with({write("tokenizer.json", "{\"model\": {\"type\": \"Unigram\"}}")}, "", "Unigram");
    fails_with({write("tokenizer.json", "{not json")}, "", "JSON");
    std::string model = read_all(data("stories260K/tok512.model"));
    fails_with({write("cut.model", model.substr(0, model.size() / 2))}, "", "past the end");
    fails_with({write("short.bin", std::string("\x09\0\0\0\0\0\0\0\x50\0\0\0", 12))}, "", "tokenizer.bin");
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(megabyte_inputs) {
    std::mt19937 rng(11);
    std::string words;
    while (words.size() < (1u << 20)) words += "The quick brown fox jumps over the lazy dog, \xe4\xb8\xad\xe6\x96\x87 42! ";
    for (const std::string& text :
         {words, random_bytes(rng, 1 << 20), std::string(1 << 20, 'a'), std::string(1 << 20, ' '), std::string(1 << 20, '\0')}) {
        for (const Tokenizer* tok : {&gpt2(), &llama2()}) {
            auto ids = tok->encode(text, false, false);
            BOOST_TEST(!ids.empty());
            BOOST_TEST((tok->decode(ids, false) == text));
        }
    }
}

// A minimal vocabulary with one key changed, for the broken-metadata cases.
std::vector<uint8_t> vocab_with(const std::function<void(gguf::Writer&)>& change, bool bpe = false) {
    gguf::Writer w;
    w.set_string("tokenizer.ggml.model", bpe ? "gpt2" : "llama");
    w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "b", "ab"});
    w.set_f32s("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -3});
    w.set_i32s("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1});
    w.set_bool("tokenizer.ggml.add_space_prefix", false);
    if (bpe) {
        w.set_string("tokenizer.ggml.pre", "gpt-2");
        w.set_strings("tokenizer.ggml.merges", {"a b"});
    }
    change(w);
    return w.bytes();
}

void rejected(const std::vector<uint8_t>& bytes, const std::string& needle) {
    try {
        from_bytes(bytes);
    } catch (const TokenizerError& e) {
        BOOST_TEST_CONTEXT(e.what()) { BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos); }
        return;
    }
    BOOST_FAIL("expected a TokenizerError mentioning " << needle);
}

// Harmony vocabularies (gpt-oss): a reply ends at <|return|> or <|call|>, not at the <|end|> that
// closes each message (its analysis channel included), as llama.cpp decides it.
BOOST_AUTO_TEST_CASE(harmony_ends_at_return_and_call_not_end) {
    auto harmony = from_bytes(vocab_with([](gguf::Writer& w) {
        w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "<|end|>", "<|return|>", "<|call|>"});
    }));
    BOOST_TEST(!harmony->is_eog(3));
    BOOST_TEST(harmony->is_eog(4));
    BOOST_TEST(harmony->is_eog(5));
    BOOST_TEST(harmony->is_eog(2));
    auto phi = from_bytes(vocab_with([](gguf::Writer& w) {
        w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "<|end|>", "a", "b"});
    }));
    BOOST_TEST(phi->is_eog(3));  // without <|return|> and <|call|>, <|end|> ends the reply
}

BOOST_AUTO_TEST_CASE(broken_metadata_is_named) {
    BOOST_TEST(from_bytes(vocab_with([](gguf::Writer&) {}))->encode("ab", false, false) == std::vector<int32_t>{5});
    BOOST_TEST(from_bytes(vocab_with([](gguf::Writer&) {}, true))->encode("ab", false, false) == std::vector<int32_t>{5});
    rejected(vocab_with([](gguf::Writer& w) { w.remove("tokenizer.ggml.model"); }), "tokenizer.ggml.model");
    rejected(vocab_with([](gguf::Writer& w) { w.set_string("tokenizer.ggml.model", "t5"); }), "unsupported");
    rejected(vocab_with([](gguf::Writer& w) { w.set_string("tokenizer.ggml.model", "bert"); }), "no BOS token");
    rejected(vocab_with([](gguf::Writer& w) {
                 w.set_string("tokenizer.ggml.model", "bert");
                 w.set_u32("tokenizer.ggml.cls_token_id", 1);
             }),
             "tokenizer.ggml.seperator_token_id");
    rejected(vocab_with([](gguf::Writer& w) {
                 w.set_string("tokenizer.ggml.model", "bert");
                 w.set_u32("tokenizer.ggml.cls_token_id", 1);
                 w.set_u32("tokenizer.ggml.seperator_token_id", 2);
             }),
             "tokenizer.ggml.unknown_token_id");
    rejected(vocab_with([](gguf::Writer& w) { w.remove("tokenizer.ggml.tokens"); }), "tokenizer.ggml.tokens");
    rejected(vocab_with([](gguf::Writer& w) { w.set_f32s("tokenizer.ggml.tokens", {1, 2}); }), "tokenizer.ggml.tokens");
    rejected(vocab_with([](gguf::Writer& w) { w.set_strings("tokenizer.ggml.tokens", {}); }), "empty");
    rejected(vocab_with([](gguf::Writer& w) { w.set_f32s("tokenizer.ggml.scores", {0, 0, 0}); }), "tokenizer.ggml.scores");
    rejected(vocab_with([](gguf::Writer& w) { w.remove("tokenizer.ggml.scores"); }), "tokenizer.ggml.scores");
    rejected(vocab_with([](gguf::Writer& w) { w.set_i32s("tokenizer.ggml.token_type", {1}); }), "tokenizer.ggml.token_type");
    rejected(vocab_with([](gguf::Writer& w) { w.set_i32s("tokenizer.ggml.token_type", {2, 3, 3, 9, 1, 1}); }), "type 9");
    rejected(vocab_with([](gguf::Writer& w) { w.set_i32s("tokenizer.ggml.token_type", {2, 3, 3, 6, 1, 1}); }), "<0xNN>");
    rejected(vocab_with([](gguf::Writer& w) { w.remove("tokenizer.ggml.merges"); }, true), "tokenizer.ggml.merges");
    rejected(vocab_with([](gguf::Writer& w) { w.set_strings("tokenizer.ggml.merges", {"ab"}); }, true), "merge 0");
    rejected(vocab_with([](gguf::Writer& w) { w.set_string("tokenizer.ggml.pre", "nonesuch"); }, true), "nonesuch");
    rejected(vocab_with([](gguf::Writer& w) { w.set_u32("tokenizer.ggml.bos_token_id", 6); }), "tokenizer.ggml.bos_token_id");
    rejected(vocab_with([](gguf::Writer& w) { w.set_i32("tokenizer.ggml.eos_token_id", -5); }), "tokenizer.ggml.eos_token_id");
    rejected(vocab_with([](gguf::Writer& w) { w.set_string("tokenizer.ggml.eos_token_id", "2"); }), "tokenizer.ggml.eos_token_id");
    rejected(vocab_with([](gguf::Writer& w) { w.set_bool("tokenizer.ggml.add_bos_token", true); }, true), "add_bos_token");
    rejected(vocab_with([](gguf::Writer& w) { w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "a", "ab"}); }),
             "same text");
    // -1 / 0xFFFFFFFF mean "none", as llama.cpp's converters write them.
    BOOST_TEST(from_bytes(vocab_with([](gguf::Writer& w) { w.set_u32("tokenizer.ggml.padding_token_id", 0xFFFFFFFFu); }))->n_vocab() == 6);
}

BOOST_AUTO_TEST_CASE(unrepresentable_bytes) {
    // No <0xNN> tokens and no unknown token: a byte outside the pieces cannot be written.
    auto tok = from_bytes(vocab_with([](gguf::Writer& w) { w.set_i32("tokenizer.ggml.unknown_token_id", -1); }));
    BOOST_TEST(tok->encode("ab", false, false) == std::vector<int32_t>{5});
    BOOST_CHECK_EXCEPTION(tok->encode("abc", false, false), TokenizerError, [](const TokenizerError& e) {
        return std::string(e.what()).find("0x63") != std::string::npos;
    });
    // With an unknown token, it stands in for the bytes.
    auto with_unk = from_bytes(vocab_with([](gguf::Writer&) {}));
    BOOST_TEST(with_unk->encode("abc", false, false) == (std::vector<int32_t>{5, 0}));
}

BOOST_AUTO_TEST_SUITE_END()
