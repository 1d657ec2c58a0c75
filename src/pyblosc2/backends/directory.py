"""A local directory as a flat set of named objects (a sparse frame, frame-format.md §6).

Objects are replaced atomically: written to a temporary name unique to this process and
call, then renamed over the old one, so concurrent writers never share a temporary file.

A directory may come from anywhere (an archive, a download), so an object is read only when it
is a regular file inside the directory: a symlink may point to another object but not out of
the directory, and a device (``/dev/zero`` reads forever) or a FIFO (opening it waits for a
writer) is refused before a byte is read. Reads stop at the file's size as ``fstat`` gives
it, and at the caller's ``limit``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import FormatError
from .file import FileStore, check_regular

__all__ = ["DirectoryStore", "is_inside"]


def is_inside(root_real: str, real: str) -> bool:
    """Whether the real path ``real`` lies inside (or is) the directory whose real path is
    ``root_real`` (both from :func:`os.path.realpath`).

    >>> is_inside("/data/s.b2d", "/data/s.b2d/a.b2nd"), is_inside("/data/s.b2d", "/data/s.b2dx")
    (True, False)
    """
    return os.path.commonpath([real, root_real]) == root_real


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
        self._real = os.path.realpath(self.path)

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

    def _inside(self, name: str) -> str:
        """The path of object ``name``, refused when it is a symlink that leads out of the
        directory."""
        path = self.object_path(name)
        if stat.S_ISLNK(os.lstat(path).st_mode):
            real = os.path.realpath(path)
            if not is_inside(self._real, real):
                raise FormatError(
                    f"sparse frame {self.path}",
                    f"object {name}",
                    None,
                    "a file inside the directory",
                    f"a symlink to {real}",
                )
        return path

    def object_size(self, name: str) -> int:
        path = self._inside(name)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            return check_regular(fd, f"sparse frame {self.path}", f"object {name}")
        finally:
            os.close(fd)

    def read_object(self, name: str, limit: int | None = None) -> bytes:
        fd = os.open(self._inside(name), os.O_RDONLY | os.O_NONBLOCK)
        try:
            size = check_regular(fd, f"sparse frame {self.path}", f"object {name}")
            if limit is not None and size > limit:
                where = f"sparse frame {self.path}"
                raise FormatError(where, f"object {name} size", None, f"at most {limit}", size)
            parts, got = [], 0
            while got < size:  # a file that grows meanwhile is read up to its size at open
                part = os.pread(fd, size - got, got)
                if not part:
                    break
                parts.append(part)
                got += len(part)
            return b"".join(parts)
        finally:
            os.close(fd)

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
        return FileStore(self._inside(name), writable=writable)
