#!/usr/bin/env python3
"""tests/integration/daemon_streaming_test.py — stratad with its weights streamed from disk
(memory.mode = streamed, a budget too small to keep every layer): status shows the plan,
the text is the same as with resident weights, and a disk read error fails the request
that needed it with an error naming the file and the byte, while the daemon goes on
serving (the read fault is injected through $STRATA_TEST_READ_FAULTS)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import Daemon  # noqa: E402

GREEDY = {"prompt": "Once upon a time", "max_tokens": 40, "temperature": 0, "stream": False}
MAX_RETRIES = 3  # weights::StreamOptions::max_retries


def streamed_config():
    """The configuration with the smallest budget stratad accepts for the bundled model in
    streamed mode: the plan then keeps the fewest layers in memory. Found by trying, so that
    the test does not depend on how the reserves are computed."""
    for mib in range(100, 300):
        config = f"[memory]\nmode = streamed\nbudget = {mib}M\n"
        daemon = Daemon(config)
        try:
            daemon.start()
        except AssertionError as refused:  # the budget is too small
            assert "cannot run within the memory budget" in str(refused), refused
            continue
        streamed = daemon.status()["streamed_bytes_per_pass"]
        daemon.stop()
        assert streamed > 0, f"at {mib}M the plan streams nothing"
        return config
    raise AssertionError("no budget up to 300M starts the daemon in streamed mode")


def generate(daemon):
    with daemon.client() as c:
        return c.call("generate", GREEDY)


class StreamingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.config = streamed_config()
        resident = Daemon().start()
        cls.expected = generate(resident)["result"]["text"]
        resident.stop()

    def test_the_plan_is_shown_and_the_text_is_the_same(self):
        daemon = Daemon(self.config).start()
        status = daemon.status()
        self.assertEqual(status["weights_mode"], "streamed")
        self.assertGreater(status["streamed_bytes_per_pass"], 0)
        self.assertIn("streamed", status["memory_plan"])
        self.assertEqual(generate(daemon)["result"]["text"], self.expected)
        status = daemon.status()
        self.assertGreater(status["weights_bytes_read"], 0)
        self.assertGreater(status["forward_passes"], 0)
        self.assertEqual(daemon.stop(), 0)

    def test_a_read_error_fails_that_request_and_the_daemon_goes_on(self):
        daemon = Daemon(self.config).start(env=dict(os.environ, STRATA_TEST_READ_FAULTS=str(MAX_RETRIES + 1)))
        reply = generate(daemon)
        self.assertIn("error", reply, reply)
        message = reply["error"]["message"]
        for part in ("cannot read", daemon.model, "at byte", "Input/output error", "retries"):
            self.assertIn(part, message)
        self.assertIn("Input/output error", daemon.log())
        # The next request reads the layers anew and gets the text resident weights give.
        self.assertEqual(generate(daemon)["result"]["text"], self.expected)
        daemon.assert_serving(self)
        self.assertGreaterEqual(daemon.status()["read_retries"], MAX_RETRIES)
        self.assertEqual(daemon.stop(), 0)


if __name__ == "__main__":
    unittest.main()
