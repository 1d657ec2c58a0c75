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
from dataclasses import asdict, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._bytes import BufferLike
from ..chunk.special import make_special_chunk
from ..constants import SpecialValue, header_typesize
from ..errors import FormatError, ParamError
from ..meta import RawMetalayer
from ..params import CParams
from ..schunk import ChunkInfo, Meta, SChunk, VLMeta
from ..storage import Storage
from .b2nd_meta import B2NDMeta
from .blocklayout import block_grid, buffer_to_chunk, chunk_to_buffer
from .indexing import normalize_key, selection_box
from .partition import parse_geometry

__all__ = [
    "NDArray",
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


class NDArray:
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
        """The compressed size in bytes (of the super-chunk, frame overhead included).

        >>> a = zeros((1000, 1000))
        >>> a.nbytes, a.cbytes < 1000, a.cratio > 1000
        (8000000, True, True)
        """
        return self.schunk.cbytes

    @property
    def cratio(self) -> float:
        """The compression ratio, ``nbytes / cbytes``."""
        return self.nbytes / self.cbytes

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
        out = np.empty(tuple(b - a for a, b in zip(lo, hi, strict=True)), self.dtype)
        if out.size == 0:
            return out
        if not self.ndim:
            out[()] = self._chunk_array(0)[()]
            return out
        for coords, n in self._chunks_in(lo, hi):
            origin = [c * s for c, s in zip(coords, self.chunks, strict=True)]
            src, dst = [], []
            for a, b, o, c in zip(lo, hi, origin, self.chunks, strict=True):
                s0, s1 = max(a, o), min(b, o + c)
                src.append(slice(s0 - o, s1 - o))
                dst.append(slice(s0 - a, s1 - a))
            if not self._read_blocks(n, src, out, dst):
                out[tuple(dst)] = self._chunk_array(n)[tuple(src)]
        return out

    def _read_blocks(self, n: int, src: list[slice], out: np.ndarray, dst: list[slice]) -> bool:
        """Copy the in-chunk region ``src`` of chunk ``n`` block by block, decoding (and on
        files reading) only the blocks it intersects; False when that would touch more than
        half of the chunk's blocks (one whole-chunk decode is then cheaper)."""
        grid = self._block_grid()
        ranges = [
            range(s.start // b, (s.stop - 1) // b + 1)
            for s, b in zip(src, self.blocks, strict=True)
        ]
        if math.prod(len(r) for r in ranges) * 2 > math.prod(grid):
            return False
        t = self.dtype.itemsize
        bbytes = math.prod(self.blocks) * t
        for bc in itertools.product(*ranges):
            nb = int(np.ravel_multi_index(bc, grid))
            raw = self.schunk.read_chunk_range(n, nb * bbytes, (nb + 1) * bbytes)
            block = np.frombuffer(raw, self.dtype).reshape(self.blocks)
            b_src, b_dst = [], []
            for s, d, c, b in zip(src, dst, bc, self.blocks, strict=True):
                o = c * b
                s0, s1 = max(s.start, o), min(s.stop, o + b)
                b_src.append(slice(s0 - o, s1 - o))
                b_dst.append(slice(d.start + s0 - s.start, d.start + s1 - s.start))
            out[tuple(b_dst)] = block[tuple(b_src)]
        return True

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
        ranges, squeeze = self._normalize(key)
        lo, hi, local = selection_box(ranges)
        out = self._read_box(lo, hi)[local] if self.ndim else self._read_box((), ())
        return (
            out.reshape([len(r) for d, r in enumerate(ranges) if d not in squeeze])
            if squeeze
            else out
        )

    def __setitem__(self, key: Any, value: Any) -> None:
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

    def save(self, urlpath: str, contiguous: bool = True) -> None:
        """Write a copy to ``urlpath`` (a ``.b2nd`` file, or a directory when not
        ``contiguous``).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "a.b2nd")
        >>> asarray(np.arange(5)).save(path)
        >>> open(path)[1:3]
        array([1, 2])
        """
        copy(self, urlpath=urlpath, contiguous=contiguous)

    def iterchunks_info(self) -> Iterator[ChunkInfo]:
        """A :class:`~pyblosc2.schunk.ChunkInfo` per chunk (reads chunk headers only).

        >>> [i.special.name for i in zeros((4,), chunks=(2,), blocks=(2,)).iterchunks_info()]
        ['ZERO', 'ZERO']
        """
        return self.schunk.iterchunks_info()

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
        if not all(self.shape) or not all(newshape):
            raise NotImplementedError("resizing arrays with zero-length dimensions")
        old_shape, old_grid = self.shape, self._grid
        grid = tuple(-(-n // c) for n, c in zip(newshape, self.chunks, strict=True))
        zero = make_special_chunk(
            SpecialValue.ZERO,
            self.schunk.chunksize,
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


# -- constructors -------------------------------------------------------------------------
def _new(
    shape: ShapeLike,
    dtype: DTypeLike,
    chunks: ShapeLike | None,
    blocks: ShapeLike | None,
    kwargs: dict[str, Any],
) -> NDArray:
    shape, dtype, chunks, blocks = parse_geometry(shape, dtype, chunks, blocks)
    meta = B2NDMeta(shape, chunks, blocks, dtype)
    t = dtype.itemsize
    ext = [-(-c // b) * b if b else 0 for c, b in zip(chunks, blocks, strict=True)]
    cp = kwargs.pop("cparams", None)
    cp = CParams.from_any(cp) if cp is not None else CParams()
    filters_meta = list(cp.filters_meta)
    if dtype.kind == "U" and cp.filters[-1:] == [1] and len(filters_meta) == 6:
        filters_meta[5] = 4  # python-blosc2 shuffles unicode in 4-byte groups
    cp = replace(
        cp,
        typesize=header_typesize(t),
        blocksize=math.prod(blocks) * t if blocks else 0,
        filters_meta=filters_meta,
    )
    storage = kwargs.get("storage")
    if storage is not None:  # the b2nd layer joins the given storage's metalayers
        storage = kwargs["storage"] = dict(
            asdict(storage) if isinstance(storage, Storage) else storage
        )
    given = storage.pop("meta", None) if storage is not None else kwargs.pop("meta", None)
    smeta = {"b2nd": RawMetalayer(meta.to_bytes()), **dict(given or {})}
    (storage if storage is not None else kwargs)["meta"] = smeta
    schunk = SChunk(chunksize=max(math.prod(ext) * t, 1), cparams=cp, **kwargs)
    return NDArray(schunk, meta, _validate=False)


def _fill(arr: NDArray, special: SpecialValue, value: Any = None) -> NDArray:
    if not arr.shape or all(arr.shape):
        n = math.prod(arr._grid) if arr.ndim else 1
        if special == SpecialValue.VALUE:
            v = np.asarray(value, arr.dtype)
            # C slices block by block: the chunk's blocksize must be one b2nd block (§8.3)
            chunk = make_special_chunk(
                SpecialValue.VALUE,
                arr.schunk.chunksize,
                arr.schunk.typesize,
                v,
                blocksize=arr.schunk.cparams.blocksize,
            )
            for _ in range(n):
                arr.schunk.append_chunk(chunk)
        else:
            arr.schunk.fill_special(n * arr.schunk.chunksize // arr.schunk.typesize, special)
    return arr


def empty(
    shape: ShapeLike,
    dtype: DTypeLike = np.float64,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array whose items are unspecified (stored as zeros, as special chunks).

    ``chunks``/``blocks`` default to the automatic partition; ``kwargs`` are those of
    :class:`~pyblosc2.SChunk` (``urlpath``, ``mode``, ``cparams``, ``meta``, ...).

    >>> a = empty((4, 5), np.int32)
    >>> a.shape, a.dtype
    ((4, 5), dtype('int32'))
    """
    return _fill(_new(shape, dtype, chunks, blocks, kwargs), SpecialValue.ZERO)


def zeros(
    shape: ShapeLike,
    dtype: DTypeLike = np.float64,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array of zeros (special-value chunks: nothing is stored).

    >>> a = zeros((3, 4), np.uint8, chunks=(2, 4), blocks=(1, 4))
    >>> a[...].sum(), a.schunk.nchunks
    (np.uint64(0), 2)
    """
    return _fill(_new(shape, dtype, chunks, blocks, kwargs), SpecialValue.ZERO)


def full(
    shape: ShapeLike,
    fill_value: Any,
    dtype: DTypeLike | None = None,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array filled with ``fill_value`` (repeated-value chunks); ``dtype`` defaults to
    the one of ``fill_value``.

    >>> full((2, 3), 7.5)[...]
    array([[7.5, 7.5, 7.5],
           [7.5, 7.5, 7.5]])
    >>> full(4, "ab").dtype
    dtype('<U2')
    """
    dtype = np.asarray(fill_value).dtype if dtype is None else dtype
    arr = _new(shape, dtype, chunks, blocks, kwargs)
    if np.asarray(fill_value, arr.dtype).tobytes() == bytes(arr.dtype.itemsize):
        return _fill(arr, SpecialValue.ZERO)
    return _fill(arr, SpecialValue.VALUE, fill_value)


def ones(
    shape: ShapeLike,
    dtype: DTypeLike = np.float64,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array of ones.

    >>> ones((2, 2), np.int8)[...]
    array([[1, 1],
           [1, 1]], dtype=int8)
    """
    return full(shape, 1, dtype, chunks, blocks, **kwargs)


def asarray(
    array: ArrayLike,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """Store a numpy array (or anything ``np.asarray`` accepts) as an NDArray; ``kwargs``
    are those of :class:`~pyblosc2.SChunk` (``urlpath``, ``mode``, ``cparams``, ``meta``...).

    >>> a = asarray(np.arange(12).reshape(3, 4), chunks=(2, 2), blocks=(1, 2),
    ...             cparams={"clevel": 9, "nthreads": 1})
    >>> a[1:, 1:3]
    array([[ 5,  6],
           [ 9, 10]])
    >>> asarray([[1.5, 2.5]]).shape
    (1, 2)
    """
    data = np.asarray(array)
    arr = _new(data.shape, data.dtype, chunks, blocks, kwargs)
    if data.size == 0:
        return arr
    if not data.ndim:
        arr.schunk.append_chunk(arr._compress(data))
        return arr
    for coords in itertools.product(*[range(g) for g in arr._grid]):
        origin = [c * s for c, s in zip(coords, arr.chunks, strict=True)]
        region = tuple(
            slice(o, min(o + c, s)) for o, c, s in zip(origin, arr.chunks, arr.shape, strict=True)
        )
        piece = np.zeros(arr._ext, arr.dtype)
        piece[tuple(slice(0, r.stop - r.start) for r in region)] = data[region]
        arr.schunk.append_chunk(arr._compress(piece))
    return arr


def copy(
    arr: NDArray, chunks: ShapeLike | None = None, blocks: ShapeLike | None = None, **kwargs: Any
) -> NDArray:
    """A copy of ``arr`` with new storage, chunks, blocks or cparams.

    >>> b = copy(asarray(np.arange(10)), chunks=(5,), blocks=(5,))
    >>> b.chunks, b[4:7]
    ((5,), array([4, 5, 6]))
    """
    kwargs.setdefault("cparams", arr.schunk.cparams)
    return asarray(arr[...], chunks or arr.chunks, blocks or arr.blocks, **kwargs)


def open(urlpath: Any, mode: str = "r", offset: int = 0, **kwargs: Any) -> SChunk | NDArray:
    """Open a frame: an :class:`NDArray` when it has a ``b2nd`` metalayer, else an SChunk.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "a.b2nd")
    >>> _ = asarray(np.arange(10), urlpath=path)
    >>> open(path)[3:5]
    array([3, 4])
    """
    from ..schunk import open as open_schunk

    schunk = open_schunk(urlpath, mode, offset, **kwargs)
    if "b2nd" in dict(schunk.header.metalayers):
        return NDArray(schunk)
    return schunk


def ndarray_from_cframe(cframe: BufferLike, copy: bool = False) -> NDArray:
    """An NDArray over an in-memory cframe with a ``b2nd`` metalayer (``copy=True`` copies the
    bytes instead of referencing them).

    >>> cframe = asarray(np.arange(6, dtype=np.float32).reshape(2, 3)).to_cframe()
    >>> ndarray_from_cframe(cframe)[1]
    array([3., 4., 5.], dtype=float32)
    """
    from ..schunk import schunk_from_cframe

    return NDArray(schunk_from_cframe(cframe, copy))
