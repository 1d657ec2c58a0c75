"""Writing a lazy expression or UDF in python-blosc2's saved forms (:mod:`.layout`): the
recipe and references to the operands, never their data.

* A ``LazyExpr`` is a b2o ``lazyexpr`` carrier: the expression as the user wrote it
  (python-blosc2's ``expression_tosave``/``operands_tosave`` when it came from a string)
  or as the operators composed it; typed scalars among its operands are written into the
  string (``np.float32(2.0)``).
* A ``LazyUDF`` of a DSL kernel is a b2o ``lazyudf`` carrier (the kernel's source); of a
  plain Python function, the legacy ``_LazyArray`` form with the function's source, as
  python-blosc2 4.x falls back to for it.

An operand must be stored: a file (``urlpath``) or a member of a store (its
``dictstore_key`` reference). Its path is written relative to the directory the carrier is
saved in, and must lie inside it (the rule the reader enforces, :mod:`.place`): an operand
elsewhere is refused here, before anything is written, rather than saved unreadable.
(python-blosc2 writes such paths absolute, and a relative operand path unchanged even when
the carrier is saved in another directory, where its reader then looks for it.)
``to_cframe`` has no directory: operand paths are written as the operands give them.

The carrier file is written whole under a temporary name and renamed over ``urlpath``
(python-blosc2 always overwrites it), so a failed save leaves the old file.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
import shutil
import textwrap
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...dsl import DSLKernel
from ...errors import ParamError, ParamTypeError
from ...ndarray.constructors import empty
from ...ndarray.partition import parse_geometry
from ...proxies import Proxy
from ...vlarrays.ref import Ref
from ..exprtext import rename_names
from ..parser import validate_expr
from .layout import (
    B2O,
    LEGACY_META,
    LEGACY_UDF,
    LEGACY_VLMETA,
    USER_VLMETA,
    ExprPayload,
    LegacyPayload,
    Marker,
    UDFPayload,
)

__all__ = ["SavedForm", "save", "saved_form", "to_cframe"]

_NOT_STORED = "To save a LazyArray, all operands must be stored on disk/network"
#: storage arguments of a UDF that are not part of its recipe (where results go)
_UDF_DROPPED = frozenset({"dtype", "shape", "urlpath", "mode", "storage", "mmap_mode"})


@dataclass(frozen=True)
class SavedForm:
    """What a carrier holds: its metalayers and vlmeta entries, shape, dtype and partition."""

    meta: dict[str, Any]
    vlmeta: dict[str, Any]
    shape: tuple[int, ...]
    dtype: np.dtype
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]


def _relative(path: str, carrier_dir: str | None, what: str) -> str:
    if carrier_dir is None:
        return path.replace(os.sep, "/")
    real_dir = os.path.realpath(carrier_dir)
    real = os.path.realpath(path)
    rel = os.path.relpath(real, real_dir)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        raise ParamError(
            f"{what} ({path}) is not inside {real_dir}, the directory the expression is "
            "saved in: a saved expression's operands must lie inside its directory (pyblosc2 "
            "reads no operand outside it)"
        )
    return rel.replace(os.sep, "/")


def operand_ref(value: Any, carrier_dir: str | None, what: str) -> Ref:
    """The reference saved for operand ``value``."""
    ref = getattr(value, "_blosc2_ref", None)
    if isinstance(ref, Ref) and ref.kind in ("urlpath", "dictstore_key"):
        return Ref(ref.kind, _relative(str(ref.urlpath), carrier_dir, what), ref.key)
    if isinstance(ref, Ref):
        raise NotImplementedError(f"saving an operand referenced as {ref.kind!r}")
    if isinstance(value, Proxy):
        value = value._cache  # the container it caches into (a LazyExpr's _cache is not)
    schunk = getattr(value, "schunk", None)
    urlpath = getattr(schunk, "urlpath", None)
    if urlpath is None:
        raise ParamError(f"{_NOT_STORED} ({what} is a {type(value).__name__} in memory)")
    if getattr(schunk, "_offset", 0):
        raise ParamError(
            f"{what} is read from inside {urlpath} (at an offset) without a reference to "
            "its store: it cannot be saved as a path"
        )
    return Ref.urlpath_ref(_relative(str(urlpath), carrier_dir, what))


def _literal(value: Any) -> str | None:
    """A scalar operand as the expression writes it (None: not a scalar)."""
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return f"np.{value.dtype.name}({value.item()!r})"
    if isinstance(value, bool | int | float | complex) and not isinstance(value, np.generic):
        return repr(value)
    return None


def _partition(shape: tuple[int, ...], dtype: np.dtype, arrays: list[Any]) -> tuple[Any, Any]:
    for v in arrays:
        chunks, blocks = getattr(v, "chunks", None), getattr(v, "blocks", None)
        if tuple(getattr(v, "shape", ())) == shape and chunks and blocks and hasattr(v, "schunk"):
            return tuple(chunks), tuple(blocks)
    _, _, chunks, blocks = parse_geometry(shape, dtype, None, None)
    return tuple(chunks), tuple(blocks)


def _expr_form(obj: Any, carrier_dir: str | None) -> SavedForm:
    if getattr(obj, "_filter", None) is not None:
        raise NotImplementedError("saving a filter (expr.where(x) with one argument)")
    text = getattr(obj, "expression_tosave", None)
    operands = getattr(obj, "operands_tosave", None)
    if text is None or operands is None:
        text, operands = obj.expression, obj.operands
    validate_expr(text)
    refs: dict[str, Ref] = {}
    literals: dict[str, str] = {}
    for name, value in operands.items():
        lit = _literal(value)
        if lit is not None:
            literals[name] = lit
        else:
            refs[name] = operand_ref(value, carrier_dir, f"operand {name!r}")
    if literals:
        text = rename_names(text, literals)
        validate_expr(text)
    shape, dtype = tuple(obj.shape), np.dtype(obj.dtype)
    chunks, blocks = _partition(shape, dtype, list(operands.values()))
    payload = ExprPayload(text, refs)
    return SavedForm(
        {B2O: Marker("lazyexpr").to_value()},
        {B2O: payload.to_value(), USER_VLMETA: dict(obj._get_user_vlmeta())},
        shape,
        dtype,
        chunks,
        blocks,
    )


def _source(func: Any, fallback: str | None) -> str | None:
    """The source of ``func``'s definition without its decorators (a reader defines the
    function in a namespace of its own, where the decorators' names are unknown: ours
    refuses decorators, python-blosc2's fails on any name but ``np`` and ``blosc2``)."""
    try:
        text = textwrap.dedent(inspect.getsource(func)).lstrip()
    except (OSError, TypeError):
        return fallback
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    name = getattr(func, "__name__", None)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            lines = text.splitlines(keepends=True)
            return "".join(lines[node.lineno - 1 : node.end_lineno])
    return text


