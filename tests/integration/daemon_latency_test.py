#!/usr/bin/env python3
"""tests/integration/daemon_latency_test.py — latency you can monitor, on the real daemon:
native generations and OpenAI chat and completions requests land in the Prometheus
histograms of their own endpoint (time to first token, between tokens, queue wait, whole
request; counts exact, buckets cumulative), `status` reports the recent percentiles, and
`strata status` shows them as a table."""
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, DaemonTestCase  # noqa: E402
from daemon_http_test import prometheus_values  # noqa: E402

STRATA = os.path.join(BUILD, "client", "strata")
MEASURES = ("time_to_first_token", "inter_token", "queue_wait", "request_duration")
FAMILIES = {"time_to_first_token": "strata_time_to_first_token_seconds",
            "inter_token": "strata_inter_token_latency_seconds",
            "queue_wait": "strata_queue_wait_seconds",
            "request_duration": "strata_request_duration_seconds"}


class Latency(DaemonTestCase):
    def metrics(self):
        status, _, body = self.daemon.curl("http://localhost/metrics")
        self.assertEqual(status, 200)
        return prometheus_values(self, body.decode())

    def count(self, values, measure, endpoint):
        return values[f'{FAMILIES[measure]}_count{{endpoint="{endpoint}"}}']

    def test_each_endpoint_has_its_histograms_and_percentiles(self):
        before = self.metrics()
        pieces, slowest = [], 0.0
        with self.daemon.client() as c:
            for seed in range(3):
                start = time.monotonic()
                response, tokens = c.generate({"prompt": "Once upon a time", "max_tokens": 24, "seed": seed})
                slowest = max(slowest, time.monotonic() - start)
                self.assertIn("result", response)
                pieces.append(len(tokens))
        for _ in range(2):
            status, _, _ = self.daemon.curl("http://localhost/v1/chat/completions",
                                            data={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8})
            self.assertEqual(status, 200)
        status, _, _ = self.daemon.curl("http://localhost/v1/completions", data={"prompt": "Once", "max_tokens": 8})
        self.assertEqual(status, 200)
        after = self.metrics()

        def added(measure, endpoint):
            return self.count(after, measure, endpoint) - self.count(before, measure, endpoint)

        self.assertEqual(added("request_duration", "generate"), 3)
        self.assertEqual(added("queue_wait", "generate"), 3)
        self.assertEqual(added("time_to_first_token", "generate"), 3)
        self.assertEqual(added("inter_token", "generate"), sum(n - 1 for n in pieces))
        self.assertEqual(added("request_duration", "chat_completions"), 2)
        self.assertEqual(added("request_duration", "completions"), 1)
        for measure in MEASURES:
            family = FAMILIES[measure]
            for endpoint in ("generate", "completions", "chat_completions"):
                label = f'endpoint="{endpoint}"'
                buckets = sorted(((float(name.split('le="')[1].rstrip('"}').replace("+Inf", "inf")), value)
                                  for name, value in after.items()
                                  if name.startswith(family + "_bucket{" + label)))
                self.assertGreater(len(buckets), 10)
                counts = [value for _, value in buckets]
                self.assertEqual(counts, sorted(counts), (family, endpoint))  # cumulative
                self.assertEqual(counts[-1], after[f"{family}_count{{{label}}}"])
        # The daemon's durations lie within what the client saw.
        self.assertLessEqual(after['strata_request_duration_seconds_sum{endpoint="generate"}'] -
                             before['strata_request_duration_seconds_sum{endpoint="generate"}'], 3 * slowest)

        with self.daemon.client() as c:
            latency = c.call("status")["result"]["latency"]
        self.assertEqual(latency["window_s"], 300)
        self.assertEqual(set(latency["endpoints"]), {"generate", "completions", "chat_completions"})
        generate = latency["endpoints"]["generate"]
        self.assertEqual(set(generate), set(MEASURES))
        for measure in MEASURES:
            m = generate[measure]
            self.assertGreater(m["count"], 0, measure)
            self.assertLessEqual(0, m["p50"])
            self.assertLessEqual(m["p50"], m["p90"])
            self.assertLessEqual(m["p90"], m["p99"])
        self.assertLessEqual(generate["request_duration"]["p99"], slowest)
        self.assertLessEqual(generate["time_to_first_token"]["p99"], generate["request_duration"]["p99"])

        run = subprocess.run([STRATA, "--socket", self.daemon.socket, "status"], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("latency, last 300 s:", run.stdout)
        self.assertRegex(run.stdout, r"\n  generate +first token +\d+ +[0-9.]+ (us|ms|s) ")
        self.assertRegex(run.stdout, r"\n +between tokens +\d+ ")
        self.assertRegex(run.stdout, r"\n  chat_completions +first token ")
        self.assertNotIn('"latency"', run.stdout)


if __name__ == "__main__":
    unittest.main()
