"""The fused block decoder (chunk/fused.py), the whole-block encoder pass and the thread
rule: each gives the same bytes as the general path it stands in for."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2 import _threads
from pyblosc2.chunk import encode as encode_mod
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.fused import decode_block_fused
from pyblosc2.chunk.layout import ChunkKind
from pyblosc2.kernels import kernel_sets, kernels_in_use
from tests.helpers import spy_run_parallel

CODECS = [pb.Codec.ZSTD, pb.Codec.LZ4, pb.Codec.BLOSCLZ, pb.Codec.ZLIB]


def _data(kind: str, n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(n)
    if kind == "smooth":  # high byte planes are runs, low ones compress
        return np.linspace(0, 1, n).astype(dtype)
    if kind == "random":  # planes stored raw (incompressible)
        return rng.integers(0, 255, n * np.dtype(dtype).itemsize, np.uint8).view(dtype)
    if kind == "mixed":  # random blocks (raw streams) among compressible ones
        x = np.linspace(0, 1, n).astype(dtype)
        raw = x.view(np.uint8)
        raw[: len(raw) // 3] = rng.integers(0, 255, len(raw) // 3, np.uint8)
        return x
    if kind == "zeros":
        return np.zeros(n, dtype)
    return (np.arange(n) % 7).astype(dtype)  # short repeats


def _general(r: ChunkReader) -> bytes:
    """The chunk decoded block by block by the general path."""
    out = np.empty(r.header.nbytes, np.uint8)
    bs = r.header.effective_blocksize
    for j in range(r.header.nblocks):
        r.decode_block(j, out[j * bs : j * bs + r.header.block_size(j)], None)
    return out.tobytes()


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("kind", ["smooth", "random", "mixed", "zeros", "repeats"])
@pytest.mark.parametrize(
    ("dtype", "flt"),
    [("<f4", "SHUFFLE"), ("<f8", "SHUFFLE"), ("<i2", "NOSHUFFLE"), ("<f8", "SHUFFLE-unsplit")],
)
def test_fused_decode_matches_the_general_path(codec, kind, dtype, flt) -> None:
    x = _data(kind, 50_001, dtype)  # a leftover block too
    split = pb.SplitMode.NEVER_SPLIT if flt.endswith("unsplit") else pb.SplitMode.ALWAYS_SPLIT
    f = pb.Filter.NOFILTER if flt == "NOSHUFFLE" else pb.Filter.SHUFFLE
    chunk = pb.compress2(
        x, codec=codec, typesize=x.itemsize, filters=[f], blocksize=2**14, splitmode=split
    )
    r = ChunkReader.open(chunk)
    want = x.tobytes()
    assert pb.decompress2(chunk) == want
    if r.layout.kind.name != "BLOCKS":  # stored whole (incompressible) or a special value
        return
    assert _general(r) == want
    bs = r.header.effective_blocksize
    served = 0
    for j in range(r.header.nblocks):
        dst = np.full(r.header.block_size(j), 0xAA, np.uint8)
        if decode_block_fused(r, j, dst, r.shuffle_group() or 0):
            served += 1
            assert dst.tobytes() == want[j * bs : j * bs + len(dst)], j
        else:
            assert (dst == 0xAA).all()  # declined: nothing written
    assert served >= r.header.nblocks - 1  # every whole block is served


def test_fused_decode_writes_items_into_an_nd_view_and_picks() -> None:
    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32) * 1.5
    chunk = pb.compress2(a, typesize=4, blocksize=a.nbytes)  # one split block
    r = ChunkReader.open(chunk)
    out = np.zeros((20, 40), np.float32)
    dst = out[2:18, 5:37].view(np.uint8).reshape(16, 32, 4)
    assert decode_block_fused(r, 0, dst, 4)
    np.testing.assert_array_equal(out[2:18, 5:37], a)
    assert out[:2].sum() == 0 and out[:, :5].sum() == 0  # nothing outside the view
    picked = np.zeros((4, 3), np.float32)
    index = (slice(1, 16, 4), slice(6, 31, 12))
    assert decode_block_fused(r, 0, picked.view(np.uint8).reshape(4, 3, 4), 4, (16, 32), index)
    np.testing.assert_array_equal(picked, a[index])


def test_fused_decode_declines_what_it_does_not_serve() -> None:
    x = np.linspace(0, 1, 4096)
    delta = ChunkReader.open(
        pb.compress2(x, typesize=8, filters=[pb.Filter.SHUFFLE, pb.Filter.DELTA])
    )
    assert delta.shuffle_group() is None  # the caller never asks the fused path
    r = ChunkReader.open(pb.compress2(x, typesize=8))
    wrong_items = np.empty((r.header.block_size(0) // 4, 4), np.uint8)  # items of 4, g = 8
    assert not decode_block_fused(r, 0, wrong_items, 8)
    short = np.empty(r.header.block_size(0) - 8, np.uint8)
    assert not decode_block_fused(r, 0, short, 8)


def test_fused_decode_names_the_bad_stream() -> None:
    x = np.linspace(0, 1, 8192)
    chunk = bytearray(
        pb.compress2(
            x, typesize=8, codec=pb.Codec.ZSTD, blocksize=2**14, splitmode=pb.SplitMode.ALWAYS_SPLIT
        )
    )
    r = ChunkReader.open(bytes(chunk))
    start = int(r.bstarts[1])
    # corrupt the first compressed stream of block 1 (after its csize), keeping its size
    pos, s = start, 0
    while True:
        csize = int.from_bytes(chunk[pos : pos + 4], "little", signed=True)
        if 0 < csize < r.header.block_size(1) // 8:
            break
        pos += 4 + (csize if csize > 0 else 1 if csize < 0 else 0)
        s += 1
    chunk[pos + 4 : pos + 4 + csize] = b"\xff" * csize
    bad = ChunkReader.open(bytes(chunk))
    with pytest.raises(pb.CodecError, match=rf"block 1 stream {s} \(zstd\)") as e:
        bad.decode()
    assert e.value.offset == pos


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["<f4", "<f8", "<i2", "<u1", "<c16"]),
    st.integers(1, 20_000),
    st.sampled_from(CODECS),
    st.sampled_from([pb.SplitMode.ALWAYS_SPLIT, pb.SplitMode.NEVER_SPLIT]),
    st.sampled_from([pb.Filter.SHUFFLE, pb.Filter.NOFILTER]),
    st.sampled_from([1, 2]),
    st.sampled_from(kernel_sets()),
)
def test_encoding_whole_blocks_at_once_gives_the_same_bytes(
    dtype, n, codec, split, flt, nthreads, kernels
) -> None:
    """The whole blocks shuffled in one pass per thread (numpy's transposed copy, or a JIT
    set's kernel block by block) give the bytes of the per-block pipeline."""
    x = _data("repeats" if n % 2 else "smooth", n, dtype)
    kw = {
        "codec": codec,
        "typesize": x.itemsize,
        "filters": [flt],
        "splitmode": split,
        "blocksize": 4096,
        "clevel": 5,
        "nthreads": nthreads,
    }
    with kernels_in_use(kernels), pytest.MonkeyPatch.context() as mp:
        mp.setattr(_threads, "MIN_PARALLEL_BYTES", 0)  # blocks on threads however short
        fast = pb.compress2(x, **kw)
        mp.setattr(encode_mod, "_whole_blocks", lambda *a: None)
        general = pb.compress2(x, **kw)
    assert fast == general
    assert pb.decompress2(fast) == x.tobytes()


@pytest.mark.parametrize(
    ("n", "where"),
    [(65536, None), (65536, 0), (65536, 1), (65536, 40000), (65536, 65535), (13, None),
     (13, 12), (13, 7), (7, None), (7, 6), (1, None), (65541, 65540), (65541, 65535)],
)  # fmt: skip
def test_run_streams_are_found_word_by_word_and_in_the_tail(n, where) -> None:
    row = np.full(n, 0x3F, np.uint8)
    if where is not None:
        row[where] = 0x40
    streams = np.stack([row, row]).copy()
    want = where is None
    assert encode_mod._is_run(row) is want
    assert encode_mod._is_run(streams[:, ::1][0]) is want
    assert encode_mod._constant_streams(streams).tolist() == [want, want]
    # a strided row (not contiguous) takes the byte-wise comparison
    wide = np.repeat(row, 2)
    assert encode_mod._is_run(wide[::2]) is want


def test_threads_are_used_only_for_long_calls(monkeypatch) -> None:
    # (threads, work items) per run_parallel call
    asked = spy_run_parallel(monkeypatch, "pyblosc2.chunk.decode")
    x = np.linspace(0, 1, 2**18)  # 2 MiB
    cases = {
        # shuffled blocks in runs of 1 MiB: plane copies of 128 KiB, on two threads
        "runs": (pb.compress2(x, typesize=8, blocksize=2**15), [(2, 2), (1, 0)]),
        # two 32 KiB blocks: one run each, plane copies of 4 KiB, on one thread
        "short": (pb.compress2(x[:8192], typesize=8, blocksize=2**15), [(1, 2), (1, 0)]),
    }
    for name, (chunk, want) in cases.items():
        asked.clear()
        n = len(x) if name != "short" else 8192
        assert pb.decompress2(chunk, nthreads=2) == x[:n].tobytes(), name
        assert asked == want, name
    # bitshuffle: whole blocks in one contiguous part per thread (each decoded in runs of up
    # to 256 KiB, one kernel call each; then the leftover's empty call); numba's kernel is one
    # long call per run (two threads), numpy's makes passes of ~bs/8 (16 KiB: one thread;
    # 128 KiB: two)
    bits = {
        "bits": pb.compress2(x, typesize=8, blocksize=2**17, filters=[2]),
        "bits-big": pb.compress2(x, typesize=8, blocksize=2**20, filters=[2]),
    }
    for kset in kernel_sets():
        with kernels_in_use(kset) as ks:
            for name, chunk in bits.items():
                asked.clear()
                assert pb.decompress2(chunk, nthreads=2) == x.tobytes(), name
                nt = 1 if name == "bits" and not ks.fast_unshuffle else 2
                assert asked == [(nt, nt), (1, 0)], (name, ks.name)
    monkeypatch.setattr(_threads, "MIN_PARALLEL_BYTES", 0)
    asked.clear()
    assert pb.decompress2(cases["short"][0], nthreads=2) == x[:8192].tobytes()
    assert asked == [(2, 2), (1, 0)]


def test_asarray_on_threads_stores_the_same_chunks(tmp_path) -> None:
    x = np.linspace(0, 1, 40 * 30 * 20, dtype=np.float32).reshape(40, 30, 20)
    arrs = [
        pb.asarray(
            x,
            chunks=(8, 16, 20),
            blocks=(4, 8, 10),
            urlpath=str(tmp_path / f"{n}.b2nd"),
            cparams={"nthreads": n},
        )
        for n in (1, 3)
    ]
    one, three = (a.schunk for a in arrs)
    assert one.nchunks == three.nchunks == 5 * 2
    for i in range(one.nchunks):
        assert one.get_chunk(i) == three.get_chunk(i), i
    np.testing.assert_array_equal(arrs[1][:], x)


@given(
    kind=st.sampled_from(["smooth", "random", "mixed"]),
    dtype=st.sampled_from(["<i2", "<f4", "<f8"]),
    codec=st.sampled_from(CODECS),
    rows=st.tuples(st.integers(0, 31), st.integers(1, 32), st.integers(1, 5)),
    cols=st.tuples(st.integers(0, 31), st.integers(1, 32), st.integers(1, 5)),
)
@settings(max_examples=60, deadline=None)
def test_picks_per_chunk_give_the_per_block_picks(kind, dtype, codec, rows, cols) -> None:
    """ChunkReader.pick_blocks (checks once per chunk, pick_split_planes) writes what
    pick_items writes block by block, for every kind of stream (compressed, raw, runs)."""
    x = _data(kind, 32 * 32 * 6, dtype)
    t = x.dtype.itemsize
    c = pb.compress2(
        x,
        codec=codec,
        typesize=t,
        blocksize=32 * 32 * t,
        filters=[pb.Filter.SHUFFLE],
        splitmode=pb.SplitMode.ALWAYS_SPLIT,
    )
    r = ChunkReader.open(c)
    index = (slice(*rows), slice(*cols))
    sel = (len(range(*rows)), len(range(*cols)))
    want = np.zeros((6, *sel, t), np.uint8)
    got = np.zeros_like(want)
    served = r.pick_blocks([(j, index, got[j]) for j in range(6)], (32, 32))
    assert served == (r.layout.kind == ChunkKind.BLOCKS)  # (a memcpyed chunk is declined)
    if not served:
        assert not got.any()  # declined before writing anything
        return
    for j in range(6):
        r.pick_items(j, (32, 32), index, want[j])
    np.testing.assert_array_equal(got, want)
    blocks = x.reshape(6, 32, 32)[(slice(None), *index)]
    np.testing.assert_array_equal(got.view(x.dtype).reshape(blocks.shape), blocks)


def test_picks_per_chunk_refuse_blocks_not_read() -> None:
    x = np.arange(4096, dtype=np.int32)
    c = pb.compress2(x, typesize=4, blocksize=4096, filters=[pb.Filter.SHUFFLE])
    r = ChunkReader.open(c)
    part = r.with_bytes(r.buf, [0])
    dst = np.zeros((1, 4), np.uint8)
    with pytest.raises(pb.errors.ParamError, match="not read"):
        part.pick_blocks([(1, (slice(0, 1),), dst)], (1024,))


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("path", ["range", "pick", "fused"])
def test_a_block_binds_its_decoder_once_and_decodes_each_stream_by_it(
    monkeypatch, codec, path
) -> None:
    """A range of a block (its planes' parts), items picked out of a block and a block
    decoded by the fused path: the codec's stream decoder bound once for the block and each
    of its compressed streams decoded by one call of it, none through the stream-by-stream
    general path (decode_stream: there only to name a stream the decoder refuses)."""
    x = np.linspace(0, 1, 4096).astype("<f8")  # one block of 8 streams, 4096 items
    c = pb.compress2(
        x, typesize=8, codec=codec, clevel=5, filters=[pb.Filter.SHUFFLE],
        splitmode=pb.SplitMode.ALWAYS_SPLIT,
    )  # fmt: skip
    r = ChunkReader.open(c)
    assert r.header.nblocks == 1 and r.header.nstreams(0) == 8
    compressed = sum(0 < size < 4096 for size in r.block_streams(0)[0])
    assert compressed > 0
    binds, calls = [], []
    real_bind = type(r.codec).stream_decoder

    def bind(self, dict_=None):
        binds.append(1)
        decode = real_bind(self, dict_)

        def counted(src, buf):
            calls.append(1)
            return decode(src, buf)

        return counted

    def general(*args, **kwargs):
        raise AssertionError("a stream went through decode_stream")

    monkeypatch.setattr(type(r.codec), "stream_decoder", bind)
    monkeypatch.setattr(ChunkReader, "decode_stream", general)
    if path == "range":  # 100 items: more than one transposed copy takes
        got = r.decode_range(8 * 1000, 8 * 1100).view("<f8")
        np.testing.assert_array_equal(got, x[1000:1100])
    elif path == "pick":
        out = np.zeros((3, 8), np.uint8)
        r.pick_items(0, (4096,), (slice(5, 4000, 1500),), out)
        np.testing.assert_array_equal(out.view("<f8").ravel(), x[5:4000:1500])
    else:
        out = np.empty(4096 * 8, np.uint8)
        assert decode_block_fused(r, 0, out, 8)
        np.testing.assert_array_equal(out.view("<f8"), x)
    assert (len(binds), len(calls)) == (1, compressed)
