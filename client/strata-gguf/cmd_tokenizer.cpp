// client/strata-gguf/cmd_tokenizer.cpp — `strata-gguf tokenizer OUT --from PATH`: writes
// a GGUF tokenizer section read from Hugging Face / SentencePiece / tiktoken / llama2.c
// files, as a vocabulary-only file or, with --into, into a copy of a model file.
#include <cstdio>

#include "args.h"
#include "commands.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "import_tokenizer.h"
#include "model_io.h"
#include "tokenizer/tokenizer.h"

namespace strata::tool {
namespace {

void print_summary(const std::string& path) {
    auto file = gguf::File::open(path);
    auto tok = tokenizer::Tokenizer::from_gguf(*file);
    std::printf("%s: %s tokenizer", path.c_str(), std::string(tok->model()).c_str());
    if (!tok->pre().empty()) std::printf(" (pre-tokenizer %s)", std::string(tok->pre()).c_str());
    std::printf(", %d tokens, BOS %d, EOS %d, add BOS %s, add EOS %s\n", tok->n_vocab(), tok->bos(), tok->eos(),
                tok->add_bos() ? "yes" : "no", tok->add_eos() ? "yes" : "no");
}

}  // namespace

int cmd_tokenizer(const Argv& argv) {
    Args args(argv, {"from", "pre", "into", "vocab-size", "name"}, {});
    const std::string& out = args.pos(0, "OUT");
    auto from = args.get("from");
    if (!from) throw UsageError("missing --from (a directory or tokenizer file)");
    ImportOptions options;
    options.sources.push_back(*from);
    options.sources.insert(options.sources.end(), args.positional().begin() + 1, args.positional().end());
    options.pre = args.get_or("pre", "");
    options.vocab_size = args.get_int("vocab-size", 0, 0, INT32_MAX);

    std::shared_ptr<const gguf::File> model;
    if (auto into = args.get("into")) model = gguf::File::open(*into);
    gguf::Writer w(model ? model->alignment() : gguf::kDefaultAlignment);
    if (model) {
        int64_t rows = copy_model(*model, w, [](std::string_view key) { return key.rfind("tokenizer.", 0) != 0; });
        if (!options.vocab_size) options.vocab_size = rows;
    }
    TokenizerSpec spec = import_tokenizer(options);
    write_tokenizer(spec, w);
    if (auto name = args.get("name")) w.set_string("general.name", *name);
    w.write(out);
    print_summary(out);
    return 0;
}

}  // namespace strata::tool
