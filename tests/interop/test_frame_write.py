"""Frames built by pyblosc2 are opened, read and extended by python-blosc2; headers and
trailers serialize byte-identically to C's (frame-format.md §2-§5). Groundwork for SChunk."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.frame.contiguous import BufferSource, FrameReader
from pyblosc2.frame.writer import build_cframe

ARRS = [np.arange(i * 1000, (i + 1) * 1000, dtype=np.int32) for i in range(4)]
ARRS += [
    np.zeros(1000, np.int32),
    np.full(1000, np.nan, np.float32).view(np.int32),
    np.arange(300, dtype=np.int32),
]


def _chunks(codec: pb.Codec) -> list[bytes]:
    chunks = [pb.compress2(a, typesize=4, codec=codec, nthreads=1) for a in ARRS]
    chunks[5] = pb.make_special_chunk(pb.SpecialValue.NAN, 4000, 4)
    return chunks


@pytest.mark.parametrize("codec", [pb.Codec.LZ4, pb.Codec.ZSTD, pb.Codec.BLOSCLZ])
@pytest.mark.parametrize("nvl", [0, 1, 3])
def test_c_reads_our_frames(cblosc2, codec, nvl) -> None:
    vl = [(f"k{i}", pb.compress2(msgpack.packb([i, "v"]), typesize=1)) for i in range(nvl)]
    cf = build_cframe(
        _chunks(codec),
        typesize=4,
        metalayers=[("m1", msgpack.packb([1, 2]))],
        vlmeta=vl,
        codec=codec,
    )
    s = cblosc2.schunk_from_cframe(cf, copy=True)
    assert s.nchunks == len(ARRS) and s.chunksize == 4000
    assert [s.decompress_chunk(n) for n in range(s.nchunks)] == [a.tobytes() for a in ARRS]
    assert s.meta["m1"] == [1, 2]
    assert {k: s.vlmeta[k] for k in s.vlmeta} == {f"k{i}": [i, "v"] for i in range(nvl)}
    # C extends our frame; we read the result
    s.append_data(np.arange(1000, dtype=np.int32))
    r = FrameReader.open(BufferSource(s.to_cframe()), exact=True)
    assert pb.decompress2(r.get_chunk(len(ARRS))) == np.arange(1000, dtype=np.int32).tobytes()


def test_special_chunks_become_offsets() -> None:
    r = FrameReader.open(BufferSource(build_cframe(_chunks(pb.Codec.LZ4), typesize=4)), exact=True)
    assert [hex(int(o) & 0xFFFFFFFFFFFFFFFF) for o in r.offsets[4:6]] == [
        "0x8100000000000000",
        "0x8200000000000000",
    ]


def test_variable_and_empty_frames(cblosc2) -> None:
    sizes = (10, 1000, 30)
    cf = build_cframe(
        [pb.compress2(np.arange(n, dtype=np.int32), typesize=4) for n in sizes], typesize=4
    )
    s = cblosc2.schunk_from_cframe(cf, copy=True)
    assert s.chunksize == 0 and [len(s.decompress_chunk(i)) for i in range(3)] == [40, 4000, 120]
    empty = build_cframe([], typesize=4)
    fresh = cblosc2.SChunk(chunksize=40, cparams=cblosc2.CParams(typesize=4, nthreads=1))
    assert len(empty) == len(fresh.to_cframe()) == 132
    assert cblosc2.schunk_from_cframe(empty, copy=True).nchunks == 0


@pytest.mark.parametrize("vlmeta", [{}, {"x": [1, 2, 3]}, {"x": 1, "a_longer_name": "v" * 100}])
def test_header_and_trailer_bytes_match_c(cblosc2, vlmeta) -> None:
    s = cblosc2.SChunk(
        chunksize=400,
        cparams=cblosc2.CParams(typesize=4, nthreads=1),
        meta={"m1": [1, 2], "abc": "hello"},
    )
    s.append_data(np.arange(100, dtype=np.int32))
    for k, v in vlmeta.items():
        s.vlmeta[k] = v
    buf = s.to_cframe()
    r = FrameReader.open(BufferSource(buf), exact=True)
    assert r.header.to_bytes() == bytes(buf[: r.header.header_len])
    tb = r.trailer.to_bytes()
    assert tb == bytes(buf[-len(tb) :])
