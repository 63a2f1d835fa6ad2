"""ricochet.run on models in generalized coordinates (the `model:` block):
the cart-pendulum of Pekarek & Murphey 2014 from Xi(3.2) and the
Heisenberg problem of McLachlan et al. 2013, checked against what the
papers state and against the run's own files."""
import json

import numpy as np
import pandas as pd

import ricochet


def test_cart_pendulum_mcva(examples, tmp_path):
    r = ricochet.run(examples / "cart_pendulum_gc.yaml", out=tmp_path)
    assert r.status == "ok"
    # the paper's Fig. 3: three impacts from Xi(3.2) at h = 1e-2
    assert r.summary["impacts"] == 3
    d = r.diagnostics
    assert {"y", "theta", "p_y", "p_theta", "discrete_energy"} <= set(d.columns)
    # the ground y >= 0 holds at every row (impacts are found to
    # round-off on the discrete flow: 1e-9 is far above their error)
    assert (d["y"] >= -1e-9).all()
    # MCVA-A keeps its O(h^4) modified energy far better than H (the
    # method's point): its spread is at least 10x smaller
    spread = lambda c: d[c].max() - d[c].min()
    assert spread("modified_energy") * 10 < spread("energy")
    # what the run wrote is what came back in memory
    csv = pd.read_csv(tmp_path / "diagnostics.csv")
    assert list(csv.columns) == list(d.columns)
    np.testing.assert_array_equal(csv["energy"].to_numpy(),
                                  d["energy"].to_numpy())
    assert json.loads((tmp_path / "summary.json").read_text()) == r.summary


def test_heisenberg_invariants(examples):
    r = ricochet.run(examples / "heisenberg.yaml")
    assert r.status == "ok"
    d = r.diagnostics
    # p_z is a momentum map of the problem's symmetry in z: conserved by
    # the symplectic Gauss method to round-off (1e-12: thousands of steps
    # of rounding at |p| ~ 1)
    assert np.abs(d["p_z"] - d["p_z"].iloc[0]).max() < 1e-12
    # the velocity constraint holds to round-off at every row
    assert d["max_constraint_error"].max() < 1e-12
