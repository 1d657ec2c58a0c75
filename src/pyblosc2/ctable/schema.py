"""A CTable's row schema: a dataclass compiled into typed columns, and the JSON document
python-blosc2 4.x keeps in the ``schema`` vlmeta entry of a table's ``_meta`` super-chunk.

The document is ``{"version": 1, "columns": [...], ...}``; each column entry is its name, the
metadata dict of its spec (``kind`` plus the constraints set, :mod:`pyblosc2.schema`), its
declared ``default`` (complex numbers and bytes as tagged dicts) and its storage options
(``cparams``, ``dparams``, ``chunks``, ``blocks``). python-blosc2 adds table-wide entries
beside ``columns`` (``n_rows``, ``summary_indexes_built``, ``create_summary_index``); they
are kept as they are. A plain annotation becomes a spec as in python-blosc2: ``int`` →
``int64``, ``float`` → ``float64``, ``bool``, ``complex`` → ``complex128``, ``str`` →
``string`` (``U32``), ``bytes`` (``S32``).

pyblosc2 stores numbers, ``bool``, ``timestamp``, fixed-width ``string`` and ``bytes``, the
text kinds (:mod:`.strings`), N-d cells (:mod:`.ndcells`), lists (:mod:`.listcol`) and objects
(:mod:`.objcol`); struct columns and python-blosc2's nested schema metadata raise
:class:`NotImplementedError` naming them; nullable columns are :mod:`.nulls`'.
"""

from __future__ import annotations

import base64
import dataclasses
import typing
from dataclasses import MISSING
from typing import Any, TypeGuard

import numpy as np

from .. import schema as specs
from ..errors import ParamError, ParamTypeError
from .ndcells import resolve_cells
from .nested import relpath
from .nulls import check_null_spec
from .strings import VAR_KINDS, var_spec

__all__ = ["TableColumn", "compile_row_type", "schema_from_dict", "schema_to_dict"]

#: names python-blosc2 keeps for a table's own leaves
RESERVED_NAMES = frozenset({"_meta", "_valid_rows", "_cols", "_indexes"})
SCHEMA_VERSIONS = (1, 2, 3)

_FROM_ANNOTATION: dict[Any, type[specs.SchemaSpec]] = {
    bool: specs.bool,  # before int: bool is an int
    int: specs.int64,
    float: specs.float64,
    complex: specs.complex128,
    str: specs.string,
    bytes: specs.bytes,
}
_STORED_KINDS = frozenset(
    {
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float32", "float64", "complex64", "complex128", "bool", "string", "bytes", "timestamp",
        "ndarray", "list", "object", *VAR_KINDS,
    }
)  # fmt: skip


#: every kind python-blosc2 4.x writes (those not in _STORED_KINDS are NotImplementedError)
_KNOWN_KINDS = _STORED_KINDS | {"timestamp", "list", "struct", *specs._CTABLE_ONLY}


@dataclasses.dataclass(frozen=True, slots=True)
class TableColumn:
    """One column: its name, spec, NumPy dtype, declared default and storage options."""

    name: str
    spec: specs.SchemaSpec
    default: Any = MISSING
    cparams: dict[str, Any] | None = None
    dparams: dict[str, Any] | None = None
    chunks: tuple[int, ...] | None = None
    blocks: tuple[int, ...] | None = None

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype = self.spec.dtype
        return np.dtype(object if dtype is None else dtype)  # None: a text kind (strings.py)

    @property
    def py_type(self) -> Any:
        """The Python type of the column's values (the spec's)."""
        return getattr(self.spec, "python_type", object)

    @property
    def config(self) -> TableColumn:
        """The storage options (python-blosc2's ``CompiledColumn.config``): this column's
        ``cparams``, ``dparams``, ``chunks`` and ``blocks``."""
        return self

    def to_dict(self) -> dict[str, Any]:
        """The column's entry in the schema document."""
        entry: dict[str, Any] = {"name": self.name, **self.spec.to_metadata_dict()}
        if self.default is not MISSING:
            entry["default"] = _default_to_json(self.default)
        for key in ("cparams", "dparams"):
            if getattr(self, key) is not None:
                entry[key] = getattr(self, key)
        for key in ("chunks", "blocks"):
            if getattr(self, key) is not None:
                entry[key] = list(getattr(self, key))
        return entry


