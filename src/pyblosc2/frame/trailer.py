"""The frame trailer: variable-length metalayers, trailer length and fingerprint
(spec frame-format.md §5). Offsets inside the trailer are relative to its first byte."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import FormatError
from .msgindex import pack_index, parse_index

__all__ = ["TRAILER_MINLEN", "Trailer", "locate_trailer"]

TRAILER_MINLEN = 25  # from E-25: ... CE <len:4> D8 <fpt:1> <16 bytes>
TRAILER_LEN_OFFSET = 22  # trailer_len is the uint32 BE at E - 22
FINGERPRINT_LEN = 16
MAX_VLMETALAYERS = 8192
_TAIL = struct.Struct(">BIBB")  # CE <trailer_len:u32> D8 <fingerprint type>, then 16 bytes
_VERSION_HEAD = bytes([0x94, 0x01])  # fixarray(4), trailer version 1
VLMETA_INDEX_POS = len(_VERSION_HEAD)  # the vlmeta index (its 93 byte) follows


def _err(field_: str, offset: int | None, expected: object, got: object) -> FormatError:
    return FormatError("frame trailer", field_, offset, expected, got)


def locate_trailer(tail: bytes | memoryview, frame_len: int, header_len: int) -> int:
    """``trailer_len`` from the last 25 bytes of a frame (``tail``), validated (§5.4)."""
    if len(tail) < TRAILER_MINLEN:
        raise _err("length", None, f"at least {TRAILER_MINLEN} bytes", len(tail))
    pos = len(tail) - TRAILER_LEN_OFFSET - 1
    if tail[pos] != 0xCE:
        raise _err(
            "trailer_len marker",
            frame_len - TRAILER_LEN_OFFSET - 1,
            "0xce (uint32)",
            hex(tail[pos]),
        )
    (tlen,) = struct.unpack_from(">I", tail, pos + 1)
    if not TRAILER_MINLEN <= tlen <= frame_len - header_len:
        raise _err(
            "trailer_len",
            frame_len - TRAILER_LEN_OFFSET,
            f"{TRAILER_MINLEN}..{frame_len - header_len}",
            tlen,
        )
    return tlen


@dataclass(frozen=True, slots=True)
class Trailer:
    """vlmeta entries (name → stored Blosc chunk) in stored order, and the fingerprint."""

    vlmeta: tuple[tuple[str, bytes], ...] = ()
    fingerprint_type: int = 0
    fingerprint: bytes = bytes(FINGERPRINT_LEN)

    @classmethod
    def from_bytes(cls, buf: bytes | memoryview, start: int = 0) -> Trailer:
        """Parse a whole trailer (``buf`` holds exactly it; ``start`` its frame position, for
        error messages)."""
        mv = memoryview(buf)
        n_total = len(mv)
        if n_total < TRAILER_MINLEN + 10:
            raise _err("length", start, f"at least {TRAILER_MINLEN + 10} bytes", n_total)
        entries = parse_index(
            mv,
            VLMETA_INDEX_POS,
            n_total - _TAIL.size - FINGERPRINT_LEN,
            where="frame trailer",
            kind="vlmeta",
            max_entries=MAX_VLMETALAYERS,
            base=start,
        )
        fpt = mv[n_total - FINGERPRINT_LEN - 1]
        fp = bytes(mv[n_total - FINGERPRINT_LEN :])
        return cls(entries, fpt, fp)

    def to_bytes(self) -> bytes:
        """Serialize (§5.1); vlmeta offsets are relative to the trailer start.

        >>> len(Trailer().to_bytes()), Trailer.from_bytes(Trailer().to_bytes()) == Trailer()
        (35, True)
        """
        index = pack_index(self.vlmeta, VLMETA_INDEX_POS, kind="vlmeta", size_field_bias=1)
        body = _VERSION_HEAD + index
        total = len(body) + _TAIL.size + FINGERPRINT_LEN
        tail = _TAIL.pack(0xCE, total, 0xD8, self.fingerprint_type)
        return body + tail + self.fingerprint
