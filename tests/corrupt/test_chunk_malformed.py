"""Malformed chunks: every outcome is the right data or a pyblosc2 error naming the field
(spec chunk-format.md §15; STYLE.md habit 14). Never IndexError, struct.error, a codec
library's exception, a hang, or an allocation driven by an unchecked header field."""

from __future__ import annotations

import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from tests.helpers import make_data

DATA = make_data("small_ints", 20_000, 4)


def _chunks() -> dict[str, bytes]:
    F = pb.Filter
    out = {
        "lz4-split": pb.compress2(DATA, typesize=4, codec=pb.Codec.LZ4, blocksize=4096, nthreads=1),
        "blosclz": pb.compress2(DATA[:6000], typesize=4, codec=pb.Codec.BLOSCLZ, blocksize=2048),
        "zstd-dict": pb.compress2(
            DATA * 5, typesize=4, codec=pb.Codec.ZSTD, use_dict=True, blocksize=4096
        ),
        "lz4-dict": pb.compress2(
            DATA * 5, typesize=4, codec=pb.Codec.LZ4, use_dict=True, blocksize=4096
        ),
        "zlib-delta": pb.compress2(
            DATA, typesize=4, codec=pb.Codec.ZLIB, filters=[F.DELTA, F.SHUFFLE], filters_meta=[0, 0]
        ),
        "bitshuffle": pb.compress2(
            DATA, typesize=4, codec=pb.Codec.LZ4, filters=[F.BITSHUFFLE], blocksize=8192
        ),
        "memcpy": pb.compress2(DATA[:1000], typesize=4, clevel=0),
        "runs": pb.compress2(
            np.full(5000, 0x01020304, np.uint32),
            typesize=4,
            codec=pb.Codec.LZ4,
            splitmode=pb.SplitMode.ALWAYS_SPLIT,
        ),
        "value": pb.make_special_chunk(pb.SpecialValue.VALUE, 4000, 4, np.float32(2.5)),
        "blosc1": pb.compress_blosc1(DATA, typesize=4, clevel=5, codec=pb.Codec.LZ4),
    }
    return out


CHUNKS = _chunks()
ALLOWED = (pb.FormatError, NotImplementedError)


