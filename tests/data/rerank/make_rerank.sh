#!/bin/sh
# make_rerank.sh - regenerate tests/data/rerank: bert-rank-f16.gguf, a tiny random-weight BERT cross-encoder
# (../embed/synth_bert.py --pooling rank: the embed models' shapes plus the classification head cls.{weight,bias},
# cls.output.{weight,bias}), and scores.json, llama.cpp's relevance scores of one query against four documents:
# each pair laid out as llama-server's /rerank lays it out for a WordPiece vocabulary ([CLS] query [SEP] document:
# llama.cpp's ids of the query with its [CLS]/[SEP], then of the document without them), evaluated by
# ../../peer/peer-embed.cpp with --pooling rank (llama_get_embeddings_seq: the [CLS] state through the head, the
# first of llama_model_n_cls_out values, which is what /rerank reports). Deterministic. Needs the llama.cpp peer
# harness (PEER_DIR, default ~/.cache/strata-peer; PEER_SRC its headers) and numpy.
set -eu
cd "$(dirname "$0")"
PEER_SRC=${PEER_SRC:-../../../../shared/tools/peer/src}
PEER_DIR=${PEER_DIR:-$HOME/.cache/strata-peer}
PY=${PY:-/usr/bin/python3}
export PEER_LIB_DIR=$PEER_DIR/lib
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++17 -Wall -Wno-unused-function -I"$PEER_SRC" ../../peer/peer-embed.cpp -o "$tmp/peer-embed" \
  -L"$PEER_DIR/lib" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,"$PEER_DIR/lib"
PEER="$(dirname "$PEER_SRC")" $PY ../embed/synth_bert.py --pooling rank --seed 33 --name rerank-bert -o bert-rank-f16.gguf > /dev/null
QUERY="the cat sat on the mat"
: > "$tmp/cases"
for doc in "a cat is on the mat" "the dog played in the world" "hello world" "small red model tokenize"; do
  q=$("$PEER_DIR/bin/peer-tokenize" bert-rank-f16.gguf "$QUERY" 2>/dev/null | tail -1)
  d=$("$PEER_DIR/bin/peer-tokenize" bert-rank-f16.gguf "$doc" 2>/dev/null | tail -1)
  echo "$q $(echo "$d" | awk '{ for (i = 2; i < NF; i++) printf "%s ", $i }')" > "$tmp/pair"
  "$tmp/peer-embed" bert-rank-f16.gguf "$tmp/pair" "$tmp/score.f32" --pooling rank --threads 1 > /dev/null 2> "$tmp/err" ||
    { cat "$tmp/err" >&2; exit 1; }
  D="$doc" P="$(cat "$tmp/pair")" S="$tmp/score.f32" $PY -c 'import json, os, struct
raw = open(os.environ["S"], "rb").read()
print(json.dumps({"document": os.environ["D"], "tokens": [int(x) for x in os.environ["P"].split()],
                  "scores": list(struct.unpack("<%df" % (len(raw) // 4), raw))}))' >> "$tmp/cases"
done
Q="$QUERY" C="$tmp/cases" O=scores.json $PY -c 'import json, os
cases = [json.loads(line) for line in open(os.environ["C"])]
json.dump({"query": os.environ["Q"], "cases": cases}, open(os.environ["O"], "w"), indent=1)'
# ---- Qwen3-Reranker (synth_qwen3_rerank.py): the rerank template with {query} and {document} replaced, tokenized
# by llama.cpp without BOS and with special tokens parsed (as llama-server does), the last token's state through
# cls.output and a softmax: [P(yes), P(no)]
PEER="$(dirname "$PEER_SRC")" $PY synth_qwen3_rerank.py --arch qwen3 --vocab-size 512 --n-embd 64 --n-layer 2 --n-ff 128 \
  --n-head 4 --n-head-kv 2 --ctx 256 --seed 34 --name rerank-qwen3 -o qwen3-rank-f16.gguf > /dev/null
: > "$tmp/cases"
for doc in "a cat is on the mat" "the dog played in the world" "hello world" "small red model tokenize"; do
  prompt=$(printf 'Judge whether the Document answers the Query.\nQuery: %s\nDocument: %s\nAnswer:' "$QUERY" "$doc")
  "$PEER_DIR/bin/peer-tokenize" qwen3-rank-f16.gguf "$prompt" --no-special --parse-special 2>/dev/null | tail -1 > "$tmp/pair"
  "$tmp/peer-embed" qwen3-rank-f16.gguf "$tmp/pair" "$tmp/score.f32" --pooling rank --threads 1 > /dev/null 2> "$tmp/err" ||
    { cat "$tmp/err" >&2; exit 1; }
  D="$doc" P="$(cat "$tmp/pair")" S="$tmp/score.f32" $PY -c 'import json, os, struct
raw = open(os.environ["S"], "rb").read()
print(json.dumps({"document": os.environ["D"], "tokens": [int(x) for x in os.environ["P"].split()],
                  "scores": list(struct.unpack("<%df" % (len(raw) // 4), raw))}))' >> "$tmp/cases"
done
Q="$QUERY" C="$tmp/cases" O=qwen3-scores.json $PY -c 'import json, os
cases = [json.loads(line) for line in open(os.environ["C"])]
json.dump({"query": os.environ["Q"], "cases": cases}, open(os.environ["O"], "w"), indent=1)'
echo done
