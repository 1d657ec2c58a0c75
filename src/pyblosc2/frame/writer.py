"""Writing frames: the index chunk (frame-format.md §4.3) and whole frames built from chunks
(§1, §2, §4.2, §5): what SChunk creation, sparse-to-contiguous gathering and the tests use.
Incremental changes to an existing frame are in :mod:`.edit`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..chunk.encode import EncodeSpec, encode_chunk
from ..chunk.header import ChunkHeader
from ..constants import Codec, SpecialValue, SplitMode
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

__all__ = ["build_cframe", "encode_index"]

# What C uses for every index it rewrites on mutation (§4.3).
INDEX_SPEC = EncodeSpec(
    typesize=8,
    clevel=5,
    codec=Codec.BLOSCLZ,
    blocksize=16384,
    splitmode=SplitMode.NEVER_SPLIT,
    nthreads=1,
)


def encode_index(offsets: np.ndarray) -> bytes:
    """The index chunk for int64 ``offsets`` (as C-Blosc2 writes it on every mutation).

    >>> encode_index(np.array([0, 100, 200], np.int64))[:4].hex()
    '05010708'
    """
    return encode_chunk(memoryview(np.asarray(offsets, "<i8").tobytes()), INDEX_SPEC)


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
