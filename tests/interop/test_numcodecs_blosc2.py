"""The numcodecs ``blosc2`` codec (``pyblosc2.compat.numcodecs_blosc2.Blosc2``) and its zarr v3
form (``pyblosc2.compat.zarr_blosc2.Blosc2Codec``): found through numcodecs' entry point,
every dtype round-trips, its chunks are read by imagecodecs' ``imagecodecs_blosc2`` and
python-blosc2 and theirs by it, zarr v2- and v3-format arrays written with it read back
(also in a fresh process that only has the metadata), and hypothesis over data and settings.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2
from pyblosc2.compat.numcodecs_blosc2 import CODECS, Blosc2
from pyblosc2.errors import FormatError, ParamError
from tests.bounded import run_child
from tests.conftest import _reference

DTYPES = [
    "?", "i1", "u1", "<i2", ">i2", "<u2", "<i4", ">u4", "<i8", "<u8", "<f2", "<f4", ">f4",
    "<f8", "<c8", "<c16", "<M8[ns]", "<m8[s]", "<U7", "S5", "V3",
    [("a", "<i4"), ("b", "<f8"), ("c", "S2")], ("<f4", (3,)), "<U80",
]  # fmt: skip
SETTINGS = [
    {"codec": c, "filters": f}
    for c in CODECS
    for f in (["nofilter"], ["shuffle"], ["bitshuffle"], ["delta", "shuffle"])
]


@pytest.fixture(scope="module")
def imagecodecs() -> ModuleType:
    mod = _reference("imagecodecs")
    if not mod.BLOSC2.available:
        pytest.fail("imagecodecs was built without Blosc2")
    return mod


def _data(dtype: object, n: int = 1000) -> np.ndarray:
    dt = np.dtype(dtype)  # type: ignore[call-overload]
    raw = np.random.default_rng(7).integers(0, 40, n * dt.itemsize, dtype=np.uint8)
    arr = raw.view(dt) if not dt.subdtype else raw.view(dt.base).reshape(-1, *dt.shape)
    if dt.kind in "fc":
        arr = np.linspace(-5, 5, arr.size).astype(dt).reshape(arr.shape)
    if dt.kind == "?":
        arr = raw[:n] > 20
    if dt.kind == "U":
        arr = np.array([f"x{i}é" for i in range(n)], dtype=dt)
    return arr


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_round_trips(dtype: object) -> None:
    data = _data(dtype)
    codec = Blosc2()
    enc = codec.encode(data)
    assert enc[0] == 5  # a Blosc2 chunk (format version 5), not a frame
    assert pyblosc2.get_chunk_header(enc).nbytes == data.nbytes
    back = np.frombuffer(codec.decode(enc), data.dtype).reshape(data.shape)
    np.testing.assert_array_equal(back, data)
    out = np.empty_like(data)
    assert codec.decode(enc, out=out) is out
    np.testing.assert_array_equal(out, data)


def test_typesize_is_the_item_size_capped_as_c_does() -> None:
    assert pyblosc2.get_chunk_header(Blosc2().encode(_data("<i8"))).typesize == 8
    assert pyblosc2.get_chunk_header(Blosc2().encode(_data("<U80"))).typesize == 1  # 320 > 255
    assert pyblosc2.get_chunk_header(Blosc2(typesize=2).encode(_data("<i8"))).typesize == 2


def test_empty_and_bytes_buffers() -> None:
    codec = Blosc2()
    assert codec.decode(codec.encode(b"")) == b""
    assert codec.decode(codec.encode(b"abc" * 100)) == b"abc" * 100


def test_numcodecs_finds_it_through_its_entry_point(numcodecs_mod: ModuleType) -> None:
    """A fresh interpreter: nothing registered by hand, only the installed entry point."""
    code = (
        "import numcodecs, numpy as np\n"
        "c = numcodecs.get_codec({'id': 'blosc2', 'cname': 'lz4', 'clevel': 9})\n"
        "x = np.arange(100.0)\n"
        "assert (np.frombuffer(c.decode(c.encode(x)), 'f8') == x).all()\n"
        "print(type(c).__module__, c.codec)\n"
    )
    done = run_child(
        [sys.executable, "-c", code],
        "round-trip through numcodecs' entry point",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pyblosc2.compat.numcodecs_blosc2", "lz4"]


def test_config_round_trips_through_json() -> None:
    codec = Blosc2(
        codec=pyblosc2.Codec.LZ4HC,
        clevel=9,
        filters=[pyblosc2.Filter.DELTA, "bitshuffle"],
        filters_meta=[0, 0],
        typesize=4,
        blocksize=4096,
        splitmode=pyblosc2.SplitMode.NEVER_SPLIT,
        nthreads=2,
    )
    config = json.loads(json.dumps(codec.get_config()))
    assert config["codec"] == "lz4hc" and config["filters"] == ["delta", "bitshuffle"]
    assert config["splitmode"] == "never_split"
    assert Blosc2.from_config(config) == codec


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"codec": "snappy"}, "codec must be one of ('blosclz', 'lz4', 'lz4hc', 'zlib', 'zstd')"),
        ({"codec": "ndlz"}, "codec must be one of"),
        ({"codec": pyblosc2.Codec.ZFP_ACC}, "codec must be one of BLOSCLZ (0)"),
        ({"clevel": 10}, "clevel must be an int in 0..9, got 10"),
        ({"filters": ["ndcell"]}, "filters[0] must be one of"),
        ({"filters": ["shuffle"] * 7}, "filters must be a list of at most 6 filters"),
        ({"filters": "shuffle"}, "filters must be a list of filter names or ids"),
        ({"filters": ["shuffle"], "filters_meta": [0, 0]}, "filters_meta must be a list of 1"),
        ({"typesize": 0}, "typesize must be None or an int >= 1, got 0"),
        ({"splitmode": "sometimes"}, "splitmode must be one of"),
        ({"nthreads": 0}, "nthreads must be an int in 1..256"),
        ({"id": "blosc"}, "id must be 'blosc2', got 'blosc'"),
        ({"shuffle": 1}, "unknown blosc2 configuration keys ['shuffle']"),
        ({"codec": "lz4", "cname": "lz4"}, "give codec or cname, not both"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_bad_configurations_are_refused(config: dict, message: str) -> None:
    with pytest.raises(ParamError) as info:
        Blosc2.from_config(config)
    assert message in str(info.value)


def test_corrupt_chunk_raises_format_error() -> None:
    enc = bytearray(Blosc2().encode(_data("<f8")))
    enc[12:16] = (10**6).to_bytes(4, "little")  # cbytes beyond the buffer
    with pytest.raises(FormatError, match="cbytes"):
        Blosc2().decode(bytes(enc))


# -- imagecodecs (C-Blosc2) both ways ----------------------------------------------------------


@pytest.mark.parametrize("params", SETTINGS, ids=lambda p: f"{p['codec']}-{'+'.join(p['filters'])}")
@pytest.mark.parametrize("dtype", ["u1", "<i4", "<f8", [("a", "<i2"), ("b", "<f4")]], ids=str)
def test_imagecodecs_reads_ours(imagecodecs: ModuleType, params: dict, dtype: object) -> None:
    data = _data(dtype, 5000)
    enc = Blosc2(**params).encode(data)
    back = np.frombuffer(imagecodecs.blosc2_decode(enc), data.dtype)
    np.testing.assert_array_equal(back, data)
    # and through imagecodecs' numcodecs codec, as a zarr store written by us would be read
    from imagecodecs.numcodecs import Blosc2 as TheirCodec

    out = np.empty_like(data)
    TheirCodec().decode(enc, out=out)
    np.testing.assert_array_equal(out, data)


@pytest.mark.parametrize("compressor", ["blosclz", "lz4", "lz4hc", "zlib", "zstd"])
@pytest.mark.parametrize("shuffle", ["noshuffle", "shuffle", "bitshuffle"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_ours_reads_imagecodecs(
    imagecodecs: ModuleType, compressor: str, shuffle: str, dtype: object
) -> None:
    data = _data(dtype)
    filt = {"noshuffle": "NOFILTER", "shuffle": "SHUFFLE", "bitshuffle": "BITSHUFFLE"}[shuffle]
    raw = data.reshape(-1).view(np.uint8)  # (datetimes have no buffer of their own)
    typesize = data.dtype.itemsize if data.dtype.itemsize <= 255 else 1
    enc = imagecodecs.blosc2_encode(
        raw,
        level=5,
        compressor=compressor,
        shuffle=imagecodecs.BLOSC2.FILTER[filt],
        typesize=typesize,
    )
    back = np.frombuffer(Blosc2().decode(enc), data.dtype).reshape(data.shape)
    np.testing.assert_array_equal(back, data)


def test_python_blosc2_both_ways(cblosc2: ModuleType) -> None:
    """python-blosc2 (C-Blosc2) decodes ours; ours decodes its compress2; with blosclz at one
    thread the bytes are identical (C-Blosc2's serial encoder)."""
    data = _data("<f8", 20_000)
    ours = Blosc2(codec="blosclz", filters=["shuffle"]).encode(data)
    assert np.array_equal(np.frombuffer(cblosc2.decompress2(ours), "f8"), data)
    theirs = cblosc2.compress2(
        data,
        codec=cblosc2.Codec.BLOSCLZ,
        clevel=5,
        typesize=8,
        nthreads=1,
        filters=[cblosc2.Filter.SHUFFLE],
        filters_meta=[0],
    )
    assert np.array_equal(np.frombuffer(Blosc2().decode(theirs), "f8"), data)
    assert ours == theirs


# -- hypothesis --------------------------------------------------------------------------------

_FILTER_SETS = st.sampled_from(
    [["nofilter"], ["shuffle"], ["bitshuffle"], ["delta"], ["bytedelta"], ["delta", "shuffle"]]
)


@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from(["u1", "<i2", "<i4", "<f4", "<f8", "<c16", "S3"]),
    n=st.integers(0, 3000),
    codec=st.sampled_from(sorted(CODECS)),
    clevel=st.integers(0, 9),
    filters=_FILTER_SETS,
    block_items=st.sampled_from([0, 64, 1024]),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_round_trip_and_c_blosc2_agrees(
    dtype: str, n: int, codec: str, clevel: int, filters: list, block_items: int, seed: int
) -> None:
    blocksize = block_items * np.dtype(dtype).itemsize  # (pyblosc2 refuses others, §8.1)
    data = np.random.default_rng(seed).integers(0, 7, n * np.dtype(dtype).itemsize, np.uint8)
    data = data.view(dtype)
    c = Blosc2(codec=codec, clevel=clevel, filters=filters, blocksize=blocksize)
    enc = c.encode(data)
    assert np.frombuffer(c.decode(enc), dtype).tobytes() == data.tobytes()
    try:
        import imagecodecs
    except ImportError:
        return
    if "bytedelta" in filters:  # its C-Blosc2 has no bytedelta: test_bytedelta_in_imagecodecs
        return
    assert bytes(imagecodecs.blosc2_decode(enc)) == data.tobytes()


def test_bytedelta_in_imagecodecs(imagecodecs: ModuleType, cblosc2: ModuleType) -> None:
    """imagecodecs' C-Blosc2 (2.23) lacks the bytedelta filter: it refuses python-blosc2's
    bytedelta chunks as it refuses ours, which python-blosc2 reads."""
    data = _data("<i4", 5000)
    ours = Blosc2(filters=["shuffle", "bytedelta"]).encode(data)
    theirs = cblosc2.compress2(
        data, typesize=4, filters=[cblosc2.Filter.SHUFFLE, cblosc2.Filter.BYTEDELTA]
    )
    assert np.array_equal(np.frombuffer(cblosc2.decompress2(ours), "<i4"), data)
    for chunk in (ours, theirs):
        with pytest.raises(imagecodecs.Blosc2Error, match="Filter pipeline error"):
            imagecodecs.blosc2_decode(chunk)


# -- zarr --------------------------------------------------------------------------------------


def _reopen_in_a_fresh_process(path: Path, zarr_format: int) -> np.ndarray:
    """The array read by a new interpreter that knows only the metadata (entry points)."""
    code = (
        "import sys, zarr, numpy as np\n"
        f"a = zarr.open_array(sys.argv[1], mode='r', zarr_format={zarr_format})\n"
        "np.save(sys.stdout.buffer, a[...])\n"
    )
    done = run_child(
        [sys.executable, "-c", code, str(path)],
        "read a zarr array in a fresh interpreter",
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr.decode()
    import io

    return np.load(io.BytesIO(done.stdout))


@pytest.mark.parametrize("dtype", ["<i2", "<f4", "<f8", "u1", "<c8", [("a", "<i4"), ("b", "<f4")]])
def test_zarr_v2_array_written_with_it_reads_back(
    zarr_mod: ModuleType, tmp_path: Path, dtype: object
) -> None:
    data = _data(dtype, 60 * 40).reshape(60, 40)
    path = tmp_path / "v2.zarr"
    z = zarr_mod.create_array(
        str(path),
        shape=data.shape,
        chunks=(25, 15),
        dtype=data.dtype,
        zarr_format=2,
        compressors=Blosc2(codec="lz4", filters=["bitshuffle"]),
    )
    z[...] = data
    meta = json.loads((path / ".zarray").read_text())
    assert meta["compressor"]["id"] == "blosc2" and meta["compressor"]["codec"] == "lz4"
    np.testing.assert_array_equal(zarr_mod.open_array(str(path), mode="r")[...], data)
    np.testing.assert_array_equal(_reopen_in_a_fresh_process(path, 2), data)
    chunk = (path / "0.0").read_bytes()
    assert chunk[0] == 5 and pyblosc2.get_chunk_header(chunk).typesize == data.dtype.itemsize


@pytest.mark.parametrize("dtype", ["<i2", "<f4", "<f8", "u1"])
def test_zarr_v3_array_written_with_it_reads_back(
    zarr_mod: ModuleType, tmp_path: Path, dtype: str
) -> None:
    from pyblosc2.compat.zarr_blosc2 import Blosc2Codec

    data = _data(dtype, 60 * 40).reshape(60, 40)
    path = tmp_path / "v3.zarr"
    z = zarr_mod.create_array(
        str(path), shape=data.shape, chunks=(25, 15), dtype=dtype, compressors=Blosc2Codec()
    )
    z[...] = data
    (codec,) = [
        c
        for c in json.loads((path / "zarr.json").read_text())["codecs"]
        if c["name"] == "numcodecs.blosc2"
    ]
    assert codec["configuration"]["typesize"] == np.dtype(dtype).itemsize
    assert codec["configuration"] == {k: v for k, v in codec["configuration"].items() if k != "id"}
    np.testing.assert_array_equal(zarr_mod.open_array(str(path), mode="r")[...], data)
    np.testing.assert_array_equal(_reopen_in_a_fresh_process(path, 3), data)
    chunk = (path / "c" / "0" / "0").read_bytes()
    assert Blosc2().decode(chunk) == np.ascontiguousarray(data[:25, :15]).tobytes()


def test_zarr_v3_chunks_are_what_imagecodecs_reads(
    zarr_mod: ModuleType, imagecodecs: ModuleType, tmp_path: Path
) -> None:
    from pyblosc2.compat.zarr_blosc2 import Blosc2Codec

    data = _data("<f8", 100)
    path = tmp_path / "v3.zarr"
    z = zarr_mod.create_array(
        str(path), shape=data.shape, chunks=(100,), dtype="<f8", compressors=Blosc2Codec()
    )
    z[...] = data
    raw = imagecodecs.blosc2_decode((path / "c" / "0").read_bytes())
    np.testing.assert_array_equal(np.frombuffer(raw, "<f8"), data)


def test_the_codec_imports_neither_numcodecs_nor_zarr() -> None:
    code = (
        "import sys, pyblosc2\n"
        "from pyblosc2.compat import Blosc2\n"
        "Blosc2().encode(b'x' * 100)\n"
        "print(sorted({'numcodecs', 'zarr', 'imagecodecs', 'blosc2'} & set(sys.modules)))\n"
    )
    done = run_child(
        [sys.executable, "-c", code],
        "import pyblosc2's numcodecs codec",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
