"""``CTable.convert_nulls``: move nullable columns between sentinel and mask storage
(python-blosc2 4.x's semantics). Nothing converts implicitly: opening, copying and saving
keep each column's storage.

Every reason a conversion can fail is decided before anything is written (an unknown or
non-nullable column, a kind without a sentinel, a sentinel the live data already holds, a
dtype change a stored table cannot make in place), so a refusal leaves the table as it was.
In place, ``to="mask"`` writes the complete sidecar before the schema flips and
``to="sentinel"`` writes the sentinels into the null slots before it, then drops the
sidecar: each state on disk reads correctly under the schema it has.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .. import schema as specs
from ..errors import ParamError
from ..ndarray.constructors import zeros
from .nulls import (
    NULL_CODE,
    NULL_MASK,
    NULL_NATIVE,
    NULL_NONE,
    NULL_SENTINEL,
    check_null_value,
    get_null_policy,
    kind_of_spec,
    null_kind,
    sentinel_mask,
)
from .nulls import _policy_sentinel as policy_sentinel
from .nullstore import TableNulls
from .storage import col_key
from .strings import is_var, var_spec

__all__ = ["TableNullConvert"]


class TableNullConvert(TableNulls):
    """``convert_nulls`` (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    def convert_nulls(
        self,
        columns: str | list[str] | None = None,
        *,
        to: str = "mask",
        null_value: Any = None,
        inplace: bool = False,
    ) -> Any:
        """Convert nullable columns (``columns``, default every one not already there)
        to ``to`` storage: ``"mask"`` or ``"sentinel"`` (``null_value``, for one column,
        else the :class:`~pyblosc2.ctable.nulls.NullPolicy` default). A new in-memory
        table, or this one with ``inplace=True``.

        >>> import dataclasses
        >>> import pyblosc2 as blosc2
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = blosc2.field(blosc2.int64(null_value=-1))
        >>> t = blosc2.CTable(Row, new_data=[(1,), (-1,)]).convert_nulls()
        >>> t["x"].null_storage, t["x"].is_null().tolist()
        ('mask', [False, True])
        """
        if to not in (NULL_MASK, NULL_SENTINEL):
            raise ParamError(f"to must be 'mask' or 'sentinel', got {to!r}")
        if null_value is not None and to != NULL_SENTINEL:
            raise ParamError("null_value only applies to to='sentinel'")
        names = [columns] if isinstance(columns, str) else columns
        persistent = inplace and self._root_table()._storage.leaves is not None
        targets = self._null_targets(names, to, null_value, recast=not persistent)
        if not inplace:
            out = self.copy()  # type: ignore[attr-defined]
            out._convert_in_place(targets, to)
            return out
        if self._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")
        if self.base is not None:
            raise ParamError(
                "Cannot convert a view's null storage inplace (it shares the base table's "
                "columns). Use convert_nulls(inplace=False) to get a converted copy."
            )
        self._check_writable()
        self._convert_in_place(targets, to)
        return self

    def _null_targets(
        self, names: list[str] | None, to: str, null_value: Any, *, recast: bool
    ) -> list[tuple[str, Any]]:
        """``[(column, sentinel or None)]`` to convert, every refusal raised first."""
        if names is None:
            chosen = [c.name for c in self._columns if null_kind(c.spec) not in (NULL_NONE, to)]
        else:
            chosen = []
            for name in names:
                col = self._column_defs.get(name)
                if col is None:
                    raise KeyError(f"Column {name!r} not found.")
                kind = null_kind(col.spec)
                held = kind_of_spec(col.spec)
                if held in (NULL_CODE, NULL_NATIVE):
                    raise ParamError(
                        f"Column {name!r} keeps its nulls as "
                        f"{'its null code' if held == NULL_CODE else 'None cells'}, the only "
                        "representation its kind has: convert_nulls moves mask and sentinel "
                        "columns."
                    )
                if kind == NULL_NONE:
                    raise ParamError(
                        f"Column {name!r} is not nullable, so it has no nulls to convert."
                    )
                if kind != to:
                    chosen.append(name)
        if null_value is not None and len(chosen) != 1:
            raise ParamError(
                f"null_value applies to a single column, but {len(chosen)} would be converted"
            )
        targets = [
            (n, None if to == NULL_MASK else self._conversion_sentinel(n, null_value))
            for n in chosen
        ]
        if not recast:
            for name, sentinel in targets:
                if self._converted_dtype(name, to, sentinel) != self._cols[name].dtype:
                    raise ParamError(
                        f"Converting column {name!r} changes its physical dtype, which means "
                        "replacing the stored array: use convert_nulls(inplace=False), then "
                        "copy(urlpath=...) to store the result."
                    )
        return targets

    def _conversion_sentinel(self, name: str, null_value: Any) -> Any:
        spec = self._column_defs[name].spec
        if getattr(spec, "kind", "") in ("complex64", "complex128"):
            raise ParamError(
                f"Column {name!r} has dtype {spec.dtype}, for which no value can be reserved "
                "as a null sentinel. It can only use mask storage."
            )
        if null_value is None:
            null_value = policy_sentinel(spec, get_null_policy())
        if null_value is None:
            raise ParamError(f"No null policy sentinel is available for column {name!r}")
        check_null_value(name, spec, null_value)
        if not (isinstance(null_value, float) and np.isnan(null_value)):
            col = self[name]  # type: ignore[index]
            values = np.asarray(self._cols[name][: self._last_pos])
            if col._timestamp_unit() is None:
                hit = sentinel_mask(values, null_value)
            else:
                hit = values == null_value
            mask = self._null_mask(name)
            if mask is not None:
                hit &= np.asarray(mask[: self._last_pos])
            hit &= np.asarray(self._valid_rows[: self._last_pos])
            if hit.any():
                row = int(np.count_nonzero(np.asarray(self._valid_rows[: int(np.argmax(hit))])))
                raise ParamError(
                    f"Column {name!r} already contains {null_value!r} at row {row} as a real "
                    "value, so reserving it as the null sentinel would relabel that row as "
                    "null. Pass a different null_value=, or keep the column on mask storage."
                )
        return null_value

    def _converted_spec(self, name: str, to: str, sentinel: Any) -> Any:
        spec = self._column_defs[name].spec
        meta = {k: v for k, v in spec.to_metadata_dict().items() if k not in ("null_value",)}
        meta.pop("null_storage", None)
        meta["nullable"] = True
        if to == NULL_MASK:
            meta["null_storage"] = NULL_MASK
        else:
            meta["null_value"] = sentinel
            if isinstance(sentinel, str | bytes) and "max_length" in meta:
                meta["max_length"] = max(int(meta["max_length"]), len(sentinel), 1)
        if is_var(spec):  # a utf8 column: strings.py's spec
            return var_spec(meta.pop("kind"), **meta)
        return specs.spec_from_metadata_dict(meta)

    def _converted_dtype(self, name: str, to: str, sentinel: Any) -> np.dtype[Any]:
        if is_var(self._column_defs[name].spec):  # text in memory, either way
            return np.dtype(self._cols[name].dtype)
        return np.dtype(self._converted_spec(name, to, sentinel).dtype)

    def _convert_in_place(self, targets: list[tuple[str, Any]], to: str) -> None:
        for name, sentinel in targets:
            spec = self._converted_spec(name, to, sentinel)
            n = self._last_pos
            nulls = np.asarray(self[name]._physical_nulls(n))  # type: ignore[index]
            arr = self._cols[name]
            fill = specs.fill_value_for(spec) if to == NULL_MASK else sentinel
            if is_var(spec):  # a utf8 column's cells: the fill or the sentinel at the nulls
                self._convert_text(name, spec, to, nulls, fill)
                continue
            values = np.asarray(arr[:n])
            if nulls.any():
                values = values.copy() if values.dtype == spec.dtype else values.astype(spec.dtype)
                values[nulls] = fill
            if to == NULL_MASK and nulls.any():
                self._ensure_null_mask(name)[:n] = ~nulls  # the sidecar first
            if np.dtype(spec.dtype) != arr.dtype:
                fresh = zeros(arr.shape, dtype=spec.dtype, chunks=arr.chunks, blocks=arr.blocks)
                fresh[:n] = values.astype(spec.dtype)
                arr = self._cols[name] = self._storage.install(col_key(name), fresh)
            elif to == NULL_SENTINEL and nulls.any():
                arr[:n] = values  # the sentinels before the schema flips
            self._set_columns(
                [dataclasses.replace(c, spec=spec) if c.name == name else c for c in self._columns]
            )
            self._save_columns()
            if to == NULL_SENTINEL:
                self._drop_null_mask(name)
            elif nulls.any():
                arr[:n] = values  # the fill in the null slots, after the flip
        if targets:
            self._changed()

    def _convert_text(self, name: str, spec: Any, to: str, nulls: np.ndarray, fill: Any) -> None:
        n = int(nulls.size)
        arr: Any = self._cols[name]  # a strings.VarColumn
        if to == NULL_MASK and nulls.any():
            self._ensure_null_mask(name)[:n] = ~nulls  # the sidecar first
        values = np.array(arr._values[:n], dtype=object)
        values[nulls] = fill
        arr[:n] = values
        self._set_columns(
            [dataclasses.replace(c, spec=spec) if c.name == name else c for c in self._columns]
        )
        self._save_columns()
        if to == NULL_SENTINEL:
            self._drop_null_mask(name)
