#!/usr/bin/env python3
"""A performance model of ricochet's GPU code, on paper: bytes, flops,
launches and host synchronisations per step from the code, and from them
an expected time on an H100.  A model, not a measurement: it says how far
a measured run is from what the code's own traffic allows, and which bound
limits it.  docs/gpu_performance_model.md explains every number.

usage: perf_model.py [--counts FILE] [--json]
  --counts FILE  the device engine's work per step
                 (bench_dengine_counts's JSON; default
                 bench/results/dengine_counts_256000.json)
  --json         print the predictions as JSON (bench/gpu/run.sh)
Python standard library only.
"""
import argparse
import json
import os
import sys

# ------------------------------------------------------------- the device
# H100 SXM (the figures the issue names; the H200's are within 1.4x).
HBM_BYTES_PER_S = 3.35e12        # HBM3
FP64_FLOP_PER_S = 34e12          # vector FP64 (an FMA is 2 flops)
ISSUE_THREAD_INSTR_PER_S = 132 * 4 * 1.755e9 * 32  # SMs x schedulers x
                                 # clock x lanes: 2.97e13, all lanes busy
T_LAUNCH = 2.5e-6                # a queued kernel, copy or memset that
                                 # waits for the one before it (back-to-
                                 # back small launches on one stream)
T_SYNC = 5e-6                    # a host round trip: the copy back and
                                 # the stream synchronisation

# ------------------------------------------------- device engine, per item
# DRAM bytes per item of each kernel: the arrays it reads and writes for
# its own item, each once (src/kernels/rc_md.h, 3-D, doubles 8 B, ints
# 4 B).  Gathers of a neighbour's position, radius or touched mark are
# not counted again: at N = 256 000 the per-sphere arrays they read
# (q, qp 6 MB each) stay in the 50 MB L2, so a gather is an L2 hit.
KERNEL_BYTES = {
    "predict": 24 + 24 + 24 + 8 + 24 + 8,   # q p grad 1/m -> qp red
    "moved": 24 + 24 + 8,                   # q qbuild -> red
    "snapshot": 24 + 24,                    # q -> qbuild
    "cell_count": 24 + 4 + 8,               # q -> cell_of, count
    "cell_fill": 4 + 8 + 4,                 # cell_of, cursor -> cell_idx
    "pair_count": 24 + 8 + 36,              # own q, offset; cells read
    "pair_write": 24 + 8 + 36 + 2.4 * 8,    # + ~2.4 pairs written
    "screen_pair": 4 + 4 + 1 + 1,           # cand_i cand_j cand_m -> flag
    "push_hit": 4 + 80,                     # hit -> a contact (per hit)
    "screen_wall": 8 + 1,
    "remark": 100,
    "unmark": 1 + 1,                        # cand_m's marks cleared
    "uf_init": 4,
    "uf_hook": 4 + 4 + 8,
    "con_key": 4 + 4 + 4 + 4,
    "isl_head": 4 + 4 + 8,
    "isl_start": 8 + 8 + 8,
    "isl_size": 8 + 8 + 8,
    "reflect_island": 400,                  # a few contacts, their spheres
    "finite": 24 + 24 + 8,                  # qp p -> red
    "finite_contacts": 80 + 2 * 48 + 8,     # contact, qp p of both -> red
    "finish": 24 + 24 + 24 + 24 + 24 + 12,  # (before 2026-11-28's swap)
    "virial": 80 + 8,
    "collided": 80 + 8,
    "wall_collided": 80 + 8,
    "observe": 24 + 24 + 8,
    "overlap_pair": 8 + 8,
    "overlap_wall": 24 + 8 + 8,
    "pair_term": 8 + 24,
    "tcount": 8, "tfill": 16, "tsort": 16, "force": 48,
    "hold_island": 600, "unhold_island": 200, "project_island": 600,
    "kick_forces": 24 + 24 + 24 + 24,
    "advance": 24 + 24 + 12,                # (q and qp now trade places)
    "isl_summary": 8 + 4 + 4 + 5 * 8,
}
# Arrays every contact screen gathers once (touched, radius, q, qp of both
# spheres): unique bytes per sphere per screen, from L2 after the first.
SCREEN_GATHER_BYTES_PER_SPHERE = 1 + 8 + 24 + 24
# Flops per item that matter (the rest are index arithmetic): the
# predictor's and the finish's updates, a contact test (two distances).
KERNEL_FLOPS = {"predict": 12, "moved": 9, "finish": 12, "finite": 6,
                "screen_pair": 20, "reflect_island": 2000,
                "hold_island": 4000, "project_island": 2000}
