#!/usr/bin/env python3
"""tests/integration/codex_cli_test.py — Codex CLI (npm @openai/codex, pinned in
tests/clients/package.json) run non-interactively (`codex exec`) against the real stratad on a
loopback TCP port with an API key, as README's "Use it from an agent or editor" configures it:
the run completes, prints the model's answer, and contacts no one but stratad (its plug-ins,
update checks, analytics, web search and multi-agent tools are switched off in config.toml).
It runs the bundled model's agent copy (gguf_keys.agent_model: its replies end, and its
template renders the user's last turn only). Skipped with a message when the
binary is missing or cannot run here."""
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import TIMEOUT, Daemon, temporary_directory  # noqa: E402
from daemon_tcp_test import keys_file, tcp_port  # noqa: E402
from gguf_keys import agent_model  # noqa: E402
from openai_clients_test import CLIENTS  # noqa: E402

CODEX = os.path.join(CLIENTS, "node_modules", ".bin", "codex")
KEY = "sk-strata-codex-0123456789"
PROMPT = "Tell me a story about a cat."
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
