#!/usr/bin/env python3
"""tests/integration/daemon_lifecycle_test.py — stratad's life as an administrator sees
it: the socket file (mode 0660, stale ones replaced, live ones left alone, removed on
exit), sessions and their history across a restart, SIGHUP reloading what can change,
SIGTERM with a request in flight (finished or cancelled within server.shutdown_grace, exit
0), a second SIGTERM, bad model files and configurations (clear errors, non-zero exit),
session ownership across two uids, and the sd_notify messages systemd receives."""
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, MODEL, SRC, STRATAD, TIMEOUT, Daemon, as_user, temporary_directory  # noqa: E402

NOBODY = 65534


class SocketTest(unittest.TestCase):
    def test_socket_mode_and_removal(self):
        daemon = Daemon().start()
        mode = stat.S_IMODE(os.stat(daemon.socket).st_mode)
        self.assertEqual(mode, 0o660)
        self.assertEqual(daemon.stop(), 0)
        self.assertFalse(os.path.exists(daemon.socket))
        self.assertIn("stratad stopped", daemon.log())

    def test_a_stale_socket_is_replaced_and_a_live_one_left_alone(self):
        daemon = Daemon()
        stale = socket.socket(socket.AF_UNIX)
        stale.bind(daemon.socket)
        stale.close()  # the file stays; nobody listens
        daemon.start()
        self.assertIn("removed the stale socket", daemon.log())
        second = Daemon()
        clash = subprocess.run([STRATAD, "--config", second.config_path, "--socket", daemon.socket],
                               capture_output=True, timeout=TIMEOUT)
        self.assertEqual(clash.returncode, 1)
        self.assertIn(b"another daemon is already listening on " + daemon.socket.encode(), clash.stderr)
        daemon.assert_serving(self)
        self.assertEqual(daemon.stop(), 0)

    def test_a_path_that_is_not_a_socket_is_not_replaced(self):
        daemon = Daemon()
        open(daemon.socket, "w").close()
        daemon.launch()
        self.assertEqual(daemon.process.wait(TIMEOUT), 1)
        self.assertIn("is not a socket", daemon.log())
        self.assertTrue(os.path.isfile(daemon.socket))


