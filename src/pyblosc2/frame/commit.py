"""The commit of a contiguous-frame change: at every instant the header on disk describes a
whole, valid frame, so a process killed at any point leaves the old or the new content
(frame-format.md §2.9: readers ignore bytes after ``frame_len``, and dead bytes inside the
data area).

A change writes a *tail* (new chunk bytes, then the index chunk and the trailer) at position
``P``, the end of the data area it keeps. That region holds the live index and trailer, so
they are first moved out of the way:

1. **stage**: copy the live index + trailer to ``Q = max(old end, new end)``, beyond every
   byte either frame uses (when the new frame keeps no chunk, stage its own trailer there);
2. **commit 1**: rewrite the header's changed bytes: the same content, a data area now ending
   at ``Q`` (everything from the old index on is dead space);
3. write the new tail at ``P`` (only dead bytes are overwritten);
4. **commit 2**: rewrite the header's changed bytes: the new frame. This is the commit point;
5. truncate to the new end (cleanup: a failure here is ignored, the next commit reclaims it).

Each header write covers the bytes that change, from the start of the header: a few fields
of the fixed prefix, and the metalayers when they change (a b2nd resize rewrites the shape).
While that stays within the first sector (``SECTOR`` bytes), a write is all or nothing, for
a kill (the kernel copies a page at a time) and for a power loss (disks write whole
sectors). A failure in steps 1-4 restores the last header that describes the old content and
re-raises; ``durable=True`` syncs after every step, so a power loss has the same guarantees
as a kill.

A header change that reaches past the first sector (a large metalayer rewritten) would be
torn by a kill, so such a change **replaces the whole file** instead: the new frame (its new
header, the kept data area copied, the new tail) is written beside the file under a
temporary name and renamed over it, the commit point (:meth:`FileStore.replace`). Handles
that read the old file notice the replacement when they re-read the frame. Stores without a
file (memory) are written in place.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..backends.base import ByteStore
from ..errors import FormatError
from .header import POS_HEADER_LEN, FrameHeader, patched_header

__all__ = ["SECTOR", "commit_contiguous"]

#: the bytes a storage device writes all or nothing; header writes stay inside the first
SECTOR = 512


def _changed(old: bytes, new: bytes) -> int:
    """How many leading bytes of ``new`` must be written over ``old`` (same lengths)."""
    if old == new:
        return 0
    diff = np.frombuffer(old, np.uint8) != np.frombuffer(new, np.uint8)
    return len(diff) - int(diff[::-1].argmax())


class _Header:
    """The on-disk header: what is there now, and writes that can be undone."""

    def __init__(self, store: ByteStore, current: bytes, durable: bool) -> None:
        self.store, self.current, self.durable = store, current, durable

    def write(self, new: bytes) -> None:
        end = _changed(self.current, new)
        if end:
            try:
                self.store.write(0, new[:end])
                self.sync()
            except BaseException:
                # a torn header would describe no frame: put back what described one
                with contextlib.suppress(Exception):
                    self.store.write(0, self.current[:end])
                raise
        self.current = new

    def sync(self) -> None:
        if self.durable:
            self.store.sync()


def commit_contiguous(
    store: ByteStore,
    old: FrameHeader,
    new: FrameHeader,
    index: bytes,
    trailer: bytes,
    data: bytes,
    *,
    durable: bool = False,
) -> FrameHeader:
    """Make ``new`` (with ``data`` ending its data area, then ``index`` and ``trailer``) the
    frame in ``store``, following the steps of the module docstring. Returns the header as
    written (``frame_len`` computed). On failure the old content is live and the error is
    re-raised (the caller re-reads the frame)."""
    hl = old.header_len
    pos = new.header_len + new.cbytes - len(data)
    new = new.with_fields(frame_len=new.header_len + new.cbytes + len(index) + len(trailer))
    final = new.to_bytes()
    if len(final) != hl:
        raise FormatError("frame header", "header_len", POS_HEADER_LEN, hl, len(final))
    old_index_pos, old_end, new_end = hl + old.cbytes, old.frame_len, new.frame_len
    old_raw = old.to_bytes()
    replace_file = getattr(store, "replace", None)
    if replace_file is not None and _changed(old_raw, final) > SECTOR:
        # the new frame: its header, the kept data area [hl, pos), the new tail
        replace_file(final, pos, b"".join([data, index, trailer]), durable)
        return new
    q = max(old_end, new_end)
    if pos >= old_index_pos:  # the kept chunks stay; the live index + trailer move to q
        staged_tail = bytes(store.read(old_index_pos, old_end - old_index_pos))
        staged = patched_header(old_raw, q + len(staged_tail), q - hl)
    elif not data and not index:  # no chunk is kept: stage the new, empty frame at q
        staged_tail = trailer
        staged = patched_header(final, q + len(trailer), q - hl)
    else:
        raise AssertionError("new chunk bytes must follow the kept data area")
    header = _Header(store, old_raw, durable)
    try:
        store.write(q, staged_tail)
        header.sync()
        header.write(staged)
        store.write(pos, b"".join([data, index, trailer]))
        header.sync()
        header.write(final)
    except BaseException:
        if header.current == old_raw:  # nothing committed: drop the staged copy
            with contextlib.suppress(Exception):
                store.truncate(old_end)
        raise
    with contextlib.suppress(Exception):
        store.truncate(new_end)
        header.sync()
    return new
