"""A bounded walk over the msgpack bytes of a metalayer or vlmeta value, before anything is
decoded (frame-format.md §9.1; the msgpack spec's type table).

A value comes from a file, so a reader MUST NOT trust its structure: msgpack's own decoder
checks declared lengths but not nesting, and python-blosc2's extension types (45 set, 46 numpy
array) hold msgpack payloads of their own, which a decoding hook would decode by re-entering
the C decoder from inside it — 200 nested sets take 8 MB of C stack and kill the interpreter.
:func:`scan` walks the bytes once, iteratively (no recursion), and checks before any
decoding:

* every marker is a msgpack type (``0xc1`` is not), every declared length and item count
  fits in the bytes that remain (an item takes at least one byte), and the value ends exactly
  at the end of the buffer (and each extension payload at the end of its payload);
* nesting — arrays, maps and set/array extension payloads together — is at most
  :data:`MAX_DEPTH` deep;
* extension codes are the passive ones python-blosc2's ``deserialize="safe"`` decodes
  (44 complex with a 16-byte payload, 45 set, 46 numpy array); 42/43 and unknown codes are
  refused;
* map keys are strings or binaries (what python-blosc2's decoder, ``strict_map_key``,
  accepts: other key types are non-portable, and integer keys could be chosen to collide).

It returns where the set/array extension payloads are, so that :mod:`.values` can decode
them innermost first, each with one non-nested call of the msgpack decoder.

Cost: one loop iteration per msgpack item (strings and binaries are skipped whole), so a
walk is linear in the value's size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FormatError

__all__ = ["EXT_COMPLEX", "EXT_NDARRAY", "EXT_SET", "MAX_DEPTH", "ExtSpans", "scan"]

#: Deepest nesting of arrays, maps and extension payloads accepted. python-blosc2's own values
#: nest a few levels (the b2nd metalayer 2, a structured dtype inside an array extension 5 or
#: 6); 64 leaves room for nested user documents while keeping every later recursive use of
#: the value (``repr``, ``==``, ``json.dumps``) far below Python's recursion limit.
MAX_DEPTH = 64
EXT_COMPLEX, EXT_SET, EXT_NDARRAY = 44, 45, 46
COMPLEX_LEN = 16  # two big-endian float64
_NESTED_EXT = frozenset({EXT_SET, EXT_NDARRAY})
_EXT_REFUSED = "44, 45 or 46 (42/43 are refused as python-blosc2's safe mode does)"

# What each marker byte is: a scalar of fixed total size (_FIXED, the size in _ARG), a string or
# binary with a length field of _ARG bytes (_LEN), an array/map with an item count in the marker
# (_FIXCONT) or in a field of _ARG bytes (_CONT), an extension with a fixed payload (_FIXEXT,
# payload size in _ARG) or a length field (_EXT), or invalid.
_FIXED, _LEN, _FIXCONT, _CONT, _FIXEXT, _EXT, _BAD = range(7)


def _table() -> tuple[tuple[int, ...], tuple[int, ...], tuple[bool, ...], tuple[bool, ...]]:
    kind, arg = [_BAD] * 256, [0] * 256
    is_map, is_str = [False] * 256, [False] * 256
    for m in range(0x00, 0x80):  # positive fixint
        kind[m], arg[m] = _FIXED, 1
    for m in range(0xE0, 0x100):  # negative fixint
        kind[m], arg[m] = _FIXED, 1
    for m in range(0x80, 0x90):  # fixmap (2 items per entry)
        kind[m], arg[m], is_map[m] = _FIXCONT, m & 0x0F, True
    for m in range(0x90, 0xA0):  # fixarray
        kind[m], arg[m] = _FIXCONT, m & 0x0F
    for m in range(0xA0, 0xC0):  # fixstr: the marker holds the length
        kind[m], arg[m], is_str[m] = _FIXED, 1 + (m & 0x1F), True
    for m, size in ((0xC0, 1), (0xC2, 1), (0xC3, 1), (0xCA, 5), (0xCB, 9)):
        kind[m], arg[m] = _FIXED, size
    for m, size in zip(range(0xCC, 0xD4), (2, 3, 5, 9, 2, 3, 5, 9), strict=True):
        kind[m], arg[m] = _FIXED, size  # uint8..64, int8..64
    for m, width in ((0xC4, 1), (0xC5, 2), (0xC6, 4), (0xD9, 1), (0xDA, 2), (0xDB, 4)):
        kind[m], arg[m], is_str[m] = _LEN, width, True  # bin8..32, str8..32
    for m, width in ((0xC7, 1), (0xC8, 2), (0xC9, 4)):
        kind[m], arg[m] = _EXT, width
    for m, size in zip(range(0xD4, 0xD9), (1, 2, 4, 8, 16), strict=True):
        kind[m], arg[m] = _FIXEXT, size
    for m, width, mapped in ((0xDC, 2, False), (0xDD, 4, False), (0xDE, 2, True), (0xDF, 4, True)):
        kind[m], arg[m], is_map[m] = _CONT, width, mapped
    return tuple(kind), tuple(arg), tuple(is_map), tuple(is_str)


_KIND, _ARG, _IS_MAP, _IS_KEY = _table()


@dataclass(frozen=True, slots=True)
class ExtSpans:
    """The set/array extension payloads of a value, in byte order: ``spans[i]`` is
    ``(code, start, end)`` of payload ``i``; ``children[i]`` the payloads directly inside it
    (in byte order) and ``top`` those outside any payload. ``tuple_heads`` counts the arrays
    whose first item is the string ``"__tuple__"`` (the tuple convention)."""

    spans: tuple[tuple[int, int, int], ...]
    children: tuple[tuple[int, ...], ...]
    top: tuple[int, ...]
    tuple_heads: int


_TUPLE_HEAD = b"\xa9__tuple__"


def scan(buf: bytes | memoryview, where: str, *, max_depth: int = MAX_DEPTH) -> ExtSpans:
    """Check the structure of the msgpack value that fills ``buf`` (see the module docstring);
    ``where`` names it in errors ("metalayer 'm'"), offsets are positions in ``buf``.

    >>> scan(bytes.fromhex("92c7032d920102a3616263"), "value").spans
    ((45, 4, 7),)
    >>> try:
    ...     scan(b"\\x91" * 64 + b"\\x90", "vlmeta 'v'")
    ... except FormatError as exc:
    ...     print(exc)
    vlmeta 'v': msgpack nesting depth at offset 64 is 65, expected at most 64
    """
    n = len(buf)
    kind_of, arg_of, is_map_of, is_key_of = _KIND, _ARG, _IS_MAP, _IS_KEY

    def err(field: str, pos: int, expected: object, got: object) -> FormatError:
        return FormatError(where, f"msgpack {field}", pos, expected, got)

    spans: list[tuple[int, int, int]] = []
    kids: list[list[int]] = []
    top: list[int] = []
    heads = 0
    # the open levels: (items left, end, ext span or -1, is a map, closes an ext payload)
    stack: list[tuple[int, int, int, bool, bool]] = []
    left, end, span, in_map, closes = 1, n, -1, False, False
    pos = 0
    while True:
        if left == 0:
            if closes and pos != end:
                raise err(f"extension {spans[span][0]} payload trailing bytes", pos, 0, end - pos)
            if not stack:
                break
            left, end, span, in_map, closes = stack.pop()
            continue
        if pos >= end:
            raise err("value", pos, f"{left} more item(s)", "the end of the bytes")
        m = buf[pos]
        kind = kind_of[m]
        if in_map and not left & 1 and not is_key_of[m]:
            raise err("map key", pos, "a str or bin (python-blosc2 reads no other keys)", hex(m))
        left -= 1
        if kind == _FIXED:
            pos += arg_of[m]
            if pos > end:
                raise err("value", pos - arg_of[m], f"{arg_of[m]} bytes", end - pos + arg_of[m])
            continue
        if kind == _BAD:
            raise err("marker", pos, "a msgpack type", hex(m))
        width = arg_of[m]
        if kind == _FIXCONT:
            count, head = width, 1
        elif kind == _FIXEXT:
            count, head = width, 2
        else:
            head = 1 + width + (kind == _EXT)
            if pos + head > end:
                raise err("length field", pos + 1, f"{head - 1} bytes", end - pos - 1)
            count = int.from_bytes(buf[pos + 1 : pos + 1 + width], "big")
        if kind == _LEN:
            if count > end - pos - head:
                raise err("length", pos + 1, f"at most {end - pos - head}", count)
            pos += head + count
            continue
        if len(stack) >= max_depth:
            raise err("nesting depth", pos, f"at most {max_depth}", len(stack) + 1)
        if kind in (_FIXCONT, _CONT):
            if is_map_of[m]:
                count *= 2
            elif count and bytes(buf[pos + head : pos + head + 10]) == _TUPLE_HEAD:
                heads += 1
            if count > end - pos - head:  # every item takes at least one byte
                raise err("item count", pos, f"at most {end - pos - head}", count)
            pos += head
            if count:
                stack.append((left, end, span, in_map, closes))
                left, in_map, closes = count, is_map_of[m], False
            continue
        # an extension: its type byte ends the head
        if pos + head > end:
            raise err("ext type", pos + head - 1, "a type byte", "the end of the bytes")
        code = buf[pos + head - 1]
        start = pos + head
        if count > end - start:
            raise err("length", pos + 1, f"at most {end - start}", count)
        if code == EXT_COMPLEX:
            if count != COMPLEX_LEN:
                raise err("extension 44 length", pos + 1, COMPLEX_LEN, count)
            pos = start + count
            continue
        if code not in _NESTED_EXT:
            raise err("ext type", pos + head - 1, _EXT_REFUSED, code)
        (kids[span] if span >= 0 else top).append(len(spans))
        stack.append((left, end, span, in_map, closes))
        span = len(spans)
        spans.append((code, start, start + count))
        kids.append([])
        left, end, in_map, closes, pos = 1, start + count, False, True, start
    if pos != n:
        raise err("trailing bytes", pos, 0, n - pos)
    return ExtSpans(tuple(spans), tuple(tuple(k) for k in kids), tuple(top), heads)
