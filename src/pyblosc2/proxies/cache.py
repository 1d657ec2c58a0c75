"""The container a :class:`~pyblosc2.Proxy` caches into, as python-blosc2 lays it out.

The cache is an ordinary NDArray (for an N-d source: same shape, dtype, chunks and blocks)
or SChunk (same chunksize and typesize) whose chunks are the source's chunks, stored as they
arrive; its fixed metalayer ``proxy-source`` says where the source is
(``{"source_kind", "local_abspath", "urlpath", "caterva2_env"}``, python-blosc2 4.x), and its
vlmeta holds the fetched bitmaps (:mod:`.bitmap`), the source's stamp and, for byte-range
sources, where the source's chunks are (``proxy-index``). A file cache is opened with C-Blosc2's
frame lock (``locking=True``) unless told otherwise, so processes of either library share it.

A cache built by an earlier run is adopted only when it fits the source: a proxy cache at
all, of the same kind, the same geometry (chunk numbers are what cache and source exchange),
and, for a source that names its bytes (``stamp``), the same bytes. A local source (an NDArray
or SChunk file) is stamped by :func:`local_stamp`, which python-blosc2 does not do: a cache of
a file that changed since is stale.
"""

from __future__ import annotations

import hashlib
import math
import os
from typing import Any

import numpy as np

from ..chunk.header import ChunkHeader
from ..constants import SpecialValue
from ..errors import FormatError, ParamError
from ..frame.index import SPECIAL_OFFSET_OF
from ..ndarray.constructors import empty
from ..ndarray.ndarray import NDArray
from ..schunk import SChunk
from ..schunk import open as open_schunk

__all__ = [
    "SOURCE_META",
    "check_chunk",
    "create_cache",
    "is_nd",
    "local_stamp",
    "reopen_cache",
    "source_meta",
    "uninit_chunks",
]

SOURCE_META = "proxy-source"
_UNINIT = SPECIAL_OFFSET_OF[SpecialValue.UNINIT]
_STAMP_HEAD, _STAMP_TAIL = 1 << 12, 1 << 16


def is_nd(src: Any) -> bool:
    """Whether ``src`` is an N-d source (it has a shape) rather than a byte source."""
    return hasattr(src, "shape")


def _container(src: Any) -> Any:
    return getattr(src, "schunk", src)


def source_meta(src: Any, persistent: bool) -> dict[str, Any]:
    """The ``proxy-source`` metalayer for ``src``: python-blosc2 4.x's fields."""
    meta: dict[str, Any] = {
        "source_kind": None,
        "local_abspath": None,
        "urlpath": None,
        "caterva2_env": False,
    }
    kind = getattr(src, "source_kind", None)
    if kind == "fsspec":
        meta.update(source_kind="fsspec", urlpath=src.urlpath, local_abspath=src.urlpath)
    elif isinstance(_container(src), SChunk):
        meta.update(source_kind="local", local_abspath=_container(src).urlpath)
    return meta


