"""The SChunk members about sharing a frame (the cross-process lock, holds across several
operations, ``refresh``) and the metadata interface ``Meta`` and ``VLMeta`` use. Mixed into
:class:`~pyblosc2.SChunk`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TypeVar

from ..errors import ParamError
from ..frame.frame import HIDDEN_VLMETA, Frame
from ..params import CParams
from .guards import reads, writes

__all__ = ["SharingMembers"]

S = TypeVar("S", bound="SharingMembers")


class SharingMembers:
    """Frame sharing and the metadata interface (a mixin of :class:`~pyblosc2.SChunk`)."""

    _frame: Frame
    _requested_chunksize: int | None
    cparams: CParams

    def _check_writable(self) -> None:  # overridden by SChunk
        raise NotImplementedError

    # -- sharing with other handles and threads --------------------------------------------
    @property
    def locking(self) -> bool:
        """Whether this handle uses C-Blosc2's cross-process frame lock."""
        return self._frame.lock is not None

    @contextlib.contextmanager
    def holding_lock(self: S) -> Iterator[S]:
        """Hold the exclusive frame lock across several operations, atomic together to other
        locking handles (re-entrant; the frame is re-read on entry when another handle
        changed it). With ``locking`` off, this handle's threads and other pyblosc2 writers
        are excluded; a handle whose frame changed raises ``FrameChangedError``.

        >>> from pyblosc2 import SChunk
        >>> s = SChunk(chunksize=40, cparams={"typesize": 4})
        >>> with s.holding_lock():
        ...     s.append_data(bytes(40)); s.append_data(bytes(40))
        1
        2
        """
        with self._frame.writing():
            yield self

    @contextlib.contextmanager
    def holding_shared_lock(self: S) -> Iterator[S]:
        """Hold the frame for reading across several reads, which see one state of it: with
        locking, C-Blosc2's shared frame lock (other handles' changes wait; readers do not),
        the frame re-read on entry when another handle changed it. A change cannot start
        inside (:meth:`holding_lock` is the exclusive hold).

        >>> from pyblosc2 import SChunk
        >>> s = SChunk(chunksize=40, data=bytes(80))
        >>> with s.holding_shared_lock():
        ...     s.nchunks, len(s.get_chunk(1)) > 0
        (2, True)
        """
        with self._frame.reading():
            yield self

    def refresh(self) -> bool:
        """Re-read the frame (what another handle wrote becomes visible); returns whether
        anything changed (always False in memory), as python-blosc2's does."""
        return self._frame.refresh()

    # -- the metadata interface used by Meta / VLMeta -------------------------------------
    @property
    @reads
    def metalayers(self) -> tuple[tuple[str, bytes], ...]:
        """The metalayers as ``(name, msgpack bytes)`` pairs (what ``Meta`` reads)."""
        return self._frame.header.metalayers

    @writes
    def update_metalayer(self, name: str, content: bytes) -> None:
        """Replace the msgpack bytes of metalayer ``name`` by ``content`` of the same size."""
        self._check_writable()
        metas = dict(self._frame.header.metalayers)
        if name not in metas:
            raise NotImplementedError("metalayers can only be added when the SChunk is created")
        if len(content) != len(metas[name]):
            raise ParamError("The length of the content in a metalayer cannot change.")
        self._frame.update_metalayers(
            tuple((k, content if k == name else v) for k, v in self._frame.header.metalayers)
        )

    @property
    @reads
    def vlmeta_entries(self) -> tuple[tuple[str, bytes], ...]:
        """The user's vlmeta entries as ``(name, compressed bytes)`` pairs."""
        return tuple((k, v) for k, v in self._frame.trailer.vlmeta if k not in HIDDEN_VLMETA)

    @writes
    def set_vlmeta_entries(self, entries: tuple[tuple[str, bytes], ...]) -> None:
        """Replace every vlmeta entry by ``entries`` (``(name, compressed bytes)``), one commit."""
        self._check_writable()
        hidden = sorted(HIDDEN_VLMETA & {k for k, _ in entries})
        if hidden:
            raise ParamError(f"vlmeta names {hidden} are reserved by pyblosc2")
        self._frame.set_vlmeta(entries, self._requested_chunksize)

    @property
    def vlmeta_nthreads(self) -> int:
        """The thread count vlmeta values are compressed with (``cparams.nthreads``)."""
        return self.cparams.nthreads
