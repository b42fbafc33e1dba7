#!/usr/bin/env python3
"""tests/integration/daemon_prefix_cache_test.py — the automatic prefix cache through the
real stratad's HTTP API, as OpenAI clients use it (each request carries the whole
conversation, no session): a second request sharing a long prefix computes only the rest
(usage.prompt_tokens_details.cached_tokens), answers exactly as it did cold, and status and
/metrics show the hits; and a tiny memory.kv_budget evicts without losing a session."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import Daemon, DaemonTestCase  # noqa: E402

BLOCK = 16  # positions per KV block (lib/kv/kv_cache.h)
STORY = " Once upon a time there was a little girl named Lily who loved to play in the park." * 8


def completion(daemon, prompt, max_tokens=8):
    status, _, body = daemon.curl("http://x/v1/completions",
                                  data={"prompt": prompt, "max_tokens": max_tokens, "temperature": 0})
    assert status == 200, body
    return json.loads(body)


class PrefixCacheTest(DaemonTestCase):
    def test_a_shared_prefix_is_computed_once(self):
        first = completion(self.daemon, STORY + " The dog")
        self.assertEqual(first["usage"]["prompt_tokens_details"]["cached_tokens"], 0)
        second = completion(self.daemon, STORY + " The cat sat down")
        usage = second["usage"]
        self.assertGreater(usage["prompt_tokens"], 150)
        self.assertLess(usage["prompt_tokens"] - usage["prompt_tokens_details"]["cached_tokens"], 3 * BLOCK)
        # Cold, on a daemon that never saw the prefix, the answer is the same.
        with Daemon() as cold:
            self.assertEqual(completion(cold, STORY + " The cat sat down")["choices"][0]["text"],
                             second["choices"][0]["text"])
        status = self.daemon.status()
        self.assertGreaterEqual(status["prefix_cache_hits"], 1)
        self.assertGreater(status["prefix_cache_blocks"], 0)
        _, _, metrics = self.daemon.curl("http://x/metrics")
        self.assertIn(b"strata_prefix_cache_hits_total ", metrics)
        self.assertIn(b"strata_kv_cache_prefix_bytes ", metrics)

    def test_a_stateless_chat_reuses_its_previous_turns(self):
        messages = [{"role": "system", "content": "Tell stories." + STORY},
                    {"role": "user", "content": "Once upon a time"}]
        status, _, body = self.daemon.curl("http://x/v1/chat/completions",
                                           data={"messages": messages, "max_tokens": 8, "temperature": 0})
        self.assertEqual(status, 200, body)
        reply = json.loads(body)
        messages += [reply["choices"][0]["message"], {"role": "user", "content": "And then?"}]
        status, _, body = self.daemon.curl("http://x/v1/chat/completions",
                                           data={"messages": messages, "max_tokens": 8, "temperature": 0})
        self.assertEqual(status, 200, body)
        usage = json.loads(body)["usage"]
        self.assertGreaterEqual(usage["prompt_tokens_details"]["cached_tokens"],
                                reply["usage"]["prompt_tokens"] - BLOCK)


class TinyKvBudgetTest(DaemonTestCase):
    CONFIG = "[memory]\nkv_budget = 1M\n"

    def test_sessions_outgrowing_the_budget_are_evicted_not_lost(self):
        """Prompts that differ from their first token share no block."""
        with self.daemon.client() as c:
            for round in range(2):
                for i in range(4):
                    params = {"session": f"s{i}", "max_tokens": 16, "temperature": 0, "stream": False,
                              "prompt": f"Tale {i}." + STORY * 2 if round == 0 else " And then"}
                    self.assertIn("result", c.generate(params)[0])
            for i in range(4):
                info = c.call("session.info", {"session": f"s{i}"})["result"]
                self.assertGreater(info["tokens"], 400)
        status = self.daemon.status()
        self.assertGreater(status["kv_evictions"], 0)
        self.assertLessEqual(status["kv_bytes"], status["kv_budget_bytes"])
        # The blocks live in chunks of 2 MiB huge pages, at least as many as they need.
        self.assertGreaterEqual(status["kv_mapped_bytes"], status["kv_bytes"])
        self.assertEqual(status["kv_mapped_bytes"] % (2 << 20), 0)


if __name__ == "__main__":
    unittest.main()
