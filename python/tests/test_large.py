"""A large system (the hard-sphere fluid of examples/, small N)."""
import pytest

import ricochet
from conftest import (OBSERVABLES_FORMATS, SERIES_FORMATS,
                      assert_table_equals_csv)


def test_hard_sphere_fluid(examples, tmp_path):
    n = 4 * 5 ** 3
    r = ricochet.run(examples / "hard_sphere_fluid.yaml", out=tmp_path,
                     set={"lattice.n": n, "integrator.duration": 1.5,
                          "output.equilibrate": 0.5})
    assert r.kind == "large_system"
    assert r.diagnostics is None
    obs = r.observables
    # in memory, the files' tables (unrounded where the files round)
    assert_table_equals_csv(obs, tmp_path / "observables.csv",
                            OBSERVABLES_FORMATS)
    assert_table_equals_csv(r.rdf, tmp_path / "rdf.csv", SERIES_FORMATS)
    assert_table_equals_csv(r.msd, tmp_path / "msd.csv", SERIES_FORMATS)
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


def test_large_system_in_memory_follows_run(examples):
    """LargeSystem steps the engine rc_run uses from the same state: its
    observables at every row equal observables.csv's."""
    sets = {"lattice.n": 256, "integrator.duration": 0.6,
            "output.every": 5, "output.equilibrate": 0}
    scn = ricochet.Scenario(examples / "hard_sphere_fluid.yaml", set=sets)
    r = ricochet.run(scn, threads=1)
    ls = ricochet.LargeSystem(scn, threads=1)
    assert (ls.count, ls.dimension) == (256, 3)
    assert list(ls.box) == r.summary["box_lengths"]
    assert ls.periodic.all()
    assert (ls.radii == 0.5).all() and (ls.masses == 1).all()
    for _, row in r.observables.iterrows():
        ls.step(int(row.step) - ls.steps_taken)
        o = ls.observe()
        assert o["step"] == row.step
        # %.17g columns: equal; %.10g ones (Z, msd): to 1e-9 relative
        # (the CSV's rounding), 1e-12 absolute where they are 0
        for c in ("kinetic_energy", "potential_energy", "energy"):
            assert o[c] == row[c], c
        for c in ("Z", "pressure_collision", "msd"):
            assert o[c] == pytest.approx(row[c], rel=1e-9, abs=1e-12), c
        assert o["collisions"] == row.collisions
    # what the arrays hold: positions in the box, unwrapped consistent,
    # zero total momentum (to round-off of 256 unit momenta: 1e-12)
    q, p, img = ls.state()
    assert ((q >= 0) & (q < ls.box)).all()
    assert (ls.unwrapped == q + img * ls.box).all()
    assert abs(p.sum(axis=0)).max() < 1e-12
    assert ls.velocities == pytest.approx(p)   # unit masses
    # kinetic energy from the arrays, against the engine's reduction
    # (1e-12 relative: two summation orders of 768 terms)
    assert 0.5 * (p * p).sum() == pytest.approx(o["kinetic_energy"],
                                                rel=1e-12)
    assert ls.time == pytest.approx(0.6, rel=1e-12)


def test_large_system_refuses_small_ones(examples):
    with pytest.raises(ValueError):
        ricochet.LargeSystem(examples / "pogo_stick.yaml")
