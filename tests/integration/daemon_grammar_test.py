#!/usr/bin/env python3
"""tests/integration/daemon_grammar_test.py — constrained output on the real daemon with
the bundled tiny model (512-token SentencePiece vocabulary with <0xNN> byte fallback):
`grammar` in the native generate params, OpenAI response_format json_object on both HTTP
endpoints, and bad grammars refused with the line and column."""
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import DaemonTestCase  # noqa: E402


class GrammarTest(DaemonTestCase):
    def generate(self, params):
        with self.daemon.client() as c:
            return c.generate(params)[0]

    def test_grammar_constrains_every_sample(self):
        grammar = 'root ::= [0-9]{3} "-" word ("," word){0,2}\nword ::= [a-zé]{2,5}'
        pattern = re.compile(r"[0-9]{3}-[a-zé]{2,5}(,[a-zé]{2,5}){0,2}")
        for seed in range(8):
            result = self.generate({"prompt": "Once upon a time", "grammar": grammar, "seed": seed,
                                    "temperature": 1.5, "top_k": 0, "top_p": 1, "min_p": 0,
                                    "max_tokens": 64, "stream": False})["result"]
            self.assertEqual(result["finish_reason"], "stop", result)
            self.assertRegex(result["text"], pattern)
            self.assertTrue(pattern.fullmatch(result["text"]), result["text"])

    def test_bad_grammar_is_invalid_params_with_position(self):
        error = self.generate({"prompt": "x", "grammar": 'root ::= "a"\nb ::= [x', "stream": False})["error"]
        self.assertEqual(error["data"]["type"], "invalid_params")
        self.assertIn("line 2 column", error["message"])
        error = self.generate({"prompt": "x", "grammar": 'root ::= nothing', "stream": False})["error"]
        self.assertIn("undefined rule 'nothing'", error["message"])

    def test_json_object_parses_on_both_endpoints(self):
        for path, body in (("/v1/chat/completions", {"messages": [{"role": "user", "content": "Give JSON"}]}),
                           ("/v1/completions", {"prompt": "Lily said"})):
            for seed in range(4):
                request = dict(body, response_format={"type": "json_object"}, seed=seed, max_tokens=400,
                               temperature=0.7)
                status, _, reply = self.daemon.curl("-X", "POST", "http://localhost" + path, data=request)
                self.assertEqual(status, 200, reply)
                choice = json.loads(reply)["choices"][0]
                text = choice["message"]["content"] if "message" in choice else choice["text"]
                if choice["finish_reason"] == "stop":
                    self.assertIsInstance(json.loads(text), dict, text)
                else:
                    self.assertTrue(text.startswith("{"), text)

    def test_unknown_response_format_is_400(self):
        status, _, reply = self.daemon.curl("-X", "POST", "http://localhost/v1/completions",
                                            data={"prompt": "x", "response_format": {"type": "yaml"}})
        self.assertEqual(status, 400, reply)
        self.assertIn("response_format", json.loads(reply)["error"]["message"])


if __name__ == "__main__":
    unittest.main()
