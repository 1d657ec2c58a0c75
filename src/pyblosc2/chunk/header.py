"""The chunk header: the 16-byte Blosc1 prefix and the 32-byte Blosc2 extension.

Implements spec §2 (prefix, version, flags, compformat), §3 (extended header), §4 (special
ids), §6.1 (block geometry) and the header checks of §15.1 (1-14) and §15.2 (1, 8).
Every offset of the layout is named here and nowhere else.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Any

from ..constants import (
    EXTENDED_HEADER_LENGTH,
    MAX_BLOCKSIZE,
    MAX_BUFFERSIZE,
    MAX_FILTERS,
    MAX_TYPESIZE,
    MIN_HEADER_LENGTH,
    Filter,
    SpecialValue,
)
from ..errors import FormatError

__all__ = [
    "BLOSC1_VERSION",
    "BLOSC2_VERSION",
    "P_BLOCKSIZE",
    "P_BLOSC2_FLAGS",
    "P_CBYTES",
    "P_FILTERS",
    "P_FILTERS_META",
    "P_FLAGS",
    "P_NBYTES",
    "P_TYPESIZE",
    "VL_VERSION",
    "ChunkHeader",
    "peek",
    "sized_header",
]

# -- layout -----------------------------------------------------------------------------------
_PREFIX = struct.Struct(
    "<BBBBiii"
)  # version, versionlz, flags, typesize, nbytes, blocksize, cbytes
_EXTENSION = struct.Struct("<6BBB6BBB")  # filters[6], udcompcode, compcode_meta, metas[6], f2, f
_WHOLE = struct.Struct("<BBBBiii6BBB6BBB")  # the 32-byte extended header in one unpack
OFF_VERSION, OFF_FLAGS, OFF_TYPESIZE, OFF_NBYTES, OFF_BLOCKSIZE, OFF_CBYTES = 0, 2, 3, 4, 8, 12
_I32 = struct.Struct("<i")
OFF_FILTERS, OFF_UDCOMPCODE, OFF_FILTERS_META, OFF_FLAGS2, OFF_BLOSC2_FLAGS = 16, 22, 24, 30, 31

# flags (byte 2)
DOSHUFFLE = 0x01
MEMCPYED = 0x02
DOBITSHUFFLE = 0x04
DODELTA = 0x08
DONT_SPLIT = 0x10
EXTENDED_MARKER = DOSHUFFLE | DOBITSHUFFLE
COMPFORMAT_SHIFT = 5

# blosc2_flags (byte 31) and blosc2_flags2 (byte 30)
USEDICT = 0x01
BIGENDIAN = 0x02
LAZY = 0x08
SPECIAL_SHIFT = 4
SPECIAL_MASK = 0x07
_SPECIAL_BITS = SPECIAL_MASK << SPECIAL_SHIFT
INSTR_CODEC = 0x80
VL_BLOCKS = 0x01

BLOSC1_VERSION = 2  # written by C-Blosc 1.x
ALPHA_VERSION = 3  # Blosc2 alpha: filters[5]/filters_meta[5] were not initialised
BLOSC2_VERSION = 5  # written by C-Blosc2 for every non-VL chunk
VL_VERSION = 6

_NO_FILTERS = (0,) * MAX_FILTERS
_WHERE = "chunk header"


def _check(cond: bool, fld: str, offset: int, expected: str, got: Any) -> None:
    if not cond:
        raise FormatError(_WHERE, fld, offset, expected, got)


#: indices of :func:`peek`'s tuple (the fields of the 32-byte header, in order)
P_FLAGS, P_TYPESIZE, P_NBYTES, P_BLOCKSIZE, P_CBYTES = 2, 3, 4, 5, 6
P_FILTERS, P_FILTERS_META, P_BLOSC2_FLAGS = slice(7, 13), slice(15, 21), 22


def block_geometry(nbytes: int, blocksize: int) -> tuple[int, int, int]:
    """``(effective block size, block count, leftover)`` of a chunk of regular blocks (§6.1):
    the block size clamped to ``nbytes`` (§15.1 #14), and the size of a last partial block
    (0: none).

    >>> block_geometry(10_000, 4096), block_geometry(100, 4096)
    ((4096, 3, 1808), (100, 1, 0))
    """
    bs = nbytes if 0 < nbytes < blocksize else blocksize
    if bs <= 0:
        return bs, 0, 0
    return bs, -(-nbytes // bs), nbytes % bs


def peek(buf: Any, offset: int = 0) -> tuple[int, ...] | None:
    """The fields of a common header at ``offset`` of ``buf`` in one unpack (index them with
    the ``P_*`` constants), when it is one: extended, a Blosc2 version, no special value, no
    VL blocks, sizes in range (a header :meth:`ChunkHeader.from_bytes` accepts without a
    field-by-field check). None for any other header, valid or not: a reader that peeks
    falls back to :meth:`ChunkHeader.from_bytes`, which names what is wrong.

    >>> f = peek(bytes.fromhex("0501350440000000400000004800000000000000000101000000000000000000"))
    >>> f[P_NBYTES], f[P_CBYTES], f[P_FILTERS]
    (64, 72, (0, 0, 0, 0, 0, 1))
    >>> peek(bytes(16)) is None
    True
    """
    if len(buf) - offset < EXTENDED_HEADER_LENGTH:
        return None
    f = _WHOLE.unpack_from(buf, offset)
    flags, typesize, nbytes, blocksize, cbytes = f[2], f[3], f[4], f[5], f[6]
    if (
        flags & EXTENDED_MARKER == EXTENDED_MARKER
        and f[21] == 0  # blosc2_flags2: no VL blocks, nothing unknown
        and not f[22] & _SPECIAL_BITS
        and f[0] != ALPHA_VERSION
        and cbytes >= EXTENDED_HEADER_LENGTH
        and 0 <= nbytes <= MAX_BUFFERSIZE
        and 0 < blocksize <= MAX_BLOCKSIZE
        and typesize > 0
    ):
        return f
    return None


@dataclass(frozen=True, slots=True)
class ChunkHeader:
    """A parsed chunk header. ``blocksize`` is the stored value (a block *count* for VL chunks).

    >>> h = ChunkHeader.from_bytes(bytes.fromhex(
    ...     "05013504400000004000000048000000000000000001010000000000000000"  "00"))
    >>> h.nbytes, h.typesize, h.compformat, h.filters, h.nblocks
    (64, 4, 1, (0, 0, 0, 0, 0, 1), 1)
    >>> ChunkHeader.from_bytes(h.to_bytes()) == h
    True
    """

    version: int
    versionlz: int
    flags: int
    typesize: int
    nbytes: int
    blocksize: int
    cbytes: int
    filters: tuple[int, ...] = _NO_FILTERS
    udcompcode: int = 0
    compcode_meta: int = 0
    filters_meta: tuple[int, ...] = _NO_FILTERS
    blosc2_flags2: int = 0
    blosc2_flags: int = 0
    extended: bool = field(default=True)
    # derived once (read per block on every read path): see the properties below
    effective_blocksize: int = field(init=False, repr=False, compare=False)
    nblocks: int = field(init=False, repr=False, compare=False)
    leftover: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        vl = self.extended and bool(self.blosc2_flags2 & VL_BLOCKS)
        bs, nblocks, leftover = block_geometry(self.nbytes, self.blocksize)
        if vl:
            nblocks, leftover = self.blocksize, 0  # the stored count for VL chunks
        object.__setattr__(self, "effective_blocksize", bs)
        object.__setattr__(self, "nblocks", nblocks)
        object.__setattr__(self, "leftover", leftover)

    # -- parsing --------------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, buf: Any, offset: int = 0) -> ChunkHeader:
        """Parse and validate a header at ``offset`` of ``buf`` (the rules of §15.1, 1-14).

        Only the header is checked here; rules that need the rest of the chunk are applied by
        the decoder.
        """
        # The common header (extended, Blosc2 version, no special value, no VL blocks, sizes
        # in range) in one unpack and one test; anything else, valid or not, takes the
        # field-by-field checks below, which name the first field that breaks a rule.
        f = peek(buf, offset)
        if f is not None:
            return cls(
                f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7:13], f[13], f[14], f[15:21], 0, f[22]
            )
        return cls._checked(buf, offset)

    @classmethod
    def _checked(cls, buf: Any, offset: int = 0) -> ChunkHeader:
        """:meth:`from_bytes` field by field (every header, and the reference for the
        common-case test there)."""
        mv = buf  # a bytes-like object whose len() is its size in bytes (see _bytes.as_view)
        avail = len(mv) - offset
        _check(
            avail >= MIN_HEADER_LENGTH,
            "length",
            offset,
            f"at least {MIN_HEADER_LENGTH} bytes",
            avail,
        )
        version, versionlz, flags, typesize, nbytes, blocksize, cbytes = _PREFIX.unpack_from(
            mv, offset
        )
        _check(
            cbytes >= MIN_HEADER_LENGTH,
            "cbytes",
            offset + OFF_CBYTES,
            f">= {MIN_HEADER_LENGTH}",
            cbytes,
        )
        _check(nbytes >= 0, "nbytes", offset + OFF_NBYTES, ">= 0", nbytes)
        _check(
            nbytes <= MAX_BUFFERSIZE, "nbytes", offset + OFF_NBYTES, f"<= {MAX_BUFFERSIZE}", nbytes
        )
        _check(blocksize > 0, "blocksize", offset + OFF_BLOCKSIZE, "> 0", blocksize)
        _check(
            blocksize <= MAX_BLOCKSIZE,
            "blocksize",
            offset + OFF_BLOCKSIZE,
            f"<= {MAX_BLOCKSIZE}",
            blocksize,
        )
        _check(typesize > 0, "typesize", offset + OFF_TYPESIZE, "> 0", typesize)
        extended = (flags & EXTENDED_MARKER) == EXTENDED_MARKER
        if not extended:
            return cls(
                version, versionlz, flags, typesize, nbytes, blocksize, cbytes, extended=False
            )

        _check(
            cbytes >= EXTENDED_HEADER_LENGTH,
            "cbytes",
            offset + OFF_CBYTES,
            f">= {EXTENDED_HEADER_LENGTH} (extended header)",
            cbytes,
        )
        _check(
            avail >= EXTENDED_HEADER_LENGTH,
            "length",
            offset,
            f"at least {EXTENDED_HEADER_LENGTH} bytes (extended header)",
            avail,
        )
        ext = _EXTENSION.unpack_from(mv, offset + MIN_HEADER_LENGTH)
        filters, metas = ext[0:6], ext[8:14]
        udcompcode, compcode_meta, flags2, bflags = ext[6], ext[7], ext[14], ext[15]
        if version == ALPHA_VERSION:  # §15.1 #11: alpha left slot 5 uninitialised
            filters, metas = (*filters[:5], 0), (*metas[:5], 0)
        hdr = cls(
            version,
            versionlz,
            flags,
            typesize,
            nbytes,
            blocksize,
            cbytes,
            tuple(filters),
            udcompcode,
            compcode_meta,
            tuple(metas),
            flags2,
            bflags,
            extended=True,
        )
        special = hdr.special
        _check(
            not (hdr.vl_blocks and special),
            "blosc2_flags",
            offset + OFF_BLOSC2_FLAGS,
            "no special value in a VL-block chunk",
            f"special {special}",
        )
        if special == SpecialValue.VALUE:
            vs = cbytes - EXTENDED_HEADER_LENGTH
            ok = 0 < vs <= MAX_TYPESIZE and vs <= nbytes and nbytes % vs == 0
            _check(
                ok,
                "cbytes",
                offset + OFF_CBYTES,
                f"32 + a value size dividing nbytes={nbytes}",
                cbytes,
            )
        elif special not in (0, SpecialValue.ZERO, SpecialValue.VALUE):
            _check(
                nbytes % typesize == 0,
                "nbytes",
                offset + OFF_NBYTES,
                f"a multiple of typesize {typesize} (special chunk)",
                nbytes,
            )
        _check(
            not (version > VL_VERSION and flags2 & ~VL_BLOCKS),
            "blosc2_flags2",
            offset + OFF_FLAGS2,
            "only bit 0 set (unknown format version)",
            flags2,
        )
        _check(
            not (hdr.vl_blocks and hdr.memcpyed),
            "flags",
            offset + OFF_FLAGS,
            "memcpyed bit clear in a VL-block chunk",
            hex(flags),
        )
        return hdr

    def to_bytes(self) -> bytes:
        """Serialize (16 or 32 bytes)."""
        prefix = _PREFIX.pack(
            self.version,
            self.versionlz,
            self.flags,
            self.typesize,
            self.nbytes,
            self.blocksize,
            self.cbytes,
        )
        if not self.extended:
            return prefix
        return prefix + _EXTENSION.pack(
            *self.filters,
            self.udcompcode,
            self.compcode_meta,
            *self.filters_meta,
            self.blosc2_flags2,
            self.blosc2_flags,
        )

    def with_sizes(
        self,
        *,
        cbytes: int | None = None,
        flags: int | None = None,
        blosc2_flags: int | None = None,
    ) -> ChunkHeader:
        """A copy with some fields changed (used by the writer)."""
        return replace(
            self,
            cbytes=self.cbytes if cbytes is None else cbytes,
            flags=self.flags if flags is None else flags,
            blosc2_flags=self.blosc2_flags if blosc2_flags is None else blosc2_flags,
        )

    # -- derived --------------------------------------------------------------------------
    @property
    def header_len(self) -> int:
        return EXTENDED_HEADER_LENGTH if self.extended else MIN_HEADER_LENGTH

    @property
    def memcpyed(self) -> bool:
        return bool(self.flags & MEMCPYED)

    @property
    def dont_split(self) -> bool:
        return bool(self.flags & DONT_SPLIT)

    @property
    def compformat(self) -> int:
        return self.flags >> COMPFORMAT_SHIFT

    @property
    def special(self) -> int:
        if not self.extended:
            return 0
        return (self.blosc2_flags >> SPECIAL_SHIFT) & SPECIAL_MASK

    @property
    def use_dict(self) -> bool:
        return self.extended and bool(self.blosc2_flags & USEDICT)

    @property
    def lazy(self) -> bool:
        return self.extended and bool(self.blosc2_flags & LAZY)

    @property
    def vl_blocks(self) -> bool:
        return self.extended and bool(self.blosc2_flags2 & VL_BLOCKS)

    @property
    def pipeline(self) -> tuple[tuple[int, int], ...]:
        """The (filter id, meta) of all six slots, slot 0 first.

        A 16-byte header expresses SHUFFLE/BITSHUFFLE in slot 5 and DELTA in slot 4 (§2.2).
        """
        if self.extended:
            return tuple(zip(self.filters, self.filters_meta, strict=True))
        slots = [(0, 0)] * MAX_FILTERS
        if self.flags & DOSHUFFLE:
            slots[5] = (Filter.SHUFFLE, 0)
        elif self.flags & DOBITSHUFFLE:
            slots[5] = (Filter.BITSHUFFLE, 0)
        if self.flags & DODELTA:
            slots[4] = (Filter.DELTA, 0)
        return tuple(slots)

    def block_size(self, j: int) -> int:
        """Uncompressed size of block ``j`` (non-VL). ``effective_blocksize`` (the block size
        used for geometry, clamped to ``nbytes``), ``nblocks`` (the stored count for VL
        chunks) and ``leftover`` are fields derived once."""
        if j == self.nblocks - 1 and self.leftover:
            return self.leftover
        return self.effective_blocksize

    def nstreams(self, j: int) -> int:
        """Streams of block ``j`` (§6.3): ``typesize`` for full split blocks, else 1."""
        if self.dont_split or self.vl_blocks or (j == self.nblocks - 1 and self.leftover):
            return 1
        return self.typesize


def sized_header(raw: bytes, nbytes: int, cbytes: int) -> bytes:
    """The header bytes ``raw`` (a :meth:`ChunkHeader.to_bytes`) with ``nbytes`` and ``cbytes``
    replaced: a writer's template filled in without building a header object.

    >>> h = ChunkHeader(5, 1, 0x35, 4, 64, 64, 72)
    >>> ChunkHeader.from_bytes(sized_header(h.to_bytes(), 32, 48)).nbytes
    32
    """
    out = bytearray(raw)
    _I32.pack_into(out, OFF_NBYTES, nbytes)
    _I32.pack_into(out, OFF_CBYTES, cbytes)
    return bytes(out)
