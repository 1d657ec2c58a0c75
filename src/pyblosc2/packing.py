"""python-blosc2's packing helpers: ``pack``/``unpack`` and ``pack_array``/``unpack_array``
(a pickled object compressed into one chunk), ``pack_array2``/``unpack_array2``/``save_array``/
``load_array`` (an array in a frame with a ``__pack_tensor__`` vlmeta entry, frame-format.md
§9.3) and ``pack_tensor``/``unpack_tensor``/``save_tensor``/``load_tensor`` (the same layout).

``unpack`` and ``unpack_array`` unpickle: as with ``pickle.loads``, only unpack data you trust.

>>> a = np.arange(1000, dtype=np.int32)
>>> np.array_equal(unpack_array(pack_array(a)), a)
True
>>> unpack_tensor(pack_tensor(a))[-2:]
array([998, 999], dtype=int32)
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._bytes import BufferLike
from .api import compress, decompress
from .constants import Codec, Filter, header_typesize
from .errors import FormatError, ParamAttributeError, ParamTypeError
from .frame.location import put_cframe, whole_at_url
from .params import CParams, DParams, parse_clevel, parse_typesize
from .schunk import SChunk, schunk_from_cframe
from .schunk import open as open_schunk

__all__ = [
    "load_array",
    "load_tensor",
    "pack",
    "pack_array",
    "pack_array2",
    "pack_tensor",
    "save_array",
    "save_tensor",
    "unpack",
    "unpack_array",
    "unpack_array2",
    "unpack_tensor",
]


PACK_KEY = "__pack_tensor__"
#: the kinds of packed tensors python-blosc2 records (all stored as numpy data)
TENSOR_KINDS = ("numpy", "torch", "tensorflow")
MAX_PACK_CHUNKSIZE = 2**28


def pack(
    obj: Any,
    clevel: int = 9,
    filter: Filter | int = Filter.SHUFFLE,
    codec: Codec | int = Codec.BLOSCLZ,
) -> bytes:
    """Pickle ``obj`` (which must have ``itemsize`` and ``size``, like a numpy array) and
    compress the pickle into one chunk, with ``obj.itemsize`` as typesize.

    >>> len(pack(np.zeros(10_000))) < 1000
    True
    """
    for attr in ("itemsize", "size"):
        if not hasattr(obj, attr):
            raise ParamAttributeError(
                f"obj must have an {attr} attribute (e.g. a numpy array), got {obj!r}"
            )
    parse_clevel(clevel)
    typesize = parse_typesize(obj.itemsize, 255)
    pickled = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    return compress(pickled, typesize, clevel, filter, codec, _ignore_multiple_size=True)


def unpack(packed_object: BufferLike, **kwargs: Any) -> Any:
    """The object :func:`pack` packed (``kwargs`` go to ``pickle.loads``).

    >>> unpack(pack(np.array(["å", "ç"])))
    array(['å', 'ç'], dtype='<U1')
    """
    return pickle.loads(decompress(packed_object), **kwargs)


def pack_array(
    arr: np.ndarray,
    clevel: int = 9,
    filter: Filter | int = Filter.SHUFFLE,
    codec: Codec | int = Codec.BLOSCLZ,
) -> bytes:
    """:func:`pack` for a numpy array.

    >>> unpack_array(pack_array(np.arange(3.0)))
    array([0., 1., 2.])
    """
    return pack(arr, clevel, filter, codec)


def unpack_array(packed_array: BufferLike, **kwargs: Any) -> np.ndarray:
    """The array :func:`pack_array` packed (``kwargs`` go to ``pickle.loads``; with
    ``encoding="bytes"``, arrays of bytes are decoded as UTF-8 strings as in python-blosc2).

    >>> unpack_array(pack_array(np.arange(3, dtype=np.int8)))
    array([0, 1, 2], dtype=int8)
    """
    arr = unpack(packed_array, **kwargs)
    if kwargs and isinstance(arr, np.ndarray) and arr.size:
        items = arr.tolist()
        if all(isinstance(x, bytes) for x in items):
            arr = np.array([x.decode("utf-8") for x in items])
    return arr


def _kind(tensor: Any) -> str:
    module = type(tensor).__module__.split(".")[0]
    if module == "torch":
        return "torch"
    if module == "tensorflow":
        return "tensorflow"
    return "numpy"


def pack_tensor(tensor: Any, chunksize: int | None = None, **kwargs: Any) -> bytes | int:
    """A frame holding ``tensor`` (a numpy array, or a PyTorch/TensorFlow tensor, stored as its
    numpy data): the cframe bytes, or with ``urlpath`` the file size. ``kwargs`` are those of
    :class:`~pyblosc2.SChunk`.

    >>> len(pack_tensor(np.zeros(10_000, np.float32))) < 1000
    True
    """
    kind = _kind(tensor)
    if whole_at_url(kwargs.get("urlpath"), kwargs):
        return _put(np.asarray(tensor), chunksize, kwargs, kind)
    schunk = _pack(np.asarray(tensor), chunksize, kwargs, kind)
    if schunk.urlpath is None:
        return schunk.to_cframe()
    return os.stat(schunk.urlpath).st_size


def _put(arr: np.ndarray, chunksize: int | None, kwargs: dict[str, Any], kind: str) -> int:
    """Pack ``arr`` in memory and write the frame to the URL ``kwargs['urlpath']``."""
    url = kwargs["urlpath"]
    own = {
        k: v
        for k, v in kwargs.items()
        if k not in ("urlpath", "mode", "contiguous", "storage_options")
    }
    return put_cframe(url, _pack(arr, chunksize, own, kind).to_cframe(), kwargs)


def _restore(kind: str, arr: np.ndarray) -> Any:
    if kind == "torch":
        import torch  # type: ignore[import-not-found]

        return torch.from_numpy(arr)
    if kind == "tensorflow":
        import tensorflow as tf  # type: ignore[import-untyped]

        return tf.constant(arr)
    return arr


def _kind_of(schunk: Any) -> str:
    return str(schunk.vlmeta[PACK_KEY][0])


def unpack_tensor(cframe: BufferLike) -> Any:
    """The tensor or array :func:`pack_tensor` packed (also python-blosc2's).

    >>> unpack_tensor(pack_tensor(np.eye(2)))
    array([[1., 0.],
           [0., 1.]])
    """
    schunk = schunk_from_cframe(cframe)
    return _restore(_kind_of(schunk), _unpack(schunk))


def save_tensor(tensor: Any, urlpath: str, chunksize: int | None = None, **kwargs: Any) -> int:
    """Write ``tensor`` to a frame file (:func:`pack_tensor` with ``urlpath``); returns the
    file size.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.bl2")
    >>> save_tensor(np.arange(5), path, mode="w") == os.path.getsize(path)
    True
    >>> load_tensor(path)
    array([0, 1, 2, 3, 4])
    """
    size = pack_tensor(tensor, chunksize, urlpath=urlpath, **kwargs)
    assert isinstance(size, int)
    return size


def load_tensor(urlpath: str, dparams: Any = None) -> Any:
    """The tensor or array a file written by :func:`save_tensor` holds.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.bl2")
    >>> _ = save_tensor(np.arange(3.0), path)
    >>> load_tensor(path, dparams={"nthreads": 1})
    array([0., 1., 2.])
    """
    schunk = open_schunk(urlpath, "r", dparams=dparams)
    return _restore(_kind_of(schunk), _unpack(schunk))


def _pack(arr: np.ndarray, chunksize: int | None, kwargs: dict, kind: str = "numpy") -> SChunk:
    arr = np.asarray(arr)
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        arr = arr.copy(order="C")
    if chunksize is None:
        chunksize = max(1, min(arr.nbytes, MAX_PACK_CHUNKSIZE))
    cp = kwargs.pop("cparams", None)
    if not isinstance(cp, CParams):  # a CParams is taken whole, as python-blosc2 does
        if cp is not None and not isinstance(cp, Mapping):
            raise ParamTypeError(f"cparams must be a CParams or a dict, got {type(cp).__name__}")
        cp = {"typesize": header_typesize(arr.dtype.itemsize), **(cp or {})}
    s = SChunk(chunksize=chunksize, data=arr, cparams=cp, **kwargs)
    dtype = arr.dtype.descr if arr.dtype.kind == "V" else arr.dtype.str
    s.vlmeta[PACK_KEY] = (kind, tuple(arr.shape), dtype)
    return s


def pack_array2(arr: np.ndarray, chunksize: int | None = None, **kwargs: Any) -> bytes:
    """A cframe holding ``arr`` as python-blosc2's ``pack_array2`` writes it.

    >>> unpack_array2(pack_array2(np.arange(6).reshape(2, 3))).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    return _pack(arr, chunksize, kwargs).to_cframe()


def _unpack(s: SChunk) -> np.ndarray:
    try:
        kind, shape, dtype = s.vlmeta[PACK_KEY]
    except KeyError:
        raise FormatError("packed array", "vlmeta", None, f"a {PACK_KEY!r} entry", "none") from None
    if kind not in TENSOR_KINDS:
        raise FormatError("packed array", "vlmeta kind", None, f"one of {TENSOR_KINDS}", kind)
    descr: Any = dtype if isinstance(dtype, str) else [tuple(f) for f in dtype]
    dt = np.lib.format.descr_to_dtype(descr)
    out = np.empty(shape, dt)
    if out.nbytes != s.nbytes:
        raise FormatError("packed array", "nbytes", 30, out.nbytes, s.nbytes)
    s.get_slice(0, s.nbytes // s.typesize, out=out)
    return out


def unpack_array2(cframe: BufferLike) -> np.ndarray:
    """Inverse of :func:`pack_array2` (also reads python-blosc2's ``pack_array2`` output).

    >>> a = np.array([(1, 2.5), (3, 4.5)], dtype=[("i", "<i4"), ("f", "<f8")])
    >>> unpack_array2(pack_array2(a))["f"]
    array([2.5, 4.5])
    """
    return _unpack(schunk_from_cframe(cframe))


def save_array(arr: np.ndarray, urlpath: str, chunksize: int | None = None, **kwargs: Any) -> int:
    """Write ``arr`` to a frame file as python-blosc2's ``save_array`` does (overwriting it
    unless ``mode`` says otherwise); returns the file size.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.b2frame")
    >>> save_array(np.arange(1000), path) == os.path.getsize(path)
    True
    >>> load_array(path)[-3:]
    array([997, 998, 999])
    """
    kwargs.setdefault("mode", "w")
    if whole_at_url(urlpath, kwargs):
        return _put(np.asarray(arr), chunksize, {**kwargs, "urlpath": urlpath}, "numpy")
    _pack(arr, chunksize, {**kwargs, "urlpath": urlpath, "contiguous": True})
    return os.stat(urlpath).st_size


def load_array(urlpath: str, dparams: DParams | Mapping[str, Any] | None = None) -> np.ndarray:
    """Read an array written by :func:`save_array` (or python-blosc2's ``save_array``).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "m.b2frame")
    >>> _ = save_array(np.eye(3, dtype=np.int8), path)
    >>> load_array(path, dparams={"nthreads": 1})
    array([[1, 0, 0],
           [0, 1, 0],
           [0, 0, 1]], dtype=int8)
    """
    return _unpack(open_schunk(urlpath, "r", dparams=dparams))
