#!/bin/sh
# Seed 002 §4, Prop. 7: the vehicle with its steering linked to its heading,
# phi = theta + 0.5 sin theta, by RATTLE with the midpoint inner step: the
# wheel tracks and the largest constraint residual (velocity constraints,
# h and Dh.qdot) per step.  Writes out/figures/vehicle_linkage.png.
. "$(dirname "$0")/srk_common.sh"
"$RICOCHET" run "$root/examples/vehicle_linkage.yaml" --quiet \
    --out "$RUNDIR/vehicle_linkage"
gnuplot <<GP
set terminal pngcairo size 1400,500
set output "$FIGDIR/vehicle_linkage.png"
set datafile separator ","
set key autotitle columnhead
set multiplot layout 1,2
L = 0.3
set size ratio -1
set title "steering linked, in the bowl (rattle, dt 0.05)"
plot "$RUNDIR/vehicle_linkage/diagnostics.csv" using "x":"y" with lines title "front wheel", \
     "" using (column("x")-L*cos(column("theta"))):(column("y")-L*sin(column("theta"))) with lines title "back wheel"
set size noratio
set logscale y
set format y "%.0e"
set yrange [1e-18:1e-10]
set title "largest constraint residual"
set xlabel "t"
plot "" using "time":(column("max_constraint_error")+1e-18) with lines title "max constraint error"
unset multiplot
GP
echo "wrote $FIGDIR/vehicle_linkage.png"
