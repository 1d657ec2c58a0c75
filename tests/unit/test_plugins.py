"""User codecs and filters through ``register_codec`` / ``register_filter`` (chunk-format.md
§2.3 compformat 6 + udcompcode, §9.0 user filter ids), with no reference library.

The plugins (tests.helpers.ZlibPluginCodec, id 180, and XorFilter, id 170) are registered by
the ``user_plugins`` fixture; the autouse registry fixture removes them after each test.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import FormatError, ParamError
from pyblosc2.codecs.registry import (
    get_codec,
    register_codec,
    registered_codecs,
    registry_snapshot,
    unregister_codec,
)
from pyblosc2.filters.registry import get_filter, register_filter, unregister_filter
from pyblosc2.frame.header import FrameHeader
from tests.helpers import (
    DATA_KINDS,
    USER_CODEC_ID,
    USER_FILTER_ID,
    XorFilter,
    ZlibPluginCodec,
    make_data,
)

F = pb.Filter
PIPELINES: dict[str, tuple[list[int], list[int]]] = {
    "xor": ([USER_FILTER_ID], [0x5A]),
    "xor+shuffle": ([USER_FILTER_ID, F.SHUFFLE], [0xA5, 0]),
    "shuffle+xor": ([F.SHUFFLE, USER_FILTER_ID], [0, 0x01]),
    "delta+xor+bitshuffle": ([F.DELTA, USER_FILTER_ID, F.BITSHUFFLE], [0, 0xFF, 0]),
    "shuffle": ([F.SHUFFLE], [0]),
}
CODECS = {"plugin-codec": USER_CODEC_ID, "zstd": pb.Codec.ZSTD, "lz4": pb.Codec.LZ4}
SPLITS = [pb.SplitMode.AUTO_SPLIT, pb.SplitMode.ALWAYS_SPLIT, pb.SplitMode.NEVER_SPLIT]


def _params(codec: int, pipe: str, typesize: int, split: pb.SplitMode) -> dict:
    filters, metas = PIPELINES[pipe]
    return dict(
        codec=codec,
        clevel=5,
        typesize=typesize,
        filters=list(filters),
        filters_meta=list(metas),
        splitmode=split,
        blocksize=4096,
        nthreads=1,
    )


# every pipeline with the plugin codec; the built-in codecs only with the plugin filter
CASES = [
    (c, p)
    for c in CODECS
    for p in PIPELINES
    if CODECS[c] == USER_CODEC_ID or USER_FILTER_ID in PIPELINES[p][0]
]


@pytest.mark.usefixtures("user_plugins")
@pytest.mark.parametrize("kind", DATA_KINDS)
@pytest.mark.parametrize("split", SPLITS, ids=lambda s: s.name)
@pytest.mark.parametrize(("codec", "pipe"), CASES, ids=[f"{c}-{p}" for c, p in CASES])
def test_roundtrip(codec: str, pipe: str, split: pb.SplitMode, kind: str) -> None:
    data = make_data(kind, 20_003, 4)
    chunk = pb.compress2(data, **_params(CODECS[codec], pipe, 4, split))
    assert pb.decompress2(chunk) == data
    assert pb.getitem(chunk, 999, 1123) == data[4 * 999 : 4 * 1123]  # items, not bytes


@pytest.mark.usefixtures("user_plugins")
def test_chunk_header_records_the_plugins() -> None:
    """§2.3: compformat 6 in flags bits 5-7, the codec id in byte 22; filter ids in 16-21."""
    data = make_data("smooth", 10_000, 8)
    chunk = pb.compress2(data, **_params(USER_CODEC_ID, "xor+shuffle", 8, SPLITS[2]))
    h = pb.get_chunk_header(chunk)
    assert (chunk[2] >> 5, chunk[22]) == (6, USER_CODEC_ID)
    assert h.compformat == 6 and h.udcompcode == USER_CODEC_ID
    assert chunk[16:22] == bytes([USER_FILTER_ID, F.SHUFFLE, 0, 0, 0, 0])
    assert chunk[24:30] == bytes([0xA5, 0, 0, 0, 0, 0])


@pytest.mark.usefixtures("user_plugins")
@pytest.mark.parametrize("key", [0, 0x5A, 0xFF])
def test_the_filter_really_runs(key: int) -> None:
    """XOR-filtering with key k stores what no filter stores for the input XORed with k:
    the same blocks, streams and bstarts (bytes 32 on); the header names the filter and key."""
    data = make_data("runs", 20_000, 1)
    base = dict(codec=pb.Codec.LZ4, typesize=1, nthreads=1, blocksize=4096)
    xored = (np.frombuffer(data, np.uint8) ^ np.uint8(key)).tobytes()
    plain = pb.compress2(xored, filters=[], filters_meta=[], **base)
    filtered = pb.compress2(data, filters=[USER_FILTER_ID], filters_meta=[key], **base)
    assert filtered[32:] == plain[32:]
    assert (filtered[16], filtered[24]) == (USER_FILTER_ID, key)
    assert pb.decompress2(filtered) == data


@pytest.mark.usefixtures("user_plugins")
def test_incompressible_streams_are_stored_raw() -> None:
    """A plugin returning b"" (output over budget) makes the chunk store the stream raw."""
    data = make_data("random", 30_000, 1)
    chunk = pb.compress2(data, codec=USER_CODEC_ID, typesize=1, nthreads=1, filters=[])
    assert len(chunk) >= len(data)
    assert pb.decompress2(chunk) == data


@pytest.mark.usefixtures("user_plugins")
@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
def test_schunk_file_with_plugins(tmp_path, contiguous: bool) -> None:
    """§2.4: a frame written with a user codec records nibble 6 and the id in udcodec."""
    data = np.arange(30_000, dtype="<i4") % 777
    urlpath = tmp_path / ("f.b2frame" if contiguous else "d.sframe")
    s = pb.SChunk(
        chunksize=40_000,
        urlpath=str(urlpath),
        contiguous=contiguous,
        mode="w",
        cparams=pb.CParams(
            codec=USER_CODEC_ID,
            typesize=4,
            filters=[USER_FILTER_ID, F.SHUFFLE],
            filters_meta=[7, 0],
            nthreads=1,
        ),
    )
    s.append_data(data)
    del s
    reopened = pb.open(str(urlpath), mode="r")
    assert isinstance(reopened, pb.SChunk)
    assert reopened[:] == data.tobytes()
    assert reopened.cparams.codec == USER_CODEC_ID
    frame = (urlpath if contiguous else urlpath / "chunks.b2frame").read_bytes()
    h = FrameHeader.from_bytes(frame, buffer_len=len(frame))
    assert (h.codec_flags & 0x0F, h.udcodec, h.codec) == (6, USER_CODEC_ID, USER_CODEC_ID)
    assert h.filters[:2] == (USER_FILTER_ID, F.SHUFFLE)


def test_unregistered_plugin_chunk_is_refused() -> None:
    with registry_snapshot():
        register_codec(ZlibPluginCodec())
        chunk = pb.compress2(make_data("smooth", 5000), codec=USER_CODEC_ID, typesize=4)
    assert USER_CODEC_ID not in registered_codecs()  # the snapshot restored the registry
    with pytest.raises(FormatError, match=r"udcompcode|codec"):
        pb.decompress2(chunk)
    with pytest.raises(ParamError, match=rf"codec must be one of .*, got {USER_CODEC_ID}"):
        pb.compress2(b"abcd" * 100, codec=USER_CODEC_ID, typesize=4)


def test_unregistered_filter_chunk_is_refused() -> None:
    with registry_snapshot():
        from pyblosc2.filters.registry import registry_snapshot as filters_snapshot

        with filters_snapshot():
            register_filter(XorFilter())
            chunk = pb.compress2(
                make_data("smooth", 5000), filters=[USER_FILTER_ID], filters_meta=[3], typesize=4
            )
    with pytest.raises(FormatError, match=rf"filter.*{USER_FILTER_ID}|{USER_FILTER_ID}.*filter"):
        pb.decompress2(chunk)
    with pytest.raises(ParamError, match=rf"filter must be one of .*, got {USER_FILTER_ID}"):
        get_filter(USER_FILTER_ID)


@pytest.mark.usefixtures("user_plugins")
def test_registered_lookups() -> None:
    assert isinstance(get_codec(USER_CODEC_ID), ZlibPluginCodec)
    assert isinstance(get_filter(USER_FILTER_ID), XorFilter)
    unregister_codec(USER_CODEC_ID)
    unregister_filter(USER_FILTER_ID)
    with pytest.raises(ParamError, match=rf"no plugin codec registered with id {USER_CODEC_ID}"):
        unregister_codec(USER_CODEC_ID)
    with pytest.raises(ParamError, match=rf"no user filter registered with id {USER_FILTER_ID}"):
        unregister_filter(USER_FILTER_ID)


@pytest.mark.usefixtures("user_plugins")
def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(ParamError, match=rf"codec id {USER_CODEC_ID} is already registered"):
        register_codec(ZlibPluginCodec())
    with pytest.raises(ParamError, match=rf"filter id {USER_FILTER_ID} is already registered"):
        register_filter(XorFilter())


@pytest.mark.parametrize("cid", [0, 5, 31, 256, -1])
def test_codec_ids_outside_the_plugin_range(cid: int) -> None:
    codec = type("Bad", (ZlibPluginCodec,), {"compcode": cid})()
    with pytest.raises(ParamError, match=rf"codec id must be in 32\.\.255 for plugins, got {cid}"):
        register_codec(codec)


def test_codec_compformat_must_be_6() -> None:
    codec = type("Bad", (ZlibPluginCodec,), {"compformat": 3})()
    with pytest.raises(ParamError, match=r"plugin codec compformat must be 6, got 3"):
        register_codec(codec)


@pytest.mark.parametrize("fid", [0, 1, 35, 159, 256])
def test_filter_ids_outside_the_user_range(fid: int) -> None:
    flt = type("Bad", (XorFilter,), {"id": fid})()
    with pytest.raises(ParamError, match=rf"user filter id must be in 160\.\.255, got {fid}"):
        register_filter(flt)
