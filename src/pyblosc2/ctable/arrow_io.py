"""Arrow, Parquet and pandas for CTable (python-blosc2's ``to_arrow``, ``iter_arrow_batches``,
``from_arrow``, ``to_parquet``, ``from_parquet``, ``to_pandas``, ``from_pandas``).

pyarrow and pandas are optional extras (``pip install pyblosc2[arrow]``), imported here
only, inside the functions that need them: ``import pyblosc2`` never imports them.

Types as python-blosc2 4.x maps them: Arrow integers, floats, ``bool`` and ``timestamp``
become columns of the same kind; ``string``/``large_string`` become ``utf8`` columns and
``binary`` become ``vlbytes`` unless ``string_max_length`` gives fixed-width ``string`` /
``bytes`` columns; ``struct`` fields are flattened into dotted leaf columns
(``trip.begin.lon``); an Arrow column holding nulls becomes a nullable column (its nulls
exported as Arrow nulls). Kinds pyblosc2 does not store yet (utf8, vlbytes, lists,
dictionaries, dotted names; nullable columns where the nulls layer is absent) raise
:class:`NotImplementedError` naming the kind. Exported, fixed-width ``string`` is Arrow
``string`` and ``bytes`` is ``large_binary``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import MISSING
from typing import Any

import numpy as np

from .. import schema as specs
from ..errors import FormatError, ParamError, ParamTypeError
from . import kinds
from .build import new_table, resolve_nulls
from .nulls import get_null_policy
from .schema import TableColumn

__all__ = ["BATCH_SIZE", "TableArrow"]

BATCH_SIZE = 65536  # rows per exported RecordBatch (python-blosc2's _BATCH_SIZE_DEFAULT)

_ARROW_NUMERIC = (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
)  # fmt: skip


def require(module: str, what: str) -> Any:
    """The optional module ``module`` (pyarrow, pyarrow.parquet, pandas), or ImportError
    naming the extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{what} requires {module.split('.')[0]}: pip install 'pyblosc2[arrow]'"
        ) from None


