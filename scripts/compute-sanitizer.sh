#!/usr/bin/env bash
# The gpu-labelled tests under compute-sanitizer's four tools:
#   memcheck   out-of-bounds and misaligned device accesses, and leaks
#              (--leak-check full);
#   initcheck  device memory read before anything wrote it;
#   synccheck  misuse of __syncthreads and warp synchronisation;
#   racecheck  shared-memory hazards: only kernels with __shared__ memory
#              can have them (listed in the log), so it runs only when
#              some kernel has it.
# What none of them can see: one item (an island, an ensemble member)
# writing past its own block into its neighbour's inside one allocation
# is a valid access to memcheck.  That overrun is checked on the CPU
# instead, where the launchers poison the blocks around each item and
# fail when one changes (src/host/md/dengine_cpu.c, cpu_island_checked,
# and the ensemble batch engine's checked mode).
#
# The log goes to bench/results/compute_sanitizer.txt as well, to be
# committed from a GPU machine.  Skips, with a message and exit 0, when
# the build has no CUDA backend, no device is present or
# compute-sanitizer is not installed; fails (exit 1) on any error
# reported, and when a GPU or driver is present but unusable.
# The tests run with RICOCHET_TEST_QUICK=1: fewer steps and members (the
# sanitizers slow kernels 10-100x; the code paths are the same).  Each
# test under each tool is stopped after CS_TIMEOUT seconds (default 900)
# and counts as a failure.  CS_TOOLS chooses tools (default: all four),
# CS_TESTS tests (default: every gpu-labelled test; names as ctest's),
# CS_LOG the log (default bench/results/compute_sanitizer.txt).
# usage: scripts/compute-sanitizer.sh [BUILD_DIR]   (env: CS_TIMEOUT,
#                                      CS_TOOLS, CS_TESTS, CS_LOG)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cs_timeout=${CS_TIMEOUT:-900}
log=${CS_LOG:-bench/results/compute_sanitizer.txt}
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
if grep -q "^cuda devices: unusable" <<<"$info"; then
  echo "compute-sanitizer: FAILED: $(grep '^cuda devices' <<<"$info")" >&2
  exit 1
fi
if grep -q "^cuda devices: none" <<<"$info"; then
  echo "compute-sanitizer: skipped ($(grep '^cuda devices' <<<"$info"))"
  exit 0
fi
tests=$(cd "$build" && ctest -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *//p')
[ -n "$tests" ] || { echo "compute-sanitizer: no gpu-labelled test in $build" >&2; exit 1; }
if [ -n "${CS_TESTS:-}" ]; then
  for t in $CS_TESTS; do
    grep -qx "$t" <<<"$tests" || { echo "compute-sanitizer: CS_TESTS: $t is not a gpu-labelled test in $build" >&2; exit 1; }
  done
  tests=$CS_TESTS
fi
shared=$(grep -l "__shared__" src/kernels/*.cu || true)
tools="memcheck initcheck synccheck"
[ -n "$shared" ] && tools="$tools racecheck"
tools=${CS_TOOLS:-$tools}
export RICOCHET_TEST_QUICK=1
mkdir -p "$(dirname "$log")"
exec > >(tee "$log.partial") 2>&1
echo "# make compute-sanitizer on $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n)"
echo "# $("$cs" --version | tail -1)"
grep -E "^(ricochet|cuda)" <<<"$info" | sed 's/^/# /'
echo "# kernels with shared memory (racecheck): ${shared:-none}"
echo "# tools: $tools; tests: $(echo $tests); RICOCHET_TEST_QUICK=1; each run stopped after $cs_timeout s"
fail=0
for tool in $tools; do
  for t in $tests; do
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    echo "== $tool: $t"
    # the tests' own 77 (skipped) is not an error; sanitizer errors are 1
    set +e
    (cd "$build/tests" && timeout "$cs_timeout" "$cs" --tool "$tool" $extra --error-exitcode 1 "./$t")
    rc=$?
    [ $rc -eq 124 ] && echo "compute-sanitizer: $tool: $t stopped after $cs_timeout s (CS_TIMEOUT)"
    set -e
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
      echo "compute-sanitizer: $tool: $t FAILED (exit $rc)"
      fail=1
    fi
  done
done
if [ $fail -eq 0 ]; then
  echo "compute-sanitizer: every gpu test clean under $tools"
fi
mv "$log.partial" "$log"
exit $fail
