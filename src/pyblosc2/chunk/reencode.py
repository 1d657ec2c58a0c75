"""A chunk written again with only some of its blocks changed: the changed blocks encoded, the
others' stored bytes kept (spec §6.2-6.3, §7).

The writer (:func:`~.encode.encode_chunk`) compresses each block from its own bytes alone
(no dictionary, no DELTA, a pipeline of at most the other filters) and, when the output budget
cannot bind, lays the blocks out one after the other. A chunk it wrote is then the header, the
block starts and each block's streams; the same chunk with some blocks changed is that header
(with a new ``cbytes``), new starts, and each block's streams, old or new. This module makes it
without compressing the blocks that did not change: a growing array written a block at a time
(``a[n:n + k] = rows``) compresses one block per write instead of its whole chunk.

:func:`encode_changed_blocks` must be given a chunk that :func:`~.encode.encode_chunk` wrote
with the same parameters (the caller knows: it compares the stored bytes with those it wrote);
it returns None wherever its result could differ from encoding the whole chunk: another header,
a dictionary, DELTA, a Blosc1 chunk, a memcpy or an all-zero chunk, a budget that binds.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import accumulate, pairwise

import numpy as np

from ..constants import Filter
from .blockout import lay_out_run
from .encode import EncodeSpec, chunk_pipeline, compress_block, filtered_streams, plan_chunk
from .header import ChunkHeader
from .layout import BSTART_LEN, ChunkKind, ChunkLayout

__all__ = ["encode_changed_blocks"]


def encode_changed_blocks(
    previous: bytes, spec: EncodeSpec, blocks: Mapping[int, np.ndarray]
) -> bytes | None:
    """The chunk :func:`~.encode.encode_chunk` writes with ``spec`` for the data of chunk
    ``previous`` (a chunk it wrote with ``spec``) with the blocks ``blocks`` (block number:
    its new ``uint8`` bytes, a whole block each) changed, compressing only those; None when
    that would not be the same bytes (then encode the whole chunk).

    >>> from pyblosc2.chunk.encode import encode_chunk
    >>> spec = EncodeSpec(typesize=4, clevel=5, codec=1, blocksize=4096)
    >>> data = np.arange(4096, dtype=np.int32)
    >>> old = encode_chunk(data.data.cast("B"), spec)
    >>> data[1024:2048] = 7  # block 1
    >>> new = encode_changed_blocks(old, spec, {1: data[1024:2048].view(np.uint8)})
    >>> new == encode_chunk(data.data.cast("B"), spec)
    True
    """
    h = ChunkHeader.from_bytes(previous)
    if h.cbytes > len(previous) or spec.blosc1 or spec.use_dict:
        return None
    plan = plan_chunk(h.nbytes, spec)
    header = plan.header
    if (
        plan.memcpyed
        or Filter.DELTA in header.filters
        or h.with_sizes(cbytes=0) != header
        or header.nblocks != h.nblocks
    ):
        return None
    view = memoryview(previous)[: h.cbytes]
    layout = ChunkLayout.parse(h, lambda pos, n: view[pos : pos + n])
    starts = layout.bstarts.tolist()
    nblocks = h.nblocks
    if (
        layout.kind != ChunkKind.BLOCKS
        or starts[0] != plan.hl + BSTART_LEN * nblocks
        or any(b <= a for a, b in pairwise(starts))
        or any(not 0 <= j < nblocks or len(d) != h.block_size(j) for j, d in blocks.items())
    ):
        return None  # (blocks laid out in order from the first byte after their starts)
    ends = [*starts[1:], h.cbytes]
    pipeline = chunk_pipeline(header, plan.slots, spec)
    pieces: list[bytes | memoryview] = []
    sizes: list[int] = []
    zero = True
    for j in range(nblocks):
        new = blocks.get(j)
        piece: bytes | memoryview
        if new is None:
            piece = view[starts[j] : ends[j]]
            zero = zero and not any(piece)  # (a block of zero runs: its csizes are 0)
        else:
            streams = filtered_streams(0, new, header, pipeline, plan.split, None)
            run = lay_out_run([compress_block(streams, plan.codec, spec.clevel, True, None)])
            piece = b"".join(run.pieces)
            zero = zero and run.zero
        pieces.append(piece)
        sizes.append(len(piece))
    first = plan.hl + BSTART_LEN * nblocks
    cbytes = first + sum(sizes)
    if zero or cbytes + header.blocksize > plan.destsize:
        return None  # an all-zero chunk is special; a budget that binds lays out otherwise
    bstarts = np.array(list(accumulate(sizes[:-1], initial=first)), "<i4")
    return b"".join([header.with_sizes(cbytes=cbytes).to_bytes(), bstarts.tobytes(), *pieces])
