"""``pyblosc2.open`` and ``pyblosc2.from_cframe`` as python-blosc2 4.x dispatches them: a
store (``.b2e`` EmbedStore, ``.b2d``/``.b2z`` DictStore or TreeStore) is recognised by the
metalayer of its embedded store (``b2embed``, ``b2dict``, ``b2tree``), else by its suffix;
anything else is a frame opened as the container its metalayers say (:mod:`.leaves`).

The order is python-blosc2's: a path ending in ``.b2e``, ``.b2d`` or ``.b2z`` is a store; a
frame at a nonzero ``offset`` is opened directly; other paths are opened as frames first, and
only when that fails as a store (a directory holding ``embed.b2e``, a zip archive holding
one, or the path with a store suffix added).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ..backends.file import FileStore
from ..backends.localize import localize
from ..errors import Blosc2Error, ParamError
from ..frame.location import is_url
from ..proxies.cache import SOURCE_META
from ..schunk import SChunk, schunk_from_cframe
from ..schunk import open as open_schunk
from .dictstore import DictStore
from .embed import EmbedStore
from .keys import EMBED_NAME
from .leaves import URLPath, check_deserialize, container_of, schunk_in_window
from .tables import root_table
from .treestore import TreeStore
from .zipindex import ZipIndex

__all__ = ["STORE_SUFFIXES", "from_cframe", "open", "store_class"]

STORE_SUFFIXES = (".b2d", ".b2z", ".b2e")
_BY_LAYER: dict[str, type[Any]] = {"b2embed": EmbedStore, "b2dict": DictStore, "b2tree": TreeStore}
_BY_SUFFIX: dict[str, type[Any]] = {".b2d": DictStore, ".b2z": TreeStore, ".b2e": EmbedStore}
# keyword arguments a store takes from open()
_STORE_ARGS = {
    EmbedStore: {"mmap_mode", "cparams", "dparams", "storage", "chunksize"},
    DictStore: {
        "mmap_mode",
        "cparams",
        "dparams",
        "storage",
        "tmpdir",
        "threshold",
        "locking",
        "storage_options",
    },
}


def _layers_at(path: str, offset: int = 0, options: dict[str, Any] | None = None) -> set[str]:
    """Metalayer names of the frame at ``offset`` of ``path`` (empty when there is none)."""
    try:
        return {name for name, _ in open_schunk(path, "r", offset, **(options or {})).metalayers}
    except (Blosc2Error, OSError, NotImplementedError):
        return set()


def _store_layers(path: str, options: dict[str, Any]) -> set[str]:
    """Metalayer names of the embedded store of the store at ``path`` (empty: not a store)."""
    if is_url(path):
        if not path.endswith(".b2z"):
            return set()
        with contextlib.suppress(Blosc2Error, OSError):
            from ..backends.fsspec import FsspecStore

            archive = FsspecStore(path, options.get("storage_options"))
            index = ZipIndex.read(archive)
            if EMBED_NAME in index and index[EMBED_NAME].stored:
                m = index[EMBED_NAME]
                s = schunk_in_window(archive, m.offset, m.length, path, owned=False)
                return {name for name, _ in s.metalayers}
        return set()
    if path.endswith(".b2e"):
        return _layers_at(path)
    if os.path.isdir(path):
        embed = os.path.join(path, EMBED_NAME)
        return _layers_at(embed) if os.path.isfile(embed) else set()
    if os.path.isfile(path):
        with contextlib.suppress(Blosc2Error, OSError), contextlib.closing(FileStore(path)) as f:
            index = ZipIndex.read(f)
            if EMBED_NAME in index and index[EMBED_NAME].stored:
                m = index[EMBED_NAME]
                s = schunk_in_window(FileStore(path), m.offset, m.length, path)
                return {name for name, _ in s.metalayers}
    return set()


def store_class(path: str, options: dict[str, Any] | None = None) -> type[Any] | None:
    """The store class for ``path``: by the metalayer of its embedded store, else by its
    suffix (None: not a store).

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "d.b2d")
    >>> DictStore(p, mode="w").close(); store_class(p).__name__
    'DictStore'
    """
    layers = _store_layers(path, options or {})
    if path.endswith(".b2e") and layers & set(_BY_LAYER):
        return EmbedStore  # a DictStore's embed.b2e is an EmbedStore too
    for layer, cls in _BY_LAYER.items():
        if layer in layers:
            return cls
    for suffix, cls in _BY_SUFFIX.items():
        if path.endswith(suffix):
            return cls
    return None


def _open_store(cls: type[Any], path: str, mode: str, offset: int, kwargs: dict[str, Any]) -> Any:
    if offset:
        raise ParamError(f"Offset must be 0 for {cls.__name__}")
    if cls is EmbedStore and is_url(path):  # one frame at a URL, read by ranges
        if mode != "r":
            raise ParamError(f"a store at a URL is read-only: open {path} with mode='r'")
        remote = {k: kwargs[k] for k in ("storage_options",) if kwargs.get(k)}
        schunk = open_schunk(path, "r", 0, **remote)
        return EmbedStore(_from_schunk=schunk, deserialize=kwargs.get("deserialize"))
    allowed = _STORE_ARGS[EmbedStore if cls is EmbedStore else DictStore]
    unknown = sorted(set(kwargs) - allowed - {"deserialize"})
    if unknown:
        raise ParamError(f"{cls.__name__} does not take {unknown}")
    store = cls(path, mode=mode, **kwargs)
    return root_table(store, mode) if cls is TreeStore else store


def open(urlpath: Any, mode: str = "r", offset: int = 0, **kwargs: Any) -> Any:
    """Open a store or a container: an :class:`EmbedStore`, :class:`DictStore` or
    :class:`TreeStore` for a store, an :class:`~pyblosc2.NDArray` for a frame with a
    ``b2nd`` metalayer, else an :class:`~pyblosc2.SChunk` (see the module docstring).

    >>> import tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "t.b2z")
    >>> with TreeStore(path, mode="w") as t:
    ...     t["/group/a"] = np.arange(4)
    >>> store = open(path)
    >>> type(store).__name__, store["/group/a"][1:3]
    ('TreeStore', array([1, 2]))
    """
    if isinstance(urlpath, URLPath):
        raise NotImplementedError(
            f"opening {urlpath.path!r} at {urlpath.urlbase!r}: a Caterva2 dataset (C2Array)"
        )
    if isinstance(urlpath, str | os.PathLike):
        path = os.fsdecode(urlpath)
        if "deserialize" in kwargs:
            kwargs["deserialize"] = check_deserialize(kwargs["deserialize"])
        options = {k: kwargs[k] for k in ("storage_options",) if kwargs.get(k)}
        local = not is_url(path)
        if kwargs.get("lazy") is True and not local:
            from .proxies import open_lazy  # the proxies, loaded when one is met

            return open_lazy(path, mode, offset, kwargs)
        if kwargs.get("max_concurrency") is not None and kwargs.get("lazy") is not True:
            raise NotImplementedError("max_concurrency= is for lazy=True proxies of URLs")
        cache = kwargs.get("cache_storage")
        if cache is not None and not local:
            if mode not in ("r", None):
                raise NotImplementedError(
                    f"mode={mode!r} with cache_storage=: a cached URL is read, "
                    "open it with mode='r'"
                )
            if path.rstrip("/").endswith(".b2d"):  # a directory store: read from a local copy
                rest = {
                    k: v for k, v in kwargs.items() if k not in ("cache_storage", "storage_options")
                }
                return open(
                    localize(path, cache, options.get("storage_options")), "r", offset, **rest
                )
        if not (offset and local):
            cls = store_class(path, options) if path.endswith(STORE_SUFFIXES) else None
            if cls is not None:
                return _open_store(cls, path, mode, offset, kwargs)
    frame_kwargs = {k: v for k, v in kwargs.items() if k != "deserialize"}
    try:
        schunk = open_schunk(urlpath, mode, offset, **frame_kwargs)
        if SOURCE_META in {name for name, _ in schunk.metalayers}:
            from .proxies import open_proxy

            return open_proxy(schunk, kwargs.get("deserialize", "safe"), open)
        return container_of(schunk, kwargs.get("deserialize", "safe"))
    except (Blosc2Error, OSError) as exc:
        if not isinstance(urlpath, str | os.PathLike) or offset:
            raise
        found = _aliased_store(os.fsdecode(urlpath), kwargs)
        if found is None:
            raise
        cls, store_path = found
        try:
            return _open_store(cls, store_path, mode, offset, kwargs)
        except FileNotFoundError:
            raise exc from None


def _aliased_store(path: str, kwargs: dict[str, Any]) -> tuple[type[Any], str] | None:
    """A store at ``path`` that is not named like one (a directory with ``embed.b2e``, a zip
    archive), or at ``path`` plus a store suffix."""
    options = {k: kwargs[k] for k in ("storage_options",) if kwargs.get(k)}
    layers = _store_layers(path, options)
    for layer, cls in _BY_LAYER.items():
        if layer in layers:
            return cls, path
    if is_url(path) or os.path.exists(path):
        return None
    for suffix in STORE_SUFFIXES:
        if os.path.exists(path + suffix):
            found = store_class(path + suffix)
            return (found, path + suffix) if found is not None else None
    return None


def from_cframe(cframe: Any, copy: bool = True, *, deserialize: str = "safe") -> Any:
    """The container in an in-memory cframe: an :class:`EmbedStore` for one (metalayer
    ``b2embed``), else what :func:`.leaves.container_of` finds.

    >>> import numpy as np
    >>> e = EmbedStore(); e["/a"] = np.arange(3)
    >>> type(from_cframe(e.to_cframe())).__name__
    'EmbedStore'
    """
    mode = check_deserialize(deserialize)
    schunk: SChunk = schunk_from_cframe(cframe, copy)
    if "b2embed" in {name for name, _ in schunk.metalayers}:
        return EmbedStore(_from_schunk=schunk, deserialize=mode)
    return container_of(schunk, mode)
