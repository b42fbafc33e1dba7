#!/usr/bin/env python3
"""tests/integration/reasoning_test.py — a reasoning model's thinking apart from its answer, on
the real daemon with the bundled tiny model carrying real templates (put in with `strata-gguf
template`): DeepSeek-R1's, whose generation prompt opens <think> (so the reply starts inside
thinking), and Qwen3's. A grammar makes the tiny model write a thinking part and an answer.
OpenAI chat completions: reasoning_content whole and streamed as deltas (the same text);
chat_template_kwargs {"enable_thinking": false} and reasoning_effort reach the template (they
were a 400); Anthropic messages: thinking blocks and thinking_delta events, thinking disabled;
OpenAI Responses: the reasoning output item, whole and streamed (response.reasoning_text.delta);
the native protocol: "reasoning" beside "text" in the result and the token notifications; the
`strata` client hides thinking unless --show-reasoning (then on standard error)."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, MODEL, SRC, Daemon, sse_chunks, temporary_directory  # noqa: E402

TEMPLATES = os.path.join(SRC, "tests", "data", "chat", "templates")
ASK = [{"role": "user", "content": "Say hi."}]
# The reply the grammar forces: a JSON string, thinking up to </think>, then the answer.
FORCED = {"type": "json_schema", "json_schema": {"name": "reply", "schema": {"enum": ["Hmm, a greeting.</think>Hi there."]}}}


def model_with_template(name):
    out = os.path.join(temporary_directory(), "model.gguf")
    subprocess.run([os.path.join(BUILD, "client", "strata-gguf"), "template", os.path.join(TEMPLATES, name),
                    "--into", MODEL, "--out", out], check=True, capture_output=True)
    return out


class DaemonWith:
    TEMPLATE = ""

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(model=model_with_template(cls.TEMPLATE)).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.daemon.stop() == 0, cls.daemon.log()

    def post(self, path, body, status=200):
        code, _, reply = self.daemon.curl("-X", "POST", "http://localhost" + path, data=body)
        self.assertEqual(code, status, reply)
        return reply if body.get("stream") else json.loads(reply)


class StartsInsideThinking(DaemonWith, unittest.TestCase):
    TEMPLATE = "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"

    def test_reasoning_content(self):
        reply = self.post("/v1/chat/completions", {"messages": ASK, "response_format": FORCED, "max_tokens": 60})
        message = reply["choices"][0]["message"]
        self.assertEqual(message["reasoning_content"], '"Hmm, a greeting.')
        self.assertEqual(message["content"], 'Hi there."')

    def test_reasoning_content_streamed_as_deltas(self):
        body = self.post("/v1/chat/completions", {"messages": ASK, "response_format": FORCED, "max_tokens": 60, "stream": True})
        deltas = [c["choices"][0]["delta"] for c in sse_chunks(body) if c["choices"]]
        reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
        content = "".join(d.get("content") or "" for d in deltas)
        self.assertEqual(reasoning, '"Hmm, a greeting.')
        self.assertEqual(content, 'Hi there."')
        self.assertGreater(sum(1 for d in deltas if "reasoning_content" in d), 1, "thinking streams in pieces")

    def test_responses_reasoning_item(self):
        ask = {"input": "Say hi.", "max_output_tokens": 60, "store": False,
               "text": {"format": dict(FORCED["json_schema"], type="json_schema")}}
        reply = self.post("/v1/responses", ask)
        kinds = [item["type"] for item in reply["output"]]
        self.assertEqual(kinds, ["reasoning", "message"], reply)
        self.assertEqual(reply["output"][0]["content"], [{"type": "reasoning_text", "text": '"Hmm, a greeting.'}])
        self.assertTrue(reply["output"][0]["id"].startswith("rs_"))
        self.assertEqual(reply["output"][1]["content"][0]["text"], 'Hi there."')
        body = self.post("/v1/responses", dict(ask, stream=True))
        events = [json.loads(line[6:]) for line in body.decode().split("\n") if line.startswith("data: ")]
        self.assertEqual([e["sequence_number"] for e in events], list(range(len(events))))
        types = [e["type"] for e in events]
        first_text = types.index("response.output_text.delta")
        self.assertLess(types.index("response.reasoning_text.done"), first_text, types)
        deltas = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_text.delta")
        self.assertEqual(deltas, '"Hmm, a greeting.')
        done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
        self.assertEqual([item["type"] for item in done], ["reasoning", "message"])
        self.assertEqual(events[-1]["type"], "response.completed")
        self.assertEqual(events[-1]["response"]["output"][0]["content"][0]["text"], '"Hmm, a greeting.')

    def test_anthropic_thinking_blocks(self):
        ask = {"model": "m", "max_tokens": 12, "messages": ASK, "temperature": 0}
        reply = self.post("/v1/messages", ask)
        self.assertEqual(reply["content"][0]["type"], "thinking", reply)
        thinking = reply["content"][0]["thinking"]
        self.assertTrue(thinking)
        self.assertEqual(reply["content"][0]["signature"], "")
        body = self.post("/v1/messages", dict(ask, stream=True))
        events = [json.loads(line[6:]) for line in body.decode().split("\n") if line.startswith("data: ")]
        starts = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
        self.assertEqual(starts[0], "thinking")
        streamed = "".join(e["delta"]["thinking"] for e in events if e["type"] == "content_block_delta"
                           and e["delta"]["type"] == "thinking_delta")
        self.assertEqual(streamed, thinking)
        hidden = self.post("/v1/messages", dict(ask, thinking={"type": "adaptive", "display": "omitted"}))
        self.assertNotIn("thinking", [b["type"] for b in hidden["content"]])
        bad = self.post("/v1/messages", dict(ask, thinking={"type": "sometimes"}), status=400)
        self.assertIn("thinking.type", bad["error"]["message"])

    def test_native_reasoning_field(self):
        grammar = 'root ::= "Hmm, a greeting." "</think>" "Hi there."'
        with self.daemon.client() as c:
            result, tokens = c.generate({"messages": ASK, "grammar": grammar, "max_tokens": 60, "stream": True})
            self.assertEqual(result["result"]["reasoning"], "Hmm, a greeting.")
            self.assertEqual(result["result"]["text"], "Hi there.")
            self.assertEqual("".join(tokens), "Hi there.")
            result, _ = c.generate({"messages": ASK, "grammar": grammar, "max_tokens": 60, "stream": False})
            self.assertEqual(result["result"]["reasoning"], "Hmm, a greeting.")
            # A raw prompt is not a chat reply: nothing is split.
            result, _ = c.generate({"prompt": "Once", "grammar": grammar, "max_tokens": 60, "stream": False})
            self.assertEqual(result["result"]["text"], "Hmm, a greeting.</think>Hi there.")
            self.assertNotIn("reasoning", result["result"])

    def test_thinking_stays_out_of_the_sessions_next_prompt(self):
        grammar = 'root ::= "Hmm, a greeting." "</think>" "Hi there."'
        again = [{"role": "user", "content": "And again?"}]
        with self.daemon.client() as c:
            first, _ = c.generate({"session": "thinker", "messages": ASK, "grammar": grammar, "max_tokens": 60, "stream": False})
            self.assertEqual(first["result"]["text"], "Hi there.")
            second, _ = c.generate({"session": "thinker", "messages": again, "max_tokens": 1, "stream": False})
            # The template renders an earlier reply without its thinking, as if it were the answer alone.
            whole, _ = c.generate({"messages": ASK + [{"role": "assistant", "content": "Hi there."}] + again,
                                   "max_tokens": 1, "stream": False})
            self.assertEqual(second["result"]["usage"]["prompt_tokens"], whole["result"]["usage"]["prompt_tokens"])

    def test_client_shows_reasoning_only_when_asked(self):
        strata = [os.path.join(BUILD, "client", "strata"), "--socket", self.daemon.socket, "-n", "8",
                  "--temperature", "0"]
        quiet = subprocess.run(strata + ["Say hi."], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        self.assertEqual(quiet.stdout.strip(), "")  # the whole reply is thinking: no answer yet
        self.assertEqual(quiet.stderr, "")
        shown = subprocess.run(strata + ["--show-reasoning", "Say hi."], capture_output=True, text=True,
                               stdin=subprocess.DEVNULL, timeout=60)
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertEqual(shown.stdout.strip(), "")
        self.assertTrue(shown.stderr.strip(), "the thinking is on standard error")
        self.assertNotIn("\033", shown.stderr)  # not a terminal: plain text


class Qwen3(DaemonWith, unittest.TestCase):
    TEMPLATE = "Qwen-Qwen3-0.6B.jinja"

    def test_think_block_in_the_reply(self):
        forced = {"type": "json_schema", "json_schema": {"name": "r", "schema": {"enum": ["<think>Pondering.</think>Done."]}}}
        reply = self.post("/v1/chat/completions", {"messages": ASK, "response_format": forced, "max_tokens": 80})
        message = reply["choices"][0]["message"]
        self.assertEqual(message["reasoning_content"], "Pondering.")
        self.assertEqual(message["content"], '"Done."')

    def test_chat_template_kwargs_and_reasoning_effort_reach_the_template(self):
        ask = {"messages": ASK, "max_tokens": 4, "temperature": 0}
        thinking = self.post("/v1/chat/completions", ask)["usage"]["prompt_tokens"]
        off = self.post("/v1/chat/completions", dict(ask, chat_template_kwargs={"enable_thinking": False}))
        # The template adds an empty <think></think> block to the generation prompt.
        self.assertGreater(off["usage"]["prompt_tokens"], thinking)
        self.assertNotIn("reasoning_content", off["choices"][0]["message"])
        self.post("/v1/chat/completions", dict(ask, reasoning_effort="low"))
        with self.daemon.client() as c:
            result, _ = c.generate({"messages": ASK, "max_tokens": 4, "stream": False,
                                    "chat_template_kwargs": {"enable_thinking": False}})
            self.assertEqual(result["result"]["usage"]["prompt_tokens"], off["usage"]["prompt_tokens"])
        anthropic = self.post("/v1/messages", {"model": "m", "max_tokens": 4, "messages": ASK, "thinking": {"type": "disabled"}})
        self.assertEqual(anthropic["usage"]["input_tokens"] + anthropic["usage"]["cache_read_input_tokens"],
                         off["usage"]["prompt_tokens"])
        bad = self.post("/v1/chat/completions", dict(ask, chat_template_kwargs=[1]), status=400)
        self.assertEqual(bad["error"]["param"], "chat_template_kwargs")


if __name__ == "__main__":
    unittest.main()
