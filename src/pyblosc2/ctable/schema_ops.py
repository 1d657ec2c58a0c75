"""Schema changes of a CTable (python-blosc2 4.x's ``add_column``, ``drop_column``,
``rename_column``): a column array added, removed or renamed, and the stored schema
document rewritten to match (the table-wide entries kept).

A new column is filled for the live rows from ``values`` (one per live row, checked against
its spec) or from its declared default; a table with rows and neither is refused. The new
array has the table's physical length, so deleted rows keep their places. On disk a dropped
column's leaf is deleted and a renamed one is written under its new key, then the old key
deleted. Views refuse all three (they share their parent's columns).
"""

from __future__ import annotations

import dataclasses
from dataclasses import MISSING
from typing import Any

import numpy as np

from .. import schema as specs
from ..errors import ParamError, ParamTypeError
from ..ndarray.constructors import zeros
from ..ndarray.ndarray import NDArray
from .base import TableBase
from .column import write_positions
from .ndcells import is_cells, physical_shape
from .nulls import resolve_nullable
from .rows import to_column
from .schema import TableColumn, check_column_name, check_stored_spec
from .storage import col_key
from .strings import VarColumn, delete_var_column, is_var, new_var_column, save_var_column

__all__ = ["TableSchemaOps", "column_from_spec"]


def column_from_spec(name: str, spec: Any) -> TableColumn:
    """The column ``name`` of ``spec``: a spec, or a ``blosc2.field(...)`` (its default
    and storage options).

    >>> column_from_spec("w", specs.float64()).dtype
    dtype('float64')
    """
    check_column_name(name)
    if isinstance(spec, dataclasses.Field):
        meta = spec.metadata.get(specs.FIELD_METADATA_KEY)
        if meta is None:
            raise ParamTypeError(f"column {name!r}: a field without a blosc2 spec")
        options = {k: meta.get(k) for k in ("cparams", "dparams", "chunks", "blocks")}
        return TableColumn(name, check_stored_spec(name, meta["spec"]), spec.default, **options)
    if not isinstance(spec, specs.SchemaSpec):
        raise ParamTypeError(f"column {name!r}: a spec or a blosc2.field, got {spec!r}")
    kind = getattr(spec, "kind", "")
    if kind in ("list", "dictionary"):
        raise ParamTypeError(f"add_column does not support {kind} columns in pyblosc2")
    return TableColumn(name, check_stored_spec(name, spec), MISSING)


