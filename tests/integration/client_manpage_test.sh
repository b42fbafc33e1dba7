#!/bin/sh
# tests/integration/client_manpage_test.sh — strata(1) renders without warnings and
# documents every option that `strata --help` lists.
# Needs: STRATA_SOURCE_DIR, STRATA_BUILD_DIR (the built client).
set -eu
page=${STRATA_SOURCE_DIR:?}/man/strata.1
command -v man >/dev/null || { echo "skipped: man is not installed"; exit 77; }
warnings=$(man --warnings -l "$page" 2>&1 >/dev/null)
[ -z "$warnings" ] || { echo "FAIL man --warnings: $warnings"; exit 1; }
echo "ok   man --warnings -l man/strata.1 is silent"
missing=""
for option in $("${STRATA_BUILD_DIR:?}/client/strata" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    escaped=$(printf '%s' "$option" | sed 's/-/\\-/g')   # --min-p is written \-\-min\-p
    grep -qF -- "$escaped" "$page" || missing="$missing $option"
done
[ -z "$missing" ] || { echo "FAIL options of strata --help missing from strata(1):$missing"; exit 1; }
echo "ok   every option of strata --help is in strata(1)"
