"""BloscLZ: C-Blosc's FastLZ-derived codec (spec §10.1), decoder and byte-exact encoder.

Stream: instructions. ``ctrl < 32``: a literal run of ``ctrl + 1`` bytes. Otherwise a match of
length ``(ctrl >> 5) + 2`` (7 → extension bytes added until one is not 255, length ``9 + Σ``)
at distance ``(ctrl & 31) * 256 + next + 1``; ``hi == 31, lo == 255`` announces a far distance
in two more bytes (big-endian, + 8192). The first control byte carries a marker in its top
bits that the decoder ignores.

The encoder follows C-Blosc2 3.3.5 (entropy probe, hash table, placeholder control bytes,
output bounds) so that its streams are byte-identical to C's. Hashes of every position are
computed up front with numpy; the Python loop then runs once per literal byte or per match.
"""

from __future__ import annotations

import numpy as np

from ..constants import Codec
from .base import BaseCodec, stream_error

__all__ = ["BloscLZCodec", "compress", "decompress"]

MAX_COPY = 32
MAX_DISTANCE = 8191
MAX_FARDISTANCE = 65535 + MAX_DISTANCE - 1  # 73725
IPSHIFT = 4
MINLEN = 4
_HASHLOG = [0, 12, 13, 14, 14, 14, 14, 14, 14, 14]
_MIN_RATIO = [0.0, 2.0, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0]
_PROBE_SHIFT = [0, 3, 2, 2, 1, 1, 1, 0, 0, 0]  # probe region = n >> shift
_MIN_SIZE = 16
_MIN_MAXOUT = 66


def _err(expected: str, got: object):  # type: ignore[no-untyped-def]
    return stream_error("blosclz", expected, got)


