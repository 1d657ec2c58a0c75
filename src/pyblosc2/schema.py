"""python-blosc2's schema specs (``blosc2.schema``) as far as stored data needs them: the item
types of a :class:`~pyblosc2.ListArray` and their metadata, which a ListArray keeps in its
``listarray`` metalayer (python-blosc2 4.x).

Each spec is a logical type with validation constraints and its metadata dict (``kind`` plus
the constraints set, in python-blosc2's key order): numbers (``int8`` ... ``uint64``,
``float32``, ``float64``, ``complex64``, ``complex128``), ``bool``, ``timestamp``, fixed-width
``string`` and ``bytes``, ``struct`` (named fields) and ``list`` (a :class:`ListSpec`: item
spec, nullability, backend, serializer, ``batch_rows``, ``items_per_block``).
:func:`spec_from_metadata_dict` rebuilds a spec from its dict (``object`` and ``ndarray``
too: :mod:`pyblosc2.schema_declared`, importable from here; the text kinds ``utf8``,
``vlstring``, ``vlbytes``, ``dictionary`` are :mod:`pyblosc2.ctable.strings`').
:class:`SchemaSpec` and the null handling are :mod:`pyblosc2.schema_base`'s.

The spec classes shadow ``bool``, ``bytes`` and ``list`` in this module, as in python-blosc2.
"""

from __future__ import annotations

import builtins
import dataclasses
from dataclasses import MISSING
from typing import Any, ClassVar

import numpy as np

from .errors import ParamError, ParamTypeError
from .schema_base import NULL_MASK, SchemaSpec, _Nullable
from .schema_declared import NDArraySpec, ObjectSpec, ndarray

__all__ = [
    "ListSpec",
    "NDArraySpec",
    "ObjectSpec",
    "SchemaSpec",
    "StructSpec",
    "bool",
    "bytes",
    "complex64",
    "complex128",
    "field",
    "fill_value_for",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "list",
    "ndarray",
    "spec_from_metadata_dict",
    "string",
    "struct",
    "timestamp",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]


FIELD_METADATA_KEY = "blosc2"
_CTABLE_ONLY = ("utf8", "vlstring", "vlbytes", "object", "ndarray", "dictionary")


class _Numeric(_Nullable):
    """Integers and floats, with ``ge``/``gt``/``le``/``lt`` bounds."""

    def to_pydantic_kwargs(self) -> dict[str, Any]:
        """The bounds set."""
        bounds = {"ge": self.ge, "gt": self.gt, "le": self.le, "lt": self.lt}
        return {k: v for k, v in bounds.items() if v is not None}

    def __init__(
        self,
        *,
        ge: Any = None,
        gt: Any = None,
        le: Any = None,
        lt: Any = None,
        nullable: builtins.bool = False,
        null_value: Any = None,
        null_storage: str | None = None,
    ) -> None:
        self.ge, self.gt, self.le, self.lt = ge, gt, le, lt
        self._init_nulls(nullable, null_value, null_storage)

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it: kind, bounds and null handling."""
        bounds = {"ge": self.ge, "gt": self.gt, "le": self.le, "lt": self.lt}
        return {
            "kind": self.kind,
            **{k: v for k, v in bounds.items() if v is not None},
            **self._null_metadata(),
        }


def _numeric(name: str, np_type: type, py_type: type) -> type[_Numeric]:
    doc = (
        f"A {np.dtype(np_type).name} item or column.\n\n"
        f"    >>> {name}(ge=0, nullable=True).to_metadata_dict()\n"
        f"    {{'kind': '{name}', 'ge': 0, 'nullable': True}}\n"
    )
    return type(
        name,
        (_Numeric,),
        {"dtype": np.dtype(np_type), "python_type": py_type, "kind": name, "__doc__": doc},
    )


int8 = _numeric("int8", np.int8, int)
int16 = _numeric("int16", np.int16, int)
int32 = _numeric("int32", np.int32, int)
int64 = _numeric("int64", np.int64, int)
uint8 = _numeric("uint8", np.uint8, int)
uint16 = _numeric("uint16", np.uint16, int)
uint32 = _numeric("uint32", np.uint32, int)
uint64 = _numeric("uint64", np.uint64, int)
float32 = _numeric("float32", np.float32, float)
float64 = _numeric("float64", np.float64, float)


class _Complex(_Nullable):
    """Complex numbers; nulls only out of band (``null_storage="mask"``)."""

    python_type = complex

    def __init__(
        self,
        *,
        nullable: builtins.bool = False,
        null_value: Any = None,
        null_storage: str | None = None,
    ) -> None:
        if null_value is not None:
            raise ParamError("complex columns cannot use an in-band null sentinel")
        if nullable and null_storage is None:
            null_storage = NULL_MASK
        self._init_nulls(nullable, None, null_storage)
        if self.nullable and self.null_storage != NULL_MASK:
            raise ParamError("complex columns support null_storage='mask' only")

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it: kind and null handling."""
        return {"kind": self.kind, **self._null_metadata()}


