"""BloscLZ streams in numba's Python subset: the JIT twins of :mod:`.blosclz_np` (the format
rule, spec §10.1, is held by :mod:`pyblosc2.codecs.blosclz`). Only :mod:`.numba_set` imports
this module.

The encoder is C-Blosc2's ``blosclz_compress`` run position by position, as
:mod:`.blosclz_np` restates it (the entropy probe ``get_cratio``, the hash table, the literal
runs and the ``maxout`` checks), so both give the same bytes. The decoder runs C's
instruction loop; a stream it refuses is decoded again by the numpy decoder, which raises the
:class:`~pyblosc2.errors.CodecError` that names what is wrong (the two refuse the same
streams: the kernel tests check it).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import ParamError
from . import blosclz_np

__all__ = ["compress", "decompress", "decompress_into", "decompress_streams"]

_jit = numba.njit(nogil=True, cache=True)

MAX_COPY = 32
MAX_DISTANCE = 8191
MAX_FARDISTANCE = 65535 + MAX_DISTANCE - 1
_KNUTH = 2654435761
_HASHLOG = np.array([0, 12, 13, 14, 14, 14, 14, 14, 14, 14], np.int64)
_MIN_CRATIO = np.array([0.0, 2.0, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0])
_BytesLike = bytes | bytearray | memoryview | np.ndarray


@_jit
def _u32(b: Any, i: int) -> int:
    return (
        np.int64(b[i])
        | (np.int64(b[i + 1]) << 8)
        | (np.int64(b[i + 2]) << 16)
        | (np.int64(b[i + 3]) << 24)
    )


@_jit
def _hash(v: int, hashlog: int) -> int:
    return ((v * _KNUTH) & 0xFFFFFFFF) >> (32 - hashlog)


@_jit
def _match_end(b: Any, p: int, q: int, bound: int) -> int:
    """One past the first ``k >= p`` with ``b[k] != b[k - p + q]``, at most ``bound``."""
    while p < bound:
        if b[p] != b[q]:
            return p + 1 if p + 1 < bound else bound
        p += 1
        q += 1
    return bound


@_jit
def _cratio(b: Any, n: int, clevel: int, hashlog: int) -> float:
    """``get_cratio``: the probe's estimated ratio (see :func:`.blosclz_np._cratio`)."""
    if clevel < 2:
        maxlen = n // 8
    elif clevel < 4:
        maxlen = n // 4
    elif clevel < 7:
        maxlen = n // 2
    else:
        maxlen = n
    shift = n - maxlen
    limit = min(maxlen, 1 << hashlog)
    if limit < 13:
        return 0.0
    ip_limit = shift + limit - 12
    bound = shift + limit - 1
    htab = np.full(1 << hashlog, shift, np.int64)
    a = shift
    lit = shift
    copy = 4
    oc = 5
    while a < ip_limit:
        v = _u32(b, a)
        h = _hash(v, hashlog)
        r = htab[h]
        htab[h] = a
        if r == a or _u32(b, r) != v or _u32(b, r + 3) != _u32(b, a + 3):
            a += 1
            continue
        k = a - lit
        oc += k + (copy + k) // MAX_COPY
        if (copy + k) % MAX_COPY == 0:
            oc -= 1
        copy = 0
        end = _match_end(b, a + 4, r + 4, bound)
        ip = end - 4
        ml = ip - a
        if ml >= 7:
            oc += (ml - 7) // 255 + 1
        oc += 3 if a - r - 1 < MAX_DISTANCE else 5
        htab[_hash(_u32(b, ip), hashlog)] = ip
        a = ip + 2
        lit = a
    k = a - lit
    oc += k + (copy + k) // MAX_COPY
    return (a - shift) / oc


@_jit
def _literals(out: Any, o: int, b: Any, start: int, stop: int) -> int:
    """Literal runs of 32 (control byte 31) and a shorter last one; the new output length."""
    while start < stop:
        run = min(MAX_COPY, stop - start)
        out[o] = run - 1
        o += 1
        for i in range(run):
            out[o + i] = b[start + i]
        o += run
        start += run
    return o


