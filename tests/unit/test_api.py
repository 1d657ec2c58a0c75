"""api.py and params.py: python-blosc2's signatures, defaults, buffer types and errors."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

import pyblosc2 as pb

DATA = np.arange(10_000, dtype=np.int32)


def check_roundtrip(src, **params) -> None:
    raw = pb._bytes.as_view(src).tobytes()
    chunk = pb.compress2(src, **params)
    assert pb.decompress2(chunk) == raw
    out = bytearray(len(raw))
    assert pb.decompress2(chunk, dst=out) is None and bytes(out) == raw
    arr = np.empty(len(raw), np.uint8)
    pb.decompress2(chunk, dst=arr)
    assert arr.tobytes() == raw
    mv = memoryview(bytearray(len(raw)))
    pb.decompress2(chunk, dst=mv)
    assert mv.tobytes() == raw


@pytest.mark.parametrize(
    "kind", ["bytes", "bytearray", "memoryview", "ndarray", "ndarray2d", "noncontig", "float_mv"]
)
def test_buffer_types(kind) -> None:
    src = {
        "bytes": DATA.tobytes(),
        "bytearray": bytearray(DATA.tobytes()),
        "memoryview": memoryview(DATA.tobytes()),
        "ndarray": DATA,
        "ndarray2d": DATA.reshape(100, 100),
        "noncontig": DATA.reshape(100, 100)[:, ::2],
        "float_mv": memoryview(np.linspace(0, 1, 999)),
    }[kind]
    check_roundtrip(src, typesize=4)


def test_cparams_defaults_match_python_blosc2() -> None:
    cp = pb.CParams()
    assert (cp.codec, cp.codec_meta, cp.clevel, cp.use_dict, cp.typesize, cp.blocksize) == (
        pb.Codec.ZSTD,
        0,
        5,
        False,
        8,
        0,
    )
    assert cp.splitmode == pb.SplitMode.AUTO_SPLIT and cp.tuner == pb.Tuner.STUNE
    assert cp.filters == [0, 0, 0, 0, 0, pb.Filter.SHUFFLE] and cp.filters_meta == [0] * 6


def test_signatures_match_python_blosc2(cblosc2) -> None:
    for name in ("compress", "decompress", "compress2", "decompress2", "get_cbuffer_sizes"):
        ours = inspect.signature(getattr(pb, name))
        theirs = inspect.signature(getattr(cblosc2, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        for p in theirs.parameters.values():
            if p.default is not inspect.Parameter.empty:
                mine = ours.parameters[p.name].default
                assert getattr(mine, "value", mine) == getattr(p.default, "value", p.default)
    assert [f for f in pb.CParams.__dataclass_fields__] == list(
        cblosc2.CParams.__dataclass_fields__
    )


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("clevel", 10, "clevel"),
        ("clevel", -1, "clevel"),
        ("typesize", 0, "typesize"),
        ("codec", 300, "codec"),
        ("filters", [1] * 7, "filters"),
        ("nthreads", 0, "nthreads"),
        ("splitmode", 9, "splitmode"),
        ("blocksize", -1, "blocksize"),
        ("clevel", True, "clevel"),
    ],
)
def test_cparams_validation(field, value, match) -> None:
    with pytest.raises(pb.ParamError, match=match):
        pb.CParams(**{field: value})


def test_cparams_json_roundtrip() -> None:
    cp = pb.CParams(
        codec=pb.Codec.LZ4,
        clevel=9,
        filters=[pb.Filter.SHUFFLE, pb.Filter.BYTEDELTA],
        filters_meta=[0, 0],
        typesize=4,
    )
    assert cp.filters_meta == [0, 4]  # BYTEDELTA's meta defaults to typesize, as in python-blosc2
    assert pb.CParams(**json.loads(json.dumps(cp.to_dict()))) == cp


def test_cparams_and_kwargs_are_exclusive() -> None:
    with pytest.raises(pb.ParamError, match="not both"):
        pb.compress2(DATA, cparams=pb.CParams(), clevel=3)


@pytest.mark.parametrize(
    "cparams", [pb.CParams(typesize=4, codec=pb.Codec.LZ4), {"typesize": 4, "codec": pb.Codec.LZ4}]
)
def test_cparams_object_or_dict(cparams) -> None:
    assert pb.compress2(DATA, cparams=cparams) == pb.compress2(DATA, typesize=4, codec=pb.Codec.LZ4)


def test_unknown_parameter() -> None:
    with pytest.raises(pb.ParamError, match="unknown compression parameters"):
        pb.compress2(DATA, compression_level=3)


def test_dst_too_small() -> None:
    with pytest.raises(pb.ParamError, match="dst"):
        pb.decompress2(pb.compress2(DATA), dst=bytearray(10))


def test_compress_requires_multiple_of_typesize() -> None:
    with pytest.raises(pb.ParamError, match="multiple of typesize"):
        pb.compress(b"12345", typesize=4)
    assert pb.decompress(pb.compress(b"12345", typesize=4, _ignore_multiple_size=True)) == b"12345"


def test_decompress_as_bytearray() -> None:
    out = pb.decompress(pb.compress(DATA, typesize=4), as_bytearray=True)
    assert isinstance(out, bytearray) and bytes(out) == DATA.tobytes()


def test_errors_are_value_errors() -> None:
    assert issubclass(pb.FormatError, ValueError) and issubclass(pb.ParamError, ValueError)
    assert issubclass(pb.CodecError, pb.FormatError)


def test_get_cbuffer_sizes_matches_c(cblosc2) -> None:
    c = cblosc2.compress2(DATA, typesize=4)
    assert pb.get_cbuffer_sizes(c) == cblosc2.get_cbuffer_sizes(c)


def test_trunc_prec_before_delta_is_refused() -> None:
    with pytest.raises(pb.ParamError, match="DELTA"):
        pb.compress2(
            np.linspace(0, 1, 1000),
            typesize=8,
            filters=[pb.Filter.TRUNC_PREC, pb.Filter.DELTA],
            filters_meta=[10, 0],
        )


def test_dict_needs_a_dict_codec() -> None:
    with pytest.raises(pb.ParamError, match="use_dict"):
        pb.compress2(DATA, codec=pb.Codec.ZLIB, use_dict=True)


def test_special_chunk_helpers() -> None:
    nan = pb.make_special_chunk(pb.SpecialValue.NAN, 80, 8)
    assert np.isnan(np.frombuffer(pb.decompress2(nan), np.float64)).all()
    zeros = pb.make_special_chunk(pb.SpecialValue.ZERO, 10**9, 4)
    assert len(zeros) == 32 and pb.getitem(zeros, 10, 12) == bytes(8)
    with pytest.raises(pb.ParamError, match="typesize"):
        pb.make_special_chunk(pb.SpecialValue.NAN, 80, 2)


@pytest.mark.parametrize(
    ("start", "stop", "blocks"),
    [(0, 1, {0}), (300, 310, {1}), (255, 257, {0, 1}), (9_990, 10_000, {39})],
)
def test_getitem_touches_only_needed_blocks(decoded_blocks, start, stop, blocks) -> None:
    chunk = pb.compress2(DATA, typesize=4, codec=pb.Codec.LZ4, blocksize=1024)
    assert pb.getitem(chunk, start, stop) == DATA[start:stop].tobytes()
    assert set(decoded_blocks) == blocks


def test_snappy_chunks_roundtrip() -> None:
    # C-Blosc 1.x builds with snappy are rare (the wheels have none); compformat 2 is ours.
    chunk = pb.compress_blosc1(DATA, typesize=4, clevel=5, codec=pb.Codec.SNAPPY)
    assert pb.get_chunk_header(chunk).compformat == 2
    assert pb.decompress2(chunk) == DATA.tobytes()


def test_lazy_chunks_are_not_implemented() -> None:
    chunk = bytearray(pb.compress2(DATA, typesize=4, codec=pb.Codec.LZ4))
    chunk[31] |= 0x08
    with pytest.raises(NotImplementedError, match="lazy"):
        pb.decompress2(bytes(chunk))


def test_vl_block_chunk_from_c(cblosc2) -> None:
    blocks = [b"hello world" * 300, bytes(5000), bytes(range(256)) * 20, b"abc"]
    chunk = cblosc2.blosc2_ext.vlcompress(
        blocks, codec=cblosc2.Codec.ZSTD, clevel=5, typesize=1, nthreads=1
    )
    assert pb.get_chunk_header(chunk).vl_blocks
    assert pb.decompress2(chunk) == b"".join(blocks)


def test_blosc1_wide_typesize_is_recorded_as_one(numcodecs_mod) -> None:
    """numcodecs hands the item size to C-Blosc 1.x, which records a typesize > 255 as 1."""
    data = np.array([bytes([i]) * 300 for i in range(40)], dtype="S300")
    theirs = bytes(numcodecs_mod.Blosc(cname="lz4", clevel=5).encode(data))
    ours = pb.compress_blosc1(data, typesize=300, clevel=5, codec=pb.Codec.LZ4)
    assert ours[3] == theirs[3] == 1
    assert bytes(numcodecs_mod.Blosc().decode(ours)) == data.tobytes()
