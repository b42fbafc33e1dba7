#!/usr/bin/env python3
"""tests/integration/haproxy_test.py — a real deployment: two stratad on TCP (API keys) behind
HAProxy (Debian's haproxy, started here in the foreground with systemd/haproxy-strata.cfg's
defaults, frontend and backend on temporary ports). Checks round-robin for stateless
requests, session affinity by X-Strata-Session (a conversation goes on on one host), and
that requests sent without pause through HAProxy all succeed while each instance in turn
restarts (SIGTERM, drain, start again). Prints the request count and the error count.
Skips (77) without haproxy."""
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import SKIP, SRC, TIMEOUT, Daemon, temporary_directory  # noqa: E402

KEY = "sk-haproxy-test-0123456789"
EXAMPLE = os.path.join(SRC, "systemd", "haproxy-strata.cfg")
SESSIONS = [f"conversation-{i}" for i in range(6)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def haproxy_config(example, directory, front_port, backends):
    """The example's defaults, frontend and backend, its bind and server lines pointed at
    `front_port` and `backends` ({name: port}); a global section of our own (no log
    daemon, no user switch, a stats socket to read the servers' states)."""
    sections, current = [], None
    for line in example.splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            current = [line]
            sections.append(current)
        elif current is not None:
            current.append(line)
    out = ["global", "    maxconn 1024", "    log stdout format raw local0",
           f"    stats socket {directory}/admin.sock mode 600 level admin", ""]
    for section in sections:
        if section[0].startswith("global"):
            continue
        for line in section:
            stripped = line.strip()
            if stripped.startswith("log ") and stripped != "log global":
                continue  # the global section above logs to standard output
            if stripped.startswith("bind "):
                line = f"    bind 127.0.0.1:{front_port}"
            if stripped.startswith("server "):
                continue
            out.append(line)
        if section[0].startswith("backend"):
            assert any(line.strip().startswith("server ") for line in section), "the example has no server lines"
            out += [f"    server {name} 127.0.0.1:{port} check" for name, port in backends.items()]
        out.append("")
    return "\n".join(out)


class HAProxy:
    def __init__(self, front_port, backends):
        self.dir = temporary_directory("haproxy-test-")
        self.port = front_port
        self.config = os.path.join(self.dir, "haproxy.cfg")
        with open(EXAMPLE) as f:
            text = haproxy_config(f.read(), self.dir, front_port, backends)
        with open(self.config, "w") as f:
            f.write(text)
        check = subprocess.run(["haproxy", "-c", "-f", self.config], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr + "\n" + text
        self.log = open(os.path.join(self.dir, "haproxy.log"), "w")
        self.process = subprocess.Popen(["haproxy", "-db", "-f", self.config], stdout=self.log, stderr=self.log)

    def servers(self):
        """{server name: status} from the stats socket ("UP", "DOWN", ...)."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(os.path.join(self.dir, "admin.sock"))
            s.sendall(b"show stat\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        rows = [line.split(",") for line in data.decode().splitlines() if line and not line.startswith("#")]
        header = data.decode().splitlines()[0].lstrip("# ").split(",")
        status = header.index("status")
        return {row[1]: row[status] for row in rows if row[0] == "stratad" and row[1] not in ("BACKEND",)}

    def wait_until(self, wanted, timeout=TIMEOUT):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                state = self.servers()
                if all(state.get(name) == status for name, status in wanted.items()):  # not "UP 1/2": going down
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"HAProxy's servers are not {wanted}: {self.servers()}")

    def stop(self):
        self.process.terminate()
        self.process.wait(TIMEOUT)
        self.log.close()


def request(port, body, path="/v1/chat/completions", session=None, pause=0.0):
    """One request through HAProxy on a fresh connection: (status, reply object, host).
    With a pause, the body follows the headers that many seconds later (a slow client)."""
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    if session:
        headers["X-Strata-Session"] = session
    payload = json.dumps(body).encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        connection.putrequest("POST", path)
        for name, value in {**headers, "Content-Length": str(len(payload))}.items():
            connection.putheader(name, value)
        connection.endheaders()
        time.sleep(pause)
        connection.send(payload)
        response = connection.getresponse()
        data = response.read()
        return response.status, data, response.getheader("X-Strata-Host")
    finally:
        connection.close()


def chat(text, max_tokens=6):
    return {"messages": [{"role": "user", "content": text}], "max_tokens": max_tokens, "temperature": 0}


class Load:
    """Threads that send requests through HAProxy without pause, half of them naming a
    session and a quarter sending their body 20 ms after their headers (HAProxy retries a
    request a draining host refused only if it held the whole request: `option
    http-buffer-request`); every outcome is counted, every failure kept."""

    def __init__(self, port, threads=4):
        self.port = port
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.count = 0
        self.errors = []
        self.hosts = {}
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(threads)]

    def run(self, index):
        rng = random.Random(index)
        while not self.stopping.is_set():
            session = f"{rng.choice(SESSIONS)}-of-{index}" if index % 2 else None  # one request at a time each
            pause = 0.02 if rng.random() < 0.25 else 0.0
            try:
                if session or rng.random() < 0.5:
                    status, data, host = request(self.port, chat("Once upon a time"), session=session, pause=pause)
                else:
                    # Some long enough to be running when their host is told to stop (they finish there).
                    body = {"prompt": "Once", "max_tokens": rng.choice((6, 300)), "ignore_eos": True}
                    status, data, host = request(self.port, body, path="/v1/completions", pause=pause)
                ok = status == 200 and "choices" in json.loads(data)
                failure = None if ok else f"{status}: {data[:200]!r}"
            except Exception as error:  # noqa: BLE001 — every failure counts
                failure, host = f"{type(error).__name__}: {error}", None
            with self.lock:
                self.count += 1
                self.hosts[host] = self.hosts.get(host, 0) + 1
                if failure:
                    self.errors.append(failure)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self.threads:
            thread.join(TIMEOUT)


def main():
    if shutil.which("haproxy") is None:
        print("skipped: haproxy is not installed (Debian package haproxy; .ci/install-deps installs it)")
        return SKIP
    keys = os.path.join(temporary_directory(), "api_keys")
    with open(keys, "w") as f:
        f.write(f"{KEY} loadtest\n")
    os.chmod(keys, 0o600)
    ports = {"strata1": free_port(), "strata2": free_port()}
    daemons = {name: Daemon(f"[server]\nlisten = 127.0.0.1:{port}\napi_keys_file = {keys}\nshutdown_grace = 30s\n"
                            "[limits]\nmax_running_per_user = 64\nmax_queued = 256\ncontext_overflow = truncate_middle\n").start()
               for name, port in ports.items()}
    proxy = HAProxy(free_port(), ports)
    try:
        proxy.wait_until({"strata1": "UP", "strata2": "UP"})

        # Round-robin: stateless requests reach both hosts.
        hosts = [request(proxy.port, chat("Hello"))[2] for _ in range(8)]
        assert set(hosts) == {"strata1", "strata2"}, hosts
        # Affinity: each session's requests go to one host, and its conversation goes on there.
        for session in SESSIONS[:4]:
            seen, prompt_tokens = set(), []
            for turn in range(3):
                status, data, host = request(proxy.port, chat(f"Turn {turn}"), session=session)
                assert status == 200, data
                seen.add(host)
                prompt_tokens.append(json.loads(data)["usage"]["prompt_tokens"])
            assert len(seen) == 1, (session, seen)
            assert prompt_tokens == sorted(prompt_tokens) and prompt_tokens[0] < prompt_tokens[-1], prompt_tokens
        print("ok   round-robin over", sorted(set(hosts)), "and one host per session")

        # Restarts under load: SIGTERM (drain), start again, wait until HAProxy has it back.
        with Load(proxy.port) as load:
            time.sleep(1.5)
            for name, daemon in daemons.items():
                before = load.count
                assert daemon.stop(signal.SIGTERM) == 0, daemon.log()
                assert "stopping" in daemon.log()
                daemon.start()
                proxy.wait_until({"strata1": "UP", "strata2": "UP"})
                time.sleep(1.5)
                print(f"ok   {name} restarted; {load.count - before} requests meanwhile")
        print(f"haproxy_test: {load.count} requests through HAProxy, {len(load.errors)} errors; "
              f"answered by {dict(sorted((str(k), v) for k, v in load.hosts.items()))}")
        assert load.count > 50, load.count
        if load.errors:
            with open(os.path.join(proxy.dir, "haproxy.log")) as f:
                failed = [line for line in f if " 200 " not in line]
            raise AssertionError(f"{load.errors[:10]}\nHAProxy's log of what did not end in 200:\n{''.join(failed[-40:])}")
        assert all(load.hosts.get(name, 0) > 0 for name in ports), load.hosts
        return 0
    finally:
        proxy.stop()
        for daemon in daemons.values():
            daemon.stop()


if __name__ == "__main__":
    sys.exit(main())
