"""One JSON schema for the results of every benchmark in ``benchmarks/``.

A run is one JSON object::

    {
      "schema": "pyblosc2-benchmark/1",
      "benchmark": "bench_reads",             # the script's name
      "date": "2026-11-27T14:02:11+00:00",    # when the run started (UTC)
      "seconds": 412.3,                       # how long it ran
      "command": "python benchmarks/bench_reads.py --size-mb 32 --repeat 3 --json x.json",
      "machine": {"system": ..., "machine": ..., "cpu": ..., "cores": 2, "memory_gb": 24.0,
                  "python": "3.11.7 (CPython)"},
      "load": {"start": [1.2, 0.9, 0.8], "end": [...]},    # os.getloadavg() at start and end
      "versions": {"pyblosc2": ..., "python-blosc2": ..., "numpy": ..., "numba": ...},
      "params": {...},                        # the script's own settings (size, repeats...)
      "rows": [{...}, ...]                    # the script's rows, as it defines them
    }

Scripts call :func:`start` before measuring and :func:`write` at the end; readers (the plots
of ``benchmarks/plot.py``, the docs) call :func:`read`, which refuses anything else.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
import sys
import time
from typing import Any

SCHEMA = "pyblosc2-benchmark/1"
#: the keys every run has
KEYS = (
    "schema", "benchmark", "date", "seconds", "command", "machine", "load", "versions", "params",
    "rows",
)  # fmt: skip
#: distributions whose versions a run records when they are installed
PACKAGES = ("pyblosc2", "blosc2", "numpy", "numba", "zstandard", "lz4", "zarr", "h5py", "fsspec")


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return round(pages * size / 2**30, 1)


def machine() -> dict[str, Any]:
    """What the run ran on."""
    return {
        "system": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
    }


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str]:
    """Installed versions of :data:`PACKAGES` (python-blosc2 under its own name)."""
    found = {}
    for dist in PACKAGES:
        if (v := _version(dist)) is not None:
            found["python-blosc2" if dist == "blosc2" else dist] = v
    try:  # a source tree on PYTHONPATH wins over the installed distribution
        import pyblosc2

        found["pyblosc2"] = pyblosc2.__version__
    except ImportError:
        pass
    return found


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def start(benchmark: str, **params: Any) -> dict[str, Any]:
    """A run of ``benchmark`` with ``params``, started now (rows are added by the caller)."""
    return {
        "schema": SCHEMA,
        "benchmark": benchmark,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": None,
        "command": "python " + " ".join(sys.argv),
        "machine": machine(),
        "load": {"start": _load(), "end": None},
        "versions": versions(),
        "params": params,
        "rows": [],
        "_t0": time.perf_counter(),
    }


def finish(run: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``run`` with its rows, its duration and the load at the end."""
    done = {k: v for k, v in run.items() if k != "_t0"}
    done["seconds"] = round(time.perf_counter() - run["_t0"], 1)
    done["load"] = {"start": run["load"]["start"], "end": _load()}
    done["versions"] = {**run["versions"], **versions()}  # numba may load only during the run
    done["rows"] = rows
    return done


def write(path: str, run: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Write ``run`` with ``rows`` to ``path`` as JSON."""
    with open(path, "w") as f:
        json.dump(finish(run, rows), f, indent=1)
        f.write("\n")


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A run written by :func:`write`; ``ValueError`` when the file is not one."""
    with open(path) as f:
        run = json.load(f)
    if not isinstance(run, dict) or run.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema must be {SCHEMA!r}, got {run.get('schema')!r}")
    missing = [k for k in KEYS if k not in run]
    if missing:
        raise ValueError(f"{path}: a benchmark run must have {missing}")
    if not isinstance(run["rows"], list):
        raise ValueError(f"{path}: rows must be a list, got {type(run['rows']).__name__}")
    return run