class complex64(_Complex):
    """Two float32.

    >>> complex64(nullable=True).to_metadata_dict()
    {'kind': 'complex64', 'nullable': True, 'null_storage': 'mask'}
    """

    dtype = np.dtype(np.complex64)
    kind = "complex64"


class complex128(_Complex):
    """Two float64.

    >>> complex128().to_metadata_dict()
    {'kind': 'complex128'}
    """

    dtype = np.dtype(np.complex128)
    kind = "complex128"


class timestamp(_Nullable):
    """Epoch offsets (int64) in ``unit`` (``s``, ``ms``, ``us`` or ``ns``).

    >>> timestamp(unit="ms").to_metadata_dict()
    {'kind': 'timestamp', 'unit': 'ms'}
    """

    dtype = np.dtype(np.int64)
    python_type = object
    kind = "timestamp"

    def __init__(
        self,
        *,
        unit: str = "us",
        timezone: str | None = None,
        nullable: builtins.bool = False,
        null_value: Any = None,
        null_storage: str | None = None,
    ) -> None:
        if unit not in ("s", "ms", "us", "ns"):
            raise ParamError(f"timestamp unit must be one of s, ms, us, ns, got {unit!r}")
        self.unit, self.timezone = unit, timezone
        self._init_nulls(nullable, null_value, null_storage)

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it: unit, timezone and null handling."""
        out: dict[str, Any] = {"kind": "timestamp", "unit": self.unit}
        if self.timezone is not None:
            out["timezone"] = self.timezone
        return {**out, **self._null_metadata()}


class bool(_Nullable):
    """A boolean (stored as uint8 when nulls are in band: 255 is null).

    >>> bool(nullable=True).dtype, bool().to_metadata_dict()
    (dtype('uint8'), {'kind': 'bool'})
    """

    python_type = builtins.bool
    kind = "bool"

    def __init__(
        self,
        *,
        nullable: builtins.bool = False,
        null_value: Any = None,
        null_storage: str | None = None,
    ) -> None:
        if null_value is not None and null_value != 255 and null_storage != NULL_MASK:
            raise ParamError("Nullable bool null_value must be 255")
        self._init_nulls(nullable, null_value, null_storage)
        in_band = self.nullable and self.null_storage != NULL_MASK
        self.dtype = np.dtype(np.uint8 if in_band else np.bool_)

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it: kind and null handling."""
        return {"kind": "bool", **self._null_metadata()}


