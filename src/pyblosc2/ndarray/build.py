"""The storage of new arrays: a super-chunk with the ``b2nd`` metalayer (frame-format.md
§8.1) made for a shape, dtype and partition, and filled with special chunks, with a numpy
array's chunks, or from another array chunk by chunk.

Each builder takes the class to build (``cls(schunk, meta)``, an
:class:`~.core.ArrayCore` subclass) or returns the class of the array it is given, so that
:class:`~pyblosc2.NDArray`'s own methods (``copy``, ``slice``, ``reshape``...) and the public
constructors (:mod:`.constructors`, which bind them to ``NDArray``) share one implementation
below the class.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, fields, replace
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._threads import run_parallel
from ..chunk.special import make_special_chunk
from ..constants import SpecialValue
from ..errors import ParamError
from ..meta import RawMetalayer
from ..params import CParams
from ..schunk import SChunk
from ..storage import Storage
from .b2nd_meta import B2NDMeta
from .chunkfill import ChunkWriter, fill_regions, reader_of
from .core import ArrayCore
from .geometry import ShapeLike
from .partition import parse_geometry

__all__ = ["asarray_of", "copy_of", "empty_of", "new_array"]

#: The class built (``NDArray`` from the public constructors).
A = TypeVar("A", bound=ArrayCore)

_CPARAMS_FIELDS = frozenset(f.name for f in fields(CParams))


def new_array(
    cls: type[A],
    shape: ShapeLike,
    dtype: DTypeLike,
    chunks: ShapeLike | None,
    blocks: ShapeLike | None,
    kwargs: dict[str, Any],
    special: SpecialValue = SpecialValue.ZERO,
    value: Any = None,
) -> A:
    """A new array of ``cls``, every chunk a special chunk (zeros, or ``value`` repeated for
    ``SpecialValue.VALUE``), in a new super-chunk (``kwargs`` are those of
    :class:`~pyblosc2.SChunk`, the compression parameters also one by one) whose metalayers
    start with the ``b2nd`` layer of the parsed geometry. The chunks are written with the
    frame (creation is one commit), so a builder that then replaces them (:class:`ChunkWriter`)
    leaves a valid array at every step."""
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
    chunksize = max(math.prod(ext) * t, 1)
    nchunks = math.prod(-(-s // c) for s, c in zip(shape, chunks, strict=True)) if all(shape) else 0
    if nchunks:
        if special == SpecialValue.VALUE:
            # C slices block by block: the chunk's blocksize must be one b2nd block (§8.3)
            v = np.asarray(value, dtype)
            chunk = make_special_chunk(special, chunksize, t, v, blocksize=cp.blocksize)
        else:
            chunk = make_special_chunk(special, chunksize, t)
        kwargs["_chunks"] = [chunk] * nchunks
    schunk = SChunk(chunksize=chunksize, cparams=cp, **kwargs)
    return cls(schunk, meta, _validate=False)


def empty_of(
    cls: type[A],
    shape: ShapeLike,
    dtype: DTypeLike = np.float64,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> A:
    """A new array of ``cls`` stored as zero chunks (see :func:`~pyblosc2.empty`)."""
    return new_array(cls, shape, dtype, chunks, blocks, kwargs)


def asarray_of(
    cls: type[A],
    array: ArrayLike | ArrayCore,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> A:
    """``array`` as an array of ``cls`` (see :func:`~pyblosc2.asarray`): an array of ``cls``
    as is unless a copy is asked for or needed, else a copy chunk by chunk; anything else
    through ``np.asarray``, its chunks compressed on the threads."""
    copy_ = kwargs.pop("copy", None)
    dtype = kwargs.pop("dtype", None)
    if copy_ is not None and not isinstance(copy_, bool | np.bool_):
        raise ParamError(f"copy must be a bool or None, got {copy_!r}")
    if isinstance(array, cls):
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
        out = new_array(
            cls,
            src.shape,
            dtype,
            chunks if src.ndim else None,
            blocks if src.ndim else None,
            kwargs,
        )
        return fill_regions(out, reader_of(src))
    if copy_ is False:
        raise ParamError("copy=False needs an NDArray (anything else must be copied)")
    data = np.asarray(array, dtype=dtype)
    arr = new_array(cls, data.shape, data.dtype, chunks, blocks, kwargs)
    if data.size == 0:
        return arr
    if not data.ndim:
        arr.schunk.update_chunk(0, arr._compress(data))
        return arr
    geo = arr._geometry

    def compressed(coords: tuple[int, ...]) -> bytes:
        origin = [c * s for c, s in zip(coords, geo.chunks, strict=True)]
        region = tuple(
            slice(o, min(o + c, s)) for o, c, s in zip(origin, geo.chunks, geo.shape, strict=True)
        )
        piece = np.zeros(geo.ext, geo.dtype)
        piece[tuple(slice(0, r.stop - r.start) for r in region)] = data[region]
        return arr._compress(piece)

    # chunks are compressed a few at a time on the threads (each chunk's blocks then on
    # one thread: long codec calls, few GIL handoffs) and put in place in a few commits
    nthreads = arr.schunk.cparams.nthreads
    coords = list(itertools.product(*[range(g) for g in geo.grid]))
    step = 2 * nthreads
    writer = ChunkWriter(arr)
    for i in range(0, len(coords), step):
        for n, chunk in enumerate(run_parallel(compressed, coords[i : i + step], nthreads), i):
            writer.put(n, chunk)
    writer.flush()
    return arr


def copy_of(
    arr: A, chunks: ShapeLike | None = None, blocks: ShapeLike | None = None, **kwargs: Any
) -> A:
    """A copy of ``arr`` (of its class) with new storage, chunks, blocks, dtype or cparams,
    made chunk by chunk, with its other metalayers and its vlmeta (see :func:`~pyblosc2.copy`).
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
    out = asarray_of(type(arr), arr, chunks or arr.chunks, blocks or arr.blocks, **kwargs)
    entries = arr.schunk.vlmeta_entries
    if entries and out is not arr:
        out.schunk.set_vlmeta_entries(entries)
    return out


def _storage_meta(storage: Any) -> Any:
    return storage.get("meta") if isinstance(storage, dict) else storage.meta
