"""A b2nd frame read by byte ranges as a :class:`~pyblosc2.Proxy` source (python-blosc2's
``blosc2.proxy_source``, which names this module).

:class:`ByteRangeNDSource` serves a contiguous b2nd frame that stays where it is, reading only
what is asked for through one method, ``read_range(offset, size)``: its header when made (one
read of :data:`_FRAME_PREFETCH` bytes), its chunk offsets on the first chunk asked for, then
each chunk in one read, or, for a chunk large enough (:data:`BLOCK_MIN_CBYTES`) of which a key
touches at most :data:`BLOCK_MAX_FRACTION` of the blocks, its block offsets and then only those
blocks (neighbours closer than :data:`BLOCK_GAP` bytes merged). The frame rules and checks are
:mod:`.frameranges`. :class:`FsspecNDSource` reads through fsspec
(:mod:`pyblosc2.backends.ranges`; the ``remote`` extra).

The tunables are module globals read when used (python-blosc2's names), so a test may set them.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..chunk.header import OFF_CBYTES, ChunkHeader
from ..chunk.special import special_chunk
from ..constants import EXTENDED_HEADER_LENGTH, MAX_OVERHEAD
from ..errors import FormatError
from ..frame.index import SPECIAL_OFFSETS
from ..frame.trailer import TRAILER_MINLEN, Trailer, locate_trailer
from ..meta import unpack_vlmeta, unpackb
from ..params import CParams
from .frameranges import BlockLayout, FrameHead, block_plan, chunk_extents, read_offsets
from .sources import NotRanged, ProxyNDSource, ProxySource

__all__ = [
    "BLOCK_GAP",
    "BLOCK_HOT_CHUNKS",
    "BLOCK_MAX_FRACTION",
    "BLOCK_MIN_CBYTES",
    "REMOTE_MAX_CONCURRENCY",
    "ByteRangeNDSource",
    "FsspecNDSource",
    "NotRanged",
    "ProxyNDSource",
    "ProxySource",
    "Traffic",
]

#: fetches a proxy over a remote source runs at once by default
REMOTE_MAX_CONCURRENCY = 8
#: compressed size from which a chunk is worth taking apart block by block
BLOCK_MIN_CBYTES = 1 << 20
#: above this share of a chunk's blocks, the whole chunk is fetched instead
BLOCK_MAX_FRACTION = 0.5
#: blocks closer than this many bytes in the file are read together
BLOCK_GAP = 4096
#: partly filled chunks whose blocks a proxy keeps in memory (pyblosc2.proxies.filler's)
BLOCK_HOT_CHUNKS = 8
_FRAME_PREFETCH = 8192
_INDEX_PREFETCH = 1 << 16
_TRAILER_PREFETCH = 4096
_KIND = {int(k): v for k, v in SPECIAL_OFFSETS.items()}
_SPECIAL_OFFSETS = np.array(list(_KIND), np.int64)


class Traffic:
    """Requests and bytes a source read, counted where they cross (cumulative).

    >>> t = Traffic(); t.charge(10); t
    Traffic(requests=1, nbytes=10)
    """

    __slots__ = ("_lock", "nbytes", "requests")

    def __init__(self) -> None:
        self.requests = 0
        self.nbytes = 0
        self._lock = threading.Lock()

    def charge(self, nbytes: int) -> None:
        with self._lock:
            self.requests += 1
            self.nbytes += nbytes

    def reset(self) -> None:
        with self._lock:
            self.requests = self.nbytes = 0

    def __repr__(self) -> str:
        return f"Traffic(requests={self.requests}, nbytes={self.nbytes})"


class ByteRangeNDSource(ProxyNDSource):
    """A :class:`~pyblosc2.Proxy` source serving a contiguous b2nd frame read by byte ranges
    (subclasses give :meth:`read_range`; see the module docstring). ``stamp``, when a subclass
    sets it, names the bytes read, so a cache of other bytes is known stale.

    >>> import numpy as np, pyblosc2 as blosc2
    >>> class InMemory(ByteRangeNDSource):
    ...     def __init__(self, frame):
    ...         self.frame = frame
    ...         super().__init__("in-memory")
    ...     def read_range(self, offset, size):
    ...         return self.frame[offset : offset + size]
    >>> src = InMemory(blosc2.asarray(np.arange(100), chunks=(10,)).to_cframe())
    >>> src.shape, src.traffic, blosc2.Proxy(src)[42:45]
    ((100,), Traffic(requests=0, nbytes=0), array([42, 43, 44]))
    """

    stamp: Any = None
    serves_blocks = True
    max_ranges = 1
    wants_wave = True

    def __init__(
        self,
        urlpath: str,
        max_concurrency: int = REMOTE_MAX_CONCURRENCY,
        traffic: Traffic | None = None,
        *,
        _head: bytes | None = None,
    ) -> None:
        self.max_concurrency = max_concurrency
        self.urlpath = urlpath
        self.traffic = traffic if traffic is not None else Traffic()
        head = _head if _head is not None else self.read_range(0, _FRAME_PREFETCH)
        self._fh = FrameHead.read(self.read_range, urlpath, head)
        self._head: bytes | None = bytes(head)
        self._index: tuple[np.ndarray, np.ndarray] | None = None
        self._index_lock = threading.Lock()
        self._layouts: dict[int, BlockLayout | None] = {}
        self.blocks_per_chunk = self._fh.blocks_per_chunk

    # -- geometry ----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The source array's shape, from its b2nd metalayer."""
        return self._fh.meta.shape

    @property
    def chunks(self) -> tuple[int, ...]:
        """The source array's chunk shape."""
        return self._fh.meta.chunks

    @property
    def blocks(self) -> tuple[int, ...]:
        """The source array's block shape."""
        return self._fh.meta.blocks

    @property
    def dtype(self) -> np.dtype[Any]:
        """The source array's dtype."""
        return self._fh.meta.dtype

    @property
    def cparams(self) -> CParams:
        """Compression parameters of the source (its typesize)."""
        return CParams(typesize=self.dtype.itemsize)

    @property
    def meta(self) -> dict[str, Any]:
        """The frame's metalayers, decoded."""
        return {
            name: unpackb(raw, f"metalayer {name!r}") for name, raw in self._fh.header.metalayers
        }

    @property
    def vlmeta(self) -> dict[str, Any]:
        """The frame's vlmeta, decoded (one read of the trailer)."""
        h = self._fh.header
        if not h.has_vlmeta:
            return {}
        size = min(h.frame_len, _TRAILER_PREFETCH)
        tail = self.read_range(h.frame_len - size, size)
        tlen = locate_trailer(tail[-TRAILER_MINLEN:], h.frame_len, h.header_len)
        raw = tail[-tlen:] if tlen <= len(tail) else self.read_range(h.frame_len - tlen, tlen)
        trailer = Trailer.from_bytes(raw, h.frame_len - tlen)
        return {name: unpack_vlmeta(stored, f"vlmeta {name!r}") for name, stored in trailer.vlmeta}

    # -- where the chunks are ----------------------------------------------------------------
    def _frame_index(self) -> tuple[np.ndarray, np.ndarray]:
        with self._index_lock:
            if self._index is None:
                offsets = read_offsets(
                    self.read_range, self._fh, self._head, _INDEX_PREFETCH, self.urlpath
                )
                self._index = (offsets, chunk_extents(offsets, self._fh))
                self._head = None
            return self._index

    @property
    def _offsets(self) -> np.ndarray:
        return self._frame_index()[0]

    def _index_state(self, keep: Sequence[int] = ()) -> dict[str, Any]:
        """Where things are, for a cache to keep (python-blosc2's ``proxy-index``): the
        chunk offsets, and the layouts of the chunks in ``keep``."""
        with self._index_lock:
            offsets = None if self._index is None else self._index[0]
        layouts = [[int(n), lay.section] for n in keep if (lay := self._layouts.get(n)) is not None]
        return {
            "bpc": self.blocks_per_chunk,
            "offsets": b"" if offsets is None else offsets.astype("<i8").tobytes(),
            "layouts": layouts,
        }

    def _adopt_index(self, state: Any) -> None:
        """Take up a ``proxy-index`` a cache kept (only against the same stamp): anything that
        does not fit the frame as it is, or fails its checks, is dropped and read again."""
        if not isinstance(state, Mapping) or self._index is not None:
            return
        if state.get("bpc") != self.blocks_per_chunk:
            return
        raw = state.get("offsets")
        fh = self._fh
        if isinstance(raw, bytes) and len(raw) == 8 * fh.nchunks and raw:
            offsets = np.frombuffer(raw, "<i8").astype(np.int64)
            stored = offsets >= 0
            fits = bool(
                np.all(
                    ~stored
                    | (
                        (offsets >= fh.header_len)
                        & (offsets <= fh.index_pos - EXTENDED_HEADER_LENGTH)
                    )
                )
                and np.all(stored | np.isin(offsets, _SPECIAL_OFFSETS))
            )
            if fits:
                with self._index_lock:
                    self._index = (offsets, chunk_extents(offsets, fh))
                    self._head = None
        section = EXTENDED_HEADER_LENGTH + 4 * self.blocks_per_chunk
        for entry in state.get("layouts") or ():
            if not (isinstance(entry, list | tuple) and len(entry) == 2):
                continue
            n, head = entry
            if (
                isinstance(n, int)
                and 0 <= n < fh.nchunks
                and isinstance(head, bytes)
                and len(head) == section
            ):
                try:
                    self._layouts[n] = BlockLayout.parse(head, self.blocks_per_chunk)
                except FormatError:
                    continue

    # -- chunks ------------------------------------------------------------------------------
    def get_chunk(self, nchunk: int) -> bytes:
        """The stored bytes of chunk ``nchunk`` (a special chunk is rebuilt from the index)."""
        offsets, extents = self._frame_index()
        offset = int(offsets[nchunk])
        if offset < 0:
            return self._special_chunk(offset)
        data = self.read_range(offset, int(extents[nchunk]))
        h = ChunkHeader.from_bytes(data)
        if h.cbytes > len(data):
            raise FormatError(
                f"{self.urlpath} chunk {nchunk}",
                "cbytes",
                offset + OFF_CBYTES,
                f"at most {len(data)}",
                h.cbytes,
            )
        return bytes(data[: h.cbytes])

    async def aget_chunk(self, nchunk: int) -> bytes:
        """:meth:`get_chunk` in a worker thread (fsspec runs its own event loop)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.get_chunk, nchunk)

    def _special_chunk(self, offset: int) -> bytes:
        kind = _KIND[offset]
        h = self._fh.header
        blocksize = math.prod(self.blocks) * h.typesize if all(self.blocks) else h.chunksize
        return special_chunk(kind, h.chunksize, h.typesize, blocksize)

    def read_range(self, offset: int, size: int) -> bytes:
        """Bytes ``[offset, offset + size)`` of the frame (fewer only at its end); safe to call
        from several threads at once."""
        raise NotImplementedError(f"{type(self).__name__}.read_range")

    def read_ranges(self, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        """The bytes of each ``(offset, size)`` span, in order."""
        return [self.read_range(offset, size) for offset, size in spans]

    # -- blocks ------------------------------------------------------------------------------
    def _chunk_cap(self) -> int:
        return math.prod(self.chunks) * self.dtype.itemsize + MAX_OVERHEAD

    def wants_blocks(
        self,
        nchunk: int,
        nwanted: int,
        wave: Mapping[int, int] | None = None,
        nruns: int | None = None,
    ) -> bool:
        """Whether fetching ``nwanted`` blocks of chunk ``nchunk`` (in ``nruns`` runs) beats
        fetching it whole, decided from the geometry and the offsets only."""
        if nwanted > self.blocks_per_chunk * BLOCK_MAX_FRACTION:
            return False
        if self._chunk_cap() < BLOCK_MIN_CBYTES:
            return False
        offsets, extents = self._frame_index()
        if int(offsets[nchunk]) < 0:
            return False
        cbytes = int(extents[nchunk])
        if (
            nruns is not None
            and BLOCK_MIN_CBYTES > 0
            and nruns > max(1, cbytes // BLOCK_MIN_CBYTES)
        ):
            return False
        return cbytes >= BLOCK_MIN_CBYTES

    def chunk_layout(self, nchunk: int) -> BlockLayout | None:
        """Where the blocks of chunk ``nchunk`` are (None: fetch it whole)."""
        return self.chunk_layouts([nchunk])[0]

    def chunk_layouts(self, nchunks: Sequence[int]) -> list[BlockLayout | None]:
        """Where the blocks of each chunk in ``nchunks`` are (None: fetch that chunk whole)."""
        section = EXTENDED_HEADER_LENGTH + 4 * self.blocks_per_chunk
        todo = [n for n in dict.fromkeys(nchunks) if n not in self._layouts]
        if todo:
            offsets = self._offsets
            for n in todo:
                off = int(offsets[n])
                self._layouts[n] = (
                    None
                    if off < 0
                    else BlockLayout.parse(self.read_range(off, section), self.blocks_per_chunk)
                )
        return [self._layouts[n] for n in nchunks]

    def block_plan(
        self, nchunk: int, nblocks: Sequence[int]
    ) -> list[tuple[int, int, tuple[tuple[int, int, int], ...]]]:
        """The range reads covering blocks ``nblocks`` of chunk ``nchunk``."""
        layout = self._layouts.get(nchunk)
        if layout is None:
            raise NotRanged(f"chunk {nchunk} of {self.urlpath} has no block layout")
        return block_plan(layout, int(self._offsets[nchunk]), nblocks, BLOCK_GAP)


class FsspecNDSource(ByteRangeNDSource):
    """A :class:`ByteRangeNDSource` reading its frame through fsspec, at ``urlpath`` (the
    ``remote`` extra). What ``pyblosc2.open(url, lazy=True)`` wraps in a Proxy.

    >>> import fsspec, numpy as np, pyblosc2 as blosc2
    >>> fsspec.filesystem("memory").pipe_file("/doc/a.b2nd", blosc2.arange(10).to_cframe())
    >>> blosc2.Proxy(FsspecNDSource("memory://doc/a.b2nd"))[3:6]
    array([3, 4, 5])
    """

    source_kind = "fsspec"

    def __init__(
        self,
        urlpath: str,
        max_concurrency: int = REMOTE_MAX_CONCURRENCY,
        *,
        storage_options: dict[str, Any] | None = None,
        _filesystem: Any = None,
        _traffic: Traffic | None = None,
    ) -> None:
        from ..backends.ranges import RangeReader

        self._reader = RangeReader(urlpath, storage_options, _filesystem)
        self.storage_options = storage_options or {}
        self.stamp = self._reader.stamp
        super().__init__(urlpath, max_concurrency, traffic=_traffic)

    def refresh_stamp(self) -> None:
        """Name the object as it is now; when it was replaced since this source was made,
        read its header again and forget where its chunks were."""
        before = self.stamp
        self.stamp = self._reader.refresh()
        if self.stamp != before or self.stamp is None:
            self._fh = FrameHead.read(
                self.read_range, self.urlpath, self.read_range(0, _FRAME_PREFETCH)
            )
            with self._index_lock:
                self._index, self._head = None, None
            self._layouts.clear()
            self.blocks_per_chunk = self._fh.blocks_per_chunk

    def read_range(self, offset: int, size: int) -> bytes:
        """Bytes ``[offset, offset + size)`` of the remote frame, counted in ``traffic``."""
        data = self._reader.read(offset, size)
        self.traffic.charge(len(data))
        return data
