#!/bin/sh
# Seed 002 §5, Fig. 3: the free vehicle's wheel tracks, on the circle
# (the first 80 time units, then the whole run as it wanders and
# returns) and off the straight line.  Front wheel (x, y), back wheel
# (x - L cos theta, y - L sin theta), L = 0.3.
# Writes out/figures/vehicle_free.png.
. "$(dirname "$0")/srk_common.sh"
"$RICOCHET" run "$root/examples/vehicle_free_circle.yaml" --quiet \
    --out "$RUNDIR/vehicle_free_circle"
"$RICOCHET" run "$root/examples/vehicle_free_line.yaml" --quiet \
    --out "$RUNDIR/vehicle_free_line"
gnuplot <<GP
set terminal pngcairo size 1500,500
set output "$FIGDIR/vehicle_free.png"
set datafile separator ","
set key autotitle columnhead
set multiplot layout 1,3
L = 0.3
set size ratio -1
set title "circle, t <= 80 (every 5th step)"
plot "$RUNDIR/vehicle_free_circle/diagnostics.csv" every 5::0::800 using "x":"y" with points pt 7 ps 0.3 title "front wheel", \
     "" every 5::0::800 using (column("x")-L*cos(column("theta"))):(column("y")-L*sin(column("theta"))) with points pt 7 ps 0.5 title "back wheel"
set title "circle, t <= 400: wanders and returns"
plot "$RUNDIR/vehicle_free_circle/diagnostics.csv" using "x":"y" with lines title "front wheel", \
     "" using (column("x")-L*cos(column("theta"))):(column("y")-L*sin(column("theta"))) with lines title "back wheel"
set size noratio
set title "line, 1e-12 off: leaves it at t = 5.4"
plot "$RUNDIR/vehicle_free_line/diagnostics.csv" using "x":"y" with lines title "front wheel", \
     "" using (column("x")-L*cos(column("theta"))):(column("y")-L*sin(column("theta"))) with lines title "back wheel"
unset multiplot
GP
echo "wrote $FIGDIR/vehicle_free.png"