def check_column_name(name: Any) -> str:
    """A column name python-blosc2 accepts: a non-empty str not starting with ``_``."""
    if not isinstance(name, str) or not name:
        raise ParamError(f"a column name must be a non-empty str, got {name!r}")
    if name.startswith("_") or name in RESERVED_NAMES:
        raise ParamError(f"column name {name!r}: names starting with '_' are reserved")
    relpath(name)  # a dotted name: no empty segment (nested.py)
    return name


def check_stored_spec(name: str, spec: specs.SchemaSpec) -> specs.SchemaSpec:
    """``spec`` if pyblosc2 stores such a column, else :class:`NotImplementedError`."""
    kind = getattr(spec, "kind", type(spec).__name__)
    if kind not in _STORED_KINDS:
        raise NotImplementedError(f"CTable column {name!r}: {kind} columns")
    if kind == "list" and getattr(spec, "serializer", "msgpack") != "msgpack":
        raise NotImplementedError(f"CTable column {name!r}: list columns with Arrow batches")
    if kind == "ndarray":
        return resolve_cells(name, spec)  # type: ignore[arg-type]  # its null sentinel
    if getattr(spec, "nullable", False) and kind not in (*VAR_KINDS, "list", "object"):
        check_null_spec(name, spec)  # the null storage of :mod:`.nulls`
    return spec


def compile_row_type(row_type: Any) -> list[TableColumn]:
    """The columns of a dataclass row type, in field order.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Row:
    ...     x: int = 0
    ...     name: str = ""
    >>> [(c.name, c.dtype.str) for c in compile_row_type(Row)]
    [('x', '<i8'), ('name', '<U32')]
    """
    if not (isinstance(row_type, type) and dataclasses.is_dataclass(row_type)):
        raise ParamTypeError(f"a CTable row type must be a dataclass type, got {row_type!r}")
    try:
        hints = typing.get_type_hints(row_type)
    except Exception as exc:  # unresolvable forward references
        raise ParamTypeError(f"type hints of {row_type.__name__}: {exc}") from None
    columns = []
    for f in dataclasses.fields(row_type):
        name = check_column_name(f.name)
        annotation = hints.get(name, f.type)
        meta = f.metadata.get(specs.FIELD_METADATA_KEY)
        options: dict[str, Any] = {}
        if meta is not None:
            spec = check_stored_spec(name, meta["spec"])  # an unbuilt kind is named first
            options = {k: meta.get(k) for k in ("cparams", "dparams", "chunks", "blocks")}
            expected = getattr(spec, "python_type", None)
            if spec.kind == "list" and typing.get_origin(annotation) is not list:
                raise ParamTypeError(  # python-blosc2 wants list[T], not a bare list
                    f"column {name!r}: annotation {annotation!r} is incompatible with its "
                    "list spec; expected list[T]"
                )
            if (
                spec.kind != "list"
                and expected not in (None, object)
                and annotation is not expected
            ):
                raise ParamTypeError(
                    f"column {name!r}: annotation {annotation!r} is incompatible with its "
                    f"{spec.kind} spec (expected {expected.__name__})"
                )
        else:
            spec_cls = _FROM_ANNOTATION.get(annotation)
            if spec_cls is None:
                raise ParamTypeError(
                    f"column {name!r}: no spec for the annotation {annotation!r}; "
                    "declare it with blosc2.field(blosc2.<type>(...))"
                )
            spec = spec_cls()
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = MISSING
        columns.append(TableColumn(name, check_stored_spec(name, spec), default, **options))
    if not columns:
        raise ParamError(f"{row_type.__name__} has no fields: a CTable needs a column")
    return columns


def schema_to_dict(columns: list[TableColumn]) -> dict[str, Any]:
    """The schema document of ``columns`` (as python-blosc2's ``schema_to_dict``): version 3
    when a column keeps its nulls in a mask (a reader before mask storage must not take such
    a column's fill for values), else 1."""
    mask = any(getattr(c.spec, "null_storage", None) == "mask" for c in columns)
    return {"version": 3 if mask else 1, "columns": [c.to_dict() for c in columns]}


