#!/usr/bin/env python3
# tests/integration/client_cli_test.py — the strata CLI against a real stratad serving the
# bundled stories260K model: streamed output, prompt assembly from arguments and stdin,
# named sessions continuing, the sessions commands, --json, -v, chat, Ctrl-C, socket lookup,
# and every exit code (0, 1, 2, 3, 4, 130).
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from client_harness import Checks, Daemon, STRATA, json_lines, need_binaries, result_of, strata

GREEDY = ["--temperature", "0", "-n", "24"]


def streamed_text_matches_the_result(d):
    """--json: several token notifications, whose texts add up to the result's text, and the
    plain output is that same text."""
    j = strata("--socket", d.socket, "--json", *GREEDY, "Once upon a time")
    assert j.returncode == 0, j.stderr
    lines = json_lines(j.stdout)
    for m in lines:
        assert m.get("jsonrpc") == "2.0", m
    tokens = [m["params"]["text"] for m in lines if m.get("method") == "token"]
    result = result_of(lines)
    assert len(tokens) > 1, f"only {len(tokens)} token notifications"
    assert "".join(tokens) == result["text"], (tokens, result["text"])
    assert result["usage"]["completion_tokens"] > 1
    plain = strata("--socket", d.socket, *GREEDY, "Once upon a time")
    assert plain.returncode == 0, plain.stderr
    expected = result["text"] if result["text"].endswith("\n") else result["text"] + "\n"
    assert plain.stdout == expected, (plain.stdout, expected)


def stdin_and_arguments_give_the_same_prompt(d):
    by_args = strata("--socket", d.socket, *GREEDY, "Once", "upon", "a", "time")
    by_stdin = strata("--socket", d.socket, *GREEDY, input="Once upon a time\n")
    assert by_args.returncode == 0 and by_stdin.returncode == 0, (by_args.stderr, by_stdin.stderr)
    assert by_args.stdout == by_stdin.stdout and by_args.stdout.strip(), (by_args.stdout, by_stdin.stdout)


def arguments_blank_line_then_stdin(d):
    r = strata("--socket", d.socket, "-s", "assembly", "-n", "2", "Lily", "said:", input="The dog ran.\n")
    assert r.returncode == 0, r.stderr
    info = result_of(json_lines(strata("--socket", d.socket, "--json", "sessions", "show", "assembly").stdout))
    # The bundled model has a chat template: the assembled prompt is the user's message.
    assert info["conversation"][0]["content"] == "Lily said:\n\nThe dog ran.", info


def sessions_continue_and_are_managed(d):
    """Raw-text sessions (--raw: no chat template) continue where they stopped."""
    first = result_of(json_lines(strata("--socket", d.socket, "--json", "--raw", "-s", "story", *GREEDY,
                                        "Once upon a time").stdout))
    second = result_of(json_lines(strata("--socket", d.socket, "--json", "--raw", "-s", "story", *GREEDY,
                                         "The end.").stdout))
    assert second["usage"]["cached_tokens"] > 0, second["usage"]
    listed = strata("--socket", d.socket, "sessions")
    assert listed.returncode == 0 and "story" in listed.stdout, listed
    info = result_of(json_lines(strata("--socket", d.socket, "--json", "sessions", "show", "story").stdout))
    assert info["tokens"] >= first["usage"]["prompt_tokens"] + second["usage"]["completion_tokens"], info
    assert "Once upon a time" in info["text"] and first["text"] in info["text"], info["text"]
    shown = strata("--socket", d.socket, "sessions", "show", "story")
    assert shown.returncode == 0 and "Once upon a time" in shown.stdout, shown
    assert strata("--socket", d.socket, "sessions", "reset", "story").returncode == 0
    info = result_of(json_lines(strata("--socket", d.socket, "--json", "sessions", "show", "story").stdout))
    assert info["tokens"] == 0, info
    assert strata("--socket", d.socket, "sessions", "rm", "story").returncode == 0
    gone = strata("--socket", d.socket, "sessions", "show", "story")
    assert gone.returncode == 1 and gone.stderr.startswith("strata: "), gone


