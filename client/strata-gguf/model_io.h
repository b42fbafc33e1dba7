// client/strata-gguf/model_io.h — what the model subcommands share: loading a model with the
// --threads option, reading token ids from --tokens or a file, copying a model file.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "gguf/writer.h"
#include "model/model.h"

namespace strata::tool {

// Loads FILE with --threads N (default: physical cores).
std::unique_ptr<model::Model> load_model(const std::string& path, const Args& args);
// Token ids from --tokens "1 2 3" or --tokens-file PATH (whitespace-separated).
std::vector<int32_t> read_tokens(const Args& args);
// Copies every tensor of `model` and the metadata keys for which keep(key) holds into `w`;
// returns the vocabulary size (embedding rows, 0 when unknown).
int64_t copy_model(const gguf::File& model, gguf::Writer& w, const std::function<bool(std::string_view)>& keep);
// Index of the largest value, the lowest index on ties.
int32_t argmax(const float* v, int32_t n);

}  // namespace strata::tool
