"""``pyblosc2 convert`` between .b2nd, .b2frame, .npy and zarr v3 (both ways with zarr)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import pyblosc2
from tests.cli.conftest import ARRAY


@pytest.mark.parametrize(("codec", "shuffle"), [("lz4", "shuffle"), ("zstd", "bitshuffle")])
def test_b2nd_to_zarr_opens_in_zarr(
    cli, tmp_path: Path, c_b2nd: Path, zarr_mod: ModuleType, codec: str, shuffle: str
) -> None:
    r = cli(
        "convert",
        c_b2nd.name,
        "out.zarr",
        "--codec",
        codec,
        "--filter",
        shuffle,
        "--chunks",
        "16,15",
    )
    assert r.returncode == 0, r.stderr
    z = zarr_mod.open_array(str(tmp_path / "out.zarr"), mode="r")
    np.testing.assert_array_equal(z[:], ARRAY)
    assert z.chunks == (16, 15)
    [blosc] = z.compressors
    assert (blosc.cname.value, blosc.shuffle.value) == (codec, shuffle)


@pytest.mark.parametrize("dtype", ["f4", "i8", "bool", "c16"])
def test_zarr_written_by_zarr_to_b2nd(cli, tmp_path: Path, zarr_mod, dtype: str) -> None:
    from zarr.codecs import BloscCodec

    arr = (np.arange(35 * 17) % 7).astype(dtype).reshape(35, 17)
    z = zarr_mod.create_array(
        str(tmp_path / "in.zarr"),
        shape=arr.shape,
        chunks=(10, 8),
        dtype=dtype,
        compressors=BloscCodec(cname="zstd", clevel=3),
    )
    z[:] = arr
    z[30:, :] = 0  # chunks equal to the fill value are not stored
    arr[30:, :] = 0
    r = cli("convert", "in.zarr", "out.b2nd")
    assert r.returncode == 0, r.stderr
    back = pyblosc2.open(str(tmp_path / "out.b2nd"))
    np.testing.assert_array_equal(back[:], arr)
    assert back.chunks == (10, 8)  # the zarr chunks are kept unless --chunks says otherwise


def test_repartition_and_recompress_keeps_data_and_vlmeta(cli, tmp_path, c_b2nd, cblosc2):
    r = cli(
        "convert",
        c_b2nd.name,
        "new.b2nd",
        "--chunks",
        "7,9",
        "--blocks",
        "7,3",
        "--codec",
        "blosclz",
        "--clevel",
        "9",
    )
    assert r.returncode == 0, r.stderr
    new = cblosc2.open(str(tmp_path / "new.b2nd"))
    np.testing.assert_array_equal(new[:], ARRAY)
    assert (new.chunks, new.blocks) == ((7, 9), (7, 3))
    assert new.schunk.cparams.codec == cblosc2.Codec.BLOSCLZ
    assert new.schunk.cparams.clevel == 9
    assert new.schunk.vlmeta["source"] == {"instrument": "x7"}


def test_unset_options_keep_the_source_cparams(cli, tmp_path: Path, c_b2frame: Path) -> None:
    src = pyblosc2.open(str(c_b2frame))
    r = cli("convert", c_b2frame.name, "copy.b2frame")
    assert r.returncode == 0, r.stderr
    new = pyblosc2.open(str(tmp_path / "copy.b2frame"))
    assert (new.cparams.codec, new.cparams.clevel) == (src.cparams.codec, src.cparams.clevel)
    assert (new.nchunks, new.chunksize, new[:]) == (src.nchunks, src.chunksize, src[:])


def test_npy_to_b2frame_and_b2nd_to_npy(cli, tmp_path: Path, c_b2nd: Path) -> None:
    np.save(tmp_path / "in.npy", ARRAY.astype(np.float32))
    assert cli("convert", "in.npy", "flat.b2frame").returncode == 0
    s = pyblosc2.open(str(tmp_path / "flat.b2frame"))
    assert s.typesize == 4 and s[:] == ARRAY.astype(np.float32).tobytes()
    assert cli("convert", c_b2nd.name, "out.npy").returncode == 0
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), ARRAY)


def test_fortran_order_npy(cli, tmp_path: Path) -> None:
    arr = np.asfortranarray(np.arange(600, dtype=np.int16).reshape(20, 30))
    np.save(tmp_path / "f.npy", arr)
    assert cli("convert", "f.npy", "f.b2nd").returncode == 0
    np.testing.assert_array_equal(pyblosc2.open(str(tmp_path / "f.b2nd"))[:], arr)


@pytest.mark.parametrize(
    ("out", "extra", "message"),
    [
        ("out.txt", [], "cannot tell the format from the name"),
        ("out.zarr", ["--codec", "lz4", "--dtype", "i4"], "--dtype applies to SChunk"),
        ("missing/out.b2nd", [], "does not exist"),
    ],
)
def test_convert_errors_write_nothing(cli, tmp_path, c_b2nd, out, extra, message) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    r = cli("convert", c_b2nd.name, out, *extra)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_existing_zarr_store_is_not_overwritten(cli, tmp_path: Path, c_b2nd: Path) -> None:
    (tmp_path / "out.zarr").mkdir()
    r = cli("convert", c_b2nd.name, "out.zarr")
    assert r.returncode == 2 and "already exists" in r.stderr
    assert list((tmp_path / "out.zarr").iterdir()) == []


# -- zarr v2 stores (issue 23): read by convert, named by the other commands --------------------


@pytest.mark.parametrize("compressor", ["blosc", "blosc2", None])
def test_zarr_v2_store_to_b2nd(
    cli, tmp_path: Path, zarr_mod: ModuleType, cblosc2: ModuleType, compressor: str | None
) -> None:
    from pyblosc2.compat import Blosc, Blosc2

    codec = {"blosc": Blosc(cname="lz4"), "blosc2": Blosc2(), None: None}[compressor]
    z = zarr_mod.create_array(
        str(tmp_path / "v2.zarr"),
        shape=ARRAY.shape,
        chunks=(25, 15),
        dtype="f8",
        zarr_format=2,
        compressors=codec,
        fill_value=np.nan,
    )
    z[:50] = ARRAY[:50]  # chunks of rows 50.. are missing: the fill value
    r = cli("convert", "v2.zarr", "out.b2nd")
    assert r.returncode == 0, r.stderr
    back = cblosc2.open(str(tmp_path / "out.b2nd"))
    np.testing.assert_array_equal(back[:50], ARRAY[:50])
    assert np.isnan(back[50:]).all() and back.chunks == (25, 15)


def test_zarr_v2_store_with_another_compressor_is_named(
    cli, tmp_path: Path, zarr_mod: ModuleType
) -> None:
    import numcodecs

    z = zarr_mod.create_array(
        str(tmp_path / "v2.zarr"),
        shape=(10,),
        dtype="i4",
        zarr_format=2,
        compressors=numcodecs.Zstd(),
    )
    z[:] = 1
    r = cli("convert", "v2.zarr", "out.b2nd")
    assert r.returncode == 2 and not (tmp_path / "out.b2nd").exists()
    assert "compressor id is 'zstd', expected one of ('blosc', 'blosc2') or null" in r.stderr
    assert "sparse frame" not in r.stderr


@pytest.mark.parametrize("command", [["info"], ["verify"], ["slice", "[0]"]])
def test_other_commands_name_a_zarr_store(
    cli, tmp_path: Path, zarr_mod: ModuleType, command: list
) -> None:
    zarr_mod.create_array(str(tmp_path / "v2.zarr"), shape=(4,), dtype="i4", zarr_format=2)
    zarr_mod.create_array(str(tmp_path / "v3.zarr"), shape=(4,), dtype="i4")
    for name, kind in (("v2.zarr", "zarr v2"), ("v3.zarr", "zarr v3")):
        args = [command[0], name, *command[1:]]
        r = cli(*args)
        assert r.returncode == 2
        assert r.stderr.strip() == (
            f"pyblosc2: error: {name}: a {kind} store, not a Blosc2 frame: "
            "`pyblosc2 convert` reads it"
        )


@pytest.mark.parametrize("codec", ["zstd", "lz4", "lz4hc", "blosclz", "zlib"])
def test_every_offered_codec_to_zarr_reads_in_zarr(
    cli, tmp_path: Path, c_b2nd: Path, zarr_mod: ModuleType, codec: str
) -> None:
    r = cli("convert", c_b2nd.name, "out.zarr", "--codec", codec)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(zarr_mod.open_array(str(tmp_path / "out.zarr"))[:], ARRAY)
