#!/usr/bin/env python3
"""tests/integration/daemon_speculative_test.py — speculative decoding through the real daemon
on the bundled model: every request gives the same output with "speculative": "off" and
"ngram" (greedy and seeded sampling, stop strings, a grammar, log-probabilities, OpenAI's n,
a session's turns), the guesses show in each reply's timings and in status and /metrics, a bad
mode and "draft" (no draft model) are refused naming the field, and a daemon configured with
engine.speculative = draft refuses to start naming model.draft. The same requests again with
a draft model (model.draft: the bundled model quantized to Q4_0) give the same outputs with
"draft" and "auto" as with "off", batched sessions too; a draft with another vocabulary is
refused at start naming the first token that differs."""
import json
import os
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, MODEL, SRC, Daemon, DaemonTestCase, temporary_directory  # noqa: E402

BASE = {"prompt": "Once upon a time, there was a little girl named Lily. Lily", "max_tokens": 80, "temperature": 0}


class SpeculativeTest(DaemonTestCase):
    MODE = "ngram"  # the speculative mode compared with "off"

    def both(self, params):
        """The generate result with speculation off and with the class's MODE, checked equal."""
        with self.daemon.client() as c:
            off = c.generate(dict(params, speculative="off"))[0]["result"]
            ngram = c.generate(dict(params, speculative=self.MODE))[0]["result"]
        for key in ("text", "finish_reason"):
            self.assertEqual(off[key], ngram[key], key)
        for key in ("prompt_tokens", "completion_tokens"):  # the second finds the prompt in the prefix cache
            self.assertEqual(off["usage"][key], ngram["usage"][key], key)
        self.assertEqual([e["bytes"] for e in off.get("logprobs", [])], [e["bytes"] for e in ngram.get("logprobs", [])])
        for a, b in zip(off.get("logprobs", []), ngram.get("logprobs", [])):
            self.assertAlmostEqual(a["logprob"], b["logprob"], delta=5e-3)  # a verify pass batches the positions
        self.assertEqual(off["timings"]["speculative_guessed"], 0)
        return off, ngram

    def test_greedy_and_sampled_outputs_are_the_same_with_and_without_guesses(self):
        _, ngram = self.both(BASE)
        self.assertGreater(ngram["timings"]["speculative_accepted"], 0)
        self.both(dict(BASE, prompt="", max_tokens=200))
        for seed in (1, 2, 3, 4):
            self.both(dict(BASE, temperature=0.8, top_k=20, seed=seed))
        status = self.daemon.wait_idle()
        self.assertGreater(status["speculative_accepted"], 0)
        self.assertGreater(status["speculative_tokens_per_pass"], 1.0)
        self.assertLessEqual(status["speculative_accept_rate"], 1.0)
        self.assertGreater(status["ngram_pool_entries"], 0)  # finished outputs' runs, for every request
        self.assertGreater(status["ngram_pool_bytes"], 0)
        _, _, metrics = self.daemon.curl("http://localhost/metrics")
        self.assertIn(b"strata_speculative_accepted_total", metrics)
        return status

    def test_stop_strings_grammar_logprobs_and_sessions(self):
        off, _ = self.both(dict(BASE, stop=["park"]))
        self.assertNotIn("park", off["text"])
        self.both(dict(BASE, logprobs=2))
        self.both(dict(BASE, grammar='root ::= ("Lily" | " the" | " park" | "." | " " | " was")+', max_tokens=40))
        for turn in ("Once upon a time", " Lily went to the park.", " Then"):
            for mode in ("off", self.MODE):
                with self.daemon.client() as c:
                    c.generate({"prompt": turn, "session": "story-" + mode, "max_tokens": 30, "temperature": 0,
                                "speculative": mode})
        with self.daemon.client() as c:
            texts = [c.call("session.info", {"session": "story-" + m})["result"]["text"] for m in ("off", self.MODE)]
        self.assertEqual(texts[0], texts[1])

    def test_openai_choices_are_the_same(self):
        body = {"messages": [{"role": "user", "content": "Tell me a story about Lily and Lily's cat"}],
                "max_tokens": 40, "temperature": 0.9, "seed": 5, "n": 2}
        replies = []
        for mode in ("off", self.MODE):
            status, _, reply = self.daemon.curl("-X", "POST", "http://localhost/v1/chat/completions",
                                                data=dict(body, speculative=mode))
            self.assertEqual(status, 200, reply)
            replies.append([c["message"]["content"] for c in json.loads(reply)["choices"]])
        self.assertEqual(replies[0], replies[1])

    def test_bad_modes_are_refused_naming_the_field(self):
        with self.daemon.client() as c:
            for mode, words in (("fast", "must be off, ngram, draft or auto"), ("draft", "model.draft")):
                reply = c.generate(dict(BASE, speculative=mode))[0]
                self.assertIn("error", reply, reply)
                self.assertIn(words, json.dumps(reply["error"]))
                self.assertIn("speculative", json.dumps(reply["error"]))
        self.daemon.assert_serving(self)


