#!/usr/bin/env python3
"""tests/integration/daemon_choices_test.py — OpenAI's n on the real daemon: n choices with
their indexes, the prompt computed once (the other choices reuse its KV from the prefix
cache), seeds seed + i (the same request gives the same choices), streamed chunks of every
index ending with one finish chunk each, usage counting the prompt once and every choice's
tokens, and n out of range or with a session refused naming n."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import DaemonTestCase, sse_chunks  # noqa: E402

# A prompt of more than one 16-token KV block, so that the other choices find it cached.
CHAT = {"messages": [{"role": "user", "content": "Tell me a long story about a little cat and a big dog who were friends"}],
        "max_tokens": 10, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "seed": 11, "ignore_eos": True}


class ChoicesTest(DaemonTestCase):
    def post(self, path, body):
        status, _, reply = self.daemon.curl("-X", "POST", "http://localhost" + path, data=body)
        return status, reply

    def chat(self, body):
        status, reply = self.post("/v1/chat/completions", body)
        self.assertEqual(status, 200, reply)
        return json.loads(reply)

    def assert_same_logprobs(self, got, expected):
        """The same tokens; log-probabilities equal up to the rounding of a differently
        batched pass (the choices decode together or apart)."""
        self.assertEqual([e["bytes"] for e in got], [e["bytes"] for e in expected])
        for a, b in zip(got, expected):
            self.assertAlmostEqual(a["logprob"], b["logprob"], delta=2e-3)

    def test_n_choices_share_the_prompt(self):
        before = self.daemon.wait_idle()["prefix_cache_hits"]
        reply = self.chat(dict(CHAT, n=3))
        choices = reply["choices"]
        self.assertEqual([c["index"] for c in choices], [0, 1, 2])
        self.assertGreater(len({c["message"]["content"] for c in choices}), 1)  # different seeds
        usage = reply["usage"]
        self.assertEqual(usage["completion_tokens"], 30)  # 3 x max_tokens
        self.assertEqual(usage["total_tokens"], usage["prompt_tokens"] + 30)
        # choices 1 and 2 started from the first one's cached prompt
        self.assertGreaterEqual(self.daemon.wait_idle()["prefix_cache_hits"] - before, 2)
        # the same seed: the same choices, and choice 0 is the n = 1 answer
        self.assertEqual([c["message"]["content"] for c in self.chat(dict(CHAT, n=3))["choices"]],
                         [c["message"]["content"] for c in choices])
        self.assertEqual(self.chat(CHAT)["choices"][0]["message"]["content"], choices[0]["message"]["content"])

    def test_streamed_choices_carry_their_index(self):
        whole = self.chat(dict(CHAT, n=2, logprobs=True))
        status, body = self.post("/v1/chat/completions", dict(CHAT, n=2, logprobs=True, stream=True,
                                                               stream_options={"include_usage": True}))
        self.assertEqual(status, 200)
        self.assertEqual(body.decode().count("data: [DONE]"), 1)
        text, finish, logprobs, usage = {0: "", 1: ""}, {}, {0: [], 1: []}, None
        for chunk in sse_chunks(body):
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk["choices"]:
                i = choice["index"]
                text[i] += choice["delta"].get("content") or ""
                if choice["finish_reason"]:
                    self.assertNotIn(i, finish)
                    finish[i] = choice["finish_reason"]
                if choice["logprobs"]:
                    logprobs[i] += choice["logprobs"]["content"]
        for c in whole["choices"]:
            i = c["index"]
            self.assertEqual(text[i], c["message"]["content"])
            self.assertEqual(finish[i], c["finish_reason"])
            self.assert_same_logprobs(logprobs[i], c["logprobs"]["content"])
        self.assertEqual(usage["completion_tokens"], whole["usage"]["completion_tokens"])

    def test_completions_take_n_too(self):
        status, reply = self.post("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 4, "n": 2, "seed": 3,
                                                     "temperature": 1.0})
        self.assertEqual(status, 200, reply)
        self.assertEqual([c["index"] for c in json.loads(reply)["choices"]], [0, 1])

    def test_bad_n_is_a_400_naming_it(self):
        for body in (dict(CHAT, n=0), dict(CHAT, n=9), dict(CHAT, n=2, session="mine"), dict(CHAT, n="2")):
            status, reply = self.post("/v1/chat/completions", body)
            self.assertEqual(status, 400, (body, reply))
            self.assertEqual(json.loads(reply)["error"]["param"], "n", reply)


if __name__ == "__main__":
    unittest.main()
