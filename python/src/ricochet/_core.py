"""The Python face of libricochet: scenarios, runs, ensembles, comparisons.

Everything numerical happens in the C library (through the cffi extension
ricochet._ricochet); this module converts arguments, collects results and
turns the library's errors into exceptions.
"""
import json
import os
import pathlib
import shutil
import tempfile
import threading

import numpy as np
import pandas as pd

from ._ricochet import ffi, lib

__all__ = [
    "Error", "ScenarioError", "RunError", "Scenario", "Result",
    "CompareResult", "System", "LargeSystem", "run", "compare", "version",
    "cuda_compiled",
]

# diagnostics.csv's columns (README "Outputs"), in the order of
# rc_out_diagnostics_row, then the row's running count of reflections.
DIAGNOSTICS_COLUMNS = [
    "step", "time", "energy", "modified_energy", "kinetic", "potential",
    "px", "py", "pz", "lx", "ly", "lz", "min_gap", "max_equality_error",
    "active_contacts", "reflections", "solver_iterations",
]
_INT_COLUMNS = ("step", "active_contacts", "reflections",
                "solver_iterations", "reflections_total")

_BACKENDS = {
    "cpu": lib.RC_BACKEND_CPU,
    "reference": lib.RC_BACKEND_REFERENCE,
    "cuda": lib.RC_BACKEND_CUDA,
    "auto": lib.RC_BACKEND_AUTO,
}
_ENSEMBLE_DEVICES = {
    "cpu": lib.RC_ENSEMBLE_CPU,
    "cuda": lib.RC_ENSEMBLE_CUDA,
    "auto": lib.RC_ENSEMBLE_AUTO,
}
# statuses that are the caller's input (the CLI's exit 2), as
# rc_cli_exit_code decides
_INPUT_STATUSES = (lib.RC_ERR_PARSE, lib.RC_ERR_UNSUPPORTED)


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return ffi.string(lib.rc_version()).decode()


def cuda_compiled():
    """True when this build of the library has the CUDA backend."""
    return bool(lib.rc_cuda_compiled())


# ---------------------------------------------------------------- errors

class Error(Exception):
    """Base class of ricochet's errors.

    Attributes: ``status`` (the library's symbolic status, e.g.
    ``"RC_ERR_PARSE"``), ``file``, ``line``, ``column`` (1-based; 0 when
    not tied to a place), ``field`` (the field path, e.g.
    ``"potentials[2].k"``; "" when none) and ``message``.
    """

    def __init__(self, message, *, status="", file="", line=0, column=0,
                 field=""):
        self.status = status
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message
        super().__init__(self._render())

    def _render(self):
        place = self.file
        if place and self.line:
            place += ":%d" % self.line
            if self.column:
                place += ":%d" % self.column
        parts = [p for p in (place, self.field) if p]
        return ": ".join(parts + [self.message])

    @classmethod
    def _from_c(cls, err, **extra):
        status = err.status
        obj = cls(
            ffi.string(err.message).decode(errors="replace"),
            status=ffi.string(lib.rc_status_name(status)).decode(),
            file=ffi.string(err.file).decode(errors="replace"),
            line=int(err.line), column=int(err.column),
            field=ffi.string(err.field).decode(errors="replace"))
        for k, v in extra.items():
            setattr(obj, k, v)
        return obj


class ScenarioError(Error, ValueError):
    """A scenario (or an override, or the state it starts from) that the
    library refuses: what ``ricochet run`` reports with exit 2."""


class RunError(Error, RuntimeError):
    """A run that failed at run time (a solver that did not converge, a
    state that became non-finite, an output that could not be written):
    what ``ricochet run`` reports with exit 1.

    Besides the place and message it carries ``diagnostics`` (the rows
    recorded before the failure, a DataFrame, or None; a model's with its
    named columns), ``members`` (an interrupted ensemble: the rows of the
    members that finished), ``summary`` (the
    ``summary.json.partial`` the run left, a dict, or None) and ``out``
    (the output directory when one was given, else None: the temporary
    one is removed).
    """

    members = None


def _raise_status(st, err, **extra):
    cls = ScenarioError if st in _INPUT_STATUSES else RunError
    raise cls._from_c(err, **extra)


# -------------------------------------------------------------- scenarios

def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    raise TypeError("cannot put %r (%s) into a scenario"
                    % (obj, type(obj).__name__))


def _yaml_value(value):
    """A Python value as the YAML text of a --set VALUE (JSON is YAML)."""
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, default=_json_default, allow_nan=False)


