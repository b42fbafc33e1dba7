#!/usr/bin/env python3
"""tests/integration/daemon_tools_test.py — OpenAI tool calling on the real daemon, with the
bundled tiny model carrying real chat templates (Qwen 2.5: <tool_call> tags; Llama 3.1: a
JSON object with "parameters"; put into a copy of the model by `strata-gguf template`):
tool_choice required and named give calls whose arguments validate against the tool's
schema (finish_reason tool_calls, content null), none gives text, the tools reach the
model's template, a conversation with an assistant's tool_calls and tool answers is
accepted, streamed calls reassemble to the same call as the whole answer, and bad tools,
tool_choice, tool messages and sessions are refused naming the field."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, MODEL, SRC, Daemon, sse_chunks, temporary_directory  # noqa: E402

try:
    import jsonschema
except ImportError:
    jsonschema = None

TEMPLATES = os.path.join(SRC, "tests", "data", "chat", "templates")
# Bounded values, so that the tiny model's calls always end within max_tokens.
WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}, "days": {"enum": [1, 2, 3, 7]}},
           "required": ["city"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather of a city", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "get_time", "description": "The time", "parameters": {"type": "object", "properties": {}}}}]
ASK = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}], "max_tokens": 120,
       "temperature": 0.7, "seed": 4, "tools": TOOLS}

# OpenAI's own example: a string property narrowed by an enum.
OPENAI_WEATHER = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a given location",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"]}}}


def model_with_template(name):
    out = os.path.join(temporary_directory(), "model.gguf")
    subprocess.run([os.path.join(BUILD, "client", "strata-gguf"), "template", os.path.join(TEMPLATES, name),
                    "--into", MODEL, "--out", out], check=True, capture_output=True)
    return out


class ToolsTest(unittest.TestCase):
    TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(model=model_with_template(cls.TEMPLATE)).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.daemon.stop() == 0, cls.daemon.log()

    def chat(self, body, status=200):
        code, _, reply = self.daemon.curl("-X", "POST", "http://localhost/v1/chat/completions", data=body)
        self.assertEqual(code, status, reply)
        return json.loads(reply) if not body.get("stream") or status != 200 else reply

    def check_call(self, call, name):
        self.assertTrue(call["id"].startswith("call_"), call)
        self.assertEqual(call["type"], "function")
        self.assertEqual(call["function"]["name"], name)
        arguments = json.loads(call["function"]["arguments"])
        if jsonschema is not None and name == "get_weather":
            jsonschema.validate(arguments, WEATHER)
        return arguments

    def test_a_required_call_validates_against_the_schema(self):
        for seed in range(3):
            choice = self.chat(dict(ASK, tool_choice="required", seed=seed))["choices"][0]
            self.assertEqual(choice["finish_reason"], "tool_calls", choice)
            self.assertIsNone(choice["message"]["content"])
            calls = choice["message"]["tool_calls"]
            self.assertEqual(len(calls), 1)
            self.assertIn(calls[0]["function"]["name"], ("get_weather", "get_time"))
            self.check_call(calls[0], calls[0]["function"]["name"])

    def test_a_named_function_is_the_one_called(self):
        choice = self.chat(dict(ASK, tool_choice={"type": "function", "function": {"name": "get_weather"}}))["choices"][0]
        self.assertIn("city", self.check_call(choice["message"]["tool_calls"][0], "get_weather"))

    def test_openai_weather_tool_with_a_typed_enum(self):
        units = []
        for seed in range(4):
            choice = self.chat(dict(ASK, tools=[OPENAI_WEATHER], seed=seed, max_tokens=200,
                                    tool_choice={"type": "function", "function": {"name": "get_current_weather"}}))["choices"][0]
            if choice["finish_reason"] != "tool_calls":
                continue
            arguments = json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"])
            if jsonschema is not None:
                jsonschema.validate(arguments, OPENAI_WEATHER["function"]["parameters"])
            units.append(arguments.get("unit"))
        self.assertTrue(set(units) & {"celsius", "fahrenheit"}, units)
        self.assertLessEqual(set(units), {"celsius", "fahrenheit", None}, units)

    def test_none_and_auto_answer_text_and_the_tools_reach_the_template(self):
        plain = self.chat({k: v for k, v in ASK.items() if k != "tools"})
        with_tools = self.chat(dict(ASK, tool_choice="auto"))
        none = self.chat(dict(ASK, tool_choice="none"))
        self.assertNotIn("tool_calls", none["choices"][0]["message"])
        self.assertIsInstance(none["choices"][0]["message"]["content"], str)
        # none leaves the tools out of the prompt; auto renders them (the template's tool section)
        self.assertEqual(none["usage"]["prompt_tokens"], plain["usage"]["prompt_tokens"])
        self.assertGreater(with_tools["usage"]["prompt_tokens"], plain["usage"]["prompt_tokens"] + 100)

    def test_a_tool_round_trip_is_accepted(self):
        first = self.chat(dict(ASK, tool_choice="required"))["choices"][0]["message"]
        messages = ASK["messages"] + [
            {"role": "assistant", "content": None, "tool_calls": first["tool_calls"]},
            {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "sunny, 21 C"}]
        reply = self.chat(dict(ASK, messages=messages, tool_choice="none", max_tokens=8))
        self.assertEqual(reply["choices"][0]["message"]["role"], "assistant")
        # the earlier turns are rendered: the prompt is longer than the question alone
        self.assertGreater(reply["usage"]["prompt_tokens"], self.chat(dict(ASK, tool_choice="none", max_tokens=8))["usage"]["prompt_tokens"] + 20)

    def test_streamed_calls_reassemble_to_the_answer(self):
        body = dict(ASK, tool_choice="required", seed=9)
        whole = self.chat(body)["choices"][0]["message"]["tool_calls"][0]
        calls, finish, content = {}, None, ""
        for chunk in sse_chunks(self.chat(dict(body, stream=True))):
            choice = chunk["choices"][0]
            content += choice["delta"].get("content") or ""
            for delta in choice["delta"].get("tool_calls", []):
                call = calls.setdefault(delta["index"], {"id": "", "name": "", "arguments": ""})
                call["id"] += delta.get("id", "")
                call["name"] += delta.get("function", {}).get("name", "")
                call["arguments"] += delta.get("function", {}).get("arguments", "")
            finish = choice["finish_reason"] or finish
        self.assertEqual(finish, "tool_calls")
        self.assertEqual(content, "")
        self.assertEqual(list(calls), [0])
        self.assertEqual(calls[0]["name"], whole["function"]["name"])
        self.assertEqual(json.loads(calls[0]["arguments"]), json.loads(whole["function"]["arguments"]))

    def test_bad_tool_requests_name_the_field(self):
        for body, field in ((dict(ASK, tools={}), "tools"),
                            (dict(ASK, tools=[{"type": "function", "function": {"description": "x"}}]), "tools[0].function.name"),
                            (dict(ASK, tool_choice="always"), "tool_choice"),
                            (dict(ASK, tool_choice={"type": "function", "function": {"name": "nope"}}), "tool_choice.function.name"),
                            (dict(ASK, tool_choice="required", response_format={"type": "json_object"}), "tool_choice"),
                            (dict(ASK, session="s1"), "session"),
                            (dict(ASK, messages=[{"role": "tool", "content": "x"}]), "messages[0].tool_call_id"),
                            (dict(ASK, messages=[{"role": "assistant", "tool_calls": [{"type": "function", "function": {
                                "name": "get_time", "arguments": "{not json"}}]}]), "messages[0].tool_calls[0].function.arguments")):
            reply = self.chat(body, status=400)
            self.assertEqual(reply["error"]["param"], field, reply)


class Llama3ToolsTest(ToolsTest):
    """The same with Llama 3.1's template: calls are a JSON object with "parameters"."""
    TEMPLATE = "meta-llama-Llama-3.1-8B-Instruct.jinja"


if __name__ == "__main__":
    unittest.main()
