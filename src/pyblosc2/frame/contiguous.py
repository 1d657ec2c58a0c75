"""Reading contiguous frames (cframes) from memory or from a file at an offset
(frame-format.md §1, §2.9, §4, §5, §7). Opening reads the header, the index chunk and the
trailer only; a chunk is read when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np

from .._bytes import same_bytes
from ..backends.base import ByteStore, ObjectStore
from ..backends.file import FileStore
from ..backends.memory import MemoryStore
from ..chunk.decode import ChunkReader
from ..chunk.firstread import read_in_block
from ..chunk.header import (
    OFF_CBYTES,
    OFF_NBYTES,
    P_BLOCKSIZE,
    P_CBYTES,
    P_NBYTES,
    ChunkHeader,
    block_geometry,
    peek,
)
from ..chunk.layout import ChunkKind, ChunkLayout
from ..chunk.ranged import FetchFn, read_blocks_ranges, stored_reader, with_blocks
from ..chunk.special import special_chunk
from ..constants import EXTENDED_HEADER_LENGTH, SpecialValue
from ..context import ChunkContext
from ..errors import BoundsError, FormatError, ParamError
from .header import (
    CONTIGUOUS,
    HEADER_MINLEN,
    POS_CBYTES,
    POS_CHUNKSIZE,
    POS_FRAME_LEN,
    POS_FRAME_TYPE,
    POS_HEADER_LEN,
    POS_TYPESIZE,
    SPARSE,
    FrameHeader,
    check_magic,
)
from .heldblock import HeldBlock, first_note, in_one_block, read_held
from .index import OffsetIndex, special_of
from .indexwide import prefetch_chunks, variable_special_size
from .sparse import read_chunk_object
from .trailer import TRAILER_MINLEN, Trailer, locate_trailer

T = TypeVar("T")

__all__ = ["BufferSource", "FileSource", "FrameReader"]

ZIP_MAGIC = b"PK\x03\x04"
#: a small chunk as :meth:`FrameReader._small_chunk` read it: its bytes, its parsed header
#: (None: not parsed, its common fields checked) and its position
_Small = tuple[bytes | memoryview, ChunkHeader | None, int]
#: a stored chunk this small is read whole by a ranged read, in one request
SMALL_CHUNK = 1 << 14
#: parsed readers of small chunks (at most SMALL_CHUNK bytes each) an open frame keeps
WHOLE_CACHE = 64

_HEADER_LEN = slice(POS_HEADER_LEN, POS_HEADER_LEN + 4)

# Read-only views of a frame for FrameReader.open (the stores themselves, named for readers).
FileSource = FileStore


def BufferSource(buf: bytes | bytearray | memoryview) -> MemoryStore:
    """A read-only, zero-copy store over an in-memory frame."""
    return MemoryStore(buf, readonly=True)


@dataclass(frozen=True, slots=True)
class _Unparsed:
    """A small chunk kept by a first read (:func:`read_in_block`): its own bytes, made into
    a checked reader at its next read."""

    buf: bytes = field(repr=False)


@dataclass(slots=True)
class FrameReader:
    """A validated contiguous frame: header, trailer, chunk offsets (an array, or the
    :class:`~.index.OffsetIndex` of an opened frame, decoded block by block on first need)."""

    source: ByteStore
    header: FrameHeader
    trailer: Trailer
    index: np.ndarray | OffsetIndex
    directory: ObjectStore | None = None
    #: the header, index chunk and trailer bytes this reader was parsed from (a contiguous
    #: frame with chunks, as :meth:`open` read them), else None
    seen: bytes | None = field(default=None, repr=False, compare=False)
    #: chunk number -> a reader of its checked layout (None: decoded whole), filled by
    #: ranged reads. A FrameReader is replaced on every change and refresh of its frame, so
    #: the cache never outlives what it read.
    _layouts: dict[int, ChunkReader | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: chunk number -> the parsed, checked reader of a small chunk read whole (its own
    #: ``bytes``) and where they lie, the last :data:`WHOLE_CACHE` of them: a read of it
    #: again reads its bytes in one request and, when they are the same, parses nothing.
    #: (C-Blosc2 rewrites a chunk in place when the new one has its size, leaving the
    #: frame's header as it was: a poll of the header does not see that commit.)
    _wholes: dict[int, tuple[ChunkReader | _Unparsed, int]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: small chunks read by blocks once (:meth:`with_chunk_blocks`), at most WHOLE_CACHE
    _by_blocks: set[int] = field(default_factory=set, init=False, repr=False, compare=False)
    #: the last block decoded for a read inside one block (:mod:`.heldblock`), which
    #: serves the next read in the same block when its bytes are the same
    _held: HeldBlock | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def open(
        cls, source: ByteStore, *, exact: bool = False, directory: ObjectStore | None = None
    ) -> FrameReader:
        """Parse the frame at the start of ``source`` (``exact``: the source must be exactly
        the frame, as for in-memory cframes). ``directory``: ``source`` is the
        ``chunks.b2frame`` of that sparse frame's directory (§6)."""
        return cls._parse(source, source.read(0, HEADER_MINLEN), exact, directory)

    @classmethod
    def _parse(
        cls,
        source: ByteStore,
        prefix: bytes | memoryview,
        exact: bool = False,
        directory: ObjectStore | None = None,
    ) -> FrameReader:
        """:meth:`open` of the frame whose first :data:`HEADER_MINLEN` bytes were read as
        ``prefix``: the header read whole, then the index and the trailer in one read."""
        size = source.size
        if len(prefix) < HEADER_MINLEN:
            raise FormatError(
                "frame header", "length", 0, f"at least {HEADER_MINLEN} bytes", len(prefix)
            )
        if bytes(prefix[:4]) == ZIP_MAGIC:
            raise FormatError(
                "frame header",
                "magic",
                0,
                "a Blosc2 frame",
                "a zip archive (a DictStore/TreeStore .b2z: open it with pyblosc2.open)",
            )
        check_magic(prefix)
        header_len = int.from_bytes(prefix[_HEADER_LEN], "big", signed=True)
        if not HEADER_MINLEN < header_len <= size:
            raise FormatError(
                "frame header",
                "header_len",
                POS_HEADER_LEN,
                f"{HEADER_MINLEN + 10}..{size}",
                header_len,
            )
        head = source.read(0, header_len)
        h = FrameHeader.from_bytes(head, buffer_len=size)
        if exact and h.frame_len != size:
            raise FormatError(
                "frame header", "frame_len", POS_FRAME_LEN, f"the buffer size {size}", h.frame_len
            )
        expected_type = CONTIGUOUS if directory is None else SPARSE
        if h.frame_type != expected_type:
            raise FormatError(
                "frame header",
                "frame_type",
                POS_FRAME_TYPE,
                f"{expected_type} ({'contiguous' if directory is None else 'sparse'})",
                h.frame_type,
            )
        if h.frame_len < h.header_len + TRAILER_MINLEN:
            raise FormatError(
                "frame header",
                "frame_len",
                POS_FRAME_LEN,
                f">= header_len + {TRAILER_MINLEN}",
                h.frame_len,
            )
        ipos = h.header_len + (h.cbytes if directory is None else 0)
        # the index chunk and the trailer follow each other to the end: one read
        rest = (
            source.read(ipos, h.frame_len - ipos) if h.frame_len - ipos >= TRAILER_MINLEN else b""
        )
        if len(rest) < h.frame_len - ipos:  # (a source cut short: read as before, piece by piece)
            rest = b""
        last = (
            rest[-TRAILER_MINLEN:]
            if rest
            else source.read(h.frame_len - TRAILER_MINLEN, TRAILER_MINLEN)
        )
        tlen = locate_trailer(last, h.frame_len, h.header_len)
        tpos = h.frame_len - tlen
        tail = rest[tpos - ipos :] if rest and tpos >= ipos else source.read(tpos, tlen)
        trailer = Trailer.from_bytes(tail, tpos)
        offsets: np.ndarray | OffsetIndex
        seen = None
        if h.nbytes == 0:
            offsets = np.empty(0, np.int64)
        else:
            if ipos + EXTENDED_HEADER_LENGTH > tpos:
                raise FormatError(
                    "frame header",
                    "cbytes",
                    POS_CBYTES,
                    f"at most {tpos - h.header_len - EXTENDED_HEADER_LENGTH} "
                    "(room for the index chunk)",
                    h.cbytes,
                )
            index = rest[: tpos - ipos] if rest else source.read(ipos, tpos - ipos)
            offsets = OffsetIndex.open(index, h.nchunks_fixed, ipos)
            if directory is None:
                seen = bytes(head) + bytes(index) + bytes(tail)
        return cls(source, h, trailer, offsets, directory, seen)

    @classmethod
    def open_consistent(
        cls, source: ByteStore, *, directory: ObjectStore | None = None, attempts: int = 8
    ) -> FrameReader:
        """:meth:`open`, for a frame another process may be changing: the header prefix (which
        every change rewrites) is read again after the index and trailer, and the open is
        retried when it changed meanwhile, so a reader never mixes two frames' parts or trips
        over a tail the writer has just moved (``docs/crash-safety.md``)."""
        for _ in range(attempts):
            before = bytes(source.read(0, HEADER_MINLEN))
            try:
                reader = cls._parse(source, before, directory=directory)
            except FormatError:
                if bytes(source.read(0, HEADER_MINLEN)) != before:
                    continue
                raise
            if bytes(source.read(0, HEADER_MINLEN)) == before:
                return reader
        raise FormatError(
            "frame header",
            "frame_len",
            POS_FRAME_LEN,
            "a frame that stays put while it is read",
            f"a frame that changed {attempts} times",
        )

    def fresh(self) -> FrameReader:
        """A reader of the same frame (its parsed header, trailer and index) that keeps
        nothing this one read of its chunks (see :meth:`SharedFrame.refresh`)."""
        return FrameReader(
            self.source, self.header, self.trailer, self.index, self.directory, self.seen
        )

    @property
    def offsets(self) -> np.ndarray:
        """Every chunk's offset (the whole index decoded, once)."""
        index = self.index
        return index if isinstance(index, np.ndarray) else index.all()

    @property
    def nchunks(self) -> int:
        return len(self.index)

    def offset(self, n: int) -> int:
        """The offset of chunk ``n`` (``0 <= n < nchunks``), decoding only what holds it."""
        index = self.index
        return int(index[n]) if isinstance(index, np.ndarray) else index.offset(n)

    def offset_pair(self, n: int) -> tuple[int, int | None]:
        """The offsets of chunks ``n`` and ``n + 1`` (None past the last chunk)."""
        index = self.index
        if isinstance(index, np.ndarray):
            return int(index[n]), int(index[n + 1]) if n + 1 < len(index) else None
        return index.pair(n)

    prefetch = prefetch_chunks

    def chunk_nbytes(self, n: int) -> int:
        """Uncompressed size of chunk ``n`` as the frame header implies (fixed chunk sizes)."""
        h = self.header
        if n == self.nchunks - 1 and h.nbytes % h.chunksize:
            return h.nbytes % h.chunksize
        return h.chunksize

    _variable_special_size = variable_special_size

    def get_chunk(self, n: int) -> bytes | memoryview:
        """The stored (or, for special offsets, synthesised) chunk ``n``."""
        if not 0 <= n < self.nchunks:
            raise BoundsError(f"chunk {n} out of range 0..{self.nchunks - 1}")
        h = self.header
        off = self.offset(n)
        if off < 0:
            kind = special_of(off)
            nb = self.chunk_nbytes(n) if h.chunksize > 0 else self._variable_special_size(n)
            ts = h.typesize
            bs = h.blocksize if 0 < h.blocksize <= nb else max(nb, 1)
            if kind == SpecialValue.NAN and ts not in (4, 8):
                raise FormatError(
                    "frame header", "typesize", POS_TYPESIZE, "4 or 8 for NaN chunks", ts
                )
            try:
                return special_chunk(kind, nb, ts, bs)
            except ParamError as exc:
                raise FormatError(
                    "frame header",
                    "chunksize/typesize",
                    POS_CHUNKSIZE,
                    f"sizes a {kind.name} chunk can have",
                    str(exc),
                ) from None
        if self.directory is not None:
            data = read_chunk_object(self.directory, off, n, h.cbytes)
            self._check_size(n, ChunkHeader.from_bytes(data), None)
            return data
        if off > h.cbytes - EXTENDED_HEADER_LENGTH:
            raise FormatError(
                "index chunk",
                f"offset[{n}]",
                None,
                f"at most cbytes - 32 = {h.cbytes - EXTENDED_HEADER_LENGTH}",
                off,
            )
        pos = h.header_len + off
        ch = ChunkHeader.from_bytes(self.source.read(pos, EXTENDED_HEADER_LENGTH))
        self._check_size(n, ch, pos)
        if off + ch.cbytes > h.cbytes:
            raise FormatError(
                f"chunk {n}",
                "cbytes",
                pos + OFF_CBYTES,
                f"at most {h.cbytes - off} (end of the data area)",
                ch.cbytes,
            )
        return self.source.read(pos, ch.cbytes)

    def _check_size(self, n: int, ch: ChunkHeader, pos: int | None) -> None:
        """A stored chunk must hold the size the frame header implies (§2.7, chunk spec
        §15.2.10): otherwise item positions computed from ``chunksize`` would be wrong."""
        if self.header.chunksize > 0 and ch.nbytes != self.chunk_nbytes(n):
            raise FormatError(
                f"chunk {n}",
                "nbytes",
                None if pos is None else pos + OFF_NBYTES,
                f"{self.chunk_nbytes(n)} (from the frame's nbytes and chunksize)",
                ch.nbytes,
            )

    @property
    def context(self) -> ChunkContext:
        """What the plug-ins of this frame's chunks see of it: its typesize and metalayers."""
        return ChunkContext(self.header.typesize, self.header.metalayers)

    def read_chunk_range(
        self, n: int, lo: int, hi: int, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Bytes ``[lo, hi)`` of chunk ``n`` (into ``out`` when given), reading only what they
        need: the chunk's layout (header, block starts, dictionary size) is parsed and checked
        once per open frame and cached, then each call reads the spans of the needed blocks,
        one positioned read per merged span (:func:`read_blocks_range`). Special offsets,
        sparse objects and chunks without regular blocks are read and decoded whole."""
        return self.read_chunk_ranges(n, [(lo, hi)], [out])[0]

    def read_chunk_ranges(
        self, n: int, ranges: Sequence[tuple[int, int]], outs: Sequence[np.ndarray | None]
    ) -> list[np.ndarray]:
        """:meth:`read_chunk_range` for several ranges of chunk ``n``, read together."""
        whole = self._kept(n)
        if whole is None:
            # (a chunk known to be read whole is read again in one request when small)
            small = self._small_chunk(n) if self._layouts.get(n) is None else None
            if small is not None and len(ranges) == 1:
                got = self._first_read(n, small, *ranges[0], outs[0])
                if got is not None:
                    return [got]
            reader = None if small is not None else self.block_reader(n)
            if reader is not None:
                fetch = self._chunk_fetch(n)
                if len(ranges) == 1 and (j := in_one_block(reader, *ranges[0])) is not None:
                    return [
                        read_held(self._held, self._keep, n, reader, j, *ranges[0], outs[0], fetch)
                    ]
                return read_blocks_ranges(fetch, reader, ranges, outs)
            whole = self._whole_reader(n, small)
        if len(ranges) == 1 and (j := in_one_block(whole, *ranges[0])) is not None:
            return [read_held(self._held, self._keep, n, whole, j, *ranges[0], outs[0], None)]
        return [whole.decode_range(lo, hi, out=o) for (lo, hi), o in zip(ranges, outs, strict=True)]

    def _keep(self, held: HeldBlock) -> None:
        self._held = held

    def _first_read(
        self, n: int, small: _Small, lo: int, hi: int, out: np.ndarray | None
    ) -> np.ndarray | None:
        """Bytes ``[lo, hi)`` of small chunk ``n`` read for the first time (``small``: its
        bytes as :meth:`_small_chunk` read them) when they lie in one block of a chunk
        :func:`read_in_block` serves, with no reader set up; the bytes are kept unparsed
        (a reader is made of them at the chunk's next read), and the block noted as read
        once (:mod:`.heldblock`). None: nothing kept, the full reader serves."""
        data, _, pos = small
        got = read_in_block(data, lo, hi, out)
        if got is not None:
            entry = _Unparsed(data if isinstance(data, bytes) else bytes(data))
            self._keep_whole(n, entry, pos)
            f = peek(data)  # (read_in_block served it: a common header)
            assert f is not None
            bs = block_geometry(f[P_NBYTES], f[P_BLOCKSIZE])[0]
            held = first_note(entry, n, lo // bs, bs)
            if held is not None:
                self._held = held
        return got

    def _kept(self, n: int) -> ChunkReader | None:
        """The kept reader of chunk ``n`` when the bytes where it lies are still its bytes
        (parsed now when a first read kept them unparsed)."""
        kept = self._wholes.get(n)
        if kept is None:
            return None
        whole, pos = kept
        if pos >= 0 and not same_bytes(self.source.read(pos, len(whole.buf)), whole.buf):
            self._wholes.pop(n, None)  # (another thread may have dropped it first)
            self._layouts.pop(n, None)
            return None
        if isinstance(whole, _Unparsed):
            reader = self._whole_reader(n, (whole.buf, None, pos))
            held = self._held
            if held is not None and held.owner is whole:  # the first read's note
                self._held = replace(held, owner=reader)
            return reader
        return whole

    def _whole_reader(self, n: int, small: _Small | None) -> ChunkReader:
        """The checked reader of chunk ``n`` read whole (``small``: its bytes, parsed header
        and position when :meth:`_small_chunk` read them), kept in ``_wholes`` when small."""
        if small is None:
            off = self.offset(n)
            pos = self.header.header_len + off if off >= 0 and self.directory is None else -1
            buf = self.get_chunk(n)
            h = ChunkHeader.from_bytes(buf)
            if h.cbytes > min(SMALL_CHUNK, len(buf)) or self.directory is not None:
                return ChunkReader.open(buf, self.context)  # (which names a short buffer)
            data = bytes(memoryview(buf)[: h.cbytes])  # parsed once, from its own bytes
        else:
            data, pos = bytes(small[0]), small[2]  # its own bytes: no view pins a store
            h = small[1] or ChunkHeader.from_bytes(data)
        view = memoryview(data)
        layout = ChunkLayout.parse(h, lambda pos, k: view[pos : pos + k])
        whole = ChunkReader.from_layout(layout, view, ctx=self.context)
        self._keep_whole(n, whole, pos)
        return whole

    def chunk_reader(self, n: int) -> ChunkReader:
        """The checked reader of chunk ``n`` read whole: the kept one while its stored bytes
        are the same, else read and parsed now (and kept when small)."""
        return self._kept(n) or self._whole_reader(n, None)

    def _keep_whole(self, n: int, whole: ChunkReader | _Unparsed, pos: int) -> None:
        """Keep ``whole`` as chunk ``n``'s (stored at ``pos``; -1: not in the file), the
        last :data:`WHOLE_CACHE` chunks only."""
        wholes = self._wholes
        if n not in wholes and len(wholes) >= WHOLE_CACHE:
            try:  # the oldest goes (another thread may have taken it first)
                del wholes[next(iter(wholes))]
            except (KeyError, RuntimeError, StopIteration):
                wholes.clear()
        wholes[n] = (whole, pos)

    def _small_chunk(self, n: int) -> _Small | None:
        """Stored chunk ``n`` when it fits in :data:`SMALL_CHUNK` bytes, read in one request
        (a ranged read of it would cost more requests than its bytes; it is then read whole
        from now on) with its parsed header and position, else None. The read stops at the
        next chunk's offset when that one is further on (as in a frame built by appends).
        Its header is checked as :meth:`get_chunk` checks it."""
        if self.directory is not None:
            return None
        off, nxt = self.offset_pair(n)
        if off < 0:
            return None
        h = self.header
        if off > h.cbytes - EXTENDED_HEADER_LENGTH:
            self.get_chunk(n)  # raises
        pos = h.header_len + off
        limit = min(SMALL_CHUNK, h.cbytes - off)
        if nxt is not None and off < nxt:
            limit = min(limit, nxt - off)  # appended frames: no bytes of the next chunk
        data = self.source.read(pos, limit)
        f = peek(data)
        ch = None
        if (
            f is not None
            and (h.chunksize <= 0 or f[P_NBYTES] == self.chunk_nbytes(n))
            and off + f[P_CBYTES] <= h.cbytes
        ):
            cbytes = f[P_CBYTES]  # a common header of the right size: parsed when needed
        else:
            ch = ChunkHeader.from_bytes(data[:EXTENDED_HEADER_LENGTH])
            self._check_size(n, ch, pos)
            if off + ch.cbytes > h.cbytes:
                self.get_chunk(n)  # raises
            cbytes = ch.cbytes
        if cbytes > len(data):
            return None
        self._layouts[n] = None
        return data[:cbytes], ch, pos

    def block_reader(self, n: int) -> ChunkReader | None:
        """The cached reader of stored chunk ``n``'s checked layout (:func:`stored_reader`;
        no block bytes), or None for special offsets, sparse objects and chunks without
        regular or memcpyed blocks."""
        off = self.offset(n)
        if off < 0 or self.directory is not None:
            return None
        if n in self._layouts:
            return self._layouts[n]
        reader = self._layouts[n] = self._stored_reader(n, off)
        return reader

    def with_chunk_blocks(
        self,
        n: int,
        reader: ChunkReader,
        blocks: Sequence[int],
        use: Callable[[ChunkReader], T],
        check: bool = True,
    ) -> T:
        """``use(bound)`` with ``bound`` = ``reader`` (chunk ``n``'s :meth:`block_reader`, of
        regular blocks) over the stored bytes of ``blocks`` (sorted), one positioned read per
        merged span (:func:`with_blocks`). A chunk of at most :data:`SMALL_CHUNK` stored
        bytes read this way a second time is read whole instead, parsed (every stream header
        checked) and kept as one-item reads keep it: its next reads use the kept reader while
        its stored bytes are the same, with nothing parsed again. (A first read does not:
        parsing every block of a chunk costs more than the few blocks a read touches.)"""
        whole = self._kept(n)
        if whole is None and reader.header.cbytes <= SMALL_CHUNK and self.directory is None:
            once = self._by_blocks
            if n in once:  # read by blocks before: read whole and kept from now on
                whole = self._whole_reader(n, None)
            elif len(once) < WHOLE_CACHE:
                once.add(n)
        if whole is not None:
            return use(whole)
        return with_blocks(self._chunk_fetch(n), reader, blocks, use, check)

    def _chunk_fetch(self, n: int) -> FetchFn:
        """``fetch(p, k)``: bytes ``[p, p + k)`` of stored chunk ``n`` (a regular offset)."""
        pos = self.header.header_len + self.offset(n)
        source = self.source

        def fetch(p: int, k: int) -> bytes | memoryview:
            return source.read(pos + p, k)

        return fetch

    def _stored_reader(self, n: int, off: int) -> ChunkReader | None:
        """A reader of the checked layout of stored chunk ``n`` at offset ``off``
        (:func:`stored_reader`), or None when it has no regular blocks (those are decoded
        whole)."""
        h = self.header
        if off > h.cbytes - EXTENDED_HEADER_LENGTH:
            self.get_chunk(n)  # raises
        pos = h.header_len + off
        ch = ChunkHeader.from_bytes(self.source.read(pos, EXTENDED_HEADER_LENGTH))
        self._check_size(n, ch, pos)
        if off + ch.cbytes > h.cbytes:
            self.get_chunk(n)  # raises
        if ch.special or ch.vl_blocks or ch.nbytes == 0:
            return None
        source = self.source

        def fetch(p: int, k: int) -> bytes | memoryview:
            return source.read(pos + p, k)

        layout = ChunkLayout.parse(ch, fetch)
        kinds = (ChunkKind.BLOCKS, ChunkKind.MEMCPYED)
        return stored_reader(fetch, layout, self.context) if layout.kind in kinds else None
