"""``CTable``: python-blosc2 4.x's columnar table, as storage.

A table is a ``_valid_rows`` mask and one NDArray per column (:mod:`.storage` has the
layout), kept in memory, in a ``.b2d``/``.b2z`` store of its own (``urlpath=``), or inline
in a TreeStore (``tstore["/t"] = table``). Rows are appended at the end of the physical
rows, deleted by clearing their ``_valid_rows`` item, and read by logical row through
:class:`~pyblosc2.ctable.column.Column`. Appends grow the arrays by whole steps of spare
capacity; ``close`` trims it and records the row count (``n_rows``) in the schema, as
python-blosc2 does. Between the first change and ``close`` the stored schema has no
``n_rows``, so a reader counts the live rows instead of trusting an old count.

What python-blosc2's CTable does beyond storage (queries, indexes, sorting, group-by,
computed columns, nulls, Arrow/pandas/CSV/Parquet) raises :class:`NotImplementedError`
naming it (:data:`NOT_BUILT`).
"""

from __future__ import annotations

import collections
import os
import shutil
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from ..errors import BoundsError, FormatError, ParamError, ParamTypeError
from ..ndarray.constructors import zeros
from ..ndarray.ndarray import NDArray
from .column import Column, write_positions
from .query import Predicate, filtered_mask
from .rows import batch_to_columns, row_to_values, to_column
from .schema import TableColumn, compile_row_type, schema_from_dict, schema_to_dict
from .storage import (
    VALID_ROWS_KEY,
    TableStorage,
    check_mode,
    col_key,
    new_valid_rows,
    open_tree,
)

__all__ = ["NOT_BUILT", "CTable"]

DEFAULT_CAPACITY = 4096  # rows of a new table's arrays (python-blosc2 takes 2**20)
MAX_GROWTH = 1 << 20  # rows added at most per growth step (python-blosc2's _MAX_GROWTH_ROWS)

#: python-blosc2 CTable members pyblosc2 does not provide, and what they are
NOT_BUILT = {
    "where_expr": "CTable string and lazy-expression queries",
    "create_index": "CTable indexes (create_index)",
    "create_expr_index": "CTable indexes (create_expr_index)",
    "drop_index": "CTable indexes (drop_index)",
    "rebuild_index": "CTable indexes (rebuild_index)",
    "compact_index": "CTable indexes (compact_index)",
    "index": "CTable indexes (index)",
    "indexes": "CTable indexes (indexes)",
    "sort_by": "CTable sorting (sort_by)",
    "iter_sorted": "CTable sorting (iter_sorted)",
    "group_by": "CTable group_by",
    "describe": "CTable statistics (describe)",
    "cov": "CTable statistics (cov)",
    "select": "CTable column projections (select)",
    "view": "CTable views (view)",
    "take": "CTable views (take)",
    "slice": "CTable views (slice)",
    "head": "CTable views (head)",
    "tail": "CTable views (tail)",
    "sample": "CTable views (sample)",
    "add_column": "CTable schema changes (add_column)",
    "drop_column": "CTable schema changes (drop_column)",
    "rename_column": "CTable schema changes (rename_column)",
    "add_computed_column": "CTable computed columns",
    "add_materialized_column": "CTable materialized columns",
    "convert_nulls": "CTable nulls (convert_nulls)",
    "to_arrow": "CTable Arrow export",
    "from_arrow": "CTable Arrow import",
    "iter_arrow_batches": "CTable Arrow export",
    "to_pandas": "CTable pandas export",
    "from_pandas": "CTable pandas import",
    "to_parquet": "CTable Parquet export",
    "from_parquet": "CTable Parquet import",
    "to_csv": "CTable CSV export",
    "from_csv": "CTable CSV import",
    "to_cframe": "CTable cframes (to_cframe)",
    "compact": "CTable compaction (compact)",
    "vlmeta": "CTable user vlmeta",
}