SCAN_BYTES_PER_ITEM = 16      # CUB decoupled look-back: read and write
                              # (a selection's widening and scatter add
                              # about as much again: not counted)
SCAN_LAUNCHES = 2             # its init and scan kernels
REDUCE_BYTES_PER_ITEM = 8     # the chunks read once; the tree is small
REDUCE_LAUNCHES = 2           # chunks, then the tree
SORT_BYTES_PER_ITEM = 3 * 16  # key and value, three 8-bit digit passes
SORT_LAUNCHES = 6             # CUB onesweep passes and histogram, and
                              # the two copies back

# ------------------------------------------------------------- ensembles
# x86 instructions per member-step of the CPU batch engine, counted by
# valgrind --tool=callgrind (inclusive rc_batch_run_) on this repository's
# machine: pogo_ensemble.yaml with 200 members (100 000 member-steps,
# 171.2 M instructions) and cradle_ensemble.yaml varied in the last
# ball's momentum (12 members x 300 midpoint steps, 335.5 M).  The model
# takes a GPU thread to execute about as many instructions.
ENSEMBLES = {
    "pogo": {"instructions": 1712, "fp64_fraction": 0.3,
             "scratch_bytes": 59 * 8 + 11 * 4, "touches_per_step": 10},
    "cradle": {"instructions": 93200, "fp64_fraction": 0.3,
               "scratch_bytes": 1824 * 8 + 135 * 4, "touches_per_step": 6},
}
# Occupancy of rc_g_member_run (bench/results/cuda_resources.txt: 254
# registers, launch bound 2 blocks of 128 a multiprocessor): 8 warps a
# multiprocessor, 2 a scheduler.  With 2 warps to switch between, a
# scheduler issues about every 4th cycle on dependent FP64 chains
# (latency ~8 cycles, L1 hits ~30): an issue efficiency of 0.25.
ISSUE_EFFICIENCY = 0.25
RESIDENT_THREADS = 132 * 2 * 128
L1_BYTES_PER_SM = 256 * 1024


def device_engine(counts):
    """Time per step of the device engine from its measured work."""
    n = counts["particles"]
    kernels = counts["kernels"]
    mem = 0.0
    flops = 0.0
    launches = 0.0
    for name, k in kernels.items():
        items = k["items"]
        mem += items * KERNEL_BYTES.get(name, 64)
        flops += items * KERNEL_FLOPS.get(name, 0)
        launches += k["calls"]
    screens = kernels.get("screen_pair", {"calls": 0})["calls"]
    mem += screens * n * SCREEN_GATHER_BYTES_PER_SPHERE
    mem += counts["scan_items"] * SCAN_BYTES_PER_ITEM
    mem += counts["reduce_items"] * REDUCE_BYTES_PER_ITEM
    mem += counts["sort_items"] * SORT_BYTES_PER_ITEM
    mem += 2 * counts["copy_bytes"] + counts["zero_bytes"]
    mem += counts["put_bytes"] + counts["get_bytes"]
    launches += (counts["scans"] * SCAN_LAUNCHES +
                 counts["reduces"] * REDUCE_LAUNCHES +
                 counts["sorts"] * SORT_LAUNCHES + counts["copies"] +
                 counts["zeros"] + counts["puts"] + counts["gets"] +
                 counts["fetches"])
    t_mem = mem / HBM_BYTES_PER_S
    t_flop = flops / FP64_FLOP_PER_S
    t_launch = launches * T_LAUNCH
    t_sync = counts["host_syncs"] * T_SYNC
    # one stream, and every round trip drains it: the terms add
    t_step = t_mem + t_flop + t_launch + t_sync
    terms = {"memory": t_mem, "fp64": t_flop, "launches": t_launch,
             "host round trips": t_sync}
    return {
        "workload": "device engine, hard-sphere fluid, N = %d, eta %g, "
                    "dt %g" % (n, counts["packing_fraction"], counts["dt"]),
        "bytes_per_particle_step": mem / n,
        "flops_per_particle_step": flops / n,
        "gpu_operations_per_step": launches,
        "host_syncs_per_step": counts["host_syncs"],
        "seconds_per_step": t_step,
        "terms_seconds": terms,
        "bound": max(terms, key=terms.get),
        "rate": n / t_step,
        "rate_unit": "particle-steps/s",
        "rate_memory_bound_alone": n / t_mem,
    }