def _override_list(overrides):
    """`--set` overrides from a dict {path: value} or "PATH=VALUE" strings."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, dict):
        return ["%s=%s" % (k, _yaml_value(v)) for k, v in overrides.items()]
    out = []
    for item in overrides:
        if isinstance(item, str):
            out.append(item)
        else:
            k, v = item
            out.append("%s=%s" % (k, _yaml_value(v)))
    return out


class Scenario:
    """A loaded and checked scenario (the YAML format of the README).

    ``Scenario(source, set=None)``: ``source`` is a dict (the YAML mapping;
    dumped as JSON text, which is YAML, for the C loader), a YAML string,
    or a path (``str`` naming an existing file or ending in ``.yaml``,
    ``.yml`` or ``.json``, or a ``pathlib.Path``).  ``set`` applies
    ``--set``-style overrides before the scenario is checked: a dict
    ``{"integrator.dt": 0.05, "particles[0].position": [0, 2]}`` or a list
    of ``"PATH=VALUE"`` strings.  A refused scenario raises
    :class:`ScenarioError` with the file, line, column and field.

    ``from_dict``, ``from_yaml`` and ``from_file`` say which one is meant.
    """

    def __init__(self, source, set=None, *, label=None):
        if isinstance(source, Scenario):
            kind, payload, label0 = source._kind, source._payload, source._label
            sets = source._sets + _override_list(set)
            label = label or label0
        else:
            sets = _override_list(set)
            if isinstance(source, dict):
                kind, payload = "text", json.dumps(
                    source, default=_json_default, allow_nan=False)
                label = label or "<dict>"
            elif isinstance(source, os.PathLike):
                kind, payload = "file", os.fspath(source)
            elif isinstance(source, str):
                if _looks_like_path(source):
                    kind, payload = "file", source
                else:
                    kind, payload = "text", source
                    label = label or "<string>"
            else:
                raise TypeError("a scenario is a dict, a YAML string or a "
                                "path, not %s" % type(source).__name__)
        self._kind, self._payload, self._label = kind, payload, label
        self._sets = sets
        self._ptr = _load(kind, payload, label, sets)

    @classmethod
    def from_dict(cls, d, set=None, label="<dict>"):
        return cls(d, set, label=label)

    @classmethod
    def from_yaml(cls, text, set=None, label="<string>"):
        obj = cls.__new__(cls)
        obj._kind, obj._payload, obj._label = "text", text, label
        obj._sets = _override_list(set)
        obj._ptr = _load("text", text, label, obj._sets)
        return obj

    @classmethod
    def from_file(cls, path, set=None):
        return cls(pathlib.Path(path), set)

    def with_set(self, set):
        """A new scenario: this one with more overrides."""
        return Scenario(self, set)

    # what the library says about it
    def _info(self):
        info = ffi.new("rc_scenario_run *")
        lib.rc_scenario_run_info(self._ptr, info)
        return info

    @property
    def name(self):
        return ffi.string(self._info().name).decode()

    @property
    def method(self):
        return ffi.string(self._info().method).decode()

    @property
    def dt(self):
        return self._info().dt

    @property
    def duration(self):
        return self._info().duration

    @property
    def steps(self):
        return self._info().steps

    @property
    def every(self):
        return self._info().every

    @property
    def path(self):
        """The file it was read from, or its label ("<dict>", "<string>")."""
        return ffi.string(lib.rc_scenario_path(self._ptr)).decode()

    @property
    def is_large_system(self):
        return bool(lib.rc_scenario_is_large_system(self._ptr))

    @property
    def is_model(self):
        return bool(lib.rc_scenario_is_model(self._ptr))

    @property
    def is_ensemble(self):
        return bool(lib.rc_scenario_is_ensemble(self._ptr))

    @property
    def members(self):
        """The number of ensemble members (0 without an ensemble)."""
        return int(lib.rc_scenario_ensemble_members(self._ptr)) \
            if self.is_ensemble else 0

    def to_dict(self):
        """The canonical scenario (every default filled in), as a dict."""
        text = lib.rc_scenario_to_json(self._ptr)
        if text == ffi.NULL:
            raise MemoryError("rc_scenario_to_json")
        try:
            return json.loads(ffi.string(text).decode())
        finally:
            lib.free(text)

    def check(self):
        """What a run would refuse at its start (ScenarioError), without
        running: ``ricochet validate``."""
        err = ffi.new("rc_error *")
        if self.is_large_system or self.is_model:
            st = lib.rc_scenario_check(self._ptr, err)
        else:
            sysp = ffi.new("rc_system **")
            st = lib.rc_scenario_build(self._ptr, sysp, err)
            if sysp[0] != ffi.NULL:
                lib.rc_system_free(sysp[0])
        if st != lib.RC_OK:
            raise ScenarioError._from_c(err)
        return self

    def build(self, threads=None):
        """The scenario's small system, in memory: a :class:`System`."""
        return System(self, threads=threads)

    def __repr__(self):
        return "ricochet.Scenario(%r: %s, %s, %d steps of dt %g)" % (
            self.path, self.name, self.method, self.steps, self.dt)


