"""User codecs and filters interoperate with python-blosc2's Python plugins, both directions.

python-blosc2 4.14.1 registers Python callbacks with ``blosc2.register_codec(name, id,
encoder, decoder)`` and ``blosc2.register_filter(id, forward, backward, name)``; it uses them
only inside an SChunk and only with one thread. Its registry cannot be undone, so the C-side
plugins are registered once per session. The same zlib codec (id 180) and XOR filter (id 170)
as tests.helpers' pyblosc2 plugins are written for C here.
"""

from __future__ import annotations

import zlib
from types import ModuleType

import numpy as np
import pytest

import pyblosc2 as pb
from tests.helpers import USER_CODEC_ID, USER_FILTER_ID, make_data

F = pb.Filter
SPLITS = ["AUTO_SPLIT", "ALWAYS_SPLIT", "NEVER_SPLIT"]
PIPELINES = {
    "xor": ([USER_FILTER_ID], [0x5A]),
    "xor+shuffle": ([USER_FILTER_ID, int(F.SHUFFLE)], [0x25, 0]),  # python-blosc2: int8 metas
    "shuffle": ([int(F.SHUFFLE)], [0]),
    "bitshuffle+xor": ([int(F.BITSHUFFLE), USER_FILTER_ID], [0, 0x0F]),
}


def _c_encoder(src, dst, meta, schunk) -> int:
    out = zlib.compress(src.tobytes(), 6)
    if len(out) > dst.size:
        return 0
    dst[: len(out)] = np.frombuffer(out, np.uint8)
    return len(out)


def _c_decoder(src, dst, meta, schunk) -> int:
    out = zlib.decompress(src.tobytes())
    dst[: len(out)] = np.frombuffer(out, np.uint8)
    return len(out)


def _c_xor(src, dst, meta, schunk) -> None:
    np.bitwise_xor(src, np.uint8(meta), out=dst)


@pytest.fixture(scope="session")
def c_plugins(cblosc2) -> ModuleType:
    """python-blosc2 with the zlib codec and the XOR filter registered (for the session)."""
    if USER_CODEC_ID not in cblosc2.ucodecs_registry:
        cblosc2.register_codec("zlib-plugin", USER_CODEC_ID, _c_encoder, _c_decoder)
    if USER_FILTER_ID not in cblosc2.ufilters_registry:
        cblosc2.register_filter(USER_FILTER_ID, _c_xor, _c_xor, "xor")
    return cblosc2


@pytest.fixture
def c_single_thread(c_plugins):
    """Python plugins refuse threads: C opens files with blosc2.nthreads."""
    old = c_plugins.nthreads
    c_plugins.set_nthreads(1)
    yield c_plugins
    c_plugins.set_nthreads(old)


def _c_schunk(blosc2: ModuleType, chunksize: int, pipe: str, split: str, **kw):
    filters, metas = PIPELINES[pipe]
    return blosc2.SChunk(
        chunksize=chunksize,
        cparams=blosc2.CParams(
            codec=USER_CODEC_ID,
            clevel=5,
            typesize=4,
            filters=filters,
            filters_meta=metas,
            splitmode=blosc2.SplitMode[split],
            nthreads=1,
        ),
        dparams=blosc2.DParams(nthreads=1),
        **kw,
    )


def _our_params(pipe: str, split: str) -> dict:
    filters, metas = PIPELINES[pipe]
    return dict(
        codec=USER_CODEC_ID,
        clevel=5,
        typesize=4,
        filters=filters,
        filters_meta=metas,
        splitmode=pb.SplitMode[split],
        nthreads=1,
    )


@pytest.mark.usefixtures("user_plugins")
@pytest.mark.parametrize("kind", ["smooth", "random", "runs"])
@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("pipe", PIPELINES)
def test_chunks_both_directions(c_plugins, pipe: str, split: str, kind: str) -> None:
    data = make_data(kind, 80_000, 4)
    ours = pb.compress2(data, **_our_params(pipe, split))
    s = _c_schunk(c_plugins, len(data), pipe, split)
    s.append_data(np.frombuffer(data, "<i4"))
    theirs = s.get_chunk(0)
    assert pb.decompress2(theirs) == data  # theirs → ours
    s.append_chunk(ours)
    assert s.decompress_chunk(1) == data  # ours → theirs
    assert ours == theirs  # zlib is the same library on both sides


@pytest.mark.usefixtures("user_plugins")
def test_c_frame_file_read_by_us(c_single_thread, tmp_path) -> None:
    data = np.arange(50_000, dtype="<i4") % 1234
    path = tmp_path / "c.b2frame"
    s = _c_schunk(
        c_single_thread, 200_000, "xor+shuffle", "AUTO_SPLIT", urlpath=str(path), contiguous=True
    )
    s.append_data(data)
    s.append_data(data[:1000])
    del s
    ours = pb.open(str(path), mode="r")
    assert isinstance(ours, pb.SChunk)
    assert ours.cparams.codec == USER_CODEC_ID
    assert ours[:] == data.tobytes() + data[:1000].tobytes()


