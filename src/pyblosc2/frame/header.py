"""The frame header: the fixed 87-byte msgpack prefix and the metalayer section
(spec frame-format.md §2, §3).

C reads the prefix at fixed positions, so a writer must emit exactly these fixed-width msgpack
types (never a generic packer's compact encodings); every position is named here once.
Integers in the header are big-endian.
"""

from __future__ import annotations

import functools
import operator
import struct
from dataclasses import dataclass, field, replace

from ..constants import MAX_TYPESIZE
from ..errors import FormatError, NotAFrameError, ParamError, TruncatedError
from .msgindex import MAX_NAME_LEN, pack_index, parse_index
from .trailer import TRAILER_MINLEN

__all__ = ["FRAME_MAGIC", "HEADER_MINLEN", "MAX_NAME_LEN", "FrameHeader", "patched_header"]

FRAME_MAGIC = b"b2frame\x00"
HEADER_MINLEN = 87
META_SECTION_MIN = 10  # 93 CD xxxx DE 0000 DC 0000
MAX_METALAYERS = 16
# positions of the fixed prefix (frame.h FRAME_*)
POS_HEADER_LEN, POS_FRAME_LEN, POS_FLAGS, POS_FRAME_TYPE = 11, 16, 25, 26
POS_CODEC_FLAGS, POS_OTHER_FLAGS, POS_NBYTES, POS_CBYTES = 27, 28, 30, 39
POS_TYPESIZE, POS_BLOCKSIZE, POS_CHUNKSIZE, POS_CTHREADS, POS_DTHREADS = 48, 53, 58, 63, 66
POS_HAS_VLMETA, POS_NFILTERS, POS_FILTERS, POS_UDCODEC = 68, 70, 71, 77
POS_COMPCODE_META, POS_FILTERS_META, POS_OTHER_FLAGS2 = 78, 79, 85
POS_METALAYERS = 87

_PREFIX = struct.Struct(">BB8sBiBQBBBBBBqBqBiBiBiBhBhBBB6sBB6sBB")
_U64 = struct.Struct(">Q")
_I64 = struct.Struct(">q")
# the msgpack tags of the fixed prefix, which C skips without checking (spec §2.9, §12)
_TAGS = (
    (0, 0x9E, "array marker"),
    (1, 0xA8, "magic marker"),
    (POS_HEADER_LEN - 1, 0xD2, "header_len marker"),
    (POS_FRAME_LEN - 1, 0xCF, "frame_len marker"),
    (POS_FLAGS - 1, 0xA4, "flags marker"),
    (POS_NBYTES - 1, 0xD3, "nbytes marker"),
    (POS_CBYTES - 1, 0xD3, "cbytes marker"),
    (POS_TYPESIZE - 1, 0xD2, "typesize marker"),
    (POS_BLOCKSIZE - 1, 0xD2, "blocksize marker"),
    (POS_CHUNKSIZE - 1, 0xD2, "chunksize marker"),
    (POS_CTHREADS - 1, 0xD1, "cthreads marker"),
    (POS_DTHREADS - 1, 0xD1, "dthreads marker"),
    (POS_NFILTERS - 1, 0xD8, "filters marker"),
)
POS_MAGIC = 2
VERSION_MASK = 0x0F
OFFSETS_64 = 0x10
VARIABLE_CHUNKS = 0x40
VL_BLOCKS_CHUNKS = 0x80
# general_flags bits kept when the chunk-size kind changes: offset width (4-5) and bit 7
_KEEP_ON_VARIABLE = 0xB0
VERSION_FIXED, VERSION_VARIABLE = 2, 3
FRAME_FORMAT_MAX = 3
CONTIGUOUS, SPARSE = 0, 1
UDCODEC_NIBBLE = 6


