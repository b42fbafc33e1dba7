#!/bin/sh
# make_embed.sh - regenerate tests/data/embed/{vectors,manifest.json}: llama.cpp's pooled, L2-normalised
# embeddings (tests/peer/peer-embed.cpp: llama_get_embeddings_seq with embeddings on, one batch, 1 thread,
# flash attention off, F16 KV cache) of decoder models already in tests/data (archs/ and golden/), with the
# pooling forced per case (their files name none), and of the small bert models written here by
# synth_bert.py (pooling from the file). Deterministic. Needs the llama.cpp peer harness
# (PEER_DIR, default ~/.cache/strata-peer: its lib/ and the headers of ../../../../shared/tools/peer/src)
# and numpy. synth_bert.py writes the bert models into models/ (about 180 KB each).
set -eu
cd "$(dirname "$0")"
PEER_SRC=${PEER_SRC:-../../../../shared/tools/peer/src}
PEER_DIR=${PEER_DIR:-$HOME/.cache/strata-peer}
PY=${PY:-/usr/bin/python3}
export PEER_LIB_DIR=$PEER_DIR/lib
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++17 -Wall -Wno-unused-function -I"$PEER_SRC" ../../peer/peer-embed.cpp -o "$tmp/peer-embed" \
  -L"$PEER_DIR/lib" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,"$PEER_DIR/lib"
mkdir -p vectors models
# ---- BERT encoders (synth_bert.py): n_embd 64, 2 heads, n_ff 128, 2 layers, context 128, WordPiece vocabulary of 160;
# pooling from the file (mean: all-MiniLM-L6-v2 style, cls: bge-small style); token ids from llama.cpp's tokenizer
$PY synth_bert.py --pooling mean --seed 31 --name embed-bert-mean -o models/bert-mean-f16.gguf > /dev/null
$PY synth_bert.py --pooling cls --seed 32 --name embed-bert-cls -o models/bert-cls-f16.gguf > /dev/null
TEXT="Hello, the cat's playing! Émbedding tokenize123 a.b"
LONG_TEXT="The small red dog sat on the mat and played with a big cat; words, pieces and tokens are embedded in the model. \
Hello world! Running, playing, embedding: the cat is able to run on the mat. Naïve café? Unknownword zzz."
"$PEER_DIR/bin/peer-tokenize" models/bert-mean-f16.gguf "$TEXT" 2>/dev/null | tail -1 > "$tmp/short.tokens"
"$PEER_DIR/bin/peer-tokenize" models/bert-mean-f16.gguf "$LONG_TEXT" 2>/dev/null | tail -1 > "$tmp/long.tokens"
# WordPiece test vectors: llama.cpp's ids (add_special) of texts exercising the splitting rules, one JSON
# object a line ({"text","ids"}) for tests/unit/tokenizer_test.cpp
: > wpm.vectors.jsonl
for t in "$TEXT" "  the   cats  sat   " "EMBEDDING tokenize123 a.b" "中文 naïve café" "ÆØÅ æøå Łódź ĳ İstanbul" \
         "tab	new
line x" "a—b…c «d» ¿e? x×y÷z" "unknownword the" "" "the#cat@dog~" "ÀÉÎÕÜ ñ Ç ß"; do
  ids=$("$PEER_DIR/bin/peer-tokenize" models/bert-mean-f16.gguf "$t" 2>/dev/null | tail -1)
  T="$t" IDS="$ids" $PY -c 'import json, os; print(json.dumps({"text": os.environ["T"], "ids": [int(x) for x in os.environ["IDS"].split()]}, ensure_ascii=False))' >> wpm.vectors.jsonl
done
printf '%s' "$TEXT" > "$tmp/short.text"
printf '%s' "$LONG_TEXT" > "$tmp/long.text"
# name model tokens pooling
CASES="qwen3-f16.mean.seven ../archs/models/qwen3-f16.gguf ../archs/seven.tokens.txt mean
qwen3-f16.mean.long ../archs/models/qwen3-f16.gguf ../archs/long.tokens.txt mean
qwen3-f16.last.long ../archs/models/qwen3-f16.gguf ../archs/long.tokens.txt last
qwen3-f16.cls.long ../archs/models/qwen3-f16.gguf ../archs/long.tokens.txt cls
qwen3-q4_k_m.mean.long ../archs/models/qwen3-q4_k_m.gguf ../archs/long.tokens.txt mean
gemma2-f16.mean.long ../archs/models/gemma2-f16.gguf ../archs/long.tokens.txt mean
llama-f16.last.seven ../golden/models/llama-f16.gguf ../golden/seven.tokens.txt last
llama-f16.mean.long ../golden/models/llama-f16.gguf ../golden/long.tokens.txt mean
bert-mean-f16.short models/bert-mean-f16.gguf $tmp/short.tokens model
bert-mean-f16.long models/bert-mean-f16.gguf $tmp/long.tokens model
bert-cls-f16.short models/bert-cls-f16.gguf $tmp/short.tokens model
bert-cls-f16.long models/bert-cls-f16.gguf $tmp/long.tokens model"
echo "$CASES" | while read name model tokens pooling; do
  "$tmp/peer-embed" "$model" "$tokens" "vectors/$name.f32" --pooling "$pooling" --threads 1 > /dev/null 2> "$tmp/err" ||
    { cat "$tmp/err" >&2; exit 1; }
done
echo "$CASES" > cases.txt
TMP=$tmp $PY - <<'PY'
import json
import os
cases = []
for line in open("cases.txt"):
    name, model, tokens, pooling = line.split()
    weights = "Q4_K_M" if "q4_k_m" in model else "F16"
    case = {"name": name, "model": model, "pooling": pooling, "weights": weights,
            "tokens": [int(x) for x in open(tokens).read().split()]}
    text = tokens[:-len(".tokens")] + ".text"
    if tokens.endswith(".tokens") and os.path.exists(text):
        case["text"] = open(text, encoding="utf-8").read()  # what the tokens are llama.cpp's tokenization of
    cases.append(case)
    case.update({"embedding": "vectors/%s.f32" % name,
                  "tolerance": {"min_cosine": 0.9999,
                                "max_abs": 1e-3 if weights == "F16" else 5e-3}})
json.dump({"format": "raw float32 little-endian [n_embd], L2-normalised", "cases": cases}, open("manifest.json", "w"), indent=1)
PY
rm cases.txt
echo done
