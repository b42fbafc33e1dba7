#!/usr/bin/env python3
"""tests/integration/gguf_tool_test.py — strata-gguf as users run it: info on every golden
model, greedy generation reproducing stories260K's known story (text and ids), logits
within llama.cpp's tolerance, and clear errors (exit 1) for damaged files, usage errors
(exit 2) for bad arguments."""
import array
import json
import os
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ.get("STRATA_BUILD_DIR", "build")
SRC = os.environ.get("STRATA_SOURCE_DIR", ".")
TOOL = os.path.join(BUILD, "client", "strata-gguf")
DATA = os.path.join(SRC, "tests", "data")
STORIES = os.path.join(SRC, "daemon", "models", "stories260K.gguf")


def tool(*args, stdin=None):
    return subprocess.run([TOOL, *args], input=stdin, capture_output=True, timeout=300)


class GgufToolTest(unittest.TestCase):
    def test_info_on_every_golden_model(self):
        models = os.path.join(DATA, "golden", "models")
        for name in sorted(os.listdir(models)):
            r = tool("info", os.path.join(models, name))
            self.assertEqual(r.returncode, 0, name + r.stderr.decode())
            out = r.stdout.decode()
            self.assertIn("general.architecture", out)
            self.assertIn("parameters:", out)

    def test_generate_text_reproduces_the_known_story(self):
        expected = open(os.path.join(DATA, "stories260K", "expected-greedy-200steps.txt"), "rb").read()
        r = tool("generate", STORIES, "--prompt", "", "-n", "200")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, expected + b"\n")

    def test_generate_ids(self):
        expected = open(os.path.join(DATA, "stories260K", "expected-greedy-200steps.ids.txt")).read().split()
        r = tool("generate", STORIES, "--tokens", "1", "-n", "200")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().split(), expected)

    def test_logits_match_llama_cpp(self):
        manifest = json.load(open(os.path.join(DATA, "golden", "manifest.json")))
        case = next(c for c in manifest["cases"] if c["name"] == "llama-q4_k_m.long")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.f32")
            r = tool("logits", os.path.join(DATA, "golden", case["model"]), "--tokens", " ".join(map(str, case["tokens"])), "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            mine = array.array("f", open(out, "rb").read())
        golden = array.array("f", open(os.path.join(DATA, "golden", case["logits"]), "rb").read())
        self.assertEqual(len(mine), len(golden))
        worst = max(abs(a - b) for a, b in zip(mine, golden)) / max(abs(g) for g in golden)
        self.assertLessEqual(worst, case["tolerance"]["max_abs_rel"])

    def test_damaged_file_is_a_clear_error(self):
        good = open(STORIES, "rb").read()
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "cut.gguf")
            open(bad, "wb").write(good[:5000])
            for cmd in (["info", bad], ["generate", bad, "--tokens", "1", "-n", "1"]):
                r = tool(*cmd)
                self.assertEqual(r.returncode, 1, cmd)
                self.assertIn(b"truncated", r.stderr)
            r = tool("info", os.path.join(tmp, "missing.gguf"))
            self.assertEqual(r.returncode, 1)
            self.assertIn(b"missing.gguf", r.stderr)

    def test_usage_errors(self):
        for cmd in (["nonsense"], ["generate", STORIES, "--tokens", "x"], ["generate", STORIES, "-n", "-1", "--tokens", "1"],
                    ["logits", STORIES, "--tokens", "1"], ["info"], ["info", STORIES, "--bogus"]):
            r = tool(*cmd)
            self.assertEqual(r.returncode, 2, cmd)
            self.assertTrue(r.stderr, cmd)
        r = tool("generate", STORIES, "--tokens", "99999", "-n", "1")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"outside the vocabulary", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