@_jit
def _long_length(out: Any, o: int, ml: int) -> int:
    k = (ml - 7) // 255
    for _ in range(k):
        out[o] = 255
        o += 1
    out[o] = (ml - 7) % 255
    return o + 1


@_jit
def _compress(b: Any, clevel: int, maxout: int, out: Any) -> int:
    """The stream's length in ``out``, or 0 where C's ``blosclz_compress`` returns 0."""
    n = b.size
    hashlog = _HASHLOG[clevel]
    if _cratio(b, n, clevel, hashlog) < _MIN_CRATIO[clevel]:
        return 0
    ip_limit = n - 12
    bound = n - 1
    htab = np.zeros(1 << hashlog, np.int64)
    extra_shift = 32 - hashlog
    o = 0
    placeholder = 0
    lit = 0
    a = 4
    while a < ip_limit:
        v = _u32(b, a)
        h = _hash(v, hashlog)
        r = htab[h]
        htab[h] = a
        d = a - r
        if (
            d >= MAX_FARDISTANCE
            or _u32(b, r) != v
            or _u32(b, r + 3) != _u32(b, a + 3)
            or (d > MAX_DISTANCE and _u32(b, r + 5) != _u32(b, a + 5))
        ):
            a += 1
            continue
        run = a - lit
        if run:
            # C checks `op + 2 <= op_limit` before each literal byte; the last is the tightest
            if placeholder + 2 + run + (run - 1) // MAX_COPY > maxout:
                return 0
            o = _literals(out, o, b, lit, a)
        end = _match_end(b, a + 4, r + 4, bound)
        ip = end - 4
        ml = ip - a
        dist = a - r - 1
        if dist < MAX_DISTANCE:
            if ml < 7:
                out[o] = (ml << 5) | (dist >> 8)
                o += 1
            else:
                out[o] = 0xE0 | (dist >> 8)
                o = _long_length(out, o + 1, ml)
            out[o] = dist & 255
            o += 1
        else:
            dist -= MAX_DISTANCE
            if ml < 7:
                out[o] = (ml << 5) | 31
                o += 1
            else:
                out[o] = 0xFF
                o = _long_length(out, o + 1, ml)
            out[o] = 255
            out[o + 1] = dist >> 8
            out[o + 2] = dist & 255
            o += 3
        placeholder = o
        if placeholder + 1 > maxout:  # the match bytes and the next placeholder must fit
            return 0
        htab[_hash(_u32(b, ip), hashlog)] = ip
        if clevel == 9:
            htab[(((_u32(b, ip) >> 8) * _KNUTH) & 0xFFFFFFFF) >> extra_shift] = ip + 1
        a = ip + 2
        lit = a
    run = n - lit  # the tail joins the pending literal run
    if placeholder + 2 + run + (run - 1) // MAX_COPY > maxout:
        return 0
    o = _literals(out, o, b, lit, n)
    out[0] |= 0x20
    return o


@_jit
def _copy8(dst: Any, d: int, src: Any, s: int) -> None:
    """``dst[d : d + 8] = src[s : s + 8]`` as eight loads then eight stores, which LLVM fuses
    into one 8-byte load and store. The indices are unsigned so that numba adds no
    negative-index fix-up to each access (with signed indices the fusion does not happen:
    1.1-1.3 GB/s on the benchmark's streams against 2.6-4.0 GB/s; slice copies, 0.9-1.3)."""
    u = np.uint64(d)
    v = np.uint64(s)
    a0 = src[v]
    a1 = src[v + np.uint64(1)]
    a2 = src[v + np.uint64(2)]
    a3 = src[v + np.uint64(3)]
    a4 = src[v + np.uint64(4)]
    a5 = src[v + np.uint64(5)]
    a6 = src[v + np.uint64(6)]
    a7 = src[v + np.uint64(7)]
    dst[u] = a0
    dst[u + np.uint64(1)] = a1
    dst[u + np.uint64(2)] = a2
    dst[u + np.uint64(3)] = a3
    dst[u + np.uint64(4)] = a4
    dst[u + np.uint64(5)] = a5
    dst[u + np.uint64(6)] = a6
    dst[u + np.uint64(7)] = a7


