#!/usr/bin/env python3
"""tests/integration/daemon_logprobs_test.py — log-probabilities on the real daemon: OpenAI's
chat shape (logprobs + top_logprobs) and legacy completions shape (logprobs: N), streamed
chunks carrying the logprobs of the tokens whose text they carry, the native generate
`logprobs`, consistency (the greedy token is the most likely one, probabilities at most 1,
alternatives in order, the tokens' bytes spell the text), and out-of-range values refused
with a 400 naming the field."""
import json
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import DaemonTestCase, sse_chunks  # noqa: E402

CHAT = {"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 12, "temperature": 0}


class LogprobsTest(DaemonTestCase):
    def post(self, path, body):
        status, _, reply = self.daemon.curl("-X", "POST", "http://localhost" + path, data=body)
        return status, json.loads(reply) if status == 200 and not body.get("stream") else reply

    def check_entry(self, entry, alternatives):
        self.assertEqual(set(entry), {"token", "logprob", "bytes", "top_logprobs"})
        self.assertLessEqual(entry["logprob"], 0.0)
        self.assertEqual(bytes(entry["bytes"]).decode(errors="replace"), entry["token"])
        top = entry["top_logprobs"]
        self.assertEqual(len(top), alternatives)
        self.assertEqual([t["logprob"] for t in top], sorted((t["logprob"] for t in top), reverse=True))
        self.assertLessEqual(sum(math.exp(t["logprob"]) for t in top), 1.0 + 1e-5)

    def test_chat_logprobs_describe_every_generated_token(self):
        status, reply = self.post("/v1/chat/completions", dict(CHAT, logprobs=True, top_logprobs=3))
        self.assertEqual(status, 200, reply)
        choice = reply["choices"][0]
        content = choice["logprobs"]["content"]
        self.assertEqual(len(content), reply["usage"]["completion_tokens"])
        for entry in content:
            self.check_entry(entry, 3)
            # greedy: the chosen token is the most likely one, with its own log-probability
            self.assertEqual(entry["top_logprobs"][0]["bytes"], entry["bytes"])
            self.assertAlmostEqual(entry["top_logprobs"][0]["logprob"], entry["logprob"], places=6)
        self.assertEqual(b"".join(bytes(e["bytes"]) for e in content).decode(), choice["message"]["content"])
        # without top_logprobs: no alternatives; without logprobs: null
        status, reply = self.post("/v1/chat/completions", dict(CHAT, logprobs=True))
        self.assertEqual(reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"], [])
        status, reply = self.post("/v1/chat/completions", CHAT)
        self.assertIsNone(reply["choices"][0]["logprobs"])

    def test_completions_use_the_legacy_shape(self):
        status, reply = self.post("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 10,
                                                      "temperature": 0, "logprobs": 2})
        self.assertEqual(status, 200, reply)
        choice = reply["choices"][0]
        lp = choice["logprobs"]
        self.assertEqual(len(lp["tokens"]), reply["usage"]["completion_tokens"])
        self.assertEqual("".join(lp["tokens"]), choice["text"])
        self.assertEqual(lp["text_offset"][0], 0)
        for i, token in enumerate(lp["tokens"]):
            self.assertLessEqual(lp["token_logprobs"][i], 0.0)
            self.assertEqual(len(lp["top_logprobs"][i]), 2)
            self.assertIn(token, lp["top_logprobs"][i])
            if i:
                self.assertEqual(lp["text_offset"][i], lp["text_offset"][i - 1] + len(lp["tokens"][i - 1].encode()))

    def test_streamed_chunks_carry_the_same_logprobs(self):
        status, whole = self.post("/v1/chat/completions", dict(CHAT, logprobs=True, top_logprobs=2))
        status, body = self.post("/v1/chat/completions", dict(CHAT, logprobs=True, top_logprobs=2, stream=True))
        self.assertEqual(status, 200)
        streamed, text = [], ""
        for chunk in sse_chunks(body):
            choice = chunk["choices"][0]
            text += choice["delta"].get("content") or ""
            if choice["logprobs"] is not None:
                streamed += choice["logprobs"]["content"]
        expected = whole["choices"][0]["logprobs"]["content"]
        self.assertEqual([e["bytes"] for e in streamed], [e["bytes"] for e in expected])
        for a, b in zip(streamed, expected):  # equal up to a differently batched pass's rounding
            self.assertAlmostEqual(a["logprob"], b["logprob"], delta=2e-3)
        self.assertEqual(text, whole["choices"][0]["message"]["content"])

    def test_native_generate_reports_logprobs(self):
        with self.daemon.client() as c:
            result = c.call("generate", {"prompt": "Once upon a time", "max_tokens": 5, "temperature": 0,
                                         "logprobs": 1, "stream": False})["result"]
            self.assertEqual(len(result["logprobs"]), 5)
            for entry in result["logprobs"]:
                self.check_entry(entry, 1)
            self.assertEqual(b"".join(bytes(e["bytes"]) for e in result["logprobs"]).decode(), result["text"])
            self.assertNotIn("logprobs", c.call("generate", {"prompt": "Once", "max_tokens": 2, "stream": False})["result"])
            error = c.call("generate", {"prompt": "Once", "logprobs": 21})["error"]
            self.assertEqual(error["data"]["field"], "logprobs")

    def test_out_of_range_is_a_400_naming_the_field(self):
        for path, body, field in (("/v1/chat/completions", dict(CHAT, logprobs=True, top_logprobs=21), "top_logprobs"),
                                  ("/v1/chat/completions", dict(CHAT, top_logprobs=2), "top_logprobs"),
                                  ("/v1/chat/completions", dict(CHAT, logprobs=3), "logprobs"),
                                  ("/v1/completions", {"prompt": "x", "logprobs": 21}, "logprobs"),
                                  ("/v1/completions", {"prompt": "x", "logprobs": True}, "logprobs")):
            status, _, reply = self.daemon.curl("-X", "POST", "http://localhost" + path, data=body)
            self.assertEqual(status, 400, (body, reply))
            self.assertEqual(json.loads(reply)["error"]["param"], field, reply)


if __name__ == "__main__":
    unittest.main()
