"""numcodecs-style ``Blosc`` (pyblosc2.compat.numcodecs_codec) against numcodecs' ``Blosc``.

Chunks: cname x shuffle (0, 1, 2, -1) x typesize, sizes rotating through memcpy-small, one
block and many blocks with a leftover: same header as C-Blosc 1.x (the memcpyed bit aside:
C-Blosc 1.x's BloscLZ gives up on some blocks ours compresses), ours decode with numcodecs and
python-blosc, theirs with ours. Then the codec object (config, repr, buffers, ``out=``), and
zarr v2 arrays written with either codec and read with the other.

Snappy: numcodecs' C-Blosc 1.x has none, so snappy is checked ours -> ours only.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.compat import Blosc

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "zarr"


def _golden_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_zarr_golden", GOLDEN / "make_zarr_golden.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


make_array = _golden_module().make_array  # deterministic data of any dtype

C_CNAMES = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
SHUFFLES = [0, 1, 2, -1]
DTYPES_BY_TYPESIZE = {
    1: ["u1", "b1"],
    2: ["i2", "f2"],
    4: ["f4", "i4"],
    8: ["f8", "c8", "M8[s]"],
    3: ["S3"],
    12: ["V12"],
}
SIZES = [10, 100, 1001, 40_000, 300_000]  # items: memcpy (<128 bytes), 1 block, many blocks
CASES = [
    (cname, shuffle, ts, dts[(i + j) % len(dts)], SIZES[(i + j + k) % len(SIZES)])
    for i, cname in enumerate(C_CNAMES)
    for j, shuffle in enumerate(SHUFFLES)
    for k, (ts, dts) in enumerate(DTYPES_BY_TYPESIZE.items())
]


def _id(case) -> str:
    cname, shuffle, ts, dtype, n = case
    return f"{cname}-shuffle{shuffle}-ts{ts}-{np.dtype(dtype).str[1:]}-{n}"


def _same_header(ours: bytes, theirs: bytes) -> bool:
    """Equal 16-byte headers but for cbytes and the memcpyed bit."""
    return (ours[:2], ours[2] & ~0x02, ours[3:12]) == (theirs[:2], theirs[2] & ~0x02, theirs[3:12])


@pytest.fixture
def numcodecs_uses_ours(numcodecs_mod):
    """Within the test, numcodecs' registry (zarr v2 metadata) maps "blosc" to ours."""
    registry = numcodecs_mod.registry.codec_registry
    old = registry["blosc"]
    numcodecs_mod.register_codec(Blosc)
    yield
    registry["blosc"] = old


# -- chunks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_chunks_both_directions(numcodecs_mod, cblosc1, case) -> None:
    cname, shuffle, _ts, dtype, n = case
    data = make_array(dtype, (n,))
    raw = data.tobytes()
    ours = Blosc(cname=cname, clevel=5, shuffle=shuffle).encode(data)
    theirs = numcodecs_mod.Blosc(cname=cname, clevel=5, shuffle=shuffle).encode(data)
    assert _same_header(ours, theirs)
    assert numcodecs_mod.Blosc().decode(ours) == raw  # ours -> numcodecs
    assert cblosc1.decompress(ours) == raw  # ours -> C-Blosc 1.x
    assert Blosc().decode(theirs) == raw  # theirs -> ours
    assert Blosc().decode(ours) == raw


@pytest.mark.parametrize("clevel", [0, 1, 9])
@pytest.mark.parametrize("blocksize", [0, 100, 1000, 4096, 1 << 20])
@pytest.mark.parametrize("cname", ["lz4", "zstd", "blosclz"])
def test_clevel_and_blocksize(numcodecs_mod, cname, clevel, blocksize) -> None:
    data = make_array("f4", (50_000,))
    kw = dict(cname=cname, clevel=clevel, shuffle=1, blocksize=blocksize)
    ours, theirs = Blosc(**kw).encode(data), numcodecs_mod.Blosc(**kw).encode(data)
    assert _same_header(ours, theirs)
    assert numcodecs_mod.Blosc().decode(ours) == data.tobytes()


