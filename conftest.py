"""Repository-wide pytest configuration (applies to ``tests/`` and to the doctests in ``src/``).

* Optional extras: without zarr, fsspec, dask, h5py or xarray the doctests of the modules that
  adapt them (or import them in a doctest) are not collected instead of stopping the run with a
  collection error. In CI (``CI=true``) nothing is ignored, so a missing extra is a failure there.
* numpy 1.x (the floors run, ``tools/floors.sh``): the doctests show numpy 2's scalar reprs
  (``np.float64(2.0)``); under numpy 1.x their expected output is read in numpy 1's form
  (``2.0``), which is what numpy 1.x prints for the same value.
"""

from __future__ import annotations

import importlib
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

#: module (relative to this directory) -> the optional package its doctests need
OPTIONAL_DOCTESTS = {
    "src/pyblosc2/compat/zarr_codec.py": "zarr",
    "src/pyblosc2/compat/zarr_blosc2.py": "zarr",
    "src/pyblosc2/backends/fsspec.py": "fsspec",
    "src/pyblosc2/backends/http_probe.py": "fsspec",
    "src/pyblosc2/ndarray/dask_io.py": "dask",
    "src/pyblosc2/compute/dask_adapter.py": "dask",
    "src/pyblosc2/hdf5": "h5py",
    "src/pyblosc2/xarray": "xarray",
    "src/pyblosc2/kernels/numba_set.py": "numba",
    "src/pyblosc2/dsl/numba_route.py": "numba",  # the DSL's numba route (issue 33)
}
# every numba kernel module (*_nb.py): a new one is not forgotten in an install without numba
OPTIONAL_DOCTESTS.update(
    {
        str(p.relative_to(Path(__file__).parent)): "numba"
        for p in sorted((Path(__file__).parent / "src/pyblosc2/kernels").glob("*_nb.py"))
    }
)

# module-name aliases (each *is* another module, whose doctests run there:
# pyblosc2.proxies.byterange, pyblosc2.ctable.groupkeys)
collect_ignore: list[str] = ["src/pyblosc2/proxy_source.py", "src/pyblosc2/groupby.py"]

#: the optional packages a doctest may import (``>>> import fsspec``); a module whose doctests do is
#: treated as if listed above, so a new adapter's doctest cannot break a run without its extra
OPTIONAL_PACKAGES = (
    "fsspec",
    "zarr",
    "dask",
    "h5py",
    "xarray",
    "numba",
    "threadpoolctl",
    "pandas",
    "pyarrow",
    "s3fs",
    "matplotlib",
)
_DOCTEST_IMPORT = re.compile(
    r"^\s*(?:>>>|\.\.\.)\s+(?:import|from)\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)", re.M
)


def doctest_imports(text: str) -> set[str]:
    """The optional packages the doctests in ``text`` import.

    >>> sorted(doctest_imports(">>> import fsspec, numpy as np\\n>>> from dask import array\\n"))
    ['dask', 'fsspec']
    """
    found: set[str] = set()
    for match in _DOCTEST_IMPORT.finditer(text):
        for name in match.group(1).split(","):
            top = name.strip().split(" ")[0].split(".")[0]
            if top in OPTIONAL_PACKAGES:
                found.add(top)
    return found


def _needs() -> dict[str, set[str]]:
    here = Path(__file__).parent
    needs = {module: {package} for module, package in OPTIONAL_DOCTESTS.items()}
    for path in sorted((here / "src/pyblosc2").rglob("*.py")):
        packages = doctest_imports(path.read_text(encoding="utf-8"))
        if packages:
            needs.setdefault(str(path.relative_to(here)), set()).update(packages)
    return needs


def _importable(package: str) -> bool:
    try:
        importlib.import_module(package)
    except ImportError:  # missing, or failing to import
        return False
    return True


if os.environ.get("CI", "").lower() != "true":
    for _module, _packages in _needs().items():
        if not all(_importable(p) for p in sorted(_packages)):
            collect_ignore.append(_module)

