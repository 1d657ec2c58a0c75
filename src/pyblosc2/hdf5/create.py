"""Creating Blosc/Blosc2 compressed HDF5 datasets whose chunks pyblosc2 writes.

The dataset is created by h5py with the filter id and the complete ``cd_values`` the plugin's
``set_local`` would record (HDF5 does not call it for a filter it does not have), flagged
optional as h5py and hdf5plugin flag it, so that hdf5plugin, PyTables and any HDF5 with the
plugins read it; the chunks are compressed by pyblosc2 and stored with ``write_direct_chunk``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..constants import Codec, Filter
from ..errors import ParamError, ParamTypeError
from .cd_values import BLOSC2_FILTER_ID, BLOSC_FILTER_ID, Blosc2Values, BloscValues
from .dataset import Dataset

__all__ = ["create_dataset"]

_COMPRESSION = {"blosc2": BLOSC2_FILTER_ID, "blosc": BLOSC_FILTER_ID}
#: h5py's chunk guess aims at chunks of about this many bytes at most
_CHUNK_TARGET = 1 << 20


def _enum(value: Any, enum: type[Codec] | type[Filter], what: str) -> int:
    if isinstance(value, str):
        try:
            return int(enum[value.upper()])
        except KeyError:
            raise ParamError(f"unknown {what} {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ParamTypeError(f"{what} must be a name or an id, got {type(value).__name__}")
    return int(value)


def _guess_chunks(shape: tuple[int, ...], itemsize: int, maxshape: Any) -> tuple[int, ...]:
    """h5py's chunk guess (what ``chunks=True`` gives)."""
    from h5py._hl.filters import guess_chunk

    return tuple(guess_chunk(shape, maxshape, itemsize))


def create_dataset(
    parent: Any,
    name: str,
    data: Any = None,
    *,
    shape: Any = None,
    dtype: Any = None,
    chunks: Any = None,
    compression: str = "blosc2",
    codec: Codec | int | str = Codec.ZSTD,
    clevel: int = 5,
    filter: Filter | int | str = Filter.SHUFFLE,
    blocksize: int = 0,
    fletcher32: bool = False,
    nthreads: int = 1,
    **kwargs: Any,
) -> Dataset:
    """Create dataset ``name`` in ``parent`` (an ``h5py.File`` or ``Group``) compressed with
    Blosc2 (``compression="blosc2"``, filter 32026: b2nd chunks for 1-8 dims) or Blosc
    (``"blosc"``, 32001), written by pyblosc2, readable by h5py + hdf5plugin and PyTables.

    ``codec`` (blosclz, lz4, lz4hc, zlib, zstd), ``clevel`` and ``filter`` (NOFILTER, SHUFFLE,
    BITSHUFFLE) are the plugin's parameters; ``blocksize`` (Blosc2; 0: automatic, as the
    plugin) sets the block; ``fletcher32`` appends HDF5's checksum. ``chunks`` defaults to
    h5py's guess; other keywords (``maxshape``, ``fillvalue``, ...) go to h5py.

    >>> import h5py, tempfile, os, numpy as np
    >>> from pyblosc2 import hdf5
    >>> path = os.path.join(tempfile.mkdtemp(), "w.h5")
    >>> with h5py.File(path, "w") as f:
    ...     d = hdf5.create_dataset(f, "t", data=np.ones((6, 5), "f4"), chunks=(4, 4),
    ...                             compression="blosc", codec="lz4", filter="bitshuffle")
    ...     f["t"].id.get_create_plist().get_filter(0)[2]
    (2, 2, 4, 64, 5, 2, 1)
    """
    if compression not in _COMPRESSION:
        raise ParamError(f"compression must be 'blosc2' or 'blosc', got {compression!r}")
    if data is not None:
        dt = np.asarray(data).dtype if dtype is None else np.dtype(dtype)
        arr = np.asarray(data, dtype=dt.base)  # a subarray dtype's axes trail
        sub = dt.shape
        if arr.shape[arr.ndim - len(sub) :] != sub:
            raise ParamError(f"data of shape {arr.shape} does not end with {sub} (dtype {dt})")
        data_shape = arr.shape[: arr.ndim - len(sub)]
        if shape is not None and tuple(shape) != data_shape:
            raise ParamError(f"shape {tuple(shape)} does not match the data's {data_shape}")
        shape = data_shape
    else:
        if shape is None or dtype is None:
            raise ParamError("shape and dtype are needed without data")
        shape, dt = (shape,) if isinstance(shape, int) else tuple(shape), np.dtype(dtype)
    if dt.hasobject or dt.kind in "OUT":
        raise ParamTypeError(f"dtype {dt} cannot be stored in Blosc chunks (fixed-size only)")
    if not shape:
        raise ParamError("a 0-d dataset has no chunks (HDF5 cannot filter it)")
    if chunks is None or chunks is True:
        chunks = _guess_chunks(shape, dt.itemsize, kwargs.get("maxshape"))
    chunks = (chunks,) if isinstance(chunks, int) else tuple(int(c) for c in chunks)
    if len(chunks) != len(shape) or min(chunks) < 1:
        raise ParamError(f"chunks must be {len(shape)} sizes >= 1, got {chunks}")
    if dt.itemsize * math.prod(chunks) >= 1 << 32:
        raise ParamError(f"chunks {chunks} of {dt} reach 4 GiB (HDF5's chunk size limit)")
    cid, flt = _enum(codec, Codec, "codec"), _enum(filter, Filter, "filter")
    values: BloscValues | Blosc2Values
    if compression == "blosc":
        values = BloscValues.for_dataset(dt, chunks, clevel, flt, cid)
    else:
        values = Blosc2Values.for_dataset(dt, chunks, clevel, flt, cid, blocksize)
    for bad in ("compression_opts", "shuffle", "scaleoffset", "allow_unknown_filter"):
        if bad in kwargs:
            raise ParamError(f"{bad} is not compatible with Blosc compression written by pyblosc2")
    h5 = parent.create_dataset(
        name,
        shape=shape,
        dtype=dt,
        chunks=chunks,
        compression=_COMPRESSION[compression],
        compression_opts=values.to_cd_values(),
        allow_unknown_filter=True,
        fletcher32=bool(fletcher32),
        **kwargs,
    )
    ds = Dataset(h5, nthreads=nthreads)
    if data is not None and arr.size:
        ds[...] = arr
    return ds
