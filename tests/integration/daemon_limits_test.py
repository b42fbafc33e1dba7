#!/usr/bin/env python3
"""tests/integration/daemon_limits_test.py — limits and bad input against the real
stratad, each case followed by a good request from another client: over-long lines,
JSON nested too deep, too many prompt tokens, max_tokens over the limit, sessions per
user, requests in flight per connection and in total (a "busy" error at once), every
numeric field out of range or mistyped, clients that disconnect mid-generation (their
work is cancelled), and a client that does not read (dropped without stalling others)."""
import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, DaemonTestCase  # noqa: E402

MAX_LINE = 64 * 1024
CONFIG = f"""[server]
max_request_bytes = {MAX_LINE}
max_json_depth = 16
max_requests_per_connection = 3
max_output_buffer = 64K
[limits]
max_prompt_tokens = 64
max_tokens = 2000
max_sessions_per_user = 3
max_queued = 6
max_running_per_user = 64
"""


class LimitsTest(DaemonTestCase):
    CONFIG = CONFIG

    def tearDown(self):
        self.daemon.wait_idle()
        self.daemon.assert_serving(self)

    def assert_error(self, reply, code, field=None):
        self.assertIn("error", reply, reply)
        self.assertEqual(reply["error"]["code"], code, reply)
        self.assertTrue(reply["error"]["message"])
        if field is not None:
            self.assertEqual(reply["error"]["data"].get("field"), field, reply)

    def test_a_line_over_the_limit_is_refused_and_the_connection_goes_on(self):
        with self.daemon.client() as c:
            c.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"tokenize","params":{"text":"' + b"x" * (5 * MAX_LINE))
            error = c.read()
            self.assert_error(error, -32600)
            self.assertIsNone(error["id"])
            self.assertIn(str(MAX_LINE), error["error"]["message"])
            c.send_raw(b"y" * MAX_LINE + b'"}}\n')  # the rest of that line is skipped
            self.assertIn("result", c.call("model.info"))
            # Exactly at the limit is fine.
            text = "a" * (MAX_LINE - 80)
            line = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tokenize", "params": {"text": text}}).encode()
            c.send_raw(line + b" " * (MAX_LINE - len(line)) + b"\n")
            self.assertIn("result", c.read())

    def test_json_nested_too_deep(self):
        with self.daemon.client() as c:
            deep = "[" * 40 + "]" * 40
            c.send_raw(('{"jsonrpc":"2.0","id":1,"method":"tokenize","params":{"text":"a","x":%s}}\n' % deep).encode())
            self.assert_error(c.read(), -32600)
            c.send_raw(b"[" * 100000 + b"\n")
            self.assert_error(c.read(), -32600)

    def test_too_many_prompt_tokens(self):
        with self.daemon.client() as c:
            reply, tokens = c.generate({"prompt": "the cat sat " * 100, "max_tokens": 4})
        self.assert_error(reply, -32602, "prompt")
        self.assertEqual(tokens, [])

    def test_max_tokens_over_the_limit(self):
        with self.daemon.client() as c:
            self.assert_error(c.generate({"prompt": "a", "max_tokens": 2001})[0], -32602, "max_tokens")

    def test_every_numeric_field_is_range_and_type_checked(self):
        # Values as JSON text: 1e999 is a JSON number too large for a double.
        cases = {
            "max_tokens": ["-1", "0", "2001", "2147483648", "9223372036854775808", "18446744073709551616",
                           "-9223372036854775809", "1e999", "3.5", '"12"', '"NaN"', "true", "[4]", "{}"],
            "temperature": ["-0.1", "101", "1e999", "-1e999", '"NaN"', '"inf"', "false", "[1]"],
            "top_k": ["-1", "2147483648", "2.5", '"40"'],
            "top_p": ["-0.01", "1.5", '"0.9"'],
            "min_p": ["-1", "2", "{}"],
            "typical_p": ["-1", "1.01", '"x"'],
            "repeat_penalty": ["0", "-1", "1000", '"1.1"'],
            "frequency_penalty": ["-101", "101", "true"],
            "presence_penalty": ["-1e300", "1e300", "[]"],
            "penalty_last_n": ["-2147483649", "2097152", "1.5", '"64"'],
            "min_keep": ["-1", "2097152", '"1"'],
            "seed": ["-1", "18446744073709551616", "1.5", '"7"', "false"],
        }
        with self.daemon.client() as c:
            for field, values in cases.items():
                for value in values:
                    id = c.next_id
                    c.next_id += 1
                    c.send_raw(('{"jsonrpc":"2.0","id":%d,"method":"generate","params":{"prompt":"a","%s":%s}}\n'
                                % (id, field, value)).encode())
                    reply, tokens = c.wait(id)
                    with self.subTest(field=field, value=value):
                        self.assert_error(reply, -32602, field)
                        self.assertIn(field, reply["error"]["message"])
                        self.assertEqual(tokens, [])

    def test_bad_logit_bias_and_stop(self):
        with self.daemon.client() as c:
            self.assert_error(c.generate({"prompt": "a", "logit_bias": {"99999": 1}})[0], -32602,
                              "logit_bias[0].token")
            self.assert_error(c.generate({"prompt": "a", "logit_bias": {"5": 1e6}})[0], -32602, "logit_bias[0].bias")
            self.assert_error(c.generate({"prompt": "a", "logit_bias": [[1, 2, 3]]})[0], -32602, "logit_bias[0]")
            self.assert_error(c.generate({"prompt": "a", "stop": [""]})[0], -32602, "stop[0]")
            self.assert_error(c.generate({"prompt": "a", "stop": ["x"] * 1000})[0], -32602, "stop")
            self.assert_error(c.generate({"prompt": "a", "session": "no spaces please"})[0], -32602, "session")
            self.assert_error(c.generate({"prompt": "a", "session": "s" * 65})[0], -32602, "session")
            ok = c.generate({"prompt": "a", "max_tokens": 3, "logit_bias": {"5": False}, "stream": False})[0]
            self.assertIn("result", ok)

    def test_sessions_per_user(self):
        with self.daemon.client() as c:
            for i in range(3):
                self.assertIn("result", c.generate({"session": f"lim{i}", "prompt": "a", "max_tokens": 1})[0])
            self.assert_error(c.generate({"session": "lim3", "prompt": "a", "max_tokens": 1})[0], -32003)
            for i in range(3):
                c.call("session.delete", {"session": f"lim{i}"})

    def test_a_busy_session(self):
        with self.daemon.client() as c:
            id = c.send("generate", dict(LONG, session="limbusy"))
            error = c.generate({"session": "limbusy", "prompt": "b", "max_tokens": 1})[0]
            self.assert_error(error, -32003)
            self.assert_error(c.call("session.delete", {"session": "limbusy"}), -32003)
            c.send("cancel", {"id": id}, notification=True)
            c.wait(id)
            self.assertIn("result", c.call("session.delete", {"session": "limbusy"}))

    def test_requests_in_flight_per_connection(self):
        with self.daemon.client() as c:
            ids = [c.send("generate", LONG) for _ in range(3)]
            started = time.time()
            error = c.generate(LONG)[0]
            self.assert_error(error, -32003)
            self.assertLess(time.time() - started, 10)
            self.assertIn("on this connection", error["error"]["message"])
            for id in ids:
                c.send("cancel", {"id": id}, notification=True)
            for id in ids:
                self.assertEqual(c.wait(id)[0]["result"]["finish_reason"], "cancelled")

    def test_requests_in_flight_in_total(self):
        clients = [self.daemon.client() for _ in range(3)]
        try:
            ids = [(c, c.send("generate", LONG)) for c in clients for _ in range(2)]  # 6 = limits.max_queued
            with self.daemon.client() as extra:
                started = time.time()
                self.assert_error(extra.generate(LONG)[0], -32003)
                self.assertLess(time.time() - started, 10)
            for c, id in ids:
                c.send("cancel", {"id": id}, notification=True)
            for c, id in ids:
                self.assertEqual(c.wait(id)[0]["result"]["finish_reason"], "cancelled")
        finally:
            for c in clients:
                c.close()

    def completion_tokens(self):
        return self.daemon.status()["completion_tokens_total"]

    def test_a_client_that_disconnects_has_its_work_cancelled(self):
        for stream in (True, False):
            with self.subTest(stream=stream):
                before = self.completion_tokens()
                c = self.daemon.client()
                c.send("generate", dict(LONG, stream=stream))
                if stream:
                    c.read()
                else:
                    self.wait_running(1)
                c.close()
                status = self.daemon.wait_idle(timeout=30)
                self.assertLess(status["completion_tokens_total"] - before, LONG["max_tokens"])
        self.assertIn("went away", self.daemon.log())

    def test_a_half_closed_client_that_then_leaves_is_cancelled(self):
        before = self.completion_tokens()
        c = self.daemon.client()
        c.send("generate", dict(LONG, stream=False))
        c.sock.shutdown(socket.SHUT_WR)
        self.wait_running(1)
        c.close()
        status = self.daemon.wait_idle(timeout=30)
        self.assertLess(status["completion_tokens_total"] - before, LONG["max_tokens"])
        self.assertIn("hung up", self.daemon.log())

    def wait_running(self, count):
        deadline = time.time() + 60
        while self.daemon.status()["requests_running"] < count:
            self.assertLess(time.time(), deadline)
            time.sleep(0.01)

    def test_a_client_that_does_not_read_is_dropped_without_stalling_others(self):
        slow = self.daemon.client()
        for _ in range(3):  # tokens pile up in the kernel's buffer, then in the daemon's
            slow.send("generate", LONG)
        # Meanwhile, others are served.
        self.daemon.assert_serving(self)
        self.daemon.wait_for_log("does not read its output", timeout=60)
        self.daemon.wait_idle(timeout=30)
        received = b""
        try:
            while True:
                chunk = slow.sock.recv(1 << 20)
                if not chunk:
                    break
                received += chunk
        except ConnectionResetError:
            pass
        slow.close()
        self.assertNotIn(b'"result"', received)  # no generation was let finish

    def test_a_client_that_floods_requests_waits_for_its_answers(self):
        with self.daemon.client() as c:
            text = "Once upon a time there was a cat. " * 1500
            line = json.dumps({"jsonrpc": "2.0", "method": "tokenize", "params": {"text": text[:MAX_LINE - 100]}})
            count = 60  # answers of ~8 MB in all, far more than the output buffer
            lines = b"".join(line.replace('"jsonrpc"', '"id":%d,"jsonrpc"' % id, 1).encode() + b"\n"
                             for id in range(count))
            writer = threading.Thread(target=c.send_raw, args=(lines,))
            writer.start()
            for id in range(count):
                self.assertEqual(c.read()["id"], id)
            writer.join()


if __name__ == "__main__":
    unittest.main()
