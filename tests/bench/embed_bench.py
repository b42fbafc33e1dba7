#!/usr/bin/env python3
"""tests/bench/embed_bench.py — embeddings speed: a stratad on MODEL answers POST /v1/embeddings
for one input of --tokens random token ids, --reps times (wall time of the request on the Unix
socket), and, when the llama.cpp harness is installed (~/.cache/strata-peer or $STRATA_PEER_DIR,
headers in ../shared/tools/peer/src), tests/peer/peer-embed.cpp (built here) decodes the same ids
with embeddings on (the second of two decodes in its process), alternating with strata. Prints one JSON line: medians in seconds, tokens/s,
and the ratio strata / llama.cpp (in tokens/s).

usage: embed_bench.py MODEL [--tokens 256] [--reps 5] [--threads 2] [--pooling mean|last] [--fa auto|on|off]
(--fa: llama.cpp's flash attention; strata always runs its own blockwise attention)"""
import argparse
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("STRATA_BUILD_DIR", os.path.join(SRC, "build"))
PEER_DIR = os.environ.get("STRATA_PEER_DIR", os.path.expanduser("~/.cache/strata-peer"))
PEER_SRC = os.path.join(SRC, "..", "shared", "tools", "peer", "src")


def post(sock_path, body):
    data = json.dumps(body).encode()
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(sock_path)
        s.sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(data) + data)
        out = b""
        while chunk := s.recv(1 << 16):
            out += chunk
    assert out.startswith(b"HTTP/1.1 200"), out[:300]


def build_peer(tmp):
    if not os.path.exists(os.path.join(PEER_DIR, "lib", "libllama.v0.5.0.so")) or not os.path.isdir(PEER_SRC):
        return None
    exe = os.path.join(tmp, "peer-embed")
    lib = os.path.join(PEER_DIR, "lib")
    subprocess.run(["g++", "-O2", "-std=c++17", "-I" + PEER_SRC, os.path.join(SRC, "tests", "peer", "peer-embed.cpp"), "-o", exe,
                    "-L" + lib, "-l:libllama.v0.5.0.so", "-l:libggml.v0.5.0.so", "-l:libggml-base.so", "-Wl,-rpath," + lib],
                   check=True)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pooling", choices=["mean", "last"], default="mean")
    ap.add_argument("--fa", choices=["auto", "on", "off"], default="auto")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="embed-bench-")
    try:
        peer = build_peer(tmp)
        ids = [1] + [random.Random(7).randrange(3, 30000) for _ in range(args.tokens - 1)]
        tokens_file = os.path.join(tmp, "tokens.txt")
        with open(tokens_file, "w") as f:
            f.write(" ".join(map(str, ids)))
        sock = os.path.join(tmp, "s.sock")
        conf = os.path.join(tmp, "strata.conf")
        with open(conf, "w") as f:
            f.write(f"[model]\npooling = {args.pooling}\n[engine]\nthreads = {args.threads}\nbatch_tokens = 512\n"
                    f"[limits]\nmax_prompt_tokens = {args.tokens}\n")
        log = open(os.path.join(tmp, "log"), "w")
        daemon = subprocess.Popen([os.path.join(BUILD, "daemon", "stratad"), "--socket", sock, "--model", args.model,
                                   "--config", conf], stderr=log)
        try:
            while not os.path.exists(sock) or "serving" not in open(os.path.join(tmp, "log")).read():
                time.sleep(0.1)
            post(sock, {"input": ids[:8]})  # warm-up
            ours, theirs = [], []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                post(sock, {"input": ids})
                ours.append(time.perf_counter() - t0)
                if peer:
                    run = subprocess.run([peer, args.model, tokens_file, os.path.join(tmp, "out.f32"), "--pooling", args.pooling,
                                          "--threads", str(args.threads), "--warmup", "--fa", args.fa], capture_output=True, text=True,
                                         env={**os.environ, "PEER_LIB_DIR": os.path.join(PEER_DIR, "lib")}, check=True)
                    theirs.append(float(re.search(r"decode_s=([0-9.]+)", run.stderr).group(1)))
        finally:
            daemon.terminate()
            daemon.wait()
        out = {"model": os.path.basename(args.model), "tokens": args.tokens, "threads": args.threads, "pooling": args.pooling,
               "peer_fa": args.fa,
               "strata_s": statistics.median(ours), "strata_tps": args.tokens / statistics.median(ours)}
        if theirs:
            out.update({"peer_s": statistics.median(theirs), "peer_tps": args.tokens / statistics.median(theirs),
                        "ratio_tps": statistics.median(theirs) / statistics.median(ours)})
        print(json.dumps(out))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
