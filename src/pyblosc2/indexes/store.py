"""Where an NDArray's indexes live: the descriptor store and the sidecar arrays.

python-blosc2 4.x keeps, for a persistent array, the map ``{"version": 1, "indexes":
{token: descriptor}}`` in the array's vlmeta entry ``"blosc2_indexes"``, and each piece of an
index in a ``.b2nd`` file next to the array named
``<root>.__index__[.<token>].<kind>.<category>.<name>.b2nd`` (the token left out for the
array itself, ``__self__``; the category left out when it is the kind; a CTable's index,
anchored at ``<table>/_indexes/<column>/_anchor``, without ``_anchor.__index__.``). An
in-memory array keeps the same descriptors, with ``None`` paths, and the pieces as in-memory
arrays, for as long as the array lives.

A descriptor read from a file is data from outside: :func:`load_store` checks the structure
and every number this package later sizes or loops by (see :mod:`.descriptor`), and
:func:`open_sidecar` opens only files in the array's own directory whose names have the
array's index prefix, and checks their dtype and length before anything is read.

>>> import numpy as np; from pyblosc2 import asarray
>>> a = asarray(np.arange(4))
>>> load_store(a)
{'version': 1, 'indexes': {}}
"""

from __future__ import annotations

import os
import re
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError, MissingPartError
from ..frame.location import remove_urlpath
from ..ndarray.constructors import asarray, empty
from ..ndarray.constructors import open as open_array
from ..ndarray.ndarray import NDArray
from .descriptor import check_store, components
from .kinds import FORMAT_VERSION, SELF_TARGET_NAME, VLMETA_KEY

__all__ = [
    "create_sidecar",
    "forget_memory",
    "is_persistent",
    "load_store",
    "load_whole",
    "open_sidecar",
    "remove_sidecar",
    "save_store",
    "sidecar_path",
    "write_sidecar",
]

#: the file name a CTable's index pieces are named after (it does not exist)
ANCHOR_ROOT = "_anchor"
_MEMORY: dict[int, dict[str, Any]] = {}  # id(array) -> store, while the array lives
_HANDLES: dict[tuple[int, str, str], NDArray] = {}  # (id(array), token, label) -> piece
_FINALIZERS: dict[int, weakref.finalize] = {}


def forget_memory(key: int) -> None:
    """Drop an in-memory array's store and pieces (its finalizer calls this)."""
    _MEMORY.pop(key, None)
    _FINALIZERS.pop(key, None)
    for k in [k for k in _HANDLES if k[0] == key]:
        del _HANDLES[k]


def is_persistent(array: Any) -> bool:
    """Whether the array is stored in a file (its indexes then are too)."""
    return getattr(array, "urlpath", None) is not None


def load_store(array: Any) -> dict[str, Any]:
    """The array's index store (checked when read from a file)."""
    if is_persistent(array):
        vlmeta = array.schunk.vlmeta
        if VLMETA_KEY not in vlmeta:
            return {"version": FORMAT_VERSION, "indexes": {}}
        return check_store(array, vlmeta[VLMETA_KEY])
    store = _MEMORY.get(id(array))
    return store if store is not None else {"version": FORMAT_VERSION, "indexes": {}}


def save_store(array: Any, store: dict[str, Any]) -> None:
    """Write the store back (the vlmeta entry, or the in-memory registry)."""
    if is_persistent(array):
        if store["indexes"] or VLMETA_KEY in array.schunk.vlmeta:
            array.schunk.vlmeta[VLMETA_KEY] = store
        return
    key = id(array)
    _MEMORY[key] = store
    if key not in _FINALIZERS:
        _FINALIZERS[key] = weakref.finalize(array, forget_memory, key)


def _root(urlpath: str) -> tuple[Path, str]:
    path = Path(urlpath)
    suffix = "".join(path.suffixes)
    return path, path.name[: -len(suffix)] if suffix else path.name


def _token_part(token: str) -> str:
    return "" if token == SELF_TARGET_NAME else "." + re.sub(r"[^0-9A-Za-z_.-]+", "_", token)


def sidecar_path(array: Any, token: str, kind: str, category: str, name: str) -> str:
    """The file python-blosc2 names for a piece of a persistent index.

    >>> from types import SimpleNamespace
    >>> sidecar_path(SimpleNamespace(urlpath="/d/x.b2nd"), "__self__", "full", "full", "values")
    '/d/x.__index__.full.values.b2nd'
    """
    path, root = _root(array.urlpath)
    label = f"{category}.{name}".removeprefix(f"{kind}.")
    return str(path.parent / f"{_prefix(root, token, kind)}{label}.b2nd")


def _prefix(root: str, token: str, kind: str) -> str:
    """The start of a piece's file name: ``<root>.__index__[.<token>].<kind>.``, or for a
    CTable's anchor (the ``_indexes/<column>/`` directory names the column) ``<kind>[.<token>].``
    (python-blosc2's rule)."""
    if root == ANCHOR_ROOT:
        return f"{kind}{_token_part(token)}."
    return f"{root}.__index__{_token_part(token)}.{kind}."


def _label(token: str, category: str, name: str) -> str:
    return f"{token}\x00{category}.{name}"


