"""SChunk on contiguous frames (issue 4, first part: create, open, append, read, meta,
vlmeta), against python-blosc2 in both directions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.frame.store import FileStore, MemoryStore
from pyblosc2.schunk import SChunk, remove_urlpath, schunk_from_cframe
from pyblosc2.schunk import open as pb_open
from tests.helpers import MODEL_CHUNKSIZE, apply_schunk_op

CHUNK = 4000


def _fill(s, n=6, short=True):
    model = [np.arange(i * 1000, (i + 1) * 1000, dtype=np.int32) for i in range(n)]
    model.append(np.zeros(1000, np.int32))
    if short:
        model.append(np.arange(300, dtype=np.int32))
    for a in model:
        s.append_data(a)
    return b"".join(a.tobytes() for a in model)


@pytest.mark.parametrize("codec", [pb.Codec.LZ4, pb.Codec.ZSTD, pb.Codec.BLOSCLZ])
def test_ours_opened_and_extended_by_c(cblosc2, tmp_path, codec) -> None:
    path = str(tmp_path / "ours.b2frame")
    s = SChunk(
        chunksize=CHUNK,
        urlpath=path,
        cparams={"typesize": 4, "codec": codec},
        meta={"m1": [1, 2], "t": (1, "a")},
    )
    data = _fill(s, short=False)
    s.vlmeta["info"] = {"a": 1, "b": (2, 3)}
    c = cblosc2.open(path, mode="a")
    assert c.nchunks == s.nchunks and c.nbytes == len(data) and c[:] == data
    assert c.meta["m1"] == [1, 2] and c.meta["t"] == (1, "a")
    assert c.vlmeta["info"] == {"a": 1, "b": (2, 3)}
    c.append_data(np.arange(1000, dtype=np.int32))
    c.vlmeta["more"] = [1.5]
    del c
    back = pb_open(path, mode="a")
    assert back[:] == data + np.arange(1000, dtype=np.int32).tobytes()
    assert back.vlmeta.getall() == {"info": {"a": 1, "b": (2, 3)}, "more": [1.5]}
    back.append_data(np.arange(5, dtype=np.int32))
    assert (
        cblosc2.open(path).decompress_chunk(back.nchunks - 1)
        == np.arange(5).astype(np.int32).tobytes()
    )


def test_c_frames_opened_and_extended_by_us(cblosc2, tmp_path) -> None:
    path = str(tmp_path / "theirs.b2frame")
    c = cblosc2.SChunk(
        chunksize=CHUNK,
        urlpath=path,
        contiguous=True,
        cparams=cblosc2.CParams(typesize=4, nthreads=1),
        meta={"m": "x"},
    )
    data = _fill(c, short=False)
    c.vlmeta["k"] = (1, 2)
    del c
    s = pb_open(path, mode="a")
    assert s[:] == data and s.meta["m"] == "x" and s.vlmeta["k"] == (1, 2)
    s.append_data(np.full(1000, 9, np.int32))
    s.vlmeta["k"] = "replaced"
    c2 = cblosc2.open(path)
    assert c2[:] == data + np.full(1000, 9, np.int32).tobytes()
    assert c2.vlmeta["k"] == "replaced"


def test_variable_frames_stay_readable_by_c(cblosc2, tmp_path) -> None:
    """A short chunk followed by another append makes the frame variable-sized; the zero
    chunk stored as a special offset is then stored as a real chunk so that C can read it."""
    path = str(tmp_path / "v.b2frame")
    s = SChunk(chunksize=CHUNK, urlpath=path, cparams={"typesize": 4})
    data = _fill(s) + np.arange(7, dtype=np.int32).tobytes()
    s.append_data(np.arange(7, dtype=np.int32))
    assert s.chunksize == 0 and s[:] == data
    c = cblosc2.open(path)
    assert b"".join(c.decompress_chunk(i) for i in range(c.nchunks)) == data


@pytest.mark.parametrize(
    ("method", "fail_at"),
    [("write", 1), ("write", 2), ("write", 3), ("write", 4), ("truncate", 1)],
)
def test_failed_append_leaves_previous_chunks(tmp_path, monkeypatch, method, fail_at) -> None:
    """An append stages the live index + trailer past the frame end, commits that, writes the
    chunk + index + trailer, commits the new header, then truncates (frame/commit.py). A
    failure (a torn write included) before the last commit leaves the previous chunks and
    re-raises; the final truncate is cleanup, whose failure leaves the append done."""
    path = str(tmp_path / "f.b2frame")
    s = SChunk(chunksize=CHUNK, urlpath=path, cparams={"typesize": 4})
    data = _fill(s, short=False)
    calls = {"n": 0}
    real = getattr(FileStore, method)

    def flaky(self, *args):
        calls["n"] += 1
        if calls["n"] == fail_at:
            if method == "write":
                pos, buf = args
                real(self, pos, bytes(buf)[: len(buf) // 2])  # a torn write, then failure
            raise OSError("disk full (injected)")
        return real(self, *args)

    monkeypatch.setattr(FileStore, method, flaky)
    if method == "truncate":
        s.append_data(np.arange(1000, dtype=np.int32))
        expected = 8
    else:
        with pytest.raises(OSError, match="injected"):
            s.append_data(np.arange(1000, dtype=np.int32))
        expected = 7
    monkeypatch.setattr(FileStore, method, real)
    assert calls["n"] >= fail_at
    again = pb_open(path)
    assert again[:][: len(data)] == data and again.nchunks == s.nchunks == expected
    s.append_data(np.arange(1000, dtype=np.int32))  # and the handle still works
    assert pb_open(path).nchunks == expected + 1


def test_small_slice_reads_one_chunk(tmp_path) -> None:
    path = str(tmp_path / "big.b2frame")
    s = SChunk(chunksize=400_000, urlpath=path, cparams={"typesize": 8, "codec": pb.Codec.LZ4})
    for i in range(40):
        s.append_data(np.linspace(i, i + 1, 50_000))
    reader = pb_open(path)
    store = reader._store
    before = store.bytes_read
    got = np.frombuffer(reader.get_slice(1_000_123, 1_000_130), np.float64)
    assert np.array_equal(got, np.linspace(20, 21, 50_000)[123:130])
    assert store.bytes_read - before < 2 * 400_000 / 3  # one (compressed) chunk at most


def test_read_only_mode(tmp_path) -> None:
    path = str(tmp_path / "r.b2frame")
    SChunk(chunksize=CHUNK, urlpath=path, cparams={"typesize": 4}).append_data(bytes(4000))
    s = pb_open(path, mode="r")
    with pytest.raises(ValueError, match="reading mode"):
        s.append_data(bytes(4000))
    with pytest.raises(ValueError, match="reading mode"):
        s.vlmeta["x"] = 1


def test_meta_update_in_place_and_vlmeta_delete(cblosc2) -> None:
    s = SChunk(chunksize=CHUNK, cparams={"typesize": 4}, meta={"shape": [10, 20]})
    s.meta["shape"] = [30, 40]
    with pytest.raises(ValueError, match="cannot change"):
        s.meta["shape"] = [300, 40000]
    s.vlmeta["a"] = 1
    s.vlmeta["b"] = b"xy"
    del s.vlmeta["a"]
    c = cblosc2.schunk_from_cframe(s.to_cframe(), copy=True)
    assert c.meta["shape"] == [30, 40] and list(c.vlmeta) == ["b"] and c.vlmeta["b"] == b"xy"


def test_in_memory_roundtrip(cblosc2) -> None:
    s = SChunk(chunksize=CHUNK, cparams={"typesize": 4})
    data = _fill(s)
    assert cblosc2.schunk_from_cframe(s.to_cframe(), copy=True)[:] == data
    assert schunk_from_cframe(s.to_cframe())[:] == data
    assert isinstance(s._store, MemoryStore)


def test_remove_urlpath(tmp_path) -> None:
    path = tmp_path / "x.b2frame"
    SChunk(urlpath=str(path), cparams={"typesize": 1})
    remove_urlpath(path)
    assert not path.exists()
    remove_urlpath(path)  # missing: no-op


@settings(max_examples=25, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=3000), min_size=1, max_size=8))
def test_append_property(tmp_path_factory, pieces) -> None:
    path = str(tmp_path_factory.mktemp("p") / "h.b2frame")
    s = SChunk(chunksize=3000, urlpath=path, cparams={"typesize": 1, "codec": pb.Codec.LZ4})
    model = b""
    for p in pieces:
        s.append_data(p)
        model += p
        reopened = pb_open(path)
        assert reopened[:] == model and len(reopened) == len(model)


OPS = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 100)),
    st.tuples(st.just("insert"), st.integers(0, 10)),
    st.tuples(st.just("update"), st.integers(0, 10)),
    st.tuples(st.just("delete"), st.integers(0, 10)),
    st.tuples(st.just("reorder"), st.randoms(use_true_random=False)),
    st.tuples(st.just("setitem"), st.integers(0, 600)),
    st.tuples(st.just("zeros"), st.integers(0, 10)),
)


@settings(max_examples=40, deadline=None)
@given(
    ops=st.lists(OPS, min_size=1, max_size=10), where=st.sampled_from(["memory", "file", "sparse"])
)
def test_mutation_sequences_read_by_c(cblosc2, tmp_path_factory, ops, where) -> None:
    """C reads what random mutation sequences leave (the step-by-step model of the same
    operations, which needs no reference library, is tests/unit/test_schunk_model.py)."""
    path = None if where == "memory" else str(tmp_path_factory.mktemp("m") / "s.b2frame")
    s = SChunk(
        chunksize=MODEL_CHUNKSIZE,
        urlpath=path,
        contiguous=where != "sparse",
        cparams={"typesize": 4, "codec": pb.Codec.LZ4},
    )
    chunks: list[bytes] = []
    for counter, (op, arg) in enumerate(ops, 1):
        chunks = apply_schunk_op(s, chunks, op, arg, counter)
    c = cblosc2.schunk_from_cframe(s.to_cframe(), copy=True)
    assert [c.decompress_chunk(i) for i in range(c.nchunks)] == chunks


def test_empty_chunks_are_refused() -> None:
    s = SChunk(chunksize=400, cparams={"typesize": 4})
    with pytest.raises(pb.ParamError, match="empty chunk"):
        s.append_data(b"")
    assert s.nchunks == 0


@pytest.mark.parametrize("filters", [[pb.Filter.SHUFFLE], [pb.Filter.DELTA, pb.Filter.SHUFFLE]])
@pytest.mark.parametrize("clevel", [0, 5])
def test_small_slice_reads_only_needed_blocks(tmp_path, filters, clevel) -> None:
    """A 4 MB chunk of 64 KB blocks: a 7-item slice reads the header, the block starts and
    one block (two with DELTA), not the whole chunk."""
    path = str(tmp_path / "blocks.b2frame")
    data = np.random.default_rng(0).integers(0, 1000, 2_000_000).astype(np.float64)
    s = SChunk(
        chunksize=4_000_000,
        urlpath=path,
        cparams={
            "typesize": 8,
            "codec": pb.Codec.LZ4,
            "blocksize": 65536,
            "filters": filters,
            "filters_meta": [0] * len(filters),
            "clevel": clevel,
        },
    )
    for i in range(4):
        s.append_data(data[i * 500_000 : (i + 1) * 500_000])
    r = pb_open(path)
    chunk_cbytes = pb.get_cbuffer_sizes(r.get_chunk(2))[1]
    before = r._store.bytes_read
    got = np.frombuffer(r.get_slice(1_300_000, 1_300_007), np.float64)
    assert np.array_equal(got, data[1_300_000:1_300_007])
    assert r._store.bytes_read - before < chunk_cbytes / 4


def test_sparse_frames_both_ways(cblosc2, tmp_path) -> None:
    """Sparse frames (a directory of .chunk files + chunks.b2frame, frame-format.md §6)."""
    theirs = str(tmp_path / "theirs.b2frame")
    c = cblosc2.SChunk(
        chunksize=CHUNK,
        urlpath=theirs,
        contiguous=False,
        cparams=cblosc2.CParams(typesize=4, nthreads=1),
        meta={"m": 1},
    )
    data = _fill(c, short=False)
    c.delete_chunk(1)
    c.insert_data(0, np.full(1000, 5, np.int32), copy=True)
    c.vlmeta["v"] = "x"
    expected = b"".join(c.decompress_chunk(i) for i in range(c.nchunks))
    del c
    s = pb_open(theirs, mode="a")
    assert s[:] == expected and s.meta["m"] == 1 and s.vlmeta["v"] == "x"
    s.append_data(np.arange(1000, dtype=np.int32))
    s.update_data(2, np.full(1000, -2, np.int32), copy=True)
    s.delete_chunk(0)
    model = [s.decompress_chunk(i) for i in range(s.nchunks)]
    c2 = cblosc2.open(theirs)
    assert [c2.decompress_chunk(i) for i in range(c2.nchunks)] == model
    assert cblosc2.schunk_from_cframe(s.to_cframe(), copy=True)[:] == b"".join(model)

    ours = str(tmp_path / "ours.b2frame")
    s2 = SChunk(
        chunksize=CHUNK, urlpath=ours, contiguous=False, cparams={"typesize": 4}, meta={"m": [1]}
    )
    data = _fill(s2, short=False)
    s2.vlmeta["k"] = (1, 2)
    c3 = cblosc2.open(ours, mode="a")
    assert c3[:] == data and c3.meta["m"] == [1] and c3.vlmeta["k"] == (1, 2)
    c3.append_data(np.arange(1000, dtype=np.int32))
    del c3
    assert pb_open(ours)[:] == data + np.arange(1000, dtype=np.int32).tobytes()
    assert len(data) == 7 * CHUNK


@pytest.mark.parametrize("mmap_mode", ["r", "r+", "c"])
def test_mmap_modes(cblosc2, tmp_path, mmap_mode) -> None:
    path = str(tmp_path / "mm.b2frame")
    # no short last chunk: C's slicing of variable-size frames divides by zero (§9.7)
    data = _fill(SChunk(chunksize=CHUNK, urlpath=path, cparams={"typesize": 4}), short=False)
    s = pb_open(path, mmap_mode=mmap_mode)
    assert s[:] == data and s.mode == ("r" if mmap_mode == "r" else "a")
    if mmap_mode == "r":
        with pytest.raises(ValueError, match="reading mode"):
            s.append_data(bytes(CHUNK))
        return
    s.append_data(np.full(1000, 4, np.int32))
    on_disk = cblosc2.open(path)[:]
    if mmap_mode == "c":  # copy-on-write: the file is unchanged
        assert on_disk == data and s.nbytes == len(data) + CHUNK
    else:
        assert on_disk == data + np.full(1000, 4, np.int32).tobytes()


def test_mmap_mode_w_plus_creates(tmp_path) -> None:
    path = str(tmp_path / "w.b2frame")
    s = SChunk(chunksize=CHUNK, urlpath=path, cparams={"typesize": 4}, mmap_mode="w+")
    s.append_data(np.arange(1000, dtype=np.int32))
    assert pb_open(path, mmap_mode="r")[:] == np.arange(1000, dtype=np.int32).tobytes()
    with pytest.raises(pb.ParamError, match="mmap_mode"):
        SChunk(urlpath=path, mmap_mode="x")
