"""python-blosc2's ``blosc2.utils`` names that scripts and tests import (index keys, the
chunk grid).

>>> process_key(2, (5,))
((slice(2, 3, None),), (True,))
>>> get_chunks_idx((10, 8), (4, 8))
((3, 1), 3)
"""

import math
from collections.abc import Sequence

from .ndarray.keys import process_key

__all__ = ["get_chunks_idx", "process_key"]


def get_chunks_idx(shape: Sequence[int], chunks: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """The chunk grid of an array (chunks per dimension) and its number of chunks."""
    grid = tuple(math.ceil(s / c) for s, c in zip(shape, chunks, strict=True))
    return grid, math.prod(grid)
