#!/usr/bin/env bash
# GPU benchmark (ensembles and large systems), unattended, on a machine
# with one NVIDIA GPU and the CUDA 13 toolkit (nvcc on PATH or in
# /usr/local/cuda/bin):
#   1. builds ricochet (Release, RICOCHET_CUDA=ON) into $BUILD;
#   2. validates: the gpu-labelled tests must run (not skip) and pass,
#      among them tests/test_gpu_ensemble.c (GPU vs CPU member by member);
#   3. runs the pogo ensemble (examples/pogo_ensemble.yaml, $MEMBERS
#      members) through the CLI on the GPU and on the CPU with 2 threads
#      and with every core: one warm-up, then $REPEATS runs each; the
#      median of ensemble.json's member_steps_per_second;
#   4. runs the hard-sphere fluid (examples/hard_sphere_fluid.yaml,
#      $PARTICLES spheres, eta 0.3, $MD_STEPS steps) on the GPU (the device
#      engine) and on the CPU (the CPU launcher) the same way; the median
#      of summary.json's particle_steps_per_second;
#   5. measures the device copy bandwidth (bench/gpu/copy_bandwidth.cu);
#   6. counts the engine's work per step at the same N through its
#      CPU launcher (bench_dengine_counts) and runs the performance model
#      on it (bench/gpu/perf_model.py, docs/gpu_performance_model.md);
#   7. prints a table, each measurement beside the model's prediction,
#      and writes bench/results/gpu_ensemble.json.
# The GPU time excludes context creation and kernel loading (done once
# per process before the clock starts, reported as setup_seconds).
# usage: bench/gpu/run.sh     (env: BUILD, MEMBERS, REPEATS, PARTICLES,
#                             MD_STEPS, PREBUILT, COMMIT, VALIDATE)
# PREBUILT=1 skips step 1 and uses the build already in $BUILD (built
# elsewhere for a GPU machine that lacks the build's -dev packages);
# COMMIT names the commit where the tree has no .git; VALIDATE=record
# times even when a gpu test fails and writes which in the JSON
# ("gpu_tests"; default: stop).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD:-build-gpu}
members=${MEMBERS:-100000}
repeats=${REPEATS:-3}
particles=${PARTICLES:-256000} # fcc: 4 k^3
md_steps=${MD_STEPS:-200}
scenario=examples/pogo_ensemble.yaml
out=bench/results/gpu_ensemble.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ncores=$(nproc)

say() { printf '%s\n' "$*"; }
die() { printf 'bench/gpu/run.sh: %s\n' "$*" >&2; exit 1; }

command -v nvcc >/dev/null || die "nvcc not found (install the CUDA 13 toolkit)"

if [ "${PREBUILT:-0}" = 1 ]; then
  [ -x "$build/ricochet" ] || die "PREBUILT=1 but $build/ricochet does not exist"
  say "== build: $build as it is (PREBUILT=1)"
else
  say "== build ($build: Release, RICOCHET_CUDA=ON)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRICOCHET_CUDA=ON >"$work/cmake.log" ||
    { cat "$work/cmake.log"; die "cmake failed"; }
  cmake --build "$build" -j "$ncores" >"$work/build.log" 2>&1 ||
    { tail -40 "$work/build.log"; die "build failed"; }
fi
cli=$build/ricochet
info=$("$cli" info)
grep -q "^cuda devices: unusable" <<<"$info" && die "$(grep '^cuda devices' <<<"$info")"
grep -q "^cuda devices: none" <<<"$info" && die "no usable CUDA device: $(grep '^cuda devices' <<<"$info")"
device=$(sed -n 's/^  \[0\] \([^,]*\),.*/\1/p' <<<"$info")
say "device: $device"

say "== gpu tests (validation before timing)"
(cd "$build" && ctest -L gpu --output-on-failure) | tee "$work/ctest.log" || true
grep -q "Skipped\|Not Run" "$work/ctest.log" && die "a gpu test was skipped or did not run"
validation="passed"
if ! grep -q "100% tests passed" "$work/ctest.log"; then
  failed=$(sed -n 's/^[[:space:]]*[0-9]* - \([a-z_0-9]*\) (Failed).*/\1/p' "$work/ctest.log" | tr '\n' ' ')
  [ "${VALIDATE:-strict}" = record ] || die "gpu tests failed: $failed"
  validation="failed: ${failed% }"
  say "gpu tests failed ($failed); VALIDATE=record: timing anyway, recorded as such"
fi

