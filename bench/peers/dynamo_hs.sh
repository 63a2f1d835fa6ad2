#!/usr/bin/env bash
# DynamO peer for bench/large_throughput.c: the same hard-sphere fluid as
# the ricochet benchmark, run by DynamO's event-driven engine
# (bench/peers/build_dynamo.sh builds it).
#
#   dynamo_hs.sh DYNAMO_BIN_DIR N ETA SIM_TIME [EQUIL_TIME]
#
#   DYNAMO_BIN_DIR  directory holding dynamod and dynarun
#   N           spheres; must be 4 k^3 (fcc, k repeats per side:
#               4000 -> 10, 32000 -> 20, 256000 -> 40)
#   ETA         packing fraction of unit-diameter, unit-mass spheres; the
#               number density is rho = 6 ETA / pi
#   SIM_TIME    simulated time of the timed run, in sigma sqrt(m/kT) (kT = 1:
#               DynamO's time unit here is ricochet's tau)
#   EQUIL_TIME  simulated time of the untimed equilibration run that melts
#               the fcc start; default 20 Enskog mean free times,
#               20 / (4 sqrt(pi) rho g_CS(1)) (2.0 at ETA = 0.3)
#
# dynamod mode 0 (monocomponent elastic hard spheres, fcc, PBC, the
# neighbour-list scheduler with its cell list) makes the start at kT = 1
# (-r 1) with zero total momentum (-Z); `dynarun -E -f EQUIL_TIME`
# equilibrates it silently; `dynarun -f SIM_TIME` is the timed run, with
# DynamO's default output plugin (Misc), which measures the pressure from
# the collisions' momentum exchange.  The standard engine is single-threaded
# (dynarun's -N only feeds the replica-exchange engine; it is not given).
#
# Prints one JSON line:
#   {"n":..., "eta":..., "sim_time":..., "wall_seconds":...,
#    "particle_tau_per_second":..., "events":..., "z":..., "z_cs":..., ...}
# wall_seconds is DynamO's own timer (Misc's RuntimeSeconds: from the end of
# the set-up, scheduler built, to the end of the run; reading and writing
# the bzip2'd XML configurations are outside it, like LAMMPS's Loop time);
# process_seconds is the whole dynarun process, timed here with date.
# particle_tau_per_second = N x SIM_TIME / wall_seconds.  events are
# DynamO's counted events (the collisions; its cell crossings are not
# counted).  z = P / (rho kT) from the output's Pressure Avg, Density and
# Temperature Mean; z_cs is Carnahan-Starling, (1+e+e^2-e^3)/(1-e)^3.
#
# Exit status: 0 ok, 1 error (DynamO failed or its output could not be
# read), 2 bad arguments, 77 DynamO (or python3, which reads its output)
# not available (the tests' skip code).
set -u

if [ $# -ne 4 ] && [ $# -ne 5 ]; then
    echo "usage: $0 DYNAMO_BIN_DIR N ETA SIM_TIME [EQUIL_TIME]" >&2
    exit 2
fi
BIN=$1 N=$2 ETA=$3 SIM_TIME=$4 EQUIL_TIME=${5:-}

for b in dynamod dynarun; do
    if [ ! -x "$BIN/$b" ]; then
        echo "dynamo_hs.sh: $BIN/$b not found; skipping (build it with" \
             "bench/peers/build_dynamo.sh SRC_DIR BUILD_DIR)" >&2
        exit 77
    fi
done
if ! command -v python3 >/dev/null 2>&1; then
    echo "dynamo_hs.sh: python3 (to read DynamO's output) not found; skipping" >&2
    exit 77
fi

case $N in ''|*[!0-9]*) echo "dynamo_hs.sh: N must be a positive integer" >&2; exit 2 ;; esac
K=$(awk -v n="$N" 'BEGIN { k = int((n / 4) ^ (1 / 3) + 0.5);
                          if (k > 0 && 4 * k * k * k == n) print k; else print 0 }')
if [ "$K" -eq 0 ]; then
    echo "dynamo_hs.sh: N = $N is not 4 k^3 (fcc with k repeats)" >&2
    exit 2
fi
isnum() { awk -v x="$1" 'BEGIN { exit !(x ~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ ||
                                        x ~ /^[0-9]+\.$/) }'; }
if ! isnum "$ETA" || ! RHO=$(awk -v e="$ETA" 'BEGIN { if (e + 0 <= 0 || e + 0 >= 0.74) exit 1;
                                   printf "%.17g", 6 * e / atan2(0, -1) }'); then
    echo "dynamo_hs.sh: ETA must be in (0, 0.74)" >&2
    exit 2
