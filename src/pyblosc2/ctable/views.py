"""Row selections of a CTable: ``where``, ``view``, ``take``, ``slice``, ``head``, ``tail``,
``sample``, ``select`` and the row forms of ``t[...]`` (python-blosc2 4.x's semantics).

Every result but ``take`` and ``slice(copy=True)`` is a *view* (:mod:`.base`): it shares the
table's column arrays and has its own set of live rows, read-only. ``where`` takes a lazy
expression (``t.a > 3``, ``(t.a * t.b) >= 150``, ``blosc2.sin(t.a) > 0``), a bool column,
a bool NumPy array or NDArray (of the physical length, or of the live-row count: then entry
``i`` selects the ``i``-th live row, and a shorter one leaves the last rows out) or a string
expression over the column names (``"a * b >= 150"``, computed columns included), evaluated
by :mod:`pyblosc2.compute` over the physical rows and intersected with the live ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..compute.api import lazyexpr
from ..compute.lazyexpr import LazyExpr
from ..errors import BoundsError, ParamError, ParamTypeError
from ..ndarray.constructors import asarray
from ..ndarray.ndarray import NDArray
from .base import TableBase, mask_from_positions
from .colexpr import ColExpr
from .column import read_positions
from .kleene import kleene_condition
from .ndcells import refuse_cells_in_expr
from .nested import with_dotted_aliases
from .textexpr import mentions_text, text_condition

__all__ = ["TableViews"]


def _take_indices(indices: Any, size: int) -> np.ndarray:
    if isinstance(indices, NDArray):
        indices = indices[()]
    arr = np.asarray(indices)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ParamError("CTable.take indices must be a 1-D integer array")
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ParamTypeError("CTable.take indices must be integers")
    out = arr.astype(np.int64)
    out = np.where(out < 0, out + size, out)
    if np.any((out < 0) | (out >= size)):
        raise BoundsError("CTable.take index out of bounds")
    return out


def _as_array(values: Any) -> np.ndarray:
    """A column's values as an array (a list of texts or lists as a 1-d object array)."""
    if isinstance(values, np.ndarray):
        return values
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


