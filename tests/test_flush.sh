#!/usr/bin/env bash
# CSV outputs flushed at each status line (README "Outputs"): a run whose
# stderr is not a terminal prints a status line every output.log_every
# seconds, and the library flushes the run's CSV files before each
# progress report, so the rows up to the step a status line names are
# on disk when it appears.  Each run here (a particle system, a model, a
# large system) is killed with SIGKILL once its first status line is in
# the log: no exit handler runs, so only rows already flushed survive in
# the .partial file.  The rows before that step are few (a row every
# 10^6 steps or so: the header and row 0, a few hundred bytes), far less
# than a stdio buffer (4 KiB), so without the flush the file is empty
# and the test fails, however fast or slow the machine.
# Usage: test_flush.sh RICOCHET_CLI EXAMPLES_DIR
set -u
cli=$1
examples=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

# run NAME CSV EVERY SCENARIO --set ...: start the run, wait for its first
# status line, SIGKILL it, check that CSV (a .partial in the output
# directory) holds every row at a multiple of EVERY below the step the
# line reports.
check() {
  local name=$1 csv=$2 every=$3 scn=$4
  shift 4
  local out=$work/$name log=$work/$name.log pid k step
  "$cli" run "$scn" --out "$out" --set output.log_every=0.2 \
    --set output.every="$every" "$@" >/dev/null 2>"$log" &
  pid=$!
  # a hang guard only (the first line is due after 0.2 s)
  for ((k = 0; k < 1200; ++k)); do
    grep -qs '^ricochet: [0-9]*/[0-9]* steps' "$log" && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "FAIL $name: the run ended before a status line:" >&2
      cat "$log" >&2
      fail=1
      return
    fi
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  step=$(sed -n 's|^ricochet: \([0-9]*\)/[0-9]* steps.*|\1|p' "$log" | head -1)
  if [ -z "$step" ]; then
    echo "FAIL $name: no status line in 60 s:" >&2
    cat "$log" >&2
    fail=1
    return
  fi
  local f=$out/$csv.partial
  if [ ! -f "$f" ]; then
    echo "FAIL $name: no $csv.partial" >&2
    fail=1
    return
  fi
  local want have
  # rows at steps 0, every, ... below `step` (the status line's step is
  # the one being reached; its own row is written after the report)
  want=$(( (step - 1) / every + 1 ))
  have=$(awk -F, -v s="$step" -v e="$every" '
    NR > 1 && $1 ~ /^[0-9]+$/ && $1 + 0 < s + 0 && $1 % e == 0 { n++ }
    END { print n + 0 }' <(head -n "$(wc -l <"$f")" "$f"))
  # (head: the complete lines only; the run went on writing after the
  # status line)
  if [ "$(head -c 5 "$f")" != "step," ] || [ "$have" -ne "$want" ]; then
    echo "FAIL $name: status line at step $step, $csv.partial has $have of" \
         "the $want rows before it ($(wc -c <"$f") bytes)" >&2
    fail=1
    return
  fi
  echo "ok $name: $have rows below step $step on disk at the status line"
}

check particles diagnostics.csv 1000000 "$examples/pogo_stick.yaml" \
  --set integrator.duration=1e10
check model diagnostics.csv 100000 "$examples/heisenberg.yaml" \
  --set integrator.duration=1e9
check large_system observables.csv 100000 \
  "$examples/hard_sphere_fluid.yaml" --set lattice.n=32 \
  --set integrator.duration=1e8 --set output.equilibrate=0 \
  --set output.rdf_every=0
# msd.csv, flushed with observables.csv: its header at least
if [ "$(head -c 9 "$work/large_system/msd.csv.partial" 2>/dev/null)" != \
     "time,msd" ]; then
  echo "FAIL large_system: msd.csv.partial lacks its header" >&2
  fail=1
fi
exit $fail