def create_cache(
    src: Any, urlpath: str | None, mode: str, meta: dict[str, Any], kwargs: dict[str, Any]
) -> Any:
    """A new, empty cache container for ``src`` (chunks uninitialized)."""
    kwargs = dict(kwargs)
    if urlpath is not None:
        kwargs.setdefault("locking", kwargs.get("mmap_mode") is None)
    if is_nd(src):
        return empty(
            tuple(src.shape),
            np.dtype(src.dtype),
            chunks=tuple(src.chunks),
            blocks=tuple(src.blocks),
            cparams=src.cparams,
            urlpath=urlpath,
            mode=mode,
            meta=meta,
            **kwargs,
        )
    s = SChunk(
        chunksize=src.chunksize,
        cparams=src.cparams,
        urlpath=urlpath,
        mode=mode,
        meta=meta,
        **kwargs,
    )
    if src.nbytes % src.typesize:
        raise ParamError(
            f"source nbytes {src.nbytes} is not a multiple of its typesize {src.typesize}"
        )
    s.fill_special(src.nbytes // src.typesize, SpecialValue.UNINIT)
    return s


def _geometry(obj: Any, nd: bool) -> tuple[Any, ...]:
    if nd:
        return (tuple(obj.shape), np.dtype(obj.dtype), tuple(obj.chunks), tuple(obj.blocks))
    return (int(obj.nbytes), int(obj.chunksize), int(obj.typesize))


def reopen_cache(urlpath: str, src: Any, stamp: Any, kwargs: dict[str, Any]) -> Any:
    """The cache an earlier run left at ``urlpath``, checked to fit ``src`` (a
    :class:`~pyblosc2.errors.ParamError` says why not)."""
    if kwargs:
        raise ParamError(
            f"{', '.join(kwargs)} cannot be applied to the existing cache at {urlpath}; "
            "pass mode='w' to build it anew"
        )
    s = open_schunk(urlpath, "a", 0, locking=True)
    names = {name for name, _ in s.metalayers}
    if SOURCE_META not in names:
        raise ParamError(
            f"{urlpath} is not a proxy cache; pass mode='w' to overwrite it "
            "or choose another urlpath"
        )
    cached: Any = NDArray(s) if "b2nd" in names else s
    nd = is_nd(src)
    if nd != isinstance(cached, NDArray):
        raise ParamError(
            f"the cache at {urlpath} is a {type(cached).__name__}, which does not fit a "
            f"{type(src).__name__} source"
        )
    here, there = _geometry(cached if nd else s, nd), _geometry(src, nd)
    if here != there:
        fields = "shape, dtype, chunks, blocks" if nd else "nbytes, chunksize, typesize"
        raise ParamError(
            f"the cache at {urlpath} was built for a different source: it holds {here}, "
            f"the source is {there} ({fields})"
        )
    if stamp is not None and s.vlmeta.get("proxy-stamp") != stamp:
        raise ParamError(
            f"the cache at {urlpath} was built against different remote bytes; "
            "pass mode='w' to fetch them anew"
        )
    return cached


def local_stamp(src: Any) -> str | None:
    """What names the bytes of a local file source now (None for anything else): the file's
    identity, size and modification time, and a digest of its first and last bytes (the
    frame's header, index and trailer); for a sparse frame, of every file in its directory.
    A frame changed since gives another stamp (a change that keeps the size, the mtime and
    those bytes, within the file system's mtime resolution, is not seen)."""
    s = _container(src)
    path = getattr(s, "urlpath", None) if isinstance(s, SChunk) else None
    if path is None or not os.path.exists(path):
        return None
    digest = hashlib.sha256()
    files = [path]
    if os.path.isdir(path):
        files = sorted(os.path.join(path, name) for name in os.listdir(path))
    for name in files:
        st = os.stat(name)
        if not os.path.isfile(name):
            continue
        digest.update(
            f"{os.path.basename(name)}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns};".encode()
        )
        with open(name, "rb") as f:
            digest.update(f.read(_STAMP_HEAD))
            if st.st_size > _STAMP_HEAD:
                f.seek(max(_STAMP_HEAD, st.st_size - _STAMP_TAIL))
                digest.update(f.read(_STAMP_TAIL))
    return "pyblosc2-local:" + digest.hexdigest()[:32]


def uninit_chunks(schunk: SChunk) -> np.ndarray:
    """A boolean per chunk: its stored offset says *uninitialized* (never written, or
    evicted with ``update_special(n, UNINIT)``)."""
    return np.asarray(schunk.chunk_offsets) == _UNINIT


def special_chunks(schunk: SChunk) -> np.ndarray:
    """A boolean per chunk: its offset is a special value (nothing stored)."""
    return np.asarray(schunk.chunk_offsets) < 0


def check_chunk(chunk: Any, n: int, nbytes: int, typesize: int, blocksize: int | None) -> bytes:
    """The source's chunk ``n`` as bytes, checked to fit the cache: a chunk header, the
    bytes its ``cbytes`` says, ``nbytes`` decoded bytes of ``typesize``-byte items and, for
    an N-d cache of more than one block, the cache's ``blocksize`` (the b2nd block layout)."""
    raw = bytes(chunk)
    h = ChunkHeader.from_bytes(raw)
    where = f"source chunk {n}"
    if h.cbytes > len(raw):
        raise FormatError(where, "cbytes", 12, f"at most {len(raw)} (bytes received)", h.cbytes)
    if h.nbytes != nbytes:
        raise FormatError(where, "nbytes", 4, f"{nbytes} (the cache's chunk size)", h.nbytes)
    if h.typesize != typesize:
        raise FormatError(where, "typesize", 3, f"{typesize} (the cache's)", h.typesize)
    if blocksize is not None and not h.special and h.blocksize != blocksize and nbytes > blocksize:
        raise FormatError(where, "blocksize", 8, f"{blocksize} (the cache's blocks)", h.blocksize)
    return raw[: h.cbytes]


def nd_blocksize(cache: Any) -> int | None:
    """The blocksize of an N-d cache's chunks (None for a byte cache)."""
    if not isinstance(cache, NDArray):
        return None
    return math.prod(cache.blocks) * cache.dtype.itemsize
