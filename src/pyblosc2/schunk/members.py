"""More of python-blosc2's SChunk members: ``info``/``info_items``, ``update_cparams``/
``update_dparams``, ``set_slice``, ``update_special``, ``get_lazychunk`` (chunk-format.md §13)
and the context-manager protocol. Mixed into :class:`~pyblosc2.SChunk`."""

from __future__ import annotations

import struct
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.header import LAZY, ChunkHeader
from ..chunk.layout import ChunkKind
from ..chunk.special import make_special_chunk
from ..chunk.vlblocks import decode_vl_block
from ..constants import EXTENDED_HEADER_LENGTH, MAX_OVERHEAD, SpecialValue
from ..errors import BoundsError, ParamError, ParamTypeError
from ..frame.index import special_of
from ..params import CParams, DParams, parse_int
from .guards import reads

__all__ = ["InfoReport", "SChunkMembers", "format_nbytes", "lazy_chunk", "open_members"]

#: the lazy chunk trailer after the bstarts: nchunk (int32), offset (int64) (§13)
LAZY_TRAILER = struct.Struct("<iq")


def format_nbytes(nbytes: int) -> str:
    """A byte count with its binary-unit reading, as python-blosc2's ``info`` shows it.

    >>> format_nbytes(16), format_nbytes(24000), format_nbytes(3 * 2**30)
    ('16 (16 B)', '24000 (23.44 KiB)', '3221225472 (3.00 GiB)')
    """
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            human = f"{nbytes} B" if unit == "B" else f"{value:.2f} {unit}"
            return f"{nbytes} ({human})"
        value /= 1024
    raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class ChunkInfo:
    """What :meth:`SChunk.iterchunks_info` yields."""

    nchunk: int
    cratio: float
    special: SpecialValue
    repeated_value: bytes | None
    lazychunk: bool


class InfoReport:
    """``name : value`` lines, printed by ``repr`` (what ``SChunk.info`` shows).

    >>> print(repr(InfoReport([("type", "SChunk"), ("chunksize", 16)])))
    type      : SChunk
    chunksize : 16
    <BLANKLINE>
    """

    def __init__(self, items: Sequence[tuple[str, Any]]) -> None:
        self.items = list(items)

    def __repr__(self) -> str:
        width = max((len(k) for k, _ in self.items), default=0)
        lines = []
        for key, value in self.items:
            lines.append(
                textwrap.fill(
                    str(value),
                    width=96,
                    initial_indent=key.ljust(width) + " : ",
                    subsequent_indent=" " * width + " : ",
                )
            )
        return "\n".join(lines) + "\n"

    __str__ = __repr__


class _Host(Protocol):
    _frame: Any
    _storage: Any
    cparams: CParams
    dparams: DParams

    @property
    def nchunks(self) -> int: ...
    @property
    def typesize(self) -> int: ...
    @property
    def chunksize(self) -> int: ...
    @property
    def blocksize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def cbytes(self) -> int: ...
    @property
    def cratio(self) -> float: ...
    @property
    def urlpath(self) -> str | None: ...
    def get_chunk(self, nchunk: int) -> bytes: ...
    def _chunk_index(self, n: int) -> int: ...
    def update_chunk(self, nchunk: int, chunk: Any) -> int: ...
    def __setitem__(self, key: slice, value: Any) -> None: ...
    def holding_lock(self) -> AbstractContextManager[Any]: ...


def lazy_chunk(raw: bytes, nchunk: int, offset: int) -> bytes:
    """The lazy form of stored chunk ``raw`` (chunk-format.md §13): its header with the lazy
    bit, its bstarts, then ``nchunk``, ``offset`` and each block's compressed span."""
    h = ChunkHeader.from_bytes(raw[:EXTENDED_HEADER_LENGTH])
    nblocks = h.nblocks
    head = h.with_sizes(blosc2_flags=h.blosc2_flags | LAZY).to_bytes()
    if h.memcpyed:
        bstarts = np.zeros(nblocks, "<i4")  # C leaves these words unread
        spans = np.full(nblocks, h.effective_blocksize, "<i4")
        if nblocks:
            spans[-1] = h.nbytes - (nblocks - 1) * h.effective_blocksize
    else:
        bstarts = np.frombuffer(raw, "<i4", nblocks, EXTENDED_HEADER_LENGTH)
        order = np.sort(bstarts)
        ends = np.append(order[1:], h.cbytes)
        # each block runs to the next larger start (the last to cbytes)
        spans = (ends - order)[np.searchsorted(order, bstarts)].astype("<i4")
    return head + bstarts.tobytes() + LAZY_TRAILER.pack(nchunk, offset) + spans.tobytes()


