#!/usr/bin/env bash
# LAMMPS peer for bench/large_throughput.c: a WCA fluid (Lennard-Jones
# cut and shifted at 2^(1/6) sigma, the steep repulsive stand-in for hard
# spheres that MD codes use) at the hard-sphere benchmark's size, number
# density and step size, timed by LAMMPS's own loop timer.
#
#   lammps_wca.sh N ETA RANKS STEPS
#
#   N      atoms; must be 4 k^3 (fcc, k repeats per side: 32000 -> 20,
#          256000 -> 40)
#   ETA    packing fraction of spheres of diameter sigma = 1; the number
#          density is rho = 6 ETA / pi
#   RANKS  MPI ranks (mpirun -np RANKS, OMP_NUM_THREADS=1)
#   STEPS  timesteps in the timed run
#
# Prints one JSON line:
#   {"n":..., "eta":..., "ranks":..., "steps":..., "loop_seconds":...,
#    "atom_steps_per_second":..., ...}
# atom-steps/s = N x STEPS / loop time, from LAMMPS's "Loop time of X on P
# procs for S steps with N atoms" line (setup and neighbour-list build
# before the first step are not in it).  dt is 0.002 for ETA <= 0.3 and
# 0.001 above, as in the ricochet benchmark.  max_rss_kib_per_rank and
# max_rss_kib_total (their sum: LAMMPS's memory on RANKS ranks) are each
# rank's peak resident set from GNU time (/usr/bin/time), when installed.
#
# Exit status: 0 ok, 1 error (LAMMPS failed or its output could not be
# read), 2 bad arguments, 77 LAMMPS not installed (the tests' skip code).
# LAMMPS and Open MPI are not ricochet dependencies; on Debian:
#   apt-get install lammps
set -u

if [ $# -ne 4 ]; then
    echo "usage: $0 N ETA RANKS STEPS" >&2
    exit 2
fi
N=$1 ETA=$2 RANKS=$3 STEPS=$4

LMP=${LMP:-lmp}
if ! command -v "$LMP" >/dev/null 2>&1; then
    echo "lammps_wca.sh: LAMMPS ('$LMP') is not installed; skipping" \
         "(Debian: apt-get install lammps)" >&2
    exit 77
fi

case $N in ''|*[!0-9]*) echo "lammps_wca.sh: N must be a positive integer" >&2; exit 2 ;; esac
case $RANKS in ''|*[!0-9]*|0) echo "lammps_wca.sh: RANKS must be a positive integer" >&2; exit 2 ;; esac
case $STEPS in ''|*[!0-9]*|0) echo "lammps_wca.sh: STEPS must be a positive integer" >&2; exit 2 ;; esac

# k with 4 k^3 = N, exactly
K=$(awk -v n="$N" 'BEGIN { k = int((n / 4) ^ (1 / 3) + 0.5);
                          if (4 * k * k * k == n) print k; else print 0 }')
if [ "$K" -eq 0 ]; then
    echo "lammps_wca.sh: N = $N is not 4 k^3 (fcc with k repeats)" >&2
    exit 2
fi
if ! RHO=$(awk -v e="$ETA" 'BEGIN { if (e + 0 <= 0 || e + 0 >= 0.74) exit 1;
                                   printf "%.17g", 6 * e / atan2(0, -1) }'); then
    echo "lammps_wca.sh: ETA must be in (0, 0.74)" >&2
    exit 2
fi
DT=$(awk -v e="$ETA" 'BEGIN { print (e + 0 <= 0.3 ? 0.002 : 0.001) }')

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rc_lammps_wca.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/in.wca" <<IN
# WCA fluid, N = $N, eta = $ETA (rho = $RHO), dt = $DT
units           lj
atom_style      atomic
dimension       3
boundary        p p p
lattice         fcc $RHO
region          box block 0 $K 0 $K 0 $K
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 1.0 4928459 mom yes rot no loop geom
pair_style      lj/cut 1.122462048309373
pair_modify     shift yes
pair_coeff      1 1 1.0 1.0
neighbor        0.3 bin
neigh_modify    every 1 delay 0 check yes
fix             1 all nve
timestep        $DT
thermo          0
run             $STEPS
IN

