"""The slot through which an NDArray and the compute engine reach its indexes.

The indexes (:mod:`pyblosc2.indexes`) sit above this package and the engine: they build
from NDArrays and evaluate with the engine. They register here when they are imported
(``import pyblosc2`` sets a loader that imports them on the first :func:`provider` call).
An NDArray's ``create_index``/``index``/``indexes`` & co. and its writes, and the engine's
filters, ask :func:`provider` at call time. Without one, a write has nothing to tell and a
filter scans.

>>> from pyblosc2 import asarray
>>> provider() is not None    # the loader import pyblosc2 set imported pyblosc2.indexes
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Provider", "provider", "register", "set_loader"]


class Provider(Protocol):
    """What an NDArray and a filter ask of the indexes."""

    def call(self, fn: str, array: Any, /, *args: Any, **kwargs: Any) -> Any:
        """The index function ``fn`` (``"create_index"``, ``"index"``, ...) of ``array``."""

    def mutated(self, array: Any) -> None:
        """After a write or resize of ``array``: its indexes are stale."""

    def appended(self, array: Any, old_size: int, rows: Any) -> None:
        """After ``append``: keep the indexes current."""

    def filter(self, expr: Any, use_index: bool) -> Any:
        """``(values, positions)`` of a lazy filter answered through an index, or None."""


_slot: list[Provider] = []
_loader: list[Callable[[], object]] = []


def register(new: Provider) -> Provider | None:
    """Make ``new`` the provider; returns the one it replaces (None for the first)."""
    old = _slot[0] if _slot else None
    _slot[:] = [new]
    return old


def set_loader(load: Callable[[], object]) -> None:
    """``load()`` imports the indexes (which register their provider) the first time the
    provider is asked for: ``import pyblosc2`` does not import them."""
    _loader[:] = [load]


def provider() -> Provider | None:
    """The registered provider (the loader called first when none is), or None."""
    if not _slot and _loader:
        _loader[0]()
    return _slot[0] if _slot else None
