#!/usr/bin/env bash
# `make demo`: run the flagship example (Newton's cradle, seed 000
# §8.1.1) and say what the balls did.
set -euo pipefail
build=${1:-build}
out=out/demo_newtons_cradle
"$build/ricochet" run examples/newtons_cradle.yaml --out "$out"
echo
# Angles of the five pendulums (pivots at x = 0.5 k, y = 0) from the
# extended-XYZ frames; report the first swing after the impact.
awk -v pi=3.141592653589793 '
  function atan2deg(y, x) { return atan2(y, x) }
  NF == 1 && $1 ~ /^[0-9]+$/ { n = $1; k = -1; next }
  /Properties=/ { match($0, /time=[^ ]+/); t = substr($0, RSTART + 5, RLENGTH - 5) + 0; k = 0; next }
  k >= 0 && k < n {
    ang = atan2($2 - 0.5 * k, -$3)
    if (t >= 0.5 && t <= 1.6) {
      if (ang > maxa[k]) maxa[k] = ang
      if (-ang > maxa_neg[k]) maxa_neg[k] = -ang
    }
    k++
  }
  END {
    rel = pi / 5
    printf "What the balls did in the first swing after the impact (t = 0.5 .. 1.6):\n"
    for (b = 0; b < 5; b++) {
      m = maxa[b] > maxa_neg[b] ? maxa[b] : -maxa_neg[b]
      printf "  ball %d: largest angle %+.4f rad (%5.1f %% of the %.4f rad release)\n", b + 1, m, 100 * m / rel, rel
    }
    printf "Balls 4 and 5 should rise to nearly the release angle while ball 3 stays near rest.\n"
  }' "$out/trajectory.xyz"
echo "Full output: $out/ (diagnostics.csv, summary.json, trajectory.xyz — open the trajectory in OVITO or ASE)"
