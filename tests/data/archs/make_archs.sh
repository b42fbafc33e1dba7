#!/bin/sh
# make_archs.sh - regenerate tests/data/archs/{models,logits,*.tokens.txt}: one tiny random-weight model per
# architecture family (synth_arch.py from the llama.cpp peer harness), an F16 file and a quantized one
# (peer-quantize q4_k_m: 64-wide rows make llama.cpp fall back from K-quants to Q5_0/Q8_0, see README.md),
# and llama.cpp's logits for a short and a long token sequence (one llama_decode batch, 1 thread, flash
# attention off, F16 KV cache). Deterministic. Needs PEER (default ../../../../shared/tools/peer) and numpy.
set -eu
cd "$(dirname "$0")"
PEER=${PEER:-../../../../shared/tools/peer}
BIN=${BIN:-$HOME/.cache/strata-peer/bin}
PY=${PY:-/usr/bin/python3}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-$HOME/.cache/strata-peer/lib}

# ---- token sequences (vocab 320): 7 tokens (shorter than the windows and LongRoPE's original context), 64 longer
echo 1 17 200 33 91 145 7 > seven.tokens.txt
$PY -c "import numpy as np; r=np.random.default_rng(20261125); print(' '.join(map(str,[1]+list(r.integers(3,320,63)))))" > long.tokens.txt
# 160 tokens for the recurrent families: more than two of llama.cpp's 64-token DeltaNet chunks (and LFM2's)
$PY -c "import numpy as np; r=np.random.default_rng(20261204); print(' '.join(map(str,[1]+list(r.integers(3,320,159)))))" > chunks.tokens.txt

# ---- models: n_embd 64, 2 heads of 32 (1 kv head), n_ff 128, vocab 320, weights N(0, 0.05)
S="--n-embd 64 --n-head 2 --n-head-kv 1 --n-ff 128 --vocab-size 320 --std 0.05 --ctx 4096"
mkdir -p models logits
synth() { name=$1; shift; $PY $PEER/synth_arch.py $S --dtype f16 --name archs-$name "$@" -o models/$name-f16.gguf > /dev/null; }
synth qwen3 --arch qwen3 --n-layer 2 --seed 11
synth gemma2 --arch gemma2 --n-layer 2 --window 8 --seed 12
synth gemma3 --arch gemma3 --n-layer 6 --window 8 --rope-base 1000000 --rope-scale 8 --seed 13
synth phi3 --arch phi3 --n-layer 2 --n-rot 16 --longrope 32 --seed 14          # context (padded to 256) > 32: long factors
synth phi3-short --arch phi3 --n-layer 2 --n-rot 16 --longrope 2048 --seed 18  # 256 <= 2048: short factors
synth llama-linear --arch llama --n-layer 2 --rope-scale 4 --rope-scaling linear --seed 15
synth llama-yarn --arch llama --n-layer 2 --rope-scale 4 --rope-scaling yarn --rope-orig-ctx 32 --seed 16
synth granite --arch granite --n-layer 2 --seed 17
synth olmo2 --arch olmo2 --n-layer 2 --seed 19
# ---- mixture of experts (synth_moe.py): n_embd 256 (so the Q4_K_M mix keeps K-quants for the experts), 2 layers,
# vocab 320, decisive routing (4 token groups: no top-k near-ties that rounding could flip)
M="--preset tiny --dtype f16 --n-layer 2 --vocab-size 320 --route-groups 4"
$PY $PEER/synth_moe.py --arch qwen3moe $M --n-expert 8 --n-expert-used 3 --seed 21 --name archs-qwen3moe -o models/qwen3moe-f16.gguf > /dev/null
$PY $PEER/synth_moe.py --arch olmoe $M --n-expert 8 --n-expert-used 3 --seed 22 --name archs-olmoe -o models/olmoe-f16.gguf > /dev/null
$PY $PEER/synth_moe.py --arch llama $M --n-ff-exp 128 --seed 23 --name archs-mixtral -o models/mixtral-f16.gguf > /dev/null
# gpt-oss: 2 layers (the first sliding), 4 heads of 32 over 2 kv heads (q wider than n_embd), YaRN x4 from 32,
# 8 experts of 64 rows, 3 used; expert gate/up N(0, 0.8) so that the SwiGLU's clamps at 7 are reached; its
# quantized file is llama.cpp's MXFP4_MOE (experts MXFP4, other matrices Q8_0) instead of the Q4_K_M mix
$PY $PEER/synth_arch.py --arch gpt-oss $S --n-head 4 --n-head-kv 2 --head-dim 32 --n-layer 2 --window 8 --experts 8 --experts-used 3 \
  --n-ff-exp 64 --exp-std 0.8 --exp-down-std 0.02 --route-groups 4 --rope-scaling yarn --rope-scale 4 --rope-orig-ctx 32 \
  --dtype f16 --seed 24 --name archs-gpt-oss -o models/gpt-oss-f16.gguf > /dev/null
