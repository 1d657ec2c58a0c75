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

    want2 = r.decode()[4000:4200].tobytes()
    monkeypatch.setattr(Shuffle, "backward", whole_block)
    assert r.decode_range(4096 + 800, 4096 + 1600).tobytes() == want
    # two blocks are decoded whole, in a run of planes (no separate unshuffle pass) ...
    assert r.decode_range(4000, 4200).tobytes() == want2
    # ... or by the fused path per block ...
    monkeypatch.setattr(ChunkReader, "_in_plane_runs", lambda *a: False)
    assert r.decode_range(4000, 4200).tobytes() == want2
    # ... or, where both decline, by the general one, which unshuffles whole blocks
    monkeypatch.setattr("pyblosc2.chunk.decode.decode_block_fused", lambda *a: False)
    with pytest.raises(AssertionError, match="whole block"):
        r.decode_range(4000, 4200)


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


def _items(start: int, n: int) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.int64)


EDITS = [
    pytest.param(lambda s: s.update_chunk(1, s.compress_data(_items(10**6, 4096))), id="update"),
    pytest.param(lambda s: s.insert_chunk(1, s.compress_data(_items(10**6, 4096))), id="insert"),
    pytest.param(lambda s: s.delete_chunk(0), id="delete"),
    pytest.param(lambda s: s.__setitem__(slice(4096, 8192), _items(10**6, 4096)), id="setitem"),
]


@pytest.mark.parametrize("edit", EDITS)
@pytest.mark.parametrize("contiguous", [True, False])
def test_cached_layouts_follow_every_change(tmp_path, edit, contiguous) -> None:
    s = pb.SChunk(
        chunksize=4096 * 8,
        data=_items(0, 4 * 4096),
        urlpath=str(tmp_path / ("s.b2frame" if contiguous else "s.b2dir")),
        contiguous=contiguous,
        cparams={"typesize": 8, "clevel": 9, "blocksize": 4096},
    )
    ref = bytearray(s[:])
    assert s.get_slice(4100, 4110) == ref[4100 * 8 : 4110 * 8]  # caches chunk 1's layout
    edit(s)
    want = s.decompress_chunk(1)
    assert s.get_slice(4100, 4110) == want[4 * 8 : 14 * 8]


def test_a_second_handle_sees_changes_through_the_cache(tmp_path) -> None:
    path = str(tmp_path / "shared.b2frame")
    kw = {"chunksize": 4096 * 8, "cparams": {"typesize": 8, "blocksize": 4096}}
    w = pb.SChunk(data=_items(0, 2 * 4096), urlpath=path, locking=True, **kw)
    r = pb.open(path, mode="r", locking=True)
    assert r.get_slice(4100, 4101) == _items(4100, 1).tobytes()
    w.update_chunk(1, w.compress_data(_items(10**6, 4096)))
    assert r.get_slice(4100, 4101) == _items(10**6 + 4, 1).tobytes()
