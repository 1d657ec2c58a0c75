"""BloscLZ streams in Python + numpy: the reference kernels behind :mod:`pyblosc2.kernels`.

The format rule (spec §10.1, ``../shared/specs/chunk-format.md``) is held by
:mod:`pyblosc2.codecs.blosclz`; this module is its numpy implementation. The decoder accepts
exactly the streams ``blosclz_decompress`` accepts (every failed ``require`` raises
:class:`~pyblosc2.errors.CodecError`), and the encoder reproduces ``blosclz_compress`` byte for
byte, including the entropy probe (``get_cratio``), the placeholder control bytes and the
``maxout`` bound checks (§7 step 5).

Speed: the encoder's control flow is sequential (byte exactness), so everything vectorisable is
precomputed with numpy (u32/u64 at every position, the hashes), literal stretches longer than a
few dozen bytes are scanned in numpy windows, and match lengths come from integer XORs of whole
slices. The decoder loops over instructions, never bytes (literals and matches are slice copies,
overlapping matches repeat their period); when many short instructions remain, numpy parses the
instruction chain and re-encodes it as an LZ4 block that liblz4 expands.
"""

from __future__ import annotations

import lz4.block
import numpy as np

from ..errors import CodecError, ParamError, stream_error

__all__ = ["compress", "decompress", "decompress_into", "decompress_streams"]

MAX_COPY = 32
MAX_DISTANCE = 8191
MAX_FARDISTANCE = 65535 + MAX_DISTANCE - 1  # 73725
_HASHLOG = (0, 12, 13, 14, 14, 14, 14, 14, 14, 14)
_MIN_CRATIO = (0.0, 2.0, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0)
_KNUTH = 2654435761
# Encoder scan: positions examined one at a time after a match before switching to numpy windows.
_SCALAR_STEPS = 32
_WINDOW_MIN = 128
_WINDOW_MAX = 4096

_BytesLike = bytes | bytearray | memoryview | np.ndarray


def _as_bytes(src: _BytesLike) -> bytes:
    if isinstance(src, bytes):
        return src
    if isinstance(src, np.ndarray):
        return src.tobytes()
    return bytes(src)


# --------------------------------------------------------------------------------------------
# Encoder
# --------------------------------------------------------------------------------------------


def _match_end(b: bytes, p: int, r: int, bound: int) -> int:
    """One past the first ``k >= p`` with ``b[k] != b[k + r - p]``, or ``bound`` (C's get_match)."""
    step = 32
    while p < bound:
        q = p + step if p + step < bound else bound
        s1 = b[p:q]
        s2 = b[r : r + q - p]
        if s1 != s2:
            x = int.from_bytes(s1, "little") ^ int.from_bytes(s2, "little")
            p += ((x & -x).bit_length() + 7) >> 3
            return p if p < bound else bound
        r += q - p
        p = q
        step <<= 2
    return bound


