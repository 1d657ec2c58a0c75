"""Where the members of a zip archive lie: the central directory of a ``.b2z`` read without
extracting anything (PKWARE APPNOTE 6.3: §4.3.6 local header, §4.3.12 central directory
header, §4.3.14-16 zip64 and end-of-central-directory records, §4.5.3 zip64 extra field).

A ``.b2z`` keeps each member *stored* (uncompressed), so a member's bytes are a Blosc2 frame
that can be opened where it lies, at ``Member.offset``: the offset of its local header plus
the header's 30 bytes, name and extra field (which may differ from the central directory's
extra field, so the local header is read). Every size and offset is checked against the
archive's size before it is used, and member names must be relative ``/``-separated paths
without ``.``/``..`` segments (a member is extracted under its name). Members may not
overlap (no writer makes them so; overlapping members would let a small archive unpack to
many times its size), and a member's name may not also be the directory of another one.
Archives written by other tools may deflate members: those are listed with ``stored=False``
and are no frame where they lie (:mod:`.zipmember` inflates them).

This is the one reader of a ``.b2z``: opening it in place, unpacking it into a working copy
or a ``.b2d`` (:mod:`.archive`) and xarray-blosc2's zip stores all take its index.
"""

from __future__ import annotations

import bisect
import itertools
import struct
from dataclasses import dataclass, replace
from typing import Any

from ..backends.base import ByteStore
from ..errors import FormatError

__all__ = ["Member", "ZipIndex", "check_member_name"]

WHERE = "zip archive"
# §4.3.16 end of central directory record (fixed part)
EOCD = struct.Struct("<IHHHHIIH")
EOCD_SIG = 0x06054B50
# §4.3.15 zip64 end of central directory locator
LOCATOR = struct.Struct("<IIQI")
LOCATOR_SIG = 0x07064B50
# §4.3.14 zip64 end of central directory record (fixed part)
EOCD64 = struct.Struct("<IQHHIIQQQQ")
EOCD64_SIG = 0x06064B50
# §4.3.12 central directory file header (fixed part)
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
CENTRAL_SIG = 0x02014B50
# §4.3.7 local file header (fixed part)
LOCAL = struct.Struct("<IHHHHHIIIHH")
LOCAL_SIG = 0x04034B50
ZIP64_EXTRA_ID = 0x0001
STORED, ENCRYPTED, UTF8_NAME = 0, 0x1, 0x800
MAX_COMMENT = 0xFFFF
FULL32 = 0xFFFFFFFF
NAME_MAX = 255  # bytes in one segment of a member name (a file name, on every system)


@dataclass(frozen=True, slots=True)
class Member:
    """One member: its data starts at ``offset`` in the archive and takes ``length`` bytes as
    stored; ``stored`` says it is kept whole (not compressed, not encrypted). ``method`` is
    the compression method (§4.4.5: 0 stored, 8 deflated), ``size`` the uncompressed size
    and ``crc`` the CRC-32 the central directory declares; ``encrypted`` its flag bit 0."""

    name: str
    offset: int
    length: int
    stored: bool
    method: int = STORED
    size: int = 0
    crc: int = 0
    encrypted: bool = False


def check_member_name(name: str) -> str:
    """``name`` if it is a safe relative member path, else a :class:`FormatError`.

    >>> check_member_name("dir1/node3.b2nd")
    'dir1/node3.b2nd'
    >>> check_member_name("../etc/passwd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pyblosc2.errors.FormatError: zip archive: member name is '../etc/passwd', expected a ...
    """
    parts = name.split("/")
    if (
        not name
        or name.startswith("/")
        or "\\" in name
        or "\0" in name
        or any(p in ("", ".", "..") for p in parts[:-1])
        or parts[-1] in (".", "..")
        or (len(name) > 1 and name[1] == ":")
        or any(len(p.encode("utf-8", "surrogatepass")) > NAME_MAX for p in parts)
    ):
        raise FormatError(
            WHERE,
            "member name",
            None,
            f"a relative path without '.' or '..' segments, each of at most {NAME_MAX} bytes",
            repr(name),
        )
    return name


