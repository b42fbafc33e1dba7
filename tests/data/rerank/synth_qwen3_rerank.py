#!/usr/bin/python3
"""synth_qwen3_rerank.py - a tiny random-weight Qwen3-Reranker GGUF as llama.cpp's converter writes one: the
peer harness's synth_arch.py qwen3 model (PEER, default ../../../../shared/tools/peer; its options pass
through) plus qwen3.pooling_type 4 (rank), qwen3.classifier.output_labels ["yes", "no"], the classification
head cls.output.weight [n_embd, 2] (the converter's rows of the LM head for "yes" and "no"; random here) and
a tokenizer.chat_template.rerank prompt with {query} and {document}, for make_rerank.sh."""
import os
import sys

sys.path.insert(0, os.environ.get("PEER", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared/tools/peer")))
import synth_arch as sa  # noqa: E402
import synth_gguf as g  # noqa: E402

TEMPLATE = "Judge whether the Document answers the Query.\nQuery: {query}\nDocument: {document}\nAnswer:"
_build = sa.build


def build(args):
    dims, n_vocab, kv, tensors = _build(args)
    kv = kv + [("qwen3.pooling_type", g.T_UINT32, 4),
               ("qwen3.classifier.output_labels", g.T_ARRAY, ["yes", "no"], g.T_STRING),
               ("tokenizer.chat_template.rerank", g.T_STRING, TEMPLATE)]
    mat = g.GGML_F16 if args.dtype == "f16" else g.GGML_F32
    return dims, n_vocab, kv, tensors + [("cls.output.weight", [args.n_embd, 2], mat, "w")]


if __name__ == "__main__":
    sa.build = build
    sa.main()
