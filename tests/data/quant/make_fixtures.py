#!/usr/bin/python3
"""make_fixtures.py - regenerate the quantization fixtures in this folder from llama.cpp.

The expected bytes come from llama.cpp itself: its ggml-base library (the peer harness,
../shared/tools/peer, installs it in $STRATA_PEER_DIR or ~/.cache/strata-peer) exports the
quantizers GGML uses for model files (quantize_<type> without an importance matrix), the dequantizers and
the F16/BF16 conversions; this script calls them through ctypes. The golden slices come
from ../shared/golden (llama.cpp-quantized models) and are dequantized by
../shared/golden/tools/gguf_ref.py, an independent numpy implementation.

  /usr/bin/python3 tests/data/quant/make_fixtures.py [--shared DIR] [--peer DIR] [--skip-mixes]

(peer-quantize must know iq4_nl and iq4_xs, llama_ftype 25 and 30: the peer harness's
 copy does not, so the IQ4 mixes were written with a copy whose type table adds them.)

Files written (all little-endian):
  input.f32                 ROWS x COLS float32 rows (see make_input)
  <type>.q                  llama.cpp's encoding of input.f32 as <type> (quantize_<type>, no imatrix)
  <type>.deq.f32            llama.cpp's dequantization of <type>.q
                            (MXFP4: quantize_mxfp4, the same bytes as quantize_row_mxfp4_ref)
  <lattice>.q / .deq.f32    IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M: 2 rows of
                            input.f32 quantized with an importance matrix of ones, then 2 rows of
                            random blocks with finite scales; and llama.cpp's dequantization
  fp_edges.f32              float32 edge values (subnormals, ties, inf, NaN, ...)
  fp_edges.f16 / .bf16      llama.cpp's conversions of fp_edges.f32 (uint16 each)
  golden_<model>.<tensor>.q / .f64   the first GOLDEN_ROWS rows of a tensor in a golden
                            model, and gguf_ref.py's float64 dequantization of them
  <type>.dot.f32, act.q8_0, act.q8_k   MXFP4 and the lattice types: GGML's generic dot
                            products of 4 rows of <type>.q with one activation row (see dot_fixtures)
  mix.gguf, mix-tied.gguf   small llama-architecture models for the per-tensor type rules
                            (see make_mix_model), and mix[-tied].<type>.gguf: what
                            llama.cpp's quantizer (peer-quantize) makes of them
  mix-moe.gguf              the same with 4 experts per layer, and mix-moe.mxfp4_moe.gguf
"""
import argparse
import ctypes
import os
import struct
import subprocess
import sys

import numpy as np

ROWS, COLS = 8, 512
GOLDEN_ROWS = 2
TYPES = ["q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs", "mxfp4"]
# The lattice formats: GGML quantizes them only with an importance matrix, and strata only reads them.
LATTICE = ["iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"]
GGML_TYPE_ID = {"iq2_xxs": 16, "iq2_xs": 17, "iq3_xxs": 18, "iq1_s": 19, "iq3_s": 21, "iq2_s": 22, "iq1_m": 29}
LATTICE_ROWS = 2  # rows of input.f32 quantized, followed by as many rows of random blocks
# Byte offsets of the F16 scales in a lattice block (IQ1_M: the top nibbles of bytes 49, 51, 53, 55).
LATTICE_F16_AT = {"iq2_xxs": 0, "iq2_xs": 0, "iq2_s": 0, "iq3_xxs": 0, "iq3_s": 0, "iq1_s": 0, "iq1_m": None}
BLOCK = {"q4_0": (32, 18), "q4_1": (32, 20), "q5_0": (32, 22), "q5_1": (32, 24), "q8_0": (32, 34),
         "q2_K": (256, 84), "q3_K": (256, 110), "q4_K": (256, 144), "q5_K": (256, 176), "q6_K": (256, 210),
         "iq4_nl": (32, 18), "iq4_xs": (256, 136), "mxfp4": (32, 17),
         "iq2_xxs": (256, 66), "iq2_xs": (256, 74), "iq2_s": (256, 82), "iq3_xxs": (256, 98), "iq3_s": (256, 110),
         "iq1_s": (256, 50), "iq1_m": (256, 56)}