def schema_from_dict(doc: Any) -> list[TableColumn]:
    """The columns a schema document describes.

    >>> doc = {"version": 1, "columns": [{"name": "x", "kind": "int32", "default": 0}]}
    >>> schema_from_dict(doc)[0].dtype
    dtype('int32')
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("columns"), list):
        raise ParamTypeError(f"a CTable schema must be a mapping with 'columns', got {doc!r}")
    version = doc.get("version", 1)
    if version not in SCHEMA_VERSIONS:
        raise ParamError(
            f"Unsupported schema version {version!r}: this reader knows {SCHEMA_VERSIONS} "
            "(a writer's table.convert_nulls(to='sentinel') gives a copy without version 3's "
            "mask columns)"
        )
    if doc.get("materialized_columns"):  # computed_columns: the table reads them
        raise NotImplementedError("CTable materialized (generated) columns")
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise ParamTypeError(f"a CTable schema's 'metadata' must be a mapping, got {metadata!r}")
    nested = metadata.get("nested")
    names = nested.get("logical_to_physical") if isinstance(nested, dict) else None
    flat = (  # python-blosc2 records the names of every Arrow import, nested or not
        isinstance(names, dict)
        and set(nested) <= {"version", "logical_to_physical"}  # type: ignore[arg-type]
        and all(isinstance(k, str) and k == v and "." not in k for k, v in names.items())
    )
    if nested is not None and not flat:
        raise NotImplementedError("CTable nested (struct) columns")
    columns = []
    for raw in doc["columns"]:
        if not isinstance(raw, dict) or "name" not in raw or "kind" not in raw:
            raise ParamTypeError(f"a CTable schema column needs 'name' and 'kind', got {raw!r}")
        entry = dict(raw)
        name = check_column_name(entry.pop("name"))
        default = _default_from_json(entry.pop("default")) if "default" in entry else MISSING
        options = {k: entry.pop(k, None) for k in ("cparams", "dparams")}
        ndim = 1 + len(entry["item_shape"]) if entry.get("kind") == "ndarray" else 1
        if not isinstance(entry.get("item_shape", []), list):  # refused with its spec below
            ndim = 1
        chunks = _shape(name, "chunks", entry.pop("chunks", None), ndim)
        blocks = _shape(name, "blocks", entry.pop("blocks", None), ndim)
        kind = entry.get("kind")
        if not isinstance(kind, str):
            raise ParamTypeError(f"CTable column {name!r}: kind must be a str, got {kind!r}")
        if kind not in _STORED_KINDS:
            if kind not in _KNOWN_KINDS:
                raise ParamError(f"CTable column {name!r}: Unknown column kind {kind!r}")
            raise NotImplementedError(f"CTable column {name!r}: {kind} columns")
        var = kind in VAR_KINDS  # strings.py's kinds
        spec = var_spec(**entry) if var else specs.spec_from_metadata_dict(entry)
        columns.append(
            TableColumn(
                name,
                check_stored_spec(name, spec),
                default,
                **options,
                chunks=chunks,
                blocks=blocks,
            )
        )
    return columns


def _shape(name: str, key: str, value: Any, ndim: int = 1) -> tuple[int, ...] | None:
    """A column's ``chunks``/``blocks`` entry: None or a list of ``ndim`` positive ints."""
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != ndim
        or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in value)
    ):
        raise ParamTypeError(
            f"column {name!r}: {key} must be a list of "
            f"{'one positive int' if ndim == 1 else f'{ndim} positive ints'}: {value!r}"
        )
    return tuple(value)


def _default_to_json(value: Any) -> Any:
    if isinstance(value, complex):
        return {"__complex__": True, "real": value.real, "imag": value.imag}
    if isinstance(value, bytes):
        return {"__bytes__": True, "base64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _default_from_json(value: Any) -> Any:
    """A declared default from the document (complex numbers and bytes as tagged dicts).

    >>> _default_from_json({"__complex__": True, "real": 1, "imag": -2.5})
    (1-2.5j)
    >>> _default_from_json({"__bytes__": True, "base64": "eA=="})
    b'x'
    """
    if isinstance(value, dict) and value.get("__complex__"):
        real, imag = value.get("real"), value.get("imag")
        if not (_is_number(real) and _is_number(imag)):
            raise ParamTypeError(f"a complex default needs numbers 'real' and 'imag': {value!r}")
        return complex(real, imag)
    if isinstance(value, dict) and value.get("__bytes__"):
        encoded = value.get("base64")
        try:
            if not isinstance(encoded, str):
                raise ValueError("not a str")
            return base64.b64decode(encoded, validate=True)
        except ValueError as exc:  # binascii.Error too
            raise ParamError(f"a bytes default needs 'base64' text: {value!r} ({exc})") from None
    return value
