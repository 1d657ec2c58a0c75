"""VL-block chunks (spec §12) against python-blosc2's ``blosc2_ext.vlcompress`` /
``vldecompress`` (C's ``blosc2_vlcompress_ctx``), both directions: the same bytes where the
codec library is the same (BloscLZ is pyblosc2's exact port; LZ4 and zstd match on most
streams), and each library decodes the other's chunks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.blosc2_ext import vlcompress, vldecompress, vldecompress_block
from tests.helpers import make_data

KINDS = ["text", "random", "smooth", "runs", "zeros", "small_ints"]


def _blocks(n: int, size: int, seed: int = 0, step: int = 36) -> list[bytes]:
    """``n`` blocks of assorted data; sizes ``size + step * i``."""
    return [
        make_data(KINDS[(i + seed) % len(KINDS)], size + step * i, 4, seed=i + seed)
        for i in range(n)
    ]


PIPELINES = {
    "none": ([], []),
    "shuffle": (["SHUFFLE"], [0]),
    "bitshuffle": (["BITSHUFFLE"], [0]),
    "delta": (["DELTA"], [0]),
    "delta+shuffle": (["DELTA", "SHUFFLE"], [0, 0]),
    "shuffle+bytedelta": (["SHUFFLE", "BYTEDELTA"], [0, 4]),
    "trunc_prec": (["TRUNC_PREC"], [12]),
}


def _kw(lib, codec: str, pipe: str, **extra) -> dict:
    names, metas = PIPELINES[pipe]
    return {
        "codec": lib.Codec[codec],
        "clevel": extra.pop("clevel", 5),
        "typesize": extra.pop("typesize", 4),
        "filters": [lib.Filter[n] for n in names],
        "filters_meta": metas,
        "nthreads": 1,
        **extra,
    }


@pytest.mark.parametrize("pipe", PIPELINES)
@pytest.mark.parametrize("clevel", [1, 5, 9])
def test_blosclz_bytes_identical(cblosc2, pipe: str, clevel: int) -> None:
    blocks = _blocks(6, 3000)
    theirs = cblosc2.blosc2_ext.vlcompress(blocks, **_kw(cblosc2, "BLOSCLZ", pipe, clevel=clevel))
    ours = vlcompress(blocks, **_kw(pb, "BLOSCLZ", pipe, clevel=clevel))
    assert ours == theirs


def test_c_cannot_decode_vl_chunks_with_delta(cblosc2) -> None:
    """Spec §12: each VL block is its own DELTA reference when C writes it; C-Blosc2 3.3.5
    writes exactly pyblosc2's bytes but does not decode them (its own chunks included), while
    pyblosc2 decodes them as written."""
    blocks = _blocks(4, 3000, step=4)
    for pipe in ("delta+shuffle", "delta"):
        theirs = cblosc2.blosc2_ext.vlcompress(blocks, **_kw(cblosc2, "BLOSCLZ", pipe))
        assert vlcompress(blocks, **_kw(pb, "BLOSCLZ", pipe)) == theirs
        assert vldecompress(theirs) == blocks
        assert cblosc2.blosc2_ext.vldecompress(theirs) != blocks


def test_c_leaves_the_tail_of_trunc_prec_blocks_unwritten(cblosc2) -> None:
    """Spec §9.0: C's TRUNC_PREC leaves a block's last ``size % typesize`` bytes unwritten, in
    VL chunks too; pyblosc2 writes them as they are (the whole items are truncated alike)."""
    blocks = _blocks(4, 3001, step=1)  # sizes 3001..3004: not all multiples of typesize 4
    theirs = cblosc2.blosc2_ext.vlcompress(blocks, **_kw(cblosc2, "BLOSCLZ", "trunc_prec"))
    ours = vlcompress(blocks, **_kw(pb, "BLOSCLZ", "trunc_prec"))
    by_c, by_us = cblosc2.blosc2_ext.vldecompress(ours), vldecompress(ours)
    assert by_c == by_us
    assert [len(b) for b in by_us] == [len(b) for b in blocks]
    assert [b[: len(b) // 4 * 4] for b in by_us] == [
        b[: len(b) // 4 * 4] for b in cblosc2.blosc2_ext.vldecompress(theirs)
    ]
    assert [b[len(b) // 4 * 4 :] for b in by_us] == [b[len(b) // 4 * 4 :] for b in blocks]


@pytest.mark.parametrize("codec", ["BLOSCLZ", "LZ4", "LZ4HC", "ZLIB", "ZSTD"])
@pytest.mark.parametrize("pipe", ["none", "shuffle", "bitshuffle", "shuffle+bytedelta"])
def test_both_directions(cblosc2, codec: str, pipe: str) -> None:
    blocks = _blocks(9, 2500, seed=3)
    theirs = cblosc2.blosc2_ext.vlcompress(blocks, **_kw(cblosc2, codec, pipe))
    ours = vlcompress(blocks, **_kw(pb, codec, pipe))
    assert vldecompress(theirs) == blocks
    assert cblosc2.blosc2_ext.vldecompress(ours) == blocks
    assert [vldecompress_block(theirs, j) for j in (0, 4, 8)] == [blocks[j] for j in (0, 4, 8)]
    assert cblosc2.blosc2_ext.vldecompress_block(ours, 5) == blocks[5]
    assert cblosc2.decompress2(ours) == pb.decompress2(theirs) == b"".join(blocks)
    assert ours[:32] == theirs[:32] or codec != "BLOSCLZ"


@pytest.mark.parametrize("codec", ["LZ4", "LZ4HC", "ZSTD"])
def test_dictionaries_both_directions(cblosc2, codec: str) -> None:
    blocks = [make_data("text", 3000, seed=i) for i in range(12)]
    theirs = cblosc2.blosc2_ext.vlcompress(blocks, **_kw(cblosc2, codec, "none", use_dict=True))
    ours = vlcompress(blocks, **_kw(pb, codec, "none", use_dict=True))
    assert pb.get_chunk_header(theirs).use_dict and pb.get_chunk_header(ours).use_dict
    assert vldecompress(theirs) == blocks
    assert cblosc2.blosc2_ext.vldecompress(ours) == blocks
    if codec != "ZSTD":  # the LZ4 dictionary is the blocks themselves, C's dsize quirk included
        h = pb.get_chunk_header(ours)
        at = 32 + 4 * h.blocksize
        assert ours[at : at + 4 + 600] == theirs[at : at + 4 + 600]


def test_c_chunks_in_an_schunk_read_by_us(cblosc2, tmp_path) -> None:
    path = str(tmp_path / "theirs.b2frame")
    s = cblosc2.SChunk(chunksize=-1, urlpath=path, mode="w", cparams={"typesize": 1})
    groups = [_blocks(3, 500, seed=i) for i in range(4)]
    for g in groups:
        s.append_chunk(cblosc2.blosc2_ext.vlcompress(g, typesize=1, nthreads=1))
    del s
    ours = pb.open(path)
    assert [ours.get_vlblock(n, 1) for n in range(4)] == [g[1] for g in groups]
    theirs = cblosc2.open(path)
    assert [theirs.get_vlblock(n, 2) for n in range(4)] == [
        ours.get_vlblock(n, 2) for n in range(4)
    ]


@settings(max_examples=30, deadline=None)
@given(
    blocks=st.lists(st.binary(min_size=1, max_size=2000), min_size=1, max_size=12),
    typesize=st.sampled_from([1, 2, 4, 8]),
    clevel=st.integers(1, 9),
    pipe=st.sampled_from(["none", "shuffle", "bitshuffle"]),
)
def test_property_blosclz_identical(cblosc2, blocks, typesize, clevel, pipe) -> None:
    kw = {"typesize": typesize, "clevel": clevel}
    theirs = cblosc2.blosc2_ext.vlcompress(blocks, **_kw(cblosc2, "BLOSCLZ", pipe, **kw))
    assert vlcompress(blocks, **_kw(pb, "BLOSCLZ", pipe, **kw)) == theirs
    assert vldecompress(theirs) == blocks
