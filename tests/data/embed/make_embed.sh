#!/bin/sh
# make_embed.sh - regenerate tests/data/embed/{vectors,manifest.json}: llama.cpp's pooled, L2-normalised
# embeddings (tests/peer/peer-embed.cpp: llama_get_embeddings_seq with embeddings on, one batch, 1 thread,
# flash attention off, F16 KV cache) of decoder models already in tests/data (archs/ and golden/), with the
# pooling forced per case (their files name none), and of the small bert models written here by
# synth_bert.py (pooling from the file). Deterministic. Needs the llama.cpp peer harness
# (PEER_DIR, default ~/.cache/strata-peer: its lib/ and the headers of ../../../../shared/tools/peer/src)
# and numpy.
set -eu
cd "$(dirname "$0")"
PEER_SRC=${PEER_SRC:-../../../../shared/tools/peer/src}
PEER_DIR=${PEER_DIR:-$HOME/.cache/strata-peer}
PY=${PY:-/usr/bin/python3}
export PEER_LIB_DIR=$PEER_DIR/lib
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++17 -Wall -Wno-unused-function -I"$PEER_SRC" ../../peer/peer-embed.cpp -o "$tmp/peer-embed" \
  -L"$PEER_DIR/lib" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,"$PEER_DIR/lib"
mkdir -p vectors
# name model tokens pooling
CASES="qwen3-f16.mean.seven ../archs/models/qwen3-f16.gguf ../archs/seven.tokens.txt mean
qwen3-f16.mean.long ../archs/models/qwen3-f16.gguf ../archs/long.tokens.txt mean
qwen3-f16.last.long ../archs/models/qwen3-f16.gguf ../archs/long.tokens.txt last
qwen3-f16.cls.long ../archs/models/qwen3-f16.gguf ../archs/long.tokens.txt cls
qwen3-q4_k_m.mean.long ../archs/models/qwen3-q4_k_m.gguf ../archs/long.tokens.txt mean
gemma2-f16.mean.long ../archs/models/gemma2-f16.gguf ../archs/long.tokens.txt mean
llama-f16.last.seven ../golden/models/llama-f16.gguf ../golden/seven.tokens.txt last
llama-f16.mean.long ../golden/models/llama-f16.gguf ../golden/long.tokens.txt mean"
echo "$CASES" | while read name model tokens pooling; do
  "$tmp/peer-embed" "$model" "$tokens" "vectors/$name.f32" --pooling "$pooling" --threads 1 > /dev/null
done
echo "$CASES" > cases.txt
$PY - <<'PY'
import json
cases = []
for line in open("cases.txt"):
    name, model, tokens, pooling = line.split()
    weights = "Q4_K_M" if "q4_k_m" in model else "F16"
    cases.append({"name": name, "model": model, "pooling": pooling, "weights": weights,
                  "tokens": [int(x) for x in open(tokens).read().split()],
                  "embedding": "vectors/%s.f32" % name,
                  "tolerance": {"min_cosine": 0.9999,
                                "max_abs": 1e-3 if weights == "F16" else 5e-3}})
json.dump({"format": "raw float32 little-endian [n_embd], L2-normalised", "cases": cases}, open("manifest.json", "w"), indent=1)
PY
rm cases.txt
echo done
