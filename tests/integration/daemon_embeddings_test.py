#!/usr/bin/env python3
"""tests/integration/daemon_embeddings_test.py — embeddings from the real daemon: POST
/v1/embeddings and the JSON-RPC `embed` method on stories260K (a decoder model: last-token
pooling by default) — the OpenAI response shape, batch and token-id inputs, unit L2 norm,
identical inputs giving identical vectors, base64 equal to the float arrays, errors that name
the field (400), embeddings beside a generation, an httpx client as the OpenAI SDK uses it
(skipped when this python lacks python3-httpx); a daemon on tests/data/archs' qwen3 file with
model.pooling = mean giving llama.cpp's vector (tests/data/embed); and one serving a BERT encoder
(WordPiece text, pooling from the file) that matches llama.cpp and refuses generations."""
import base64
import json
import math
import os
import struct
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import SRC, Daemon, DaemonTestCase  # noqa: E402

try:
    import httpx  # Debian's python3-httpx (.ci/install-deps); the OpenAI SDK's transport
except ImportError:
    httpx = None

BASE = "http://localhost"
N_EMBD = 64  # stories260K
CONFIG = """[limits]
max_prompt_tokens = 40
max_running_per_user = 64
"""


def norm(v):
    return math.sqrt(sum(x * x for x in v))


