"""Trajectories of large systems that the standard tools open, and read:
from them (README "Large systems": outputs, units, read:).

A 108-sphere fluid runs 30 steps with a frame every 10; the reference
state is a LargeSystem of the same scenario stepped 30 steps (the engine
run() uses, not a file).  trajectory.xyz is read with ASE (and OVITO when
the ovito module is installed), trajectory.h5md with h5py and with
MDAnalysis with unit conversion on.
"""
import gc
import pathlib

import numpy as np
import pandas as pd
import pytest

import ricochet

EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "examples" /
           "hard_sphere_fluid.yaml")
N, STEPS, EVERY_FRAME = 108, 30, 10
FRAMES = STEPS // EVERY_FRAME + 1


def _sets(fmt, **more):
    sets = {"lattice.n": N, "integrator.duration": STEPS * 0.01,
            "integrator.dt": 0.01, "output.every": 5,
            "output.equilibrate": 0, "output.trajectory": fmt,
            "output.trajectory_every": EVERY_FRAME}
    sets.update(more)
    return sets


@pytest.fixture(scope="module")
def reference():
    """The state after STEPS steps, from memory."""
    scn = ricochet.Scenario(EXAMPLE, set=_sets("none"))
    return ricochet.LargeSystem(scn, threads=1).step(STEPS)


def _run(examples, out, fmt, **more):
    return ricochet.run(examples / EXAMPLE.name, out=out, threads=1,
                        set=_sets(fmt, **more))


def _h5md_run(examples, out, **more):
    try:
        return _run(examples, out, "h5md", **more)
    except ricochet.ScenarioError as e:
        if "no HDF5" in str(e):
            pytest.skip("this build of ricochet has no HDF5: %s" % e)
        raise


def test_extxyz_with_ase(examples, tmp_path, reference):
    ase_io = pytest.importorskip("ase.io")
    _run(examples, tmp_path, "xyz")
    frames = ase_io.read(tmp_path / "trajectory.xyz", index=":")
    assert len(frames) == FRAMES
    a = frames[-1]
    # %.17g in the file: ASE parses the very doubles of the state
    np.testing.assert_array_equal(a.get_positions(), reference.positions)
    np.testing.assert_array_equal(a.cell.lengths(), reference.box)
    assert a.cell.orthorhombic and a.pbc.all()
    # the species is X (not an element) and the masses come from their
    # column, not from a periodic table
    assert set(a.get_chemical_symbols()) == {"X"}
    np.testing.assert_array_equal(a.get_masses(), reference.masses)
    # ASE's velocities are momenta / masses: the reduced velocities
    np.testing.assert_array_equal(a.get_momenta(), reference.momenta)
    np.testing.assert_array_equal(a.get_velocities(), reference.velocities)
    np.testing.assert_array_equal(a.arrays["radius"], reference.radii)
    assert a.info["step"] == STEPS
    assert a.info["time"] == pytest.approx(reference.time, rel=1e-15)


def test_extxyz_species_name(examples, tmp_path):
    ase_io = pytest.importorskip("ase.io")
    _run(examples, tmp_path, "xyz", **{"output.species": "Ar"})
    a = ase_io.read(tmp_path / "trajectory.xyz", index=0)
    assert set(a.get_chemical_symbols()) == {"Ar"}
    # the masses column still wins over argon's 39.9
    assert (a.get_masses() == 1.0).all()


def test_extxyz_with_ovito(examples, tmp_path, reference):
    try:
        from ovito.io import import_file
    except ImportError as e:  # optional: tests/test_python.sh best effort
        pytest.skip("the ovito module is not installed (%s)" % e)
    _run(examples, tmp_path, "xyz")
    pipe = import_file(str(tmp_path / "trajectory.xyz"))
    assert pipe.source.num_frames == FRAMES
    data = pipe.compute(FRAMES - 1)
    # OVITO's number parser is not correctly rounded: within 2 ulp of the
    # 17-digit value (ASE's, above, gives the very doubles)
    np.testing.assert_allclose(np.asarray(data.particles.positions),
                               reference.positions, rtol=5e-16, atol=0)
    np.testing.assert_allclose(np.asarray(data.particles["Radius"]),
                               reference.radii, rtol=5e-16, atol=0)
    np.testing.assert_allclose(np.diag(np.asarray(data.cell)[:, :3]),
                               reference.box, rtol=5e-16, atol=0)
    assert data.cell.pbc == (True, True, True)


