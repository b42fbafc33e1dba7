#!/usr/bin/env python3
"""tests/bench/recurrent_turns_bench.py — time to first token of a long chat's later turns on a
hybrid recurrent model (qwen35), through the real stratad: a chat of about --tokens tokens sent
whole (as clients without sessions send it), then its next turn (the reply and a short user
message appended), a regenerated answer (the same messages again) and an edited last message;
each turn's TTFT (a one-token reply) against the cold first one, with cached_tokens. Beside it,
llama.cpp's cold prefill of the same length (peer-bench --pp N --tg 0), since the peer harness
has no server to replay the turns against.

usage: recurrent_turns_bench.py MODEL [--build build] [--tokens 4000] [--reps 3] [--peer off]
The model needs a chat format: its own template, or --chat-template FAMILY (qwen2.5 for a
synthetic file). Prints one JSON line: per turn the TTFTs of each rep (seconds), their median,
cached_tokens and prompt_tokens, the ratio to the cold turn; llama.cpp's cold prefill seconds."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import daemon_harness  # noqa: E402

PEER = os.path.expanduser("~/.cache/strata-peer/bin/peer-bench")


def words(seed, n):
    return " ".join(f"w{(seed * 7919 + i * 104729) % 5000}" for i in range(n))


def one_token(c, messages):
    t0 = time.time()
    reply = c.generate({"messages": messages, "max_tokens": 1, "temperature": 0, "stream": False}, timeout=3600)[0]
    elapsed = time.time() - t0
    assert "result" in reply, reply
    return elapsed, reply["result"]["usage"]


def chat_of(c, tokens):
    """User and assistant turns of random words until the prompt holds about `tokens` tokens."""
    conv, i = [], 0
    while True:
        conv += [{"role": "user", "content": words(i, 120)}, {"role": "assistant", "content": words(i + 1, 60)}]
        i += 2
        n = len(c.call("tokenize", {"text": " ".join(m["content"] for m in conv)})["result"]["tokens"])
        if n >= tokens:
            return conv + [{"role": "user", "content": words(i, 60)}]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--build", default="build")
    ap.add_argument("--tokens", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--chat-template", default="")
    ap.add_argument("--peer", default="on")
    args = ap.parse_args()
    daemon_harness.STRATAD = os.path.join(args.build, "daemon", "stratad")
    config = "[limits]\nmax_prompt_tokens = 100000\n" + (f"[engine]\nchat_template = {args.chat_template}\ncontext = 8192\n"
                                                         if args.chat_template else "[engine]\ncontext = 8192\n")
    turns = {"cold": [], "next_turn": [], "regenerate": [], "edited_last": []}
    usage = {}
    for rep in range(args.reps):
        daemon = daemon_harness.Daemon(config, model=args.model, extra_args=["--threads", "2"]).start()
        with daemon.client() as c:
            conv = chat_of(c, args.tokens)
            for name, messages in [("cold", conv),
                                   ("next_turn", conv + [{"role": "assistant", "content": words(99, 40)},
                                                         {"role": "user", "content": words(98, 30)}]),
                                   ("regenerate", conv + [{"role": "assistant", "content": words(99, 40)},
                                                          {"role": "user", "content": words(98, 30)}]),
                                   ("edited_last", conv + [{"role": "assistant", "content": words(99, 40)},
                                                           {"role": "user", "content": words(97, 30)}])]:
                elapsed, u = one_token(c, messages)
                turns[name].append(round(elapsed, 3))
                usage[name] = u
        daemon.stop()
    result = {"model": args.model, "tokens": usage["cold"]["prompt_tokens"], "reps": args.reps}
    cold = statistics.median(turns["cold"])
    for name, runs in turns.items():
        result[name] = {"ttft_s": runs, "median_s": statistics.median(runs), "of_cold": round(statistics.median(runs) / cold, 4),
                        "cached_tokens": usage[name]["cached_tokens"], "prompt_tokens": usage[name]["prompt_tokens"]}
    if args.peer != "off" and os.path.exists(PEER):
        out = subprocess.run([PEER, args.model, "--threads", "2", "--pp", str(result["tokens"]), "--tg", "0", "--reps", "1"],
                             capture_output=True, text=True).stdout
        line = next((l for l in out.splitlines() if l.startswith("{")), None)
        if line:
            pp = json.loads(line)["pp_tps"]
            result["llama_cpp_cold_prefill_s"] = round(result["tokens"] / pp, 3)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