class CTable:
    """A columnar compressed table with a typed schema (python-blosc2's ``CTable``).

    ``row_type`` is a dataclass: plain annotations (``int``, ``float``, ``bool``, ``str``,
    ``bytes``, ``complex``) or ``blosc2.field(spec, default=...)``. Without ``urlpath``
    the table lives in memory; with one it is a ``.b2d`` (or ``.b2z``) store, created with
    ``mode="w"``, reopened with ``"a"`` or ``"r"``.

    >>> import dataclasses, numpy as np
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    ...     y: float = 0.0
    >>> t = CTable(Row)
    >>> t.append(Row(x=1, y=0.5))
    >>> t.append({"x": 2, "y": 1.5})
    >>> t.extend({"x": np.arange(3, 6), "y": np.zeros(3)})
    >>> t.delete([0, 2])
    >>> len(t), t["x"][:]
    (3, array([2, 4, 5]))
    """

    def __init__(
        self,
        row_type: Any,
        new_data: Any = None,
        *,
        urlpath: str | os.PathLike[str] | None = None,
        mode: str = "a",
        expected_size: int | None = None,
        compact: bool = False,
        validate: bool = True,
        cparams: dict[str, Any] | None = None,
        dparams: dict[str, Any] | None = None,
        create_summary_index: bool = True,
    ) -> None:
        check_mode(mode)
        if expected_size is not None and (
            isinstance(expected_size, bool) or not isinstance(expected_size, int)
        ):
            raise ParamTypeError(f"expected_size must be an int, got {expected_size!r}")
        if expected_size is not None and expected_size < 1:
            raise ParamError(f"expected_size must be positive, got {expected_size}")
        if compact:
            raise NotImplementedError("CTable compaction (compact=True)")
        self._validate = bool(validate)
        self._cparams, self._dparams = cparams, dparams
        self._closed = False
        storage = TableStorage(None)
        if urlpath is not None:
            path = os.fspath(urlpath)
            if mode == "w" and os.path.exists(path):
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
            elif mode != "w" and not os.path.exists(path):
                raise FileNotFoundError(
                    f"No CTable found at {path!r}: mode={mode!r} opens an existing table; "
                    "use mode='w' to create a new one."
                )
            storage = TableStorage(open_tree(path, mode), owns_leaves=True)
            if mode != "w" and not storage.exists():  # a store of something else: untouched
                storage.close()
                raise FileNotFoundError(f"No CTable found at {path!r} (no /_meta manifest)")
        if storage.exists():
            if new_data is not None:
                storage.close()
                raise ParamError("new_data cannot be given when opening an existing table")
            self._attach(storage)
            self._row_type = row_type
            return
        self._row_type = row_type
        try:
            columns = compile_row_type(row_type)
        except BaseException:
            storage.close()
            raise
        if expected_size is None:
            n = len(new_data) if hasattr(new_data, "__len__") else 0
            expected_size = max(2 * n, DEFAULT_CAPACITY)
        self._create(storage, columns, expected_size)
        if new_data is not None:
            self.extend(new_data)

    # -- building ---------------------------------------------------------------------------
    base: CTable | None = None  # the parent table of a view (python-blosc2's ``base``)

    def _set_columns(self, columns: list[TableColumn]) -> None:
        self._columns = columns
        self._column_defs = {c.name: c for c in columns}
        self.col_names = [c.name for c in columns]

    def _create(self, storage: TableStorage, columns: list[TableColumn], capacity: int) -> None:
        self._set_columns(columns)
        self._storage = storage
        self._read_only = False
        self._valid = storage.install(VALID_ROWS_KEY, new_valid_rows(capacity))
        self._arrays: dict[str, NDArray] = {}
        for c in columns:
            kwargs: dict[str, Any] = {}
            cparams = c.cparams if c.cparams is not None else self._cparams
            dparams = c.dparams if c.dparams is not None else self._dparams
            if cparams is not None:
                kwargs["cparams"] = cparams
            if dparams is not None:
                kwargs["dparams"] = dparams
            arr = zeros((capacity,), dtype=c.dtype, chunks=c.chunks, blocks=c.blocks, **kwargs)
            self._arrays[c.name] = storage.install(col_key(c.name), arr)
        storage.save_schema(schema_to_dict(columns))
        self._n_rows, self._last_pos = 0, 0
        self._mutated = False

    def _attach(self, storage: TableStorage) -> None:
        """Open the table ``storage`` holds."""
        try:
            doc = storage.load_schema()
            self._set_columns(schema_from_dict(doc))
            self._storage = storage
            self._read_only = storage.read_only
            self._valid = storage.open_array(VALID_ROWS_KEY)
            valid = self._valid
            if valid.ndim != 1 or valid.dtype != np.bool_:
                raise FormatError(
                    "CTable", VALID_ROWS_KEY, 0, "a 1-d bool array", f"{valid.dtype} {valid.shape}"
                )
            self._arrays = {c.name: storage.open_array(col_key(c.name)) for c in self._columns}
            for c in self._columns:
                arr = self._arrays[c.name]
                if arr.ndim != 1 or arr.shape[0] < valid.shape[0] or arr.dtype != c.dtype:
                    raise FormatError(
                        "CTable",
                        col_key(c.name),
                        0,
                        f"a 1-d {c.dtype} array of at least {valid.shape[0]} rows",
                        f"{arr.dtype} {arr.shape}",
                    )
        except BaseException:
            storage.close()
            raise
        self._n_rows, self._last_pos = self._count_rows()
        self._mutated = False
        self._validate = True
        self._cparams = self._dparams = None
        self._closed = False

    def _count_rows(self) -> tuple[int, int]:
        """(live rows, one past the last live row), read chunk by chunk."""
        valid, n, last = self._valid, 0, 0
        step = max(int(valid.chunks[0]) if valid.chunks and valid.chunks[0] else 1, 1 << 16)
        for start in range(0, valid.shape[0], step):
            part = np.asarray(valid[start : start + step])
            found = np.flatnonzero(part)
            if found.size:
                n += found.size
                last = start + int(found[-1]) + 1
        return n, last

    @classmethod
    def _from_storage(cls, storage: TableStorage) -> CTable:
        obj = cls.__new__(cls)
        obj._row_type = None
        obj._attach(storage)
        return obj

    @classmethod
    def open(
        cls, urlpath: str | os.PathLike[str], *, mode: str = "r", mmap_mode: str | None = None
    ) -> CTable:
        """Open the table stored at ``urlpath`` (a ``.b2d`` directory or ``.b2z``).

        >>> import dataclasses, os, tempfile
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> path = os.path.join(tempfile.mkdtemp(), "t.b2d")
        >>> with CTable(Row, urlpath=path, mode="w") as t:
        ...     t.extend([(1,), (2,), (3,)])
        >>> CTable.open(path)["x"][:]
        array([1, 2, 3])
        """
        check_mode(mode)
        if mode == "w":
            raise ParamError("CTable.open opens an existing table: mode must be 'r' or 'a'")
        if mmap_mode not in (None, "r"):
            raise ParamError(f"mmap_mode must be None or 'r', got {mmap_mode!r}")
        if mmap_mode is not None and mode != "r":
            raise ParamError("mmap_mode requires mode='r'")
        path = os.fspath(urlpath)
        if not os.path.exists(path):
            raise FileNotFoundError(f"No CTable found at {path!r}")
        storage = TableStorage(open_tree(path, mode), owns_leaves=True)
        if not storage.exists():
            storage.close()
            raise FileNotFoundError(f"No CTable found at {path!r}")
        return cls._from_storage(storage)

    # -- size -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n_rows

    @property
    def nrows(self) -> int:
        """The number of live rows."""
        return self._n_rows

    @property
    def ncols(self) -> int:
        """The number of columns."""
        return len(self._columns)

    @property
    def schema(self) -> dict[str, Any]:
        """The schema document (as python-blosc2 stores it)."""
        return schema_to_dict(self._columns)

    def _dense(self) -> bool:
        """Whether the live rows are the leading physical rows (no deletion below them)."""
        return self._n_rows == self._last_pos

    def _live_positions(self) -> np.ndarray:
        return np.flatnonzero(np.asarray(self._valid[: self._last_pos]))

    # -- access -----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        """A column by name, or a row (a named tuple) by logical number."""
        if isinstance(key, str):
            if key not in self._column_defs:
                raise KeyError(f"no column {key!r} (columns: {self.col_names})")
            return Column(self, key)
        if isinstance(key, int | np.integer) and not isinstance(key, bool):
            values = [Column(self, name)[key] for name in self.col_names]
            return self._row_tuple()(*(v.item() if hasattr(v, "item") else v for v in values))
        raise NotImplementedError(f"CTable row selection by {type(key).__name__} (views)")

    def _row_tuple(self) -> Any:
        return collections.namedtuple("Row", self.col_names, rename=True)

    def __iter__(self) -> Iterator[Any]:
        cols = [Column(self, name)[:] for name in self.col_names]
        row = self._row_tuple()
        for values in zip(*(c.tolist() for c in cols), strict=True):
            yield row(*values)

    def __getattr__(self, name: str) -> Any:
        what = NOT_BUILT.get(name)
        if what is not None:
            raise NotImplementedError(f"CTable.{name}: {what} is not implemented by pyblosc2")
        raise AttributeError(f"'CTable' object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"CTable({self.nrows} rows, columns={self.col_names})"

    # -- queries ---------------------------------------------------------------------------
    def where(self, condition: Any) -> CTable:
        """A view of the rows where ``condition`` (column comparisons combined with
        ``&``, ``|``, ``^``, ``~``) holds; it shares this table's columns.

        >>> import dataclasses
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        ...     y: float = 0.0
        >>> t = CTable(Row)
        >>> t.extend({"x": range(10), "y": [i / 2 for i in range(10)]})
        >>> v = t.where((t["x"] > 6) | (t["y"] < 1))
        >>> v["x"][:], len(v)
        (array([0, 1, 7, 8, 9]), 5)
        """
        if isinstance(condition, str):
            raise NotImplementedError("CTable.where with a string expression")
        if isinstance(condition, Column):
            condition = condition._as_predicate()
        if not isinstance(condition, Predicate):
            raise ParamTypeError(
                f"where takes a condition on columns (t['x'] > 3), got {type(condition).__name__}"
            )
        if condition.arrays is not self._arrays:
            raise ParamError("the condition is on the columns of another table")
        return self._view(filtered_mask(self._valid, self._last_pos, condition))

    def _view(self, mask: np.ndarray) -> CTable:
        view = CTable.__new__(CTable)
        view._row_type, view._validate = self._row_type, True
        view._cparams, view._dparams = self._cparams, self._dparams
        view._set_columns(self._columns)
        view._arrays, view._storage = self._arrays, TableStorage(None)
        view._read_only, view._closed, view._mutated = self._read_only, False, False
        view.base = self
        found = np.flatnonzero(mask)
        view._valid = mask  # type: ignore[assignment]  # a view's rows: a numpy mask, never resized
        view._n_rows = int(found.size)
        view._last_pos = int(found[-1]) + 1 if found.size else 0
        return view

    # -- changes ----------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self._closed and self._storage.owns_leaves:
            raise ParamError("the table is closed")
        if self._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")

    def _check_not_view(self, what: str) -> None:
        if self.base is not None:
            raise ParamError(f"Cannot {what} a view (a table returned by where)")

    def _changed(self, *, rows_deleted: bool = False) -> None:
        if self.base is not None:  # values written through a view land in its parent
            self.base._changed(rows_deleted=rows_deleted)
            return
        storage = self._storage
        if not self._mutated:  # a reader counts the live rows until close records them
            storage.update_schema(n_rows=None)
        self._mutated = True
        storage.mark_changed(rows_deleted=rows_deleted)

    def _reserve(self, n: int) -> int:
        """The physical row where ``n`` new rows go, growing the arrays if needed."""
        pos = self._last_pos
        capacity = self._valid.shape[0]
        if pos + n > capacity:
            new = max(pos + n, capacity + min(max(capacity, 1), MAX_GROWTH))
            for arr in (*self._arrays.values(), self._valid):  # the mask last, as in close
                arr.resize((new,))
        return pos

    def append(self, data: Any) -> None:
        """Append one row: a dataclass instance, a mapping, or a sequence in column order."""
        self._check_writable()
        self._check_not_view("append to")
        values = row_to_values(self._columns, data)
        checked = [to_column(c, [v])[0] for c, v in zip(self._columns, values, strict=True)]
        pos = self._reserve(1)
        for c, v in zip(self._columns, checked, strict=True):
            self._arrays[c.name][pos] = v
        self._valid[pos] = True  # last: the row shows once its values are in
        self._last_pos, self._n_rows = pos + 1, self._n_rows + 1
        self._changed()

    def extend(self, data: Any, *, validate: bool | None = None) -> None:
        """Append many rows: a mapping of columns, a structured array, rows, or a CTable."""
        self._check_writable()
        self._check_not_view("extend")
        if isinstance(data, CTable):
            data = {name: data[name][:] for name in data.col_names}
        columns = batch_to_columns(self._columns, data)
        n = len(next(iter(columns.values())))
        if n == 0:
            return
        pos = self._reserve(n)
        for name, values in columns.items():
            self._arrays[name][pos : pos + n] = values
        self._valid[pos : pos + n] = True
        self._last_pos, self._n_rows = pos + n, self._n_rows + n
        self._changed()

    def delete(self, ind: Any) -> None:
        """Delete rows by logical number (an int, a slice or a list of them)."""
        self._check_writable()
        self._check_not_view("delete rows from")
        if isinstance(ind, str | bytes) or not (
            isinstance(ind, int | np.integer | slice) or hasattr(ind, "__iter__")
        ):
            raise ParamTypeError(f"rows to delete are an int, a slice or ints, got {ind!r}")
        live = self._live_positions()
        keys = list(ind) if not isinstance(ind, int | np.integer | slice) else ind
        try:
            gone = np.unique(np.atleast_1d(live[keys]))
        except IndexError:
            raise BoundsError(
                f"rows {ind!r} out of range for a table of {len(live)} rows"
            ) from None
        if gone.size == 0:
            return
        write_positions(self._valid, gone, False)
        self._n_rows -= int(gone.size)
        if int(gone[-1]) == self._last_pos - 1:
            rest = np.setdiff1d(live, gone, assume_unique=True)
            self._last_pos = int(rest[-1]) + 1 if rest.size else 0
        self._changed(rows_deleted=True)

    # -- saving elsewhere -------------------------------------------------------------------
    def _save_into(self, storage: TableStorage) -> None:
        """Write the live rows, compacted, as a new table in ``storage`` (python-blosc2
        saves a table into a store so: capacity = live rows, all valid)."""
        n = self._n_rows
        capacity = max(n, 1)
        valid = new_valid_rows(capacity)
        if n:
            valid[:n] = True
        storage.install(VALID_ROWS_KEY, valid)
        for c in self._columns:
            arr = zeros((capacity,), dtype=c.dtype, chunks=c.chunks, blocks=c.blocks)
            if n:
                arr[:n] = Column(self, c.name)[:]
            storage.install(col_key(c.name), arr)
        doc = schema_to_dict(self._columns)
        doc.update(n_rows=n, create_summary_index=True, summary_indexes_built=False)
        storage.save_schema(doc)

    def save(self, urlpath: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the live rows to a new ``.b2d``/``.b2z`` table at ``urlpath``."""
        path = os.fspath(urlpath)
        if os.path.exists(path) and not overwrite:
            raise ParamError(f"{path!r} exists; pass overwrite=True to replace it")
        if os.path.exists(path):
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        storage = TableStorage(open_tree(path, "w"), owns_leaves=True)
        try:
            self._save_into(storage)
        finally:
            storage.close()

    # -- closing ----------------------------------------------------------------------------
    def close(self) -> None:
        """Trim spare capacity, record the row count and close the store of the table."""
        if self._closed or self.base is not None:
            return
        self._closed = True
        storage = self._storage
        try:
            if not self._read_only and storage.leaves is not None and self._mutated:
                target = self._last_pos
                if 0 < target < self._valid.shape[0]:  # the mask first: never longer than a column
                    for arr in (self._valid, *self._arrays.values()):
                        arr.resize((target,))
                built = bool(storage.load_schema().get("summary_indexes_built", False))
                storage.update_schema(n_rows=self._n_rows, summary_indexes_built=built)
                self._mutated = False
        finally:
            storage.close()

    def __enter__(self) -> CTable:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False
