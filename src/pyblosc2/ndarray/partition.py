"""The automatic partition of an N-d array into chunks and blocks (pyblosc2's own rule; any
partition is valid b2nd, frame-format.md §8.4): chunks of about 4 MiB, blocks of about
64 KiB, both obtained by halving the leading dimensions first."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ..constants import MAX_BUFFERSIZE
from ..errors import ParamError
from ..params import is_int, parse_int, refuse
from .b2nd_meta import MAX_DIM

__all__ = [
    "BLOCK_TARGET",
    "CHUNK_TARGET",
    "MAX_NBYTES",
    "ChunkTooLargeError",
    "default_chunks_blocks",
    "parse_geometry",
    "parse_shape",
    "resolve_shape",
]

#: the most data a frame can describe (its nbytes field is an int64)
MAX_NBYTES = 2**63 - 1


class ChunkTooLargeError(ParamError, RuntimeError):
    """A chunk shape whose bytes exceed what one chunk can hold (``MAX_BUFFERSIZE``).

    A :class:`~pyblosc2.ParamError` like every bad argument; also a ``RuntimeError``, the
    class python-blosc2 raises for it, so code catching either works unchanged.
    """


def parse_shape(value: object, name: str, lo: int) -> tuple[int, ...]:
    """An int (one dimension) or a sequence of ints >= ``lo``, numpy integers accepted.

    >>> parse_shape(3, "shape", 0), parse_shape([2, 4], "chunks", 1)
    ((3,), (2, 4))
    """
    if is_int(value):
        value = (value,)
    if not isinstance(value, tuple | list):
        refuse(name, "an int or a sequence of ints", value, wrong_type=True)
    return tuple(parse_int(n, f"{name}[{i}]", lo) for i, n in enumerate(value))


BLOCK_TARGET = 1 << 16  # bytes per block: fits L2 with room for the codec's work
CHUNK_TARGET = 1 << 22  # bytes per chunk: a few MB, as python-blosc2 favours


def resolve_shape(size: int, shape: Any) -> tuple[int, ...]:
    """A new shape for ``size`` items (``shape``: an int or a sequence, one entry may be -1),
    as numpy's ``reshape`` takes it, without allocating anything.

    >>> resolve_shape(24, (6, -1)), resolve_shape(24, 24)
    ((6, 4), (24,))
    >>> resolve_shape(24, (5, 4))
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: cannot reshape array of size 24 into shape (5, 4)
    """
    dims: list[Any] = list(shape) if isinstance(shape, tuple | list) else [shape]
    if dims.count(-1) > 1:
        refuse("shape", "at most one -1 entry", shape)
    fixed = parse_shape([d for d in dims if not (is_int(d) and d == -1)], "shape", 0)
    known = math.prod(fixed)
    if -1 in dims:
        if not known or size % known:
            raise ParamError(f"cannot reshape array of size {size} into shape {tuple(dims)}")
        dims[dims.index(-1)] = size // known
    new = parse_shape(dims, "shape", 0)
    if math.prod(new) != size:  # numpy's words, which python-blosc2 passes on
        raise ParamError(f"cannot reshape array of size {size} into shape {new}")
    return new


def _fit(
    shape: tuple[int, ...], itemsize: int, target: int, upper: tuple[int, ...] | None = None
) -> tuple[int, ...]:
    """A shape within ``shape`` (and ``upper``) of about ``target`` bytes, shrinking the
    leading dimensions first so that the trailing ones stay contiguous."""
    out = [max(1, min(s, u)) for s, u in zip(shape, upper or shape, strict=True)]
    i = 0
    while math.prod(out) * itemsize > target and i < len(out):
        if out[i] > 1:
            out[i] = max(1, out[i] // 2)
        else:
            i += 1
    return tuple(out)


def default_chunks_blocks(
    shape: tuple[int, ...],
    itemsize: int,
    chunks: tuple[int, ...] | None,
    blocks: tuple[int, ...] | None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The automatic partition: chunks of ~4 MiB, blocks of ~64 KiB, both obtained by halving
    the leading dimensions first (so a block is a run of whole trailing rows where it can be).
    An explicit choice is honoured exactly."""
    if any(s == 0 for s in shape):
        z = chunks or tuple(s for s in shape)  # explicit chunks are kept: the array can grow
        if blocks is None and all(z):  # then blocks as for those chunks, as python-blosc2
            blocks = _fit(z, itemsize, BLOCK_TARGET, z)
        return z, tuple(0 if s == 0 else 1 for s in shape) if blocks is None else blocks
    if chunks is None:
        chunks = _fit(shape, itemsize, CHUNK_TARGET)
    if blocks is None:
        blocks = _fit(chunks, itemsize, BLOCK_TARGET, chunks)
    return tuple(int(c) for c in chunks), tuple(int(b) for b in blocks)


def parse_geometry(
    shape: Any, dtype: DTypeLike, chunks: Any, blocks: Any
) -> tuple[tuple[int, ...], np.dtype, tuple[int, ...], tuple[int, ...]]:
    """Shape, dtype and partition of a new array, checked (a ``ParamError`` names the bad
    argument) and completed with the automatic partition.

    >>> parse_geometry(10, "f8", None, None)
    ((10,), dtype('float64'), (10,), (10,))
    """
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        refuse("dtype", "a numpy dtype", dtype, wrong_type=True)
    if dtype.hasobject:
        refuse(
            "dtype",
            "a dtype without Python objects (Blosc2 stores raw bytes)",
            dtype,
            wrong_type=True,
        )
    shape = parse_shape(shape, "shape", 0)
    if len(shape) > MAX_DIM:
        refuse("shape", f"at most {MAX_DIM} dimensions", shape)
    if math.prod(shape) * dtype.itemsize > MAX_NBYTES:
        refuse("shape", f"at most {MAX_NBYTES} bytes of data (a frame's int64 nbytes)", shape)
    chunks, blocks = (
        None if c is None else parse_shape(c, name, 0)
        for c, name in ((chunks, "chunks"), (blocks, "blocks"))
    )
    chunks, blocks = default_chunks_blocks(shape, dtype.itemsize, chunks, blocks)
    for name, part in (("chunks", chunks), ("blocks", blocks)):
        if len(part) != len(shape):
            refuse(name, f"{len(shape)} entries (one per dimension)", part)
    if any(s and not c for s, c in zip(shape, chunks, strict=True)):
        refuse("chunks", f"no 0 entry where the shape is not zero (shape={shape})", chunks)
    for s, c, b in zip(shape, chunks, blocks, strict=True):
        if s and not 0 < b <= c:
            refuse("blocks", f"0 < blocks <= chunks (chunks={chunks})", blocks)
    if math.prod(chunks) * dtype.itemsize > MAX_BUFFERSIZE:
        raise ChunkTooLargeError(
            f"chunks must hold at most {MAX_BUFFERSIZE} bytes, got {chunks} of "
            f"{dtype.itemsize}-byte items ({math.prod(chunks) * dtype.itemsize} bytes)"
        )
    return shape, dtype, chunks, blocks