GOLDEN = [  # (model file, tensor): one tensor of every type the golden models hold
    ("llama-q8_0.gguf", "blk.0.attn_q.weight"),
    ("llama-q4_0.gguf", "blk.0.ffn_down.weight"),
    ("llama-q4_0.gguf", "output.weight"),
    ("llama-q4_k_m.gguf", "blk.0.ffn_gate.weight"),
    ("llama-q4_k_m.gguf", "blk.1.ffn_down.weight"),
    ("llama-q6_k.gguf", "token_embd.weight"),
]


def make_input(shared):
    """Rows with the distributions quantizers meet: Gaussian and heavy-tailed weights, real
    trained weights (stories260K), F16-grid values, and blocks that hit special cases."""
    rng = np.random.default_rng(20240607)
    rows = np.zeros((ROWS, COLS), np.float32)
    rows[0] = rng.normal(0, 0.02, COLS)
    sys.path.insert(0, os.path.join(shared, "golden", "tools"))
    import gguf_ref
    g = gguf_ref.GGUF(os.path.join(shared, "data", "models", "stories260K", "stories260K.gguf"))
    rows[1] = g.tensor("blk.0.ffn_gate.weight")[:8].reshape(-1)           # 8 rows of 64
    rows[2] = g.tensor("blk.3.attn_output.weight")[10:18].reshape(-1)
    rows[3] = rng.standard_t(2, COLS) * 0.01
    rows[3][rng.choice(COLS, 6, replace=False)] = [1.5, -2.0, 0.9, -0.7, 3.0, -1.1]
    rows[4] = rng.normal(0, 0.05, COLS).astype(np.float16).astype(np.float32)
    rows[4][100:140] = rows[4][100]                                        # a run of equal values
    special = [
        np.zeros(32),                                  # all zero
        np.full(32, 0.5),                              # constant
        rng.uniform(0, 1, 32),                         # positive only (min > 0)
        -rng.uniform(0, 1, 32),                        # negative only
        np.eye(1, 32, 7)[0] * -0.3,                    # one spike in zeros
        np.tile([0.25, -0.25], 16),                    # +-a
        rng.normal(0, 1e-20, 32),                      # below GGML's 1e-15 "all zero" threshold
        rng.normal(0, 3e-7, 32),                       # F16 subnormal scales
    ]
    rows[5][:256] = np.concatenate(special)            # rows[5][256:] stays zero: a zero super-block
    scales = 10.0 ** rng.uniform(-6, 1, COLS // 16)    # 16-element groups from 1e-6 to 10
    rows[6] = np.repeat(scales, 16) * rng.normal(0, 1, COLS)
    rows[7] = rng.integers(-64, 64, COLS) / 16.0       # exact multiples of 1/16: rounding ties
    return rows


def load_ggml(peer):
    lib = ctypes.CDLL(os.path.join(peer, "lib", "libggml-base.so"))
    for t in TYPES + LATTICE:
        getattr(lib, "quantize_%s" % t).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                                  ctypes.c_void_p]
        getattr(lib, "dequantize_row_%s" % t).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    for f in ("ggml_fp32_to_fp16_row", "ggml_fp32_to_bf16_row_ref"):
        getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    return lib


