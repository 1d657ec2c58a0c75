"""Which kernel set runs: chosen once, on first use, from ``PYBLOSC2_KERNELS`` (a set's name;
unset: the preferred set that loads, numpy being the reference and the fallback), or forced by
:func:`use_kernels`. A set that fails to load falls back to numpy with one warning, never an
error. Loaders are imported only when a set is first asked for, so ``import pyblosc2`` loads
no optional dependency.

Unset, with numba installed, the numba set loads **in the background**: importing numba and
setting up its compiler costs about a second in a fresh process, more than a first read, so
the first :func:`active` returns the numpy set at once (byte-identical to numba's by contract)
and starts one daemon thread that loads numba's set, loads every kernel specialisation a
typical read or write meets (:func:`.numba_set.warm_steps`; otherwise the first read after the
swap would load them from numba's cache, 5-20 ms each) and then swaps it in. With an empty
cache (compiling the list takes ~30 s) it swaps in once :data:`WARM_BUDGET` is spent and
compiles the rest after the swap (status "warming"). Callers take
``ks = active()`` once per call and use ``ks`` for the whole call. ``PYBLOSC2_KERNELS=numba``
and :func:`use_kernels` load synchronously (the first call gets the set asked for);
:func:`wait_for_kernels` waits for a background load; :func:`kernels_status` says which set
serves calls and what the loader is doing.

Forks: a ``fork()`` while the loader runs waits for it first (at most :data:`FORK_WAIT`
seconds, through ``os.register_at_fork``), so that a child never inherits a half-imported
numba or import locks held by a thread it does not have, and the parent has no second thread
at the fork (Python 3.12+ warns with a ``DeprecationWarning`` about forking a process with
threads: our loader never makes ``multiprocessing``'s fork start method warn). A child forked
past that wait (a loader stuck for longer, or still in a warm-up step after the swap: it may
hold numba's compiler lock) serves numpy and never loads numba. A fork cuts the warm-up short
(the step under way ends it; what is left loads on first use), so that it waits for one step,
not for the whole list.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TypeVar

from ..errors import ParamError
from .base import KernelSet

T = TypeVar("T")

__all__ = [
    "ENV_VAR",
    "FORK_WAIT",
    "active",
    "kernel_sets",
    "kernels_in_use",
    "kernels_status",
    "use_kernels",
    "wait_for_kernels",
]

ENV_VAR = "PYBLOSC2_KERNELS"
#: seconds a fork() waits for a background load to finish
FORK_WAIT = 10.0
#: the background loader gives up the GIL every this many Python calls (see _yield_often)
YIELD_EVERY = 100
YIELD_FOR = 0.0005


def _load_numpy() -> KernelSet:
    from .numpy_set import NUMPY

    return NUMPY


def _load_numba() -> KernelSet:
    """The numba set (numba imported and one kernel compiled or loaded from the cache)."""
    from .numba_set import NUMBA, warm_up

    warm_up()
    return NUMBA


def _warm_numba() -> list[Callable[[], None]]:
    """The steps that load every numba kernel specialisation a typical read or write meets
    (:func:`.numba_set.warm_steps`)."""
    from .numba_set import warm_steps

    return warm_steps()


#: name -> loader, in order of preference when nothing is asked for (numpy last: the fallback)
_LOADERS: dict[str, Callable[[], KernelSet]] = {"numba": _load_numba, "numpy": _load_numpy}
#: the module a set needs: a set whose module is not installed is skipped without a warning
_NEEDS = {"numba": "numba"}
#: name -> the warm-up steps the background loader runs after the loader, before the swap
#: (those left when :data:`WARM_BUDGET` is spent: after it); a set loaded synchronously
#: (use_kernels, the environment) loads each specialisation on first use instead (the whole
#: list costs ~0.15-0.2 s from a warm cache, a first read needs a few of them)
_WARMERS: dict[str, Callable[[], list[Callable[[], None]]]] = {"numba": _warm_numba}
#: seconds of warm-up after which the background loader swaps the set in and warms the rest
#: after the swap: loading the list from numba's cache takes a fraction of it, compiling it
#: (an empty cache: the first process after an install) ~30 s
WARM_BUDGET = 2.0
_lock = threading.Lock()
#: the set serving calls (None: not chosen yet)
_active: KernelSet | None = None
#: whether ``_active`` was asked for (use_kernels, the environment): a background load then
#: never replaces it
_asked = False
#: the background loader while it runs, and what it did: "" (nothing yet), "loading",
#: "warming" (swapped in, the rest of the warm-up running), "loaded", "failed: <reason>"
#: or "interrupted by a fork"
_loader: threading.Thread | None = None
_background = ""
_background_name = ""
#: someone waits for the background load (wait_for_kernels, a fork): it stops yielding
_hurry = False
#: a fork waits for the background load: it warms no further (what is left loads on first
#: use), so that the wait ends within one warm-up step
_forking = False
#: the set the background loader gave (swapped in unless a set was asked for)
_loaded: KernelSet | None = None


def kernel_sets() -> list[str]:
    """The names of the kernel sets this installation knows.

    >>> "numpy" in kernel_sets()
    True
    """
    return list(_LOADERS)


def _warn_unusable(name: str, exc: BaseException, stacklevel: int) -> None:
    warnings.warn(
        f"pyblosc2: the {name!r} kernels are not usable ({type(exc).__name__}: {exc}); "
        "using the numpy kernels",
        RuntimeWarning,
        stacklevel=stacklevel,
    )


def _load(name: str) -> KernelSet:
    if name != "numpy" and _background == "interrupted by a fork":
        # a child forked while numba was being imported: its half-imported modules and the
        # import locks of a thread this process does not have could hang a second import
        _warn_unusable(name, RuntimeError("its load was interrupted by a fork"), 4)
        return _load_numpy()
    try:
        return _LOADERS[name]()
    except Exception as exc:  # a set that cannot load or compile: numpy, one warning
        if name == "numpy":
            raise
        _warn_unusable(name, exc, 4)
        return _load_numpy()


def _choose() -> KernelSet:
    """The first choice (under ``_lock``)."""
    global _asked
    asked = os.environ.get(ENV_VAR, "").strip().lower()
    if asked:
        _asked = True
        if asked not in _LOADERS:
            warnings.warn(
                f"pyblosc2: {ENV_VAR}={asked!r} names no kernel set (known: "
                f"{', '.join(_LOADERS)}); using the numpy kernels",
                RuntimeWarning,
                stacklevel=4,
            )
            return _load_numpy()
        return _load(asked)
    preferred = next(iter(_LOADERS))
    if preferred == "numpy" or importlib.util.find_spec(_NEEDS.get(preferred, "numpy")) is None:
        return _load_numpy()  # not installed (a plain install): no warning
    if not _background:  # once per process: a failed or interrupted load is not retried
        _start_loader(preferred)
    return _loaded if _loaded is not None else _load_numpy()


def _start_loader(name: str) -> None:
    """Start the background load of set ``name`` (under ``_lock``)."""
    global _loader, _background, _background_name
    _background, _background_name = "loading", name
    _loader = threading.Thread(
        target=_load_in_background, args=(name,), name="pyblosc2-kernels", daemon=True
    )
    _loader.start()


def _yield_often() -> Callable[[object, str, object], None]:
    """A profile function for the loader thread that gives up the GIL every
    :data:`YIELD_EVERY` calls for :data:`YIELD_FOR` seconds (until someone waits for the
    load): the import runs Python on this thread, and without it a reader that releases the
    GIL around each C call (a codec, a numpy copy) waits up to the switch interval (5 ms) to
    get it back at every call (a convoy: 1000 ``get_slice`` calls took 3x longer during the
    load). The price: the load takes several times longer than a synchronous one (seconds;
    :func:`wait_for_kernels` lifts the brake)."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += 1
        if count >= YIELD_EVERY and not _hurry:
            count = 0
            time.sleep(YIELD_FOR)  # releases the GIL: a waiting reader takes it

    return profile


