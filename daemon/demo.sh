#!/bin/sh
# daemon/demo.sh STRATAD STRATA MODEL — the README's "run" command (`meson compile -C build demo`):
# starts stratad on the bundled model and a temporary socket, asks it for a story through
# the strata client, shows the daemon's status, and stops it again.
set -eu
stratad=$1 strata=$2 model=$3
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
"$stratad" --model "$model" --socket "$dir/strata.sock" --state-dir "$dir/sessions" 2>"$dir/stratad.log" &
pid=$!
tries=0
until [ -S "$dir/strata.sock" ] && "$strata" --socket "$dir/strata.sock" status >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then cat "$dir/stratad.log" >&2; exit 1; fi
    sleep 0.1
done
echo "stratad is serving $model on $dir/strata.sock"
echo '$ echo "Once upon a time" | strata -n 120 -v'
echo "Once upon a time" | "$strata" --socket "$dir/strata.sock" -n 120 -v
echo '$ strata status'
"$strata" --socket "$dir/strata.sock" status
