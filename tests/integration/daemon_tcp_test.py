#!/usr/bin/env python3
"""tests/integration/daemon_tcp_test.py — the TCP listener of the real daemon: the HTTP API
on server.listen (IPv4 and IPv6) with curl, API keys (401 without a valid one, /health
open), each key's user owning its sessions and counted for its limits, X-Strata-Session,
the keys file's checks at start and on SIGHUP, TCP without keys only when configured, the
native protocol refused over TCP unless server.tcp_jsonrpc (then after authenticate), and
draining on SIGTERM (the listener closes, running requests finish, /health says 503)."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, LONG, TIMEOUT, Daemon, temporary_directory  # noqa: E402

STRATA = os.path.join(BUILD, "client", "strata")
ALICE, BOB = "sk-alice-0123456789abcdef", "sk-bob-0123456789abcdef"


def keys_file(text, mode=0o600):
    path = os.path.join(temporary_directory(), "api_keys")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def tcp_port(daemon):
    """The port the daemon's TCP listener got (server.listen asks for port 0), from its
    "serving ... and TCP" line (the start may have returned on an earlier line that says
    "serving TCP ... without API keys")."""
    deadline = time.time() + TIMEOUT
    while not (match := re.search(r" and TCP (\S+):(\d+)\n", daemon.log())) and time.time() < deadline:
        time.sleep(0.02)
    assert match, daemon.log()
    return int(match.group(2))


def curl(port, path, key=None, data=None, headers=(), host="127.0.0.1"):
    """curl over TCP; (status, headers text, body bytes)."""
    cmd = ["curl", "-sS", "-D", "-", "--max-time", str(TIMEOUT), f"http://{host}:{port}{path}"]
    if key:
        cmd += ["-H", f"Authorization: Bearer {key}"]
    for header in headers:
        cmd += ["-H", header]
    if data is not None:
        cmd += ["-H", "Content-Type: application/json", "--data-binary", json.dumps(data)]
    run = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT + 10)
    assert run.returncode == 0, run.stderr.decode()
    head, _, body = run.stdout.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), head.decode(), body


def chat(port, key, text, session=None, **extra):
    headers = [f"X-Strata-Session: {session}"] if session else []
    body = {"messages": [{"role": "user", "content": text}], "max_tokens": 4, "temperature": 0, **extra}
    return curl(port, "/v1/chat/completions", key, body, headers)


def start(config):
    daemon = Daemon(config).start()
    return daemon, tcp_port(daemon)


def native_line(port, lines, host="127.0.0.1", family=socket.AF_INET):
    """Sends JSON-RPC lines over TCP; the answers, one per line sent."""
    with socket.socket(family) as s:
        s.settimeout(TIMEOUT)
        s.connect((host, port))
        s.sendall(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        data = b""
        while data.count(b"\n") < len(lines):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


class TcpWithKeys(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.keys = keys_file(f"# who may use the TCP listener\n{ALICE} alice\n{BOB} bob\n")
        cls.daemon, cls.port = start(f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {cls.keys}\n"
                                     "[limits]\nmax_sessions_per_user = 2\n")

    @classmethod
    def tearDownClass(cls):
        assert cls.daemon.stop() == 0, cls.daemon.log()

    def test_every_path_but_health_needs_a_valid_key(self):
        status, _, body = curl(self.port, "/health")
        self.assertEqual(status, 200, body)
        for key in (None, "sk-nobody-0123456789abcdef", ALICE + "x"):
            status, head, body = curl(self.port, "/v1/models", key)
            self.assertEqual(status, 401, body)
            self.assertIn("WWW-Authenticate: Bearer", head)
            self.assertEqual(json.loads(body)["error"]["code"], "invalid_api_key")
        status, _, body = curl(self.port, "/v1/models", headers=[f"Authorization: Basic {ALICE}"])
        self.assertEqual(status, 401)
        self.assertIn("Bearer KEY", json.loads(body)["error"]["message"])
        for path in ("/v1/models", "/metrics"):
            status, _, _ = curl(self.port, path, BOB)
            self.assertEqual(status, 200, path)
        status, _, body = curl(self.port, "/v1/completions", ALICE, {"prompt": "Once", "max_tokens": 3})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["usage"]["completion_tokens"], 3)

    def test_sessions_belong_to_the_key_user_and_follow_the_header(self):
        status, _, body = chat(self.port, ALICE, "Once upon a time", session="story")
        self.assertEqual(status, 200, body)
        first = json.loads(body)["usage"]["prompt_tokens"]
        status, _, body = chat(self.port, ALICE, "and then", session="story")
        self.assertGreater(json.loads(body)["usage"]["prompt_tokens"], first)  # the conversation went on
        status, _, body = chat(self.port, BOB, "Once upon a time", session="story")
        self.assertEqual(json.loads(body)["usage"]["prompt_tokens"], first)  # bob's "story" is another session
        status, _, body = curl(self.port, "/v1/chat/completions", ALICE,
                               {"messages": [{"role": "user", "content": "x"}], "session": "other"},
                               ["X-Strata-Session: story"])
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["param"], "session")
        with self.daemon.client() as c:  # root on the Unix socket sees whose they are
            sessions = c.call("session.list")["result"]["sessions"]
        owners = sorted(s["user"] for s in sessions if s["name"] == "story")
        self.assertEqual(owners, ["alice", "bob"])
        run = subprocess.run([STRATA, "--socket", self.daemon.socket, "sessions"], capture_output=True, text=True,
                             timeout=60)
        self.assertIn("alice (API key)", run.stdout)
        for key in (ALICE, BOB):
            chat(self.port, key, "x", session="story", max_tokens=1)

    def test_limits_count_per_key_user(self):
        for name in ("one", "two"):
            status, _, body = chat(self.port, BOB, "Hi", session="limit-" + name)
            self.assertEqual(status, 200, body)
        status, _, body = chat(self.port, BOB, "Hi", session="limit-three")
        self.assertEqual(status, 429, body)  # limits.max_sessions_per_user = 2, for bob
        status, _, body = chat(self.port, ALICE, "Hi", session="limit-one")
        self.assertEqual(status, 200, body)  # alice has her own count
        with self.daemon.client() as c:
            for s in c.call("session.list")["result"]["sessions"]:
                if s["name"].startswith("limit-"):
                    c.call("session.delete", {"session": s["name"], "uid": s["uid"]})

    def test_the_native_protocol_is_refused_over_tcp(self):
        answers = native_line(self.port, [{"jsonrpc": "2.0", "id": 1, "method": "status"}])
        self.assertEqual(answers[0]["error"]["data"]["type"], "forbidden")
        self.assertIn("server.tcp_jsonrpc", answers[0]["error"]["message"])

    def test_sighup_rereads_the_keys_and_keeps_them_when_the_file_is_bad(self):
        carol = "sk-carol-0123456789abcdef"
        with open(self.keys, "a") as f:
            f.write(f"{carol} carol\n")
        self.daemon.signal(signal.SIGHUP)
        self.daemon.wait_for_log("reload: 3 API key(s)")
        self.assertEqual(curl(self.port, "/v1/models", carol)[0], 200)
        os.chmod(self.keys, 0o644)
        self.daemon.signal(signal.SIGHUP)
        self.daemon.wait_for_log("reload: the API keys in use stay")
        self.assertIn("is open to group or others (mode 0644)", self.daemon.log())
        self.assertEqual(curl(self.port, "/v1/models", carol)[0], 200)
        os.chmod(self.keys, 0o600)


class TcpConfiguration(unittest.TestCase):
    def refused_start(self, config):
        daemon = Daemon(config)
        code = daemon.launch().wait(TIMEOUT)
        self.assertEqual(code, 1, daemon.log())
        return daemon.log()

    def test_a_keys_file_open_to_others_stops_the_start(self):
        keys = keys_file(f"{ALICE} alice\n", 0o640)
        log = self.refused_start(f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {keys}\n")
        self.assertIn(f"server.api_keys_file {keys} is open to group or others (mode 0640)", log)

    def test_tcp_without_keys_must_be_asked_for(self):
        log = self.refused_start("[server]\nlisten = 127.0.0.1:0\n")
        self.assertIn("needs server.api_keys_file", log)
        self.assertIn("server.tcp_without_api_keys = yes", log)
        daemon, port = start("[server]\nlisten = 127.0.0.1:0\ntcp_without_api_keys = yes\ntcp_jsonrpc = yes\n")
        try:
            self.assertIn("without API keys (server.tcp_without_api_keys)", daemon.log())
            status, _, body = chat(port, None, "Hi", session="open")
            self.assertEqual(status, 200, body)
            answers = native_line(port, [{"jsonrpc": "2.0", "id": 1, "method": "session.list"}])
            self.assertEqual([(s["name"], s["user"]) for s in answers[0]["result"]["sessions"]], [("open", "anonymous")])
        finally:
            self.assertEqual(daemon.stop(), 0, daemon.log())

    def test_the_native_protocol_over_tcp_authenticates_first(self):
        keys = keys_file(f"{ALICE} alice\n")
        daemon, port = start(f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {keys}\ntcp_jsonrpc = yes\n")
        try:
            generate = {"jsonrpc": "2.0", "id": 2, "method": "generate",
                        "params": {"prompt": "Once", "max_tokens": 3, "stream": False, "session": "rpc"}}
            before = native_line(port, [generate])
            self.assertEqual(before[0]["error"]["data"]["type"], "invalid_api_key")
            wrong, = native_line(port, [{"jsonrpc": "2.0", "id": 1, "method": "authenticate",
                                         "params": {"api_key": "sk-wrong-0123456789abcdef"}}])
            self.assertEqual(wrong["error"]["data"]["type"], "invalid_api_key")
            auth, result = native_line(port, [{"jsonrpc": "2.0", "id": 1, "method": "authenticate",
                                               "params": {"api_key": ALICE}}, generate])
            self.assertEqual(auth["result"], {"user": "alice"})
            self.assertEqual(result["result"]["usage"]["completion_tokens"], 3)
            with daemon.client() as c:
                self.assertEqual(c.call("authenticate", {"api_key": ALICE})["error"]["data"]["type"], "invalid_request")
                sessions = c.call("session.list")["result"]["sessions"]
            self.assertEqual([(s["name"], s["user"]) for s in sessions], [("rpc", "alice")])
        finally:
            self.assertEqual(daemon.stop(), 0, daemon.log())

    def test_ipv6(self):
        try:
            with socket.socket(socket.AF_INET6) as probe:
                probe.bind(("::1", 0))
        except OSError:
            self.skipTest("no IPv6 loopback here")
        keys = keys_file(f"{ALICE} alice\n")
        daemon, port = start(f"[server]\nlisten = [::1]:0\napi_keys_file = {keys}\n")
        try:
            self.assertIn("TCP [::1]:", daemon.log())
            status, _, body = curl(port, "/v1/completions", ALICE, {"prompt": "Once", "max_tokens": 2}, host="[::1]")
            self.assertEqual(status, 200, body)
        finally:
            self.assertEqual(daemon.stop(), 0, daemon.log())


class TcpDraining(unittest.TestCase):
    def test_sigterm_closes_the_listener_and_lets_running_requests_finish(self):
        keys = keys_file(f"{ALICE} alice\n")
        daemon, port = start(f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {keys}\nshutdown_grace = 60s\n")
        try:
            health = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            health.request("GET", "/health")
            reply = health.getresponse()
            self.assertEqual((reply.status, json.loads(reply.read())["status"]), (200, "ok"))
            running = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            running.request("POST", "/v1/completions", json.dumps(dict(LONG, max_tokens=1500, stream=True)),
                            {"Authorization": f"Bearer {ALICE}", "Content-Type": "application/json"})
            response = running.getresponse()
            self.assertEqual(response.status, 200)
            self.assertTrue(response.read(16))  # the stream has begun
            daemon.signal(signal.SIGTERM)
            daemon.wait_for_log("stopping")
            with self.assertRaises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
            health.request("GET", "/health")
            reply = health.getresponse()
            self.assertEqual((reply.status, json.loads(reply.read())["status"]), (503, "stopping"))
            events = response.read().decode()
            self.assertIn('"finish_reason":"length"', events)  # it ran to its end within the grace
            self.assertTrue(events.rstrip().endswith("data: [DONE]"), events[-200:])
            health.close()
            running.close()
            self.assertEqual(daemon.process.wait(TIMEOUT), 0, daemon.log())
        finally:
            daemon.stop()


if __name__ == "__main__":
    unittest.main()
