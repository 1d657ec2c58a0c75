"""The zarr v3 ``blosc`` codec (pyblosc2.compat.zarr_codec) against zarr-python 3's own.

Both directions over cname x shuffle x typesize x chunk shapes (partial edge chunks, single- and
multi-block chunks); the data type rotates through the dtypes of each typesize so that every
dtype meets every cname. zarr's codec calls C-Blosc 1.x through numcodecs, so:

* zarr.json is byte-identical whichever codec wrote the array;
* stock zarr reads our arrays and ours reads stock zarr's, bit-exactly;
* every chunk has the same header as C's (the memcpyed bit aside: C-Blosc 1.x's BloscLZ gives
  up on some blocks ours compresses) and decodes with numcodecs/C-Blosc 1.x.

Snappy cannot be checked against C (the C-Blosc 1.x in the wheels has no snappy): our snappy
arrays round-trip through our codec, write compformat 2, and have zarr's metadata.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import run_child

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "zarr"
SRC = Path(pb.__file__).resolve().parent.parent


def _golden_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_zarr_golden", GOLDEN / "make_zarr_golden.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GOLDEN_MODULE = _golden_module()
GOLDEN_ARRAYS = GOLDEN_MODULE.ARRAYS
make_array = GOLDEN_MODULE.make_array  # deterministic data of any dtype

C_CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]
STRUCT3 = np.dtype([("a", "<i2"), ("b", "u1")])
DTYPES_BY_TYPESIZE = {
    1: ["u1", "b1"],
    2: ["i2", "f2"],
    4: ["f4", "i4"],
    8: ["f8", "c8", "M8[s]"],
    3: ["S3", STRUCT3],
}
CHUNKINGS = {
    # (shape, chunks): 2-D with edge chunks in both dimensions, single-block chunks
    "2d-edges": ((45, 70), (16, 24)),
    # 3-D, edge chunks in every dimension, 32768 items per chunk: several blocks (and splits)
    "3d-multiblock": ((3, 50, 700), (2, 32, 512)),
}
CASES = [
    (cname, shuffle, ts, DTYPES_BY_TYPESIZE[ts][(i + j) % len(DTYPES_BY_TYPESIZE[ts])], chunking)
    for i, cname in enumerate([*C_CNAMES, "snappy"])
    for j, shuffle in enumerate(SHUFFLES)
    for ts in DTYPES_BY_TYPESIZE
    for chunking in CHUNKINGS
]
C_CASES = [c for c in CASES if c[0] != "snappy"]
SNAPPY_CASES = [c for c in CASES if c[0] == "snappy"]


def _id(case) -> str:
    cname, shuffle, ts, dtype, chunking = case
    dt = np.dtype(dtype)
    return f"{cname}-{shuffle}-ts{ts}-{'struct3' if dt.names else dt.str[1:]}-{chunking}"


@pytest.fixture(scope="session")
def zc(zarr_mod) -> ModuleType:
    """pyblosc2.compat.zarr_codec (imports zarr)."""
    from pyblosc2.compat import zarr_codec

    return zarr_codec


@pytest.fixture
def use_ours(zarr_mod, zc):
    """Within the test, zarr resolves "blosc" metadata to our codec; zarr's registry and
    config are restored afterwards."""
    registry = vars(zarr_mod.registry)["__codec_registries"]["blosc"]
    before = dict(registry)
    zc.register()
    with zarr_mod.config.set(zc.ZARR_CONFIG):
        yield
    registry.clear()
    registry.update(before)


def _create(zarr, store_dict: dict, data: np.ndarray, chunks, compressor, write: bool = True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # S3 / structured: "no Zarr V3 specification"
        z = zarr.create_array(
            zarr.storage.MemoryStore(store_dict),
            shape=data.shape,
            chunks=chunks,
            dtype=data.dtype,
            compressors=compressor,
        )
        if write:
            z[...] = data
    return z


def _read(zarr, store_dict: dict):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(zarr.storage.MemoryStore(store_dict), mode="r")
        return z, z[...]


def _chunks(store_dict: dict) -> dict[str, bytes]:
    return {k: v.to_bytes() for k, v in store_dict.items() if k.startswith("c/")}


@functools.cache
def _stores(case) -> tuple[np.ndarray, dict, dict]:
    """(data, our store, zarr's store) of one case; zarr's store has only metadata for snappy."""
    import zarr

    from pyblosc2.compat.zarr_codec import BloscCodec

    cname, shuffle, _ts, dtype, chunking = case
    shape, chunks = CHUNKINGS[chunking]
    data = make_array(dtype, shape)
    ours: dict = {}
    theirs: dict = {}
    _create(zarr, ours, data, chunks, BloscCodec(cname=cname, clevel=5, shuffle=shuffle))
    _create(
        zarr,
        theirs,
        data,
        chunks,
        zarr.codecs.BloscCodec(cname=cname, clevel=5, shuffle=shuffle),
        write=cname != "snappy",
    )
    return data, ours, theirs


def _same_header(ours: bytes, theirs: bytes) -> bool:
    """Equal 16-byte headers but for cbytes and the memcpyed bit."""
    return (ours[:2], ours[2] & ~0x02, ours[3:12]) == (theirs[:2], theirs[2] & ~0x02, theirs[3:12])


# -- both directions ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_metadata_identical_to_zarr(zarr_mod, case) -> None:
    _, ours, theirs = _stores(case)
    assert ours["zarr.json"].to_bytes() == theirs["zarr.json"].to_bytes()


@pytest.mark.parametrize("case", C_CASES, ids=_id)
def test_stock_zarr_reads_ours(zarr_mod, case) -> None:
    data, ours, _ = _stores(case)
    z, got = _read(zarr_mod, ours)
    assert type(z.metadata.codecs[-1]) is zarr_mod.codecs.BloscCodec
    np.testing.assert_array_equal(got, data, strict=True)


@pytest.mark.parametrize("case", C_CASES, ids=_id)
def test_ours_reads_stock_zarr(zarr_mod, zc, use_ours, case) -> None:
    data, _, theirs = _stores(case)
    z, got = _read(zarr_mod, theirs)
    assert type(z.metadata.codecs[-1]) is zc.BloscCodec
    np.testing.assert_array_equal(got, data, strict=True)


@pytest.mark.parametrize("case", C_CASES, ids=_id)
def test_chunks_match_c_blosc1(zarr_mod, numcodecs_mod, cblosc1, case) -> None:
    _, ours, theirs = _stores(case)
    ours_chunks, theirs_chunks = _chunks(ours), _chunks(theirs)
    assert ours_chunks.keys() == theirs_chunks.keys() and ours_chunks
    for key, chunk in ours_chunks.items():
        raw = cblosc1.decompress(theirs_chunks[key])
        assert _same_header(chunk, theirs_chunks[key]), key
        assert cblosc1.decompress(chunk) == raw  # ours -> C-Blosc 1.x
        assert numcodecs_mod.Blosc().decode(chunk) == raw  # ours -> numcodecs
        assert pb.decompress(theirs_chunks[key]) == raw  # theirs -> ours


@pytest.mark.parametrize("case", SNAPPY_CASES, ids=_id)
def test_snappy_round_trip(zarr_mod, zc, use_ours, case) -> None:
    data, ours, _ = _stores(case)
    z, got = _read(zarr_mod, ours)
    assert type(z.metadata.codecs[-1]) is zc.BloscCodec
    np.testing.assert_array_equal(got, data, strict=True)
    for chunk in _chunks(ours).values():
        assert pb.get_chunk_header(chunk).compformat == 2  # Blosc1's snappy format


def test_snappy_cannot_be_checked_against_c(numcodecs_mod) -> None:
    """The reason the snappy cases are ours -> ours only (update them if this ever fails)."""
    assert "snappy" not in numcodecs_mod.blosc.list_compressors()


@pytest.mark.parametrize("clevel", [0, 1, 9])
@pytest.mark.parametrize("blocksize", [0, 1000, 4096])
@pytest.mark.parametrize("cname", ["lz4", "zstd"])
def test_clevel_and_blocksize(zarr_mod, use_ours, cname, clevel, blocksize) -> None:
    from pyblosc2.compat.zarr_codec import BloscCodec

    data = make_array("f4", (300, 70))
    ours: dict = {}
    theirs: dict = {}
    kw = dict(cname=cname, clevel=clevel, shuffle="shuffle", blocksize=blocksize)
    _create(zarr_mod, ours, data, (128, 64), BloscCodec(**kw))
    _create(zarr_mod, theirs, data, (128, 64), zarr_mod.codecs.BloscCodec(**kw))
    assert ours["zarr.json"].to_bytes() == theirs["zarr.json"].to_bytes()
    a, b = _chunks(ours), _chunks(theirs)
    assert all(_same_header(a[k], b[k]) for k in a)
    np.testing.assert_array_equal(_read(zarr_mod, theirs)[1], data)  # via ours (use_ours)


@pytest.mark.parametrize("dtype", ["u1", "f8", "S3"])
@pytest.mark.parametrize(
    ("typesize", "shuffle"), [(None, None), (None, "noshuffle"), (2, None), (16, "bitshuffle")]
)
def test_automatic_typesize_and_shuffle_are_recorded(zarr_mod, dtype, typesize, shuffle) -> None:
    from pyblosc2.compat.zarr_codec import BloscCodec

    data = make_array(dtype, (100,))
    ours: dict = {}
    theirs: dict = {}
    _create(
        zarr_mod, ours, data, (40,), BloscCodec(typesize=typesize, shuffle=shuffle), write=False
    )
    _create(
        zarr_mod,
        theirs,
        data,
        (40,),
        zarr_mod.codecs.BloscCodec(typesize=typesize, shuffle=shuffle),
        write=False,
    )
    meta = json.loads(ours["zarr.json"].to_bytes())["codecs"][-1]["configuration"]
    assert meta["typesize"] == (typesize or np.dtype(dtype).itemsize)
    assert meta["shuffle"] == (shuffle or ("bitshuffle" if dtype == "u1" else "shuffle"))
    assert ours["zarr.json"].to_bytes() == theirs["zarr.json"].to_bytes()


def test_sharded_array(zarr_mod, use_ours) -> None:
    """Blosc inside the sharding codec (evolved with the inner chunk spec) and as the index
    codec's neighbour: stock zarr reads what ours writes."""
    from pyblosc2.compat.zarr_codec import BloscCodec

    data = make_array("i4", (100, 90))
    store: dict = {}
    z = zarr_mod.create_array(
        zarr_mod.storage.MemoryStore(store),
        shape=data.shape,
        chunks=(10, 30),
        shards=(50, 90),
        dtype=data.dtype,
        compressors=BloscCodec(cname="zstd"),
    )
    z[...] = data
    np.testing.assert_array_equal(_read(zarr_mod, store)[1], data)
    with zarr_mod.config.set({"codecs.blosc": "zarr.codecs.blosc.BloscCodec"}):
        np.testing.assert_array_equal(_read(zarr_mod, store)[1], data)


# -- the codec object --------------------------------------------------------------------------

CONFIGS = [
    {},
    {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 4, "blocksize": 0},
    {"cname": "snappy", "clevel": 9, "shuffle": "bitshuffle", "typesize": 1, "blocksize": 65536},
    {"cname": "blosclz", "clevel": 0, "shuffle": "noshuffle"},
    {"cname": "zlib", "typesize": 300},
]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_to_dict_identical_to_zarr(zarr_mod, zc, kwargs) -> None:
    ours = zc.BloscCodec(**kwargs)
    theirs = zarr_mod.codecs.BloscCodec(**kwargs)
    assert json.dumps(ours.to_dict()) == json.dumps(theirs.to_dict())


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_from_dict_round_trips_through_json(zc, kwargs) -> None:
    codec = zc.BloscCodec(**kwargs)
    again = zc.BloscCodec.from_dict(json.loads(json.dumps(codec.to_dict())))
    assert again.to_dict() == codec.to_dict()


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_reads_zarr_written_metadata(zarr_mod, zc, kwargs) -> None:
    theirs = zarr_mod.codecs.BloscCodec(**kwargs).to_dict()
    assert zc.BloscCodec.from_dict(theirs).to_dict() == theirs


def test_accepts_zarr_enums(zarr_mod, zc) -> None:
    codec = zc.BloscCodec(
        cname=zarr_mod.codecs.BloscCname.lz4, shuffle=zarr_mod.codecs.BloscShuffle.bitshuffle
    )
    assert (codec.cname, codec.shuffle) == (zc.BloscCname.lz4, zc.BloscShuffle.bitshuffle)


BAD_VALUES = [
    (
        "cname",
        "lz5",
        r"cname must be one of \('lz4', 'lz4hc', 'blosclz', 'zstd', 'snappy', "
        r"'zlib'\), got 'lz5'",
    ),
    ("cname", 4, "cname must be one of .*, got 4"),
    ("clevel", 10, r"clevel must be an int in 0\.\.9, got 10"),
    ("clevel", -1, "clevel must be .*, got -1"),
    ("clevel", 5.0, "clevel must be .*, got 5.0"),
    ("clevel", True, "clevel must be .*, got True"),
    ("shuffle", 1, r"shuffle must be one of \('noshuffle', 'shuffle', 'bitshuffle'\), got 1"),
    ("shuffle", "byteshuffle", "shuffle must be one of .*, got 'byteshuffle'"),
    ("typesize", 0, r"typesize must be an int >= 1, got 0"),
    ("typesize", "4", "typesize must be .*, got '4'"),
    ("blocksize", -1, r"blocksize must be an int in 0\.\.2147483647 \(0: automatic\), got -1"),
    ("blocksize", 2**31, "blocksize must be .*, got 2147483648"),
]


@pytest.mark.parametrize(
    ("field", "value", "message"), BAD_VALUES, ids=[f"{f}={v!r}" for f, v, _ in BAD_VALUES]
)
def test_bad_values_name_the_field(zc, field, value, message) -> None:
    with pytest.raises(pb.ParamError, match=message):
        zc.BloscCodec(**{field: value})
    config = zc.BloscCodec().to_dict()
    config["configuration"][field] = value
    with pytest.raises(pb.ParamError, match=message):
        zc.BloscCodec.from_dict(config)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "zstd", "configuration": {}}, "name must be 'blosc', got 'zstd'"),
        ({"name": "blosc"}, "configuration must be a JSON object, got None"),
        (
            {"name": "blosc", "configuration": {"level": 5}},
            r"configuration keys must be among .*, got \['level'\]",
        ),
        ({"name": "blosc", "configuration": {}, "x": 1}, r"metadata keys .*, got \['x'\]"),
        ([], "codec metadata must be a JSON object"),
    ],
)
def test_bad_metadata(zc, data, message) -> None:
    with pytest.raises(pb.ParamError, match=message):
        zc.BloscCodec.from_dict(data)


