"""Two neighbouring offsets picked out of one block of an index chunk (spec §6.2-6.3, §9.1,
§15), with the chunk's plan bound once per open frame.

A chunk's first read looks up its offset and the next chunk's (:meth:`~.index.OffsetIndex.pair`).
The general light read (:func:`~pyblosc2.chunk.firstread.read_in_block`) parses the index
chunk's header and works out its layout at every call; the index of an open frame does not
change, so :func:`pair_picker` does that once and the lookup is one block start, one stream
header, one decode and two strided slices (a first one-item read over 100k chunks spent about
a third of its time in that lookup). It serves the index chunks C-Blosc2 and pyblosc2 write:
regular blocks of whole 8-byte items, one stream per block, byte-shuffled by 8 (or unshuffled),
a built-in codec without a dictionary; any other, and any block whose stream is not a plain
coded or raw stream, is left to the general path, which names what is wrong.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from .._threads import scratch
from ..chunk.decode import ChunkReader
from ..chunk.layout import BSTART_LEN, CSIZE_LEN, ChunkKind

__all__ = ["PairPicker", "pair_picker"]

_I32 = struct.Struct("<i")

#: ``pick(j, i, count)``: items ``i`` .. ``i + count - 1`` (``count`` 1 or 2) of block ``j``
#: as ``8 * count`` bytes, or None
PairPicker = Callable[[int, int, int], bytes | None]


def pair_picker(reader: ChunkReader) -> PairPicker | None:
    """The picker of index chunk ``reader`` (its layout checked), or None when the chunk is
    not one it serves.

    >>> import numpy as np
    >>> from pyblosc2.frame.writer import encode_index
    >>> pick = pair_picker(ChunkReader.open(encode_index(np.arange(5000, dtype=np.int64) * 3)))
    >>> np.frombuffer(pick(1, 5, 2), "<i8").tolist(), np.frombuffer(pick(2, 903, 1), "<i8").tolist()
    ([6159, 6162], [14997])
    """
    h = reader.header
    g = reader.shuffle_group()
    codec = reader.codec
    if (
        reader.layout.kind != ChunkKind.BLOCKS
        or h.typesize != 8
        or g not in (0, 8)
        or codec is None
        or reader.dict_
        or h.blocksize % 8
        or h.nbytes % 8
        or any(h.nstreams(j) != 1 for j in {0, h.nblocks - 1})
    ):
        return None
    buf = reader.buf
    cbytes = h.cbytes
    bstarts = h.header_len
    data_start = bstarts + BSTART_LEN * h.nblocks
    block_size = h.block_size
    decode = codec.stream_decoder(None)
    unpack = _I32.unpack_from

    def pick(j: int, i: int, count: int) -> bytes | None:
        bsize = block_size(j)
        pos = unpack(buf, bstarts + BSTART_LEN * j)[0]
        if not data_start <= pos <= cbytes - CSIZE_LEN:
            return None
        csize = unpack(buf, pos)[0]
        start = pos + CSIZE_LEN
        stop = start + csize
        if csize <= 0 or stop > cbytes or not 0 <= i <= bsize // 8 - count:
            return None  # (a run, or out of place: the general path names it)
        src: memoryview | bytes | bytearray | None
        if csize == bsize:
            src = buf[start:stop]
        else:
            src = decode(buf[start:stop], scratch(bsize, "index-pick").data[:bsize])
            if src is None:
                return None
        if not g:
            return bytes(src[8 * i : 8 * (i + count)])
        q = bsize // 8  # plane k holds byte k of every item: item i is bytes i, i + q, ...
        one = bytes(src[i : i + 7 * q + 1 : q])
        return one if count == 1 else one + bytes(src[i + 1 : i + 7 * q + 2 : q])

    return pick
