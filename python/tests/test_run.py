"""ricochet.run on single systems: diagnostics in memory against the CSV
the same run writes and against the oscillator's exact invariants."""
import json
import os
import tempfile

import numpy as np
import pandas as pd
import pytest

import ricochet
from conftest import oscillator


def test_diagnostics_in_memory_equal_the_csv(examples, tmp_path):
    r = ricochet.run(examples / "pogo_stick.yaml", out=tmp_path,
                     set={"integrator.duration": 200})
    assert r.out == str(tmp_path)
    csv = pd.read_csv(tmp_path / "diagnostics.csv")
    mem = r.diagnostics
    assert list(csv.columns) == ricochet.DIAGNOSTICS_COLUMNS
    assert list(mem.columns[:len(csv.columns)]) == list(csv.columns)
    assert len(mem) == len(csv) == 2000 // 10 + 1
    # %.17g in the CSV round-trips every double: equal, bit for bit
    # (min_gap is inf in both when there is no contact)
    pd.testing.assert_frame_equal(mem[csv.columns], csv, check_exact=True,
                                  check_dtype=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert r.summary == summary
    assert r.status == "ok" and r.steps == 2000
    assert r.max_rel_energy_error == summary["max_rel_energy_error"]
    assert r.backend == "cpu"
    # reflections_total: the running count of reflection passes
    assert (np.diff(mem.reflections_total) >= 0).all()


def test_temporary_output_directory_is_removed(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    r = ricochet.run(oscillator(duration=1))
    assert r.out is None
    assert os.listdir(tmp_path) == []
    assert r.summary["steps"] == 20


def test_harmonic_oscillator_energy():
    m, k, x0, p0, h = 2.0, 3.0, 1.5, 0.5, 0.05
    r = ricochet.run(oscillator(dt=h, m=m, k=k, x0=x0, p0=p0))
    d = r.diagnostics
    assert len(d) == 1001
    h0 = k * x0 ** 2 / 2 + p0 ** 2 / (2 * m)
    # the first row is the initial state: its energy to round-off
    assert d.energy[0] == pytest.approx(h0, rel=1e-15)
    assert d.kinetic[0] == pytest.approx(p0 ** 2 / (2 * m), rel=1e-15)
    # Stoermer-Verlet on x'' = -w^2 x conserves exactly
    # I = p^2/2m + (k/2)(1 - h^2 w^2/4) x^2 (a quadratic invariant of the
    # linear map): constant to round-off (1e-13 relative: 1000 steps of a
    # few ulps each), while H itself moves by O(h^2 w^2) H
    w2 = k / m
    inv = d.kinetic + d.potential * (1 - h * h * w2 / 4)
    assert (inv.max() - inv.min()) / h0 < 1e-13
    spread = (d.energy.max() - d.energy.min()) / h0
    assert 1e-4 < spread < h * h * w2 / 4 * 1.01  # bounded by the V term
    assert r.max_rel_energy_error == pytest.approx(
        (d.energy - h0).abs().max() / h0, rel=1e-12)
    # a free particle in 1-D: momentum components lx.. are zero
    assert (d.py == 0).all() and (d.pz == 0).all()


def test_results_do_not_depend_on_threads(examples):
    s = examples / "newtons_cradle.yaml"
    a = ricochet.run(s, threads=1).diagnostics
    b = ricochet.run(s, threads=2).diagnostics
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_reference_backend(examples):
    r = ricochet.run(examples / "bouncing_ball.yaml", backend="reference")
    assert r.backend == "reference"
    with pytest.raises(ValueError):
        ricochet.run(examples / "bouncing_ball.yaml", backend="gpu")


def test_run_error_keeps_the_rows_before_the_failure(examples):
    with pytest.raises(ricochet.RunError) as info:
        ricochet.run(examples / "nonlinear_oscillator.yaml",
                     set={"integrator.method": "sv", "integrator.dt": 0.3,
                          "integrator.duration": 200})
    e = info.value
    assert isinstance(e, RuntimeError)
    assert e.status == "RC_ERR_NONFINITE"
    assert "non-finite" in e.message
    assert e.run_status == "failed"
    assert e.out is None
    # rows every output.every steps up to the failure at step 11 (t = 3.3)
    assert e.summary["status"] == "failed"
    assert e.summary["failure_time"] == pytest.approx(3.3, rel=1e-12)
    steps = list(e.diagnostics.step)
    assert steps == sorted(steps) and steps[-1] <= 11
    # the initial row is finite; the row of the blown-up state is not
    assert np.isfinite(e.diagnostics.energy.iloc[0])
    assert not np.isfinite(e.diagnostics.energy.iloc[-1])


def test_run_error_in_a_given_directory_leaves_partial_files(examples,
                                                             tmp_path):
    with pytest.raises(ricochet.RunError) as info:
        ricochet.run(examples / "nonlinear_oscillator.yaml", out=tmp_path,
                     set={"integrator.method": "sv", "integrator.dt": 0.3,
                          "integrator.duration": 200})
    assert info.value.out == str(tmp_path)
    assert (tmp_path / "diagnostics.csv.partial").exists()
    assert not (tmp_path / "summary.json").exists()


def test_progress_callback_stops_the_run():
    calls = []

    def progress(step, total, elapsed):
        calls.append((step, total))
        return True   # stop at the first report

    # long enough that a progress report comes before the end (reports
    # are about 0.1 s apart; rows are not kept: every = steps)
    s = oscillator(dt=1e-4, duration=1e4, every=10 ** 8)
    with pytest.raises(ricochet.RunError) as info:
        ricochet.run(s, progress=progress)
    assert info.value.run_status == "interrupted"
    assert len(calls) == 1 and calls[0][1] == 10 ** 8


def test_progress_callback_exception_is_raised():
    class Stop(Exception):
        pass

    def progress(step, total, elapsed):
        raise Stop()

    s = oscillator(dt=1e-4, duration=1e4, every=10 ** 8)
    with pytest.raises(Stop):
        ricochet.run(s, progress=progress)



CTRL_C_CHILD = """
import signal, sys, ricochet
signal.signal(signal.SIGINT, signal.default_int_handler)
s = {"dimension": 1, "particles": [{"mass": 1, "position": [1]}],
     "potentials": [{"type": "anchor", "k": 1, "particles": 0}],
     "integrator": {"method": "sv", "dt": 1e-4, "duration": 1e6},
     "output": {"every": 10 ** 10}}
try:
    print("running", flush=True)
    ricochet.run(s)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(3)
"""


def test_ctrl_c_raises_keyboard_interrupt():
    """SIGINT during a run: the run stops at its next progress report and
    run() raises KeyboardInterrupt (10^10 steps would take hours)."""
    import signal
    import subprocess
    import sys
    child = subprocess.Popen([sys.executable, "-c", CTRL_C_CHILD],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "running"
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=300)   # a hang fails, not waits
    finally:
        child.kill()
    assert child.returncode == 3
    assert "KeyboardInterrupt" in out


def test_interrupt_in_a_row_callback_stops_the_run(monkeypatch):
    """Ctrl-C can land while the library is in a row callback (under load
    CI saw it at the first row, before any progress report): the row
    callback cannot stop the run itself, so the next progress report does,
    and run() raises.  Made deterministic here by a row callback that
    raises KeyboardInterrupt at its first row; before the fix the
    exception was printed as ignored and the run went on to its end."""
    from ricochet import _core
    calls = []

    def interrupted(d):
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(_core, "_row_tuple", interrupted)
    # 2*10^8 steps, some seconds: long enough that the stop comes from a
    # progress report, short enough that without it the test fails (no
    # raise) rather than hangs
    s = {"dimension": 1, "particles": [{"mass": 1, "position": [1]}],
         "potentials": [{"type": "anchor", "k": 1, "particles": 0}],
         "integrator": {"method": "sv", "dt": 1e-4, "duration": 2e4},
         "output": {"every": 10 ** 10}}
    with pytest.raises(KeyboardInterrupt):
        ricochet.run(s)
    assert calls   # the first row was interrupted (the stop adds a last one)