fi
if ! isnum "$SIM_TIME" || awk -v t="$SIM_TIME" 'BEGIN { exit !(t + 0 <= 0) }'; then
    echo "dynamo_hs.sh: SIM_TIME must be a positive number" >&2
    exit 2
fi
if [ -z "$EQUIL_TIME" ]; then
    # 20 Enskog mean free times: t_E = 1 / (4 sqrt(pi) rho g(1)),
    # g(1) = (1 - e/2) / (1 - e)^3 (Carnahan-Starling contact value)
    EQUIL_TIME=$(awk -v e="$ETA" -v r="$RHO" 'BEGIN {
        g = (1 - e / 2) / (1 - e) ^ 3
        printf "%.6g", 20 / (4 * sqrt(atan2(0, -1)) * r * g) }')
elif ! isnum "$EQUIL_TIME"; then
    echo "dynamo_hs.sh: EQUIL_TIME must be a number >= 0" >&2
    exit 2
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rc_dynamo_hs.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

fail() {
    echo "dynamo_hs.sh: $1 failed:" >&2
    tail -n 20 "$2" >&2 2>/dev/null
    exit 1
}

"$BIN/dynamod" -m 0 -C "$K" -d "$RHO" -r 1 -Z -s 4928459 \
    -o start.xml.bz2 >dynamod.log 2>&1 || fail dynamod dynamod.log

START=start.xml.bz2
if awk -v t="$EQUIL_TIME" 'BEGIN { exit !(t + 0 > 0) }'; then
    "$BIN/dynarun" -E start.xml.bz2 -f "$EQUIL_TIME" -o equil.xml.bz2 \
        --out-data-file equil.out.xml.bz2 >equil.log 2>&1 ||
        fail "dynarun (equilibration)" equil.log
    START=equil.xml.bz2
fi

T0=$(date +%s.%N)
"$BIN/dynarun" "$START" -f "$SIM_TIME" -o end.xml.bz2 \
    --out-data-file output.xml.bz2 >run.log 2>&1 || fail dynarun run.log
T1=$(date +%s.%N)

python3 - "$N" "$ETA" "$SIM_TIME" "$EQUIL_TIME" "$T0" "$T1" <<'PY'
import bz2, json, sys
import xml.etree.ElementTree as ET

n, eta, sim_time, equil_time = int(sys.argv[1]), float(sys.argv[2]), \
    float(sys.argv[3]), float(sys.argv[4])
process_seconds = float(sys.argv[6]) - float(sys.argv[5])
try:
    misc = ET.parse(bz2.open("output.xml.bz2")).getroot().find("Misc")
    timing = misc.find("Timing").attrib
    duration = misc.find("Duration").attrib
    wall = float(timing["RuntimeSeconds"])
    events = int(duration["Events"])
    t_run = float(duration["Time"])
    pressure = float(misc.find("Pressure").attrib["Avg"])
    kt = float(misc.find("Temperature").attrib["Mean"])
    rho = float(misc.find("Density").attrib["val"])
    count = int(misc.find("ParticleCount").attrib["val"])
    mft = float(misc.find("totMeanFreeTime").attrib["val"])
    neg = misc.find("NegativeTimeEvents")
    neg = int(neg.attrib["Count"]) if neg is not None else None
except Exception as e:  # missing element, unreadable file
    sys.exit("dynamo_hs.sh: cannot read output.xml.bz2: %r" % (e,))
if count != n or wall <= 0 or abs(t_run - sim_time) > 1e-6 * sim_time + 1e-9:
    sys.exit("dynamo_hs.sh: unexpected output (particles %d, runtime %g s, "
             "simulated time %g)" % (count, wall, t_run))
z = pressure / (rho * kt)
z_cs = (1 + eta + eta**2 - eta**3) / (1 - eta)**3
print(json.dumps({
    "n": n, "eta": eta, "sim_time": sim_time,
    "wall_seconds": float("%.6g" % wall),
    "particle_tau_per_second": float("%.6g" % (n * sim_time / wall)),
    "events": events,
    "events_per_second": float("%.6g" % (events / wall)),
    "z": round(z, 5), "z_cs": round(z_cs, 5),
    "z_rel_dev": float("%.3g" % (z / z_cs - 1)),
    "process_seconds": float("%.6g" % process_seconds),
    "equil_time": equil_time, "kT": round(kt, 9), "rho": rho,
    "mean_free_time": float("%.6g" % mft),
    "negative_time_events": neg,
    "engine": "DynamO dynarun, NeighbourList scheduler, 1 thread",
}, separators=(",", ":")))
PY