def _no_steps() -> list[Callable[[], None]]:
    return []


#: times a load or warm-up step is tried again after it met another thread changing
#: ``os.environ`` (numba reads the whole environment on import and before every compile)
ENV_RETRIES = 5


def _env_race(exc: BaseException) -> bool:
    """Whether ``exc`` is what iterating ``os.environ`` raises while another thread changes
    it (a key deleted between the listing and the read; a key added during the listing):
    pytest, for one, sets and deletes ``PYTEST_CURRENT_TEST`` around every test."""
    return isinstance(exc, KeyError) or (
        isinstance(exc, RuntimeError) and "changed size during iteration" in str(exc)
    )


def _forget_failed_import(package: str) -> None:
    """After an import of ``package`` failed half-way (it is no longer in ``sys.modules``),
    drop the submodules it had imported, so that the next try imports it whole: a kept
    ``numba.core`` would not be bound again as an attribute of a new ``numba``."""
    if package not in sys.modules:
        for name in [m for m in sys.modules if m.startswith(package + ".")]:
            sys.modules.pop(name, None)


def _retrying(fn: Callable[[], T], package: str | None = None) -> T:
    """``fn()``, tried again (at most :data:`ENV_RETRIES` times) when it met another thread
    changing the environment: a background load must not turn numba off for that
    (``package``: the one ``fn`` imports, forgotten before a new try)."""
    for _ in range(ENV_RETRIES):
        try:
            return fn()
        except Exception as exc:  # noqa: PERF203 (a few tries of a load, not a hot loop)
            if not _env_race(exc):
                raise
            if package is not None:
                _forget_failed_import(package)
    return fn()


