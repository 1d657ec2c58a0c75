"""Writing frames: the index chunk (frame-format.md §4.3) and whole frames built from chunks
(§1, §2, §4.2, §5): what SChunk creation, sparse-to-contiguous gathering and the tests use.
Incremental changes to an existing frame are in :mod:`.edit`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..chunk.encode import EncodeSpec, encode_chunk
from ..chunk.header import (
    BLOSC2_VERSION,
    DONT_SPLIT,
    DOSHUFFLE,
    EXTENDED_MARKER,
    MEMCPYED,
    ChunkHeader,
    sized_header,
)
from ..chunk.layout import BSTART_LEN, CSIZE_LEN
from ..constants import MIN_BUFFERSIZE, Codec, Filter, SpecialValue, SplitMode
from .header import (
    CONTIGUOUS,
    OFFSETS_64,
    UDCODEC_NIBBLE,
    VARIABLE_CHUNKS,
    VERSION_FIXED,
    VERSION_VARIABLE,
    FrameHeader,
)
from .index import SPECIAL_OFFSET_OF, STORABLE_SPECIALS
from .trailer import Trailer

__all__ = ["INDEX_SPEC", "IndexEncoder", "build_cframe", "encode_index"]

# What C uses for every index it rewrites on mutation (§4.3).
INDEX_SPEC = EncodeSpec(
    typesize=8,
    clevel=5,
    codec=Codec.BLOSCLZ,
    blocksize=16384,
    splitmode=SplitMode.NEVER_SPLIT,
    nthreads=1,
)
INDEX_BLOCK = INDEX_SPEC.blocksize
_PER_BLOCK = INDEX_BLOCK // 8  # offsets per block
_CSIZE = struct.Struct("<i")
# The index chunk's header as C writes it (``05 01 15 08``, §4.3): BloscLZ, SHUFFLE in slot 5,
# no split; with MEMCPYED when the data is stored verbatim.
_HEADER = ChunkHeader(
    version=BLOSC2_VERSION,
    versionlz=1,
    flags=EXTENDED_MARKER | DOSHUFFLE | DONT_SPLIT,
    typesize=8,
    nbytes=0,
    blocksize=INDEX_BLOCK,
    cbytes=0,
    filters=(0, 0, 0, 0, 0, Filter.SHUFFLE),
)
_HEADER_BYTES = _HEADER.to_bytes()


def _block_body(block: np.ndarray) -> bytes:
    """The stream of one whole index block (``INDEX_BLOCK`` bytes of offsets) as C-Blosc2
    writes it inside an index chunk: its csize and BloscLZ payload, a run token, or the
    shuffled bytes stored raw."""
    chunk = encode_chunk(block.data.cast("B"), INDEX_SPEC)
    h = ChunkHeader.from_bytes(chunk)
    if h.special:  # every offset 0: one zero-run stream
        return _CSIZE.pack(0)
    if h.memcpyed:  # incompressible: the raw stream C falls back to
        return _CSIZE.pack(INDEX_BLOCK) + _shuffled(block)
    return chunk[h.header_len + BSTART_LEN : h.cbytes]


def _shuffled(items: np.ndarray) -> bytes:
    """Offsets as SHUFFLE stores them: byte ``k`` of every offset, for k = 0..7 (§9.1)."""
    return items.view(np.uint8).reshape(-1, 8).T.tobytes()


class IndexEncoder:
    """Encodes a frame's index chunk after every change, in time that does not grow with
    the number of chunks.

    The blocks of an index chunk are independent (§4.3, §6): every whole block of 16 KiB
    (2048 offsets) is compressed as C-Blosc2 compresses it, once, and its stream kept while
    its offsets stay the same; the last, partial block (the one appends change) is stored as
    a raw stream, the form C itself writes for a block it cannot compress and reads with a
    copy. An append thus costs a copy of the kept streams, not a BloscLZ pass over the index
    (which made appending N chunks cost O(N^2)). An index shorter than one block is a
    memcpyed chunk, as C writes an index it cannot compress.

    >>> enc = IndexEncoder()
    >>> idx = enc.encode(np.arange(5000, dtype=np.int64) * 300)
    >>> idx[:4].hex(), len(enc.encode(np.arange(5001, dtype=np.int64) * 300)) - len(idx)
    ('05011508', 8)
    """

    __slots__ = ("_blocks", "_bodies", "_head", "_last")

    def __init__(self) -> None:
        self._blocks = np.empty((0, _PER_BLOCK), np.int64)  # the whole blocks encoded last
        self._bodies: list[bytes] = []  # and their streams
        # (whole blocks, their streams joined, the packed bstarts of those streams in a
        # chunk of ``whole blocks + 1`` blocks): what every append until the next whole
        # block repeats
        self._head: tuple[int, bytes, bytes] | None = None
        self._last: np.ndarray | None = None  # the (read-only) offsets encoded last

    def encode(self, offsets: np.ndarray, prefix: np.ndarray | None = None) -> bytes:
        """The index chunk of int64 ``offsets`` (none for an empty frame). ``prefix``: a
        read-only array whose items are the first ``offsets``; when it is the one encoded
        last and covers every whole block, those blocks are known unchanged without
        comparing them (an append)."""
        offs = np.ascontiguousarray(offsets, "<i8")
        previous, self._last = self._last, None
        n = offs.size
        if n == 0:
            return b""
        full = n // _PER_BLOCK
        if full == 0:
            return _memcpyed(offs)
        known = prefix is not None and prefix is previous and prefix.size >= full * _PER_BLOCK
        if not known:
            self._keep(offs[: full * _PER_BLOCK].reshape(full, _PER_BLOCK))
        if self._head is None or self._head[0] != full:
            bodies = self._bodies[:full]
            sizes = np.array([len(b) for b in bodies], np.int64)
            starts = _HEADER.header_len + BSTART_LEN * (full + 1) + np.cumsum(sizes) - sizes
            self._head = (full, b"".join(bodies), starts.astype("<i4").tobytes())
        _, joined, bstarts = self._head
        tail = offs[full * _PER_BLOCK :]
        if not offsets.flags.writeable:
            self._last = offsets
        nbytes = 8 * n
        if not tail.size:  # whole blocks only: one block start fewer
            cbytes = _HEADER.header_len + BSTART_LEN * full + len(joined)
            if cbytes > nbytes + _HEADER.header_len:
                return _memcpyed(offs)
            starts = np.frombuffer(bstarts, "<i4") - BSTART_LEN
            return b"".join([sized_header(_HEADER_BYTES, nbytes, cbytes), starts.tobytes(), joined])
        tail_start = _HEADER.header_len + BSTART_LEN * (full + 1) + len(joined)
        cbytes = tail_start + CSIZE_LEN + 8 * tail.size
        if cbytes > nbytes + _HEADER.header_len:  # more than the data: stored verbatim
            return _memcpyed(offs)
        return b"".join(
            [
                sized_header(_HEADER_BYTES, nbytes, cbytes),
                bstarts,
                _CSIZE.pack(tail_start),
                joined,
                _CSIZE.pack(8 * tail.size),
                _shuffled(tail),
            ]
        )

    def _keep(self, blocks: np.ndarray) -> None:
        """Compress the whole ``blocks`` that differ from those encoded last."""
        full = len(blocks)
        kept = min(full, len(self._bodies))
        same = (blocks[:kept] == self._blocks[:kept]).all(axis=1).tolist()
        if kept == full and all(same):
            return
        self._bodies = [
            self._bodies[j] if j < kept and same[j] else _block_body(blocks[j]) for j in range(full)
        ]
        self._blocks, self._head = blocks.copy(), None


def _memcpyed(offs: np.ndarray) -> bytes:
    """An index chunk holding ``offs`` verbatim: what C-Blosc2 writes for an index it does not
    compress (under 32 bytes: without the filter flags, §5)."""
    if 8 * offs.size < MIN_BUFFERSIZE:
        return encode_chunk(offs.data.cast("B"), INDEX_SPEC)
    nbytes = 8 * offs.size
    header = replace(
        _HEADER,
        flags=_HEADER.flags | MEMCPYED,
        nbytes=nbytes,
        blocksize=min(nbytes, INDEX_BLOCK),
        cbytes=nbytes + _HEADER.header_len,
    )
    return header.to_bytes() + offs.tobytes()


def encode_index(offsets: np.ndarray) -> bytes:
    """The index chunk for int64 ``offsets`` (see :class:`IndexEncoder`; a frame being changed
    keeps one encoder so that unchanged blocks are not compressed again).

    >>> encode_index(np.array([0, 100, 200], np.int64))[:4].hex()
    '05010708'
    """
    offs = np.ascontiguousarray(offsets, "<i8")
    return IndexEncoder().encode(offs) if offs.size else _memcpyed(offs)


def build_cframe(
    chunks: Sequence[bytes],
    *,
    typesize: int,
    chunksize: int | None = None,
    metalayers: Sequence[tuple[str, bytes]] = (),
    vlmeta: Sequence[tuple[str, bytes]] = (),
    codec: int = Codec.ZSTD,
    clevel: int = 5,
    splitmode: int = SplitMode.AUTO_SPLIT,
    filters: tuple[int, ...] = (0, 0, 0, 0, 0, 1),
    filters_meta: tuple[int, ...] = (0,) * 6,
    blocksize: int = 0,
    frame_type: int = CONTIGUOUS,
    use_dict: bool = False,
) -> bytes:
    """A frame holding ``chunks`` in order (``frame_type`` SPARSE: the empty index frame of a
    new sparse frame, which must get no chunks).

    Zero/NaN/uninit special chunks become special offsets (no bytes stored) when the frame has
    a fixed chunk size, as C does; ``chunksize`` None picks fixed sizes when every chunk but
    the last has the first chunk's size, else variable (0).
    """
    headers = [ChunkHeader.from_bytes(c) for c in chunks]
    sizes = [h.nbytes for h in headers]
    if chunksize is None:
        first = sizes[0] if sizes else -1
        fixed = all(s == first for s in sizes[:-1]) and (not sizes or sizes[-1] <= first)
        chunksize = first if fixed else 0
    offsets = np.empty(len(chunks), np.int64)
    data: list[bytes] = []
    pos = 0
    for i, (c, h) in enumerate(zip(chunks, headers, strict=True)):
        kind = SpecialValue(h.special) if h.special in STORABLE_SPECIALS else None
        if kind is not None and chunksize > 0:
            offsets[i] = SPECIAL_OFFSET_OF[kind]
            continue
        offsets[i] = pos
        data.append(bytes(c[: h.cbytes]))
        pos += h.cbytes
    nbytes = sum(sizes)
    index = encode_index(offsets) if chunks else b""
    version = VERSION_FIXED if chunksize != 0 else VERSION_VARIABLE
    gflags = version | OFFSETS_64 | (VARIABLE_CHUNKS if chunksize == 0 else 0)
    nibble = min(codec, UDCODEC_NIBBLE)  # ids above the nibble live in udcodec
    trailer = Trailer(tuple(vlmeta)).to_bytes()
    header = FrameHeader(
        0,
        0,
        gflags,
        frame_type,
        (clevel << 4) | nibble,
        splitmode - 1,
        nbytes,
        pos,
        typesize,
        blocksize,
        chunksize,
        1,
        1,
        bool(vlmeta),
        tuple(filters),
        codec,
        0,
        tuple(filters_meta),
        1 if use_dict else 0,  # other_flags2 bit 0 (C: schunk->use_dict)
        tuple(metalayers),
    )
    header_len = len(header.to_bytes())
    frame_len = header_len + pos + len(index) + len(trailer)
    header = FrameHeader(
        header_len, frame_len, *[getattr(header, f) for f in FrameHeader.__slots__[2:]]
    )
    return b"".join([header.to_bytes(), *data, index, trailer])
