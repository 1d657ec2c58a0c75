"""The block geometry NDCELL and NDMEAN work on: the block shape of the ``b2nd`` metalayer
and the order of a block's items cell by cell (spec §9.7, C:
``plugins/filters/ndcell/ndcell.c``, ``plugins/filters/ndmean/ndmean.c``).

Both filters cut a block (``blockshape`` items, C order) into cells of ``cellshape`` items
(the last cell along an axis keeps what is left) and lay the cells out one after the other, in
C order of the cells, each cell's items in C order. C reads the block shape from the
super-chunk's ``b2nd`` metalayer by position (``b2nd_deserialize_meta``): ndim at byte 2,
then the shape (9 bytes an item after a 1-byte marker), the chunk shape and the block shape
(5 bytes an item). The order is a permutation of the block's items, computed once per
geometry.
"""

from __future__ import annotations

import math
import struct
from functools import lru_cache

import numpy as np

from ..context import ChunkContext
from ..errors import FormatError

__all__ = ["MAX_DIM", "block_shape", "cell_order"]

#: NDCELL_MAX_DIM / NDMEAN_MAX_DIM
MAX_DIM = 8
_B2ND_MAX_DIM = 16
_I32 = struct.Struct(">i")


def block_shape(ctx: ChunkContext | None, filter_name: str) -> tuple[int, ...]:
    """The block shape of the ``b2nd`` metalayer of ``ctx``, checked as the filters need it.

    >>> item = lambda marker, size, v: bytes([marker]) + v.to_bytes(size, "big")
    >>> meta = bytes([0x97, 0, 2, 0x92]) + item(0xD3, 8, 8) + item(0xD3, 8, 12) + b"\\x92"
    >>> meta += item(0xD2, 4, 8) + item(0xD2, 4, 12) + b"\\x92"
    >>> meta += item(0xD2, 4, 4) + item(0xD2, 4, 6)
    >>> block_shape(ChunkContext(4, (("b2nd", meta),)), "NDCELL")
    (4, 6)
    """
    raw = ctx.metalayer("b2nd") if ctx is not None else None
    where = f"{filter_name} filter"
    if raw is None:
        raise FormatError(
            where, "b2nd metalayer", None, "the b2nd metalayer of the array", "missing"
        )
    if len(raw) < 3:
        raise FormatError(where, "b2nd metalayer", 0, "at least 3 bytes", len(raw))
    nd = raw[2]
    if not 0 < nd <= min(MAX_DIM, _B2ND_MAX_DIM):
        raise FormatError(where, "b2nd ndim", 2, f"1..{MAX_DIM}", nd)
    pos = 4 + 9 * nd + 1 + 5 * nd + 1
    if len(raw) < pos + 5 * nd:
        raise FormatError(where, "b2nd metalayer", 0, f"at least {pos + 5 * nd} bytes", len(raw))
    shape = tuple(_I32.unpack_from(raw, pos + 1 + 5 * i)[0] for i in range(nd))
    if min(shape) <= 0:
        raise FormatError(where, "b2nd blockshape", pos, "positive sizes", shape)
    return shape


def check_block(
    blockshape: tuple[int, ...], typesize: int, length: int, cell_items: int, where: str
) -> None:
    """The block checks both filters make before touching a byte: the block holds exactly
    ``blockshape`` items of ``typesize`` bytes, and at least one cell of ``cell_items``."""
    size = math.prod(blockshape) * typesize
    if size != length:
        raise FormatError(where, "block size", None, f"{size} bytes (the b2nd block)", length)
    if cell_items * typesize > length:
        raise FormatError(
            where, "cell size", None, f"at most {length // typesize} items", cell_items
        )


@lru_cache(maxsize=32)
def cell_order(blockshape: tuple[int, ...], cellshape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """``(order, lengths)``: the block's item indices cell by cell (the items a filter
    writes, in the order it writes them) and the number of items of each cell.

    >>> order, lengths = cell_order((3, 4), (2, 2))
    >>> order.tolist(), lengths.tolist()
    ([0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 10, 11], [4, 4, 2, 2])
    """
    ncells = tuple(-(-b // c) for b, c in zip(blockshape, cellshape, strict=True))
    coords = np.indices(blockshape, dtype=np.int64).reshape(len(blockshape), -1)
    cells = np.asarray(cellshape, np.int64).reshape(-1, 1)
    cell_id = np.ravel_multi_index(tuple(coords // cells), ncells)
    # items are visited in C order already: a stable sort by cell keeps each cell's C order
    order = np.argsort(cell_id, kind="stable")
    lengths = np.bincount(cell_id, minlength=math.prod(ncells))
    order.flags.writeable = False
    lengths.flags.writeable = False
    return order, lengths