class StartupErrorTest(unittest.TestCase):
    def run_stratad(self, *args):
        return subprocess.run([STRATAD, *args], capture_output=True, timeout=TIMEOUT)

    def test_bad_model_files(self):
        directory = temporary_directory()
        garbage = os.path.join(directory, "garbage.gguf")
        with open(garbage, "wb") as f:
            f.write(b"this is not a GGUF file at all" * 100)
        truncated = os.path.join(directory, "truncated.gguf")
        with open(MODEL, "rb") as f, open(truncated, "wb") as out:
            out.write(f.read(100_000))
        missing = os.path.join(directory, "missing.gguf")
        for path in (garbage, truncated, missing):
            with self.subTest(path=path):
                sock = os.path.join(directory, "s.sock")
                run = self.run_stratad("--model", path, "--socket", sock)
                self.assertEqual(run.returncode, 1)
                err = run.stderr.decode()
                self.assertIn("<3>cannot load the model " + path + ": ", err)
                self.assertGreater(len(err.split(path + ": ", 1)[1].strip()), 10)  # says why
                self.assertNotIn("READY", err)
                self.assertFalse(os.path.exists(sock))

    def test_a_kv_type_the_model_cannot_take_is_refused_at_start(self):
        directory = temporary_directory()
        run = self.run_stratad("--model", MODEL, "--socket", os.path.join(directory, "s.sock"), "--set", "memory.kv_type=q8_0")
        self.assertEqual(run.returncode, 1)
        self.assertIn("q8_0 needs a head size that is a multiple of 32 (this model's is 8)", run.stderr.decode())

    def test_a_q8_0_kv_cache_serves(self):
        model = os.path.join(SRC, "tests", "data", "archs", "models", "qwen3-f16.gguf")
        daemon = Daemon("[memory]\nkv_type = q8_0\n", model=model).start()
        try:
            with daemon.client() as c:
                reply = c.generate({"prompt": "a b c", "max_tokens": 8, "temperature": 0, "stream": False})[0]
                self.assertEqual(reply["result"]["usage"]["completion_tokens"], 8, reply)
                self.assertEqual(c.call("status")["result"]["kv_type"], "q8_0")
        finally:
            self.assertEqual(daemon.stop(), 0)

    def test_configuration_errors(self):
        directory = temporary_directory()
        conf = os.path.join(directory, "strata.conf")
        for text, expected in (
                ("[model]\npath = %s\n[limits]\nmax_token = 4\n" % MODEL,
                 conf + ":4: unknown key 'max_token' in [limits]"),
                ("[model]\npath = %s\n[engine]\nthreads = lots\n" % MODEL,
                 conf + ":4: engine.threads = \"lots\": expected an integer"),
                ("[memory]\nbudget = 6X\n", conf + ":2: memory.budget = \"6X\": \'6X\': unknown unit"),
                ("path = x\n", conf + ":1: key 'path' comes before any [section]")):
            with open(conf, "w") as f:
                f.write(text)
            run = self.run_stratad("--config", conf)
            self.assertEqual(run.returncode, 1, text)
            self.assertIn(expected, run.stderr.decode())
        missing = self.run_stratad("--config", os.path.join(directory, "absent.conf"))
        self.assertEqual(missing.returncode, 1)
        self.assertIn(b"cannot read the configuration file", missing.stderr)

    def test_usage_errors_and_check_config(self):
        self.assertEqual(self.run_stratad("--frobnicate").returncode, 2)
        self.assertEqual(self.run_stratad("--model").returncode, 2)
        self.assertEqual(self.run_stratad("--set", "novalue").returncode, 2)
        help_text = self.run_stratad("--help")
        self.assertEqual(help_text.returncode, 0)
        self.assertIn(b"--socket PATH", help_text.stdout)
        check = self.run_stratad("--check-config", "--config", "/dev/null", "--model", MODEL,
                                 "--set", "limits.max_tokens=777", "--memory-budget", "6G")
        self.assertEqual(check.returncode, 0, check.stderr)
        lines = check.stdout.decode().splitlines()
        self.assertIn("model.path = " + MODEL, lines)
        self.assertIn("limits.max_tokens = 777", lines)
        self.assertIn("memory.budget = 6G", lines)
        self.assertIn("server.shutdown_grace = 10s", lines)


class ShippedConfigurationTest(unittest.TestCase):
    def test_the_default_configuration_is_valid_and_lists_every_key(self):
        shipped = os.path.join(os.environ.get("STRATA_SOURCE_DIR", "."), "systemd", "strata.conf")
        run = subprocess.run([STRATAD, "--check-config", "--config", shipped], capture_output=True, timeout=TIMEOUT)
        self.assertEqual(run.returncode, 0, run.stderr)
        effective = [line.rstrip() for line in run.stdout.decode().splitlines()]
        listed, section = [], None
        with open(shipped) as f:
            for line in f:
                line = line.strip()
                if line.startswith("[") and line.endswith("]"):
                    section = line[1:-1]
                elif "=" in line and (not line.startswith("#") or line[1:2].isalpha()):
                    key, _, value = line.lstrip("#").partition("=")
                    listed.append(f"{section}.{key.strip()} = {value.strip()}".rstrip())
        # Each key appears once, with the value stratad uses (its default when commented out).
        self.assertEqual(sorted(listed), sorted(effective))


