"""ricochet.compare against single runs of each method."""
import math

import pandas as pd
import pytest

import ricochet

SETS = {"integrator.dt": 0.3, "integrator.duration": 30}


def test_compare(examples, tmp_path):
    path = examples / "nonlinear_oscillator.yaml"
    c = ricochet.compare(path, ["sv", "midpoint", "bogus"], out=tmp_path,
                         set=SETS)
    t = c.table.set_index("method")
    assert list(t.index) == ["sv", "midpoint", "bogus"]
    assert t.status.to_dict() == {"sv": "failed", "midpoint": "ok",
                                  "bogus": "invalid"}
    # what the README's compare example reports: sv blows up at t = 3.3
    assert t.failure_time["sv"] == pytest.approx(3.3, rel=1e-12)
    assert "unknown method 'bogus'" in t.message["bogus"]
    assert isinstance(c.errors["bogus"], ricochet.ScenarioError)
    assert isinstance(c.errors["sv"], ricochet.RunError)
    assert math.isnan(t.max_rel_energy_error["bogus"])
    # each method ran as a single run of that method
    one = ricochet.run(path, set={**SETS, "integrator.method": "midpoint"})
    assert t.max_rel_energy_error["midpoint"] == one.max_rel_energy_error
    d = c.diagnostics
    pd.testing.assert_frame_equal(
        d[d.method == "midpoint"].drop(columns="method")
        .reset_index(drop=True), one.diagnostics, check_exact=True)
    assert (tmp_path / "midpoint" / "summary.json").exists()
    assert not (tmp_path / "bogus").exists()


def test_compare_arguments(examples):
    with pytest.raises(ValueError):
        ricochet.compare(examples / "pogo_stick.yaml", [])
    with pytest.raises(ValueError):
        ricochet.compare(examples / "pogo_stick.yaml", ["gvi", "gvi"])
