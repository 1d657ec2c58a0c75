"""C-Blosc2's cross-process frame lock, so pyblosc2 and python-blosc2 processes can share a
frame: an advisory ``flock`` on a ``.b2lock`` sidecar (next to a contiguous frame's file,
inside a sparse frame's directory), shared for readers and exclusive for writers, plus a
generation counter (a native ``uint64`` at byte 8 of the sidecar) that every exclusive holder
bumps, so a handle sees exactly when another one changed the frame (c-blosc2 ``frame.c``:
``frame_lock``/``frame_unlock``).

The lock is re-entrant per handle: nested acquisitions are covered by the outer one.
"""

from __future__ import annotations

import fcntl
import os
import struct
from typing import Any

__all__ = ["LOCK_NAME", "FrameLock", "lock_path", "locking_requested"]

LOCK_NAME = ".b2lock"
SEQ = struct.Struct("=Q")
SEQ_OFFSET = 8  # past the byte range Windows locks


def lock_path(urlpath: str, sparse: bool) -> str:
    """Where C-Blosc2 puts the sidecar of the frame at ``urlpath``."""
    return os.path.join(urlpath, LOCK_NAME) if sparse else urlpath + LOCK_NAME


def locking_requested(locking: bool) -> bool:
    """``locking``, or the fleet-wide ``BLOSC_LOCKING`` environment variable (not empty and
    not ``"0"``), as C-Blosc2 reads it."""
    env = os.environ.get("BLOSC_LOCKING", "")
    return bool(locking) or (env != "" and env != "0")


class FrameLock:
    """The lock of one frame, for one handle."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1
        self.depth = 0
        self.exclusive = False
        self.seq: int | None = None  # the generation this handle last saw

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrameLock, (self.path,))  # a copy opens its own sidecar descriptor

    def acquire(self, exclusive: bool) -> bool:
        """Take the lock (blocking); True when another handle changed the frame since this
        one last held it (the caller re-reads the frame)."""
        if self.depth:
            self.depth += 1
            return False
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o666)
        fcntl.flock(self._fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            raw = os.pread(self._fd, SEQ.size, SEQ_OFFSET)
            seq = SEQ.unpack(raw)[0] if len(raw) == SEQ.size else 0
            if exclusive:
                os.pwrite(self._fd, SEQ.pack((seq + 1) & 0xFFFFFFFFFFFFFFFF), SEQ_OFFSET)
        except BaseException:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            raise
        changed = seq != self.seq
        self.seq = seq + 1 if exclusive else seq
        self.depth, self.exclusive = 1, exclusive
        return changed

    def release(self) -> None:
        if self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # also releases a lock still held
            self._fd, self.depth = -1, 0

    def __del__(self) -> None:
        self.close()
