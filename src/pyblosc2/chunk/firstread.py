"""A byte range inside one block of a chunk read for the first time, with no reader set up
(spec §6.2-6.3, §9.1, §15).

A one-item read of a chunk not read before (``s[i]`` over many chunks) used to build a whole
:class:`~.decode.ChunkReader` first: the layout of every block, the filter pipeline and codec
bound, every stream header of every block checked. :func:`read_in_block` reads only what the
range needs out of the chunk's bytes, checking each field where it is first used: the block
start of the one block (within the data area), that block's stream headers (each within
``cbytes``, run tokens valid), then its streams decoded (each to exactly its size).

It serves the common chunks (regular blocks, a built-in codec, no dictionary, a pipeline of at
most one SHUFFLE; memcpyed chunks, such as the index of a frame of a few thousand chunks) and
returns None for everything else, and for anything that fails a check: the caller then reads
the chunk through the full reader, which names what is wrong.
"""

from __future__ import annotations

import struct

import numpy as np

from .._threads import scratch
from ..codecs.registry import UDCODEC_FORMAT, codec_for_format
from ..constants import EXTENDED_HEADER_LENGTH, Filter
from ..errors import CodecError
from .header import (
    COMPFORMAT_SHIFT,
    DONT_SPLIT,
    MEMCPYED,
    P_BLOCKSIZE,
    P_BLOSC2_FLAGS,
    P_CBYTES,
    P_FILTERS,
    P_FILTERS_META,
    P_FLAGS,
    P_NBYTES,
    P_TYPESIZE,
    peek,
)
from .layout import BSTART_LEN, CSIZE_LEN
from .streams import MAX_RUN

__all__ = ["read_in_block"]

_I32 = struct.Struct("<i")
_PLAIN = (0, 0, 0, 0, 0, 0)  # no filter in any slot
_SHUFFLE_LAST = (0, 0, 0, 0, 0, int(Filter.SHUFFLE))  # C's default pipeline
_HL = EXTENDED_HEADER_LENGTH
#: the built-in decoders by compformat (plug-ins, format 6, are left to the full reader)
_DECODERS = {f: c for f in range(8) if f != UDCODEC_FORMAT and (c := codec_for_format(f, -1))}


