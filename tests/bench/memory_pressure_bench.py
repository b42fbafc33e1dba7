#!/usr/bin/env python3
"""tests/bench/memory_pressure_bench.py — stratad under live memory pressure, the scenario of
tests/integration/daemon_memory_pressure_test.py measured (root; a memory cgroup of its own):
stratad resident on a synthetic model, two clients generating without a pause; after
--before seconds a second process in the cgroup allocates --hog MiB in steps of 20 MiB,
holds it for --during seconds and exits; the clients go on for --after seconds once stratad
is resident again. Then llama.cpp (peer-generate, the same model, 2 threads) generates in
the same cgroup while the same process allocates the same memory: whether it or the
allocator is killed, and its rate (the page cache dropped first, so that the model's pages it
maps are charged to the cgroup).

usage: memory_pressure_bench.py [--build build] [--limit 800] [--hog 480] [--layers 16]
       [--type F16] [--before 5] [--during 10] [--after 5] [--regrow-after 2] [--peer off]
Prints one JSON line: generated tokens/s of stratad (both clients together) before, during
and after the pressure; the seconds from the allocator's first step beyond what the resident
copy leaves until stratad's RSS dropped (release_s) and until the allocator held everything
(hog_s); the seconds from its exit until stratad was resident again; llama.cpp's outcome."""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import daemon_harness  # noqa: E402
import daemon_memory_pressure_test as scenario  # noqa: E402

MiB = 1 << 20
PEER = os.path.expanduser("~/.cache/strata-peer/bin/peer-generate")


class Hog:
    """The allocating process, grown step by step to `total` bytes."""

    def __init__(self, group):
        self.p = subprocess.Popen([sys.executable, "-c", scenario.HOG_SCRIPT.replace(str(scenario.STEP), str(20 * MiB))],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=group.join)

    def grow(self, total, step_pause=0.2, on_step=None):
        for held in range(20 * MiB, total + 1, 20 * MiB):
            if on_step:
                on_step(held)
            self.p.stdin.write(f"{held}\n")
            self.p.stdin.flush()
            while True:
                line = self.p.stdout.readline()
                if not line:
                    return False
                if int(line.split()[1]) >= held:
                    break
            time.sleep(step_pause)
        return True

    def end(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait()
        self.p.stdout.close()
        return self.p.returncode


def tokens_between(replies, t0, t1):
    return sum(r["result"]["usage"]["completion_tokens"] for end, r in replies if t0 <= end < t1) / max(t1 - t0, 1e-9)


class TimedClients(scenario.Clients):
    def run(self):
        with self.daemon.client() as c:
            while not self.stop_flag.is_set():
                reply = c.call("generate", scenario.REQUEST)
                (self.replies if "result" in reply else self.errors).append((time.time(), reply))


def strata_run(args, model, group):
    daemon = daemon_harness.Daemon(f"[memory]\nregrow_after = {args.regrow_after}s\n", model=model, extra_args=["--threads", "2"])
    daemon.start(preexec_fn=group.join)
    resident_rss = scenario.rss(daemon.process.pid)
    clients, monitor = TimedClients(daemon), scenario.Monitor(daemon)
    time.sleep(args.before)
    t_hog = time.time()
    beyond = []  # when the allocator first held more than the resident copy leaves
    hog = Hog(group)
    got = hog.grow(args.hog * MiB, on_step=lambda held: beyond or (held + resident_rss > args.limit * MiB and beyond.append(time.time())))
    t_got = time.time()
    time.sleep(args.during)
    t_exit = time.time()
    hog.end()
    back = monitor.wait_for("resident", 120)
    time.sleep(args.after)
    t_end = time.time()
    clients.stop()
    monitor.stop()
    released = next((t for t, mode, rss, _ in monitor.samples if beyond and t >= beyond[0] and rss < resident_rss - 32 * MiB), None)
    status = daemon.status()
    daemon.stop()
    return {
        "tps_before": round(tokens_between(clients.replies, t_hog - args.before, t_hog), 2),
        "tps_during": round(tokens_between(clients.replies, t_got, t_exit), 2),
        "tps_after": round(tokens_between(clients.replies, back[0], t_end), 2),
        "release_s": round(released - beyond[0], 2) if released and beyond else None,
        "hog_s": round(t_got - t_hog, 2), "hog_got_memory": got,
        "resident_again_s": round(back[0] - t_exit, 2),
        "rss_resident_mib": resident_rss >> 20, "rss_streamed_min_mib": min(s[2] for s in monitor.samples) >> 20,
        "failed_requests": len(clients.errors), "alive": True,
        "budget_lowerings": status["memory_pressure_events"], "released_mib": status["memory_released_bytes"] >> 20,
    }


def peer_run(args, model, group):
    """llama.cpp generating in the cgroup while the allocator takes the same memory. The page
    cache is dropped first so that the model's pages it maps are charged to the cgroup (pages
    cached and charged elsewhere would not count against the limit)."""
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")
    t0 = time.time()
    peer = subprocess.Popen([PEER, model, "Once upon a time", "900", "--threads", "2", "--ctx", "1024"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=group.join)
    time.sleep(args.before)
    hog = Hog(group)
    got = hog.grow(args.hog * MiB)
    out = [None]
    reader = threading.Thread(target=lambda: out.__setitem__(0, peer.communicate()[0]))
    reader.start()
    reader.join(timeout=args.during)
    hog_rc = hog.end()
    reader.join()
    line = next((l for l in (out[0] or "").splitlines() if l.startswith("prompt ")), "")
    tps = float(line.split("(")[-1].split()[0]) if "generated" in line else None
    return {"returncode": peer.returncode, "killed": peer.returncode is not None and peer.returncode < 0, "tps": tps,
            "hog_got_memory": got and hog_rc == 0, "wall_s": round(time.time() - t0, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--limit", type=int, default=800)
    ap.add_argument("--hog", type=int, default=480)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--type", default="F16")
    ap.add_argument("--before", type=float, default=5)
    ap.add_argument("--during", type=float, default=10)
    ap.add_argument("--after", type=float, default=5)
    ap.add_argument("--regrow-after", type=int, default=2)
    ap.add_argument("--peer", default="on")
    args = ap.parse_args()
    daemon_harness.STRATAD = os.path.join(args.build, "daemon", "stratad")
    if os.geteuid() != 0:
        sys.exit("memory_pressure_bench: making a memory cgroup needs root")
    model = os.path.join(daemon_harness.temporary_directory(), "pressure.gguf")
    subprocess.run([os.path.join(args.build, "client", "strata-gguf"), "synth", model, "--n-embd", "1024", "--n-layer", str(args.layers),
                    "--n-ff", "2816", "--n-head", "16", "--n-head-kv", "4", "--vocab", "4096", "--ctx", "1024", "--type", args.type],
                   check=True, stdout=subprocess.DEVNULL)
    result = {"limit_mib": args.limit, "hog_mib": args.hog, "type": args.type, "layers": args.layers}
    for name, run in [("strata", strata_run)] + ([("llama_cpp", peer_run)] if args.peer != "off" and os.path.exists(PEER) else []):
        group = scenario.Cgroup.make(args.limit * MiB)
        if group is None:
            sys.exit("memory_pressure_bench: no memory cgroup can be made here")
        try:
            result[name] = run(args, model, group)
        finally:
            group.remove()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
