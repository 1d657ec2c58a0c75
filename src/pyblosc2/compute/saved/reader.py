"""Opening a saved lazy expression or UDF (both forms of :mod:`.layout`), in this order, so
that nothing is opened, compiled or computed before every check has passed:

1. the policy: under ``deserialize="safe"`` (``pyblosc2.open``'s default, as python-blosc2
   4.14's) a carrier is refused with :class:`~pyblosc2.UnsafeDeserializationError` naming
   its kind, before its payload is read;
2. the payload: read only when its decoded size is within :data:`~.layout.MAX_PAYLOAD`,
   decoded by the bounded msgpack reader (:mod:`pyblosc2.meta`), every field checked
   (:mod:`.layout`);
3. the recipe: an expression through the engine's allow-list and the saved-expression
   rules (:mod:`.check`); a UDF's source through the DSL's parser (a DSL kernel is never
   executed) or, for a plain Python function, the UDF subset check (:mod:`.udfsource`);
4. the operands: every path resolved and checked to lie inside the directory or store
   holding the carrier (:mod:`.place`), missing ones reported together
   (:class:`MissingOperands`); a cycle of saved expressions is refused;
5. only then each operand is opened (read-only, with the same policy) and checked to be an
   array (an NDArray, or a saved expression of its own), and the lazy array is built.

The lazy array keeps its carrier as ``array`` and ``schunk`` (python-blosc2's attributes),
and reads its user vlmeta from it when first asked.
"""

from __future__ import annotations

import importlib
import os
import pathlib
from typing import Any

from ...chunk.header import ChunkHeader
from ...errors import Blosc2Error, FormatError
from ...meta import unpack_vlmeta
from ...ndarray.ndarray import NDArray
from ...schunk import SChunk
from ...vlarrays.kinds import Origin, register_object
from ...vlarrays.policy import DeserializeMode, UnsafeDeserializationError
from ...vlarrays.ref import Ref
from ..lazyarray import LazyArray
from ..lazyexpr import LazyExpr
from .check import check_expression
from .layout import (
    B2O,
    LEGACY_META,
    LEGACY_VLMETA,
    MAX_PAYLOAD,
    ExprPayload,
    LegacyPayload,
    Marker,
    UDFPayload,
)
from .place import Place, opening, resolve_path
from .udfsource import function_from_source

__all__ = ["MissingOperands", "open_b2o", "open_legacy", "register"]

#: the UDF storage arguments read back from a saved UDF (others, such as where results were
#: written, are not part of the recipe and are left out)
UDF_KWARGS = frozenset({"chunks", "blocks", "cparams", "dparams", "jit", "jit_backend"})
#: b2o kinds python-blosc2 writes for objects pyblosc2 does not rebuild
_REMOTE_KINDS = {"c2array": "a Caterva2 dataset (C2Array)", "remote_array": "a RemoteArray"}


class MissingOperands(Blosc2Error, FileNotFoundError):
    """Operands of a saved expression whose files are gone (python-blosc2's
    ``MissingOperands``): ``expr`` is the expression (a UDF's name), ``missing_ops`` maps
    each missing operand's name to its saved path.

    >>> print(MissingOperands("a + b", {"b": pathlib.Path("b.b2nd")}))
    Lazy expression "a + b" with missing operands: {'b': PosixPath('b.b2nd')}
    """

    def __init__(self, expr: str, missing_ops: dict[str, pathlib.Path]) -> None:
        super().__init__(f'Lazy expression "{expr}" with missing operands: {missing_ops}')
        self.expr = expr
        self.missing_ops = missing_ops


def _entry(schunk: SChunk, name: str, where: str) -> Any:
    """The vlmeta entry ``name``, decoded only when its declared size is bounded."""
    stored = dict(schunk.vlmeta_entries).get(name)
    if stored is None:
        raise FormatError(where, f"vlmeta {name!r}", None, "present", "missing")
    nbytes = ChunkHeader.from_bytes(stored).nbytes
    if nbytes > MAX_PAYLOAD:
        raise FormatError(where, f"vlmeta {name!r}", None, f"at most {MAX_PAYLOAD} bytes", nbytes)
    return unpack_vlmeta(stored, f"{where}: vlmeta {name!r}")


