"""Inputs seen as arrays read in row slabs (along axis 0), in order: every reader here works
on a stream, so nothing is read whole into memory.

:class:`ArraySource` is what the writers in :mod:`.codec_io` consume: ``shape``, ``dtype``,
the preferred ``chunks`` (None when the input has none) and ``rows(r0, r1)``, called with
increasing, adjacent ranges; ``iter_bytes()`` yields the C-order bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

import pyblosc2

from ..errors import ParamError

__all__ = [
    "ArraySource",
    "FrameArray",
    "StreamArray",
    "Tracked",
    "default_dtype",
    "read_exactly",
    "read_npy_header",
]

SLAB_BYTES = 4 << 20  # rows read at a time when the input has no chunks of its own


def default_dtype(typesize: int) -> np.dtype:
    """The dtype raw items of ``typesize`` bytes are shown as (unsigned ints, else void).

    >>> default_dtype(4), default_dtype(3)
    (dtype('uint32'), dtype('V3'))
    """
    return np.dtype(f"u{typesize}") if typesize in (1, 2, 4, 8) else np.dtype(f"V{typesize}")


def read_exactly(f: IO[bytes], n: int, what: str) -> bytes:
    """``n`` bytes from ``f`` (several reads on pipes); EOFError naming the shortfall."""
    parts, got = [], 0
    while got < n:
        piece = f.read(n - got)
        if not piece:
            raise EOFError(f"{what}: expected {n} bytes, got {got} (input ends early)")
        parts.append(piece)
        got += len(piece)
    return b"".join(parts)


def read_npy_header(f: IO[bytes]) -> tuple[tuple[int, ...], np.dtype, bool]:
    """(shape, dtype, fortran_order) of the ``.npy`` stream ``f``, left at its data."""
    fmt = np.lib.format
    version = fmt.read_magic(f)
    reader = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, fortran, dtype = reader(f)
    if dtype.hasobject:
        raise ParamError(".npy holds Python objects, which Blosc2 files cannot store")
    return tuple(shape), np.dtype(dtype), bool(fortran)


class ArraySource:
    """Base class: an input seen as a C-order array."""

    shape: tuple[int, ...] = ()
    dtype: np.dtype = np.dtype("u1")
    chunks: tuple[int, ...] | None = None

    def rows(self, r0: int, r1: int) -> np.ndarray:
        raise NotImplementedError

    @property
    def nbytes(self) -> int | None:
        """The bytes the source will give (None when unknown, e.g. a pipe)."""
        return math.prod(self.shape) * self.dtype.itemsize

    def slab_rows(self) -> int:
        """Rows per read: the input's own chunk height, else about ``SLAB_BYTES``."""
        if self.chunks:
            return max(self.chunks[0], 1)
        row = math.prod(self.shape[1:]) * self.dtype.itemsize
        return max(1, SLAB_BYTES // max(row, 1))

    def iter_bytes(self) -> Iterator[bytes]:
        if not self.shape:
            yield self.rows(0, 1).tobytes()
            return
        step = self.slab_rows()
        for r0 in range(0, self.shape[0], step):
            yield np.ascontiguousarray(self.rows(r0, min(r0 + step, self.shape[0]))).tobytes()


class Tracked(ArraySource):
    """``src`` reporting the bytes read from it to a progress bar (``bar.update(n)``)."""

    def __init__(self, src: ArraySource, bar: Any) -> None:
        self.src, self.bar = src, bar
        self.shape, self.dtype, self.chunks = src.shape, src.dtype, src.chunks

    @property
    def nbytes(self) -> int | None:
        """The bytes the source will give (None when unknown, e.g. a pipe)."""
        return self.src.nbytes

    def rows(self, r0: int, r1: int) -> np.ndarray:
        out = self.src.rows(r0, r1)
        self.bar.update(int(np.asarray(out).nbytes))
        return out

    def slab_rows(self) -> int:
        return self.src.slab_rows()

    def iter_bytes(self) -> Iterator[bytes]:
        for piece in self.src.iter_bytes():
            self.bar.update(len(piece))
            yield piece


class StreamArray(ArraySource):
    """C-order items from a stream (the data of a ``.npy`` file or raw bytes)."""

    def __init__(self, f: IO[bytes], shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.f, self.shape, self.dtype = f, shape, dtype
        self._row = math.prod(shape[1:]) * dtype.itemsize

    def rows(self, r0: int, r1: int) -> np.ndarray:
        if not self.shape:
            raw = read_exactly(self.f, self.dtype.itemsize, "array data")
            return np.frombuffer(raw, self.dtype).reshape(())
        raw = read_exactly(self.f, (r1 - r0) * self._row, f"array data rows {r0}..{r1 - 1}")
        return np.frombuffer(raw, self.dtype).reshape((r1 - r0, *self.shape[1:]))


class MappedArray(ArraySource):
    """Any array-like indexable by row slices (a memory-mapped Fortran-order ``.npy``)."""

    def __init__(self, arr: Any) -> None:
        self.arr, self.shape, self.dtype = arr, tuple(arr.shape), np.dtype(arr.dtype)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        return np.asarray(self.arr[()] if not self.shape else self.arr[r0:r1])


class FrameArray(ArraySource):
    """An NDArray, or an SChunk / single chunk seen as a 1-d array of ``dtype``."""

    def __init__(self, kind: str, obj: Any, dtype: np.dtype | None = None) -> None:
        self.kind, self.obj = kind, obj
        if kind == "ndarray":
            self.shape, self.dtype, self.chunks = tuple(obj.shape), obj.dtype, tuple(obj.chunks)
            return
        if kind == "chunk":
            header = pyblosc2.get_chunk_header(obj)
            nbytes, typesize = header.nbytes, header.typesize
        else:
            nbytes, typesize = obj.nbytes, obj.typesize
        self.dtype = np.dtype(dtype) if dtype is not None else default_dtype(typesize)
        if nbytes % self.dtype.itemsize:
            raise ParamError(f"{nbytes} bytes are not a whole number of {self.dtype} items")
        self.shape = (nbytes // self.dtype.itemsize,)
        self._typesize = typesize
        self._decoded: np.ndarray | None = None
        if kind == "schunk" and obj.chunksize % self.dtype.itemsize == 0:
            self.chunks = (max(obj.chunksize // self.dtype.itemsize, 1),)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        if self.kind == "ndarray":
            return np.asarray(self.obj[()] if not self.shape else self.obj[r0:r1])
        isz = self.dtype.itemsize
        if self.kind == "chunk":
            if self._decoded is None:  # a chunk decodes whole (at most 2 GB)
                data = pyblosc2.decompress2(self.obj)
                assert data is not None  # no dst: the bytes are returned
                self._decoded = np.frombuffer(data, self.dtype)
            return self._decoded[r0:r1]
        ts = self._typesize
        lo, hi = r0 * isz, r1 * isz
        raw = self.obj.get_slice(lo // ts, -(-hi // ts))
        return np.frombuffer(raw[lo % ts : lo % ts + hi - lo], self.dtype)

    def iter_bytes(self) -> Iterator[bytes]:
        if self.kind == "schunk":  # chunk by chunk, whatever the dtype
            for n in range(self.obj.nchunks):
                yield self.obj.decompress_chunk(n)
            return
        yield from super().iter_bytes()