class TableViews(TableBase):
    """Row selections (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    # -- conditions -----------------------------------------------------------------------
    def _expression_operands(self) -> dict[str, Any]:
        ops: dict[str, Any] = {n: self._cols[n] for n in self._cols}
        for name in self._computed_cols:
            ops[name] = self._computed_lazy(name)
        return ops

    def _string_condition(self, expr: str) -> Any:
        """A string expression over this table's columns, as a lazy expression."""
        text, ops = with_dotted_aliases(expr.strip(), self._expression_operands())
        if mentions_text(text, ops):  # text columns: textexpr.py's walker
            return text_condition(text, ops, self._physical_len())
        for name, kind in ((n, a.dtype.kind) for n, a in ops.items()):
            if kind in "US" and _mentions(text, name):
                raise NotImplementedError(
                    f"CTable string expressions over the text column {name!r}"
                )
        return lazyexpr(text, {n: a for n, a in ops.items() if _mentions(text, n)} or ops)

    def _condition_mask(self, cond: Any) -> np.ndarray:
        """``cond`` as a bool mask of this table's physical rows (live rows only)."""
        if isinstance(cond, ColExpr):
            cond = cond._bind(self)
        if isinstance(cond, str):
            refuse_cells_in_expr(self, cond)  # ndcells.py: scalar columns only
            kleene = kleene_condition(self, cond)  # over nullable columns: three-valued
            cond = self._string_condition(cond) if kleene is None else kleene
        if hasattr(cond, "_col_name") and hasattr(cond, "_raw_col"):  # a bool Column
            cond = cond._kleene_operand()
        if type(cond).__name__ == "LazyUDF":  # evaluated whole (python-blosc2's DSL path too)
            cond = cond.compute()
        if isinstance(cond, LazyExpr):
            if cond.dtype != np.bool_:
                raise ParamTypeError(
                    f"Expected boolean blosc2.NDArray or LazyExpr, got {cond.dtype}"
                )
            if cond.ndim != 1:
                raise ParamError("CTable.where() requires a 1-D row mask")
            found = self._index_condition(cond)  # through the table's indexes (indexes.py)
            cond = cond[:] if found is None else found  # to numpy at once
        if isinstance(cond, list):
            cond = np.asarray(cond)
        if not isinstance(cond, NDArray | np.ndarray) or cond.dtype != np.bool_:
            got = getattr(cond, "dtype", type(cond).__name__)
            raise ParamTypeError(f"Expected boolean blosc2.NDArray or LazyExpr, got {got}")
        if cond.ndim != 1:
            raise ParamError("CTable.where() requires a 1-D row mask")
        mask = np.asarray(cond[:])
        total, n_live = self._physical_len(), len(self)
        live = self._live_positions()
        if mask.size <= n_live and not (mask.size == total and self._cached_live_positions is None):
            out = np.zeros(total, dtype=np.bool_)
            out[live[: mask.size][mask]] = True
            return out
        if mask.size > total:
            mask = mask[:total]
        elif mask.size < total:
            mask = np.concatenate([mask, np.zeros(total - mask.size, np.bool_)])
        out = np.zeros(total, dtype=np.bool_)
        out[live] = mask[live]
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The live rows as a structured array (text and list values as objects, an N-d
        cell column as a subarray field)."""
        columns = {name: _as_array(self[name][:]) for name in self.col_names}  # type: ignore[index]
        fields = [
            (n, v.dtype, v.shape[1:]) if v.ndim > 1 else (n, v.dtype) for n, v in columns.items()
        ]
        out = np.empty(len(self), dtype=np.dtype(fields))
        for name, values in columns.items():
            out[name] = values
        return out if dtype is None else out.astype(dtype)

    def where(self, expr_result: Any, *, columns: list[str] | None = None) -> Any:
        """A view of the rows where the condition holds: a lazy expression over columns,
        a bool column, a bool array, or a string expression over the column names.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        ...     y: float = 0.0
        >>> t = CTable(Row, new_data=[(i, i / 2) for i in range(10)])
        >>> t.where((t.x > 6) | (t.y < 1)).x[:]
        array([0, 1, 7, 8, 9])
        >>> t.where("x * y >= 32").x[:]
        array([8, 9])
        """
        mask = self._condition_mask(expr_result)
        positions = None
        if self._cached_live_positions is not None:
            live = self._cached_live_positions
            positions = live[mask[live]] if live.size else live
        view = self._make_view(asarray(mask), positions)
        return view if columns is None else view.select(list(columns))

    def view(self, new_valid_rows: Any) -> Any:
        """A view whose rows are the set items of a bool mask of the physical length.

        >>> import dataclasses, numpy as np
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(i,) for i in range(3)], expected_size=3)
        >>> t.view(np.array([True, False, True])).x[:]
        array([0, 2])
        """
        if isinstance(new_valid_rows, LazyExpr):
            new_valid_rows = new_valid_rows.compute()
        if isinstance(new_valid_rows, np.ndarray) and new_valid_rows.dtype == np.bool_:
            new_valid_rows = asarray(new_valid_rows)
        if not isinstance(new_valid_rows, NDArray) or new_valid_rows.dtype != np.bool_:
            raise ParamTypeError(
                f"Expected boolean blosc2.NDArray or LazyExpr, got {type(new_valid_rows).__name__}"
            )
        if new_valid_rows.shape != (self._physical_len(),):
            raise ParamError(
                f"a view mask of shape {new_valid_rows.shape} for {self._physical_len()} rows"
            )
        return self._make_view(new_valid_rows)

    # -- by position ----------------------------------------------------------------------
    def take(self, indices: Any, /) -> Any:
        """A new (writable, compact) table of the rows at logical ``indices``, in their
        order, repeats kept.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(i,) for i in range(5)]).take([4, -1, 0]).x[:]
        array([4, 4, 0])
        """
        rows = _take_indices(indices, len(self))
        physical = self._live_positions()[rows]
        return self._gather(physical)

    def _gather(self, physical: np.ndarray) -> Any:
        """A new table of the rows at physical positions ``physical``."""
        n = int(physical.size)
        out = self._empty_copy(capacity=max(n, 1))
        for name in [c.name for c in out._columns]:
            if n:
                out._cols[name][:n] = read_positions(self._cols[name], physical)
        if n:
            out._valid_rows[:n] = True
            self._copy_null_masks(out, physical)
        out._n_rows = out._last_pos = n
        return out

    def slice(self, start: Any, stop: Any = None, /, *, copy: bool = True) -> Any:
        """Logical rows ``[start, stop)`` (or a ``slice``): a copy, or a view with
        ``copy=False``.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(i,) for i in range(5)]).slice(1, 3).x[:]
        array([1, 2])
        """
        if isinstance(start, slice):
            if stop is not None:
                raise ParamTypeError("pass either a slice or start/stop integers, not both")
            key = start
        else:
            key = slice(0, start) if stop is None else slice(start, stop)
        if key.step not in (None, 1):
            raise ParamError("CTable.slice does not support a step")
        lo, hi, _ = key.indices(len(self))
        hi = max(lo, hi)
        if copy:
            return self.take(np.arange(lo, hi, dtype=np.int64))
        return self._positions_view(self._live_positions()[lo:hi])

    def _positions_view(self, positions: np.ndarray) -> Any:
        """A view of the rows at physical ``positions``: ordered only when they are not
        ascending (or this table is ordered)."""
        positions = np.asarray(positions, dtype=np.int64)
        ordered = self._cached_live_positions is not None or (
            positions.size > 1 and not np.all(np.diff(positions) > 0)
        )
        mask = mask_from_positions(positions, self._physical_len())
        return self._make_view(mask, positions if ordered else None)

    def head(self, N: int = 5) -> Any:
        """A view of the first ``N`` rows.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(i,) for i in range(9)]).head(2).x[:]
        array([0, 1])
        """
        return self._positions_view(self._live_positions()[: max(int(N), 0)])

    def tail(self, N: int = 5) -> Any:
        """A view of the last ``N`` rows.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(i,) for i in range(9)]).tail(2).x[:]
        array([7, 8])
        """
        n = max(int(N), 0)
        live = self._live_positions()
        return self._positions_view(live[max(live.size - n, 0) :] if n else live[:0])

    def sample(self, n: int, *, seed: int | None = None) -> Any:
        """A view of ``n`` rows drawn at random without replacement (all if fewer).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> len(CTable(Row, new_data=[(i,) for i in range(9)]).sample(3, seed=1))
        3
        """
        live = self._live_positions()
        if n <= 0:
            return self._positions_view(live[:0])
        if n >= live.size:
            return self._positions_view(live)
        chosen = np.sort(np.random.default_rng(seed).choice(live, size=n, replace=False))
        return self._positions_view(chosen)

    def _run_row_logic(self, key: Any) -> Any:
        """``t[slice]``, ``t[int list]``, ``t[bool mask]``: a view."""
        live = self._live_positions()
        if isinstance(key, slice):
            return self._positions_view(live[key])
        arr = np.asarray(list(key) if not isinstance(key, np.ndarray) else key)
        if arr.dtype == np.bool_:
            if arr.shape != (live.size,):
                raise BoundsError(
                    f"Boolean mask length {arr.size} does not match number of live rows "
                    f"{live.size}."
                )
            return self._positions_view(live[arr])
        if arr.size == 0:
            return self._positions_view(live[:0])
        if arr.dtype.kind not in "iu" or arr.ndim != 1:
            raise ParamTypeError(f"rows are selected by ints or a bool mask, got {arr.dtype}")
        if arr.min() < -live.size or arr.max() >= live.size:
            raise BoundsError(f"row index out of bounds for a table of {live.size} rows")
        return self._positions_view(live[arr])

    # -- columns --------------------------------------------------------------------------
    def select(self, cols: Iterable[str]) -> Any:
        """A view with only the columns ``cols`` (in that order), sharing their data.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        ...     y: int = 0
        >>> CTable(Row, new_data=[(1, 2)]).select(["y"]).col_names
        ['y']
        """
        names = list(cols)
        if not names:
            raise ParamError("select() requires at least one column name.")
        for name in names:
            if name not in self._cols and name not in self._computed_cols:
                raise KeyError(f"No column named {name!r}. Available: {self.col_names}")
        view = self._make_view(self._valid_rows, self._cached_live_positions)
        view._n_rows, view._last_pos = self._n_rows, self._last_pos
        view._dep_cols = self._dep_cols if self._dep_cols is not None else self._cols
        view._cols = {n: self._cols[n] for n in names if n in self._cols}
        view._computed_cols = {n: self._computed_cols[n] for n in names if n in self._computed_cols}
        view._columns = [self._column_defs[n] for n in names if n in self._column_defs]
        view._column_defs = {c.name: c for c in view._columns}
        view.col_names = names
        return view


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None
