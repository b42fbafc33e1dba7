#!/usr/bin/env python3
"""tests/integration/daemon_soak_test.py — a soak of the real stratad (opt-in: it runs only
with $STRATA_SOAK_SECONDS set, e.g. STRATA_SOAK_SECONDS=300 meson test -C build daemon_soak): clients with valid requests (named sessions
that grow), invalid ones (bad JSON, bad fields, over-long lines, non-UTF-8), requests
cancelled mid-stream, clients that disconnect mid-stream, HTTP requests and idle
sockets, all at once. Then: no request failed unexpectedly, the daemon's RSS is back
near its warmed-up baseline, every session holds exactly what was sent to it, and the
sessions survive a restart. Prints the duration, requests, errors and RSS figures."""
import json
import os
import random
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, Daemon  # noqa: E402

SECONDS = float(os.environ.get("STRATA_SOAK_SECONDS", "0"))
RSS_SLACK = 32 << 20  # allocator noise and caches the daemon is allowed to keep
CONFIG = "[server]\nidle_timeout = 2s\nmax_request_bytes = 64K\n[limits]\nmax_queued = 256\n"


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.failures = []

    def add(self, what, n=1):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def fail(self, message):
        with self.lock:
            self.failures.append(message)


def session_worker(daemon, name, tally, stop):
    """Grows one session; checks after each turn that it holds exactly the turns sent."""
    sent = 0
    with daemon.client() as c:
        while not stop.is_set():
            reply = c.call("generate", {"session": name, "prompt": " Once", "max_tokens": 3, "temperature": 0,
                                        "stream": False})
            if "error" in reply:
                kind = reply["error"]["data"]["type"]
                if kind == "context_full":  # the session is full: start it over
                    c.call("session.reset", {"session": name})
                    sent = 0
                elif kind != "busy":
                    tally.fail(f"{name}: {reply}")
                tally.add(kind)
                continue
            sent += 1
            info = c.call("session.info", {"session": name})["result"]
            if info["text"].count(" Once") < sent:
                tally.fail(f"{name}: {sent} turns sent, the history has {info['text']!r}")
            tally.add("valid")
    return sent


def invalid_worker(daemon, tally, stop):
    bad_lines = [b"{not json}\n", b'{"jsonrpc":"2.0","id":1,"method":"generate","params":{"max_tokens":1e12}}\n',
                 b'{"jsonrpc":"2.0","id":1,"method":"tokenize","params":{"text":"caf\xe9"}}\n',
                 b'{"jsonrpc":"2.0","id":1,"method":"nope"}\n', b"[" * 100 + b"\n",
                 b'{"jsonrpc":"2.0","id":1,"method":"tokenize","params":{"text":"' + b"x" * (70 << 10) + b'"}}\n']
    while not stop.is_set():
        with daemon.client() as c:
            for line in random.sample(bad_lines, len(bad_lines)):
                c.send_raw(line)
                if "error" not in c.read():
                    tally.fail(f"no error for {line[:60]!r}")
                tally.add("invalid")


def cancel_worker(daemon, tally, stop):
    while not stop.is_set():
        with daemon.client() as c:
            id = c.send("generate", LONG)
            c.read()
            c.send("cancel", {"id": id}, notification=True)
            reply, _ = c.wait(id)
            if reply.get("result", {}).get("finish_reason") != "cancelled":
                tally.fail(f"cancel: {reply}")
            tally.add("cancelled")


def disconnect_worker(daemon, tally, stop):
    while not stop.is_set():
        c = daemon.client()
        c.send("generate", LONG)
        c.read()
        c.close()  # mid-stream
        tally.add("disconnected")
        time.sleep(0.05)


def http_worker(daemon, tally, stop):
    while not stop.is_set():
        connection = daemon.http()
        connection.request("POST", "/v1/completions", json.dumps({"prompt": "Once", "max_tokens": 4}),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        body = response.read()
        if response.status not in (200, 429):
            tally.fail(f"HTTP {response.status}: {body[:200]!r}")
        tally.add("http")
        connection.close()


def idle_worker(daemon, tally, stop):
    """Opens sockets and sends nothing: they are closed after server.idle_timeout."""
    while not stop.is_set():
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(daemon.socket)
        if s.recv(1) != b"":
            tally.fail("an idle socket got data instead of being closed")
        s.close()
        tally.add("idle_closed")


def rss(daemon):
    return daemon.wait_idle()["rss_bytes"]


class SoakTest(unittest.TestCase):
    def test_mixed_clients_for_a_while(self):
        daemon = Daemon(CONFIG).start()
        names = [f"soak-{i}" for i in range(4)]
        # Warm up: every kind of work once, so that pools and caches have their size.
        for name in names:
            with daemon.client() as c:
                c.call("generate", {"session": name, "prompt": "Start.", "max_tokens": 2, "temperature": 0})
        with daemon.client() as c:
            c.call("generate", dict(LONG, max_tokens=200, stream=False))
        baseline = rss(daemon)
        tally, stop, turns = Tally(), threading.Event(), {}

        def run(fn, *args):
            try:
                result = fn(daemon, *args, tally, stop)
                if fn is session_worker:
                    turns[args[0]] = result
            except Exception as error:  # noqa: BLE001 — every worker's failure is reported
                tally.fail(f"{fn.__name__}: {type(error).__name__}: {error}")

        threads = [threading.Thread(target=run, args=(session_worker, n)) for n in names]
        threads += [threading.Thread(target=run, args=(fn,)) for fn in
                    (invalid_worker, cancel_worker, disconnect_worker, http_worker, idle_worker)]
        started = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(SECONDS)
        stop.set()
        for t in threads:
            t.join(120)
        elapsed = time.monotonic() - started
        after = rss(daemon)
        with daemon.client() as c:
            listed = {s["name"]: s for s in c.call("session.list")["result"]["sessions"]}
        self.assertEqual(daemon.stop(), 0)
        print(f"soak: {elapsed:.0f} s, requests {json.dumps(tally.counts, sort_keys=True)}, "
              f"unexpected errors {len(tally.failures)}, RSS {baseline / 2**20:.1f} MiB before, "
              f"{after / 2**20:.1f} MiB after", flush=True)
        self.assertEqual(tally.failures[:5], [])
        self.assertLess(after, baseline + RSS_SLACK)
        # Every session is intact, also after a restart.
        restarted = Daemon(CONFIG)
        restarted.state_dir = daemon.state_dir
        restarted.write_config(CONFIG)
        restarted.start()
        with restarted.client() as c:
            for name in names:
                info = c.call("session.info", {"session": name})["result"]
                self.assertEqual(info["tokens"], listed[name]["tokens"], name)
                self.assertGreaterEqual(info["text"].count(" Once"), turns[name], name)
        self.assertEqual(restarted.stop(), 0)


if __name__ == "__main__":
    if SECONDS <= 0:
        print("skipped: set STRATA_SOAK_SECONDS (e.g. 300) to soak the daemon")
        sys.exit(77)
    unittest.main()
