import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def examples():
    return EXAMPLES


def oscillator(method="sv", dt=0.05, duration=50.0, every=1, m=2.0, k=3.0,
               x0=1.5, p0=0.5):
    """A 1-D harmonic oscillator V = k/2 x^2 (an anchor at the origin) as a
    scenario dict."""
    return {
        "name": "oscillator",
        "dimension": 1,
        "particles": [{"mass": m, "position": [x0], "momentum": [p0]}],
        "potentials": [{"type": "anchor", "k": k, "particles": 0}],
        "integrator": {"method": method, "dt": dt, "duration": duration},
        "output": {"every": every},
    }
