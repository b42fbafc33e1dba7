#!/usr/bin/env python3
"""tests/integration/daemon_streaming_test.py — stratad with its weights streamed from disk
(memory.mode = streamed, a budget too small to keep every layer): status shows the plan,
the text is the same as with resident weights, and a disk read error fails the request
that needed it with an error naming the file and the byte, while the daemon goes on
serving (the read fault is injected through $STRATA_TEST_READ_FAULTS); a read that hangs
($STRATA_TEST_READ_STALL_MS) stops the systemd watchdog pings until the engine moves again.
A mixture of experts streamed (attention-only, and hybrid recurrent) reads the chosen experts
into its expert cache."""
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import SRC, Daemon, temporary_directory  # noqa: E402

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

    def test_the_watchdog_is_not_fed_while_the_engine_is_stuck(self):
        """Reads that hang 1.2 s each (a stuck disk; the first 8 after loading): WATCHDOG=1
        stops while the engine makes no progress, and comes back when it moves again; the
        request still completes."""
        directory = temporary_directory()
        notify_path = os.path.join(directory, "notify")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(notify_path)
        daemon = Daemon(self.config).start(env=dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="400000",
                                                    STRATA_TEST_READ_STALL_MS="1200"))
        pings, done = [], threading.Event()

        def listen():
            listener.settimeout(0.1)
            while not done.is_set():
                try:
                    if b"WATCHDOG=1" in listener.recv(4096):
                        pings.append(time.monotonic())
                except socket.timeout:
                    pass

        thread = threading.Thread(target=listen)
        thread.start()
        try:
            self.assertEqual(generate(daemon)["result"]["text"], self.expected)
            time.sleep(1)  # idle again: fed again
        finally:
            done.set()
            thread.join()
            listener.close()
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        self.assertGreater(max(gaps), 0.8, gaps)  # withheld during the stall (fed every 0.2 s otherwise)
        self.assertLess(gaps[-1], 1.0, gaps)
        self.assertIn("not feeding the systemd watchdog", daemon.log())
        self.assertIn("makes progress again", daemon.log())
        self.assertEqual(daemon.stop(), 0)


MOE_MODELS = [os.path.join(SRC, "tests", "data", "archs", "models", name)
              for name in ("qwen3moe-f16.gguf", "qwen35moe-f16.gguf")]  # attention only; hybrid recurrent


class MixtureOfExpertsStreamingTest(unittest.TestCase):
    """A mixture of experts streamed: only the chosen experts are read, into the expert
    cache, and status and /metrics show what it did; the same for a hybrid recurrent MoE."""

    def test_experts_are_read_on_demand_and_shown(self):
        for model in MOE_MODELS:
            with self.subTest(model=os.path.basename(model)):
                self.check_experts_read_on_demand(model)

    def check_experts_read_on_demand(self, model):
        resident = Daemon(model=model).start()
        expected = generate(resident)["result"]["text"]
        self.assertEqual(resident.status()["expert_cache_bytes"], 0)
        resident.stop()
        daemon = Daemon("[memory]\nmode = streamed\n", model=model).start()
        self.assertIn("experts read on demand", daemon.status()["memory_plan"])
        self.assertEqual(generate(daemon)["result"]["text"], expected)
        self.assertEqual(generate(daemon)["result"]["text"], expected)
        status = daemon.status()
        self.assertGreater(status["expert_cache_bytes"], 0)
        self.assertGreater(status["expert_cache_misses"], 0)
        self.assertGreater(status["expert_cache_hits"], status["expert_cache_misses"])  # the second request finds them
        self.assertAlmostEqual(status["expert_cache_hit_rate"],
                               status["expert_cache_hits"] / (status["expert_cache_hits"] + status["expert_cache_misses"]))
        self.assertGreater(status["expert_bytes_read"], 0)
        self.assertGreaterEqual(status["weights_bytes_read"], status["expert_bytes_read"])
        self.assertGreater(status["weights_bytes_read_per_token"], 0)
        _, _, metrics = daemon.curl("http://localhost/metrics")
        for name in ("strata_expert_cache_bytes", "strata_expert_cache_hits_total", "strata_expert_cache_misses_total",
                     "strata_expert_read_bytes_total"):
            self.assertIn("\n" + name + " ", metrics.decode())
        self.assertEqual(daemon.stop(), 0)


if __name__ == "__main__":
    unittest.main()
