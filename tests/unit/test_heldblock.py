"""The block a frame handle keeps for reads inside one block (``frame/heldblock.py``): every
read it serves equals the data, whatever the pipeline, chunk size and storage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.frame import heldblock
from pyblosc2.frame.heldblock import in_one_block

PIPELINES = {
    "shuffle": [pb.Filter.SHUFFLE],
    "bitshuffle": [pb.Filter.BITSHUFFLE],
    "delta+shuffle": [pb.Filter.DELTA, pb.Filter.SHUFFLE],
    "none": [pb.Filter.NOFILTER],
    "trunc+shuffle": [pb.Filter.TRUNC_PREC, pb.Filter.SHUFFLE],
}


@pytest.mark.parametrize("items", [2048, 1 << 17], ids=["small-chunks", "large-chunks"])
@pytest.mark.parametrize("where", ["file", "memory"])
@pytest.mark.parametrize("pipeline", list(PIPELINES))
def test_reads_in_one_block_equal_the_data(
    tmp_path: Path, pipeline: str, where: str, items: int
) -> None:
    rng = np.random.default_rng(1)
    data = (np.cumsum(rng.integers(-3, 4, 3 * items + 100)) * 3).astype(np.int64)
    cp = {"typesize": 8, "codec": pb.Codec.LZ4, "filters": PIPELINES[pipeline]}
    if pipeline.startswith("trunc"):
        cp["filters_meta"] = [40, 0]
        data = data.astype(np.float64).view(np.int64)
    urlpath = str(tmp_path / "f.b2frame") if where == "file" else None
    s = pb.SChunk(chunksize=8 * items, data=data, urlpath=urlpath, mode="w", cparams=cp)
    if urlpath is not None:
        s = pb.open(urlpath, mode="r")
    whole = np.frombuffer(s[:], np.int64)
    starts = [items + 5, items + 6, items + 5, 7, 2 * items + 1, 3 * items + 99, items + 6]
    for a in starts[:3]:  # read twice: the block is kept, then served
        assert np.frombuffer(s[a], np.int64)[0] == whole[a]
    held = s._frame.reader._held
    assert held is not None and held.image is not None and held.n == 1
    for a in starts + rng.integers(0, len(data) - 8, 40).tolist():
        for n in (1, 3):
            got = np.frombuffer(s.get_slice(a, a + n), np.int64)
            assert got.tolist() == whole[a : a + n].tolist()
    assert s._frame.reader._held is not None


@pytest.mark.parametrize("codec", [pb.Codec.BLOSCLZ, pb.Codec.LZ4, pb.Codec.ZSTD])
@pytest.mark.parametrize("flt", [0, 1, 2, 3], ids=["none", "shuffle", "bitshuffle", "delta"])
def test_block_image_is_the_block_decoded(flt: int, codec: int) -> None:
    a = np.arange(8192 + 100, dtype=np.int64) * 7
    pipeline = (0, 0, 0, 0, 1, flt) if flt == 3 else (0, 0, 0, 0, 0, flt)
    spec = EncodeSpec(8, 5, codec, filters=pipeline, blocksize=16384)
    r = ChunkReader.open(encode_chunk(a.data.cast("B"), spec))
    bs = r.header.effective_blocksize
    for j in (0, 1, r.header.nblocks - 1):  # the last one a leftover block
        image = r.block_image(j)
        assert bytes(image) == bytes(r.decode()[j * bs : (j + 1) * bs])


def test_in_one_block_is_none_across_blocks_and_for_special_chunks() -> None:
    a = np.arange(4096, dtype=np.int32).data.cast("B")
    r = ChunkReader.open(encode_chunk(a, EncodeSpec(4, 5, 1, blocksize=4096)))
    assert in_one_block(r, 4096 + 8, 4096 + 16) == 1
    assert in_one_block(r, 4090, 4100) is None
    z = ChunkReader.open(encode_chunk(bytes(16384), EncodeSpec(4, 5, 1, blocksize=4096)))
    assert in_one_block(z, 0, 4) is None


@pytest.mark.parametrize("items", [2048, 1 << 17], ids=["small-chunks", "large-chunks"])
def test_blocks_over_held_max_are_never_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, items: int
) -> None:
    monkeypatch.setattr(heldblock, "HELD_MAX", 1024)
    data = np.arange(3 * items, dtype=np.int64)
    path = str(tmp_path / "f.b2frame")
    pb.SChunk(chunksize=8 * items, data=data, urlpath=path, mode="w", cparams={"typesize": 8})
    s = pb.open(path, mode="r")
    for a in (items + 5, items + 6, items + 5):
        assert np.frombuffer(s[a], np.int64)[0] == a
    assert s._frame.reader._held is None
