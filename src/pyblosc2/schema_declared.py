"""python-blosc2's CTable column specs that are not scalar items: ``blosc2.object()``
(:class:`ObjectSpec`, msgpack objects; a CTable refuses such a column with
:class:`NotImplementedError`) and ``blosc2.ndarray(item_shape, dtype)`` (:class:`NDArraySpec`,
a fixed-shape N-d cell per row, stored as one NDArray of shape ``(rows, *item_shape)``).

``pyblosc2.ndarray`` is both the package of the N-d array and, called, the column spec: one
name in python-blosc2 (whose array module is private). Importing this module makes the
package callable.
"""

from __future__ import annotations

import builtins
import math
import types
from typing import Any

import numpy as np

from . import ndarray as _ndarray_package
from .errors import ParamError, ParamTypeError
from .schema_base import SchemaSpec, _Nullable

__all__ = ["MAX_ITEM_DIMS", "MAX_ITEM_SIZE", "NDArraySpec", "ObjectSpec", "ndarray"]

#: the most dimensions of one cell (NumPy's limit less the row axis)
MAX_ITEM_DIMS = 31
#: the most items of one cell a stored schema may declare (2**31: one row fits a chunk)
MAX_ITEM_SIZE = 1 << 31


class ObjectSpec(SchemaSpec):
    """python-blosc2's object column kind (``blosc2.object()``): any msgpack value per row
    (``None`` if nullable), stored in msgpack batches (:mod:`pyblosc2.ctable.objcol`).

    >>> ObjectSpec(nullable=True).to_metadata_dict()
    {'kind': 'object', 'nullable': True, 'serializer': 'msgpack', 'batch_rows': 2048}
    """

    kind = "object"
    python_type = builtins.object
    dtype = None

    def __init__(
        self,
        *,
        nullable: builtins.bool = False,
        serializer: str = "msgpack",
        batch_rows: int | None = 2048,
        items_per_block: int | None = None,
    ) -> None:
        if serializer != "msgpack":
            raise ParamError("object currently only supports serializer='msgpack'")
        for name, value in (("batch_rows", batch_rows), ("items_per_block", items_per_block)):
            if value is not None and (
                isinstance(value, builtins.bool)
                or not isinstance(value, int)
                or not 0 < value <= MAX_ITEM_SIZE
            ):
                raise ParamError(f"{name} must be positive (at most 2**31) or None, got {value!r}")
        if not isinstance(nullable, builtins.bool):
            raise ParamTypeError(f"object nullable must be a bool, got {nullable!r}")
        self.nullable = nullable
        self.serializer = serializer
        self.batch_rows = batch_rows
        self.items_per_block = items_per_block

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it."""
        out: dict[str, Any] = {
            "kind": "object",
            "nullable": self.nullable,
            "serializer": self.serializer,
        }
        if self.batch_rows is not None:
            out["batch_rows"] = self.batch_rows
        if self.items_per_block is not None:
            out["items_per_block"] = self.items_per_block
        return out

    @classmethod
    def from_metadata_dict(cls, data: dict[str, Any]) -> ObjectSpec:
        """The spec of a stored column entry, checked.

        >>> ObjectSpec.from_metadata_dict({"kind": "object", "nullable": False}).batch_rows
        """
        rest = {k: v for k, v in data.items() if k != "kind"}
        rest.setdefault("batch_rows", None)
        try:
            return cls(**rest)
        except TypeError as exc:
            raise ParamTypeError(f"bad object spec metadata {data!r}: {exc}") from None


def _item_shape(item_shape: Any) -> tuple[int, ...]:
    """A cell shape: an int or a non-empty sequence of positive ints, bounded."""
    if isinstance(item_shape, int | np.integer) and not isinstance(item_shape, builtins.bool):
        item_shape = (item_shape,)
    if isinstance(item_shape, str | builtins.bytes) or not hasattr(item_shape, "__len__"):
        raise ParamTypeError(f"NDArraySpec item_shape must be ints, got {item_shape!r}")
    if not 0 < len(item_shape) <= MAX_ITEM_DIMS:
        raise ParamError(
            f"NDArraySpec item_shape must have 1 to {MAX_ITEM_DIMS} dimensions, got {item_shape!r}"
        )
    dims = []
    for n in item_shape:
        if isinstance(n, builtins.bool) or not isinstance(n, int | np.integer):
            raise ParamTypeError(f"NDArraySpec item_shape must be ints, got {item_shape!r}")
        if n <= 0:
            raise ParamError("All NDArraySpec item_shape dimensions must be positive.")
        dims.append(int(n))
    if math.prod(dims) > MAX_ITEM_SIZE:
        raise ParamError(f"NDArraySpec item_shape {tuple(dims)} holds over {MAX_ITEM_SIZE} items")
    return tuple(dims)


def _cell_dtype(dtype: Any) -> np.dtype[Any]:
    """The cell dtype: a NumPy dtype or a scalar spec (its dtype); numbers and bool only."""
    inner = dtype.dtype if isinstance(dtype, SchemaSpec) else dtype
    try:
        out = np.dtype(inner)
    except TypeError as exc:
        raise ParamTypeError(f"NDArraySpec dtype {dtype!r}: {exc}") from None
    if out.kind not in "biufc" or out.fields is not None or out.subdtype is not None:
        raise ParamTypeError(f"NDArraySpec dtype must be a number or bool dtype, got {out}")
    return out


class NDArraySpec(_Nullable):
    """A fixed-shape N-d cell per row (python-blosc2's ``blosc2.ndarray(item_shape, dtype)``),
    stored as one NDArray of shape ``(rows, *item_shape)``. A nullable bool cell with an
    in-band null is widened to uint8 (255 is null), as python-blosc2 does.

    >>> spec = NDArraySpec((2, 3), np.float32)
    >>> spec.to_metadata_dict(), spec.display_label()
    ({'kind': 'ndarray', 'item_shape': [2, 3], 'dtype_str': '<f4'}, 'ndarray[2, 3][float32]')
    """

    kind = "ndarray"
    python_type = builtins.object
    bool_widened_to_uint8 = False

    def __init__(
        self,
        item_shape: Any,
        dtype: Any = np.float64,
        *,
        nullable: builtins.bool = False,
        null_value: Any = None,
        null_storage: str | None = None,
        bool_widened_to_uint8: builtins.bool = False,
    ) -> None:
        self.item_shape = _item_shape(item_shape)
        self.dtype = _cell_dtype(dtype)
        self._init_nulls(nullable, null_value, null_storage)
        if bool_widened_to_uint8 or (
            self.nullable and not self.uses_mask and self.dtype == np.dtype(np.bool_)
        ):
            self.bool_widened_to_uint8 = True
            self.dtype = np.dtype(np.uint8)

    @property
    def item_size(self) -> int:
        """Items per cell."""
        return math.prod(self.item_shape)

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it: item shape, dtype string and null handling."""
        out: dict[str, Any] = {
            "kind": "ndarray",
            "item_shape": [*self.item_shape],
            "dtype_str": self.dtype.str,
        }
        if self.bool_widened_to_uint8:
            out["bool_widened_to_uint8"] = True
        return {**out, **self._null_metadata()}

    def display_label(self) -> str:
        """``ndarray[<item shape>][<dtype>]``, as python-blosc2 labels it."""
        return f"ndarray{[*self.item_shape]}[{self.dtype}]"

    @classmethod
    def from_metadata_dict(cls, data: Any) -> NDArraySpec:
        """The spec of a stored column entry (``item_shape``, ``dtype_str``...), checked.

        >>> NDArraySpec.from_metadata_dict(
        ...     {"kind": "ndarray", "item_shape": [3], "dtype_str": "<i2"}).dtype
        dtype('int16')
        """
        if not isinstance(data, dict):
            raise ParamTypeError(f"ndarray metadata must be a mapping, got {type(data).__name__}")
        known = {"kind", "item_shape", "dtype_str", "bool_widened_to_uint8"}
        known |= {"nullable", "null_value", "null_storage"}
        extra = sorted(set(data) - known, key=str)
        if extra:
            raise ParamError(f"ndarray metadata has unknown entries {extra}")
        shape = data.get("item_shape")
        if not isinstance(shape, builtins.list):
            raise ParamTypeError(f"ndarray metadata item_shape must be a list, got {shape!r}")
        dtype_str = data.get("dtype_str", "<f8")
        if not isinstance(dtype_str, str) or len(dtype_str) > 8:
            raise ParamTypeError(
                f"ndarray metadata dtype_str must be a dtype string: {dtype_str!r}"
            )
        flags = ("bool_widened_to_uint8", "nullable")
        for key in flags:
            if not isinstance(data.get(key, False), builtins.bool):
                raise ParamTypeError(f"ndarray metadata {key} must be a bool, got {data[key]!r}")
        null_value = data.get("null_value")
        if null_value is not None and not isinstance(null_value, int | float):
            raise ParamTypeError(f"ndarray metadata null_value must be a number: {null_value!r}")
        return cls(
            shape,
            dtype_str,
            nullable=data.get("nullable", False),
            null_value=null_value,
            null_storage=data.get("null_storage"),
            bool_widened_to_uint8=data.get("bool_widened_to_uint8", False),
        )


def ndarray(
    item_shape: Any,
    dtype: Any = np.float64,
    *,
    nullable: builtins.bool = False,
    null_value: Any = None,
    null_storage: str | None = None,
) -> NDArraySpec:
    """python-blosc2's N-d cell column spec (``blosc2.ndarray(item_shape, dtype)``).

    >>> ndarray(3).item_shape, ndarray((2, 2), np.int8).dtype
    ((3,), dtype('int8'))
    """
    return NDArraySpec(
        item_shape, dtype, nullable=nullable, null_value=null_value, null_storage=null_storage
    )


class _NDArrayPackage(types.ModuleType):
    """``pyblosc2.ndarray`` is the package of the N-d array and, called, python-blosc2's
    ``blosc2.ndarray(item_shape, dtype)`` column spec."""

    def __call__(self, item_shape: Any, dtype: Any = np.float64, **options: Any) -> NDArraySpec:
        return ndarray(item_shape, dtype, **options)


_ndarray_package.__class__ = _NDArrayPackage
