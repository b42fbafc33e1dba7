#!/usr/bin/env python3
"""tests/bench/grammar_bench.py — what a JSON-schema constraint costs in decode speed, through
the real stratad: generations of --tokens tokens alternately free and under a JSON schema
(an object holding a long array of short strings, so that the document does not end before
--tokens), the decode rate of each taken from the result's timings (generate_tps: first
generated token to the end, the prompt excluded). Medians of --reps and constrained / free.

usage: grammar_bench.py MODEL [--build build] [--threads 2] [--tokens 64] [--reps 5]
Prints one JSON line."""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import daemon_harness  # noqa: E402

SCHEMA = {"type": "object", "properties": {"names": {"type": "array", "minItems": 200,
                                                     "items": {"type": "string", "maxLength": 12}}},
          "required": ["names"], "additionalProperties": False}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    o = ap.parse_args()
    daemon_harness.STRATAD = os.path.join(o.build, "daemon", "stratad")
    daemon = daemon_harness.Daemon(model=os.path.abspath(o.model), extra_args=["--threads", str(o.threads)])
    base = {"prompt": "A list of names in JSON:", "max_tokens": o.tokens, "temperature": 0.8, "seed": 1,
            "ignore_eos": True, "stream": False}
    free, constrained = [], []
    with daemon, daemon.client() as c:
        c.generate(dict(base, max_tokens=4))  # warm up
        for rep in range(o.reps):
            for params, out in ((base, free), (dict(base, json_schema=SCHEMA), constrained)):
                result = c.generate(dict(params, seed=rep))[0]["result"]
                if result["usage"]["completion_tokens"] != o.tokens:
                    raise SystemExit(f"a generation stopped after {result['usage']['completion_tokens']} tokens")
                out.append(result["timings"]["generate_tps"])
    print(json.dumps({"model": os.path.basename(o.model), "tokens": o.tokens, "reps": o.reps,
                      "free_tps": [round(x, 2) for x in free], "json_schema_tps": [round(x, 2) for x in constrained],
                      "free_median_tps": round(statistics.median(free), 2),
                      "json_schema_median_tps": round(statistics.median(constrained), 2),
                      "json_schema_over_free": round(statistics.median(constrained) / statistics.median(free), 4)}))


if __name__ == "__main__":
    main()
