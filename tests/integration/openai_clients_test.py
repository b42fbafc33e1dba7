#!/usr/bin/env python3
"""tests/integration/openai_clients_test.py — strata's OpenAI-style API driven by the client
libraries users have, on the real daemon's Unix socket: Python's httpx (Debian's
python3-httpx) speaking the OpenAI JSON, and the official OpenAI SDK for JavaScript (npm
`openai` with undici's socketPath; tests/clients/openai_sdk.mjs: chat, completions,
embeddings, and the Responses API's create, stream, previous_response_id and function tools). .ci/install-deps installs
both; a part whose library is absent is skipped with a message."""
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import SRC, TIMEOUT, DaemonTestCase  # noqa: E402

try:
    import httpx
except ImportError:
    httpx = None

CLIENTS = os.path.join(SRC, "tests", "clients")
NODE = shutil.which("node")
SDK_INSTALLED = os.path.isdir(os.path.join(CLIENTS, "node_modules", "openai"))


@unittest.skipIf(httpx is None, "python3-httpx is not installed (.ci/install-deps installs it)")
class HttpxTest(DaemonTestCase):
    def client(self):
        transport = httpx.HTTPTransport(uds=self.daemon.socket)
        return httpx.Client(transport=transport, base_url="http://localhost/v1", timeout=TIMEOUT)

    def test_chat_reply_has_the_openai_shape(self):
        with self.client() as http:
            reply = http.post("/chat/completions", json={
                "model": "default", "max_tokens": 5, "temperature": 0,
                "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})
        self.assertEqual(reply.status_code, 200, reply.text)
        self.assertEqual(reply.headers["content-type"].split(";")[0], "application/json")
        body = reply.json()
        self.assertEqual(body["object"], "chat.completion")
        self.assertEqual(body["choices"][0]["message"]["role"], "assistant")
        self.assertEqual(body["usage"]["completion_tokens"], 5)

    def test_streamed_chat_arrives_as_server_sent_events(self):
        request = {"model": "default", "max_tokens": 10, "temperature": 0, "stream": True,
                   "messages": [{"role": "user", "content": "Tell me a story"}]}
        text, finish, done = "", None, False
        with self.client() as http, http.stream("POST", "/chat/completions", json=request) as reply:
            self.assertEqual(reply.status_code, 200)
            self.assertEqual(reply.headers["content-type"].split(";")[0], "text/event-stream")
            for line in reply.iter_lines():
                line = line.rstrip("\r\n")  # Debian's httpx 0.23 keeps line ends
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    done = True
                    continue
                choice = json.loads(line[6:])["choices"][0]
                text += choice["delta"].get("content") or ""
                finish = choice.get("finish_reason") or finish
        self.assertTrue(done)
        self.assertEqual(finish, "length")
        with self.client() as http:
            whole = http.post("/chat/completions", json=dict(request, stream=False)).json()
        self.assertEqual(text, whole["choices"][0]["message"]["content"])

    def test_json_schema_reply_parses(self):
        schema = {"type": "object", "properties": {"word": {"type": "string", "maxLength": 8}},
                  "required": ["word"], "additionalProperties": False}
        with self.client() as http:
            reply = http.post("/chat/completions", json={
                "model": "default", "max_tokens": 100, "seed": 1,
                "messages": [{"role": "user", "content": "A word?"}],
                "response_format": {"type": "json_schema", "json_schema": {"name": "w", "schema": schema}}})
        self.assertEqual(reply.status_code, 200, reply.text)
        document = json.loads(reply.json()["choices"][0]["message"]["content"])
        self.assertEqual(list(document), ["word"])

    def test_a_named_tool_is_called(self):
        tools = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}]
        with self.client() as http:
            reply = http.post("/chat/completions", json={
                "model": "default", "max_tokens": 60, "seed": 1, "tools": tools,
                "tool_choice": {"type": "function", "function": {"name": "get_time"}},
                "messages": [{"role": "user", "content": "What time is it?"}]})
        self.assertEqual(reply.status_code, 200, reply.text)
        choice = reply.json()["choices"][0]
        self.assertEqual(choice["finish_reason"], "tool_calls")
        self.assertEqual(choice["message"]["tool_calls"][0]["function"]["name"], "get_time")
        self.assertEqual(json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]), {})

    def test_embeddings_are_unit_vectors(self):
        with self.client() as http:
            reply = http.post("/embeddings", json={"model": "default", "input": ["a cat", "a dog"]})
        self.assertEqual(reply.status_code, 200, reply.text)
        data = reply.json()["data"]
        self.assertEqual([d["index"] for d in data], [0, 1])
        for d in data:
            self.assertAlmostEqual(sum(x * x for x in d["embedding"]), 1.0, places=4)
        self.assertNotEqual(data[0]["embedding"], data[1]["embedding"])

    def test_bad_body_is_a_400_naming_the_field(self):
        with self.client() as http:
            reply = http.post("/chat/completions", json={"model": "default", "messages": "hello"})
        self.assertEqual(reply.status_code, 400)
        self.assertIn("messages", reply.json()["error"]["message"])


@unittest.skipIf(NODE is None or not SDK_INSTALLED,
                 "node or the npm openai SDK is missing (.ci/install-deps runs npm ci in tests/clients)")
class OpenAISdkTest(DaemonTestCase):
    def test_the_official_sdk_passes_every_check(self):
        run = subprocess.run([NODE, os.path.join(CLIENTS, "openai_sdk.mjs"), self.daemon.socket],
                             capture_output=True, text=True, timeout=TIMEOUT * 2)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr + self.daemon.log()[-3000:])
        self.assertNotIn("FAILED", run.stdout)


if __name__ == "__main__":
    unittest.main()
