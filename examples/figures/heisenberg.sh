#!/bin/sh
# Seed 002 §6, Fig. 4: the Heisenberg geodesic from (0, 0, 0) with
# (p_x, p_y, p_z) = (0.1, 0.3, 1), and the energy error and the angular
# momentum x p_y - y p_x of gauss2.  Writes out/figures/heisenberg.png.
. "$(dirname "$0")/srk_common.sh"
"$RICOCHET" run "$root/examples/heisenberg.yaml" --quiet \
    --out "$RUNDIR/heisenberg"
gnuplot <<GP
set terminal pngcairo size 1400,500
set output "$FIGDIR/heisenberg.png"
set datafile separator ","
set multiplot layout 1,2
set title "Heisenberg geodesic (gauss2, dt 0.05)"
set xlabel "x"; set ylabel "y"; set zlabel "z"
splot "$RUNDIR/heisenberg/diagnostics.csv" skip 1 using 12:13:14 with lines notitle
set title "conserved quantities minus their initial values"
set xlabel "t"; set ylabel ""
set key top left
plot "$RUNDIR/heisenberg/diagnostics.csv" skip 1 using 2:(\$3-0.05) with lines title "H - H0", \
     "" skip 1 using 2:(\$12*\$16-\$13*\$15) with lines title "x p_y - y p_x (initially 0)"
unset multiplot
GP
echo "wrote $FIGDIR/heisenberg.png"
