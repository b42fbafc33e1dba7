#!/usr/bin/python3
"""synth_bert.py - a tiny random-weight BERT GGUF (all-MiniLM-L6-v2 / bge-small layout, as llama.cpp's
converter writes it) with a WordPiece vocabulary, for tests/data/embed (make_embed.sh).

Tensors: token_embd, token_types (2 rows), position_embd (context rows), token_embd_norm.{weight,bias};
per layer attn_{q,k,v,output}.{weight,bias}, attn_output_norm.{weight,bias}, ffn_{up,down}.{weight,bias},
layer_output_norm.{weight,bias}; with --pooling rank also the classification head cls.{weight,bias} and
cls.output.{weight,bias} (one label). Matrices normal(0, std) (F16 or F32), LayerNorm weights 1 + normal(0, 0.1),
biases normal(0, std), 1-D tensors F32. Vocabulary (tokenizer.ggml.model "bert"): [PAD] [UNK] [CLS] [SEP]
[MASK], then word-initial pieces stored with the U+2581 prefix the converter adds, then continuation pieces
(WordPiece's "##" removed, as the converter does). Uses the GGUF writer of the peer harness's synth_gguf.py
(PEER, default ../../../../shared/tools/peer)."""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.environ.get("PEER", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared/tools/peer")))
import synth_gguf as g  # noqa: E402

WORDS = ["the", "a", "cat", "dog", "sat", "on", "mat", "hello", "world", "play", "run", "emb", "ed", "ding", "s",
         "is", "in", "of", "and", "to", "un", "able", "token", "ize", "word", "piece", "model", "small", "big", "red"]
CONT = ["ing", "ed", "s", "er", "ly", "ize", "able", "ding", "ness", "est", "ion", "al"]


def vocab():
    toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    types = [3, 2, 3, 3, 3]
    chars = [chr(c) for c in range(ord("a"), ord("z") + 1)] + list("0123456789") + list(".,!?;:'\"()-/&$%*+=@#")
    for c in chars:
        toks.append("\u2581" + c)
    for c in [c for c in chars if c.isalnum()]:
        toks.append(c)
    for w in WORDS:
        if "\u2581" + w not in toks:
            toks.append("\u2581" + w)
    for w in CONT + WORDS:
        if w not in toks:
            toks.append(w)
    types += [1] * (len(toks) - len(types))
    return toks, types


def build(args):
    E, L, F, H, C = args.n_embd, args.n_layer, args.n_ff, args.n_head, args.ctx
    toks, types = vocab()
    n_vocab = len(toks)
    kv = [("general.architecture", g.T_STRING, "bert"), ("general.name", g.T_STRING, args.name),
          ("bert.context_length", g.T_UINT32, C), ("bert.embedding_length", g.T_UINT32, E),
          ("bert.feed_forward_length", g.T_UINT32, F), ("bert.block_count", g.T_UINT32, L),
          ("bert.attention.head_count", g.T_UINT32, H), ("bert.attention.layer_norm_epsilon", g.T_FLOAT32, 1e-12),
          ("bert.attention.causal", g.T_BOOL, False), ("bert.pooling_type", g.T_UINT32, {"mean": 1, "cls": 2, "rank": 4}[args.pooling]),
          ("general.file_type", g.T_UINT32, 1 if args.dtype == "f16" else 0),
          ("tokenizer.ggml.model", g.T_STRING, "bert"), ("tokenizer.ggml.tokens", g.T_ARRAY, toks, g.T_STRING),
          ("tokenizer.ggml.token_type", g.T_ARRAY, types, g.T_INT32),
          ("tokenizer.ggml.unknown_token_id", g.T_UINT32, 1), ("tokenizer.ggml.padding_token_id", g.T_UINT32, 0),
          ("tokenizer.ggml.cls_token_id", g.T_UINT32, 2), ("tokenizer.ggml.bos_token_id", g.T_UINT32, 2),
          ("tokenizer.ggml.seperator_token_id", g.T_UINT32, 3), ("tokenizer.ggml.eos_token_id", g.T_UINT32, 3),
          ("tokenizer.ggml.mask_token_id", g.T_UINT32, 4), ("tokenizer.ggml.token_type_count", g.T_UINT32, 2)]
    mat = g.GGML_F16 if args.dtype == "f16" else g.GGML_F32
    t = [("token_embd.weight", [E, n_vocab], mat, "w"), ("token_types.weight", [E, 2], g.GGML_F32, "w"),
         ("position_embd.weight", [E, C], mat, "w"), ("token_embd_norm.weight", [E], g.GGML_F32, "norm"),
         ("token_embd_norm.bias", [E], g.GGML_F32, "w")]
    for l in range(L):
        p = "blk.%d." % l
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            t += [(p + name + ".weight", [E, E], mat, "w"), (p + name + ".bias", [E], g.GGML_F32, "w")]
        t += [(p + "attn_output_norm.weight", [E], g.GGML_F32, "norm"), (p + "attn_output_norm.bias", [E], g.GGML_F32, "w"),
              (p + "ffn_up.weight", [E, F], mat, "w"), (p + "ffn_up.bias", [F], g.GGML_F32, "w"),
              (p + "ffn_down.weight", [F, E], mat, "w"), (p + "ffn_down.bias", [E], g.GGML_F32, "w"),
              (p + "layer_output_norm.weight", [E], g.GGML_F32, "norm"), (p + "layer_output_norm.bias", [E], g.GGML_F32, "w")]
    if args.pooling == "rank":  # a cross-encoder's classification head (bge-reranker, as the converter names it)
        t += [("cls.weight", [E, E], mat, "w"), ("cls.bias", [E], g.GGML_F32, "w"),
              ("cls.output.weight", [E, 1], mat, "w"), ("cls.output.bias", [1], g.GGML_F32, "w")]
    dims = dict(n_embd=E, n_layer=L, n_ff=F, n_head=H, n_head_kv=H)
    return dims, n_vocab, kv, t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-embd", type=int, default=64)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-ff", type=int, default=128)
    ap.add_argument("--n-head", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--pooling", choices=["mean", "cls", "rank"], default="mean")
    ap.add_argument("--dtype", choices=["f16", "f32"], default="f16")
    ap.add_argument("--std", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--name", default="synth-bert")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    args.arch, args.preset, args.norm_std, args.verbose = "bert", "-", 0.1, False
    g.build = build
    g.write(args)


if __name__ == "__main__":
    main()
