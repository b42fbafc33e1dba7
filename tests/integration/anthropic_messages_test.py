#!/usr/bin/env python3
"""tests/integration/anthropic_messages_test.py — Anthropic's Messages API on the real daemon:
POST /v1/messages and /v1/messages/count_tokens with raw HTTP (Debian's python3-httpx) on the
Unix socket — the reply's shape, stop reasons, text / tool_use / tool_result blocks, a
tool_choice that forces a call, streaming events in Anthropic's order, every error in
Anthropic's shape and status (400 naming the field, 401, 429, 529) — then on loopback TCP with
an API key (x-api-key or Authorization: Bearer) and with the official SDK for JavaScript (npm
`@anthropic-ai/sdk`, tests/clients/anthropic_sdk.mjs)."""
import json
import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, TIMEOUT, Daemon, DaemonTestCase, temporary_directory  # noqa: E402
from daemon_tcp_test import tcp_port  # noqa: E402
from openai_clients_test import CLIENTS, NODE, httpx  # noqa: E402

SDK_INSTALLED = os.path.isdir(os.path.join(CLIENTS, "node_modules", "@anthropic-ai", "sdk"))
KEY = "sk-ant-strata-0123456789abcdef"
VERSION = {"anthropic-version": "2023-06-01"}
TOOLS = [{"name": "get_time", "description": "The current time", "input_schema": {"type": "object", "properties": {}}}]
STORY = {"model": "stories260K", "temperature": 0, "messages": [{"role": "user", "content": "Once upon a time"}]}


def unix_client(daemon):
    return httpx.Client(transport=httpx.HTTPTransport(uds=daemon.socket), base_url="http://localhost",
                        headers=VERSION, timeout=TIMEOUT)


def events(reply):
    """The (event name, data) pairs of an Anthropic event stream; each data's type is its name."""
    out = []
    for block in reply.text.split("\n\n"):
        if block.strip():
            name_line, data_line = block.split("\n")
            assert name_line.startswith("event: ") and data_line.startswith("data: "), block
            name, data = name_line[7:], json.loads(data_line[6:])
            assert data["type"] == name, block
            out.append((name, data))
    return out


