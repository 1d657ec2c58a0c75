"""NDArray: a typed N-d array stored in a super-chunk with the ``b2nd`` metalayer
(frame-format.md §8.3-§8.5).

A chunk's decompressed buffer is its blocks in C order over the block grid, each block a
C-contiguous ``blocks``-shaped array; chunks are padded to whole blocks and the array to whole
chunks (padding is written as zeros). Reads decode only the chunks a selection intersects;
writes recompress only the chunks they touch.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass, replace
from typing import Any

import numpy as np

from ..chunk.special import make_special_chunk
from ..constants import SpecialValue
from ..errors import FormatError, ParamError
from ..params import is_int
from ..schunk import Meta, SChunk, VLMeta
from .b2nd_meta import B2NDMeta
from .blocklayout import block_grid, buffer_to_chunk, chunk_to_buffer
from .fancy import getitem, is_basic_key, setitem
from .indexing import normalize_key, selection_box
from .members import NDArrayMembers
from .operators import NDArrayOperators
from .reader import read_box, read_point, read_selection

__all__ = [
    "ChunkInfoNDArray",
    "NDArray",
    "ShapeLike",
    "asarray",
    "copy",
    "empty",
    "full",
    "ndarray_from_cframe",
    "ones",
    "open",
    "zeros",
]

#: A shape argument: an int (one dimension) or a sequence of ints (numpy integers accepted).
ShapeLike = int | Sequence[int]


@dataclass(frozen=True, slots=True)
class ChunkInfoNDArray:
    """What :meth:`NDArray.iterchunks_info` yields (python-blosc2's field order)."""

    nchunk: int
    coords: tuple[int, ...]
    cratio: float
    special: SpecialValue
    repeated_value: bytes | None
    lazychunk: bool


class NDArray(NDArrayMembers, NDArrayOperators):
    """An N-d array in a super-chunk.

    >>> a = asarray(np.arange(35, dtype=np.int16).reshape(5, 7), chunks=(3, 4), blocks=(2, 3))
    >>> a[1:4, 2:6]
    array([[ 9, 10, 11, 12],
           [16, 17, 18, 19],
           [23, 24, 25, 26]], dtype=int16)
    """

    def __init__(
        self, schunk: SChunk, meta: B2NDMeta | None = None, *, _validate: bool = True
    ) -> None:
        if meta is None:
            raw = dict(schunk.header.metalayers).get("b2nd")
            if raw is None:
                raise FormatError("frame", "metalayers", None, "a 'b2nd' metalayer", "none")
            meta = B2NDMeta.from_bytes(raw, schunk.typesize)
        self.schunk = schunk
        self._meta = meta
        t = meta.dtype.itemsize
        self._ext = tuple(
            -(-c // b) * b if b else 0 for c, b in zip(meta.chunks, meta.blocks, strict=True)
        )
        self._grid = tuple(
            -(-s // c) if c else 0 for s, c in zip(meta.shape, meta.chunks, strict=True)
        )
        expected = math.prod(self._grid) if meta.shape else 1
        if _validate and all(meta.shape) and schunk.nchunks != expected:
            raise FormatError(
                "b2nd array", "nchunks", None, f"{expected} (from the shape)", schunk.nchunks
            )
        if schunk.nchunks and schunk.chunksize != math.prod(self._ext) * t:
            raise FormatError(
                "b2nd array",
                "chunksize",
                58,
                f"{math.prod(self._ext) * t} (padded chunk * itemsize)",
                schunk.chunksize,
            )

    # -- properties -----------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the array.

        >>> a = zeros((100, 30), np.int16, chunks=(50, 30), blocks=(10, 30))
        >>> a.shape, a.chunks, a.blocks, a.ndim, a.size, a.nbytes
        ((100, 30), (50, 30), (10, 30), 2, 3000, 6000)
        """
        return self._meta.shape

    @property
    def chunks(self) -> tuple[int, ...]:
        """The shape of a chunk (the unit of compression and of the chunk grid)."""
        return self._meta.chunks

    @property
    def blocks(self) -> tuple[int, ...]:
        """The shape of a block inside a chunk (the unit of partial decoding)."""
        return self._meta.blocks

    @property
    def dtype(self) -> np.dtype:
        """The numpy data type of the items.

        >>> asarray(np.arange(3, dtype=">u2")).dtype
        dtype('>u2')
        """
        return self._meta.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar array)."""
        return len(self._meta.shape)

    @property
    def size(self) -> int:
        """The number of items."""
        return math.prod(self._meta.shape)

    @property
    def nbytes(self) -> int:
        """The size of the items in bytes, uncompressed (``size * dtype.itemsize``)."""
        return self.size * self.dtype.itemsize

    @property
    def cbytes(self) -> int:
        """The compressed size in bytes (the super-chunk's chunks, as python-blosc2 counts).

        >>> a = zeros((1000, 1000))
        >>> a.nbytes, a.cbytes < 1000, a.cratio > 1000
        (8000000, True, True)
        """
        return self.schunk.cbytes

    @property
    def cratio(self) -> float:
        """The compression ratio, ``nbytes / cbytes`` (infinite for an array of special
        chunks only)."""
        return self.nbytes / self.cbytes if self.cbytes else self.schunk.cratio

    @property
    def meta(self) -> Meta:
        """The fixed-length metalayers (mapping-like; ``"b2nd"`` holds the shape and dtype).

        >>> a = asarray(np.arange(4), meta={"units": "m"})
        >>> a.meta["units"], "b2nd" in a.meta
        ('m', True)
        """
        return self.schunk.meta

    @property
    def vlmeta(self) -> VLMeta:
        """The variable-length metalayers (a mutable mapping of msgpack-able values).

        >>> a = asarray(np.arange(4))
        >>> a.vlmeta["source"] = {"sensor": 7}
        >>> a.vlmeta["source"]
        {'sensor': 7}
        """
        return self.schunk.vlmeta

    @property
    def info(self) -> str:
        """A readable summary."""
        cp = self.schunk.cparams
        return (
            f"NDArray shape={self.shape} dtype={self.dtype} chunks={self.chunks} "
            f"blocks={self.blocks} nbytes={self.nbytes} cbytes={self.cbytes} "
            f"cratio={self.cratio:.2f} codec={cp.codec!r} clevel={cp.clevel} "
            f"filters={list(cp.filters)}"
        )

    def __repr__(self) -> str:
        return f"<NDArray shape={self.shape} dtype={self.dtype}>"

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    # -- chunk <-> array ------------------------------------------------------------------
    def _block_grid(self) -> tuple[int, ...]:
        return block_grid(self._ext, self.blocks)

    def _chunk_array(self, nchunk: int) -> np.ndarray:
        """Chunk ``nchunk`` as an ``extchunk``-shaped array."""
        raw = np.frombuffer(self.schunk.decompress_chunk(nchunk), self.dtype)
        return buffer_to_chunk(raw, self._ext, self.blocks)

    def _compress(self, arr: np.ndarray) -> bytes:
        return self.schunk.compress_data(chunk_to_buffer(arr, self.blocks))

    # -- boxes ----------------------------------------------------------------------------
    def _chunks_in(
        self, lo: tuple[int, ...], hi: tuple[int, ...]
    ) -> Iterator[tuple[tuple[int, ...], int]]:
        ranges = [range(a // c, -(-b // c)) for a, b, c in zip(lo, hi, self.chunks, strict=True)]
        for coords in itertools.product(*ranges):
            yield coords, int(np.ravel_multi_index(coords, self._grid)) if self.ndim else 0

    def _read_box(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> np.ndarray:
        return read_box(self, lo, hi)

    def _write_box(self, lo: tuple[int, ...], value: np.ndarray) -> None:
        hi = tuple(a + s for a, s in zip(lo, value.shape, strict=True))
        if not self.ndim:
            self.schunk.update_chunk(0, self._compress(value.reshape(())))
            return
        new: dict[int, bytes] = {}
        for coords, n in self._chunks_in(lo, hi):
            origin = [c * s for c, s in zip(coords, self.chunks, strict=True)]
            valid = [min(c, s - o) for c, s, o in zip(self.chunks, self.shape, origin, strict=True)]
            src, dst, full = [], [], True
            for a, b, o, v in zip(lo, hi, origin, valid, strict=True):
                s0, s1 = max(a, o), min(b, o + v)
                dst.append(slice(s0 - o, s1 - o))
                src.append(slice(s0 - a, s1 - a))
                full &= s0 == o and s1 == o + v
            arr = np.zeros(self._ext, self.dtype) if full else self._chunk_array(n).copy()
            arr[tuple(dst)] = value[tuple(src)]
            new[n] = self._compress(arr)
        if new:  # one commit, so a crash leaves all or none of the write
            self.schunk.set_chunks([new.get(k, k) for k in range(self.schunk.nchunks)])

    # -- indexing -------------------------------------------------------------------------
    def _normalize(self, key: Any) -> tuple[list[range], list[int]]:
        return normalize_key(key, self.shape)

    def __getitem__(self, key: Any) -> np.ndarray:
        if type(key) is tuple and len(key) == self.ndim and all(map(is_int, key)):
            point = read_point(self, key)  # one item: the short path
            if point is not None:
                return point
        if not is_basic_key(key):  # advanced keys: ndarray/fancy.py
            return getitem(self, key)
        ranges, squeeze = self._normalize(key)
        out = read_selection(self, ranges)
        # integer keys drop their axes; the Ellipsis keeps a 0-d array (not a scalar), as
        # python-blosc2 returns, and a subarray dtype's trailing axes
        picks = (*(0 if d in squeeze else slice(None) for d in range(len(ranges))), Ellipsis)
        return out[picks]

    def __setitem__(self, key: Any, value: Any) -> None:
        if not is_basic_key(key):  # advanced keys: ndarray/fancy.py
            setitem(self, key, value)
            return
        ranges, squeeze = self._normalize(key)
        lo, hi, local = selection_box(ranges)
        shape = tuple(len(r) for r in ranges)
        visible = tuple(n for d, n in enumerate(shape) if d not in squeeze)
        try:
            val = np.broadcast_to(np.asarray(value, dtype=self.dtype), visible).reshape(shape)
        except (OverflowError, TypeError, ValueError) as exc:
            raise ParamError(
                f"value cannot be stored as {self.dtype} in a selection of shape {visible}: {exc}"
            ) from None
        if val.size == 0:
            return
        if all(r.step == 1 for r in ranges):
            self._write_box(lo, np.ascontiguousarray(val))
            return
        box = self._read_box(lo, hi)  # steps: read-modify-write the bounding box
        box[local] = val
        self._write_box(lo, box)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[...]
        return out if dtype is None else out.astype(dtype)

    # -- whole array ----------------------------------------------------------------------
    def to_cframe(self) -> bytes:
        """The array as an in-memory contiguous frame (see :func:`ndarray_from_cframe`)."""
        return self.schunk.to_cframe()

    def copy(
        self, chunks: ShapeLike | None = None, blocks: ShapeLike | None = None, **kwargs: Any
    ) -> NDArray:
        """A copy with new storage, partition or ``cparams`` (the current ones by default)."""
        return copy(self, chunks, blocks, **kwargs)

    def save(self, urlpath: Any, contiguous: bool = True, **kwargs: Any) -> None:
        """Write a copy to ``urlpath`` (a ``.b2nd`` file, or a directory when not
        ``contiguous``); ``kwargs`` as for :meth:`copy` (``mode="w"`` overwrites).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "a.b2nd")
        >>> asarray(np.arange(5)).save(path)
        >>> asarray(np.arange(3)).save(path, mode="w")
        >>> open(path)[1:3]
        array([1, 2])
        """
        copy(self, urlpath=urlpath, contiguous=contiguous, **kwargs)

    def iterchunks_info(self) -> Iterator[ChunkInfoNDArray]:
        """A :class:`ChunkInfoNDArray` per chunk: the SChunk's chunk info plus the chunk's
        coordinates in the chunk grid (reads chunk headers only).

        >>> a = zeros((4,), chunks=(2,), blocks=(2,))
        >>> [(i.coords, i.special.name) for i in a.iterchunks_info()]
        [((0,), 'ZERO'), ((1,), 'ZERO')]
        """
        grid = self._grid if self.ndim else ()
        for info in self.schunk.iterchunks_info():
            coords = tuple(int(c) for c in np.unravel_index(info.nchunk, grid)) if grid else ()
            yield ChunkInfoNDArray(info.nchunk, coords, *astuple(info)[1:])

    def resize(self, newshape: tuple[int, ...]) -> None:
        """Change the shape (same number of dimensions); new items are zero.

        The ``b2nd`` metalayer is updated in place (its length does not depend on the shape)
        and the chunk grid is rebuilt: kept chunks are reused, edge chunks whose valid extent
        changes are rewritten with their data beyond the valid part zeroed, new chunks are
        special zero chunks.
        """
        newshape = tuple(int(n) for n in newshape)
        if len(newshape) != self.ndim or any(n < 0 for n in newshape):
            raise ParamError(f"newshape must have {self.ndim} non-negative entries, got {newshape}")
        if all(newshape) and not all(self.chunks):
            raise ParamError(f"an array with chunks {self.chunks} cannot grow to {newshape}")
        old_shape, old_grid = self.shape, self._grid
        grid = tuple(-(-n // c) for n, c in zip(newshape, self.chunks, strict=True))
        zero = make_special_chunk(
            SpecialValue.ZERO,
            math.prod(self._ext) * self.dtype.itemsize,
            self.schunk.typesize,
            blocksize=self.schunk.cparams.blocksize,
        )
        refs: list[int | bytes] = []
        for coords in itertools.product(*[range(g) for g in grid]):
            if not all(c < g for c, g in zip(coords, old_grid, strict=True)):
                refs.append(zero)
                continue
            n = int(np.ravel_multi_index(coords, old_grid))
            origin = [c * k for c, k in zip(coords, self.chunks, strict=True)]
            keep = [
                min(k, o_s - o, n_s - o)
                for k, o_s, n_s, o in zip(self.chunks, old_shape, newshape, origin, strict=True)
            ]
            if all(kp == k for kp, k in zip(keep, self.chunks, strict=True)):
                refs.append(n)
                continue
            arr = np.zeros(self._ext, self.dtype)
            region = tuple(slice(0, kp) for kp in keep)
            arr[region] = self._chunk_array(n)[region]
            refs.append(self._compress(arr))
        meta = replace(self._meta, shape=newshape)
        self.schunk.set_chunks(refs, meta={"b2nd": meta.to_bytes()})
        self._meta = meta
        self._grid = grid


# The constructors live in their own module; they are re-exported here because NDArray's
# methods (copy, save) and doctests use them. Imported last: constructors imports NDArray.
from .constructors import (  # noqa: E402
    asarray,
    copy,
    empty,
    full,
    ndarray_from_cframe,
    ones,
    open,
    zeros,
)
