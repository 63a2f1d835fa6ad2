#!/usr/bin/env python3
"""Hunt for bad inputs that break the CLI's exit-code contract (README:
exit 2 with file:line:column and the field for bad input, exit 1 for a
runtime failure, 0 for success).

For every bundled example and every numeric key in it, run `ricochet run`
(and `validate`) with plausible bad --set values (negative, zero, NaN,
huge, wrong types), plus hand-written structural cases (overlapping
spheres, constraints violated at the start, radii larger than the box,
lattices that do not fit, dt > duration, names that escape the output
root).  Prints every case that exits 1, crashes, times out, exits 2
without a file:line:column place, or exits 0 where a refusal is expected.

usage: scripts/hunt-exit-codes.py BUILD_DIR [--quick] [--only EXAMPLE]
Exit status: 0 when no case was flagged, 1 otherwise.
"""
import os, re, subprocess, sys, tempfile
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(ROOT, "examples")
# a run whose cost would be minutes is cut to this many steps' worth of
# duration (the bad value under test is checked at load or set-up)
SHORT = {"integrator.duration": None}
# bad inputs are refused at load or set-up: seconds, not minutes
TIMEOUT = 60
PLACE = re.compile(r":\d+:\d+: ")

BAD_NUMBERS = ["-1", "0", ".nan", ".inf", "1e300", "-1e300", "abc", "[1, 2]",
               "{a: 1}", "1e-300", "9223372036854775808"]


def numeric_paths(node, prefix=""):
    """Paths of numeric leaves (lists of numbers count as one leaf too)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += numeric_paths(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(node, list):
        if node and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                        for x in node):
            for i in range(len(node)):
                out.append(f"{prefix}[{i}]")
        else:
            for i, x in enumerate(node):
                out += numeric_paths(x, f"{prefix}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        out.append(prefix)
    return out


def run(cli, args, out, cwd=None):
    """cwd given: no --out (the output directory comes from `name`)."""
    try:
        cmd = [cli] + args
        if cwd is None:
            cmd += ["--out", out]
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=TIMEOUT, cwd=cwd)
        return p.returncode, p.stderr + p.stdout
    except subprocess.TimeoutExpired:
        return "timeout", ""


def short_sets(doc):
    """Cut long runs: keep about 50 steps (the contract is about the
    start; a short run still runs its set-up in full)."""
    it = doc.get("integrator", {})
    dt = it.get("dt", 0.01)
    sets = ["integrator.duration=%r" % (50 * dt)]
    if "ensemble" in doc:
        ens = doc["ensemble"]
        if "members" in ens:
            sets.append("ensemble.members=4")
        # a grid of 2 points an axis, a reference no finer than the run
        for r, rule in enumerate(ens.get("vary", [])):
            if "count" in rule:
                sets.append(f"ensemble.vary[{r}].count=2")
        if "reference" in ens:
            sets.append(f"ensemble.reference.dt={dt!r}")
    out = doc.get("output", {})
    if "equilibrate" in out:
        sets.append("output.equilibrate=0")
    return sets


def cases_for(name, doc):
    cases = []  # (label, sets, expect) expect: 2 refusal, None: 0 or 2
    for path in numeric_paths(doc):
        if path.startswith("ensemble.vary"):
            continue
        for v in BAD_NUMBERS:
            cases.append((f"{path}={v}", [f"{path}={v}"], None))
    # structural cases
    cases.append(("name=..", ["name=.."], 2))
    cases.append(("name=a/b", ["name=a/b"], 2))
    cases.append(("name=../x", ["name=../x"], 2))
    cases.append(("name=''", ["name=''"], 2))
    it = doc.get("integrator", {})
    if "dt" in it and "duration" in it:
        cases.append(("dt > duration", ["integrator.dt=1", "integrator.duration=0.5"], 2))
        cases.append(("duration=0", ["integrator.duration=0"], None))
    if "particles" in doc and len(doc["particles"]) >= 2:
        p0 = doc["particles"][0]
        cases.append(("particles overlap", [f"particles[1].position={p0['position']}"], None))
        for i, p in enumerate(doc["particles"]):
            cases.append((f"particles[{i}].radius=1e6", [f"particles[{i}].radius=1e6"], None))
    for i, c in enumerate(doc.get("constraints", [])):
        if "offset" in c:
            cases.append((f"constraints[{i}].offset=3", [f"constraints[{i}].offset=3"], 2))
        if "length" in c:
            cases.append((f"constraints[{i}].length=0.1", [f"constraints[{i}].length=0.1"], 2))
        if c.get("type") == "container":
            cases.append((f"constraints[{i}].radius=0.5", [f"constraints[{i}].radius=0.5"], 2))
    if "lattice" in doc:
        cases.append(("lattice.n=10", ["lattice.n=10"], 2))
        cases.append(("lattice.n=100000000", ["lattice.n=100000000"], 2))
        cases.append(("lattice.radius=100", ["lattice.radius=100"], 2))
        cases.append(("lattice.packing_fraction=0.9", ["lattice.packing_fraction=0.9"], 2))
        cases.append(("lattice.kind=random dense", ["lattice.kind=random", "lattice.packing_fraction=0.7"], 2))
    if "box" in doc:
        cases.append(("box.lengths tiny", ["box.lengths=[1, 1, 1]"] if doc.get("dimension") == 3 else ["box.lengths=[1, 1]"], 2))
    return cases


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cli = os.path.abspath(os.path.join(sys.argv[1], "ricochet"))
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    flagged = []
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in sorted(os.listdir(EX)):
            if not f.endswith(".yaml") or (only and only not in f):
                continue
            doc = yaml.safe_load(open(os.path.join(EX, f)))
            path = os.path.join(EX, f)
            for label, sets, expect in cases_for(f, doc):
                short = short_sets(doc)
                keys = {s.split("=")[0] for s in sets}
                extra = [s for s in short if s.split("=")[0] not in keys]
                if label.startswith("integrator.duration") or "duration" in label:
                    extra = [s for s in extra if not s.startswith("integrator.duration")]
                args = ["run", path]
                for s in sets + extra:
                    args += ["--set", s]
                args.append("--quiet")
                total += 1
                # names run without --out from a scratch directory: out/NAME
                # must stay inside its out/
                named = label.startswith("name")
                rc, text = run(cli, args, os.path.join(tmp, "o"),
                               cwd=tmp if named else None)
                first = text.strip().splitlines()[0] if text.strip() else ""
                why = None
                if rc == "timeout":
                    why = "timeout"
                elif rc not in (0, 1, 2):
                    why = f"crash ({rc})"
                elif rc == 1:
                    why = "exit 1"
                elif rc == 2 and not PLACE.search(text) and "--set" not in text:
                    why = "exit 2 without file:line:column"
                elif rc == 0 and expect == 2:
                    why = "exit 0 (expected a refusal)"
                # name must never escape the output root
                for n in ("diagnostics.csv", "summary.json", "members.csv",
                          "observables.csv"):
                    if os.path.exists(os.path.join(tmp, n)):
                        why = (why or "") + " wrote outside out/"
                        os.remove(os.path.join(tmp, n))
                status = why or "ok"
                if why:
                    flagged.append((f, label, rc, first))
                if "-v" in sys.argv or why:
                    print(f"{status:32s} {f:32s} {label:40s} rc={rc} {first[:150]}",
                          flush=True)
    print(f"{len(flagged)} of {total} cases flagged")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