export OMP_NUM_THREADS=1
# run as root in containers; bind-to none: the ranks float like
# ricochet's unpinned OpenMP threads
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# peak RSS of every rank: GNU time wraps each rank and appends its
# ru_maxrss (KiB) to one file (absent: no RSS fields in the JSON)
RSS_WRAP=()
if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
    RSS_WRAP=(/usr/bin/time -a -o "$TMP/rss" -f %M)
fi
if command -v mpirun >/dev/null 2>&1; then
    CMD=(mpirun -np "$RANKS" --bind-to none "${RSS_WRAP[@]}" "$LMP")
elif [ "$RANKS" -eq 1 ]; then
    CMD=("${RSS_WRAP[@]}" "$LMP")
else
    echo "lammps_wca.sh: mpirun not found; cannot run $RANKS ranks" >&2
    exit 1
fi
if ! (cd "$TMP" && "${CMD[@]}" -nocite -screen none -log "$TMP/log.lammps" \
        -in "$TMP/in.wca" >"$TMP/stdout" 2>&1); then
    echo "lammps_wca.sh: LAMMPS failed:" >&2
    tail -n 20 "$TMP/log.lammps" "$TMP/stdout" >&2 2>/dev/null
    exit 1
fi

# "Loop time of 1.234 on 2 procs for 100 steps with 32000 atoms"
# "Performance: 14000.5 tau/day, 81.0 timesteps/s[, 2.59 Matom-step/s]"
# numeric lines only (GNU time adds "Command exited ..." on failure)
RSS=$(grep -E '^[0-9]+$' "$TMP/rss" 2>/dev/null | tr '\n' ' ')
awk -v n="$N" -v eta="$ETA" -v ranks="$RANKS" -v steps="$STEPS" \
    -v rho="$RHO" -v dt="$DT" -v rss="$RSS" '
    /^LAMMPS \(/ && ver == "" { ver = $0; sub(/^LAMMPS \(/, "", ver); sub(/\)$/, "", ver) }
    /^Loop time of / { loop = $4; procs = $6; s = $9; atoms = $12 }
    /^Performance:/ {
        for (i = 2; i <= NF; ++i)
            if ($i ~ /^timesteps\/s/) tps = $(i - 1)
    }
    END {
        if (loop == "" || loop + 0 <= 0 || procs != ranks || s != steps ||
            atoms != n) {
            print "lammps_wca.sh: no usable Loop time line (loop " loop \
                  ", procs " procs ", steps " s ", atoms " atoms ")" \
                  > "/dev/stderr"
            exit 1
        }
        nr = split(rss, r, " ")
        if (nr == ranks) {
            tot = 0; list = ""
            for (i = 1; i <= nr; ++i) {
                tot += r[i]
                list = list (i > 1 ? "," : "") r[i]
            }
            rssjson = sprintf(",\"max_rss_kib_per_rank\":[%s]," \
                              "\"max_rss_kib_total\":%d", list, tot)
        }
        printf "{\"n\":%d,\"eta\":%s,\"ranks\":%d,\"steps\":%d," \
               "\"loop_seconds\":%.6g,\"atom_steps_per_second\":%.6g," \
               "\"timesteps_per_second\":%s,\"rho\":%.10g,\"dt\":%s," \
               "\"pair_style\":\"lj/cut 2^(1/6) shifted (WCA)\"," \
               "\"lammps_version\":\"%s\"%s}\n",
               n, eta, ranks, steps, loop, n * steps / loop,
               tps == "" ? "null" : tps, rho, dt, ver, rssjson
    }' "$TMP/log.lammps"