def _check_disjoint(spans: list[tuple[int, int, str]]) -> None:
    """Each member (local header to the end of its data) ends before the next one starts."""
    spans = sorted(spans)
    for (_, end, name), (start, _, after) in itertools.pairwise(spans):
        if end > start:
            raise FormatError(
                WHERE,
                f"data of {name!r}",
                start,
                f"to end by {start} (where {after!r} starts)",
                end,
            )


def _check_no_file_is_a_directory(members: dict[str, Member]) -> None:
    """No member name is also a directory of another member (``a`` and ``a/b``): in sorted
    order, the names under ``a/`` would follow ``a/`` directly."""
    names = sorted(members)
    for name in names:
        i = bisect.bisect_left(names, name + "/")
        if i < len(names) and names[i].startswith(name + "/"):
            raise FormatError(
                WHERE, "member name", None, f"not also the directory of {names[i]!r}", repr(name)
            )


def _zip64_values(extra: bytes, wanted: int, where: int) -> list[int]:
    """The first ``wanted`` 8-byte values of the zip64 extra field in ``extra``."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, pos)
        if tag == ZIP64_EXTRA_ID:
            if size < 8 * wanted or pos + 4 + size > len(extra):
                raise FormatError(WHERE, "zip64 extra field", where, f"{8 * wanted} bytes", size)
            return list(struct.unpack_from(f"<{wanted}Q", extra, pos + 4))
        pos += 4 + size
    raise FormatError(WHERE, "zip64 extra field", where, "present (a size is 0xFFFFFFFF)", "none")


class ZipIndex:
    """The members of the zip archive in ``store``, by name, in archive order.

    >>> import io, zipfile
    >>> from pyblosc2.backends.memory import MemoryStore
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as zf:
    ...     zf.writestr("a/b.b2nd", b"frame bytes")
    >>> index = ZipIndex.read(MemoryStore(buf.getvalue()))
    >>> m = index["a/b.b2nd"]; buf.getvalue()[m.offset : m.offset + m.length], m.stored
    (b'frame bytes', True)
    """

    def __init__(self, members: dict[str, Member], size: int) -> None:
        self.members = members
        self.size = size

    def __getitem__(self, name: str) -> Member:
        return self.members[name]

    def __contains__(self, name: object) -> bool:
        return name in self.members

    def __iter__(self) -> Any:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    @classmethod
    def read(cls, store: ByteStore) -> ZipIndex:
        """Read the central directory and each member's local header from ``store``."""
        size = store.size
        cd_offset, cd_size, count = cls._end_record(store, size)
        central = bytes(store.read(cd_offset, cd_size))
        if len(central) != cd_size:
            raise FormatError(
                WHERE, "central directory", cd_offset, f"{cd_size} bytes", len(central)
            )
        entries = cls._central_entries(central, cd_offset, count)
        prefetch = getattr(store, "prefetch", None)
        if prefetch is not None and len(entries) > 1:  # remote: fetch the headers together
            prefetch([(m.offset, m.offset + LOCAL.size) for m in entries])
        members: dict[str, Member] = {}
        spans: list[tuple[int, int, str]] = []
        for entry in entries:
            name, local, length = entry.name, entry.offset, entry.length
            head = bytes(store.read(local, LOCAL.size))
            if len(head) != LOCAL.size or LOCAL.unpack_from(head)[0] != LOCAL_SIG:
                raise FormatError(
                    WHERE, f"local header of {name!r}", local, "a local header", "none"
                )
            name_len, extra_len = LOCAL.unpack_from(head)[9:11]
            data = local + LOCAL.size + name_len + extra_len
            if data + length > cd_offset:
                raise FormatError(
                    WHERE, f"data of {name!r}", data, f"to end by {cd_offset}", data + length
                )
            if name in members:
                raise FormatError(WHERE, "member name", local, "unique", f"{name!r} repeated")
            members[name] = replace(entry, offset=data)
            spans.append((local, data + length, name))
        _check_disjoint(spans)
        _check_no_file_is_a_directory(members)
        return cls(members, size)

    @staticmethod
    def _end_record(store: ByteStore, size: int) -> tuple[int, int, int]:
        """(central directory offset, its size, entry count) from the end records."""
        if size < EOCD.size:
            raise FormatError(WHERE, "size", None, f"at least {EOCD.size} bytes", size)
        span = min(size, EOCD.size + MAX_COMMENT)
        tail = bytes(store.read(size - span, span))
        sig = EOCD_SIG.to_bytes(4, "little")
        pos = tail.rfind(sig)
        # the record is the last signature whose fixed part and comment fit in the file
        while pos >= 0 and (
            pos + EOCD.size > len(tail)
            or pos + EOCD.size + EOCD.unpack_from(tail, pos)[7] > len(tail)
        ):
            pos = tail.rfind(sig, 0, pos)
        if pos < 0:
            raise FormatError(WHERE, "end of central directory", None, "a record", "none")
        eocd_at = size - span + pos
        _, _, _, _, count, cd_size, cd_offset, _ = EOCD.unpack_from(tail, pos)
        if FULL32 in (cd_size, cd_offset) or count == 0xFFFF:
            loc_at = eocd_at - LOCATOR.size
            loc = bytes(store.read(loc_at, LOCATOR.size)) if loc_at >= 0 else b""
            if len(loc) != LOCATOR.size or LOCATOR.unpack_from(loc)[0] != LOCATOR_SIG:
                raise FormatError(WHERE, "zip64 locator", max(loc_at, 0), "a locator", "none")
            rec_at = LOCATOR.unpack_from(loc)[2]
            rec = bytes(store.read(rec_at, EOCD64.size)) if rec_at < eocd_at else b""
            if len(rec) != EOCD64.size or EOCD64.unpack_from(rec)[0] != EOCD64_SIG:
                raise FormatError(WHERE, "zip64 end record", rec_at, "a record", "none")
            count, cd_size, cd_offset = EOCD64.unpack_from(rec)[7:10]
            eocd_at = rec_at
        if cd_offset + cd_size > eocd_at:
            raise FormatError(
                WHERE, "central directory end", cd_offset, f"at most {eocd_at}", cd_offset + cd_size
            )
        if count > cd_size // CENTRAL.size:
            raise FormatError(
                WHERE, "entry count", eocd_at, f"at most {cd_size // CENTRAL.size}", count
            )
        return cd_offset, cd_size, count

    @staticmethod
    def _central_entries(central: bytes, base: int, count: int) -> list[Member]:
        """The members of the directory, each with the offset of its local header."""
        entries = []
        pos = 0
        for _ in range(count):
            if pos + CENTRAL.size > len(central):
                raise FormatError(
                    WHERE, "central header", base + pos, "inside the directory", "cut"
                )
            fields = CENTRAL.unpack_from(central, pos)
            if fields[0] != CENTRAL_SIG:
                raise FormatError(
                    WHERE, "central header signature", base + pos, hex(CENTRAL_SIG), hex(fields[0])
                )
            flags, method, crc, csize, usize = fields[3], fields[4], fields[7], fields[8], fields[9]
            name_len, extra_len, comment_len, local = fields[10], fields[11], fields[12], fields[16]
            end = pos + CENTRAL.size + name_len + extra_len + comment_len
            if end > len(central):
                raise FormatError(
                    WHERE, "central header", base + pos, "inside the directory", "cut"
                )
            raw = central[pos + CENTRAL.size : pos + CENTRAL.size + name_len]
            try:
                name = raw.decode("utf-8" if flags & UTF8_NAME else "cp437")
            except UnicodeDecodeError as exc:  # flag bit 11 promises UTF-8
                raise FormatError(
                    WHERE, "member name", base + pos + CENTRAL.size + exc.start, "UTF-8", exc.reason
                ) from None
            extra = central[
                pos + CENTRAL.size + name_len : pos + CENTRAL.size + name_len + extra_len
            ]
            wide = [v for v in (usize, csize, local) if v == FULL32]
            if wide:
                values = iter(_zip64_values(extra, len(wide), base + pos))
                usize = next(values) if usize == FULL32 else usize
                csize = next(values) if csize == FULL32 else csize
                local = next(values) if local == FULL32 else local
            if local + LOCAL.size > base:
                raise FormatError(
                    WHERE, f"local header of {name!r}", local, f"before {base}", local
                )
            if name.endswith("/"):  # a directory entry holds nothing
                pos = end
                continue
            check_member_name(name)
            encrypted = bool(flags & ENCRYPTED)
            stored = method == STORED and not encrypted and csize == usize
            entries.append(Member(name, local, csize, stored, method, usize, crc, encrypted))
            pos = end
        return entries
