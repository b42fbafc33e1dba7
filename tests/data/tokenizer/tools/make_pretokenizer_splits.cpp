// tests/data/tokenizer/tools/make_pretokenizer_splits.cpp — writes ../pretokenizer-splits.txt,
// the reference word splits of every pre-tokenizer family, as computed by llama.cpp's own
// unicode_regex_split() (exported by libllama) on the test texts. Not part of the build: it
// links against the llama.cpp peer harness (../shared/tools/peer), e.g.
//   L=~/.cache/strata-peer/lib
//   g++ -std=c++17 -O1 make_pretokenizer_splits.cpp -o /tmp/splits -L$L -l:libllama.v0.5.0.so \
//       -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,$L
//   /tmp/splits ../vectors/llama-spm.inp ../pretokenizer-extra.inp > ../pretokenizer-splits.txt
// The regex lists are llama.cpp's, verbatim (llama-vocab.cpp, llm_tokenizer_bpe).
// Output: one line per (family, text): "family<TAB>file:index<TAB>byte lengths of the words".
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

std::vector<std::string> unicode_regex_split(const std::string& text, const std::vector<std::string>& regex_exprs,
                                             bool byte_encode);

static std::vector<std::string> read_cases(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string all = ss.str(), sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> cases;
    for (size_t pos = 0, next; (next = all.find(sep, pos)) != std::string::npos; pos = next + sep.size())
        cases.push_back(all.substr(pos, next - pos));
    return cases;
}

int main(int argc, char** argv) {
    const std::string gpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
    const std::string llama3 =
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    const std::string qwen2 =
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    const std::string cjk = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+";
    const std::string poro = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+";
    const std::string deepseek_letters =
        "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
        "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f"
        "\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
        "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d"
        "\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4"
        "\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
        "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d"
        "\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a"
        "\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
        "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+";
    const std::vector<std::pair<std::string, std::vector<std::string>>> families = {
        {"default", {"[\\p{P}\\$\\+<=>\\^~\\|]+", gpt2, "\\p{N}+", "[0-9][0-9][0-9]"}},
        {"llama-bpe", {llama3}},
        {"qwen2", {qwen2}},
        {"deepseek-r1-qwen", {qwen2}},
        {"gpt-2", {gpt2}},
        {"mpt", {gpt2}},
        {"deepseek-llm",
         {"[\r\n]", deepseek_letters, "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+", "\\s+$", cjk,
          "\\p{N}+"}},
        {"deepseek-coder", {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", cjk, "\\p{N}"}},
        {"falcon", {"[\\p{P}\\$\\+<=>\\^~\\|`]+", gpt2, "[0-9][0-9][0-9]"}},
        {"starcoder", {"\\p{N}", gpt2}},
        {"refact", {"\\p{N}", gpt2}},
        {"command-r", {"\\p{N}", gpt2}},
        {"poro-chat", {poro}},
        {"viking", {poro, "\\p{N}"}},
        {"chameleon",
         {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
          "[\\p{P}!-/:-@\\[-`{-~]", gpt2}},
        {"tekken",
         {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-"
          "z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {"gpt-4o",  // o200k (gpt-oss, GPT-4o, Llama 4)
         {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'["
          "lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'["
          "vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    };
    for (const auto& [family, regexes] : families) {
        for (int f = 1; f < argc; ++f) {
            std::string name = argv[f];
            name = name.substr(name.find_last_of('/') + 1);
            auto cases = read_cases(argv[f]);
            for (size_t i = 0; i < cases.size(); ++i) {
                std::cout << family << '\t' << name << ':' << i << '\t';
                bool first = true;
                for (const auto& word : unicode_regex_split(cases[i], regexes, false)) {
                    if (word.empty()) continue;
                    std::cout << (first ? "" : " ") << word.size();
                    first = false;
                }
                std::cout << '\n';
            }
        }
    }
}
