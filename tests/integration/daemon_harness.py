#!/usr/bin/env python3
"""tests/integration/daemon_harness.py — runs the real stratad for the daemon_*_test.py
scripts: a temporary directory with a strata.conf, the bundled stories260K model, the
daemon process on a temporary socket, and clients that speak the native protocol over a
raw Unix socket (and HTTP through curl or http.client). Also a command-line entry used to
run a client as another user: `daemon_harness.py rpc SOCKET METHOD PARAMS_JSON`."""
import atexit
import http.client
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.environ.get("STRATA_BUILD_DIR", "build")
SRC = os.environ.get("STRATA_SOURCE_DIR", ".")
STRATAD = os.path.join(BUILD, "daemon", "stratad")
MODEL = os.path.join(SRC, "daemon", "models", "stories260K.gguf")
TIMEOUT = 120  # seconds for anything to happen; the machine may be busy
SKIP = 77      # meson's exit status for a skipped test

_launched = []     # every stratad started, killed when the script exits (even after a failure)
_directories = []  # removed then


@atexit.register
def _clean_up():
    for process in _launched:
        if process.poll() is None:
            process.kill()
            process.wait()
    for directory in _directories:
        shutil.rmtree(directory, ignore_errors=True)


def temporary_directory(prefix="stratad-test-"):
    directory = tempfile.mkdtemp(prefix=prefix)
    _directories.append(directory)
    return directory


# A generation that runs until cancelled (stories260K's context is 2048 tokens).
LONG = {"prompt": "Once upon a time", "max_tokens": 2000, "ignore_eos": True, "temperature": 0}


class Daemon:
    """A stratad process with its own directory, configuration and socket."""

    def __init__(self, config="", model=MODEL, extra_args=()):
        self.dir = temporary_directory()
        os.chmod(self.dir, 0o755)  # other users' clients must reach the socket
        self.socket = os.path.join(self.dir, "strata.sock")
        self.state_dir = os.path.join(self.dir, "state")
        self.config_path = os.path.join(self.dir, "strata.conf")
        self.log_path = os.path.join(self.dir, "stratad.log")
        self.model = model
        self.extra_args = list(extra_args)
        self.process = None
        self.write_config(config)

    def write_config(self, extra):
        with open(self.config_path, "w") as f:
            f.write(f"[model]\npath = {self.model}\n[server]\nsocket = {self.socket}\n"
                    f"[sessions]\nstate_dir = {self.state_dir}\n[engine]\nthreads = 1\n"
                    f"[log]\nlevel = debug\n" + extra)

    def launch(self, env=None, preexec_fn=None):
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen([STRATAD, "--config", self.config_path, *self.extra_args],
                                        stdout=log, stderr=log, env=env, preexec_fn=preexec_fn)
        _launched.append(self.process)
        log.close()
        return self.process

    def start(self, env=None, preexec_fn=None):
        """Starts the daemon and waits until it has loaded the model (it may listen before)
        and answers on its socket."""
        self.launch(env, preexec_fn)
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"stratad exited with {self.process.returncode}:\n{self.log()}")
            if "serving" not in self.log():
                time.sleep(0.02)
                continue
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(self.socket)
                return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError("stratad did not start listening:\n" + self.log())

    def stop(self, sig=signal.SIGTERM, timeout=TIMEOUT):
        """Signals the daemon and returns its exit status."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("stratad did not stop:\n" + self.log())

    def signal(self, sig):
        self.process.send_signal(sig)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_for_log(self, text, timeout=TIMEOUT):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if text in self.log():
                return
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never appeared in the log:\n{self.log()}")

    def client(self):
        return Client(self.socket)

    def status(self):
        with self.client() as c:
            return c.call("status")["result"]

    def wait_idle(self, timeout=TIMEOUT):
        """Waits until no request runs or waits in the engine; returns the status."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            st = self.status()
            if st["requests_running"] == 0 and st["requests_queued"] == 0:
                return st
            time.sleep(0.02)
        raise AssertionError("requests still running: " + json.dumps(st))

    def assert_serving(self, test):
        """A fresh client gets a good answer: the daemon survived what came before."""
        with self.client() as c:
            reply = c.call("generate", {"prompt": "Once", "max_tokens": 4, "temperature": 0, "stream": False})
        test.assertIn("result", reply, reply)
        test.assertEqual(reply["result"]["usage"]["completion_tokens"], 4)

    def http(self):
        return UnixHTTPConnection(self.socket)

    def curl(self, *args, data=None):
        """curl --unix-socket; returns (status, headers text, body bytes)."""
        cmd = ["curl", "-sS", "--unix-socket", self.socket, "-D", "-", "--max-time", str(TIMEOUT), *args]
        if data is not None:
            cmd += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
        run = subprocess.run(cmd, input=data if isinstance(data, (bytes, type(None))) else json.dumps(data).encode(),
                             capture_output=True, timeout=TIMEOUT + 10)
        if run.returncode != 0:
            raise AssertionError(f"curl failed ({run.returncode}): {run.stderr.decode()}")
        head, _, body = run.stdout.partition(b"\r\n\r\n")
        while head.startswith(b"HTTP/1.1 100"):
            head, _, body = body.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        return status, head.decode(), body

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class DaemonTestCase(unittest.TestCase):
    """Tests sharing one daemon started with the class's CONFIG; it must stop with status 0."""
    CONFIG = ""

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(cls.CONFIG).start()

    @classmethod
    def tearDownClass(cls):
        code = cls.daemon.stop()
        assert code == 0, f"stratad exited with {code}:\n{cls.daemon.log()}"