class EmbeddingsTest(DaemonTestCase):
    CONFIG = CONFIG

    def tearDown(self):
        self.daemon.wait_idle()
        self.daemon.assert_serving(self)

    def post(self, body):
        status, _, out = self.daemon.curl(BASE + "/v1/embeddings", data=body)
        return status, json.loads(out)

    def embed(self, body):
        status, out = self.post(body)
        self.assertEqual(status, 200, out)
        return out

    def check_shape(self, out, count):
        self.assertEqual(out["object"], "list")
        self.assertIsInstance(out["model"], str)
        self.assertEqual(len(out["data"]), count)
        for i, item in enumerate(out["data"]):
            self.assertEqual(item["object"], "embedding")
            self.assertEqual(item["index"], i)
        usage = out["usage"]
        self.assertGreater(usage["prompt_tokens"], 0)
        self.assertEqual(usage["total_tokens"], usage["prompt_tokens"])

    def test_one_string(self):
        out = self.embed({"input": "Once upon a time", "model": "anything"})
        self.check_shape(out, 1)
        v = out["data"][0]["embedding"]
        self.assertEqual(len(v), N_EMBD)
        self.assertTrue(all(isinstance(x, float) for x in v))
        self.assertAlmostEqual(norm(v), 1.0, places=5)

    def test_batch_is_each_input_alone(self):
        texts = ["Once upon a time", "The cat sat", "Once upon a time"]
        out = self.embed({"input": texts})
        self.check_shape(out, 3)
        vectors = [item["embedding"] for item in out["data"]]
        self.assertEqual(vectors[0], vectors[2])
        self.assertNotEqual(vectors[0], vectors[1])
        self.assertEqual(vectors[1], self.embed({"input": "The cat sat"})["data"][0]["embedding"])
        for v in vectors:
            self.assertAlmostEqual(norm(v), 1.0, places=5)

    def test_token_ids(self):
        with self.daemon.client() as c:
            ids = c.call("tokenize", {"text": "Once upon a time"})["result"]["tokens"]
        by_ids = self.embed({"input": ids})
        self.assertEqual(by_ids["usage"]["prompt_tokens"], len(ids))
        by_text = self.embed({"input": "Once upon a time"})
        self.assertEqual(by_ids["data"][0]["embedding"], by_text["data"][0]["embedding"])
        two = self.embed({"input": [ids, ids[:3]]})
        self.check_shape(two, 2)
        self.assertEqual(two["data"][0]["embedding"], by_text["data"][0]["embedding"])
        self.assertEqual(two["usage"]["prompt_tokens"], len(ids) + 3)

    def test_base64_is_the_float_vector(self):
        floats = self.embed({"input": ["a dog", "a cat"], "encoding_format": "float"})
        packed = self.embed({"input": ["a dog", "a cat"], "encoding_format": "base64"})
        for f, p in zip(floats["data"], packed["data"]):
            raw = base64.b64decode(p["embedding"])
            self.assertEqual(len(raw), 4 * N_EMBD)
            self.assertEqual(list(struct.unpack(f"<{N_EMBD}f", raw)), f["embedding"])

    def test_dimensions(self):
        self.embed({"input": "x", "dimensions": N_EMBD})
        status, out = self.post({"input": "x", "dimensions": 32})
        self.assertEqual((status, out["error"]["param"]), (400, "dimensions"))

    def test_errors_name_the_field(self):
        cases = [
            ({}, "input"),
            ({"input": ""}, "input[0]"),
            ({"input": []}, "input"),
            ({"input": ["ok", ""]}, "input[1]"),
            ({"input": [[1, 2], []]}, "input[1]"),
            ({"input": 5}, "input"),
            ({"input": [1, "a"]}, "input[1]"),
            ({"input": ["a", 7]}, "input[1]"),
            ({"input": [[1, "x"]]}, "input[0][1]"),
            ({"input": [1, 100000]}, "input[1]"),
            ({"input": [[1], [1, 100000]]}, "input[1][1]"),
            ({"input": [1, -2]}, "input[1]"),
            ({"input": "Once upon a time " * 20}, "input[0]"),  # over limits.max_prompt_tokens
            ({"input": "x", "encoding_format": "int8"}, "encoding_format"),
            ({"input": "x", "frobnicate": 1}, "frobnicate"),
            ({"input": "x", "timeout": -1}, "timeout"),
        ]
        for body, field in cases:
            status, out = self.post(body)
            self.assertEqual(status, 400, (body, out))
            self.assertEqual(out["error"]["code"], "invalid_params", (body, out))
            self.assertEqual(out["error"]["param"], field, (body, out))
            self.assertIn(field.split("[")[0], out["error"]["message"], (body, out))

    def test_jsonrpc_embed(self):
        http = self.embed({"input": ["Once upon a time", "The cat sat"]})
        with self.daemon.client() as c:
            reply = c.call("embed", {"input": ["Once upon a time", "The cat sat"]})
            self.assertIn("result", reply, reply)
            self.assertEqual(reply["result"]["data"], http["data"])
            self.assertEqual(reply["result"]["usage"], http["usage"])
            packed = c.call("embed", {"input": "The cat sat", "encoding_format": "base64"})["result"]
            raw = base64.b64decode(packed["data"][0]["embedding"])
            self.assertEqual(list(struct.unpack(f"<{N_EMBD}f", raw)), http["data"][1]["embedding"])
            bad = c.call("embed", {"input": ["x", ""]})
            self.assertEqual(bad["error"]["data"]["field"], "input[1]", bad)
            self.assertIn("error", c.call("embed", {"input": "x", "session": "s"}))

    def test_beside_a_generation(self):
        """An embedding asked while a generation runs (the scheduler batches both) gets the
        vector it gets alone, and the generation runs to its end."""
        alone = self.embed({"input": "Once upon a time"})["data"][0]["embedding"]
        results = {}

        def generate():
            with self.daemon.client() as c:
                results["gen"] = c.generate({"prompt": "Once", "max_tokens": 300, "ignore_eos": True, "temperature": 0})[0]

        thread = threading.Thread(target=generate)
        thread.start()
        try:
            beside = self.embed({"input": "Once upon a time"})["data"][0]["embedding"]
        finally:
            thread.join()
        self.assertEqual(results["gen"]["result"]["usage"]["completion_tokens"], 300)
        for a, b in zip(alone, beside):
            self.assertAlmostEqual(a, b, places=5)

    @unittest.skipIf(httpx is None, "python3-httpx is not installed for this python")
    def test_httpx_client(self):
        """httpx over the Unix socket, as the OpenAI SDK sends and reads embeddings."""
        with httpx.Client(transport=httpx.HTTPTransport(uds=self.daemon.socket), base_url="http://strata/v1") as client:
            reply = client.post("/embeddings", json={"model": "text-embedding-3-small", "input": ["a cat", "a dog"],
                                                     "encoding_format": "base64"})
        self.assertEqual(reply.status_code, 200, reply.text)
        body = reply.json()
        self.assertEqual([d["index"] for d in body["data"]], [0, 1])
        vectors = [struct.unpack(f"<{N_EMBD}f", base64.b64decode(d["embedding"])) for d in body["data"]]
        for v in vectors:
            self.assertAlmostEqual(norm(v), 1.0, places=5)
        self.assertEqual(body["usage"]["total_tokens"], body["usage"]["prompt_tokens"])

    def test_metrics_count_embeddings(self):
        self.embed({"input": "x"})
        status, _, body = self.daemon.curl(BASE + "/metrics")
        self.assertEqual(status, 200)
        self.assertIn('strata_request_duration_seconds_count{endpoint="embeddings"}', body.decode())


