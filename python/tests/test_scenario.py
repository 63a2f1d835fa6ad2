"""Scenarios from a dict, a YAML string and a file; overrides; errors."""
import numpy as np
import pytest

import ricochet
from conftest import oscillator

BAD_MASS = """\
dimension: 1
particles:
  - {mass: 0, position: [1]}
integrator: {dt: 0.1, duration: 1}
"""


def test_version():
    assert ricochet.__version__.count(".") == 2
    assert ricochet.version() == ricochet.__version__


def test_file_string_and_dict_give_the_same_scenario(examples):
    path = examples / "pogo_stick.yaml"
    from_file = ricochet.Scenario(path)
    from_text = ricochet.Scenario.from_yaml(path.read_text())
    from_dict = ricochet.Scenario(from_file.to_dict())
    assert from_file.path == str(path)
    assert from_text.path == "<string>"
    assert from_dict.path == "<dict>"
    canon = from_file.to_dict()
    assert from_text.to_dict() == canon
    assert from_dict.to_dict() == canon
    assert from_file.name == "pogo_stick"
    assert from_file.method == "gvi"
    assert from_file.steps == round(20000 / 0.1)
    # a str naming a file is that file, and so is a str path
    assert ricochet.Scenario(str(path)).to_dict() == canon


def test_overrides_as_dict_and_as_strings(examples):
    path = examples / "pogo_stick.yaml"
    a = ricochet.Scenario(path, set={"integrator.dt": 0.05,
                                     "particles[1].position": [2],
                                     "integrator.method": "cva"})
    b = ricochet.Scenario(path, set=["integrator.dt=0.05",
                                     "particles[1].position=[2]",
                                     "integrator.method=cva"])
    assert a.to_dict() == b.to_dict()
    d = a.to_dict()
    assert d["integrator"]["dt"] == 0.05
    assert d["particles"][1]["position"] == [2]
    assert a.method == "cva"
    # with_set adds to the overrides already given
    c = a.with_set({"integrator.duration": 10})
    assert c.dt == 0.05 and c.duration == 10 and c.steps == 200


def test_numpy_values_in_a_dict():
    s = oscillator()
    s["particles"][0]["position"] = np.array([1.25])
    s["integrator"]["dt"] = np.float64(0.01)
    scn = ricochet.Scenario(s)
    assert scn.to_dict()["particles"][0]["position"] == [1.25]
    assert scn.dt == 0.01


def test_error_in_yaml_text_names_line_column_and_field():
    with pytest.raises(ricochet.ScenarioError) as info:
        ricochet.Scenario(BAD_MASS)
    e = info.value
    line = BAD_MASS.splitlines()[2]
    assert e.file == "<string>"
    assert e.line == 3
    # the column of the value 0 (1-based)
    assert e.column == line.index("mass: 0") + len("mass: ") + 1
    assert e.field == "particles[0].mass"
    assert "positive" in e.message
    assert e.status == "RC_ERR_PARSE"
    assert isinstance(e, ValueError)
    assert str(e).startswith("<string>:3:%d: particles[0].mass: " % e.column)


def test_error_in_a_file(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD_MASS)
    with pytest.raises(ricochet.ScenarioError) as info:
        ricochet.Scenario(f)
    assert info.value.file == str(f)
    assert (info.value.line, info.value.field) == (3, "particles[0].mass")


def test_error_in_an_override(examples):
    with pytest.raises(ricochet.ScenarioError) as info:
        ricochet.Scenario(examples / "pogo_stick.yaml",
                          set={"integrator.dt": "fast"})
    e = info.value
    assert e.file == "--set"
    assert e.field == "integrator.dt"
    assert "expected a number" in e.message


def test_error_in_a_dict_names_the_unknown_key():
    s = oscillator()
    s["integrator"]["dtt"] = 0.1
    with pytest.raises(ricochet.ScenarioError) as info:
        ricochet.Scenario(s)
    assert info.value.file == "<dict>"
    assert info.value.field == "integrator.dtt"


def test_check_refuses_a_violated_constraint():
    s = oscillator()
    s["particles"][0]["position"] = [-1.0]
    s["integrator"]["method"] = "gvi"
    s["constraints"] = [{"type": "wall", "normal": [1], "offset": 0,
                         "particles": 0}]
    scn = ricochet.Scenario(s)    # loads: the state is checked when built
    with pytest.raises(ricochet.ScenarioError) as info:
        scn.check()
    assert info.value.field.startswith("constraints[0]")
    # and run() refuses it the same way, before running
    with pytest.raises(ricochet.ScenarioError) as info:
        ricochet.run(scn)
    assert info.value.field.startswith("constraints[0]")


def test_kinds(examples):
    assert ricochet.Scenario(examples / "hard_sphere_fluid.yaml").is_large_system
    ens = ricochet.Scenario(examples / "pogo_ensemble.yaml")
    assert ens.is_ensemble and ens.members == 100000
    assert not ricochet.Scenario(oscillator()).is_ensemble


def test_type_errors():
    with pytest.raises(TypeError):
        ricochet.Scenario(42)
    with pytest.raises(TypeError):
        ricochet.Scenario({"dimension": 1, "x": object()})