class RestartTest(unittest.TestCase):
    def test_sessions_and_their_history_survive_a_restart(self):
        daemon = Daemon().start()
        with daemon.client() as c:
            raw = c.generate({"session": "keep", "prompt": "Once upon a time", "max_tokens": 12,
                              "temperature": 0, "stream": False})[0]["result"]
            chat = c.generate({"session": "keep-chat", "chat_template": "plain", "max_tokens": 6, "temperature": 0,
                               "stream": False, "messages": [{"role": "user", "content": "Hi"}]})[0]["result"]
            before = {s["name"]: s for s in c.call("session.list")["result"]["sessions"]}
            raw_info = c.call("session.info", {"session": "keep"})["result"]
            chat_info = c.call("session.info", {"session": "keep-chat"})["result"]
        self.assertEqual(daemon.stop(), 0)
        daemon.start()
        with daemon.client() as c:
            after = {s["name"]: s for s in c.call("session.list")["result"]["sessions"]}
            self.assertEqual(set(after), {"keep", "keep-chat"})
            for name in after:
                for key in ("uid", "tokens", "messages", "created"):
                    self.assertEqual(after[name][key], before[name][key], key)
            self.assertEqual(c.call("session.info", {"session": "keep"})["result"]["text"], raw_info["text"])
            self.assertEqual(c.call("session.info", {"session": "keep-chat"})["result"]["conversation"],
                             chat_info["conversation"])
            self.assertEqual(chat_info["conversation"][-1]["content"], chat["text"])
            more = c.generate({"session": "keep", "prompt": " The end", "max_tokens": 4, "temperature": 0,
                               "stream": False})[0]["result"]
            # The history is the prefix of the new prompt (and its KV cache was saved too).
            self.assertGreater(more["usage"]["prompt_tokens"], raw["usage"]["prompt_tokens"] + 12)
            self.assertGreater(more["usage"]["cached_tokens"], 0)
        self.assertEqual(daemon.stop(), 0)


class SignalTest(unittest.TestCase):
    def test_sighup_reloads_live_keys_and_names_the_others(self):
        daemon = Daemon("[limits]\nmax_tokens = 100\ndefault_max_tokens = 50\n").start()
        with daemon.client() as c:
            error = c.generate({"prompt": "a", "max_tokens": 150})[0]["error"]
            self.assertEqual(error["data"]["field"], "max_tokens")
            daemon.write_config("[limits]\nmax_tokens = 2000\ndefault_max_tokens = 50\n"
                                "[server]\nmax_requests_per_connection = 1\n")
            with open(daemon.config_path) as f:
                text = f.read().replace("threads = 1", "threads = 2")
            with open(daemon.config_path, "w") as f:
                f.write(text)
            daemon.signal(signal.SIGHUP)
            daemon.wait_for_log("reload: limits.max_tokens: 100 -> 2000")
            self.assertIn("reload: engine.threads: 1 -> 2 needs a restart", daemon.log())
            reply = c.generate({"prompt": "a", "max_tokens": 150, "temperature": 0, "ignore_eos": True,
                                "stream": False})[0]
            self.assertEqual(reply["result"]["usage"]["completion_tokens"], 150)
            self.assertEqual(c.call("status")["result"]["threads"], 1)  # unchanged until a restart
            first = c.send("generate", LONG)
            self.assertEqual(c.generate(LONG)[0]["error"]["code"], -32003)  # max_requests_per_connection = 1
            c.send("cancel", {"id": first}, notification=True)
            c.wait(first)
            with open(daemon.config_path, "a") as f:
                f.write("[limits]\nbroken\n")
            daemon.signal(signal.SIGHUP)
            daemon.wait_for_log("reload failed, the running configuration stays")
            reply = c.generate({"prompt": "a", "max_tokens": 150, "stream": False})[0]
            self.assertIn("result", reply)
        self.assertEqual(daemon.stop(), 0)

    def test_sigterm_lets_a_request_finish_within_the_grace(self):
        daemon = Daemon("[server]\nshutdown_grace = 1s\n").start()
        with daemon.client() as c:
            id = c.send("generate", LONG)
            c.read()  # it runs
            stopping = time.time()
            daemon.signal(signal.SIGTERM)
            reply, _ = c.wait(id)
            self.assertIn(reply["result"]["finish_reason"], ("cancelled", "length"))
            self.assertEqual(daemon.process.wait(TIMEOUT), 0)
            self.assertLess(time.time() - stopping, 1 + 10)
        self.assertFalse(os.path.exists(daemon.socket))
        with self.assertRaises(OSError):
            daemon.client()

    def test_a_second_sigterm_cancels_at_once(self):
        daemon = Daemon("[server]\nshutdown_grace = 10min\n").start()
        with daemon.client() as c:
            id = c.send("generate", LONG)
            c.read()
            daemon.signal(signal.SIGTERM)
            daemon.wait_for_log("stopping; running requests have 600000 ms")
            daemon.signal(signal.SIGINT)
            reply, _ = c.wait(id, timeout=30)
            self.assertEqual(reply["result"]["finish_reason"], "cancelled")
            self.assertEqual(daemon.process.wait(30), 0)
        self.assertIn("again: cancelling", daemon.log())


