#!/usr/bin/env bash
# GPU ensemble benchmark, unattended, on a machine with one NVIDIA GPU and
# the CUDA 13 toolkit (nvcc on PATH or in /usr/local/cuda/bin):
#   1. builds ricochet (Release, RICOCHET_CUDA=ON) into $BUILD;
#   2. validates: the gpu-labelled tests must run (not skip) and pass,
#      among them tests/test_gpu_ensemble.c (GPU vs CPU member by member);
#   3. runs the pogo ensemble (examples/pogo_ensemble.yaml, $MEMBERS
#      members) through the CLI on the GPU and on the CPU with 2 threads
#      and with every core: one warm-up, then $REPEATS runs each; the
#      median of ensemble.json's member_steps_per_second;
#   4. measures the device copy bandwidth (bench/gpu/copy_bandwidth.cu);
#   5. prints a table and writes bench/results/gpu_ensemble.json.
# The GPU time excludes context creation and kernel loading (done once
# per process before the clock starts, reported as setup_seconds).
# usage: bench/gpu/run.sh     (env: BUILD, MEMBERS, REPEATS)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD:-build-gpu}
members=${MEMBERS:-100000}
repeats=${REPEATS:-3}
scenario=examples/pogo_ensemble.yaml
out=bench/results/gpu_ensemble.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ncores=$(nproc)

say() { printf '%s\n' "$*"; }
die() { printf 'bench/gpu/run.sh: %s\n' "$*" >&2; exit 1; }

command -v nvcc >/dev/null || die "nvcc not found (install the CUDA 13 toolkit)"

say "== build ($build: Release, RICOCHET_CUDA=ON)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRICOCHET_CUDA=ON >"$work/cmake.log" ||
  { cat "$work/cmake.log"; die "cmake failed"; }
cmake --build "$build" -j "$ncores" >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; die "build failed"; }
cli=$build/ricochet
info=$("$cli" info)
grep -q "^cuda devices: none" <<<"$info" && die "no usable CUDA device: $(grep '^cuda devices' <<<"$info")"
device=$(sed -n 's/^  \[0\] \([^,]*\),.*/\1/p' <<<"$info")
say "device: $device"

say "== gpu tests (validation before timing)"
(cd "$build" && ctest -L gpu --output-on-failure) | tee "$work/ctest.log"
grep -q "Skipped\|Not Run" "$work/ctest.log" && die "a gpu test was skipped or did not run"
grep -q "100% tests passed" "$work/ctest.log" || die "gpu tests failed"

# member_steps_per_second of one run: backend, threads (empty: OpenMP's)
rate() {
  local backend=$1 threads=$2 dir="$work/run_$1_$2"
  "$cli" run "$scenario" --backend "$backend" ${threads:+--threads "$threads"} \
    --set "ensemble.members=$members" --out "$dir" --quiet >/dev/null ||
    die "ricochet run --backend $backend failed"
  sed -n 's/.*"member_steps_per_second":[[:space:]]*\([-0-9.eE+]*\).*/\1/p' "$dir/ensemble.json"
}
# median of $repeats runs after one warm-up
median_rate() {
  local k vals=()
  rate "$1" "$2" >/dev/null
  for ((k = 0; k < repeats; ++k)); do vals+=("$(rate "$1" "$2")"); done
  printf '%s\n' "${vals[@]}" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

say "== pogo ensemble, $members members, median of $repeats runs"
gpu=$(median_rate cuda "")
gpu_json="$work/run_cuda_/ensemble.json"
grep -q '"device":[[:space:]]*"cuda: ' "$gpu_json" || die "the cuda run did not run on the GPU"
cpu2=$(median_rate cpu 2)
cpun=$(median_rate cpu "$ncores")

say "== device copy bandwidth"
nvcc -O2 -o "$work/copy_bandwidth" bench/gpu/copy_bandwidth.cu
bw=$("$work/copy_bandwidth")
say "$bw"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
say ""
say "pogo ensemble, $members members, GVI, 500 steps each (member-steps/s)"
printf '%-28s %14s %10s\n' "engine" "member-steps/s" "GPU/this"
printf '%-28s %14.4g %10s\n' "GPU ($device)" "$gpu" "1.00"
printf '%-28s %14.4g %10s\n' "CPU, 2 threads" "$cpu2" "$(ratio "$gpu" "$cpu2")"
printf '%-28s %14.4g %10s\n' "CPU, $ncores threads" "$cpun" "$(ratio "$gpu" "$cpun")"
say ""
say "large systems (DESIGN §6): no GPU numbers yet; the large-system"
say "engine (src/host/md) runs on the CPU only in this version."

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cat >"$out.partial" <<EOF
{
  "benchmark": "pogo ensemble member-steps per second, GPU vs CPU (bench/gpu/run.sh)",
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "commit": "$commit",
  "machine": {"cpu": "$cpu_model", "cores": $ncores, "gpu": "$device",
              "nvcc": "$(nvcc --version | tail -1)"},
  "scenario": "$scenario",
  "members": $members,
  "repeats": $repeats,
  "statistic": "median after one warm-up run",
  "member_steps_per_second": {"gpu": $gpu, "cpu_2_threads": $cpu2,
                              "cpu_all_cores": $cpun},
  "gpu_over_cpu_2_threads": $(ratio "$gpu" "$cpu2"),
  "gpu_over_cpu_all_cores": $(ratio "$gpu" "$cpun"),
  "gpu_engine": $(sed -n '/"engine":/,/^\t}/p' "$gpu_json" | sed '1s/.*"engine":[[:space:]]*//' | tr -d '\n\t' | sed 's/,$//'),
  "copy_bandwidth": $bw,
  "large_systems": "not available: the large-system engine has no GPU path yet"
}
EOF
mv "$out.partial" "$out"
say "wrote $out"
