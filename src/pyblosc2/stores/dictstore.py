"""DictStore: a dict of arrays in a directory (``.b2d``) or a zip archive (``.b2z``)
(python-blosc2's ``DictStore``, with its layout).

A store is a directory holding ``embed.b2e`` (an :class:`~.embed.EmbedStore` whose metalayer
``b2dict``, or ``b2tree`` for a TreeStore, marks the store) and one frame file per *external*
leaf, named after its key (``/dir1/node3`` -> ``dir1/node3.b2nd``, see :mod:`.keys`). A
``.b2z`` is that directory as a zip archive of stored members (:mod:`.archive`). Where a
value goes is python-blosc2's ``threshold`` rule: a value of at least ``threshold``
uncompressed bytes is external (``threshold=0``, the default: all of them); with
``threshold=None`` only a value already stored in a file is; the rest are embedded.

Reading a ``.b2z`` (``mode='r'``) opens each member where it lies in the archive (mapped with
``mmap_mode='r'``), without extracting it; a ``.b2z`` at an fsspec URL is read the same way,
by ranges. Writing one (``'w'``/``'a'``) works on an unpacked copy in a temporary directory
beside it, packed back by :meth:`DictStore.close` (or :meth:`DictStore.to_b2z`) into a new
archive renamed over the old one: a crash leaves the old archive or the new one. In a
``.b2d``, each change is made crash-safe on its own: a new leaf is written beside its name and
renamed into place, and a value moving between embedded and external is written in its new
place before it leaves the old one. ``locking=True`` (or ``BLOSC_LOCKING``) shares a ``.b2d``
with other handles and processes, python-blosc2's and pyblosc2's, through the frame lock of
``embed.b2e``.

A ``.b2d`` reads and writes only files inside its directory (:mod:`.discovery`): a leaf that
is a symlink out of it, or not a regular file, is left out of the keys with a warning, and
reading its key is a :class:`FormatError` saying why; an ``embed.b2e`` like that, or a leaf
written through a directory symlink leading out, is a :class:`FormatError` too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from ..backends.directory import is_inside
from ..backends.file import FileStore
from ..backends.lock import locking_requested
from ..backends.mmap import MmapStore
from ..errors import FormatError, MissingPartError, ParamError
from ..frame.location import is_url
from ..ndarray.constructors import asarray
from ..params import CParams, DParams
from ..schunk import open as open_schunk
from ..schunk.members import InfoReport
from ..storage import Storage
from ..vlarrays import Origin, Ref
from .archive import extract_archive
from .discovery import leaves_in_archive, leaves_in_directory, remove_stale_staging, store_file
from .embed import EmbedStore
from .forms import StoreForms, clear_store_directory, remove_path
from .keys import EMBED_NAME, check_key, path_of_key
from .leaves import (
    check_deserialize,
    container_of,
    leaf_at,
    leaf_file,
    leaf_kind,
    leaf_nbytes,
    leaf_suffix,
    leaf_urlpath,
    schunk_in_window,
)
from .zipindex import ZipIndex

__all__ = ["DictStore"]

TICK = "dstore_tick"
MODES = ("r", "a", "w")


def _referenced(value: Any, store: str, key: str) -> Any:
    """``value`` (a member read where it lies) remembering the store and key it was read
    by, as python-blosc2's members do (``_blosc2_ref``): an expression saved over it names
    the member, not the file holding it."""
    with contextlib.suppress(AttributeError):  # an object without a __dict__ keeps none
        value._blosc2_ref = Ref.dictstore_key(store, key)
    return value


class DictStore(StoreForms):
    """A dict-like store of arrays, in a ``.b2d`` directory or a ``.b2z`` zip archive.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "my_dstore.b2z")
    >>> with DictStore(path, mode="w") as dstore:
    ...     dstore["/node1"] = np.array([1, 2, 3])
    ...     dstore["/dir1/node2"] = np.arange(5)
    >>> with DictStore(path, mode="r") as dstore:
    ...     sorted(dstore.keys()), dstore["/dir1/node2"][1:3]
    (['/dir1/node2', '/node1'], array([1, 2]))
    """

    def __init__(
        self,
        localpath: str | os.PathLike[str],
        mode: str = "a",
        tmpdir: str | None = None,
        cparams: CParams | dict[str, Any] | None = None,
        dparams: DParams | dict[str, Any] | None = None,
        storage: Storage | None = None,
        threshold: int | None = 0,
        *,
        mmap_mode: str | None = None,
        locking: bool = False,
        deserialize: str | None = None,
        storage_options: dict[str, Any] | None = None,
        _storage_meta: dict[str, Any] | None = None,
    ) -> None:
        self._closed = True  # until the store is set up (__del__ of a failed __init__)
        self._temp_dir_obj: tempfile.TemporaryDirectory[str] | None = None
        self.localpath = os.fsdecode(localpath)
        if mode not in MODES:
            raise ParamError("For DictStore containers, mode must be 'r', 'w', or 'a'")
        if mmap_mode not in (None, "r"):
            raise ParamError("For DictStore containers, mmap_mode must be None or 'r'")
        if mmap_mode == "r" and mode != "r":
            raise ParamError("For DictStore containers, mmap_mode='r' requires mode='r'")
        if locking and mmap_mode is not None:
            raise ParamError("locking is not supported together with mmap_mode")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int)
        ):
            raise ParamError(f"threshold must be an int or None, got {threshold!r}")
        self.mode, self.mmap_mode, self.threshold = mode, mmap_mode, threshold
        self.cparams = CParams.from_any(cparams) if cparams is not None else CParams()
        self.dparams = DParams.from_any(dparams) if dparams is not None else DParams()
        self.storage = storage or Storage()
        self._locking = bool(locking)
        self._remote = {"storage_options": storage_options} if storage_options else {}
        self._url = is_url(self.localpath)
        existed = self._url or os.path.exists(self.localpath)
        default = "safe" if mode == "r" or (mode == "a" and existed) else "full"
        self._deserialize = check_deserialize(deserialize or default)
        self._meta = dict(_storage_meta or {"b2dict": {"version": 1}})
        self.offsets: dict[str, dict[str, Any]] = {}
        self.map_tree: dict[str, str] = {}
        self._refused: dict[str, str] = {}
        self._archive: ZipIndex | None = None
        self._remote_archive: Any = None  # the FsspecStore of an archive at a URL
        self._modified = False
        self._seen: tuple[tuple[str, bytes], ...] | None = None
        if self._url and mode != "r":
            raise ParamError(f"a store at a URL is read-only: open {self.localpath} with mode='r'")
        if self._url and not self.localpath.endswith(".b2z"):
            raise NotImplementedError(
                f"a store at a URL is read as a .b2z archive; {self.localpath} is not one "
                "(remote .b2d directories are not read: pack the store with to_b2z)"
            )
        self._setup_paths(tmpdir)
        if locking and self.is_zip_store:
            raise ParamError("locking is not supported for zip (.b2z) stores; share them read-only")
        self._closed = False
        try:
            if mode == "r":
                self._open_read()
            else:
                self._open_write()
        except BaseException:
            self.discard()
            raise
        self._shared = self._locking or (
            not self.is_zip_store and mmap_mode is None and locking_requested(False)
        )
        self.storage.meta = dict(self._estore.storage.meta or {})

    # -- where the store lives ------------------------------------------------------------
    def _setup_paths(self, tmpdir: str | None) -> None:
        path = self.localpath
        if self._url:
            self.is_zip_store = True
        elif os.path.exists(path):
            self.is_zip_store = os.path.isfile(path)
        else:
            self.is_zip_store = path.endswith(".b2z")
        if not self.is_zip_store:
            self.working_dir = path
            self.b2z_path = (path[:-4] if path.endswith(".b2d") else path) + ".b2z"
        else:
            self.b2z_path = path
            if self.mode == "r":  # a namespace only: nothing is ever written there
                base = path if self._url else os.path.abspath(path)
                self.working_dir = os.path.splitext(base)[0]
            elif tmpdir is None:
                parent = os.path.dirname(os.path.abspath(path))
                self._temp_dir_obj = tempfile.TemporaryDirectory(
                    prefix="." + os.path.basename(path) + ".", suffix=".work", dir=parent
                )
                self.working_dir = self._temp_dir_obj.name
            else:
                self.working_dir = os.fspath(tmpdir)
        self.estore_path = os.path.join(self.working_dir, EMBED_NAME)

    def _open_read(self) -> None:
        if self.is_zip_store:
            index = self._get_zip_offsets()
            if EMBED_NAME not in index:  # python-blosc2: FileNotFoundError (this is one too)
                raise MissingPartError(
                    f"zip archive {self.b2z_path}", f"member {EMBED_NAME}", None, "present", "none"
                )
            if not index[EMBED_NAME].stored:
                raise FormatError(
                    self.b2z_path,
                    f"member {EMBED_NAME}",
                    index[EMBED_NAME].offset,
                    "stored uncompressed (a .b2z is read in place; unzip it and open the "
                    "directory instead)",
                    "a compressed embed.b2e",
                )
            schunk = self._member(EMBED_NAME)
            self._estore = EmbedStore(_from_schunk=schunk, deserialize=self._deserialize)
            self._estore.origin_path = self.localpath
            self.map_tree = leaves_in_archive(index, self._probe_member)
            return
        if not os.path.isdir(self.localpath):
            raise FileNotFoundError(f"No DictStore directory at {self.localpath}")
        kwargs: dict[str, Any] = {"mmap_mode": self.mmap_mode} if self.mmap_mode else {}
        if self._locking:
            kwargs["locking"] = True
        estore = store_file(self.working_dir, EMBED_NAME, self._where)
        schunk = open_schunk(estore, "r", 0, dparams=self.dparams, **kwargs)
        self._estore = EmbedStore(_from_schunk=schunk, deserialize=self._deserialize)
        self._estore.origin_path = self.localpath
        self.map_tree = self._list_directory()

    def _open_write(self) -> None:
        path = self.localpath
        if self.is_zip_store:
            os.makedirs(self.working_dir, exist_ok=True)
            if self._temp_dir_obj is None:  # a tmpdir of the caller: start from nothing
                clear_store_directory(self.working_dir)
            if self.mode == "a" and os.path.exists(path):
                with contextlib.closing(FileStore(path)) as archive:
                    extract_archive(archive, self.working_dir, f"zip archive {path}")
        elif self.mode == "w" and os.path.isdir(path):
            clear_store_directory(path)
        os.makedirs(self.working_dir, exist_ok=True)
        if not self.is_zip_store:  # recovery: what killed writers left half done
            remove_stale_staging(self.working_dir)
            store_file(self.working_dir, EMBED_NAME, self._where)
        storage = Storage(
            contiguous=True, urlpath=self.estore_path, mode=self.mode, locking=self._locking
        )
        if self.mode == "a" and not os.path.exists(self.estore_path):
            storage = Storage(
                contiguous=True, urlpath=self.estore_path, mode="w", locking=self._locking
            )
        self._estore = EmbedStore(
            urlpath=self.estore_path,
            mode=storage.mode,
            cparams=self.cparams,
            dparams=self.dparams,
            storage=storage,
            meta=self._meta,
            deserialize=self._deserialize,
        )
        self._estore.mode = self.mode
        self._estore.origin_path = self.localpath
        self.map_tree = self._list_directory()

    def _get_zip_offsets(self) -> ZipIndex:
        """Read the archive's index (python-blosc2 keeps it as ``offsets``)."""
        archive = self._archive_store()
        try:
            index = ZipIndex.read(archive)
        finally:
            if archive is not self._remote_archive:
                archive.close()
        self._archive = index
        self.offsets = {
            name: {"offset": m.offset, "length": m.length, "stored": m.stored}
            for name, m in index.members.items()
        }
        return index

    def _archive_store(self) -> Any:
        """The bytes of the archive: a file, a map, or (shared by all members) a URL."""
        if self._url:
            if self._remote_archive is None:
                from ..backends.fsspec import FsspecStore

                so = self._remote.get("storage_options")
                self._remote_archive = FsspecStore(self.localpath, so)
            return self._remote_archive
        if self.mmap_mode == "r":
            return MmapStore(self.localpath)
        return FileStore(self.localpath)

    def _member(self, name: str) -> Any:
        """The super-chunk of archive member ``name``, opened where it lies."""
        assert self._archive is not None
        m = self._archive[name]
        store = self._archive_store()
        owned = store is not self._remote_archive
        try:
            return schunk_in_window(
                store,
                m.offset,
                m.length,
                self.b2z_path,
                self.dparams,
                owned=owned,
                remote=self._remote,
            )
        except FormatError as exc:
            if owned:
                store.close()
            raise FormatError(
                f"zip archive {self.b2z_path}", f"member {name!r}", m.offset, "a Blosc2 frame", exc
            ) from None

    def _probe_member(self, name: str) -> Any:
        return self._member(name)

    def _list_directory(self) -> dict[str, str]:
        """The leaves of the store directory (and, in ``_refused``, the keys of the files
        that are no part of it, with why)."""
        self._refused = {}
        return leaves_in_directory(self.working_dir, self._probe_file, self._refused)

    def _probe_file(self, relpath: str) -> Any:
        return open_schunk(store_file(self.working_dir, relpath, self._where), "r", 0)

    @property
    def _where(self) -> str:
        return f"store {self.localpath}"

    # -- sharing with other handles ---------------------------------------------------------
    def _sync_store(self) -> None:
        """Follow the changes of other handles (shared stores only): every change rewrites
        the embedded store's vlmeta, so an unchanged vlmeta means nothing to re-read."""
        if not self._shared:
            return
        estore = self._estore
        seen = estore._store.vlmeta_entries
        if seen == self._seen:
            return
        with estore._store.holding_lock():
            estore._load_metadata()
            self.map_tree = self._list_directory()
            self._seen = estore._store.vlmeta_entries

    @contextlib.contextmanager
    def _mutation(self) -> Iterator[None]:
        """A whole change (leaf files and maps) under the store lock, from the state stored."""
        with self._estore._store.holding_lock():
            self._sync_store()
            yield
            if self._shared:
                self._seen = self._estore._store.vlmeta_entries

    def _bump_tick(self) -> None:
        """Tell other handles that leaf files changed (they watch the embedded store)."""
        if self._shared:
            vlmeta = self._estore._store.vlmeta
            vlmeta[TICK] = int(vlmeta.get(TICK, 0)) + 1

    def _reading(self) -> AbstractContextManager[Any]:
        return self._estore._store.holding_lock() if self._shared else nullcontext()

    def _check_writable(self) -> None:
        if self.mode == "r":
            raise ParamError("Cannot set or delete items in a DictStore opened read-only")

    # -- the mapping --------------------------------------------------------------------------
    def __setitem__(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``: external or embedded by the ``threshold`` rule."""
        self._check_writable()
        check_key(key)
        self._modified = True
        if isinstance(value, np.ndarray):
            value = asarray(value, cparams=self.cparams, dparams=self.dparams)
        with self._mutation():
            source = leaf_urlpath(value)
            big = self.threshold is not None and leaf_nbytes(value) >= self.threshold
            old = self.map_tree.get(key)
            if big or (source is not None and self.threshold is None):
                self._put_external(key, value)
                return
            self._estore._put(key, value)
            if old is not None:
                del self.map_tree[key]
                remove_path(os.path.join(self.working_dir, old))
                self._bump_tick()

    def _put_external(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` as a file of its own, whatever its size (python-blosc2
        keeps a CTable's leaves so: ``threshold=0``)."""
        old = self.map_tree.get(key)
        rel = path_of_key(key, leaf_suffix(leaf_kind(value)))
        self._write_leaf(value, rel)
        self.map_tree[key] = rel
        if old is not None and old != rel:
            remove_path(os.path.join(self.working_dir, old))
        if key in self._estore:
            del self._estore[key]
        self._bump_tick()

    def _write_leaf(self, value: Any, rel: str) -> None:
        """Write ``value`` as the file ``rel`` of the store: whole beside its name, then
        renamed over it (a reader, or a crash, sees the old file or the new one)."""
        dest = os.path.join(self.working_dir, *rel.split("/"))
        folder = os.path.realpath(os.path.dirname(dest))  # before anything is made there
        if not is_inside(os.path.realpath(self.working_dir), folder):
            raise FormatError(
                self._where, f"directory of {rel!r}", None, "a directory of the store", folder
            )
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        tmp = f"{dest}.{os.getpid()}.tmp"
        source = leaf_file(value)
        try:
            if source is not None and os.path.abspath(source) != os.path.abspath(dest):
                shutil.copyfile(source, tmp)
            else:
                with open(tmp, "wb") as f:
                    f.write(value.to_cframe())
            os.replace(tmp, dest)
        except BaseException:
            remove_path(tmp)
            raise

    def __getitem__(self, key: str) -> Any:
        """The value under ``key``: an external leaf opened where it lies (writable in a
        store opened for writing), an embedded one as an in-memory copy."""
        with self._reading():
            self._sync_store()
            rel = self.map_tree.get(key)
            if rel is None:
                why = self._refused.get(key)
                if why is not None and key not in self._estore:
                    raise FormatError(
                        self._where, f"leaf {key!r}", None, "a regular file of the store", why
                    )
                return self._estore[key]
            if self._archive is not None and rel in self._archive:
                origin = Origin(self.localpath, key)
                value = container_of(self._member(rel), self._deserialize, origin)
                return _referenced(value, self.localpath, key)
            path = store_file(self.working_dir, rel, self._where)
            if not os.path.exists(path):
                raise KeyError(f"File for key '{key}' not found in the store")
            value = leaf_at(
                path,
                mode="r" if self.mode == "r" else "a",
                mmap_mode=self.mmap_mode if self.mode == "r" else None,
                dparams=self.dparams,
                deserialize=self._deserialize,
                origin=Origin(self.localpath, key, path),
            )
            return _referenced(value, self.localpath, key)

    def get(self, key: str, default: Any = None) -> Any:
        """The value at ``key``, or ``default`` when there is none."""
        try:
            return self[key]
        except KeyError:
            return default

    def __delitem__(self, key: str) -> None:
        self._check_writable()
        self._modified = True
        with self._mutation():
            found = False
            if key in self._estore:  # first: a value a crash left hidden behind a file
                del self._estore[key]
                found = True
            if key in self.map_tree:
                rel = self.map_tree.pop(key)
                remove_path(os.path.join(self.working_dir, rel))
                self._bump_tick()
                found = True
            if not found:
                raise KeyError(f"Key '{key}' not found")

    def __contains__(self, key: object) -> bool:
        self._sync_store()
        return key in self.map_tree or key in self._estore

    def __len__(self) -> int:
        return len(self.keys())

    def __iter__(self) -> Iterator[str]:
        self._sync_store()
        yield from list(self.map_tree)
        for key in list(self._estore):
            if key not in self.map_tree:
                yield key

    def keys(self) -> set[str]:
        """All keys (a set, as python-blosc2 returns)."""
        self._sync_store()
        return set(self.map_tree) | set(self._estore.keys())

    def values(self) -> Iterator[Any]:
        """Every value, in key order of :meth:`keys`."""
        for key in self.keys():
            yield self[key]

    def items(self) -> Iterator[tuple[str, Any]]:
        """Every ``(key, value)`` pair."""
        for key in self.keys():
            yield key, self[key]

    @property
    def estore(self) -> EmbedStore:
        """The embedded store."""
        return self._estore

    def member_window(self, key: str) -> tuple[int, int] | None:
        """``(offset, nbytes)`` of the frame of leaf ``key`` in the ``.b2z`` file (read
        mode): a window a byte-range reader can serve. None for a directory store, an
        embedded leaf, a deflated member or an unknown key.

        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "win.b2z")
        >>> with DictStore(path, mode="w") as d:
        ...     d["/a"] = np.arange(1000, dtype="i4")
        >>> offset, nbytes = DictStore(path, mode="r").member_window("/a")
        >>> from pyblosc2 import ndarray_from_cframe
        >>> frame = open(path, "rb").read()[offset : offset + nbytes]
        >>> int(ndarray_from_cframe(frame)[999])
        999
        """
        if self._archive is None:
            return None
        rel = self.map_tree.get(key)
        if rel is None or rel not in self._archive or not self._archive[rel].stored:
            return None
        m = self._archive[rel]
        return (m.offset, m.length)

    # -- info ---------------------------------------------------------------------------------
    @property
    def info_items(self) -> list[tuple[str, Any]]:
        """The rows :attr:`info` prints, as ``(name, value)`` pairs."""
        keys = sorted(self.keys())
        return [
            ("type", type(self).__name__),
            ("urlpath", self.localpath),
            ("mode", self.mode),
            ("format", "b2z" if self.is_zip_store else "b2d"),
            ("entries", len(keys)),
            ("contents", self._info_contents(keys)),
        ]

    def _info_contents(self, keys: list[str]) -> str:
        return "\n".join(keys) or "(empty)"

    @property
    def info(self) -> InfoReport:
        """A printable summary of the store (without opening its leaves)."""
        return InfoReport(self.info_items)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.localpath!r}, mode={self.mode!r})"