def test_h5md_with_h5py(examples, tmp_path, reference):
    h5py = pytest.importorskip("h5py")
    _h5md_run(examples, tmp_path)
    obs_csv = pd.read_csv(tmp_path / "observables.csv")
    with h5py.File(tmp_path / "trajectory.h5md", "r") as f:
        assert list(f["h5md"].attrs["version"]) == [1, 1]
        g = f["particles/all"]
        pos = g["position/value"]
        assert pos.shape == (FRAMES, N, 3)
        np.testing.assert_array_equal(pos[-1], reference.positions)
        # velocity = p / m written by the engine; m = 1 here, exact
        np.testing.assert_array_equal(g["velocity/value"][-1],
                                      reference.velocities)
        np.testing.assert_array_equal(g["box/edges/value"][-1], reference.box)
        assert list(g["box"].attrs["boundary"]) == ["periodic"] * 3
        np.testing.assert_array_equal(g["image/value"][-1], reference.images)
        np.testing.assert_array_equal(g["mass"][()], reference.masses)
        np.testing.assert_array_equal(g["radius"][()], reference.radii)
        assert (g["species"][()] == 0).all()
        assert list(g["species"].attrs["names"]) == ["X"]
        np.testing.assert_array_equal(g["id"][()], np.arange(N))
        assert list(g["position/step"][()]) == list(range(0, STEPS + 1,
                                                          EVERY_FRAME))
        # the default labels of the reduced numbers (README: units)
        assert g["position/value"].attrs["unit"] == "Angstrom"
        assert g["velocity/value"].attrs["unit"] == "Angstrom ps-1"
        assert g["position/time"].attrs["unit"] == "ps"
        # observables: one row per frame, the observables.csv row at the
        # frame's step (every frame step is a row step here)
        o = f["observables"]
        steps = o["temperature/step"][()]
        assert list(steps) == list(g["position/step"][()])
        rows = obs_csv.set_index("step").loc[steps]
        # energies are written %.17g in the CSV: the same doubles
        np.testing.assert_array_equal(o["kinetic_energy/value"][()],
                                      rows.kinetic_energy)
        np.testing.assert_array_equal(o["collisions/value"][()],
                                      rows.collisions)
        # temperature, pressure and Z carry 10-12 digits in the CSV
        for name, col in (("temperature", "temperature"),
                          ("pressure", "pressure"),
                          ("compressibility_factor", "Z")):
            np.testing.assert_allclose(o[name + "/value"][()], rows[col],
                                       rtol=1e-9)


def test_h5md_with_mdanalysis(examples, tmp_path, reference):
    mda = pytest.importorskip("MDAnalysis")
    _h5md_run(examples, tmp_path)
    u = mda.Universe.empty(N, trajectory=False)
    u.load_new(str(tmp_path / "trajectory.h5md"), format="H5MD",
               convert_units=True)
    assert len(u.trajectory) == FRAMES
    assert u.trajectory.units["length"] == "Angstrom"
    assert u.trajectory.units["time"] == "ps"
    ts = u.trajectory[-1]
    # MDAnalysis keeps float32: 2^-24 relative of coordinates below 6
    np.testing.assert_allclose(ts.positions, reference.positions, rtol=0,
                               atol=1e-6)
    np.testing.assert_allclose(ts.velocities, reference.velocities, rtol=0,
                               atol=1e-6)
    np.testing.assert_allclose(ts.dimensions[:3], reference.box, rtol=1e-7)
    np.testing.assert_array_equal(ts.dimensions[3:], [90, 90, 90])
    assert ts.time == pytest.approx(reference.time, rel=1e-12)
    assert ts.data["step"] == STEPS
    assert ts.data["temperature"] == pytest.approx(
        reference.observe()["temperature"], rel=1e-12)