def verbose_prints_speeds(d):
    r = strata("--socket", d.socket, "-v", *GREEDY, "Once upon a time")
    assert r.returncode == 0, r.stderr
    assert "prompt:" in r.stderr and "generation:" in r.stderr and "tokens/s" in r.stderr, r.stderr
    assert "tokens/s" not in r.stdout


def status_and_model(d):
    s = strata("--socket", d.socket, "status")
    assert s.returncode == 0 and "weights_mode:" in s.stdout, s
    m = result_of(json_lines(strata("--socket", d.socket, "--json", "model").stdout))
    assert m["arch"] == "llama" and m["n_vocab"] == 512, m
    text = strata("--socket", d.socket, "model")
    assert text.returncode == 0 and "n_vocab:" in text.stdout and "512" in text.stdout, text


def chat_keeps_a_named_session(d):
    """The bundled model has its own chat template: each line is a user turn, the session keeps
    the conversation, and chat prints each reply followed by a newline."""
    r = strata("--socket", d.socket, "chat", "-s", "talk", *GREEDY, input="Once upon a time\n\nThe cat\n")
    assert r.returncode == 0, r.stderr
    info = result_of(json_lines(strata("--socket", d.socket, "--json", "sessions", "show", "talk").stdout))
    conversation = info["conversation"]
    assert [m["role"] for m in conversation] == ["user", "assistant", "user", "assistant"], conversation
    assert [conversation[0]["content"], conversation[2]["content"]] == ["Once upon a time", "The cat"], conversation
    assert r.stdout == "".join(m["content"] + ("" if m["content"].endswith("\n") else "\n")
                               for m in conversation[1::2]), (r.stdout, conversation)


def raw_chat_keeps_a_text_session(d):
    r = strata("--socket", d.socket, "chat", "--raw", "-s", "talk-raw", *GREEDY, input="Once upon a time\n\nThe cat\n")
    assert r.returncode == 0, r.stderr
    info = result_of(json_lines(strata("--socket", d.socket, "--json", "sessions", "show", "talk-raw").stdout))
    # The session holds prompt 1, reply 1, then the second line (sent after a newline) and reply 2;
    # chat printed each reply followed by a newline (a reply may itself contain newlines).
    text = info["text"]
    assert text.startswith("Once upon a time") and "\nThe cat" in text, repr(text)
    replies = text[len("Once upon a time"):].replace("\nThe cat", "\n", 1) + "\n"
    assert r.stdout == replies, (r.stdout, text)


def chat_without_a_name_leaves_no_session(d):
    r = strata("--socket", d.socket, "chat", "-n", "4", input="Once upon a time\n")
    assert r.returncode == 0 and r.stdout.strip(), r
    sessions = result_of(json_lines(strata("--socket", d.socket, "--json", "sessions").stdout))["sessions"]
    assert not [s for s in sessions if s["name"].startswith("chat-")], sessions


def daemon_error_exits_1(d):
    r = strata("--socket", d.socket, "-n", "0", "Once")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "max_tokens" in r.stderr, r.stderr
    r = strata("--socket", d.socket, "-s", "bad name!", "Once")
    assert r.returncode == 1 and "session" in r.stderr, (r.returncode, r.stderr)