def _looks_like_path(s):
    if "\n" in s or "{" in s:
        return False
    return s.endswith((".yaml", ".yml", ".json")) or os.path.isfile(s)


def _load(kind, payload, label, sets):
    keep = [ffi.new("char[]", s.encode()) for s in sets]
    arr = ffi.new("const char *[]", keep) if keep else ffi.NULL
    out = ffi.new("rc_scenario **")
    err = ffi.new("rc_error *")
    if kind == "file":
        st = lib.rc_scenario_load(payload.encode(), arr, len(keep), out, err)
    else:
        st = lib.rc_scenario_load_string(payload.encode(), label.encode(),
                                         arr, len(keep), out, err)
    if st != lib.RC_OK:
        if st == lib.RC_ERR_NOMEM:
            raise MemoryError(ffi.string(err.message).decode())
        raise ScenarioError._from_c(err)
    return ffi.gc(out[0], lib.rc_scenario_free)


def _as_scenario(scenario, set=None):
    if isinstance(scenario, Scenario):
        return scenario.with_set(set) if set else scenario
    return Scenario(scenario, set)


# -------------------------------------------------------------- callbacks

class _Sink:
    """What the C callbacks of one run write into (handle: row_ctx)."""

    def __init__(self, progress=None):
        self.rows = []
        self.tables = {}
        self.progress = progress
        self.exception = None

    def frame(self, name):
        """Table `name` as a DataFrame, or None when the run did not
        announce it."""
        t = self.tables.get(name)
        return None if t is None else t.frame()


class _Table:
    """One table of a run (run.h: rc_table), collected block by block
    through rc_table_fn."""

    def __init__(self, t):
        n = t.ncols
        self.columns = [ffi.string(t.columns[c]).decode() for c in range(n)]
        self.kinds = [int(t.kinds[c]) for c in range(n)]
        self.words = {}
        for c in range(n):
            if self.kinds[c] == lib.RC_COLUMN_WORD:
                w, words = t.words[c], []
                while w[len(words)] != ffi.NULL:
                    words.append(ffi.string(w[len(words)]).decode())
                self.words[c] = words
        self.blocks = []

    def add(self, nrows, values):
        n = len(self.columns)
        # a copy: the values are borrowed for the call only
        self.blocks.append(np.frombuffer(
            ffi.buffer(values, 8 * nrows * n), dtype=np.float64)
            .reshape(nrows, n).copy())

    def frame(self):
        n = len(self.columns)
        a = np.concatenate(self.blocks) if self.blocks else np.empty((0, n))
        cols = {}
        for c in range(n):
            col = a[:, c]
            if self.kinds[c] == lib.RC_COLUMN_INTEGER:
                col = col.astype(np.int64)
            elif self.kinds[c] == lib.RC_COLUMN_WORD:
                # (pandas infers the dtype read_csv gives words)
                col = pd.Series(np.array(self.words[c], dtype=object)
                                [col.astype(np.intp)])
            cols[c] = col
        df = pd.DataFrame(cols, columns=range(n))
        df.columns = self.columns
        return df


def _row_tuple(d):
    """One rc_diagnostics as a tuple in DIAGNOSTICS_COLUMNS' order, then
    reflections_total."""
    return (
        d.step, d.time, d.energy, d.modified_energy, d.kinetic, d.potential,
        d.momentum[0], d.momentum[1], d.momentum[2],
        d.angular_momentum[0], d.angular_momentum[1],
        d.angular_momentum[2], d.min_gap, d.max_equality_error,
        d.active_contacts, d.reflections, d.solver_iterations,
        d.reflections_total)


# An exception that escapes a callback's own handler (Ctrl-C's
# KeyboardInterrupt can arrive at any bytecode, e.g. before its `try`) on
# the thread that called the library: kept here for run() to raise.
_escaped = threading.local()


def _callback_error(exc, value, tb):
    # an exception before a row or table callback's own handler (Ctrl-C);
    # those return nothing, so the next progress report stops the run
    _escaped.exception = value


@ffi.def_extern(onerror=_callback_error)
def rc_py_on_row(ctx, d):
    sink = ffi.from_handle(ctx)
    try:
        sink.rows.append(_row_tuple(d))
    except BaseException as e:  # re-raised by run(); the next progress
        if sink.exception is None:  # report stops the run
            sink.exception = e