class _Tables:
    """Per-input precomputation: u32/u64 at every position and the hash of every u32."""

    def __init__(self, b: bytes, hashlog: int) -> None:
        n = len(b)
        self.b = b
        self.hashlog = hashlog
        self.u32 = np.ndarray((n - 3,), dtype="<u4", buffer=b, strides=(1,)).astype(np.uint32)
        u64 = np.ndarray((n - 7,), dtype="<u8", buffer=b, strides=(1,)).astype(np.uint64)
        self.u64m = u64.data
        self.u32m = self.u32.data
        self.hsh = ((self.u32 * np.uint32(_KNUTH)) >> np.uint32(32 - hashlog)).astype(np.int32)
        self.hm = self.hsh.data

    def vector_find(self, htab: np.ndarray, a0: int, limit: int, far_rule: bool) -> tuple[int, int]:
        """First accepted match ``(anchor, ref)`` at or after ``a0`` (``(limit, -1)`` if none).

        Scans numpy windows of growing width. Inside a window a position's reference is the
        previous window position with the same hash if there is one, else the table entry, which
        is exactly what C's one-at-a-time insertions produce. Every scanned position (the anchor
        included) ends up in ``htab``.
        """
        u32, hsh = self.u32, self.hsh
        width = _WINDOW_MIN
        while a0 < limit:
            e = min(a0 + width, limit)
            hw = hsh[a0:e]
            order = np.argsort(hw, kind="stable")
            hs = hw[order]
            same = hs[1:] == hs[:-1]
            earlier = order[:-1][same]
            later = order[1:][same]
            ref = htab[hw]
            ref[later] = earlier + a0
            pos = np.arange(a0, e, dtype=np.int32)
            dist = pos - ref
            ok = (u32[ref] == u32[a0:e]) & (u32[ref + 3] == u32[a0 + 3 : e + 3])
            ok &= (dist > 0) & (dist < MAX_FARDISTANCE)
            if far_rule:
                ok &= (dist <= MAX_DISTANCE) | (u32[ref + 5] == u32[a0 + 5 : e + 5])
            hit = int(ok.argmax())
            found = bool(ok[hit])
            if found:
                e = a0 + hit + 1
            keep = np.ones(e - a0, dtype=bool)  # only the last position of each hash survives
            keep[earlier[later < e - a0]] = False
            kept = pos[: e - a0][keep]
            htab[hsh[kept]] = kept
            if found:
                return e - 1, int(ref[hit])
            a0 = e
            width = min(width * 2, _WINDOW_MAX)
        return limit, -1


def _cratio(t: _Tables, n: int, clevel: int) -> float:
    """``get_cratio``: estimated ratio of the first bytes of the last ``maxlen`` bytes (§10.1).

    Same scan as the encoder but without the far-length rule, with one hash insertion after a
    match, and counting output bytes instead of writing them.
    """
    maxlen = n // 8 if clevel < 2 else n // 4 if clevel < 4 else n // 2 if clevel < 7 else n
    shift = n - maxlen
    limit = min(maxlen, 1 << t.hashlog)
    if limit < 13:
        return 0.0
    ip_limit = shift + limit - 12
    bound = shift + limit - 1
    htab = np.full(1 << t.hashlog, shift, dtype=np.int32)  # C's zeroed table, region-relative
    tm, hm, um, u64m, b = htab.data, t.hm, t.u32m, t.u64m, t.b
    a = lit = shift
    copy = 4
    oc = 5
    while a < ip_limit:
        stop = a + _SCALAR_STEPS if a + _SCALAR_STEPS < ip_limit else ip_limit
        while a < stop:
            h = hm[a]
            r = tm[h]
            tm[h] = a
            if r != a and um[r] == um[a] and um[r + 3] == um[a + 3]:
                break
            a += 1
        else:
            a, r = t.vector_find(htab, a, ip_limit, False)
            if r < 0:
                break
        k = a - lit  # literals since the last match; a control byte per 32
        oc += k + (copy + k) // MAX_COPY
        if (copy + k) % MAX_COPY == 0:
            oc -= 1
        copy = 0
        x = u64m[a + 4] ^ u64m[r + 4]
        if x:
            end = a + 4 + (((x & -x).bit_length() + 7) >> 3)
        else:
            end = _match_end(b, a + 12, r + 12, bound)
        if end > bound:
            end = bound
        ip = end - 4
        ml = ip - a
        if ml >= 7:
            oc += (ml - 7) // 255 + 1
        oc += 3 if a - r - 1 < MAX_DISTANCE else 5  # + the placeholder
        tm[hm[ip]] = ip
        a = lit = ip + 2
    k = a - lit  # `a` is where C's loop stopped: ip_limit, or past it after a match
    oc += k + (copy + k) // MAX_COPY
    return (a - shift) / oc


def _emit_literals(out: bytearray, b: bytes, start: int, stop: int) -> None:
    """Literal runs of 32 (control byte 31) and a shorter last one."""
    full = (stop - start) // MAX_COPY
    if full:
        rows = np.empty((full, MAX_COPY + 1), dtype=np.uint8)
        rows[:, 0] = MAX_COPY - 1
        rows[:, 1:] = np.frombuffer(b, np.uint8, full * MAX_COPY, start).reshape(full, MAX_COPY)
        out += rows.tobytes()
        start += full * MAX_COPY
    if start < stop:
        out.append(stop - start - 1)
        out += b[start:stop]