def quantized_copy(kind):
    """The bundled model quantized to `kind` in a temporary directory: a draft that agrees with
    it on most tokens (a quantized copy of a trained model), with its vocabulary."""
    path = os.path.join(temporary_directory(), "draft.gguf")
    subprocess.run([os.path.join(BUILD, "client", "strata-gguf"), "quantize", MODEL, path, kind], check=True,
                   stdout=subprocess.DEVNULL)
    return path


class DraftModelTest(SpeculativeTest):
    """The same outputs with a draft model's guesses (and auto: n-grams, else the draft)."""
    MODE = "draft"

    @classmethod
    def setUpClass(cls):
        cls.draft = quantized_copy("Q4_0")
        cls.CONFIG = f"[model]\ndraft = {cls.draft}\n"
        super().setUpClass()

    def test_greedy_and_sampled_outputs_are_the_same_with_and_without_guesses(self):
        status = super().test_greedy_and_sampled_outputs_are_the_same_with_and_without_guesses()
        self.assertEqual(status["draft_model"], self.draft)
        self.assertGreater(status["draft_passes"], 0)
        self.assertGreater(status["draft_time_share"], 0)
        self.assertLess(status["draft_time_share"], 1)
        self.assertGreater(status["speculative_accept_rate"], 0.5)  # a quantized copy agrees most of the time

    def test_auto_takes_the_draft_when_ngrams_have_nothing(self):
        self.MODE = "auto"
        self.both(BASE)
        self.both(dict(BASE, temperature=0.8, top_k=20, seed=9))

    def test_batched_sessions_speculate_together(self):
        results = {}

        def run(i, mode):
            with self.daemon.client() as c:
                results[(i, mode)] = c.generate(dict(BASE, prompt=f"Lily had {i} cats.", max_tokens=60,
                                                     speculative=mode))[0]["result"]["text"]

        for mode in ("off", "draft"):
            threads = [threading.Thread(target=run, args=(i, mode)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        for i in range(4):
            self.assertEqual(results[(i, "off")], results[(i, "draft")], i)

    def test_bad_modes_are_refused_naming_the_field(self):
        with self.daemon.client() as c:
            reply = c.generate(dict(BASE, speculative="fast"))[0]
            self.assertIn("must be off, ngram, draft or auto", json.dumps(reply["error"]))


class DraftVocabularyTest(unittest.TestCase):
    def test_a_draft_with_another_vocabulary_is_refused_at_start(self):
        other = os.path.join(SRC, "tests", "data", "archs", "models", "qwen3-f16.gguf")
        d = Daemon(f"[model]\ndraft = {other}\n")
        code = d.launch().wait(timeout=60)
        self.assertNotEqual(code, 0)
        self.assertIn("the draft model " + other, d.log())
        self.assertIn("vocabulary", d.log())


class DraftWithoutModelTest(unittest.TestCase):
    def test_the_daemon_refuses_draft_without_a_draft_model(self):
        d = Daemon("[engine]\nspeculative = draft\n")
        code = d.launch().wait(timeout=60)
        self.assertNotEqual(code, 0)
        self.assertIn("model.draft", d.log())


if __name__ == "__main__":
    unittest.main()