def _progress_error(exc, value, tb):
    _escaped.exception = value
    return 1   # stop the run


@ffi.def_extern(onerror=_progress_error)
def rc_py_progress(ctx, step, total, elapsed):
    sink = ffi.from_handle(ctx)
    # a row or table callback (which cannot stop the run: they return
    # nothing) was interrupted, e.g. by Ctrl-C at the first row: stop now
    if sink.exception is not None or \
            getattr(_escaped, "exception", None) is not None:
        return 1
    try:
        if sink.progress is not None and sink.progress(step, total, elapsed):
            return 1
    except BaseException as e:  # re-raised by run()
        sink.exception = e
        return 1
    return 0


@ffi.def_extern(onerror=_callback_error)
def rc_py_on_table(ctx, table, nrows, values):
    sink = ffi.from_handle(ctx)
    try:
        name = ffi.string(table.name).decode()
        t = sink.tables.get(name)
        if t is None:   # the first call announces the table
            t = sink.tables[name] = _Table(table)
        if nrows > 0:
            t.add(nrows, values)
    except BaseException as e:  # re-raised by run() when the run returns
        if sink.exception is None:
            sink.exception = e


def _raise_callback_exception(sink):
    """Raise what stopped a run from inside a callback (the caller's
    progress function, or Ctrl-C), if anything did."""
    exc = sink.exception or getattr(_escaped, "exception", None)
    _escaped.exception = None
    if exc is not None:
        raise exc


def _rows_frame(rows):
    df = pd.DataFrame.from_records(
        rows, columns=DIAGNOSTICS_COLUMNS + ["reflections_total"])
    for c in _INT_COLUMNS:
        df[c] = df[c].astype("int64")
    return df


# ----------------------------------------------------------------- results

def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


class Result:
    """What :func:`run` returns.

    - ``kind``: ``"particles"``, ``"model"``, ``"large_system"`` or
      ``"ensemble"``;
    - ``summary``: ``summary.json`` (``ensemble.json`` for an ensemble) as
      a dict;
    - ``diagnostics``: a DataFrame with the columns of ``diagnostics.csv``
      (plus ``reflections_total``), collected in memory row by row as the
      run produces them (particle systems); for a model, the model's
      ``diagnostics.csv`` table (coordinates and momenta by name);
    - ``observables``, ``rdf``, ``msd``: DataFrames of a large system
      (the tables of ``observables.csv``, ``rdf.csv``, ``msd.csv``, at
      full precision where the files round);
    - ``members``: one row per ensemble member (``members.csv``'s
      table); ``traces``: {member: DataFrame} of ``output.trace_members``
      (read from ``traces/``);
    Every table comes from the library in memory (``rc_run_options.
    on_table``), not from the files; ``summary`` and ``traces`` are read
    from the run's files.
    - ``out``: the output directory, or None when it was temporary;
    - ``status``, ``steps``, ``wall_seconds``, ``backend`` and the energy
      statistics of the C result (particle systems and models).
    """

    def __init__(self, kind, scenario, out):
        self.kind = kind
        self.scenario = scenario
        self.out = out
        self.summary = None
        self.diagnostics = None
        self.observables = None
        self.rdf = None
        self.msd = None
        self.members = None
        self.traces = {}

    def __getitem__(self, key):
        return self.summary[key]

    def __repr__(self):
        return "ricochet.Result(%s, %s, out=%r)" % (
            self.kind, self.scenario.name, self.out)


def _run_result_fields(res, r):
    r.status = ffi.string(res.status).decode()
    r.steps = int(res.steps)
    r.wall_seconds = float(res.wall_seconds)
    r.energy_initial = float(res.energy_initial)
    r.max_rel_energy_error = float(res.max_rel_energy_error)
    r.final_rel_energy_error = float(res.final_rel_energy_error)
    r.energy_drift_per_time = float(res.energy_drift_per_time)
    r.max_momentum_error = float(res.max_momentum_error)
    r.max_angular_momentum_error = float(res.max_angular_momentum_error)
    r.windowed_drift = float(res.windowed_drift)
    r.failure_time = float(res.failure_time)
    r.backend = ffi.string(lib.rc_backend_name(res.backend)).decode()


class _OutDir:
    """The output directory: the caller's, or a temporary one removed
    when the run's files have been read."""

    def __init__(self, out):
        self.temporary = out is None
        self.path = tempfile.mkdtemp(prefix="ricochet-") if out is None \
            else os.fspath(out)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.temporary:
            shutil.rmtree(self.path, ignore_errors=True)
        return False

    @property
    def reported(self):
        return None if self.temporary else self.path


