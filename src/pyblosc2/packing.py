"""python-blosc2's packing helpers: ``pack``/``unpack`` and ``pack_array``/``unpack_array``
(a pickled object compressed into one chunk) and ``pack_tensor``/``unpack_tensor``/
``save_tensor``/``load_tensor`` (an array in a frame with a ``__pack_tensor__`` vlmeta entry,
the layout of ``pack_array2``).

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
from typing import Any

import numpy as np

from ._bytes import BufferLike
from .api import compress, decompress
from .constants import Codec, Filter
from .errors import ParamAttributeError
from .ndarray.extra import _pack, _unpack
from .params import parse_clevel, parse_typesize
from .schunk import open as open_schunk
from .schunk import schunk_from_cframe

__all__ = [
    "load_tensor",
    "pack",
    "pack_array",
    "pack_tensor",
    "save_tensor",
    "unpack",
    "unpack_array",
    "unpack_tensor",
]


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
    schunk = _pack(np.asarray(tensor), chunksize, kwargs, kind)
    if schunk.urlpath is None:
        return schunk.to_cframe()
    return os.stat(schunk.urlpath).st_size


def _restore(kind: str, arr: np.ndarray) -> Any:
    if kind == "torch":
        import torch  # type: ignore[import-not-found]

        return torch.from_numpy(arr)
    if kind == "tensorflow":
        import tensorflow as tf  # type: ignore[import-untyped]

        return tf.constant(arr)
    return arr


def _kind_of(schunk: Any) -> str:
    return str(schunk.vlmeta["__pack_tensor__"][0])


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
