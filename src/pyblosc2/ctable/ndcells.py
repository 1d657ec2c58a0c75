"""N-d cell columns (python-blosc2's ``blosc2.ndarray(item_shape, dtype)``): one fixed-shape
array per row, stored as one NDArray of shape ``(rows, *item_shape)`` in ``_cols/<name>``
(the same leaf as a scalar column, one more axis per cell dimension).

Values come in as one array of shape ``(n, *item_shape)`` or a sequence of ``n`` cells, each
cast to the cell dtype (an integer cell refuses non-integral or out-of-range values).
A column of cells reads by logical row like any column (``col[i]`` is a cell, ``col[a:b]``
an array of cells) and takes a tuple key, the row selection first (``col[:, 0]``). The
nullable form (an in-band sentinel cell or a validity mask) is :class:`NotImplementedError`.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np

from ..errors import FormatError, ParamError, ParamTypeError
from ..schema_declared import NDArraySpec
from .nulls import get_null_policy, sentinel_mask

__all__ = [
    "ColumnCells",
    "cell_columns",
    "cells_reduce",
    "check_cells_array",
    "coerce_cells",
    "is_cells",
    "physical_shape",
    "refuse_cells",
    "refuse_cells_in_expr",
    "resolve_cells",
]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def is_cells(spec: Any) -> bool:
    """Whether ``spec`` is an N-d cell column's.

    >>> is_cells(NDArraySpec((2,))), is_cells(None)
    (True, False)
    """
    return isinstance(spec, NDArraySpec)


def physical_shape(spec: Any, capacity: int) -> tuple[int, ...]:
    """The shape of a column's stored NDArray for ``capacity`` rows.

    >>> physical_shape(NDArraySpec((2, 3)), 10), physical_shape(None, 10)
    ((10, 2, 3), (10,))
    """
    return (capacity, *spec.item_shape) if is_cells(spec) else (capacity,)


def resolve_cells(name: str, spec: NDArraySpec) -> NDArraySpec:
    """``spec`` with its null sentinel fixed (a copy; the policy's sentinel when only
    ``null_storage="sentinel"`` is given) and checked; mask storage is
    :class:`NotImplementedError`.

    >>> resolve_cells("v", NDArraySpec((2,), np.int16, null_storage="sentinel")).null_value
    -32768
    """
    if not spec.nullable:
        return spec
    if spec.uses_mask or (spec.null_value is None and spec.null_storage is None):
        raise NotImplementedError(
            f"CTable column {name!r}: nullable ndarray columns with mask storage "
            "(give null_storage='sentinel' or a null_value)"
        )
    dtype, value = spec.dtype, spec.null_value
    if value is None:
        policy = get_null_policy()
        if spec.bool_widened_to_uint8:
            value = 255
        elif dtype.kind == "i":
            info = np.iinfo(dtype)
            value = int(info.min if policy.signed_int_strategy == "min" else info.max)
        elif dtype.kind == "u":
            info = np.iinfo(dtype)
            value = int(info.min if policy.unsigned_int_strategy == "min" else info.max)
        elif dtype.kind == "f":
            value = policy.float_value
        else:
            raise ParamTypeError(f"column {name!r}: {dtype} cells have no null sentinel")
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise ParamTypeError(f"Null sentinel for column {name!r} must be a number: {value!r}")
    if spec.bool_widened_to_uint8 and value != 255:
        raise ParamError(f"Null sentinel for nullable bool column {name!r} must be 255")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not float(value).is_integer() or not info.min <= value <= info.max:
            raise ParamError(f"Null sentinel for column {name!r}={value!r} is outside {dtype}")
    out = copy.copy(spec)
    out.null_value = value.item() if isinstance(value, np.generic) else value
    out.null_storage = None  # a sentinel is sentinel storage
    return out


def coerce_cells(name: str, spec: NDArraySpec, values: Any, n: int | None = None) -> np.ndarray:
    """``values`` (``n`` cells, or one array of shape ``(n, *item_shape)``) as an array of
    the cell dtype, checked: shape, no ``None``, integral values within an integer dtype.

    >>> coerce_cells("v", NDArraySpec((2,), np.int8), [[1, 2], (3, 4)]).tolist()
    [[1, 2], [3, 4]]
    """
    item = spec.item_shape
    if isinstance(values, np.ndarray) and values.dtype != object:
        raw = values
    else:
        cells = list(values)
        if any(cell is None for cell in cells):
            if spec.null_value is None:
                raise ParamTypeError(f"Column {name!r} is not nullable; received None.")
            null = np.full(item, spec.null_value, dtype=spec.dtype)
            cells = [null if cell is None else cell for cell in cells]
        try:
            raw = np.array(cells) if cells else np.empty((0, *item), dtype=spec.dtype)
        except ValueError:  # ragged cells
            shapes = sorted({np.shape(c) for c in cells})
            raise ParamError(
                f"Column {name!r}: expected item shape {item}, got cells of shapes {shapes}"
            ) from None
    if n is not None and raw.ndim == len(item) and raw.shape == item and n == 1:
        raw = raw.reshape((1, *item))
    if raw.shape[1:] != item or raw.ndim != len(item) + 1:
        raise ParamError(
            f"Column {name!r}: expected item shape {item}, got {raw.shape[1:] or raw.shape}"
        )
    if n is not None and raw.shape[0] != n:
        raise ParamError(f"Column {name!r}: expected {n} cells, got {raw.shape[0]}")
    dtype = spec.dtype
    if raw.dtype.kind in "USOVmM" and raw.size:
        raise ParamTypeError(f"Column {name!r}: {raw.dtype} cells for {dtype}")
    if dtype.kind in "iu" and raw.dtype.kind == "f" and raw.size and np.any(np.mod(raw, 1)):
        raise ParamError(f"Column {name!r}: non-integral values for {dtype}")
    if dtype.kind in "iu" and raw.dtype.kind in "iuf" and raw.size:
        info = np.iinfo(dtype)
        if raw.min() < info.min or raw.max() > info.max:
            raise ParamError(f"Column {name!r}: values out of the range of {dtype}")
    if dtype.kind != "c" and raw.dtype.kind == "c" and raw.size:
        raise ParamTypeError(f"Column {name!r}: complex values for {dtype}")
    return np.ascontiguousarray(raw, dtype=dtype)


def check_cells_array(key: str, spec: NDArraySpec, arr: Any, rows: int) -> None:
    """Refuse a stored cell column whose NDArray is not ``(>= rows, *item_shape)`` of the
    cell dtype (a damaged or foreign table), before reading any value of it."""
    want = (rows, *spec.item_shape)
    if (
        arr.ndim != len(want)
        or tuple(arr.shape[1:]) != spec.item_shape
        or arr.shape[0] < rows
        or arr.dtype != spec.dtype
    ):
        raise FormatError(
            "CTable",
            key,
            0,
            f"a {spec.dtype} array of shape (>= {rows}, *{spec.item_shape})",
            f"{arr.dtype} {arr.shape}",
        )


class ColumnCells:
    """What a column of N-d cells adds to :class:`~pyblosc2.ctable.column.Column`: its cell
    shape and tuple indexing (row selection first)."""

    _table: Any
    _col_name: str

    def _cell_spec(self) -> NDArraySpec | None:
        col = self._table._column_defs.get(self._col_name)
        return col.spec if col is not None and is_cells(col.spec) else None

    @property
    def item_shape(self) -> tuple[int, ...]:
        """The shape of one value: ``()`` for a scalar column, the cell shape otherwise."""
        spec = self._cell_spec()
        return spec.item_shape if spec is not None else ()

    @property
    def item_ndim(self) -> int:
        """The dimensions of one value (0 for a scalar column)."""
        return len(self.item_shape)

    @property
    def item_size(self) -> int:
        """The items of one value (1 for a scalar column)."""
        return int(np.prod(self.item_shape, dtype=np.int64))

    @property
    def is_ndarray(self) -> bool:
        """Whether the column holds N-d cells."""
        return self._cell_spec() is not None

    def is_null(self) -> np.ndarray:
        """True where the live row is null (a cell all of its sentinel, for N-d cells)."""
        spec = self._cell_spec()
        if spec is None:
            return super().is_null()  # type: ignore[misc]
        values = np.asarray(self[:])  # type: ignore[index]
        return sentinel_mask(values, spec.null_value, item_ndim=len(spec.item_shape))

    def sum(self, dtype: Any = None, axis: Any = None, **kwargs: Any) -> Any:
        """The sum (over the logical ``(rows, *item_shape)`` array for N-d cells)."""
        if self.is_ndarray:
            out = cells_reduce(self, "sum", axis, kwargs)
            return out if dtype is None else np.asarray(out).astype(dtype)[()]
        return super().sum(dtype, axis, **kwargs)  # type: ignore[misc]

    def mean(self, axis: Any = None, **kwargs: Any) -> Any:
        """The mean (over the logical ``(rows, *item_shape)`` array for N-d cells)."""
        if self.is_ndarray:
            return cells_reduce(self, "mean", axis, kwargs)
        return super().mean(axis=axis, **kwargs)  # type: ignore[misc]

    def min(self, axis: Any = None, **kwargs: Any) -> Any:
        """The least value (over the logical ``(rows, *item_shape)`` array for N-d cells)."""
        if self.is_ndarray:
            return cells_reduce(self, "min", axis, kwargs)
        return super().min(axis=axis, **kwargs)  # type: ignore[misc]

    def max(self, axis: Any = None, **kwargs: Any) -> Any:
        """The greatest value (over the logical ``(rows, *item_shape)`` array for N-d cells)."""
        if self.is_ndarray:
            return cells_reduce(self, "max", axis, kwargs)
        return super().max(axis=axis, **kwargs)  # type: ignore[misc]

    def argmin(self, axis: Any = None, **kwargs: Any) -> Any:
        """Where the least value is (a flat index of the cells without ``axis``)."""
        if self.is_ndarray:
            return cells_reduce(self, "argmin", axis, kwargs)
        return super().argmin(axis=axis, **kwargs)  # type: ignore[misc]

    def argmax(self, axis: Any = None, **kwargs: Any) -> Any:
        """Where the greatest value is (a flat index of the cells without ``axis``)."""
        if self.is_ndarray:
            return cells_reduce(self, "argmax", axis, kwargs)
        return super().argmax(axis=axis, **kwargs)  # type: ignore[misc]

    def norm(self, axis: Any = None) -> Any:
        """The Euclidean norm of an N-d cell column (``numpy.linalg.norm``)."""
        if not self.is_ndarray:
            raise ParamTypeError(f"norm() is for ndarray columns; {self._col_name!r} is not")
        return cells_reduce(self, "norm", axis, {})

    def _cells_getitem(self, key: tuple[Any, ...]) -> Any:
        """``col[rows, *within]``: the rows first, then the cell axes."""
        if not key:
            raise ParamTypeError("an empty tuple does not select rows")
        rows, within = key[0], key[1:]
        if len(within) > self.item_ndim:
            raise ParamTypeError(
                f"too many indices for column {self._col_name!r}: {len(key)} for "
                f"{1 + self.item_ndim} dimensions"
            )
        picked = self[rows]  # type: ignore[index]
        if isinstance(rows, int | np.integer) and not isinstance(rows, bool | np.bool_):
            return picked[within] if within else picked
        index = (slice(None), *within)
        return picked[index]


def cell_columns(table: Any) -> set[str]:
    """The names of ``table``'s N-d cell columns."""
    return {c.name for c in table._columns if is_cells(c.spec)}


