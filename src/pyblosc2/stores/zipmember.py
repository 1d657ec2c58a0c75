"""The bytes of one zip member (a :class:`~.zipindex.Member`), in pieces: a stored member
copied, a deflated one inflated (PKWARE APPNOTE 6.3 §4.4.5 methods 0 and 8), each piece at
most :data:`PIECE` bytes, checked against the size and CRC-32 the central directory declares.

A ``.b2z`` keeps its members stored; one repacked by another tool (``zip -r``) has them
deflated. The sizes are the central directory's, so they are input like any other field:
nothing is allocated from them (pieces are bounded, and a member that inflates past its
declared size is refused at the piece that goes past it), a stored member must declare its
size twice alike, and a deflated one no more than :data:`INFLATE_RATIO` times its stored
bytes (deflate's own limit). Encrypted members and other methods (bzip2, LZMA, ...) are
refused before any byte is read: a :class:`FormatError` and a :class:`NotImplementedError`
naming the method.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from ..backends.base import ByteStore
from ..errors import FormatError
from .zipindex import STORED, Member

__all__ = ["DEFLATED", "INFLATE_RATIO", "PIECE", "check_member", "member_bytes", "member_pieces"]

DEFLATED = 8
#: deflate's largest expansion: a 258-byte match coded in about 2 bits (zlib's tech notes)
INFLATE_RATIO = 1032
#: bytes read, and bytes inflated, per step
PIECE = 1 << 20
#: names of the other methods of APPNOTE §4.4.5, for the error
_METHODS = {12: "bzip2", 14: "LZMA", 93: "zstd", 95: "xz", 98: "PPMd", 99: "AES"}


def check_member(m: Member, where: str) -> None:
    """Refuse what :func:`member_pieces` cannot read, before anything is read or written."""
    if m.encrypted:
        raise FormatError(where, f"member {m.name!r} flags", None, "not encrypted", "encrypted")
    if m.method == STORED:
        if m.size != m.length:
            raise FormatError(where, f"member {m.name!r} uncompressed size", None, m.length, m.size)
    elif m.method == DEFLATED:
        if m.size > m.length * INFLATE_RATIO:
            raise FormatError(
                where,
                f"member {m.name!r} uncompressed size",
                None,
                f"at most {m.length * INFLATE_RATIO} ({INFLATE_RATIO} x {m.length} deflated)",
                m.size,
            )
    else:
        name = _METHODS.get(m.method, "unknown")
        raise NotImplementedError(
            f"zip compression method {m.method} ({name}) of member {m.name!r} in {where}: "
            "members stored or deflated are read (repack the archive)"
        )


def member_pieces(store: ByteStore, m: Member, where: str) -> Iterator[bytes]:
    """The uncompressed bytes of member ``m`` of the archive in ``store``, piece by piece;
    the size and the CRC-32 are checked after the last piece (a caller keeps nothing until
    the iteration ends without an error)."""
    check_member(m, where)
    pieces = _stored(store, m, where) if m.method == STORED else _inflated(store, m, where)
    crc, produced = 0, 0
    for piece in pieces:
        produced += len(piece)
        if produced > m.size:
            raise FormatError(
                where, f"member {m.name!r} uncompressed size", None, m.size, f"more than {m.size}"
            )
        crc = zlib.crc32(piece, crc)
        yield piece
    if produced != m.size:
        raise FormatError(where, f"member {m.name!r} uncompressed size", None, m.size, produced)
    if crc != m.crc:
        raise FormatError(where, f"member {m.name!r} CRC-32", None, hex(m.crc), hex(crc))


def member_bytes(store: ByteStore, m: Member, where: str, limit: int | None = None) -> bytes:
    """The whole member ``m``; one declaring more than ``limit`` bytes is refused first."""
    if limit is not None and m.size > limit:
        raise FormatError(where, f"member {m.name!r} size", None, f"at most {limit}", m.size)
    return b"".join(member_pieces(store, m, where))


def _read(store: ByteStore, m: Member, pos: int, where: str) -> bytes:
    n = min(PIECE, m.length - pos)
    data = bytes(store.read(m.offset + pos, n))
    if len(data) != n:
        raise FormatError(where, f"member {m.name!r}", m.offset + pos, f"{n} bytes", len(data))
    return data


def _stored(store: ByteStore, m: Member, where: str) -> Iterator[bytes]:
    for pos in range(0, m.length, PIECE):
        yield _read(store, m, pos, where)


def _inflated(store: ByteStore, m: Member, where: str) -> Iterator[bytes]:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate
    pos = 0
    while not inflater.eof:
        if inflater.unconsumed_tail:
            data = inflater.unconsumed_tail
        elif pos < m.length:
            data = _read(store, m, pos, where)
            pos += len(data)
        else:
            raise FormatError(
                where, f"member {m.name!r} deflate stream", m.offset, "an end", "none"
            )
        try:
            out = inflater.decompress(data, PIECE)
        except zlib.error as exc:
            raise FormatError(
                where, f"member {m.name!r} deflate stream", m.offset, "deflate data", exc
            ) from None
        if out:
            yield out
