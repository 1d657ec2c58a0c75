"""A column of a CTable as its users index it: by logical row (deleted rows skipped).

``t["x"][:]`` reads the live values as a NumPy array, ``t["x"][i]`` one value, ``t["x"][a:b]``,
a list of rows or a boolean mask some of them; ``t["x"][i] = v`` writes in place. Where no
row was deleted the logical rows are the leading physical ones and a read is one slice of
the stored NDArray; after deletions the live positions are looked up in ``_valid_rows``.
Comparisons (``t["x"] > 3``) are conditions for ``CTable.where`` (:mod:`.query`);
arithmetic over columns (python-blosc2's lazy expressions) raises
:class:`NotImplementedError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np

from ..errors import BoundsError, ParamTypeError
from ..ndarray.ndarray import NDArray
from .query import Predicate, compare
from .rows import to_column
from .schema import TableColumn

__all__ = ["Column"]


def _logical_positions(key: Any, n: int) -> np.ndarray | slice | int:
    """``key`` over ``n`` logical rows: an int, a slice, or an array of row numbers."""
    if isinstance(key, int | np.integer) and not isinstance(key, bool):
        i = int(key)
        if not -n <= i < n:
            raise BoundsError(f"row {i} is out of range for a column of {n} rows")
        return i + n if i < 0 else i
    if isinstance(key, slice):
        start, stop, step = key.indices(n)
        return slice(start, max(stop, start), 1) if step == 1 else np.arange(start, stop, step)
    arr = np.asarray(key)
    if arr.dtype == np.bool_:
        if arr.shape != (n,):
            raise BoundsError(f"a boolean mask of shape {arr.shape} for {n} rows")
        return np.flatnonzero(arr)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise ParamTypeError(f"rows are selected by int, slice, int list or bool mask: {key!r}")
    if arr.size and (arr.min() < -n or arr.max() >= n):
        raise BoundsError(f"row numbers {key!r} out of range for a column of {n} rows")
    return np.where(arr < 0, arr + n, arr)


def write_positions(arr: NDArray, where: np.ndarray, values: Any) -> None:
    """``arr[where] = values`` for physical positions ``where`` (any order; a repeated one
    takes its last value): one read and one write (one commit) of the span they cover.

    >>> import pyblosc2
    >>> a = pyblosc2.zeros(10, dtype=np.int64)
    >>> write_positions(a, np.array([2, 5]), 7)
    >>> a[:].tolist()
    [0, 0, 7, 0, 0, 7, 0, 0, 0, 0]
    """
    if where.size == 0:
        return
    lo, hi = int(where.min()), int(where.max()) + 1
    span = np.array(arr[lo:hi], dtype=arr.dtype)
    span[where - lo] = values
    arr[lo:hi] = span


class _Table(Protocol):
    """What a column asks of its table."""

    _arrays: dict[str, NDArray]
    _column_defs: dict[str, TableColumn]

    def __len__(self) -> int: ...
    def _dense(self) -> bool: ...
    def _live_positions(self) -> np.ndarray: ...
    def _check_writable(self) -> None: ...
    def _changed(self, *, rows_deleted: bool = False) -> None: ...


class Column:
    """One column of a :class:`CTable`, indexed by logical row.

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> from pyblosc2.ctable import CTable
    >>> t = CTable(Row)
    >>> t.extend({"x": [5, 6, 7]})
    >>> t.delete(0)
    >>> t["x"][:], t["x"][-1]
    (array([6, 7]), np.int64(7))
    """

    def __init__(self, table: _Table, name: str) -> None:
        self._table = table
        self.name = name

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._table._arrays[self.name].dtype

    def __len__(self) -> int:
        return len(self._table)

    def _physical(self, key: Any) -> np.ndarray | slice | int:
        """The physical positions of logical ``key``."""
        table = self._table
        logical = _logical_positions(key, len(table))
        if table._dense():
            return logical
        live = table._live_positions()
        if isinstance(logical, int):
            return int(live[logical])
        return live[logical]

    def __getitem__(self, key: Any) -> Any:
        arr = self._table._arrays[self.name]
        where = self._physical(key)
        if isinstance(where, np.ndarray):
            if where.size == 0:
                return np.empty(0, dtype=arr.dtype)
            lo, hi = int(where.min()), int(where.max()) + 1
            return arr[lo:hi][where - lo]
        if isinstance(where, int):
            return np.asarray(arr[where])[()]  # a NumPy scalar, as python-blosc2 gives
        return arr[where]

    def __setitem__(self, key: Any, value: Any) -> None:
        table = self._table
        table._check_writable()
        col = table._column_defs[self.name]
        where = self._physical(key)
        arr = table._arrays[self.name]
        if isinstance(where, int):
            arr[where] = to_column(col, [value])[0]
        elif isinstance(where, slice):
            count = where.stop - where.start
            arr[where] = to_column(col, np.broadcast_to(np.asarray(value), (count,)))
        else:
            values = to_column(col, np.broadcast_to(np.asarray(value), where.shape))
            write_positions(arr, where, values)
        table._changed()

    def __iter__(self) -> Iterator[Any]:
        return iter(self[:])

    def to_numpy(self) -> np.ndarray:
        """The live values as a NumPy array."""
        return np.asarray(self[:])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"Column({self.name!r}, dtype={self.dtype}, len={len(self)})"

    # -- conditions for CTable.where ------------------------------------------------------
    def _compare(self, sign: str, other: Any) -> Predicate:
        arrays = self._table._arrays
        if isinstance(other, Column):
            return compare(arrays, self.name, sign, (other._table._arrays, other.name))
        return compare(arrays, self.name, sign, other)

    def __lt__(self, other: Any) -> Predicate:
        return self._compare("<", other)

    def __le__(self, other: Any) -> Predicate:
        return self._compare("<=", other)

    def __gt__(self, other: Any) -> Predicate:
        return self._compare(">", other)

    def __ge__(self, other: Any) -> Predicate:
        return self._compare(">=", other)

    def __eq__(self, other: object) -> Any:
        return self._compare("==", other)

    def __ne__(self, other: object) -> Any:
        return self._compare("!=", other)

    __hash__ = None  # type: ignore[assignment]

    def _no_arithmetic(self, *args: Any) -> Any:
        raise NotImplementedError("CTable column arithmetic (lazy column expressions)")

    __add__ = __sub__ = __mul__ = __truediv__ = _no_arithmetic
    __radd__ = __rsub__ = __rmul__ = __rtruediv__ = __neg__ = _no_arithmetic

    def _as_predicate(self) -> Predicate:
        """A bool column as a condition (``t.where(t["ok"])``, ``~t["ok"]``)."""
        arr = self._table._arrays[self.name]
        if arr.dtype != np.bool_:
            raise NotImplementedError(
                f"CTable column arithmetic: {self.name!r} ({arr.dtype}) is no condition"
            )
        return Predicate(self._table._arrays, lambda a, b: arr[a:b], self.name)

    def __invert__(self) -> Predicate:
        return ~self._as_predicate()

    def __and__(self, other: Any) -> Predicate:
        return self._as_predicate() & other

    def __or__(self, other: Any) -> Predicate:
        return self._as_predicate() | other

    def __xor__(self, other: Any) -> Predicate:
        return self._as_predicate() ^ other

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__
