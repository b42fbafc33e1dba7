// client/strata-gguf/commands.h — the subcommands of strata-gguf; each lives in its own
// cmd_*.cpp, takes the arguments after its name and returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace strata::tool {

using Argv = std::vector<std::string>;

int cmd_info(const Argv& args);
int cmd_logits(const Argv& args);
int cmd_generate(const Argv& args);
int cmd_convert(const Argv& args);
int cmd_synth(const Argv& args);
int cmd_tokenize(const Argv& args);
int cmd_detokenize(const Argv& args);
int cmd_tokenizer(const Argv& args);
int cmd_quantize(const Argv& args);
int cmd_template(const Argv& args);

}  // namespace strata::tool
