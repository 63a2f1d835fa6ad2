#!/usr/bin/env bash
# `make fuzz`: build the libFuzzer harnesses of tests/fuzz with clang
# (ASan + UBSan, CPU only) in build-fuzz/ and run each for SECONDS
# (default 60).  Exit 0 when no harness found anything, 1 otherwise; the
# input that crashed is left in build-fuzz/artifacts/<harness>/ (turn it
# into a regression test in tests/test_inputs_hostile.c).
#
#   scripts/fuzz.sh [SECONDS]          every harness
#   FUZZ_ONLY=fuzz_xyz scripts/fuzz.sh  one of them
#   CC=clang-15 scripts/fuzz.sh        another clang (default: clang)
#
# The seed corpora in tests/fuzz/corpus/<name>/ are read, never written:
# what a run adds goes to build-fuzz/corpus/<name>/, kept between runs.
set -euo pipefail
seconds=${1:-60}
build=${FUZZ_BUILD:-build-fuzz}
cc=${CC:-clang}
cxx=${CXX:-clang++} # src/host/fmt_double.cc
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# The harnesses: fuzz_<name> reads seeds from tests/fuzz/corpus/<name>/ and
# the dictionary tests/fuzz/<name>.dict.
#   fuzz_scenario  YAML text -> rc_scenario_load
#   fuzz_set       --set PATH=VALUE lines -> rc_scenario_load overrides
#   fuzz_xyz       an extended XYZ file -> rc_xyz_read
#   fuzz_checkpoint  a checkpoint file -> rc_ckpt_load, its scenario and
#                  the sections a restart reads
harnesses=(fuzz_scenario fuzz_set fuzz_xyz fuzz_checkpoint)
if [ -n "${FUZZ_ONLY:-}" ]; then
  harnesses=("$FUZZ_ONLY")
fi

if ! command -v "$cc" >/dev/null; then
  echo "fuzz: $cc not found (scripts/install-deps.sh installs clang-14 and libclang-rt-14-dev)" >&2
  exit 1
fi
jobs=$(nproc 2>/dev/null || echo 2)
CC="$cc" CXX="$cxx" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRICOCHET_CUDA=OFF -DRICOCHET_FUZZ=ON >/dev/null
cmake --build "$build" -j "$jobs" --target "${harnesses[@]}"

# Memory: libFuzzer counts an allocation over -malloc_limit_mb as a
# finding.  The scenario harnesses tell the loader's memory check that
# 2 GiB are available (RICOCHET_MEMORY_LIMIT=2G), so what it accepts
# stays far below; 4 GiB leaves room for ASan's quarantine and shadow.
# -timeout: one input taking 20 s is a hang.
# Leaks inside third-party libraries only (tests/lsan.supp says which).
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fail=0
mkdir -p "$build/tmp"
for h in "${harnesses[@]}"; do
  name=${h#fuzz_}
  seeds="tests/fuzz/corpus/$name"
  work="$build/corpus/$name"
  art="$build/artifacts/$h/"
  dict=()
  [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
  mkdir -p "$work" "$art"
  echo "fuzz: $h for $seconds s" >&2
  log="$build/$h.log"
  if TMPDIR="$root/$build/tmp" "$build/tests/fuzz/$h" \
       -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
       -malloc_limit_mb=4096 -print_final_stats=1 \
       -artifact_prefix="$art" "${dict[@]}" "$work" "$seeds" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $h: no finding in $seconds s (${runs:-?} executions; log $log)" >&2
  else
    echo "fuzz: $h FOUND A PROBLEM (log $log, input in $art):" >&2
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$log" | head -20 >&2 || true
    fail=1
  fi
done
exit $fail