$BIN/peer-quantize models/gpt-oss-f16.gguf models/gpt-oss-mxfp4_moe.gguf mxfp4_moe --threads 1 > /dev/null 2>&1
for t in f16 mxfp4_moe; do
  for s in seven long; do
    $BIN/peer-logits models/gpt-oss-$t.gguf $s.tokens.txt logits/gpt-oss-$t.$s.logits.f32 --threads 1 --fa off > /dev/null 2>&1
  done
done
# ---- Qwen3.5 hybrids (synth_arch.py): Gated DeltaNet layers (2 key heads, 4 value heads of 32, conv 4) and gated
# full attention (n_rot 16: IMROPE sections 3,3,2); qwen35 4 layers (3 DeltaNet + 1 attention, head_dim 32),
# qwen35moe 2 layers (1 + 1) of n_embd 256 with 8 experts of 64 rows, 3 used, a shared expert of 128, decisive routing
$PY $PEER/synth_arch.py $S --arch qwen35 --dtype f16 --head-dim 32 --n-rot 16 --n-layer 4 --seed 31 --name archs-qwen35 -o models/qwen35-f16.gguf > /dev/null
$PY $PEER/synth_arch.py --arch qwen35moe --dtype f16 --n-embd 256 --n-head 4 --n-head-kv 1 --head-dim 64 --n-rot 16 --n-ff 128 \
  --vocab-size 320 --std 0.05 --ctx 4096 --n-layer 2 --full-attn-interval 2 --experts 8 --experts-used 3 --n-ff-exp 64 \
  --n-ff-shexp 128 --route-groups 4 --seed 32 --name archs-qwen35moe -o models/qwen35moe-f16.gguf > /dev/null
# ---- LFM2 (synth_arch.py): 4 layers, the third attention (per-head q/k norms), the others gated short convolutions (3 taps)
$PY $PEER/synth_arch.py $S --arch lfm2 --dtype f16 --head-dim 32 --n-layer 4 --attn-layers 2 --seed 33 --name archs-lfm2 -o models/lfm2-f16.gguf > /dev/null
# ---- LFM2-MoE (strata-gguf synth, BUILD its build directory: synth_arch.py writes no lfm2moe): 4 layers as lfm2's,
# the first FFN dense, the others 8 experts of 32 rows (2 used) behind a sigmoid router with a selection bias
# (synth spreads the selection bias N(0, 2), so that no token is within rounding of a tie between two experts)
${BUILD:-../../../build}/client/strata-gguf synth models/lfm2moe-f16.gguf --arch lfm2moe --n-ff 32 --vocab 320 --std 0.05 --ctx 4096 \
  --seed 38 --threads 1 > /dev/null
# ---- Gemma 4 (synth_arch.py): 6 layers, every third global (head size 64, 2 kv heads, no attn_v: k is v, rope_freqs)
# the others sliding (window 8, head size 32, 1 kv head), the last 3 reading layers 1 and 2's keys and values;
# q/k norm weights around 0.5 (with Gemma 4's unscaled scores, 1.0 makes attention so peaked that llama.cpp's own
# F16-vs-F32 KV spread exceeds the F16 tolerance); gemma4 with layer_output_scale, gemma4-e with per-layer inputs
G4="--arch gemma4 --n-layer 6 --swa-period 3 --shared-kv-layers 3 --head-dim 64 --head-dim-swa 32 --window 8 --qk-norm-mean 0.5"
$PY $PEER/synth_arch.py $S $G4 --n-head-kv-full 2 --k-eq-v --layer-scale --dtype f16 --seed 41 --name archs-gemma4 -o models/gemma4-f16.gguf > /dev/null
$PY $PEER/synth_arch.py $S $G4 --n-embd-per-layer 16 --tie-embeddings --dtype f16 --seed 42 --name archs-gemma4-e -o models/gemma4-e-f16.gguf > /dev/null
# ---- Gemma 4's MoE layers (strata-gguf synth: synth_arch.py writes no gemma4 experts): 4 layers, sliding and global
# alternating, each a dense FFN of 128 beside 8 experts of 64 rows (2 used) behind the router reading the normalised
# stream; decisive routing (--route-groups 4: each token's group direction in its embedding and in its group's two
# experts' router rows; without it a random router's top-2 is often within the rounding of 8-bit activations of a tie)
${BUILD:-../../../build}/client/strata-gguf synth models/gemma4moe-f16.gguf --arch gemma4 --preset moe-tiny --vocab 320 --std 0.05 \
  --route-groups 4 --seed 11 --threads 1 > /dev/null 2>&1
