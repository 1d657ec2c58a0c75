"""The whole body of a remote object kept in a temporary file, for servers that cannot send
parts of it (no ``Range`` support): the body is streamed to the file in pieces of
:data:`PIECE` bytes, so memory stays bounded whatever the object's size, and every later read
is served from the file. A body that would not fit in the file's directory (its announced
``Content-Length`` against the free space) is refused before a byte is fetched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref

from ..errors import RemoteError

__all__ = ["PIECE", "Spill"]

#: bytes streamed at a time from the response into the file
PIECE = 1 << 20
#: free space left in the spill's directory after the body is written
_MARGIN = 64 << 20


class Spill:
    """An anonymous temporary file (removed when closed, or when the process ends) holding
    one object's bytes, written once in order and then read at random.

    >>> s = Spill(); s.write(b"hello "); s.write(b"world"); s.done(); s.size, s.read(6, 5)
    (11, b'world')
    >>> s.close()
    """

    def __init__(self, directory: str | None = None, expected: int | None = None) -> None:
        where = directory or tempfile.gettempdir()
        os.makedirs(where, exist_ok=True)
        if expected is not None:
            free = shutil.disk_usage(where).free
            if expected + _MARGIN > free:
                raise RemoteError(
                    f"the server sends whole objects only: {expected} bytes to download, but "
                    f"{where} has {free} bytes free"
                )
        # owned here: closed by close(), or when the Spill is collected
        self._file = tempfile.TemporaryFile(dir=directory, prefix="pyblosc2-spill-")  # noqa: SIM115
        self._closer = weakref.finalize(self, self._file.close)
        self.size = 0

    def write(self, data: bytes) -> None:
        self._file.write(data)
        self.size += len(data)

    def done(self) -> None:
        """The body is complete: later reads see all of it."""
        self._file.flush()

    def read(self, pos: int, n: int) -> bytes:
        """Bytes ``[pos, pos + n)`` (fewer at the end)."""
        return os.pread(self._file.fileno(), max(0, min(n, self.size - pos)), pos)

    def close(self) -> None:
        self._closer()
