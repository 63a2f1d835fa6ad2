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


def assert_table_equals_csv(df, path, formats=None):
    """An in-memory table equals the CSV file the run wrote: the same
    columns, the same rows, every value the file's.  Columns the file
    prints to 17 significant digits (or as integers, words) must be equal
    exactly; `formats` names the printf format of the columns the file
    rounds, and the table's value printed in it must read back as the
    file's value (so the table holds the unrounded number)."""
    import numpy as np
    import pandas as pd
    # round_trip: pandas' default parser may be 1 ulp off
    csv = pd.read_csv(path, float_precision="round_trip")
    assert list(df.columns) == list(csv.columns)
    assert len(df) == len(csv), (len(df), len(csv))
    for c in df.columns:
        mine, theirs = df[c], csv[c]
        if formats and c in formats:
            mine = mine.map(lambda v, f=formats[c]: float(f % v))
        if not (pd.api.types.is_numeric_dtype(mine)
                and pd.api.types.is_numeric_dtype(theirs)):
            assert list(mine) == list(theirs), c
        else:
            # NaN (an empty field) equals NaN here
            np.testing.assert_array_equal(mine.to_numpy(dtype=float),
                                          theirs.to_numpy(dtype=float),
                                          err_msg=c)