@pytest.mark.usefixtures("user_plugins")
@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
def test_our_frame_file_read_by_c(c_single_thread, tmp_path, contiguous: bool) -> None:
    data = np.arange(50_000, dtype="<i4") % 1234
    path = tmp_path / ("ours.b2frame" if contiguous else "ours.sframe")
    s = pb.SChunk(
        chunksize=200_000,
        urlpath=str(path),
        contiguous=contiguous,
        mode="w",
        cparams=pb.CParams(**_our_params("xor+shuffle", "AUTO_SPLIT")),
    )
    s.append_data(data)
    s.append_data(data[:1000])
    del s
    theirs = c_single_thread.open(str(path), mode="r")
    assert theirs.cparams.codec == USER_CODEC_ID
    assert [getattr(f, "value", f) for f in theirs.cparams.filters[:2]] == [USER_FILTER_ID, 1]
    got = b"".join(theirs.decompress_chunk(n) for n in range(theirs.nchunks))
    assert got == data.tobytes() + data[:1000].tobytes()


@pytest.mark.usefixtures("user_plugins")
def test_frames_byte_identical(c_single_thread, tmp_path) -> None:
    data = np.arange(50_000, dtype="<i4") % 1234
    paths = [tmp_path / "c.b2frame", tmp_path / "ours.b2frame"]
    s = _c_schunk(
        c_single_thread,
        200_000,
        "xor+shuffle",
        "AUTO_SPLIT",
        urlpath=str(paths[0]),
        contiguous=True,
    )
    s.append_data(data)
    s.append_data(data[:1000])
    del s
    ours = pb.SChunk(
        chunksize=200_000,
        urlpath=str(paths[1]),
        contiguous=True,
        mode="w",
        cparams=pb.CParams(**_our_params("xor+shuffle", "AUTO_SPLIT")),
        dparams=pb.DParams(nthreads=1),
    )
    ours.append_data(data)
    ours.append_data(data[:1000])
    del ours
    assert paths[1].read_bytes() == paths[0].read_bytes()


# -- the public API: the same Python functions registered in both libraries ---------------------


@pytest.fixture
def public_plugins() -> None:
    """The C side's functions registered in pyblosc2 through python-blosc2's public API (the
    autouse registry fixture removes them after the test)."""
    pb.register_codec("zlib-plugin", USER_CODEC_ID, _c_encoder, _c_decoder)
    pb.register_filter(USER_FILTER_ID, _c_xor, _c_xor, "xor")


@pytest.mark.usefixtures("public_plugins")
@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
@pytest.mark.parametrize("pipe", ["xor+shuffle", "bitshuffle+xor"])
def test_public_api_files_both_ways(c_single_thread, tmp_path, contiguous: bool, pipe: str) -> None:
    data = np.arange(60_000, dtype="<i4") % 999
    ext = ".b2frame" if contiguous else ".sframe"
    ours = pb.SChunk(
        chunksize=100_000,
        urlpath=str(tmp_path / f"ours{ext}"),
        contiguous=contiguous,
        mode="w",
        cparams=pb.CParams(**_our_params(pipe, "AUTO_SPLIT")),
        dparams=pb.DParams(nthreads=1),
    )
    ours.append_data(data[:25_000])
    ours.append_data(data[25_000:50_000])
    ours.append_data(data[50_000:])
    theirs = _c_schunk(
        c_single_thread,
        100_000,
        pipe,
        "AUTO_SPLIT",
        urlpath=str(tmp_path / f"theirs{ext}"),
        contiguous=contiguous,
        mode="w",
    )
    for part in (data[:25_000], data[25_000:50_000], data[50_000:]):
        theirs.append_data(part)
    del ours, theirs
    by_c = c_single_thread.open(str(tmp_path / f"ours{ext}"), mode="r")
    by_us = pb.open(str(tmp_path / f"theirs{ext}"), mode="r", dparams={"nthreads": 1})
    assert by_c[:] == data.tobytes()
    assert by_us[:] == data.tobytes()
    assert [by_us.get_chunk(i) for i in range(3)] == [by_c.get_chunk(i) for i in range(3)]


def test_public_registry_mirrors_python_blosc2(c_plugins) -> None:
    """Same rules as python-blosc2 for the same calls (ids, both-or-none, id in use)."""
    for lib in (pb, c_plugins):
        with pytest.raises(ValueError):
            lib.register_codec("x", 100, _c_encoder, _c_decoder)
        with pytest.raises(ValueError):
            lib.register_filter(300, _c_xor, _c_xor)
        with pytest.raises(ValueError):
            lib.register_codec("x", 230, _c_encoder, None)
    pb.register_codec("zlib-plugin", USER_CODEC_ID, _c_encoder, _c_decoder)
    for lib in (pb, c_plugins):
        assert USER_CODEC_ID in lib.ucodecs_registry
        with pytest.raises(ValueError, match="already in use"):
            lib.register_codec("zlib-plugin", USER_CODEC_ID, _c_encoder, _c_decoder)
