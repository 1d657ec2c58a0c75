"""The null API of a CTable column (python-blosc2 4.x's names): ``null_value``,
``null_storage``, ``is_null``, ``notnull``, ``null_count``, ``fillna``, and what the
reductions and expressions ask of it (the rows to skip, a lazy null predicate).

A sentinel column's nulls are the rows holding its sentinel (NaN matches NaN, NaT for a
timestamp); a mask column's are the rows its sidecar marks not valid (:mod:`.nullstore`),
where NaN is a value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compute.api import lazyexpr
from ..ndarray.constructors import asarray
from .nulls import (
    NULL_CODE,
    NULL_MASK,
    NULL_NATIVE,
    NULL_NONE,
    NULL_SENTINEL,
    kind_of_spec,
    null_kind,
    sentinel_mask,
)
from .strings import null_mask

__all__ = ["ColumnNulls"]


class ColumnNulls:
    """Nulls of a column (a mixin of :class:`~pyblosc2.ctable.column.Column`)."""

    _table: Any
    _col_name: str

    def _resolve_live_positions(self) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover  (Column's)

    def __getitem__(self, key: Any) -> Any:
        raise NotImplementedError  # pragma: no cover  (Column's)

    def __len__(self) -> int:
        raise NotImplementedError  # pragma: no cover  (Column's)

    # -- what the column is ---------------------------------------------------------------
    @property
    def _null_spec(self) -> Any:
        col = self._table._column_defs.get(self._col_name)
        return None if col is None else col.spec

    @property
    def null_value(self) -> Any:
        """The sentinel standing for a null in this column, or None.

        >>> import dataclasses
        >>> import pyblosc2 as blosc2
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = blosc2.field(blosc2.int64(null_value=-1))
        >>> blosc2.CTable(Row)["x"].null_value
        -1
        """
        return getattr(self._null_spec, "null_value", None)

    @property
    def null_storage(self) -> str:
        """``"mask"`` (a validity sidecar), ``"sentinel"`` (an in-band value), ``"code"``
        (a dictionary's), ``"native"`` (``None`` cells: vlstring, vlbytes) or ``"none"``."""
        return kind_of_spec(self._null_spec)

    @property
    def _store(self) -> str:
        """Where the nulls of a fixed-width or utf8 column are: mask, sentinel or none."""
        return null_kind(self._null_spec)

    def _cell_nulls(self) -> np.ndarray | None:
        """A dictionary's or variable-length column's ``None`` cells over the physical rows
        (None for the other kinds)."""
        if self.null_storage not in (NULL_CODE, NULL_NATIVE):
            return None
        raw = self._table._cols[self._col_name]
        return null_mask(np.asarray(raw._values, dtype=object))

    def _null_info_items(self) -> list[tuple[str, object]]:
        """``info_items``' null rows: whether nullable, where the nulls are, and for a
        mask column whether its sidecar exists yet (it is made by the first null)."""
        spec = self._null_spec
        nullable = self.null_value is not None or bool(getattr(spec, "nullable", False))
        items: list[tuple[str, object]] = [("nullable", nullable)]
        if nullable:
            items.append(("null_storage", self.null_storage))
            if self._store == NULL_MASK:
                items.append(("null_sidecar", self._table._null_mask(self._col_name) is not None))
        return items

    # -- which rows are null --------------------------------------------------------------
    def _nulls_at(self, physical: np.ndarray, values: Any = None) -> np.ndarray | None:
        """Null flags of the rows at ``physical`` (their ``values`` if already read); None
        when none can be null."""
        kind = self._store
        if kind == NULL_MASK:
            mask = self._table._null_mask(self._col_name)
            if mask is None:
                return None
            full = np.asarray(mask[: int(physical.max()) + 1]) if physical.size else mask[:0]
            return ~np.asarray(full)[physical]
        if kind == NULL_SENTINEL:
            if values is None:
                values = self._table._cols[self._col_name]
                values = (
                    np.asarray(values[: int(physical.max()) + 1])[physical]
                    if physical.size
                    else values[:0]
                )
            return sentinel_mask(values, self.null_value)
        return None

    def is_null(self) -> np.ndarray:
        """True where the live value is null (one flag per live row).

        >>> import dataclasses
        >>> import pyblosc2 as blosc2
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: float = blosc2.field(blosc2.float64(nullable=True))
        >>> blosc2.CTable(Row, new_data=[(1.0,), (None,)])["x"].is_null()
        array([False,  True])
        """
        if self.null_storage in (NULL_CODE, NULL_NATIVE):  # None cells
            return null_mask(np.asarray(self[:], dtype=object))
        if self._store == NULL_NONE:
            return np.zeros(len(self), dtype=np.bool_)
        if self._store == NULL_SENTINEL:
            return sentinel_mask(np.asarray(self[:]), self.null_value)
        nulls = self._nulls_at(self._resolve_live_positions())
        return np.zeros(len(self), dtype=np.bool_) if nulls is None else nulls

    def notnull(self) -> np.ndarray:
        """True where the live value is not null."""
        return ~self.is_null()

    def null_count(self) -> int:
        """How many live values are null (0 at once for a column that cannot hold one)."""
        if self.null_storage == NULL_NONE:
            return 0
        if self._store == NULL_MASK and self._table._null_mask(self._col_name) is None:
            return 0
        return int(self.is_null().sum())

    def fillna(self, value: Any) -> np.ndarray:
        """The live values with the nulls replaced by ``value`` (a new array).

        >>> import dataclasses
        >>> import pyblosc2 as blosc2
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = blosc2.field(blosc2.int64(null_value=-1))
        >>> blosc2.CTable(Row, new_data=[(1,), (-1,)])["x"].fillna(0)
        array([1, 0])
        """
        if self.null_storage in (NULL_CODE, NULL_NATIVE):  # a list of cells, None the nulls
            return [value if v is None else v for v in self[:]]  # type: ignore[return-value]
        out = np.array(self[:], copy=True)
        out[self.is_null()] = value
        return out

    # -- what the reductions and expressions ask ------------------------------------------
    def _may_have_nulls(self) -> bool:
        kind = self._store
        return kind == NULL_SENTINEL or (
            kind == NULL_MASK and self._table._null_mask(self._col_name) is not None
        )

    def _drop_nulls(self, positions: np.ndarray) -> np.ndarray:
        """The physical ``positions`` whose value is not null."""
        nulls = self._nulls_at(positions) if positions.size else None
        return positions if nulls is None else positions[~nulls]

    def _null_pred(self) -> Any:
        """A lazy bool expression over the physical rows, True where the value is null;
        None when no row can be null."""
        kind = self._store
        cells = self._cell_nulls()
        if cells is not None:
            return asarray(cells) if cells.any() else None
        if kind == NULL_MASK:
            mask = self._table._null_mask(self._col_name)
            return None if mask is None else lazyexpr("~m", {"m": mask})
        if kind == NULL_SENTINEL:
            raw = self._table._cols[self._col_name]
            value = self.null_value
            if isinstance(value, float) and np.isnan(value):
                return lazyexpr("c != c", {"c": raw})
            if isinstance(value, str | bytes):  # text is compared in NumPy, as its values
                return asarray(sentinel_mask(np.asarray(raw[:]), value))
            return lazyexpr(f"c == {value!r}", {"c": raw})
        return None

    _raw_null_pred = _null_pred  # python-blosc2's name

    @property
    def _defers_nulls(self) -> bool:
        """Whether ``lazy & column`` is handed to this column (ndarray/operand.py): a
        nullable column combines by Kleene's rules and keeps its nulls in arithmetic."""
        return self._store != NULL_NONE

    @property
    def _is_nullable_bool(self) -> bool:
        """Whether this is a sentinel bool column (``uint8``: 0, 1 and 255 for null)."""
        return getattr(self._null_spec, "kind", "") == "bool" and self._store == NULL_SENTINEL

    def _kleene_operand(self) -> Any:
        """What this column is in a condition or arithmetic: a nullable bool column is
        three-valued (a :class:`~.kleene.NullableBoolExpr`), a nullable numeric one float64
        with NaN for its nulls (nulls propagate), any other its physical rows."""
        raw = self._table._cols.get(self._col_name)
        spec = self._null_spec
        kind = self._store
        if raw is None or kind == NULL_NONE:
            return self._raw_col  # type: ignore[attr-defined]
        if getattr(spec, "kind", None) != "bool":
            if raw.dtype.kind not in "iuf":
                return raw
            null = self._null_pred()  # arithmetic: a null is NaN, the values float64
            if null is None:
                return raw
            from .nullexpr import NullableExpr

            values = lazyexpr("where(n, nan, c)", {"n": null, "c": raw})
            return NullableExpr.make(values, null, self._table)
        from .kleene import NullableBoolExpr

        if kind == NULL_SENTINEL:  # 0, 1 and 255 (null) in a uint8 column
            return NullableBoolExpr.make(raw == 1, raw == 255, self._table)
        null = self._null_pred()
        return NullableBoolExpr.make(raw if null is None else raw & ~null, null, self._table)

    def _kleene_compare(self, result: Any, other: Any) -> Any:
        """A comparison's values, three-valued when a nullable column takes part."""
        from .kleene import NullableBoolExpr

        if other is None:  # ``col == None``: the null test itself, two-valued
            return result
        nullable = self.null_storage != NULL_NONE
        null = self._null_pred()
        if isinstance(other, ColumnNulls):
            nullable = nullable or other.null_storage != NULL_NONE
            theirs = other._null_pred()
            null = theirs if null is None else (null if theirs is None else null | theirs)
        if not nullable:
            return result
        if null is None:
            return NullableBoolExpr.make(result, None, self._table)
        return NullableBoolExpr.make(result & ~null, null, self._table)

    def _physical_nulls(self, n: int) -> np.ndarray:
        """Null flags of the physical rows ``[0, n)`` (deleted rows included)."""
        nulls = self._nulls_at(np.arange(n, dtype=np.int64)) if n else None
        return np.zeros(n, dtype=np.bool_) if nulls is None else nulls

    def isin(self, values: Any) -> np.ndarray:
        """True where the live value is one of ``values`` (two-valued: a null row matches
        only a ``None``, pandas NA or NaT in ``values``; NaN is a value of a mask column).

        >>> import dataclasses
        >>> import pyblosc2 as blosc2
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = blosc2.field(blosc2.int64(nullable=True))
        >>> t = blosc2.CTable(Row, new_data=[(1,), (None,), (3,)])
        >>> t["x"].isin([3, None]).tolist()
        [False, True, True]
        """
        from .nulls import is_na

        wanted = list(values)
        wants_null = any(is_na(v) for v in wanted)
        if getattr(self._null_spec, "kind", "") in ("vlstring", "vlbytes", "dictionary", "utf8"):
            found = super().isin(wanted)  # type: ignore[misc]  # the text kinds'
            if self._store != NULL_NONE:  # a utf8 column's "" or sentinel in its nulls
                found[self.is_null()] = wants_null
            return found
        test = [v for v in wanted if not is_na(v)]
        live = np.asarray(self[:])
        if not test:
            found = np.zeros(live.shape[0], dtype=np.bool_)
        else:
            probe = np.asarray(test)  # its own type: 255 is not True in a bool column
            if probe.dtype.kind != live.dtype.kind and live.dtype.kind != "b":
                try:
                    probe = np.asarray(test, dtype=live.dtype)
                except (TypeError, ValueError, OverflowError):
                    probe = np.asarray(test, dtype=object)
            found = np.isin(live, probe)
        nulls = self.is_null()
        found[nulls] = wants_null
        return found

    @property
    def _nulls(self) -> NullChannel:
        """This column's null channel (python-blosc2's ``Column._nulls``)."""
        return NullChannel(self)


class NullChannel:
    """Which rows of a column are null, whatever the storage (python-blosc2's
    ``NullChannel``): read through to the column's live spec, nothing kept.

    >>> import dataclasses
    >>> import pyblosc2 as blosc2
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = blosc2.field(blosc2.int64(null_value=-1))
    >>> ch = blosc2.CTable(Row, new_data=[(1,), (-1,)])["x"]._nulls
    >>> ch.kind, ch.null_count(), ch.null_mask().tolist()
    ('sentinel', 1, [False, True])
    """

    __slots__ = ("_col",)

    def __init__(self, column: ColumnNulls) -> None:
        self._col = column

    def __repr__(self) -> str:
        return f"NullChannel({self._col._col_name!r}, kind={self.kind!r})"

    @property
    def kind(self) -> str:
        """``"mask"``, ``"sentinel"`` or ``"none"``."""
        return self._col.null_storage

    @property
    def is_nullable(self) -> bool:
        return self.kind != NULL_NONE

    @property
    def uses_mask(self) -> bool:
        return self.kind == NULL_MASK

    @property
    def sentinel(self) -> Any:
        return self._col.null_value

    def null_mask(self) -> np.ndarray:
        """True where the live value is null."""
        return self._col.is_null()

    def null_count(self) -> int:
        return self._col.null_count()

    def nonnull_chunks(self, size: int = 1 << 16) -> Any:
        """The non-null live values, a chunk at a time."""
        return self._col._chunks(None, size) if self.is_nullable else self._col.iter_chunks(size)  # type: ignore[attr-defined]

    def null_pred(self) -> Any:
        """A lazy condition over the physical rows, True where null (None: never)."""
        return self._col._null_pred()

    def valid_pred(self) -> Any:
        """A lazy condition over the physical rows, True where not null (None: always)."""
        null = self._col._null_pred()
        return None if null is None else ~null