def decompress(src, nbytes: int) -> bytearray:  # type: ignore[no-untyped-def]
    """Decode a BloscLZ stream to exactly ``nbytes`` bytes.

    >>> s = bytes.fromhex("236161616161e0060301616200")
    >>> bytes(decompress(bytes.fromhex("2361616161e00603") + b"\\x01ab", 21))
    b'aaaaaaaaaaaaaaaaaaaab'
    """
    s = bytes(src)
    n = len(s)
    if n == 0:
        raise _err("a non-empty stream", "0 bytes")
    out = bytearray(nbytes)
    op = 0
    ip = 1
    ctrl = s[0] & 31
    while True:
        if ctrl >= 32:
            length = (ctrl >> 5) - 1
            hi = ctrl & 31
            if length == 6:
                while True:
                    if ip + 1 >= n:
                        raise _err("a complete match length", f"stream end at {ip}")
                    c = s[ip]
                    ip += 1
                    length += c
                    if c != 255:
                        break
            elif ip + 1 >= n:
                raise _err(
                    "a match distance byte and a following instruction", f"stream end at {ip}"
                )
            lo = s[ip]
            ip += 1
            length += 3
            dist = hi * 256 + lo + 1
            if lo == 255 and hi == 31:
                if ip + 1 >= n:
                    raise _err("a far-match distance", f"stream end at {ip}")
                dist = s[ip] * 256 + s[ip + 1] + 8192
                ip += 2
            if op + length > nbytes:
                raise _err(f"at most {nbytes} output bytes", f"{op + length} at stream offset {ip}")
            if dist > op:
                raise _err(f"a distance within the {op} bytes decoded", f"{dist} at offset {ip}")
            if ip >= n:
                raise _err("an instruction after a match", f"stream end at {ip}")
            ctrl = s[ip]
            ip += 1
            st = op - dist
            if dist >= length:
                out[op : op + length] = out[st : st + length]
            elif dist == 1:
                out[op : op + length] = out[st:op] * length
            else:
                out[op : op + length] = (out[st:op] * (length // dist + 1))[:length]
            op += length
        else:
            length = ctrl + 1
            if op + length > nbytes:
                raise _err(f"at most {nbytes} output bytes", f"{op + length} at stream offset {ip}")
            if ip + length > n:
                raise _err(f"{length} literal bytes", f"{n - ip} left at offset {ip}")
            out[op : op + length] = s[ip : ip + length]
            op += length
            ip += length
            if ip >= n:
                break
            ctrl = s[ip]
            ip += 1
    if op != nbytes:
        raise _err(f"{nbytes} decoded bytes", op)
    return out


# -- encoder ---------------------------------------------------------------------------------
def _u32_and_hashes(b: np.ndarray, hashlog: int, extra: bool) -> tuple[list, list, list | None]:
    """u32 at every position (0 past the end), its hash, and (clevel 9) the hash of u32 >> 8."""
    n = len(b)
    padded = np.zeros(n + 3, np.uint32)
    padded[:n] = b
    u = (
        padded[:n]
        | (padded[1 : n + 1] << 8)
        | (padded[2 : n + 2] << 16)
        | (padded[3 : n + 3] << 24)
    )
    shift = np.uint64(32 - hashlog)
    h = ((u.astype(np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)) >> shift
    h9 = None
    if extra:
        h9 = (
            (((u >> 8).astype(np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)) >> shift
        ).tolist()
    return u.tolist(), h.tolist(), h9


def _match_end(b: bytes, a: int, r: int, bound: int) -> int:
    """One past the first ``p >= a`` with ``b[p] != b[r + p - a]``, or ``bound``."""
    p = a
    k = 8
    while p < bound:
        k = min(k, bound - p)
        q = r + (p - a)
        if b[p : p + k] == b[q : q + k]:
            p += k
            k = min(k * 2, 4096)
            continue
        while k > 8:  # bisect the mismatching window
            half = k // 2
            q = r + (p - a)
            if b[p : p + half] == b[q : q + half]:
                p += half
                k -= half
            else:
                k = half
        q = r + (p - a)
        for i in range(k):
            if b[p + i] != b[q + i]:
                return p + i + 1
        p += k  # unreachable for a real mismatch; keeps the loop total
    return bound


def _probe_ratio(b: bytes, arr: np.ndarray, n: int, clevel: int) -> float:
    """``get_cratio``: estimated ratio of the stream's tail (spec §10.1, entropy probe)."""
    hashlog = _HASHLOG[clevel]
    maxlen = n >> _PROBE_SHIFT[clevel]
    limit = min(maxlen, 1 << hashlog)
    ip_bound, ip_limit = limit - 1, limit - 12
    if ip_limit <= 0:
        return 0.0
    base = n - maxlen
    region = b[base : base + limit]
    u, h, _ = _u32_and_hashes(arr[base : base + limit], hashlog, False)
    htab = [0] * (1 << hashlog)
    ip, copy, oc = 0, 4, 5
    while ip < ip_limit:
        anchor = ip
        hv = h[ip]
        ref = htab[hv]
        htab[hv] = anchor
        dist = anchor - ref
        if dist and dist < MAX_FARDISTANCE and u[ref] == u[anchor]:
            dist -= 1
            ip = _match_end(region, anchor + 4, ref + 4, ip_bound) - IPSHIFT
            ml = ip - anchor
            if ml >= MINLEN:
                if copy == 0:
                    oc -= 1
                copy = 0
                oc += 2 if dist < MAX_DISTANCE else 4
                if ml >= 7:
                    oc += (ml - 7) // 255 + 1
                htab[h[ip]] = ip
                ip += 2
                oc += 1
                continue
        oc += 1  # literal
        ip = anchor + 1
        copy += 1
        if copy == MAX_COPY:
            copy = 0
            oc += 1
    return ip / oc


def compress(src, clevel: int, maxout: int) -> bytes:  # type: ignore[no-untyped-def]
    """Compress like C-Blosc2's ``blosclz_compress``; ``b""`` where C returns 0.

    >>> c = compress(b"abcd" * 100, 5, 400); len(c), bytes(decompress(c, 400)) == b"abcd" * 100
    (13, True)
    """
    b = bytes(src)
    n = len(b)
    if not 1 <= clevel <= 9 or n == 0:
        return b""
    arr = np.frombuffer(b, np.uint8)
    if _probe_ratio(b, arr, n, clevel) < _MIN_RATIO[clevel]:
        return b""
    if n < _MIN_SIZE or maxout < _MIN_MAXOUT:
        return b""
    hashlog = _HASHLOG[clevel]
    u, h, h9 = _u32_and_hashes(arr, hashlog, clevel == 9)
    htab = [0] * (1 << hashlog)
    out = bytearray([MAX_COPY - 1])
    out += b[:4]
    ip, copy = 4, 4
    ip_bound, ip_limit = n - 1, n - 12
    while ip < ip_limit:
        anchor = ip
        hv = h[ip]
        ref = htab[hv]
        htab[hv] = anchor
        dist = anchor - ref
        if dist and dist < MAX_FARDISTANCE and u[ref] == u[anchor]:
            dist -= 1
            ip = _match_end(b, anchor + 4, ref + 4, ip_bound) - IPSHIFT
            ml = ip - anchor
            if ml >= MINLEN and not (ml <= 5 and dist >= MAX_DISTANCE):
                if copy:
                    out[-copy - 1] = copy - 1
                else:
                    del out[-1]
                copy = 0
                if not _emit_match(out, ml, dist, maxout):
                    return b""
                htab[h[ip]] = ip
                ip += 1
                if h9 is not None:
                    htab[h9[ip - 1]] = ip
                ip += 1
                if len(out) + 1 > maxout:
                    return b""
                out.append(MAX_COPY - 1)
                continue
        # literal
        if len(out) + 2 > maxout:
            return b""
        out.append(b[anchor])
        ip = anchor + 1
        copy += 1
        if copy == MAX_COPY:
            copy = 0
            out.append(MAX_COPY - 1)
    while ip <= ip_bound:  # trailing literals
        if len(out) + 2 > maxout:
            return b""
        out.append(b[ip])
        ip += 1
        copy += 1
        if copy == MAX_COPY:
            copy = 0
            out.append(MAX_COPY - 1)
    if copy:
        out[-copy - 1] = copy - 1
    else:
        del out[-1]
    out[0] |= 0x20
    return bytes(out)


def _emit_match(out: bytearray, ml: int, dist: int, maxout: int) -> bool:
    """Append a match (encoded length ``ml``, biased distance); False if it does not fit."""
    if dist < MAX_DISTANCE:
        if ml < 7:
            if len(out) + 2 > maxout:
                return False
            out += bytes(((ml << 5) | (dist >> 8), dist & 255))
            return True
        if len(out) + 1 > maxout:
            return False
        out.append(0xE0 | (dist >> 8))
        tail = bytes((dist & 255,))
    else:
        d = dist - MAX_DISTANCE
        far = bytes((255, d >> 8, d & 255))
        if ml < 7:
            if len(out) + 4 > maxout:
                return False
            out.append((ml << 5) | 31)
            out += far
            return True
        if len(out) + 1 > maxout:
            return False
        out.append(0xFF)
        tail = far
    ml -= 7
    while ml >= 255:
        if len(out) + 1 > maxout:
            return False
        out.append(255)
        ml -= 255
    if len(out) + 1 + len(tail) > maxout:
        return False
    out.append(ml)
    out += tail
    return True


class BloscLZCodec(BaseCodec):
    """BloscLZ (codec id 0, compformat 0)."""

    compcode = Codec.BLOSCLZ
    compformat = 0
    name = "blosclz"

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        return compress(src, clevel, maxout)

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytearray:
        return decompress(src, nbytes)