def _udf_form(obj: Any, carrier_dir: str | None) -> SavedForm:
    func = obj.func
    refs = tuple(
        operand_ref(v, carrier_dir, f"input {i}") if _literal(v) is None else None
        for i, v in enumerate(obj.inputs)
    )
    if any(r is None for r in refs):
        raise ParamError(f"{_NOT_STORED} (a UDF's scalar inputs cannot be saved)")
    shape, dtype = tuple(obj.shape), np.dtype(obj.dtype)
    chunks, blocks = tuple(obj.chunks), tuple(obj.blocks)
    user = {USER_VLMETA: dict(obj._get_user_vlmeta())}
    if isinstance(func, DSLKernel):
        name = getattr(func.func, "__name__", func.__name__)
        source = _source(func.func, getattr(func, "dsl_source", None))
        if source is None:
            raise ParamError(f"the source of DSL kernel {name!r} is not available to save")
        kwargs = {}
        for k, v in obj.kwargs.items():
            if k in _UDF_DROPPED:
                continue
            kwargs[k] = v.to_dict() if hasattr(v, "to_dict") else v
        payload = UDFPayload(name, source, dtype, shape, refs, kwargs)  # type: ignore[arg-type]
        return SavedForm(
            {B2O: Marker("lazyudf").to_value()},
            {B2O: payload.to_value(), **user},
            shape,
            dtype,
            chunks,
            blocks,
        )
    name = getattr(func, "__name__", None)
    source = _source(func, getattr(func, "__source__", None))
    if not isinstance(name, str) or source is None:
        raise ParamError(f"the source of UDF {name!r} is not available to save")
    operands = {f"o{i}": str(r.urlpath) for i, r in enumerate(refs) if r is not None}
    if any(r is not None and r.kind != "urlpath" for r in refs):
        raise ParamError("a UDF of a plain function saves file operands only (its legacy form)")
    legacy = LegacyPayload(LEGACY_UDF, None, source, name, None, operands)  # type: ignore[arg-type]
    return SavedForm(
        {LEGACY_META: LEGACY_UDF},
        {LEGACY_VLMETA: legacy.to_value(), **user},
        shape,
        dtype,
        chunks,
        blocks,
    )


def saved_form(obj: Any, carrier_dir: str | None) -> SavedForm:
    """The carrier of lazy array ``obj`` saved in directory ``carrier_dir`` (None: in
    memory)."""
    if hasattr(obj, "func") and hasattr(obj, "inputs"):
        return _udf_form(obj, carrier_dir)
    if hasattr(obj, "expression") and hasattr(obj, "operands"):
        return _expr_form(obj, carrier_dir)
    raise ParamTypeError(f"cannot save a {type(obj).__name__} (not a LazyExpr or LazyUDF)")


def _carrier(form: SavedForm, kwargs: dict[str, Any]) -> Any:
    kwargs = dict(kwargs)
    meta = dict(kwargs.pop("meta", None) or {})
    meta.update(form.meta)
    kwargs.setdefault("chunks", form.chunks)
    kwargs.setdefault("blocks", form.blocks)
    array = empty(form.shape, form.dtype, meta=meta, **kwargs)
    array.schunk.vlmeta[:] = form.vlmeta
    return array


def to_cframe(obj: Any) -> bytes:
    """The carrier of ``obj`` as an in-memory frame."""
    return bytes(_carrier(saved_form(obj, None), {}).to_cframe())


def save(obj: Any, urlpath: Any, **kwargs: Any) -> None:
    """Write the carrier of ``obj`` at ``urlpath`` (see the module docstring)."""
    if urlpath is None:
        raise ParamError("To save a LazyArray you must provide an urlpath")
    path = os.fsdecode(urlpath)
    form = saved_form(obj, os.path.dirname(os.path.abspath(path)))
    kwargs.pop("mode", None)  # python-blosc2 always overwrites
    for k in ("urlpath", "storage"):
        if kwargs.get(k) is not None:
            raise ParamError(f"save() takes the carrier's path as urlpath only, got {k}=")
    if kwargs.get("contiguous", True) is False:
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        _carrier(form, {**kwargs, "urlpath": path, "mode": "w"})
        return
    kwargs.pop("contiguous", None)
    cframe = bytes(_carrier(form, kwargs).to_cframe())
    tmp = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(cframe)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        os.replace(tmp, path)  # the commit point
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
