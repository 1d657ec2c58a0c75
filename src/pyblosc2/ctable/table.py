"""``CTable``: python-blosc2 4.x's columnar table, as storage.

A table is a ``_valid_rows`` mask and one NDArray per column (:mod:`.storage` has the
layout), kept in memory, in a ``.b2d``/``.b2z`` store of its own (``urlpath=``), or inline
in a TreeStore (``tstore["/t"] = table``). Rows are appended at the end of the physical
rows, deleted by clearing their ``_valid_rows`` item, and read by logical row through
:class:`~pyblosc2.ctable.column.Column`. Appends grow the arrays by whole steps of spare
capacity; ``close`` trims it and records the row count (``n_rows``) in the schema, as
python-blosc2 does. Between the first change and ``close`` the stored schema has no
``n_rows``, so a reader counts the live rows instead of trusting an old count.
What python-blosc2's CTable has and pyblosc2 does not raises :class:`NotImplementedError`
naming it (:data:`NOT_BUILT`); the operations are the mixins' (one module each).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from ..compute.lazyexpr import LazyExpr
from ..errors import BoundsError, FormatError, ParamError, ParamTypeError
from ..ndarray.constructors import zeros
from ..ndarray.ndarray import NDArray
from .arrow_io import TableArrow
from .base import TableSchema
from .colexpr import ColExpr
from .column import Column, write_positions
from .computed import TableComputed, computed_entries
from .csv_io import TableCSV
from .display import TableDisplay
from .grid import TableGrid, aligned_grid
from .groupby import TableGrouping
from .indexes import TableIndexes
from .ndcells import check_cells_array, is_cells, physical_shape
from .nested import namespace_of
from .nullconvert import TableNullConvert
from .nulls import resolve_nullable
from .nullstore import open_null_masks
from .objcol import ObjectColumn as _ObjectColumn  # noqa: F401 - registers object columns
from .persist import TablePersist
from .rows import batch_to_columns, row_class, row_to_values, to_column
from .schema import TableColumn, compile_row_type, schema_from_dict, schema_to_dict
from .schema_ops import TableSchemaOps
from .sorting import TableSorting
from .storage import (
    VALID_ROWS_KEY,
    TableStorage,
    check_mode,
    col_key,
    new_valid_rows,
    open_embed,
    open_tree,
)
from .strings import is_var, load_var_column, new_var_column
from .varlog import TableVarLog, VarLog
from .views import TableViews

__all__ = ["NOT_BUILT", "CTable", "ctable_from_cframe"]

#: the stored schema's entry saying text columns changed and were not written yet (pyblosc2's)
TEXT_PENDING = "pyblosc2_text_pending"

DEFAULT_CAPACITY = 4096  # rows of a new table's arrays (python-blosc2 takes 2**20)
MAX_GROWTH = 1 << 20  # rows added at most per growth step (python-blosc2's _MAX_GROWTH_ROWS)

#: python-blosc2 CTable members pyblosc2 does not provide, and what they are
NOT_BUILT = {
    "create_expr_index": "CTable indexes (create_expr_index)",
    "iter_sorted": "CTable sorting (iter_sorted)",
    "add_materialized_column": "CTable materialized columns",
    "materialize_computed_column": "CTable materialized (generated) columns",
    "add_generated_column": "CTable materialized (generated) columns",
    "refresh_generated_column": "CTable materialized (generated) columns",
    "refresh_generated_columns": "CTable materialized (generated) columns",
    "sorted_slice": "CTable sorted slices from a FULL index (sorted_slice)",
}


class CTable(
    TableVarLog,
    TableViews,
    TableSorting,
    TableDisplay,
    TableSchemaOps,
    TablePersist,
    TableComputed,
    TableGrouping,
    TableArrow,
    TableCSV,
    TableNullConvert,
    TableIndexes,
    TableGrid,
):
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
        self.auto_compact = bool(compact)  # python-blosc2 keeps the flag (and never acts on it)
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
            columns = resolve_nullable(compile_row_type(row_type))
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
    def _create(self, storage: TableStorage, columns: list[TableColumn], capacity: int) -> None:
        self._computed_cols = getattr(self, "_computed_cols", None) or {}
        self._set_columns(columns)
        self._storage = storage
        self._read_only = False
        chunks, blocks, on_grid = aligned_grid(columns, capacity)  # one grid: grid.py
        self._valid_rows = storage.install(VALID_ROWS_KEY, new_valid_rows(capacity, chunks, blocks))
        self._cols: dict[str, NDArray] = {}
        self._null_masks = {}
        for c in columns:
            own = (chunks, blocks) if c.name in on_grid else (c.chunks, c.blocks)
            kwargs: dict[str, Any] = {"chunks": own[0], "blocks": own[1]}
            cparams = c.cparams if c.cparams is not None else self._cparams
            dparams = c.dparams if c.dparams is not None else self._dparams
            if cparams is not None:
                kwargs["cparams"] = cparams
            if dparams is not None:
                kwargs["dparams"] = dparams
            if is_var(c.spec):  # kept in memory, stored on close (strings.py)
                self._cols[c.name] = new_var_column(c.spec, capacity)  # type: ignore[assignment,arg-type]
                continue
            arr = zeros(physical_shape(c.spec, capacity), dtype=c.dtype, **kwargs)
            self._cols[c.name] = storage.install(col_key(c.name), arr)
        storage.save_schema(schema_to_dict(columns))
        self._varlog = None
        self._store_var_columns(storage, 0)
        self._varlog = VarLog(storage, None, 0) if VarLog.wanted(storage) else None
        self._hook_var_columns()
        self._n_rows, self._last_pos = 0, 0
        self._mutated = False

    def _attach(self, storage: TableStorage) -> None:
        """Open the table ``storage`` holds."""
        try:
            doc = storage.load_schema()
            try:
                columns = schema_from_dict(doc)
            except ParamError as exc:  # the document is input from a file
                raise FormatError(
                    "CTable", "/_meta vlmeta 'schema'", 0, "a schema document", exc
                ) from None
            if doc.get(TEXT_PENDING):  # written by pyblosc2 before its change log (varlog.py)
                names = [c.name for c in columns if is_var(c.spec)]
                raise FormatError(
                    "CTable",
                    f"/_meta vlmeta 'schema' {TEXT_PENDING}",
                    0,
                    "absent (text columns written since the table's last change)",
                    f"true: the table was changed and not closed; its text columns {names} "
                    "hold their values as of its last close",
                )
            varlog = VarLog.open(storage)
            full = varlog.full if varlog is not None else set()
            self._computed_cols = {}
            self._set_columns(columns)
            self._storage = storage
            self._read_only = storage.read_only
            self._valid_rows = storage.open_array(VALID_ROWS_KEY)
            valid = self._valid_rows
            if valid.ndim != 1 or valid.dtype != np.bool_:
                raise FormatError(
                    "CTable", VALID_ROWS_KEY, 0, "a 1-d bool array", f"{valid.dtype} {valid.shape}"
                )
            live = valid if varlog is None else varlog.layout_live(valid)
            self._cols = {
                c.name: new_var_column(c.spec, valid.shape[0])  # type: ignore[misc,arg-type]
                if c.name in full and is_var(c.spec)
                else load_var_column(storage, col_key(c.name), c.spec, valid.shape[0], live)  # type: ignore[arg-type]
                if is_var(c.spec)
                else storage.open_array(col_key(c.name))
                for c in self._columns
            }
            for c in self._columns:
                arr = self._cols[c.name]
                if is_var(c.spec):
                    continue
                if is_cells(c.spec):
                    check_cells_array(col_key(c.name), c.spec, arr, valid.shape[0])  # type: ignore[arg-type]
                    continue
                if arr.ndim != 1 or arr.shape[0] < valid.shape[0] or arr.dtype != c.dtype:
                    raise FormatError(
                        "CTable",
                        col_key(c.name),
                        0,
                        f"a 1-d {c.dtype} array of at least {valid.shape[0]} rows",
                        f"{arr.dtype} {arr.shape}",
                    )
            self._null_masks = open_null_masks(storage, self._columns, valid.shape[0])
            if varlog is not None:  # the changes a writer made since the layout was written
                varlog.replay(self._columns, self._cols, valid.shape[0])
            try:
                self._install_computed(computed_entries(doc, self._cols))
            except FormatError:
                raise
            except ParamError as exc:  # an expression the engine refuses
                raise FormatError(
                    "CTable", "/_meta vlmeta 'schema' computed_columns", 0, "an expression", exc
                ) from None
        except BaseException:
            storage.close()
            raise
        self._n_rows, self._last_pos = self._count_rows()
        self._mutated = False
        self._varlog = None
        if VarLog.wanted(storage):
            self._varlog = varlog or VarLog(storage, None, self._last_pos)
            self._hook_var_columns()
            # a writer left changes in the log: this handle's close writes them in the layout
            self._mutated = varlog is not None
        self._validate = True
        self._cparams = self._dparams = None
        self._closed = False

    def _count_rows(self) -> tuple[int, int]:
        """(live rows, one past the last live row), read chunk by chunk."""
        valid, n, last = self._valid_rows, 0, 0
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
    @property
    def nrows(self) -> int:
        """The number of live rows."""
        return self._n_rows

    @property
    def ncols(self) -> int:
        """The number of columns (computed ones included)."""
        return len(self.col_names)

    @property
    def schema(self) -> TableSchema:
        """The table's columns (``columns``, ``columns_by_name``)."""
        return TableSchema(tuple(self._columns), self._row_type)

    def column_schema(self, name: str) -> TableColumn:
        """The stored column ``name`` (its spec, default and storage options).

        >>> import dataclasses
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row).column_schema("x").spec.kind
        'int64'
        """
        try:
            return self._column_defs[name]
        except KeyError:
            raise KeyError(f"No column named {name!r}. Available: {self.col_names}") from None

    def schema_dict(self) -> dict[str, Any]:
        """The schema document (as python-blosc2 stores it).

        >>> import dataclasses
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row).schema_dict()["columns"][0]["kind"]
        'int64'
        """
        return schema_to_dict(self._columns)

    # -- access -----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        """A column by name, a row (a named tuple) by logical number, a view of rows (a
        slice, ints, a bool mask, a condition) or of columns (a list of names)."""
        if isinstance(key, ColExpr):
            key = key._bind(self)
        if isinstance(key, str):
            if key in self._cols or key in self._computed_cols:
                return Column(self, key)
            if key.isidentifier():  # python-blosc2 evaluates it as an expression: ValueError
                raise ParamError(f"Unknown symbol: {key} (not a column of {self.col_names})")
            return self.where(key)
        if isinstance(key, LazyExpr | NDArray):
            return self.where(key)
        if isinstance(key, int | np.integer) and not isinstance(key, bool | np.bool_):
            return self._row(int(key))
        if isinstance(key, tuple):
            raise ParamTypeError("Tuple indexing is not supported for CTable")
        if isinstance(key, slice):
            return self._run_row_logic(key)
        if isinstance(key, np.ndarray | list | range):
            values = key.tolist() if isinstance(key, np.ndarray) else list(key)
            if values and all(isinstance(v, str) for v in values):
                return self.select(values)
            return self._run_row_logic(key)
        raise ParamTypeError(
            "Row selectors must be an int, slice, integer array/list, or boolean mask; "
            f"got {type(key).__name__}"
        )

    def __setitem__(self, key: str, value: Any) -> None:
        """``t["x"] = values``: all live values of column ``x``."""
        if not isinstance(key, str):
            raise ParamTypeError(f"t[key] = values takes a column name, got {key!r}")
        if self.base is not None:
            raise ParamTypeError("Cannot assign a column of a view; use take() or copy()")
        if key not in self._cols:
            raise KeyError(f"Column {key!r} does not exist. Available: {self.col_names}")
        Column(self, key)[:] = value

    def _row(self, i: int) -> Any:
        n = len(self)
        if not -n <= i < n:
            raise BoundsError(f"row {i} is out of range for a table of {n} rows")
        pos = int(self._live_positions()[i + n if i < 0 else i])
        values = [np.asarray(self._column_source(c)[pos : pos + 1])[0] for c in self.col_names]
        return self._row_tuple()(*self._row_cells(pos, values))  # a null cell: None

    def _column_source(self, name: str) -> Any:
        return self._computed_lazy(name) if name in self._computed_cols else self._cols[name]

    def _row_tuple(self) -> Any:
        return row_class(tuple(self.col_names))

    def __iter__(self) -> Iterator[Any]:
        yield from self._iter_rows(self._row_tuple(), [Column(self, n) for n in self.col_names])

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__"):
            cols = self.__dict__.get("_cols")
            computed = self.__dict__.get("_computed_cols") or {}
            if (cols is not None and name in cols) or name in computed:
                return Column(self, name)
            nested = namespace_of(self, (name,)) if cols is not None else None
            if nested is not None:  # t.trip.lon: the dotted column trip.lon (nested.py)
                return nested
        what = NOT_BUILT.get(name)
        if what is not None:
            raise NotImplementedError(f"CTable.{name}: {what} is not implemented by pyblosc2")
        raise AttributeError(f"'CTable' object has no attribute {name!r}")

    def _empty_copy(self, capacity: int) -> CTable:
        """A new in-memory table with this one's stored columns and no rows."""
        out = CTable.__new__(CTable)
        out._row_type, out._validate = self._row_type, True
        out._cparams, out._dparams = self._cparams, self._dparams
        out._closed = False
        out._computed_cols = {}
        out._create(TableStorage(None), list(self._columns), capacity)
        out._install_computed([{"name": n, **cc} for n, cc in self._computed_cols.items()])
        return out

    # -- changes ----------------------------------------------------------------------------
    def _reserve(self, n: int) -> int:
        """The physical row where ``n`` new rows go, growing the arrays if needed."""
        pos = self._last_pos
        capacity = self._valid_rows.shape[0]
        if pos + n > capacity:
            new = max(pos + n, capacity + min(max(capacity, 1), MAX_GROWTH))
            for arr in self._cols.values():
                arr.resize((new, *arr.shape[1:]))  # an N-d cell column keeps its cell axes
            self._resize_null_masks(new)
            self._valid_rows.resize((new,))  # the mask last, as in close
        return pos

    def append(self, data: Any) -> None:
        """Append one row: a dataclass instance, a mapping, or a sequence in column order."""
        self._check_writable()
        self._check_not_view("append to")
        values = row_to_values(self._columns, data)
        checked = [
            to_column(c, [v], bounds=self._validate)
            for c, v in zip(self._columns, values, strict=True)
        ]
        pos = self._reserve(1)
        for c, v in zip(self._columns, checked, strict=True):
            self._cols[c.name][pos] = np.asarray(v)[0]
            self._write_nulls(c.name, slice(pos, pos + 1), v)
        self._valid_rows[pos] = True  # last: the row shows once its values are in
        self._last_pos, self._n_rows = pos + 1, self._n_rows + 1
        self._changed()

    def extend(self, data: Any, *, validate: bool | None = None) -> None:
        """Append many rows: a mapping of columns, a structured array, rows, or a CTable."""
        self._check_writable()
        self._check_not_view("extend")
        if isinstance(data, CTable):
            data = {name: data[name].to_numpy(masked=True) for name in data.col_names}
        check = self._validate if validate is None else bool(validate)
        columns = batch_to_columns(self._columns, data, bounds=check)
        n = len(next(iter(columns.values())))
        if n == 0:
            return
        pos = self._reserve(n)
        for name, values in columns.items():
            self._cols[name][pos : pos + n] = np.asarray(values)
            self._write_nulls(name, slice(pos, pos + n), values)
        self._valid_rows[pos : pos + n] = True
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
        write_positions(self._valid_rows, gone, False)
        self._n_rows -= int(gone.size)
        if int(gone[-1]) == self._last_pos - 1:
            rest = np.setdiff1d(live, gone, assume_unique=True)
            self._last_pos = int(rest[-1]) + 1 if rest.size else 0
        self._changed(rows_deleted=True)

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
                # the text/list/object layouts first, while the table can hold their old rows
                self._store_var_columns(storage, target)
                if target > 0:  # the mask first: never longer than a column; each array
                    # on its own (a close killed after the mask left the others longer)
                    for arr in (self._valid_rows, *self._cols.values(), *self._masks().values()):
                        if arr.shape[0] > target:
                            arr.resize((target, *arr.shape[1:]))
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


def ctable_from_cframe(cframe: Any, *, copy: bool = True) -> Any:
    """The table a cframe made by ``CTable.to_cframe`` holds (read-only).

    >>> import dataclasses
    >>> from pyblosc2.ctable import CTable
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> len(ctable_from_cframe(CTable(Row, new_data=[(1,), (2,)]).to_cframe()))
    2
    """
    storage = TableStorage(open_embed(cframe, copy))
    if not storage.exists():
        raise ParamError("the EmbedStore of this cframe holds no CTable (no /_meta)")
    return CTable._from_storage(storage)
