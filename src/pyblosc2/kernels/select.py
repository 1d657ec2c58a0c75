"""Which kernel set runs: chosen once, on first use, from ``PYBLOSC2_KERNELS`` (a set's name;
unset: the preferred set that loads, numpy being the reference and the fallback), or forced by
:func:`use_kernels`. A set that fails to load falls back to numpy with one warning, never an
error. Loaders are imported only when a set is first asked for, so ``import pyblosc2`` loads
no optional dependency.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import ParamError
from .base import KernelSet

__all__ = ["ENV_VAR", "active", "kernel_sets", "kernels_in_use", "use_kernels"]

ENV_VAR = "PYBLOSC2_KERNELS"


def _load_numpy() -> KernelSet:
    from .numpy_set import NUMPY

    return NUMPY


def _load_numba() -> KernelSet:
    """The numba set (numba imported and one kernel compiled or loaded from the cache)."""
    from .numba_set import NUMBA, warm_up

    warm_up()
    return NUMBA


#: name -> loader, in order of preference when nothing is asked for (numpy last: the fallback)
_LOADERS: dict[str, Callable[[], KernelSet]] = {"numba": _load_numba, "numpy": _load_numpy}
#: the module a set needs: a set whose module is not installed is skipped without a warning
_NEEDS = {"numba": "numba"}
_lock = threading.Lock()
_active: KernelSet | None = None


def kernel_sets() -> list[str]:
    """The names of the kernel sets this installation knows.

    >>> "numpy" in kernel_sets()
    True
    """
    return list(_LOADERS)


def _load(name: str) -> KernelSet:
    try:
        return _LOADERS[name]()
    except Exception as exc:  # a set that cannot load or compile: numpy, one warning
        if name == "numpy":
            raise
        warnings.warn(
            f"pyblosc2: the {name!r} kernels are not usable ({type(exc).__name__}: {exc}); "
            "using the numpy kernels",
            RuntimeWarning,
            stacklevel=3,
        )
        return _load_numpy()


def _choose() -> KernelSet:
    asked = os.environ.get(ENV_VAR, "").strip().lower()
    if asked:
        if asked not in _LOADERS:
            warnings.warn(
                f"pyblosc2: {ENV_VAR}={asked!r} names no kernel set (known: "
                f"{', '.join(_LOADERS)}); using the numpy kernels",
                RuntimeWarning,
                stacklevel=3,
            )
            return _load_numpy()
        return _load(asked)
    preferred = next(iter(_LOADERS))
    if importlib.util.find_spec(_NEEDS.get(preferred, "numpy")) is None:
        return _load_numpy()  # not installed (a plain install): no warning
    return _load(preferred)


def active() -> KernelSet:
    """The kernel set in use (chosen on the first call).

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


def use_kernels(name: str) -> KernelSet:
    """Force the kernel set ``name`` from now on (a set that fails to load gives numpy, with a
    warning) and return the set now in use.

    >>> use_kernels("numpy").name
    'numpy'
    """
    if name not in _LOADERS:
        raise ParamError(f"kernels must be one of {kernel_sets()}, got {name!r}")
    with _lock:
        return _set(_load(name))


@contextmanager
def kernels_in_use(name: str) -> Iterator[KernelSet]:
    """Run a block with the kernel set ``name``, then restore the previous choice.

    >>> with kernels_in_use("numpy") as ks:
    ...     ks.name
    'numpy'
    """
    global _active
    before = _active
    try:
        yield use_kernels(name)
    finally:
        with _lock:
            _active = before
