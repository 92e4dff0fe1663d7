"""pilotsim from Python: run scenarios, sweep parameters and validate scenarios in a notebook.

The simulation is the same library as the ``pilotsim`` command line, so a run here has the
same digest as ``pilotsim run`` with the same scenario, ``--set`` assignments and seed, and an
error has the same message. Tables come back as polars DataFrames, handed over in memory
(Arrow C data interface), not through files.

>>> import pilotsim
>>> run = pilotsim.run("scenarios/quickstart.ron", set={"duration_s": 14400})
>>> run.summary["pilot_efficiency"], run.jobs.height
"""

from __future__ import annotations

import json
import math
import os
import warnings
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

import polars as pl

from . import _pilotsim

__all__ = ["Run", "run", "sweep", "validate", "__version__"]

__version__: str = _pilotsim.version()

#: A scenario: a file path, RON text, or ``None`` for the embedded quickstart.
Scenario = Union[str, "os.PathLike[str]", None]


def _source(scenario: Scenario) -> Tuple[str, str]:
    """``(kind, source)`` for the native module: a path-like or an existing file is a path,
    other text containing ``(`` is RON text, ``None`` the embedded quickstart; anything else
    is taken as a path (so a missing file is reported as the CLI reports it)."""
    if scenario is None:
        return "quickstart", ""
    if isinstance(scenario, os.PathLike):
        return "path", os.fspath(scenario)
    if not isinstance(scenario, str):
        raise TypeError(f"scenario: expected a path, RON text or None, got {type(scenario).__name__}")
    if os.path.exists(scenario):
        return "path", scenario
    if "(" in scenario:
        return "text", scenario
    return "path", scenario


def _value_text(path: str, value: Any) -> str:
    """The text of ``--set path=TEXT`` for a Python value: a str as it is (the CLI reads it as
    JSON if it is JSON, else as a plain string), booleans, numbers and ``None`` as their
    JSON/RON literal, lists, tuples and dicts as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"--set {path}: {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    raise TypeError(f"--set {path}: cannot express a {type(value).__name__} as a scenario value")


def _sets(set: Optional[Mapping[str, Any]]) -> List[str]:
    """The CLI's ``--set path=value`` strings of a ``{path: value}`` dict, in its order."""
    if set is None:
        return []
    return [f"{path}={_value_text(path, value)}" for path, value in set.items()]


def _frame(columns: Sequence[Any]) -> pl.DataFrame:
    """A DataFrame of native columns, each imported through ``__arrow_c_array__``."""
    return pl.DataFrame([pl.Series(c.name, c) for c in columns])


class Run:
    """A finished run.

    Attributes:
        summary: the run's summary, the content of ``summary.json``.
        digest: the run's digest (hex), as in ``summary.json`` and ``pilotsim run``.
        jobs: one row per job (as ``jobs.parquet``).
        pilots: one row per pilot (as ``pilots.parquet``).
        timeseries: one row per sample and share entity (as ``timeseries.parquet``).
        transfers: one row per network transfer, or ``None`` when the run made none.
        gpu_timeseries: GPUs held by pilots and used by jobs per sample, site and model (as
            ``gpu_timeseries.parquet``), or ``None`` when the grid declares no GPU.
        brokerage: PanDA's brokerage decisions, or ``None`` when the run has none.
        tables: every table by name (the above and the WMSs' or factories' own).
        warnings: the scenario's warnings (also issued as Python warnings).
    """

    summary: Dict[str, Any]
    digest: str
    jobs: pl.DataFrame
    pilots: pl.DataFrame
    timeseries: pl.DataFrame
    transfers: Optional[pl.DataFrame]
    gpu_timeseries: Optional[pl.DataFrame]
    brokerage: Optional[pl.DataFrame]
    tables: Dict[str, pl.DataFrame]
    warnings: List[str]

    def __init__(self, summary: Dict[str, Any], digest: str, warnings: List[str], tables: Dict[str, pl.DataFrame]):
        self.summary = summary
        self.digest = digest
        self.warnings = warnings
        self.tables = tables
        self.jobs = tables["jobs"]
        self.pilots = tables["pilots"]
        self.timeseries = tables["timeseries"]
        self.transfers = tables.get("transfers")
        self.gpu_timeseries = tables.get("gpu_timeseries")
        self.brokerage = tables.get("brokerage")

    def __repr__(self) -> str:
        name = self.summary.get("scenario", "?")
        return f"<pilotsim.Run {name} seed={self.summary.get('seed')} digest={self.digest[:12]}… jobs={self.jobs.height}>"


