#!/bin/bash
# tests/bench/memlimit_bench.sh — strata and llama.cpp on the same model under the same
# memory limit, in a memory cgroup (v1 memory.limit_in_bytes, or v2 memory.max), with the
# page cache dropped before every run so that each run reads the model cold.
#
# usage: tests/bench/memlimit_bench.sh MODEL LIMIT_GIB [--sessions "1 2 4 8"] [--pp 512] [--tg 8]
#                                      [--threads 2] [--no-peer] [--build DIR]
#
# For each run it reports: OOM kills, the peak memory charged to the cgroup (RSS and page
# cache together), prompt and generation tokens/s, bytes read from disk per generated token,
# and for strata the memory plan (mode, bytes streamed per pass). First it measures the
# file's sequential read speed cold (O_DIRECT), and prints the bound that implies:
# read speed / bytes streamed per pass. strata plans its memory from the cgroup limit,
# exactly as stratad under MemoryMax= does. "disk busy" is the share of the generation time
# during which the streamer had reads in flight: near 100% means the disk, not the compute
# or the pipeline, sets the pace (on a virtual disk the read speed drifts, so the run's
# own reads can beat the cold read measured first, and "% of bound" can exceed 100%).
# llama.cpp runs twice: as it starts by default, and with --no-repack (memory-mapped
# weights only); "vs llama" compares with the faster of the two that finished.
# For a mixture of experts streamed, "expert hits" is the expert cache's hit rate over
# the run (prompt and generation) and read/token counts the experts read on demand.
# Needs root (cgroups, drop_caches); says so and
# exits 0 when cgroups are unavailable.
set -u -o pipefail
MODEL=${1:?usage: memlimit_bench.sh MODEL LIMIT_GIB [options]}
LIMIT_GIB=${2:?usage: memlimit_bench.sh MODEL LIMIT_GIB [options]}
shift 2
SESSIONS="1 2 4 8" PP=512 TG=8 THREADS=2 PEER=1
BUILD=$(cd "$(dirname "$0")/../.." && pwd)/build
while [ $# -gt 0 ]; do
    case $1 in
        --sessions) SESSIONS=$2; shift 2 ;;
        --pp) PP=$2; shift 2 ;;
        --tg) TG=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --no-peer) PEER=0; shift ;;
        --build) BUILD=$2; shift 2 ;;
        *) echo "memlimit_bench: unknown option $1" >&2; exit 2 ;;
    esac
done
BENCH=$BUILD/tests/bench/strata-bench
PEER_BENCH=${STRATA_PEER_DIR:-$HOME/.cache/strata-peer}/bin/peer-bench
LIMIT=$((LIMIT_GIB * 1024 * 1024 * 1024))
[ -x "$BENCH" ] || { echo "memlimit_bench: build strata-bench first ($BENCH)" >&2; exit 2; }
[ -f "$MODEL" ] || { echo "memlimit_bench: no model $MODEL" >&2; exit 2; }
[ -x "$PEER_BENCH" ] || { [ $PEER = 1 ] && echo "# llama.cpp harness not installed ($PEER_BENCH): strata only"; PEER=0; }

# --- the cgroup flavour --------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then echo "# memlimit_bench: skipped: needs root for cgroups and drop_caches"; exit 0; fi
V1_PATH=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
V2_PATH=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
if [ -n "$V1_PATH" ] && [ -w "/sys/fs/cgroup/memory${V1_PATH%/}" ]; then
    FLAVOUR=v1; PARENT=/sys/fs/cgroup/memory${V1_PATH%/}
elif [ -n "$V2_PATH" ] && grep -qw memory "/sys/fs/cgroup${V2_PATH%/}/cgroup.controllers" 2>/dev/null; then
    FLAVOUR=v2; PARENT=/sys/fs/cgroup${V2_PATH%/}
else
    echo "# memlimit_bench: skipped: no writable memory cgroup (v1 or v2) here"; exit 0
fi
echo "# cgroup $FLAVOUR under $PARENT, limit $LIMIT_GIB GiB ($LIMIT bytes)"

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# run NAME CMD...: runs CMD in a fresh cgroup limited to LIMIT; prints one JSON line
# {"run":NAME,"rc":..,"oom_kills":..,"peak_bytes":..,"result":<CMD's last stdout line>}.
run() {
    local name=$1; shift
    local cg=$PARENT/strata-memlimit-$$-$name out rc peak ooms
    mkdir "$cg" || return 1
    if [ $FLAVOUR = v1 ]; then
        echo "$LIMIT" > "$cg/memory.limit_in_bytes"
    else
        echo "$LIMIT" > "$cg/memory.max"; echo 0 > "$cg/memory.swap.max" 2>/dev/null
    fi
    drop_caches
    out=$(sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$cg" "$@" 2>"/tmp/memlimit-$name.log" | tail -n 1)
    rc=$?
    if [ $FLAVOUR = v1 ]; then
        peak=$(cat "$cg/memory.max_usage_in_bytes")
        ooms=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control"); ooms=${ooms:-0}
    else
        peak=$(cat "$cg/memory.peak" 2>/dev/null || echo 0)
        ooms=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.events")
    fi
    rmdir "$cg"
    case $out in \{*) ;; *) out=null ;; esac
    echo "{\"run\":\"$name\",\"rc\":$rc,\"oom_kills\":$ooms,\"peak_bytes\":$peak,\"result\":$out}"
}

