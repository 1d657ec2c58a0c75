"""python-blosc2's public plug-in API: ``register_codec`` / ``register_filter`` with Python
callables (pyblosc2.plugins, codecs/user.py, filters/user.py), without a reference library.

The autouse ``_isolated_registries`` fixture removes every registration after each test.
"""

from __future__ import annotations

import sys
import zlib

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.context import ChunkContext
from pyblosc2.errors import CodecError, ParamError, RegistrationError

F = pb.Filter


def rle_encoder(inp, out, meta, schunk):
    """Constant blocks as (value, count); 0 (store raw) otherwise."""
    items = inp.view(np.dtype(f"<u{schunk.typesize}"))
    if items.size and items.min() == items.max():
        out[: schunk.typesize] = inp[: schunk.typesize]
        out[schunk.typesize : schunk.typesize + 4] = np.frombuffer(
            items.size.to_bytes(4, sys.byteorder), np.uint8
        )
        return schunk.typesize + 4
    return 0


def rle_decoder(inp, out, meta, schunk):
    n = int.from_bytes(inp[schunk.typesize : schunk.typesize + 4].tobytes(), sys.byteorder)
    out.reshape(n, schunk.typesize)[:] = inp[: schunk.typesize]
    return n * schunk.typesize


def add_meta(inp, out, meta, schunk):
    np.add(inp, np.uint8(meta), out=out)


def sub_meta(inp, out, meta, schunk):
    np.subtract(inp, np.uint8(meta), out=out)


def _schunk(data: np.ndarray, **cparams) -> pb.SChunk:
    cp = {"typesize": data.itemsize, "nthreads": 1, **cparams}
    return pb.SChunk(chunksize=4000 * data.itemsize, data=data, cparams=cp, dparams={"nthreads": 1})


@pytest.mark.parametrize("value", [341, 7])
def test_codec_roundtrip_in_an_schunk(value: int) -> None:
    pb.register_codec("rle", 200, rle_encoder, rle_decoder)
    data = np.full(10_000, value, np.int32)
    s = _schunk(data, codec=200, filters=[], filters_meta=[], blocksize=4000)
    assert np.frombuffer(s[:], np.int32).tolist() == data.tolist()
    chunk = s.get_chunk(0)
    assert (chunk[2] >> 5, chunk[22]) == (6, 200)  # compformat 6, udcompcode (§2.3)
    assert len(chunk) < 100  # 4 blocks of 8 bytes each: the codec really ran


def test_incompressible_blocks_are_stored_raw() -> None:
    pb.register_codec("rle", 201, rle_encoder, rle_decoder)
    data = np.arange(10_000, dtype=np.int32)
    s = _schunk(data, codec=201, filters=[], filters_meta=[])
    assert np.array_equal(np.frombuffer(s[:], np.int32), data)


def test_codec_version_is_written_in_versionlz() -> None:
    pb.register_codec("rle", 202, rle_encoder, rle_decoder, version=3)
    chunk = pb.compress2(np.full(1000, 5, np.int32), codec=202, typesize=4)
    assert chunk[1] == 3


def test_filter_roundtrip_uses_meta() -> None:
    pb.register_filter(180, add_meta, sub_meta, "add")
    data = np.linspace(0, 1, 20_000)
    s = _schunk(data, filters=[180, F.SHUFFLE], filters_meta=[25, 0])
    assert np.array_equal(np.frombuffer(s[:], np.float64), data)
    plain = pb.compress2(data, typesize=8, filters=[F.SHUFFLE], nthreads=1)
    added = pb.compress2((data.view(np.uint8) + 25).view(np.float64), typesize=8,
                         filters=[F.SHUFFLE], nthreads=1)  # fmt: skip
    filtered = pb.compress2(data, typesize=8, filters=[180, F.SHUFFLE], filters_meta=[25, 0],
                            nthreads=1)  # fmt: skip
    assert filtered[32:] == added[32:] != plain[32:]


def test_plugins_receive_the_schunk_view() -> None:
    seen: list[tuple[int, dict]] = []

    def spy(inp, out, meta, schunk):
        assert isinstance(schunk, ChunkContext)
        seen.append((schunk.typesize, dict(schunk.meta)))
        out[:] = inp

    pb.register_filter(181, spy, spy, "spy")
    storage = pb.Storage(meta={"m": [1, 2]})
    s = pb.SChunk(chunksize=400, storage=storage, cparams={"typesize": 4, "filters": [181],
                  "nthreads": 1}, dparams={"nthreads": 1})  # fmt: skip
    s.append_data(np.arange(100, dtype=np.int32))
    s.decompress_chunk(0)
    assert seen and all(entry == (4, {"m": [1, 2]}) for entry in seen)