def outcome(buf: bytes, expected: bytes | None = None) -> str:
    """Decode ``buf`` every way; return 'ok' or 'error' — anything else fails the test."""
    try:
        got = pb.decompress2(buf)
    except ALLOWED:
        return "error"
    if expected is not None and got != expected:
        return "different"  # possible only where a mutation hit raw data bytes
    nbytes = pb.get_cbuffer_sizes(buf)[0]
    ts = pb.get_chunk_header(buf).typesize
    assert pb.getitem(buf, 0, nbytes // ts) == got[: nbytes // ts * ts]
    return "ok"


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_base_chunks_decode(name: str) -> None:
    assert outcome(CHUNKS[name]) == "ok"


CUTS = [0, 1, 2, 3, 4, 7, 8, 11, 12, 15, 16, 20, 24, 30, 31, 32, 33, 40]


@pytest.mark.parametrize(
    ("name", "cut"),
    [(n, c) for n in sorted(CHUNKS) for c in CUTS if c < len(CHUNKS[n])],
)
def test_truncated(name: str, cut: int) -> None:
    buf = CHUNKS[name]
    with pytest.raises(pb.FormatError, match=r"^chunk header: (length|cbytes) at offset (0|12) "):
        pb.decompress2(buf[:cut])


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_truncated_by_one(name: str) -> None:
    with pytest.raises(pb.FormatError, match=r"cbytes|length"):
        pb.decompress2(CHUNKS[name][:-1])


@pytest.mark.parametrize(("offset", "field"), [(4, "nbytes"), (8, "blocksize"), (12, "cbytes")])
@pytest.mark.parametrize("value", [0, -1, 1, 2**31 - 1, -(2**31)])
@pytest.mark.parametrize("name", ["lz4-split", "zstd-dict", "memcpy", "blosc1"])
def test_size_fields(name: str, offset: int, field: str, value: int) -> None:
    buf = bytearray(CHUNKS[name])
    struct.pack_into("<i", buf, offset, value)
    assert outcome(bytes(buf)) in ("ok", "error", "different")


@pytest.mark.parametrize("value", [-5, 0, 31, 10**6, -(2**31)])
@pytest.mark.parametrize("j", [0, 1, 4])
def test_bstarts_out_of_range(j: int, value: int) -> None:
    buf = bytearray(CHUNKS["lz4-split"])
    struct.pack_into("<i", buf, 32 + 4 * j, value)
    with pytest.raises(pb.FormatError, match=rf"bstarts\[{j}\]"):
        pb.decompress2(bytes(buf))


def _first_csize_offset(chunk: bytes) -> int:
    return struct.unpack_from("<i", chunk, 32)[0]


@pytest.mark.parametrize(
    ("csize", "match"), [(10**7, "csize"), (-256, "csize"), (-(2**31), "csize")]
)
def test_bad_csize(csize: int, match: str) -> None:
    buf = bytearray(CHUNKS["lz4-split"])
    struct.pack_into("<i", buf, _first_csize_offset(buf), csize)
    with pytest.raises(pb.FormatError, match=match):
        pb.decompress2(bytes(buf))


def test_run_token_without_bit0() -> None:
    buf = bytearray(CHUNKS["runs"])
    pos = _first_csize_offset(buf)
    assert struct.unpack_from("<i", buf, pos)[0] < 0
    buf[pos + 4] = 0x02
    with pytest.raises(pb.FormatError, match="run token"):
        pb.decompress2(bytes(buf))


@pytest.mark.parametrize("compformat", [5, 7])
def test_unknown_compformat(compformat: int) -> None:
    buf = bytearray(CHUNKS["lz4-split"])
    buf[2] = (buf[2] & 0x1F) | (compformat << 5)
    with pytest.raises(pb.FormatError, match="compformat"):
        pb.decompress2(bytes(buf))


def test_unregistered_user_codec() -> None:
    buf = bytearray(CHUNKS["lz4-split"])
    buf[2] = (buf[2] & 0x1F) | (6 << 5)
    buf[22] = 200
    with pytest.raises(pb.FormatError, match="udcompcode"):
        pb.decompress2(bytes(buf))


@pytest.mark.parametrize("fid", [5, 7, 31, 100, 159, 200, 255])
def test_unknown_filter(fid: int) -> None:
    buf = bytearray(CHUNKS["lz4-split"])
    buf[16] = fid
    with pytest.raises(pb.FormatError, match=r"filters\[0\]"):
        pb.decompress2(bytes(buf))


@pytest.mark.parametrize("fid", [32, 33], ids=["NDCELL", "NDMEAN"])
def test_nd_filters_need_their_array(fid: int) -> None:
    """§9.7: NDCELL and NDMEAN read the block shape from the super-chunk's b2nd metalayer; a
    chunk decoded on its own has none (C: "b2nd layer not found")."""
    buf = bytearray(CHUNKS["lz4-split"])
    buf[16] = fid
    with pytest.raises(pb.FormatError, match="b2nd metalayer"):
        pb.decompress2(bytes(buf))


@pytest.mark.parametrize(
    ("byte", "bit", "feature"),
    [
        (31, 0x08, "lazy"),
        (31, 0x02, "big-endian"),
        (31, 0x80, "instrumentation"),
    ],
)
def test_unimplemented_features_are_named(byte: int, bit: int, feature: str) -> None:
    buf = bytearray(CHUNKS["lz4-split"])
    if byte == 16:
        buf[16] = bit
    else:
        buf[31] |= bit
    with pytest.raises(NotImplementedError, match=feature):
        pb.decompress2(bytes(buf))


@pytest.mark.parametrize("dsize", [0, -1, 32769, 10**6])
@pytest.mark.parametrize("name", ["zstd-dict", "lz4-dict"])
def test_bad_dict_size(name: str, dsize: int) -> None:
    buf = bytearray(CHUNKS[name])
    h = pb.get_chunk_header(bytes(buf))
    assert h.use_dict
    struct.pack_into("<i", buf, 32 + 4 * h.nblocks, dsize)
    with pytest.raises(pb.FormatError, match="dsize"):
        pb.decompress2(bytes(buf))


@pytest.mark.parametrize("special", [5, 6, 7])
def test_reserved_special_ids(special: int) -> None:
    buf = bytearray(CHUNKS["value"])
    buf[31] = special << 4
    buf[12:16] = struct.pack("<i", 32)
    with pytest.raises(pb.FormatError, match=rf"blosc2_flags at offset 31 is {special}, expected"):
        pb.decompress2(bytes(buf))


def test_huge_nbytes_small_chunk_does_not_allocate() -> None:
    """A 40-byte regular chunk claiming 2 GB: rejected before any large allocation."""
    hdr = pb.chunk.header.ChunkHeader(
        5, 1, 0x25, 4, 2**31 - 100, 2**28, 40, (0, 0, 0, 0, 0, 1), 1, 0, (0,) * 6, 0, 0, True
    )
    buf = hdr.to_bytes() + struct.pack("<ii", 36, 0)
    tracemalloc.start()
    try:
        with pytest.raises(pb.FormatError, match="bstarts"):
            pb.decompress2(buf)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20


@pytest.mark.parametrize("name", sorted(CHUNKS))
@pytest.mark.parametrize("seed", range(12))
def test_byte_flips(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    buf = bytearray(CHUNKS[name])
    for pos in rng.integers(0, len(buf), 3):
        buf[pos] ^= int(rng.integers(1, 256))
    assert outcome(bytes(buf)) in ("ok", "error", "different")


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(CHUNKS)), data=st.data())
def test_mutations_property(name: str, data: st.DataObject) -> None:
    buf = bytearray(CHUNKS[name])
    kind = data.draw(st.sampled_from(["flip", "truncate", "garbage", "field"]))
    if kind == "flip":
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] ^= data.draw(st.integers(1, 255))
    elif kind == "truncate":
        buf = buf[: data.draw(st.integers(0, len(buf) - 1))]
    elif kind == "garbage":
        buf = buf[:32] + bytearray(data.draw(st.binary(max_size=200)))
    else:
        off = data.draw(st.sampled_from([4, 8, 12, 32, 36]))
        if off + 4 <= len(buf):
            struct.pack_into("<i", buf, off, data.draw(st.integers(-(2**31), 2**31 - 1)))
    assert outcome(bytes(buf)) in ("ok", "error", "different")


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=300))
def test_random_bytes(buf: bytes) -> None:
    assert outcome(buf) in ("ok", "error", "different")


def test_empty_chunk_with_data_is_rejected() -> None:
    """nbytes 0 with bytes after the header (not memcpyed): C returns an empty result, but
    such a chunk was not written by any Blosc; reject it rather than hide the bytes."""
    hdr = pb.chunk.header.ChunkHeader(
        5, 1, 0x25, 4, 0, 1, 40, (0, 0, 0, 0, 0, 1), 1, 0, (0,) * 6, 0, 0, True
    )
    with pytest.raises(pb.FormatError, match="cbytes"):
        pb.decompress2(hdr.to_bytes() + bytes(8))