@unittest.skipIf(httpx is None, "python3-httpx is not installed (.ci/install-deps installs it)")
class MessagesOverHttp(DaemonTestCase):
    CONFIG = "[limits]\nmax_queued = 2\n"

    def post(self, body, path="/v1/messages"):
        with unix_client(self.daemon) as http:
            return http.post(path, json=body)

    def assert_error(self, body, status, error_type, field=None):
        reply = self.post(body)
        self.assertEqual(reply.status_code, status, reply.text)
        error = reply.json()
        self.assertEqual(error["type"], "error")
        self.assertEqual(error["error"]["type"], error_type)
        if field:
            self.assertIn(field, error["error"]["message"])

    def test_reply_has_anthropic_shape(self):
        reply = self.post({**STORY, "max_tokens": 5, "system": [{"type": "text", "text": "Be brief."}],
                           "metadata": {"user_id": "u"}})
        self.assertEqual(reply.status_code, 200, reply.text)
        body = reply.json()
        self.assertRegex(body["id"], r"^msg_[0-9a-f]{24}$")
        self.assertEqual((body["type"], body["role"], body["model"]), ("message", "assistant", "stories260K"))
        self.assertEqual([block["type"] for block in body["content"]], ["text"])
        self.assertEqual((body["stop_reason"], body["stop_sequence"]), ("max_tokens", None))
        usage = body["usage"]
        self.assertEqual(usage["output_tokens"], 5)
        self.assertGreater(usage["input_tokens"] + usage["cache_read_input_tokens"], 0)

    def test_a_stop_sequence_is_named(self):
        text = self.post({**STORY, "max_tokens": 30}).json()["content"][0]["text"]
        word = " " + text.split()[3]
        body = self.post({**STORY, "max_tokens": 30, "stop_sequences": ["never-there", word]}).json()
        self.assertEqual((body["stop_reason"], body["stop_sequence"]), ("stop_sequence", word))
        self.assertEqual(body["content"][0]["text"], text[:text.index(word)])

    def test_blocks_tool_turns_and_thinking_are_accepted(self):
        reply = self.post({"model": "m", "max_tokens": 3, "tools": TOOLS, "thinking": {"type": "enabled", "budget_tokens": 1024},
                           "system": "You tell stories.", "messages": [
                               {"role": "user", "content": [{"type": "text", "text": "What time is it?",
                                                             "cache_control": {"type": "ephemeral"}}]},
                               {"role": "assistant", "content": [
                                   {"type": "thinking", "thinking": "hm", "signature": "x"},
                                   {"type": "text", "text": "Let me look."},
                                   {"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}}]},
                               {"role": "user", "content": [
                                   {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "noon"}]},
                                   {"type": "text", "text": "Tell me a story."}]},
                               {"role": "system", "content": "It is a sunny day."}]})
        self.assertEqual(reply.status_code, 200, reply.text)
        self.assertNotIn("thinking", [block["type"] for block in reply.json()["content"]])

    def test_max_tokens_above_the_limit_is_lowered(self):
        reply = self.post({**STORY, "max_tokens": 32000, "stop_sequences": ["."]})
        self.assertEqual(reply.status_code, 200, reply.text)

    def test_a_named_tool_is_called(self):
        body = self.post({**STORY, "temperature": 1, "seed": 1, "max_tokens": 60, "tools": TOOLS,
                          "tool_choice": {"type": "tool", "name": "get_time"}}).json()
        self.assertEqual(body["stop_reason"], "tool_use", body)
        call = body["content"][-1]
        self.assertEqual((call["type"], call["name"], call["input"]), ("tool_use", "get_time", {}))
        self.assertRegex(call["id"], r"^toolu_")

    def test_stream_events_come_in_anthropic_order(self):
        with unix_client(self.daemon) as http:
            reply = http.post("/v1/messages", json={**STORY, "max_tokens": 10, "stream": True})
            whole = http.post("/v1/messages", json={**STORY, "max_tokens": 10}).json()
        self.assertEqual(reply.status_code, 200)
        self.assertEqual(reply.headers["content-type"], "text/event-stream")
        stream = events(reply)
        names = [name for name, _ in stream]
        self.assertEqual(names[:3], ["message_start", "ping", "content_block_start"])
        self.assertEqual(names[-3:], ["content_block_stop", "message_delta", "message_stop"])
        self.assertEqual(set(names[3:-3]), {"content_block_delta"})
        self.assertEqual(stream[0][1]["message"]["content"], [])
        self.assertEqual(stream[2][1]["content_block"], {"type": "text", "text": ""})
        text = "".join(data["delta"]["text"] for name, data in stream if name == "content_block_delta")
        self.assertEqual(text, whole["content"][0]["text"])
        delta = stream[-2][1]
        self.assertEqual(delta["delta"], {"stop_reason": "max_tokens", "stop_sequence": None})
        self.assertEqual(delta["usage"]["output_tokens"], 10)

    def test_a_streamed_tool_call_is_one_input_json_delta(self):
        with unix_client(self.daemon) as http:
            reply = http.post("/v1/messages", json={**STORY, "temperature": 1, "seed": 1, "max_tokens": 60, "stream": True,
                                                    "tools": TOOLS, "tool_choice": {"type": "any"}})
        stream = events(reply)
        start = next(data for name, data in stream if name == "content_block_start")
        self.assertEqual((start["content_block"]["type"], start["content_block"]["input"]), ("tool_use", {}))
        deltas = [data["delta"] for name, data in stream if name == "content_block_delta"]
        self.assertEqual(deltas, [{"type": "input_json_delta", "partial_json": "{}"}])
        self.assertEqual(stream[-2][1]["delta"]["stop_reason"], "tool_use")

    def test_tokens_are_counted_as_the_reply_counts_them(self):
        request = {"model": "m", "system": "Be brief.", "messages": [{"role": "user", "content": "Hi there"}]}
        counted = self.post(request, "/v1/messages/count_tokens")
        self.assertEqual(counted.status_code, 200, counted.text)
        usage = self.post({**request, "max_tokens": 1}).json()["usage"]
        self.assertEqual(counted.json(), {"input_tokens": usage["input_tokens"] + usage["cache_read_input_tokens"]})

    def test_bad_requests_are_400_naming_the_field(self):
        tool = {**STORY, "max_tokens": 4, "tools": TOOLS}
        for body, field in [
            ({"model": "m", "messages": STORY["messages"]}, "max_tokens"),
            ({"model": "m", "max_tokens": 4}, "messages"),
            ({"max_tokens": 4, "messages": STORY["messages"]}, "model"),
            ({**STORY, "max_tokens": 0}, "max_tokens"),
            ({**STORY, "max_tokens": 4, "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
            ({**STORY, "max_tokens": 4, "messages": [{"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}]}]},
             "messages[0].content[0].type"),
            ({**STORY, "max_tokens": 4, "system": [{"type": "document"}]}, "system[0].type"),
            ({**tool, "tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools[0].type"),
            ({**tool, "tools": [{"name": "get_time"}]}, "tools[0].input_schema"),
            ({**tool, "tool_choice": {"type": "tool", "name": "nope"}}, "tool_choice.name"),
            ({**tool, "tool_choice": {"type": "sometimes"}}, "tool_choice.type"),
            ({**STORY, "max_tokens": 4, "tool_choice": {"type": "any"}}, "tool_choice"),
            ({**STORY, "max_tokens": 4, "thinking": {"type": "deep"}}, "thinking.type"),
            ({**STORY, "max_tokens": 4, "stop_sequences": "x"}, "stop_sequences"),
            ({**STORY, "max_tokens": 4, "temperature": -1}, "temperature"),
        ]:
            with self.subTest(field=field):
                self.assert_error(body, 400, "invalid_request_error", field)

    def test_busy_is_429_rate_limit_error(self):
        with self.daemon.client() as c:
            ids = [c.send("generate", LONG) for _ in range(2)]  # limits.max_queued
            self.assert_error({**STORY, "max_tokens": 2}, 429, "rate_limit_error")
            for id in ids:
                c.send("cancel", {"id": id}, notification=True)
            for id in ids:
                c.wait(id)


@unittest.skipIf(httpx is None, "python3-httpx is not installed (.ci/install-deps installs it)")
class MessagesOverTcp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        keys = os.path.join(temporary_directory(), "api_keys")
        with open(keys, "w") as f:
            f.write(f"{KEY} claude\n")
        os.chmod(keys, 0o600)
        cls.daemon = Daemon(f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {keys}\nshutdown_grace = 60s\n").start()
        cls.port = tcp_port(cls.daemon)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def client(self, headers):
        return httpx.Client(base_url=f"http://127.0.0.1:{self.port}", headers={**VERSION, **headers}, timeout=TIMEOUT)

    def test_x_api_key_or_bearer_is_the_key(self):
        for headers in [{"x-api-key": KEY}, {"authorization": f"Bearer {KEY}"}]:
            with self.client(headers) as http:
                reply = http.post("/v1/messages?beta=true", json={**STORY, "max_tokens": 2})
            self.assertEqual(reply.status_code, 200, reply.text)

    def test_a_request_shaped_as_claude_codes_streams(self):
        # What Claude Code 2.1.332 sends (agent-clients.md), with short texts.
        body = {"model": "stories260K", "max_tokens": 32000, "stream": True,
                "thinking": {"type": "adaptive", "display": "omitted"},
                "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
                "output_config": {"effort": "high"}, "metadata": {"user_id": "user_1"},
                "system": [{"type": "text", "text": "x-anthropic-billing-header: cc"},
                           {"type": "text", "text": "You are a helpful assistant.", "cache_control": {"type": "ephemeral"}},
                           {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
                "tools": [{**TOOLS[0], "defer_loading": True}],
                "messages": [{"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"},
                                                          {"type": "text", "text": "Tell me a story about a cat."}]},
                             {"role": "system", "content": "Working directory: /tmp"}]}
        headers = {"x-api-key": KEY, "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14"}
        with self.client(headers) as http:
            reply = http.post("/v1/messages?beta=true", json={**body, "temperature": 0, "stop_sequences": ["."]})
        self.assertEqual(reply.status_code, 200, reply.text)
        self.assertEqual(events(reply)[-1][0], "message_stop")

    def test_no_or_a_wrong_key_is_401_authentication_error(self):
        for headers in [{}, {"x-api-key": "sk-not-a-key-0123456789"}]:
            with self.client(headers) as http:
                reply = http.post("/v1/messages", json={**STORY, "max_tokens": 2})
            self.assertEqual(reply.status_code, 401, reply.text)
            self.assertEqual(reply.json()["error"]["type"], "authentication_error")

    @unittest.skipIf(NODE is None or not SDK_INSTALLED,
                     "node or the npm @anthropic-ai/sdk is missing (.ci/install-deps runs npm ci in tests/clients)")
    def test_the_official_sdk_passes_every_check(self):
        run = subprocess.run([NODE, os.path.join(CLIENTS, "anthropic_sdk.mjs"), str(self.port), KEY],
                             capture_output=True, text=True, timeout=TIMEOUT * 2)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr + self.daemon.log()[-3000:])
        self.assertNotIn("FAILED", run.stdout)

    def test_z_stopping_is_529_overloaded_error(self):  # last: the daemon stops
        with self.client({"x-api-key": KEY}) as http, self.daemon.client() as c:
            self.assertEqual(http.post("/v1/messages", json={**STORY, "max_tokens": 1}).status_code, 200)
            running = c.send("generate", LONG)
            self.daemon.signal(signal.SIGTERM)
            self.daemon.wait_for_log("stopping")
            reply = http.post("/v1/messages", json={**STORY, "max_tokens": 1})
            self.assertEqual(reply.status_code, 529, reply.text)
            self.assertEqual(reply.json()["error"]["type"], "overloaded_error")
            c.send("cancel", {"id": running}, notification=True)
            c.wait(running)


if __name__ == "__main__":
    unittest.main()