NUMPY1 = int(np.__version__.split(".")[0]) < 2
if NUMPY1:  # UTF8Array is numpy 2's StringDType (utf8 columns read as object arrays on numpy 1)
    collect_ignore.append("src/pyblosc2/ctable/utf8array.py")
_SCALAR_REPR = re.compile(r"np\.(?:[a-z]+\d*_?)\(([^()]*)\)|np\.(True|False)_")


def numpy1_repr(want: str) -> str:
    """numpy 2 scalar reprs in a doctest's expected output, as numpy 1.x prints them.

    >>> numpy1_repr("(np.uint64(0), 2, np.float64(2.5), np.True_)")
    '(0, 2, 2.5, True)'
    """
    return _SCALAR_REPR.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), want)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    if not NUMPY1:
        return
    for item in items:
        dtest = getattr(item, "dtest", None)
        for example in getattr(dtest, "examples", ()):
            example.want = numpy1_repr(example.want)


# --- a run that is cut short still says what failed and what was running (CI stops a run at its
# time limit before pytest's summary is printed): each failure is written when it happens, with
# the time since the start; every PACE_SECONDS a thread writes how far the run is and which tests
# have been running longer than a minute; a SIGTERM writes the same before the run ends.
PACE_SECONDS = float(os.environ.get("PYTEST_PACE_SECONDS", 300))
LONG_SECONDS = float(os.environ.get("PYTEST_LONG_SECONDS", 60))
_started = time.monotonic()
_counts: dict[str, int] = {}
_running: dict[str, float] = {}  # nodeid -> when it started


def _say(line: str) -> None:
    err = sys.__stderr__ or sys.stderr  # not the capture of a running test
    err.write(f"\n[{time.monotonic() - _started:7.0f}s] {line}\n")
    err.flush()


def _status() -> None:
    now = time.monotonic()
    _say("so far: " + ", ".join(f"{v} {k}" for k, v in sorted(_counts.items())))
    for nodeid, since in sorted(_running.items(), key=lambda kv: kv[1]):
        if now - since >= LONG_SECONDS:
            _say(f"RUNNING for {now - since:.0f}s: {nodeid}")


def _controller() -> bool:
    return not os.environ.get("PYTEST_XDIST_WORKER")


def pytest_sessionstart(session: Any) -> None:
    if not _controller():
        return

    def pace() -> None:
        while True:
            time.sleep(PACE_SECONDS)
            _status()

    threading.Thread(target=pace, name="conftest-pace", daemon=True).start()
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGTERM)

        def on_term(signum: int, frame: Any) -> None:
            _say("SIGTERM: the run is being stopped")
            _status()
            if callable(previous):
                previous(signum, frame)
            else:  # as Ctrl-C: pytest stops the workers and prints its summary of failures
                raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, on_term)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if _controller():
        _running[nodeid] = time.monotonic()


def pytest_runtest_logreport(report: Any) -> None:
    if not _controller():
        return  # the controller reports (an xdist worker's stderr reaches the terminal too)
    if report.outcome != "passed" or report.when == "call":
        _counts[report.outcome] = _counts.get(report.outcome, 0) + 1
    if report.when == "teardown":
        _running.pop(report.nodeid, None)
    if report.failed:
        lines = str(getattr(report, "longreprtext", "") or "").strip().splitlines()
        errors = [line for line in lines if line.startswith("E ")]
        places = [line for line in lines if re.match(r"^\S+\.py:\d+: ", line)]
        worker = getattr(report, "node", None)
        where = f" on {worker.gateway.id}" if worker is not None else ""
        _say(f"FAILED {report.nodeid} ({report.when}{where}, {report.duration:.1f}s)")
        for line in places[-3:] + (errors or lines[-1:])[:2]:
            (sys.__stderr__ or sys.stderr).write(f"    {line[:300]}\n")