def run(scenario, out=None, threads=None, backend="cpu", *, set=None,
        progress=None, batch=None, per_member=False):
    """Run a scenario as ``ricochet run`` does and return a :class:`Result`.

    ``scenario`` is a :class:`Scenario`, or anything :class:`Scenario`
    takes (with ``set`` overrides).  ``out``: the output directory (created
    if missing; the run's files stay there); None runs in a temporary
    directory that is removed before this returns.  ``threads``: CPU
    threads (None: OpenMP's default).  ``backend``: ``"cpu"``,
    ``"reference"``, ``"cuda"`` or ``"auto"`` (ensembles: ``"cpu"``,
    ``"cuda"``, ``"auto"``).  ``progress(step, total, elapsed)`` is called
    about ten times a second (members done and the member count for an
    ensemble); a true return value stops the run, which then raises
    :class:`RunError` with status ``interrupted``.  ``batch`` and
    ``per_member``: the ensemble options of the CLI.

    Raises :class:`ScenarioError` for input the library refuses and
    :class:`RunError` when the run fails; Ctrl-C stops the run at the next
    progress report and raises KeyboardInterrupt.
    """
    scn = _as_scenario(scenario, set)
    if threads is not None and (int(threads) != threads or threads < 0):
        raise ValueError("threads must be a non-negative integer")
    if scn.is_ensemble:
        return _run_ensemble(scn, out, threads, backend, progress, batch,
                             per_member)
    if backend not in _BACKENDS:
        raise ValueError("unknown backend %r (cpu, cuda, reference, auto)"
                         % (backend,))
    kind = ("large_system" if scn.is_large_system
            else "model" if scn.is_model else "particles")
    sink = _Sink(progress)
    handle = ffi.new_handle(sink)
    with _OutDir(out) as od:
        opt = ffi.new("rc_run_options *")
        out_c = ffi.new("char[]", od.path.encode())
        opt.out_dir = out_c
        opt.backend = _BACKENDS[backend]
        opt.threads = int(threads or 0)
        opt.progress = lib.rc_py_progress
        opt.progress_ctx = handle
        if kind == "particles":
            # the rows with reflections_total (rc_diagnostics)
            opt.on_row = lib.rc_py_on_row
            opt.row_ctx = handle
        else:
            # a model's diagnostics.csv, a large system's observables,
            # msd and rdf: the files' tables (named columns)
            opt.on_table = lib.rc_py_on_table
            opt.table_ctx = handle
        res = ffi.new("rc_run_result *")
        err = ffi.new("rc_error *")
        _escaped.exception = None
        st = lib.rc_run(scn._ptr, opt, res, err)
        _raise_callback_exception(sink)
        if st != lib.RC_OK:
            summary = _read_json(os.path.join(od.path, "summary.json.partial"))
            diag = (_rows_frame(sink.rows) if kind == "particles"
                    else sink.frame("diagnostics"))
            _raise_status(st, err, diagnostics=diag, summary=summary,
                          out=od.reported,
                          run_status=ffi.string(res.status).decode())
        r = Result(kind, scn, od.reported)
        _run_result_fields(res, r)
        r.summary = _read_json(os.path.join(od.path, "summary.json"))
        if kind == "particles":
            r.diagnostics = _rows_frame(sink.rows)
        elif kind == "model":
            r.diagnostics = sink.frame("diagnostics")
        else:
            r.observables = sink.frame("observables")
            r.rdf = sink.frame("rdf")
            r.msd = sink.frame("msd")
    return r