def write_sidecar(
    array: Any,
    token: str,
    kind: str,
    category: str,
    name: str,
    data: np.ndarray,
    persistent: bool,
    chunks: tuple[int, ...] | None = None,
    blocks: tuple[int, ...] | None = None,
    cparams: Any = None,
) -> str | None:
    """Store one piece; returns its path (None in memory)."""
    kwargs: dict[str, Any] = {}
    if chunks is not None:
        kwargs["chunks"] = chunks
    if blocks is not None:
        kwargs["blocks"] = blocks
    if cparams is not None:
        kwargs["cparams"] = cparams
    if persistent:
        path = sidecar_path(array, token, kind, category, name)
        remove_urlpath(path)
        asarray(np.ascontiguousarray(data), urlpath=path, mode="w", **kwargs)
        return path
    _HANDLES[(id(array), token, f"{category}.{name}")] = asarray(
        np.ascontiguousarray(data), **kwargs
    )
    if id(array) not in _FINALIZERS:
        _FINALIZERS[id(array)] = weakref.finalize(array, forget_memory, id(array))
    return None


def create_sidecar(
    array: Any,
    token: str,
    kind: str,
    category: str,
    name: str,
    length: int,
    dtype: np.dtype,
    persistent: bool,
    chunks: tuple[int, ...],
    blocks: tuple[int, ...],
    cparams: Any = None,
) -> tuple[NDArray, str | None]:
    """An empty piece to fill by slices (a builder streaming chunk by chunk); returns it
    and its path (None in memory)."""
    kwargs: dict[str, Any] = {"chunks": chunks, "blocks": blocks}
    if cparams is not None:
        kwargs["cparams"] = cparams
    if persistent:
        path = sidecar_path(array, token, kind, category, name)
        remove_urlpath(path)
        return empty((length,), dtype, urlpath=path, mode="w", **kwargs), path
    handle = empty((length,), dtype, **kwargs)
    _HANDLES[(id(array), token, f"{category}.{name}")] = handle
    if id(array) not in _FINALIZERS:
        _FINALIZERS[id(array)] = weakref.finalize(array, forget_memory, id(array))
    return handle, None


def _checked_file(array: Any, token: str, kind: str, path: object, where: str) -> str:
    """The sidecar's file in the array's directory; the stored path must name a file of
    this array's index (python-blosc2 stores the path as the writer spelled it)."""
    if not isinstance(path, str) or not path:
        raise FormatError("index descriptor", where, None, "a sidecar path", repr(path))
    base = os.path.basename(path.replace("\\", "/"))
    prefix = _prefix(_root(array.urlpath)[1], token, kind)
    if not base.startswith(prefix) or not base.endswith(".b2nd") or base in (".", ".."):
        raise FormatError(
            "index descriptor", where, None, f"a file named {prefix}*.b2nd", repr(path)
        )
    return str(Path(array.urlpath).parent / base)


def open_sidecar(
    array: Any,
    descriptor: dict[str, Any],
    category: str,
    name: str,
    path: object,
    dtype: np.dtype | None,
    length: int | None,
) -> NDArray:
    """Open one piece, checked: 1-d, of ``dtype`` and ``length`` (None: not checked)."""
    token, kind = descriptor["token"], descriptor["kind"]
    where = f"{category}.{name}"
    if path is None:
        handle = _HANDLES.get((id(array), token, where))
        if handle is None:
            raise MissingPartError(
                "index", where, None, "a sidecar of this process", "none (in-memory index lost)"
            )
    else:
        file = _checked_file(array, token, kind, path, where)
        # pieces in a .b2z read in place: the anchor names the members of its directory
        member = (getattr(array, "members", None) or {}).get(os.path.basename(file))
        if member is not None:
            opened = open_array(member[0], mode="r", offset=member[1])
        elif not os.path.exists(file):
            raise MissingPartError("index", where, None, "an existing sidecar file", file)
        else:
            opened = open_array(file, mode="r")
        if not isinstance(opened, NDArray):
            raise FormatError("index sidecar", where, None, "a b2nd array", type(opened).__name__)
        handle = opened
    if handle.ndim != 1:
        raise FormatError("index sidecar", f"{where} ndim", None, 1, handle.ndim)
    if dtype is not None and np.dtype(handle.dtype) != np.dtype(dtype):
        raise FormatError("index sidecar", f"{where} dtype", None, np.dtype(dtype), handle.dtype)
    if length is not None and handle.shape[0] != length:
        raise FormatError("index sidecar", f"{where} length", None, length, handle.shape[0])
    return handle


def remove_sidecar(array: Any, descriptor: dict[str, Any], label: str, path: object) -> None:
    """Delete one piece (a file in the array's directory, or the in-memory array)."""
    if path is None:
        _HANDLES.pop((id(array), descriptor["token"], label), None)
        return
    try:
        file = _checked_file(array, descriptor["token"], descriptor["kind"], path, label)
    except FormatError:
        return  # not a file of ours: never delete it
    remove_urlpath(file)


def load_whole(array: Any, token: str, category: str, name: str, path: object) -> np.ndarray:
    """One piece of the index ``token`` read whole (checked as :func:`open_sidecar` does).
    Every whole read of a piece goes through here (python-blosc2's
    ``_load_array_sidecar``); payload pieces are read by spans instead."""
    d = load_store(array)["indexes"][token]
    for c in components(array, d):
        if (c.category, c.name) == (category, name):
            return open_sidecar(array, d, category, name, path, c.dtype, c.length)[:]
    raise MissingPartError("index", f"{category}.{name}", None, "a piece of the index", "none")
