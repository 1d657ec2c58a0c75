"""What every part of a CTable shares: its state, its rows by position, and its views.

A table (python-blosc2's layout) is one NDArray per column (``_cols``) and a ``_valid_rows``
bool NDArray, one item per physical row. A base table appends at the end of the physical
rows and deletes by clearing items of ``_valid_rows``; its live rows are the set items in
physical order. A *view* (what ``where``, slicing, ``head``, ``sort_by`` and ``select``
return) shares its parent's column arrays and has a ``_valid_rows`` of its own (a bool
NDArray of the same physical length); a view whose rows are in another order than the
physical one (a sorted view, ``t[[3, 1]]``, ``t[::-1]``) also keeps those physical positions
in order (``_cached_live_positions``). Views are read-only; ``base`` names the parent.

The operations on top (:mod:`.views`, :mod:`.sorting`, :mod:`.display`, :mod:`.schema_ops`,
:mod:`.persist`) are mixins of :class:`TableBase`; :class:`~pyblosc2.ctable.table.CTable`
puts them together.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from ..ndarray.constructors import asarray, zeros
from ..ndarray.ndarray import NDArray
from .schema import TableColumn
from .storage import TableStorage

__all__ = ["TableBase", "TableSchema", "mask_from_positions"]


@dataclasses.dataclass(frozen=True)
class TableSchema:
    """A table's stored columns, in order (python-blosc2's ``CompiledSchema`` fields).

    >>> TableSchema(()).columns_by_name
    {}
    """

    columns: tuple[TableColumn, ...]
    row_cls: Any = None  # the dataclass compiled (None when read from a document)

    @property
    def columns_by_name(self) -> dict[str, TableColumn]:
        """The columns by name."""
        return {c.name: c for c in self.columns}


def mask_from_positions(positions: np.ndarray, total: int) -> NDArray:
    """A bool NDArray of ``total`` items, set at ``positions``.

    >>> mask_from_positions(np.array([1, 3]), 5)[:].tolist()
    [False, True, False, True, False]
    """
    mask = np.zeros(total, dtype=np.bool_)
    mask[positions] = True
    return asarray(mask)


class TableBase:
    """The state of a table and what its operations ask of it."""

    base: Any = None  # the parent table of a view (python-blosc2's ``base``)
    _takes_rows = True  # pyblosc2.take(table, rows) is table.take(rows)
    _cached_live_positions: np.ndarray | None = None
    _varlog: Any = None  # a stored table's change log of its text/list/object columns
    _dep_cols: dict[str, NDArray] | None = None  # a projection's parent columns (computed deps)
    _cols: dict[str, NDArray]
    _valid_rows: NDArray
    _columns: list[TableColumn]
    _column_defs: dict[str, TableColumn]
    col_names: list[str]
    _computed_cols: dict[str, dict[str, Any]]
    _storage: TableStorage
    _read_only: bool
    _closed: bool
    _mutated: bool
    _n_rows: int
    _last_pos: int
    _row_type: Any
    _validate: bool
    _cparams: dict[str, Any] | None
    _dparams: dict[str, Any] | None

    def __len__(self) -> int:
        return self._n_rows

    def _set_columns(self, columns: list[TableColumn]) -> None:
        self._columns = list(columns)
        self._column_defs = {c.name: c for c in self._columns}
        computed = getattr(self, "_computed_cols", None) or {}
        self.col_names = [c.name for c in self._columns] + [n for n in computed]

    def _root_table(self) -> Any:
        """The table this one is a view of (itself when it is none)."""
        table: Any = self
        while table.base is not None:
            table = table.base
        return table

    def _known_n_rows(self) -> int:
        return self._n_rows

    # -- rows by position ---------------------------------------------------------------------
    def _dense(self) -> bool:
        """Whether the live rows are the leading physical rows, in order."""
        return (
            self._cached_live_positions is None
            and self.base is None
            and self._n_rows == self._last_pos
        )

    def _live_positions(self) -> np.ndarray:
        """The physical positions of the live rows, in the table's row order."""
        if self._cached_live_positions is not None:
            return self._cached_live_positions
        if self._dense():
            return np.arange(self._n_rows, dtype=np.int64)
        return np.flatnonzero(np.asarray(self._valid_rows[: self._last_pos])).astype(np.int64)

    def _live_positions_from_valid_rows_chunks(self) -> np.ndarray:
        return self._live_positions()

    def _physical_len(self) -> int:
        return int(self._valid_rows.shape[0])

    # -- writing ------------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self._closed and self._storage.owns_leaves:
            raise ParamError("the table is closed")
        if self._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")

    def _check_not_view(self, what: str) -> None:
        if self.base is not None:
            raise ParamTypeError(f"Cannot {what} a view (a table returned by where, a slice, ...)")

    def _changed(self, *, rows_deleted: bool = False) -> None:
        if self.base is not None:
            self.base._changed(rows_deleted=rows_deleted)
            return
        storage = self._storage
        if not self._mutated:  # a reader counts the live rows until close records them
            storage.update_schema(n_rows=None)
        self._mutated = True
        storage.mark_changed(rows_deleted=rows_deleted)

    # -- views --------------------------------------------------------------------------------
    def _make_view(self, mask: NDArray, positions: np.ndarray | None = None) -> Any:
        """A read-only table sharing this one's columns, its rows the set items of
        ``mask`` (or ``positions``, in that order)."""
        view = type(self).__new__(type(self))
        for name in (
            "_row_type", "_validate", "_cparams", "_dparams", "_cols", "_columns",
            "_column_defs", "col_names", "_computed_cols", "_read_only", "_dep_cols",
        ):  # fmt: skip
            setattr(view, name, getattr(self, name))
        view._storage = TableStorage(None)
        view._closed = view._mutated = False
        view.base = self
        view._valid_rows = mask
        if positions is not None:
            positions = np.asarray(positions, dtype=np.int64)
            view._cached_live_positions = positions
            view._n_rows = int(positions.size)
            view._last_pos = int(positions.max()) + 1 if positions.size else 0
        else:
            found = np.flatnonzero(np.asarray(mask[:]))
            view._cached_live_positions = None
            view._n_rows = int(found.size)
            view._last_pos = int(found[-1]) + 1 if found.size else 0
        return view

    def _view_from_positions(self, positions: np.ndarray) -> Any:
        positions = np.asarray(positions, dtype=np.int64)
        return self._make_view(mask_from_positions(positions, self._physical_len()), positions)

    # -- what the mixins give each other (CTable puts them together) ----------------------
    @classmethod
    def _from_storage(cls, storage: TableStorage) -> Any:
        raise NotImplementedError  # pragma: no cover  (CTable's)

    @classmethod
    def open(cls, urlpath: Any, *, mode: str = "r", mmap_mode: str | None = None) -> Any:
        raise NotImplementedError  # pragma: no cover  (CTable's)

    def _empty_copy(self, capacity: int) -> Any:
        raise NotImplementedError  # pragma: no cover  (CTable's)

    def _gather(self, physical: np.ndarray) -> Any:
        raise NotImplementedError  # pragma: no cover  (views')

    def _string_condition(self, expr: str) -> Any:
        raise NotImplementedError  # pragma: no cover  (views')

    def _rewrite_rows(self, ordered: np.ndarray) -> None:
        raise NotImplementedError  # pragma: no cover  (sorting's)

    def _save_columns(self) -> None:
        raise NotImplementedError  # pragma: no cover  (schema_ops')

    def _flush_var_log(self) -> None:
        raise NotImplementedError  # pragma: no cover  (table's: the change log, varlog.py)

    def _computed_lazy(self, name: str) -> Any:
        raise NotImplementedError  # pragma: no cover  (computed's)

    def _computed_doc(self) -> list[dict[str, Any]]:
        raise NotImplementedError  # pragma: no cover  (computed's)

    # (nullstore's: the validity sidecars of mask columns)
    def _write_nulls(self, name: str, where: Any, values: Any) -> None:
        raise NotImplementedError  # pragma: no cover

    def _copy_null_masks(self, out: Any, physical: np.ndarray) -> None:
        raise NotImplementedError  # pragma: no cover

    def _save_null_masks(self, storage: Any, physical: np.ndarray, arrays: Any) -> None:
        raise NotImplementedError  # pragma: no cover

    def _reorder_null_masks(self, ordered: np.ndarray) -> None:
        raise NotImplementedError  # pragma: no cover

    def _drop_null_mask(self, name: str) -> None:
        raise NotImplementedError  # pragma: no cover

    def _rename_null_mask(self, old: str, new: str) -> None:
        raise NotImplementedError  # pragma: no cover

    # (indexes': the table's indexes, kept current with its columns)
    def _index_condition(self, cond: Any) -> np.ndarray | None:
        return None  # pragma: no cover

    def _index_column_dropped(self, name: str) -> None:
        pass  # pragma: no cover

    def _index_column_renamed(self, old: str, new: str) -> None:
        pass  # pragma: no cover

    def _empty_mask(self) -> NDArray:
        return zeros((self._physical_len(),), dtype=np.bool_)
