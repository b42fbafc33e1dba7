// client/strata-gguf/main.cpp — strata-gguf: inspect, create, quantize and run GGUF model
// files. Dispatches to one subcommand; see strata-gguf(1).
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "args.h"
#include "commands.h"

namespace {

struct Command {
    const char* name;
    int (*run)(const strata::tool::Argv&);
    const char* usage;
};

constexpr Command kCommands[] = {
    {"info", strata::tool::cmd_info, "info FILE [--no-tensors] [--budget SIZE [--mode M] [--context N]]  metadata, tensors, sizes, memory plan"},
    {"logits", strata::tool::cmd_logits, "logits FILE --tokens IDS --out OUT.f32  float32 logits of every position"},
    {"generate", strata::tool::cmd_generate, "generate FILE (--tokens IDS | --prompt TEXT) -n N  greedy continuation"},
    {"synth", strata::tool::cmd_synth, "synth OUT [--preset tiny|1b|8b] [--type T] [--seed S] [shape options]  random-weight model"},
    {"convert", strata::tool::cmd_convert, "convert IN.bin OUT.gguf --tokenizer TOK.bin [--name N] [--ctx N]  llama2.c checkpoint to GGUF"},
    {"tokenize", strata::tool::cmd_tokenize, "tokenize FILE TEXT|- [--special] [--no-bos] [--pieces]  text to token ids"},
    {"detokenize", strata::tool::cmd_detokenize, "detokenize FILE IDS|- [--special]     token ids to text"},
    {"tokenizer", strata::tool::cmd_tokenizer,
     "tokenizer OUT --from PATH [FILE...] [--pre NAME] [--into MODEL] [--vocab-size N] [--name NAME]  import a tokenizer"},
    {"template", strata::tool::cmd_template,
     "template TEMPLATE.jinja|MODEL.gguf --messages MESSAGES.json [--add-generation-prompt] [--bos-token T] [--eos-token T] [--date \"26 Jul 2024\"]  render a chat template;\n"
     "  template TEMPLATE.jinja --into MODEL.gguf --out OUT.gguf  a copy of the model with that chat template"},
    {"quantize", strata::tool::cmd_quantize, "quantize IN OUT TYPE [--threads N] [--allow-requantize]  to Q4_K_M, Q8_0, ... (llama.cpp's mixes)"},
};

void usage(FILE* out) {
    std::fprintf(out, "usage: strata-gguf COMMAND [ARGS]\n\ncommands:\n");
    for (const auto& c : kCommands) std::fprintf(out, "  %s\n", c.usage);
    std::fprintf(out, "\nSee strata-gguf(1).\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    std::string_view name = argv[1];
    for (const auto& c : kCommands) {
        if (name != c.name) continue;
        strata::tool::Argv args(argv + 2, argv + argc);
        try {
            return c.run(args);
        } catch (const strata::tool::UsageError& e) {
            std::fprintf(stderr, "strata-gguf %s: %s\nusage: strata-gguf %s\n", c.name, e.what(), c.usage);
            return 2;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "strata-gguf %s: %s\n", c.name, e.what());
            return 1;
        }
    }
    std::fprintf(stderr, "strata-gguf: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