for m in qwen3 gemma2 gemma3 phi3 phi3-short llama-linear llama-yarn granite olmo2 qwen3moe olmoe mixtral qwen35 qwen35moe lfm2 lfm2moe gemma4 gemma4-e gemma4moe; do
  $BIN/peer-quantize models/$m-f16.gguf models/$m-q4_k_m.gguf q4_k_m --threads 1 > /dev/null 2>&1
  case $m in qwen35*|lfm2*) seqs="seven long chunks" ;; *) seqs="seven long" ;; esac
  for t in f16 q4_k_m; do
    for s in $seqs; do
      $BIN/peer-logits models/$m-$t.gguf $s.tokens.txt logits/$m-$t.$s.logits.f32 --threads 1 --fa off > /dev/null 2>&1
    done
  done
done
# ---- the IQ1-IQ3 types (llama.cpp's mixes of a small llama: n_embd 256, so rows are whole 256-value super-blocks;
# 2 layers, 4 heads of 64 over 2 kv heads, n_ff 512), quantized by tools/iq_quantize.cpp (llama.cpp's quantizer with
# an all-ones importance matrix; built beside the harness) to the file types IQ1_S (24), IQ1_M (31), IQ2_XXS (19),
# IQ2_XS (20), IQ2_S (28: mostly IQ2_XS and IQ3_S), IQ3_XXS (23: with IQ2_S and IQ3_S), IQ3_S (26)
g++ -std=c++17 -O1 -I$PEER/src tools/iq_quantize.cpp -o $BIN/iq_quantize -L$LD_LIBRARY_PATH -l:libllama.v0.5.0.so \
  -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,$LD_LIBRARY_PATH
$PY $PEER/synth_arch.py --arch llama --n-embd 256 --n-head 4 --n-head-kv 2 --n-ff 512 --vocab-size 320 --std 0.05 --ctx 4096 \
  --n-layer 2 --dtype f16 --seed 51 --name archs-iq -o iq-f16.tmp.gguf > /dev/null
${BUILD:-../../../build}/client/strata-gguf info iq-f16.tmp.gguf | awk '$2 == "F16" {print $1, $3}' > iq.tmp.list
for ft in iq1_s:24 iq1_m:31 iq2_xxs:19 iq2_xs:20 iq2_s:28 iq3_xxs:23 iq3_s:26; do
  t=${ft%:*}
  $BIN/iq_quantize iq-f16.tmp.gguf models/iq-$t.gguf ${ft#*:} iq.tmp.list > /dev/null 2>&1
  for s in seven long; do
    $BIN/peer-logits models/iq-$t.gguf $s.tokens.txt logits/iq-$t.$s.logits.f32 --threads 1 --fa off > /dev/null 2>&1
  done
done
rm -f iq-f16.tmp.gguf iq.tmp.list
# ---- manifest.json: the cases, as tests/data/golden/manifest.json (tolerances from ../golden/README.md: F16,
# and the 8-bit-activation types the quantized mix falls back to)
$PY - <<'PY'
import json
tol = {"F16": (5e-3, 4e-3), "Q4_K_M": (8e-2, 6e-2), "MXFP4_MOE": (8e-2, 6e-2)}
cases = []
for m in ["qwen3", "gemma2", "gemma3", "phi3", "phi3-short", "llama-linear", "llama-yarn", "granite", "olmo2",
          "qwen3moe", "olmoe", "mixtral", "gpt-oss", "qwen35", "qwen35moe", "lfm2", "lfm2moe", "gemma4", "gemma4-e", "gemma4moe"]:
    quant = ("mxfp4_moe", "MXFP4_MOE") if m == "gpt-oss" else ("q4_k_m", "Q4_K_M")
    for t, w in (("f16", "F16"), quant):
        for s in ("seven", "long") + (("chunks",) if m.startswith(("qwen35", "lfm2")) else ()):
            toks = [int(x) for x in open(s + ".tokens.txt").read().split()]
            cases.append({"name": "%s-%s.%s" % (m, t, s), "weights": w, "model": "models/%s-%s.gguf" % (m, t), "tokens": toks,
                          "n_vocab": 320, "logits": "logits/%s-%s.%s.logits.f32" % (m, t, s),
                          "tolerance": {"max_abs_rel": tol[w][0], "rms_rel": tol[w][1]}})
for t in ["iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s"]:   # 8-bit (Q8_K) activations
    for s in ("seven", "long"):
        toks = [int(x) for x in open(s + ".tokens.txt").read().split()]
        cases.append({"name": "iq-%s.%s" % (t, s), "weights": t.upper(), "model": "models/iq-%s.gguf" % t, "tokens": toks,
                      "n_vocab": 320, "logits": "logits/iq-%s.%s.logits.f32" % (t, s),
                      "tolerance": {"max_abs_rel": 8e-2, "rms_rel": 6e-2}})
json.dump({"cases": cases}, open("manifest.json", "w"), indent=1)
PY
echo done
