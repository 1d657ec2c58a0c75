"""python-blosc2's :class:`Proxy`: a local cache of a remote or slow source, filled chunk by
chunk (or block by block) as reads touch it.

The cache container and its vlmeta are python-blosc2's (:mod:`.cache`, :mod:`.bitmap`), so a
cache written by either library is adopted by the other. How it is filled and shared between
processes is :mod:`.filler`. A cache is *stale* when its source changed: a source naming its
bytes (``stamp``: fsspec's ``ukey`` or an HTTP ETag, or for a local file :func:`.local_stamp`)
is compared with the stamp the cache recorded; a proxy built over a stale cache at ``urlpath``
with ``mode="a"`` raises, and one handed a stale cache (``pyblosc2.open`` of a proxy) starts it
empty (or, read-only, reads through to the source).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

import numpy as np

from ..errors import FrameChangedError, ParamError, ParamTypeError
from ..ndarray.io import get_slice_nchunks
from ..ndarray.ndarray import NDArray
from ..ndarray.operand import Operand
from .bitmap import BLOCKS_KEY, CHUNKS_KEY, INDEX_KEY, RESERVED, STAMP_KEY, FetchedMap
from .cache import (
    SOURCE_META,
    create_cache,
    is_nd,
    local_stamp,
    reopen_cache,
    source_meta,
    special_chunks,
)
from .cells import key_dims, wanted_cells
from .filler import BATCH_BYTES, Filler, _Batch

__all__ = ["Proxy", "ProxyNDField"]

#: how many times a read refetches what other processes evicted meanwhile before giving up
_ROUNDS = 8
_ND_ATTRS = ("shape", "chunks", "blocks", "dtype")
_BYTE_ATTRS = ("nbytes", "chunksize", "typesize")
_BLOCK_PROTOCOL = ("blocks_per_chunk", "wants_blocks", "chunk_layout", "block_plan", "read_range")
# python-blosc2 4.x's private knobs of RemoteArray's shared caches: accepted when they ask
# for nothing pyblosc2 does not do (sharing is always safe here: see .filler)
_PRIVATE = ("_persistent_dirty", "_cache_coordinator", "_cache_key")


def _check_source(src: Any) -> bool:
    """Whether ``src`` is an N-d source; a lazy expression or an object following neither
    protocol is refused."""
    kind = type(src).__name__
    if kind in ("LazyExpr", "LazyUDF", "LazyArray") or (
        callable(getattr(src, "compute", None)) and not callable(getattr(src, "get_chunk", None))
    ):
        raise NotImplementedError(
            f"a Proxy of a lazy expression ({kind}): it needs pyblosc2's compute engine"
        )
    nd = is_nd(src)
    lacking = [a for a in (_ND_ATTRS if nd else _BYTE_ATTRS) if not hasattr(src, a)]
    if lacking or not callable(getattr(src, "get_chunk", None)):
        what = "ProxyNDSource" if nd else "ProxySource"
        raise ParamTypeError(
            f"a Proxy source must follow the {what} protocol: {type(src).__name__} lacks "
            f"{', '.join(lacking) or 'get_chunk'}"
        )
    return nd


class Proxy(Filler, Operand):
    """A cache (an NDArray or SChunk, in memory or at ``urlpath``) of the source ``src``,
    filled as reads touch it. ``mode="a"`` adopts a cache an earlier run left at ``urlpath``
    when it fits the source (else raises); ``mode="w"`` builds it anew. ``vlmeta`` entries
    are written to the cache; other keyword arguments go to the cache's constructor
    (``contiguous``, ``cparams``, ``locking``, ...; a file cache uses the frame lock unless
    ``locking=False``).

    >>> import numpy as np, pyblosc2 as blosc2
    >>> a = blosc2.asarray(np.arange(20).reshape(4, 5), chunks=(2, 5), blocks=(1, 5))
    >>> p = blosc2.Proxy(a)
    >>> p[0:2, 1:3]
    array([[1, 2],
           [6, 7]])
    >>> p.fetch((slice(0, 1),))[:]  # the cache: only the chunk read so far is filled
    array([[0, 1, 2, 3, 4],
           [5, 6, 7, 8, 9],
           [0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0]])
    """

    def __init__(
        self,
        src: Any,
        urlpath: str | os.PathLike[str] | None = None,
        mode: str = "a",
        **kwargs: Any,
    ) -> None:
        cache = kwargs.pop("_cache", None)
        refresh = kwargs.pop("_refresh_source", True)
        vlmeta = kwargs.pop("vlmeta", None)
        meta = kwargs.pop("meta", None)
        caterva2_env = kwargs.pop("caterva2_env", False)
        if kwargs.pop("_max_cache_bytes", None) is not None:
            raise NotImplementedError(
                "Proxy cache budgets (_max_cache_bytes, python-blosc2's RemoteArray)"
            )
        for name in _PRIVATE:
            kwargs.pop(name, None)
        reserved = sorted(RESERVED & set(vlmeta or ()))
        if reserved:
            raise ParamError(
                f"{', '.join(reserved)} {'is' if len(reserved) == 1 else 'are'} reserved for the "
                "proxy's own bookkeeping and cannot be set through vlmeta"
            )
        if mode not in ("a", "w"):
            raise ParamError(f"mode must be 'a' or 'w', got {mode!r}")
        nd = _check_source(src)
        self.src = src
        if refresh:
            for name in ("refresh_stamp", "refresh_identity"):
                method = getattr(src, name, None)
                if callable(method):
                    method()
                    break
        path = None if urlpath is None else os.fspath(urlpath)
        stamp = getattr(src, "stamp", None)
        if stamp is None:
            stamp = local_stamp(src)
        fresh = cache is None
        if cache is None and mode == "a" and path is not None and os.path.exists(path):
            cache = reopen_cache(path, src, stamp, kwargs)
            fresh = False
        if cache is None:
            layers = {SOURCE_META: source_meta(src, path is not None), **(meta or {})}
            layers[SOURCE_META]["caterva2_env"] = bool(caterva2_env)
            cache = create_cache(src, path, mode, layers, kwargs)
        self._cache = cache
        self._schunk_cache = getattr(cache, "schunk", cache)
        self.urlpath = path if path is not None else self._schunk_cache.urlpath
        serves_blocks = (
            nd
            and getattr(src, "serves_blocks", True)
            and all(getattr(src, name, None) is not None for name in _BLOCK_PROTOCOL)
        )
        self._bpc = int(src.blocks_per_chunk) if serves_blocks else 1
        self._map = FetchedMap(self._schunk_cache.nchunks, self._bpc)
        self._hot: dict[int, tuple[dict[int, bytes], bytes]] = {}
        self._saved_index: Any = None
        self._stamped = stamp is not None
        self._seen_version = self._evict_version = -1
        self._adopt(fresh, stamp)
        for key, value in (vlmeta or {}).items():
            self._schunk_cache.vlmeta[key] = value

    # -- adopting a cache --------------------------------------------------------------------
    @property
    def _writable(self) -> bool:
        return self._schunk_cache.mode != "r"

    def _adopt(self, fresh: bool, stamp: Any) -> None:
        """Take up what the cache holds, as far as it is about the bytes served now: a cache
        filled under another stamp starts empty (its bitmaps cleared before the new stamp is
        written, so a run stopped in between leaves nothing claimed)."""
        s = self._schunk_cache
        vlmeta = s.vlmeta
        stored = None if fresh else vlmeta.get(STAMP_KEY)
        replaced = stamp is not None and stored is not None and stored != stamp
        with s.holding_lock() if self._writable and self._shared else contextlib.nullcontext():
            if replaced and self._writable:  # the bits go before (or with) the new stamp
                cleared: dict[str, Any] = {
                    key: bytes(len(vlmeta[key]))
                    for key in (BLOCKS_KEY, CHUNKS_KEY)
                    if key in vlmeta
                }
                if INDEX_KEY in vlmeta:
                    cleared[INDEX_KEY] = {}
                vlmeta.update_all({**cleared, STAMP_KEY: stamp})
            elif stamp is not None and self._writable and stored != stamp:
                vlmeta[STAMP_KEY] = stamp
            if fresh or replaced:
                self._seen_version = s._frame.version
                return
            self._map.load(vlmeta, special_chunks(s) if self._bpc == 1 else None)
            self._seen_version = s._frame.version
            adopt = getattr(self.src, "_adopt_index", None)
            if adopt is not None and stamp is not None and stored == stamp:
                index = vlmeta.get(INDEX_KEY)
                adopt(index)
                self._saved_index = index

    # -- reading -----------------------------------------------------------------------------
    def _wanted(self, item: Any) -> dict[int, list[int] | None]:
        """``{chunk: blocks}`` (None: the whole chunk) that ``item`` touches."""
        cache = self._cache
        if not isinstance(cache, NDArray):
            if isinstance(item, tuple) and len(item) == 0:
                return dict.fromkeys(range(self._schunk_cache.nchunks))
            return dict.fromkeys(int(n) for n in get_slice_nchunks(cache, item))
        dims = key_dims(item, cache.shape)
        if dims is None:
            return dict.fromkeys(range(self._schunk_cache.nchunks))
        cells = wanted_cells(dims, cache.shape, cache.chunks, cache.blocks)
        if self._bpc == 1:
            return dict.fromkeys(cells)
        return cells

    def fetch(self, item: Any = (), max_concurrency: int | None = None) -> Any:
        """The cache, with the chunks (or blocks) ``item`` touches fetched when missing
        (``max_concurrency`` fetches at once; default: the source's ``max_concurrency``, or
        1). A cache opened read-only that lacks them raises :class:`ParamError`."""
        wanted = self._wanted(item)
        with self._reading():
            self._refresh_map()
            missing = self._missing(wanted)
        if missing:
            if not self._writable:
                raise ParamError(
                    "the proxy's cache was opened in reading mode ('r'): it cannot be filled"
                )
            self._fill(missing, max_concurrency)
        return self._cache

    def __getitem__(self, item: Any) -> Any:
        """``item`` of the source, read from the cache after fetching what it lacks."""
        wanted = self._wanted(item)
        for _ in range(_ROUNDS):
            with self._reading():
                self._refresh_map()
                missing = self._missing(wanted)
                if not missing:
                    return self._cache[item]
            if not self._writable:
                return Proxy(self.src, _refresh_source=False)[item]
            self._fill(missing, None)
        raise FrameChangedError(
            f"the cache at {self.urlpath} lost the chunks read {_ROUNDS} times while they were "
            "fetched (other processes evicting them)"
        )

    async def afetch(self, item: Any = (), max_concurrency: int | None = None) -> Any:
        """:meth:`fetch` through the source's ``aget_chunk``, at most ``max_concurrency``
        (default: the source's ``max_concurrency``, or 1) in flight; whole chunks."""
        aget = getattr(self.src, "aget_chunk", None)
        if not callable(aget):
            raise NotImplementedError(
                "afetch is only available if the source has an aget_chunk method"
            )
        wanted = self._wanted(item)
        with self._reading():
            self._refresh_map()
            todo = [n for n in wanted if not self._map.complete(n)]
        if not todo:
            return self._cache
        if not self._writable:
            raise ParamError(
                "the proxy's cache was opened in reading mode ('r'): it cannot be filled"
            )
        gate = asyncio.Semaphore(self._workers(max_concurrency))

        async def one(n: int) -> tuple[int, bytes]:
            async with gate:
                return n, await aget(n)

        batch = _Batch()
        try:
            tasks = [asyncio.ensure_future(one(n)) for n in todo]  # started in chunk order
            for done in asyncio.as_completed(tasks):
                n, chunk = await done
                batch.whole[n] = self._checked(n, chunk)
                batch.nbytes += len(batch.whole[n])
                if batch.nbytes >= BATCH_BYTES:
                    self._commit(batch)
                    batch = _Batch()
        finally:
            self._commit(batch)
        return self._cache

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    # -- what python-blosc2's Proxy exposes --------------------------------------------------
    @property
    def dtype(self) -> np.dtype[Any] | None:  # type: ignore[override]  # a byte source has none
        """The dtype (None for a byte source)."""
        return self._cache.dtype if isinstance(self._cache, NDArray) else None

    @property
    def shape(self) -> Any:
        """The shape (the number of items for a byte source)."""
        return self._cache.shape if isinstance(self._cache, NDArray) else len(self._cache)

    @property
    def ndim(self) -> int:
        """The number of dimensions (1 for a byte source)."""
        return len(self._cache.shape) if isinstance(self._cache, NDArray) else 1

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The cache's chunk shape (None for a byte source)."""
        return self._cache.chunks if isinstance(self._cache, NDArray) else None

    @property
    def blocks(self) -> tuple[int, ...] | None:
        """The cache's block shape (None for a byte source)."""
        return self._cache.blocks if isinstance(self._cache, NDArray) else None

    @property
    def schunk(self) -> Any:
        """The cache's SChunk."""
        return self._schunk_cache

    @property
    def cparams(self) -> Any:
        """The cache's compression parameters."""
        return self._cache.cparams

    @property
    def info(self) -> Any:
        """The cache's ``info`` report (NDArray sources only)."""
        if isinstance(self._cache, NDArray):
            return self._cache.info
        raise NotImplementedError("info is only available if the source is a NDArray")

    @property
    def meta(self) -> Any:
        """The cache's metalayers."""
        return self._schunk_cache.meta

    @property
    def vlmeta(self) -> Any:
        """The cache's variable-length metalayers."""
        return self._schunk_cache.vlmeta

    @property
    def attrs(self) -> Any:
        """The cache's user attributes (its vlmeta)."""
        return self._schunk_cache.vlmeta

    @property
    def traffic(self) -> Any:
        """What the source counted of its reads (None for a source that does not count)."""
        return getattr(self.src, "traffic", None)

    @property
    def fields(self) -> dict[str, ProxyNDField] | None:
        """One :class:`ProxyNDField` per field of a structured dtype (None otherwise)."""
        names = None if self.dtype is None else self.dtype.names
        if names is None:
            return {} if isinstance(self._cache, NDArray) else None
        return {name: ProxyNDField(self, name) for name in names}

    def __len__(self) -> int:
        return int(self.shape[0]) if isinstance(self._cache, NDArray) else len(self._cache)

    def __str__(self) -> str:
        return f"Proxy({self.src}, urlpath={self.urlpath})"


class ProxyNDField(Operand):
    """One field of a structured :class:`Proxy`, read through it.

    >>> import numpy as np, pyblosc2 as blosc2
    >>> a = blosc2.asarray(np.ones(4, dtype=[("x", "i4"), ("y", "f4")]))
    >>> blosc2.Proxy(a).fields["y"][1:3]
    array([1., 1.], dtype=float32)
    """

    def __init__(self, proxy: Proxy, field: str) -> None:
        assert proxy.dtype is not None
        self.proxy, self.field = proxy, field
        self._dtype = proxy.dtype[field]

    @property
    def dtype(self) -> np.dtype[Any]:
        """The field's dtype."""
        return self._dtype

    @property
    def shape(self) -> Any:
        """The proxy's shape."""
        return self.proxy.shape

    def __getitem__(self, item: Any) -> np.ndarray[Any, Any]:
        return np.asarray(self.proxy[item][self.field])