def refuse_cells(table: Any, names: Any, what: str) -> None:
    """Refuse sorting or grouping by an N-d cell column (:class:`ParamTypeError`)."""
    cells = cell_columns(table)
    for name in [names] if isinstance(names, str) else list(names):
        name = getattr(name, "_col_name", name)
        if isinstance(name, str) and name in cells:
            raise ParamTypeError(f"Cannot {what} ndarray column {name!r}")


def refuse_cells_in_expr(table: Any, expr: str) -> None:
    """Refuse a string condition naming an N-d cell column (it compares scalars)."""
    cells = cell_columns(table)
    if cells and cells & set(_IDENT.findall(expr)):
        raise ParamTypeError(
            "String expressions only support scalar columns; "
            f"{sorted(cells & set(_IDENT.findall(expr)))} hold N-d cells"
        )


def cells_reduce(column: Any, op: str, axis: Any, kwargs: dict[str, Any]) -> Any:
    """A reduction of an N-d cell column over its logical ``(rows, *item_shape)`` array
    (``axis`` counts the row axis first, as python-blosc2's)."""
    if kwargs.get("where") is not None:
        raise NotImplementedError(f"{op}(where=...) of an ndarray column")
    values = np.asarray(column[:])
    if column._cell_spec().null_value is not None:  # null rows are left out
        values = values[~column.is_null()]
    if op == "norm":
        return np.linalg.norm(values, axis=axis)
    return getattr(np, op)(values, axis=axis)
