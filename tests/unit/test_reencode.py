"""chunk/reencode.py: a chunk with some blocks changed, only those compressed again, is the
chunk the writer makes of the whole data, byte for byte (or None)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.chunk.reencode import encode_changed_blocks
from pyblosc2.constants import Codec
from tests.helpers import make_data

PIPELINES = {
    "none": (0, 0, 0, 0, 0, 0),
    "shuffle": (0, 0, 0, 0, 0, 1),
    "bitshuffle": (0, 0, 0, 0, 0, 2),
    "trunc+shuffle": (0, 0, 0, 0, 4, 1),
}


@settings(max_examples=120, deadline=None)
@given(
    kind=st.sampled_from(["smooth", "small_ints", "runs", "zeros", "random", "text"]),
    new_kind=st.sampled_from(["smooth", "runs", "zeros", "random"]),
    typesize=st.sampled_from([1, 2, 4, 8]),
    codec=st.sampled_from([Codec.BLOSCLZ, Codec.LZ4, Codec.ZSTD, Codec.ZLIB]),
    clevel=st.integers(0, 9),
    pipeline=st.sampled_from(list(PIPELINES)),
    split=st.sampled_from([1, 2, 3]),
    blocks=st.integers(1, 6),
    leftover=st.booleans(),
    data=st.data(),
)
def test_the_same_bytes_as_encoding_the_whole_chunk(
    kind, new_kind, typesize, codec, clevel, pipeline, split, blocks, leftover, data
) -> None:
    bs = 1024 * typesize
    nbytes = blocks * bs + (3 * typesize if leftover else 0)
    meta = (0, 0, 0, 0, 20 if pipeline.startswith("trunc") else 0, 0)
    if pipeline.startswith("trunc") and typesize not in (4, 8):
        meta = (0,) * 6
        pipeline = "shuffle"
    spec = EncodeSpec(typesize, clevel, codec, filters=PIPELINES[pipeline], filters_meta=meta,
                      splitmode=split, blocksize=bs)  # fmt: skip
    src = np.frombuffer(make_data(kind, nbytes, typesize), np.uint8).copy()
    old = encode_chunk(memoryview(src), spec)
    h = ChunkHeader.from_bytes(old)
    changed = data.draw(st.sets(st.integers(0, h.nblocks - 1), min_size=1)) if h.nblocks else {0}
    other = np.frombuffer(make_data(new_kind, nbytes, typesize, seed=1), np.uint8)
    ebs = h.effective_blocksize or bs
    for j in changed:
        src[j * ebs : (j + 1) * ebs] = other[j * ebs : (j + 1) * ebs]
    new = {j: src[j * ebs : (j + 1) * ebs] for j in changed}
    got = encode_changed_blocks(old, spec, new)
    event(f"made: {got is not None}")
    if got is not None:
        assert got == encode_chunk(memoryview(src), spec)


def test_it_serves_the_common_case() -> None:
    """A shuffled zstd chunk of 4 blocks, one changed: made, not refused."""
    spec = EncodeSpec(8, 5, Codec.ZSTD, blocksize=8192)
    src = np.arange(4096, dtype=np.int64)
    old = encode_chunk(src.data.cast("B"), spec)
    src[1024:2048] = 5
    got = encode_changed_blocks(old, spec, {1: src[1024:2048].view(np.uint8)})
    assert got is not None and got == encode_chunk(src.data.cast("B"), spec)


@pytest.mark.parametrize(
    "case",
    ["other codec", "dictionary", "memcpyed", "blosc1", "delta", "short block"],
)
def test_what_it_refuses(case: str) -> None:
    spec = EncodeSpec(8, 5, Codec.LZ4, blocksize=8192)
    src = np.arange(4096, dtype=np.int64)
    old = encode_chunk(src.data.cast("B"), spec)
    block = {1: src[1024:2048].view(np.uint8)}
    if case == "other codec":
        other = EncodeSpec(8, 5, Codec.BLOSCLZ, blocksize=8192)
    elif case == "dictionary":
        other = EncodeSpec(8, 5, Codec.LZ4, blocksize=8192, use_dict=True)
    elif case == "memcpyed":
        other = EncodeSpec(8, 0, Codec.LZ4, blocksize=8192)
    elif case == "blosc1":
        other = EncodeSpec(8, 5, Codec.LZ4, blocksize=8192, blosc1=True)
    elif case == "delta":
        other = spec = EncodeSpec(8, 5, Codec.LZ4, blocksize=8192, filters=(0, 0, 0, 0, 3, 1))
        old = encode_chunk(src.data.cast("B"), spec)
    else:
        other = spec
        block = {1: src[1024:1500].view(np.uint8)}
    assert encode_changed_blocks(old, other, block) is None