def usage_error_exits_2(d):
    for args in (["--bogus"], ["--temperature", "hot", "x"], ["sessions", "show"], []):
        r = strata("--socket", d.socket, *args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert "strata --help" in r.stderr, r.stderr


def nothing_listening_exits_3(_):
    missing = os.path.join(tempfile.mkdtemp(prefix="strata-it-"), "none.sock")
    r = strata("--socket", missing, "Once")
    assert r.returncode == 3, r
    assert missing in r.stderr and "systemctl start stratad.socket" in r.stderr, r.stderr
    r = strata("Once", env={"STRATA_SOCKET": missing})
    assert r.returncode == 3 and "$STRATA_SOCKET" in r.stderr, r.stderr


def a_wrong_socket_names_where_the_daemon_listens(d):
    missing = os.path.join(tempfile.mkdtemp(prefix="strata-it-"), "typo.sock")
    run_dir = os.path.dirname(d.socket)  # the daemon's socket is strata.sock there
    r = strata("--socket", missing, "status", env={"XDG_RUNTIME_DIR": run_dir})
    assert r.returncode == 3, r
    assert f"A daemon listens at {d.socket} ($XDG_RUNTIME_DIR)" in r.stderr, r.stderr


def latin1_input_is_named_and_converted_on_request(d):
    def run(*args):
        return subprocess.run([STRATA, "--socket", d.socket, "--raw", "-n", "2", "--temperature", "0", *args],
                              input=b"Once upon a caf\xe9 time", capture_output=True, timeout=120)
    r = run()
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert b"standard input is not valid UTF-8: byte 0xE9 at offset 15" in r.stderr, r.stderr
    assert b"--encoding latin1" in r.stderr, r.stderr
    for encoding in ("latin1", "replace"):
        r = run("--encoding", encoding)
        assert r.returncode == 0, (encoding, r.returncode, r.stderr)


def socket_found_through_the_environment(d):
    r = strata("status", env={"STRATA_SOCKET": d.socket})
    assert r.returncode == 0, r.stderr
    r = strata("status", env={"XDG_RUNTIME_DIR": d.dir})  # the daemon's socket is strata.sock there
    assert r.returncode == 0, r.stderr
    if not os.path.exists("/run/strata/strata.sock"):
        r = strata("status", env={"XDG_RUNTIME_DIR": tempfile.mkdtemp(prefix="strata-it-")})
        assert r.returncode == 3 and "/run/strata/strata.sock (system socket)" in r.stderr, r.stderr


def broken_connection_exits_4(_):
    """A peer that reads the request and hangs up without answering."""
    path = os.path.join(tempfile.mkdtemp(prefix="strata-it-"), "hangup.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)

    def hang_up():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.close()

    t = threading.Thread(target=hang_up)
    t.start()
    r = strata("--socket", path, "--raw", "Once")
    t.join()
    listener.close()
    assert r.returncode == 4, (r.returncode, r.stderr)
    assert "closed the connection" in r.stderr, r.stderr


def ctrl_c_cancels_and_exits_130(d):
    proc = subprocess.Popen([STRATA, "--socket", d.socket, "--json", "--temperature", "1", "-n", "1000",
                             "Once upon a time"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert '"token"' in first, first
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (proc.returncode, err)
    lines = json_lines(first + rest)
    assert {"cancelled": True} in [m.get("result") for m in lines], lines[-3:]  # the answer to `cancel`
    result = result_of([m for m in lines if "finish_reason" in m.get("result", {})])
    assert result["finish_reason"] == "cancelled", result
    assert result["usage"]["completion_tokens"] < 1000, result["usage"]


def a_reply_the_daemon_cuts_off_exits_5(_):
    """The daemon stops (no grace) while a reply streams: the result says "cancelled"
    though the user did nothing."""
    d = Daemon("--set", "server.shutdown_grace=0")
    proc = subprocess.Popen([STRATA, "--socket", d.socket, "--json", "--temperature", "1", "-n", "1000",
                             "Once upon a time"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert '"token"' in first, first
    assert d.stop() == 0
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 5, (proc.returncode, err)
    assert "cut the reply off" in err, err
    assert result_of(json_lines(first + rest))["finish_reason"] == "cancelled"


def main():
    need_binaries()
    checks = Checks()
    daemon = Daemon()
    for check in (streamed_text_matches_the_result, stdin_and_arguments_give_the_same_prompt,
                  arguments_blank_line_then_stdin, sessions_continue_and_are_managed, verbose_prints_speeds,
                  status_and_model, chat_keeps_a_named_session, raw_chat_keeps_a_text_session,
                  chat_without_a_name_leaves_no_session,
                  daemon_error_exits_1, usage_error_exits_2, nothing_listening_exits_3,
                  socket_found_through_the_environment, broken_connection_exits_4, ctrl_c_cancels_and_exits_130,
                  a_reply_the_daemon_cuts_off_exits_5, a_wrong_socket_names_where_the_daemon_listens,
                  latin1_input_is_named_and_converted_on_request):
        checks.run(check, daemon)
    checks.finish(daemon)


if __name__ == "__main__":
    main()