def test_pyblosc2_does_not_import_zarr_or_numcodecs() -> None:
    code = (
        "import sys, pyblosc2, pyblosc2.compat; from pyblosc2.compat import Blosc; "
        "print([m for m in ('zarr', 'numcodecs', 'blosc', 'blosc2') if m in sys.modules])"
    )
    out = run_child(
        [sys.executable, "-c", code],
        "import pyblosc2 and its compat package",
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert out.stdout.strip() == "[]"


# -- how zarr finds the codec ------------------------------------------------------------------


def test_pyproject_declares_the_entry_point() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())[
        "project"
    ]
    assert project["entry-points"]["zarr.codecs"] == {
        "blosc": "pyblosc2.compat.zarr_codec:BloscCodec",
        "numcodecs.blosc2": "pyblosc2.compat.zarr_blosc2:Blosc2Codec",
    }
    assert project["entry-points"]["numcodecs.codecs"] == {
        "blosc2": "pyblosc2.compat.numcodecs_blosc2:Blosc2"
    }
    assert project["optional-dependencies"]["zarr"] == ["zarr>=3", "numcodecs>=0.12"]


@pytest.mark.parametrize("how", ["config", "environment"])
def test_entry_point_and_config_select_our_codec(zarr_mod, tmp_path, how) -> None:
    """An installed pyblosc2 (a dist-info with our entry point) + zarr's config is all it
    takes: no import of pyblosc2 in the user's code."""
    dist = tmp_path / "pyblosc2-0.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pyblosc2\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text(
        "[zarr.codecs]\nblosc = pyblosc2.compat.zarr_codec:BloscCodec\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(tmp_path)])}
    setup = "import zarr\n"
    if how == "config":
        setup += "zarr.config.set({'codecs.blosc': 'pyblosc2.compat.zarr_codec.BloscCodec'})\n"
    else:
        env["ZARR_CODECS__BLOSC"] = "pyblosc2.compat.zarr_codec.BloscCodec"
    code = setup + (
        "import numpy as np\n"
        "z = zarr.create_array({}, shape=(100,), dtype='i4', "
        "compressors={'name': 'blosc', 'configuration': {'cname': 'lz4'}})\n"
        "z[:] = np.arange(100)\n"
        "print(type(z.metadata.codecs[-1]).__module__, int(z[99]))\n"
    )
    out = run_child(
        [sys.executable, "-c", code],
        "write and read a zarr array through the entry point",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pyblosc2.compat.zarr_codec", "99"]


def test_register_then_config(zarr_mod, zc, use_ours) -> None:
    assert zarr_mod.registry.get_codec_class("blosc") is zc.BloscCodec


# -- golden store written by zarr-python 3 + numcodecs (C-Blosc 1.x) ---------------------------


@pytest.fixture
def numcodecs_uses_ours(numcodecs_mod):
    """Within the test, numcodecs' registry (zarr v2 metadata) maps "blosc" to ours."""
    from pyblosc2.compat import Blosc

    registry = numcodecs_mod.registry.codec_registry
    old = registry["blosc"]
    numcodecs_mod.register_codec(Blosc)
    yield
    registry["blosc"] = old


@pytest.mark.parametrize("name", sorted(GOLDEN_ARRAYS))
def test_golden_store_reads_with_ours(zarr_mod, use_ours, numcodecs_uses_ours, name) -> None:
    gold = GOLDEN_MODULE
    spec = GOLDEN_ARRAYS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr_mod.open_array(
            zarr_mod.storage.LocalStore(GOLDEN / "store.zarr" / name, read_only=True)
        )
        got = z[...]
    if spec["zarr_format"] == 2:
        compressor = z.metadata.compressor
    elif "shards" in spec:
        compressor = z.metadata.codecs[0].codecs[-1]  # inside the sharding codec
    else:
        compressor = z.metadata.codecs[-1]
    assert type(compressor).__module__.startswith("pyblosc2.compat")
    np.testing.assert_array_equal(got, gold.expected(name), strict=True)


@pytest.mark.parametrize(
    "name",
    sorted(n for n, s in GOLDEN_ARRAYS.items() if s["zarr_format"] == 3 and "shards" not in s),
)
def test_golden_metadata_is_what_ours_writes(zarr_mod, zc, name) -> None:
    gold = GOLDEN_MODULE
    spec = GOLDEN_ARRAYS[name]
    store: dict = {}
    data = gold.expected(name)
    _create(zarr_mod, store, data, spec["chunks"], zc.BloscCodec(**spec["codec"]), write=False)
    golden_json = (GOLDEN / "store.zarr" / name / "zarr.json").read_bytes()
    assert json.loads(store["zarr.json"].to_bytes()) == json.loads(golden_json)


# -- bad input ---------------------------------------------------------------------------------


def _one_chunk_store(zarr, codec) -> tuple[dict, str]:
    store: dict = {}
    _create(zarr, store, make_array("f4", (40_000,)), (40_000,), codec)
    return store, "c/0"


def _corrupt(chunk: bytes, how: str) -> bytes:
    b = bytearray(chunk)
    kind, _, arg = how.partition(":")
    if kind == "truncate":
        return bytes(b[: int(arg) if int(arg) >= 0 else len(b) + int(arg)])
    if kind == "set32":  # a 32-bit size field at offset arg
        offset, value = (int(x) for x in arg.split("="))
        b[offset : offset + 4] = (value % 2**32).to_bytes(4, "little")
    elif kind == "byte":
        offset, value = (int(x) for x in arg.split("="))
        b[offset] = value
    return bytes(b)


CORRUPTIONS = [
    *(f"truncate:{n}" for n in (0, 1, 3, 4, 8, 12, 15, 16, 17, 20, -1, -100)),
    "set32:4=-1",
    "set32:4=2147483647",
    "set32:4=160001",
    "set32:8=0",
    "set32:8=-1",
    "set32:8=7",
    "set32:8=2147483647",
    "set32:12=0",
    "set32:12=-1",
    "set32:12=2147483647",
    "set32:16=0",
    "set32:16=-1",
    "set32:16=2147483647",  # bstarts[0]
    "byte:3=0",  # typesize
    "byte:2=177",
    "byte:2=225",  # compformat 5 and 7
]


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_corrupt_chunks_raise_format_error(zarr_mod, zc, use_ours, how) -> None:
    store, key = _one_chunk_store(
        zarr_mod, zc.BloscCodec(cname="lz4", typesize=4, shuffle="shuffle")
    )
    chunk = store[key].to_bytes()
    store[key] = type(store[key]).from_bytes(_corrupt(chunk, how))
    with pytest.raises(pb.FormatError, match=r"^chunk( header)?: \w+(\[0\])? at offset \d+ is "):
        _read(zarr_mod, store)


def test_zero_nbytes_is_not_silent(zarr_mod, zc, use_ours) -> None:
    """nbytes = 0 with a payload behind the header: C-Blosc2 returns an empty result; the
    chunk layer rejects it, and zarr surfaces pyblosc2's error."""
    store, key = _one_chunk_store(
        zarr_mod, zc.BloscCodec(cname="lz4", typesize=4, shuffle="shuffle")
    )
    store[key] = type(store[key]).from_bytes(_corrupt(store[key].to_bytes(), "set32:4=0"))
    with pytest.raises(pb.FormatError, match="empty chunk"):
        _read(zarr_mod, store)
