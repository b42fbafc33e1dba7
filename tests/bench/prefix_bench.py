#!/usr/bin/env python3
"""tests/bench/prefix_bench.py — what the automatic prefix cache saves, through the real
stratad's HTTP API as an OpenAI client uses it.

1. Time to first token of a PROMPT-token /v1/completions request (streamed), cold (a prompt
   whose first token no earlier request had), then warm: the same prompt with its last
   CHANGED tokens replaced. Medians of --reps, and warm / cold.
2. KV memory of 8 sessions that begin with the same SYSTEM-token prompt, against one
   (status kv_bytes_idle: the blocks idle sessions hold, a shared one counted once).

usage: prefix_bench.py MODEL [--build build] [--threads 2] [--prompt 1500] [--changed 20]
                             [--system 1000] [--reps 5]
Prints one JSON line."""
import argparse
import json
import os
import random
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import daemon_harness  # noqa: E402

WORDS = ("time day cat dog girl boy park tree sun moon ball house river friend mother father happy sad "
         "big small red blue green little old new good bad run jump play sing read walk look find").split()


def text_of(c, n_tokens, rng):
    """Words whose tokens number at least n_tokens (the daemon's tokenizer decides)."""
    words = []
    while True:
        words += [rng.choice(WORDS) for _ in range(max(16, n_tokens // 4))]
        ids = c.call("tokenize", {"text": " ".join(words)})["result"]["tokens"]
        if len(ids) >= n_tokens:
            return c.call("detokenize", {"tokens": ids[:n_tokens]})["result"]["text"], ids[:n_tokens]


def ttft(daemon, prompt):
    """Seconds from sending a streamed /v1/completions request to its first token."""
    body = json.dumps({"prompt": prompt, "max_tokens": 2, "temperature": 0, "stream": True}).encode()
    request = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(daemon.socket)
        start = time.perf_counter()
        s.sendall(request)
        seen = b""
        while b'"text":"' not in seen.split(b"data: ", 1)[-1]:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("the daemon closed the stream: " + seen.decode(errors="replace"))
            seen += chunk
        return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=1500)
    ap.add_argument("--changed", type=int, default=20)
    ap.add_argument("--system", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    o = ap.parse_args()
    daemon_harness.STRATAD = os.path.join(o.build, "daemon", "stratad")
    daemon = daemon_harness.Daemon(f"[limits]\nmax_prompt_tokens = {o.prompt + 64}\n", model=os.path.abspath(o.model),
                                   extra_args=["--threads", str(o.threads), "--context", str(o.prompt + 64)])
    rng = random.Random(1)
    with daemon:
        with daemon.client() as c:
            ttft(daemon, "warm up")
            cold, warm = [], []
            for rep in range(o.reps):
                head, _ = text_of(c, o.prompt - o.changed, rng)
                tail_a, _ = text_of(c, o.changed, rng)
                tail_b, _ = text_of(c, o.changed, rng)
                cold.append(ttft(daemon, f"Story {rep}: " + head + " " + tail_a))
                warm.append(ttft(daemon, f"Story {rep}: " + head + " " + tail_b))
            system, _ = text_of(c, o.system, rng)
            kv = []
            for i in range(8):
                params = {"session": f"bench-{i}", "prompt": system + f" Question {i}?", "max_tokens": 4,
                          "temperature": 0, "stream": False}
                c.generate(params)
                kv.append(daemon.status()["kv_bytes_idle"])
            for i in range(8):
                c.call("session.delete", {"session": f"bench-{i}"})
    median_cold, median_warm = statistics.median(cold), statistics.median(warm)
    print(json.dumps({
        "model": os.path.basename(o.model), "prompt_tokens": o.prompt, "changed_tokens": o.changed, "reps": o.reps,
        "ttft_cold_s": [round(x, 4) for x in cold], "ttft_warm_s": [round(x, 4) for x in warm],
        "ttft_cold_median_s": round(median_cold, 4), "ttft_warm_median_s": round(median_warm, 4),
        "warm_over_cold": round(median_warm / median_cold, 4),
        "system_tokens": o.system, "kv_bytes_1_session": kv[0], "kv_bytes_8_sessions": kv[-1],
        "kv_8_over_1": round(kv[-1] / kv[0], 3)}))


if __name__ == "__main__":
    main()
