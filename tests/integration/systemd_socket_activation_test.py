#!/usr/bin/env python3
# tests/integration/systemd_socket_activation_test.py — stratad started the way
# stratad.socket starts it: systemd-socket-activate listens first and hands the listening
# socket to the daemon when the first client connects; that first client gets its answer.
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from client_harness import MODEL, SKIP, STRATAD, Checks, json_lines, need_binaries, result_of, strata


def main():
    need_binaries()
    activate = shutil.which("systemd-socket-activate")
    if activate is None:
        print("skipped: systemd-socket-activate is not installed")
        sys.exit(SKIP)
    work = tempfile.mkdtemp(prefix="strata-it-")
    sock = os.path.join(work, "strata.sock")
    os.mkdir(os.path.join(work, "state"))
    log = open(os.path.join(work, "activate.log"), "w")
    proc = subprocess.Popen([activate, "-l", sock, STRATAD, "--model", MODEL, "--state-dir",
                             os.path.join(work, "state")], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while not os.path.exists(sock):  # no probing connect: the first connection starts the daemon
        assert time.monotonic() < deadline and proc.poll() is None, "systemd-socket-activate did not listen"
        time.sleep(0.02)

    checks = Checks()

    def first_connection_is_answered():
        r = strata("--socket", sock, "--json", "--raw", "--temperature", "0", "-n", "16", "Once upon a time")
        assert r.returncode == 0, (r.returncode, r.stderr)
        result = result_of(json_lines(r.stdout))
        assert result["text"] and result["usage"]["completion_tokens"] > 0, result

    def the_activated_daemon_keeps_serving():
        r = strata("--socket", sock, "status")
        assert r.returncode == 0 and "weights_mode:" in r.stdout, r
        with open(f"/proc/{proc.pid}/comm") as f:  # systemd-socket-activate exec'd stratad in place
            assert f.read().strip() == "stratad"

    def sigterm_exits_0():
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, proc.returncode

    checks.run(first_connection_is_answered)
    checks.run(the_activated_daemon_keeps_serving)
    checks.run(sigterm_exits_0)
    if proc.poll() is None:
        proc.kill()
    log.close()
    if checks.failed:
        with open(os.path.join(work, "activate.log")) as f:
            print("---- log ----\n" + f.read()[-4000:])
    checks.finish()


if __name__ == "__main__":
    main()