# member_steps_per_second of one run: backend, threads (empty: OpenMP's)
rate() {
  local backend=$1 threads=$2 dir="$work/run_$1_$2"
  "$cli" run "$scenario" --backend "$backend" ${threads:+--threads "$threads"} \
    --set "ensemble.members=$members" --out "$dir" --quiet >/dev/null ||
    die "ricochet run --backend $backend failed"
  sed -n 's/.*"member_steps_per_second":[[:space:]]*\([-0-9.eE+]*\).*/\1/p' "$dir/ensemble.json"
}
# particle_steps_per_second of one large-system run: backend, threads
md_rate() {
  local backend=$1 threads=$2 dir="$work/md_$1_$2"
  "$cli" run examples/hard_sphere_fluid.yaml --backend "$backend" \
    ${threads:+--threads "$threads"} --set "lattice.n=$particles" \
    --set "integrator.duration=$(awk -v s="$md_steps" 'BEGIN {print s * 0.002}')" \
    --set output.every=50 --set output.equilibrate=0 --out "$dir" --quiet \
    >/dev/null || die "ricochet run (large system) --backend $backend failed"
  # two numbers: the run's particle-steps/s (wall time, observables and
  # g(r) included) and the engine's alone (the timed step phases of
  # summary.json: predictor, broadphase, contacts and islands, reflections)
  python3 - "$dir/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["seconds"]
engine = sum(s[k] for k in ("predictor_and_update", "broadphase", "contacts_and_islands", "reflections"))
print(d["particle_steps_per_second"], d["particles"] * d["steps"] / engine)
PY
}
# median of $repeats runs of a rate function after one warm-up
median_of() {
  local fn=$1 k vals=()
  shift
  "$fn" "$@" >/dev/null
  for ((k = 0; k < repeats; ++k)); do vals+=("$("$fn" "$@")"); done
  # the median by the first number; the whole line of that run
  printf '%s\n' "${vals[@]}" | sort -g | awk '{v[NR] = $0} END {print v[int((NR + 1) / 2)]}'
}
median_rate() { median_of rate "$@"; }

say "== pogo ensemble, $members members, median of $repeats runs"
gpu=$(median_rate cuda "")
gpu_json="$work/run_cuda_/ensemble.json"
grep -q '"device":[[:space:]]*"cuda: ' "$gpu_json" || die "the cuda run did not run on the GPU"
cpu2=$(median_rate cpu 2)
cpun=$(median_rate cpu "$ncores")

say "== hard-sphere fluid, $particles spheres, $md_steps steps, median of $repeats runs"
read -r md_gpu md_gpu_engine <<<"$(median_of md_rate cuda "")"
md_json="$work/md_cuda_/summary.json"
md_collisions=$(sed -n 's/.*"collision_times":[[:space:]]*"\([a-z]*\)".*/\1/p' "$md_json")
grep -q '"launcher":[[:space:]]*"cuda"' "$md_json" || die "the large-system cuda run did not run the CUDA launcher"
md_handed=$(sed -n 's/.*"host_tier_islands":[[:space:]]*\([0-9]*\).*/\1/p' "$md_json")
read -r md_cpu2 md_cpu2_engine <<<"$(median_of md_rate cpu 2)"
read -r md_cpun md_cpun_engine <<<"$(median_of md_rate cpu "$ncores")"

say "== device copy bandwidth"
nvcc -O2 -o "$work/copy_bandwidth" bench/gpu/copy_bandwidth.cu
bw=$("$work/copy_bandwidth")
say "$bw"

say "== the model's inputs: the engine's work per step at N = $particles (CPU launcher)"
"$build/bench/bench_dengine_counts" "$particles" 250 20 >"$work/counts.json" ||
  die "bench_dengine_counts failed"
cp "$work/counts.json" "bench/results/dengine_counts_$particles.json"
model_json=$(python3 bench/gpu/perf_model.py --counts "$work/counts.json" --json) ||
  die "the performance model failed"
model() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[sys.argv[1]][sys.argv[2]])' "$1" "$2" <<<"$model_json"; }
model_md=$(model device_engine rate)
model_md_bound=$(model device_engine bound)
model_pogo=$(model pogo rate)
model_pogo_bound=$(model pogo bound)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
say ""
say "pogo ensemble, $members members, GVI, 500 steps each (member-steps/s)"
printf '%-28s %14s %10s\n' "engine" "member-steps/s" "GPU/this"
printf '%-28s %14.4g %10s\n' "GPU ($device)" "$gpu" "1.00"
printf '%-28s %14.4g %10s\n' "CPU, 2 threads" "$cpu2" "$(ratio "$gpu" "$cpu2")"
printf '%-28s %14.4g %10s\n' "CPU, $ncores threads" "$cpun" "$(ratio "$gpu" "$cpun")"
say "model (a prediction, not a measurement): $(printf '%.4g' "$model_pogo") member-steps/s, bound: $model_pogo_bound; measured/model $(ratio "$gpu" "$model_pogo")"
say ""
# A lower bound on the memory traffic of a large-system step: positions
# and momenta read and written once (4 x 3 doubles per sphere); the
# engine moves more (candidates, contacts, cells), so the achieved
# bandwidth is at least this.
d2d=$(sed -n 's/.*"d2d_gb_per_s":[[:space:]]*\([0-9.]*\).*/\1/p' <<<"$bw")
md_gbs=$(awk -v r="$md_gpu_engine" 'BEGIN {printf "%.1f", r * 96 / 1e9}')
say ""
say "hard-sphere fluid, $particles spheres, eta 0.3, $md_steps steps, collision times: $md_collisions (particle-steps/s;"
say "'run': wall time with observables and g(r), computed on the host; 'engine': the step phases alone)"
printf '%-28s %14s %10s %14s %10s\n' "engine" "run" "GPU/this" "engine" "GPU/this"
printf '%-28s %14.4g %10s %14.4g %10s\n' "GPU (CUDA launcher)" "$md_gpu" "1.00" "$md_gpu_engine" "1.00"
printf '%-28s %14.4g %10s %14.4g %10s\n' "CPU launcher, 2 threads" "$md_cpu2" "$(ratio "$md_gpu" "$md_cpu2")" \
  "$md_cpu2_engine" "$(ratio "$md_gpu_engine" "$md_cpu2_engine")"
printf '%-28s %14.4g %10s %14.4g %10s\n' "CPU launcher, $ncores thr." "$md_cpun" "$(ratio "$md_gpu" "$md_cpun")" \
  "$md_cpun_engine" "$(ratio "$md_gpu_engine" "$md_cpun_engine")"
say "islands the GPU run left to the host tiers: $md_handed"
say "model (a prediction, not a measurement): $(printf '%.4g' "$model_md") particle-steps/s, bound: $model_md_bound; measured/model $(ratio "$md_gpu" "$model_md") (engine alone $(ratio "$md_gpu_engine" "$model_md"))"
say "state traffic (q, p in and out, a lower bound): $md_gbs GB/s of a measured device copy bandwidth of $d2d GB/s"

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
cat >"$out.partial" <<EOF
{
  "benchmark": "pogo ensemble member-steps and hard-sphere fluid particle-steps per second, GPU vs CPU (bench/gpu/run.sh)",
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "commit": "$commit",
  "machine": {"cpu": "$cpu_model", "cores": $ncores, "gpu": "$device",
              "nvcc": "$(nvcc --version | tail -1)"},
  "scenario": "$scenario",
  "members": $members,
  "repeats": $repeats,
  "statistic": "median after one warm-up run",
  "gpu_tests": "$validation",
  "member_steps_per_second": {"gpu": $gpu, "cpu_2_threads": $cpu2,
                              "cpu_all_cores": $cpun},
  "gpu_over_cpu_2_threads": $(ratio "$gpu" "$cpu2"),
  "gpu_over_cpu_all_cores": $(ratio "$gpu" "$cpun"),
  "gpu_engine": $(sed -n '/"engine":/,/^\t}/p' "$gpu_json" | sed '1s/.*"engine":[[:space:]]*//' | tr -d '\n\t' | sed 's/,$//'),
  "copy_bandwidth": $bw,
  "large_systems": {"scenario": "examples/hard_sphere_fluid.yaml", "particles": $particles,
                    "steps": $md_steps, "collision_times": "$md_collisions",
                    "particle_steps_per_second": {"gpu": $md_gpu, "cpu_2_threads": $md_cpu2,
                                                  "cpu_all_cores": $md_cpun},
                    "engine_particle_steps_per_second": {"gpu": $md_gpu_engine, "cpu_2_threads": $md_cpu2_engine,
                                                         "cpu_all_cores": $md_cpun_engine},
                    "note": "particle_steps_per_second: the run's wall time with observables and g(r) (computed on the host); engine_: the timed step phases alone",
                    "gpu_over_cpu_2_threads": $(ratio "$md_gpu" "$md_cpu2"),
                    "gpu_over_cpu_all_cores": $(ratio "$md_gpu" "$md_cpun"),
                    "gpu_host_tier_islands": ${md_handed:-null},
                    "state_traffic_gb_per_s_lower_bound": $md_gbs,
                    "device_copy_gb_per_s": ${d2d:-null}},
  "model": $model_json,
  "measured_over_model": {"pogo": $(ratio "$gpu" "$model_pogo"),
                          "device_engine": $(ratio "$md_gpu" "$model_md"),
                          "device_engine_phases_alone": $(ratio "$md_gpu_engine" "$model_md")}
}
EOF
mv "$out.partial" "$out"
say "wrote $out"