def check_magic(prefix: bytes | memoryview) -> None:
    """The first 10 bytes must be ``9E A8 "b2frame\\0"`` (C checks this only for in-memory
    frames; checking it always refuses files that are not frames, spec §12)."""
    if bytes(prefix[POS_MAGIC : POS_MAGIC + len(FRAME_MAGIC)]) != FRAME_MAGIC:
        got = bytes(prefix[POS_MAGIC : POS_MAGIC + len(FRAME_MAGIC)])
        raise NotAFrameError("frame header", "magic", POS_MAGIC, repr(FRAME_MAGIC), repr(got))


def _err(field_: str, offset: int | None, expected: object, got: object) -> FormatError:
    return FormatError("frame header", field_, offset, expected, got)


@dataclass(frozen=True, slots=True)
class FrameHeader:
    """A parsed frame header (``metalayers`` keeps name → raw content, in stored order)."""

    header_len: int
    frame_len: int
    general_flags: int
    frame_type: int
    codec_flags: int
    other_flags: int
    nbytes: int
    cbytes: int
    typesize: int
    blocksize: int
    chunksize: int
    cthreads: int = 1
    dthreads: int = 1
    has_vlmeta: bool = False
    filters: tuple[int, ...] = (0, 0, 0, 0, 0, 1)
    udcodec: int = 0
    compcode_meta: int = 0
    filters_meta: tuple[int, ...] = (0,) * 6
    other_flags2: int = 0
    metalayers: tuple[tuple[str, bytes], ...] = field(default=())

    @property
    def version(self) -> int:
        return self.general_flags & VERSION_MASK

    def with_fields(self, **changes: object) -> FrameHeader:
        """``dataclasses.replace`` without its per-call field scan (a change's hot path).

        >>> FrameHeader(0, 132, 0x12, 0, 0x55, 2, 0, 0, 4, 0, -1).with_fields(nbytes=8).nbytes
        8
        """
        values = list(_ALL_FIELDS(self))
        for name, value in changes.items():
            values[_FIELD_POS[name]] = value
        return FrameHeader(*values)

    @property
    def codec(self) -> int:
        """The codec id (``udcodec`` when the nibble says user codec)."""
        nibble = self.codec_flags & 0x0F
        return self.udcodec if nibble == UDCODEC_NIBBLE else nibble

    @property
    def clevel(self) -> int:
        return self.codec_flags >> 4

    @property
    def splitmode(self) -> int:
        return (self.other_flags & 3) + 1

    @property
    def use_dict(self) -> bool:
        return bool(self.other_flags2 & 1)

    @property
    def variable_chunks(self) -> bool:
        """Whether chunks may have different sizes (general_flags bit 6, version 3)."""
        return bool(self.general_flags & VARIABLE_CHUNKS)

    def with_variable_chunks(self) -> FrameHeader:
        """This header with the variable-size-chunks flag and format version 3 set (what C
        writes once a frame's chunk sizes stop being regular, §2.7)."""
        flags = (self.general_flags & _KEEP_ON_VARIABLE) | VARIABLE_CHUNKS | VERSION_VARIABLE
        return self if flags == self.general_flags else replace(self, general_flags=flags)

    @property
    def vl_blocks(self) -> bool:
        """Whether the frame's chunks are VL-block chunks (general_flags bit 7, §2.2)."""
        return bool(self.general_flags & VL_BLOCKS_CHUNKS)

    def with_vl_blocks(self, vl: bool) -> FrameHeader:
        """This header with bit 7 set as C sets it from the first chunk's VL-blocks flag
        (and format version 3 for VL-block chunks), or cleared (§2.2)."""
        if not vl:
            flags = self.general_flags & ~VL_BLOCKS_CHUNKS
        else:
            flags = (self.general_flags & ~VERSION_MASK) | VL_BLOCKS_CHUNKS | VERSION_VARIABLE
        return self if flags == self.general_flags else replace(self, general_flags=flags)

    @property
    def nchunks_fixed(self) -> int | None:
        """The chunk count implied by nbytes/chunksize (None for variable-size chunks)."""
        if self.nbytes == 0:
            return 0
        if self.chunksize > 0:
            return -(-self.nbytes // self.chunksize)
        return None

    @classmethod
    def from_bytes(cls, buf: bytes | memoryview, *, buffer_len: int | None = None) -> FrameHeader:
        """Parse and validate a header (spec §2.9 rules 1, 3, 4, 8).

        ``buf`` holds at least the header; ``buffer_len`` is the size available for the whole
        frame (the file size from the frame start), used to check ``frame_len``.
        """
        if len(buf) < HEADER_MINLEN:
            raise _err("length", 0, f"at least {HEADER_MINLEN} bytes", len(buf))
        check_magic(buf)
        for pos, tag, name in _TAGS:
            if buf[pos] != tag:
                raise _err(name, pos, hex(tag), hex(buf[pos]))
        f = _PREFIX.unpack_from(buf, 0)
        header_len, frame_len = f[4], f[6]
        gflags, ftype, codec_flags, other_flags = f[8], f[9], f[10], f[11]
        nbytes, cbytes, typesize, blocksize, chunksize = f[13], f[15], f[17], f[19], f[21]
        cthreads, dthreads, has_vl = f[23], f[25], f[26] == 0xC3
        nfilters, filters, udcodec, cmeta, fmeta, oflags2 = f[28], f[29], f[30], f[31], f[32], f[33]
        if gflags & VERSION_MASK > FRAME_FORMAT_MAX:
            raise _err(
                "general_flags",
                POS_FLAGS,
                f"a format version <= {FRAME_FORMAT_MAX}",
                gflags & VERSION_MASK,
            )
        if (gflags >> 4) & 3 != 1:
            raise NotImplementedError(
                f"frame offsets wider than 64 bits (general_flags {gflags:#04x})"
            )
        if ftype not in (CONTIGUOUS, SPARSE):
            raise _err("frame_type", POS_FRAME_TYPE, "0 (contiguous) or 1 (sparse)", ftype)
        limit = buffer_len if buffer_len is not None else frame_len
        if HEADER_MINLEN + META_SECTION_MIN + TRAILER_MINLEN <= limit < frame_len:
            raise TruncatedError(
                "frame header",
                "frame_len",
                POS_FRAME_LEN,
                f"at most {limit} (bytes available)",
                frame_len,
            )
        if not HEADER_MINLEN + META_SECTION_MIN + TRAILER_MINLEN <= frame_len <= limit:
            raise _err(
                "frame_len",
                POS_FRAME_LEN,
                f"{HEADER_MINLEN + META_SECTION_MIN + TRAILER_MINLEN}..{limit} (bytes available)",
                frame_len,
            )
        if not HEADER_MINLEN + META_SECTION_MIN <= header_len <= min(frame_len, len(buf)):
            raise _err(
                "header_len",
                POS_HEADER_LEN,
                f"{HEADER_MINLEN + META_SECTION_MIN}..{min(frame_len, len(buf))}",
                header_len,
            )
        if frame_len > limit:
            raise _err("frame_len", POS_FRAME_LEN, f"at most {limit} (bytes available)", frame_len)
        if not 0 < typesize <= MAX_TYPESIZE:
            raise _err("typesize", POS_TYPESIZE, f"1..{MAX_TYPESIZE}", typesize)
        if nfilters > 6:
            raise _err("nfilters", POS_NFILTERS, "at most 6", nfilters)
        if nbytes < 0 or cbytes < 0:
            raise _err(
                "nbytes" if nbytes < 0 else "cbytes",
                POS_NBYTES if nbytes < 0 else POS_CBYTES,
                ">= 0",
                min(nbytes, cbytes),
            )
        if nbytes > 0 and chunksize < 0:
            raise _err("chunksize", POS_CHUNKSIZE, ">= 0 when the frame holds data", chunksize)
        if header_len + cbytes > frame_len and ftype == CONTIGUOUS:
            raise _err(
                "cbytes",
                POS_CBYTES,
                f"at most frame_len - header_len = {frame_len - header_len}",
                cbytes,
            )
        metas = _parse_metalayers(buf, header_len)
        return cls(
            header_len,
            frame_len,
            gflags,
            ftype,
            codec_flags,
            other_flags,
            nbytes,
            cbytes,
            typesize,
            blocksize,
            chunksize,
            cthreads,
            dthreads,
            has_vl,
            tuple(filters[:6]),
            udcodec,
            cmeta,
            tuple(fmeta[:6]),
            oflags2,
            metas,
        )

    def to_bytes(self) -> bytes:
        """Serialize with the fixed-width layout C reads (``header_len`` is recomputed).

        >>> h = FrameHeader(0, 132, 0x12, 0, 0x55, 2, 0, 0, 4, 0, -1)
        >>> b = h.to_bytes(); len(b), FrameHeader.from_bytes(b + bytes(35)).header_len
        (97, 97)
        """
        meta = metalayer_section(self.metalayers)
        header_len = HEADER_MINLEN + len(meta)
        prefix = _PREFIX.pack(
            0x9E,
            0xA8,
            FRAME_MAGIC,
            0xD2,
            header_len,
            0xCF,
            self.frame_len,
            0xA4,
            self.general_flags,
            self.frame_type,
            self.codec_flags,
            self.other_flags,
            0xD3,
            self.nbytes,
            0xD3,
            self.cbytes,
            0xD2,
            self.typesize,
            0xD2,
            self.blocksize,
            0xD2,
            self.chunksize,
            0xD1,
            self.cthreads,
            0xD1,
            self.dthreads,
            0xC3 if self.has_vlmeta else 0xC2,
            0xD8,
            6,
            bytes(self.filters),
            self.udcodec,
            self.compcode_meta,
            bytes(self.filters_meta),
            self.other_flags2,
            0,
        )
        return prefix + meta


_ALL_FIELDS = operator.attrgetter(*FrameHeader.__slots__)
_FIELD_POS = {name: i for i, name in enumerate(FrameHeader.__slots__)}


def patched_header(raw: bytes, frame_len: int, cbytes: int | None = None) -> bytes:
    """Header bytes ``raw`` (a :meth:`FrameHeader.to_bytes`) with ``frame_len`` (and
    ``cbytes``) replaced: the staged and final headers of a commit without new objects.

    >>> h = FrameHeader(0, 132, 0x12, 0, 0x55, 2, 0, 0, 4, 0, -1)
    >>> raw = patched_header(h.to_bytes(), 200, 3)
    >>> g = FrameHeader.from_bytes(raw + bytes(200)); g.frame_len, g.cbytes
    (200, 3)
    """
    out = bytearray(raw)
    _U64.pack_into(out, POS_FRAME_LEN, frame_len)
    if cbytes is not None:
        _I64.pack_into(out, POS_CBYTES, cbytes)
    return bytes(out)


def _parse_metalayers(buf: bytes | memoryview, header_len: int) -> tuple[tuple[str, bytes], ...]:
    """The metalayer section (§3.1): names from the map, contents through their offsets."""
    return parse_index(
        buf,
        POS_METALAYERS,
        header_len,
        where="frame header",
        kind="metalayer",
        max_entries=MAX_METALAYERS,
    )


def metalayer_section(metalayers: tuple[tuple[str, bytes], ...]) -> bytes:
    """The metalayer section (§3.1) for ``(name, content)`` pairs, offsets absolute (kept
    for the last few contents: every commit writes the header again, most often with the
    same metalayers)."""
    try:
        return _cached_section(metalayers)
    except TypeError:  # contents that are not bytes (unhashable)
        return _section(metalayers)


@functools.lru_cache(maxsize=64)
def _cached_section(metalayers: tuple[tuple[str, bytes], ...]) -> bytes:
    return _section(metalayers)


def _section(metalayers: tuple[tuple[str, bytes], ...]) -> bytes:
    if len(metalayers) > MAX_METALAYERS:
        raise ParamError(f"at most {MAX_METALAYERS} metalayers, got {len(metalayers)}")
    return pack_index(metalayers, POS_METALAYERS, kind="metalayer", size_field_bias=0)