@pytest.mark.parametrize("nbytes", [1, 127, 128, 1001, 70_001])
@pytest.mark.parametrize("typesize", [3, 4, 255, 256, 300])
def test_explicit_typesize(numcodecs_mod, cblosc1, typesize, nbytes) -> None:
    """``typesize=`` overrides the buffer's itemsize; above 255 C-Blosc 1.x uses 1."""
    raw = make_array("S5", (nbytes // 5 + 1,)).tobytes()[:nbytes]
    ours = Blosc(cname="lz4", typesize=typesize).encode(raw)
    theirs = numcodecs_mod.Blosc(cname="lz4", typesize=typesize).encode(raw)
    assert _same_header(ours, theirs)
    assert ours[3] == (typesize if typesize <= 255 else 1)
    assert cblosc1.decompress(ours) == raw


@pytest.mark.parametrize("shuffle", SHUFFLES)
@pytest.mark.parametrize("dtype", ["u1", "f8", "V12"])
def test_snappy_round_trip(shuffle, dtype) -> None:
    data = make_array(dtype, (20_000,))
    chunk = Blosc(cname="snappy", shuffle=shuffle).encode(data)
    assert pb.get_chunk_header(chunk).compformat == 2  # Blosc1's snappy
    assert Blosc().decode(chunk) == data.tobytes()


def test_numcodecs_has_no_snappy(numcodecs_mod) -> None:
    """Why snappy is checked ours -> ours only (update the snappy tests if this fails)."""
    with pytest.raises(ValueError, match="snappy"):
        numcodecs_mod.Blosc(cname="snappy").encode(bytes(1000))


def test_empty_buffer(numcodecs_mod) -> None:
    ours, theirs = Blosc().encode(b""), numcodecs_mod.Blosc().encode(b"")
    assert ours == theirs and len(ours) == 16
    assert Blosc().decode(ours) == b""  # numcodecs' decode raises RuntimeError here


# -- buffers -----------------------------------------------------------------------------------

DATA = make_array("f4", (64, 50))
INPUTS = {
    "bytes": lambda: DATA.tobytes(),
    "bytearray": lambda: bytearray(DATA.tobytes()),
    "memoryview": lambda: memoryview(DATA.tobytes()),
    "memoryview-f": lambda: memoryview(DATA.reshape(-1)),
    "ndarray-2d": lambda: DATA,
    "ndarray-F": lambda: np.asfortranarray(DATA),
    "ndarray-0d": lambda: np.float64(1.5).reshape(()),
    "big-endian": lambda: DATA.astype(">f4"),
}


@pytest.mark.parametrize("kind", INPUTS)
def test_encode_buffer_kinds_like_numcodecs(numcodecs_mod, kind) -> None:
    src = INPUTS[kind]()
    ours, theirs = Blosc(cname="zstd").encode(src), numcodecs_mod.Blosc(cname="zstd").encode(src)
    assert _same_header(ours, theirs)  # same typesize (the buffer's itemsize), same layout
    assert Blosc().decode(ours) == numcodecs_mod.Blosc().decode(theirs)


@pytest.mark.parametrize(
    ("src", "message"),
    [
        (DATA[:, ::2], "contiguous memory"),
        (np.array([1, "a"], dtype=object), "object array"),
        ("text", "buffer protocol"),
    ],
)
def test_encode_refuses(src, message) -> None:
    with pytest.raises(pb.ParamError, match=message):
        Blosc().encode(src)


OUTS = {
    "bytearray": lambda n: bytearray(n),
    "uint8": lambda n: np.empty(n, np.uint8),
    "float32-2d": lambda n: np.empty((64, 50), np.float32),
    "float32-F": lambda n: np.empty((64, 50), np.float32, order="F"),
    "memoryview": lambda n: memoryview(bytearray(n)),
    "larger": lambda n: bytearray(n + 100),
}


@pytest.mark.parametrize("kind", OUTS)
def test_decode_into_out(kind) -> None:
    chunk = Blosc(cname="lz4").encode(DATA)
    out = OUTS[kind](DATA.nbytes)
    assert Blosc().decode(chunk, out=out) is out
    assert np.asarray(out).tobytes(order="A")[: DATA.nbytes] == DATA.tobytes()  # memory order


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (bytearray(10), "dst has 10 bytes"),
        (b"\0" * DATA.nbytes, "writable"),
        (np.empty((64, 100), np.float32)[:, ::2], "contiguous memory"),
    ],
)
def test_decode_refuses_out(out, message) -> None:
    with pytest.raises(pb.ParamError, match=message):
        Blosc().decode(Blosc().encode(DATA), out=out)


# -- the codec object --------------------------------------------------------------------------

