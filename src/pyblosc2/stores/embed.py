"""EmbedStore: values kept whole inside one super-chunk (python-blosc2's ``EmbedStore``,
a ``.b2e`` file, or the ``embed.b2e`` of a DictStore/TreeStore).

The layout, as python-blosc2 4.x writes it: an SChunk of bytes (``typesize=1``, chunks of
``chunksize`` bytes, 8 KiB by default) with the metalayer ``b2embed`` (``b2dict``/``b2tree``
inside a DictStore/TreeStore) holding ``{"version": 1}``. Each value is its cframe, written
at ``current_offset`` (the end of the data); the vlmeta entry ``estore_metadata`` maps it:
``{"embed_map": {key: {"offset": o, "length": n}}, "current_offset": end}``. A reference to
a remote Caterva2 array is ``{"urlbase": ..., "path": ...}`` instead. Deleting a key drops its
map entry only (the bytes stay, unreachable, until the store is rewritten).

A change writes the data first and the map second, each through the frame's crash-safe
commit: a killed write leaves the old map (and perhaps unreachable bytes), never a key that
points at bytes not written. With locking (``Storage(locking=True)`` or ``BLOSC_LOCKING``),
each change holds the frame's exclusive lock and starts from the map as stored, and reads
follow the changes of other handles and processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, KeysView
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from ..backends.lock import locking_requested
from ..errors import FormatError, ParamError, ParamTypeError
from ..meta import unpack_vlmeta
from ..ndarray.constructors import asarray
from ..params import CParams, DParams
from ..schunk import SChunk
from ..schunk import open as open_schunk
from ..storage import Storage
from ..vlarrays import Origin
from .keys import check_key
from .leaves import check_deserialize, leaf_from_cframe

__all__ = ["EmbedStore", "estore_from_cframe"]

MAP_ENTRY = "estore_metadata"
DEFAULT_CHUNKSIZE = 2**13


def _check_mmap(mode: str, mmap_mode: str | None, what: str) -> None:
    if mmap_mode not in (None, "r"):
        raise ParamError(f"For {what} containers, mmap_mode must be None or 'r'")
    if mmap_mode == "r" and mode != "r":
        raise ParamError(f"For {what} containers, mmap_mode='r' requires mode='r'")


class EmbedStore:
    """A dict-like store of arrays kept inside one super-chunk.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "example.b2e")
    >>> estore = EmbedStore(path, mode="w")
    >>> estore["/node1"] = np.array([1, 2, 3])
    >>> estore["/node2"] = SChunk(data=b"hello")
    >>> sorted(EmbedStore(path, mode="r").keys())
    ['/node1', '/node2']
    >>> EmbedStore(path, mode="r")["/node1"][:]
    array([1, 2, 3])
    """

    def __init__(
        self,
        urlpath: str | os.PathLike[str] | None = None,
        mode: str = "a",
        cparams: CParams | dict[str, Any] | None = None,
        dparams: DParams | dict[str, Any] | None = None,
        storage: Storage | dict[str, Any] | None = None,
        chunksize: int | None = DEFAULT_CHUNKSIZE,
        _from_schunk: SChunk | None = None,
        *,
        mmap_mode: str | None = None,
        meta: dict[str, Any] | None = None,
        deserialize: str | None = None,
    ) -> None:
        self._deserialize = check_deserialize(deserialize or "safe")
        if _from_schunk is not None:
            self._adopt(_from_schunk)
            return
        if mode not in ("r", "a", "w"):
            raise ParamError(
                f"For EmbedStore containers, mode must be 'r', 'a' or 'w', got {mode!r}"
            )
        _check_mmap(mode, mmap_mode, "EmbedStore")
        self.urlpath = None if urlpath is None else os.fsdecode(urlpath)
        self.mode = mode
        self.mmap_mode = mmap_mode
        self.cparams = CParams.from_any(cparams) if cparams is not None else CParams()
        self.dparams = DParams.from_any(dparams) if dparams is not None else DParams()
        if isinstance(storage, dict):
            storage = Storage(**storage)
        self.storage = storage or Storage(contiguous=True, urlpath=self.urlpath, mode=mode)
        if self.urlpath is None and self.storage.urlpath is not None:
            self.urlpath = self.storage.path
        path = self.urlpath
        if path is not None and mode == "r" and not os.path.exists(path):
            raise FileNotFoundError(f"No such EmbedStore: {path}")
        if path is not None and mode in ("r", "a") and os.path.exists(path):
            kwargs: dict[str, Any] = {"mmap_mode": mmap_mode} if mmap_mode else {}
            if self.storage.locking:
                kwargs["locking"] = True
            store = open_schunk(path, mode, 0, **kwargs)
            self._adopt(store, storage=self.storage)
            return
        layers = meta if meta is not None else {"b2embed": {"version": 1}}
        self.storage = replace(
            self.storage,
            urlpath=path,
            mode="w" if path is not None else self.storage.mode,
            contiguous=True,
            meta=dict(layers),
        )
        self._store = SChunk(
            chunksize=chunksize,
            cparams=replace(self.cparams, typesize=1),
            dparams=self.dparams,
            storage=self.storage,
        )
        if path is not None:
            self.mode = mode
        self._embed_map: dict[str, dict[str, Any]] = {}
        self._current_offset = 0
        self._seen: bytes | None = None
        self._shared = self._is_shared()
        # the (empty) map is written right away, so another handle always finds one
        self._save_metadata()

    #: the store whose members this store's values are (set by a DictStore to its own path)
    _origin: str | None = None

    @property
    def origin_path(self) -> str | None:
        """Where this store's values are members of (a saved expression among them looks
        for its operands there): the DictStore holding it, else this store's own file."""
        return self._origin if self._origin is not None else self.urlpath

    @origin_path.setter
    def origin_path(self, path: str | None) -> None:
        self._origin = path

    def _adopt(self, store: SChunk, storage: Storage | None = None) -> None:
        """Take over an open super-chunk (``_from_schunk``, or one opened from a file)."""
        self._store = store
        self.urlpath = store.urlpath
        self.mode = store.mode
        self.mmap_mode = store._storage.mmap_mode
        self.cparams = store.cparams
        self.dparams = store.dparams
        self.storage = storage or Storage(
            contiguous=True, urlpath=store.urlpath, mode=store.mode, mmap_mode=self.mmap_mode
        )
        self.storage = replace(self.storage, meta=dict(store.meta.items()))
        self._seen = None
        self._shared = self._is_shared()
        self._load_metadata()

    def _is_shared(self) -> bool:
        """Whether other processes may change this store (on disk, with locking)."""
        return (
            self.urlpath is not None
            and self.mmap_mode is None
            and (self._store.locking or locking_requested(self.storage.locking))
        )

    # -- the map ------------------------------------------------------------------------------
    def _raw_map(self) -> bytes | None:
        for name, stored in self._store.vlmeta_entries:
            if name == MAP_ENTRY:
                return stored
        return None

    def _load_metadata(self) -> None:
        """Read the map as stored (decoded only when it changed since last read)."""
        raw = self._raw_map()
        if raw is not None and raw == self._seen:
            return
        self._seen = raw
        if raw is None:
            self._embed_map, self._current_offset = {}, 0
            return
        where = f"EmbedStore {self.urlpath or '(in memory)'}"
        try:
            data = unpack_vlmeta(raw)
            embed_map, offset = data["embed_map"], int(data["current_offset"])
        except (ValueError, TypeError, KeyError) as exc:
            raise FormatError(where, MAP_ENTRY, None, "a map of the stored values", exc) from None
        if not isinstance(embed_map, dict):
            raise FormatError(where, "embed_map", None, "a map", type(embed_map).__name__)
        nbytes = self._store.nbytes
        for key, entry in embed_map.items():
            if not isinstance(entry, dict):
                raise FormatError(where, f"entry {key!r}", None, "a map", entry)
            if "urlbase" in entry:
                continue
            o, n = entry.get("offset"), entry.get("length")
            if not isinstance(o, int) or not isinstance(n, int) or o < 0 or n < 0 or o + n > nbytes:
                raise FormatError(
                    where, f"entry {key!r}", None, f"a range inside {nbytes} bytes", entry
                )
        self._embed_map, self._current_offset = embed_map, offset

    def _save_metadata(self) -> None:
        self._store.vlmeta[MAP_ENTRY] = {
            "embed_map": self._embed_map,
            "current_offset": self._current_offset,
        }
        self._seen = self._raw_map()

    def _sync_metadata(self) -> None:
        """Follow the changes of other handles (a no-op unless shared)."""
        if self._shared:
            self._load_metadata()

    def _reading(self) -> AbstractContextManager[Any]:
        """What a read holds: the lock when shared, so map and data agree."""
        return self._store.holding_lock() if self._shared else nullcontext()

    def _check_writable(self) -> None:
        if self.mode == "r":
            raise ParamError("Cannot set or delete items in an EmbedStore opened read-only")

    # -- the mapping --------------------------------------------------------------------------
    def __setitem__(self, key: str, value: Any) -> None:
        """Store a copy of ``value`` (an NDArray, SChunk, numpy array or another container
        with a super-chunk) under a new ``key``."""
        self._check_writable()
        check_key(key)
        if isinstance(value, np.ndarray):
            value = asarray(value, cparams=self.cparams, dparams=self.dparams)
        with self._store.holding_lock():
            self._sync_metadata()
            if key in self._embed_map:
                raise ParamError(f"Key '{key}' already exists in store.")
            self._put(key, value)

    def _put(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``, replacing its value if any, in one map change
        (DictStore's overwrite: old or new value after a crash, never neither)."""
        self._check_writable()
        check_key(key)
        if isinstance(value, np.ndarray):
            value = asarray(value, cparams=self.cparams, dparams=self.dparams)
        cframe = _cframe_of(value)
        with self._store.holding_lock():
            self._sync_metadata()
            offset = self._current_offset
            self._store[offset : offset + len(cframe)] = cframe
            self._current_offset = offset + len(cframe)
            self._embed_map[key] = {"offset": offset, "length": len(cframe)}
            self._save_metadata()

    def __getitem__(self, key: str) -> Any:
        with self._reading():
            self._sync_metadata()
            if key not in self._embed_map:
                raise KeyError(f"Key '{key}' not found in the embed store.")
            entry = self._embed_map[key]
            if "urlbase" in entry:
                raise NotImplementedError(
                    f"opening {key!r}: a reference to a Caterva2 remote array (C2Array) at "
                    f"{entry.get('urlbase')!r}"
                )
            offset, length = entry["offset"], entry["length"]
            cframe = self._store[offset : offset + length]
        origin = Origin(self.origin_path, key) if self.origin_path is not None else None
        return leaf_from_cframe(cframe, self._deserialize, origin)

    def get(self, key: str, default: Any = None) -> Any:
        """The value at ``key``, or ``default`` when there is none."""
        try:
            return self[key]
        except KeyError:
            return default

    def __delitem__(self, key: str) -> None:
        self._check_writable()
        with self._store.holding_lock():
            self._sync_metadata()
            if key not in self._embed_map:
                raise KeyError(f"Key '{key}' not found in the embed store.")
            del self._embed_map[key]
            self._save_metadata()

    def __contains__(self, key: object) -> bool:
        self._sync_metadata()
        return key in self._embed_map

    def __len__(self) -> int:
        self._sync_metadata()
        return len(self._embed_map)

    def __iter__(self) -> Iterator[str]:
        self._sync_metadata()
        return iter(list(self._embed_map))

    def keys(self) -> KeysView[str]:
        """The keys of the stored values."""
        self._sync_metadata()
        return self._embed_map.keys()

    def values(self) -> Iterator[Any]:
        """Every stored value (each read from its frame)."""
        for key in list(self.keys()):
            yield self[key]

    def items(self) -> Iterator[tuple[str, Any]]:
        """Every ``(key, value)`` pair."""
        for key in list(self.keys()):
            yield key, self[key]

    def entry(self, key: str) -> dict[str, Any]:
        """Where ``key`` lies in the super-chunk: ``{"offset", "length"}`` (a copy; a
        pyblosc2 extension).

        >>> e = EmbedStore(); e["/a"] = np.arange(3); e.entry("/a")["offset"]
        0
        """
        self._sync_metadata()
        return dict(self._embed_map[key])

    def cframe(self, key: str) -> bytes:
        """The frame of the value under ``key`` as stored, whatever it holds (a pyblosc2
        extension, for tools that check frames).

        >>> e = EmbedStore(); e["/a"] = np.arange(3); e.cframe("/a")[:10]
        b'\\x9e\\xa8b2frame\\x00'
        """
        with self._reading():
            entry = self.entry(key)
            if "urlbase" in entry:
                raise NotImplementedError(f"{key!r} is a reference to a C2Array, not a frame")
            return self._store[entry["offset"] : entry["offset"] + entry["length"]]

    def to_cframe(self) -> bytes:
        """The store as a cframe (:func:`pyblosc2.from_cframe` opens it again)."""
        return self._store.to_cframe()

    def __enter__(self) -> EmbedStore:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return f"EmbedStore({self.urlpath!r}, mode={self.mode!r}, {len(self)} keys)"


def _cframe_of(value: Any) -> bytes:
    to_cframe = getattr(value, "to_cframe", None)
    if to_cframe is None:
        raise ParamTypeError(
            "a store holds NDArray, SChunk, numpy arrays and containers with a super-chunk, "
            f"got {type(value).__name__}"
        )
    return bytes(to_cframe())


def estore_from_cframe(cframe: Any, copy: bool = False, *, deserialize: str = "safe") -> EmbedStore:
    """The EmbedStore in an in-memory cframe.

    >>> e = EmbedStore(); e["/a"] = np.arange(3)
    >>> estore_from_cframe(e.to_cframe())["/a"][:]
    array([0, 1, 2])
    """
    from ..schunk import schunk_from_cframe

    return EmbedStore(_from_schunk=schunk_from_cframe(cframe, copy), deserialize=deserialize)
