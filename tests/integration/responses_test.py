#!/usr/bin/env python3
"""tests/integration/responses_test.py — OpenAI's Responses API on the real daemon: POST
/v1/responses with raw HTTP (Debian's python3-httpx) on the Unix socket — the response object's
shape and usage, stored responses (GET, DELETE, store: false), previous_response_id continuing
a stored response with its prompt from the prefix cache (cached_tokens), a function tool round
trip, text.format json_schema / json_object, the streamed events in the Responses order with
their sequence numbers, every refusal a 400 invalid_request_error naming its `param` — then
stored responses across a restart and their expiry with limits.session_idle_timeout, and on
loopback TCP with an API key."""
import json
import os
import stat
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import TIMEOUT, Daemon, DaemonTestCase  # noqa: E402
from anthropic_messages_test import events  # noqa: E402  (the same event lines: event: TYPE, data: {"type": TYPE})
from daemon_tcp_test import keys_file, start  # noqa: E402
from openai_clients_test import httpx  # noqa: E402

KEY = "sk-strata-responses-0123456789"
OTHER_KEY = "sk-strata-responses-other-0123"  # another user's
STORY = {"model": "stories260K", "temperature": 0, "input": "Once upon a time"}
TOOLS = [{"type": "function", "name": "get_time", "description": "The current time",
          "parameters": {"type": "object", "properties": {}}}]
# A long first turn: its prompt fills whole KV blocks, which the prefix cache keeps.
LONG_INPUT = " ".join(["Once upon a time there was a little cat who liked to play in the garden."] * 12)


def unix_client(daemon):
    return httpx.Client(transport=httpx.HTTPTransport(uds=daemon.socket), base_url="http://localhost", timeout=TIMEOUT)


def output_text(response):
    return "".join(part["text"] for item in response["output"] if item["type"] == "message" for part in item["content"])