CONFIGS = [
    {},
    {"cname": "zstd", "clevel": 9, "shuffle": 2, "blocksize": 65536},
    {"cname": "blosclz", "clevel": 0, "shuffle": -1},
    {"cname": "lz4hc", "shuffle": 0, "typesize": 4},
    {"cname": "zlib", "clevel": 1, "blocksize": 128},
]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_get_config_and_repr_like_numcodecs(numcodecs_mod, kwargs) -> None:
    ours, theirs = Blosc(**kwargs), numcodecs_mod.Blosc(**kwargs)
    assert ours.get_config() == theirs.get_config()
    assert json.dumps(ours.get_config()) == json.dumps(theirs.get_config())
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_config_round_trips_through_json(numcodecs_mod, kwargs) -> None:
    codec = Blosc(**kwargs)
    config = json.loads(json.dumps(codec.get_config()))
    assert Blosc.from_config(config).get_config() == codec.get_config()
    theirs = numcodecs_mod.Blosc(**kwargs).get_config()
    theirs.pop("id")  # numcodecs' registry strips the id before from_config
    assert Blosc.from_config(theirs).get_config() == codec.get_config()


def test_class_attributes_like_numcodecs(numcodecs_mod) -> None:
    names = ["codec_id", "NOSHUFFLE", "SHUFFLE", "BITSHUFFLE", "AUTOSHUFFLE", "max_buffer_size"]
    assert [getattr(Blosc, n) for n in names] == [getattr(numcodecs_mod.Blosc, n) for n in names]


def test_is_a_zarr_numcodec(zarr_mod) -> None:
    from zarr.abc.numcodec import _is_numcodec

    assert _is_numcodec(Blosc())


BAD = [
    (
        "cname",
        "lz5",
        r"cname must be one of \('lz4', 'lz4hc', 'blosclz', 'zstd', 'snappy', "
        r"'zlib'\), got 'lz5'",
    ),
    ("clevel", 10, r"clevel must be an int in 0\.\.9, got 10"),
    ("clevel", "5", "clevel must be .*, got '5'"),
    ("shuffle", 3, r"shuffle must be one of \(0, 1, 2, -1\), got 3"),
    ("shuffle", "shuffle", "shuffle must be one of .*, got 'shuffle'"),
    ("blocksize", -1, "blocksize must be an int in 0.*, got -1"),
    ("typesize", 0, "typesize must be None or an int >= 1, got 0"),
    ("id", "zstd", r"id must be 'blosc', got 'zstd'"),
    ("level", 5, r"unknown Blosc configuration keys \['level'\]"),
]


@pytest.mark.parametrize(("field", "value", "message"), BAD, ids=[f"{f}={v!r}" for f, v, _ in BAD])
def test_bad_config_names_the_field(field, value, message) -> None:
    with pytest.raises(pb.ParamError, match=message):
        Blosc.from_config({**Blosc().get_config(), field: value})


# -- zarr v2 arrays ----------------------------------------------------------------------------

CHUNKINGS = [
    ((45, 70), (16, 24), "C"),
    ((45, 70), (16, 24), "F"),
    ((3, 50, 700), (2, 32, 512), "C"),
]
ZARR_CASES = [
    (cname, shuffle, dts[(i + j) % len(dts)], (i + j + k) % len(CHUNKINGS))
    for i, cname in enumerate(C_CNAMES)
    for j, shuffle in enumerate(SHUFFLES)
    for k, dts in enumerate(DTYPES_BY_TYPESIZE.values())
]


def _zid(case) -> str:
    cname, shuffle, dtype, c = case
    shape, _, order = CHUNKINGS[c]
    return f"{cname}-shuffle{shuffle}-{np.dtype(dtype).str[1:]}-{len(shape)}d{order}"


def _write_v2(zarr, compressor, data, chunks, order) -> dict:
    store: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(
            zarr.storage.MemoryStore(store),
            shape=data.shape,
            chunks=chunks,
            dtype=data.dtype,
            compressors=compressor,
            zarr_format=2,
            order=order,
        )
        z[...] = data
    return store


def _read_v2(zarr, store: dict):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(zarr.storage.MemoryStore(store), mode="r")
        return z.metadata.compressor, z[...]


