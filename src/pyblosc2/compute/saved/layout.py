"""The two on-disk forms of a saved lazy expression or UDF, as python-blosc2 writes them:
their metalayer and vlmeta names, and each payload as a frozen dataclass parsed from (and
written to) its decoded msgpack value, every field checked and bounded.

**b2o carrier** (python-blosc2 4.x's ``b2objects``): an NDArray of the result's shape and
dtype, with no chunks written, whose frame holds

* metalayer ``b2o``: ``{"kind": KIND, "version": 1}`` (the *marker*; KIND is ``lazyexpr``
  or ``lazyudf``, or ``c2array``/``remote_array`` for python-blosc2's remote objects);
* vlmeta ``b2o``: the *payload*, a map with the same ``kind`` and ``version`` and
  - ``lazyexpr``: ``expression`` (a string over the operand names) and ``operands`` (name
    -> operand reference);
  - ``lazyudf``: ``function_kind`` (``"dsl"``), ``dsl_version`` (1), ``name``,
    ``udf_source`` (the DSL kernel's source), ``dtype`` (numpy's ``dtype.str``), ``shape``
    (a list), ``operands`` (``o0``, ``o1``... -> reference) and ``kwargs`` (the storage
    arguments given to ``lazyudf``);
* vlmeta ``_b2o_user_vlmeta``: the user's ``vlmeta`` of the lazy array (a map).

An operand reference is python-blosc2's ``Ref.to_dict()``: ``{"kind": "urlpath",
"version": 1, "urlpath": P}`` (a container file, P relative to the carrier's directory or
absolute) or ``{"kind": "dictstore_key", "version": 1, "urlpath": STORE, "key": K}``
(a member of a store).

**Legacy form** (python-blosc2 before the b2o carrier, and 4.x for UDFs of plain Python
functions): an NDArray with metalayer ``LazyArray`` (0: an expression, 1: a UDF) and vlmeta
``_LazyArray``: ``{"expression": E, "UDF": None, "operands": {name: P}}`` for an expression,
``{"UDF": SOURCE, "operands": {"o0": P, ...}, "name": N}`` (plus ``"dsl_source"`` for a DSL
kernel) for a UDF, where P is a path relative to the carrier's directory (or a
``{"path", "urlbase"}`` map naming a Caterva2 dataset).

A reader MUST check every field before using it: a payload is bounded by
:data:`MAX_PAYLOAD` decoded bytes, names by :data:`MAX_OPERANDS`, strings by
:data:`MAX_PATH`/:data:`MAX_SOURCE` (expressions by the parser's ``MAX_LENGTH``). Unknown
keys are ignored (python-blosc2 ignores them too); unknown kinds and versions are refused.

>>> ExprPayload.from_value({"kind": "lazyexpr", "version": 1, "expression": "a + b",
...     "operands": {"a": {"kind": "urlpath", "version": 1, "urlpath": "a.b2nd"},
...                  "b": {"kind": "urlpath", "version": 1, "urlpath": "b.b2nd"}}}).names
('a', 'b')
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import FormatError
from ...vlarrays.ref import Ref
from ..parser import MAX_LENGTH

__all__ = [
    "B2O",
    "DSL_VERSION",
    "LEGACY_EXPR",
    "LEGACY_META",
    "LEGACY_UDF",
    "LEGACY_VLMETA",
    "MAX_DIMS",
    "MAX_OPERANDS",
    "MAX_PATH",
    "MAX_PAYLOAD",
    "MAX_SOURCE",
    "USER_VLMETA",
    "VERSION",
    "ExprPayload",
    "LegacyPayload",
    "Marker",
    "UDFPayload",
    "check_name",
    "ref_from_value",
]

#: the metalayer naming the object (the marker) and the vlmeta entry holding it (payload)
B2O = "b2o"
#: the vlmeta entry holding the user's vlmeta of a saved lazy array
USER_VLMETA = "_b2o_user_vlmeta"
#: the legacy form's metalayer (its value says expression or UDF) and vlmeta entry
LEGACY_META = "LazyArray"
LEGACY_VLMETA = "_LazyArray"
#: the legacy metalayer's values
LEGACY_EXPR, LEGACY_UDF = 0, 1
#: the only version of the marker, payloads and references python-blosc2 writes
VERSION = 1
#: the version of a UDF payload's DSL
DSL_VERSION = 1

#: the largest decoded payload (bytes) a reader decodes
MAX_PAYLOAD = 1 << 22
#: the most operands a saved expression or UDF may name
MAX_OPERANDS = 512
#: the longest operand path or store key (characters)
MAX_PATH = 4096
#: the longest UDF source (characters)
MAX_SOURCE = 1 << 18
#: the most dimensions a UDF's shape may have (numpy's limit)
MAX_DIMS = 64
#: keys of a reference map python-blosc2 writes
_REF_KEYS = ("kind", "version", "urlpath", "key", "path", "urlbase")


def _bad(where: str, field: str, expected: str, got: Any) -> FormatError:
    shown = got if isinstance(got, int | float) else _short(got)
    return FormatError(where, field, None, expected, shown)


def _short(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 120 else f"{r[:100]}... ({len(r)} characters)"


def _str(value: Any, where: str, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise _bad(where, field, "a string", type(value).__name__)
    if len(value) > limit:
        raise _bad(where, field, f"at most {limit} characters", f"{len(value)} characters")
    return value


def _map(value: Any, where: str, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(where, field, "a map", type(value).__name__)
    return value


def _version(value: Any, where: str, field: str = "version") -> None:
    if value != VERSION or isinstance(value, bool):
        raise _bad(where, field, f"version {VERSION}", value)


def check_name(name: Any, where: str) -> str:
    """An operand name: an identifier that is not a Python keyword nor a dunder name.

    >>> check_name("o0", "x")
    'o0'
    >>> check_name("__class__", "x")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.FormatError: x: operand name is '__class__', expected an identifier ...
    """
    if (
        not isinstance(name, str)
        or not name.isidentifier()
        or keyword.iskeyword(name)
        or (name.startswith("__") and name.endswith("__"))
        or len(name) > 255
    ):
        raise _bad(where, "operand name", "an identifier (no keyword, no dunder name)", name)
    return name


def ref_from_value(value: Any, where: str) -> Ref:
    """An operand reference (python-blosc2's ``Ref`` map), checked: a map of the known keys
    with string values no longer than :data:`MAX_PATH`, version 1, a known kind."""
    m = _map(value, where, "operand reference")
    for k in _REF_KEYS[2:]:
        if m.get(k) is not None:
            _str(m[k], where, f"reference {k}", MAX_PATH)
    _version(m.get("version"), where, "reference version")
    kind = m.get("kind")
    if not isinstance(kind, str):
        raise _bad(where, "reference kind", "a string", type(kind).__name__)
    try:
        return Ref.from_dict({k: m.get(k) for k in _REF_KEYS if k in m})
    except (ValueError, TypeError) as exc:
        raise _bad(where, "operand reference", "python-blosc2's Ref map", str(exc)) from None


def _operands(value: Any, where: str) -> dict[str, Ref]:
    m = _map(value, where, "operands")
    if len(m) > MAX_OPERANDS:
        raise _bad(where, "operands", f"at most {MAX_OPERANDS}", len(m))
    return {check_name(k, where): ref_from_value(v, f"{where} operand {k!r}") for k, v in m.items()}


@dataclass(frozen=True, slots=True)
class Marker:
    """The ``b2o`` metalayer: the kind of object a carrier holds.

    >>> Marker.from_value({"kind": "lazyexpr", "version": 1}).to_value()
    {'kind': 'lazyexpr', 'version': 1}
    """

    kind: str

    @classmethod
    def from_value(cls, value: Any, where: str = "b2o metalayer") -> Marker:
        m = _map(value, where, "marker")
        _version(m.get("version"), where)
        return cls(_str(m.get("kind"), where, "kind", 64))

    def to_value(self) -> dict[str, Any]:
        return {"kind": self.kind, "version": VERSION}


@dataclass(frozen=True, slots=True)
class ExprPayload:
    """A saved expression: its string and the references of the operands it names."""

    expression: str
    operands: dict[str, Ref]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.operands)

    @classmethod
    def from_value(cls, value: Any, where: str = "b2o payload") -> ExprPayload:
        m = _map(value, where, "payload")
        _version(m.get("version"), where)
        if m.get("kind") != "lazyexpr":
            raise _bad(where, "kind", "'lazyexpr'", m.get("kind"))
        expression = _str(m.get("expression"), where, "expression", MAX_LENGTH)
        return cls(expression, _operands(m.get("operands"), where))

    def to_value(self) -> dict[str, Any]:
        return {
            "kind": "lazyexpr",
            "version": VERSION,
            "expression": self.expression,
            "operands": {k: r.to_dict() for k, r in self.operands.items()},
        }


@dataclass(frozen=True, slots=True)
class UDFPayload:
    """A saved UDF of a DSL kernel: its source, name, result and operands (``o0``... in
    order) and the storage arguments it was made with."""

    name: str
    source: str
    dtype: np.dtype
    shape: tuple[int, ...]
    operands: tuple[Ref, ...]
    kwargs: dict[str, Any]

    @classmethod
    def from_value(cls, value: Any, where: str = "b2o payload") -> UDFPayload:
        m = _map(value, where, "payload")
        _version(m.get("version"), where)
        if m.get("kind") != "lazyudf":
            raise _bad(where, "kind", "'lazyudf'", m.get("kind"))
        if m.get("function_kind") != "dsl":
            raise _bad(where, "function_kind", "'dsl'", m.get("function_kind"))
        if m.get("dsl_version") != DSL_VERSION or isinstance(m.get("dsl_version"), bool):
            raise _bad(where, "dsl_version", f"{DSL_VERSION}", m.get("dsl_version"))
        name = _str(m.get("name"), where, "name", 255)
        if not name.isidentifier() or name.startswith("__"):
            raise _bad(where, "name", "a function name", name)
        source = _str(m.get("udf_source"), where, "udf_source", MAX_SOURCE)
        dtype = _dtype(m.get("dtype"), where)
        shape = _shape(m.get("shape"), where)
        refs = _operands(m.get("operands"), where)
        order = [f"o{i}" for i in range(len(refs))]
        if sorted(refs) != sorted(order):
            raise _bad(where, "operands", f"the names {order}", sorted(refs))
        kwargs = _map(m.get("kwargs", {}), where, "kwargs")
        for k in kwargs:
            if not isinstance(k, str) or not k.isidentifier():
                raise _bad(where, "kwargs", "keyword names", k)
        return cls(name, source, dtype, shape, tuple(refs[k] for k in order), dict(kwargs))

    def to_value(self) -> dict[str, Any]:
        return {
            "kind": "lazyudf",
            "version": VERSION,
            "function_kind": "dsl",
            "dsl_version": DSL_VERSION,
            "name": self.name,
            "udf_source": self.source,
            "dtype": self.dtype.str,
            "shape": list(self.shape),
            "operands": {f"o{i}": r.to_dict() for i, r in enumerate(self.operands)},
            "kwargs": dict(self.kwargs),
        }


def _dtype(value: Any, where: str) -> np.dtype:
    text = _str(value, where, "dtype", 64)
    try:
        dt = np.dtype(text)
    except (TypeError, ValueError):
        raise _bad(where, "dtype", "a numpy dtype string", text) from None
    if dt.hasobject:
        raise _bad(where, "dtype", "a dtype without Python objects", text)
    return dt


def _shape(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or len(value) > MAX_DIMS:
        raise _bad(where, "shape", f"a list of at most {MAX_DIMS} sizes", _short(value))
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 1 << 63 for n in value):
        raise _bad(where, "shape", "non-negative integers", _short(value))
    return tuple(value)


@dataclass(frozen=True, slots=True)
class LegacyPayload:
    """The legacy ``_LazyArray`` entry: an expression (``udf`` None) or a UDF's source, and
    the operands (name -> a path relative to the carrier's directory; python-blosc2's
    Caterva2 maps are kept as the map, for the reader to refuse)."""

    kind: int
    expression: str | None
    udf: str | None
    name: str | None
    dsl_source: str | None
    operands: dict[str, str | dict[str, Any]]

    @classmethod
    def from_value(cls, kind: Any, value: Any, where: str = "_LazyArray") -> LegacyPayload:
        if kind not in (LEGACY_EXPR, LEGACY_UDF) or isinstance(kind, bool):
            raise _bad("LazyArray metalayer", "value", "0 (expression) or 1 (UDF)", kind)
        m = _map(value, where, "entry")
        ops = _map(m.get("operands"), where, "operands")
        if len(ops) > MAX_OPERANDS:
            raise _bad(where, "operands", f"at most {MAX_OPERANDS}", len(ops))
        operands: dict[str, str | dict[str, Any]] = {}
        for k, v in ops.items():
            check_name(k, where)
            if isinstance(v, dict):
                operands[k] = v
            else:
                operands[k] = _str(v, f"{where} operand {k!r}", "path", MAX_PATH)
        if kind == LEGACY_EXPR:
            text = _str(m.get("expression"), where, "expression", MAX_LENGTH)
            return cls(kind, text, None, None, None, operands)
        order = [f"o{i}" for i in range(len(operands))]
        if sorted(operands) != sorted(order):
            raise _bad(where, "operands", f"the names {order}", sorted(operands))
        source = _str(m.get("UDF"), where, "UDF", MAX_SOURCE)
        name = _str(m.get("name"), where, "name", 255)
        if not name.isidentifier() or name.startswith("__"):
            raise _bad(where, "name", "a function name", name)
        dsl = m.get("dsl_source")
        dsl_source = None if dsl is None else _str(dsl, where, "dsl_source", MAX_SOURCE)
        return cls(kind, None, source, name, dsl_source, {k: operands[k] for k in order})

    def to_value(self) -> dict[str, Any]:
        if self.kind == LEGACY_EXPR:
            return {"expression": self.expression, "UDF": None, "operands": dict(self.operands)}
        out: dict[str, Any] = {"UDF": self.udf, "operands": dict(self.operands), "name": self.name}
        if self.dsl_source is not None:
            out["dsl_source"] = self.dsl_source
        return out