@unittest.skipIf(httpx is None, "python3-httpx is not installed (.ci/install-deps installs it)")
class ResponsesOverHttp(DaemonTestCase):
    def post(self, body):
        with unix_client(self.daemon) as http:
            return http.post("/v1/responses", json=body)

    def create(self, body):
        reply = self.post(body)
        self.assertEqual(reply.status_code, 200, reply.text)
        return reply.json()

    def assert_refused(self, body, param):
        reply = self.post(body)
        self.assertEqual(reply.status_code, 400, reply.text)
        error = reply.json()["error"]
        self.assertEqual((error["type"], error["param"]), ("invalid_request_error", param), error)

    def test_a_response_has_the_responses_shape(self):
        body = self.create({**STORY, "max_output_tokens": 5, "instructions": "Tell stories."})
        self.assertRegex(body["id"], r"^resp_[0-9a-f]{32}$")
        self.assertEqual((body["object"], body["model"], body["instructions"]), ("response", "stories260K", "Tell stories."))
        self.assertEqual((body["status"], body["incomplete_details"]), ("incomplete", {"reason": "max_output_tokens"}))
        [message] = body["output"]
        self.assertEqual((message["type"], message["role"], message["status"]), ("message", "assistant", "completed"))
        self.assertEqual([part["type"] for part in message["content"]], ["output_text"])
        usage = body["usage"]
        self.assertEqual(usage["output_tokens"], 5)
        self.assertGreater(usage["input_tokens"], 0)
        self.assertEqual(usage["total_tokens"], usage["input_tokens"] + usage["output_tokens"])
        self.assertIsInstance(usage["input_tokens_details"]["cached_tokens"], int)

    def test_items_and_content_parts_are_accepted(self):
        body = self.create({"temperature": 0, "max_output_tokens": 3, "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "Tell stories."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Once upon a time"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "there was a cat."}]},
            {"role": "user", "content": "And then?"}]})
        self.assertEqual(body["output"][0]["type"], "message")

    def test_a_stored_response_is_got_and_deleted(self):
        with unix_client(self.daemon) as http:
            body = http.post("/v1/responses", json={**STORY, "max_output_tokens": 3}).json()
            self.assertTrue(body["store"])
            got = http.get(f"/v1/responses/{body['id']}")
            self.assertEqual((got.status_code, got.json()), (200, body))
            deleted = http.delete(f"/v1/responses/{body['id']}")
            self.assertEqual(deleted.json(), {"id": body["id"], "object": "response", "deleted": True})
            for reply in [http.get(f"/v1/responses/{body['id']}"), http.delete(f"/v1/responses/{body['id']}")]:
                self.assertEqual(reply.status_code, 404, reply.text)
            unstored = http.post("/v1/responses", json={**STORY, "max_output_tokens": 3, "store": False}).json()
            self.assertEqual(http.get(f"/v1/responses/{unstored['id']}").status_code, 404)
            self.assertEqual(http.put(f"/v1/responses/{body['id']}").status_code, 405)

    def test_previous_response_id_continues_from_the_prefix_cache(self):
        first = self.create({**STORY, "input": LONG_INPUT, "max_output_tokens": 8})
        second = self.create({**STORY, "input": "What did the cat do next?", "previous_response_id": first["id"],
                              "max_output_tokens": 8})
        self.assertEqual(second["previous_response_id"], first["id"])
        self.assertGreater(second["usage"]["input_tokens"], first["usage"]["input_tokens"] + first["usage"]["output_tokens"])
        self.assertGreater(second["usage"]["input_tokens_details"]["cached_tokens"], first["usage"]["input_tokens"] // 2,
                           second["usage"])
        # The same as sending the whole conversation.
        whole = self.create({**STORY, "max_output_tokens": 8, "input": [
            {"role": "user", "content": LONG_INPUT}, *first["output"], {"role": "user", "content": "What did the cat do next?"}]})
        self.assertEqual(output_text(whole), output_text(second))
        self.assert_refused({**STORY, "previous_response_id": "resp_0123"}, "previous_response_id")

    def test_a_function_tool_round_trip(self):
        first = self.create({**STORY, "temperature": 1, "seed": 1, "max_output_tokens": 60, "tools": TOOLS,
                             "tool_choice": "required"})
        self.assertEqual(first["status"], "completed", first)
        [call] = first["output"]
        self.assertEqual((call["type"], call["name"], call["arguments"], call["status"]),
                         ("function_call", "get_time", "{}", "completed"))
        self.assertRegex(call["call_id"], r"^call_")
        answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "noon"}
        second = self.create({**STORY, "max_output_tokens": 5, "tools": TOOLS, "previous_response_id": first["id"],
                              "input": [answer]})
        self.assertEqual(second["output"][0]["type"], "message", second)
        named = self.create({**STORY, "temperature": 1, "seed": 2, "max_output_tokens": 60, "tools": TOOLS,
                             "tool_choice": {"type": "function", "name": "get_time"}, "parallel_tool_calls": False})
        self.assertEqual([item["name"] for item in named["output"]], ["get_time"])
        # The same turns sent whole, without a stored response.
        whole = self.create({**STORY, "max_output_tokens": 5, "tools": TOOLS, "store": False,
                             "input": [{"role": "user", "content": "What time is it?"}, call, answer]})
        self.assertEqual(whole["output"][0]["type"], "message")

    def test_text_format_json_schema_and_json_object(self):
        schema = {"type": "object", "properties": {"name": {"type": "string", "enum": ["Tom", "Lily"]},
                                                   "age": {"type": "integer", "enum": [1, 2, 3]}},
                  "required": ["name", "age"], "additionalProperties": False}
        body = self.create({**STORY, "temperature": 1, "seed": 3, "max_output_tokens": 60,
                            "text": {"format": {"type": "json_schema", "name": "cat", "schema": schema, "strict": True}}})
        value = json.loads(output_text(body))
        self.assertIn(value["name"], ["Tom", "Lily"])
        self.assertIn(value["age"], [1, 2, 3])
        self.assertEqual(body["text"]["format"]["name"], "cat")
        body = self.create({**STORY, "temperature": 1, "seed": 3, "max_output_tokens": 200,
                            "text": {"format": {"type": "json_object"}}})
        text = output_text(body)  # a JSON object, unless max_output_tokens cut it
        self.assertIsInstance(json.loads(text), dict) if body["status"] == "completed" else self.assertRegex(text, r"^\s*\{")

    def test_stream_events_come_in_the_responses_order(self):
        with unix_client(self.daemon) as http:
            reply = http.post("/v1/responses", json={**STORY, "max_output_tokens": 10, "stream": True, "store": False})
            whole = http.post("/v1/responses", json={**STORY, "max_output_tokens": 10, "store": False}).json()
        self.assertEqual((reply.status_code, reply.headers["content-type"]), (200, "text/event-stream"))
        stream = events(reply)
        names = [name for name, _ in stream]
        self.assertEqual(names[:4], ["response.created", "response.in_progress", "response.output_item.added",
                                     "response.content_part.added"])
        self.assertEqual(names[-4:], ["response.output_text.done", "response.content_part.done",
                                      "response.output_item.done", "response.incomplete"])
        self.assertEqual(set(names[4:-4]), {"response.output_text.delta"})
        self.assertEqual([data["sequence_number"] for _, data in stream], list(range(len(stream))))
        self.assertEqual(stream[0][1]["response"]["status"], "in_progress")
        text = "".join(data["delta"] for name, data in stream if name == "response.output_text.delta")
        self.assertEqual(text, output_text(whole))
        self.assertEqual(stream[-4][1]["text"], text)
        final = stream[-1][1]["response"]
        self.assertEqual((output_text(final), final["usage"]["output_tokens"]), (text, 10))
        # strata's `stop` extension ends it early: response.completed.
        stopped = events(self.post({**STORY, "max_output_tokens": 100, "stop": ["."], "stream": True}))
        self.assertEqual(stopped[-1][0], "response.completed")

    def test_a_streamed_function_call(self):
        stream = events(self.post({**STORY, "temperature": 1, "seed": 1, "max_output_tokens": 60, "stream": True,
                                   "tools": TOOLS, "tool_choice": "required"}))
        names = [name for name, _ in stream]
        self.assertEqual(names, ["response.created", "response.in_progress", "response.output_item.added",
                                 "response.function_call_arguments.delta", "response.function_call_arguments.done",
                                 "response.output_item.done", "response.completed"])
        self.assertEqual((stream[2][1]["item"]["type"], stream[2][1]["item"]["arguments"]), ("function_call", ""))
        self.assertEqual(stream[3][1]["delta"], "{}")
        self.assertEqual(stream[-1][1]["response"]["output"], [stream[-2][1]["item"]])
        with unix_client(self.daemon) as http:  # the streamed response is stored too
            self.assertEqual(http.get(f"/v1/responses/{stream[-1][1]['response']['id']}").json(), stream[-1][1]["response"])

    def test_refusals_are_400_naming_the_param(self):
        tool = {**STORY, "tools": TOOLS}
        for body, param in [
            ({"model": "m"}, "input"),
            ({**STORY, "input": []}, "input"),
            ({**STORY, "input": 3}, "input"),
            ({**STORY, "input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
            ({**STORY, "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
             "input[0].content[0].type"),
            ({**STORY, "input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{"}]},
             "input[0].arguments"),
            ({**STORY, "input": [{"type": "item_reference", "id": "x"}]}, "input[0].type"),
            ({**STORY, "tools": [{"type": "web_search"}]}, "tools[0].type"),
            ({**STORY, "tools": [{"type": "file_search", "vector_store_ids": []}]}, "tools[0].type"),
            ({**STORY, "tools": [{"type": "function"}]}, "tools[0].name"),
            ({**tool, "tools": TOOLS * 2}, "tools[1].name"),
            ({**tool, "tool_choice": {"type": "function", "name": "nope"}}, "tool_choice.name"),
            ({**tool, "tool_choice": "sometimes"}, "tool_choice"),
            ({**STORY, "tool_choice": "required"}, "tool_choice"),
            ({**STORY, "background": True}, "background"),
            ({**STORY, "conversation": "conv_1"}, "conversation"),
            ({**STORY, "text": {"format": {"type": "yaml"}}}, "text.format.type"),
            ({**STORY, "text": {"format": {"type": "json_schema", "name": "x"}}}, "text.format.schema"),
            ({**STORY, "max_output_tokens": 0}, "max_output_tokens"),
            ({**STORY, "temperature": -1}, "temperature"),
        ]:
            with self.subTest(param=param, body=body):
                self.assert_refused(body, param)
        self.daemon.assert_serving(self)


@unittest.skipIf(httpx is None, "python3-httpx is not installed (.ci/install-deps installs it)")
class StoredResponsesLast(unittest.TestCase):
    def test_stored_responses_survive_a_restart(self):
        with Daemon() as daemon:
            with unix_client(daemon) as http:
                body = http.post("/v1/responses", json={**STORY, "input": LONG_INPUT, "max_output_tokens": 4}).json()
            directory = os.path.join(daemon.state_dir, "responses")
            self.assertEqual(os.listdir(directory), [body["id"] + ".json"])
            self.assertEqual(stat.S_IMODE(os.stat(directory).st_mode), 0o700)
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(directory, body["id"] + ".json")).st_mode), 0o600)
            daemon.stop()
            daemon.start()
            with unix_client(daemon) as http:
                self.assertEqual(http.get(f"/v1/responses/{body['id']}").json(), body)
                more = http.post("/v1/responses", json={**STORY, "input": "And then?", "previous_response_id": body["id"],
                                                        "max_output_tokens": 4})
                self.assertEqual(more.status_code, 200, more.text)
                self.assertGreater(more.json()["usage"]["input_tokens"], body["usage"]["input_tokens"])

    def test_unused_responses_expire_with_the_session_idle_timeout(self):
        with Daemon("[limits]\nsession_idle_timeout = 2s\n") as daemon:
            with unix_client(daemon) as http:
                body = http.post("/v1/responses", json={**STORY, "max_output_tokens": 2}).json()
                self.assertEqual(http.get(f"/v1/responses/{body['id']}").status_code, 200)
                time.sleep(3)
                self.assertEqual(http.get(f"/v1/responses/{body['id']}").status_code, 404)
                reply = http.post("/v1/responses", json={**STORY, "previous_response_id": body["id"]})
                self.assertEqual((reply.status_code, reply.json()["error"]["param"]), (400, "previous_response_id"))
            self.assertEqual(os.listdir(os.path.join(daemon.state_dir, "responses")), [])


