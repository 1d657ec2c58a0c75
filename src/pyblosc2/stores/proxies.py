"""Opening proxies through ``pyblosc2.open``, as python-blosc2 4.x does.

* A frame with the ``proxy-source`` metalayer is a proxy's cache: it names its source, which
  opening it would open in turn (a local path, or a URL), so it is an *active* value: refused
  under ``deserialize="safe"`` (the default) with
  :class:`~pyblosc2.vlarrays.UnsafeDeserializationError`, rebuilt as a
  :class:`~pyblosc2.Proxy` under ``deserialize="full"`` (its source opened read-only; the
  source of a local cache must not be a proxy itself, which bounds the chain at one).
* ``pyblosc2.open(url, lazy=True)`` is a :class:`~pyblosc2.Proxy` over an
  :class:`~pyblosc2.FsspecNDSource`: in memory, or with ``cache_storage=`` (``cache_dir=``) a
  cache file in that directory named by the URL, adopted by later runs while the remote
  object is unchanged, and rebuilt when it changed or the cache is damaged.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

from ..errors import Blosc2Error, FormatError, ParamError
from ..meta import unpackb
from ..ndarray.ndarray import NDArray
from ..proxies import Proxy
from ..proxies.byterange import REMOTE_MAX_CONCURRENCY, FsspecNDSource
from ..proxies.cache import SOURCE_META
from ..schunk import SChunk
from ..vlarrays.policy import UnsafeDeserializationError

__all__ = ["LAZY_ARGS", "open_lazy", "open_proxy"]

#: what ``open(url, lazy=True)`` takes besides the URL
LAZY_ARGS = {
    "lazy",
    "cache_storage",
    "cache_dir",
    "max_concurrency",
    "storage_options",
    "deserialize",
}
_FIELDS = ("source_kind", "local_abspath", "urlpath", "caterva2_env")
_NOT_HERE = {
    "b2z": "a Proxy of a dataset in a .b2z store (python-blosc2's B2ZNDSource)",
    "zarr": "a Proxy of a Zarr array (python-blosc2's ZarrNDSource)",
    "hdf5": "a Proxy of an HDF5 dataset (python-blosc2's HDF5NDSource)",
    "caterva2": "a Proxy of a Caterva2 dataset (C2Array)",
}


def _source_info(schunk: SChunk) -> dict[str, Any]:
    raw = dict(schunk.metalayers)[SOURCE_META]
    info = unpackb(raw, f"metalayer {SOURCE_META!r}")
    if not isinstance(info, dict) or not all(isinstance(k, str) for k in info):
        raise FormatError(
            f"metalayer {SOURCE_META!r}", "value", None, "a map of str keys", type(info).__name__
        )
    for key in ("local_abspath", "source_kind"):
        if info.get(key) is not None and not isinstance(info[key], str):
            raise FormatError(
                f"metalayer {SOURCE_META!r}", key, None, "a str or nil", repr(info[key])
            )
    return {k: info.get(k) for k in _FIELDS}


def open_proxy(schunk: SChunk, deserialize: str, open_source: Callable[..., Any]) -> Proxy:
    """The proxy whose cache is ``schunk`` (see the module docstring); ``open_source`` opens
    a local source path (``pyblosc2.open``)."""
    if deserialize != "full":
        raise UnsafeDeserializationError("proxy")
    info = _source_info(schunk)
    cache = NDArray(schunk) if "b2nd" in dict(schunk.metalayers) else schunk
    kind = info["source_kind"]
    if kind in _NOT_HERE:
        raise NotImplementedError(_NOT_HERE[kind])
    if kind == "fsspec":
        if not isinstance(info["urlpath"], str):
            raise FormatError(
                f"metalayer {SOURCE_META!r}", "urlpath", None, "the source URL", info["urlpath"]
            )
        src: Any = FsspecNDSource(info["urlpath"])
    elif info["local_abspath"] is not None:
        src = open_source(info["local_abspath"], mode="r")
    elif info["urlpath"] is not None:
        raise NotImplementedError(_NOT_HERE["caterva2"])
    else:
        raise FormatError(
            f"metalayer {SOURCE_META!r}",
            "local_abspath",
            None,
            "where the source is (Could not find the source when opening a Proxy)",
            None,
        )
    return Proxy(src, _cache=cache, _refresh_source=False)


def _cache_path(url: str, directory: str) -> str:
    suffix = os.path.splitext(url.split("?", 1)[0].rstrip("/"))[1]
    key = hashlib.sha256(url.encode()).hexdigest()[:32]
    return os.path.join(directory, f"proxy-{key}{suffix if suffix.startswith('.b2') else '.b2nd'}")


def open_lazy(url: str, mode: str, offset: int, kwargs: dict[str, Any]) -> Proxy:
    """``pyblosc2.open(url, lazy=True, ...)`` (see the module docstring)."""
    if offset:
        raise NotImplementedError(
            f"offset={offset} with lazy=True: a lazy proxy reads a whole frame at its URL"
        )
    if mode not in ("r", None):
        raise NotImplementedError(
            f"mode={mode!r} with lazy=True: a lazy proxy of a URL is read-only"
        )
    unknown = sorted(set(kwargs) - LAZY_ARGS)
    if unknown:
        raise ParamError(f"open(url, lazy=True) does not take {unknown}")
    directory = kwargs.get("cache_storage", kwargs.get("cache_dir"))
    src = FsspecNDSource(
        url,
        kwargs.get("max_concurrency") or REMOTE_MAX_CONCURRENCY,
        storage_options=kwargs.get("storage_options"),
    )
    if directory is None:
        return Proxy(src, _refresh_source=False)
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    path = _cache_path(url, directory)
    try:
        return Proxy(src, urlpath=path, mode="a", _refresh_source=False)
    except (Blosc2Error, OSError):
        # stale (another object at the URL), of another geometry, or damaged: built anew
        return Proxy(src, urlpath=path, mode="w", _refresh_source=False)
