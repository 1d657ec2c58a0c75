"""SChunk members against python-blosc2 both ways: lazy chunks byte-identical to C-Blosc2's,
special chunks from ``update_special`` and bulk vlmeta readable by the other library, filters
and operators agreeing with python-blosc2's on the same data."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("writer", ["pyblosc2", "python-blosc2"])
def test_lazychunks_are_byte_identical(cblosc2, tmp_path, contiguous, writer) -> None:
    path = str(tmp_path / ("a.b2nd" if contiguous else "a.sparse"))
    lib = pb if writer == "pyblosc2" else cblosc2
    kw = {"chunks": (50_000,), "blocks": (5_000,), "urlpath": path, "mode": "w"}
    lib.arange(0, 100_000, dtype=np.int32, contiguous=contiguous, **kw)
    # keep the arrays referenced: python-blosc2's schunk dangles once its NDArray is gone
    ours_array, theirs_array = pb.open(path), cblosc2.open(path)
    ours, theirs = ours_array.schunk, theirs_array.schunk
    for n in range(ours.nchunks):
        assert ours.get_lazychunk(n) == theirs.get_lazychunk(n)


@pytest.mark.parametrize("special", ["ZERO", "UNINIT", "VALUE"])
def test_update_special_both_ways(cblosc2, tmp_path, special) -> None:
    data = np.arange(90, dtype=np.int32)
    value = np.int32(7) if special == "VALUE" else None
    for i, (writer, reader) in enumerate([(pb, cblosc2), (cblosc2, pb)]):
        path = str(tmp_path / f"s{i}.b2frame")
        s = writer.SChunk(chunksize=400, urlpath=path, mode="w", cparams={"typesize": 4})
        s.append_data(data)
        s.update_special(0, getattr(writer.SpecialValue, special), value)
        r = reader.open(path)
        assert next(r.iterchunks_info()).special.name == special
        assert r.nbytes == data.nbytes
        if special != "UNINIT":
            want = np.full(90, 7 if value is not None else 0, np.int32)
            np.testing.assert_array_equal(np.frombuffer(r.decompress_chunk(0), np.int32), want)


def test_bulk_vlmeta_both_ways(cblosc2, tmp_path) -> None:
    path = str(tmp_path / "v.b2frame")
    s = pb.SChunk(urlpath=path, mode="w")
    s.vlmeta[:] = {"a": 1, "b": (1, 2), "c": b"x"}
    r = cblosc2.open(path)
    assert r.vlmeta[:] == {"a": 1, "b": (1, 2), "c": b"x"}
    assert r.vlmeta.to_dict() == pb.open(path).vlmeta.to_dict()
    t = cblosc2.SChunk(urlpath=str(tmp_path / "w.b2frame"), mode="w")
    t.vlmeta["z"] = [1, "2"]
    assert repr(pb.open(str(tmp_path / "w.b2frame")).vlmeta) == repr(t.vlmeta)


def test_postfilter_matches_python_blosc2(cblosc2) -> None:
    data = np.arange(3000, dtype=np.int32)
    results = []
    for lib in (pb, cblosc2):
        s = lib.SChunk(
            chunksize=4000,
            data=data,
            cparams={"typesize": 4, "blocksize": 1024},
            dparams={"nthreads": 1},
        )
        calls = []

        @s.postfilter(np.int32, np.float32)
        def pf(inp, out, offset, calls=calls):
            calls.append((inp.size, offset))
            out[:] = inp * 0.5 + offset

        results.append((s[1100:2900], s.decompress_chunk(2), calls))
    assert results[0] == results[1]


def test_operators_and_evaluate_match_python_blosc2(cblosc2) -> None:
    x = np.arange(60, dtype=np.float64).reshape(6, 10) % 7
    ours = pb.asarray(x, chunks=(4, 3), blocks=(2, 3))
    theirs = cblosc2.asarray(x, chunks=(4, 3), blocks=(2, 3))
    assert int(np.sum(ours == 3)) == int(np.sum((theirs == 3)[:]))
    np.testing.assert_allclose((ours * 2 + 1) / 3, ((theirs * 2 + 1) / 3)[:])
    np.testing.assert_allclose(ours.sum(axis=0), theirs.sum(axis=0))
    np.testing.assert_allclose(ours.std(axis=1), theirs.std(axis=1))
    a = ours
    mine = pb.evaluate("sin(a) * 2 + sum(a)")
    a = theirs  # noqa: F841
    np.testing.assert_allclose(mine, cblosc2.evaluate("sin(a) * 2 + sum(a)"))