def compress(src: _BytesLike, clevel: int, maxout: int) -> bytes:
    """Return the BloscLZ stream for bytes-like ``src``, or ``b""`` when C's
    ``blosclz_compress`` would return 0 (probe says not compressible, n < 16, maxout < 66,
    output would exceed maxout)."""
    if not 1 <= clevel <= 9:
        raise ParamError(f"clevel must be 1..9 for BloscLZ, got {clevel}")
    b = _as_bytes(src)
    n = len(b)
    if n < 16 or maxout < 66:
        return b""  # the probe cannot change this outcome
    t = _Tables(b, _HASHLOG[clevel])
    if _cratio(t, n, clevel) < _MIN_CRATIO[clevel]:
        return b""

    ip_limit = n - 12
    bound = n - 1
    htab = np.zeros(1 << t.hashlog, dtype=np.int32)
    tm, hm, um, u64m = htab.data, t.hm, t.u32m, t.u64m
    extra_shift = 32 - t.hashlog
    out = bytearray()
    placeholder = 0  # where C's pending control byte sits
    lit = 0  # start of the pending literal run
    a = 4
    while a < ip_limit:
        stop = a + _SCALAR_STEPS if a + _SCALAR_STEPS < ip_limit else ip_limit
        while a < stop:
            h = hm[a]
            r = tm[h]
            tm[h] = a
            # C's tests, with "match length >= minlen" read off u32 comparisons (§10.1)
            if (
                a - r < MAX_FARDISTANCE
                and um[r] == um[a]
                and um[r + 3] == um[a + 3]
                and (a - r <= MAX_DISTANCE or um[r + 5] == um[a + 5])
            ):
                break
            a += 1
        else:
            a, r = t.vector_find(htab, a, ip_limit, True)
            if r < 0:
                break
        run = a - lit
        if run:
            # C checks `op + 2 <= op_limit` before each literal byte; the last one is the tightest
            if placeholder + 2 + run + (run - 1) // MAX_COPY > maxout:
                return b""
            if run <= MAX_COPY:
                out.append(run - 1)
                out += b[lit:a]
            else:
                _emit_literals(out, b, lit, a)
        x = u64m[a + 4] ^ u64m[r + 4]
        if x:
            end = a + 4 + (((x & -x).bit_length() + 7) >> 3)
        else:
            end = _match_end(b, a + 12, r + 12, bound)
        if end > bound:
            end = bound
        ip = end - 4
        ml = ip - a
        dist = a - r - 1
        if dist < MAX_DISTANCE:
            if ml < 7:
                out.append((ml << 5) | (dist >> 8))
            else:
                out.append(0xE0 | (dist >> 8))
                k, rest = divmod(ml - 7, 255)
                if k:
                    out += b"\xff" * k
                out.append(rest)
            out.append(dist & 255)
        else:
            dist -= MAX_DISTANCE
            if ml < 7:
                out.append((ml << 5) | 31)
            else:
                out.append(0xFF)
                k, rest = divmod(ml - 7, 255)
                if k:
                    out += b"\xff" * k
                out.append(rest)
            out += bytes((255, dist >> 8, dist & 255))
        placeholder = len(out)
        if placeholder + 1 > maxout:  # the match bytes and the next placeholder must fit
            return b""
        tm[hm[ip]] = ip
        if clevel == 9:
            tm[((um[ip] >> 8) * _KNUTH & 0xFFFFFFFF) >> extra_shift] = ip + 1
        a = lit = ip + 2
    run = n - lit  # the tail (>= 3 bytes) joins the pending literal run
    if placeholder + 2 + run + (run - 1) // MAX_COPY > maxout:
        return b""
    _emit_literals(out, b, lit, n)
    out[0] |= 0x20
    return bytes(out)


# --------------------------------------------------------------------------------------------
# Decoder
# --------------------------------------------------------------------------------------------