def run(
    scenario: Scenario = None,
    *,
    seed: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
) -> Run:
    """Run a scenario once, as ``pilotsim run [--seed S] [--set P=V …] [--out DIR] SCENARIO``.

    Args:
        scenario: a scenario file (str or path-like), RON text, or ``None`` for the embedded
            quickstart. A str naming an existing file is a path; otherwise a str containing
            ``(`` is RON text (relative paths in it are relative to the current directory).
        seed: the random seed (default: the scenario's ``seed``).
        set: ``{field path: value}`` overrides, as ``--set path=value`` (e.g.
            ``{"dirac.director.extra_pilot_fraction": 0.2, "duration_s": 14400}``).
        out: also write the run's usual output directory (Parquet tables, charts, summary).

    Returns:
        The finished :class:`Run`; its tables come from memory, not from ``out``.

    Raises:
        ValueError: the scenario, an override or the seed is invalid (the CLI's message,
            with the field path).
        OSError: ``out`` cannot be written.
    """
    kind, source = _source(scenario)
    out_path = None if out is None else os.fspath(out)
    summary, digest, warns, tables = _pilotsim.run(kind, source, _sets(set), _seed(seed), out_path)
    for w in warns:
        warnings.warn(w, stacklevel=2)
    return Run(json.loads(summary), digest, list(warns), {name: _frame(cols) for name, cols in tables})


def _seed(seed: Optional[int]) -> Optional[int]:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: expected an integer in 0..2^64, got {seed!r}")
    return seed


def _vary(vary: Mapping[str, Union[str, Sequence[Any]]]) -> List[Tuple[str, Optional[str], List[str]]]:
    if not vary:
        raise ValueError("vary: give at least one {path: [values]}")
    out = []
    for path, values in vary.items():
        if isinstance(values, str):
            out.append((path, values, []))  # the CLI's SPEC: "0:1:0.25" or "a,b"
        else:
            out.append((path, None, [json.dumps(v) for v in values]))
    return out


@overload
def sweep(
    scenario: Scenario,
    vary: Mapping[str, Union[str, Sequence[Any]]],
    *,
    replicas: int = ...,
    threads: Optional[int] = ...,
    seed: Optional[int] = ...,
    set: Optional[Mapping[str, Any]] = ...,
    out: Union[str, "os.PathLike[str]", None] = ...,
    points: Literal[False] = ...,
) -> pl.DataFrame: ...


@overload
def sweep(
    scenario: Scenario,
    vary: Mapping[str, Union[str, Sequence[Any]]],
    *,
    replicas: int = ...,
    threads: Optional[int] = ...,
    seed: Optional[int] = ...,
    set: Optional[Mapping[str, Any]] = ...,
    out: Union[str, "os.PathLike[str]", None] = ...,
    points: Literal[True],
) -> Tuple[pl.DataFrame, pl.DataFrame]: ...


def sweep(
    scenario: Scenario,
    vary: Mapping[str, Union[str, Sequence[Any]]],
    *,
    replicas: int = 3,
    threads: Optional[int] = None,
    seed: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    points: bool = False,
) -> Union[pl.DataFrame, Tuple[pl.DataFrame, pl.DataFrame]]:
    """Sweep parameters, as ``pilotsim sweep SCENARIO --vary P=V1,V2 … --replicas N``.

    Every combination of the varied values (the first varying slowest) runs ``replicas``
    times, each with its own seed derived from the master seed, the point and the replica,
    in parallel on ``threads`` threads (default: all cores). Results do not depend on the
    number of threads.

    Args:
        scenario: as for :func:`run`.
        vary: ``{field path: [values]}`` (or the CLI's SPEC text, e.g. ``"0:1:0.25"``).
        replicas: runs per point.
        threads: worker threads (default: all cores).
        seed: the master seed (default: the scenario's); given as ``--set seed=N``, so it
            is part of the sweep's scenario identity.
        set: overrides applied to every point, as for :func:`run`.
        out: also write the CLI's sweep directory (``sweep.parquet``, ``points.parquet``,
            ``points.json``, charts); runs already in it are reused, as the CLI does.
        points: also return the per-point table.

    Returns:
        The runs table, one row per run, with the columns of ``sweep.parquet`` (``run``,
        ``point``, ``replica``, ``seed``, the varied values, then every summary metric); with
        ``points=True``, ``(runs, points)`` where ``points`` has the columns of
        ``points.parquet`` (``<metric>.mean``, ``.std``, ``.ci95`` per point).

    Raises:
        ValueError: the scenario, an override or a varied value is invalid.
        OSError: ``out`` cannot be written.
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise ValueError(f"replicas: expected an integer ≥ 1, got {replicas!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads: expected an integer ≥ 1, got {threads!r}")
    kind, source = _source(scenario)
    sets = _sets(set)
    if seed is not None:
        sets.append(f"seed={_seed(seed)}")
    out_path = None if out is None else os.fspath(out)
    (_, runs), (_, pts) = _pilotsim.sweep(kind, source, _vary(vary), replicas, sets, threads, out_path)
    if points:
        return _frame(runs), _frame(pts)
    return _frame(runs)


def validate(scenario: Scenario) -> List[str]:
    """The problems of a scenario, one line each as ``pilotsim validate`` prints them
    (``FILE: field.path: message``); an empty list when it is valid.

    Args:
        scenario: as for :func:`run`.
    """
    kind, source = _source(scenario)
    return list(_pilotsim.validate(kind, source))
