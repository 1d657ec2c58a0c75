"""xarray datasets both ways with xarray-blosc2: what it writes opens identically with
``engine="pyblosc2"`` (lazily), and what ``pyblosc2.xarray.to_blosc2`` writes opens with
xarray-blosc2 identical to the dataset written; dims, coords (string, scalar, non-index),
attrs, encodings, datetimes, timedeltas, strings; dask chunks map onto pyblosc2 chunks."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from tests.conftest import _reference

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
from pyblosc2.xarray import to_blosc2  # noqa: E402


@pytest.fixture(scope="module")
def xb():
    return _reference("xarray_blosc2")


def _datasets() -> dict[str, xr.Dataset]:
    rng = np.random.default_rng(5)
    t = pd.date_range("2021-03-01", periods=6, freq="6h")
    full = xr.Dataset(
        {
            "t2m": (
                ("time", "lat", "lon"),
                rng.random((6, 4, 7)).astype("f4"),
                {"units": "K", "long_name": "temperature", "valid_range": [0.0, 400.0], "count": 3},
            ),
            "name": (("lat",), np.array(["north", "mid", "s", "south pole"])),
            "dur": (("time",), np.arange(6).astype("timedelta64[m]")),
            "flag": (("time", "lon"), rng.integers(0, 2, (6, 7)).astype(bool)),
            "i8": (("lon",), np.arange(7, dtype="<i8") - 3),
        },
        coords={
            "time": t,
            "lat": [-45.0, 0.0, 30.0, 60.0],
            "lon": np.arange(7) * 10,
            "station": ("lon", list("abcdefg")),
            "height": 2.5,
            "xy": (("lat", "lon"), np.arange(28.0).reshape(4, 7)),
        },
        attrs={"title": "test", "version": 2, "pi": 3.25},
    )
    plain = xr.Dataset({"v": (("x",), np.linspace(0, 1, 1000))})
    cube = xr.Dataset(
        {"cube": (("a", "b", "c", "d"), np.arange(2 * 3 * 4 * 5, dtype="u2").reshape(2, 3, 4, 5))}
    )
    return {"full": full, "plain": plain, "cube": cube}


DATASETS = _datasets()


@pytest.mark.parametrize("name", DATASETS)
def test_theirs_opens_identically_with_pyblosc2(name, xb, tmp_path) -> None:
    ds = DATASETS[name]
    xb.save_dataset(ds, tmp_path / "d.b2")
    theirs = xr.open_dataset(tmp_path / "d.b2", engine="blosc2").load()
    ours = xr.open_dataset(tmp_path / "d.b2", engine="pyblosc2")
    assert not any(ours[v].variable._in_memory for v in ours.data_vars)  # lazy until loaded
    xr.testing.assert_identical(ours.load(), theirs)
    raw = xr.open_dataset(tmp_path / "d.b2", engine="pyblosc2", decode_cf=False).load()
    xr.testing.assert_identical(raw, theirs)


@pytest.mark.parametrize("name", DATASETS)
def test_theirs_zip_and_single_file(name, xb, tmp_path) -> None:
    ds = DATASETS[name]
    b2z = xb.save_dataset(ds, tmp_path / "d.b2", freeze=True)
    assert zipfile.is_zipfile(b2z)
    theirs = xr.open_dataset(b2z, engine="blosc2").load()
    xr.testing.assert_identical(xr.open_dataset(b2z, engine="pyblosc2").load(), theirs)
    var = next(iter(ds.data_vars))
    single = tmp_path / "one.b2nd"
    with zipfile.ZipFile(b2z) as zf:
        member = next(n for n in zf.namelist() if n.endswith(f"{var}.b2nd"))
        single.write_bytes(zf.read(member))
    want = xr.open_dataset(single, engine="blosc2").load()
    got = xr.open_dataset(single, engine="pyblosc2").load()
    # xarray-blosc2 drops a single file's attributes; pyblosc2 reads them from its vlmeta
    xr.testing.assert_equal(got, want)
    assert set(got[var].attrs) == set(ds[var].attrs)


@pytest.mark.parametrize("name", DATASETS)
def test_ours_opens_identically_with_xarray_blosc2(name, xb, tmp_path) -> None:
    ds = DATASETS[name]
    path = to_blosc2(ds, tmp_path / "o.b2")
    xr.testing.assert_identical(xr.open_dataset(path, engine="blosc2").load(), ds)
    xr.testing.assert_identical(xb.open(path).load(), ds)
    xr.testing.assert_identical(xr.open_dataset(path, engine="pyblosc2").load(), ds)


def test_lazy_outer_indexing_reads_only_what_it_selects(tmp_path, decoded_blocks) -> None:
    a = np.arange(200 * 300, dtype="f8").reshape(200, 300)
    ds = xr.Dataset({"a": (("y", "x"), a)})
    path = to_blosc2(
        ds, tmp_path / "l.b2", encoding={"a": {"chunks": (50, 100), "blocks": (10, 20)}}
    )
    got = xr.open_dataset(path, engine="pyblosc2")
    decoded_blocks.clear()
    np.testing.assert_array_equal(got.a[17, 33:36].values, a[17, 33:36])
    assert len(decoded_blocks) == 1
    np.testing.assert_array_equal(
        got.a.isel(y=[5, 150, 7], x=slice(290, 300)).values, a[[5, 150, 7], 290:300]
    )
    np.testing.assert_array_equal(got.a[::-7, 3].values, a[::-7, 3])


def test_encodings_round_trip(tmp_path) -> None:
    ds = xr.Dataset(
        {"v": (("t",), np.arange(10.0))}, coords={"t": pd.date_range("2000-01-01", periods=10)}
    )
    ds.v.encoding.update(
        chunks=(4,),
        blocks=(2,),
        codec="lz4",
        clevel=7,
        filters=["bitshuffle"],
        _FillValue=-9.0,
        zlib=True,
    )
    ds.t.encoding.update(units="days since 1999-12-31", calendar="standard")
    path = to_blosc2(ds, tmp_path / "e.b2")
    got = xr.open_dataset(path, engine="pyblosc2")
    enc = got.v.encoding
    assert (enc["chunks"], enc["blocks"], enc["codec"], enc["clevel"], enc["filters"]) == (
        (4,),
        (2,),
        "lz4",
        7,
        ["bitshuffle"],
    )
    assert enc["_FillValue"] == -9.0 and enc["zlib"] is True
    assert got.t.encoding["units"] == "days since 1999-12-31"
    xr.testing.assert_identical(got.load(), ds)


def test_dask_chunks_map_onto_pyblosc2_chunks(tmp_path) -> None:
    pytest.importorskip("dask.array")
    a = np.arange(90 * 40, dtype="i4").reshape(90, 40)
    ds = xr.Dataset({"a": (("y", "x"), a)}).chunk({"y": 30, "x": 20})
    path = to_blosc2(ds, tmp_path / "d.b2")
    got = xr.open_dataset(path, engine="pyblosc2", chunks={})
    assert got.a.encoding["chunks"] == (30, 20)
    assert got.a.chunks == ((30, 30, 30), (20, 20))
    np.testing.assert_array_equal(got.a.values, a)


def test_commit_sidecar_trims_time(xb, tmp_path) -> None:
    ds = xr.Dataset(
        {"v": (("time",), np.arange(8.0))}, coords={"time": pd.date_range("2000-01-01", periods=8)}
    )
    xb.save_dataset(ds, tmp_path / "c.b2")
    blosc2 = _reference("blosc2")
    blosc2.asarray(
        np.array(5, dtype=np.int64), urlpath=str(tmp_path / "c.b2" / "_commit.b2nd"), mode="w"
    )
    theirs = xr.open_dataset(tmp_path / "c.b2", engine="blosc2").load()
    ours = xr.open_dataset(tmp_path / "c.b2", engine="pyblosc2").load()
    assert ours.sizes["time"] == 5 and ours.attrs["committed_extent"] == 5
    xr.testing.assert_identical(ours, theirs)


def test_unsupported_stores_raise_not_implemented(xb, tmp_path) -> None:
    ds = DATASETS["plain"]
    xb.save_dataset(ds, tmp_path / "g.b2", preset="geogrid")
    with pytest.raises(NotImplementedError, match="geogrid"):
        xr.open_dataset(tmp_path / "g.b2", engine="pyblosc2")
    (tmp_path / "n.b2" / "sub").mkdir(parents=True)
    to_blosc2(ds, tmp_path / "n.b2" / "sub" / "inner", mode="w")
    (tmp_path / "n.b2" / "sub" / "x.b2nd").write_bytes(
        (tmp_path / "n.b2" / "sub" / "inner" / "v.b2nd").read_bytes()
    )
    with pytest.raises(NotImplementedError, match="nested"):
        xr.open_dataset(tmp_path / "n.b2", engine="pyblosc2")


def test_writer_refuses_and_keeps_what_was_there(tmp_path) -> None:
    ds = DATASETS["plain"]
    path = to_blosc2(ds, tmp_path / "k.b2")
    with pytest.raises(FileExistsError):
        to_blosc2(ds, path)
    bad = ds.assign(o=(("x",), np.array([object()] * 1000)))
    bad["o"] = bad.o.astype(object)
    with pytest.raises(ValueError, match="encoding"):
        to_blosc2(ds, path, mode="w", encoding={"v": {"compressor": "zstd"}})
    with pytest.raises(ValueError, match="codec"):
        to_blosc2(ds, path, mode="w", encoding={"v": {"codec": "nope"}})
    xr.testing.assert_identical(xr.open_dataset(path, engine="pyblosc2").load(), ds)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.b2"]  # no temporaries left
    to_blosc2(DATASETS["cube"], path, mode="w")
    xr.testing.assert_identical(xr.open_dataset(path, engine="pyblosc2").load(), DATASETS["cube"])


def test_guess_can_open(tmp_path) -> None:
    from pyblosc2.xarray import PyBlosc2BackendEntrypoint

    path = to_blosc2(DATASETS["plain"], tmp_path / "g.b2")
    e = PyBlosc2BackendEntrypoint()
    assert e.guess_can_open(path) and e.guess_can_open(str(path / "v.b2nd"))
    assert not e.guess_can_open(tmp_path / "nothing.nc") and not e.guess_can_open(b"x")
