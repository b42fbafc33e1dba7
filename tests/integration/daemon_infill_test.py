#!/usr/bin/env python3
"""tests/integration/daemon_infill_test.py — POST /infill (llama.cpp's fill-in-the-middle endpoint,
as llama.vim and llama.vscode call it) through the real daemon, on the bundled stories260K given
FIM token ids (gguf_keys.py; llama.cpp's own server tests do the same with this model): the prompt
laid out as llama.cpp lays it out (the greedy reply equals strata-gguf's greedy continuation of
that exact token sequence, and tokens_evaluated counts it), with and without input_extra files
(repo-level <REP>/<SEP> tokens), llama.cpp's response object and its streamed events,
response_fields, n_predict 0 (prompt only), llama.vim's request accepted as it is sent, errors
naming the field, and a clear 400 from a model without FIM tokens."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, MODEL, Daemon, sse_events, temporary_directory  # noqa: E402
from gguf_keys import with_keys  # noqa: E402

BASE = "http://localhost"
PRE, SUF, MID, REP, SEP = 3, 4, 5, 6, 7  # byte tokens <0x00>.. standing for the FIM tokens
BOS = 1
FIM = {"tokenizer.ggml.fim_pre_token_id": PRE, "tokenizer.ggml.fim_suf_token_id": SUF,
       "tokenizer.ggml.fim_mid_token_id": MID}
REPO = dict(FIM, **{"tokenizer.ggml.fim_rep_token_id": REP, "tokenizer.ggml.fim_sep_token_id": SEP})
RESPONSE_KEYS = {"index", "content", "tokens", "id_slot", "stop", "model", "tokens_predicted", "tokens_evaluated",
                 "has_new_line", "truncated", "stop_type", "stopping_word", "tokens_cached", "timings"}


def fim_model(keys, name):
    path = os.path.join(temporary_directory(), name)
    with_keys(MODEL, path, keys)
    return path


class InfillCase(unittest.TestCase):
    KEYS = FIM

    @classmethod
    def setUpClass(cls):
        cls.model = fim_model(cls.KEYS, "stories260K-infill.gguf")
        cls.daemon = Daemon(model=cls.model).start()

    @classmethod
    def tearDownClass(cls):
        code = cls.daemon.stop()
        assert code == 0, f"stratad exited with {code}:\n{cls.daemon.log()}"

    def post(self, path, body):
        status, _, out = self.daemon.curl(BASE + path, data=body)
        return status, out

    def infill(self, body):
        status, out = self.post("/infill", body)
        self.assertEqual(status, 200, out)
        return json.loads(out)

    def tokens(self, text, parse_special=False):
        status, out = self.post("/tokenize", {"content": text, "add_special": False, "parse_special": parse_special})
        self.assertEqual(status, 200, out)
        return json.loads(out)["tokens"]

    def greedy_text(self, ids, n):
        """strata-gguf's greedy continuation of exactly `ids`, as text."""
        run = subprocess.run([os.path.join(BUILD, "client", "strata-gguf"), "generate", self.model, "--tokens",
                              ",".join(map(str, ids)), "-n", str(n)], capture_output=True, text=True, check=True)
        out = [int(x) for x in run.stdout.split()]
        status, body = self.post("/detokenize", {"tokens": out})
        self.assertEqual(status, 200, body)
        return json.loads(body)["content"]

    def check_layout(self, body, ids):
        out = self.infill(dict(body, n_predict=6, temperature=0, ignore_eos=True))
        self.assertEqual(out["tokens_evaluated"], len(ids))
        self.assertEqual(out["tokens_predicted"], 6)
        # (the reply keeps the space of its first piece, which decoding a text from its start drops)
        self.assertEqual(out["content"].lstrip(" "), self.greedy_text(ids, 6))
        return out