def _check_batch_size(batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
        raise ParamTypeError(f"batch_size must be a positive int, got {batch_size!r}")
    if batch_size < 1:
        raise ParamError(f"batch_size must be a positive int, got {batch_size!r}")
    return int(batch_size)


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
    raise NotImplementedError(f"Arrow export of {kind} columns")


def _spec_for(
    pa: Any,
    name: str,
    typ: Any,
    nullable: bool,
    string_max_length: int | Mapping[str, int] | None,
    object_fallback: bool,
    null_storage: str | None = None,
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
            return kinds.vlbytes(nullable=nullable)
        return specs.bytes(max_length=max(int(max_len), 1), **null)
    if t.is_dictionary(typ):
        return kinds.dictionary(nullable=nullable)
    if t.is_list(typ) or t.is_large_list(typ) or t.is_fixed_size_list(typ):
        raise NotImplementedError(f"CTable column {name!r}: list columns (Arrow {typ})")
    if object_fallback:
        return kinds.object(nullable=nullable)
    raise ParamTypeError(
        f"No blosc2 spec for Arrow type {typ!r} of column {name!r}. Supported: int8/16/32/64, "
        "uint8/16/32/64, float32/64, bool, timestamp, string, binary, list and struct "
        "(object_fallback=True stores others as object columns)"
    )


def _flatten(table: Any) -> Any:
    """``table`` with its struct columns flattened into dotted leaves."""
    pa = require("pyarrow", "from_arrow()")
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def _values(pa: Any, name: str, chunked: Any, spec: specs.SchemaSpec) -> Any:
    """The values of an Arrow column as the column of ``spec`` takes them."""
    if chunked.null_count:
        null_value = getattr(spec, "null_value", None)
        if null_value is None and getattr(spec, "kind", "") in (
            "timestamp",
            "bool",
            *_ARROW_NUMERIC,
        ):
            zero = pa.scalar(False if spec.kind == "bool" else 0).cast(chunked.type)
            nulls = np.asarray(chunked.is_null().to_numpy(zero_copy_only=False), dtype=np.bool_)
            filled = _values(pa, name, chunked.fill_null(zero), spec)  # no Python objects
            return np.ma.MaskedArray(filled, mask=nulls)  # mask storage: the nulls aside
        if null_value is None:  # a kind that takes None
            return chunked.to_pylist()
        chunked = chunked.fill_null(null_value)  # sentinel storage: the nulls as its value
    kind = getattr(spec, "kind", "")
    if kind in ("string", "bytes"):
        if "view" in str(chunked.type):  # string_view / binary_view: the kernels take large_*
            chunked = chunked.cast(pa.large_string() if kind == "string" else pa.large_binary())
        _check_lengths(pa, name, chunked, spec)
        return np.asarray(chunked.to_numpy(zero_copy_only=False), dtype=np.dtype(spec.dtype))
    if kind == "timestamp":
        return chunked.cast(pa.int64()).to_numpy()
    if kind in (*_ARROW_NUMERIC, "bool"):
        return np.asarray(chunked.to_numpy(zero_copy_only=False), dtype=np.dtype(spec.dtype))
    return chunked.to_pylist()


def _check_lengths(pa: Any, name: str, chunked: Any, spec: specs.SchemaSpec) -> None:
    """ParamError if a text or bytes value is longer than the column's ``max_length``."""
    pc = require("pyarrow.compute", "from_arrow()")

    lengths = pc.utf8_length(chunked) if spec.kind == "string" else pc.binary_length(chunked)
    longest = pc.max(lengths).as_py() if len(lengths) else None
    limit = int(spec.max_length)  # type: ignore[attr-defined]
    if longest is not None and longest > limit:
        raise ParamError(
            f"column {name!r}: a value of {longest} characters is longer than max_length "
            f"{limit} (give a larger string_max_length)"
        )


def _as_arrow_table(pa: Any, schema: Any, batches: Any) -> Any:
    """An Arrow table from ``from_arrow``'s arguments: a schema and record batches, or a
    Table, a RecordBatchReader or any Arrow stream (``__arrow_c_stream__``)."""
    if batches is None:
        if isinstance(schema, pa.Schema):
            raise ParamTypeError(
                "from_arrow(schema) requires batches: pass record batches, or a Table or "
                "an Arrow stream alone"
            )
        if isinstance(schema, pa.Table):
            return schema
        if isinstance(schema, pa.RecordBatch):
            return pa.Table.from_batches([schema])
        if isinstance(schema, pa.RecordBatchReader):
            return schema.read_all()
        if hasattr(schema, "__arrow_c_stream__"):
            return pa.RecordBatchReader.from_stream(schema).read_all()
        raise ParamTypeError(f"from_arrow takes an Arrow schema and batches, got {schema!r}")
    if not isinstance(schema, pa.Schema):
        raise ParamTypeError(
            "from_arrow takes an Arrow stream (a Table, a reader, __arrow_c_stream__) or a "
            f"schema and batches, not both: got {type(schema).__name__} and batches"
        )
    if isinstance(batches, pa.RecordBatch | pa.Table):
        batches = [batches]
    parts = []
    for b in batches:
        if isinstance(b, pa.Table):
            parts.extend(b.to_batches())
        elif isinstance(b, pa.RecordBatch):
            parts.append(b)
        else:
            raise ParamTypeError(f"from_arrow's batches must be RecordBatches, got {b!r}")
    try:
        return pa.Table.from_batches(parts, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ParamError(f"from_arrow: batches do not match the schema: {exc}") from None


class TableArrow:
    """Arrow, Parquet and pandas import and export of a table."""

    _columns: list[TableColumn]
    _column_defs: dict[str, TableColumn]
    col_names: list[str]

    # -- export -----------------------------------------------------------------------------
    def _export_names(self, columns: Any, include_computed: bool) -> list[str]:
        computed = getattr(self, "_computed_cols", {}) or {}
        if columns is None:
            return [n for n in self.col_names if include_computed or n not in computed]
        names = [columns] if isinstance(columns, str) else list(columns)
        if len(set(names)) != len(names):
            raise ParamError("columns must be unique")
        for n in names:
            if n not in self.col_names:
                raise KeyError(f"No column named {n!r}. Available: {self.col_names}")
        return names

    def _arrow_schema(self, pa: Any, names: list[str]) -> Any:
        fields = []
        for n in names:
            defn = self._column_defs.get(n)
            if defn is not None:
                typ = arrow_type(pa, defn.spec)
            else:  # a computed column: its NumPy dtype
                typ = pa.from_numpy_dtype(np.dtype(self[n].dtype))  # type: ignore[index]
            fields.append(pa.field(n, typ))
        return pa.schema(fields)

    def iter_arrow_batches(
        self,
        *,
        columns: list[str] | None = None,
        batch_size: int = BATCH_SIZE,
        include_computed: bool = True,
    ) -> Iterator[Any]:
        """The live rows as ``pyarrow.RecordBatch`` es of at most ``batch_size`` rows.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(1,), (2,), (3,)])
        >>> [b.num_rows for b in t.iter_arrow_batches(batch_size=2)]
        [2, 1]
        """
        pa = require("pyarrow", "iter_arrow_batches()")
        size = _check_batch_size(batch_size)
        names = self._export_names(columns, include_computed)
        schema = self._arrow_schema(pa, names)
        n = len(self)  # type: ignore[arg-type]
        nulls = {name: self._export_nulls(name) for name in names}
        for start in range(0, n, size):
            stop = min(start + size, n)
            arrays = [
                _to_arrow_array(
                    pa,
                    self[name][start:stop],  # type: ignore[index]
                    field.type,
                    _window(nulls[name], start, stop),
                )
                for name, field in zip(names, schema, strict=True)
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _export_nulls(self, name: str) -> np.ndarray | None:
        """The null flags of a nullable column's live rows (its ``is_null``), else None."""
        defn = self._column_defs.get(name)
        if defn is None or not getattr(defn.spec, "nullable", False):
            return None
        is_null = getattr(self[name], "is_null", None)  # type: ignore[index]
        if is_null is None:
            raise NotImplementedError(f"Arrow export of nullable columns ({name!r})")
        flags = np.asarray(is_null(), dtype=bool)
        return flags if flags.any() else None

    def to_arrow(self) -> Any:
        """All live rows as a ``pyarrow.Table``.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(1,), (2,)]).to_arrow().column("x").to_pylist()
        [1, 2]
        """
        pa = require("pyarrow", "to_arrow()")
        names = self._export_names(None, True)
        return pa.Table.from_batches(list(self.iter_arrow_batches()), self._arrow_schema(pa, names))

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of the live rows, batch by batch."""
        pa = require("pyarrow", "__arrow_c_stream__")
        schema = self._arrow_schema(pa, self._export_names(None, True))
        reader = pa.RecordBatchReader.from_batches(schema, self.iter_arrow_batches())
        return reader.__arrow_c_stream__(requested_schema)

    def to_parquet(
        self,
        path: str | os.PathLike[str],
        *,
        columns: list[str] | None = None,
        batch_size: int = BATCH_SIZE,
        compression: str | None = "zstd",
        row_group_size: int | None = None,
        include_computed: bool = True,
        **kwargs: Any,
    ) -> None:
        """Write the live rows to a Parquet file, batch by batch (pyarrow).

        >>> import dataclasses, os, tempfile
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
        >>> CTable(Row, new_data=[(1,), (2,)]).to_parquet(path)
        >>> CTable.from_parquet(path).x[:]
        array([1, 2])
        """
        pa = require("pyarrow", "to_parquet()")
        pq = require("pyarrow.parquet", "to_parquet()")
        size = _check_batch_size(batch_size)
        names = self._export_names(columns, include_computed)
        schema = self._arrow_schema(pa, names)
        with pq.ParquetWriter(path, schema, compression=compression, **kwargs) as writer:
            for batch in self.iter_arrow_batches(
                columns=names, batch_size=size, include_computed=include_computed
            ):
                table = pa.Table.from_batches([batch], schema=schema)
                writer.write_table(table, row_group_size=row_group_size or len(batch))

    def to_pandas(self) -> Any:
        """The live rows as a pandas DataFrame (NumPy dtypes; text as ``object``).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(1,), (2,)]).to_pandas()["x"].tolist()
        [1, 2]
        """
        pd = require("pandas", "to_pandas()")
        from .nullpandas import pandas_values

        data = {}
        for name in self.col_names:
            values = np.asarray(self[name][:])  # type: ignore[index]
            values = values.astype(object) if values.dtype.kind in "US" else values
            data[name] = pandas_values(pd, self[name], values)  # type: ignore[index]  # nulls: NA
        return pd.DataFrame(data, columns=list(self.col_names))

    # -- import -----------------------------------------------------------------------------
    @classmethod
    def from_arrow(
        cls,
        schema: Any,
        batches: Any = None,
        *,
        urlpath: str | os.PathLike[str] | None = None,
        mode: str = "w",
        cparams: dict[str, Any] | None = None,
        dparams: dict[str, Any] | None = None,
        validate: bool = False,
        capacity_hint: int | None = None,
        string_max_length: int | Mapping[str, int] | None = None,
        auto_null_sentinels: bool = True,
        null_storage: str | None = None,
        blosc2_batch_size: int | None = BATCH_SIZE,
        blosc2_items_per_block: int | None = None,
        list_serializer: str = "msgpack",
        object_fallback: bool = False,
        column_cparams: Mapping[str, dict[str, Any]] | None = None,
        separate_nested_cols: bool = False,
        create_summary_index: bool = True,
        chunks: int | tuple[int, ...] | None = None,
        blocks: int | tuple[int, ...] | None = None,
    ) -> Any:
        """A table of an Arrow schema and its record batches (or of a ``pyarrow.Table``).

        >>> import pyarrow as pa
        >>> from pyblosc2.ctable import CTable
        >>> t = CTable.from_arrow(pa.table({"x": [1, 2], "y": [0.5, 1.5]}))
        >>> t.col_names, t.y[:]
        (['x', 'y'], array([0.5, 1.5]))
        """
        pa = require("pyarrow", "from_arrow()")
        if blosc2_batch_size is not None and (
            isinstance(blosc2_batch_size, bool)
            or not isinstance(blosc2_batch_size, int)
            or blosc2_batch_size < 1
        ):
            raise ParamError(
                f"blosc2_batch_size must be a positive int or None, got {blosc2_batch_size!r}"
            )
        if null_storage not in (None, "mask", "sentinel"):
            raise ParamError(
                f"null_storage must be None, 'mask' or 'sentinel', got {null_storage!r}"
            )
        table = _flatten(_as_arrow_table(pa, schema, batches))
        per_col = dict(column_cparams or {})
        unknown = set(per_col) - set(table.column_names)
        if unknown:
            raise KeyError(f"column_cparams names unknown columns {sorted(unknown)}")
        layout = {
            "chunks": (chunks,) if isinstance(chunks, int) else chunks,
            "blocks": (blocks,) if isinstance(blocks, int) else blocks,
        }
        columns, data = [], {}
        for field, chunked in zip(table.schema, table.columns, strict=True):
            spec = _spec_for(
                pa,
                field.name,
                field.type,
                chunked.null_count > 0 or (field.nullable and null_storage == "mask"),
                string_max_length,
                object_fallback,
                null_storage,
            )
            col = TableColumn(field.name, spec, MISSING, per_col.get(field.name), None, **layout)
            col = resolve_nulls([col])[0]
            columns.append(col)
            data[field.name] = _values(pa, field.name, chunked, col.spec)
        return new_table(
            cls,
            columns,
            data,
            urlpath=urlpath,
            mode=mode,
            validate=validate,
            cparams=cparams,
            dparams=dparams,
        )

    @classmethod
    def from_parquet(
        cls,
        path: Any,
        *,
        columns: list[str] | None = None,
        batch_size: int = BATCH_SIZE,
        urlpath: str | os.PathLike[str] | None = None,
        mode: str = "w",
        cparams: dict[str, Any] | None = None,
        dparams: dict[str, Any] | None = None,
        validate: bool = False,
        max_rows: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """A table of a Parquet file, read batch by batch (pyarrow); ``from_arrow``'s
        options apply. A file pyarrow cannot read is a :class:`FormatError`."""
        pa = require("pyarrow", "from_parquet()")
        pq = require("pyarrow.parquet", "from_parquet()")
        size = _check_batch_size(batch_size)
        if max_rows is not None and (
            isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 0
        ):
            raise ParamError(f"max_rows must be a non-negative int or None, got {max_rows!r}")
        where = os.fspath(path) if isinstance(path, str | os.PathLike) else "<file>"
        try:
            source = pq.ParquetFile(path)
            schema = source.schema_arrow
            if columns is not None:
                schema = pa.schema([schema.field(c) for c in columns])
            batches, n = [], 0
            for batch in source.iter_batches(batch_size=size, columns=columns):
                if max_rows is not None and n + batch.num_rows > max_rows:
                    batch = batch.slice(0, max_rows - n)
                batches.append(batch)
                n += batch.num_rows
                if max_rows is not None and n >= max_rows:
                    break
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise FormatError("Parquet", where, 0, "a Parquet file pyarrow reads", exc) from None
        except OSError as exc:
            if isinstance(exc, FileNotFoundError | IsADirectoryError | PermissionError):
                raise
            raise FormatError("Parquet", where, 0, "a Parquet file pyarrow reads", exc) from None
        except KeyError as exc:
            raise KeyError(f"No column named {exc.args[0]!r} in {where}") from None
        for key in ("list_serializer", "separate_nested_cols", "blosc2_items_per_block"):
            kwargs.pop(key, None)
        return cls.from_arrow(
            schema,
            batches,
            urlpath=urlpath,
            mode=mode,
            cparams=cparams,
            dparams=dparams,
            validate=validate,
            **kwargs,
        )

    @classmethod
    def from_pandas(cls, df: Any, row_cls: Any) -> Any:
        """A table of the dataclass ``row_cls`` holding the rows of the DataFrame ``df``.

        >>> import dataclasses, pandas as pd
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable.from_pandas(pd.DataFrame({"x": [3, 4]}), Row).x[:]
        array([3, 4])
        """
        require("pandas", "from_pandas()")
        import dataclasses

        if not (isinstance(row_cls, type) and dataclasses.is_dataclass(row_cls)):
            raise ParamTypeError(f"row_cls must be a dataclass type, got {row_cls!r}")
        names = [f.name for f in dataclasses.fields(row_cls)]
        missing = [n for n in names if n not in df.columns]
        if missing:
            raise ParamError(f"DataFrame is missing columns {missing} of {row_cls.__name__}")
        extra = [str(c) for c in df.columns if c not in names]
        if extra:
            raise ParamError(f"DataFrame has extra columns {extra} not in {row_cls.__name__}")
        from .nullpandas import pandas_cells
        from .nulls import resolve_nullable
        from .schema import compile_row_type

        columns = {c.name: c for c in resolve_nullable(compile_row_type(row_cls))}
        data = {n: pandas_cells(df[n], columns[n]) for n in names}  # NA: None or a sentinel
        factory: Any = cls
        return factory(row_cls, new_data=data)


def _window(flags: np.ndarray | None, start: int, stop: int) -> np.ndarray | None:
    return None if flags is None else flags[start:stop]


def _to_arrow_array(pa: Any, values: Any, typ: Any, nulls: np.ndarray | None = None) -> Any:
    """One exported Arrow array of ``typ`` from a column's values (null where ``nulls``)."""
    if isinstance(values, list):  # a text column's cells (str, bytes or None: null)
        if nulls is not None:
            values = [None if m else c for c, m in zip(values, nulls.tolist(), strict=True)]
        return pa.array(values, type=typ)
    arr = np.asarray(values)
    if pa.types.is_timestamp(typ):
        return pa.array(arr.astype("int64"), type=pa.int64(), mask=nulls).cast(typ)
    if arr.dtype.kind == "S":
        cells = arr.tolist()
        if nulls is not None:
            cells = [None if m else c for c, m in zip(cells, nulls.tolist(), strict=True)]
        return pa.array(cells, type=typ)
    return pa.array(arr, type=typ, mask=nulls)
