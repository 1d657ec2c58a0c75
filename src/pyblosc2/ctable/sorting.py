"""``CTable.sort_by``: the rows ordered by one or more columns (python-blosc2 4.x's
semantics): a new table by default, a sorted view (``view=True``, or when sorting a view:
the parent's columns and the permutation only), or the table itself rewritten in place
(``inplace=True``). The sort is stable (NumPy's ``lexsort``); only the key columns are read
to build the permutation. python-blosc2 can take the permutation from a FULL index; pyblosc2
builds no index and always sorts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from .base import TableBase
from .column import read_positions
from .ndcells import refuse_cells
from .textops import sort_key

__all__ = ["TableSorting"]


def _key_name(key: Any) -> str:
    name = getattr(key, "_col_name", key)
    if not isinstance(name, str):
        raise ParamTypeError(f"sort keys are column names or columns, got {key!r}")
    return name


class TableSorting(TableBase):
    """``sort_by`` (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    def _sort_keys(self, cols: Any, ascending: Any) -> tuple[list[str], list[bool]]:
        names = [_key_name(c) for c in (cols if isinstance(cols, list | tuple) else [cols])]
        if not names:
            raise ParamError("sort_by needs at least one column")
        if isinstance(ascending, bool | np.bool_):
            orders = [bool(ascending)] * len(names)
        else:
            orders = [bool(a) for a in ascending]
            if len(orders) != len(names):
                raise ParamError(
                    f"ascending has {len(orders)} entries for {len(names)} sort columns"
                )
        for name in names:
            if name not in self._cols and name not in self._computed_cols:
                raise KeyError(f"No column named {name!r}. Available: {self.col_names}")
            kind = self._computed_cols[name]["dtype"].kind if name not in self._cols else None
            kind = kind or self._cols[name].dtype.kind
            if kind == "c":
                raise ParamTypeError(f"Column {name!r} is complex: it has no order to sort by")
        return names, orders

    def _order(self, names: list[str], orders: list[bool], live: np.ndarray) -> np.ndarray:
        keys = []
        for name, asc in zip(reversed(names), reversed(orders), strict=True):
            source = self._cols[name] if name in self._cols else self._computed_lazy(name)
            values = read_positions(source, live)
            if values.dtype.kind in "TO":  # variable-length text: a rank, nulls last
                flags = self[name]._nulls_at(live, values) if live.size else None  # type: ignore[index]
                values = sort_key(values)
                if flags is not None:  # a mask's or a sentinel's nulls rank as None's
                    values[flags] = np.iinfo(np.int64).max
                if not asc:  # descending, nulls still last
                    values = np.where(values == np.iinfo(np.int64).max, values, -values)
                keys.append(values)
                continue
            nulls = self[name]._nulls_at(live, values) if live.size else None  # type: ignore[index]
            if not asc:
                if values.dtype.kind in "US" or values.dtype == np.bool_:
                    # a descending text key: its rank, negated (ties keep their order)
                    _, values = np.unique(values, return_inverse=True)
                if values.dtype.kind in "iu":  # the complement reverses every width exactly
                    values = ~values
                else:
                    values = -values.astype(np.int64) if values.dtype.kind == "b" else -values
            keys.append(values)
            if nulls is not None and nulls.any():
                keys.append(nulls)  # nulls last, whatever the order
        return np.lexsort(keys)

    def sort_by(
        self,
        cols: Any,
        ascending: bool | list[bool] = True,
        *,
        inplace: bool = False,
        view: bool = False,
    ) -> Any:
        """The rows ordered by ``cols`` (a name, a column, or a list: the first the
        primary key), each ``ascending`` or not.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        ...     y: int = 0
        >>> t = CTable(Row, new_data=[(1, 5), (0, 5), (2, 3)])
        >>> t.sort_by(["y", "x"], ascending=[True, False]).x[:]
        array([2, 1, 0])
        """
        if inplace and view:
            raise ParamError("inplace=True and view=True are mutually exclusive.")
        if inplace and self.base is not None:
            raise ParamError("Cannot sort a view inplace (its columns are its parent's)")
        if inplace and self._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")
        names, orders = self._sort_keys(cols, ascending)
        refuse_cells(self, names, "sort by")
        live = self._live_positions()
        ordered = live[self._order(names, orders, live)] if live.size else live
        if inplace:
            self._rewrite_rows(ordered)
            return self
        if self.base is not None or view:
            return self._make_view(self._valid_rows, ordered)
        return self._gather(ordered)

    def _rewrite_rows(self, ordered: np.ndarray) -> None:
        """Write the rows at physical ``ordered`` as the leading rows, the rest deleted."""
        n = int(ordered.size)
        for arr in self._cols.values():
            values = read_positions(arr, ordered)
            if n:
                arr[:n] = values
        self._reorder_null_masks(ordered)
        valid = np.zeros(self._physical_len(), dtype=np.bool_)
        valid[:n] = True
        self._valid_rows[:] = valid
        self._n_rows = self._last_pos = n
        self._changed()  # the rows moved: values changed (indexes stale), not just deletes
