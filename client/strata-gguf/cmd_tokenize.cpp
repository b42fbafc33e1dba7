// client/strata-gguf/cmd_tokenize.cpp — `strata-gguf tokenize FILE TEXT` and
// `strata-gguf detokenize FILE IDS`: the tokenizer of a GGUF file, from the shell.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "args.h"
#include "commands.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace strata::tool {
namespace {

// The argument itself, or all of stdin (byte for byte) when it is "-".
std::string text_or_stdin(const std::string& arg) {
    if (arg != "-") return arg;
    std::cin >> std::noskipws;
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

std::unique_ptr<tokenizer::Tokenizer> load(const std::string& path) {
    auto file = gguf::File::open(path);
    return tokenizer::Tokenizer::from_gguf(*file);
}

}  // namespace

int cmd_tokenize(const Argv& argv) {
    Args args(argv, {}, {"special", "no-bos", "pieces"});
    auto tok = load(args.pos(0, "FILE"));
    std::string text = text_or_stdin(args.pos(1, "TEXT"));
    auto ids = tok->encode(text, !args.flag("no-bos"), args.flag("special"));
    if (args.flag("pieces")) {
        for (int32_t id : ids) {
            std::string_view piece = tok->piece(id, true);
            std::printf("%d\t%.*s\n", id, static_cast<int>(piece.size()), piece.data());
        }
        return 0;
    }
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
    std::printf("\n");
    return 0;
}

int cmd_detokenize(const Argv& argv) {
    Args args(argv, {}, {"special"});
    auto tok = load(args.pos(0, "FILE"));
    auto ids = parse_ids(text_or_stdin(args.pos(1, "IDS")));
    std::string text = tok->decode(ids, args.flag("special"));
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

}  // namespace strata::tool
