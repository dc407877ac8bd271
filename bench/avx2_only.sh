#!/bin/sh
# Run a command as if this x86-64 CPU had AVX2 but none of AVX-512, AVX-VNNI or AMX: the
# CPUID instruction answers with those features cleared (bench/cpuid_mask.c, preloaded),
# and /proc/cpuinfo shows the same flags (bind-mounted in a private mount namespace), so
# glibc, numpy, torch, MKL, oneDNN, onnxruntime and VecBook's own detection all take their
# AVX2 paths on the same hardware as an unmasked run beside it.
#
#     sudo bench/avx2_only.sh python bench/speed.py --sizes 10000 --mcp-size 0
#
# Needs Linux, root (for the bind mount), gcc, and a CPU with CPUID faulting (the
# cpuid_fault flag). What it measures is this CPU's cores running AVX2 code, not an
# AVX2-only CPU: a ratio between two paths carries over better than a time. Python's
# faulthandler would take the SIGSEGV each CPUID raises: it is left off here, and pytest needs
# `-p no:faulthandler` (bench/avx2_only.sh python -m pytest -q -p no:faulthandler).
set -eu
unset PYTHONFAULTHANDLER
here=$(cd "$(dirname "$0")" && pwd)
if ! grep -qw cpuid_fault /proc/cpuinfo; then
    echo "avx2_only.sh: this CPU (or its hypervisor) offers no CPUID faulting (no cpuid_fault flag in /proc/cpuinfo)" >&2
    exit 2
fi
work=$(mktemp -d)  # private: a preloaded library must not be one another user could swap
gcc -O2 -shared -fPIC -o "$work/cpuid_mask.so" "$here/cpuid_mask.c"
awk '/^flags/ { line = $1 " " $2; for (i = 3; i <= NF; i++)
                    if ($i !~ /^(avx512|avx_vnni|amx_|avx_ne_convert|avx_ifma|avx10)/) line = line " " $i;
                print line; next } { print }' /proc/cpuinfo > "$work/cpuinfo"
# glibc picks its string functions before any preload runs: its own tunable hides the rest.
tunables="glibc.cpu.hwcaps=-AVX512F,-AVX512CD,-AVX512BW,-AVX512DQ,-AVX512VL,-AVX512_VNNI,-AVX_VNNI,-AMX_TILE"
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}$tunables"
exec unshare -m sh -c 'mount --bind "$1/cpuinfo" /proc/cpuinfo && shift && LD_PRELOAD="$0/cpuid_mask.so" exec "$@"' \
    "$work" "$work" "$@"
