"""The last block a frame handle decoded for a read inside one block, kept for the next one.

A one-item read (``s[i]``, ``get_slice`` of a few items) decodes every stream of the block
holding the item. When a second read falls in the same block, the block is decoded whole
and kept, and the reads that stay in that block (the same item again, its neighbours) take
their bytes out of it by a slice instead of decoding them again. A block read only once is
not kept: reads spread over a chunk keep the cheaper one-block decoding (a large block's
streams decoded one at a time into a small buffer, only the items read copied out).

The kept block is only used when it was decoded from the same bytes: a block of a chunk read
whole is kept with that chunk's reader (whose bytes the frame re-reads and compares on every
read: C-Blosc2 rewrites a same-size chunk in place); a block read by byte ranges is kept with
its stored bytes, which the next read fetches anyway and compares. A frame reader is replaced
whenever a poll or a lock sees another handle's commit, and its kept block goes with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.layout import ChunkKind
from ..chunk.ranged import GAP_BYTES, FetchFn, coalesce, with_blocks

__all__ = ["HELD_MAX", "HeldBlock", "first_note", "in_one_block", "read_held"]

#: blocks larger than this are never kept (a handle holds at most one block this size)
HELD_MAX = 1 << 24


@dataclass(frozen=True, slots=True)
class HeldBlock:
    """Block ``j`` of chunk ``n`` read through ``owner`` (its reader; a first read that set
    up none: the kept bytes the reader will be made of), and its ``image`` once decoded
    (the block decoded whole, :meth:`ChunkReader.block_image`; None: read once, not decoded
    for keeping);
    ``stored``: the stored bytes it was decoded from, one ``bytes`` per fetched span
    (None when ``owner`` holds the whole chunk's bytes)."""

    owner: object
    n: int
    j: int
    stored: list[bytes] | None
    image: np.ndarray | None


def first_note(owner: object, n: int, j: int, bs: int) -> HeldBlock | None:
    """What a read of block ``j`` (of ``bs`` bytes) of chunk ``n`` through ``owner`` that
    :func:`read_held` did not serve keeps: the block noted as read once, or None for a block
    too large to keep.

    >>> first_note("r", 1, 0, 4096).j, first_note("r", 1, 0, HELD_MAX + 1)
    (0, None)
    """
    return None if bs > HELD_MAX else HeldBlock(owner, n, j, None, None)


def in_one_block(reader: ChunkReader, lo: int, hi: int) -> int | None:
    """The block of a chunk of regular blocks holding all of bytes ``[lo, hi)`` (not
    empty), else None.

    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> a = np.arange(2048, dtype=np.int32).data.cast("B")
    >>> r = ChunkReader.open(encode_chunk(a, EncodeSpec(4, 5, 1, blocksize=4096)))
    >>> in_one_block(r, 4096, 4100), in_one_block(r, 4000, 4100), in_one_block(r, 5, 5)
    (1, None, None)
    """
    if reader.layout.kind != ChunkKind.BLOCKS:
        return None
    blocks = reader.layout.blocks_for(lo, hi)
    return blocks.start if len(blocks) == 1 else None


def read_held(
    held: HeldBlock | None,
    keep: Callable[[HeldBlock], None],
    n: int,
    reader: ChunkReader,
    j: int,
    lo: int,
    hi: int,
    out: np.ndarray | None,
    fetch: FetchFn | None,
) -> np.ndarray:
    """Bytes ``[lo, hi)`` of chunk ``n``, all in its block ``j``, into ``out`` when given.
    ``reader``: the chunk's reader over its whole bytes (``fetch`` None), or its stored
    layout (``fetch`` reads the stored chunk's bytes).

    A block read once is only noted (``keep`` gets it without an image: reads all over the
    chunk pay nothing for the keeping, a one-block range being decoded the cheapest way);
    a second read of it, from the same bytes, decodes its image and keeps it; from the
    third on, reads are served out of the image."""
    bs = reader.header.effective_blocksize
    a, b = lo - j * bs, hi - j * bs
    if bs > HELD_MAX:  # decoded as any one-block read, never kept
        if fetch is None:
            return reader.decode_range(lo, hi, out=out)
        needed = reader.layout.needed_blocks(lo, hi)
        return with_blocks(fetch, reader, needed, lambda r: r.decode_range(lo, hi, out=out))
    if fetch is None:
        if held is None or held.owner is not reader or held.j != j or held.stored is not None:
            keep(HeldBlock(reader, n, j, None, None))
            return reader.decode_range(lo, hi, out=out)
        image = held.image
        if image is None:
            image = reader.block_image(j)
            keep(HeldBlock(reader, n, j, None, image))
        return _part(image, a, b, out)
    layout = reader.layout
    needed = layout.needed_blocks(lo, hi)
    # the spans with_blocks fetches: fetched here first, compared with the kept block's
    spans = coalesce(layout.block_spans(needed), GAP_BYTES)
    got = [bytes(fetch(s, e - s)) for s, e in spans]
    h = held
    seen = h is not None and h.owner is reader and h.n == n and h.j == j and h.stored == got
    if seen and h is not None and h.image is not None:
        return _part(h.image, a, b, out)
    served = dict(zip(spans, got, strict=True))

    def fetched(p: int, k: int) -> bytes | bytearray | memoryview:
        data = served.get((p, p + k))
        return fetch(p, k) if data is None else data

    if not seen:  # read once: noted, decoded as any ranged read
        keep(HeldBlock(reader, n, j, got, None))
        return with_blocks(fetched, reader, needed, lambda r: r.decode_range(lo, hi, out=out))

    def use(bound: ChunkReader) -> np.ndarray:
        # read again: its streams are checked (as every ranged read checks them), then
        # its image decoded and kept
        bound.check_blocks(needed)
        image = bound.block_image(j)
        keep(HeldBlock(reader, n, j, got, image))
        return _part(image, a, b, out)

    return with_blocks(fetched, reader, needed, use, check=False)


def _part(image: np.ndarray, a: int, b: int, out: np.ndarray | None) -> np.ndarray:
    """Bytes ``[a, b)`` of a kept block ``image`` (clipped to it), into ``out`` when given."""
    a, b = max(0, a), min(b, len(image))
    part = image[a : max(a, b)]
    if out is None:
        return part.copy()
    out[: len(part)] = part
    return out[: len(part)]