def _place(schunk: SChunk, origin: Origin | None) -> tuple[Place, str | None]:
    if origin is not None:
        return Place.in_store(origin.store, origin.key, origin.member_file), None
    urlpath = schunk.urlpath
    if urlpath is None:
        return Place.in_memory(), None
    return Place.of_file(urlpath), os.path.realpath(urlpath)


def _names_holder(ref: Ref, place: Place) -> bool:
    """Whether a ``dictstore_key`` reference of a store member names the store holding it by
    a path relative to the store's own directory (python-blosc2 writes the path the store was
    opened by; for a member file of a ``.b2d`` it then looks for it under the member's
    directory, where it is not)."""
    if ref.kind != "dictstore_key" or place.store is None or os.path.isabs(str(ref.urlpath)):
        return False
    beside = os.path.join(os.path.dirname(place.store), str(ref.urlpath))
    return os.path.realpath(beside) == place.store and ref.key != place.key


def _resolve(
    refs: dict[str, Ref | str], place: Place, expr: str
) -> dict[str, tuple[str, Ref, str]]:
    """Each operand's checked real path and the reference to open it by (a legacy path is a
    ``urlpath`` reference); the missing ones raise :class:`MissingOperands` together."""
    out: dict[str, tuple[str, Ref, str]] = {}
    missing: dict[str, pathlib.Path] = {}
    for name, ref in refs.items():
        what = f"{place.label}: operand {name!r}"
        if isinstance(ref, str):
            ref = Ref.urlpath_ref(ref)
        if ref.kind not in ("urlpath", "dictstore_key"):
            raise NotImplementedError(f"{what}: an operand of kind {ref.kind!r} (remote data)")
        path = str(ref.urlpath)
        if _names_holder(ref, place):
            out[name] = (str(place.store), ref, path)
            continue
        real = resolve_path(path, place, what, store_ok=ref.kind == "dictstore_key")
        if real is None:
            missing[name] = pathlib.Path(path)
            continue
        if ref.kind == "dictstore_key" and real == place.store and ref.key == place.key:
            raise FormatError(what, "key", None, "another member than itself", ref.key)
        out[name] = (real, ref, path)
    if missing:
        raise MissingOperands(expr, missing)
    return out


def _open_operands(
    resolved: dict[str, tuple[str, Ref, str]], mode: DeserializeMode, place: Place
) -> dict[str, Any]:
    ops: dict[str, Any] = {}
    for name, (real, ref, path) in resolved.items():
        target = Ref(ref.kind, real, ref.key)
        value = target.open(deserialize=mode.value)
        if not isinstance(value, NDArray | LazyArray):
            raise FormatError(
                f"{place.label}: operand {name!r}",
                "urlpath",
                None,
                "an array (an NDArray or a saved expression)",
                f"{path} holding a {type(value).__name__}",
            )
        ops[name] = value
    return ops


def _udf_api() -> tuple[Any, Any]:
    """``lazyudf`` and ``kernel_from_source`` (the UDF part of the engine: a plain import
    once ``compute/udf.py`` and ``dsl/`` are in the same tree)."""
    try:
        udf = importlib.import_module("pyblosc2.compute.udf")
        dsl = importlib.import_module("pyblosc2.dsl")
        return udf.lazyudf, dsl.kernel_from_source
    except (ImportError, AttributeError):
        raise NotImplementedError(
            "opening a saved LazyUDF: lazyudf (pyblosc2.compute.udf) is not in this build"
        ) from None


def _attach(obj: Any, schunk: SChunk) -> Any:
    obj.array = NDArray(schunk)
    obj.schunk = schunk
    return obj


def _check_policy(mode: DeserializeMode, kind: str) -> None:
    if mode is DeserializeMode.SAFE:
        raise UnsafeDeserializationError(kind)


def _marker_kind(schunk: SChunk) -> str:
    """The kind the ``b2o`` marker names, for the policy's message (``"b2o"`` when it names
    none, as python-blosc2 reports it)."""
    try:
        value = schunk.meta[B2O]
    except Blosc2Error:
        return B2O
    kind = value.get("kind", B2O) if isinstance(value, dict) else B2O
    return kind if isinstance(kind, str) else B2O