def golden_case(name):
    data = os.path.join(SRC, "tests", "data", "embed")
    with open(os.path.join(data, "manifest.json")) as f:
        case = next(c for c in json.load(f)["cases"] if c["name"] == name)
    with open(os.path.join(data, case["embedding"]), "rb") as f:
        raw = f.read()
    case["model"] = os.path.join(data, case["model"])
    return case, struct.unpack(f"<{len(raw) // 4}f", raw)


def assert_close(test, case, got, golden):
    cosine = sum(a * b for a, b in zip(got, golden))
    test.assertGreaterEqual(cosine, case["tolerance"]["min_cosine"])
    test.assertLessEqual(max(abs(a - b) for a, b in zip(got, golden)), case["tolerance"]["max_abs"])


class BertTest(unittest.TestCase):
    """A BERT encoder: text in, llama.cpp's vector out; generations refused."""

    def test_bert_text_matches_llama_cpp_and_generation_is_refused(self):
        short, short_golden = golden_case("bert-cls-f16.short")
        long, long_golden = golden_case("bert-cls-f16.long")
        with Daemon(model=short["model"]) as daemon:
            status, _, body = daemon.curl(BASE + "/v1/embeddings", data={"input": [short["text"], long["text"]]})
            self.assertEqual(status, 200, body)
            out = json.loads(body)
            self.assertEqual(out["usage"]["prompt_tokens"], len(short["tokens"]) + len(long["tokens"]))
            assert_close(self, short, out["data"][0]["embedding"], short_golden)
            assert_close(self, long, out["data"][1]["embedding"], long_golden)
            status, _, body = daemon.curl(BASE + "/v1/completions", data={"prompt": "hello", "max_tokens": 4})
            self.assertEqual(status, 400, body)
            self.assertEqual(json.loads(body)["error"]["param"], "prompt")
            status, _, body = daemon.curl(BASE + "/v1/embeddings", data={"input": "word " * 200})
            self.assertEqual(status, 400, body)
            self.assertEqual(json.loads(body)["error"]["param"], "input[0]")
            with daemon.client() as c:
                info = c.call("model.info")["result"]
                self.assertEqual(info["arch"], "bert")


class MeanPoolingParityTest(unittest.TestCase):
    """model.pooling = mean on a file without pooling_type gives llama.cpp's mean-pooled vector."""

    def test_qwen3_mean_matches_llama_cpp(self):
        case, golden = golden_case("qwen3-f16.mean.long")
        with Daemon("[model]\npooling = mean\n", model=case["model"]) as daemon:
            status, _, body = daemon.curl(BASE + "/v1/embeddings", data={"input": case["tokens"]})
            self.assertEqual(status, 200, body)
            assert_close(self, case, json.loads(body)["data"][0]["embedding"], golden)


if __name__ == "__main__":
    unittest.main()