def _braked(name: str, work: Callable[[], T]) -> T | None:
    """``work()`` on this thread under the GIL-yield brake; None, after :func:`_fail` (with
    the brake off), when it raised."""
    sys.setprofile(_yield_often())  # this thread only
    try:
        return work()
    except Exception as exc:
        sys.setprofile(None)
        _fail(name, exc)
        return None
    finally:
        sys.setprofile(None)


def _load_and_warm(name: str) -> tuple[KernelSet, list[Callable[[], None]]]:
    """The set ``name`` loaded and warmed within :data:`WARM_BUDGET` (or until a fork), and
    the warm-up steps left for after the swap."""
    ks = _retrying(_LOADERS[name], _NEEDS.get(name))
    steps = _WARMERS.get(name, _no_steps)()
    start = time.monotonic()
    for i, step in enumerate(steps):
        if _forking or time.monotonic() - start > WARM_BUDGET:  # compiling: swap, go on
            return ks, steps[i:]
        _retrying(step)
    return ks, []


def _warm_rest(steps: list[Callable[[], None]]) -> bool:
    for step in steps:
        if _forking:
            break
        _retrying(step)
    return True


def _load_in_background(name: str) -> None:
    global _active, _loaded, _background, _hurry
    # a failure before the swap: numpy stays, with the one warning of a synchronous load
    loaded = _braked(name, partial(_load_and_warm, name))
    if loaded is None:
        return
    ks, rest = loaded
    with _lock:
        _loaded, _background = ks, "warming" if rest else "loaded"
        if not _asked:
            _active = ks  # one reference assignment: a reader sees the old set or the new
    # a kernel found wrong after the swap: _fail brings numpy back
    if rest:
        # no brake after the swap: each compile holds numba's compiler lock, and a reader's
        # first call of a kernel not warmed yet waits on it (under the brake, for minutes on a
        # cold cache: tests waited 104-173 s on a fresh clone)
        _hurry = True
        warmed = _braked(name, partial(_warm_rest, rest))
        if warmed:
            with _lock:
                _background = "loaded"