def _err(expected: object, got: object) -> Exception:
    return stream_error("blosclz", expected, got)


def _decode_scalar(
    s: bytes, nbytes: int, out: bytearray, ip: int, ctrl: int, budget: int
) -> tuple[int, int]:
    """Run up to ``budget`` instructions of C's decoder loop (§10.1), appending to ``out``.

    ``ctrl`` is the control byte of the next instruction and ``ip`` the offset after it.
    Returns the same pair for the instruction after the last one run; ``ip == -1`` once the
    stream is exhausted.
    """
    n = len(s)
    op = len(out)
    for _ in range(budget):
        if ctrl < 32:
            ip2 = ip + ctrl + 1
            op += ctrl + 1
            if op > nbytes:
                raise _err(
                    f"at most {nbytes} output bytes",
                    f"a literal run of {ctrl + 1} at output length {op - ctrl - 1} "
                    f"(stream offset {ip - 1})",
                )
            if ip2 > n:
                raise _err(
                    f"{ctrl + 1} literal bytes at stream offset {ip}",
                    f"{n - ip} (stream truncated)",
                )
            out += s[ip:ip2]
            if ip2 >= n:
                return -1, 0
            ctrl = s[ip2]
            ip = ip2 + 1
            continue
        start = ip - 1
        if ctrl < 224:
            if ip + 1 >= n:
                raise _err(f"a distance byte and more at stream offset {ip}", "end of stream")
            length = (ctrl >> 5) + 2
        else:
            length = 9
            while True:
                if ip + 1 >= n:
                    raise _err(f"a length byte and more at stream offset {ip}", "end of stream")
                c = s[ip]
                ip += 1
                length += c
                if c != 255:
                    break
        lo = s[ip]
        ip += 1
        if lo == 255 and ctrl & 31 == 31:
            if ip + 1 >= n:
                raise _err(f"a far distance at stream offset {ip}", "end of stream")
            dist = (s[ip] << 8) + s[ip + 1] + 8192
            ip += 2
        else:
            dist = ((ctrl & 31) << 8) + lo + 1
        if op + length > nbytes:
            raise _err(
                f"at most {nbytes} output bytes",
                f"a match of {length} at output length {op} (stream offset {start})",
            )
        if dist > op:
            raise _err(
                f"a match distance of at most the output length {op}",
                f"{dist} at stream offset {start}",
            )
        if ip >= n:
            raise _err(
                "a byte after every match", f"the stream ends after the match at offset {start}"
            )
        ctrl = s[ip]
        ip += 1
        if dist >= length:
            st = op - dist
            out += out[st : st + length]
        else:  # overlapping copy: repeat the period
            q, r = divmod(length, dist)
            pat = out[op - dist :]
            out += pat * q + pat[:r]
        op += length
    return ip, ctrl


# Instruction length by control byte, assuming a long match has one length byte and no far
# distance (both corrected afterwards); whether a control byte can announce a far distance.
_INSTR_LEN = np.array([c + 2 for c in range(32)] + [2] * 192 + [3] * 32, dtype=np.int64)
_HI31 = np.array([c >= 32 and c & 31 == 31 for c in range(256)])
_WALK_LEVELS = 5