class InfillTest(InfillCase):
    def test_prompt_layout_and_response_shape(self):
        body = {"input_prefix": "Once upon a time", "input_suffix": " The end.", "prompt": " there"}
        ids = [BOS, PRE] + self.tokens("Once upon a time") + self.tokens(" there", True) + [SUF] + \
            self.tokens(" The end.") + [MID]
        out = self.check_layout(body, ids)
        self.assertEqual(set(out), RESPONSE_KEYS)
        self.assertIs(out["stop"], True)
        self.assertEqual(out["stop_type"], "limit")
        self.assertEqual(out["timings"]["predicted_n"], 6)
        self.assertEqual(out["id_slot"], -1)

    def test_extra_files_without_file_separator(self):
        body = {"input_prefix": "Lily", "input_suffix": "", "input_extra": [{"filename": "a.txt", "text": "Tom ran"}]}
        ids = self.tokens("\n\n--- snippet ---\n\n") + self.tokens("Tom ran") + [BOS, PRE] + self.tokens("Lily") + [SUF, MID]
        self.check_layout(body, ids)

    def test_stream_events(self):
        status, headers, raw = self.daemon.curl(BASE + "/infill", data={
            "input_prefix": "Once upon a time", "input_suffix": "", "n_predict": 8, "temperature": 0, "ignore_eos": True,
            "stream": True})
        self.assertEqual(status, 200, raw)
        self.assertIn("text/event-stream", headers)
        events = sse_events(raw)
        self.assertNotIn("[DONE]", events)
        chunks = [json.loads(e) for e in events]
        *parts, last = chunks
        self.assertTrue(parts)
        for part in parts:
            self.assertEqual(set(part), {"index", "content", "tokens", "stop", "id_slot"})
            self.assertIs(part["stop"], False)
        self.assertIs(last["stop"], True)
        self.assertEqual(last["content"], "")
        self.assertEqual(last["tokens_predicted"], 8)
        whole = self.infill({"input_prefix": "Once upon a time", "input_suffix": "", "n_predict": 8, "temperature": 0,
                             "ignore_eos": True})
        self.assertEqual("".join(p["content"] for p in parts), whole["content"])

    def test_llama_vim_request_and_response_fields(self):
        out = self.infill({
            "input_prefix": "Once upon a time\n", "input_suffix": "\n", "prompt": "there",
            "input_extra": [{"text": "Lily liked cats\n", "time": [1, 2], "filename": "notes.txt"}],
            "n_predict": 4, "n_indent": 0, "top_k": 40, "top_p": 0.9, "stream": False,
            "samplers": ["top_k", "top_p", "infill"], "cache_prompt": True, "t_max_prompt_ms": 500,
            "t_max_predict_ms": 1000,
            "response_fields": ["content", "timings/prompt_n", "timings/predicted_n", "truncated", "tokens_cached"]})
        self.assertEqual(set(out), {"content", "timings/prompt_n", "timings/predicted_n", "truncated", "tokens_cached"})
        self.assertLessEqual(out["timings/predicted_n"], 4)

    def test_n_predict_zero_evaluates_the_prompt_only(self):
        story = " Once upon a time there was a little girl named Lily who loved to play in the park." * 4
        body = {"input_prefix": story, "input_suffix": "", "n_predict": 0}
        out = self.infill(body)
        self.assertEqual(out["content"], "")
        self.assertEqual(out["tokens_predicted"], 0)
        again = self.infill(dict(body, n_predict=2, temperature=0))
        self.assertGreaterEqual(again["tokens_cached"], 16)  # the prompt's whole KV blocks came from the prefix cache

    def test_errors_name_the_field(self):
        cases = [({"input_suffix": ""}, "input_prefix"),
                 ({"input_prefix": ""}, "input_suffix"),
                 ({"input_prefix": "", "input_suffix": "", "input_extra": {}}, "input_extra"),
                 ({"input_prefix": "", "input_suffix": "", "input_extra": [{"filename": "x"}]}, "input_extra[0].text"),
                 ({"input_prefix": "", "input_suffix": "", "input_extra": [{"text": 1}]}, "input_extra[0].text"),
                 ({"input_prefix": 1, "input_suffix": ""}, "input_prefix"),
                 ({"input_prefix": "", "input_suffix": "", "prompt": 3}, "prompt"),
                 ({"input_prefix": "", "input_suffix": "", "n_predict": -2}, "n_predict"),
                 ({"input_prefix": "", "input_suffix": "", "session": "s"}, "session"),
                 ({"input_prefix": "", "input_suffix": "", "bogus": 1}, "bogus")]
        for body, field in cases:
            status, out = self.post("/infill", body)
            self.assertEqual(status, 400, (body, out))
            self.assertEqual(json.loads(out)["error"]["param"], field, out)
        status, headers, out = self.daemon.curl(BASE + "/infill")
        self.assertEqual(status, 405, out)
        self.assertIn("Allow: POST", headers)


class RepoLevelInfillTest(InfillCase):
    KEYS = REPO

    def test_repo_and_file_separators(self):
        body = {"input_prefix": "Lily", "input_suffix": "cat", "input_extra": [{"filename": "a.txt", "text": "Tom"}, {"text": "Sue"}]}
        extra = [REP] + self.tokens("myproject\n") + [SEP] + self.tokens("a.txt\n") + self.tokens("Tom") + \
            [SEP] + self.tokens("tmp\n") + self.tokens("Sue") + [SEP] + self.tokens("filename\n")
        self.check_layout(body, extra + [BOS, PRE] + self.tokens("Lily") + [SUF] + self.tokens("cat") + [MID])


class NoFimTest(unittest.TestCase):
    def test_model_without_fim_tokens_is_a_400(self):
        with Daemon() as daemon:
            status, _, out = daemon.curl(BASE + "/infill", data={"input_prefix": "a", "input_suffix": "b"})
            self.assertEqual(status, 400, out)
            error = json.loads(out)["error"]
            self.assertIn("Infill is not supported by this model: prefix token is missing.", error["message"])
            self.assertEqual(error["type"], "invalid_request_error")
            daemon.assert_serving(self)


if __name__ == "__main__":
    unittest.main()
