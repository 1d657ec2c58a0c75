"""CTables in stores: a table's leaves as keys of a store (python-blosc2's
``TreeStoreTableStorage``/``FileTableStorage``), the opener of standalone tables, and the
inline tables of a TreeStore (``tstore["/t"] = table`` writes its live rows under ``/t``;
``tstore["/t"]`` opens it, writable in a store opened for writing).

A table's leaves are always files of their own (python-blosc2 forces ``threshold=0`` for
them), so their handles write straight into the store; a change marks the store changed, so
a ``.b2z`` is packed again on close.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ctable.storage import TableStorage, register_embed_opener, register_tree_opener
from ..errors import FormatError, ParamError
from ..schunk import schunk_from_cframe
from .dictstore import DictStore
from .embed import EmbedStore, estore_from_cframe

if TYPE_CHECKING:
    from ..ctable import CTable

__all__ = ["EmbedLeaves", "StoreLeaves", "open_inline", "root_table", "write_inline"]

INLINE_LAYOUT = {"kind": "ctable", "version": 1, "layout": "inline-tree-subtree"}


class StoreLeaves:
    """The leaves under ``prefix`` of a store, by keys relative to it."""

    def __init__(self, store: DictStore, prefix: str = "", *, owner: bool = False) -> None:
        self.store, self.prefix, self.owner = store, prefix, owner
        self.mode = store.mode

    def get(self, key: str) -> Any:
        return DictStore.__getitem__(self.store, self.prefix + key)

    def has(self, key: str) -> bool:
        """Whether leaf ``key`` is there, or was refused (a symlink out of the store:
        reading it then raises the FormatError saying why)."""
        full = self.prefix + key
        return DictStore.__contains__(self.store, full) or full in self.store._refused

    def put(self, key: str, value: Any) -> Any:
        store = self.store
        store._check_writable()
        store._modified = True
        with store._mutation():
            store._put_external(self.prefix + key, value)
        return self.get(key)

    def touch(self) -> None:
        self.store._modified = True

    def delete(self, key: str) -> None:
        DictStore.__delitem__(self.store, self.prefix + key)

    def close(self) -> None:
        if self.owner:
            self.store.close()


def _open_table_store(urlpath: str, mode: str) -> StoreLeaves:
    """The store of a standalone table: a TreeStore's layout (metalayer ``b2tree``)."""
    tree = {"b2tree": {"version": 1}}
    if mode == "r":
        return StoreLeaves(DictStore(urlpath, mode="r", _storage_meta=tree), owner=True)
    store = DictStore(urlpath, mode=mode, threshold=0, _storage_meta=tree)
    return StoreLeaves(store, owner=True)


register_tree_opener(_open_table_store)


class EmbedLeaves:
    """The leaves of a table in an in-memory EmbedStore (a table's cframe): values are
    stored as cframes, so a leaf read back is a copy; a store from a cframe is read-only."""

    def __init__(self, store: EmbedStore, mode: str) -> None:
        self.store, self.mode = store, mode

    def get(self, key: str) -> Any:
        return self.store[key]

    def has(self, key: str) -> bool:
        return key in self.store

    def put(self, key: str, value: Any) -> Any:
        self.store[key] = value
        return value

    def delete(self, key: str) -> None:
        del self.store[key]

    def touch(self) -> None:
        pass

    def close(self) -> None:
        pass

    def to_cframe(self) -> bytes:
        return self.store.to_cframe()


def _open_table_cframe(cframe: Any, copy: bool) -> EmbedLeaves:
    if cframe is None:
        return EmbedLeaves(EmbedStore(), "w")
    probe = schunk_from_cframe(cframe, False)
    if "b2embed" not in {name for name, _ in probe.metalayers}:
        raise ParamError("Not an EmbedStore cframe (no b2embed marker): no CTable in it")
    return EmbedLeaves(estore_from_cframe(cframe, copy), "r")


register_embed_opener(_open_table_cframe)


def open_inline(store: DictStore, full_key: str) -> CTable:
    """The table stored inline at ``full_key`` of ``store``."""
    from ..ctable import CTable  # the table code, loaded when a table is met

    storage = TableStorage(StoreLeaves(store, full_key))
    if not storage.exists():
        raise KeyError(f"No inline CTable found at key {full_key!r} in {store.localpath!r}")
    return CTable._from_storage(storage)


def write_inline(store: DictStore, full_key: str, table: Any) -> None:
    """Write the live rows of ``table`` inline at ``full_key`` of ``store``."""
    from ..ctable import CTable

    if not isinstance(table, CTable):
        raise ParamError(f"not a CTable: {type(table).__name__}")
    table._save_into(TableStorage(StoreLeaves(store, full_key)))


def root_table(store: DictStore, mode: str) -> Any:
    """The standalone table a TreeStore opened by ``open`` holds at its root (python-blosc2
    returns the CTable then, for modes ``"r"`` and ``"a"``), else the store itself."""
    refused = "/_meta" in store._refused  # a manifest symlinked out: its FormatError
    if mode not in ("r", "a") or not (refused or DictStore.__contains__(store, "/_meta")):
        return store
    storage = TableStorage(StoreLeaves(store, owner=True), owns_leaves=True)
    try:
        storage.meta()  # a manifest of another kind leaves the store as it is
    except FormatError:
        if refused:
            store.discard()  # nothing to pack back: the store was only opened
            raise
        return store
    from ..ctable import CTable

    return CTable._from_storage(storage)
