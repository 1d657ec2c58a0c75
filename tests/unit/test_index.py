"""frame/index.py and writer.encode_index: the index chunk of int64 offsets and the special
offsets (frame-format.md §4.1-§4.4)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyblosc2 as pb
from pyblosc2 import FormatError
from pyblosc2.constants import SpecialValue
from pyblosc2.frame.index import PICKS, SPECIAL_OFFSETS, OffsetIndex, decode_index, special_of
from pyblosc2.frame.writer import encode_index
from tests.helpers import SPEC_11_1_INDEX

ZERO, NAN, UNINIT = -0x7F00000000000000, -0x7E00000000000000, -0x7C00000000000000

# §11.2: the index C's fill_special writes for blosc2.zeros((10, 10), chunks=(5, 5)): a
# repeated-value chunk (special id 3) of four 0x81... offsets
FILL_SPECIAL_INDEX = bytes.fromhex(
    "05010508200000002000000028000000000000000001000000000000000000300000000000000081"
)


# -- vectors ----------------------------------------------------------------------------------


def test_spec_index_written_byte_for_byte() -> None:
    """§4.3/§11.1: 3 chunks → a 56-byte memcpyed chunk, as C writes it on every mutation."""
    assert encode_index(np.array([0, 72, 144], np.int64)).hex() == SPEC_11_1_INDEX.hex()


def test_spec_index_decodes() -> None:
    offsets = decode_index(SPEC_11_1_INDEX, 3, 329)
    assert offsets.dtype == np.int64 and offsets.tolist() == [0, 72, 144]


def test_large_index_header() -> None:
    """§4.3: a 3000-chunk index is blosclz + shuffle, no-split (``05 01 15 08``), blocksize
    16384, nbytes 24000."""
    idx = encode_index(np.arange(3000, dtype=np.int64) * 1000)
    assert idx[:4].hex() == "05011508"
    assert struct.unpack_from("<ii", idx, 4) == (24000, 16384)
    assert decode_index(idx, 3000, 0).tolist() == list(range(0, 3_000_000, 1000))


def test_fill_special_index_decodes() -> None:
    """C decodes the index with the generic decompressor: a repeated-value chunk is fine."""
    offsets = decode_index(FILL_SPECIAL_INDEX, 4, 165)
    assert offsets.tolist() == [ZERO] * 4
    assert {special_of(int(o)) for o in offsets} == {SpecialValue.ZERO}


@pytest.mark.parametrize(
    ("value", "byte7", "special"),
    [
        (ZERO, 0x81, SpecialValue.ZERO),
        (NAN, 0x82, SpecialValue.NAN),
        (UNINIT, 0x84, SpecialValue.UNINIT),
    ],
)
def test_special_offsets_table(value: int, byte7: int, special: SpecialValue) -> None:
    """§4.2: byte 7 of the LE int64 is 0x80 | id, bytes 0-6 are zero."""
    raw = np.int64(value).astype("<i8").tobytes()
    assert raw == bytes(7) + bytes([byte7])
    assert byte7 == 0x80 | int(special)
    assert SPECIAL_OFFSETS[np.int64(value)] == special
    assert special_of(value) == special


def test_special_offsets_are_exactly_three() -> None:
    assert sorted(int(k) for k in SPECIAL_OFFSETS) == [ZERO, NAN, UNINIT]


@pytest.mark.parametrize("offset", [0, 1, 72, 2**62, 2**63 - 1, -1, -0x7D00000000000000])
def test_not_special(offset: int) -> None:
    assert special_of(offset) == SpecialValue.NOT_SPECIAL


# -- round trips ------------------------------------------------------------------------------

OFFSETS = hnp.arrays(
    np.int64,
    st.integers(0, 600),
    elements=st.one_of(st.integers(0, 2**63 - 1), st.sampled_from([ZERO, NAN, UNINIT])),
)


@given(OFFSETS, st.booleans())
def test_roundtrip(offsets: np.ndarray, known: bool) -> None:
    idx = encode_index(offsets)
    got = decode_index(idx, len(offsets) if known else None, 0)
    np.testing.assert_array_equal(got, offsets, strict=True)
    assert pb.get_chunk_header(idx).typesize == 8


# -- malformed index chunks -------------------------------------------------------------------


def test_typesize_other_than_8() -> None:
    """§2.9 rule 6: C fetches offsets with getitem, in units of the chunk typesize."""
    chunk = pb.compress2(np.arange(3, dtype="<i8").tobytes(), typesize=4)
    with pytest.raises(FormatError, match=r"^index chunk: typesize at offset 103 is 4, expected 8"):
        decode_index(chunk, None, 100)


def test_nbytes_not_a_multiple_of_8() -> None:
    chunk = pb.compress2(bytes(12), typesize=8)
    with pytest.raises(FormatError, match=r"^index chunk: nbytes at offset 104 is 12, expected a"):
        decode_index(chunk, None, 100)


@pytest.mark.parametrize("nchunks", [0, 2, 4, 1000])
def test_nbytes_not_8_nchunks(nchunks: int) -> None:
    with pytest.raises(
        FormatError, match=rf"nbytes at offset 4 is 24, expected 8 \* nchunks = {8 * nchunks}"
    ):
        decode_index(SPEC_11_1_INDEX, nchunks, 0)


@pytest.mark.parametrize(
    "bad", [-1, -5, -0x7D00000000000000, -(2**63), ZERO + 1, ZERO | 0x80], ids=hex
)
def test_negative_offset_not_special(bad: int) -> None:
    """§4.2: any negative value but the three special ones is an error."""
    idx = encode_index(np.array([0, bad, 3], np.int64))
    with pytest.raises(
        FormatError, match=r"^index chunk: offset\[1\] is 0x[0-9a-f]+, expected non-neg"
    ):
        decode_index(idx, 3, 0)


@pytest.mark.parametrize("cut", range(len(SPEC_11_1_INDEX)))
def test_truncated_at_every_offset(cut: int) -> None:
    with pytest.raises(FormatError, match=r"^chunk header: (length|cbytes) at offset (0|12) is"):
        decode_index(SPEC_11_1_INDEX[:cut], 3, 329)


@pytest.mark.parametrize(
    ("pos", "value", "message"),
    [
        (4, 0, r"chunk header: cbytes at offset 12 is 56, expected nbytes \+ 32 = 32 \(memcpyed\)"),
        (4, -1, r"chunk header: nbytes at offset 4 is -1, expected >= 0"),
        (4, 2**31 - 1, r"chunk header: nbytes at offset 4 is 2147483647"),
        (12, 0, r"chunk header: cbytes at offset 12 is 0, expected >= 16"),
        (12, -1, r"chunk header: cbytes at offset 12 is -1"),
        (12, 2**31 - 1, r"chunk header: cbytes at offset 12 is 2147483647, expected at most 56"),
    ],
    ids=["nbytes=0", "nbytes=-1", "nbytes=huge", "cbytes=0", "cbytes=-1", "cbytes=huge"],
)
def test_bad_size_fields(pos: int, value: int, message: str) -> None:
    bad = bytearray(SPEC_11_1_INDEX)
    struct.pack_into("<i", bad, pos, value)
    with pytest.raises(FormatError, match=f"^{message}"):
        decode_index(bytes(bad), 3, 0)


# -- the index of an open frame, decoded block by block -----------------------------------------

PER_BLOCK = 16384 // 8  # offsets per block of the index chunks pyblosc2 writes


def test_first_lookups_decode_only_their_offset_then_the_block() -> None:
    """The first PICKS lookups in a block decode only their offset (no block kept); the next
    one decodes the block whole and keeps it; other blocks are left alone."""
    offsets = np.arange(5000, dtype=np.int64) * 100
    index = OffsetIndex.open(encode_index(offsets), 5000, 0)
    assert len(index) == 5000 and not index._blocks
    assert PICKS == 2
    assert index.offset(4321) == 432100 and index.offset(4322) == 432200
    assert not index._blocks and index._picked == {4321 // PER_BLOCK: 2}
    assert index.offset(4400) == 440000
    assert list(index._blocks) == [4321 // PER_BLOCK] and index._full is None
    assert index.offset(1) == 100 and sorted(index._blocks) == [4321 // PER_BLOCK]
    np.testing.assert_array_equal(index.all(), offsets, strict=True)
    assert index.offset(4999) == 499900


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
    """The calls of the index's picker ``(block, item, count)`` and of the general light read
    ``(first offset, stop)``, recorded."""
    import pyblosc2.frame.index as ix

    picks: list[tuple[int, ...]] = []
    reads: list[tuple[int, int]] = []
    real_read, real_picker = ix.read_in_block, ix.pair_picker

    def read(data: memoryview, lo: int, hi: int) -> np.ndarray | None:
        reads.append((lo // 8, hi // 8))
        return real_read(data, lo, hi)

    def picker(reader: object) -> object:
        pick = real_picker(reader)
        if pick is None:
            return None

        def spy(*args: int) -> bytes | None:
            picks.append(args)
            return pick(*args)

        return spy

    monkeypatch.setattr(ix, "read_in_block", read)
    monkeypatch.setattr(ix, "pair_picker", picker)
    return picks, reads


def test_a_picked_lookup_decodes_one_item_of_its_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first lookup asks the index's picker for the 8 bytes of its offset."""
    picks, reads = _spy(monkeypatch)
    index = OffsetIndex.open(encode_index(np.arange(5000, dtype=np.int64) * 7), 5000, 0)
    assert index.offset(3000) == 21000
    assert picks == [(1, 3000 - PER_BLOCK, 1)] and reads == []


