#!/bin/sh
# Seed 001 (Pekarek & Murphey 2014) figures in generalized coordinates
# (issue 16), drawn with gnuplot from ricochet's own outputs:
#   fig1_double_pendulum.png  H over time of the double pendulum with a
#       wall: CVA and MCVA-A through impacts, SVC without the wall
#   fig3_mcva_energies.png    H, -D3 L_d and the truncated modified
#       Hamiltonian of MCVA-A and MCVA-C from Xi(3.2), h = 1e-2
#   fig4_l2_error.png         the L2 error over beta of the four impact
#       methods at h = 0.032 and 0.01: the members.csv of one ensemble,
#       examples/cart_pendulum_gc_sweep.yaml (408 members and their 51
#       CVA references at h = 1e-4, about 5 s on 2 threads)
#   fig4_l2_error.csv         per method and step: members, median, min
#       and max of those L2 errors (README's Fig. 4 columns)
# Table II (wall time per simulation) is bench_vi_sweep's
# (bench/results/vi_sweep.json): members.csv has no per-member time.
# usage: bench/vi_figures.sh BUILD_DIR [OUTDIR]   (OUTDIR: bench/results)
set -eu
build=${1:?usage: vi_figures.sh BUILD_DIR [OUTDIR]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/results}
ex=$here/../examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
r=$build/ricochet

# Fig. 3
for m in mcva-a mcva-c; do
  "$r" run "$ex/cart_pendulum_gc.yaml" --set integrator.method=$m \
       --out "$tmp/f3_$m" >/dev/null
done
# Fig. 1
"$r" run "$ex/double_pendulum_impacts.yaml" --out "$tmp/f1_cva" >/dev/null
"$r" run "$ex/double_pendulum_impacts.yaml" --set integrator.method=mcva-a \
     --out "$tmp/f1_mcva" >/dev/null
"$r" run "$ex/double_pendulum_impacts.yaml" --set integrator.method=svc \
     --set 'model.constraints=[]' --out "$tmp/f1_svc" >/dev/null

gnuplot <<GP
set datafile separator comma
set terminal pngcairo size 1200,450
set key autotitle columnhead
set output "$out/fig3_mcva_energies.png"
set multiplot layout 1,2
set xlabel "t"; set ylabel "energy"
set title "MCVA-A, Xi(3.2), h = 1e-2"
plot "$tmp/f3_mcva-a/diagnostics.csv" using "time":"energy" with lines title "H", \
     "" using "time":"discrete_energy" with lines title "-D3 Ld", \
     "" using "time":"modified_energy" with lines title "truncated MH O(h^4)"
set title "MCVA-C, Xi(3.2), h = 1e-2"
plot "$tmp/f3_mcva-c/diagnostics.csv" using "time":"energy" with lines title "H", \
     "" using "time":"discrete_energy" with lines title "-D3 Ld", \
     "" using "time":"modified_energy" with lines title "truncated MH O(h^3)"
unset multiplot
set terminal pngcairo size 800,450
set output "$out/fig1_double_pendulum.png"
set title "double pendulum, H over time (h = 1e-2)"
plot "$tmp/f1_cva/diagnostics.csv" using "time":"energy" with lines title "CVA, wall", \
     "$tmp/f1_mcva/diagnostics.csv" using "time":"energy" with lines title "MCVA-A, wall", \
     "$tmp/f1_svc/diagnostics.csv" using "time":"energy" with lines title "SVC, no wall"
GP

# Fig. 4: one ensemble run; members.csv's columns by name
"$r" run "$ex/cart_pendulum_gc_sweep.yaml" --out "$tmp/f4" --quiet
awk -F, -v dir="$tmp" '
  NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
  $c["status"] == "ok" {
    print $c["model.initial.xi"], $c["l2_error"] > (dir "/f4_" \
          $c["integrator.method"] "_" $c["integrator.dt"] ".dat")
  }' "$tmp/f4/members.csv"
echo "method,h,members,median_l2,min_l2,max_l2" > "$out/fig4_l2_error.csv"
for m in cva vci mcva-a mcva-c; do
  for h in 0.032 0.01; do
    sort -g -k2 "$tmp/f4_${m}_$h.dat" | awk -v m=$m -v h=$h '
      { e[NR] = $2 }
      END {
        med = NR % 2 ? e[(NR + 1) / 2] : (e[NR / 2] + e[NR / 2 + 1]) / 2
        printf "%s,%s,%d,%.6g,%.6g,%.6g\n", m, h, NR, med, e[1], e[NR]
      }' >> "$out/fig4_l2_error.csv"
  done
done
gnuplot <<GP
set terminal pngcairo size 1000,500 noenhanced
set output "$out/fig4_l2_error.png"
set logscale y
set key outside right
set xlabel "beta"; set ylabel "L2 error (vs CVA, h = 1e-4)"
set title "cart-pendulum from Xi(beta), T = 5 (examples/cart_pendulum_gc_sweep.yaml)"
plot for [m in "cva vci mcva-a mcva-c"] for [h in "0.032 0.01"] \
     "$tmp/f4_".m."_".h.".dat" with linespoints title m." h=".h
GP
ls "$out"/fig*.png