class SChunkMembers:
    """Mixed into :class:`~pyblosc2.SChunk`."""

    @reads
    def iterchunks_info(self: _Host) -> Iterator[ChunkInfo]:
        """Yield a :class:`ChunkInfo` per chunk (reads chunk headers only)."""
        for n in range(self.nchunks):
            raw = self._frame.get_chunk(n)
            ch = ChunkHeader.from_bytes(raw[:EXTENDED_HEADER_LENGTH])
            value = (
                bytes(raw[ch.header_len : ch.cbytes]) if ch.special == SpecialValue.VALUE else None
            )
            yield ChunkInfo(n, ch.nbytes / ch.cbytes, SpecialValue(ch.special), value, False)

    def index_special(self: _Host, nchunk: int) -> SpecialValue:
        """The special value chunk ``nchunk`` is recorded as in the frame's offsets index
        (ZERO, NAN or UNINIT: no bytes stored), else NOT_SPECIAL; reads no chunk, decodes
        only the part of the index holding it (the compute engine answers such chunks
        without decoding them).

        >>> from pyblosc2 import SChunk, SpecialValue
        >>> s = SChunk(chunksize=40, cparams={"typesize": 4})
        >>> s.fill_special(20, SpecialValue.ZERO)
        2
        >>> s.index_special(1).name
        'ZERO'
        """
        return special_of(self._frame.reader.offset(self._chunk_index(nchunk)))

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False

    @property
    def info_items(self: _Host) -> list[tuple[str, Any]]:
        """``(name, value)`` pairs describing the SChunk (python-blosc2's ``info_items``).

        >>> from pyblosc2 import SChunk
        >>> dict(SChunk(chunksize=32, data=b"a" * 32).info_items)["nbytes"]
        '32 (32 B)'
        """
        return [
            ("type", type(self).__name__),
            ("chunksize", self.chunksize),
            ("blocksize", self.blocksize),
            ("typesize", self.typesize),
            ("nbytes", format_nbytes(self.nbytes)),
            ("cbytes", format_nbytes(self.cbytes)),
            ("cratio", f"{self.cratio:.2f}x"),
            ("cparams", self.cparams),
            ("dparams", self.dparams),
        ]

    @property
    def info(self) -> InfoReport:
        """A printable report of :attr:`info_items`.

        >>> from pyblosc2 import SChunk
        >>> print(repr(SChunk(chunksize=8, data=bytes(8)).info).splitlines()[1])
        chunksize : 8
        """
        host: Any = self
        return InfoReport(host.info_items)

    def update_cparams(self: _Host, new_cparams: CParams | dict[str, Any]) -> None:
        """Use ``new_cparams`` for chunks compressed from now on (a dict updates the current
        parameters).

        >>> from pyblosc2 import SChunk
        >>> s = SChunk(cparams={"typesize": 4}); s.update_cparams({"clevel": 1})
        >>> s.cparams.clevel, s.cparams.typesize
        (1, 4)
        """
        if isinstance(new_cparams, CParams):
            self.cparams = new_cparams
        elif isinstance(new_cparams, dict):
            from dataclasses import asdict

            self.cparams = CParams.from_any({**asdict(self.cparams), **new_cparams})
        else:
            raise ParamTypeError(
                f"new_cparams must be a CParams or a dict, got {type(new_cparams).__name__}"
            )

    def update_dparams(self: _Host, new_dparams: DParams | dict[str, Any]) -> None:
        """Use ``new_dparams`` for decompression from now on.

        >>> from pyblosc2 import SChunk
        >>> s = SChunk(); s.update_dparams({"nthreads": 2}); s.dparams.nthreads
        2
        """
        if not isinstance(new_dparams, DParams | dict):
            raise ParamTypeError(
                f"new_dparams must be a DParams or a dict, got {type(new_dparams).__name__}"
            )
        self.dparams = DParams.from_any(new_dparams)

    def set_slice(self: _Host, value: Any, start: int = 0, stop: int | None = None) -> None:
        """``self[start:stop] = value`` (python-blosc2's ``set_slice``).

        >>> import numpy as np; from pyblosc2 import SChunk
        >>> s = SChunk(chunksize=16, data=np.zeros(8, np.int32))
        >>> s.set_slice(np.array([7, 8], np.int32), 1, 3)
        >>> np.frombuffer(s[0:4], np.int32).tolist()
        [0, 7, 8, 0]
        """
        self[slice(start, stop)] = value

    def update_special(
        self: _Host, nchunk: int, special_value: SpecialValue, value: Any = None
    ) -> int:
        """Replace chunk ``nchunk`` with a special chunk of the same size (``value`` for
        ``SpecialValue.VALUE``); returns the number of chunks.

        >>> import numpy as np; from pyblosc2 import SChunk, SpecialValue
        >>> s = SChunk(chunksize=400, data=np.arange(100, dtype=np.int32))
        >>> s.update_special(0, SpecialValue.ZERO), np.frombuffer(s[0:2], np.int32).tolist()
        (1, [0, 0])
        """
        if not isinstance(special_value, SpecialValue) or special_value == SpecialValue.NOT_SPECIAL:
            raise ParamTypeError(
                "special_value must be a SpecialValue other than NOT_SPECIAL, "
                f"got {special_value!r}"
            )
        if special_value == SpecialValue.VALUE and value is None:
            raise ParamError("value cannot be None when special_value is VALUE")
        with self.holding_lock():  # the chunk's size is read under the lock of its update
            if not 0 <= nchunk < self.nchunks:
                raise BoundsError(f"nchunk must be in range [0, {self.nchunks}), got {nchunk}")
            chunk = self.get_chunk(nchunk)[:EXTENDED_HEADER_LENGTH]
            nbytes = ChunkHeader.from_bytes(chunk).nbytes
            return self.update_chunk(
                nchunk, make_special_chunk(special_value, nbytes, self.typesize, value)
            )

    def get_lazychunk(self: _Host, nchunk: int) -> bytes:
        """Chunk ``nchunk`` as C-Blosc2's ``get_lazychunk`` gives it: for a chunk stored in a
        file, the lazy form (header with the lazy bit, bstarts, ``nchunk``, offset, block
        spans: chunk-format.md §13); for a chunk in memory, its header alone; special chunks
        whole.

        >>> import numpy as np; from pyblosc2 import SChunk
        >>> len(SChunk(chunksize=400, data=np.arange(100, dtype=np.int32)).get_lazychunk(0))
        32
        """
        raw = self.get_chunk(nchunk)
        h = ChunkHeader.from_bytes(raw[:EXTENDED_HEADER_LENGTH])
        if h.special:
            return raw
        if self.urlpath is None:
            return raw[:MAX_OVERHEAD]
        n = nchunk % self.nchunks
        off = self._frame.reader.offset(n)
        if self._frame.sparse:
            return lazy_chunk(raw, off, off)
        return lazy_chunk(raw, n, self._frame.header.header_len + off)

    def get_vlblock(self: _Host, nchunk: int, nblock: int) -> bytes:
        """Block ``nblock`` of VL-block chunk ``nchunk``, decoding only that block
        (python-blosc2's ``get_vlblock``; spec §12).

        >>> from pyblosc2 import SChunk
        >>> from pyblosc2.blosc2_ext import vlcompress
        >>> s = SChunk(chunksize=-1)
        >>> s.append_chunk(vlcompress([b"ab", b"cde"], typesize=1, nthreads=1))
        1
        >>> s.get_vlblock(0, 1)
        b'cde'
        """
        frame = self._frame
        reader = ChunkReader.open(frame.get_chunk(self._chunk_index(nchunk)), frame.reader.context)
        if reader.layout.kind != ChunkKind.VL_BLOCKS:
            raise ParamError(f"chunk {nchunk} is not a VL-block chunk")
        return decode_vl_block(reader, parse_int(nblock, "nblock", 0))


def open_members(cls: Any, path: str, mode: str, kwargs: dict[str, Any]) -> Any:
    """What :func:`pyblosc2.schunk.open` does with an existing frame at ``path``: open it
    (``mmap_mode`` decides the access when given), then apply the ``cparams``/``dparams``
    given for this handle; ``mode='w'`` empties a plain SChunk, as python-blosc2's ``open``
    does (an N-d array, with a ``b2nd`` metalayer, keeps its chunks: python-blosc2 4.x opens
    it whole with ``mode='w'``, and its shape has to go on matching them)."""
    cparams, dparams = kwargs.pop("cparams", None), kwargs.pop("dparams", None)
    if kwargs.get("mmap_mode") is None:
        kwargs.pop("mmap_mode", None)
        kwargs["mode"] = "r" if mode == "r" else "a"
    s = cls(urlpath=path, _any_frame=True, **kwargs)
    if cparams is not None:
        s.cparams = s._cparams_from_header(cparams)
    if dparams is not None:
        s.dparams = DParams.from_any(dparams)
    if mode == "w" and s.mode != "r" and s.nchunks and "b2nd" not in dict(s.metalayers):
        s.set_chunks([])
    return s
