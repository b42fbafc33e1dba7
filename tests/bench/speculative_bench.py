#!/usr/bin/env python3
"""tests/bench/speculative_bench.py — speculative decoding (engine.speculative) through the
real stratad: decode tokens/s of the same requests with "speculative": "off" and "ngram",
alternating, medians of --reps.

- edit: the prompt holds a text and the start of it again, so a model that copies answers
  by repeating it (the editing task: an answer that repeats most of its input). The text is
  the model's own greedy continuation of --seed-text, so that the model does copy it.
- free: free-form sampled text from a short prompt (temperature 0.8, seed per rep), where
  guesses mostly fail and speculation should back off.

usage: speculative_bench.py MODEL [--build build] [--threads 2] [--tokens 256] [--reps 5] [--peer off]
Prints one JSON line: per task and mode the generate_tps of each rep, their median, the
guesses accepted of those made, and ngram / off; and llama.cpp's plain decode (peer-bench
tg_tps, --tg TOKENS) on the same model in the same run unless --peer off."""
import argparse
import json
import os
import subprocess
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import daemon_harness  # noqa: E402


def run(c, params):
    result = c.generate(dict(params, stream=False), timeout=600)[0]["result"]
    t = result["timings"]
    return t["generate_tps"], t["speculative_guessed"], t["speculative_accepted"], result["text"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed-text", default="Once upon a time")
    ap.add_argument("--peer", default=os.path.expanduser("~/.cache/strata-peer/bin/peer-bench"))
    o = ap.parse_args()
    daemon_harness.STRATAD = os.path.join(o.build, "daemon", "stratad")
    daemon = daemon_harness.Daemon("", model=os.path.abspath(o.model),
                                   extra_args=["--threads", str(o.threads), "--context", str(4 * o.tokens + 64)])
    out = {"model": os.path.basename(o.model), "tokens": o.tokens, "reps": o.reps}
    with daemon:
        with daemon.client() as c:
            base = {"max_tokens": o.tokens, "temperature": 0, "ignore_eos": True, "speculative": "off"}
            text = run(c, dict(base, prompt=o.seed_text))[3]
            tasks = {"edit": lambda rep: {"prompt": o.seed_text + text + "\n\n" + o.seed_text, "temperature": 0},
                     "free": lambda rep: {"prompt": o.seed_text, "temperature": 0.8, "seed": rep + 1}}
            for task, params in tasks.items():
                figures = {"off": [], "ngram": []}
                guessed = accepted = 0
                for rep in range(o.reps):
                    for mode in ("off", "ngram") if rep % 2 == 0 else ("ngram", "off"):
                        tps, g, a, _ = run(c, dict(base, **params(rep), speculative=mode))
                        figures[mode].append(round(tps, 2))
                        guessed, accepted = guessed + g, accepted + a
                medians = {m: statistics.median(v) for m, v in figures.items()}
                out[task] = {"off_tps": figures["off"], "ngram_tps": figures["ngram"], "off_median": medians["off"],
                             "ngram_median": medians["ngram"], "ngram_over_off": round(medians["ngram"] / medians["off"], 3),
                             "guessed": guessed, "accepted": accepted}
            status = daemon.status()
            out["tokens_per_pass"] = round(status["speculative_tokens_per_pass"], 3)
    if o.peer != "off":
        peer = subprocess.run([o.peer, o.model, "--threads", str(o.threads), "--pp", "16", "--tg", str(o.tokens), "--reps", "3"],
                              capture_output=True, text=True, check=True)
        out["llama_cpp_tg_tps"] = json.loads(peer.stdout.strip().splitlines()[-1])["tg_tps"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
