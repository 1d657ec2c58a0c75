"""The in-process cache of filter results (python-blosc2 4.x's "hot" query cache).

A filter answered through an index leaves the positions it found here, keyed by its array
(the file, or the in-memory array while it lives) and a digest of the canonical condition
(operand names replaced by the fields they read) and order; a repeat of the query reads
them instead of planning again. Positions are stored narrow (``<u4`` when they fit) and
LZ4-compressed when that is smaller; the cache holds at most ``max_nbytes`` (128 KiB, as
python-blosc2) and evicts the least recently used entries. Any write, append, index build,
drop, rebuild or compaction of the array clears its entries, and so does a change of its
file by another process (its ``(mtime_ns, size)`` changed). Nothing is written to disk.

>>> import numpy as np
>>> c = HotCache(1 << 16); c.put("k", np.arange(5), ("memory", 1))
>>> c.get("k", ("memory", 1)).tolist(), c.get("k", ("memory", 2))
([0, 1, 2, 3, 4], None)
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..api import compress2, decompress2
from ..constants import Codec

__all__ = [
    "FORMAT_VERSION",
    "HOT",
    "CompressedCoords",
    "HotCache",
    "clear_for",
    "compress_coords",
    "decode_coords",
    "digest",
    "encode_coords",
    "forget",
    "query_descriptor",
    "scope_of",
]

FORMAT_VERSION = 1
Scope = tuple[str, Any]


@dataclass(frozen=True, slots=True)
class CompressedCoords:
    """One cached result: its positions' dtype and count, and their (compressed) bytes."""

    dtype: str
    nrows: int
    compressed: bool
    data: bytes

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return len(self.data)


def query_descriptor(expression: str, tokens: list[str], order: list[str] | None) -> dict:
    """The canonical description of a query (its cache key before hashing).

    >>> query_descriptor("( id>=3 )", ["__self__"], None)["expr"]
    'id >= 3'
    """
    try:
        expr = ast.unparse(ast.parse(expression, mode="eval"))
    except SyntaxError:
        expr = expression
    return {
        "version": FORMAT_VERSION,
        "kind": "indices",
        "tokens": sorted(tokens),
        "expr": expr,
        "order": list(order) if order is not None else None,
    }