@pytest.mark.parametrize("case", ZARR_CASES, ids=_zid)
def test_zarr_v2_both_directions(zarr_mod, numcodecs_mod, case, request) -> None:
    cname, shuffle, dtype, c = case
    shape, chunks, order = CHUNKINGS[c]
    data = make_array(dtype, shape)
    kw = dict(cname=cname, clevel=5, shuffle=shuffle)
    ours = _write_v2(zarr_mod, Blosc(**kw), data, chunks, order)
    theirs = _write_v2(zarr_mod, numcodecs_mod.Blosc(**kw), data, chunks, order)
    assert ours[".zarray"].to_bytes() == theirs[".zarray"].to_bytes()
    assert ours.keys() == theirs.keys()
    assert all(
        _same_header(ours[k].to_bytes(), theirs[k].to_bytes())
        for k in ours
        if not k.startswith(".")
    )
    compressor, got = _read_v2(zarr_mod, ours)  # stock zarr + numcodecs read ours
    assert type(compressor) is numcodecs_mod.Blosc
    np.testing.assert_array_equal(got, data, strict=True)
    request.getfixturevalue("numcodecs_uses_ours")
    compressor, got = _read_v2(zarr_mod, theirs)  # ours reads stock zarr's
    assert type(compressor) is Blosc
    np.testing.assert_array_equal(got, data, strict=True)


@pytest.mark.parametrize("shuffle", SHUFFLES)
def test_zarr_v2_snappy_round_trip(zarr_mod, numcodecs_uses_ours, shuffle) -> None:
    data = make_array("f8", (45, 70))
    store = _write_v2(zarr_mod, Blosc(cname="snappy", shuffle=shuffle), data, (16, 24), "C")
    assert json.loads(store[".zarray"].to_bytes())["compressor"]["cname"] == "snappy"
    np.testing.assert_array_equal(_read_v2(zarr_mod, store)[1], data, strict=True)


def test_zarr_v3_numcodecs_wrapper(zarr_mod, numcodecs_mod, numcodecs_uses_ours) -> None:
    """zarr.codecs.numcodecs.Blosc ("numcodecs.blosc" in v3 metadata) resolves through
    numcodecs' registry: ours writes, and stock numcodecs reads afterwards."""
    from zarr.codecs.numcodecs import Blosc as Wrapper

    data = make_array("i4", (1000,))
    store: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "numcodecs codecs are not in the v3 spec"
        z = zarr_mod.create_array(
            zarr_mod.storage.MemoryStore(store),
            shape=data.shape,
            chunks=(300,),
            dtype=data.dtype,
            compressors=Wrapper(cname="zstd", shuffle=1),
        )
        z[...] = data
        assert type(z.metadata.codecs[-1]._codec) is Blosc
    numcodecs_mod.registry.codec_registry["blosc"] = numcodecs_mod.Blosc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr_mod.open_array(zarr_mod.storage.MemoryStore(store), mode="r")
        assert type(z.metadata.codecs[-1]._codec) is numcodecs_mod.Blosc
        np.testing.assert_array_equal(z[...], data)


# -- bad input ---------------------------------------------------------------------------------

CORRUPTIONS = {
    "empty": lambda c: b"",
    "header-only": lambda c: c[:15],
    "truncated-by-one": lambda c: c[:-1],
    "half": lambda c: c[: len(c) // 2],
    "cbytes-huge": lambda c: c[:12] + (2**31 - 1).to_bytes(4, "little") + c[16:],
    "blocksize-zero": lambda c: c[:8] + bytes(4) + c[12:],
    "bstart-beyond-end": lambda c: c[:16] + (len(c) + 5).to_bytes(4, "little") + c[20:],
    "compformat-7": lambda c: c[:2] + bytes([c[2] | 0xE0]) + c[3:],
}
#: The header field each corruption is reported against.
CORRUPT_FIELD = {
    "empty": "length",
    "header-only": "length",
    "truncated-by-one": "cbytes",
    "half": "cbytes",
    "cbytes-huge": "cbytes",
    "blocksize-zero": "blocksize",
    "bstart-beyond-end": r"bstarts\[0\]",
    "compformat-7": "compformat",
}


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_corrupt_chunk_in_v2_store(zarr_mod, numcodecs_uses_ours, how) -> None:
    data = make_array("f4", (40_000,))
    store = _write_v2(zarr_mod, Blosc(cname="lz4"), data, (40_000,), "C")
    chunk = store["0"].to_bytes()
    store["0"] = type(store["0"]).from_bytes(CORRUPTIONS[how](chunk))
    with pytest.raises(pb.FormatError, match=rf"^chunk( header)?: {CORRUPT_FIELD[how]} at offset"):
        _read_v2(zarr_mod, store)


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_corrupt_chunk_decode(how) -> None:
    chunk = Blosc(cname="zstd").encode(make_array("f8", (10_000,)))
    with pytest.raises(pb.FormatError, match=rf"^chunk( header)?: {CORRUPT_FIELD[how]} at offset"):
        Blosc().decode(CORRUPTIONS[how](chunk))
