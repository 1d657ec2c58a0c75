"""From a ``Storage`` to an open :class:`~.frame.Frame`: which backend holds the bytes.

A local path is a contiguous frame file (optionally memory-mapped, or embedded at an offset)
or a sparse-frame directory (§6); no path is memory. URLs with a scheme are for remote
backends, which register here (``register_scheme``) and need nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..backends.directory import DirectoryStore
from ..backends.file import FileStore
from ..backends.lock import FrameLock, lock_path, locking_requested
from ..backends.memory import MemoryStore
from ..backends.mmap import MmapStore
from ..errors import ParamError
from ..storage import Storage
from .frame import Frame

__all__ = [
    "create_frame",
    "exists",
    "local_path",
    "open_frame",
    "register_scheme",
    "remove_urlpath",
]

LOCK_SUFFIX = ".b2lock"
# scheme -> opener(urlpath, storage, offset) for URLs handled by another backend
_SCHEMES: dict[str, Callable[[str, Storage, int], Frame]] = {}


def register_scheme(scheme: str, opener: Callable[[str, Storage, int], Frame]) -> None:
    """Route ``scheme://...`` urlpaths to ``opener`` (a remote backend's entry point)."""
    _SCHEMES[scheme] = opener


def _scheme(path: str) -> str | None:
    """The URL scheme of ``path`` (None for a local path; ``file://`` URLs are local)."""
    head, sep, _ = path.partition("://")
    return head if sep and head.isidentifier() and head != "file" else None


def local_path(path: str) -> str:
    """``path`` without a ``file://`` prefix."""
    return path[len("file://") :] if path.startswith("file://") else path


def exists(path: str) -> bool:
    """Whether a local frame (file or directory) exists at ``path``."""
    return _scheme(path) is None and os.path.exists(local_path(path))


def open_frame(path: str, storage: Storage, offset: int = 0) -> Frame:
    """Open the existing frame at ``path`` as ``storage`` says (mode, mmap_mode)."""
    scheme = _scheme(path)
    if scheme is not None:
        if scheme in _SCHEMES:
            return _SCHEMES[scheme](path, storage, offset)
        raise NotImplementedError(f"urlpaths with the scheme {scheme!r}:// (remote storage)")
    path = local_path(path)
    writable = storage.mode != "r"
    if offset and writable:
        raise NotImplementedError("writing to a frame embedded at an offset")
    sparse = os.path.isdir(path)
    lock = _lock(path, storage, sparse, offset)
    if sparse:
        return Frame.open_sparse(DirectoryStore(path), writable, lock)
    if storage.mmap_mode == "r":
        return Frame(MmapStore(path, offset))
    if storage.mmap_mode == "c":  # copy-on-write: changes never reach the file
        with open(path, "rb") as f:
            f.seek(offset)
            return Frame(MemoryStore(f.read()))
    return Frame(FileStore(path, offset, writable=writable), lock=lock, durable=storage.fsync)


def _lock(path: str, storage: Storage, sparse: bool, offset: int = 0) -> FrameLock | None:
    """The frame lock when locking is asked for (never with mmap_mode, as C-Blosc2)."""
    if storage.mmap_mode is not None or offset or not locking_requested(storage.locking):
        return None
    return FrameLock(lock_path(path, sparse))


def create_frame(storage: Storage, empty_frame: bytes) -> Frame:
    """Create a new frame holding ``empty_frame`` where ``storage`` says."""
    path = storage.path
    if path is None:
        return Frame(MemoryStore(empty_frame), exact=True)
    if _scheme(path) is not None:
        raise NotImplementedError(f"creating frames at {path!r} (remote storage)")
    path = local_path(path)
    lock = _lock(path, storage, not storage.contiguous)
    if not storage.contiguous:
        return Frame.create_sparse(DirectoryStore(path, create=True), empty_frame, True, lock)
    store = FileStore(path, writable=True, create=True)
    try:
        store.write(0, empty_frame)
        if storage.fsync:
            store.sync()
    except BaseException:  # a frame that could not be written whole is not left behind
        store.close()
        os.unlink(path)
        raise
    return Frame(store, lock=lock, durable=storage.fsync)


def remove_urlpath(path: str | os.PathLike[str] | None) -> None:
    """Remove a frame file (or a sparse-frame directory); a missing path is a no-op.

    >>> import tempfile; p = os.path.join(tempfile.mkdtemp(), "x.b2frame")
    >>> open(p, "wb").close(); remove_urlpath(p); os.path.exists(p)
    False
    """
    if path is None:
        return
    p = os.fsdecode(path)
    if _scheme(p) is not None:
        raise ParamError(f"remove_urlpath works on local paths, got {p!r}")
    p = local_path(p)
    if os.path.isdir(p):
        for name in os.listdir(p):
            os.unlink(os.path.join(p, name))
        os.rmdir(p)
    elif os.path.exists(p):
        os.unlink(p)
        if os.path.exists(p + LOCK_SUFFIX):
            os.unlink(p + LOCK_SUFFIX)
