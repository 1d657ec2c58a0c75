"""NDArray constructors: empty/zeros/full/ones from special chunks, asarray from numpy,
copy, open and from-cframe."""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, fields, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._bytes import BufferLike
from .._threads import run_parallel
from ..chunk.special import make_special_chunk
from ..constants import SpecialValue
from ..errors import ParamError
from ..meta import RawMetalayer
from ..params import CParams
from ..schunk import SChunk
from ..storage import Storage
from .b2nd_meta import B2NDMeta
from .ndarray import NDArray, ShapeLike
from .partition import parse_geometry

__all__ = [
    "asarray",
    "copy",
    "empty",
    "full",
    "ndarray_from_cframe",
    "ones",
    "open",
    "zeros",
]


_CPARAMS_FIELDS = frozenset(f.name for f in fields(CParams))


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
    # compression parameters given one by one (python-blosc2 accepts ``clevel=`` & co.)
    one_by_one = {k: kwargs.pop(k) for k in list(kwargs) if k in _CPARAMS_FIELDS}
    cp = CParams.from_any(kwargs.pop("cparams", None), **one_by_one)
    filters_meta = list(cp.filters_meta)
    if dtype.kind == "U" and cp.filters[-1:] == [1] and len(filters_meta) == 6:
        filters_meta[5] = 4  # python-blosc2 shuffles unicode in 4-byte groups
    # The frame header records the whole itemsize even above 255, as C-Blosc2 4.x writes it
    # (python-blosc2 cannot read a wide-dtype array whose header says 1); chunk headers clamp
    # it to 1 (chunk §2), which the encoder does.
    cp = replace(
        cp,
        typesize=t,
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
    are those of :class:`~pyblosc2.SChunk` (``urlpath``, ``mode``, ``cparams``, ``meta``...)
    plus ``dtype`` and ``copy``.

    An NDArray is returned as is unless a copy is asked for (``copy=True``) or needed (another
    dtype, partition or storage); ``copy=False`` refuses the latter. It is copied chunk by
    chunk, keeping its chunks and blocks unless others are given.

    >>> a = asarray(np.arange(12).reshape(3, 4), chunks=(2, 2), blocks=(1, 2),
    ...             cparams={"clevel": 9, "nthreads": 1})
    >>> a[1:, 1:3]
    array([[ 5,  6],
           [ 9, 10]])
    >>> asarray([[1.5, 2.5]]).shape
    (1, 2)
    >>> asarray(a) is a, asarray(a, dtype=np.int8).dtype
    (True, dtype('int8'))
    """
    copy_ = kwargs.pop("copy", None)
    dtype = kwargs.pop("dtype", None)
    if copy_ is not None and not isinstance(copy_, bool | np.bool_):
        raise ParamError(f"copy must be a bool or None, got {copy_!r}")
    if isinstance(array, NDArray):
        dtype = array.dtype if dtype is None else np.dtype(dtype)
        chunks = array.chunks if chunks is None else chunks
        blocks = array.blocks if blocks is None else blocks
        needed = bool(kwargs) or (
            dtype,
            tuple(np.atleast_1d(chunks)),
            tuple(np.atleast_1d(blocks)),
        ) != (
            array.dtype,
            tuple(np.atleast_1d(array.chunks)),
            tuple(np.atleast_1d(array.blocks)),
        )
        if copy_ is False and needed:
            raise ParamError(
                "copy=False cannot be honoured: a change of dtype, partition or storage "
                "needs a copy"
            )
        if not (copy_ or needed):
            return array
        src = array
        out = _new(
            src.shape, dtype, chunks if src.ndim else None, blocks if src.ndim else None, kwargs
        )
        from .chunkfill import fill_regions, reader_of

        return fill_regions(out, reader_of(src))
    if copy_ is False:
        raise ParamError("copy=False needs an NDArray (anything else must be copied)")
    data = np.asarray(array, dtype=dtype)
    arr = _new(data.shape, data.dtype, chunks, blocks, kwargs)
    if data.size == 0:
        return arr
    if not data.ndim:
        arr.schunk.append_chunk(arr._compress(data))
        return arr

    def compressed(coords: tuple[int, ...]) -> bytes:
        origin = [c * s for c, s in zip(coords, arr.chunks, strict=True)]
        region = tuple(
            slice(o, min(o + c, s)) for o, c, s in zip(origin, arr.chunks, arr.shape, strict=True)
        )
        piece = np.zeros(arr._ext, arr.dtype)
        piece[tuple(slice(0, r.stop - r.start) for r in region)] = data[region]
        return arr._compress(piece)

    # chunks are compressed a few at a time on the threads (each chunk's blocks then on
    # one thread: long codec calls, few GIL handoffs) and appended in order
    nthreads = arr.schunk.cparams.nthreads
    coords = list(itertools.product(*[range(g) for g in arr._grid]))
    step = 2 * nthreads
    for i in range(0, len(coords), step):
        for chunk in run_parallel(compressed, coords[i : i + step], nthreads):
            arr.schunk.append_chunk(chunk)
    return arr


def copy(
    arr: NDArray, chunks: ShapeLike | None = None, blocks: ShapeLike | None = None, **kwargs: Any
) -> NDArray:
    """A copy of ``arr`` with new storage, chunks, blocks, dtype or cparams, made chunk by
    chunk; its other metalayers and its vlmeta are copied too (as python-blosc2 does).

    >>> a = asarray(np.arange(10)); a.vlmeta["name"] = "a"
    >>> b = copy(a, chunks=(5,), blocks=(5,))
    >>> b.chunks, b[4:7], b.vlmeta["name"]
    ((5,), array([4, 5, 6]), 'a')
    """
    kwargs.setdefault("cparams", arr.schunk.cparams)
    kwargs.setdefault("copy", True)
    storage = kwargs.get("storage")
    if "meta" not in kwargs and not (
        isinstance(storage, dict | Storage) and _storage_meta(storage)
    ):
        layers = {k: RawMetalayer(v) for k, v in arr.schunk.metalayers if k != "b2nd"}
        if layers:
            if storage is None:
                kwargs["meta"] = layers
            else:
                kwargs["storage"] = {
                    **(asdict(storage) if isinstance(storage, Storage) else storage),
                    "meta": layers,
                }
    out = asarray(arr, chunks or arr.chunks, blocks or arr.blocks, **kwargs)
    entries = arr.schunk.vlmeta_entries
    if entries and out is not arr:
        out.schunk.set_vlmeta_entries(entries)
    return out


def _storage_meta(storage: Any) -> Any:
    return storage.get("meta") if isinstance(storage, dict) else storage.meta


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
