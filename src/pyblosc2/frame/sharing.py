"""A frame shared with other handles, threads and processes (docs/crash-safety.md, "Other
handles").

Every operation of a handle runs inside one *hold* of its frame, taken once by the outermost
call of its thread (nested calls share it):

* a **read hold** (:meth:`SharedFrame.reading`): with locking, C-Blosc2's shared frame lock;
  the frame is re-read first when the lock's generation counter says another handle changed
  it. Without locking, a local frame is *polled*: the header prefix (a sparse frame: its index
  object) is compared with what this handle read, and the frame re-read when it differs, so
  readers follow a writer (python-blosc2's SWMR). A poll sees every change that moves the
  header's sizes; a change that keeps them (a same-size vlmeta or metalayer rewrite, a
  reorder) is seen by :meth:`SharedFrame.refresh` and by the next write.
* a **write hold** (:meth:`SharedFrame.writing`): with locking, the exclusive lock (the frame
  re-read first when changed); the change then reads the state it edits (chunk count, offsets,
  metalayers, vlmeta, digests) inside the hold and commits before it ends. Without locking, an
  exclusive ``flock`` on the frame file (or directory) serialises pyblosc2 writers, and a
  handle whose frame changed since it last read it is refused with
  :class:`~pyblosc2.FrameChangedError` (it would decide from a stale state).

Among one handle's threads (:class:`~.holds.Holds`), read holds without locking run at the
same time (the compute engine's threads decode their chunks in parallel), while a write hold
and a replacement of the handle's view of the frame (a re-read: a poll that found a change,
:meth:`SharedFrame.refresh`) run alone, with no read hold under way: a thread sees the frame
(and an NDArray its shape) before or after another thread's change, whole. With locking,
read holds also run alone, each taking and letting go of C-Blosc2's shared lock as before:
overlapping holds of a handle's threads would keep that lock from another process's writer
for as long as they overlap (``flock`` lets new shared holders in while a writer waits; a
python-blosc2 writer waited minutes behind two processes of three reading threads each). A
change or a ``refresh()`` cannot start inside a read hold of the same thread
(``RuntimeError``: it would replace the view the other readers read); a read inside a write
hold shares it.

Each time this handle's view of the frame is replaced, :attr:`SharedFrame.version` grows:
what is derived from the frame (an NDArray's geometry) is derived again when it changed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..backends.base import ByteStore, ObjectStore
from ..backends.directory import DirectoryStore
from ..backends.file import FileStore
from ..backends.lock import FrameLock
from ..backends.memory import MemoryStore
from ..errors import FormatError, FrameChangedError
from ..kernels import active as active_kernels
from .contiguous import FrameReader
from .header import HEADER_MINLEN, FrameHeader
from .holds import NONE, READ, WRITE, Holds
from .sparse import SPARSE_INDEX
from .trailer import Trailer

__all__ = ["SharedFrame"]

_STALE = (
    "the frame was changed by another handle since this one read it; "
    "open it again (or refresh()), or use locking=True on every handle"
)


class SharedFrame:
    """The sharing part of :class:`~.frame.Frame`: its view of the storage and the holds."""

    store: ByteStore
    directory: ObjectStore | None
    lock: FrameLock | None
    reader: FrameReader

    def __init__(
        self,
        store: ByteStore,
        directory: ObjectStore | None,
        lock: FrameLock | None,
        exact: bool,
    ) -> None:
        self.store = store
        self.directory = directory
        self.lock = lock
        self._holds = Holds()  # one handle, many threads
        #: grows each time this handle's view of the frame is replaced
        self.version = 0
        # whether other handles can see this frame (then changes check they are not stale)
        self.shared = not isinstance(store, MemoryStore)
        # local frames are polled by unlocked readers (remote ones would cost a request)
        self.polled = isinstance(store, FileStore) and (
            directory is None or isinstance(directory, DirectoryStore)
        )
        if lock is not None:
            lock.acquire(exclusive=False)
        try:
            if directory is not None:  # the index object as named now (under the lock)
                self._reopen_index()
            if exact or not self.shared:
                self.reader = FrameReader.open(self.store, exact=exact, directory=directory)
                seen = self.reader.seen
                self._seen = seen if seen is not None else self._on_disk(self.reader)
            else:
                self.reader, self._seen = self._snapshot()
        finally:
            if lock is not None:
                lock.release()

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        del state["_holds"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._holds = Holds()

    # -- what this handle sees ---------------------------------------------------------------
    @property
    def header(self) -> FrameHeader:
        return self.reader.header

    @property
    def trailer(self) -> Trailer:
        return self.reader.trailer

    def _set_reader(self, reader: FrameReader, seen: bytes) -> None:
        """Make ``reader`` this handle's view (``seen``: the bytes it was read from)."""
        self.reader, self._seen = reader, seen
        self.version += 1  # after the reader: whoever reads the new version sees the reader

    def _on_disk(self, reader: FrameReader) -> bytes:
        """The bytes that say what the frame ``reader`` read holds: its header, index and
        trailer as they are now (for a sparse frame, its index object)."""
        store = reader.source
        if self.directory is not None:
            return bytes(store.read(0, store.size))
        h = reader.header
        tail = h.header_len + h.cbytes
        return bytes(store.read(0, h.header_len)) + bytes(store.read(tail, h.frame_len - tail))

    def _snapshot(self, attempts: int = 8) -> tuple[FrameReader, bytes]:
        """The frame as the storage holds it now and the bytes it was read from, the same
        frame (retried while an unlocked writer moves it)."""
        for _ in range(attempts):
            reader = FrameReader.open_consistent(self.store, directory=self.directory)
            # the bytes it was parsed from (checked unchanged by the prefix test below)
            seen = reader.seen if reader.seen is not None else self._on_disk(reader)
            if self.directory is not None or self._prefix() == seen[:HEADER_MINLEN]:
                return reader, seen
        raise FormatError(
            "frame header",
            "frame_len",
            None,
            "a frame that stays put while it is read",
            f"a frame that changed {attempts} times",
        )

    def _prefix(self) -> bytes:
        return bytes(self.store.read(0, HEADER_MINLEN))

    def _reopen_index(self) -> None:
        """A sparse frame's index object is replaced on every change: open it by name."""
        assert self.directory is not None
        writable = self.store.writable
        self.store.close()
        self.store = self.directory.open_object(SPARSE_INDEX, writable=writable)

    def _replaced(self) -> bool:
        """Whether the frame's file was replaced by another one (a whole-file commit)."""
        replaced = getattr(self.store, "replaced", None)
        return self.directory is None and replaced is not None and bool(replaced())

    def refresh(self) -> bool:
        """Re-read the frame as the storage holds it now (after another handle changed it);
        returns whether anything changed. It replaces the view this handle's threads read:
        it waits for their read holds to end, and cannot start inside a read hold of this
        thread (``RuntimeError``); inside a write hold it re-reads at once."""
        if not self.shared:
            return False
        holds = self._holds
        if holds.mine == READ:
            raise RuntimeError(
                "refresh() cannot start inside a read of the same handle: it would replace the "
                "view of the frame the handle's other readers read"
            )
        if holds.mine == WRITE:
            return self._refresh()
        holds.enter_exclusive()
        try:
            return self._refresh()
        finally:
            holds.leave_exclusive()

    def _refresh(self) -> bool:
        """:meth:`refresh`, in the exclusive hold."""
        replaced = False  # another file: its chunks may differ under the same index
        if self.directory is not None:
            self._reopen_index()
        elif self._replaced():
            getattr(self.store, "reopen")()  # noqa: B009 - FileStore only
            replaced = True
        if not replaced and self.directory is None and self._unchanged():
            self.reader = self.reader.fresh()  # the same parts; nothing read is kept
            return False
        reader, seen = self._snapshot()
        if seen == self._seen and not replaced:
            self.reader = reader  # the same content: what derives from it stays
            return False
        self._set_reader(reader, seen)
        return True

    def _unchanged(self) -> bool:
        """Whether a contiguous frame still holds the header, index and trailer this handle
        read, byte for byte (the prefix read before and after them, so that a commit under
        way is not taken for no change): what :meth:`refresh` finds most of the time, told
        without parsing anything."""
        before = self._prefix()
        if before != self._seen[:HEADER_MINLEN]:
            return False
        return self._on_disk(self.reader) == self._seen and self._prefix() == before

    def _moved(self) -> bool:
        """Without locking (a poll): whether the frame's header prefix (a sparse frame: its
        index object) differs from what this handle read."""
        if self.directory is not None:
            try:
                return self.directory.read_object(SPARSE_INDEX) != self._seen
            except FileNotFoundError:
                return False
        prefix = self._prefix()
        self.store.bytes_read -= len(prefix)  # a poll is not what a read read
        return prefix != self._seen[:HEADER_MINLEN]

    def _catch_up(self) -> None:
        """A poll found the frame moved: re-read it in the exclusive hold (unless another
        thread did first), then hold it for reading. A poll that finds a frame being
        rewritten keeps the current view (the next one retries), as C-Blosc2's does."""
        holds = self._holds
        holds.enter_exclusive()
        try:
            if self._moved():
                with contextlib.suppress(FormatError):
                    self._refresh()
        except BaseException:
            holds.leave_exclusive()
            raise
        holds.downgrade()

    def follow(self) -> None:
        """Without locking, outside a hold: catch up with what the poll sees (python-blosc2's
        NDArray writes follow another handle's resize before reading their key). With
        locking, the hold the change takes re-reads the frame."""
        if not self._holds.mine and self.lock is None and self.polled:
            with self.reading():
                pass

    def _stale(self) -> bool:
        """Without locking, inside the write guard: whether the frame changed since this
        handle read it.

        The header, the whole index chunk and the trailer are compared, not a cheaper
        fingerprint: a change by another writer can keep every size (a reorder of the offsets
        rewrites an index of raw or memcpyed blocks byte for byte in place; a same-size vlmeta
        rewrite keeps the header), so only the bytes themselves tell. The cost stays small
        as the frame grows: the index's whole blocks are BloscLZ streams (a few hundred bytes
        per 2,048 chunks for regular offsets) and the growing block is at most 16 KiB."""
        if self._replaced():
            return True
        if self.directory is not None:
            return self.directory.read_object(SPARSE_INDEX) != self._seen
        return self._on_disk(self.reader) != self._seen

    # -- holds -------------------------------------------------------------------------------
    def _acquire(self, exclusive: bool) -> None:
        """Take the frame lock, re-reading the frame when another handle changed it (a frame
        that cannot be read releases the lock before the error propagates)."""
        assert self.lock is not None
        if exclusive:
            # the kernel set is chosen (numba imported and warmed: up to a second) before the
            # lock, not while every other sharer waits for it
            active_kernels()
        if self.lock.acquire(exclusive=exclusive):
            try:
                self._refresh()
            except BaseException:
                self.lock.release()
                raise

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold what a read needs (see the module docstring)."""
        holds = self._holds
        if holds.mine:  # nested in this thread's read or write hold
            yield
            return
        if self.lock is not None:
            # one at a time: each read hold takes and lets go of C-Blosc2's shared lock, as
            # before (overlapping holds would keep it from another process's writer)
            with self._locked_read():
                yield
            return
        holds.enter_read()
        if self.polled:
            try:
                moved = self._moved()
            except BaseException:
                holds.leave_read()
                raise
            if moved:
                holds.leave_read()
                self._catch_up()
        holds.mine = READ
        try:
            yield
        finally:
            holds.mine = NONE
            holds.leave_read()

    @contextmanager
    def _locked_read(self) -> Iterator[None]:
        """A read hold with locking: alone among this handle's threads (see :meth:`reading`)."""
        assert self.lock is not None
        holds = self._holds
        holds.enter_exclusive()
        try:
            self._acquire(exclusive=False)
            holds.mine = READ
            try:
                yield
            finally:
                holds.mine = NONE
                self.lock.release()
        finally:
            holds.leave_exclusive()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold what a change needs (see the module docstring)."""
        holds = self._holds
        if holds.mine == WRITE:
            yield
            return
        if holds.mine == READ:
            raise RuntimeError("a change cannot start inside a read of the same handle")
        holds.enter_exclusive()
        try:
            holds.mine = WRITE
            with self._changing():
                yield
        finally:
            holds.mine = NONE
            holds.leave_exclusive()

    @contextmanager
    def _changing(self) -> Iterator[None]:
        """The cross-process part of a write hold (see the module docstring)."""
        if self.lock is not None:
            self._acquire(exclusive=True)
            try:
                yield
            finally:
                self.lock.release()
            return
        holder: Any = self.directory if self.directory is not None else self.store
        guard = holder.exclusive() if self.shared and hasattr(holder, "exclusive") else None
        with guard if guard is not None else contextlib.nullcontext():
            if self.shared and self.store.writable and self._stale():
                raise FrameChangedError(_STALE)
            yield

    def close(self) -> None:
        self.store.close()
        if self.lock is not None:
            self.lock.close()
