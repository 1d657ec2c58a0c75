"""Arrow types and CTable column specs, both ways (python-blosc2 4.x's mapping), for
:mod:`.arrow_io`. pyarrow is the caller's: every function takes the module as ``pa`` (this
module never imports it).

A list column's items (``list<T>``) map as python-blosc2 maps them: integers, floats,
``bool`` and ``timestamp`` to the same kinds, text to ``string`` of ``max_length``
1,000,000 (or ``string_max_length`` when larger), binary likewise to ``bytes``, ``struct``
to a struct of such fields (nullable as the Arrow field is), a list to a nested list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import schema as specs
from ..errors import ParamError, ParamTypeError
from . import kinds
from .nulls import get_null_policy

__all__ = ["ARROW_NUMERIC", "arrow_type", "check_ordered_dictionary", "item_spec", "spec_for"]

ARROW_NUMERIC = (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
)  # fmt: skip
_ITEM_TEXT = 1_000_000  # python-blosc2's max_length of text inside lists and structs
_MAX_DEPTH = 32

_ARROW_NUMERIC = ARROW_NUMERIC


def arrow_type(pa: Any, spec: specs.SchemaSpec) -> Any:
    """The Arrow type of a column of ``spec``."""
    kind = getattr(spec, "kind", "")
    if kind == "bool":
        return pa.bool_()
    if kind == "timestamp":
        return pa.timestamp(getattr(spec, "unit", "us"), tz=getattr(spec, "timezone", None))
    if kind in _ARROW_NUMERIC:
        return pa.from_numpy_dtype(np.dtype(kind))
    if kind == "string":
        return pa.string()
    if kind == "bytes":
        return pa.large_binary()
    # the text kinds as python-blosc2 exports them (utf8: 64-bit offsets, as its own)
    if kind == "utf8":
        return pa.large_string()
    if kind == "vlstring":
        return pa.string()
    if kind == "vlbytes":
        return pa.large_binary()
    if kind == "dictionary":
        return pa.dictionary(pa.int32(), pa.string(), ordered=bool(getattr(spec, "ordered", False)))
    if kind == "list":
        return pa.list_(arrow_type(pa, spec.item_spec))  # type: ignore[attr-defined]
    if kind == "struct":
        fields = spec.fields.items()  # type: ignore[attr-defined]
        return pa.struct([pa.field(n, arrow_type(pa, s)) for n, s in fields])
    raise NotImplementedError(f"Arrow export of {kind} columns")


def spec_for(
    pa: Any,
    name: str,
    typ: Any,
    nullable: bool,
    string_max_length: int | Mapping[str, int] | None,
    object_fallback: bool,
    null_storage: str | None = None,
    batch_rows: int | None = 2048,
) -> specs.SchemaSpec:
    """The column spec of an Arrow column (python-blosc2's type mapping)."""
    t = pa.types
    if isinstance(string_max_length, Mapping):
        max_len = string_max_length.get(name)
    else:
        max_len = string_max_length
    null: dict[str, Any] = {"nullable": True} if nullable else {}
    if nullable and null_storage is not None and name not in get_null_policy().column_null_values:
        null["null_storage"] = null_storage
    if t.is_boolean(typ):
        return specs.bool(**null)
    for kind in _ARROW_NUMERIC:
        if typ == pa.from_numpy_dtype(np.dtype(kind)):
            return getattr(specs, kind)(**null)  # type: ignore[no-any-return,unused-ignore]
    if t.is_timestamp(typ):
        return specs.timestamp(unit=typ.unit, timezone=typ.tz, **null)
    is_view = getattr(t, "is_string_view", lambda _: False)
    if t.is_string(typ) or t.is_large_string(typ) or is_view(typ):
        if max_len is None:
            return kinds.utf8(**null)
        return specs.string(max_length=max(int(max_len), 1), **null)
    is_bview = getattr(t, "is_binary_view", lambda _: False)
    if t.is_binary(typ) or t.is_large_binary(typ) or is_bview(typ):
        if max_len is None:
            rows = {} if batch_rows is None else {"batch_rows": batch_rows}  # python-blosc2's
            return kinds.vlbytes(nullable=nullable, **rows)
        return specs.bytes(max_length=max(int(max_len), 1), **null)
    if t.is_dictionary(typ):
        return kinds.dictionary(nullable=nullable)
    if t.is_list(typ) or t.is_large_list(typ):
        nulls = typ.value_field.nullable  # python-blosc2: the items' nullability is Arrow's
        item = item_spec(pa, name, typ.value_type, string_max_length, 0, nulls)
        return specs.list(item, nullable=nullable, batch_rows=batch_rows)
    if t.is_fixed_size_list(typ):
        raise NotImplementedError(f"CTable column {name!r}: list columns (Arrow {typ})")
    if object_fallback:
        return kinds.object(nullable=nullable)
    raise ParamTypeError(
        f"No blosc2 spec for Arrow type {typ!r} of column {name!r}. Supported: int8/16/32/64, "
        "uint8/16/32/64, float32/64, bool, timestamp, string, binary, list and struct "
        "(object_fallback=True stores others as object columns)"
    )


def item_spec(
    pa: Any,
    name: str,
    typ: Any,
    string_max_length: int | Mapping[str, int] | None,
    depth: int,
    nullable: bool = False,
) -> specs.SchemaSpec:
    """The spec of the items of a ``list<typ>`` column ``name`` (or of a struct's field)."""
    t = pa.types
    if depth >= _MAX_DEPTH:
        raise ParamTypeError(f"column {name!r}: Arrow type nested deeper than {_MAX_DEPTH}")
    limit = string_max_length if isinstance(string_max_length, int) else None
    text = max(limit or 1, _ITEM_TEXT)
    null: dict[str, Any] = {"nullable": True} if nullable else {}
    is_view = getattr(t, "is_string_view", lambda _: False)
    if t.is_string(typ) or t.is_large_string(typ) or is_view(typ):
        return specs.string(max_length=text, **null)
    if t.is_binary(typ) or t.is_large_binary(typ):
        return specs.bytes(max_length=text, **null)
    if t.is_struct(typ):
        fields = {
            f.name: item_spec(pa, name, f.type, string_max_length, depth + 1, f.nullable)
            for f in typ
        }
        return specs.struct(fields, nullable=nullable)
    if t.is_list(typ) or t.is_large_list(typ):
        nulls = typ.value_field.nullable
        inner = item_spec(pa, name, typ.value_type, string_max_length, depth + 1, nulls)
        return specs.list(inner, nullable=nullable)
    if t.is_boolean(typ):
        return specs.bool(**null)
    if t.is_timestamp(typ):
        return specs.timestamp(unit=typ.unit, timezone=typ.tz, **null)
    for kind in ARROW_NUMERIC:
        if typ == pa.from_numpy_dtype(np.dtype(kind)):
            return getattr(specs, kind)(**null)  # type: ignore[no-any-return,unused-ignore]
    raise NotImplementedError(f"CTable column {name!r}: list items of Arrow type {typ}")


def check_ordered_dictionary(name: str, chunked: Any) -> None:
    """ParamError unless the chunks of an ordered Arrow dictionary column agree on the order
    of the values they share (python-blosc2 keeps one order for the column)."""
    rank: dict[Any, int] = {}
    for chunk in chunked.chunks:
        last = -1
        for value in chunk.dictionary.to_pylist():
            if value not in rank:
                rank[value] = len(rank)
            elif rank[value] < last:
                raise ParamError(
                    f"column {name!r}: the batches of an ordered dictionary order its values "
                    f"differently ({value!r})"
                )
            last = max(last, rank[value])
