"""Compressibility factor Z(eta) of the hard-sphere fluid against
Carnahan-Starling.

Runs examples/hard_sphere_fluid.yaml (exact collision times, so Z has no
time-step bias) at several packing fractions with a small number of
spheres, prints Z with its blocking error next to the Carnahan-Starling
equation of state Z = (1 + eta + eta^2 - eta^3) / (1 - eta)^3, and plots
both with matplotlib when it is installed (hard_sphere_z.png).

    python hard_sphere_z.py [--n 864] [--duration 3] [--eta 0.1 0.2 ...]
"""
import argparse
import pathlib

import numpy as np

import ricochet

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def carnahan_starling(eta):
    eta = np.asarray(eta, dtype=float)
    return (1 + eta + eta ** 2 - eta ** 3) / (1 - eta) ** 3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=864,
                    help="spheres (fcc: 4 k^3)")
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--eta", type=float, nargs="+",
                    default=[0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4,
                             0.45])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--plot", default="hard_sphere_z.png")
    args = ap.parse_args()

    rows = []
    print("%6s %10s %8s %10s %8s" % ("eta", "Z", "+-", "CS", "sigmas"))
    for eta in args.eta:
        r = ricochet.run(EXAMPLES / "hard_sphere_fluid.yaml",
                         threads=args.threads,
                         set={"lattice.n": args.n,
                              "lattice.packing_fraction": eta,
                              "integrator.duration": args.duration,
                              "output.equilibrate": args.duration / 3})
        z = r.summary["compressibility_factor"]
        cs = float(carnahan_starling(eta))
        rows.append((eta, z["mean"], z["stderr"], cs))
        print("%6.3f %10.4f %8.4f %10.4f %8.2f" % (
            eta, z["mean"], z["stderr"], cs,
            (z["mean"] - cs) / z["stderr"] if z["stderr"] > 0 else np.nan))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot; pip install matplotlib)")
        return
    eta, z, dz, _ = map(np.array, zip(*rows))
    fine = np.linspace(0, max(eta) * 1.05, 200)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(fine, carnahan_starling(fine), label="Carnahan-Starling")
    ax.errorbar(eta, z, yerr=dz, fmt="o", ms=4,
                label="ricochet, N = %d" % args.n)
    ax.set_xlabel("packing fraction eta")
    ax.set_ylabel("Z = PV / NkT")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print("plot:", args.plot)


if __name__ == "__main__":
    main()
