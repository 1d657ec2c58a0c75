"""Arrow streams whose one column is an unnamed ``list<struct<...>>`` (Awkward-style Parquet
files), for :mod:`.arrow_io`, as python-blosc2 4.x imports them: with
``separate_nested_cols`` each element of the outer lists is a row (null and empty outer
lists give none) and the struct's fields are the columns; without it the unnamed column is
renamed ``root`` (``root_1``, ... when taken). pyarrow is the caller's (``pa``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["flatten_root_batches", "inner_schema", "is_unnamed_root", "rename_unnamed"]


def is_unnamed_root(pa: Any, schema: Any) -> bool:
    """Whether ``schema`` is one unnamed (``""``) field of type ``list<struct<...>>`` or
    ``large_list<struct<...>>``."""
    if len(schema) != 1 or schema[0].name != "":
        return False
    typ = schema[0].type
    if not (pa.types.is_list(typ) or pa.types.is_large_list(typ)):
        return False
    return bool(pa.types.is_struct(typ.value_type))


def inner_schema(pa: Any, schema: Any) -> Any:
    """The schema of the rows of an unnamed root: its struct's fields."""
    return pa.schema(list(schema[0].type.value_type))


def flatten_root_batches(
    pa: Any, inner: Any, batches: Iterable[Any], max_rows: int | None = None
) -> Iterator[Any]:
    """Record batches of ``inner`` holding the elements of the outer lists of ``batches``
    (at most ``max_rows`` of them)."""
    seen = 0
    for batch in batches:
        if max_rows is not None and seen >= max_rows:
            break
        elements = batch.column(0).flatten()  # skips null outer lists
        if len(elements) == 0:
            yield pa.record_batch([pa.array([], type=f.type) for f in inner], schema=inner)
            continue
        rb = pa.RecordBatch.from_struct_array(elements)
        if max_rows is not None and len(rb) > max_rows - seen:
            rb = rb.slice(0, max_rows - seen)  # the batch, not the (offset) struct array
        seen += len(rb)
        yield rb


def rename_unnamed(pa: Any, schema: Any) -> tuple[Any, list[str]]:
    """``schema`` with each unnamed field renamed ``root`` (``root_1``, ... when taken),
    and the new names in order."""
    used = {n for n in schema.names if n}
    names = []
    for n in schema.names:
        if n == "":
            n, i = "root", 0
            while n in used:
                i += 1
                n = f"root_{i}"
            used.add(n)
        names.append(n)
    return pa.schema([f.with_name(n) for f, n in zip(schema, names, strict=True)]), names
