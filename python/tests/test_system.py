"""System: a small scenario stepped in memory."""
import numpy as np
import pytest

import ricochet
from conftest import oscillator


def test_oscillator_against_the_exact_solution():
    m, k, x0, p0, h = 2.0, 3.0, 1.5, 0.0, 0.01
    s = ricochet.Scenario(oscillator(dt=h, m=m, k=k, x0=x0, p0=p0,
                                     duration=10))
    sys_ = s.build()
    assert (sys_.count, sys_.dimension) == (1, 1)
    assert sys_.masses.tolist() == [m]
    sys_.step(1000)
    assert sys_.steps_taken == 1000
    assert sys_.time == pytest.approx(10.0, rel=1e-14)
    # Stoermer-Verlet on x'' = -w^2 x is a linear map: started at rest,
    # x_n = x0 cos(n theta) with sin(theta/2) = w h / 2, exactly
    # (round-off: 1e-12 of x0 after 1000 steps of a few ulps)
    w2 = k / m
    theta = 2 * np.arcsin(np.sqrt(w2) * h / 2)   # well conditioned
    assert sys_.positions[0, 0] == pytest.approx(x0 * np.cos(1000 * theta),
                                                 abs=1e-12 * x0)
    # and it keeps p^2/2m + (k/2)(1 - (w h)^2/4) x^2 (same round-off)
    x, p = sys_.positions[0, 0], sys_.momenta[0, 0]
    inv = p * p / (2 * m) + k / 2 * (1 - w2 * h * h / 4) * x * x
    assert inv == pytest.approx(k / 2 * (1 - w2 * h * h / 4) * x0 * x0,
                                rel=1e-12)
    assert sys_.velocities[0, 0] == p / m

def test_system_matches_run(examples):
    path = examples / "newtons_cradle.yaml"
    r = ricochet.run(path)
    sys_ = ricochet.Scenario(path).build()
    sys_.step(r.steps)
    last = r.diagnostics.iloc[-1]
    d = sys_.diagnostics()
    for c in ("energy", "kinetic", "potential", "px", "lz", "min_gap"):
        assert d[c] == last[c], c


def test_set_state_and_potential():
    s = ricochet.Scenario(oscillator(k=3.0)).build()
    s.set_state(positions=[[2.0]], momenta=[[0.0]])
    assert s.potential() == pytest.approx(3.0 * 2.0 ** 2 / 2, rel=1e-15)
    assert s.potential([[1.0]]) == pytest.approx(1.5, rel=1e-15)
    with pytest.raises(ValueError):
        s.set_state(positions=[[1.0, 2.0]])


def test_system_refuses_large_systems(examples):
    with pytest.raises(ValueError):
        ricochet.Scenario(examples / "hard_sphere_fluid.yaml").build()