def read_in_block(
    data: bytes | memoryview, lo: int, hi: int, out: np.ndarray | None = None
) -> np.ndarray | None:
    """Bytes ``[lo, hi)`` of the chunk at the start of ``data``, into ``out`` when given, when
    they lie in one block of a chunk this path serves; else None (the full reader serves it,
    and names what is wrong).

    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> c = encode_chunk(np.arange(4096, dtype=np.int32).data.cast("B"), EncodeSpec(4, 5, 1,
    ...     blocksize=4096))
    >>> read_in_block(c, 4100, 4108).view(np.int32).tolist()
    [1025, 1026]
    """
    f = peek(data)
    if f is None or f[P_BLOSC2_FLAGS]:
        return None  # a dictionary, lazy, big-endian or instrumented chunk
    flags, typesize, nbytes, cbytes = f[P_FLAGS], f[P_TYPESIZE], f[P_NBYTES], f[P_CBYTES]
    if not 0 <= lo < hi <= nbytes or len(data) < cbytes:
        return None
    bs = min(f[P_BLOCKSIZE], nbytes)  # (block_geometry's rule: clamped to nbytes)
    j = lo // bs
    if (hi - 1) // bs != j:
        return None
    if flags & MEMCPYED:  # the data verbatim after the header, no filter undone (spec §5)
        if cbytes != nbytes + _HL:
            return None
        return _deliver(bytes(memoryview(data)[_HL + lo : _HL + hi]), out)
    filters = f[P_FILTERS]
    if filters == _SHUFFLE_LAST:  # (the common pipelines first: no tuple walk)
        g = f[P_FILTERS_META][-1] or typesize
    elif filters == _PLAIN:
        g = 0
    else:
        k = [i for i, fid in enumerate(filters) if fid]
        if len(k) != 1 or filters[k[0]] != Filter.SHUFFLE:
            return None
        g = f[P_FILTERS_META][k[0]] or typesize
    codec = _DECODERS.get(flags >> COMPFORMAT_SHIFT)  # (plug-ins are not served)
    if codec is None:
        return None
    nblocks = -(-nbytes // bs)
    leftover = nbytes % bs
    last = leftover and j == nblocks - 1
    bsize = leftover if last else bs
    nst = 1 if last or flags & DONT_SPLIT else typesize
    ne = bsize // nst
    data_start = _HL + BSTART_LEN * nblocks
    if ne == 0 or ne * nst != bsize or data_start > cbytes:
        return None
    unpack = _I32.unpack_from
    pos = unpack(data, _HL + BSTART_LEN * j)[0]
    if not data_start <= pos < cbytes:
        return None
    a, b = lo - j * bs, hi - j * bs
    if g > 1 and nst == g:  # one stream per byte plane: byte s of an item is in plane s
        i0, i1 = a // g, -(-b // g)
        s0, s1 = 0, nst
    elif g > 1 and nst == 1 and bsize % g == 0:  # one stream of shuffled items
        i0, i1 = a // g, -(-b // g)
        s0, s1 = 0, 1
    elif g <= 1:  # unshuffled: the streams covering [a, b), ``ne`` bytes of the block each
        i0 = i1 = 0
        s0, s1 = a // ne, (b - 1) // ne + 1
    else:
        return None
    w = i1 - i0
    # the common one-item reads make their few bytes with bytes operations (``res``); a
    # numpy call costs more than the rest of such a read on a cold path (a fresh open)
    part = bytearray(w * g) if nst > 1 and g > 1 else None  # items i0..i1, item-major
    res: bytes | bytearray | None = None
    dst = None
    buf = scratch(ne, "first-stream").data
    view = memoryview(data)
    decode = codec.decompress_into
    for s in range(s1):  # each stream header checked where it is read, as the walk does
        start = pos + CSIZE_LEN
        if start > cbytes:
            return None
        csize = unpack(data, pos)[0]
        if csize > 0:
            pos = start + csize
        elif csize == 0:
            pos = start
        elif csize < -MAX_RUN or start >= cbytes or not data[start] & 1:
            return None
        else:
            pos = start + 1
        if pos > cbytes:
            return None
        if s < s0:
            continue
        if csize == ne:  # stored raw
            src = view[start:pos]
        elif csize > 0:
            try:
                decode(view[start:pos], buf)
            except CodecError:
                return None
            src = buf
        else:
            src = None  # a run: every byte is ``-csize & 0xFF``
        if part is not None:  # the parts of the planes the items need
            if src is None:
                if w == 1:
                    part[s] = -csize & 0xFF
                else:
                    part[s::g] = bytes((-csize & 0xFF,)) * w
            elif w == 1:
                part[s] = src[i0]
            else:
                part[s::g] = src[i0:i1]
        elif g > 1:  # the items' bytes out of the one stream's planes
            if src is None:
                res = bytes((-csize & 0xFF,)) * (b - a)
            elif w == 1:  # one item: its g bytes, one per plane, by one strided slice
                q = ne // g
                res = bytes(src[i0 : i0 + (g - 1) * q + 1 : q])[a - i0 * g : b - i0 * g]
            else:
                planes = np.frombuffer(src, np.uint8).reshape(g, ne // g)[:, i0:i1]
                items = scratch(w * g, "first-items")
                items.reshape(w, g)[...] = planes.T
                dst = np.empty(b - a, np.uint8) if out is None else out[: b - a]
                dst[...] = items[a - i0 * g : b - i0 * g]
        else:
            if dst is None:
                dst = np.empty(b - a, np.uint8) if out is None else out[: b - a]
            p0, p1 = max(a, s * ne), min(b, (s + 1) * ne)
            piece = dst[p0 - a : p1 - a]
            if src is None:
                piece[...] = -csize & 0xFF
            else:
                piece[...] = np.frombuffer(src, np.uint8, p1 - p0, p0 - s * ne)
    if part is not None:
        res = part[a - i0 * g : b - i0 * g]
    return dst if res is None else _deliver(res, out)


def _deliver(res: bytes | bytearray, out: np.ndarray | None) -> np.ndarray:
    """``res`` as the result: in ``out`` when given, else as a writable array (as the
    reader's are)."""
    if out is None:
        return np.frombuffer(res if type(res) is bytearray else bytearray(res), np.uint8)
    got = out[: len(res)]
    got[...] = np.frombuffer(res, np.uint8)
    return got
