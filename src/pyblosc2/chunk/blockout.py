"""The output of a chunk's compressed blocks (spec §7 step 5): each stream as its csize and
payload, or a run marker, and the block starts, under the serial writer's output budget.

C-Blosc2 writes the blocks in order into a destination of ``nbytes + header`` bytes: a stream
that would not fit is compressed again with the room left (or the chunk is stored as a
memcpy). The threads that compressed a run of blocks lay their streams out as if the budget
never binds (:func:`lay_out_run`); :func:`fast_layout` keeps that layout when no stream could
have met the budget, and :func:`budgeted_layout` walks the streams in order otherwise.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from itertools import accumulate
from typing import NamedTuple

import numpy as np

from .layout import CSIZE_LEN

__all__ = ["Run", "Stream", "budgeted_layout", "fast_layout", "lay_out_run"]

_I32 = struct.Struct("<i")
_ZERO_RUN = b"\x00\x00\x00\x00"


class Stream(NamedTuple):
    """One compressed stream, waiting for the layout. The filtered bytes are not kept (only
    raw streams carry them, as their payload) so that peak memory stays near the output size.
    (A named tuple: one is made per stream, ~1,000 per 4 MiB chunk.)"""

    kind: str  # "zero", "run", "codec", "raw"
    neblock: int
    payload: bytes = b""
    value: int = 0


class Run(NamedTuple):
    """A thread's run of compressed blocks, laid out as if the output budget never binds."""

    blocks: list[list[Stream]]
    sizes: list[int]  # bytes of each block's streams (csize fields included)
    pieces: list[bytes]  # the streams in order: csize + payload, or a run marker
    zero: bool  # every stream a run of zeros


def lay_out_run(blocks: list[list[Stream]]) -> Run:
    """``blocks`` with their stream bytes (§6.3: csize then payload; a run: minus the byte
    value, then that byte, §7 step 5.2), made by the thread that compressed them.

    >>> r = lay_out_run([[Stream("zero", 8), Stream("run", 8, value=7)],
    ...                  [Stream("codec", 8, b"xyz")]])
    >>> r.sizes, b"".join(r.pieces).hex(), r.zero
    ([9, 7], '00000000f9ffffff010300000078797a', False)
    """
    sizes = []
    pieces: list[bytes] = []
    zero = True
    for streams in blocks:
        n = 0
        for st in streams:
            kind = st.kind
            if kind == "zero":
                pieces.append(_ZERO_RUN)
                n += CSIZE_LEN
            elif kind == "run":
                pieces.append(_I32.pack(-st.value) + b"\x01")
                n += CSIZE_LEN + 1
                zero = False
            else:
                pieces.append(_I32.pack(len(st.payload)))
                pieces.append(st.payload)
                n += CSIZE_LEN + len(st.payload)
                zero = False
        sizes.append(n)
    return Run(blocks, sizes, pieces, zero)


class Layout(NamedTuple):
    """The laid-out blocks: their starts, the stream bytes in order, the chunk's size, and
    whether every stream was a run of zeros."""

    bstarts: np.ndarray
    pieces: list[bytes]
    cbytes: int
    all_zero: bool


def fast_layout(parts: list[Run], first_block: int, blocksize: int, destsize: int) -> Layout | None:
    """The layout of the threads' ``parts`` (blocks from byte ``first_block`` on), or None
    when some stream may have met the budget of ``destsize`` bytes: each stream saw at
    least one block (``blocksize``) of room when the whole chunk leaves that much.

    >>> p = lay_out_run([[Stream("codec", 8, b"xyz")], [Stream("zero", 8)]])
    >>> lay = fast_layout([p], 40, 16, 80)
    >>> lay.bstarts.tolist(), lay.cbytes, fast_layout([p], 40, 16, 50)
    ([40, 47], 51, None)
    """
    sizes = [n for part in parts for n in part.sizes]
    starts = list(accumulate(sizes[:-1], initial=first_block)) if sizes else []
    cbytes = starts[-1] + sizes[-1] if sizes else first_block
    if cbytes + blocksize > destsize:
        return None
    bstarts = np.array(starts, "<i4")
    pieces = [p for part in parts for p in part.pieces]
    return Layout(bstarts, pieces, cbytes, all(part.zero for part in parts))


def budgeted_layout(
    blocks: list[list[Stream]],
    first_block: int,
    destsize: int,
    recompress: Callable[[int, int, int], bytes],
) -> Layout | None:
    """The serial layout of C-Blosc2 (§7 step 5): the output budget of ``destsize`` bytes
    shrinks as bytes are written; a codec stream that no longer fits whole is compressed
    again by ``recompress(block, stream, maxout)`` (the payload, or the raw stream when that
    does not fit either). None: the chunk does not fit (stored as a memcpy instead)."""
    ntbytes = first_block
    bstarts = np.empty(len(blocks), dtype="<i4")
    pieces: list[bytes] = []
    all_zero = True
    for j, streams in enumerate(blocks):
        bstarts[j] = ntbytes
        for k, st in enumerate(streams):
            ntbytes += CSIZE_LEN
            neblock = st.neblock
            if st.kind in ("zero", "run"):
                if ntbytes > destsize:
                    return None
                if st.kind == "zero":
                    pieces.append(_ZERO_RUN)
                    continue
                all_zero = False
                ntbytes += 1
                if ntbytes > destsize:
                    return None
                pieces.append(_I32.pack(-st.value) + b"\x01")
                continue
            all_zero = False
            maxout = neblock
            if ntbytes + maxout > destsize:
                maxout = destsize - ntbytes
                if maxout <= 0:
                    return None
            payload = st.payload
            if maxout < neblock and st.kind == "codec":
                # The parallel pass compressed with a full budget: redo it as C would
                # (only near the end of an almost incompressible chunk).
                payload = recompress(j, k, maxout)
            if len(payload) == neblock and ntbytes + neblock > destsize:  # raw does not fit
                return None
            pieces.append(_I32.pack(len(payload)))
            pieces.append(payload)
            ntbytes += len(payload)
    return Layout(bstarts, pieces, ntbytes, all_zero)
