"""The named-content index shared by the header's metalayer section (frame-format.md §3.1)
and the trailer's vlmeta section (§5.1):

    93 CD <index size:u16> DE <n:u16> { A0|len <name> D2 <offset:i32> }*n DC <n:u16>
    { C6 <length:u32> <content> }*n

Offsets point at each content's ``C6`` byte, counted from a base (the frame start for
metalayers, the trailer start for vlmeta). Integers are big-endian.
"""

from __future__ import annotations

import struct

from ..errors import FormatError, ParamError

__all__ = ["MAX_NAME_LEN", "pack_index", "parse_index"]

MAX_NAME_LEN = 31
ARRAY3, UINT16, MAP16, ARRAY16, INT32, BIN32 = 0x93, 0xCD, 0xDE, 0xDC, 0xD2, 0xC6
FIXSTR, FIXSTR_MASK = 0xA0, 0xE0
_ENTRY_FIXED = 6  # fixstr marker + D2 + int32
_HEAD = struct.Struct(">BBHBH")  # 93 CD size DE n
_MAP_POS = 4  # of DE, from the 93 byte
_BIN = struct.Struct(">BI")
_OFFSET = struct.Struct(">Bi")


def parse_index(
    buf: bytes | memoryview,
    start: int,
    end: int,
    *,
    where: str,
    kind: str,
    max_entries: int,
    base: int = 0,
) -> tuple[tuple[str, bytes], ...]:
    """``(name, content)`` pairs of the index whose ``93`` byte is at ``start``; offsets are
    relative to position 0 of ``buf`` and every byte read must lie before ``end``. ``kind``
    names the entries in errors ("metalayer", "vlmeta"), whose offsets are ``base`` + the
    position in ``buf`` (frame positions)."""
    mv = memoryview(buf)

    def err(field: str, pos: int, expected: object, got: object) -> FormatError:
        return FormatError(where, field, base + pos, expected, got)

    map_pos = start + _MAP_POS
    if map_pos + 3 > end or mv[map_pos] != MAP16:
        got = hex(mv[map_pos]) if map_pos < end else "truncated"
        raise err(f"{kind} map marker", map_pos, "0xde (map16)", got)
    (n,) = struct.unpack_from(">H", mv, map_pos + 1)
    if n > max_entries:
        raise err(f"{kind} count", map_pos + 1, f"at most {max_entries}", n)
    p = map_pos + 3
    names: list[str] = []
    seen: set[str] = set()
    spans: list[tuple[int, int, int, int]] = []  # content start, end, entry, offset field
    for i in range(n):
        if p >= end or mv[p] & FIXSTR_MASK != FIXSTR:
            got = hex(mv[p]) if p < end else "past the end"
            raise err(f"{kind} {i} name", p, "a fixstr (0xa0..0xbf)", got)
        name_end = p + 1 + (mv[p] & 0x1F)
        if name_end + 5 > end or mv[name_end] != INT32:
            raise err(f"{kind} {i} offset", name_end, "an int32 (0xd2)", "missing")
        name = bytes(mv[p + 1 : name_end]).decode("utf-8", errors="surrogateescape")
        if name in seen:
            raise err(f"{kind} {i} name", p, "a name not used before", repr(name))
        (off,) = struct.unpack_from(">i", mv, name_end + 1)
        if not 0 <= off <= end - 5 or mv[off] != BIN32:
            raise err(
                f"{kind} {name!r} offset",
                name_end + 1,
                "the position of a bin32 (0xc6)",
                off,
            )
        (clen,) = struct.unpack_from(">I", mv, off + 1)
        if off + 5 + clen > end:
            raise err(f"{kind} {name!r} length", off + 1, f"at most {end - off - 5}", clen)
        names.append(name)
        seen.add(name)
        spans.append((off, off + 5 + clen, i, name_end + 1))
        p = name_end + 5
    # Contents lie after the names, each in bytes of its own: an entry that shares another's
    # bytes (or the index's) would make a small file decode to many times its size.
    prev_end, prev = p, None
    for off, stop, i, field in sorted(spans):
        if off < prev_end:
            after = "the names" if prev is None else f"{kind} {names[prev]!r}"
            expected = f"at least {prev_end} (after {after})"
            raise err(f"{kind} {names[i]!r} offset", field, expected, off)
        prev_end, prev = stop, i
    return tuple(
        (name, bytes(mv[off + 5 : stop]))
        for name, (off, stop, _, _) in zip(names, spans, strict=True)
    )


def pack_index(
    entries: tuple[tuple[str, bytes], ...], base: int, *, kind: str, size_field_bias: int
) -> bytes:
    """The index for ``entries`` placed so that its ``93`` byte sits at position ``base``
    (offsets are written relative to position 0).

    The ``CD`` size field is the index length, ``7 + entries``, less ``size_field_bias``: C
    writes 0 for metalayers and 1 for vlmeta (nobody reads it; kept for identical bytes).
    """
    names = [n.encode("utf-8") for n, _ in entries]
    for n in names:
        if not 1 <= len(n) <= MAX_NAME_LEN:
            raise ParamError(f"{kind} names must have 1..{MAX_NAME_LEN} bytes, got {n!r}")
    if len(set(names)) != len(names):
        raise ParamError(f"{kind} names must differ, got {[n for n, _ in entries]}")
    idx_len = 7 + sum(_ENTRY_FIXED + len(n) for n in names)
    idx_size = idx_len - size_field_bias
    pos = base + idx_len + 3  # the first content's C6 byte (after DC + uint16)
    heads, contents = [], []
    for n, (_, content) in zip(names, entries, strict=True):
        heads.append(bytes([FIXSTR | len(n)]) + n + _OFFSET.pack(INT32, pos))
        contents.append(_BIN.pack(BIN32, len(content)) + content)
        pos += 5 + len(content)
    k = len(entries)
    head = _HEAD.pack(ARRAY3, UINT16, idx_size, MAP16, k)
    return b"".join([head, *heads, struct.pack(">BH", ARRAY16, k), *contents])
