"""Row filters: comparisons of columns (``t["x"] > 3``, ``t["a"] == t["b"]``) combined with
``&``, ``|``, ``^`` and ``~``, evaluated by ``CTable.where`` block by block over the physical
rows, and the view ``where`` returns (python-blosc2's semantics: a table sharing its parent's
columns, with its own set of live rows; values written through it land in the parent).

Predicates are evaluated eagerly with NumPy, one block of rows at a time; python-blosc2's
string expressions and its index-accelerated paths are not implemented.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from ..ndarray.ndarray import NDArray

__all__ = ["Predicate", "compare"]

BLOCK_ROWS = 1 << 16
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


class Predicate:
    """A condition on the physical rows of the tables sharing ``arrays``."""

    def __init__(
        self, arrays: dict[str, NDArray], evaluate: Callable[[int, int], np.ndarray], text: str
    ) -> None:
        self.arrays, self._evaluate, self.text = arrays, evaluate, text

    def mask(self, start: int, stop: int) -> np.ndarray:
        """The condition over physical rows ``[start, stop)``."""
        return np.asarray(self._evaluate(start, stop), dtype=np.bool_)

    def _combine(self, other: Any, op: Callable[[Any, Any], Any], sign: str) -> Predicate:
        if hasattr(other, "_as_predicate"):  # a bool column
            other = other._as_predicate()
        if not isinstance(other, Predicate):
            raise ParamTypeError(f"{sign} combines two conditions, got {type(other).__name__}")
        if other.arrays is not self.arrays:
            raise ParamError("conditions on different tables cannot be combined")
        return Predicate(
            self.arrays,
            lambda a, b: op(self.mask(a, b), other.mask(a, b)),
            f"({self.text}) {sign} ({other.text})",
        )

    def __and__(self, other: Any) -> Predicate:
        return self._combine(other, operator.and_, "&")

    def __or__(self, other: Any) -> Predicate:
        return self._combine(other, operator.or_, "|")

    def __xor__(self, other: Any) -> Predicate:
        return self._combine(other, operator.xor, "^")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self) -> Predicate:
        return Predicate(self.arrays, lambda a, b: ~self.mask(a, b), f"~({self.text})")

    def __bool__(self) -> bool:
        raise ParamTypeError("a column condition has no truth value; use & | ~ and where()")

    def __repr__(self) -> str:
        return f"Predicate({self.text})"


def compare(arrays: dict[str, NDArray], name: str, sign: str, other: Any) -> Predicate:
    """``column name <sign> other`` (a scalar, or another column of the same table given
    as ``(arrays, name)`` by the caller)."""
    op = _OPS[sign]
    arr = arrays[name]
    if isinstance(other, tuple) and len(other) == 2 and isinstance(other[0], dict):
        other_arrays, other_name = other
        if other_arrays is not arrays:
            raise ParamError("columns of different tables cannot be compared")
        right = arrays[other_name]
        return Predicate(
            arrays, lambda a, b: op(arr[a:b], right[a:b]), f"{name} {sign} {other_name}"
        )
    value = np.asarray(other)
    if value.ndim != 0:
        raise ParamTypeError(f"column {name!r} is compared with a scalar or a column")
    if arr.dtype.kind in "US" and value.dtype.kind not in "US":
        raise ParamTypeError(f"column {name!r} ({arr.dtype}) compared with {value.dtype}")
    if arr.dtype.kind in "iufcb" and value.dtype.kind not in "iufcb":
        raise ParamTypeError(f"column {name!r} ({arr.dtype}) compared with {value.dtype}")
    return Predicate(arrays, lambda a, b: op(arr[a:b], value), f"{name} {sign} {other!r}")


def filtered_mask(valid: Any, stop: int, condition: Predicate) -> np.ndarray:
    """The live rows of ``valid[:stop]`` where ``condition`` holds."""
    out = np.zeros(stop, dtype=np.bool_)
    for start in range(0, stop, BLOCK_ROWS):
        end = min(start + BLOCK_ROWS, stop)
        live = np.asarray(valid[start:end], dtype=np.bool_)
        if live.any():
            out[start:end] = live & condition.mask(start, end)
    return out
