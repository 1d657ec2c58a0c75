"""A CTable column's aggregates (python-blosc2's ``Column.sum``, ``min``, ``max``, ``mean``,
``std``, ``argmin``, ``argmax``, ``any``, ``all``, ``unique``, ``value_counts``), over the
live rows only, read a chunk of rows at a time.

``sum(where=...)`` takes a condition as ``CTable.where`` does (a lazy expression, a bool
column, a bool array of physical or logical length, or a string expression) and adds the
rows where it holds. An empty column has no minimum, maximum, mean or deviation
(:class:`~pyblosc2.errors.ParamError`, "empty"); an empty *view* gives NaN for the mean and
deviation, as python-blosc2 does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..compute.lazyexpr import LazyExpr
from ..errors import ParamError, ParamTypeError
from ..ndarray.ndarray import NDArray
from .base import mask_from_positions
from .indexstats import rank_index_mask, summary_minmax, summary_minmax_source

__all__ = ["ColumnStats"]

_KIND_NAMES = {
    "b": "bool", "i": "signed int", "u": "unsigned int", "f": "float", "c": "complex",
    "U": "string", "S": "bytes",
}  # fmt: skip


class ColumnStats:
    """The aggregates of :class:`~pyblosc2.ctable.column.Column` (a mixin)."""

    _table: Any
    _mask: Any
    _col_name: str

    # provided by Column
    def __len__(self) -> int:
        raise NotImplementedError  # pragma: no cover

    @property
    def dtype(self) -> np.dtype[Any]:
        raise NotImplementedError  # pragma: no cover

    def iter_chunks(self, size: int = 65536) -> Iterator[np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def _resolve_live_positions(self) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def _read(self, where: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    @property
    def _raw_col(self) -> Any:
        raise NotImplementedError  # pragma: no cover

    # -- checks ---------------------------------------------------------------------------
    def _require_kind(self, kinds: str, op: str) -> None:
        if self.dtype.kind not in kinds:
            name = _KIND_NAMES.get(self.dtype.kind, self.dtype.kind)
            raise ParamTypeError(
                f"Column.{op}() is not supported for dtype {self.dtype!r} ({name})."
            )

    def _require_nonempty(self, op: str) -> None:
        if len(self) == 0:
            raise ParamError(f"Column.{op}() called on an empty column.")

    def _empty_view(self) -> bool:
        return len(self) == 0 and (self._table.base is not None or self._mask is not None)

    # -- where= ---------------------------------------------------------------------------
    def _lazy_nonnull_mask(self, where: Any = None) -> Any:
        """The rows a reduction covers, as a lazy condition over the physical rows (None:
        all of them): ``where`` alone when every physical row is live."""
        table = self._table
        everything = self._mask is None and table._dense() and len(table) == table._physical_len()
        if everything:
            return where
        valid = table._valid_rows if self._mask is None else self._valid_rows_mask()
        return valid if where is None else valid & where

    def _valid_rows_mask(self) -> Any:
        return mask_from_positions(self._resolve_live_positions(), self._table._physical_len())

    def _chunks(self, where: Any = None, size: int = 1 << 16) -> Iterator[np.ndarray]:
        """The live values (those ``where`` selects), a chunk at a time."""
        if where is None and not self._may_have_nulls():
            yield from self.iter_chunks(size)
            return
        chosen = self._resolve_live_positions()
        if where is not None:
            chosen = chosen[self._where_rows(where, chosen)]
        chosen = self._drop_nulls(chosen)  # reductions skip nulls (:mod:`.nullcol`)
        for start in range(0, chosen.size, size):
            yield self._read(chosen[start : start + size])

    def _may_have_nulls(self) -> bool:
        return False  # a nullable column's answer is :mod:`.nullcol`'s

    def _drop_nulls(self, positions: np.ndarray) -> np.ndarray:
        return positions

    def _where_rows(self, where: Any, positions: np.ndarray) -> np.ndarray:
        """Which of this column's rows (at physical ``positions``) ``where`` selects."""
        if isinstance(where, str):
            where = self._table._string_condition(where)
        if hasattr(where, "_col_name") and hasattr(where, "_raw_col"):
            where = where._raw_col
        if isinstance(where, LazyExpr):
            where = where.compute()
        mask = np.asarray(where[:] if isinstance(where, NDArray) else where)
        if mask.dtype != np.bool_ or mask.ndim != 1:
            raise ParamTypeError(f"where= takes a boolean row condition, got {mask.dtype}")
        if mask.size == self._table._physical_len():
            return mask[positions] if positions.size else np.zeros(0, np.bool_)
        if mask.size == positions.size:
            return mask
        raise ParamError(
            f"where= mask of {mask.size} rows for a column of {positions.size} live rows"
        )

    # -- reductions -----------------------------------------------------------------------
    def sum(
        self,
        dtype: Any = None,
        axis: Any = None,
        *,
        where: Any = None,
        jit: Any = None,
        jit_backend: Any = None,
    ) -> Any:
        """The sum of the live values (bools count as 0/1; 0 for an empty column).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(i,) for i in range(5)])
        >>> int(t.x.sum()), int(t.x.sum(where=t.x > 2))
        (10, 7)
        """
        self._require_kind("biufc", "sum")
        if axis not in (None, 0):
            raise ParamError(f"axis must be None or 0 for a column, got {axis!r}")
        kind = self.dtype.kind
        acc = (
            np.dtype(dtype)
            if dtype is not None
            else np.dtype(np.float64 if kind == "f" else np.complex128 if kind == "c" else np.int64)
        )
        total = acc.type(0)
        for chunk in self._chunks(where):
            total = total + np.sum(chunk, dtype=acc)
        return acc.type(total)

    def _extreme(self, op: str, where: Any) -> Any:
        self._require_kind("biufUS", op)
        found = None
        arg = np.argmin if op == "min" else np.argmax
        for chunk in self._chunks(where):
            if chunk.size:
                v = chunk[arg(chunk)]
                if found is not None:
                    pair = np.array([found, v])
                    v = pair[arg(pair)]
                found = v
        if found is None:
            raise ParamError(f"Column.{op}() called on an empty column (or all values are null).")
        return found.item() if self.dtype.kind in "US" else found

    def min(self, axis: Any = None, *, where: Any = None) -> Any:
        """The smallest live value (numbers, bools and strings).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> int(CTable(Row, new_data=[(3,), (1,), (2,)]).x.min())
        1
        """
        return self._extreme("min", where)

    def max(self, axis: Any = None, *, where: Any = None) -> Any:
        """The largest live value (numbers, bools and strings).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> int(CTable(Row, new_data=[(3,), (1,), (2,)]).x.max())
        3
        """
        return self._extreme("max", where)

    def _arg(self, op: str, where: Any) -> int:
        self._require_kind("biufUS", op)
        self._require_nonempty(op)
        if where is None and self._may_have_nulls():  # a null row is never the extremum
            keep = np.flatnonzero(~self.is_null())  # type: ignore[attr-defined]
            if keep.size == 0:
                raise ParamError(f"Column.{op}(): all values are null")
            found = np.asarray(self[keep])  # type: ignore[index]
            return int(keep[np.argmin(found) if op == "argmin" else np.argmax(found)])
        values = np.concatenate(list(self._chunks(where)) or [np.empty(0, self.dtype)])
        if values.size == 0:
            raise ParamError(f"Column.{op}() called on an empty column.")
        return int(np.argmin(values) if op == "argmin" else np.argmax(values))

    def argmin(self, axis: Any = None, *, where: Any = None) -> int:
        """The logical row of the smallest live value.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(3,), (1,), (2,)]).x.argmin()
        1
        """
        return self._arg("argmin", where)

    def argmax(self, axis: Any = None, *, where: Any = None) -> int:
        """The logical row of the largest live value.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(3,), (1,), (2,)]).x.argmax()
        0
        """
        return self._arg("argmax", where)

    def _moments(self, where: Any) -> tuple[int, Any, Any]:
        n, total, squares = 0, 0.0, 0.0
        kind = self.dtype.kind
        acc = np.complex128 if kind == "c" else np.float64
        for chunk in self._chunks(where):
            values = chunk.astype(acc)
            n += values.size
            total += values.sum()
            squares += (values * np.conj(values)).real.sum() if kind == "c" else (values**2).sum()
        return n, total, squares

    def mean(self, axis: Any = None, *, where: Any = None) -> Any:
        """The mean of the live values (NaN for an empty view).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> float(CTable(Row, new_data=[(1,), (2,)]).x.mean())
        1.5
        """
        self._require_kind("biufc", "mean")
        if self._empty_view():
            return np.float64(np.nan)
        self._require_nonempty("mean")
        n, total, _ = self._moments(where)
        return total / n if n else np.float64(np.nan)

    def std(self, ddof: int = 0, axis: Any = None, *, where: Any = None) -> Any:
        """The standard deviation of the live values (``ddof`` as in NumPy), by chunks.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> float(CTable(Row, new_data=[(1,), (3,)]).x.std())
        1.0
        """
        self._require_kind("biuf", "std")
        if self._empty_view():
            return np.float64(np.nan)
        self._require_nonempty("std")
        n, total, _ = self._moments(where)
        if n - ddof <= 0:
            return np.float64(np.nan)
        mean = total / n
        dev = 0.0
        for chunk in self._chunks(where):
            dev += ((chunk.astype(np.float64) - mean) ** 2).sum()
        return np.float64(np.sqrt(dev / (n - ddof)))

    def any(self) -> bool:
        """Whether some live value is True (a bool column).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     ok: bool = False
        >>> CTable(Row, new_data=[(False,), (True,)]).ok.any()
        True
        """
        self._require_kind("b", "any")
        return any(bool(np.any(c)) for c in self._chunks())

    def all(self) -> bool:
        """Whether every live value is True (a bool column; True when empty).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     ok: bool = False
        >>> CTable(Row, new_data=[(False,), (True,)]).ok.all()
        False
        """
        self._require_kind("b", "all")
        return all(bool(np.all(c)) for c in self._chunks())

    def unique(self) -> np.ndarray:
        """The sorted distinct live values.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(2,), (1,), (2,)]).x.unique()
        array([1, 2])
        """
        parts = [np.unique(c) for c in self._chunks()]
        if not parts:
            return np.empty(0, dtype=self.dtype)
        return np.unique(np.concatenate(parts))

    def value_counts(self) -> dict[Any, int]:
        """``{value: count}`` of the live values, the most frequent first.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(2,), (1,), (2,)]).x.value_counts()
        {2: 2, 1: 1}
        """
        counts: dict[Any, int] = {}
        for chunk in self._chunks():
            values, n = np.unique(chunk, return_counts=True)
            for v, c in zip(values.tolist(), n.tolist(), strict=True):
                counts[v] = counts.get(v, 0) + c
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def _index_summary_minmax(self, op: str) -> Any:
        """min/max from the column index's block summaries, or NotImplemented where they
        are not the scan's answer (:mod:`.indexstats`)."""
        return summary_minmax(self, op)

    def _dictionary_index_mask(self, value: Any) -> Any:
        """python-blosc2's: the physical rows equal to ``value`` from the column's rank
        index, or None (:func:`.indexstats.rank_index_mask`)."""
        return rank_index_mask(self, value)

    def _summary_minmax_source(self) -> Any:
        """python-blosc2's: what :meth:`_index_summary_minmax` reads, or None."""
        return summary_minmax_source(self)
