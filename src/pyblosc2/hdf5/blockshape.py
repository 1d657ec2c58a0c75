"""The block size and b2nd block shape the Blosc2 HDF5 filter gives a chunk it compresses.

With ``cd_values[1] == 0`` the filter asks C-Blosc2 for the automatic block size of a chunk of
``cd_values[3]`` bytes (the size C-Blosc2 would use to compress it with that codec, clevel and
type size). It then grows a block shape inside the chunk shape towards that many items: every
dimension starts at 2 (1 where the chunk has 1), and passes from the last dimension to the
first double a dimension (or take all of it, when doubling would exceed the chunk) while the
block stays within the target, until a pass changes nothing. Matching this keeps the chunks
pyblosc2 writes shaped as the plugin's; any block shape would decode.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from ..api import compress2, get_cbuffer_sizes
from ..constants import MAX_HEADER_TYPESIZE

__all__ = ["auto_blocksize", "b2nd_block_shape"]


@functools.lru_cache(maxsize=64)
def auto_blocksize(chunk_nbytes: int, typesize: int, clevel: int, codec: int) -> int:
    """C-Blosc2's automatic block size for a chunk of ``chunk_nbytes`` (as the filter asks
    for it: default parameters but codec, clevel and type size).

    >>> auto_blocksize(4096, 8, 5, 1)
    4096
    """
    if chunk_nbytes <= 0:
        return 0
    ts = typesize if typesize <= MAX_HEADER_TYPESIZE else 1
    probe = np.arange(chunk_nbytes, dtype=np.uint8)  # the size is chosen before the data is seen
    chunk = compress2(probe, typesize=ts, clevel=clevel, codec=codec)
    return get_cbuffer_sizes(chunk)[2]


def b2nd_block_shape(blocksize: int, typesize: int, chunks: Sequence[int]) -> tuple[int, ...]:
    """The block shape for a target of ``blocksize`` bytes in a chunk of shape ``chunks``.

    >>> b2nd_block_shape(4096, 8, (32, 16))
    (32, 16)
    >>> b2nd_block_shape(524288, 8, (4369, 30))
    (2048, 30)
    """
    target = blocksize // typesize if typesize else 0
    block = [1 if c == 1 else 2 for c in chunks]
    items = math.prod(block)
    if items >= target:
        return tuple(block)
    while True:
        before = items
        for i in reversed(range(len(chunks))):
            if block[i] * 2 <= chunks[i]:
                if items * 2 <= target:
                    items *= 2
                    block[i] *= 2
            elif block[i] < chunks[i]:
                whole = items // block[i] * chunks[i]
                if whole <= target:
                    items = whole
                    block[i] = chunks[i]
        if items == before or items >= target:
            return tuple(block)