def _walk(nxt: np.ndarray, p0: int) -> np.ndarray:
    """The instruction starts ``p0, nxt[p0], nxt[nxt[p0]], ...`` below ``n = len(nxt) - 1``.

    Python follows 32-step jumps (pointer doubling); numpy fills in the steps in between.
    """
    n = nxt.size - 1
    tables = [nxt]
    for _ in range(_WALK_LEVELS):
        tables.append(tables[-1].take(tables[-1]))
    jump = tables.pop().data
    coarse = []
    p = p0
    while p < n:
        coarse.append(p)
        p = jump[p]
    starts = np.array(coarse, dtype=np.int64)
    for table in reversed(tables):
        both = np.empty(2 * starts.size, dtype=np.int64)
        both[0::2] = starts
        both[1::2] = table.take(starts)
        starts = both
    return starts[: np.searchsorted(starts, n)]


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for each pair (vectorised)."""
    total = int(lengths.sum())
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return shift + np.arange(total)


def _put_lengths(lz: np.ndarray, at: np.ndarray, extra: np.ndarray) -> None:
    """Write LZ4 length extensions (``extra // 255`` bytes of 255, then ``extra % 255``)."""
    nbig = extra // 255
    lz[_ranges(at, nbig)] = 255
    lz[at + nbig] = extra % 255


_LZ4_PAD = 16  # trailing literals so that LZ4's end-of-block rules hold for every real sequence


def _decode_vector(s: bytes, nbytes: int, out: bytearray, p0: int) -> bytearray | None:
    """Decode the instructions from stream offset ``p0`` (> 0) on, appending to ``out``.

    The instruction chain is parsed with numpy and re-encoded as one LZ4 block (sequences of
    literals + match, the previous output as dictionary) that liblz4 expands. Returns None if
    an instruction is invalid (the caller re-runs the scalar loop for the error) or has no LZ4
    equivalent (length 3, distance > 65535).
    """
    n = len(s)
    sa = np.zeros(n + 40, dtype=np.uint8)
    sa[:n] = np.frombuffer(s, np.uint8)
    c = sa[:n]
    end = _INSTR_LEN.take(c)
    end += np.arange(n)
    ext = np.flatnonzero((c[:-1] >= 224) & (sa[1:n] == 255))  # long lengths with 255 bytes
    if ext.size:
        not255 = np.append(np.flatnonzero(c != 255), n)
        end[ext] = not255[np.searchsorted(not255, ext + 1)] + 2
    hi31 = np.flatnonzero(_HI31.take(c))
    far = hi31[sa.take(np.minimum(end.take(hi31) - 1, n)) == 255]
    end[far] += 2
    ins = _walk(np.append(np.minimum(end, n), n), p0)

    ci = c.take(ins).astype(np.int64)
    e = end.take(ins)
    lit = ci < 32
    isfar = np.zeros(n, dtype=bool)
    isfar[far] = True
    isfar = isfar.take(ins)
    lo = e - 1 - 2 * isfar
    length = np.where(lit, ci + 1, (ci >> 5) + 2)
    long_ = np.flatnonzero(ci >= 224)
    if long_.size:
        lo_l = lo.take(long_)
        length[long_] = 9 + 255 * (lo_l - ins.take(long_) - 2) + sa.take(lo_l - 1)
    dist = ((ci & 31) << 8) + sa.take(lo) + 1
    if far.size:
        fi = np.flatnonzero(isfar)
        lo_f = lo.take(fi)
        dist[fi] = (sa.take(lo_f + 1).astype(np.int64) << 8) + sa.take(lo_f + 2) + 8192
    prefix = len(out)
    o = np.cumsum(length) + (prefix - length)  # output offset of each instruction
    mi = np.flatnonzero(~lit)
    dm, lm, em = dist.take(mi), length.take(mi), e.take(mi)
    if (
        o[-1] + length[-1] != nbytes
        or (lit & (e > n)).any()
        or (em >= n).any()
        or (dm > o.take(mi)).any()
        or (dm > 65535).any()
        or (lm < 4).any()
    ):
        return None

    # One LZ4 sequence per match, carrying the literals since the previous match; a last
    # sequence with the trailing literals and padding.
    li = np.flatnonzero(lit)
    lit_before = np.cumsum(np.where(lit, length, 0))
    seq_lit = np.diff(np.append(lit_before.take(mi), lit_before[-1]), prepend=0)
    seq_lit[-1] += _LZ4_PAD
    nseq = seq_lit.size
    lit_ext = np.where(seq_lit >= 15, (seq_lit - 15) // 255 + 1, 0)
    ml_ext = np.zeros(nseq, dtype=np.int64)
    ml_ext[:-1] = np.where(lm >= 19, (lm - 19) // 255 + 1, 0)
    size = 1 + lit_ext + seq_lit + ml_ext
    size[:-1] += 2
    at = np.cumsum(size) - size  # token positions
    lz = np.zeros(int(size.sum()), dtype=np.uint8)  # the padding literals stay 0
    token = np.minimum(seq_lit, 15) << 4
    token[:-1] |= np.minimum(lm - 4, 15)
    lz[at] = token
    big = np.flatnonzero(lit_ext)
    _put_lengths(lz, at.take(big) + 1, seq_lit.take(big) - 15)
    lit_at = at + 1 + lit_ext
    real = seq_lit.copy()
    real[-1] -= _LZ4_PAD
    lz[_ranges(lit_at, real)] = sa.take(_ranges(ins.take(li) + 1, length.take(li)))
    off_at = (lit_at + seq_lit)[:-1]
    lz[off_at] = dm & 255
    lz[off_at + 1] = dm >> 8
    big = np.flatnonzero(ml_ext[:-1])
    _put_lengths(lz, off_at.take(big) + 2, lm.take(big) - 19)
    try:
        res = lz4.block.decompress(
            lz,
            uncompressed_size=nbytes - prefix + _LZ4_PAD,
            return_bytearray=True,
            dict=bytes(out[-65536:]),
        )
    except lz4.block.LZ4BlockError:  # not expected after the checks above
        return None
    if len(res) != nbytes - prefix + _LZ4_PAD:
        return None
    del res[-_LZ4_PAD:]
    out += res
    return out


# The scalar loop runs the first instructions; the numpy path then takes over if its fixed cost
# (~0.3 ms) plus ~25 ns per remaining stream byte beats ~0.6 us per remaining instruction,
# estimated from the stream bytes those first instructions used (measured; rule rearranged).
_SWITCH_AFTER = 64
_SWITCH_COST = 12_000


def decompress(src: _BytesLike, nbytes: int) -> bytearray:
    """Decode to exactly nbytes bytes or raise the CodecError (from ``stream_error``) naming what
    went wrong.

    >>> bytes(decompress(bytes.fromhex("2361616161e00603016162"), 21))  # 4 a, 15 more, "ab"
    b'aaaaaaaaaaaaaaaaaaaab'
    """
    s = _as_bytes(src)
    n = len(s)
    if n == 0:
        raise _err("a non-empty stream", "an empty one")
    out = bytearray()
    ip, ctrl = _decode_scalar(s, nbytes, out, 1, s[0] & 31, _SWITCH_AFTER)
    if ip > 0:
        # many short instructions left: parse them with numpy instead of one by one
        if (n - ip) * (24 * _SWITCH_AFTER - ip) > _SWITCH_COST * ip:
            res = _decode_vector(s, nbytes, out, ip - 1)
            if res is not None:
                return res
        ip, ctrl = _decode_scalar(s, nbytes, out, ip, ctrl, n)
    if len(out) != nbytes:
        raise _err(f"{nbytes} decoded bytes", f"{len(out)} (stream ends early)")
    return out


def decompress_into(src: _BytesLike, dst: np.ndarray) -> None:
    """:func:`decompress` into all of ``dst`` (a writable ``uint8`` array).

    >>> out = np.empty(21, np.uint8); decompress_into(bytes.fromhex("2361616161e00603016162"), out)
    >>> out.tobytes()
    b'aaaaaaaaaaaaaaaaaaaab'
    """
    dst[:] = np.frombuffer(decompress(src, len(dst)), np.uint8)


def decompress_streams(src: np.ndarray, table: np.ndarray, dst: np.ndarray) -> int:
    """Decode stream ``i`` = ``src[table[i, 0] : table[i, 1]]`` into
    ``dst[table[i, 2] : table[i, 3]]`` for every row of ``table`` in order; -1 when all
    decode, else the first ``i`` refused (its bytes and the later ones are undefined)."""
    for i, (a, b, c, d) in enumerate(table.tolist()):
        if _refused(src[a:b], dst[c:d]):
            return i
    return -1


def _refused(src: np.ndarray, dst: np.ndarray) -> bool:
    try:
        decompress_into(src, dst)
    except CodecError:
        return True
    return False