@pytest.mark.parametrize("bad", [159, 256, 0, -1, 32])
def test_ids_outside_the_user_range(bad: int) -> None:
    with pytest.raises(ValueError, match="160"):
        pb.register_codec("x", bad, rle_encoder, rle_decoder)
    with pytest.raises(ValueError, match="160"):
        pb.register_filter(bad, add_meta, sub_meta)


def test_both_functions_or_none() -> None:
    with pytest.raises(ValueError, match="both"):
        pb.register_codec("x", 210, rle_encoder, None)
    with pytest.raises(ValueError, match="both"):
        pb.register_filter(210, None, sub_meta)
    with pytest.raises(ValueError, match="name"):
        pb.register_filter(211)


def test_id_already_in_use() -> None:
    pb.register_codec("rle", 212, rle_encoder, rle_decoder)
    with pytest.raises(ValueError, match="already in use"):
        pb.register_codec("rle", 212, rle_encoder, rle_decoder)
    pb.register_filter(212, add_meta, sub_meta)
    with pytest.raises(ValueError, match="already in use"):
        pb.register_filter(212, add_meta, sub_meta)


def test_dynamic_plugins_name_what_is_missing() -> None:
    pb.register_codec("codec4", 254, None, None)
    pb.register_codec("codec4", 254, None, None)  # C: same name again is a no-op
    with pytest.raises(RegistrationError):
        pb.register_codec("other", 254, None, None)
    assert 254 not in pb.ucodecs_registry
    with pytest.raises(NotImplementedError, match="C plugin"):
        pb.compress2(np.arange(100, dtype=np.int32), codec=254, typesize=4)
    pb.register_filter(163, None, None, "ufilter_test")
    assert 163 not in pb.ufilters_registry
    with pytest.raises(NotImplementedError, match="C plugin"):
        pb.compress2(np.arange(100, dtype=np.int32), typesize=4, filters=[163])


def test_python_functions_replace_a_dynamic_registration_of_the_same_name() -> None:
    pb.register_codec("rle", 213, None, None)
    pb.register_codec("rle", 213, rle_encoder, rle_decoder)
    assert pb.ucodecs_registry[213] == ("rle", rle_encoder, rle_decoder)


@pytest.mark.parametrize("where", ["cparams", "dparams"])
@pytest.mark.parametrize("kind", ["codec", "filter"])
def test_python_plugins_refuse_threads(where: str, kind: str) -> None:
    pb.register_codec("rle", 214, rle_encoder, rle_decoder)
    pb.register_filter(214, add_meta, sub_meta)
    cp = {"codec": 214} if kind == "codec" else {"filters": [214], "filters_meta": [1]}
    cp["nthreads"] = 4 if where == "cparams" else 1
    dp = {"nthreads": 4 if where == "dparams" else 1}
    with pytest.raises(ValueError, match="multi-threading"):
        pb.SChunk(chunksize=400, cparams={"typesize": 4, **cp}, dparams=dp)


def test_registry_views_are_live_and_read_only() -> None:
    assert 215 not in pb.ucodecs_registry
    pb.register_codec("rle", 215, rle_encoder, rle_decoder)
    pb.register_filter(215, add_meta, sub_meta, "add")
    assert pb.ucodecs_registry[215] == ("rle", rle_encoder, rle_decoder)
    assert pb.ufilters_registry[215] == (add_meta, sub_meta)
    with pytest.raises(TypeError):
        pb.ucodecs_registry[216] = ("x", None, None)  # type: ignore[index]


@pytest.mark.parametrize("result", [None, -1, 10**9])
def test_bad_encoder_results_are_named(result) -> None:
    pb.register_codec("bad", 217, lambda i, o, m, s: result, rle_decoder)
    with pytest.raises(CodecError, match="user codec 217"):
        pb.compress2(np.arange(1000, dtype=np.int32), codec=217, typesize=4)


def zlib_encoder(inp, out, meta, schunk):
    packed = zlib.compress(inp.tobytes())
    if len(packed) >= len(out):
        return 0
    out[: len(packed)] = np.frombuffer(packed, np.uint8)
    return len(packed)


def test_bad_decoder_result_is_a_codec_error() -> None:
    pb.register_codec("zlib", 218, zlib_encoder, lambda i, o, m, s: 3)
    chunk = pb.compress2(np.arange(1000, dtype=np.int32) % 7, codec=218, typesize=4)
    with pytest.raises(CodecError, match=r"block 0 stream 0 \(zlib\)"):
        pb.decompress2(chunk)


def test_parameters_are_python_blosc2s() -> None:
    with pytest.raises(ParamError):
        pb.register_codec(12, 219, rle_encoder, rle_decoder)  # type: ignore[arg-type]
