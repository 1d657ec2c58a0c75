"""BloscLZ codec (spec §10.1): byte-exact encoder and C-compatible decoder.

The reference is C-Blosc2 3.3.5 through python-blosc2: a chunk of one block and one stream
(typesize 1, no filters, NEVER_SPLIT, one thread, blocksize = nbytes) holds C's BloscLZ stream at
offset 40, compressed with ``maxout = nbytes - 8`` (§7 step 5.3: ``destsize = nbytes + 32``,
``ntbytes = 40``). Conversely, any stream can be wrapped in such a chunk to ask C whether it
decodes it.
"""

from __future__ import annotations

import functools
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyblosc2.codecs.blosclz import BloscLZCodec, compress, decompress
from pyblosc2.constants import Codec
from pyblosc2.errors import CodecError, ParamError
from pyblosc2.kernels import blosclz_np

# --------------------------------------------------------------------------------------------
# Data and C helpers
# --------------------------------------------------------------------------------------------

WORDS = b"the quick brown fox jumps over a lazy dog while blosc compresses data in chunks".split()


def _shuffle(a: np.ndarray) -> bytes:
    return a.view(np.uint8).reshape(-1, a.dtype.itemsize).T.tobytes()


@functools.cache
def make(kind: str, n: int) -> bytes:
    """Deterministic, non-constant test data of ``n`` bytes."""
    rng = np.random.default_rng(n * 7919 + len(kind))
    if kind == "text":
        data = b" ".join(rng.choice(WORDS, n // 3 + 2))
    elif kind == "linspace":  # shuffled float64, as a SHUFFLE filter leaves a block
        data = _shuffle(np.linspace(0, 1, n // 8 + 1))
    elif kind == "small_ints":  # shuffled int32 in 0..99
        data = _shuffle(rng.integers(0, 100, n // 4 + 1).astype(np.int32))
    elif kind == "random":
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    elif kind == "runs_far":  # runs > 255 bytes, noise, and repeats up to 80 kB back
        block = rng.integers(0, 256, 3000, dtype=np.uint8).tobytes()
        buf = bytearray(block[:64])
        while len(buf) < n:
            op = int(rng.integers(4))
            if op == 0:
                buf += bytes([int(rng.integers(256))]) * int(rng.integers(1, 2000))
            elif op == 1:
                buf += block[: int(rng.integers(1, 3000))]
            elif op == 2:
                buf += rng.integers(0, 256, int(rng.integers(1, 100)), dtype=np.uint8).tobytes()
            else:
                back = max(0, len(buf) - int(rng.integers(1, 80000)))
                buf += buf[back : back + int(rng.integers(1, 600))]
        data = bytes(buf)
    elif kind == "pattern":  # short periods, near the minimum match length
        data = rng.integers(0, 4, n, dtype=np.uint8).tobytes()
    else:
        raise ValueError(kind)
    data = data[:n]
    assert len(data) == n and len(set(data)) > 1  # never a run (csize < 0) chunk
    return data


def c_stream(cb, data: bytes, clevel: int) -> bytes | None:
    """C's BloscLZ stream for ``data`` (maxout = n - 8), or None if C stored the chunk raw."""
    n = len(data)
    chunk = cb.compress2(
        data,
        typesize=1,
        clevel=clevel,
        codec=cb.Codec.BLOSCLZ,
        filters=[cb.Filter.NOFILTER],
        filters_meta=[0],
        splitmode=cb.SplitMode.NEVER_SPLIT,
        nthreads=1,
        blocksize=n,
    )
    nbytes, blocksize, cbytes = struct.unpack_from("<iii", chunk, 4)
    assert (nbytes, blocksize) == (n, n) and chunk[3] == 1
    if chunk[2] & 0x02:  # memcpyed: the codec returned 0 (a raw stream would not fit)
        assert cbytes == n + 32
        return None
    assert struct.unpack_from("<i", chunk, 32)[0] == 36
    csize = struct.unpack_from("<i", chunk, 36)[0]
    assert 0 < csize < n and cbytes == 40 + csize, "not a single codec stream"
    return bytes(chunk[40:])


def c_decodes(cb, stream: bytes, nbytes: int) -> bytes | None:
    """What C-Blosc2 decodes ``stream`` to (wrapped in a one-stream chunk), None if it fails."""
    assert len(stream) != nbytes, "a stream of nbytes bytes is stored raw, not decoded"
    header = struct.pack("<BBBBiii", 5, 1, 0x15, 1, nbytes, nbytes, 40 + len(stream))
    chunk = header + bytes(16) + struct.pack("<ii", 36, len(stream)) + stream
    try:
        return bytes(cb.decompress2(chunk))
    except (ValueError, RuntimeError):
        return None


@pytest.fixture(params=["auto", "scalar", "vector"])
def decoder_path(request, monkeypatch):
    """Force the instruction-by-instruction loop or the numpy/LZ4 path of the decoder."""
    cost = {"auto": blosclz_np._SWITCH_COST, "scalar": 10**30, "vector": 0}[request.param]
    monkeypatch.setattr(blosclz_np, "_SWITCH_COST", cost)
    return request.param


# --------------------------------------------------------------------------------------------
# 1-2. Byte-exactness against C, and decoding C's streams
# --------------------------------------------------------------------------------------------

V7 = "23 61 61 61 61 e0 06 03 01 61 62 e0 09 00 01 62 63 e0 09 00 01 63 64 e0 07 00 02 64 64 64"
KINDS = ["text", "linspace", "small_ints", "random", "runs_far", "pattern"]
SIZES = [32, 50, 73, 74, 75, 80, 130, 200, 517, 1000, 2048, 4099, 8300, 16385, 20000, 40000]
SIZES += [65536, 70000, 90000, 150000]
CLEVELS = range(1, 10)


@pytest.mark.parametrize("clevel", CLEVELS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_stream_equals_c(cblosc2, kind, n, clevel):
    data = make(kind, n)
    ours = compress(data, clevel, n - 8)
    theirs = c_stream(cblosc2, data, clevel)
    if theirs is None:
        assert ours == b""
    else:
        assert ours == theirs


# inputs C does compress (random bytes and the 2-bit "pattern" fail its entropy probe)
DECODE_CASES = [
    (kind, n, clevel)
    for kind in ("text", "linspace", "small_ints", "runs_far")
    for n in (1000, 20000, 90000)
    for clevel in (5, 9)
    if (kind, n, clevel) != ("small_ints", 90000, 9)
] + [("linspace", 90000, 1), ("small_ints", 20000, 1), ("pattern", 90000, 9)]


@pytest.mark.parametrize(("kind", "n", "clevel"), DECODE_CASES)
def test_decodes_c_stream(cblosc2, decoder_path, kind, n, clevel):
    data = make(kind, n)
    theirs = c_stream(cblosc2, data, clevel)
    assert theirs is not None
    assert decompress(theirs, n) == data


def edge_data(seed: int, n: int, reps: int) -> bytes:
    """Random bytes with ``reps`` copied 12-byte snippets: barely compressible at clevel 9."""
    rng = np.random.default_rng(seed)
    b = bytearray(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    for _ in range(reps):
        src = int(rng.integers(0, n - 24))
        dst = int(rng.integers(src + 1, n - 12))
        b[dst : dst + 12] = b[src : src + 12]
    return bytes(b)


# (seed, reps) for n = 300, maxout = 292, with the length of the unconstrained stream: C writes
# no stream longer than maxout - 1 (the +2 check before each literal byte, §10.1).
EDGE_CASES = [(79, 5, 291), (92, 5, 291), (48, 5, 292), (54, 5, 292), (55, 7, 292), (8, 5, 294)]


@pytest.mark.parametrize(("seed", "reps", "free_len"), EDGE_CASES)
def test_maxout_edge_equals_c(cblosc2, seed, reps, free_len):
    data = edge_data(seed, 300, reps)
    assert len(compress(data, 9, 10_000)) == free_len  # the case really sits at the edge
    ours = compress(data, 9, 292)
    assert ours == (c_stream(cblosc2, data, 9) or b"")
    assert (ours != b"") == (free_len < 292)


def test_v7_stream():
    """Spec vector V7: the 80-byte shuffled block of b"abcd" * 20 at maxout 71 (§7, §17)."""
    block = b"a" * 20 + b"b" * 20 + b"c" * 20 + b"d" * 20
    assert compress(block, 5, 71) == bytes.fromhex(V7)


# --------------------------------------------------------------------------------------------
# 3. Hand-written streams
# --------------------------------------------------------------------------------------------


def far_stream() -> tuple[bytes, bytes]:
    """9000 literal bytes, then a far match of 20 bytes at distance 8200 (d1 d0 = 00 08)."""
    lits = bytes(range(256)) * 35 + bytes(40)
    body = bytearray()
    for i in range(0, len(lits), 32):
        body += bytes([len(lits[i : i + 32]) - 1]) + lits[i : i + 32]
    # length 20 = 9 + 11: control 0xE0 | 31, extension 11, lo 255, far distance 8 + 8192
    body += bytes([0xFF, 11, 255, 0x00, 0x08]) + b"\x00z"
    expected = lits + lits[-8200 : -8200 + 20] + b"z"
    return bytes(body), expected


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        (bytes.fromhex(V7), b"a" * 20 + b"b" * 20 + b"c" * 20 + b"d" * 20),
        # marker bits of the first byte are ignored; distance 1 repeats the last byte
        (bytes.fromhex("e0 41 20 00 00 42"), b"A" * 4 + b"B"),
        # a length extension of 255, 255, 10: 9 + 520 = 529 copies, period 2
        (bytes.fromhex("21 78 79 e0 ff ff 0a 01 00 21"), b"xy" * 265 + b"x!"),
        far_stream(),
    ],
    ids=["V7", "run", "long-extension", "far"],
)
def test_hand_written(decoder_path, stream, expected):
    assert decompress(stream, len(expected)) == expected


def test_hand_written_agree_with_c(cblosc2):
    stream, expected = far_stream()
    assert c_decodes(cblosc2, stream, len(expected)) == expected
    assert c_decodes(cblosc2, bytes.fromhex(V7), 80) == decompress(bytes.fromhex(V7), 80)


@pytest.mark.parametrize(
    "src",
    [
        b"a\x00b" * 40,
        bytearray(b"a\x00b" * 40),
        memoryview(b"a\x00b" * 40),
        np.frombuffer(b"a\x00b" * 40, np.uint8),
    ],
    ids=["bytes", "bytearray", "memoryview", "ndarray"],
)
def test_input_types(src):
    stream = compress(src, 5, 200)
    assert stream and decompress(stream, 120) == b"a\x00b" * 40
    assert decompress(np.frombuffer(stream, np.uint8), 120) == b"a\x00b" * 40


def test_codec_object():
    codec = BloscLZCodec()
    assert (codec.compcode, codec.compformat, codec.name) == (Codec.BLOSCLZ, 0, "blosclz")
    assert not codec.supports_dict
    data = make("text", 5000)
    stream = codec.compress(memoryview(data), 5, 5000)
    assert stream == compress(data, 5, 5000)
    assert codec.decompress(memoryview(stream), 5000) == data


@pytest.mark.parametrize("clevel", [0, 10])
def test_bad_clevel(clevel):
    with pytest.raises(ParamError, match=rf"clevel must be 1\.\.9 for BloscLZ, got {clevel}"):
        compress(b"abcd" * 100, clevel, 1000)


@pytest.mark.parametrize(("n", "maxout"), [(15, 1000), (16, 65), (1000, 65)])
def test_too_small_returns_empty(n, maxout):
    assert compress(b"ab" * (n // 2) + b"a" * (n % 2), 9, maxout) == b""


# --------------------------------------------------------------------------------------------
# 4. Round trips (property tests)
# --------------------------------------------------------------------------------------------

compressible = st.one_of(
    st.binary(min_size=0, max_size=3000),
    st.lists(st.sampled_from([b"a", b"b", b"cd", b"\x00", b"\xff\xff"]), max_size=2000).map(
        b"".join
    ),
    st.tuples(st.binary(min_size=1, max_size=60), st.integers(1, 300), st.binary(max_size=40)).map(
        lambda t: t[0] * t[1] + t[2]
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=compressible, clevel=st.integers(1, 9), slack=st.integers(-200, 100))
def test_roundtrip(data, clevel, slack):
    maxout = max(0, len(data) + slack)
    stream = compress(data, clevel, maxout)
    assert len(stream) <= maxout
    if stream:
        assert decompress(stream, len(data)) == data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=compressible.filter(lambda d: len(d) >= 80), clevel=st.integers(1, 9))
def test_c_decodes_our_streams(cblosc2, data, clevel):
    stream = compress(data, clevel, len(data) - 1)
    if stream:
        assert c_decodes(cblosc2, stream, len(data)) == data


# --------------------------------------------------------------------------------------------
# 5. Malformed streams
# --------------------------------------------------------------------------------------------


@functools.cache
def real_stream() -> tuple[bytes, bytes]:
    data = make("runs_far", 90000)
    stream = compress(data, 9, len(data))
    assert stream and decompress(stream, len(data)) == data
    return stream, data


@pytest.mark.parametrize("cut", [0.0, 0.001, 0.1, 0.37, 0.5, 0.9, 0.999, 1.0])
def test_truncated(decoder_path, cut):
    stream, data = real_stream()
    k = min(int(len(stream) * cut), len(stream) - 1)
    with pytest.raises(CodecError, match=r"^blosclz stream: data is .*(truncated|end of|empty)"):
        decompress(stream[:k], len(data))


@pytest.mark.parametrize(
    ("stream", "nbytes", "message"),
    [
        (b"", 10, "empty"),
        (bytes.fromhex("03616263"), 5, "truncated"),  # literal run of 4, 3 bytes left
        (bytes.fromhex("0061 4000"), 6, "a distance byte"),  # match: lo byte is the last one
        (bytes.fromhex("0061 20 05 0062"), 5, "match distance"),  # distance 6 > output 1
        (bytes.fromhex("0061 3fff 00"), 10, "far distance"),  # far distance cut off
        (bytes.fromhex("0061 e0ffff"), 300, "length byte"),  # extension runs off the end
        (bytes.fromhex("0161 62 e0 00 00"), 20, "after every match"),  # a match ends the stream
        (bytes.fromhex("0261 6263"), 2, "output bytes"),  # output longer than nbytes
        (bytes.fromhex("0161 62 4000 0063"), 5, "output bytes"),  # match overruns nbytes
        (bytes.fromhex("0161 62 4000 0063"), 9, "decoded bytes"),  # output shorter than nbytes
    ],
)
def test_malformed(cblosc2, decoder_path, stream, nbytes, message):
    with pytest.raises(CodecError, match=message):
        decompress(stream, nbytes)
    if stream:
        assert c_decodes(cblosc2, stream, nbytes) is None


def test_c_wrapper_decodes_small_streams(cblosc2):
    """Control for test_malformed: C does decode a valid tiny stream wrapped the same way."""
    stream = bytes.fromhex("0061 2000 0062")  # 'a', 3 x distance 1, 'b'
    assert decompress(stream, 5) == b"aaaab"
    assert c_decodes(cblosc2, stream, 5) == b"aaaab"


def _mutants(stream: bytes, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(40):
        s = bytearray(stream)
        op = int(rng.integers(4))
        i = int(rng.integers(len(s)))
        if op == 0:
            s[i] = int(rng.integers(256))
        elif op == 1:
            s[i] = (s[i] & 31) | int(rng.integers(8)) << 5
        elif op == 2:
            s[i:i] = b"\xff" * int(rng.integers(1, 4))
        else:
            del s[i : i + int(rng.integers(1, 4))]
        out.append(bytes(s))
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["text", "linspace", "runs_far"])
def test_accepts_exactly_what_c_accepts(cblosc2, decoder_path, kind, seed):
    """Corrupted C streams: we raise CodecError exactly when C fails, else decode as C does."""
    data = make(kind, 20000)
    stream = c_stream(cblosc2, data, 5)
    assert stream is not None
    verdicts = []
    for mutant in _mutants(stream, seed):
        for nbytes in (len(data), len(data) + 1):
            theirs = c_decodes(cblosc2, mutant, nbytes)
            try:
                ours = bytes(decompress(mutant, nbytes))
            except CodecError:
                ours = None
            verdicts.append(ours == theirs)
    assert all(verdicts)
