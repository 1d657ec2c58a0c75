"""The validity sidecars of a table's mask-storage nullable columns (:mod:`.nulls`).

A sidecar is a 1-d bool NDArray at ``/_cols/<name>.notnull``, as long as the column (spare
capacity included), chunked as the column, ``True`` where the row is not null. It is made
on the first null written (all valid, then the null flags): a column that never held a null
has none, which means every row is valid. The tail a resize adds is written valid, so a
reader that trusts the sidecar over the whole physical length (python-blosc2 does, for
appended rows) never sees nulls in rows nobody wrote.

:class:`TableNulls` (a mixin of :class:`~pyblosc2.ctable.table.CTable`) keeps the open
sidecars of a root table in ``_null_masks`` and moves them with the rows: growth and trim,
copies, sorts in place, compaction, saves, and the schema changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import FormatError
from ..ndarray.constructors import full
from ..ndarray.ndarray import NDArray
from .base import TableBase
from .column import read_positions, write_positions
from .nullrewrite import rewrite_table_predicates
from .nulls import NOTNULL_SUFFIX, NULL_MASK, kind_of_spec, null_kind
from .schema import TableColumn
from .storage import TableStorage, col_key

__all__ = ["NullMasks", "TableNulls", "notnull_key"]


def notnull_key(name: str) -> str:
    """The key of column ``name``'s sidecar.

    >>> notnull_key("a")
    '/_cols/a.notnull'
    """
    return col_key(name) + NOTNULL_SUFFIX


def _new_mask(capacity: int, like: NDArray | None) -> NDArray:
    """An all-valid sidecar of ``capacity`` rows on the grid of the column ``like`` (the
    default grid of a bool array, as ``_valid_rows``'s, when None: a text column, whose
    offsets carry ``n + 1`` items, has no grid of rows to pin to)."""
    if like is None:
        return full((capacity,), True, dtype=np.bool_)
    chunks = (max(1, min(int(like.chunks[0]), capacity)),)
    blocks = (max(1, min(int(like.blocks[0]), chunks[0])),)
    return full((capacity,), True, dtype=np.bool_, chunks=chunks, blocks=blocks)


def open_null_masks(
    storage: TableStorage, columns: list[TableColumn], capacity: int
) -> dict[str, NDArray]:
    """The sidecars ``storage`` holds for the mask columns, each checked to be a 1-d bool
    array covering the ``capacity`` rows (else :class:`FormatError`)."""
    masks: dict[str, NDArray] = {}
    leaves = storage.leaves
    if leaves is None:
        return masks
    for c in columns:
        key = notnull_key(c.name)
        if null_kind(c.spec) != NULL_MASK or not leaves.has(key):
            continue
        arr = storage.open_array(key)
        if arr.ndim != 1 or arr.dtype != np.bool_ or arr.shape[0] < capacity:
            raise FormatError(
                "CTable", key, 0, f"a 1-d bool array of at least {capacity} rows",
                f"{arr.dtype} {arr.shape}",
            )  # fmt: skip
        masks[c.name] = arr
    return masks


class NullMasks(dict[str, NDArray]):
    """A root table's open sidecars by column name (python-blosc2's ``_null_masks``)."""

    def materialized(self) -> dict[str, NDArray]:
        """The sidecars open now."""
        return dict(self)

    def set(self, name: str, mask: NDArray) -> None:
        self[name] = mask


class TableNulls(TableBase):
    """Sidecar upkeep (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    @property
    def _null_masks(self) -> NullMasks:
        """The root table's open sidecars (a view shares its base's)."""
        root = self._root_table()
        masks = root.__dict__.get("_null_mask_cache")
        if masks is None:
            masks = root.__dict__["_null_mask_cache"] = NullMasks()
        return masks

    @_null_masks.setter
    def _null_masks(self, masks: dict[str, NDArray]) -> None:
        self.__dict__["_null_mask_cache"] = NullMasks(masks)

    def _row_cells(self, pos: int, values: list[Any]) -> list[Any]:
        """One row's cells (the values at physical row ``pos``, one per column) as Python
        objects, ``None`` where a mask column is null (not its fill; a sentinel column shows
        its sentinel, the value its writer chose)."""
        out = [v.item() if isinstance(v, np.generic) else v for v in values]  # N-d: arrays
        for i, name in enumerate(self.col_names):
            if name in self._null_masks and not self._null_masks[name][pos]:
                out[i] = None
        return out

    def _iter_rows(self, row: Any, columns: list[Any]) -> Any:
        """The rows (``row`` named tuples) of the live ``columns``, a chunk at a time,
        ``None`` in a mask column's null cell."""
        nulls = [c.is_null() if c._col_name in self._null_masks else None for c in columns]
        start = 0
        for parts in zip(*(c.iter_chunks() for c in columns), strict=True):
            cells = []
            for part, flags in zip(parts, nulls, strict=True):
                if isinstance(part, list):
                    items = part
                else:  # an N-d cell column's rows stay arrays
                    items = list(part) if part.ndim > 1 else part.tolist()
                if flags is not None and flags[start : start + len(items)].any():
                    for j in np.flatnonzero(flags[start : start + len(items)]).tolist():
                        items[j] = None
                cells.append(items)
            start += len(cells[0]) if cells else 0
            yield from (row(*v) for v in zip(*cells, strict=True))

    def _rewrite_null_predicates(
        self, expr: str, operands: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """python-blosc2's null guards of a ``where`` string (:mod:`.nullrewrite`)."""
        return rewrite_table_predicates(self, expr, operands)

    def _existing_null_masks(self) -> dict[str, NDArray]:
        """Every sidecar this table has (all are opened with the table)."""
        return self._null_masks.materialized()

    @property
    def _schema(self) -> Any:
        """The compiled columns (python-blosc2's ``CTable._schema``)."""
        return self.schema  # type: ignore[attr-defined]

    @property
    def _null_mask_names(self) -> list[str]:
        """The mask-storage columns (whether or not they have a sidecar yet)."""
        return [c.name for c in self._columns if null_kind(c.spec) == NULL_MASK]

    def _masks(self) -> dict[str, NDArray]:
        return self._null_masks

    def _null_mask(self, name: str) -> NDArray | None:
        """Column ``name``'s sidecar, or None when every row is valid."""
        return self._masks().get(name)

    def _grid(self, name: str) -> NDArray:
        """The array whose row grid column ``name``'s sidecar takes: the column's, or
        ``_valid_rows``'s for a text column (held in memory, :mod:`.strings`)."""
        arr = self._cols[name]
        return arr if isinstance(arr, NDArray) else self._valid_rows

    def _ensure_null_mask(self, name: str) -> NDArray:
        masks = self._masks()
        mask = masks.get(name)
        if mask is None:
            root = self._root_table()
            capacity = int(root._valid_rows.shape[0])
            mask = root._storage.install(notnull_key(name), _new_mask(capacity, root._grid(name)))
            masks[name] = mask
        return mask

    def _write_nulls(self, name: str, where: slice | np.ndarray, values: Any) -> None:
        """Record the validity of ``values`` just written at physical rows ``where``: their
        mask when they are a ``numpy.ma.MaskedArray`` (from :func:`.rows.to_column`),
        else all valid (written only where a sidecar exists)."""
        nulls = np.ma.getmaskarray(values) if isinstance(values, np.ma.MaskedArray) else None
        if nulls is not None and not nulls.any():
            nulls = None
        if nulls is None and self._null_mask(name) is None:
            return
        mask = self._ensure_null_mask(name)
        valid = np.ones(_count(where), np.bool_) if nulls is None else ~nulls
        if isinstance(where, slice):
            mask[where] = valid
        else:
            write_positions(mask, where, valid)

    def _resize_null_masks(self, capacity: int) -> None:
        for mask in self._masks().values():
            old = int(mask.shape[0])
            mask.resize((capacity,))
            if capacity > old:
                mask[old:capacity] = True

    def _null_flags(self, name: str, physical: np.ndarray) -> np.ndarray | None:
        """The null flags of column ``name`` at ``physical`` rows (None: a non-mask column
        or no sidecar)."""
        mask = self._null_mask(name)
        if mask is None:
            return None
        return ~read_positions(mask, physical)

    def _copy_null_masks(self, out: Any, physical: np.ndarray) -> None:
        """Give ``out`` (a new table of this one's rows at ``physical``, in its leading
        rows) the sidecars of those rows."""
        for name in list(self._masks()):
            nulls = self._null_flags(name, physical)
            if name in out._column_defs and nulls is not None and nulls.any():
                out._ensure_null_mask(name)[: nulls.size] = ~nulls

    def _save_null_masks(
        self, storage: TableStorage, physical: np.ndarray, arrays: dict[str, NDArray]
    ) -> None:
        """Write the sidecars of the rows at ``physical`` into ``storage``, a table being
        saved whose columns are ``arrays``."""
        for name in list(self._masks()):
            nulls = self._null_flags(name, physical)
            if name in self._column_defs and nulls is not None and nulls.any():
                like = arrays.get(name)  # None: a text column, on the table's grid
                mask = _new_mask(
                    max(int(physical.size), 1) if like is None else int(like.shape[0]), like
                )
                mask[: nulls.size] = ~nulls
                storage.install(notnull_key(name), mask)

    def _reorder_null_masks(self, ordered: np.ndarray) -> None:
        """The sidecars for rows rewritten as ``ordered`` (sort in place, compaction)."""
        n = int(ordered.size)
        for mask in self._masks().values():
            valid = read_positions(mask, ordered) if n else np.zeros(0, np.bool_)
            tail = np.ones(int(mask.shape[0]) - n, dtype=np.bool_)
            mask[:] = np.concatenate([valid, tail])

    def _drop_null_mask(self, name: str) -> None:
        self._masks().pop(name, None)
        self._storage.delete_array(notnull_key(name))

    def _rename_null_mask(self, old: str, new: str) -> None:
        mask = self._masks().pop(old, None)
        if mask is None:
            return
        values = np.asarray(mask[:])
        self._storage.delete_array(notnull_key(old))
        fresh = _new_mask(int(values.size), self._grid(new))
        fresh[:] = values
        self._masks()[new] = self._storage.install(notnull_key(new), fresh)

    def dropna(self, subset: list[str] | None = None) -> Any:
        """A view without the rows where a column of ``subset`` (every nullable column by
        default) is null.

        >>> import dataclasses
        >>> import pyblosc2 as blosc2
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = blosc2.field(blosc2.int64(nullable=True))
        >>> t = blosc2.CTable(Row, new_data=[(1,), (None,), (3,)])
        >>> t.dropna()["x"][:]
        array([1, 3])
        """
        names = subset
        if names is None:
            names = [c.name for c in self._columns if kind_of_spec(c.spec) != "none"]
        keep = np.ones(len(self), dtype=np.bool_)
        for name in names:
            keep &= self[name].notnull()  # type: ignore[index]
        return self.where(keep)  # type: ignore[attr-defined]


def _count(where: slice | np.ndarray) -> int:
    if isinstance(where, slice):
        return int(where.stop) - int(where.start)
    return int(np.asarray(where).size)