def quantize(lib, t, x):
    """What llama-quantize writes without an importance matrix: quantize_<type> on ROWS rows
    (the same bytes as quantize_row_<type>_ref, except for IQ4_NL, whose _ref skips the
    scale search)."""
    be, bb = BLOCK[t]
    out = np.zeros(x.size // be * bb, np.uint8)
    getattr(lib, "quantize_%s" % t)(x.ctypes.data, out.ctypes.data, ROWS, x.size // ROWS, None)
    return out


def finite_f16(rng, n):
    """n random finite F16 bit patterns between 2^-10 and 2^-3 in magnitude, either sign."""
    return (rng.integers(0, 2, n) << 15 | rng.integers(5, 13, n) << 10 | rng.integers(0, 1024, n)).astype(np.uint16)


def lattice_blocks(lib, t, x, rng):
    """LATTICE_ROWS rows of x quantized by quantize_<type> with an importance matrix of ones,
    then LATTICE_ROWS rows of random blocks (every grid index, sign and scale bit pattern) whose
    F16 scales are finite."""
    be, bb = BLOCK[t]
    n = LATTICE_ROWS * COLS
    out = np.zeros(2 * n // be * bb, np.uint8)
    imatrix = np.ones(COLS, np.float32)
    lib.ggml_quantize_init(GGML_TYPE_ID[t])  # builds the grids' search tables
    getattr(lib, "quantize_%s" % t)(x.ctypes.data, out.ctypes.data, LATTICE_ROWS, COLS, imatrix.ctypes.data)
    rand = rng.integers(0, 256, n // be * bb, dtype=np.uint8).reshape(-1, bb)
    h = finite_f16(rng, rand.shape[0])
    if LATTICE_F16_AT[t] is None:  # IQ1_M: nibble w of the F16 goes to the top of scale word w
        for w in range(4):
            rand[:, 49 + 2 * w] = (rand[:, 49 + 2 * w] & 0x0F) | (((h >> (4 * w)) & 0xF) << 4).astype(np.uint8)
    else:
        rand[:, LATTICE_F16_AT[t]:LATTICE_F16_AT[t] + 2] = h.view(np.uint8).reshape(-1, 2)
    out[n // be * bb:] = rand.reshape(-1)
    return out


DOT_ACTIVATION = {"mxfp4": "q8_0", **{t: "q8_K" for t in LATTICE}}
DOT_ROWS = 4    # weight rows of <type>.q dotted with the activation row
DOT_INPUT = 7   # the row of input.f32 the activations are made of


def dot_fixtures(peer, x, here):
    """<type>.dot.f32: GGML's generic ggml_vec_dot_<type>_<act> (the scalar code of its CPU
    backend, from the baseline x64 variant) of the first DOT_ROWS rows of <type>.q with row
    DOT_INPUT of input.f32 quantized by its quantize_row_<act> (act.<act>, also written)."""
    cpu = ctypes.CDLL(os.path.join(peer, "lib", "libggml-cpu-x64.so"))
    cpu.ggml_cpu_init()  # fills the F16 table the CPU backend converts scales with
    row = np.ascontiguousarray(x[DOT_INPUT * COLS:(DOT_INPUT + 1) * COLS])
    acts = {}
    for a in set(DOT_ACTIVATION.values()):
        be, bb = {"q8_0": (32, 34), "q8_K": (256, 292)}[a]
        acts[a] = np.zeros(COLS // be * bb, np.uint8)
        f = getattr(cpu, "quantize_row_%s_generic" % a)
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        f(row.ctypes.data, acts[a].ctypes.data, COLS)
        acts[a].tofile(os.path.join(here, "act." + a.lower()))
    for t, a in DOT_ACTIVATION.items():
        q = np.fromfile(os.path.join(here, t + ".q"), np.uint8)
        row_bytes = COLS // BLOCK[t][0] * BLOCK[t][1]
        f = getattr(cpu, "ggml_vec_dot_%s_%s_generic" % (t, a))
        f.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                      ctypes.c_size_t, ctypes.c_int]
        out = np.zeros(DOT_ROWS, np.float32)
        for r in range(DOT_ROWS):
            w = np.ascontiguousarray(q[r * row_bytes:(r + 1) * row_bytes])
            f(COLS, out[r:].ctypes.data, 0, w.ctypes.data, 0, acts[a].ctypes.data, 0, 1)
        out.tofile(os.path.join(here, t + ".dot.f32"))


def dequantize(lib, t, q, n):
    out = np.zeros(n, np.float32)
    getattr(lib, "dequantize_row_%s" % t)(q.ctypes.data, out.ctypes.data, n)
    return out


def fp_edges():
    bits = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF,
            0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF]
    vals = [1.0, -1.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e6, 2.0 ** -14, 2.0 ** -24, 2.0 ** -25,
            3 * 2.0 ** -25, 2.0 ** -26, 5.96e-8, 6.1e-5, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -8,
            1 + 3 * 2.0 ** -8, 1 + 2.0 ** -8 + 2.0 ** -20, 0.1, -0.1, 1.0 / 3, 3.14159265, 1e-40, -1e-40, 1e-45]
    a = np.array(bits, np.uint32).view(np.float32)
    return np.concatenate([a, np.array(vals, np.float32)])


MIX_TYPES = ["q4_k_m", "q5_k_m", "q3_k_m", "q4_k_s", "q2_k", "q8_0", "q4_0", "iq4_nl", "iq4_xs"]
MIX_TIED_TYPES = ["q4_k_m"]
MIX_MOE_TYPES = ["mxfp4_moe"]


def write_gguf(path, kv, tensors):
    """A GGUF v3 file: kv = [(key, "u32"|"f32"|"str", value)], tensors = [(name, array)] (F32 or F16)."""
    def s_str(x):
        b = x.encode()
        return struct.pack("<Q", len(b)) + b
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    for key, kind, v in kv:
        head += s_str(key) + {"u32": lambda: struct.pack("<II", 4, v), "f32": lambda: struct.pack("<If", 6, v),
                              "str": lambda: struct.pack("<I", 8) + s_str(v)}[kind]()
    data, offset = b"", 0
    for name, a in tensors:
        head += s_str(name) + struct.pack("<I", a.ndim) + b"".join(struct.pack("<Q", d) for d in reversed(a.shape))
        head += struct.pack("<IQ", 1 if a.dtype == np.float16 else 0, offset)
        blob = a.tobytes()
        blob += bytes(-len(blob) % 32)
        data += blob
        offset += len(blob)
    head += bytes(-len(head) % 32)
    with open(path, "wb") as f:
        f.write(head + data)


def make_mix_model(path, n_layer, tied, seed, n_expert=0):
    """Llama metadata with tensors of only a few rows (llama.cpp's quantizer reads the
    hyperparameters, not the shapes): the names drive the type rules, n_layer = 8 makes
    use_more_bits pick layers 0, 3, 6, 7, n_head / n_head_kv = 4 is the GQA Q2_K checks,
    and ffn_down rows of 160 (layer 1) and 100 (layer 2) force the Q5_0/Q5_1/Q8_0 and F16
    fallbacks. With n_expert > 0 the dense FFN becomes a router and 3-D expert tensors
    (Mixtral-style llama metadata), for the MoE mixes."""
    rng = np.random.default_rng(seed)
    w = lambda cols, rows: rng.normal(0, 0.02, (rows, cols)).astype(np.float16)
    norm = lambda: (1 + rng.normal(0, 0.02, 64)).astype(np.float32)
    tensors = [("token_embd.weight", w(256, 4)), ("output_norm.weight", norm())]
    if not tied:
        tensors.append(("output.weight", w(256, 4)))
    for i in range(n_layer):
        p = "blk.%d." % i
        down = {1: 160, 2: 100}.get(i, 256)
        tensors += [(p + "attn_norm.weight", norm()), (p + "attn_q.weight", w(256, 2)), (p + "attn_k.weight", w(256, 2)),
                    (p + "attn_v.weight", w(256, 2)), (p + "attn_output.weight", w(256, 2)),
                    (p + "ffn_norm.weight", norm())]
        if n_expert:
            experts = lambda cols: rng.normal(0, 0.02, (n_expert, 2, cols)).astype(np.float16)
            tensors += [(p + "ffn_gate_inp.weight", rng.normal(0, 0.02, (n_expert, 256)).astype(np.float32)),
                        (p + "ffn_gate_exps.weight", experts(256)), (p + "ffn_up_exps.weight", experts(256)),
                        (p + "ffn_down_exps.weight", experts(256))]
        else:
            tensors += [(p + "ffn_gate.weight", w(256, 2)), (p + "ffn_up.weight", w(256, 2)),
                        (p + "ffn_down.weight", w(down, 2))]
    kv = [("general.architecture", "str", "llama"), ("general.name", "str", os.path.basename(path)),
          ("general.file_type", "u32", 1), ("llama.context_length", "u32", 256),
          ("llama.embedding_length", "u32", 256), ("llama.block_count", "u32", n_layer),
          ("llama.feed_forward_length", "u32", 256), ("llama.attention.head_count", "u32", 4),
          ("llama.attention.head_count_kv", "u32", 1), ("llama.attention.layer_norm_rms_epsilon", "f32", 1e-5),
          ("llama.rope.dimension_count", "u32", 64), ("llama.vocab_size", "u32", 4)]
    if n_expert:
        kv += [("llama.expert_count", "u32", n_expert), ("llama.expert_used_count", "u32", 2)]
    write_gguf(path, kv, tensors)


def peer_quantize(peer, src, types):
    for t in types:
        out = src[:-len(".gguf")] + "." + t + ".gguf"
        subprocess.run([os.path.join(peer, "bin", "peer-quantize"), src, out, t, "-v", "0"], check=True,
                       stdout=subprocess.DEVNULL)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(here, "..", "..", "..", "..", "shared"))
    ap.add_argument("--peer", default=os.environ.get("STRATA_PEER_DIR", os.path.expanduser("~/.cache/strata-peer")))
    ap.add_argument("--skip-mixes", action="store_true", help="leave mix.gguf, mix-tied.gguf and their "
                    "quantizations alone (the IQ4 mixes need a peer-quantize that names those types)")
    args = ap.parse_args()
    lib = load_ggml(args.peer)

    x = np.ascontiguousarray(make_input(args.shared).reshape(-1))
    x.tofile(os.path.join(here, "input.f32"))
    for t in TYPES:
        q = quantize(lib, t, x)
        q.tofile(os.path.join(here, t.lower() + ".q"))
        dequantize(lib, t, q, x.size).tofile(os.path.join(here, t.lower() + ".deq.f32"))
    rng = np.random.default_rng(20261204)
    for t in LATTICE:
        q = lattice_blocks(lib, t, x, rng)
        q.tofile(os.path.join(here, t + ".q"))
        dequantize(lib, t, q, 2 * LATTICE_ROWS * COLS).tofile(os.path.join(here, t + ".deq.f32"))
    dot_fixtures(args.peer, x, here)

    e = fp_edges()
    e.tofile(os.path.join(here, "fp_edges.f32"))
    for f, ext in (("ggml_fp32_to_fp16_row", "f16"), ("ggml_fp32_to_bf16_row_ref", "bf16")):
        out = np.zeros(e.size, np.uint16)
        getattr(lib, f)(e.ctypes.data, out.ctypes.data, e.size)
        out.tofile(os.path.join(here, "fp_edges." + ext))

    sys.path.insert(0, os.path.join(args.shared, "golden", "tools"))
    import gguf_ref
    for model, tensor in GOLDEN:
        g = gguf_ref.GGUF(os.path.join(args.shared, "golden", "models", model))
        ne, tid, off = g.tensors[tensor]
        tn, be, bb = gguf_ref.GGML_TYPES[tid]
        n = GOLDEN_ROWS * ne[0]
        raw = np.frombuffer(g.buf, np.uint8, n // be * bb, g.data_start + off)
        stem = os.path.join(here, "golden_%s.%s" % (model[:-5], tensor))
        raw.tofile(stem + ".q")
        gguf_ref.dequant(raw, tn, n).astype("<f8").tofile(stem + ".f64")
        print("golden %s %s: %s, %d values" % (model, tensor, tn, n))
    make_mix_model(os.path.join(here, "mix-moe.gguf"), 2, False, 13, n_expert=4)
    peer_quantize(args.peer, os.path.join(here, "mix-moe.gguf"), MIX_MOE_TYPES)
    if args.skip_mixes:
        print("wrote fixtures (without the mixes) to", here)
        return
    make_mix_model(os.path.join(here, "mix.gguf"), 8, False, 11)
    make_mix_model(os.path.join(here, "mix-tied.gguf"), 2, True, 12)
    peer_quantize(args.peer, os.path.join(here, "mix.gguf"), MIX_TYPES)
    peer_quantize(args.peer, os.path.join(here, "mix-tied.gguf"), MIX_TIED_TYPES)
    print("wrote fixtures to", here)


if __name__ == "__main__":
    main()
