#!/usr/bin/env bash
# The gpu-labelled tests under compute-sanitizer: memcheck (out-of-bounds
# and misaligned device accesses, leaks) and racecheck (shared-memory
# hazards).  Skips, with a message and exit 0, when the build has no CUDA
# backend, no device is present or compute-sanitizer is not installed.
# usage: scripts/compute-sanitizer.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cs=$(command -v compute-sanitizer || true)
[ -z "$cs" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && cs=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$cs" ]; then
  echo "compute-sanitizer: skipped (compute-sanitizer not found; it ships with the CUDA toolkit)"
  exit 0
fi
info=$("$build/ricochet" info)
if ! grep -q "cuda (compiled in)" <<<"$info"; then
  echo "compute-sanitizer: skipped (this build has no CUDA backend)"
  exit 0
fi
if grep -q "^cuda devices: none" <<<"$info"; then
  echo "compute-sanitizer: skipped ($(grep '^cuda devices' <<<"$info"))"
  exit 0
fi
tests=$(cd "$build" && ctest -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *//p')
[ -n "$tests" ] || { echo "compute-sanitizer: no gpu-labelled test in $build" >&2; exit 1; }
fail=0
for tool in memcheck racecheck; do
  for t in $tests; do
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    echo "== $tool: $t"
    # the tests' own 77 (skipped) is not an error; sanitizer errors are 1
    set +e
    (cd "$build/tests" && "$cs" --tool "$tool" $extra --error-exitcode 1 "./$t")
    rc=$?
    set -e
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
      echo "compute-sanitizer: $tool: $t FAILED (exit $rc)"
      fail=1
    fi
  done
done
[ $fail -eq 0 ] && echo "compute-sanitizer: every gpu test clean under memcheck and racecheck"
exit $fail
