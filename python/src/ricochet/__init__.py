"""ricochet: structure-preserving integrators for mechanical systems of
spheres with hard contacts, from Python.

    import ricochet
    r = ricochet.run("examples/pogo_stick.yaml",
                     set={"integrator.duration": 100})
    r.summary["max_rel_energy_error"], r.diagnostics.energy

The package binds the C library (libricochet, compiled into the
extension ricochet._ricochet through cffi); see the README's "Python"
section for what is held in memory and what is read from the run's files.
"""
from ._core import (  # noqa: F401
    DIAGNOSTICS_COLUMNS, CompareResult, Error, LargeSystem, Result, RunError,
    Scenario,
    ScenarioError, System, compare, cuda_compiled, run, version,
)

__version__ = version()
