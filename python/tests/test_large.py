"""A large system (the hard-sphere fluid of examples/, small N)."""
import pandas as pd
import pytest

import ricochet


def test_hard_sphere_fluid(examples, tmp_path):
    n = 4 * 5 ** 3
    r = ricochet.run(examples / "hard_sphere_fluid.yaml", out=tmp_path,
                     set={"lattice.n": n, "integrator.duration": 1.5,
                          "output.equilibrate": 0.5})
    assert r.kind == "large_system"
    assert r.diagnostics is None
    obs = r.observables
    for name, df in (("observables", obs), ("rdf", r.rdf), ("msd", r.msd)):
        pd.testing.assert_frame_equal(df, pd.read_csv(tmp_path / (name +
                                                                  ".csv")))
    # velocities are drawn with the exact temperature kT = 1 and zero
    # total momentum; ballistic spheres with elastic impacts keep their
    # kinetic energy: to round-off (1e-12 relative over ~1000 impacts)
    assert obs.temperature[0] == pytest.approx(1.0, rel=1e-12)
    e0 = obs.energy[0]
    assert ((obs.energy - e0).abs() / e0).max() < 1e-12
    assert e0 == pytest.approx(1.5 * (n - 1), rel=1e-12)  # d(N-1)/2 kT
    # g(r) is zero inside the hard core (r < 1, contact at the diameter)
    inside = r.rdf[r.rdf.r < 0.98]
    assert (inside.g == 0).all()
    assert r.rdf.g.max() > 1
    # the MSD grows
    assert (r.msd.msd >= 0).all() and r.msd.msd.iloc[-1] > r.msd.msd.iloc[0]
    z = r.summary["compressibility_factor"]
    # Carnahan-Starling at eta = 0.3, computed here
    eta = 0.3
    cs = (1 + eta + eta ** 2 - eta ** 3) / (1 - eta) ** 3
    assert z["carnahan_starling"] == pytest.approx(cs, rel=1e-12)
    # 500 spheres for one time unit: Z within 5 of its standard errors
    # plus 3 % (finite-size and short-run bias) of the equation of state
    assert abs(z["mean"] - cs) < 5 * z["stderr"] + 0.03 * cs


def test_large_system_scenario_checks(examples):
    with pytest.raises(ricochet.ScenarioError) as info:
        ricochet.Scenario(examples / "hard_sphere_fluid.yaml",
                          set={"lattice.packing_fraction": 0.9}).check()
    assert info.value.field.startswith("lattice")
