"""TreeStore: a DictStore whose keys form a tree (python-blosc2's ``TreeStore``, with the
metalayer ``b2tree`` on its embedded store instead of ``b2dict``).

Keys are ``/``-separated paths (a missing leading ``/`` is added). Data lives in leaves; a
path with something below it is a *group*: ``tstore["/group"]`` returns a subtree view whose
keys are relative to it, a leaf cannot get children and a group cannot get data. ``keys()``
lists leaves and groups, ``walk()`` visits groups as :func:`os.walk` visits directories,
and each group has its own ``vlmeta`` (:mod:`.treevlmeta`). Objects python-blosc2 stores as
subtrees (a ``CTable``) appear as one key whose insides are hidden and protected.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ParamError
from ..schunk import SChunk
from .dictstore import DictStore
from .keys import VLMETA_LEAF, tree_key
from .tables import INLINE_LAYOUT, open_inline, write_inline
from .treevlmeta import REGISTRY, GroupVLMeta, object_kind_name

if TYPE_CHECKING:
    from ..ctable import CTable

__all__ = ["TreeStore"]

_VLMETA_SUFFIX = "/" + VLMETA_LEAF


def _is_vlmeta_key(key: str) -> bool:
    return key.endswith(_VLMETA_SUFFIX)


def _parent(key: str) -> str:
    return key.rsplit("/", 1)[0] or "/"


class TreeStore(DictStore):
    """A hierarchical store: leaves hold data, groups hold leaves and groups.

    It takes DictStore's arguments (a ``.b2z`` archive or a ``.b2d`` directory).

    >>> import tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "my_tstore.b2z")
    >>> with TreeStore(path, mode="w") as tstore:
    ...     tstore["/child0/leaf1"] = np.array([1, 2, 3])
    ...     tstore["/child0/child1/leaf2"] = np.array([4, 5, 6])
    ...     tstore["/child0/child2"] = np.array([7, 8, 9])
    ...     for path_, children, nodes in tstore.walk("/child0"):
    ...         print(path_, sorted(children), sorted(nodes))
    /child0 ['child1'] ['child2', 'leaf1']
    /child0/child1 [] ['leaf2']
    >>> sorted(TreeStore(path, mode="r")["/child0"].keys())
    ['/child1', '/child1/leaf2', '/child2', '/leaf1']
    """

    subtree_path: str
    _root: TreeStore

    def __init__(self, *args: Any, _from_parent_store: TreeStore | None = None, **kwargs: Any):
        if _from_parent_store is not None:  # a subtree view over its root's store
            self.__dict__.update(_from_parent_store.__dict__)
            self._root = _from_parent_store._root
            self._closed = True  # a view never packs nor cleans up the store
            return
        kwargs.setdefault("_storage_meta", {"b2tree": {"version": 1}})
        self._inline_handles: list[Any] = []  # inline tables opened through this store
        super().__init__(*args, **kwargs)
        self.subtree_path = ""
        self._root = self

    # -- keys of this view <-> keys of the store --------------------------------------------
    def _validate_key(self, key: Any) -> str:
        return tree_key(key)

    def _full(self, key: str) -> str:
        """The store key of ``key`` (relative to this view)."""
        if not self.subtree_path:
            return key
        return self.subtree_path if key == "/" else self.subtree_path + key

    def _relative(self, full: str) -> str | None:
        """The key of store key ``full`` in this view (None outside it)."""
        if not self.subtree_path:
            return full
        if full == self.subtree_path:
            return "/"
        if full.startswith(self.subtree_path + "/"):
            return full[len(self.subtree_path) :]
        return None

    def _has(self, full: str) -> bool:
        """Whether the store holds a leaf (of any kind) at store key ``full``."""
        return DictStore.__contains__(self._root, full)

    # -- objects stored as subtrees (python-blosc2's CTable) ----------------------------------
    def _registry(self) -> dict[str, Any]:
        try:
            reg = self._root._estore._store.vlmeta.get(REGISTRY)
        except (ValueError, KeyError):
            return {}
        return dict(reg) if isinstance(reg, dict) else {}

    def _object_info(self, full: str) -> dict[str, Any] | None:
        info = self._registry().get(full)
        if info is None and self._has(full + "/_meta"):
            meta = DictStore.__getitem__(self._root, full + "/_meta")
            kind = meta.vlmeta.get("kind") if isinstance(meta, SChunk) else None
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if kind == "ctable":
                info = {"kind": "ctable", "version": 1, "layout": "inline-tree-subtree"}
        return info if isinstance(info, dict) else None

    def _object_roots(self) -> set[str]:
        """Store keys of the object roots (registered, or found by their manifests)."""
        roots = set(self._registry())
        if not roots:
            for full in DictStore.keys(self._root):
                if full.endswith("/_meta") and full != "/_meta":
                    root = full[: -len("/_meta")]
                    if self._object_info(root) is not None:
                        roots.add(root)
        return roots

    def _view_roots(self) -> set[str]:
        return {r for r in map(self._relative, self._object_roots()) if r is not None}

    @staticmethod
    def _inside(key: str, roots: set[str]) -> bool:
        return any(key != root and key.startswith(root + "/") for root in roots)

    # -- the tree -----------------------------------------------------------------------------
    def keys(self) -> set[str]:
        """Leaves, groups and object roots of this view (relative keys)."""
        found = set()
        for full in DictStore.keys(self._root):
            rel = self._relative(full)
            if rel is not None:
                found.add(_parent(rel) if _is_vlmeta_key(rel) else rel)
        roots = self._view_roots()
        found = {k for k in found if not self._inside(k, roots)}
        keys = found | roots
        for key in list(keys):
            parts = key.split("/")[1:-1]
            for i in range(1, len(parts) + 1):
                keys.add("/" + "/".join(parts[:i]))
        keys.discard("/")
        return keys

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def items(self) -> Iterator[tuple[str, Any]]:
        """Every ``(key, value)`` pair, groups included."""
        for key in self.keys():
            yield key, self[key]

    def values(self) -> Iterator[Any]:
        """Every value, groups included (as subtree views)."""
        for key in self.keys():
            yield self[key]

    def get_children(self, path: str) -> list[str]:
        """The direct children (full keys in this view) of ``path``."""
        path = self._validate_key(path)
        prefix = "/" if path == "/" else path + "/"
        names = {k[len(prefix) :].split("/")[0] for k in self.keys() if k.startswith(prefix)}
        return sorted(prefix + name for name in names if name)

    def get_descendants(self, path: str) -> list[str]:
        """Every key below ``path``."""
        path = self._validate_key(path)
        prefix = "/" if path == "/" else path + "/"
        return sorted(k for k in self.keys() if k.startswith(prefix) and k != path)

    def _is_group(self, key: str, keys: set[str]) -> bool:
        """Whether ``key`` has something below it (or vlmeta of its own)."""
        prefix = "/" if key == "/" else key + "/"
        return any(k.startswith(prefix) for k in keys) or self._has(
            (self._full(key) if key != "/" else self.subtree_path) + _VLMETA_SUFFIX
        )

    def walk(
        self, path: str = "/", topdown: bool = True
    ) -> Iterator[tuple[str, list[str], list[str]]]:
        """Visit the groups under ``path`` as :func:`os.walk` does: ``(path, group names,
        leaf names)``, parents first (``topdown``) or last."""
        path = self._validate_key(path)
        keys = self.keys()
        prefix = "/" if path == "/" else path + "/"
        children = sorted({k[len(prefix) :].split("/")[0] for k in keys if k.startswith(prefix)})
        groups, leaves = [], []
        for name in children:
            child = prefix + name
            if self._is_group(child, keys):
                groups.append(name)
            elif self._has(self._full(child)) or self._object_info(self._full(child)):
                leaves.append(name)
        if topdown:
            yield path, groups, leaves
        for name in groups:
            yield from self.walk(prefix + name, topdown)
        if not topdown:
            yield path, groups, leaves

    def get_subtree(self, path: str) -> TreeStore:
        """A view of the store with ``path`` as its root."""
        path = self._validate_key(path)
        full = self._full(path)
        if self._object_info(full) is not None:
            raise ParamError(
                f"'{path}' is an object root (e.g. CTable), not a TreeStore subtree. "
                f"Use ts['{path}'] to access the object."
            )
        view = TreeStore(_from_parent_store=self)
        view.subtree_path = "" if full == "/" else full
        return view

    # -- the mapping --------------------------------------------------------------------------
    def __contains__(self, key: object) -> bool:
        try:
            key = self._validate_key(key)
        except ParamError:
            return False
        if _is_vlmeta_key(key) or self._inside(key, self._view_roots()):
            return False
        return key in self.keys() or self._has(self._full(key))

    def __getitem__(self, key: str) -> Any:
        """A leaf, an object root, or a subtree view for a group."""
        key = self._validate_key(key)
        if _is_vlmeta_key(key):
            raise KeyError(f"Key '{key}' not found; vlmeta keys are not directly accessible.")
        full = self._full(key)
        info = self._object_info(full)
        if info is not None:
            if info.get("kind") == "ctable":
                table = open_inline(self._root, full)
                self._root._inline_handles.append(table)
                return table
            raise NotImplementedError(
                f"opening {key!r}: a python-blosc2 {object_kind_name(str(info.get('kind')))}"
            )
        if self._is_group(key, self.keys()):
            return self.get_subtree(key)
        if self._has(full) or full in self._root._refused:  # refused: a FormatError says why
            return DictStore.__getitem__(self._root, full)
        raise KeyError(f"Key '{key}' not found")

    def __setitem__(self, key: str, value: Any) -> None:
        """Store a leaf at ``key`` (its groups are made on the way)."""
        key = self._validate_key(key)
        if key == "/" or _is_vlmeta_key(key):
            raise ParamError(f"Cannot assign data to {key!r}")
        from ..ctable import CTable  # the table code, loaded on the first leaf stored

        if isinstance(value, CTable):
            self._set_table(key, value)
            return
        roots = self._view_roots()
        if self._inside(key, roots):
            raise ParamError(
                f"Cannot write to '{key}': it is an internal component of an object root. "
                "Use the object's own API to modify it."
            )
        full = self._full(key)
        if key in roots:
            raise ParamError(
                f"'{key}' is an object root (e.g. CTable). "
                f"Delete it first with `del ts['{key}']` before assigning a new value."
            )
        children = self.get_children(key)
        if children or self._has(full + _VLMETA_SUFFIX):
            raise ParamError(
                f"Cannot assign array to structural path '{key}' that already has children: "
                f"{children}"
            )
        parent = _parent(key)
        if parent != "/" and self._has(self._full(parent)):
            raise ParamError(
                f"Cannot add child '{key}' to path '{parent}' that already contains data"
            )
        DictStore.__setitem__(self._root, full, value)

    def _set_table(self, key: str, table: CTable) -> None:
        """Write ``table`` inline at ``key`` and register it as an object root."""
        self._root._check_writable()
        full = self._full(key)
        if self._object_info(full) is not None:
            raise ParamError(
                f"'{key}' already exists as an object root. Delete it first with `del ts['{key}']`."
            )
        if self._has(full):
            raise ParamError(f"'{key}' already exists as a data leaf. Delete it first.")
        if self._inside(key, self._view_roots()):
            raise ParamError(
                f"Cannot write to '{key}': it is an internal component of an object root."
            )
        children = self.get_children(key)
        if children:
            raise ParamError(
                f"Cannot assign CTable to '{key}': structural children already exist: {children}."
            )
        parent = _parent(key)
        if parent != "/" and self._has(self._full(parent)):
            raise ParamError(
                f"Cannot add child '{key}' to path '{parent}' that already contains data"
            )
        write_inline(self._root, full, table)
        reg = self._registry()
        reg[full] = dict(INLINE_LAYOUT)
        self._root._estore._store.vlmeta[REGISTRY] = reg
        self._root._modified = True

    def __delitem__(self, key: str) -> None:
        """Remove a leaf, or a group with everything below it."""
        key = self._validate_key(key)
        if _is_vlmeta_key(key):
            raise KeyError(f"Key '{key}' not found; vlmeta keys are not directly accessible.")
        full = self._full(key)
        if self._object_info(full) is not None:
            self._delete_object(full)
            return
        if self._inside(key, self._view_roots()):
            raise ParamError(
                f"Cannot delete '{key}': it is an internal component of an object root. "
                "Delete the object root itself."
            )
        prefix = "/" if full == "/" else full + "/"
        stored = [k for k in DictStore.keys(self._root) if k == full or k.startswith(prefix)]
        roots = [r for r in self._object_roots() if r.startswith(prefix)]
        if not stored and not roots:
            raise KeyError(f"Key '{key}' not found")
        for root in sorted(roots, key=len, reverse=True):
            self._delete_object(root)
        for k in stored:
            if self._has(k):
                DictStore.__delitem__(self._root, k)

    def _delete_object(self, full: str) -> None:
        """Remove an object root: its leaves and its registry entry."""
        self._root._check_writable()
        prefix = full + "/"
        for k in [k for k in DictStore.keys(self._root) if k == full or k.startswith(prefix)]:
            DictStore.__delitem__(self._root, k)
        if not self._root.is_zip_store or self._root.mode != "r":
            base = self._root.working_dir
            leftover = os.path.join(base, *full.strip("/").split("/"))
            exact = os.path.join(os.path.realpath(base), *full.strip("/").split("/"))
            # e.g. a CTable's index sidecars; never through a symlink (it may lead out)
            if os.path.isdir(leftover) and os.path.realpath(leftover) == exact:
                shutil.rmtree(leftover, ignore_errors=True)
        reg = self._registry()
        if reg.pop(full, None) is not None:
            self._root._estore._store.vlmeta[REGISTRY] = reg
        self._root._modified = True

    # -- vlmeta -------------------------------------------------------------------------------
    @property
    def vlmeta(self) -> GroupVLMeta:
        """The vlmeta of this group (the root's for the whole tree)."""
        key = (self.subtree_path or "") + _VLMETA_SUFFIX
        holder = DictStore.__getitem__(self._root, key) if self._has(key) else SChunk()
        return GroupVLMeta(self, key, holder)

    @property
    def attrs(self) -> GroupVLMeta:
        """User attributes: :attr:`vlmeta` under another name."""
        return self.vlmeta

    def _store_group_vlmeta(self, key: str, holder: SChunk) -> None:
        """Store a group's vlmeta holder as the leaf ``key`` (unless it is that leaf's own
        file, already written)."""
        root = self._root
        rel = root.map_tree.get(key)
        if rel is not None and holder.urlpath is not None:
            with contextlib.suppress(OSError):
                leaf = os.path.join(root.working_dir, *rel.split("/"))
                if os.path.samefile(holder.urlpath, leaf):
                    root._modified = True  # written through the leaf's own frame
                    return
        DictStore.__setitem__(root, key, holder)

    # -- closing --------------------------------------------------------------------------
    def close(self) -> None:
        """Close the inline tables opened through this store, then the store (a ``.b2z`` is
        packed). A table that fails to close is reported after all the others closed and
        the store was packed and released: its error, or an ``ExceptionGroup`` of them."""
        if self._closed:
            return
        errors: list[Exception] = []
        handles, self._inline_handles = self._inline_handles, []
        for handle in handles:
            try:
                handle.close()
            except Exception as exc:  # noqa: PERF203 (each handle is given its chance)
                errors.append(exc)
        super().close()
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise _exception_group("failed to close inline object handles", errors)

    def discard(self) -> None:
        """Release the store without packing anything back (inline tables are dropped)."""
        self._inline_handles = []
        super().discard()

    # -- python-blosc2 members pyblosc2 does not provide ---------------------------------------
    def open_remote(self, key: str, **kwargs: Any) -> Any:
        """Not implemented: python-blosc2's RemoteStore references (``NotImplementedError``)."""
        raise NotImplementedError("RemoteStore references (python-blosc2's remote groups)")

    def materialize(self, destination: Any, *, overwrite: bool = False) -> Any:
        """Not implemented: python-blosc2's RemoteStore references (``NotImplementedError``)."""
        raise NotImplementedError("materialize: RemoteStore references (remote groups)")

    def _info_contents(self, keys: list[str]) -> str:
        return "\n".join(keys) or "(empty)"


def _exception_group(message: str, errors: list[Exception]) -> Exception:
    group = getattr(builtins, "ExceptionGroup", None)
    if group is None:  # Python 3.10: no groups; the first error is raised
        return errors[0]
    exc: Exception = group(message, errors)
    return exc