def _run_ensemble(scn, out, threads, backend, progress, batch, per_member):
    if backend not in _ENSEMBLE_DEVICES:
        raise ValueError("ensembles run on the cpu or cuda backend (or "
                         "auto; got %r)" % (backend,))
    sink = _Sink(progress)
    handle = ffi.new_handle(sink)
    with _OutDir(out) as od:
        opt = ffi.new("rc_ensemble_options *")
        out_c = ffi.new("char[]", od.path.encode())
        opt.out_dir = out_c
        opt.threads = int(threads or 0)
        opt.progress = lib.rc_py_progress
        opt.progress_ctx = handle
        opt.batch = int(batch or 0)
        opt.per_member = 1 if per_member else 0
        opt.device = _ENSEMBLE_DEVICES[backend]
        opt.on_table = lib.rc_py_on_table
        opt.table_ctx = handle
        res = ffi.new("rc_ensemble_result *")
        err = ffi.new("rc_error *")
        _escaped.exception = None
        st = lib.rc_ensemble_run(scn._ptr, opt, res, err)
        _raise_callback_exception(sink)
        if st != lib.RC_OK:
            _raise_status(st, err, diagnostics=None,
                          members=sink.frame("members"),
                          summary=_read_json(os.path.join(
                              od.path, "ensemble.json.partial")),
                          out=od.reported,
                          run_status="interrupted" if res.interrupted
                          else "failed")
        r = Result("ensemble", scn, od.reported)
        r.status = "ok"
        r.member_count = int(res.members)
        r.ok, r.failed, r.invalid = int(res.ok), int(res.failed), \
            int(res.invalid)
        r.wall_seconds = float(res.wall_seconds)
        r.member_steps_per_second = float(res.member_steps_per_second)
        r.backend = "cuda" if res.cuda else "cpu"
        r.summary = _read_json(os.path.join(od.path, "ensemble.json"))
        r.members = sink.frame("members")
        tdir = os.path.join(od.path, "traces")
        if os.path.isdir(tdir):
            for name in sorted(os.listdir(tdir)):
                if name.startswith("member_") and name.endswith(".csv"):
                    k = int(name[len("member_"):-len(".csv")])
                    r.traces[k] = pd.read_csv(os.path.join(tdir, name))
    return r


# ---------------------------------------------------------------- compare

class CompareResult:
    """What :func:`compare` returns.

    ``table``: one row per method (``method, status, message, steps,
    max_rel_energy_error, final_rel_energy_error, windowed_drift,
    energy_drift_per_time, max_momentum_error,
    max_angular_momentum_error, failure_time, wall_seconds``; NaN where
    not run or not finite); ``results``: {method: :class:`Result`} of the
    methods that ran to the end; ``diagnostics``: every method's rows in
    one DataFrame with a ``method`` column (a failed method's rows up to
    its failure); ``errors``: {method: the exception} of the others.
    """

    def __init__(self):
        self.results = {}
        self.errors = {}
        self.table = None
        self.diagnostics = None


_TABLE_COLUMNS = [
    "steps", "max_rel_energy_error", "final_rel_energy_error",
    "windowed_drift", "energy_drift_per_time", "max_momentum_error",
    "max_angular_momentum_error", "failure_time", "wall_seconds",
]


def compare(scenario, methods, out=None, threads=None, backend="cpu", *,
            set=None):
    """Run one scenario once per method (``ricochet compare``).

    ``methods``: a list of ``integrator.method`` values, or
    ``"gvi-linearized"`` (``gvi`` with ``integrator.linearized=true``).
    Each method is a :func:`run` of the scenario with
    ``integrator.method`` overridden (into ``out/<method>`` when ``out``
    is given); a method the scenario refuses is ``invalid``, one that
    fails at run time ``failed``, and the others still run.  Returns a
    :class:`CompareResult`.  Raises ValueError for an empty list or a
    method named twice.
    """
    methods = list(methods)
    if not methods:
        raise ValueError("compare needs at least one method")
    if len(frozenset(methods)) != len(methods):
        raise ValueError("a method is named twice in %r" % (methods,))
    base = scenario
    if not isinstance(base, Scenario):
        base = Scenario(base, set)
        set = None
    cr = CompareResult()
    rows, frames = [], []
    for m in methods:
        sets = {"integrator.method": "gvi", "integrator.linearized": True} \
            if m == "gvi-linearized" else {"integrator.method": m}
        row = dict(method=m, status="ok", message="")
        sub = None if out is None else os.path.join(os.fspath(out), m)
        try:
            scn = Scenario(base, [*_override_list(set), *_override_list(sets)])
            r = run(scn, out=sub, threads=threads, backend=backend)
        except ScenarioError as e:
            row.update(status="invalid", message=str(e))
            cr.errors[m] = e
        except RunError as e:
            row.update(status="failed", message=str(e))
            cr.errors[m] = e
            s = e.summary or {}
            for c in _TABLE_COLUMNS:
                v = s.get(c)
                row[c] = float("nan") if v is None else v
            if e.diagnostics is not None:
                frames.append(e.diagnostics.assign(method=m))
        else:
            cr.results[m] = r
            for c in _TABLE_COLUMNS:
                row[c] = getattr(r, c, float("nan"))
            if r.diagnostics is not None:
                frames.append(r.diagnostics.assign(method=m))
        rows.append(row)
    cr.table = pd.DataFrame(rows, columns=["method", "status", "message"]
                            + _TABLE_COLUMNS)
    if frames:
        d = pd.concat(frames, ignore_index=True)
        cr.diagnostics = d[["method"] + [c for c in d.columns
                                         if c != "method"]]
    return cr


