"""The frame trailer: variable-length metalayers, trailer length and fingerprint
(spec frame-format.md §5). Offsets inside the trailer are relative to its first byte."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import FormatError

__all__ = ["TRAILER_MINLEN", "Trailer", "locate_trailer"]

TRAILER_MINLEN = 25  # from E-25: ... CE <len:4> D8 <fpt:1> <16 bytes>
TRAILER_LEN_OFFSET = 22  # trailer_len is the uint32 BE at E - 22
FINGERPRINT_LEN = 16
MAX_VLMETALAYERS = 8192


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
        if n_total < TRAILER_MINLEN + 10 or mv[6] != 0xDE:
            raise _err(
                "vlmeta map",
                start + 6,
                "a map16 (0xde) at trailer offset 6",
                hex(mv[6]) if n_total > 6 else "truncated",
            )
        (n,) = struct.unpack_from(">H", mv, 7)
        if n > MAX_VLMETALAYERS:
            raise _err("vlmeta count", start + 7, f"at most {MAX_VLMETALAYERS}", n)
        p = 9
        entries = []
        for i in range(n):
            if p >= n_total or mv[p] & 0xE0 != 0xA0:
                raise _err(f"vlmeta {i} name", start + p, "a fixstr", "missing")
            ln = mv[p] & 0x1F
            q = p + 1 + ln
            if q + 5 > n_total or mv[q] != 0xD2:
                raise _err(f"vlmeta {i} offset", start + q, "an int32 (0xd2)", "missing")
            name = bytes(mv[p + 1 : q]).decode("utf-8", errors="surrogateescape")
            (off,) = struct.unpack_from(">i", mv, q + 1)
            if not 0 <= off <= n_total - 5 or mv[off] != 0xC6:
                raise _err(
                    f"vlmeta {name!r} offset",
                    start + q + 1,
                    "the position of a bin32 (0xc6) inside the trailer",
                    off,
                )
            (clen,) = struct.unpack_from(">I", mv, off + 1)
            if off + 5 + clen > n_total:
                raise _err(
                    f"vlmeta {name!r} length", start + off + 1, f"at most {n_total - off - 5}", clen
                )
            entries.append((name, bytes(mv[off + 5 : off + 5 + clen])))
            p = q + 5
        fpt = mv[n_total - FINGERPRINT_LEN - 1]
        fp = bytes(mv[n_total - FINGERPRINT_LEN :])
        return cls(tuple(entries), fpt, fp)

    def to_bytes(self) -> bytes:
        """Serialize (§5.1); vlmeta offsets are relative to the trailer start.

        >>> len(Trailer().to_bytes()), Trailer.from_bytes(Trailer().to_bytes()) == Trailer()
        (35, True)
        """
        names = [n.encode("utf-8") for n, _ in self.vlmeta]
        idx_size = 6 + sum(6 + len(n) for n in names)
        pos = 3 + idx_size + 3  # after 94 01 93, the map, and DC + uint16
        entries, contents = [], []
        for n, (_, content) in zip(names, self.vlmeta, strict=True):
            entries.append(bytes([0xA0 | len(n)]) + n + struct.pack(">Bi", 0xD2, pos))
            contents.append(struct.pack(">BI", 0xC6, len(content)) + content)
            pos += 5 + len(content)
        k = len(self.vlmeta)
        head = struct.pack(">BBBBHBH", 0x94, 0x01, 0x93, 0xCD, idx_size, 0xDE, k)
        body = b"".join([head, *entries, struct.pack(">BH", 0xDC, k), *contents])
        total = len(body) + 5 + 2 + FINGERPRINT_LEN
        tail = struct.pack(">BIBB", 0xCE, total, 0xD8, self.fingerprint_type)
        return body + tail + self.fingerprint
