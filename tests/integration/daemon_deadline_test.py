#!/usr/bin/env python3
"""tests/integration/daemon_deadline_test.py — per-request deadlines on the real daemon: the
`timeout` field of native `generate` and of the OpenAI endpoints (plain and streamed), a
request that runs out while still queued, limits.request_timeout as the default and the
cap (also changed live by SIGHUP), bad values named, and the client's --timeout (exit 6)."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, LONG, Daemon, DaemonTestCase, sse_events  # noqa: E402

STRATA = os.path.join(BUILD, "client", "strata")


def timed_generate(client, params):
    """(response, streamed texts, seconds from sending to the answer)."""
    start = time.monotonic()
    response, tokens = client.generate(params)
    return response, tokens, time.monotonic() - start


class RequestTimeout(DaemonTestCase):
    # One request of a user runs at a time, so a second one waits in the queue.
    CONFIG = "[limits]\nmax_running_per_user = 1\n"

    def test_a_running_generation_ends_with_finish_reason_timeout_and_keeps_its_text(self):
        with self.daemon.client() as c:
            response, tokens, seconds = timed_generate(c, dict(LONG, timeout=0.1))
        result = response["result"]
        self.assertEqual(result["finish_reason"], "timeout", result)
        self.assertGreater(result["usage"]["completion_tokens"], 0)
        self.assertLess(result["usage"]["completion_tokens"], LONG["max_tokens"])
        self.assertEqual(result["text"], "".join(tokens))
        self.assertGreaterEqual(seconds, 0.1)
        self.assertLess(seconds, 30)

    def test_a_request_still_queued_at_its_deadline_ends_without_running(self):
        with self.daemon.client() as c:
            blocker = c.send("generate", LONG)
            c.read()  # its first token: it runs
            response, tokens, seconds = timed_generate(c, {"prompt": "Once", "max_tokens": 8, "timeout": 0.25})
            result = response["result"]
            self.assertEqual(result["finish_reason"], "timeout", result)
            self.assertEqual(result["usage"]["completion_tokens"], 0)
            self.assertEqual(result["text"], "")
            self.assertEqual(tokens, [])
            self.assertGreaterEqual(result["timings"]["queued_ms"], 250)
            self.assertGreaterEqual(seconds, 0.25)
            c.send("cancel", {"id": blocker})
            self.assertEqual(c.wait(blocker)[0]["result"]["finish_reason"], "cancelled")
        self.daemon.assert_serving(self)

    def test_a_named_session_keeps_what_was_generated_before_the_deadline(self):
        with self.daemon.client() as c:
            response, _, _ = timed_generate(c, dict(LONG, session="deadline", timeout=0.2))
            self.assertEqual(response["result"]["finish_reason"], "timeout")
            info = c.call("session.info", {"session": "deadline"})["result"]
            self.assertEqual(info["tokens"], response["result"]["usage"]["prompt_tokens"] +
                             response["result"]["usage"]["completion_tokens"])
            c.call("session.delete", {"session": "deadline"})

    def test_a_generation_that_finishes_first_is_not_affected(self):
        with self.daemon.client() as c:
            response, _, _ = timed_generate(c, {"prompt": "Once", "max_tokens": 4, "timeout": 60, "stream": False})
        self.assertEqual(response["result"]["finish_reason"], "length")

    def test_bad_timeouts_are_refused_naming_the_field(self):
        with self.daemon.client() as c:
            for bad in (0, -1, "10", 1e9, True):
                error = c.call("generate", {"prompt": "Once", "timeout": bad})["error"]
                self.assertEqual(error["data"]["type"], "invalid_params", (bad, error))
                self.assertEqual(error["data"]["field"], "timeout", (bad, error))
        status, _, body = self.daemon.curl("http://localhost/v1/completions",
                                           data={"prompt": "Once", "timeout": -5})
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["param"], "timeout")

    def test_openai_endpoints_take_timeout_plain_and_streamed(self):
        body = {"messages": [{"role": "user", "content": "Once upon a time"}], "max_tokens": 2000,
                "ignore_eos": True, "timeout": 0.1}
        status, _, reply = self.daemon.curl("http://localhost/v1/chat/completions", data=body)
        self.assertEqual(status, 200, reply)
        choice = json.loads(reply)["choices"][0]
        self.assertEqual(choice["finish_reason"], "timeout")
        self.assertTrue(choice["message"]["content"])
        status, _, reply = self.daemon.curl("http://localhost/v1/completions",
                                            data={"prompt": "Once upon a time", "max_tokens": 2000,
                                                  "ignore_eos": True, "timeout": 0.1, "stream": True})
        self.assertEqual(status, 200, reply)
        events = sse_events(reply)
        self.assertEqual(events[-1], "[DONE]")
        self.assertEqual(json.loads(events[-2])["choices"][0]["finish_reason"], "timeout")

    def test_the_client_timeout_option_prints_the_text_and_exits_6(self):
        run = subprocess.run([STRATA, "--socket", self.daemon.socket, "--raw", "--timeout", "0.1", "-n", "2000",
                              "--temperature", "0", "Once upon a time"], stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 6, run.stderr)
        self.assertIn("deadline", run.stderr)
        self.assertTrue(run.stdout.strip())
        run = subprocess.run([STRATA, "--socket", self.daemon.socket, "--timeout", "0", "Once"],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("--timeout", run.stderr)


class ConfiguredRequestTimeout(unittest.TestCase):
    """limits.request_timeout: the deadline of requests without one, and the cap of theirs."""

    def test_the_configured_limit_applies_caps_and_reloads(self):
        daemon = Daemon("[limits]\nrequest_timeout = 100ms\n").start()
        try:
            with daemon.client() as c:
                for params in (LONG, dict(LONG, timeout=3600)):
                    response, _, seconds = timed_generate(c, params)
                    self.assertEqual(response["result"]["finish_reason"], "timeout", params)
                    self.assertLess(seconds, 60)
                shorter, _, _ = timed_generate(c, dict(LONG, timeout=0.05))
                self.assertEqual(shorter["result"]["finish_reason"], "timeout")
            daemon.write_config("[limits]\nrequest_timeout = 0\n")
            daemon.signal(signal.SIGHUP)
            daemon.wait_for_log("limits.request_timeout: 100ms -> 0s")
            with daemon.client() as c:
                response, _, _ = timed_generate(c, dict(LONG, max_tokens=600))
            self.assertEqual(response["result"]["finish_reason"], "length")
        finally:
            self.assertEqual(daemon.stop(), 0, daemon.log())


if __name__ == "__main__":
    unittest.main()
