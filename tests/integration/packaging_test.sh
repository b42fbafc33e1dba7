#!/bin/sh
# tests/integration/packaging_test.sh — the Debian packages: builds them with
# `dpkg-buildpackage -us -uc -b` from a clean copy of the tree, checks what each holds
# (files, conffiles, maintainer-script snippets) and that lintian finds no errors.
# With STRATA_PACKAGING_INSTALL=1 (as root, on a machine without strata installed) it also
# installs them with dpkg -i, checks the user, directories, units, man pages and config,
# runs the installed stratad as the strata user on /run/strata/strata.sock the way
# stratad.socket + stratad.service would, asks it with the installed client, and purges.
#
# Opt-in (a full release build: several minutes on 2 cores): STRATA_PACKAGING_TEST=1.
# DEB_BUILD_OPTIONS defaults to "nocheck parallel=<cores>"; set it to run dh_auto_test too.
# Needs: STRATA_SOURCE_DIR; dpkg-dev, debhelper, lintian and the Build-Depends.
set -eu
if [ "${STRATA_PACKAGING_TEST:-0}" != 1 ]; then
    echo "skipped: set STRATA_PACKAGING_TEST=1 to build and check the Debian packages (several minutes)"
    exit 77
fi
src=${STRATA_SOURCE_DIR:?}
for tool in dpkg-buildpackage dh lintian; do
    command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed"; exit 77; }
done
work=$(mktemp -d)
installed=""
cleanup() {
    [ -z "$installed" ] || dpkg --purge strata stratad >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL $*"; exit 1; }
ok() { echo "ok   $*"; }

# A clean copy: the files git knows (tracked, and untracked but not ignored), so that no
# build directory of the developer's ends up in the package build.
mkdir "$work/strata"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - --no-recursion) |
    tar -xf - -C "$work/strata"

echo "building the packages in $work ..."
(cd "$work/strata" &&
 DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-"nocheck parallel=$(nproc)"} dpkg-buildpackage -us -uc -b) \
    >"$work/build.log" 2>&1 || { tail -60 "$work/build.log"; fail "dpkg-buildpackage"; }
version=$(cd "$work/strata" && dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
daemon_deb=$work/stratad_${version}_${arch}.deb
client_deb=$work/strata_${version}_${arch}.deb
[ -f "$daemon_deb" ] && [ -f "$client_deb" ] || fail "expected $daemon_deb and $client_deb; got: $(ls "$work")"
ok "dpkg-buildpackage built $(basename "$daemon_deb") and $(basename "$client_deb")"
if grep -q 'dh_auto_test' "$work/build.log" && grep -q '^Ok: ' "$work/build.log"; then
    ok "dh_auto_test (meson test --suite integration): $(grep -E '^(Ok|Fail|Skipped): ' "$work/build.log" | tr -s ' ' | tr '\n' ' ')"
fi

# has DEB PATH...: every path is in the package.
has() {
    deb=$1; shift
    list=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
    for path in "$@"; do
        echo "$list" | grep -qx -- "$path" || fail "$(basename "$deb") lacks $path"
    done
}
has "$daemon_deb" /usr/sbin/stratad /lib/systemd/system/stratad.service /lib/systemd/system/stratad.socket \
    /usr/lib/sysusers.d/strata.conf /usr/lib/tmpfiles.d/strata.conf /etc/strata/strata.conf \
    /usr/share/strata/models/stories260K.gguf /usr/share/man/man8/stratad.8.gz \
    /usr/share/man/man5/strata.conf.5.gz /usr/share/man/man7/strata-protocol.7.gz \
    /usr/share/doc/stratad/copyright
has "$client_deb" /usr/bin/strata /usr/bin/strata-gguf /usr/share/man/man1/strata.1.gz \
    /usr/share/man/man1/strata-gguf.1.gz /usr/share/doc/strata/copyright
cmp -s "$src/daemon/models/stories260K.gguf" \
    "$(mkdir "$work/x" && dpkg-deb -x "$daemon_deb" "$work/x" && echo "$work/x/usr/share/strata/models/stories260K.gguf")" ||
    fail "the packaged model differs from daemon/models/stories260K.gguf"
ok "package contents"

dpkg-deb -I "$daemon_deb" conffiles | grep -qx /etc/strata/strata.conf || fail "strata.conf is not a conffile"
dpkg-deb -e "$daemon_deb" "$work/control"
grep -q 'systemd-sysusers' "$work/control/postinst" || fail "postinst does not create the strata user"
grep -q 'systemd-tmpfiles' "$work/control/postinst" || fail "postinst does not create the directories"
grep -q "deb-systemd-helper enable 'stratad.socket'" "$work/control/postinst" ||
    fail "postinst does not enable stratad.socket"
sysusers_line=$(grep -n systemd-sysusers "$work/control/postinst" | head -1 | cut -d: -f1)
socket_line=$(grep -n "stratad.socket" "$work/control/postinst" | head -1 | cut -d: -f1)
[ "$sysusers_line" -lt "$socket_line" ] || fail "postinst starts the socket before creating the strata user"
ok "conffiles and maintainer scripts (sysusers, tmpfiles, socket enabled)"

status=0
lintian -I --fail-on error --tag-display-limit 0 "$work"/strata_*.changes >"$work/lintian.raw" 2>&1 || status=$?
grep -v 'running with root privileges' "$work/lintian.raw" >"$work/lintian.log" || true
[ $status = 0 ] || { cat "$work/lintian.log"; fail "lintian reports errors"; }
ok "lintian: no errors ($(grep -c '^W:' "$work/lintian.log" || true) warnings, $(grep -c '^I:' "$work/lintian.log" || true) info)"
sed 's/^/     /' "$work/lintian.log"

[ "${STRATA_PACKAGING_INSTALL:-0}" = 1 ] || { echo "not installing (set STRATA_PACKAGING_INSTALL=1 as root to)"; exit 0; }
[ "$(id -u)" = 0 ] || fail "STRATA_PACKAGING_INSTALL=1 needs root"
if dpkg -s stratad >/dev/null 2>&1 || dpkg -s strata >/dev/null 2>&1; then
    fail "strata or stratad is already installed here; not touching it"
fi
user_existed=$(getent passwd strata >/dev/null && echo yes || echo no)
installed=yes
dpkg -i "$daemon_deb" "$client_deb" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "dpkg -i"; }
ok "dpkg -i"