@unittest.skipIf(httpx is None, "python3-httpx is not installed (.ci/install-deps installs it)")
class ResponsesOverTcp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        keys = keys_file(f"{KEY} codex\n{OTHER_KEY} someone\n")
        cls.daemon, cls.port = start(f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {keys}\n")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def client(self, key=KEY):
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=f"http://127.0.0.1:{self.port}", headers=headers, timeout=TIMEOUT)

    def test_with_the_api_key_a_response_is_created_got_and_continued(self):
        with self.client() as http:
            body = http.post("/v1/responses", json={**STORY, "max_output_tokens": 3}).json()
            self.assertEqual(http.get(f"/v1/responses/{body['id']}").json(), body)
            more = http.post("/v1/responses", json={**STORY, "previous_response_id": body["id"], "max_output_tokens": 3})
            self.assertEqual(more.status_code, 200, more.text)
        # Another user's key finds no such response; no key gets 401.
        with self.client(OTHER_KEY) as http:
            for reply in [http.get(f"/v1/responses/{body['id']}"), http.delete(f"/v1/responses/{body['id']}")]:
                self.assertEqual(reply.status_code, 404, reply.text)
            reply = http.post("/v1/responses", json={**STORY, "previous_response_id": body["id"]})
            self.assertEqual((reply.status_code, reply.json()["error"]["param"]), (400, "previous_response_id"))
        with self.client(None) as http:
            self.assertEqual(http.get(f"/v1/responses/{body['id']}").status_code, 401)
            self.assertEqual(http.post("/v1/responses", json=STORY).status_code, 401)

    def test_a_request_shaped_as_codex_cli_streams(self):
        # What Codex CLI 0.171.0 sends (agent-clients.md), with short texts and one function tool.
        body = {"model": "stories260K", "stream": True, "store": False, "tool_choice": "auto", "parallel_tool_calls": True,
                "reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"],
                "prompt_cache_key": "0199", "client_metadata": {"x": "y"},
                "tools": [{**TOOLS[0], "strict": False}],
                "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
                          {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]},
                          {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Tell me a story."}]}],
                "temperature": 0, "stop": ["."]}
        with self.client() as http:
            reply = http.post("/v1/responses", json=body, headers={"accept": "text/event-stream", "originator": "codex_exec"})
        self.assertEqual(reply.status_code, 200, reply.text)
        self.assertEqual(events(reply)[-1][0], "response.completed")


if __name__ == "__main__":
    unittest.main()
