# tests/integration/client_harness.py — shared by the client_* and systemd_* integration
# tests: starts a real stratad on a temporary socket with the bundled model, runs the real
# strata client, and collects the checks of a test script into one exit status (77 = skipped).
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("STRATA_BUILD_DIR", "build")
SOURCE = os.environ.get("STRATA_SOURCE_DIR", ".")
STRATAD = os.path.join(BUILD, "daemon", "stratad")
STRATA = os.path.join(BUILD, "client", "strata")
MODEL = os.path.join(SOURCE, "daemon", "models", "stories260K.gguf")
SKIP = 77


def need_binaries():
    for name, path in (("stratad", STRATAD), ("strata", STRATA), ("the bundled model", MODEL)):
        if not os.path.exists(path):
            print(f"skipped: {name} is not there ({path})")
            sys.exit(SKIP)


def wait_for_socket(path, proc=None, timeout=60.0):
    """Until a connect() to path succeeds; fails if proc exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the daemon exited with status {proc.returncode} before listening")
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(path)
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {path} after {timeout} s")


class Daemon:
    """stratad on a socket in a fresh temporary directory (also its state directory)."""

    def __init__(self, *extra):
        self.dir = tempfile.mkdtemp(prefix="strata-it-")
        self.socket = os.path.join(self.dir, "strata.sock")
        self.log_path = os.path.join(self.dir, "stratad.log")
        state = os.path.join(self.dir, "state")
        os.mkdir(state)
        self.log = open(self.log_path, "w")
        cmd = [STRATAD, "--socket", self.socket, "--model", MODEL, "--state-dir", state, *extra]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for_socket(self.socket, self.proc)

    def stop(self):
        """SIGTERM; the daemon must exit 0 within its shutdown bound."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("stratad did not stop within 30 s of SIGTERM")
        self.log.close()
        return self.proc.returncode

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()


def strata(*args, input=None, env=None, timeout=120):
    """Runs the client; stdin is the given text, or /dev/null (never a terminal)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("STRATA_SOCKET", "XDG_RUNTIME_DIR")}
    full_env.update(env or {})
    return subprocess.run([STRATA, *args], input=input if input is not None else "",
                          capture_output=True, text=True, env=full_env, timeout=timeout)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def result_of(lines):
    results = [m for m in lines if "result" in m]
    assert len(results) == 1, f"expected one result line, got {len(results)}: {lines[-3:]}"
    return results[0]["result"]


class Checks:
    """Runs named check functions, prints each outcome, exits 1 if any failed."""

    def __init__(self):
        self.failed = []

    def run(self, fn, *args):
        name = fn.__name__
        try:
            fn(*args)
            print(f"ok   {name}")
        except Exception as e:  # report every check, not only the first failure
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            self.failed.append(name)

    def finish(self, daemon=None):
        if daemon is not None:
            status = daemon.stop()
            if status != 0:
                print(f"FAIL stratad exited with status {status} after SIGTERM")
                self.failed.append("daemon_exit")
            if self.failed:
                print("---- stratad log ----\n" + daemon.log_text()[-4000:])
        if self.failed:
            print(f"{len(self.failed)} check(s) failed: {', '.join(self.failed)}")
            sys.exit(1)
        print("all checks passed")
        sys.exit(0)
