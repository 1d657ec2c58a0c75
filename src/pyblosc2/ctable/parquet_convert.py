"""Parquet file to CTable store and back, batch by batch, for the ``parquet_to_blosc2``
command (python-blosc2's ``blosc2.cli.parquet_to_blosc2``). pyarrow is the ``[arrow]``
extra, imported through :func:`.arrow_io.require` only when called.

What a Parquet batch becomes before :meth:`CTable.from_arrow` takes it: dictionary columns
decoded to their values (``decode_dictionaries``), top-level structs kept whole as a
one-element ``list<struct>`` per row (without ``separate_nested_cols``; with it they become
dotted leaf columns), an unnamed root column renamed ``root`` (without it; with it, an
unnamed ``list<struct>`` root gives one row per element), timestamps in the unit asked for
(``"auto"``: the coarsest of s/ms/us/ns that holds every value exactly).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..errors import ParamError
from .arrow_io import require
from .arrow_root import is_unnamed_root, rename_unnamed

__all__ = ["export_parquet", "import_parquet"]

_UNITS = ("s", "ms", "us", "ns")
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _auto_units(pa: Any, pf: Any, batch_size: int, names: list[str]) -> dict[str, str]:
    """The coarsest unit that holds every value of each timestamp column ``names``."""
    pc = require("pyarrow.compute", "parquet_to_blosc2")
    exact = {n: set(_UNITS) for n in names}
    for batch in pf.iter_batches(batch_size=batch_size, columns=names):
        for n in names:
            col = batch.column(n)
            unit = col.type.unit
            raw = pc.drop_null(col.cast(pa.int64())).to_numpy(zero_copy_only=False)
            for target in _UNITS:  # a coarser unit holds the values the ratio divides
                ratio = _PER_SECOND[unit] // _PER_SECOND[target]
                if ratio > 1 and raw.size and np.any(raw % ratio):
                    exact[n].discard(target)
    out = {}
    for n in names:
        for target in _UNITS:  # coarsest first
            if target in exact[n]:
                out[n] = target
                break
    return out


def _wrap_struct(pa: Any, column: Any) -> Any:
    """A struct column as a ``list<struct>`` column of one element per row."""
    offsets = pa.array(np.arange(len(column) + 1, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, column)


def _transform(
    pa: Any, batch: Any, *, decode: bool, wrap: bool, units: dict[str, str], names: list[str]
) -> Any:
    arrays = []
    for i, col in enumerate(batch.columns):
        typ = col.type
        if decode and pa.types.is_dictionary(typ):
            col = col.cast(typ.value_type)
        elif wrap and pa.types.is_struct(typ):
            col = _wrap_struct(pa, col)
        elif names[i] in units and pa.types.is_timestamp(typ):
            col = col.cast(pa.timestamp(units[names[i]], tz=typ.tz), safe=True)
        arrays.append(col)
    return pa.RecordBatch.from_arrays(arrays, names=names)


def import_parquet(
    table_cls: Any,
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    parquet_batch_size: int = 65536,
    blosc2_batch_size: int | None = 2048,
    max_rows: int | None = None,
    separate_nested_cols: bool = True,
    decode_dictionaries: bool = False,
    timestamp_unit: str | None = None,
    cparams: dict[str, Any] | None = None,
    string_max_length: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Any:
    """A CTable at ``output`` holding the Parquet file ``source`` (see the module doc).

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> from pyblosc2.ctable import CTable
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"v": pa.array(["a", "b"]).dictionary_encode()}),
    ...                os.path.join(d, "in.parquet"))
    >>> t = import_parquet(CTable, os.path.join(d, "in.parquet"), os.path.join(d, "t.b2d"))
    >>> t.v[:], t.v.is_dictionary
    (['a', 'b'], True)
    """
    pa = require("pyarrow", "parquet_to_blosc2")
    pq = require("pyarrow.parquet", "parquet_to_blosc2")
    if timestamp_unit not in (None, *_UNITS, "auto"):
        raise ParamError(f"timestamp_unit must be one of {_UNITS} or 'auto': {timestamp_unit!r}")
    pf = pq.ParquetFile(source)
    schema = pf.schema_arrow
    root = separate_nested_cols and is_unnamed_root(pa, schema)
    names = list(schema.names)
    if not separate_nested_cols and "" in names:
        schema, names = rename_unnamed(pa, schema)
    stamps = [f.name for f in schema if pa.types.is_timestamp(f.type)]
    units: dict[str, str] = {}
    if timestamp_unit == "auto" and stamps:
        units = _auto_units(pa, pf, parquet_batch_size, stamps)
    elif timestamp_unit is not None:
        units = dict.fromkeys(stamps, timestamp_unit)
    label = "  parquet batch" if root else "  batch"

    def batches() -> Iterator[Any]:
        seen = 0
        for i, batch in enumerate(pf.iter_batches(batch_size=parquet_batch_size)):
            if max_rows is not None and seen >= max_rows:
                break
            if max_rows is not None and not root and seen + len(batch) > max_rows:
                batch = batch.slice(0, max_rows - seen)
            seen += len(batch)
            if progress is not None:
                progress(f"{label} {i}: {len(batch):,} rows")
            yield _transform(
                pa,
                batch,
                decode=decode_dictionaries,
                wrap=not separate_nested_cols,
                units=units,
                names=names,
            )

    first = list(batches())
    out_schema = first[0].schema if first else _empty_schema(pa, schema, decode_dictionaries)
    if root and max_rows is not None:
        from .arrow_root import flatten_root_batches, inner_schema

        inner = inner_schema(pa, out_schema)
        first = list(flatten_root_batches(pa, inner, first, max_rows))
        out_schema = inner
    return table_cls.from_arrow(
        out_schema,
        first,
        urlpath=os.fspath(output),
        mode="w",
        cparams=cparams,
        blosc2_batch_size=blosc2_batch_size,
        separate_nested_cols=separate_nested_cols,
        string_max_length=string_max_length,
    )


def _empty_schema(pa: Any, schema: Any, decode: bool) -> Any:
    fields = []
    for f in schema:
        if decode and pa.types.is_dictionary(f.type):
            f = f.with_type(f.type.value_type)
        fields.append(f)
    return pa.schema(fields)


def export_parquet(
    table_cls: Any,
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    batch_size: int = 65536,
) -> None:
    """Write the CTable store ``source`` to the Parquet file ``output``.

    >>> import dataclasses, os, tempfile, pyarrow.parquet as pq
    >>> from pyblosc2.ctable import CTable
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> d = tempfile.mkdtemp()
    >>> CTable(Row, new_data=[(1,)], urlpath=os.path.join(d, "t.b2d"), mode="w").close()
    >>> export_parquet(CTable, os.path.join(d, "t.b2d"), os.path.join(d, "o.parquet"))
    >>> pq.read_table(os.path.join(d, "o.parquet")).column("x").to_pylist()
    [1]
    """
    table = table_cls.open(os.fspath(source), mode="r")
    try:
        table.to_parquet(os.fspath(output), batch_size=batch_size)
    finally:
        close = getattr(table, "close", None)
        if close is not None:
            close()