def open_b2o(schunk: SChunk, mode: DeserializeMode, origin: Origin | None = None) -> Any:
    """The object a b2o carrier holds (a LazyExpr or LazyUDF)."""
    _check_policy(mode, _marker_kind(schunk))
    place, carrier = _place(schunk, origin)
    marker = Marker.from_value(schunk.meta[B2O], f"{place.label}: metalayer 'b2o'")
    if marker.kind in _REMOTE_KINDS:
        raise NotImplementedError(f"opening a saved {_REMOTE_KINDS[marker.kind]}")
    if marker.kind not in ("lazyexpr", "lazyudf"):
        raise FormatError(place.label, "b2o kind", None, "lazyexpr or lazyudf", marker.kind)
    value = _entry(schunk, B2O, place.label)
    kind = value.get("kind") if isinstance(value, dict) else None
    if kind != marker.kind:
        raise FormatError(place.label, "b2o payload kind", None, repr(marker.kind), repr(kind))
    with opening(place, carrier):
        if marker.kind == "lazyexpr":
            payload = ExprPayload.from_value(value, f"{place.label}: b2o payload")
            check_expression(payload.expression, payload.names, place.label)
            refs: dict[str, Ref | str] = dict(payload.operands)
            ops = _open_operands(_resolve(refs, place, payload.expression), mode, place)
            return _attach(LazyExpr._new_expr(payload.expression, ops, guess=True), schunk)
        udf = UDFPayload.from_value(value, f"{place.label}: b2o payload")
        lazyudf, kernel_from_source = _udf_api()
        kernel = kernel_from_source(udf.source, udf.name)  # parsed by the DSL, never executed
        refs = {f"o{i}": r for i, r in enumerate(udf.operands)}
        ops = _open_operands(_resolve(refs, place, udf.name), mode, place)
        kwargs = {k: v for k, v in udf.kwargs.items() if k in UDF_KWARGS}
        obj = lazyudf(kernel, tuple(ops.values()), udf.dtype, udf.shape, **kwargs)
        return _attach(obj, schunk)


def open_legacy(schunk: SChunk, mode: DeserializeMode, origin: Origin | None = None) -> Any:
    """The LazyExpr or LazyUDF of python-blosc2's legacy ``_LazyArray`` form."""
    _check_policy(mode, LEGACY_META)
    place, carrier = _place(schunk, origin)
    kind = schunk.meta[LEGACY_META]
    payload = LegacyPayload.from_value(
        kind, _entry(schunk, LEGACY_VLMETA, place.label), f"{place.label}: {LEGACY_VLMETA}"
    )
    for name, ref in payload.operands.items():
        if not isinstance(ref, str):
            raise NotImplementedError(
                f"{place.label}: operand {name!r} is a Caterva2 dataset (C2Array)"
            )
    refs: dict[str, Ref | str] = {k: v for k, v in payload.operands.items() if isinstance(v, str)}
    with opening(place, carrier):
        if payload.expression is not None:
            check_expression(payload.expression, tuple(refs), place.label)
            ops = _open_operands(_resolve(refs, place, payload.expression), mode, place)
            return _attach(LazyExpr._new_expr(payload.expression, ops, guess=True), schunk)
        assert payload.udf is not None and payload.name is not None
        lazyudf, kernel_from_source = _udf_api()
        func: Any = None
        if payload.dsl_source is not None:
            kernel = kernel_from_source(payload.dsl_source, payload.name)
            func = kernel if kernel.dsl_error is None else None
        if func is None:
            func = function_from_source(payload.udf, payload.name)  # the checked subset only
        ops = _open_operands(_resolve(refs, place, payload.name), mode, place)
        carrier_array = NDArray(schunk)
        obj = lazyudf(
            func,
            tuple(ops.values()),
            carrier_array.dtype,
            carrier_array.shape,
            cparams=carrier_array.cparams,
        )
        return _attach(obj, schunk)


def register() -> None:
    """Let ``pyblosc2.open``, ``from_cframe`` and the stores open saved lazy arrays."""
    register_object(B2O, open_b2o)
    register_object(LEGACY_META, open_legacy)
