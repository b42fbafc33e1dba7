// client/strata-gguf/model_io.h — what the model-running subcommands share: loading a
// model with the --threads option, and reading token ids from --tokens or a file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "model/model.h"

namespace strata::tool {

// Loads FILE with --threads N (default: physical cores).
std::unique_ptr<model::Model> load_model(const std::string& path, const Args& args);
// Token ids from --tokens "1 2 3" or --tokens-file PATH (whitespace-separated).
std::vector<int32_t> read_tokens(const Args& args);
// Index of the largest value, the lowest index on ties.
int32_t argmax(const float* v, int32_t n);

}  // namespace strata::tool
