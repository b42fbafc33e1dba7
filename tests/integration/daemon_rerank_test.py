#!/usr/bin/env python3
"""tests/integration/daemon_rerank_test.py — POST /v1/rerank (and llama.cpp's /rerank and /v1/reranking)
through the real daemon serving tests/data/rerank's rerankers: a BERT cross-encoder (pooling_type rank, a
classification head) and a Qwen3-Reranker (its rerank template, the yes/no head, softmax; scores within
the same tolerance of llama.cpp's qwen3-scores.json). For the cross-encoder: every document's relevance score equals llama.cpp's (scores.json, make_rerank.sh:
llama-server's [CLS] query [SEP] document layout through llama.cpp's rank pooling; usage counts
exactly those tokens), results best first, top_n, return_documents, the aliases, errors naming the
field, and a clear 400 from a model that is not a reranker (the bundled stories260K)."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import SRC, Daemon, DaemonTestCase  # noqa: E402

BASE = "http://localhost"
DATA = os.path.join(SRC, "tests", "data", "rerank")
GOLDEN = json.load(open(os.path.join(DATA, "scores.json")))
TOLERANCE = 1e-3  # strata keeps the encoder's keys and values in F16 where llama.cpp uses F32


class RerankTest(DaemonTestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(model=os.path.join(DATA, "bert-rank-f16.gguf")).start()

    def post(self, body, path="/v1/rerank"):
        status, _, out = self.daemon.curl(BASE + path, data=body)
        return status, json.loads(out)

    def rerank(self, body, path="/v1/rerank"):
        status, out = self.post(body, path)
        self.assertEqual(status, 200, out)
        return out

    def test_scores_match_llama_cpp_best_first(self):
        docs = [c["document"] for c in GOLDEN["cases"]]
        out = self.rerank({"model": "any", "query": GOLDEN["query"], "documents": docs})
        self.assertEqual(out["object"], "list")
        self.assertIsInstance(out["model"], str)
        results = out["results"]
        self.assertEqual(sorted(r["index"] for r in results), list(range(len(docs))))
        scores = [r["relevance_score"] for r in results]
        self.assertEqual(scores, sorted(scores, reverse=True))
        for r in results:
            self.assertEqual(set(r), {"index", "relevance_score"})
            want = GOLDEN["cases"][r["index"]]["scores"][0]
            self.assertAlmostEqual(r["relevance_score"], want, delta=TOLERANCE)
        tokens = sum(len(c["tokens"]) for c in GOLDEN["cases"])
        self.assertEqual(out["usage"], {"prompt_tokens": tokens, "total_tokens": tokens})

    def test_top_n_return_documents_and_aliases(self):
        docs = [c["document"] for c in GOLDEN["cases"]]
        full = self.rerank({"query": GOLDEN["query"], "documents": docs})
        for path in ("/rerank", "/v1/reranking"):
            out = self.rerank({"query": GOLDEN["query"], "documents": docs, "top_n": 2, "return_documents": True}, path)
            self.assertEqual(len(out["results"]), 2)
            for got, best in zip(out["results"], full["results"]):
                self.assertEqual(got["index"], best["index"])
                self.assertEqual(got["document"], {"text": docs[got["index"]]})

    def test_errors_name_the_field(self):
        cases = [({"documents": ["a"]}, "query"),
                 ({"query": "a"}, "documents"),
                 ({"query": "a", "documents": []}, "documents"),
                 ({"query": "a", "documents": ["b", 3]}, "documents[1]"),
                 ({"query": 1, "documents": ["b"]}, "query"),
                 ({"query": "a", "documents": ["b"], "top_n": 0}, "top_n"),
                 ({"query": "a", "documents": ["b"], "texts": ["c"]}, "texts")]
        for body, field in cases:
            status, out = self.post(body)
            self.assertEqual(status, 400, (body, out))
            self.assertEqual(out["error"]["param"], field, out)
        self.assertEqual(len(self.rerank({"query": "a", "documents": ["b"]})["results"]), 1)  # still serving


class Qwen3RerankerTest(DaemonTestCase):
    """Qwen3-Reranker as llama.cpp converts it: its rerank template, the last token, softmaxed yes/no."""

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(model=os.path.join(DATA, "qwen3-rank-f16.gguf")).start()

    def test_scores_match_llama_cpp(self):
        golden = json.load(open(os.path.join(DATA, "qwen3-scores.json")))
        docs = [c["document"] for c in golden["cases"]]
        status, _, raw = self.daemon.curl(BASE + "/v1/rerank", data={"query": golden["query"], "documents": docs})
        self.assertEqual(status, 200, raw)
        out = json.loads(raw)
        for r in out["results"]:
            self.assertAlmostEqual(r["relevance_score"], golden["cases"][r["index"]]["scores"][0], delta=TOLERANCE)
        tokens = sum(len(c["tokens"]) for c in golden["cases"])
        self.assertEqual(out["usage"]["prompt_tokens"], tokens)


class NotARerankerTest(unittest.TestCase):
    def test_decoder_model_is_refused(self):
        with Daemon() as daemon:
            status, _, out = daemon.curl(BASE + "/v1/rerank", data={"query": "a", "documents": ["b"]})
            self.assertEqual(status, 400, out)
            error = json.loads(out)["error"]
            self.assertIn("not a reranker", error["message"])
            self.assertEqual(error["param"], "model")
            daemon.assert_serving(self)


if __name__ == "__main__":
    unittest.main()
