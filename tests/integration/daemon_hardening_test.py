#!/usr/bin/env python3
"""tests/integration/daemon_hardening_test.py — stratad against hostile clients and careless
admins (issue 11): idle sockets and the per-user connection cap (over the limit: an answer
at once, never a held descriptor), the request deadline (server.idle_timeout), private
state files whatever the umask, one daemon per state directory, per-user session names,
and per-user queueing with Retry-After."""
import json
import os
import socket
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, STRATAD, TIMEOUT, Daemon, as_user  # noqa: E402

NOBODY = 65534


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(TIMEOUT)
    s.connect(path)
    return s


def hold(daemon, count):
    """Connections that made one request and then sit idle (not closed by idle_timeout)."""
    held = [daemon.client() for _ in range(count)]
    for c in held:
        c.call("status")
    return held


def read_until_closed(s, timeout):
    """Everything the daemon sends until it closes the connection (TimeoutError if it does not)."""
    s.settimeout(timeout)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk


class ConnectionLimitsTest(unittest.TestCase):
    CONFIG = "[server]\nmax_connections = 8\nmax_connections_per_user = 4\nidle_timeout = 1s\n"

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(cls.CONFIG).start()
        os.chmod(cls.daemon.socket, 0o666)

    @classmethod
    def tearDownClass(cls):
        assert cls.daemon.stop() == 0, cls.daemon.log()

    def test_one_users_idle_sockets_do_not_lock_out_another(self):
        held = hold(self.daemon, 4)
        try:
            # A fifth of the same user is answered "busy" at once and closed...
            extra = connect(self.daemon.socket)
            reply = read_until_closed(extra, 5)
            extra.close()
            error = json.loads(reply.splitlines()[0])["error"]
            self.assertEqual(error["data"]["type"], "busy", error)
            self.assertIn("max_connections_per_user", error["message"])
            # Another user is served meanwhile.
            if os.geteuid() == 0:
                self.assertIn("result", as_user(NOBODY, NOBODY, self.daemon.socket, "status", {}))
        finally:
            for s in held:
                s.close()

    def test_over_the_limit_nothing_is_held_open(self):
        held = hold(self.daemon, 4)
        try:
            refused = [connect(self.daemon.socket) for _ in range(100)]
            for s in refused:
                self.assertIn(b"busy", read_until_closed(s, 5))
                s.close()
        finally:
            for s in held:
                s.close()

    def test_a_silent_connection_is_closed_after_idle_timeout(self):
        s = connect(self.daemon.socket)
        start = time.time()
        self.assertEqual(read_until_closed(s, 10), b"")
        self.assertGreater(time.time() - start, 0.8)
        s.close()

    def test_a_line_begun_must_be_finished_within_idle_timeout(self):
        s = connect(self.daemon.socket)
        s.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "sta')
        reply = read_until_closed(s, 10)
        s.close()
        error = json.loads(reply.splitlines()[0])["error"]
        self.assertIn("idle_timeout", error["message"])

    def test_a_slow_http_header_gets_408(self):
        s = connect(self.daemon.socket)
        s.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")
        reply = read_until_closed(s, 10)
        s.close()
        self.assertTrue(reply.startswith(b"HTTP/1.1 408"), reply)

    def test_a_native_client_may_wait_between_requests(self):
        with self.daemon.client() as c:
            self.assertIn("result", c.call("status"))
            time.sleep(1.5)  # an interactive chat: the user is typing
            self.assertIn("result", c.call("status"))


class ClearMessagesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon().start()

    @classmethod
    def tearDownClass(cls):
        assert cls.daemon.stop() == 0, cls.daemon.log()

    def test_max_tokens_written_with_an_exponent_is_out_of_range_not_fractional(self):
        with self.daemon.client() as c:
            error = c.call("generate", {"prompt": "a", "max_tokens": 1e12})["error"]
        self.assertEqual(error["data"]["field"], "max_tokens")
        self.assertIn("1000000000000 is out of range", error["message"])

    def test_a_request_that_is_not_utf8_is_named_so(self):
        with self.daemon.client() as c:
            c.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"tokenize","params":{"text":"caf\xe9"}}\n')
            error = c.read()["error"]
        self.assertEqual(error["code"], -32700, error)
        self.assertIn("not valid UTF-8: byte 0xE9 at offset 65", error["message"])

    def test_a_logit_bias_banning_every_token_is_an_invalid_parameter(self):
        with self.daemon.client() as c:
            n_vocab = c.call("model.info")["result"]["n_vocab"]
            error = c.call("generate", {"prompt": "a", "max_tokens": 2,
                                        "logit_bias": [[t, False] for t in range(n_vocab)]})["error"]
        self.assertEqual((error["code"], error["data"]["field"]), (-32602, "logit_bias"), error)
        self.assertIn("bans every one", error["message"])
        status, _, body = self.daemon.curl("http://localhost/v1/completions", data={
            "prompt": "a", "max_tokens": 2, "logit_bias": {str(t): "-inf" for t in range(n_vocab)}})
        self.assertEqual(status, 400, body)


