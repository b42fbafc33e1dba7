#!/usr/bin/env python3
"""tests/integration/gguf_tool_test.py — strata-gguf as users run it: info on every golden
model and on every architecture (naming it and its features, or why it cannot run), greedy generation reproducing stories260K's known story (text and ids), logits
within llama.cpp's tolerance, and clear errors (exit 1) for damaged files, usage errors
(exit 2) for bad arguments."""
import array
import json
import os
import struct
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

    def test_info_names_the_architecture_and_its_features(self):
        expected = {"qwen3": "per-head q/k norm", "gemma2": "attention soft-cap", "gemma3": "local rope base",
                    "phi3": "longrope factors", "llama-yarn": "yarn rope scaling", "llama-linear": "linear rope scaling",
                    "granite": "residual scale", "olmo2": "q/k norm", "gpt-oss": "attention sinks"}
        for name, feature in expected.items():
            r = tool("info", os.path.join(DATA, "archs", "models", name + "-f16.gguf"), "--no-tensors")
            self.assertEqual(r.returncode, 0, name + r.stderr.decode())
            line = [l for l in r.stdout.decode().splitlines() if l.startswith("architecture: ")][0]
            arch = name if name == "gpt-oss" else name.split("-")[0]
            self.assertTrue(line.startswith("architecture: " + arch + " ("), line)
            self.assertIn(feature, line)
        with tempfile.TemporaryDirectory() as tmp:
            src = open(os.path.join(DATA, "archs", "models", "qwen3-f16.gguf"), "rb").read()
            bad = os.path.join(tmp, "mamba.gguf")
            open(bad, "wb").write(src.replace(b"qwen3", b"mamba"))  # the architecture and its key prefix
            out = tool("info", bad, "--no-tensors").stdout.decode()
            self.assertIn('architecture: "mamba", not runnable: model architecture "mamba" is not supported', out)

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

    def convert(self, tmp, checkpoint, name):
        out = os.path.join(tmp, name + ".gguf")
        r = tool("convert", checkpoint, out, "--tokenizer", os.path.join(DATA, "stories260K", "tok512.bin"), "--ctx", "2048")
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def logits(self, tmp, model):
        out = os.path.join(tmp, os.path.basename(model) + ".f32")
        r = tool("logits", model, "--tokens", "1 403 407 261 378 432 383", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        return open(out, "rb").read()

    def test_convert_llama2c_checkpoints(self):
        """Both llama2.c layouts convert to a model computing bit-identical logits to llama.cpp's own conversion."""
        v0 = os.path.join(DATA, "stories260K", "stories260K.bin")
        raw = open(v0, "rb").read()
        dim, hidden, layers, heads, kv_heads, vocab, seq = struct.unpack("<7i", raw[:28])
        hs = dim // heads
        sizes = {"embd": vocab * dim, "att": layers * dim, "wq": layers * dim * dim, "wk": layers * dim * hs * kv_heads,
                 "wv": layers * dim * hs * kv_heads, "wo": layers * dim * dim, "ffn": layers * dim, "w1": layers * dim * hidden,
                 "w2": layers * hidden * dim, "w3": layers * dim * hidden, "norm": dim, "freq": seq * hs}
        parts, at = {}, 28
        for key in ("embd", "att", "wq", "wk", "wv", "wo", "ffn", "w1", "w2", "w3", "norm", "freq"):
            parts[key] = raw[at:at + 4 * sizes[key]]
            at += 4 * sizes[key]
        self.assertEqual(at, len(raw))
        header = struct.pack("<Ii7iB", 0x616B3432, 1, dim, hidden, layers, heads, kv_heads, vocab, seq, 1)
        v1 = header + b"\0" * (256 - len(header)) + b"".join(parts[k] for k in ("att", "ffn", "norm", "embd", "wq", "wk", "wv", "wo", "w1", "w2", "w3"))
        with tempfile.TemporaryDirectory() as tmp:
            v1_path = os.path.join(tmp, "v1.bin")
            open(v1_path, "wb").write(v1)
            reference = self.logits(tmp, STORIES)
            self.assertEqual(self.logits(tmp, self.convert(tmp, v0, "from-v0")), reference)
            self.assertEqual(self.logits(tmp, self.convert(tmp, v1_path, "from-v1")), reference)
            for text in ("Once upon a time", "Lily's mom said, \"no\"!"):
                ids = [tool("tokenize", m, text).stdout for m in (STORIES, os.path.join(tmp, "from-v0.gguf"))]
                self.assertEqual(ids[0], ids[1])
            cut = os.path.join(tmp, "cut.bin")
            open(cut, "wb").write(raw[:len(raw) // 2])
            r = tool("convert", cut, os.path.join(tmp, "x.gguf"), "--tokenizer", os.path.join(DATA, "stories260K", "tok512.bin"))
            self.assertEqual(r.returncode, 1)
            self.assertIn(b"truncated", r.stderr)

    def test_synth_is_deterministic_and_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, n) for n in ("a.gguf", "b.gguf", "c.gguf", "q.gguf")]
            args = ["--preset", "tiny", "--n-embd", "256", "--n-ff", "512", "--type"]
            for path, seed, ty in zip(paths, ("7", "7", "8", "7"), ("F16", "F16", "F16", "Q4_K_M")):
                r = tool("synth", path, *args, ty, "--seed", seed, "--arch", "qwen2")
                self.assertEqual(r.returncode, 0, r.stderr)
            a, b, c = (open(p, "rb").read() for p in paths[:3])
            self.assertEqual(a, b)
            self.assertNotEqual(a, c)
            info = tool("info", paths[3]).stdout.decode()
            self.assertIn("Q4_K", info)
            self.assertIn("Q6_K", info)  # the mix puts output.weight in Q6_K
            self.assertIn("attn_q.bias", info)
            r = tool("generate", paths[3], "--tokens", "1 2 3", "-n", "5")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(r.stdout.split()), 5)

    def test_synth_writes_a_mixture_of_experts(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "moe.gguf")
            r = tool("synth", path, "--arch", "qwen3moe", "--preset", "tiny", "--n-expert", "4", "--type", "Q4_K_M")
            self.assertEqual(r.returncode, 0, r.stderr)
            info = tool("info", path).stdout.decode()
            self.assertIn("4 experts (2 used, weights renormalized)", info)
            self.assertIn("ffn_gate_exps.weight", info)
            self.assertRegex(info, r"ffn_gate_inp.weight +F32")
            r = tool("generate", path, "--tokens", "1 2 3", "-n", "5")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(r.stdout.split()), 5)
            r = tool("synth", path, "--arch", "qwen3moe", "--preset", "8b")
            self.assertEqual(r.returncode, 2)
            self.assertIn(b"tiny, 30b-a3b, 20b", r.stderr)

    def test_synth_writes_every_decoder_family(self):
        # Every family's file loads and runs; where llama.cpp's harness is installed
        # (../shared/tools/peer), it loads them too and its logits agree within the F16
        # tolerance. A window of 4 makes the 12 tokens cross Gemma's sliding window.
        peer = os.path.join(os.environ.get("STRATA_PEER_DIR", os.path.expanduser("~/.cache/strata-peer")), "bin", "peer-logits")
        ids = "1 15 27 300 412 99 7 256 311 45 12 480"
        families = [(arch, ()) for arch in ("llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "granite", "olmo2", "qwen3moe", "olmoe",
                                            "gpt-oss", "qwen35", "qwen35moe", "lfm2", "lfm2moe", "gemma4")]
        families += [("gemma4", ("--preset", "e-tiny")), ("gemma4", ("--preset", "moe-tiny", "--route-groups", "4"))]
        with tempfile.TemporaryDirectory() as tmp:
            open(os.path.join(tmp, "ids.txt"), "w").write(ids)
            for arch, more in families:
                with self.subTest(arch=arch, options=more):
                    name = arch + "".join(more)
                    path, out = os.path.join(tmp, name + ".gguf"), os.path.join(tmp, name + ".f32")
                    r = tool("synth", path, "--arch", arch, "--window", "4", *more)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertIn("architecture: " + arch, tool("info", path).stdout.decode())
                    r = tool("logits", path, "--tokens", ids, "--out", out)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    got = array.array("f", open(out, "rb").read())
                    self.assertEqual(len(got), 12 * 512)
                    self.assertTrue(all(abs(x) < 1e6 for x in got))
                    if not os.access(peer, os.X_OK):
                        continue
                    subprocess.run([peer, path, os.path.join(tmp, "ids.txt"), out + ".peer"], check=True, capture_output=True)
                    want = array.array("f", open(out + ".peer", "rb").read())
                    err = max(abs(a - b) for a, b in zip(got, want)) / max(abs(b) for b in want)
                    self.assertLess(err, 5e-3, arch)
            if not os.access(peer, os.X_OK):
                print("llama.cpp's harness is not installed: synthetic families not compared with it", file=sys.stderr)
        r = tool("synth", os.path.join(tmp, "x.gguf"), "--arch", "bert")
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"decoder family", r.stderr)

    def test_info_escapes_what_the_file_says(self):
        def s(b):
            return struct.pack("<Q", len(b)) + b
        kv = s(b"general.name") + struct.pack("<I", 8) + s(b"evil\x1b[31mred\x07")
        kv += s(b"nested") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 2) + struct.pack("<IQ", 4, 1) + struct.pack("<I", 7) + struct.pack("<IQ", 4, 0)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "evil.gguf")
            open(path, "wb").write(b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + kv)
            r = tool("info", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"\x1b", r.stdout)
        self.assertIn(b'"evil\\x1b[31mred\\x07"', r.stdout)
        self.assertIn(b"[2 x array] [1 x uint32] 7, [0 x uint32]", r.stdout)

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
