"""Energy drift of the pogo stick over an ensemble of 10^4 drops.

Each member is the pogo stick of examples/pogo_stick.yaml (GVI, Verlet
base) released from a height drawn from N(1, 0.1) (the ensemble of
examples/pogo_ensemble.yaml).  The script runs the ensemble once per time
step, prints the quantiles of each member's windowed energy drift and
largest energy error, and draws their histograms with matplotlib when it
is installed (pogo_drift.png).

    python pogo_drift.py [--members 10000] [--duration 50] [--dt 0.1 0.05]
"""
import argparse
import pathlib

import numpy as np

import ricochet

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=10000)
    ap.add_argument("--duration", type=float, default=50.0)
    ap.add_argument("--dt", type=float, nargs="+", default=[0.1, 0.05])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--plot", default="pogo_drift.png")
    args = ap.parse_args()

    runs = {}
    for dt in args.dt:
        r = ricochet.run(EXAMPLES / "pogo_ensemble.yaml", threads=args.threads,
                         set={"ensemble.members": args.members,
                              "integrator.dt": dt,
                              "integrator.duration": args.duration})
        m = r.members[r.members.status == "ok"]
        runs[dt] = m
        print("dt %-6g %d members (%d ok, %d failed) in %.2f s, %.3g "
              "member-steps/s" % (dt, r.member_count, r.ok, r.failed,
                                  r.wall_seconds, r.member_steps_per_second))
        for col in ("windowed_drift", "max_rel_energy_error"):
            q = np.quantile(m[col], [0.0, 0.5, 0.9, 0.99, 1.0])
            print("  %-21s min %.3e  median %.3e  p90 %.3e  p99 %.3e  "
                  "max %.3e" % (col, *q))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no histogram; "
              "pip install matplotlib)")
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, col, label in (
            (axes[0], "windowed_drift", "windowed drift of (H - H0)/|H0|"),
            (axes[1], "max_rel_energy_error", "max |H - H0|/|H0|")):
        for dt, m in runs.items():
            x = m[col].to_numpy()
            x = x[x > 0]
            bins = np.logspace(np.log10(x.min()), np.log10(x.max()), 60)
            ax.hist(x, bins=bins, histtype="step", label="dt = %g" % dt)
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("members")
        ax.legend()
    fig.suptitle("pogo stick, GVI: %d drops from N(1, 0.1), duration %g"
                 % (args.members, args.duration))
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print("histogram:", args.plot)


if __name__ == "__main__":
    main()