class OwnershipTest(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to run a client as another user")
        self.daemon = Daemon().start()
        os.chmod(self.daemon.socket, 0o666)

    def tearDown(self):
        self.assertEqual(self.daemon.stop(), 0)

    def nobody(self, method, params=None):
        return as_user(NOBODY, NOBODY, self.daemon.socket, method, params or {})

    def test_sessions_belong_to_their_users(self):
        with self.daemon.client() as c:
            c.call("generate", {"session": "roots", "prompt": "a", "max_tokens": 2})
        mine = self.nobody("generate", {"session": "nobodys", "prompt": "b", "max_tokens": 2, "stream": False})
        self.assertIn("result", mine)
        listed = self.nobody("session.list")["result"]["sessions"]
        self.assertEqual([(s["name"], s["uid"]) for s in listed], [("nobodys", NOBODY)])
        # Names are per user: root's "roots" is not in nobody's namespace at all.
        for method in ("session.info", "session.reset", "session.delete"):
            error = self.nobody(method, {"session": "roots"})["error"]
            self.assertEqual(error["data"]["type"], "session_not_found", method)
            error = self.nobody(method, {"session": "roots", "uid": 0})["error"]
            self.assertEqual((error["code"], error["data"]["type"]), (-32002, "forbidden"), method)
        with self.daemon.client() as c:
            everyone = {s["name"]: s["uid"] for s in c.call("session.list")["result"]["sessions"]}
            self.assertEqual(everyone, {"roots": 0, "nobodys": NOBODY})
            # root sees all: another user's session is addressed with its uid
            self.assertIn("result", c.call("session.info", {"session": "nobodys", "uid": NOBODY}))
            self.assertEqual(c.call("session.info", {"session": "nobodys"})["error"]["data"]["type"],
                             "session_not_found")
        self.assertIn("result", self.nobody("session.delete", {"session": "nobodys"}))


class NotifyTest(unittest.TestCase):
    def test_systemd_hears_ready_status_reloading_watchdog_and_stopping(self):
        directory = temporary_directory()
        notify_path = os.path.join(directory, "notify")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(notify_path)
        listener.settimeout(TIMEOUT)
        daemon = Daemon()
        daemon.launch(env=dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="200000"))
        heard = []

        def until(word):
            while True:
                message = listener.recv(4096).decode()
                heard.append(message)
                if word in message:
                    return message

        ready = until("READY=1")
        self.assertIn("STATUS=Serving", ready)
        until("WATCHDOG=1")
        until("WATCHDOG=1")
        daemon.signal(signal.SIGHUP)
        until("RELOADING=1")
        until("READY=1")
        daemon.signal(signal.SIGTERM)
        until("STOPPING=1")
        self.assertEqual(daemon.process.wait(TIMEOUT), 0)
        self.assertTrue(any(m.startswith("STATUS=Loading ") for m in heard), heard)
        listener.close()


if __name__ == "__main__":
    unittest.main()
