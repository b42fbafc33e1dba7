#!/usr/bin/env python3
"""tests/integration/codex_cli_test.py — Codex CLI (npm @openai/codex, pinned in
tests/clients/package.json) run non-interactively (`codex exec`) against the real stratad on a
loopback TCP port with an API key, as README's "Use it from an agent or editor" configures it:
the run completes, prints the model's answer, and contacts no one but stratad (its plug-ins,
update checks, analytics, web search and multi-agent tools are switched off in config.toml).
The bundled TinyStories model ends a story with its BOS token (as llama2.c samples it), which
is no end-of-generation token to llama.cpp or strata, and after Codex's long instructions it
rambles until the context is full; Codex fails a turn that ends incomplete. So the test runs a
copy of it whose metadata declares BOS its end of turn and a line break its end of message
(tokenizer.ggml.eot_token_id, eom_token_id: a reply is one paragraph, and surely ends) and whose
chat template renders the user's last turn only. Skipped with a message when the
binary is missing or cannot run here."""
import os
import shutil
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import MODEL, TIMEOUT, Daemon, temporary_directory  # noqa: E402
from daemon_tcp_test import keys_file, tcp_port  # noqa: E402
from openai_clients_test import CLIENTS  # noqa: E402

CODEX = os.path.join(CLIENTS, "node_modules", ".bin", "codex")
KEY = "sk-strata-codex-0123456789"
PROMPT = "Tell me a story about a cat."
# The user's last turn only: the tiny model (trained on 512-token stories) rambles to the end of
# the context after Codex's instructions and tool list.
NEWLINE = 13  # the model's "\n" token
LAST_TURN_TEMPLATE = b"{{- bos_token }}{{- messages[-1].content | trim }}\n"
SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF value type → bytes


def skip_value(data, at, kind):
    """The offset after a GGUF value of type `kind` at `at`."""
    if kind in SCALARS:
        return at + SCALARS[kind]
    if kind == 8:
        return at + 8 + struct.unpack_from("<Q", data, at)[0]
    item, count = struct.unpack_from("<IQ", data, at)
    at += 12
    for _ in range(count):
        at = skip_value(data, at, item)
    return at


def gguf_string(text):
    return struct.pack("<Q", len(text)) + text


def with_metadata(source, target, changes):
    """Copies the GGUF `source` to `target` with the metadata `changes` ({key: (type, packed
    value)}) replacing or adding those keys."""
    with open(source, "rb") as f:
        data = f.read()
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", data, 4)
    at, alignment, kvs = 24, 32, []
    for _ in range(n_kv):
        key_len = struct.unpack_from("<Q", data, at)[0]
        key = data[at + 8:at + 8 + key_len]
        kind = struct.unpack_from("<I", data, at + 8 + key_len)[0]
        if key == b"general.alignment":
            alignment = struct.unpack_from("<I", data, at + 12 + key_len)[0]
        end = skip_value(data, at + 12 + key_len, kind)
        if key not in changes:
            kvs.append(data[at:end])
        at = end
    kvs += [gguf_string(key) + struct.pack("<I", kind) + value for key, (kind, value) in changes.items()]
    infos = at
    for _ in range(n_tensors):
        name_len = struct.unpack_from("<Q", data, at)[0]
        n_dims = struct.unpack_from("<I", data, at + 8 + name_len)[0]
        at += 8 + name_len + 4 + 8 * n_dims + 4 + 8
    head = b"GGUF" + struct.pack("<IQQ", version, n_tensors, len(kvs)) + b"".join(kvs) + data[infos:at]
    head += b"\0" * (-len(head) % alignment)
    with open(target, "wb") as f:
        f.write(head + data[(at + alignment - 1) // alignment * alignment:])


def agent_model(target):
    """The bundled model, its BOS its end of turn and a line break its end of message (so a
    reply is one paragraph), its template the last turn only."""
    with_metadata(MODEL, target, {b"tokenizer.ggml.eot_token_id": (4, struct.pack("<I", 1)),
                                  b"tokenizer.ggml.eom_token_id": (4, struct.pack("<I", NEWLINE)),
                                  b"tokenizer.chat_template": (8, gguf_string(LAST_TURN_TEMPLATE))})


def codex_runs():
    """Why Codex cannot run here ("" when it can)."""
    if not os.path.exists(CODEX):
        return "npm @openai/codex is not installed (.ci/install-deps runs npm ci in tests/clients)"
    try:
        run = subprocess.run([CODEX, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as error:
        return f"codex cannot run here: {error}"
    return "" if run.returncode == 0 else f"codex --version failed here: {run.stderr.strip()[-300:]}"


def codex_config(home, port):
    """README's Codex CLI configuration for a stratad on 127.0.0.1:port."""
    return f'''model = "stories260K"
model_provider = "strata"
approval_policy = "never"
sandbox_mode = "read-only"
model_instructions_file = "{home}/instructions.md"
check_for_update_on_startup = false
web_search = "disabled"
[analytics]
enabled = false
[feedback]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
tool_suggest = false
in_app_updates = false
multi_agent = false
goals = false
[skills]
include_instructions = false
[skills.bundled]
enabled = false
[model_providers.strata]
name = "strata"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "STRATA_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 120000
'''


@unittest.skipIf(codex_runs(), codex_runs())
class CodexExec(unittest.TestCase):
    def test_codex_exec_prints_the_models_answer(self):
        tmp = temporary_directory()
        model = os.path.join(tmp, "stories260K-eot.gguf")
        agent_model(model)
        keys = keys_file(f"{KEY} codex\n")
        home = os.path.join(tmp, "chome")
        for sub in ["chome", "home", "work"]:
            os.makedirs(os.path.join(tmp, sub))
        with open(os.path.join(home, "instructions.md"), "w") as f:
            f.write("You are a helpful assistant.")
        with Daemon(f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {keys}\n", model=model) as daemon:
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write(codex_config(home, tcp_port(daemon)))
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CODEX_HOME": home,
                   "HOME": os.path.join(tmp, "home"), "STRATA_API_KEY": KEY}
            last = os.path.join(tmp, "last.txt")
            run = subprocess.run([CODEX, "exec", "--strict-config", "--json", "-o", last, "--skip-git-repo-check",
                                  "--ephemeral", "-C", os.path.join(tmp, "work"), "--color", "never", PROMPT],
                                 env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT * 3)
            log = daemon.log()
        self.assertEqual(run.returncode, 0, run.stdout[-3000:] + run.stderr[-3000:] + log[-3000:])
        self.assertIn('"type":"turn.completed"', run.stdout)
        with open(last) as f:
            answer = f.read()
        print(f"codex exec answered: {answer!r}", file=sys.stderr)
        self.assertTrue(answer.strip(), run.stdout[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
