"""The tables a run hands over in memory (rc_run_options.on_table,
rc_ensemble_options.on_table) against the files the same run wrote:
an ensemble's members.csv, a large system's observables.csv, msd.csv and
rdf.csv, a model's diagnostics.csv."""
import numpy as np

import ricochet
from conftest import (OBSERVABLES_FORMATS, SERIES_FORMATS,
                      assert_table_equals_csv, read_csv_exact)

def test_members_table_blocks(examples, tmp_path):
    """5000 members: the table comes in blocks of rows (2048 a call)."""
    r = ricochet.run(examples / "pogo_ensemble.yaml", out=tmp_path,
                     set={"ensemble.members": 5000,
                          "integrator.duration": 5})
    m = r.members
    assert list(m.member) == list(range(5000))
    assert m.member.dtype == np.int64 and m.impacts.dtype == np.int64
    assert_table_equals_csv(m, tmp_path / "members.csv")


def test_members_table_words_and_reference(examples, tmp_path):
    """A grid with a word-valued rule (the method), a `values` rule and
    a reference run (the l2_error column)."""
    r = ricochet.run(examples / "cart_pendulum_sweep.yaml", out=tmp_path,
                     set={"ensemble.vary[0].count": 2,
                          "integrator.duration": 0.5,
                          "ensemble.reference.dt": 0.001})
    m = r.members
    assert len(m) == 12
    assert sorted(set(m["integrator.method"])) == ["cva", "gvi", "mcva"]
    assert set(m["integrator.dt"]) == {0.032, 0.01}
    assert "l2_error" in m.columns and set(m.status) <= {"ok", "failed",
                                                          "invalid"}
    assert_table_equals_csv(m, tmp_path / "members.csv")


def test_large_system_tables(examples, tmp_path):
    r = ricochet.run(examples / "hard_sphere_fluid.yaml", out=tmp_path,
                     threads=1,
                     set={"lattice.n": 108, "integrator.duration": 0.8,
                          "output.equilibrate": 0.2, "output.every": 5,
                          "output.rdf_every": 10})
    assert_table_equals_csv(r.observables, tmp_path / "observables.csv",
                            OBSERVABLES_FORMATS)
    assert_table_equals_csv(r.msd, tmp_path / "msd.csv", SERIES_FORMATS)
    assert_table_equals_csv(r.rdf, tmp_path / "rdf.csv", SERIES_FORMATS)
    assert len(r.msd) > 2 and len(r.rdf) > 10
    # from memory, not from the files: Z and the MSD at full precision
    # (a value %.10g leaves alone is rare: not all of them)
    csv = read_csv_exact(tmp_path / "observables.csv")
    assert (r.observables.Z != csv.Z).any()
    assert r.observables.step.dtype == np.int64


def test_large_system_without_rdf_samples(examples, tmp_path):
    """No configuration sampled: rdf.csv has its header only, the table
    its columns and no row."""
    r = ricochet.run(examples / "hard_sphere_fluid.yaml", out=tmp_path,
                     set={"lattice.n": 32, "integrator.duration": 0.1,
                          "output.equilibrate": 0, "output.rdf_every": 0})
    assert list(r.rdf.columns) == ["r", "g"] and len(r.rdf) == 0
    assert_table_equals_csv(r.rdf, tmp_path / "rdf.csv")


def test_model_diagnostics_table(examples, tmp_path):
    r = ricochet.run(examples / "cart_pendulum_gc.yaml", out=tmp_path)
    d = r.diagnostics
    assert {"y", "theta", "p_y", "p_theta"} <= set(d.columns)
    assert d.step.dtype == np.int64 and d.impacts.dtype == np.int64
    assert_table_equals_csv(d, tmp_path / "diagnostics.csv")


def test_model_diagnostics_table_heisenberg(examples, tmp_path):
    """Index-1 model: multipliers as aux columns, quantities the method
    does not define as NaN (empty fields)."""
    r = ricochet.run(examples / "heisenberg.yaml", out=tmp_path,
                     set={"integrator.duration": 2})
    assert_table_equals_csv(r.diagnostics, tmp_path / "diagnostics.csv")