class _Sized(_Nullable):
    """Fixed-width text or bytes: ``max_length`` (default 32) sets the dtype."""

    _letter: ClassVar[str]

    def __init__(
        self,
        *,
        min_length: int | None = None,
        max_length: int | None = None,
        nullable: builtins.bool = False,
        null_value: Any = None,
        null_storage: str | None = None,
    ) -> None:
        self.min_length = min_length
        self.max_length = 32 if max_length is None else max_length
        self._init_nulls(nullable, null_value, null_storage)
        self.dtype = np.dtype(f"{self._letter}{self.max_length}")

    def _constraints(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.min_length is not None:
            out["min_length"] = self.min_length
        out["max_length"] = self.max_length
        return out

    def to_pydantic_kwargs(self) -> dict[str, Any]:
        """The length limits (and a string's pattern)."""
        return self._constraints()

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it: kind, length limits and null handling."""
        return {"kind": self.kind, **self._constraints(), **self._null_metadata()}


class string(_Sized):
    """Fixed-width text (NumPy ``U<max_length>``); ``pattern``: a regex (validation).

    >>> string(max_length=16).to_metadata_dict()
    {'kind': 'string', 'max_length': 16}
    """

    python_type = str
    kind = "string"
    _letter = "U"

    def __init__(self, *, pattern: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pattern = pattern

    def _constraints(self) -> dict[str, Any]:
        out = super()._constraints()
        if self.pattern is not None:
            out["pattern"] = self.pattern
        return out


class bytes(_Sized):
    """Fixed-width bytes (NumPy ``S<max_length>``).

    >>> bytes(min_length=1).dtype
    dtype('S32')
    """

    python_type = builtins.bytes
    kind = "bytes"
    _letter = "S"


class StructSpec(SchemaSpec):
    """Dict-like values with named fields (each a spec)."""

    python_type = dict
    kind = "struct"

    def __init__(self, fields: dict[str, SchemaSpec], *, nullable: builtins.bool = False) -> None:
        if not isinstance(fields, dict) or not fields:
            raise ParamTypeError("StructSpec fields must be a non-empty dict")
        for name, spec in fields.items():
            if not isinstance(name, str) or not isinstance(spec, SchemaSpec):
                raise ParamTypeError("StructSpec fields must map str names to SchemaSpecs")
        self.fields = dict(fields)
        self.nullable = nullable

    def to_metadata_dict(self) -> dict[str, Any]:
        return {
            "kind": "struct",
            "fields": [{"name": n, **s.to_metadata_dict()} for n, s in self.fields.items()],
            "nullable": self.nullable,
        }

    def display_label(self) -> str:
        return "struct[" + ", ".join(self.fields) + "]"


class ListSpec(SchemaSpec):
    """List values of ``item_spec`` items, stored by a ListArray (``storage``: ``"batch"``,
    a BatchArray of ``batch_rows`` lists per batch, or ``"vl"``, an ObjectArray)."""

    python_type = builtins.list
    kind = "list"

    def __init__(
        self,
        item_spec: SchemaSpec,
        *,
        nullable: builtins.bool = False,
        storage: str = "batch",
        serializer: str = "msgpack",
        batch_rows: int | None = 2048,
        items_per_block: int | None = None,
    ) -> None:
        if not isinstance(item_spec, SchemaSpec):
            raise ParamTypeError("ListSpec item_spec must be a SchemaSpec instance")
        if storage not in ("batch", "vl"):
            raise ParamError(f"storage must be 'batch' or 'vl', got {storage!r}")
        if serializer not in ("msgpack", "arrow"):
            raise ParamError(f"serializer must be 'msgpack' or 'arrow', got {serializer!r}")
        if storage == "vl" and serializer != "msgpack":
            raise ParamError("storage='vl' only supports serializer='msgpack'")
        _count("batch_rows", batch_rows)
        _count("items_per_block", items_per_block)
        if not isinstance(nullable, builtins.bool):
            raise ParamTypeError(f"ListSpec nullable must be a bool, got {nullable!r}")
        self.item_spec = item_spec
        self.nullable = nullable
        self.storage = storage
        self.serializer = serializer
        self.batch_rows = batch_rows
        self.items_per_block = items_per_block

    def to_metadata_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "list",
            "item": self.item_spec.to_metadata_dict(),
            "nullable": self.nullable,
            "storage": self.storage,
            "serializer": self.serializer,
            "batch_rows": self.batch_rows,
        }
        if self.items_per_block is not None:
            out["items_per_block"] = self.items_per_block
        return out

    def to_listarray_metadata(self) -> dict[str, Any]:
        """The ``listarray`` metalayer (``backend`` last, as python-blosc2 writes it)."""
        out = {"version": 1, **self.to_metadata_dict()}
        out["backend"] = out.pop("storage")
        return out

    def display_label(self) -> str:
        """``list[<item kind>]`` (nested lists spelled out), as python-blosc2 labels it."""
        item = self.item_spec
        return f"list[{item.display_label() if isinstance(item, ListSpec) else item.kind}]"

    @classmethod
    def from_metadata_dict(cls, data: dict[str, Any]) -> ListSpec:
        """The spec of a ``listarray`` metalayer (or of a list column's dict)."""
        if not isinstance(data, dict):
            raise ParamTypeError(f"list metadata must be a mapping, got {type(data).__name__}")
        item = data.get("item_spec", data.get("item"))
        backend = data.get("backend")
        return cls(
            spec_from_metadata_dict(item),
            nullable=data.get("nullable", False),
            storage=backend if backend is not None else data.get("storage", "batch"),
            serializer=data.get("serializer", "msgpack"),
            batch_rows=data.get("batch_rows"),
            items_per_block=data.get("items_per_block"),
        )


_KINDS: dict[str, type[SchemaSpec]] = {
    cls.kind: cls
    for cls in (
        int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64,
        complex64, complex128, timestamp, bool, string, bytes,
    )
}  # fmt: skip


def spec_from_metadata_dict(data: Any) -> SchemaSpec:
    """The spec a metadata dict describes.

    >>> spec_from_metadata_dict({"kind": "int32", "ge": 0}).to_metadata_dict()
    {'kind': 'int32', 'ge': 0}
    """
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ParamTypeError(f"a spec's metadata must be a mapping with a 'kind', got {data!r}")
    rest = dict(data)
    kind = rest.pop("kind")
    if kind in ("list", "struct"):
        try:
            return _nested_from_dict(kind, rest)
        except (TypeError, KeyError, AttributeError) as exc:  # a missing or odd entry
            raise ParamTypeError(f"bad {kind} spec metadata {data!r}: {exc!r}") from None
    if kind == "ndarray":
        return NDArraySpec.from_metadata_dict(data)
    if kind == "object":
        return ObjectSpec.from_metadata_dict(data)
    if kind in _CTABLE_ONLY:
        raise NotImplementedError(f"the CTable column kind {kind!r} is not implemented by pyblosc2")
    cls = _KINDS.get(kind)
    if cls is None:
        raise ParamError(f"Unknown column kind {kind!r}")
    try:
        return cls(**rest)
    except TypeError as exc:
        raise ParamTypeError(f"bad {kind} spec metadata {data!r}: {exc}") from None


def _nested_from_dict(kind: str, rest: dict[str, Any]) -> SchemaSpec:
    if kind == "list":
        rest.setdefault("batch_rows", None)  # before ListArray V2: caller-managed batches
        return ListSpec(spec_from_metadata_dict(rest.pop("item")), **rest)
    fields = {}
    for entry in rest.pop("fields"):
        entry = dict(entry)
        name = entry.pop("name")
        fields[name] = spec_from_metadata_dict(entry)
    return StructSpec(fields, **rest)


def _count(name: str, value: Any) -> None:
    """Refuse a batch size that is not None or a positive int (at most 2**31)."""
    if value is None:
        return
    if isinstance(value, builtins.bool) or not isinstance(value, int) or not 0 < value <= 1 << 31:
        raise ParamError(f"{name} must be positive (at most 2**31) or None, got {value!r}")


def struct(fields: dict[str, SchemaSpec], *, nullable: builtins.bool = False) -> StructSpec:
    """A struct spec (dict-like values).

    >>> struct({"x": int32(), "y": string()}).display_label()
    'struct[x, y]'
    """
    return StructSpec(fields, nullable=nullable)


def list(
    item_spec: SchemaSpec,
    *,
    nullable: builtins.bool = False,
    storage: str = "batch",
    serializer: str = "msgpack",
    batch_rows: int | None = 2048,
    items_per_block: int | None = None,
) -> ListSpec:
    """A list spec (for ListArray and list columns).

    >>> list(int32(), nullable=True).to_listarray_metadata()["backend"]
    'batch'
    """
    return ListSpec(
        item_spec,
        nullable=nullable,
        storage=storage,
        serializer=serializer,
        batch_rows=batch_rows,
        items_per_block=items_per_block,
    )


def field(
    spec: SchemaSpec,
    *,
    default: Any = MISSING,
    cparams: dict[str, Any] | None = None,
    dparams: dict[str, Any] | None = None,
    chunks: tuple[int, ...] | None = None,
    blocks: tuple[int, ...] | None = None,
) -> Any:
    """A dataclass field carrying a spec and its storage options (python-blosc2's
    ``blosc2.field``, read by CTable schemas).

    >>> from dataclasses import dataclass, fields
    >>> @dataclass
    ... class Row:
    ...     tags: list = field(list(int32()))
    >>> fields(Row)[0].metadata["blosc2"]["spec"].display_label()
    'list[int32]'
    """
    if not isinstance(spec, SchemaSpec):
        raise ParamTypeError(f"field() requires a SchemaSpec, got {type(spec)!r}")
    meta = {
        FIELD_METADATA_KEY: {
            "spec": spec,
            "cparams": cparams,
            "dparams": dparams,
            "chunks": chunks,
            "blocks": blocks,
        }
    }
    if default is MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def fill_value_for(spec: SchemaSpec) -> Any:
    """What the null slots of a mask-storage column of ``spec`` hold (python-blosc2's
    choice, not recorded in the schema): NaN for floats, ``INT64_MIN`` (NaT) for a
    timestamp, the dtype's zero otherwise (``""`` / ``b""`` for text and bytes).

    >>> fill_value_for(int32()), fill_value_for(string()), fill_value_for(timestamp())
    (0, '', -9223372036854775808)
    """
    kind = getattr(spec, "kind", "")
    if kind in ("float32", "float64"):
        return float("nan")
    if kind == "timestamp":
        return int(np.iinfo(np.int64).min)
    if kind in ("string", "utf8", "vlstring"):
        return ""
    if kind in ("bytes", "vlbytes"):
        return b""
    dtype = getattr(spec, "dtype", None)
    return np.zeros((), dtype=np.dtype(dtype) if dtype is not None else np.int64)[()].item()
