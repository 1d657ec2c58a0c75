"""Decoding a byte range of a stored chunk while reading only the bytes it needs (spec §14,
§6.2; frame-format.md §4.5).

:func:`read_range` reads a chunk through ``fetch(pos, n)``: the header, then the block starts
(and dictionary size), then the dictionary and the byte spans of the blocks covering the range
(plus block 0 when DELTA is in the pipeline), one fetch per merged span. A block's span ends at
the next larger block start, or at ``cbytes``. The layout is parsed and checked by
:class:`~.layout.ChunkLayout`, the streams of the fetched blocks by
:class:`~.decode.ChunkReader`, exactly as for a chunk held in memory.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..constants import EXTENDED_HEADER_LENGTH
from ..errors import FormatError
from .decode import ChunkReader
from .header import OFF_CBYTES, ChunkHeader
from .layout import ChunkKind, ChunkLayout, merge_spans

__all__ = ["PARTIAL_READ_MIN", "FetchFn", "read_range"]

#: ``fetch(pos, n)``: bytes ``[pos, pos + n)`` of one stored chunk
FetchFn = Callable[[int, int], bytes | bytearray | memoryview]

#: chunks smaller than this many bytes are fetched whole, in one call
PARTIAL_READ_MIN = 1 << 18


def read_range(
    fetch: FetchFn,
    cbytes: int,
    lo: int,
    hi: int,
    nthreads: int = 1,
    *,
    min_partial: int = PARTIAL_READ_MIN,
) -> np.ndarray:
    """Bytes ``[lo, hi)`` (clipped to ``[0, nbytes)``) of the decoded chunk that
    ``fetch(pos, n)`` reads, as a new ``uint8`` array.

    ``cbytes`` is the size of the stored chunk, or an upper bound on it (e.g. the bytes left in
    a frame's data area): the header's ``cbytes`` must not exceed it and nothing past it is
    fetched. A chunk is fetched whole, in one call, when ``cbytes < min_partial``; after its
    header, also when its own ``cbytes`` is below ``min_partial`` or it is special, VL-block or
    empty. A memcpyed chunk fetches the header and then just the bytes of the range. Any other
    chunk fetches its header, its block starts (and dictionary size), then its dictionary and
    the spans of the blocks needed, merging adjacent spans into one fetch. Every fetch must
    return exactly the bytes asked for.

    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> data = np.arange(20_000, dtype=np.int32)
    >>> c = encode_chunk(data.data.cast("B"), EncodeSpec(4, 5, 1, blocksize=8192))
    >>> calls = []
    >>> def fetch(pos, n):
    ...     calls.append((pos, n)); return c[pos : pos + n]
    >>> read_range(fetch, len(c), 40_000, 40_008, min_partial=0).view(np.int32)
    array([10000, 10001], dtype=int32)
    >>> len(calls), sum(n for _, n in calls) < len(c) // 4
    (3, True)
    """
    if cbytes < 0:
        raise FormatError("chunk", "cbytes", None, "a size >= 0", cbytes)
    if cbytes < min_partial:
        whole = _fetch(fetch, 0, cbytes)
        return ChunkReader.open(whole).decode_range(lo, hi, nthreads)
    head = _fetch(fetch, 0, min(cbytes, EXTENDED_HEADER_LENGTH))
    h = ChunkHeader.from_bytes(head)
    if h.cbytes > cbytes:
        raise FormatError(
            "chunk header",
            "cbytes",
            OFF_CBYTES,
            f"at most {cbytes} (bytes the stored chunk may occupy)",
            h.cbytes,
        )
    buf = np.zeros(h.cbytes, np.uint8)  # pages never written cost nothing
    n = min(len(head), h.cbytes)
    buf[:n] = np.frombuffer(head, np.uint8, n)
    if h.cbytes < min_partial or h.special or h.vl_blocks or h.nbytes == 0:
        if h.cbytes > n:
            buf[n:] = np.frombuffer(_fetch(fetch, n, h.cbytes - n), np.uint8)
        return ChunkReader.open(buf.data).decode_range(lo, hi, nthreads)

    def read(pos: int, size: int) -> memoryview:
        # Only asked for bytes before h.cbytes, after the layout checked the sizes.
        buf[pos : pos + size] = np.frombuffer(_fetch(fetch, pos, size), np.uint8)
        return buf.data[pos : pos + size]

    layout = ChunkLayout.parse(h, read)
    lo, hi = max(0, lo), min(hi, h.nbytes)
    if hi <= lo:
        return np.empty(0, np.uint8)
    if layout.kind == ChunkKind.MEMCPYED:
        out = np.empty(hi - lo, np.uint8)
        out[:] = np.frombuffer(_fetch(fetch, h.header_len + lo, hi - lo), np.uint8)
        return out
    blocks = layout.needed_blocks(lo, hi)
    spans = layout.block_spans(blocks)
    if layout.dict_span is not None:
        spans = merge_spans([*spans, layout.dict_span])
    for a, b in spans:
        read(a, b - a)
    reader = ChunkReader.from_layout(layout, buf.data, blocks)
    return reader.decode_range(lo, hi, nthreads)


def _fetch(fetch: FetchFn, pos: int, n: int) -> bytes | bytearray | memoryview:
    """``fetch(pos, n)``, which must return exactly ``n`` bytes."""
    data = fetch(pos, n)
    got = memoryview(data).nbytes
    if got != n:
        raise FormatError("chunk", "data", pos, f"{n} bytes from storage", f"{got} (truncated)")
    return data
