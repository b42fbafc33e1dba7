#!/usr/bin/env python3
"""tests/integration/daemon_http_test.py — HTTP/1.1 on stratad's socket, with
`curl --unix-socket` and http.client: /health, /metrics (Prometheus text), /v1/models,
OpenAI completions and chat completions, plain and streamed (SSE), the shapes an OpenAI
client library relies on, keep-alive, error statuses (400, 404, 405, 413, 429, 503),
and a streaming client that leaves."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, TIMEOUT, Daemon, DaemonTestCase, sse_events  # noqa: E402

BODY_LIMIT = 64 * 1024
CONFIG = f"""[server]
max_request_bytes = {BODY_LIMIT}
[limits]
max_queued = 4
max_running_per_user = 64
"""
BASE = "http://localhost"


# The fields and types an OpenAI client library reads (openai-python's models).
def check_usage(test, usage):
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        test.assertIsInstance(usage[key], int)
    test.assertEqual(usage["total_tokens"], usage["prompt_tokens"] + usage["completion_tokens"])
    test.assertIsInstance(usage["prompt_tokens_details"]["cached_tokens"], int)


def prometheus_values(test, text):
    """{series: value} of a Prometheus text exposition, every line checked; a series with
    labels is keyed as written ('name{label="v"}')."""
    values = {}
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            test.assertRegex(line, r"^# (HELP \w+ .+|TYPE \w+ (counter|gauge|histogram))$")
            continue
        test.assertRegex(line, r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+-]+$')
        name, value = line.rsplit(" ", 1)
        values[name] = float(value)
    return values


def check_envelope(test, obj, object_name, id_prefix):
    test.assertTrue(obj["id"].startswith(id_prefix), obj["id"])
    test.assertEqual(obj["object"], object_name)
    test.assertIsInstance(obj["created"], int)
    test.assertAlmostEqual(obj["created"], time.time(), delta=300)
    test.assertIsInstance(obj["model"], str)
    test.assertIsInstance(obj["choices"], list)


def check_completion(test, obj):
    check_envelope(test, obj, "text_completion", "cmpl-")
    choice = obj["choices"][0]
    test.assertEqual(choice["index"], 0)
    test.assertIsInstance(choice["text"], str)
    test.assertIn(choice["finish_reason"], ("stop", "length"))
    test.assertIn("logprobs", choice)
    check_usage(test, obj["usage"])


def check_chat_completion(test, obj):
    check_envelope(test, obj, "chat.completion", "chatcmpl-")
    choice = obj["choices"][0]
    test.assertEqual(choice["index"], 0)
    test.assertEqual(choice["message"]["role"], "assistant")
    test.assertIsInstance(choice["message"]["content"], str)
    test.assertIn(choice["finish_reason"], ("stop", "length"))
    check_usage(test, obj["usage"])


def check_error(test, body, code, param=None):
    error = json.loads(body)["error"]
    test.assertIsInstance(error["message"], str)
    test.assertTrue(error["message"])
    test.assertIsInstance(error["type"], str)
    test.assertEqual(error["code"], code)
    if param is not None:
        test.assertEqual(error["param"], param)


class HttpTest(DaemonTestCase):
    CONFIG = CONFIG

    def tearDown(self):
        self.daemon.wait_idle()
        self.daemon.assert_serving(self)

    def curl(self, *args, data=None):
        return self.daemon.curl(*args, data=data)

    def test_health(self):
        status, head, body = self.curl(BASE + "/health")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["status"], "ok")
        self.assertIn("application/json", head.lower())
        connection = self.daemon.http()
        connection.request("HEAD", "/health")
        response = connection.getresponse()
        self.assertEqual((response.status, response.read()), (200, b""))
        self.assertEqual(int(response.getheader("Content-Length")), len(body))
        connection.close()

    def test_metrics_are_prometheus_text(self):
        self.curl(BASE + "/v1/completions", data={"prompt": "Once", "max_tokens": 3})
        status, head, body = self.curl(BASE + "/metrics")
        self.assertEqual(status, 200)
        self.assertIn("text/plain; version=0.0.4", head)
        values = prometheus_values(self, body.decode())
        for name in ("strata_requests_total", "strata_completion_tokens_total", "strata_prompt_tokens_total",
                     "strata_generate_tokens_per_second", "strata_requests_queued", "strata_requests_running",
                     "strata_sessions", "strata_kv_cache_bytes", "strata_resident_memory_bytes",
                     "strata_connections", "strata_http_requests_total"):
            self.assertIn(name, values)
        self.assertGreaterEqual(values["strata_completion_tokens_total"], 3)
        self.assertGreater(values["strata_resident_memory_bytes"], 0)
        self.assertGreaterEqual(values['strata_request_duration_seconds_count{endpoint="completions"}'], 1)

    def test_one_model_by_id(self):
        _, _, body = self.curl(BASE + "/v1/models")
        listed = json.loads(body)["data"][0]
        status, _, body = self.curl(BASE + "/v1/models/" + listed["id"])
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body), listed)
        status, _, body = self.curl(BASE + "/v1/models/gpt-17")
        self.assertEqual(status, 404)
        error = json.loads(body)["error"]
        self.assertEqual(error["code"], "model_not_found")
        self.assertIn("gpt-17", error["message"])
        status, head, _ = self.curl("-X", "POST", BASE + "/v1/models/" + listed["id"])
        self.assertEqual(status, 405)
        self.assertIn("Allow: GET, HEAD", head)

    def test_tokenize_and_detokenize(self):
        status, _, body = self.curl(BASE + "/tokenize", data={"content": "Once upon a time"})
        self.assertEqual(status, 200, body)
        tokens = json.loads(body)["tokens"]
        with self.daemon.client() as c:
            self.assertEqual(c.call("tokenize", {"text": "Once upon a time"})["result"]["tokens"], tokens)
        self.assertEqual(tokens[0], 1)  # BOS, unless add_special is false
        status, _, body = self.curl(BASE + "/tokenize", data={"content": "Once upon a time", "add_special": False})
        self.assertEqual(json.loads(body)["tokens"], tokens[1:])
        status, _, body = self.curl(BASE + "/detokenize", data={"tokens": tokens[1:]})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["content"].strip(), "Once upon a time")
        # Bad input names what is wrong.
        for path, data, field in (("/tokenize", {"text": "x"}, "text"), ("/tokenize", {}, "content"),
                                  ("/detokenize", {"tokens": [1, 99999]}, "tokens[1]"),
                                  ("/detokenize", {"tokens": "1 2"}, "tokens")):
            status, _, body = self.curl(BASE + path, data=data)
            self.assertEqual(status, 400, (path, data, body))
            self.assertIn(field, json.loads(body)["error"]["message"] + json.loads(body)["error"].get("param", ""))

    def test_models(self):
        status, _, body = self.curl(BASE + "/v1/models")
        self.assertEqual(status, 200)
        models = json.loads(body)
        self.assertEqual(models["object"], "list")
        self.assertEqual(len(models["data"]), 1)
        model = models["data"][0]
        self.assertEqual(model["object"], "model")
        self.assertIsInstance(model["id"], str)
        self.assertIsInstance(model["created"], int)
        self.assertIsInstance(model["owned_by"], str)

    def test_completion_and_its_stream_agree(self):
        request = {"model": "anything", "prompt": "Once upon a time", "max_tokens": 16, "temperature": 0}
        status, _, body = self.curl(BASE + "/v1/completions", data=request)
        self.assertEqual(status, 200, body)
        completion = json.loads(body)
        check_completion(self, completion)
        self.assertEqual(completion["usage"]["completion_tokens"], 16)
        self.assertEqual(completion["choices"][0]["finish_reason"], "length")
        status, head, body = self.curl("-N", BASE + "/v1/completions", data=dict(request, stream=True))
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", head)
        self.assertIn("transfer-encoding: chunked", head.lower())
        events = sse_events(body)
        self.assertEqual(events[-1], "[DONE]")
        chunks = [json.loads(e) for e in events[:-1]]
        for chunk in chunks:
            check_envelope(self, chunk, "text_completion", "cmpl-")
            self.assertEqual(chunk["id"], chunks[0]["id"])
        self.assertGreater(len(chunks), 2)
        self.assertEqual("".join(c["choices"][0]["text"] for c in chunks), completion["choices"][0]["text"])
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "length")
        self.assertIsNone(chunks[0]["choices"][0]["finish_reason"])

    def test_chat_completion_and_its_stream(self):
        request = {"model": "gpt-4o-mini", "chat_template": "plain", "max_tokens": 8, "temperature": 0,
                   "messages": [{"role": "system", "content": "Tell a story."},
                                {"role": "user", "content": [{"type": "text", "text": "Hello"}]}]}
        status, _, body = self.curl(BASE + "/v1/chat/completions", data=request)
        self.assertEqual(status, 200, body)
        completion = json.loads(body)
        check_chat_completion(self, completion)
        status, _, body = self.curl("-N", BASE + "/v1/chat/completions",
                                    data=dict(request, stream=True, stream_options={"include_usage": True}))
        events = sse_events(body)
        self.assertEqual(events[-1], "[DONE]")
        chunks = [json.loads(e) for e in events[:-1]]
        for chunk in chunks:
            check_envelope(self, chunk, "chat.completion.chunk", "chatcmpl-")
        self.assertEqual(chunks[0]["choices"][0]["delta"]["role"], "assistant")
        usage_chunk = chunks[-1]
        self.assertEqual(usage_chunk["choices"], [])
        check_usage(self, usage_chunk["usage"])
        self.assertEqual(chunks[-2]["choices"][0]["finish_reason"], "length")
        text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1])
        self.assertEqual(text, completion["choices"][0]["message"]["content"])

    def test_chat_completion_with_the_models_own_template(self):
        """A fresh install answers /v1/chat/completions: the bundled model's template formats it."""
        request = {"model": "strata", "max_tokens": 8, "temperature": 0,
                   "messages": [{"role": "user", "content": "Once upon a time"}]}
        status, _, body = self.curl(BASE + "/v1/chat/completions", data=request)
        self.assertEqual(status, 200, body)
        completion = json.loads(body)
        check_chat_completion(self, completion)
        self.assertTrue(completion["choices"][0]["message"]["content"])

    def test_a_stream_rejected_before_its_first_token_gets_a_status(self):
        status, head, body = self.curl(BASE + "/v1/completions",
                                       data={"prompt": "word " * 3000, "max_tokens": 2, "stream": True})
        self.assertEqual(status, 400)
        self.assertIn("application/json", head)
        check_error(self, body, "invalid_params", "prompt")

    def test_an_http_1_0_stream_ends_with_the_connection(self):
        status, head, body = self.curl("--http1.0", BASE + "/v1/completions",
                                       data={"prompt": "Once", "max_tokens": 5, "stream": True})
        self.assertEqual(status, 200)
        self.assertNotIn("chunked", head.lower())
        events = sse_events(body)
        self.assertEqual(events[-1], "[DONE]")
        self.assertEqual(json.loads(events[-2])["choices"][0]["finish_reason"], "length")

    def test_session_extension_keeps_history(self):
        request = {"session": "web-1", "prompt": "Once upon a time", "max_tokens": 4, "temperature": 0}
        first = json.loads(self.curl(BASE + "/v1/completions", data=request)[2])
        second = json.loads(self.curl(BASE + "/v1/completions", data=dict(request, prompt=" and"))[2])
        self.assertGreaterEqual(second["usage"]["prompt_tokens_details"]["cached_tokens"],
                                first["usage"]["prompt_tokens"])
        with self.daemon.client() as c:
            c.call("session.delete", {"session": "web-1"})

    def test_keep_alive_and_expect_continue(self):
        status, head, body = self.curl(BASE + "/health", BASE + "/v1/models")
        self.assertEqual(status, 200)
        self.assertIn(b'"object":"list"', body)
        connection = self.daemon.http()
        for _ in range(3):
            connection.request("POST", "/v1/completions", json.dumps({"prompt": "a", "max_tokens": 2}),
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            self.assertEqual(response.status, 200)
            check_completion(self, json.loads(response.read()))
        connection.close()
        status, _, body = self.curl("-H", "Expect: 100-continue", BASE + "/v1/completions",
                                    data={"prompt": "a", "max_tokens": 2})
        self.assertEqual(status, 200, body)

    def test_error_statuses(self):
        status, _, body = self.curl(BASE + "/v1/completions", data={"prompt": "a", "max_tokens": "many"})
        self.assertEqual(status, 400)
        check_error(self, body, "invalid_params", "max_tokens")
        status, _, body = self.curl(BASE + "/v1/completions", data={"prompt": "a", "temperature": -1})
        self.assertEqual(status, 400)
        check_error(self, body, "invalid_params", "temperature")
        status, _, body = self.curl(BASE + "/v1/completions", data={"prompt": "a", "best_of": 3})
        self.assertEqual(status, 400)
        check_error(self, body, "invalid_params", "best_of")
        for extra, field in (({"audio": {"voice": "alloy", "format": "mp3"}}, "audio"), ({"modalities": ["text", "audio"]}, "modalities[1]"),
                             ({"prediction": {"type": "content", "content": "x"}}, "prediction"),
                             ({"service_tier": "flex"}, "service_tier"),
                             ({"store": True}, "store")):
            status, _, body = self.curl(BASE + "/v1/chat/completions", data=dict(extra, messages=[{"role": "user", "content": "a"}]))
            self.assertEqual(status, 400, body)
            check_error(self, body, "invalid_params", field)
        status, _, body = self.curl(BASE + "/v1/completions", data=b"{not json")
        self.assertEqual(status, 400)
        check_error(self, body, "parse_error")
        status, _, body = self.curl(BASE + "/v1/chat/completions", data={"messages": []})
        self.assertEqual(status, 400)
        status, _, body = self.curl(BASE + "/nowhere")
        self.assertEqual(status, 404)
        check_error(self, body, "method_not_found")
        status, head, body = self.curl(BASE + "/v1/completions")
        self.assertEqual(status, 405)
        self.assertIn("allow: post", head.lower())
        status, _, body = self.curl(BASE + "/v1/completions", data=b'{"prompt":"' + b"x" * BODY_LIMIT + b'"}')
        self.assertEqual(status, 413)
        status, _, body = self.curl(BASE + "/v1/completions", data={"prompt": "a", "max_tokens": 1})
        self.assertEqual(status, 200)

    def test_busy_is_429_at_once(self):
        with self.daemon.client() as c:
            ids = [c.send("generate", LONG) for _ in range(4)]  # limits.max_queued
            started = time.time()
            status, _, body = self.curl(BASE + "/v1/completions", data={"prompt": "a", "max_tokens": 2})
            self.assertEqual(status, 429)
            check_error(self, body, "busy")
            self.assertLess(time.time() - started, 10)
            for id in ids:
                c.send("cancel", {"id": id}, notification=True)
            for id in ids:
                c.wait(id)

    def test_session_names_are_per_user_over_http_too(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to run a client as another user")
        with self.daemon.client() as c:
            c.call("generate", {"session": "root-web", "prompt": "a", "max_tokens": 1})
            before = c.call("session.info", {"session": "root-web"})["result"]["tokens"]
        os.chmod(self.daemon.socket, 0o666)
        run = subprocess.run(["curl", "-sS", "--unix-socket", self.daemon.socket, "-w", "\n%{http_code}",
                              "-H", "Content-Type: application/json", "--data",
                              json.dumps({"session": "root-web", "prompt": "b", "max_tokens": 1}),
                              BASE + "/v1/completions"], user=65534, group=65534, extra_groups=[],
                             capture_output=True, timeout=TIMEOUT)
        body, _, code = run.stdout.decode().rpartition("\n")
        self.assertEqual(code, "200", run.stderr)  # nobody's own "root-web"
        with self.daemon.client() as c:
            self.assertEqual(c.call("session.info", {"session": "root-web"})["result"]["tokens"], before)
            c.call("session.delete", {"session": "root-web"})
            self.assertIn("result", c.call("session.delete", {"session": "root-web", "uid": 65534}))

    def test_a_streaming_client_that_leaves_is_cancelled(self):
        connection = self.daemon.http()
        connection.request("POST", "/v1/completions", json.dumps(dict(LONG, stream=True)),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        response.read1(100)
        connection.close()
        response.close()
        before = self.daemon.status()
        self.daemon.wait_idle(timeout=30)
        self.assertIn("HTTP client", self.daemon.log())
        self.assertLess(before["completion_tokens_total"], 10 ** 6)


class HttpShutdownTest(unittest.TestCase):
    def test_health_is_503_while_stopping(self):
        daemon = Daemon("[server]\nshutdown_grace = 30s\n").start()
        try:
            connection = daemon.http()
            connection.request("GET", "/health")
            response = connection.getresponse()
            self.assertEqual(response.status, 200)
            response.read()
            with daemon.client() as c:
                id = c.send("generate", LONG)
                c.read()  # a token: it runs
                daemon.signal(signal.SIGTERM)
                daemon.wait_for_log("stopping")
                connection.request("GET", "/health")
                response = connection.getresponse()
                self.assertEqual(response.status, 503)
                self.assertEqual(json.loads(response.read())["status"], "stopping")
                connection.request("POST", "/v1/completions", json.dumps({"prompt": "a"}),
                                   {"Content-Type": "application/json"})
                response = connection.getresponse()
                self.assertEqual(response.status, 503)
                check_error(self, response.read(), "shutting_down")
                c.send("cancel", {"id": id}, notification=True)
                self.assertEqual(c.wait(id)[0]["result"]["finish_reason"], "cancelled")
            connection.close()
            self.assertEqual(daemon.process.wait(TIMEOUT), 0)
        finally:
            daemon.stop()


if __name__ == "__main__":
    unittest.main()
