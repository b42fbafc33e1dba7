// peer-embed MODEL.gguf TOKENS_FILE OUT.f32 [--pooling model|none|mean|cls|last|rank] [--threads N] [--warmup]
//                  [--fa on|off|auto]
// llama.cpp's pooled embedding of one sequence, for strata's embedding goldens
// (tests/data/embed/make_embed.sh). Evaluates the whitespace-separated token ids as one
// llama_decode batch with embeddings on (flash attention off unless --fa, F16 KV cache), takes
// llama_get_embeddings_seq (the hidden states after the output norm, pooled as asked;
// "model" keeps the file's pooling_type), L2-normalises it as llama-server does by default
// (common_embd_normalize with norm 2: the sum of squares in double) and writes n_embd float32
// little-endian values (a reranker's, pooling rank: its llama_model_n_cls_out scores as they
// are, not normalised, what llama-server's /rerank reports the first of); stderr gets the decode time (decode_s, for tests/bench/embed_bench.py;
// --warmup times a second decode, after one that warms caches and buffers up).
// Built against the peer harness of ../../../shared/tools/peer (see make_embed.sh); not part
// of strata's build.
#include "peer_common.h"

#include <cmath>

extern "C" float* llama_get_embeddings_seq(struct llama_context* ctx, llama_seq_id seq_id);
extern "C" uint32_t llama_model_n_cls_out(const struct llama_model* model);

static int pooling_of(const std::string& s) {
    if (s == "model") return LLAMA_POOLING_TYPE_UNSPECIFIED;
    if (s == "none") return LLAMA_POOLING_TYPE_NONE;
    if (s == "mean") return 1;
    if (s == "cls") return 2;
    if (s == "last") return 3;
    if (s == "rank") return 4;
    fprintf(stderr, "error: --pooling expects model|none|mean|cls|last|rank\n");
    exit(1);
}

int main(int argc, char** argv) {
    std::vector<std::string> pos;
    int threads = 1, pooling = LLAMA_POOLING_TYPE_UNSPECIFIED;
    bool warmup = false;
    std::string fa = "off";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) { fprintf(stderr, "missing value for %s\n", a.c_str()); exit(1); }
            return argv[++i];
        };
        if (a == "--threads") threads = std::stoi(next());
        else if (a == "--pooling") pooling = pooling_of(next());
        else if (a == "--warmup") warmup = true;
        else if (a == "--fa") fa = next();
        else pos.push_back(a);
    }
    if (pos.size() != 3) {
        fprintf(stderr, "usage: %s MODEL.gguf TOKENS_FILE OUT.f32 [--pooling model|none|mean|cls|last] [--threads N]\n", argv[0]);
        return 1;
    }
    std::vector<llama_token> toks;
    {
        std::ifstream f(pos[1]);
        long long t;
        while (f >> t) toks.push_back((llama_token)t);
    }
    if (toks.empty()) { fprintf(stderr, "error: no tokens in %s\n", pos[1].c_str()); return 1; }
    const int n = (int)toks.size();
    peer::init(0);
    llama_model* model = peer::load_model(pos[0]);
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)std::max(n, 16);
    cp.n_batch = cp.n_ubatch = (uint32_t)n;
    cp.n_seq_max = 1;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn_type = peer::parse_fa(fa);
    cp.type_k = cp.type_v = GGML_TYPE_F16;
    cp.embeddings = true;
    cp.pooling_type = (enum llama_pooling_type)pooling;
    cp.no_perf = true;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "error: failed to create context\n"); return 1; }
    llama_batch b = llama_batch_init(n, 0, 1);
    peer::batch_fill(b, toks.data(), n, 0, true);
    if (warmup) {
        if (llama_decode(ctx, b) != 0) { fprintf(stderr, "error: llama_decode failed\n"); return 1; }
        llama_memory_clear(llama_get_memory(ctx), true);
    }
    const double t0 = peer::now_s();
    if (llama_decode(ctx, b) != 0) { fprintf(stderr, "error: llama_decode failed\n"); return 1; }
    llama_synchronize(ctx);
    const double t1 = peer::now_s();
    const float* e = llama_get_embeddings_seq(ctx, 0);
    if (!e) { fprintf(stderr, "error: no pooled embedding (pooling none?)\n"); return 1; }
    const bool rank = pooling == 4;
    const int n_embd = rank ? (int)llama_model_n_cls_out(model) : llama_model_n_embd(model);
    double sum = 0;
    for (int i = 0; i < n_embd; i++) sum += (double)e[i] * e[i];
    const double scale = rank ? 1.0 : sum > 0 ? 1.0 / std::sqrt(sum) : 0.0;
    std::vector<float> out(n_embd);
    for (int i = 0; i < n_embd; i++) out[i] = (float)(e[i] * scale);
    FILE* f = fopen(pos[2].c_str(), "wb");
    if (!f || fwrite(out.data(), sizeof(float), n_embd, f) != (size_t)n_embd) { fprintf(stderr, "error: cannot write %s\n", pos[2].c_str()); return 1; }
    fclose(f);
    printf("%d\n", n_embd);
    fprintf(stderr, "n_tokens=%d n_embd=%d threads=%d decode_s=%.4f\n", n, n_embd, threads, t1 - t0);
    llama_batch_free(b);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
