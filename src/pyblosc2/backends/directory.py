"""A local directory as a flat set of named objects (a sparse frame, frame-format.md §6).

Objects are replaced atomically: written to a temporary name unique to this process and
call, then renamed over the old one, so concurrent writers never share a temporary file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from .file import FileStore

__all__ = ["DirectoryStore"]


class DirectoryStore:
    """Objects are the files of ``path``.

    >>> import tempfile; d = DirectoryStore(tempfile.mkdtemp())
    >>> d.write_object("a.chunk", b"xyz"); d.read_object("a.chunk"), d.exists("b.chunk")
    (b'xyz', False)
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False) -> None:
        self.path = os.fspath(path)
        if create:
            os.makedirs(self.path)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold an exclusive ``flock`` on the directory (see :meth:`FileStore.exclusive`)."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def object_path(self, name: str) -> str:
        return os.path.join(self.path, name)

    def exists(self, name: str) -> bool:
        return os.path.exists(self.object_path(name))

    def object_size(self, name: str) -> int:
        return os.path.getsize(self.object_path(name))

    def read_object(self, name: str) -> bytes:
        with open(self.object_path(name), "rb") as f:
            return f.read()

    def write_object(self, name: str, data: bytes | memoryview) -> None:
        target = self.object_path(name)
        tmp = f"{target}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
        try:
            with open(tmp, "xb") as f:
                f.write(data)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def remove_object(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.object_path(name))

    def open_object(self, name: str, *, writable: bool) -> FileStore:
        return FileStore(self.object_path(name), writable=writable)
