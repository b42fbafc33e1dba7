#!/usr/bin/env python3
"""tests/integration/claude_code_test.py — Claude Code (npm @anthropic-ai/claude-code, pinned in
tests/clients/package.json) run non-interactively (`claude -p`) against the real daemon over
loopback TCP with an API key, offline: ANTHROPIC_BASE_URL points at stratad, the settings of
../shared/reference/agent-clients.md keep it from telemetry, updates and api.anthropic.com,
and its system prompt and tools are cut down to fit the bundled model's 2048 tokens. It runs
the bundled model's agent copy (gguf_keys.agent_model: its replies end, and its template
renders the user's last turn only: otherwise a story fills the context and Claude Code's
follow-up request does not fit). It must complete the run and print the model's answer.
Skips with a message when the client is not installed or its binary cannot run here."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import Daemon, temporary_directory  # noqa: E402
from daemon_tcp_test import tcp_port  # noqa: E402
from gguf_keys import agent_model  # noqa: E402
from openai_clients_test import CLIENTS  # noqa: E402

KEY = "sk-claude-code-test-key-0123456789"
CLAUDE = os.path.join(CLIENTS, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")


def claude_runs():
    """Why Claude Code cannot run here, or None."""
    if not os.path.exists(CLAUDE):
        return f"{CLAUDE} is not installed (.ci/install-deps runs npm ci in tests/clients)"
    try:
        version = subprocess.run([CLAUDE, "--version"], capture_output=True, text=True, timeout=60,
                                 env={"PATH": os.environ.get("PATH", ""), "HOME": temporary_directory()})
    except OSError as e:
        return f"{CLAUDE} does not run here: {e}"
    return None if version.returncode == 0 else f"claude --version failed: {version.stderr.strip()[:200]}"


WHY_NOT = claude_runs()


@unittest.skipIf(WHY_NOT is not None, WHY_NOT or "")
class ClaudeCode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        keys = os.path.join(temporary_directory(), "api_keys")
        with open(keys, "w") as f:
            f.write(f"{KEY} claude\n")
        os.chmod(keys, 0o600)
        model = os.path.join(temporary_directory(), "stories260K-agent.gguf")
        agent_model(model)
        cls.daemon = Daemon(model=model, config=f"[server]\nlisten = 127.0.0.1:0\napi_keys_file = {keys}\nshutdown_grace = 60s\n").start()
        cls.port = tcp_port(cls.daemon)

    @classmethod
    def tearDownClass(cls):
        assert cls.daemon.stop() == 0, cls.daemon.log()

    def run_claude(self, prompt):
        home, work = temporary_directory(), temporary_directory()
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home,
               "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}", "ANTHROPIC_API_KEY": KEY,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
               "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_MAX_RETRIES": "1"}
        return subprocess.run([CLAUDE, "-p", "--model", "stories260K", "--system-prompt", "You are a helpful assistant.",
                               "--tools", "Bash,Read,Edit,Write", "--disable-slash-commands", "--strict-mcp-config",
                               "--no-session-persistence", "--output-format", "json", prompt],
                              cwd=work, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)

    def test_a_non_interactive_run_prints_the_models_answer(self):
        run = self.run_claude("Tell me a story about a cat.")
        self.assertTrue(run.stdout.strip(), run.stderr[-2000:])
        answer = json.loads(run.stdout)
        # Claude Code reached stratad offline and its /v1/messages stream was answered.
        self.assertGreater(answer["usage"]["input_tokens"] + answer["usage"]["cache_read_input_tokens"], 0, answer)
        self.assertGreater(answer["usage"]["output_tokens"], 0, answer)
        self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-2000:])
        self.assertFalse(answer.get("is_error"), answer)
        self.assertTrue(answer["result"].strip(), answer)


if __name__ == "__main__":
    unittest.main()