# --- cold sequential read speed of the file -----------------------------------------------
# Two readers, the faster one sets the bound: dd (one 64 MiB O_DIRECT read at a time) and
# the streamer's own reader (io_uring, O_DIRECT, many requests in flight).
drop_caches
SIZE=$(stat -c %s "$MODEL")
COUNT=$(( (SIZE < 8 * 1024 * 1024 * 1024 ? SIZE : 8 * 1024 * 1024 * 1024) / (64 * 1024 * 1024) ))
T0=$(date +%s.%N)
dd if="$MODEL" of=/dev/null bs=64M count="$COUNT" iflag=direct status=none
T1=$(date +%s.%N)
DD_BPS=$(echo "$COUNT * 64 * 1048576 / ($T1 - $T0)" | bc)
drop_caches
URING_BPS=$("$BENCH" "$MODEL" --read-speed | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["read_bytes_per_s"]))')
READ_BPS=$(( DD_BPS > URING_BPS ? DD_BPS : URING_BPS ))
echo "{\"run\":\"cold-read\",\"dd_bytes_per_s\":$DD_BPS,\"io_uring_bytes_per_s\":$URING_BPS,\"read_bytes_per_s\":$READ_BPS}"

# --- the runs -----------------------------------------------------------------------------
RESULTS=()
first=1
for s in $SESSIONS; do
    pp=0; [ $first = 1 ] && pp=$PP
    RESULTS+=("$(run "strata-s$s" "$BENCH" "$MODEL" --threads "$THREADS" --pp "$pp" --tg "$TG" --reps 1 --tg-prompt 16 --sessions "$s" --peer off)")
    echo "${RESULTS[-1]}"
    first=0
done
if [ $PEER = 1 ]; then
    # llama.cpp as it starts by default (weights repacked into its own memory where its CPU
    # backend repacks that type), and memory-mapped only (--no-repack: the kernel pages the
    # file in and out).
    RESULTS+=("$(run "llama.cpp" "$PEER_BENCH" "$MODEL" --threads "$THREADS" --pp "$PP" --tg "$TG" --reps 1 --tg-prompt 16 --no-warmup)")
    echo "${RESULTS[-1]}"
    RESULTS+=("$(run "llama.cpp-mmap" "$PEER_BENCH" "$MODEL" --threads "$THREADS" --pp "$PP" --tg "$TG" --reps 1 --tg-prompt 16 --no-warmup --no-repack)")
    echo "${RESULTS[-1]}"
fi

# --- summary ------------------------------------------------------------------------------
printf '%s\n' "${RESULTS[@]}" | python3 -c '
import json, sys
limit, read_bps = int(sys.argv[1]), float(sys.argv[2])
rows = [json.loads(l) for l in sys.stdin if l.strip()]
peers = [r["result"] for r in rows if r["run"].startswith("llama.cpp") and r["result"] and r["result"].get("tg_tps")]
peer = max(peers, key=lambda p: p["tg_tps"]) if peers else None  # the better llama.cpp run
one = next((r["result"] for r in rows if r["run"] == "strata-s1" and r["result"]), None)
print("\n%-12s %5s %9s %10s %10s %14s %12s %10s %10s %11s" % ("run", "ooms", "peak GiB", "pp tok/s", "tg tok/s", "read/token GB", "% of bound",
      "disk busy", "vs llama", "expert hits"))
for r in rows:
    res = r["result"] or {}
    tg, pp = res.get("tg_tps", 0), res.get("pp_tps", 0)
    per_pass = res.get("streamed_bytes_per_pass", 0)
    bound = read_bps / per_pass if per_pass else 0
    sessions = res.get("sessions", 1)
    pct = "%.0f%%" % (100 * tg / sessions / bound) if bound else "-"
    vs = "%.2fx" % (tg / peer["tg_tps"]) if peer and not r["run"].startswith("llama.cpp") else "-"
    busy = "%.0f%%" % (100 * res["tg_read_busy_fraction"]) if per_pass and "tg_read_busy_fraction" in res else "-"
    hits = "%.1f%%" % (100 * res["expert_cache_hit_rate"]) if res.get("expert_cache_bytes") else "-"
    print("%-12s %5d %9.2f %10.2f %10.3f %14.2f %12s %10s %10s %11s" % (r["run"], r["oom_kills"], r["peak_bytes"] / 2**30, pp, tg,
          res.get("tg_read_bytes_per_token", 0) / 1e9, pct, busy, vs, hits))
if one:
    per_pass = one.get("streamed_bytes_per_pass", 0)
    print("\nstrata plan: %s, %.2f GiB streamed per pass, budget %.2f GiB (%s)" % (one["mode"], per_pass / 2**30, one["budget_bytes"] / 2**30, one["budget_source"]))
    print("cold read %.0f MB/s -> bound %s tokens/s for one session" % (read_bps / 1e6, "%.3f" % (read_bps / per_pass) if per_pass else "n/a (resident)"))
    if peer: print("prompt: strata %.2f vs llama.cpp %.2f tokens/s (%.2fx)" % (one["pp_tps"], peer["pp_tps"], one["pp_tps"] / peer["pp_tps"] if peer["pp_tps"] else 0))
eight = next((r["result"] for r in rows if r["run"] == "strata-s8" and r["result"]), None)
if one and eight and one["tg_tps"]: print("8 sessions: %.2fx one session" % (eight["tg_tps"] / one["tg_tps"]))
' "$LIMIT" "$READ_BPS"
