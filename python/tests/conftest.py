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


# observables.csv's printf formats where it prints fewer than 17 digits
# (src/host/md/run_md.c); the others are %.17g or integers
OBSERVABLES_FORMATS = {
    "time": "%.10g", "temperature": "%.12g", "momentum_x": "%.6e",
    "momentum_y": "%.6e", "momentum_z": "%.6e", "pressure": "%.10g",
    "pressure_kinetic": "%.10g", "pressure_virial": "%.10g",
    "pressure_collision": "%.10g", "Z": "%.10g", "msd": "%.10g",
    "max_overlap": "%.6e",
}
# msd.csv and rdf.csv: %.10g
SERIES_FORMATS = {"time": "%.10g", "msd": "%.10g", "r": "%.10g",
                  "g": "%.10g"}


def read_csv_exact(path):
    """A CSV with every number read as the nearest double (pandas
    before 3 parses floats fast by default, up to 1 ulp off)."""
    import pandas as pd
    if int(pd.__version__.split(".")[0]) >= 3:
        return pd.read_csv(path)
    return pd.read_csv(path, float_precision="round_trip")


def assert_table_equals_csv(df, path, formats=None):
    """An in-memory table equals the CSV file the run wrote: the same
    columns, the same rows, every value the file's.  Columns the file
    prints to 17 significant digits (or as integers, words) must be equal
    exactly; `formats` names the printf format of the columns the file
    rounds, and the table's value printed in it must read back as the
    file's value (so the table holds the unrounded number)."""
    import numpy as np
    import pandas as pd
    csv = read_csv_exact(path)
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
