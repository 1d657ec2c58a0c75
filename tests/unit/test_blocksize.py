"""chunk/blocksize.py against C-Blosc2's headers (spec §8.1, §8.2) and C-Blosc 1.x's (§8.3,
§8.4): the block size and split flag we write for random parameters equal C's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb

CODECS = [pb.Codec.BLOSCLZ, pb.Codec.LZ4, pb.Codec.LZ4HC, pb.Codec.ZLIB, pb.Codec.ZSTD]
F = pb.Filter


@settings(max_examples=300, deadline=None)
@given(
    nbytes=st.one_of(st.integers(32, 5000), st.integers(5000, 6_000_000)),
    ts=st.one_of(st.integers(1, 20), st.integers(1, 600)),
    clevel=st.integers(1, 9),
    codec=st.sampled_from(CODECS),
    split=st.sampled_from(list(pb.SplitMode)),
    filters=st.sampled_from([[F.SHUFFLE], [F.BITSHUFFLE], [], [F.DELTA, F.SHUFFLE]]),
    requested=st.sampled_from([0, 0, 0, 4096, 65536]),
)
def test_blosc2_blocksize_and_split_match_c(
    cblosc2, nbytes, ts, clevel, codec, split, filters, requested
) -> None:
    if requested % ts:
        requested = 0
    data = bytes(nbytes)  # zeros: both sides end with a ZERO special chunk keeping the header
    params = dict(
        typesize=ts,
        clevel=clevel,
        codec=codec,
        splitmode=split,
        filters=filters,
        filters_meta=[0] * len(filters),
        blocksize=requested,
        nthreads=1,
    )
    ours, theirs = pb.compress2(data, **params), cblosc2.compress2(bytearray(data), **params)
    if requested > nbytes and nbytes % ts:
        # C stores the request clamped to nbytes but compresses with it rounded down to the
        # typesize (a corrupt chunk, spec §8.1); we store the size we use.
        assert pb.get_chunk_header(ours).blocksize == (nbytes // ts * ts or 1)
        assert ours[:8] == theirs[:8] and ours[12:32] == theirs[12:32]
    else:
        assert ours[:32] == theirs[:32]


@settings(max_examples=200, deadline=None)
@given(
    nbytes=st.one_of(st.integers(128, 5000), st.integers(5000, 3_000_000)),
    ts=st.integers(1, 255),
    clevel=st.integers(1, 9),
    codec=st.sampled_from(CODECS),
    shuffle=st.sampled_from([0, 1, 2]),
)
def test_blosc1_blocksize_and_split_match_c(cblosc1, nbytes, ts, clevel, codec, shuffle) -> None:
    data = (bytes(range(256)) * (nbytes // 256 + 1))[:nbytes]
    ours = pb.compress_blosc1(data, typesize=ts, clevel=clevel, shuffle=shuffle, codec=codec)
    theirs = cblosc1.compress(
        data, typesize=ts, clevel=clevel, shuffle=shuffle, cname=codec.name.lower()
    )
    assert ours[:12] == theirs[:12] or (ours[2] | 0x02) == (theirs[2] | 0x02)
    h1, h2 = pb.get_chunk_header(ours), pb.get_chunk_header(theirs)
    assert (h1.blocksize, h1.dont_split) == (h2.blocksize, h2.dont_split)