def digest(descriptor: dict) -> str:
    """A 32-hex-digit digest of a query description.

    >>> len(digest(query_descriptor("a > 1", [], None)))
    32
    """
    text = json.dumps(descriptor, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def encode_coords(coords: np.ndarray) -> dict:
    """Positions as ``{"dtype", "nrows", "data"}``, ``<u4`` when they fit.

    >>> encode_coords(np.array([1, 2]))["dtype"]
    '<u4'
    """
    coords = np.asarray(coords)
    wide = coords.size and int(coords.max()) > np.iinfo(np.uint32).max
    dtype = np.dtype("<u8" if wide else "<u4")
    return {
        "version": FORMAT_VERSION,
        "dtype": dtype.str,
        "nrows": len(coords),
        "data": coords.astype(dtype).tobytes(),
    }


def decode_coords(payload: dict) -> np.ndarray:
    """The positions of :func:`encode_coords`'s payload.

    >>> decode_coords(encode_coords(np.array([7]))).tolist()
    [7]
    """
    return np.frombuffer(payload["data"], dtype=np.dtype(payload["dtype"])).copy()


def compress_coords(coords: np.ndarray) -> CompressedCoords:
    """An entry for ``coords`` (LZ4-compressed where that is smaller)."""
    payload = encode_coords(coords)
    raw = payload["data"]
    data, packed = raw, False
    if raw:
        size = np.dtype(payload["dtype"]).itemsize
        candidate = compress2(raw, typesize=size, codec=Codec.LZ4, clevel=5)
        if len(candidate) < len(raw):
            data, packed = candidate, True
    return CompressedCoords(payload["dtype"], int(payload["nrows"]), packed, data)


def decompress_coords(entry: CompressedCoords) -> np.ndarray:
    """The positions of an entry."""
    dtype = np.dtype(entry.dtype)
    if entry.nrows == 0:
        return np.empty(0, dtype)
    raw = decompress2(entry.data) if entry.compressed else entry.data
    return np.frombuffer(raw, dtype=dtype, count=entry.nrows).copy()


class HotCache:
    """Entries by ``(scope, digest)``, least recently used evicted past ``max_nbytes``."""

    GLOBAL: Scope = ("global", 0)

    def __init__(self, max_nbytes: int = 131_072) -> None:
        self.max_nbytes = max_nbytes
        self.entries: dict[tuple[Scope, str], CompressedCoords] = {}
        self.order: list[tuple[Scope, str]] = []
        self.nbytes = 0

    def get(self, key: str, scope: Scope | None = None) -> np.ndarray | None:
        """The positions cached under ``key``, or None."""
        k = (scope or self.GLOBAL, key)
        entry = self.entries.get(k)
        if entry is None:
            return None
        with contextlib.suppress(ValueError):
            self.order.remove(k)
        self.order.append(k)
        return decompress_coords(entry)

    def put(self, key: str, coords: np.ndarray, scope: Scope | None = None) -> None:
        """Cache ``coords`` (an entry larger than the whole budget is not kept)."""
        k = (scope or self.GLOBAL, key)
        entry = compress_coords(coords)
        if entry.nbytes > self.max_nbytes:
            return
        if k in self.entries:
            self.nbytes -= self.entries.pop(k).nbytes
            with contextlib.suppress(ValueError):
                self.order.remove(k)
        while self.order and self.nbytes + entry.nbytes > self.max_nbytes:
            old = self.entries.pop(self.order.pop(0), None)
            if old is not None:
                self.nbytes -= old.nbytes
        self.entries[k] = entry
        self.order.append(k)
        self.nbytes += entry.nbytes

    def clear(self, scope: Scope | None = None) -> None:
        """Drop the entries of ``scope`` (all of them when None)."""
        if scope is None:
            self.entries.clear()
            self.order.clear()
            self.nbytes = 0
            return
        for k in [k for k in self.entries if k[0] == scope]:
            self.nbytes -= self.entries.pop(k).nbytes
        self.order[:] = [k for k in self.order if k[0] != scope]


HOT = HotCache()
_FINGERPRINTS: dict[str, tuple[int, int]] = {}
_FINALIZERS: dict[int, weakref.finalize] = {}


def forget(key: int) -> None:
    """An in-memory array went away: drop its entries."""
    _FINALIZERS.pop(key, None)
    HOT.clear(("memory", key))


def clear_for(array: Any) -> None:
    """Drop an array's entries (after a write, an append, an index change); cheap when
    nothing of it is cached."""
    if not HOT.entries:
        return
    array = getattr(array, "ndarr", array)
    urlpath = getattr(array, "urlpath", None)
    if urlpath is None:
        HOT.clear(("memory", id(array)))
    else:
        HOT.clear(("persistent", str(Path(urlpath).resolve())))


def scope_of(array: Any) -> Scope:
    """The cache scope of an array: its file, or the in-memory array while it lives (whose
    entries go with it, so a later array at the same ``id`` starts empty). A file changed
    since its entries were made (by another process) has them dropped here."""
    array = getattr(array, "ndarr", array)
    urlpath = getattr(array, "urlpath", None)
    if urlpath is None:
        key = id(array)
        if key not in _FINALIZERS:
            _FINALIZERS[key] = weakref.finalize(array, forget, key)
        return ("memory", key)
    path = str(Path(urlpath).resolve())
    scope = ("persistent", path)
    with contextlib.suppress(OSError):
        st = os.stat(path)
        mark = (st.st_mtime_ns, st.st_size)
        if _FINGERPRINTS.get(path, mark) != mark:
            HOT.clear(scope)
        _FINGERPRINTS[path] = mark
    return scope
