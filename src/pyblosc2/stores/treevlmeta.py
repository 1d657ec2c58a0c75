"""The vlmeta of a TreeStore group, and the objects a TreeStore holds as subtrees (layout of
python-blosc2 4.x).

A group's vlmeta (``tstore.vlmeta``, ``tstore["/g"].vlmeta``) is the vlmeta of an empty
SChunk stored as the leaf ``<group>/__vlmeta__`` (``/__vlmeta__`` for the root), created on
the first write; that leaf is hidden from the tree's keys.

python-blosc2 also stores whole objects as subtrees, e.g. a ``CTable`` at ``/table`` with
its columns under ``/table/_cols/...`` and a manifest SChunk at ``/table/_meta`` (vlmeta
``kind: "ctable"``). The object roots are listed in the vlmeta entry ``_object_registry`` of
the embedded store (``{root: {"kind", "version", "layout", ...}}``); a store without that
entry is probed for manifests. A TreeStore shows an object root as one key, hides its
insides, and refuses writes into them; pyblosc2 does not open such objects
(:class:`NotImplementedError` names them).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any, Protocol

from ..errors import ParamError
from ..schunk import SChunk

__all__ = ["REGISTRY", "GroupVLMeta", "object_kind_name"]

REGISTRY = "_object_registry"
_OBJECT_NAMES = {
    "ctable": "CTable (python-blosc2's columnar table)",
    "remote_store": "RemoteStore reference (a remote group)",
}


def object_kind_name(kind: str) -> str:
    """What a registered object of ``kind`` is, for error messages.

    >>> object_kind_name("ctable")
    "CTable (python-blosc2's columnar table)"
    """
    return _OBJECT_NAMES.get(kind, f"object of kind {kind!r}")


class _Tree(Protocol):
    """What a group's vlmeta needs of its TreeStore."""

    @property
    def mode(self) -> str: ...

    def _store_group_vlmeta(self, key: str, holder: SChunk) -> None: ...


class GroupVLMeta(MutableMapping[str, Any]):
    """The vlmeta of one TreeStore group: reads from its SChunk, writes stored at once;
    ``[:]`` reads all entries as a dict and ``[:] = mapping`` merges ``mapping`` in.

    >>> import tempfile, os
    >>> from pyblosc2.stores import TreeStore
    >>> t = TreeStore(os.path.join(tempfile.mkdtemp(), "t.b2d"), mode="w")
    >>> t.vlmeta["author"] = "me"; t.vlmeta[:] = {"year": 2025}
    >>> t.vlmeta[:]
    {'author': 'me', 'year': 2025}
    """

    def __init__(self, tstore: _Tree, key: str, holder: SChunk) -> None:
        self._tstore = tstore
        self._key = key
        self._holder = holder

    def _check_writable(self) -> None:
        if self._tstore.mode == "r":
            raise ParamError("TreeStore is in read-only mode")

    def __setitem__(self, name: Any, value: Any) -> None:
        self._check_writable()
        if isinstance(name, slice):
            if name.start is not None or name.stop is not None or name.step is not None:
                raise NotImplementedError("Slicing is not supported, unless [:]")
            self._holder.vlmeta.update_all(dict(value))
        else:
            self._holder.vlmeta[name] = value
        self._tstore._store_group_vlmeta(self._key, self._holder)

    def __getitem__(self, name: Any) -> Any:
        if isinstance(name, slice):
            if name.start is not None or name.stop is not None or name.step is not None:
                raise NotImplementedError("Slicing is not supported, unless [:]")
            return {k: self._holder.vlmeta[k] for k in self._holder.vlmeta}
        return self._holder.vlmeta[name]

    def __delitem__(self, name: str) -> None:
        self._check_writable()
        del self._holder.vlmeta[name]
        self._tstore._store_group_vlmeta(self._key, self._holder)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._holder.vlmeta))

    def __len__(self) -> int:
        return len(self._holder.vlmeta)

    def __repr__(self) -> str:
        return f"GroupVLMeta({self[:]!r})"