def test_h5md_units_option(examples, tmp_path, reference):
    """output.units names what one reduced unit is: MDAnalysis then
    converts (nm to Angstrom: x 10)."""
    mda = pytest.importorskip("MDAnalysis")
    _h5md_run(examples, tmp_path,
              **{"output.units": {"length": "nm", "time": "ps"}})
    u = mda.Universe.empty(N, trajectory=False)
    u.load_new(str(tmp_path / "trajectory.h5md"), format="H5MD",
               convert_units=True)
    ts = u.trajectory[-1]
    # float32 after the x 10 conversion: 2^-24 relative of up to 60
    np.testing.assert_allclose(ts.positions, 10 * reference.positions,
                               rtol=0, atol=1e-5)
    np.testing.assert_allclose(ts.dimensions[:3], 10 * reference.box,
                               rtol=1e-7)


def test_h5md_without_units(examples, tmp_path):
    h5py = pytest.importorskip("h5py")
    _h5md_run(examples, tmp_path, **{"output.units": "none"})
    with h5py.File(tmp_path / "trajectory.h5md", "r") as f:
        assert "unit" not in f["particles/all/position/value"].attrs


@pytest.mark.parametrize("fmt", ["xyz", "h5md"])
def test_read_last_frame(examples, tmp_path, reference, fmt):
    """Equilibrate, then produce: the second run starts from the first's
    last frame, velocities included, bit for bit."""
    if fmt == "h5md":
        _h5md_run(examples, tmp_path / "run1")
    else:
        _run(examples, tmp_path / "run1", "xyz")
    traj = tmp_path / "run1" / ("trajectory." + fmt)
    scn2 = {
        "name": "produce", "dimension": 3, "box": {"periodic": True},
        "read": {"file": str(traj), "frame": -1},
        "integrator": {"method": "gvi", "dt": 0.01, "duration": 0.1},
        "output": {"every": 5},
    }
    ls = ricochet.LargeSystem(scn2, threads=1)
    np.testing.assert_array_equal(ls.positions, reference.positions)
    np.testing.assert_array_equal(ls.momenta, reference.momenta)
    np.testing.assert_array_equal(ls.box, reference.box)
    r = ricochet.run(scn2, out=tmp_path / "run2", threads=1)
    init = r.summary["initial_state"]
    assert init["velocities"] == "from the file"
    assert init["frame"] == FRAMES - 1 and init["format"] == fmt
    # and the continuation: its first row is the reference's state
    assert r.observables.kinetic_energy[0] == pytest.approx(
        reference.observe()["kinetic_energy"], rel=1e-15)
    # a frame that is not there
    scn2["read"]["frame"] = -FRAMES - 1
    with pytest.raises(ricochet.ScenarioError) as info:
        ricochet.Scenario(scn2)
    assert info.value.field == "read.file"
    assert "does not exist" in str(info.value)


def test_read_h5md_written_by_mdanalysis(examples, tmp_path, reference):
    """read: takes another writer's H5MD (MDAnalysis: group `trajectory`,
    float32, the box as a 3 x 3 matrix per frame, no radius or mass)."""
    mda = pytest.importorskip("MDAnalysis")
    _h5md_run(examples, tmp_path / "run1")
    u = mda.Universe.empty(N, trajectory=False)
    u.load_new(str(tmp_path / "run1" / "trajectory.h5md"), format="H5MD",
               convert_units=True)
    other = tmp_path / "mda.h5md"
    w = mda.Writer(str(other), n_atoms=N, positions=True, velocities=True)
    for _ in u.trajectory:
        w.write(u)
    # its writer has no close() for the file: dropped here, so that HDF5's
    # lock on a file open for writing is released before read: opens it
    del w
    gc.collect()
    scn = {
        "name": "from_mda", "dimension": 3, "box": {"periodic": True},
        "read": {"file": str(other), "frame": -1},
        "integrator": {"method": "gvi", "dt": 0.01, "duration": 0.1},
    }
    ls = ricochet.LargeSystem(scn, threads=1)
    # the float32 values MDAnalysis stored, widened exactly
    f32 = np.float32
    np.testing.assert_array_equal(ls.positions,
                                  reference.positions.astype(f32))
    np.testing.assert_array_equal(ls.velocities,
                                  reference.velocities.astype(f32))
    np.testing.assert_array_equal(ls.box, reference.box.astype(f32))
    # no radius or mass in the file: read's defaults
    assert (ls.radii == 0.5).all() and (ls.masses == 1).all()
