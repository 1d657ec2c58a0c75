"""The ``b2nd`` metalayer: shape, chunk shape, block shape and dtype (frame-format.md §8.1).

C reads it positionally (the msgpack markers are skipped, not checked, except ``DB``), and for
16 dimensions C writes ``0x90 + 16 = 0xA0``, which generic msgpack misreads: so this layout is
parsed and written by position, with the fixed widths C uses (shape int64, chunk/block int32,
dtype str32) that keep its length independent of the values (resizes update it in place).

A dtype holding Python objects (``|O``, an ``O`` field of a structured dtype, nested or in a
subarray) is refused when the metalayer is parsed, on every route that opens an array: the
items are raw bytes, which numpy would have to take as object pointers (python-blosc2 opens
such a file and crashes reading it).
"""

from __future__ import annotations

import ast
import functools
import struct
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError

__all__ = ["MAX_DIM", "B2NDMeta", "dtype_from_str", "dtype_to_str"]

#: the most dimensions a b2nd array has (B2ND_MAX_DIM)
MAX_DIM = 16
VERSION = 0


def _err(field: str, offset: int | None, expected: object, got: object) -> FormatError:
    return FormatError("b2nd metalayer", field, offset, expected, got)


def dtype_to_str(dtype: np.dtype) -> str:
    """The dtype string python-blosc2 stores (§8.2)."""
    return str(dtype) if dtype.kind == "V" else dtype.str


def dtype_from_str(s: str) -> np.dtype:
    """Parse a stored dtype string (never ``eval``)."""
    try:
        return np.dtype(s)
    except (TypeError, ValueError):  # e.g. a subarray dtype, stored as "('<f8', (3,))"
        pass
    try:
        return np.dtype(ast.literal_eval(s))
    except (ValueError, TypeError, SyntaxError) as exc:
        raise _err("dtype", None, "a NumPy dtype string", f"{s!r} ({exc})") from None


@functools.cache
def _parts(nd: int) -> struct.Struct:
    """The shape, chunks and blocks arrays of an ``nd``-dimensional metalayer after its
    4-byte head, markers skipped: ``nd`` int64 (marker 0xd3), an array marker, ``nd`` int32
    (0xd2), a marker, ``nd`` int32."""
    return struct.Struct(">" + "xq" * nd + "x" + "xi" * nd + "x" + "xi" * nd)


@dataclass(frozen=True, slots=True)
class B2NDMeta:
    """The parsed metalayer.

    >>> m = B2NDMeta((5, 7), (3, 4), (2, 3), np.dtype("<i2"))
    >>> B2NDMeta.from_bytes(m.to_bytes(), typesize=2) == m
    True
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def to_bytes(self) -> bytes:
        nd = self.ndim
        parts = [bytes([0x97, VERSION, nd, 0x90 + nd])]
        parts += [struct.pack(">Bq", 0xD3, v) for v in self.shape]
        parts.append(bytes([0x90 + nd]))
        parts += [struct.pack(">Bi", 0xD2, v) for v in self.chunks]
        parts.append(bytes([0x90 + nd]))
        parts += [struct.pack(">Bi", 0xD2, v) for v in self.blocks]
        dt = dtype_to_str(self.dtype).encode()
        parts.append(struct.pack(">BBI", 0, 0xDB, len(dt)) + dt)
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, buf: bytes, typesize: int) -> B2NDMeta:
        """Parse positionally (``typesize`` gives the legacy dtype ``S<typesize>``)."""
        n = len(buf)
        if n < 3:
            raise _err("length", 0, "at least 3 bytes", n)
        nd = buf[2]
        if nd > MAX_DIM:
            raise _err("ndim", 2, f"at most {MAX_DIM}", nd)
        need = 3 + 1 + 9 * nd + 1 + 5 * nd + 1 + 5 * nd
        if n < need:
            raise _err("length", 0, f"at least {need} bytes for ndim {nd}", n)
        values = _parts(nd).unpack_from(buf, 4)
        shape, chunks, blocks = values[:nd], values[nd : 2 * nd], values[2 * nd :]
        pos = 4 + 9 * nd + 1 + 5 * nd + 1 + 5 * nd
        if pos == n:  # legacy caterva: no dtype
            dtype = np.dtype(f"S{typesize}")
        else:
            if pos + 6 > n or buf[pos + 1] != 0xDB:
                raise _err("dtype marker", pos + 1, "0xdb (str32)", "missing")
            if buf[pos] != 0:
                raise NotImplementedError(f"b2nd dtype format {buf[pos]} (only NumPy dtypes)")
            (ln,) = struct.unpack_from(">I", buf, pos + 2)
            if pos + 6 + ln > n:
                raise _err("dtype length", pos + 2, f"at most {n - pos - 6}", ln)
            dtype = dtype_from_str(buf[pos + 6 : pos + 6 + ln].decode("utf-8", "replace"))
            if dtype.hasobject:  # stored bytes read as object pointers: refused (§8.2)
                raise _err(
                    "dtype",
                    pos + 6,
                    "a dtype of plain bytes (no Python objects, in no field or subarray)",
                    repr(dtype_to_str(dtype)),
                )
        for i in range(nd):
            if shape[i] < 0 or chunks[i] < 0 or blocks[i] < 0:
                raise _err(
                    f"shape/chunks/blocks[{i}]", None, ">= 0", (shape[i], chunks[i], blocks[i])
                )
            if shape[i] and (chunks[i] == 0 or blocks[i] == 0 or blocks[i] > chunks[i]):
                raise _err(
                    f"chunks/blocks[{i}]",
                    None,
                    "0 < blocks <= chunks for a non-empty dimension",
                    (chunks[i], blocks[i]),
                )
        return cls(shape, chunks, blocks, dtype)
