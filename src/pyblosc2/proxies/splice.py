"""A chunk made of some of its blocks: how a proxy cache holds a partly fetched chunk.

The blocks a cache has not fetched are written as streams of compressed size 0, which the
chunk format defines as zeros stored nowhere (chunk-format.md §6.3, §15), so the result is an
ordinary chunk any Blosc2 reader decodes: exact where the blocks are, zeros elsewhere (what
the cache's bitmap, :mod:`.bitmap`, tells apart). The header is the source chunk's with its
``cbytes`` replaced; the block starts follow it; nothing else moves (python-blosc2's layout).

Only chunks of regular blocks without a dictionary can be spliced (:func:`spliceable`); the
others are fetched whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..chunk.header import OFF_CBYTES, ChunkHeader
from ..chunk.layout import BSTART_LEN, CSIZE_LEN, ChunkKind, ChunkLayout
from ..constants import EXTENDED_HEADER_LENGTH, Filter
from ..errors import FormatError

__all__ = ["chunk_payloads", "needs_block0", "splice_chunk", "spliceable"]


def spliceable(layout: ChunkLayout) -> bool:
    """Whether a chunk laid out as ``layout`` can hold some of its blocks only: regular
    blocks (more than one), extended header, no dictionary."""
    h = layout.header
    return (
        layout.kind == ChunkKind.BLOCKS
        and h.header_len == EXTENDED_HEADER_LENGTH
        and h.nblocks > 1
        and not h.use_dict
    )


def needs_block0(header: ChunkHeader) -> bool:
    """Whether every block of the chunk needs block 0 to decode (DELTA refers to it, §9.3):
    a partial chunk must then hold block 0 as well."""
    return any(fid == Filter.DELTA for fid, _ in header.pipeline)


def splice_chunk(header: bytes, payloads: Mapping[int, bytes]) -> bytes:
    """The chunk whose 32-byte ``header`` is given, holding the stored bytes of the blocks in
    ``payloads`` (block number -> bytes) and zero-size streams for the others.

    >>> import numpy as np, pyblosc2 as blosc2
    >>> c = blosc2.compress2(np.arange(64, dtype=np.int32), typesize=4, blocksize=64)
    >>> one = chunk_payloads(c, [1])
    >>> np.frombuffer(blosc2.decompress2(splice_chunk(c[:32], one)), np.int32)[12:20]
    array([ 0,  0,  0,  0, 16, 17, 18, 19], dtype=int32)
    """
    h = ChunkHeader.from_bytes(header[:EXTENDED_HEADER_LENGTH])
    nblocks = h.nblocks
    bad = [b for b in payloads if not 0 <= b < nblocks]
    if bad:
        raise FormatError("spliced chunk", "block", None, f"0..{nblocks - 1}", bad[0])
    pos = EXTENDED_HEADER_LENGTH + BSTART_LEN * nblocks
    bstarts = np.empty(nblocks, "<i4")
    body: list[bytes] = []
    for j in range(nblocks):
        part = payloads.get(j)
        if part is None:
            part = bytes(CSIZE_LEN * h.nstreams(j))
        bstarts[j] = pos
        pos += len(part)
        body.append(bytes(part))
    out = bytearray(header[:EXTENDED_HEADER_LENGTH])
    out[OFF_CBYTES : OFF_CBYTES + 4] = int(pos).to_bytes(4, "little", signed=True)
    return bytes(out) + bstarts.tobytes() + b"".join(body)


def chunk_payloads(chunk: bytes | memoryview, blocks: Iterable[int]) -> dict[int, bytes]:
    """The stored bytes of ``blocks`` of a (checked) chunk of regular blocks."""
    h = ChunkHeader.from_bytes(chunk)
    if h.cbytes > len(chunk):
        raise FormatError("chunk", "cbytes", OFF_CBYTES, f"at most {len(chunk)}", h.cbytes)
    layout = ChunkLayout.parse(h, lambda p, n: chunk[p : p + n])
    if not spliceable(layout):
        raise FormatError("chunk", "layout", None, "regular blocks to take apart", layout.kind.name)
    return {int(j): bytes(chunk[slice(*layout.spans[j])]) for j in blocks}
