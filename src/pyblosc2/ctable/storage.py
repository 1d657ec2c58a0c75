"""Where a CTable's arrays live, with python-blosc2 4.x's layout.

A table is a group of leaves under its root (a TreeStore of its own for a standalone
``.b2d``/``.b2z`` table, a key of an outer TreeStore for an inline one)::

    /_meta           SChunk, no data; vlmeta: kind="ctable", version=1, schema=<JSON>
    /_valid_rows     bool NDArray, one item per physical row: True for a live row
    /_cols/<name>    NDArray, one per column (the name percent-encoded)

Rows are deleted by clearing their ``_valid_rows`` item (python-blosc2's tombstones); the
arrays keep spare capacity past the last live row while a table is open, trimmed on close.
``_meta``'s vlmeta may also hold python-blosc2's index catalog (``index_catalog``) and the
``value_epoch``/``visibility_epoch`` counters (:mod:`.indexes` builds and reads them); a
change of values marks the catalog's indexes stale as python-blosc2 does. The
schema document is JSON from a file: it is bounded (size, nesting) before it is decoded
(:func:`pyblosc2.meta.jsondoc.loads_json`).

The stores plug in here (:func:`register_tree_opener`): this package sits below them, and a
standalone table asks the registered opener for its TreeStore.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ..errors import FormatError, ParamError
from ..meta.jsondoc import loads_json
from ..ndarray.constructors import zeros
from ..ndarray.ndarray import NDArray
from ..schunk import SChunk
from .nested import relpath
from .nulls import NOTNULL_SUFFIX

__all__ = [
    "EmbedLeaves",
    "Leaves",
    "TableStorage",
    "col_key",
    "register_embed_opener",
    "register_tree_opener",
]

META_KEY = "/_meta"
VALID_ROWS_KEY = "/_valid_rows"
COLS_DIR = "/_cols/"
KIND = "ctable"
CATALOG_KEY = "index_catalog"  # _meta vlmeta: {key: descriptor} (python-blosc2's)
INDEXES_DIR = "_indexes"  # the root's directory of index sidecars
MODES = ("r", "a", "w")


class Leaves(Protocol):
    """The leaves of one table root, keys relative to it (``/_meta``, ``/_cols/x``)."""

    mode: str

    def get(self, key: str) -> Any: ...
    def put(self, key: str, value: Any) -> Any: ...  # stored as a file; a live handle back
    def has(self, key: str) -> bool: ...
    def touch(self) -> None: ...  # the leaves changed through their handles
    def delete(self, key: str) -> None: ...
    def close(self) -> None: ...


_TREE_OPENERS: list[Callable[[str, str], Leaves]] = []


def register_tree_opener(opener: Callable[[str, str], Leaves]) -> None:
    """Install the opener of standalone tables' stores (``opener(urlpath, mode)``); the
    stores register theirs when they are imported."""
    _TREE_OPENERS[:] = [opener]


def open_tree(urlpath: str, mode: str) -> Leaves:
    if not _TREE_OPENERS:
        raise NotImplementedError("persistent CTables need pyblosc2.stores (import pyblosc2)")
    return _TREE_OPENERS[0](urlpath, mode)


class EmbedLeaves(Leaves, Protocol):
    """The leaves of a table held in an in-memory EmbedStore (a table's cframe)."""

    def to_cframe(self) -> bytes: ...


_EMBED_OPENERS: list[Callable[[Any, bool], EmbedLeaves]] = []


def register_embed_opener(opener: Callable[[Any, bool], EmbedLeaves]) -> None:
    """Install the opener of tables' cframes (``opener(cframe or None, copy)``: an empty
    writable EmbedStore for None, else the read-only one the cframe holds)."""
    _EMBED_OPENERS[:] = [opener]


def open_embed(cframe: Any, copy: bool = True) -> EmbedLeaves:
    if not _EMBED_OPENERS:
        raise NotImplementedError("CTable cframes need pyblosc2.stores (import pyblosc2)")
    return _EMBED_OPENERS[0](cframe, copy)


def col_key(name: str) -> str:
    """The key of column ``name``: python-blosc2 percent-encodes ``%``, ``/``, ``.``, ``\\``
    in each segment of a dotted name (``trip.lon`` is ``/_cols/trip/lon``).

    >>> col_key("a/b")
    '/_cols/a%2Fb'
    """
    return COLS_DIR + relpath(name)  # a dotted name: one level per segment (nested.py)


class TableStorage:
    """The arrays of one table: in memory (``leaves`` None) or leaves of a store."""

    def __init__(self, leaves: Leaves | None, *, owns_leaves: bool = False) -> None:
        self.leaves = leaves
        self.owns_leaves = owns_leaves
        self.read_only = leaves is not None and leaves.mode == "r"
        self._meta: SChunk | None = None
        self._stale_marked = False
        self._mem: dict[str, Any] = {}  # an in-memory table's catalog and counters
        self._catalog_revision = 0

    # -- arrays -------------------------------------------------------------------------------
    def install(self, key: str, array: NDArray) -> NDArray:
        """Keep ``array`` as leaf ``key``; the handle to write through from now on."""
        if self.leaves is None:
            return array
        return self.leaves.put(key, array)

    def open_array(self, key: str) -> NDArray:
        value = None
        if self.leaves is not None:
            with contextlib.suppress(KeyError):  # a leaf the store refused raises why
                value = self.leaves.get(key)
        if value is None:
            raise FormatError("CTable", key, 0, "a stored NDArray", "nothing")
        if not isinstance(value, NDArray):
            raise FormatError("CTable", key, 0, "an NDArray", type(value).__name__)
        return value

    def delete_array(self, key: str) -> None:
        """Remove leaf ``key`` (a dropped column)."""
        if self.leaves is not None and self.leaves.has(key):
            self.leaves.delete(key)

    def exists(self) -> bool:
        return self.leaves is not None and self.leaves.has(META_KEY)

    # -- python-blosc2's names of the sidecar keys (its ``TableStorage``'s) ----------------
    def _col_key(self, name: str) -> str:
        return col_key(name)

    def _open_store(self) -> Any:
        """The store holding the leaves (``key in store``, ``iter(store)``)."""
        return getattr(self.leaves, "store", self.leaves)

    def has_null_mask(self, name: str) -> bool:
        """Whether column ``name`` has a *stored* validity sidecar (never in memory)."""
        return self.leaves is not None and self.leaves.has(col_key(name) + NOTNULL_SUFFIX)

    def delete_null_mask(self, name: str) -> None:
        """Remove column ``name``'s stored sidecar if it has one."""
        self.delete_array(col_key(name) + NOTNULL_SUFFIX)

    # -- the manifest -------------------------------------------------------------------------
    def meta(self) -> SChunk:
        if self._meta is None:
            if self.leaves is None or not self.leaves.has(META_KEY):
                raise FileNotFoundError("no CTable manifest (/_meta) here")
            meta = self.leaves.get(META_KEY)
            if not isinstance(meta, SChunk):
                raise FormatError("CTable", META_KEY, 0, "an SChunk", type(meta).__name__)
            kind = meta.vlmeta.get("kind")
            if kind != KIND and kind != KIND.encode():
                raise FormatError("CTable", f"{META_KEY} vlmeta 'kind'", 0, KIND, kind)
            self._meta = meta
        return self._meta

    def load_schema(self) -> dict[str, Any]:
        raw = self.meta().vlmeta.get("schema")
        if not isinstance(raw, str | bytes):  # bytes: UTF-8, checked by loads_json
            raise FormatError(
                "CTable", f"{META_KEY} vlmeta 'schema'", 0, "a JSON str", type(raw).__name__
            )
        doc = loads_json(raw, "CTable", f"{META_KEY} vlmeta 'schema'")
        if not isinstance(doc, dict):
            raise FormatError("CTable", f"{META_KEY} vlmeta 'schema'", 0, "a JSON object", doc)
        return doc

    def save_schema(self, doc: dict[str, Any]) -> None:
        """Write a new manifest (a table being created)."""
        if self.leaves is None:
            return
        meta = SChunk()
        meta.vlmeta["kind"] = KIND
        meta.vlmeta["version"] = 1
        meta.vlmeta["schema"] = json.dumps(doc)
        self._meta = self.leaves.put(META_KEY, meta)

    def replace_schema(self, doc: dict[str, Any]) -> None:
        """Write ``doc`` as the stored schema (the columns changed)."""
        if self.leaves is None or self.read_only:
            return
        self.meta().vlmeta["schema"] = json.dumps(doc)
        self.leaves.touch()

    def update_schema(self, **entries: Any) -> None:
        """Set table-wide entries of the stored schema (``n_rows``, ...; None removes one)."""
        if self.leaves is None or self.read_only:
            return
        doc = self.load_schema()
        new = {k: v for k, v in {**doc, **entries}.items() if v is not None}
        if new != doc:
            self.meta().vlmeta["schema"] = json.dumps(new)
            self.leaves.touch()

    def mark_changed(self, *, rows_deleted: bool = False) -> None:
        """The values or the live rows changed: the ``value_epoch`` (or, for deleted rows
        only, the ``visibility_epoch``) counter is bumped, and after a value change every
        index of the catalog is stale (python-blosc2's rule: a delete leaves an index
        usable, its rows being checked against ``_valid_rows``)."""
        if self.read_only:
            return
        self.bump_visibility_epoch() if rows_deleted else self.bump_value_epoch()
        if not rows_deleted and not self._stale_marked:
            catalog = self._raw_catalog()
            if catalog:
                for desc in catalog.values():
                    if isinstance(desc, dict):
                        desc["stale"] = True
                self._put_raw_catalog(catalog)
            self._stale_marked = True
        if self.leaves is not None:
            self.leaves.touch()

    def has_indexes(self) -> bool:
        return bool(self._raw_catalog())

    # -- the index catalog (python-blosc2's; ctable/indexes.py builds and reads it) ----------
    def _counters(self) -> Any:
        return self._mem if self.leaves is None else self.meta().vlmeta

    def _raw_catalog(self) -> dict[str, Any] | None:
        raw = self._counters().get(CATALOG_KEY)
        return raw if isinstance(raw, dict) else None

    def _put_raw_catalog(self, catalog: dict[str, Any]) -> None:
        self._counters()[CATALOG_KEY] = catalog
        self._catalog_revision += 1

    def load_index_catalog(self) -> dict[str, Any]:
        """The index catalog as stored (``{key: descriptor}``, unchecked: see
        :func:`pyblosc2.ctable.indexcat.check_catalog`)."""
        return copy.deepcopy(self._raw_catalog() or {})

    def save_index_catalog(self, catalog: dict[str, Any]) -> None:
        if self.read_only:
            raise ParamError("Table is read-only (opened with mode='r').")
        self._put_raw_catalog(copy.deepcopy(catalog))
        self._stale_marked = False
        if self.leaves is not None:
            self.leaves.touch()

    def index_catalog_revision(self) -> int:
        return self._catalog_revision

    def get_epoch_counters(self) -> tuple[int, int]:
        """``(value_epoch, visibility_epoch)``."""
        c = self._counters()
        return int(c.get("value_epoch", 0) or 0), int(c.get("visibility_epoch", 0) or 0)

    def bump_value_epoch(self) -> int:
        c = self._counters()
        c["value_epoch"] = int(c.get("value_epoch", 0) or 0) + 1
        return int(c["value_epoch"])

    def bump_visibility_epoch(self) -> int:
        c = self._counters()
        c["visibility_epoch"] = int(c.get("visibility_epoch", 0) or 0) + 1
        return int(c["visibility_epoch"])

    def working_dir(self) -> str | None:
        """The directory of this table's root in its store (None: no files of its own)."""
        store = getattr(self.leaves, "store", None)
        base = getattr(store, "working_dir", None)
        if not isinstance(base, str):
            return None
        prefix = str(getattr(self.leaves, "prefix", "")).strip("/")
        return os.path.join(base, *prefix.split("/")) if prefix else base

    def index_members(self, key: str) -> dict[str, tuple[str, int]]:
        """In a ``.b2z`` read in place: the index ``key``'s pieces as ``{file name:
        (archive, offset)}`` (its stored members; none when the store is a directory)."""
        store: Any = getattr(self.leaves, "store", None)
        offsets = getattr(store, "offsets", None)
        if not getattr(store, "is_zip_store", False) or not isinstance(offsets, dict):
            return {}
        prefix = str(getattr(self.leaves, "prefix", "")).strip("/")
        prefix = f"{prefix}/{INDEXES_DIR}/{key}/" if prefix else f"{INDEXES_DIR}/{key}/"
        out = {}
        for name, m in offsets.items():
            rest = name[len(prefix) :] if name.startswith(prefix) else ""
            if rest and "/" not in rest and m.get("stored", False):
                out[rest] = (str(store.b2z_path), int(m["offset"]))
        return out

    def index_anchor_path(self, key: str) -> str | None:
        """python-blosc2's anchor of an index's sidecars: ``<root>/_indexes/<key>/_anchor``."""
        root = self.working_dir()
        return None if root is None else os.path.join(root, INDEXES_DIR, key, "_anchor")

    def close(self) -> None:
        if self.leaves is not None and self.owns_leaves:
            leaves, self.leaves = self.leaves, None
            leaves.close()


def check_mode(mode: Any) -> str:
    if mode not in MODES:
        raise ParamError(f"mode must be one of {MODES}, got {mode!r}")
    return str(mode)


def new_valid_rows(capacity: int, chunks: Any = None, blocks: Any = None) -> NDArray:
    """An all-deleted ``_valid_rows`` mask of ``capacity`` rows (on a grid if given)."""
    return zeros((capacity,), dtype=np.bool_, chunks=chunks, blocks=blocks)