@_jit
def _copy16(dst: Any, d: int, src: Any, s: int) -> None:
    """``dst[d : d + 16] = src[s : s + 16]``: sixteen loads, then sixteen stores (one 16-byte
    move; the source must end at or before ``d`` when the two overlap)."""
    u = np.uint64(d)
    v = np.uint64(s)
    a0 = src[v + np.uint64(0)]
    a1 = src[v + np.uint64(1)]
    a2 = src[v + np.uint64(2)]
    a3 = src[v + np.uint64(3)]
    a4 = src[v + np.uint64(4)]
    a5 = src[v + np.uint64(5)]
    a6 = src[v + np.uint64(6)]
    a7 = src[v + np.uint64(7)]
    a8 = src[v + np.uint64(8)]
    a9 = src[v + np.uint64(9)]
    a10 = src[v + np.uint64(10)]
    a11 = src[v + np.uint64(11)]
    a12 = src[v + np.uint64(12)]
    a13 = src[v + np.uint64(13)]
    a14 = src[v + np.uint64(14)]
    a15 = src[v + np.uint64(15)]
    dst[u + np.uint64(0)] = a0
    dst[u + np.uint64(1)] = a1
    dst[u + np.uint64(2)] = a2
    dst[u + np.uint64(3)] = a3
    dst[u + np.uint64(4)] = a4
    dst[u + np.uint64(5)] = a5
    dst[u + np.uint64(6)] = a6
    dst[u + np.uint64(7)] = a7
    dst[u + np.uint64(8)] = a8
    dst[u + np.uint64(9)] = a9
    dst[u + np.uint64(10)] = a10
    dst[u + np.uint64(11)] = a11
    dst[u + np.uint64(12)] = a12
    dst[u + np.uint64(13)] = a13
    dst[u + np.uint64(14)] = a14
    dst[u + np.uint64(15)] = a15


@_jit
def _decompress(s: Any, out: Any) -> int:
    """C's decoder loop into ``out`` (exactly its size); -1 for a stream C refuses."""
    n = s.size
    nbytes = out.size
    if n == 0:
        return -1
    ip = 1
    ctrl = np.int64(s[0] & 31)
    op = 0
    while True:
        if ctrl < 32:
            run = ctrl + 1
            if op + run > nbytes or ip + run > n:
                return -1
            if op + MAX_COPY <= nbytes and ip + MAX_COPY <= n:  # room for whole words
                k = 0
                while k < run:
                    _copy8(out, op + k, s, ip + k)
                    k += 8
            else:
                out[op : op + run] = s[ip : ip + run]
            op += run
            ip += run
            if ip >= n:
                break
            ctrl = np.int64(s[ip])
            ip += 1
            continue
        if ctrl < 224:
            if ip + 1 >= n:
                return -1
            length = (ctrl >> 5) + 2
        else:
            length = 9
            while True:
                if ip + 1 >= n:
                    return -1
                c = np.int64(s[ip])
                ip += 1
                length += c
                if c != 255:
                    break
        lo = np.int64(s[ip])
        ip += 1
        if lo == 255 and ctrl & 31 == 31:
            if ip + 1 >= n:
                return -1
            dist = (np.int64(s[ip]) << 8) + np.int64(s[ip + 1]) + 8192
            ip += 2
        else:
            dist = ((ctrl & 31) << 8) + lo + 1
        if op + length > nbytes or dist > op or ip >= n:
            return -1
        ctrl = np.int64(s[ip])
        ip += 1
        st = op - dist
        # 32 bytes per step (two 16-byte moves when the source is 16 or more bytes back, else
        # four 8-byte ones: 1.1-1.2x over one 8-byte move per step on the benchmark's
        # streams) where the output has room for the overshoot; 8 bytes per step where it
        # has room for the last word's (the bytes past the match are written again by the
        # next instructions, and a stream that ends early is refused); each word's source
        # lies before its destination, so an overlapping match repeats its period as C's
        # byte loop does. Slice copies (numba copies an overlapping source first) for the rest:
        # short periods and the last bytes of the block.
        if dist >= 16 and op + length + 32 <= nbytes:
            k = 0
            while k < length:
                _copy16(out, op + k, out, st + k)
                _copy16(out, op + k + 16, out, st + k + 16)
                k += 32
        elif dist >= 8 and op + length + 32 <= nbytes:
            k = 0
            while k < length:
                _copy8(out, op + k, out, st + k)
                _copy8(out, op + k + 8, out, st + k + 8)
                _copy8(out, op + k + 16, out, st + k + 16)
                _copy8(out, op + k + 24, out, st + k + 24)
                k += 32
        elif dist >= 8 and op + length + 8 <= nbytes:
            k = 0
            while k < length:
                _copy8(out, op + k, out, st + k)
                k += 8
        elif dist == 1:
            out[op : op + length] = out[st]
        elif dist >= length:
            out[op : op + length] = out[st : st + length]
        else:
            done = 0
            while done < length:
                k = min(dist, length - done)
                out[op + done : op + done + k] = out[st + done : st + done + k]
                done += k
        op += length
    return op if op == nbytes else -1