class StateDirectoryTest(unittest.TestCase):
    def test_state_is_private_whatever_the_umask(self):
        daemon = Daemon()
        old = os.umask(0)  # the daemon inherits the most careless umask
        try:
            daemon.start()
        finally:
            os.umask(old)
        with daemon.client() as c:
            self.assertIn("result", c.call("generate", {"session": "secret", "prompt": "my password is",
                                                        "max_tokens": 2, "stream": False}))
        self.assertEqual(daemon.stop(), 0)  # writes the KV cache too
        self.assertEqual(stat.S_IMODE(os.stat(daemon.state_dir).st_mode), 0o700)
        names = sorted(os.listdir(daemon.state_dir))
        self.assertIn("0-secret.session", names)
        self.assertIn("0-secret.kv", names)
        for name in names:
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(daemon.state_dir, name)).st_mode), 0o600, name)

    def test_a_second_daemon_on_the_same_state_directory_exits_naming_the_first(self):
        first = Daemon().start()
        second = Daemon()  # its own socket, the first one's state directory
        second.state_dir = first.state_dir
        second.write_config("")
        second.launch()
        self.assertNotEqual(second.process.wait(TIMEOUT), 0)
        self.assertIn(f"in use by another stratad (pid {first.process.pid})", second.log())
        with first.client() as c:  # the first goes on
            self.assertIn("result", c.call("status"))
        self.assertEqual(first.stop(), 0)


class SessionNamespaceTest(unittest.TestCase):
    def test_two_users_each_have_their_own_session_of_one_name(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to run a client as another user")
        daemon = Daemon().start()
        os.chmod(daemon.socket, 0o666)
        with daemon.client() as c:
            self.assertIn("result", c.call("generate", {"session": "notes", "prompt": "Once upon", "max_tokens": 2}))
        theirs = as_user(NOBODY, NOBODY, daemon.socket, "generate",
                         {"session": "notes", "prompt": "The cat", "max_tokens": 3, "stream": False})
        self.assertIn("result", theirs)  # not "forbidden": nobody's "notes" is another session
        info = as_user(NOBODY, NOBODY, daemon.socket, "session.info", {"session": "notes"})["result"]
        self.assertEqual(info["uid"], NOBODY)
        self.assertTrue(info["text"].startswith("The cat"), info)
        with daemon.client() as c:
            mine = c.call("session.info", {"session": "notes"})["result"]
            self.assertTrue(mine["text"].startswith("Once upon"), mine)
            listed = sorted((s["name"], s["uid"]) for s in c.call("session.list")["result"]["sessions"])
            self.assertEqual(listed, [("notes", 0), ("notes", NOBODY)])
        self.assertEqual(daemon.stop(), 0)
        self.assertEqual(sorted(n for n in os.listdir(daemon.state_dir) if n.endswith(".session")),
                         ["0-notes.session", f"{NOBODY}-notes.session"])


class QueueingTest(unittest.TestCase):
    CONFIG = "[limits]\nmax_running_per_user = 1\nmax_queued = 2\n"

    def test_a_user_over_max_running_waits_in_the_queue(self):
        daemon = Daemon(self.CONFIG).start()
        with daemon.client() as c:
            first = c.send("generate", LONG)
            c.read()  # a token: it runs
            second = c.send("generate", {"prompt": "Once", "max_tokens": 3, "temperature": 0})
            deadline = time.time() + TIMEOUT
            while daemon.status()["requests_queued"] != 1:
                self.assertLess(time.time(), deadline)
                time.sleep(0.02)
            # The queue (running + queued) is full now: 429 with Retry-After.
            with daemon.client() as other:
                error = other.call("generate", {"prompt": "x", "max_tokens": 1})["error"]
            self.assertEqual((error["data"]["type"], error["data"]["retry_after"]), ("busy", 1), error)
            status, head, _ = daemon.curl("http://localhost/v1/completions", data={"prompt": "x", "max_tokens": 1})
            self.assertEqual(status, 429)
            self.assertIn("Retry-After: 1", head)
            c.send("cancel", {"id": first}, notification=True)
            self.assertEqual(c.wait(first)[0]["result"]["finish_reason"], "cancelled")
            reply, _ = c.wait(second)
            self.assertEqual(reply["result"]["usage"]["completion_tokens"], 3, reply)
        self.assertEqual(daemon.stop(), 0)


if __name__ == "__main__":
    unittest.main()
