#!/usr/bin/env python3
"""tests/integration/daemon_recurrent_test.py — a hybrid recurrent model (the small qwen35 of
tests/data/archs: Gated DeltaNet layers and gated attention) on the real stratad: a session's
later turns continue on its recurrent state (cached_tokens >= 90 % of the prompt); two
sessions decoding in one batch each keep their own state and answer as they do alone; a
session saved at SIGTERM continues on its restored state after a restart and answers as a
session that never stopped; after a kill -9 (its saved state was used once, as every
model's .kv file is) it is recomputed from its history and still answers the same;
stateless requests continue from the prefix cache's snapshots (before a prompt's last
token, at a reply's end) and answer as a cold daemon does; a long chat sent whole, then with
its last message edited, continues from the snapshot where that message starts. The same for
LFM2 (the small lfm2 of tests/data/archs: gated short convolutions and attention) and
LFM2-MoE (its lfm2moe: the same layers with a sigmoid-routed mixture of experts), and for
Gemma 4 with per-layer inputs (its gemma4-e: no recurrent state, but key/value rows of two
widths, sliding windows, the last layers reading earlier layers' keys and values, and the
per-layer embedding rows read on demand), whose saved sessions and snapshots hold each
kept layer at its own width."""
import os
import signal
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import SRC, Daemon  # noqa: E402

MODELS = os.path.join(SRC, "tests", "data", "archs", "models")
STORY = " Once upon a time there was a little girl named Lily who loved to play in the park." * 3


def generate(c, session, prompt, max_tokens=8):
    params = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": False, "ignore_eos": True}
    if session:
        params["session"] = session
    reply = c.generate(params)[0]
    assert "result" in reply, reply
    return reply["result"]