@_jit
def _decompress_streams(src: Any, table: Any, dst: Any) -> int:
    """:func:`_decompress` of every row's stream into its place (one call, no GIL); -1, or
    the first row refused."""
    for i in range(table.shape[0]):
        if _decompress(src[table[i, 0] : table[i, 1]], dst[table[i, 2] : table[i, 3]]) < 0:
            return i
    return -1


def _as_array(src: _BytesLike) -> np.ndarray:
    if isinstance(src, np.ndarray):
        return src.reshape(-1).view(np.uint8)
    return np.frombuffer(src, np.uint8)


def compress(src: _BytesLike, clevel: int, maxout: int) -> bytes:
    """The BloscLZ stream of ``src``, or ``b""`` where C's ``blosclz_compress`` returns 0
    (the same bytes as :func:`.blosclz_np.compress`)."""
    if not 1 <= clevel <= 9:
        raise ParamError(f"clevel must be 1..9 for BloscLZ, got {clevel}")
    b = np.ascontiguousarray(_as_array(src))
    n = b.size
    if n < 16 or maxout < 66:
        return b""
    out = np.empty(maxout + n // 255 + 16, np.uint8)
    k = _compress(b, clevel, maxout, out)
    return out[:k].tobytes() if k else b""


def decompress(src: _BytesLike, nbytes: int) -> bytearray:
    """Decode to exactly ``nbytes`` bytes, or raise the CodecError the numpy decoder raises."""
    s = np.ascontiguousarray(_as_array(src))
    out = bytearray(nbytes)
    if _decompress(s, np.frombuffer(out, np.uint8)) < 0:
        return blosclz_np.decompress(src, nbytes)  # raises, naming what is wrong
    return out


def decompress_into(src: _BytesLike, dst: np.ndarray) -> None:
    """Decode into all of ``dst``, or raise the CodecError the numpy decoder raises."""
    s = _as_array(src)
    if _decompress(s if s.flags.c_contiguous else np.ascontiguousarray(s), dst) < 0:
        # the numpy decoder raises, naming what is wrong (the two refuse the same streams;
        # were they ever to disagree, the reference's bytes win)
        dst[:] = np.frombuffer(blosclz_np.decompress(src, len(dst)), np.uint8)


def decompress_streams(src: np.ndarray, table: np.ndarray, dst: np.ndarray) -> int:
    """Decode stream ``i`` = ``src[table[i, 0] : table[i, 1]]`` into
    ``dst[table[i, 2] : table[i, 3]]`` for every row of ``table`` in one call; -1 when all
    decode, else the first ``i`` refused (the caller decodes it again alone to name why)."""
    return int(_decompress_streams(src, table, dst))
