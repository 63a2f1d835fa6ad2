#!/bin/sh
# Seed 002 §5, Fig. 2: the vehicle in the bowl, relative energy error of
# the Gauss methods beside the RK4 and projection baselines.
# Writes out/figures/vehicle_compare_energy.{png,svg}.
. "$(dirname "$0")/srk_common.sh"
"$RICOCHET" compare "$root/examples/vehicle.yaml" --quiet \
    --methods gauss1,gauss2,rk4,projection --out "$RUNDIR/vehicle-compare"
"$RICOCHET" plot "$RUNDIR/vehicle-compare" --format png,svg \
    --out "$FIGDIR/vehicle"
echo "wrote $FIGDIR/vehicle_compare_energy.png"