def _fail(name: str, exc: Exception) -> None:
    """The background load of set ``name`` failed: numpy serves (unless a set was asked
    for), with one warning."""
    global _active, _loaded, _background
    with _lock:
        _background = f"failed: {type(exc).__name__}: {exc}"
        if _loaded is not None and _loaded.name == name:
            _loaded = None
            if not _asked:
                _active = _load_numpy()
    _warn_unusable(name, exc, 3)


def active() -> KernelSet:
    """The kernel set serving calls now (chosen on the first call; see the module docstring:
    with numba installed and nothing asked for, numpy until numba has loaded in the
    background). Take it once per call and use it for the whole call.

    >>> active().name in kernel_sets()
    True
    """
    ks = _active
    if ks is None:
        with _lock:
            ks = _active if _active is not None else _set(_choose())
    return ks


def _set(ks: KernelSet) -> KernelSet:
    global _active
    _active = ks
    return ks


def kernels_status() -> str:
    """The set serving calls and, while it runs or after it failed, what the background loader
    is doing: ``"numba"``, ``"numpy (numba loading)"``, ``"numpy (numba failed: ...)"``.

    >>> kernels_status().split()[0] in kernel_sets()
    True
    """
    name = active().name
    with _lock:
        bg, bg_name = _background, _background_name
    if not bg or bg == "loaded":
        return name
    return f"{name} ({bg_name} {bg})"


def wait_for_kernels(timeout: float | None = None) -> KernelSet:
    """Choose the kernel set if not chosen yet, wait for its background load (at most
    ``timeout`` seconds; None: until it ends) and return the set now serving calls: the way to
    have numba from the first read without ``PYBLOSC2_KERNELS=numba``.

    >>> wait_for_kernels().name in kernel_sets()
    True
    """
    global _hurry
    active()
    loader = _loader
    if loader is not None:
        _hurry = True
        loader.join(timeout)
    return active()


def use_kernels(name: str) -> KernelSet:
    """Force the kernel set ``name`` from now on (a set that fails to load gives numpy, with a
    warning) and return the set now in use. A background load still running goes on but no
    longer replaces the set.

    >>> use_kernels("numpy").name
    'numpy'
    """
    global _asked
    if name not in _LOADERS:
        raise ParamError(f"kernels must be one of {kernel_sets()}, got {name!r}")
    ks = _load(name)  # outside the lock: a background load takes it to swap
    with _lock:
        _asked = True
        return _set(ks)


@contextmanager
def kernels_in_use(name: str) -> Iterator[KernelSet]:
    """Run a block with the kernel set ``name``, then restore the previous choice (the set a
    background load gave meanwhile, if the previous choice was waiting for it).

    >>> with kernels_in_use("numpy") as ks:
    ...     ks.name
    'numpy'
    """
    global _active, _asked
    with _lock:
        before, asked_before = _active, _asked
    try:
        yield use_kernels(name)
    finally:
        with _lock:
            _asked = asked_before
            if before is not None and not asked_before and _loaded is not None:
                before = _loaded
            _active = before


def _before_fork() -> None:
    global _hurry, _forking
    loader = _loader
    if loader is not None and loader.is_alive() and loader is not threading.current_thread():
        _hurry = _forking = True
        loader.join(FORK_WAIT)


def _after_fork_in_parent() -> None:
    global _forking
    _forking = False


def _after_fork_in_child() -> None:
    global _lock, _loader, _background, _active, _loaded, _forking
    _lock = threading.Lock()  # the parent's may have been held by the loader
    _forking = False
    if _loader is not None and _background in ("loading", "warming"):
        # numpy serves; numba is never imported here (nor compiled: "warming", the loader
        # compiling after the swap, may have held numba's compiler lock at the fork)
        _background = "interrupted by a fork"
        if _loaded is not None and _active is _loaded and not _asked:
            _active = _load_numpy()
        _loaded = None
    _loader = None


os.register_at_fork(
    before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child
)