class TableSchemaOps(TableBase):
    """Schema changes (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    def _check_schema_change(self, what: str) -> None:
        if self._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")
        if self.base is not None:
            raise ParamError(f"Cannot {what} a view.")
        self._check_writable()

    def _save_columns(self) -> None:
        storage = self._storage
        if storage.leaves is None:
            return
        doc = storage.load_schema()
        doc["columns"] = [c.to_dict() for c in self._columns]
        doc.pop("computed_columns", None)
        if self._computed_cols:
            doc["computed_columns"] = self._computed_doc()
        storage.replace_schema(doc)

    def add_column(self, name: str, spec: Any, values: Any = None) -> None:
        """Add column ``name`` (a spec or a ``blosc2.field`` with a default), filled from
        ``values`` (one per live row) or from the default.

        >>> import dataclasses, pyblosc2
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(1,), (2,)])
        >>> t.add_column("w", pyblosc2.field(pyblosc2.float64(), default=0.5))
        >>> t.add_column("z", pyblosc2.int8(), values=[7, 8])
        >>> t.col_names, t.w[:], t.z[:]
        (['x', 'w', 'z'], array([0.5, 0.5]), array([7, 8], dtype=int8))
        """
        self._check_schema_change("add a column to")
        if name in self._cols or name in self._computed_cols:
            raise ParamError(f"Column {name!r} already exists")
        col: TableColumn = resolve_nullable([column_from_spec(name, spec)], check_unknown=False)[0]
        n = len(self)
        if values is not None:
            raw = np.asarray(values[:] if isinstance(values, NDArray) else values)
            want = physical_shape(col.spec, n)
            if is_cells(col.spec) and raw.shape != want:
                raise ParamError(
                    f"add_column({name!r}) values= must have shape {want}, got {raw.shape}"
                )
            if raw.shape[:1] != (n,) or (raw.ndim != 1 and not is_cells(col.spec)):
                raise ParamError(
                    f"add_column({name!r}) values= requires {n} entries (one per live row), "
                    f"got shape {raw.shape}"
                )
            try:
                filled = to_column(col, raw)
            except ParamTypeError as exc:
                raise ParamTypeError(f"Cannot coerce values= to {col.dtype}: {exc}") from None
        elif n:
            if col.default is MISSING:
                raise ParamError(
                    f"add_column({name!r}) requires a default (blosc2.field(..., default=...)) "
                    "or values= for a table with rows"
                )
            filled = to_column(col, np.full(n, col.default))
        else:
            filled = np.empty(0, dtype=col.dtype)
        if col.default is not MISSING:
            to_column(col, [col.default])  # a bad default is refused before anything is made
        capacity = self._physical_len()
        kwargs: dict[str, Any] = {}
        for key in ("cparams", "dparams"):
            value = getattr(col, key) if getattr(col, key) is not None else getattr(self, f"_{key}")
            if value is not None:
                kwargs[key] = value
        arr: Any = (
            new_var_column(col.spec, capacity)  # type: ignore[arg-type]
            if is_var(col.spec)
            else zeros(
                physical_shape(col.spec, capacity),
                dtype=col.dtype,
                chunks=col.chunks,
                blocks=col.blocks,
                **kwargs,
            )
        )
        if n:
            if self._dense():
                arr[:n] = filled
            else:
                write_positions(arr, self._live_positions(), filled)
        if is_var(col.spec):  # strings.py's layout
            if self._storage.leaves is not None:
                save_var_column(self._storage, col_key(name), arr, self._last_pos)
            self._cols[name] = arr
            if self._varlog is not None:
                self._varlog.hook(name, arr)
        else:
            self._cols[name] = self._storage.install(col_key(name), arr)
        self._computed_cols = dict(self._computed_cols)
        self._set_columns([*self._columns, col])
        if n:
            self._write_nulls(
                name, slice(0, n) if self._dense() else self._live_positions(), filled
            )
        self._save_columns()
        self._changed()

    def drop_column(self, name: str) -> None:
        """Remove column ``name`` (its stored array too).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        ...     y: int = 0
        >>> t = CTable(Row)
        >>> t.drop_column("y")
        >>> t.col_names
        ['x']
        """
        self._check_schema_change("drop a column from")
        if name not in self._cols:
            raise KeyError(f"No column named {name!r}. Available: {self.col_names}")
        if len(self._columns) == 1:
            raise ParamError("Cannot drop the last column.")
        users = [c for c, cc in self._computed_cols.items() if name in cc.get("col_deps", ())]
        if users:
            raise ParamError(f"Cannot drop column {name!r}: computed columns {users} use it")
        del self._cols[name]
        spec = self._column_defs[name].spec
        self._set_columns([c for c in self._columns if c.name != name])
        self._save_columns()  # first: a kill after it leaves spare leaves, not a lost column
        self._storage.delete_array(col_key(name))
        self._drop_null_mask(name)
        if is_var(spec):
            delete_var_column(self._storage, col_key(name), spec)  # type: ignore[arg-type]
            self._flush_var_log()  # its logged changes go (a new column may take the name)
        self._index_column_dropped(name)
        self._changed()

    def rename_column(self, old: str, new: str) -> None:
        """Rename column ``old`` to ``new`` (its data and place kept).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(3,)])
        >>> t.rename_column("x", "y")
        >>> t.col_names, t.y[:]
        (['y'], array([3]))
        """
        self._check_schema_change("rename a column of")
        if old in self._computed_cols and new not in self._cols and new not in self._computed_cols:
            check_column_name(new)
            self._computed_cols = {
                (new if k == old else k): v for k, v in self._computed_cols.items()
            }
            self._set_columns(self._columns)
            self._save_columns()
            return
        if old not in self._cols:
            raise KeyError(f"No column named {old!r}. Available: {self.col_names}")
        if new in self._cols or new in self._computed_cols:
            raise ParamError(f"Column {new!r} already exists")
        check_column_name(new)
        users = [c for c, cc in self._computed_cols.items() if old in cc.get("col_deps", ())]
        if users:
            raise ParamError(f"Cannot rename column {old!r}: computed columns {users} use it")
        arr = self._cols[old]
        if self._storage.leaves is not None and isinstance(arr, VarColumn):
            save_var_column(self._storage, col_key(new), arr, self._last_pos)
        elif self._storage.leaves is not None:
            arr = self._storage.install(col_key(new), arr)
        self._cols = {
            (new if k == old else k): (arr if k == old else v) for k, v in self._cols.items()
        }
        self._set_columns(
            [dataclasses.replace(c, name=new) if c.name == old else c for c in self._columns]
        )
        self._rename_null_mask(old, new)
        self._save_columns()  # before the old leaves go: a kill leaves spare leaves
        if self._storage.leaves is not None and isinstance(arr, VarColumn):
            delete_var_column(self._storage, col_key(old), arr.spec)
            if self._varlog is not None:
                self._varlog.hook(new, arr)
            self._flush_var_log()  # the log named the old name
        elif self._storage.leaves is not None:
            self._storage.delete_array(col_key(old))
        self._changed()
        self._index_column_renamed(old, new)
