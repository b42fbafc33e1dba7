#!/bin/sh
# tests/integration/kernel_symbols_test.sh — the SIMD variants' libraries (lib/kernels/simd,
# built once per ISA with its -m flags) define no weak function. A weak function there (an
# out-of-line std template, say std::vector<float>::resize) is one the linker may keep for
# the whole program, AVX-512 instructions and all, where code compiled for any x86-64 calls
# it: a SIGILL on an AVX2 machine. Their inline code lives in anonymous namespaces instead.
# Needs: STRATA_BUILD_DIR (the built tree), nm.
set -eu
command -v nm >/dev/null || { echo "skipped: nm is not installed"; exit 77; }
found=0
for lib in "${STRATA_BUILD_DIR:?}"/lib/kernels/libstrata_kernels_*.a; do
    [ -f "$lib" ] || continue
    found=1
    weak=$(nm -C --defined-only "$lib" | grep ' W ' | sed 's/^[0-9a-f]* W //' | sort -u)
    [ -z "$weak" ] || { echo "FAIL $(basename "$lib") defines weak functions:"; echo "$weak"; exit 1; }
    echo "ok   $(basename "$lib") defines no weak function"
done
[ "$found" = 1 ] || { echo "skipped: no SIMD kernel libraries in $STRATA_BUILD_DIR/lib/kernels"; exit 77; }
