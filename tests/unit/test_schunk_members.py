"""schunk/members.py: info/info_items, update_cparams/update_dparams, set_slice,
update_special, get_lazychunk (chunk-format.md §13), the context manager, and open()'s
cparams/mode handling."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.errors import BoundsError, ParamError, ParamTypeError


def test_info_items_and_report() -> None:
    s = blosc2.SChunk(chunksize=24000, data=b"a large, repeated string" * 1000)
    items = dict(s.info_items)
    assert list(items) == [
        "type",
        "chunksize",
        "blocksize",
        "typesize",
        "nbytes",
        "cbytes",
        "cratio",
        "cparams",
        "dparams",
    ]
    assert items["type"] == "SChunk"
    assert items["nbytes"] == "24000 (23.44 KiB)"
    assert items["cratio"] == f"{s.cratio:.2f}x"
    text = repr(s.info)
    assert text.startswith("type      : SChunk\nchunksize : 24000\n")
    assert "cparams   : CParams(" in text
    assert all(len(line) <= 96 for line in text.splitlines())


def test_update_cparams_and_dparams() -> None:
    s = blosc2.SChunk(chunksize=400, cparams={"typesize": 4})
    s.update_cparams({"clevel": 1, "codec": blosc2.Codec.LZ4})
    assert (s.cparams.clevel, s.cparams.codec, s.cparams.typesize) == (1, blosc2.Codec.LZ4, 4)
    s.append_data(np.arange(100, dtype=np.int32))
    assert ChunkHeader.from_bytes(s.get_chunk(0)).compformat == 1  # new chunks use LZ4
    s.update_cparams(blosc2.CParams(typesize=4, clevel=9, filters=[blosc2.Filter.BITSHUFFLE]))
    assert s.cparams.clevel == 9
    s.append_data(np.arange(100, dtype=np.int32))
    assert ChunkHeader.from_bytes(s.get_chunk(1)).filters[0] == blosc2.Filter.BITSHUFFLE
    s.update_dparams({"nthreads": 3})
    assert s.dparams.nthreads == 3
    with pytest.raises(ParamTypeError, match="new_cparams"):
        s.update_cparams(9)
    with pytest.raises(ParamTypeError, match="new_dparams"):
        s.update_dparams(3)


def test_set_slice_is_setitem() -> None:
    s = blosc2.SChunk(chunksize=40, data=np.zeros(30, np.int32))
    s.set_slice(np.arange(5, dtype=np.int32), start=8, stop=13)
    np.testing.assert_array_equal(np.frombuffer(s[6:14], np.int32), [0, 0, 0, 1, 2, 3, 4, 0])
    s.set_slice(np.full(2, 9, np.int32), start=30)  # past the end: grows
    assert len(s) == 32


@pytest.mark.parametrize(
    ("special", "value", "want"),
    [
        (blosc2.SpecialValue.ZERO, None, 0),
        (blosc2.SpecialValue.VALUE, np.int32(7), 7),
        (blosc2.SpecialValue.UNINIT, None, None),
    ],
)
@pytest.mark.parametrize("nitems", [100, 90])  # a full and a short last chunk
def test_update_special(special, value, want, nitems) -> None:
    data = np.arange(nitems, dtype=np.int32)
    s = blosc2.SChunk(chunksize=400, cparams={"typesize": 4})
    s.append_data(data)
    original = s.get_chunk(0)
    assert s.update_special(0, special, value) == 1
    info = next(s.iterchunks_info())
    assert info.special == special
    assert s.nbytes == data.nbytes
    if want is not None:
        np.testing.assert_array_equal(np.frombuffer(s[:], np.int32), np.full(nitems, want))
    s.update_chunk(0, original)  # a refetch brings the data back bit-exact
    np.testing.assert_array_equal(np.frombuffer(s.decompress_chunk(0), np.int32), data)


def test_update_special_errors() -> None:
    s = blosc2.SChunk(chunksize=400, data=np.arange(100, dtype=np.int32))
    with pytest.raises(BoundsError):
        s.update_special(5, blosc2.SpecialValue.ZERO)
    with pytest.raises(IndexError):
        s.update_special(-1, blosc2.SpecialValue.ZERO)
    with pytest.raises(ParamTypeError):
        s.update_special(0, blosc2.SpecialValue.NOT_SPECIAL)
    with pytest.raises(TypeError):
        s.update_special(0, 1)
    with pytest.raises(ParamError, match="value"):
        s.update_special(0, blosc2.SpecialValue.VALUE)


@pytest.mark.parametrize("contiguous", [True, False])
def test_lazychunk_of_a_file_describes_every_block(tmp_path, contiguous) -> None:
    path = tmp_path / ("a.b2nd" if contiguous else "a.sparse")
    a = blosc2.arange(
        0,
        100_000,
        dtype=np.int32,
        chunks=(50_000,),
        blocks=(5_000,),
        urlpath=str(path),
        mode="w",
        contiguous=contiguous,
    )
    lazy = a.schunk.get_lazychunk(1)
    full = a.schunk.get_chunk(1)
    h = ChunkHeader.from_bytes(lazy)
    nblocks = h.nbytes // h.blocksize
    assert nblocks == 10 and h.lazy and h.cbytes == len(full)
    assert len(lazy) == 32 + 4 * nblocks + 4 + 8 + 4 * nblocks
    bstarts = np.frombuffer(lazy, "<i4", nblocks, 32)
    assert lazy[32 : 32 + 4 * nblocks] == full[32 : 32 + 4 * nblocks]
    nchunk, offset = struct.unpack_from("<iq", lazy, 32 + 4 * nblocks)
    spans = np.frombuffer(lazy[-4 * nblocks :], "<i4")
    assert 32 + 4 * nblocks + spans.sum() == h.cbytes
    assert (bstarts >= 32 + 4 * nblocks).all()
    if contiguous:
        assert nchunk == 1
        with open(path, "rb") as f:
            f.seek(offset)
            assert f.read(len(full)) == full
    else:
        assert nchunk == offset and (path / f"{offset:08X}.chunk").exists()


def test_lazychunk_in_memory_and_special() -> None:
    b = blosc2.arange(0, 100_000, dtype=np.int32, chunks=(50_000,), blocks=(5_000,))
    assert b.schunk.get_lazychunk(0) == b.schunk.get_chunk(0)[:32]
    c = blosc2.full((100,), fill_value=np.int32(7))
    assert c.schunk.get_lazychunk(0) == c.schunk.get_chunk(0)


def test_context_manager_returns_the_schunk() -> None:
    s = blosc2.SChunk()
    with s as t:
        assert t is s


def test_contiguous_in_memory_is_what_was_asked() -> None:
    assert blosc2.SChunk().contiguous is False
    assert blosc2.SChunk(contiguous=True).contiguous is True
    assert blosc2.schunk_from_cframe(blosc2.SChunk().to_cframe()).contiguous is True


def test_reading_mode_needs_a_urlpath() -> None:
    with pytest.raises(ParamError, match="not specify a urlpath"):
        blosc2.SChunk(mode="r")


def test_storage_mode_none_means_the_default_or_mmap_mode(tmp_path) -> None:
    assert blosc2.Storage(mode=None).mode == "a"
    path = str(tmp_path / "m.b2frame")
    s = blosc2.SChunk(urlpath=path, mode=None, mmap_mode="w+", cparams={"typesize": 4})
    assert s.mode == "w"


def test_an_ndarray_file_is_not_opened_as_an_schunk(tmp_path) -> None:
    path = str(tmp_path / "a.b2nd")
    blosc2.asarray(np.arange(5), urlpath=path, mode="w")
    with pytest.raises(ParamError, match="Cannot open an NDArray as a SChunk"):
        blosc2.SChunk(urlpath=path, mode="r")
    assert isinstance(blosc2.open(path), blosc2.NDArray)


def test_open_applies_cparams_and_dparams(tmp_path) -> None:
    path = str(tmp_path / "s.b2frame")
    s = blosc2.SChunk(chunksize=40, urlpath=path, mode="w", cparams={"typesize": 4})
    s.append_data(np.arange(10, dtype=np.int32))
    t = blosc2.open(path, mode="a", cparams={"clevel": 2, "nthreads": 1}, dparams={"nthreads": 3})
    assert (t.cparams.clevel, t.cparams.nthreads, t.cparams.typesize) == (2, 1, 4)
    assert t.dparams.nthreads == 3
    assert t.nchunks == 1
    r = blosc2.open(path, mode="r", mmap_mode=None, cparams={"clevel": 3})
    assert r.cparams.clevel == 3 and r.mode == "r"


def test_open_with_mode_w_empties_the_frame(tmp_path) -> None:
    path = str(tmp_path / "s.b2frame")
    s = blosc2.SChunk(chunksize=40, urlpath=path, mode="w", cparams={"typesize": 4})
    s.append_data(np.arange(10, dtype=np.int32))
    w = blosc2.open(path, mode="w")
    assert w.nchunks == 0
    assert w.insert_data(0, np.zeros(10, np.int32), True) == 1


def test_open_with_mode_w_keeps_an_ndarray_as_python_blosc2_does(tmp_path, cblosc2) -> None:
    """python-blosc2 4.x empties a plain SChunk opened with mode='w' but opens an N-d array
    whole (its shape must go on matching its chunks): pyblosc2 does both the same."""
    path = str(tmp_path / "a.b2nd")
    x = np.full((13, 13), 7)
    blosc2.asarray(x, urlpath=path, mode="w")
    for lib in (blosc2, cblosc2):
        a = lib.open(path, mode="w")
        np.testing.assert_array_equal(a[...], x)
        a[...] = 0
        a.resize((50, 50))
        blosc2.asarray(x, urlpath=path, mode="w")


def test_schunk_constructor_on_an_existing_file_keeps_its_message(tmp_path) -> None:
    path = str(tmp_path / "s.b2frame")
    blosc2.SChunk(chunksize=40, urlpath=path, mode="w")
    with pytest.raises(ParamError, match="exists"):
        blosc2.SChunk(chunksize=40, urlpath=path, mode="a", cparams={"clevel": 1})
