// tests/data/archs/tools/iq_quantize.cpp — llama.cpp's quantizer (llama_model_quantize) with any
// file type and an all-ones importance matrix for the tensors a list names ("name n_values" per
// line: each tensor's row length), through the typed imatrix API: llama.cpp refuses the
// IQ1/IQ2 types without an importance matrix, and a random model has no data to make one from.
// Not part of the build: make_archs.sh builds it against the llama.cpp peer harness, e.g.
//   L=~/.cache/strata-peer/lib
//   g++ -std=c++17 -O1 -I../shared/tools/peer/src iq_quantize.cpp -o $L/../bin/iq_quantize -L$L \
//       -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,$L
//   $L/../bin/iq_quantize IN.gguf OUT.gguf FTYPE LIST   (beside the harness, whose backends it loads;
//                                                    FTYPE: llama_ftype, e.g. 19 = IQ2_XXS)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "peer_common.h"

// llama.cpp's imatrix entry (llama_model_imatrix_data in its llama.h of v0.5.0).
struct ImatrixEntry {
    const char* name;
    const float* data;
    size_t size;
};

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s IN.gguf OUT.gguf FTYPE LIST\n", argv[0]);
        return 2;
    }
    peer::init(2);
    std::ifstream in(argv[4]);
    std::vector<std::string> names;
    std::vector<std::vector<float>> ones;
    std::string name;
    size_t n = 0;
    while (in >> name >> n) {
        names.push_back(name);
        ones.emplace_back(n, 1.0f);
    }
    std::vector<ImatrixEntry> entries;
    for (size_t i = 0; i < names.size(); ++i) entries.push_back({names[i].c_str(), ones[i].data(), ones[i].size()});
    entries.push_back({nullptr, nullptr, 0});
    llama_model_quantize_params qp = llama_model_quantize_default_params();
    qp.nthread = 1;
    qp.ftype = static_cast<llama_ftype>(std::atoi(argv[3]));
    qp.imatrix = entries.data();
    return static_cast<int>(llama_model_quantize(argv[1], argv[2], &qp));
}
