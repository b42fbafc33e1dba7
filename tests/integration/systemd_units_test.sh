#!/bin/sh
# tests/integration/systemd_units_test.sh — the files of systemd/, checked offline:
# stratad.service's sandboxing scores an exposure of 2.0 or lower, systemd-analyze verify
# accepts both units (in a scratch root holding the unit files, the targets they depend
# on and a stratad binary), and the sysusers.d and tmpfiles.d entries create the strata
# user and its directories in a scratch root.
# Needs: STRATA_SOURCE_DIR; STRATA_BUILD_DIR (the built daemon; a stand-in executable otherwise).
set -eu
src=${STRATA_SOURCE_DIR:?}/systemd
for tool in systemd-analyze systemd-sysusers systemd-tmpfiles; do
    command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL $*"; exit 1; }

# Exposure: systemd-analyze's --threshold is on its internal 0-100 scale (2.0 -> 20).
exposure=$(systemd-analyze security --offline=yes "$src/stratad.service" 2>&1 | sed -n 's/.*Overall exposure level for stratad.service: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] || fail "no exposure level from systemd-analyze security"
systemd-analyze security --offline=yes --threshold=20 "$src/stratad.service" >/dev/null 2>&1 ||
    fail "exposure level $exposure is above 2.0"
echo "ok   exposure level of stratad.service: $exposure"

# verify: a scratch root with our units, the targets they order against, kill and stratad.
root=$work/root
mkdir -p "$root/lib/systemd/system" "$root/usr/sbin" "$root/usr/bin"
for unit in sysinit.target basic.target shutdown.target sockets.target slices.target paths.target \
            timers.target local-fs.target swap.target; do
    cp -L "/lib/systemd/system/$unit" "$root/lib/systemd/system/"
done
cp "$src/stratad.service" "$src/stratad.socket" "$root/lib/systemd/system/"
cp "$(PATH=/usr/bin:/bin which kill)" "$root/usr/bin/kill"   # ExecReload=kill ... (not the shell builtin)
stratad=${STRATA_BUILD_DIR:-build}/daemon/stratad
if [ -x "$stratad" ]; then cp "$stratad" "$root/usr/sbin/stratad"
else echo "note: stratad is not built; verifying against a stand-in executable"; cp "$(PATH=/usr/bin:/bin which true)" "$root/usr/sbin/stratad"
fi
out=$(systemd-analyze verify --man=no --root="$root" "$root/lib/systemd/system/stratad.socket" \
      "$root/lib/systemd/system/stratad.service" 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify complains: $out"
echo "ok   systemd-analyze verify stratad.socket stratad.service"

# sysusers.d and tmpfiles.d entries, applied to a scratch root.
sys=$work/sys
mkdir -p "$sys/etc"
systemd-sysusers --root="$sys" "$src/strata.sysusers"
user=$(grep '^strata:' "$sys/etc/passwd") || fail "sysusers created no strata user"
case $user in *:/var/lib/strata:/usr/sbin/nologin) ;; *) fail "strata user: $user" ;; esac
grep -q '^strata:' "$sys/etc/group" || fail "sysusers created no strata group"
echo "ok   sysusers: $user"
systemd-tmpfiles --root="$sys" --create "$src/strata.tmpfiles"
for d in /var/lib/strata /var/lib/strata/models; do
    [ "$(stat -c %a "$sys$d")" = 755 ] || fail "$d has mode $(stat -c %a "$sys$d")"
done
uid=$(echo "$user" | cut -d: -f3)
[ "$(stat -c %u "$sys/var/lib/strata/models")" = "$uid" ] || fail "/var/lib/strata/models is not owned by strata"
echo "ok   tmpfiles: /var/lib/strata and /var/lib/strata/models, mode 755, owned by strata"