# ------------------------------------------------------------ small systems

class System:
    """A scenario's small system in memory (``rc_scenario_build``): step
    it, read and write its state.  Large systems (a ``box``) and models
    are not built this way (:func:`run` runs them)."""

    def __init__(self, scenario, threads=None):
        scn = _as_scenario(scenario)
        if scn.is_large_system or scn.is_model or scn.is_ensemble:
            raise ValueError("System takes a small particle system, not a "
                             "large system, a model or an ensemble "
                             "(ricochet.run runs those)")
        err = ffi.new("rc_error *")
        out = ffi.new("rc_system **")
        st = lib.rc_scenario_build(scn._ptr, out, err)
        if st != lib.RC_OK:
            if out[0] != ffi.NULL:
                lib.rc_system_free(out[0])
            raise ScenarioError._from_c(err)
        self.scenario = scn
        self._sys = ffi.gc(out[0], lib.rc_system_free)
        if threads:
            self._check(lib.rc_system_set_threads(self._sys, int(threads)))
        self.dimension = int(lib.rc_system_dimension(self._sys))
        self.count = int(lib.rc_system_count(self._sys))

    def _check(self, st):
        if st != lib.RC_OK:
            msg = ffi.string(lib.rc_system_message(self._sys)).decode()
            cls = ScenarioError if st in _INPUT_STATUSES else RunError
            raise cls(msg or ffi.string(lib.rc_status_str(st)).decode(),
                      status=ffi.string(lib.rc_status_name(st)).decode())

    def step(self, n=1):
        """Advance n steps (RunError on failure; the state is then that
        of the last completed step)."""
        self._check(lib.rc_system_step(self._sys, int(n)))
        return self

    @property
    def time(self):
        return float(lib.rc_system_time(self._sys))

    @property
    def steps_taken(self):
        return int(lib.rc_system_steps_taken(self._sys))

    def _state(self):
        q = np.empty((self.count, self.dimension))
        p = np.empty((self.count, self.dimension))
        self._check(lib.rc_system_get_state(
            self._sys, ffi.from_buffer("double[]", q),
            ffi.from_buffer("double[]", p)))
        return q, p

    @property
    def positions(self):
        """Positions, shape (count, dimension) (a copy)."""
        return self._state()[0]

    @property
    def momenta(self):
        """Momenta, shape (count, dimension) (a copy)."""
        return self._state()[1]

    @property
    def masses(self):
        m = np.empty(self.count)
        self._check(lib.rc_system_get_particles(
            self._sys, ffi.from_buffer("double[]", m), ffi.NULL))
        return m

    @property
    def radii(self):
        r = np.empty(self.count)
        self._check(lib.rc_system_get_particles(
            self._sys, ffi.NULL, ffi.from_buffer("double[]", r)))
        return r

    @property
    def velocities(self):
        return self.momenta / self.masses[:, None]

    def set_state(self, positions=None, momenta=None):
        """Replace positions and/or momenta (arrays of shape (count,
        dimension))."""
        shape = (self.count, self.dimension)
        keep = []

        def buf(a):
            if a is None:
                return ffi.NULL
            a = np.ascontiguousarray(a, dtype=np.float64)
            if a.shape != shape:
                raise ValueError("expected shape %s, got %s"
                                 % (shape, a.shape))
            keep.append(a)
            return ffi.from_buffer("double[]", a)
        self._check(lib.rc_system_set_state(self._sys, buf(positions),
                                            buf(momenta)))
        return self

    def diagnostics(self):
        """The current state's diagnostics row, as a dict with the columns
        of diagnostics.csv (plus reflections_total)."""
        d = ffi.new("rc_diagnostics *")
        self._check(lib.rc_system_diagnostics(self._sys, d))
        return dict(zip(DIAGNOSTICS_COLUMNS + ["reflections_total"],
                        _row_tuple(d)))

    def potential(self, positions=None):
        """V(q) at the given positions (default: the current ones)."""
        q = self.positions if positions is None else np.ascontiguousarray(
            positions, dtype=np.float64)
        e = ffi.new("double *")
        self._check(lib.rc_system_potential(
            self._sys, ffi.from_buffer("double[]", q), e, ffi.NULL))
        return float(e[0])


# ------------------------------------------------------------ large systems

