"""A frame stored in a local file from byte ``offset`` on (bytes before it are not touched),
read and written with positioned I/O."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import FormatError, ParamError
from .base import READ_ONLY

__all__ = ["FileStore", "check_regular", "kind_of", "sync_directory"]

COPY_PIECE = 1 << 23  # bytes copied per write when a file is replaced

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is that is not a regular file ("a FIFO", ...).

    >>> kind_of(stat.S_IFIFO | 0o644)
    'a FIFO'
    """
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular(fd: int, where: str, what: str) -> int:
    """The size of the regular file open as ``fd``; a :class:`FormatError` for anything else
    (a device reads without end, a FIFO waits for a writer): open such paths with
    ``O_NONBLOCK`` so that the open itself cannot wait."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise FormatError(where, what, None, "a regular file", kind_of(st.st_mode))
    os.set_blocking(fd, True)
    return st.st_size


def sync_directory(path: str) -> None:
    """Make the names in directory ``path`` durable (after a create or a rename)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileStore:
    """A region of a local file: ``[offset, end of file)``.

    >>> import tempfile; p = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> s = FileStore(p, writable=True, create=True); s.write(0, b"hello"); s.size
    5
    >>> FileStore(p, offset=1).read(0, 3)
    b'ell'
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        offset: int = 0,
        *,
        writable: bool = False,
        create: bool = False,
    ) -> None:
        self._fd = -1
        self.path = os.fspath(path)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ParamError(f"offset must be a non-negative int, got {offset!r}")
        self.offset = offset
        self._writable = writable
        flags = (os.O_RDWR if writable else os.O_RDONLY) | os.O_NONBLOCK
        if create:
            flags |= os.O_CREAT | os.O_EXCL
        self._fd = os.open(self.path, flags, 0o644)
        try:
            check_regular(self._fd, self.path, "file")
        except FormatError:
            self.close()
            raise
        self.bytes_read = 0
        if self.size < 0:
            size = os.fstat(self._fd).st_size
            self.close()
            raise FormatError("frame", "offset", offset, f"at most the file size {size}", offset)

    @classmethod
    def create(cls, path: str | os.PathLike[str], data: bytes, durable: bool = False) -> FileStore:
        """A new file at ``path`` holding ``data``, which appears whole or not at all: it is
        written under a temporary name and linked to ``path`` (which must not exist)."""
        path = os.fspath(path)
        tmp = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
        out = cls(tmp, writable=True, create=True)
        try:
            out.write(0, data)
            if durable:
                out.sync()
            os.link(tmp, path)  # the commit point; FileExistsError as O_EXCL would raise
        finally:
            out.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if durable:
            with contextlib.suppress(OSError):  # the file is there: the call succeeded
                sync_directory(os.path.dirname(os.path.abspath(path)))
        return cls(path, writable=True)

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy opens the file itself: a descriptor number never crosses pickle, copy or
        # another process (it would name an unrelated file once this store closes it).
        return (_reopen, (self.path, self.offset, self._writable))

    @property
    def size(self) -> int:
        return os.fstat(self._fd).st_size - self.offset

    @property
    def writable(self) -> bool:
        return self._writable

    def read(self, pos: int, n: int) -> bytes:
        data = os.pread(self._fd, n, self.offset + pos)
        self.bytes_read += len(data)
        return data

    def write(self, pos: int, data: bytes | memoryview) -> None:
        if not self._writable:
            raise ParamError(READ_ONLY)
        view = memoryview(data)
        while view:
            done = os.pwrite(self._fd, view, self.offset + pos)
            view, pos = view[done:], pos + done

    def truncate(self, size: int) -> None:
        if not self._writable:
            raise ParamError(READ_ONLY)
        os.ftruncate(self._fd, self.offset + size)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold an exclusive ``flock`` on the file itself: pyblosc2 writers that do not use the
        frame lock still never interleave their commits (C-Blosc2 takes no such lock)."""
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def sync(self) -> None:
        os.fsync(self._fd)

    def replaced(self) -> bool:
        """Whether the path now names another file than the one this store reads (another
        handle replaced it, see :meth:`replace`)."""
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return True
        mine = os.fstat(self._fd)
        return (now.st_ino, now.st_dev) != (mine.st_ino, mine.st_dev)

    def reopen(self) -> None:
        """Read (and write) the file the path names now."""
        fd = os.open(self.path, (os.O_RDWR if self._writable else os.O_RDONLY) | os.O_NONBLOCK)
        try:
            check_regular(fd, self.path, "file")  # the path may now name a FIFO or a device
        except FormatError:
            os.close(fd)
            raise
        os.close(self._fd)
        self._fd = fd

    def replace(self, head: bytes, keep: int, tail: bytes, durable: bool = False) -> None:
        """Replace the file by ``head``, then this file's bytes ``[len(head), keep)``, then
        ``tail``: written beside it under a temporary name (through a :class:`FileStore`, so
        failures can be injected there too), then renamed over it, the commit point; this
        store then reads the new file. A failure before the rename leaves the file as it was.
        """
        if not self._writable or self.offset:
            raise ParamError(READ_ONLY)
        tmp = f"{self.path}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
        out = FileStore(tmp, writable=True, create=True)
        try:
            os.fchmod(out._fd, stat.S_IMODE(os.fstat(self._fd).st_mode))
            out.write(0, head)
            for pos in range(len(head), keep, COPY_PIECE):
                out.write(pos, self.read(pos, min(COPY_PIECE, keep - pos)))
            out.write(keep, tail)
            if durable:
                out.sync()
            os.replace(tmp, self.path)  # the commit point
        except BaseException:
            out.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        os.close(self._fd)  # from here on, the new file (nothing left that can fail)
        self._fd, out._fd = out._fd, -1
        if durable:
            with contextlib.suppress(OSError):
                sync_directory(os.path.dirname(os.path.abspath(self.path)))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()


def _reopen(path: str, offset: int, writable: bool) -> FileStore:
    return FileStore(path, offset, writable=writable)
