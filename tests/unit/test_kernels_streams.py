"""The multi-stream BloscLZ entry (``blosclz_decompress_streams``): every kernel set decodes
the same bytes as a loop of single-stream decodes, stops at the same first refused stream,
and a chunk decoded through it fails with the same CodecError (naming block, stream and
offset) as the stream-by-stream path."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyblosc2
from pyblosc2.chunk import streams as streams_mod
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.errors import CodecError
from pyblosc2.kernels import kernel_sets, kernels_in_use
from pyblosc2.kernels.base import KernelSet
from pyblosc2.kernels.numpy_set import NUMPY

FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(params=kernel_sets())
def kset(request) -> KernelSet:
    with kernels_in_use(request.param) as ks:
        yield ks


def _pieces(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(rng.integers(16, 3000))
        kind = (seed + i) % 3
        if kind == 0:
            out.append(rng.integers(0, 256, n, dtype=np.uint8))
        elif kind == 1:
            out.append(np.linspace(0, 1, n // 8 + 1).view(np.uint8)[:n].copy())
        else:
            out.append(np.repeat(rng.integers(0, 4, n // 32 + 1, dtype=np.uint8), 32)[:n].copy())
    return out


def _packed(pieces: list[np.ndarray], clevel: int) -> tuple[np.ndarray, np.ndarray, bytes]:
    """The streams of ``pieces`` laid end to end, their table and the data they decode to."""
    src = bytearray(b"\x00" * 3)  # streams need not start at 0
    rows = []
    at = 0
    data = b""
    for p in pieces:
        s = NUMPY.blosclz_compress(p, clevel, len(p) + 100)
        if not s:
            continue
        rows.append((len(src), len(src) + len(s), at, at + len(p)))
        src += s
        at += len(p)
        data += p.tobytes()
    return np.frombuffer(bytes(src), np.uint8), np.array(rows, np.int64).reshape(-1, 4), data


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(1, 9))
def test_many_streams_decode_as_a_loop_of_single_decodes(kset, seed, count, clevel) -> None:
    src, table, data = _packed(_pieces(seed, count), clevel)
    dst = np.full(len(data), 0xA5, np.uint8)
    assert kset.blosclz_decompress_streams(src, table, dst) == -1
    assert dst.tobytes() == data


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(2, 8), st.integers(0, 3))
def test_the_first_refused_stream_is_the_same_for_every_set(kset, seed, count, how) -> None:
    """Truncated stream, a size mismatch (one byte more or fewer asked), a match reaching
    before the start of the output; the later streams are fine."""
    src, table, _ = _packed(_pieces(seed, count), 5)
    if len(table) < 2:
        return
    rng = np.random.default_rng(seed)
    k = int(rng.integers(0, len(table)))
    t = table.copy()
    if how == 0:
        t[k, 1] -= 2  # truncated
    elif how == 1:
        t[k, 3] += 1  # asks for one byte more than the stream holds
        t[k + 1 :, 2:] += 1
    elif how == 2:
        t[k, 3] -= 1  # one byte fewer
        t[k + 1 :, 2:] -= 1
    else:  # the first match's distance made to reach before the output (overlong match)
        s = bytearray(src)
        s[t[k, 0]] = 0x1F  # the first control byte: a 32-byte literal run...
        s[t[k, 0] + 33 : t[k, 0] + 36] = bytes([0xFF, 0xFF, 0xFF])  # ...then a far match
        src = np.frombuffer(bytes(s), np.uint8)
    want = NUMPY.blosclz_decompress_streams(src, t, np.empty(int(t[-1, 3]) + 1, np.uint8))
    got = kset.blosclz_decompress_streams(src, t, np.empty(int(t[-1, 3]) + 1, np.uint8))
    assert got == want
    if want >= 0:
        a, b, c, d = t[want]
        with pytest.raises(CodecError):
            NUMPY.blosclz_decompress_into(src[a:b], np.empty(d - c, np.uint8))


def _chunk() -> bytes:
    a = np.linspace(0, 1e3, 200_000)
    return pyblosc2.compress2(
        a, typesize=8, codec=pyblosc2.Codec.BLOSCLZ, clevel=5, filters=[pyblosc2.Filter.SHUFFLE]
    )


def test_a_chunk_decodes_its_blosclz_streams_in_one_call_per_block(kset, monkeypatch) -> None:
    calls = []
    real = kset.blosclz_decompress_streams

    def spy(src, table, dst):
        calls.append(len(table))
        return real(src, table, dst)

    spied = replace(kset, blosclz_decompress_streams=spy)
    monkeypatch.setattr(streams_mod, "active", lambda: spied)
    r = ChunkReader.open(_chunk())
    assert r.decode().tobytes() == np.linspace(0, 1e3, 200_000).tobytes()
    assert calls and max(calls) > 1
    assert len(calls) <= r.header.nblocks


@pytest.mark.parametrize("where", [0.3, 0.6, 0.95])
@pytest.mark.parametrize("cut", ["far", "short", "overlong"])
def test_a_hostile_stream_gives_the_single_stream_error(kset, monkeypatch, where, cut) -> None:
    """A match reaching before the output, a stream decoding to too few bytes, a match
    longer than the stream's output: the batched call and the stream-by-stream path raise
    the same CodecError, naming the block, stream and offset."""
    c = bytearray(_chunk())
    r = ChunkReader.open(bytes(c))
    r.decode()
    j = int(r.header.nblocks * where)
    sizes, starts, ends = r.block_streams(j)
    neblock = r.header.block_size(j) // len(sizes)
    s = max(i for i, z in enumerate(sizes) if 0 < z < neblock)
    a, b = starts[s], ends[s]
    if cut == "far":  # one literal, then a 3-byte match 17 bytes back
        c[a : a + 4] = bytes([0x00, 0x41, 0x20, 0x10])
    elif cut == "short":  # one-byte literal runs: half the stream's size decoded
        c[a:b] = bytes(b - a)
    else:  # one literal, then a match of 9 + 255 * m bytes at distance 1
        m = neblock // 255 + 1
        assert b - a > m + 6
        c[a : a + m + 5] = bytes([0x00, 0x41, 0xE0, *[0xFF] * m, 0x00, 0x00])
    msgs = []
    for batched in (True, False):
        if not batched:
            monkeypatch.setattr(streams_mod, "BloscLZCodec", type("Off", (), {}))
        with pytest.raises(CodecError) as info:
            ChunkReader.open(bytes(c)).decode()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    assert f"block {j} stream {s} (blosclz)" in msgs[0]


@pytest.mark.parametrize("period", range(1, 33))
@pytest.mark.parametrize("length", [9, 16, 31, 33, 64, 200])
def test_a_match_of_each_period_with_room_after_it(kset: KernelSet, period: int, length: int):
    """As ``test_blosclz_decodes_a_hand_made_match_of_each_period`` but with 64 literal
    bytes after the match, so that the decoder's widest copies (16 and 32 bytes past the
    match's end) are the ones taken: the match still repeats its period byte for byte."""
    rng = np.random.default_rng(period * 1000 + length)
    pattern = rng.integers(0, 256, period, np.uint8).tobytes()
    tail = rng.integers(0, 256, 64, np.uint8).tobytes()
    d = period - 1
    stream = (
        bytes([0x20 | (period - 1)])
        + pattern
        + bytes([0xE0 | (d >> 8), length - 9, d & 255, 31])
        + tail[:32]
        + bytes([31])
        + tail[32:]
    )
    want = (pattern * (length // period + 2))[: period + length] + tail
    assert bytes(kset.blosclz_decompress(stream, len(want))) == want
    table = np.array([[0, len(stream), 5, 5 + len(want)]], np.int64)
    into = np.zeros(len(want) + 10, np.uint8)
    assert kset.blosclz_decompress_streams(np.frombuffer(stream, np.uint8), table, into) == -1
    assert bytes(into[5 : 5 + len(want)]) == want