def ensemble(name, e):
    """Member-steps per second of the one-thread-per-member kernel: the
    issue bound at the kernel's occupancy, best case (warps coherent) and
    worst case (every lane of a warp on its own path), and the scratch
    traffic when the resident threads' scratch outgrows L1."""
    instr = e["instructions"]
    best = ISSUE_THREAD_INSTR_PER_S * ISSUE_EFFICIENCY / instr
    worst = best / 32
    fp64 = FP64_FLOP_PER_S / 2 / (instr * e["fp64_fraction"])
    per_sm = e["scratch_bytes"] * RESIDENT_THREADS / 132
    mem_rate = None
    if per_sm > L1_BYTES_PER_SM:
        mem_rate = HBM_BYTES_PER_S / (e["scratch_bytes"] *
                                      e["touches_per_step"])
    bounds = {"issue (coherent warps)": best, "fp64": fp64}
    if mem_rate:
        bounds["scratch traffic (beyond L1)"] = mem_rate
    bound = min(bounds, key=bounds.get)
    return {
        "workload": "%s ensemble, one thread per member" % name,
        "instructions_per_member_step": instr,
        "scratch_bytes_per_member": e["scratch_bytes"],
        "scratch_per_multiprocessor_bytes": per_sm,
        "rate": bounds[bound],
        "rate_worst_divergence": min(worst, bounds[bound]),
        "rate_unit": "member-steps/s",
        "bound": bound,
        "bounds": bounds,
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--counts", default=os.path.join(
        here, "..", "results", "dengine_counts_256000.json"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.counts) as f:
        counts = json.load(f)
    out = {"note": "a model, not a measurement (docs/gpu_performance_model.md)",
           "device": "H100 SXM: %.2f TB/s HBM3, %.0f TFLOP/s FP64, "
                     "%.1f us a launch, %.1f us a round trip" %
                     (HBM_BYTES_PER_S / 1e12, FP64_FLOP_PER_S / 1e12,
                      T_LAUNCH * 1e6, T_SYNC * 1e6),
           "device_engine": device_engine(counts),
           "pogo": ensemble("pogo", ENSEMBLES["pogo"]),
           "cradle": ensemble("cradle", ENSEMBLES["cradle"])}
    if a.json:
        json.dump(out, sys.stdout, indent=2)
        print()
        return
    print("GPU performance model (a model, not a measurement): " + out["device"])
    d = out["device_engine"]
    print("%s: %.0f us a step (%s), %.3g %s; %.0f bytes and %.0f flops a "
          "particle-step, %.0f GPU operations and %.1f round trips a step; "
          "memory alone would allow %.3g" %
          (d["workload"], d["seconds_per_step"] * 1e6, d["bound"], d["rate"],
           d["rate_unit"], d["bytes_per_particle_step"],
           d["flops_per_particle_step"], d["gpu_operations_per_step"],
           d["host_syncs_per_step"], d["rate_memory_bound_alone"]))
    for k in ("pogo", "cradle"):
        e = out[k]
        print("%s: %.3g %s (%s), %.3g if every lane diverges" %
              (e["workload"], e["rate"], e["rate_unit"], e["bound"],
               e["rate_worst_divergence"]))


if __name__ == "__main__":
    main()
