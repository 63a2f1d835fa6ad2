"""Ensembles: members against single runs of the same scenario."""
import pandas as pd
import pytest

import ricochet
from conftest import assert_table_equals_csv

RULE = "particles[1].position[0]"


def single_member_scenario(ens, value):
    """The ensemble's base scenario with the rule's value set, as a plain
    (non-ensemble) scenario dict."""
    d = ens.to_dict()
    del d["ensemble"]
    d["output"].pop("trace_members", None)
    d["particles"][1]["position"][0] = value
    return d


def test_members_equal_single_runs(examples, tmp_path):
    ens = ricochet.Scenario(examples / "pogo_ensemble.yaml",
                            set={"ensemble.members": 6,
                                 "integrator.duration": 20})
    r = ricochet.run(ens, out=tmp_path)
    assert r.kind == "ensemble"
    m = r.members
    assert list(m.member) == list(range(6))
    assert (m.status == "ok").all()
    assert r.ok == 6 and r.failed == 0 and r.invalid == 0
    assert r.summary["members"] == 6
    assert r.summary["status"] == {"ok": 6, "failed": 0, "invalid": 0}
    assert_table_equals_csv(m, tmp_path / "members.csv")
    # the normal rule: mean 1, sigma 0.1 (six draws lie within 5 sigma)
    assert ((m[RULE] - 1).abs() < 0.5).all()
    for k in range(6):
        one = ricochet.run(single_member_scenario(ens, float(m[RULE][k])))
        # members.csv prints 17 significant digits (an exact round trip),
        # and a member (the batch engine's lanes) gives the bits of a
        # single run from the same state (README "Ensembles"): equal
        assert m.E0[k] == one.energy_initial
        assert m.max_rel_energy_error[k] == one.max_rel_energy_error
        assert m.final_rel_energy_error[k] == one.final_rel_energy_error
        assert m.windowed_drift[k] == one.windowed_drift
        assert m.drift_per_time[k] == one.energy_drift_per_time
        assert m.impacts[k] == one.diagnostics.reflections_total.iloc[-1]
        assert m.steps[k] == one.steps
        if k == 0:
            # the traced member's full diagnostics equal the single run's
            tr = r.traces[0]
            assert list(tr.step) == list(one.diagnostics.step)
            pd.testing.assert_series_equal(tr.energy, one.diagnostics.energy,
                                           check_exact=True)


def test_ensemble_in_a_temporary_directory(examples):
    r = ricochet.run(examples / "pogo_ensemble.yaml",
                     set={"ensemble.members": 64, "integrator.duration": 5})
    assert r.out is None
    assert len(r.members) == 64 and r.member_count == 64
    assert r.summary["members"] == 64
    assert r.summary["status"] == {"ok": 64, "failed": 0, "invalid": 0}


def test_ensemble_backend_is_checked(examples):
    with pytest.raises(ValueError):
        ricochet.run(examples / "pogo_ensemble.yaml",
                     set={"ensemble.members": 2}, backend="reference")
