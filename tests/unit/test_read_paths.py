"""The fast read paths give the same bytes as a whole decode: results decoded straight into
``bytes`` (:func:`fill_bytes`), ranges of one block unshuffling only their items, and ranges
written into a caller's ``out``."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.chunk.decode import ChunkReader, fill_bytes
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk


@pytest.mark.parametrize("n", [0, 5, 1 << 16, (1 << 20) + 3])
def test_fill_bytes_returns_what_fill_wrote(n: int) -> None:
    ref = (np.arange(n) % 251).astype(np.uint8)
    got = fill_bytes(n, lambda v: v.__setitem__(slice(None), ref))
    assert type(got) is bytes
    assert got == ref.tobytes()
    assert hash(got) == hash(ref.tobytes())


def test_fill_bytes_gives_a_writable_view_of_the_right_size() -> None:
    seen = []
    fill_bytes(1 << 17, lambda v: seen.append((v.shape, v.dtype, v.flags.writeable)))
    assert seen == [((1 << 17,), np.dtype(np.uint8), True)]


def _chunk(
    typesize: int, filters: tuple[int, ...], meta: int = 0, codec: int = 1, nbytes: int = 40_003
) -> bytes:
    data = (np.arange(nbytes) // 13 % 251).astype(np.uint8)
    data[::97] = np.arange(len(data[::97])) % 7  # compressible, not trivially
    pipeline = (0,) * (6 - len(filters)) + filters
    metas = (0,) * 5 + (meta,)
    bs = 4096 // typesize * typesize
    spec = EncodeSpec(typesize, 5, codec, blocksize=bs, filters=pipeline, filters_meta=metas)
    return encode_chunk(memoryview(data.tobytes()), spec)


CASES = [
    pytest.param(8, (1,), 0, 1, id="shuffle-8-lz4"),
    pytest.param(8, (1,), 0, 5, id="shuffle-8-zstd"),
    pytest.param(2, (1,), 0, 5, id="shuffle-2-zstd"),
    pytest.param(4, (1,), 0, 1, id="shuffle-4"),
    pytest.param(3, (1,), 0, 1, id="shuffle-3"),
    pytest.param(8, (1,), 4, 1, id="shuffle-8-group-4"),
    pytest.param(1, (1,), 0, 1, id="shuffle-1"),
    pytest.param(4, (), 0, 1, id="no-filter"),
    pytest.param(4, (2,), 0, 1, id="bitshuffle"),
    pytest.param(4, (3, 1), 0, 1, id="delta-shuffle"),
]
RANGES = [
    (0, 1),
    (5, 105),
    (4090, 4096),
    (4095, 4097),
    (8000, 12_000),
    (39_990, 40_003),
    (0, 40_003),
]


@pytest.mark.parametrize(("typesize", "filters", "meta", "codec"), CASES)
@pytest.mark.parametrize(("lo", "hi"), RANGES)
def test_decode_range_matches_whole_decode(typesize, filters, meta, codec, lo, hi) -> None:
    r = ChunkReader.open(_chunk(typesize, filters, meta, codec))
    whole = r.decode()
    assert r.decode_range(lo, hi).tobytes() == whole[lo:hi].tobytes()
    out = np.full(hi - lo + 3, 0xAA, np.uint8)
    got = r.decode_range(lo, hi, out=out)
    assert got.tobytes() == whole[lo:hi].tobytes()
    assert np.shares_memory(got, out)
    assert out[hi - lo :].tolist() == [0xAA] * 3


def test_one_block_range_unshuffles_only_its_items(monkeypatch) -> None:
    from pyblosc2.filters.shuffle import Shuffle

    r = ChunkReader.open(_chunk(8, (1,)))
    want = r.decode()[4096 + 800 : 4096 + 1600].tobytes()

    def whole_block(*args: object) -> None:
        raise AssertionError("a whole block was unshuffled")

    monkeypatch.setattr(Shuffle, "backward", whole_block)
    assert r.decode_range(4096 + 800, 4096 + 1600).tobytes() == want
    with pytest.raises(AssertionError, match="whole block"):
        r.decode_range(4000, 4200)  # two blocks: the general path


@pytest.mark.parametrize("nthreads", [1, 2])
def test_get_slice_and_decompress_return_the_same_bytes(tmp_path, nthreads) -> None:
    data = np.linspace(0, 1, 300_000)
    s = pb.SChunk(
        chunksize=2**19,
        data=data,
        urlpath=str(tmp_path / "s.b2frame"),
        cparams={"typesize": 8, "nthreads": nthreads},
        dparams={"nthreads": nthreads},
    )
    raw = data.tobytes()
    assert s[:] == raw
    assert s.get_slice(1000, 200_000) == raw[8000:1_600_000]
    assert s.decompress_chunk(1) == raw[2**19 : 2**20]
    out = bytearray(8 * 70_000)
    assert s.get_slice(65_000, 135_000, out=out) is None
    assert bytes(out) == raw[8 * 65_000 : 8 * 135_000]
    chunk = pb.compress2(raw, typesize=8)
    assert pb.decompress2(chunk) == raw
    assert pb.decompress(chunk) == raw
