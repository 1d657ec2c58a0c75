"""What one stored HDF5 chunk of a Blosc or Blosc2 dataset holds, parsed and checked once.

A :class:`ChunkPlan` says where the Blosc chunk lies in the stored bytes (at 0 for the Blosc
filter; inside a contiguous frame for Blosc2, after its header), that chunk's checked layout
(header, block starts, dictionary: no block bytes) and, for a b2nd frame, the array geometry
its blocks follow. It is read through a :class:`~pyblosc2.backends.base.ByteStore` over the
stored bytes: those ``read_direct_chunk`` returned, or a window of the HDF5 file at the
chunk's address (:mod:`.chunkfile`), from which only the frame header, index and trailer,
the chunk header and the block starts are read.

Every field is checked against the dataset before anything is decoded: the frame holds one
chunk, a b2nd array has the HDF5 chunk's shape as its shape and chunk shape, blocks within
it and the dataset's item size; the chunk's ``nbytes`` is what the geometry needs.

A plan depends only on the stored bytes, so a dataset keeps its plans (:class:`PlanCache`)
keyed by the chunk's file address, size and filter mask while its file is open read-only
(HDF5's file lock keeps other writers out; SWMR files are not cached): a chunk read again
parses nothing again.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from ..backends.base import ByteStore
from ..chunk.decode import ChunkReader
from ..chunk.header import OFF_CBYTES, OFF_NBYTES, ChunkHeader
from ..chunk.layout import ChunkKind, ChunkLayout
from ..chunk.ranged import stored_reader
from ..constants import EXTENDED_HEADER_LENGTH
from ..errors import FormatError, TruncatedError
from ..frame.contiguous import FrameReader
from ..ndarray.b2nd_meta import B2NDMeta
from ..ndarray.geometry import Geometry

__all__ = ["ChunkPlan", "PlanCache", "plan_blosc", "plan_frame"]

#: plans a dataset keeps (a plan holds a chunk's block starts and dictionary, not its data)
PLAN_CACHE_SIZE = 1024


@dataclass(frozen=True, slots=True)
class ChunkPlan:
    """One stored chunk's parsed layout.

    ``start``/``cbytes``: the Blosc chunk's span in the stored bytes (``start`` is -1 when a
    Blosc2 frame stores the chunk as a special offset: ``special`` holds the chunk it makes).
    ``reader``: the checked layout of a chunk of regular blocks, bound to no block bytes (see
    :func:`~pyblosc2.chunk.ranged.with_blocks`), or None when the chunk is decoded whole.
    ``geometry``: the b2nd array a Blosc2 frame holds (None: the chunk's bytes are the HDF5
    chunk's items in C order).
    """

    start: int
    cbytes: int
    nbytes: int
    reader: ChunkReader | None
    special: bytes | None = None
    geometry: Geometry | None = None

    @property
    def blocks_addressable(self) -> bool:
        """Whether b2nd block ``j`` is Blosc block ``j`` (the chunk's block size is the b2nd
        block's): then single blocks can be read and decoded."""
        g = self.geometry
        return (
            self.reader is not None
            and g is not None
            and self.reader.header.blocksize == g.block_nbytes
            and self.reader.header.nblocks == math.prod(g.bgrid)
        )


def _exact(source: ByteStore, base: int) -> Callable[[int, int], bytes | memoryview]:
    """``read(pos, n)`` of bytes ``base + pos`` of ``source``, exactly ``n`` of them."""

    def read(pos: int, n: int) -> bytes | memoryview:
        data = source.read(base + pos, n)
        if len(data) != n:
            raise TruncatedError(
                "stored chunk", "data", base + pos, f"{n} bytes", f"{len(data)} (truncated)"
            )
        return data

    return read


def _reader_of(
    layout: ChunkLayout, read: Callable[[int, int], bytes | memoryview]
) -> ChunkReader | None:
    return stored_reader(read, layout) if layout.kind == ChunkKind.BLOCKS else None


def plan_blosc(source: ByteStore, nbytes: int) -> ChunkPlan:
    """The plan of a Blosc filter chunk (one Blosc1 or Blosc2 chunk at the start of the
    stored bytes) that must decode to ``nbytes``."""
    size = source.size
    head = source.read(0, min(size, EXTENDED_HEADER_LENGTH))
    h = ChunkHeader.from_bytes(head)
    if h.cbytes > size:
        raise TruncatedError(
            "chunk header", "cbytes", OFF_CBYTES, f"at most {size} (stored size)", h.cbytes
        )
    if h.nbytes != nbytes:
        raise FormatError("chunk header", "nbytes", OFF_NBYTES, nbytes, h.nbytes)
    read = _exact(source, 0)
    layout = ChunkLayout.parse(h, read)
    return ChunkPlan(0, h.cbytes, h.nbytes, _reader_of(layout, read))


def plan_frame(
    source: ByteStore, chunks: tuple[int, ...], dtype: np.dtype, nbytes: int
) -> ChunkPlan:
    """The plan of a Blosc2 filter chunk: a contiguous frame of one chunk, a b2nd array of
    shape ``chunks`` and items of ``dtype``'s size, or a plain super-chunk of ``nbytes``."""
    fr = FrameReader.open(source, exact=True)
    if fr.nchunks != 1:
        raise FormatError("frame", "nchunks", None, 1, fr.nchunks)
    layers = dict(fr.header.metalayers)
    geo = None
    if "b2nd" in layers:
        geo = _geometry(layers["b2nd"], fr.header.typesize, chunks, dtype)
        nbytes = geo.chunk_nbytes
    off = int(fr.offsets[0])
    if off < 0:  # a special value chunk (zeros, NaNs, ...), made from the index entry
        special = bytes(fr.get_chunk(0))
        h = ChunkHeader.from_bytes(special)
        if h.nbytes != nbytes:
            raise FormatError("chunk 0", "nbytes", OFF_NBYTES, nbytes, h.nbytes)
        return ChunkPlan(-1, len(special), h.nbytes, None, special, geo)
    start = fr.header.header_len + off
    reader = fr.block_reader(0)  # checks the chunk's header and layout against the frame
    if reader is None or reader.layout.kind != ChunkKind.BLOCKS:  # decoded whole
        reader = None
        h = ChunkHeader.from_bytes(fr.get_chunk(0)[:EXTENDED_HEADER_LENGTH])
    else:
        h = reader.header
    if h.nbytes != nbytes:
        raise FormatError("chunk 0", "nbytes", start + OFF_NBYTES, nbytes, h.nbytes)
    return ChunkPlan(start, h.cbytes, h.nbytes, reader, None, geo)


def _geometry(raw: bytes, typesize: int, chunks: tuple[int, ...], dtype: np.dtype) -> Geometry:
    meta = B2NDMeta.from_bytes(raw, typesize)
    if dtype.subdtype is not None or (meta.shape, meta.chunks) != (chunks, chunks):
        raise FormatError(
            "b2nd metalayer",
            "shape/chunks",
            None,
            f"{chunks} (the HDF5 chunk shape), items of {dtype}",
            f"{meta.shape} in chunks {meta.chunks}",
        )
    if meta.dtype.itemsize != dtype.itemsize:
        raise FormatError("b2nd metalayer", "itemsize", None, dtype.itemsize, meta.dtype.itemsize)
    if not all(1 <= b <= max(c, 1) for b, c in zip(meta.blocks, chunks, strict=True)):
        raise FormatError("b2nd metalayer", "blocks", None, f"1..{chunks} per axis", meta.blocks)
    return Geometry.from_meta(meta)


class PlanCache:
    """The plans of one dataset's stored chunks, least recently used dropped first.

    >>> cache = PlanCache(2); made = []
    >>> for key in [1, 2, 1, 3, 2]:
    ...     _ = cache.get(key, lambda key=key: made.append(key) or key)
    >>> made
    [1, 2, 3, 2]
    """

    def __init__(self, maxsize: int = PLAN_CACHE_SIZE) -> None:
        self.maxsize = maxsize
        self._plans: OrderedDict[Hashable, ChunkPlan] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], ChunkPlan]) -> ChunkPlan:
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                return plan
        plan = make()  # outside the lock: threads parse different chunks at once
        with self._lock:
            self._plans[key] = plan
            if len(self._plans) > self.maxsize:
                self._plans.popitem(last=False)
        return plan

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()

    def __len__(self) -> int:
        return len(self._plans)
