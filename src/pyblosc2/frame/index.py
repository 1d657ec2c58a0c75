"""The index chunk: one int64 LE per logical chunk, or a special value (frame-format.md §4).

Non-negative offsets are positions relative to the end of the header (contiguous frames) or
chunk-file ids (sparse frames); negative ones encode a chunk with no stored bytes.

An open frame keeps its index as an :class:`OffsetIndex`: the chunk header, its layout (block
starts within the chunk, known filters and codec) and its sizes are checked when the frame is
opened; the stream headers of a block (§15) and the offsets it holds are checked when the block
is first decoded, so opening costs the same at any number of chunks. The first
:data:`PICKS` lookups in a block decode only the offset each needs when the light first read
serves the index chunk (:func:`~pyblosc2.chunk.firstread.read_in_block`: that block's stream
headers checked as they are read, the value checked); the next one decodes the block whole
and keeps it. A
lookup fails when its own offset is bad; :meth:`OffsetIndex.all` when any is.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.firstread import read_in_block
from ..chunk.header import OFF_CBYTES, OFF_NBYTES, OFF_TYPESIZE, ChunkHeader
from ..chunk.layout import ChunkKind, ChunkLayout
from ..constants import SpecialValue
from ..errors import FormatError, TruncatedError
from .indexpick import PairPicker, pair_picker

__all__ = [
    "PICKS",
    "SPECIAL_OFFSETS",
    "SPECIAL_OFFSET_OF",
    "STORABLE_SPECIALS",
    "OffsetIndex",
    "decode_index",
    "special_of",
]

# byte 7 of the LE int64 is 0x80 | special id; bytes 0-6 are zero
SPECIAL_OFFSETS = {
    np.int64(-0x7F00000000000000): SpecialValue.ZERO,  # 0x8100000000000000
    np.int64(-0x7E00000000000000): SpecialValue.NAN,  # 0x8200000000000000
    np.int64(-0x7C00000000000000): SpecialValue.UNINIT,  # 0x8400000000000000
}
SPECIAL_OFFSET_OF = {v: k for k, v in SPECIAL_OFFSETS.items()}
_SPECIAL_INTS = frozenset(int(k) for k in SPECIAL_OFFSETS)
#: lookups in a block served by decoding only their offset, before the block is decoded whole
#: (reading a chunk looks up its offset and the next chunk's)
PICKS = 2
# the special chunks an index can record as offsets (no bytes stored)
STORABLE_SPECIALS = tuple(SPECIAL_OFFSET_OF)
_SPECIAL_ARRAY = np.array(list(SPECIAL_OFFSETS), np.int64)
MAX_NCHUNKS = 268_435_455  # INT32_MAX / 8


def decode_index(chunk: bytes | memoryview, nchunks: int | None, where: int) -> np.ndarray:
    """The offsets of an index chunk at frame position ``where``; ``nchunks`` None when the
    frame has variable-size chunks (then the index decides)."""
    return OffsetIndex.open(chunk, nchunks, where).all()


class OffsetIndex:
    """The offsets of an index chunk whose header and sizes are checked, each of its blocks
    decoded (and its values checked) on first need. ``chunk`` must not change afterwards
    (``open`` copies a view); lookups may come from several threads (a block decoded twice
    at worst)."""

    __slots__ = ("_blocks", "_full", "_per_block", "_picked", "_picker", "_reader", "nchunks")

    def __init__(self, reader: ChunkReader, nchunks: int) -> None:
        self._reader = reader
        self.nchunks = nchunks
        bs = reader.header.blocksize
        # offsets per decoded piece: a block of a chunk with regular blocks, else the whole
        whole = reader.header.nblocks <= 1 or bs % 8 or bs < 8
        self._per_block = max(1, nchunks if whole else bs // 8)
        self._blocks: dict[int, np.ndarray] = {}
        #: per block, the lookups that decoded only their offset
        self._picked: dict[int, int] = {}
        self._full: np.ndarray | None = None
        #: the pair lookups' plan (:mod:`.indexpick`), made at the first one
        self._picker: PairPicker | Literal[False] | None = False

    @classmethod
    def open(cls, chunk: bytes | memoryview, nchunks: int | None, where: int) -> OffsetIndex:
        """Check the index chunk at frame position ``where`` (its header, layout and sizes;
        ``nchunks`` None when the frame has variable-size chunks); no offset is decoded and
        no stream header read (each block's are checked when it is first decoded)."""
        if not isinstance(chunk, bytes):
            chunk = bytes(chunk)  # a view of a store could change under a later lookup
        h = ChunkHeader.from_bytes(chunk)
        if h.cbytes > len(chunk):
            raise TruncatedError(
                "chunk header",
                "cbytes",
                OFF_CBYTES,
                f"at most {len(chunk)} (buffer size)",
                h.cbytes,
            )
        view = memoryview(chunk)[: h.cbytes]
        layout = ChunkLayout.parse(h, lambda pos, n: view[pos : pos + n], spans=False)
        # a reader of no block's bytes yet: the blocks a lookup needs are checked then
        blocks = () if layout.kind == ChunkKind.BLOCKS else None
        reader = ChunkReader.from_layout(layout, view, blocks=blocks)
        if h.typesize != 8:
            raise FormatError("index chunk", "typesize", where + OFF_TYPESIZE, "8", h.typesize)
        if h.nbytes % 8 or h.nbytes // 8 > MAX_NCHUNKS:
            raise FormatError(
                "index chunk",
                "nbytes",
                where + OFF_NBYTES,
                f"a multiple of 8, at most {8 * MAX_NCHUNKS}",
                h.nbytes,
            )
        if nchunks is not None and h.nbytes != 8 * nchunks:
            raise FormatError(
                "index chunk",
                "nbytes",
                where + OFF_NBYTES,
                f"8 * nchunks = {8 * nchunks}",
                h.nbytes,
            )
        return cls(reader, h.nbytes // 8)

    def __len__(self) -> int:
        return self.nchunks

    def offset(self, n: int) -> int:
        """The offset of chunk ``n`` (``0 <= n < nchunks``): at the first :data:`PICKS`
        lookups in its block only that offset is decoded, at the next one the block (kept)."""
        if self._full is not None:
            return int(self._full[n])  # (all checked)
        per = self._per_block
        b = n // per
        block = self._blocks.get(b)
        if block is None:
            raw = self._take_picks(b, n, 1)
            if raw is not None:
                return self._checked(n, int.from_bytes(raw, "little", signed=True))
            first, stop = b * per, min(self.nchunks, (b + 1) * per)
            # the block's offsets by the same light read (its stream headers checked as
            # they are read; 16 KiB BloscLZ blocks: 40-70 us less than the full reader)
            got = read_in_block(self._reader.buf, 8 * first, 8 * stop)
            if got is not None:
                block = got.view("<i8").astype(np.int64)
            else:
                block = self._decode(first, stop)
            self._blocks[b] = block
        return self._checked(n, int(block[n - b * per]))

    def pair(self, n: int) -> tuple[int, int | None]:
        """The offsets of chunks ``n`` and ``n + 1`` (None past the last chunk, or when
        chunk ``n`` is special: the next one is then not looked up), as :meth:`offset` gives
        them; when both are picked from one block, by one read of their 16 bytes (counted as
        two picks: a chunk's first read looks up both)."""
        if n + 1 >= self.nchunks:
            return self.offset(n), None
        per = self._per_block
        b = n // per
        if self._full is None and (n + 1) // per == b and b not in self._blocks:
            raw = self._take_picks(b, n, 2)
            if raw is not None:
                first = self._checked(n, int.from_bytes(raw[:8], "little", signed=True))
                if first < 0:
                    return first, None
                return first, self._checked(n + 1, int.from_bytes(raw[8:], "little", signed=True))
        first = self.offset(n)
        return first, self.offset(n + 1) if first >= 0 else None

    def _take_picks(self, b: int, n: int, count: int) -> bytes | None:
        """The ``8 * count`` bytes of offsets ``n`` .. ``n + count - 1`` (in block ``b``, not
        decoded) while the block still serves picks (each one counted), by the index's picker
        or else the general light read; None: the block is to be decoded (or neither served
        them: the full reader names what is wrong)."""
        picked = self._picked.get(b, 0)
        if picked >= PICKS:
            return None
        self._picked[b] = picked + count
        picker = self._picker
        if picker is False:
            picker = self._picker = pair_picker(self._reader)
        raw = None if picker is None else picker(b, n - b * self._per_block, count)
        if raw is None:
            got = read_in_block(self._reader.buf, 8 * n, 8 * (n + count))
            raw = None if got is None else got.tobytes()
        return raw

    @staticmethod
    def _checked(n: int, value: int) -> int:
        """``value``, the offset of chunk ``n``, when it is one (non-negative or special)."""
        if value < 0 and value not in _SPECIAL_INTS:
            raise _bad_offset(n, value)
        return value

    def all(self) -> np.ndarray:
        """Every offset (decoded and checked once, then kept)."""
        if self._full is None:
            full = self._decode(0, self.nchunks)
            bad = np.flatnonzero((full < 0) & ~np.isin(full, _SPECIAL_ARRAY))
            if bad.size:
                raise _bad_offset(int(bad[0]), int(full[bad[0]]))
            self._full = full
            self._blocks.clear()
        return self._full

    def _decode(self, first: int, stop: int) -> np.ndarray:
        """Offsets ``[first, stop)``, the stream headers of the blocks holding them checked
        first (the errors a whole check on open gave); their values are checked by the
        lookups that take them."""
        reader = self._reader
        whole = first == 0 and stop == self.nchunks
        if reader.present is not None:  # regular blocks: theirs checked, none kept
            layout = reader.layout
            need = (
                range(layout.header.nblocks) if whole else layout.needed_blocks(8 * first, 8 * stop)
            )
            reader = reader.with_bytes(reader.buf, need)
        raw = reader.decode() if whole else reader.decode_range(8 * first, 8 * stop)
        return raw.view("<i8").astype(np.int64)


def _bad_offset(n: int, value: int) -> FormatError:
    return FormatError(
        "index chunk",
        f"offset[{n}]",
        None,
        "non-negative or a special value (0x81/0x82/0x84 << 56)",
        hex(value & 0xFFFFFFFFFFFFFFFF),
    )


def special_of(offset: int) -> SpecialValue:
    """The special value of a negative offset (NOT_SPECIAL for a stored chunk)."""
    return SPECIAL_OFFSETS.get(np.int64(offset), SpecialValue.NOT_SPECIAL)
