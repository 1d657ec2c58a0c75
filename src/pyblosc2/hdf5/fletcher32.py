"""HDF5's Fletcher-32 checksum filter (id 3), which HDF5 itself implements (no plugin).

When a dataset has it after Blosc (PyTables' ``fletcher32=True``), each stored chunk is the
compressed bytes followed by a 4-byte little-endian checksum of them. HDF5 sums the bytes as
big-endian 16-bit words (an odd last byte is the high byte of a last word) with end-around
carries, so each of the two sums is 0 for all-zero data and otherwise the value in
``1..65535`` congruent to the true sum modulo 65535. Readers also accept the checksum with the
bytes of each 16-bit half swapped (what HDF5 1.6.2 and older wrote).
"""

from __future__ import annotations

import numpy as np

from ..errors import FormatError

__all__ = [
    "CHECKSUM_LEN",
    "FLETCHER32_FILTER_ID",
    "append_checksum",
    "fletcher32",
    "strip_checksum",
]

FLETCHER32_FILTER_ID = 3
CHECKSUM_LEN = 4
_M = 65535
#: words per partial sum: keeps every product and partial sum far inside int64
_PIECE = 1 << 20


def _fold(total: int, nonzero: bool) -> int:
    return (total - 1) % _M + 1 if nonzero else 0


def fletcher32(data: bytes | bytearray | memoryview | np.ndarray) -> int:
    """HDF5's ``H5_checksum_fletcher32`` of ``data``.

    >>> hex(fletcher32(b"abcde"))
    '0x4ff029c7'
    """
    raw = np.frombuffer(data, np.uint8)
    n = len(raw)
    if n % 2:
        raw = np.concatenate([raw, np.zeros(1, np.uint8)])
    words = raw.view(">u2").astype(np.int64)
    count = len(words)
    s1 = s2 = 0
    for lo in range(0, count, _PIECE):
        w = words[lo : lo + _PIECE]
        # word i is added into sum2 (count - i) times
        weights = (count - lo - np.arange(len(w), dtype=np.int64)) % _M
        s1 += int(w.sum())
        s2 += int(((w * weights) % _M).sum())
    nonzero = bool(s1)
    return (_fold(s2, nonzero) << 16) | _fold(s1, nonzero)


def _swapped(value: int) -> int:
    b = value.to_bytes(4, "little")
    return int.from_bytes(bytes([b[1], b[0], b[3], b[2]]), "little")


def append_checksum(data: bytes) -> bytes:
    """``data`` followed by its checksum, as the filter stores a chunk."""
    return data + fletcher32(data).to_bytes(CHECKSUM_LEN, "little")


def strip_checksum(stored: bytes | memoryview, where: str) -> memoryview:
    """The bytes before the checksum, after checking it (``FormatError`` naming ``where``)."""
    view = memoryview(stored)
    if len(view) < CHECKSUM_LEN:
        raise FormatError(where, "fletcher32 checksum", 0, f"{CHECKSUM_LEN} bytes", len(view))
    body = view[: len(view) - CHECKSUM_LEN]
    stored_sum = int.from_bytes(view[len(view) - CHECKSUM_LEN :], "little")
    got = fletcher32(body)
    if stored_sum not in (got, _swapped(got)):
        raise FormatError(where, "fletcher32 checksum", len(body), hex(got), hex(stored_sum))
    return body