class RecurrentModelTest(unittest.TestCase):
    MODEL = os.path.join(MODELS, "qwen35-f16.gguf")

    def setUp(self):
        self.daemon = Daemon(model=self.MODEL).start()

    def tearDown(self):
        self.assertIn(self.daemon.stop(), (0, None))

    # Where a prefix can resume: anywhere with a recurrent state (its snapshots); at the start
    # of a KV block (16 positions) in a model with attention only, whose prefixes are shared blocks.
    BLOCK = 1

    def resumable(self, n):
        return n // self.BLOCK * self.BLOCK

    def assert_mostly_cached(self, result):
        usage = result["usage"]
        self.assertGreaterEqual(usage["cached_tokens"], 0.9 * usage["prompt_tokens"], usage)

    def test_later_turns_continue_on_the_state(self):
        with self.daemon.client() as c:
            first = generate(c, "chat", STORY)
            self.assertEqual(first["usage"]["cached_tokens"], 0)
            second = generate(c, "chat", " And then")
            self.assert_mostly_cached(second)
            third = generate(c, "chat", " The end.")
            self.assert_mostly_cached(third)
            status = c.call("status")["result"]
            self.assertGreater(status["kv_bytes"], 0)

    def test_sessions_batched_together_keep_their_own_state(self):
        prompts = {"a": STORY, "b": " The sun was warm and the birds sang." * 4}
        with self.daemon.client() as c:
            alone = {name: generate(c, name + "-alone", prompt, 16)["text"] for name, prompt in prompts.items()}
            for round in range(2):
                ids = c.send_together("generate", [{"session": name, "prompt": prompt if round == 0 else " Again",
                                                    "max_tokens": 16, "temperature": 0, "stream": False, "ignore_eos": True}
                                                   for name, prompt in prompts.items()])
                results = {name: c.wait(id)[0]["result"] for name, id in zip(prompts, ids)}
                if round == 0:
                    self.assertEqual({name: r["text"] for name, r in results.items()}, alone)
                else:
                    for name, r in results.items():
                        self.assert_mostly_cached(r)
                        self.assertEqual(r["text"], generate(c, name + "-alone", " Again", 16)["text"])

    def test_a_saved_session_continues_after_a_restart(self):
        with self.daemon.client() as c:
            generate(c, "keep", STORY)
            generate(c, "twin", STORY)
            expected = generate(c, "twin", " And then")
        self.assertEqual(self.daemon.stop(), 0)
        self.daemon.start()
        with self.daemon.client() as c:
            after = generate(c, "keep", " And then")
            self.assert_mostly_cached(after)
            self.assertEqual(after["text"], expected["text"])
            expected = generate(c, "twin", " The end.")
        self.assertEqual(self.daemon.stop(signal.SIGKILL), -signal.SIGKILL)
        self.daemon.start()
        with self.daemon.client() as c:  # the same tokens computed cold, in one prompt
            after = generate(c, "keep", " The end.")
            self.assertEqual(after["text"], expected["text"])
            self.assertEqual(after["usage"]["cached_tokens"], 0)

    def test_requests_continue_from_snapshots_and_answer_as_cold(self):
        """Stateless requests: the same prompt again (a regenerated answer) continues from the
        snapshot before its last token, a longer one from there or from the reply's end; each
        answers as a daemon that never saw the prefix."""
        prompts = [STORY, STORY + " And", None]
        with self.daemon.client() as c:
            first = generate(c, None, STORY)
            prompts[2] = STORY + first["text"] + " Then"
            again = generate(c, None, STORY)
            self.assertEqual(again["usage"]["cached_tokens"], self.resumable(again["usage"]["prompt_tokens"] - 1))
            self.assertEqual(again["text"], first["text"])
            warm = [again] + [generate(c, None, p) for p in prompts[1:]]
            for r in warm[1:]:
                self.assertGreaterEqual(r["usage"]["cached_tokens"], 0.8 * r["usage"]["prompt_tokens"], r["usage"])
            self.assertGreater(c.call("status")["result"]["prefix_cache_hits"], 0)
        with Daemon(model=self.MODEL) as cold, cold.client() as c:
            for p, r in zip(prompts, warm):
                self.assertEqual(generate(c, None, p)["text"], r["text"], p[-20:])

    def test_an_edited_last_message_resumes_from_the_turn_before(self):
        """A chat sent whole (as clients without sessions do) pauses where its last messages
        start; the same chat with its last message edited resumes from there, and answers as
        a cold daemon does."""
        turns = [STORY, " The end.", STORY[::-1], " And then?", STORY.upper()]
        conv = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(turns)]
        edited = conv[:-1] + [{"role": "user", "content": STORY.lower()}]
        params = {"max_tokens": 8, "temperature": 0, "stream": False, "ignore_eos": True}
        config = "[engine]\nchat_template = qwen2.5\n"
        with Daemon(config, model=self.MODEL) as daemon, daemon.client() as c:
            whole = c.generate(dict(params, messages=conv))[0]["result"]
            self.assertEqual(whole["usage"]["cached_tokens"], 0)
            before = c.generate(dict(params, messages=conv[:-2], max_tokens=1))[0]["result"]["usage"]["prompt_tokens"]
            warm = c.generate(dict(params, messages=edited))[0]["result"]
            # at least everything before the turn ahead of the last message (the snapshot where
            # a message starts is where the cut conversation's tokens stop agreeing: inside
            # that turn's opening, or for a turn a format renders otherwise when it ends the
            # conversation, before it)
            self.assertGreaterEqual(warm["usage"]["cached_tokens"], self.resumable(before - 4), warm["usage"])
            self.assertLess(warm["usage"]["cached_tokens"], warm["usage"]["prompt_tokens"] - 8)
        with Daemon(config, model=self.MODEL) as cold, cold.client() as c:
            self.assertEqual(c.generate(dict(params, messages=edited))[0]["result"]["text"], warm["text"])


class ShortConvolutionModelTest(RecurrentModelTest):
    MODEL = os.path.join(MODELS, "lfm2-f16.gguf")


class ShortConvolutionMoeModelTest(RecurrentModelTest):
    MODEL = os.path.join(MODELS, "lfm2moe-f16.gguf")


class SharedKvModelTest(RecurrentModelTest):
    MODEL = os.path.join(MODELS, "gemma4-e-f16.gguf")
    BLOCK = 16


if __name__ == "__main__":
    unittest.main()
