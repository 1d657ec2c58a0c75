"""Bit unshuffle of whole runs of blocks (``bitunshuffle_blocks``) and the 64-bit word path of
the numba bit unshuffle: every kernel set gives the bytes of the numpy per-block reference
(C-Blosc2's and C-Blosc 1.x's rules, leftovers, odd typesizes), and a BITSHUFFLE chunk is
decoded through the run path with the same bytes and the same errors under every set."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyblosc2
from pyblosc2 import _threads
from pyblosc2.chunk import decode as decode_mod
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.errors import FormatError
from pyblosc2.kernels import kernel_sets, kernels_in_use, select
from pyblosc2.kernels.base import KernelSet
from pyblosc2.kernels.numpy_set import NUMPY

FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
TYPESIZES = st.one_of(st.sampled_from([1, 2, 4, 8, 16, 3, 12, 24]), st.integers(1, 20))


@pytest.fixture(params=kernel_sets())
def kset(request) -> KernelSet:
    with kernels_in_use(request.param) as ks:
        yield ks


def _data(seed: int, n: int, kind: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == 0:
        return rng.integers(0, 256, n, dtype=np.uint8)
    if kind == 1:  # smooth floats, what bitshuffle sees in practice
        return np.linspace(0, 1, n // 8 + 1).view(np.uint8)[:n].copy()
    return np.repeat(rng.integers(0, 4, n // 64 + 1, dtype=np.uint8), 64)[:n].copy()


@FAST
@given(
    TYPESIZES,
    st.integers(1, 4),
    st.integers(0, 3),
    st.integers(0, 70),
    st.booleans(),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2),
)
def test_bitunshuffle_blocks_is_byte_identical_to_numpy_per_block(
    kset: KernelSet, g: int, nb: int, words: int, extra: int, blosc1: bool, seed: int, kind: int
) -> None:
    """Blocks of ``words`` x 64 items (the one-call word path when ``extra`` is 0) or with
    ``extra`` more bytes (items that are not a multiple of 64, of 8, a tail of
    ``bs % g`` bytes: the per-row path and both rules)."""
    bs = words * 64 * g + extra
    src = _data(seed, nb * bs, kind).reshape(nb, bs)
    want = np.empty_like(src)
    for row, out in zip(src, want, strict=True):
        NUMPY.bitunshuffle(row, out, g, blosc1)
    got = np.full_like(src, 0xA5)
    kset.bitunshuffle_blocks(src, got, g, blosc1)
    assert bytes(got) == bytes(want)
    one = np.full(bs, 0x5A, np.uint8)
    for row, out in zip(src, want, strict=True):  # the single-block entry agrees
        kset.bitunshuffle(row, one, g, blosc1)
        assert bytes(one) == bytes(out)


@FAST
@given(TYPESIZES, st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_bitunshuffle_blocks_inverts_bitshuffle(kset: KernelSet, g: int, words: int, seed) -> None:
    bs = words * 64 * g
    src = _data(seed, 3 * bs, seed % 3).reshape(3, bs)
    mid = np.empty_like(src)
    for row, out in zip(src, mid, strict=True):
        kset.bitshuffle(row, out, g, False)
    back = np.empty_like(src)
    kset.bitunshuffle_blocks(mid, back, g, False)
    assert np.array_equal(back, src)


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba not installed")
@pytest.mark.parametrize("g", [1, 2, 3, 8, 16])
def test_the_word_transpose_matches_the_byte_gather(g: int) -> None:
    """The 64-bit word path of the numba bits-to-planes step against its byte-gather twin."""
    from pyblosc2.kernels import shuffle_nb

    rng = np.random.default_rng(g)
    w64 = 5
    rows = rng.integers(0, 256, 64 * g * w64, dtype=np.uint8)
    want = np.empty(g * 8 * w64, np.uint64)
    got = np.empty_like(want)
    shuffle_nb._bits_to_planes(rows, want, g, 8 * w64)
    shuffle_nb._words_to_planes(rows.view(np.uint64), got, g, w64)
    assert np.array_equal(got, want)


def _bit_chunk(n_items: int, typesize: int, blocksize: int, codec=pyblosc2.Codec.LZ4) -> tuple:
    data = np.linspace(0, 1e3, n_items).astype(f"<f{typesize}" if typesize in (4, 8) else "<f8")
    raw = data.view(np.uint8)[: n_items * typesize].tobytes()
    c = pyblosc2.compress2(
        raw,
        typesize=typesize,
        codec=codec,
        clevel=5,
        filters=[pyblosc2.Filter.BITSHUFFLE],
        blocksize=blocksize,
    )
    return raw, c


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("typesize", [4, 8])
def test_bitshuffle_chunks_are_decoded_in_runs(kset, monkeypatch, nthreads, typesize) -> None:
    """A BITSHUFFLE chunk of many blocks and a leftover: the whole blocks go through
    ``bitunshuffle_blocks`` in runs (smaller than the chunk, so several runs), the leftover
    through the per-block path; the bytes are the data under every set and thread count."""
    monkeypatch.setattr(decode_mod, "BIT_BATCH_BYTES", 3 * 8192)
    calls = []
    runs = kset.bitunshuffle_blocks

    def spy(src, dst, t, b1):
        calls.append(src.shape)
        runs(src, dst, t, b1)

    monkeypatch.setattr(select, "_active", _with(kset, bitunshuffle_blocks=spy))
    raw, c = _bit_chunk(20 * 8192 // typesize + 77, typesize, 8192)
    assert ChunkReader.open(c).header.nblocks == 21
    assert pyblosc2.decompress2(c, nthreads=nthreads) == raw
    assert sum(shape[0] for shape in calls) == 20  # all whole blocks, no leftover
    assert all(shape[1] == 8192 and shape[0] <= 3 for shape in calls) and len(calls) == 7


def test_bitshuffle_runs_are_one_task_per_thread(kset, monkeypatch) -> None:
    """On two threads the whole blocks are cut into two contiguous parts, one pool task
    each, each decoded in runs of at most ``BIT_BATCH_BYTES`` (a task per run cost a pool
    hand-over each and ate the second thread's gain); the bytes are the data."""
    monkeypatch.setattr(decode_mod, "BIT_BATCH_BYTES", 3 * 8192)
    monkeypatch.setattr(_threads, "MIN_PARALLEL_BYTES", 0)
    calls: list[tuple[str, tuple[int, int]]] = []
    runs = kset.bitunshuffle_blocks

    def spy(src, dst, t, b1):
        calls.append((threading.current_thread().name, src.shape))
        runs(src, dst, t, b1)

    tasks: list[list[range]] = []
    real = decode_mod.run_parallel

    def count(fn, items, n):
        items = list(items)
        tasks.append(items)
        return real(fn, items, n)

    monkeypatch.setattr(select, "_active", _with(kset, bitunshuffle_blocks=spy))
    monkeypatch.setattr(decode_mod, "run_parallel", count)
    raw, c = _bit_chunk(20 * 8192 // 8 + 77, 8, 8192)
    assert pyblosc2.decompress2(c, nthreads=2) == raw
    assert tasks[0] == [range(0, 10), range(10, 20)]
    assert sorted(shape[0] for _, shape in calls) == [1, 1, 3, 3, 3, 3, 3, 3]
    # on the caller's thread and the pool's (the caller works rather than waits)
    here = threading.current_thread().name
    assert all(name.startswith("pyblosc2") or name == here for name, _ in calls)


def _with(ks: KernelSet, **kw) -> KernelSet:
    from dataclasses import replace

    return replace(ks, **kw)


@pytest.mark.parametrize("size", [64 * 8 * 40, 64 * 8 * 40 + 24, 8 * 1001])
def test_blosc1_bitshuffle_chunks_decode_under_every_set(kset: KernelSet, size: int) -> None:
    """Chunk version 2 (C-Blosc 1.x's rule: a block whose element count is not a multiple of
    8 is stored unchanged) through the run path."""
    data = np.linspace(0, 1, size // 8).view(np.uint8).tobytes()
    c = pyblosc2.compress_blosc1(
        data, typesize=8, clevel=5, shuffle=pyblosc2.Filter.BITSHUFFLE,
        codec=pyblosc2.Codec.LZ4, blocksize=4096,
    )  # fmt: skip
    assert pyblosc2.decompress(c) == data


def test_a_bad_stream_in_a_run_fails_alike_under_every_set(kset: KernelSet) -> None:
    """A csize pointing past the chunk in the 5th block: the same FormatError, naming the
    block, under every set (the streams are checked before any run is decoded)."""
    _, c = _bit_chunk(10 * 8192 // 8, 8, 8192)
    r = ChunkReader.open(c)
    buf = bytearray(c)
    at = int(r.bstarts[4])
    buf[at : at + 4] = (len(buf) * 2).to_bytes(4, "little", signed=True)
    with pytest.raises(FormatError) as err:
        pyblosc2.decompress2(bytes(buf))
    assert "block 4 stream 0" in str(err.value)
    with kernels_in_use("numpy"), pytest.raises(FormatError) as ref:
        pyblosc2.decompress2(bytes(buf))
    assert str(err.value) == str(ref.value)


@pytest.mark.parametrize("block", [1, 8])
def test_an_undecodable_stream_fails_alike_on_one_and_two_threads(
    kset: KernelSet, monkeypatch, block: int
) -> None:
    """A stream whose codec bytes do not decode, in the first or the second thread's part:
    the same error names it on one thread and on two, under every set, and nothing else
    (the other part's blocks decode or not, the call raises)."""
    monkeypatch.setattr(_threads, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(decode_mod, "BIT_BATCH_BYTES", 2 * 8192)
    _, c = _bit_chunk(10 * 8192 // 8, 8, 8192, codec=pyblosc2.Codec.LZ4)
    r = ChunkReader.open(c)
    buf = bytearray(c)
    at = int(r.bstarts[block]) + 4  # the first stream's coded bytes
    buf[at : at + 4] = b"\xff\xff\xff\xff"
    errors = []
    for nthreads in (1, 2):
        with kernels_in_use(kset.name), pytest.raises(pyblosc2.errors.Blosc2Error) as err:
            pyblosc2.decompress2(bytes(buf), nthreads=nthreads)
        errors.append(str(err.value))
    assert errors[0] == errors[1] and f"block {block}" in errors[0]