entry=$(getent passwd strata) || fail "no strata user after installing"
case $entry in *:/var/lib/strata:/usr/sbin/nologin) ;; *) fail "strata user: $entry" ;; esac
getent group strata >/dev/null || fail "no strata group"
for d in /var/lib/strata /var/lib/strata/models; do
    [ "$(stat -c %U "$d")" = strata ] || fail "$d is missing or not owned by strata"
done
[ -f /etc/strata/strata.conf ] || fail "no /etc/strata/strata.conf"
[ -L /etc/systemd/system/sockets.target.wants/stratad.socket ] || fail "stratad.socket is not enabled"
man -w strata >/dev/null && man -w 8 stratad >/dev/null && man -w 5 strata.conf >/dev/null ||
    fail "man pages not found by man"
out=$(systemd-analyze verify /lib/systemd/system/stratad.socket /lib/systemd/system/stratad.service 2>&1) ||
    fail "systemd-analyze verify on the installed units: $out"
[ -z "$out" ] || fail "systemd-analyze verify on the installed units: $out"
ok "user $entry, /var/lib/strata/models, strata.conf, socket enabled, man pages, units verify (man pages included)"

# What stratad.socket + stratad.service do, without systemd as PID 1: root listens on
# /run/strata/strata.sock (strata:strata, 0660), the daemon runs as strata with the
# installed configuration and gets the listening socket.
install -d -o strata -g strata -m 0755 /run/strata
systemd-socket-activate -l /run/strata/strata.sock \
    setpriv --reuid=strata --regid=strata --init-groups /usr/sbin/stratad --config /etc/strata/strata.conf \
    >"$work/stratad.log" 2>&1 &
activate_pid=$!
i=0
while [ ! -S /run/strata/strata.sock ]; do
    i=$((i + 1)); [ $i -lt 200 ] || fail "systemd-socket-activate did not listen"; sleep 0.05
done
chown strata:strata /run/strata/strata.sock
chmod 0660 /run/strata/strata.sock
answer=$(env -u STRATA_SOCKET -u XDG_RUNTIME_DIR /usr/bin/strata --temperature 0 -n 24 "Once upon a time" </dev/null) ||
    { cat "$work/stratad.log"; fail "the installed client got no answer from the installed daemon"; }
[ -n "$answer" ] || fail "empty answer"
ok "installed strata -> installed stratad (as user strata): $(echo "$answer" | head -1 | cut -c1-60)..."
[ "$(ps -o user= -p "$activate_pid")" = strata ] || fail "stratad does not run as strata"
set +e
denied=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env -u XDG_RUNTIME_DIR /usr/bin/strata status 2>&1 </dev/null)
status=$?
set -e
[ $status = 3 ] && echo "$denied" | grep -q "'strata' group" || fail "a user outside the strata group: status $status: $denied"
ok "a user outside the strata group is refused (exit 3, told about the group)"
kill -TERM "$activate_pid"
wait "$activate_pid" || fail "stratad did not exit 0 on SIGTERM: $(tail -5 "$work/stratad.log")"
ok "SIGTERM: stratad exited 0"

dpkg --purge stratad strata >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg --purge"; }
installed=""
rm -rf /run/strata
for path in /usr/sbin/stratad /usr/bin/strata /etc/strata /lib/systemd/system/stratad.service \
            /etc/systemd/system/sockets.target.wants/stratad.socket /var/lib/strata; do
    [ ! -e "$path" ] || fail "$path is still there after dpkg --purge"
done
if [ "$user_existed" = no ]; then userdel strata; fi  # Debian keeps system users on purge; the test does not
ok "dpkg --purge left nothing behind"