class LargeSystem:
    """A large system (a scenario with a ``box``) in memory: the CPU engine
    that :func:`run` uses, from the same initial state (the same steps, bit
    for bit), stepped and read here; nothing is written to files.

    ``step(n)``; ``positions`` (wrapped into the box), ``unwrapped``,
    ``momenta``, ``velocities``, ``images`` as NumPy arrays of shape
    (count, dimension); ``masses``, ``radii``; ``box`` (lengths) and
    ``periodic``; ``observe()`` the observables of observables.csv as a
    dict (pressures, Z and ``collisions`` over the interval since the
    previous ``observe()``, ``msd`` from the start).
    """

    def __init__(self, scenario, threads=None):
        scn = _as_scenario(scenario)
        if not scn.is_large_system or scn.is_ensemble:
            raise ValueError("LargeSystem takes a scenario with a `box` (and "
                             "no ensemble); Scenario.build() takes a small "
                             "system")
        if threads is not None and (int(threads) != threads or threads < 0):
            raise ValueError("threads must be a non-negative integer")
        out = ffi.new("rc_md_session **")
        err = ffi.new("rc_error *")
        st = lib.rc_md_session_create(scn._ptr, int(threads or 0), out, err)
        if st != lib.RC_OK:
            if st == lib.RC_ERR_NOMEM:
                raise MemoryError(ffi.string(err.message).decode())
            raise ScenarioError._from_c(err)
        self.scenario = scn
        self._s = ffi.gc(out[0], lib.rc_md_session_free)
        self.count = int(lib.rc_md_session_count(self._s))
        self.dimension = int(lib.rc_md_session_dimension(self._s))
        lengths = ffi.new("double[3]")
        periodic = ffi.new("int[3]")
        lib.rc_md_session_box(self._s, lengths, periodic)
        self.box = np.array([lengths[k] for k in range(self.dimension)])
        self.periodic = np.array([bool(periodic[k])
                                  for k in range(self.dimension)])
        self.masses = np.empty(self.count)
        self.radii = np.empty(self.count)
        self._check(lib.rc_md_session_particles(
            self._s, ffi.from_buffer("double[]", self.masses),
            ffi.from_buffer("double[]", self.radii)))
        self.masses.flags.writeable = False
        self.radii.flags.writeable = False

    def _check(self, st):
        if st != lib.RC_OK:
            msg = ffi.string(lib.rc_md_session_message(self._s)).decode()
            raise RunError(msg or ffi.string(lib.rc_status_str(st)).decode(),
                           status=ffi.string(lib.rc_status_name(st)).decode())

    def step(self, n=1):
        """Advance n steps (RunError on failure; the state is then that of
        the last completed step)."""
        if int(n) != n or n < 0:
            raise ValueError("n must be a non-negative integer")
        self._check(lib.rc_md_session_step(self._s, int(n)))
        return self

    @property
    def time(self):
        return float(lib.rc_md_session_time(self._s))

    @property
    def steps_taken(self):
        return int(lib.rc_md_session_steps(self._s))

    def state(self):
        """(positions, momenta, images): copies of the current state."""
        shape = (self.count, self.dimension)
        q, p = np.empty(shape), np.empty(shape)
        img = np.empty(shape, dtype=np.intc)
        self._check(lib.rc_md_session_state(
            self._s, ffi.from_buffer("double[]", q),
            ffi.from_buffer("double[]", p), ffi.from_buffer("int[]", img)))
        return q, p, img

    @property
    def positions(self):
        return self.state()[0]

    @property
    def momenta(self):
        return self.state()[1]

    @property
    def images(self):
        return self.state()[2]

    @property
    def velocities(self):
        return self.momenta / self.masses[:, None]

    @property
    def unwrapped(self):
        """Positions with the box lengths crossed added back."""
        q, _, img = self.state()
        return q + img * self.box

    def observe(self):
        """The observables at the current state, as a dict with the names
        of observables.csv's columns."""
        o = ffi.new("rc_md_observables *")
        self._check(lib.rc_md_session_observe(self._s, o))
        return {
            "step": int(o.step), "time": o.time,
            "temperature": o.temperature, "kinetic_energy": o.kinetic,
            "potential_energy": o.potential, "energy": o.energy,
            "momentum_x": o.momentum[0], "momentum_y": o.momentum[1],
            "momentum_z": o.momentum[2], "pressure": o.pressure,
            "pressure_kinetic": o.pressure_kinetic,
            "pressure_virial": o.pressure_virial,
            "pressure_collision": o.pressure_collision, "Z": o.z,
            "collisions": int(o.collisions),
            "collisions_total": int(o.collisions_total),
            "wall_collisions": int(o.wall_collisions_total),
            "largest_island": int(o.largest_island), "msd": o.msd,
            "max_overlap": o.max_overlap,
        }

    def __repr__(self):
        return "ricochet.LargeSystem(%s: %d spheres, t = %g)" % (
            self.scenario.name, self.count, self.time)