class Client:
    """The native protocol over one connection: JSON lines out, JSON lines in."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1
        self.unclaimed = []  # messages read while waiting for another id

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def encode(self, method, params=None, id=None, notification=False):
        """(line, id) of one request; a notification has id None."""
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notification:
            if id is None:
                id = self.next_id
                self.next_id += 1
            message["id"] = id
        return json.dumps(message).encode() + b"\n", id

    def send(self, method, params=None, id=None, notification=False):
        line, id = self.encode(method, params, id, notification)
        self.sock.sendall(line)
        return id

    def send_together(self, method, params_list):
        """Several requests in one write, so the daemon reads them at once; their ids."""
        encoded = [self.encode(method, params) for params in params_list]
        self.sock.sendall(b"".join(line for line, _ in encoded))
        return [id for _, id in encoded]

    def read(self, timeout=TIMEOUT):
        """The next message, or None at end of stream."""
        if self.unclaimed:
            return self.unclaimed.pop(0)
        return self.read_socket(timeout)

    def read_socket(self, timeout=TIMEOUT):
        deadline = time.time() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise TimeoutError("no message within %.0f s" % timeout)
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def wait(self, id, timeout=TIMEOUT):
        """Reads until the response to `id`; returns (response, token texts of id)."""
        tokens, kept = [], []
        for message in self.unclaimed:
            if message.get("id") == id and "method" not in message:
                self.unclaimed = [m for m in self.unclaimed if m is not message]
                return message, tokens
        while True:
            message = self.read_socket(timeout)
            if message is None:
                raise ConnectionError("the daemon closed the connection")
            if message.get("method") == "token" and message["params"]["id"] == id:
                tokens.append(message["params"]["text"])
            elif message.get("id") == id and "method" not in message:
                self.unclaimed.extend(kept)
                return message, tokens
            else:
                kept.append(message)

    def call(self, method, params=None, timeout=TIMEOUT):
        return self.wait(self.send(method, params), timeout)[0]

    def generate(self, params, timeout=TIMEOUT):
        """(response, streamed token texts)."""
        return self.wait(self.send("generate", params), timeout)


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over the daemon's Unix socket (one keep-alive connection)."""

    def __init__(self, path):
        super().__init__("localhost", timeout=TIMEOUT)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(self.path)


def sse_events(body):
    """The data: payloads of a text/event-stream body."""
    events = []
    for block in body.decode().split("\n\n"):
        if block.strip():
            lines = block.split("\n")
            assert all(line.startswith("data: ") for line in lines), block
            events.append("\n".join(line[6:] for line in lines))
    return events


def sse_chunks(body):
    """The JSON chunks of an OpenAI event stream (its [DONE] left out)."""
    return [json.loads(event) for event in sse_events(body) if event != "[DONE]"]


def read_all(sockets, until, timeout=TIMEOUT):
    """Reads JSON lines from several raw sockets at once, in arrival order, calling
    until(index, message) for each; stops when it returns True."""
    buffers = {s: b"" for s in sockets}
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select(list(buffers), [], [], deadline - time.time())
        for s in ready:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("a connection closed")
            buffers[s] += chunk
            while b"\n" in buffers[s]:
                line, _, buffers[s] = buffers[s].partition(b"\n")
                if until(sockets.index(s), json.loads(line)):
                    return
    raise TimeoutError("read_all timed out")


# A one-call native client for as_user(): argv = socket, method, params JSON.
AS_USER_CLIENT = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": sys.argv[2], "params": json.loads(sys.argv[3])}).encode() + b"\\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
    for line in data.split(b"\\n")[:-1]:
        message = json.loads(line)
        if message.get("id") == 1:
            print(json.dumps(message))
            sys.exit(0)
sys.exit("the daemon closed the connection")
"""


def as_user(uid, gid, socket_path, method, params):
    """Runs one native call as another user (the tests run as root); returns the response.
    The system's python3 runs it: the test's interpreter may live where that user cannot go."""
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    run = subprocess.run([python, "-c", AS_USER_CLIENT, socket_path, method, json.dumps(params)], cwd="/",
                         user=uid, group=gid, extra_groups=[], capture_output=True, timeout=TIMEOUT)
    if run.returncode != 0:
        raise AssertionError("client as uid %d failed: %s" % (uid, run.stderr.decode()))
    return json.loads(run.stdout)