def test_a_block_is_decoded_by_one_light_read_of_its_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lookup after the PICKS picked ones decodes its block by one light read of the
    block's offsets (no full reader: a BloscLZ block cost 40-70 us more through it)."""
    picks, reads = _spy(monkeypatch)

    def no_full_decode(*args: object) -> None:
        raise AssertionError("the full reader decoded the block")

    offsets = np.arange(5000, dtype=np.int64) * 11
    index = OffsetIndex.open(encode_index(offsets), 5000, 0)
    monkeypatch.setattr(OffsetIndex, "_decode", no_full_decode)
    for n in (2100, 2101, 2102, 4095):
        assert index.offset(n) == 11 * n
    assert picks == [(1, 2100 - PER_BLOCK, 1), (1, 2101 - PER_BLOCK, 1)]
    assert reads == [(PER_BLOCK, 2 * PER_BLOCK)]
    np.testing.assert_array_equal(index._blocks[1], offsets[PER_BLOCK : 2 * PER_BLOCK])


def test_a_pair_is_picked_by_one_read_and_counts_as_two(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk's first read looks up its offset and the next one's: one pick of their 16
    bytes when both lie in one block (two picks: the next lookup decodes the block); at a
    block's end or the last chunk, two lookups; a special chunk's next offset is not looked
    up."""
    picks, reads = _spy(monkeypatch)
    offsets = np.arange(5000, dtype=np.int64) * 13
    zero = next(iter(SPECIAL_OFFSETS))  # a special offset value
    offsets[3000], offsets[3001] = zero, -5  # a special chunk, then a bad offset
    index = OffsetIndex.open(encode_index(offsets), 5000, 0)
    assert index.pair(10) == (130, 143) and picks == [(0, 10, 2)]
    assert index._picked == {0: 2} and not index._blocks
    assert index.pair(20) == (260, 273) and list(index._blocks) == [0]
    picks.clear()
    assert index.pair(PER_BLOCK - 1) == (13 * (PER_BLOCK - 1), 13 * PER_BLOCK)
    assert picks == [(1, 0, 1)]  # block 0 kept, then a pick in block 1
    assert index.pair(4999) == (4999 * 13, None)
    assert index.pair(3000) == (int(zero), None)  # the bad one next to it is not taken
    with pytest.raises(FormatError, match=r"offset\[3001\]"):
        index.pair(3001)
    assert reads == [(0, PER_BLOCK), (PER_BLOCK, 2 * PER_BLOCK)]  # blocks 0 and 1, whole


@pytest.mark.parametrize("kind", ["runs", "unshuffled", "split"])
def test_lookups_the_picker_does_not_serve_take_the_light_read(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """An index of constant offsets (its blocks are runs), one not shuffled or one split in
    streams (any index another writer may make): the light read serves what the picker
    leaves, with the same values."""
    picks, reads = _spy(monkeypatch)
    runs = np.full(5000, 0x0101010101010101, np.int64)  # every byte 1: each block is a run
    offsets = runs if kind == "runs" else np.arange(5000, dtype=np.int64)
    if kind == "runs":
        chunk = encode_index(offsets)
    else:
        chunk = pb.compress2(
            offsets.tobytes(), typesize=8, blocksize=16384, codec=pb.Codec.BLOSCLZ,
            filters=[pb.Filter.SHUFFLE if kind == "split" else pb.Filter.NOFILTER],
            splitmode=pb.SplitMode.ALWAYS_SPLIT if kind == "split" else pb.SplitMode.NEVER_SPLIT,
        )  # fmt: skip
    index = OffsetIndex.open(chunk, 5000, 0)
    assert index.pair(100) == tuple(int(v) for v in offsets[100:102])
    assert index.offset(3000) == int(offsets[3000])
    if kind == "unshuffled":
        assert picks == [(0, 100, 2), (1, 3000 - PER_BLOCK, 1)] and reads == []
    else:
        assert reads[:2] == [(100, 102), (3000, 3001)]


@pytest.mark.parametrize("first", [4400, 4500, 4501], ids=["neighbour", "itself", "next"])
def test_a_bad_offset_fails_the_lookups_that_take_it(first: int) -> None:
    """A bad value fails every lookup of it (picked alone or out of its decoded block) and
    a whole decode, with the same error; a lookup of a good offset next to it works, picked
    or out of the decoded block."""
    offsets = np.arange(5000, dtype=np.int64)
    offsets[4500] = -1
    index = OffsetIndex.open(encode_index(offsets), 5000, 0)
    assert index.offset(10) == 10
    message = r"^index chunk: offset\[4500\] is 0xffffffffffffffff, expected non-neg"
    if first != 4500:
        assert index.offset(first) == first
    for _ in range(PICKS + 1):  # picked alone, then out of the decoded block
        with pytest.raises(FormatError, match=message):
            index.offset(4500)
    assert index.offset(4400) == 4400 and 4500 // PER_BLOCK in index._blocks
    with pytest.raises(FormatError, match=message):
        index.all()
    with pytest.raises(FormatError, match=message):
        decode_index(encode_index(offsets), 5000, 0)


def test_open_checks_the_index_header_and_sizes() -> None:
    """What opening a frame still checks of its index: the chunk header and layout, the
    typesize, and nbytes against the number of chunks."""
    chunk = pb.compress2(np.arange(3, dtype="<i8").tobytes(), typesize=4)
    with pytest.raises(FormatError, match=r"^index chunk: typesize at offset 103 is 4"):
        OffsetIndex.open(chunk, None, 100)
    with pytest.raises(FormatError, match=r"nbytes at offset 4 is 24, expected 8 \* nchunks = 32"):
        OffsetIndex.open(SPEC_11_1_INDEX, 4, 0)
    with pytest.raises(FormatError, match=r"^chunk header: cbytes at offset 12 is"):
        OffsetIndex.open(SPEC_11_1_INDEX[:40], 3, 0)


def _with_index(frame: bytes, index: bytes) -> bytes:
    """``frame`` with its index chunk replaced by ``index`` (frame_len updated)."""
    h = pb.schunk_from_cframe(frame).header
    start = h.header_len + h.cbytes
    old_len = pb.get_cbuffer_sizes(frame[start:])[1]
    buf = bytearray(frame[:start] + index + frame[start + old_len :])
    struct.pack_into(">Q", buf, 16, len(buf))
    return bytes(buf)


@pytest.fixture(scope="module")
def many_chunks() -> bytes:
    """A frame of 2,100 chunks: an index of two blocks."""
    s = pb.SChunk(chunksize=16, cparams=pb.CParams(typesize=8, codec=pb.Codec.LZ4))
    for i in range(2100):
        s.append_data(np.array([i, -i], np.int64))
    return s.to_cframe()


def test_frame_reads_one_chunk_without_the_whole_index(many_chunks: bytes) -> None:
    s = pb.schunk_from_cframe(many_chunks)
    assert s.nchunks == 2100
    assert s._reader.index._full is None and not s._reader.index._blocks
    got = np.frombuffer(s.decompress_chunk(2090), np.int64)
    assert got.tolist() == [2090, -2090]
    index = s._reader.index
    assert not index._blocks and list(index._picked) == [1] and index._full is None
    assert np.frombuffer(s.decompress_chunk(3), np.int64).tolist() == [3, -3]


def test_frame_with_a_bad_offset_opens_and_fails_where_it_is_needed(many_chunks: bytes) -> None:
    offsets = pb.schunk_from_cframe(many_chunks)._reader.offsets.copy()
    offsets[2090] = -5
    s = pb.schunk_from_cframe(_with_index(many_chunks, encode_index(offsets)))
    assert np.frombuffer(s.decompress_chunk(7), np.int64).tolist() == [7, -7]
    assert np.frombuffer(s.decompress_chunk(2048), np.int64).tolist() == [2048, -2048]
    with pytest.raises(FormatError, match=r"^index chunk: offset\[2090\] is 0x[0-9a-f]+, expected"):
        s.decompress_chunk(2090)
    with pytest.raises(FormatError, match=r"^index chunk: offset\[2090\]"):
        s[:]


def test_frame_with_a_bad_index_header_fails_to_open(many_chunks: bytes) -> None:
    offsets = pb.schunk_from_cframe(many_chunks)._reader.offsets
    short = pb.compress2(offsets[:-1].tobytes(), typesize=8)
    with pytest.raises(FormatError, match=r"^index chunk: nbytes at offset \d+ is 16792"):
        pb.schunk_from_cframe(_with_index(many_chunks, short))


def _bad_stream_in_block(chunk: bytes, j: int) -> bytes:
    """``chunk`` with the size of block ``j``'s first stream set beyond the chunk."""
    bad = bytearray(chunk)
    start = struct.unpack_from("<i", bad, 32 + 4 * j)[0]
    struct.pack_into("<i", bad, start, 2**30)
    return bytes(bad)


def test_a_bad_stream_header_fails_on_the_first_lookup_of_its_block() -> None:
    """Opening reads no stream header; a bad one is the same error as a whole check of the
    index chunk gives, on the first lookup of its block, and every time after; lookups in
    the other blocks work."""
    offsets = np.arange(5000, dtype=np.int64) * 3
    bad = _bad_stream_in_block(encode_index(offsets), 1)
    with pytest.raises(FormatError) as whole:
        pb.decompress2(bad)
    index = OffsetIndex.open(bad, 5000, 0)  # no error on open: no stream header read
    assert index._reader.streams == {} and index._reader.present == frozenset()
    assert index.offset(5) == 15 and index.offset(4999) == 4999 * 3
    for lookup in (lambda: index.offset(PER_BLOCK + 1), index.all):
        with pytest.raises(FormatError) as err:
            lookup()
        assert str(err.value) == str(whole.value)
    with pytest.raises(FormatError, match=str(whole.value).split(" is ")[0]):
        decode_index(bad, 5000, 0)


def test_a_frame_whose_index_has_a_bad_stream_opens_and_fails_where_it_is_needed(
    many_chunks: bytes,
) -> None:
    offsets = pb.schunk_from_cframe(many_chunks)._reader.offsets
    s = pb.schunk_from_cframe(
        _with_index(many_chunks, _bad_stream_in_block(encode_index(offsets), 1))
    )
    assert np.frombuffer(s.decompress_chunk(7), np.int64).tolist() == [7, -7]
    with pytest.raises(FormatError, match=r"^chunk 1: stream|^chunk: |csize|stream"):
        s.decompress_chunk(2090)
    with pytest.raises(FormatError):
        s[:]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_picker_gives_what_the_light_read_gives_or_nothing(data: st.DataObject) -> None:
    """Property: on an index chunk (offsets of any size and values, specials among them),
    damaged in one byte or not, the picker's bytes for any one or two items are the light
    read's (itself held to the full reader by test_firstread), or it leaves them (None): it
    never serves bytes the light read refuses."""
    from pyblosc2.chunk.firstread import read_in_block
    from pyblosc2.frame.indexpick import pair_picker

    n = data.draw(st.integers(3, 6000), label="n")
    kind = data.draw(st.sampled_from(["steps", "random", "specials"]), label="kind")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    if kind == "steps":
        offsets = np.cumsum(rng.integers(0, 9000, n)).astype(np.int64)
    else:
        offsets = rng.integers(0, 2**40, n, dtype=np.int64)
    if kind == "specials":
        offsets[rng.integers(0, n, max(1, n // 7))] = next(iter(SPECIAL_OFFSETS))
    chunk = bytearray(encode_index(offsets))
    if data.draw(st.booleans(), label="damaged"):
        at = data.draw(st.integers(32, len(chunk) - 1), label="at")
        chunk[at] = data.draw(st.integers(0, 255), label="byte")
    try:
        index = OffsetIndex.open(bytes(chunk), n, 0)
    except FormatError:
        return  # (a header or layout damaged: refused on open)
    pick = pair_picker(index._reader)
    if pick is None:
        return
    for _ in range(8):
        i = data.draw(st.integers(0, n - 1), label="item")
        count = data.draw(st.integers(1, 2), label="count") if i + 1 < n else 1
        per = index._per_block
        b = i // per
        if (i + count - 1) // per != b:
            continue
        got = pick(b, i - b * per, count)
        light = read_in_block(bytes(chunk), 8 * i, 8 * (i + count))
        if got is not None:
            assert light is not None and got == light.tobytes(), (i, count)
            if chunk == bytearray(encode_index(offsets)):
                assert got == offsets[i : i + count].tobytes()
