"""The slot through which an NDArray's operators reach the compute engine.

The engine (:mod:`pyblosc2.compute`, layer 8.4) sits above this package: it builds lazy
expressions *of* NDArrays, so ``ndarray/`` cannot import it without an arrow pointing up.
Instead the engine registers itself here when it is imported (as the stores register their
openers), and :class:`~.operand.Operand`'s operators, ufuncs and reductions ask :func:`engine`
for it at call time. ``import pyblosc2`` does not import the engine: it sets a loader here
(:func:`set_loader`), called by the first :func:`engine` that finds the slot empty. The slot
holds one engine; registering again replaces it (the tests restore the previous one).

>>> from pyblosc2 import asarray
>>> type(asarray([1, 2]) + 1).__name__      # the registered engine answered
'LazyExpr'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Engine", "engine", "register", "set_loader"]


class Engine(Protocol):
    """What an operand asks of the compute engine (every method returns a lazy result, a
    reduced value, or ``NotImplemented`` for operands it does not take)."""

    def binary(self, op: str, left: Any, right: Any) -> Any:
        """``left op right`` for python-blosc2's operator symbols (``"+"``, ``"<"``, ``"&"``,
        ``"**"``, ``"<<"``, ...)."""

    def call(self, name: str, *args: Any) -> Any:
        """The elementwise function ``name`` (``"negative"``, ``"abs"``, ``"sin"``, ...)."""

    def ufunc(
        self, ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """numpy's ``__array_ufunc__`` protocol."""

    def reduce(self, name: str, operand: Any, kwargs: dict[str, Any]) -> Any:
        """The reduction ``name`` (``"sum"``, ``"argmax"``, ``"cumulative_sum"``, ...)."""

    def where(self, cond: Any, x: Any, y: Any) -> Any:
        """``cond.where(x, y)`` (``x``/``y`` None when not given)."""

    def select(self, array: Any, key: Any) -> Any:
        """``array[key]`` for a lazy boolean expression or an expression string."""


_slot: list[Engine] = []
_loader: list[Callable[[], object]] = []


def register(new: Engine) -> Engine | None:
    """Make ``new`` the engine; returns the one it replaces (None for the first)."""
    old = _slot[0] if _slot else None
    _slot[:] = [new]
    return old


def set_loader(load: Callable[[], object]) -> None:
    """``load()`` imports the engine (which registers itself) the first time it is asked for."""
    _loader[:] = [load]


def engine() -> Engine:
    """The registered engine (:mod:`pyblosc2.compute`, imported by the loader
    ``import pyblosc2`` sets when nothing registered it yet)."""
    if not _slot and _loader:
        _loader[0]()
    if not _slot:
        raise NotImplementedError(
            "lazy expressions need the compute engine: import pyblosc2 (pyblosc2.compute "
            "registers it)"
        )
    return _slot[0]
