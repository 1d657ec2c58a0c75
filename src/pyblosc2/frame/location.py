"""From a ``Storage`` to an open :class:`~.frame.Frame`: which backend holds the bytes.

A local path is a contiguous frame file (optionally memory-mapped, or embedded at an offset)
or a sparse-frame directory (§6); no path is memory. Any other URL (``https://``, ``s3://``,
``memory://``, chained ``zip://…::…``) is opened through fsspec (:mod:`..backends.fsspec`),
lazily: an object is a contiguous frame, a directory (or a URL whose ``chunks.b2frame``
exists) a sparse one. A backend can claim a scheme for itself with ``register_scheme``.
``options`` carries ``storage_options`` (fsspec's), ``cache_storage`` and ``lazy``.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ..backends.directory import DirectoryStore
from ..backends.file import FileStore, sync_directory
from ..backends.fileobj import FileObjectStore
from ..backends.lock import FrameLock, lock_path, locking_requested
from ..backends.memory import MemoryStore
from ..backends.mmap import MmapStore, announce_mapping
from ..errors import ParamError, UnsupportedError
from ..storage import Storage
from .frame import Frame

__all__ = [
    "REMOTE_OPTIONS",
    "as_urlpath",
    "create_frame",
    "exists",
    "is_url",
    "local_path",
    "open_file_object",
    "open_frame",
    "register_scheme",
    "remove_urlpath",
]

LOCK_SUFFIX = ".b2lock"
#: the keyword arguments of ``open`` (and SChunk) that say how to reach a URL
REMOTE_OPTIONS = ("storage_options", "cache_storage", "lazy")
Opener = Callable[[str, Storage, int, dict[str, Any]], Frame]
# scheme -> opener(urlpath, storage, offset, options) for URLs not opened through fsspec
_SCHEMES: dict[str, Opener] = {}


def register_scheme(scheme: str, opener: Opener) -> None:
    """Route ``scheme://...`` urlpaths to ``opener`` instead of fsspec."""
    _SCHEMES[scheme] = opener


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL opened through a remote backend (``file://`` is local).

    >>> is_url("s3://bucket/a.b2nd"), is_url("file:///tmp/a.b2nd"), is_url("a.b2nd")
    (True, False, False)
    """
    return _scheme(path) is not None


def _scheme(path: str) -> str | None:
    """The URL scheme of ``path`` (None for a local path; ``file://`` URLs are local)."""
    head, sep, _ = path.split("::", 1)[0].partition("://")
    return head if sep and head.isidentifier() and head != "file" else None


def local_path(path: str) -> str:
    """The local path a ``file://`` URL names (RFC 8089; anything else unchanged): an empty
    host or ``localhost`` is this machine; another host (a UNC share) or a drive letter as
    the host is reachable on Windows only, and refused elsewhere rather than read as a
    relative path.

    >>> local_path("file:///tmp/a.b2nd"), local_path("file://localhost/tmp/a.b2nd")
    ('/tmp/a.b2nd', '/tmp/a.b2nd')
    >>> local_path("file://server/share/a.b2nd")  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: file://server/share/a.b2nd names the host 'server' ...
    """
    if not path.startswith("file://"):
        return path
    host, sep, rest = path[len("file://") :].partition("/")
    if host in ("", "localhost"):
        return "/" + rest if sep else "/"
    if os.name == "nt":
        if len(host) == 2 and host[1] == ":":
            return f"{host}/{rest}"
        return f"//{host}/{rest}"
    what = "a Windows drive" if len(host) == 2 and host[1] == ":" else "a remote host (UNC share)"
    raise ParamError(
        f"{path} names the host {host!r}: {what}, reachable on Windows only; "
        "use file:///path for a local file"
    )


def exists(path: str, options: dict[str, Any] | None = None) -> bool:
    """Whether a frame (file, directory or remote object) exists at ``path``."""
    if _scheme(path) is None:
        return os.path.exists(local_path(path))
    from ..backends.fsspec import connect

    fs, p = connect(path, (options or {}).get("storage_options"))
    return bool(fs.exists(p))


def as_urlpath(urlpath: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """An fsspec file object (``fsspec.open(url)``, ``fs.open(path)``) as its URL, with its
    file system's options as ``storage_options``; anything else unchanged.

    >>> class FS:  # what fsspec file systems have
    ...     storage_options = {"anon": True}
    ...     def unstrip_protocol(self, path): return "s3://" + path
    >>> class OpenFile: fs, path = FS(), "bucket/a.b2nd"
    >>> as_urlpath(OpenFile(), {"mode": "r"})
    ('s3://bucket/a.b2nd', {'mode': 'r', 'storage_options': {'anon': True}})
    >>> as_urlpath("a.b2nd", {})
    ('a.b2nd', {})
    """
    fs: Any = getattr(urlpath, "fs", None)
    path = getattr(urlpath, "path", None)
    if not isinstance(path, str) or not callable(getattr(fs, "unstrip_protocol", None)):
        return urlpath, kwargs
    if kwargs.get("storage_options"):
        raise ParamError("storage_options come from the fsspec file object: do not pass them")
    options = dict(getattr(fs, "storage_options", None) or {})
    return fs.unstrip_protocol(path), {**kwargs, "storage_options": options}


def open_file_object(f: Any, offset: int, mode: str | None) -> Frame:
    """A frame read in place from a binary file object (read-only)."""
    if mode not in ("r", None):
        raise ParamError(f"a frame in a file object opens read-only (mode='r'), got {mode!r}")
    return Frame(FileObjectStore(f, offset))


def open_frame(
    path: str, storage: Storage, offset: int = 0, options: dict[str, Any] | None = None
) -> Frame:
    """Open the existing frame at ``path`` as ``storage`` says (mode, mmap_mode); URLs as
    ``options`` say (see the module docstring)."""
    scheme = _scheme(path)
    if scheme is not None:
        opener = _SCHEMES.get(scheme, _open_url)
        return opener(path, storage, offset, options or {})
    if options and options.get("storage_options"):
        raise ParamError(f"storage_options apply to URLs, not to the local path {path!r}")
    path = local_path(path)
    writable = storage.mode != "r"
    if offset and writable:
        raise NotImplementedError("writing to a frame embedded at an offset")
    sparse = os.path.isdir(path)
    lock = _lock(path, storage, sparse, offset)
    if sparse:
        return Frame.open_sparse(DirectoryStore(path), writable, lock)
    if storage.mmap_mode is not None:
        announce_mapping(
            path, storage.mmap_mode, storage.initial_mapping_size, os.path.getsize(path)
        )
    if storage.mmap_mode == "r":
        return Frame(MmapStore(path, offset))
    if storage.mmap_mode == "c":  # copy-on-write: changes never reach the file
        source = FileStore(path, offset)  # a regular file, read up to its size
        try:
            return Frame(MemoryStore(bytes(source.read(0, source.size))))
        finally:
            source.close()
    return Frame(FileStore(path, offset, writable=writable), lock=lock, durable=storage.fsync)


def _lock(path: str, storage: Storage, sparse: bool, offset: int = 0) -> FrameLock | None:
    """The frame lock when locking is asked for (never with mmap_mode, as C-Blosc2)."""
    if storage.mmap_mode is not None or offset or not locking_requested(storage.locking):
        return None
    return FrameLock(lock_path(path, sparse))


def _open_url(path: str, storage: Storage, offset: int, options: dict[str, Any]) -> Frame:
    """A frame at an fsspec URL: lazy (ranges fetched on demand) unless ``lazy=False``,
    which fetches the whole frame into memory. Only sparse frames can be written."""
    from ..backends.fsspec import FsspecDirectory, FsspecStore, connect, stat

    writable = storage.mode != "r"
    if offset and writable:
        raise NotImplementedError("writing to a frame embedded at an offset")
    so, cache = options.get("storage_options"), options.get("cache_storage")
    fs, p = connect(path, so)
    try:
        probe = stat(fs, p, path, None if cache is None else os.fspath(cache))
    except FileNotFoundError:
        probe = None
    if probe is None or probe.info.get("type") == "directory" or path.endswith("/"):
        directory = FsspecDirectory(path, so, cache_storage=cache)
        if offset or not directory.exists("chunks.b2frame"):
            raise FileNotFoundError(f"No such file or directory: {path}")
        return Frame.open_sparse(directory, writable)
    if writable:
        raise NotImplementedError(
            f"writing to a contiguous frame at a URL ({path}): open it with mode='r', "
            "or store it as a sparse frame (contiguous=False)"
        )
    if storage.mmap_mode is not None:
        raise ParamError(f"mmap_mode needs a local file, got the URL {path!r}")
    store = FsspecStore(path, so, cache_storage=cache, fs=fs, path=p, probe=probe, offset=offset)
    if options.get("lazy", True) is False:
        whole = bytes(store.read(0, store.size))
        store.close()
        return Frame(MemoryStore(whole, readonly=True))
    return Frame(store)


def whole_at_url(path: Any, kwargs: dict[str, Any]) -> bool:
    """Whether a save to ``path`` writes a whole frame to a URL (a contiguous frame at an
    fsspec URL: the frame is built in memory and written in one request, :func:`put_cframe`);
    ``kwargs`` are the save's (``mode='r'`` is refused)."""
    if path is None or not isinstance(path, str | os.PathLike):
        return False
    if _scheme(os.fsdecode(path)) is None or kwargs.get("contiguous", True) is False:
        return False
    if kwargs.get("mode") == "r":
        raise ParamError(f"Cannot write {os.fsdecode(path)} with reading mode ('r')")
    return True


def put_cframe(path: Any, cframe: bytes, options: dict[str, Any] | None = None) -> int:
    """Write the frame ``cframe`` as the object at the URL ``path`` (replacing it); returns
    its size."""
    from ..backends.fsspec import connect
    from ..backends.retry import retrying

    url = os.fsdecode(path)
    fs, p = connect(url, (options or {}).get("storage_options"))
    retrying(url, "writing the frame", lambda: fs.pipe_file(p, bytes(cframe)))
    return len(cframe)


def create_frame(
    storage: Storage,
    empty_frame: bytes,
    options: dict[str, Any] | None = None,
    *,
    fingerprint: bool = False,
    chunks: Sequence[bytes] = (),
    requested: int | None = None,
) -> Frame:
    """Create a new frame where ``storage`` says (at a URL: a sparse frame only, see
    :func:`open_frame`): ``empty_frame``, fingerprinted when asked, holding ``chunks`` (a new
    array's special chunks). Creation is part of the commit: the whole first content is
    built first (in memory, or in a directory beside the target) and then given its name in
    one step, so a process killed meanwhile leaves no frame or the whole new one."""
    path = storage.path
    if path is None:
        frame = Frame(MemoryStore(empty_frame), exact=True)
        _first_content(frame, fingerprint, chunks, requested)
        return frame
    if _scheme(path) is not None:
        if storage.contiguous:
            raise UnsupportedError(
                f"creating a contiguous frame at an fsspec URL ({path}): build it in memory and "
                "save() it there, or use contiguous=False (a sparse frame: one object per chunk)"
            )
        from ..backends.fsspec import FsspecDirectory

        so = (options or {}).get("storage_options")
        directory = FsspecDirectory(path, so, create=True)
        frame = Frame.create_sparse(directory, empty_frame, True)
        _first_content(frame, fingerprint, chunks, requested)
        return frame
    path = local_path(path)
    lock = _lock(path, storage, not storage.contiguous)
    if not storage.contiguous:
        _create_directory(path, empty_frame, chunks, requested, storage.fsync)
        return Frame.open_sparse(DirectoryStore(path), True, lock)
    first = Frame(MemoryStore(empty_frame), exact=True)
    _first_content(first, fingerprint, chunks, requested)
    store = FileStore.create(path, first.to_cframe(), durable=storage.fsync)
    if storage.mmap_mode is not None:
        announce_mapping(path, storage.mmap_mode, storage.initial_mapping_size, 0)
    return Frame(store, lock=lock, durable=storage.fsync)


def _first_content(
    frame: Frame, fingerprint: bool, chunks: Sequence[bytes], requested: int | None
) -> None:
    if fingerprint:
        frame.start_fingerprint()
    if chunks:
        frame.rewrite(list(chunks), requested)


def _create_directory(
    path: str, empty_frame: bytes, chunks: Sequence[bytes], requested: int | None, durable: bool
) -> None:
    """A new sparse frame at ``path``: made in a directory beside it, then renamed."""
    if os.path.lexists(path):
        raise FileExistsError(f"File exists: {path!r}")
    tmp = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        frame = Frame.create_sparse(DirectoryStore(tmp, create=True), empty_frame, True)
        _first_content(frame, False, chunks, requested)
        frame.close()
        if durable:
            sync_directory(tmp)
        os.rename(tmp, path)  # the commit point
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if durable:
        sync_directory(os.path.dirname(os.path.abspath(path)))


def remove_urlpath(
    path: str | os.PathLike[str] | None, storage_options: dict[str, Any] | None = None
) -> None:
    """Remove a frame file (or a sparse-frame directory); a missing path is a no-op.

    >>> import tempfile; p = os.path.join(tempfile.mkdtemp(), "x.b2frame")
    >>> open(p, "wb").close(); remove_urlpath(p); os.path.exists(p)
    False
    """
    if path is None:
        return
    p = os.fsdecode(path)
    if _scheme(p) is not None:
        from ..backends.fsspec import connect

        fs, rp = connect(p, storage_options)
        if fs.exists(rp):
            fs.rm(rp, recursive=True)
        return
    p = local_path(p)
    if os.path.isdir(p):
        for name in os.listdir(p):
            os.unlink(os.path.join(p, name))
        os.rmdir(p)
    elif os.path.exists(p):
        os.unlink(p)
        if os.path.exists(p + LOCK_SUFFIX):
            os.unlink(p + LOCK_SUFFIX)
