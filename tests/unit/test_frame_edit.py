"""The frame layer's single commit path, as the containers use it: chunk lists with new
metalayers in one commit, reserved vlmeta names, magic checked for files too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.frame.edit import ContiguousPlacement, SparsePlacement, plan_chunks
from pyblosc2.frame.header import FrameHeader


def _schunk(tmp_path: Path, contiguous: bool = True, **kw) -> pb.SChunk:
    s = pb.SChunk(
        chunksize=400,
        urlpath=str(tmp_path / ("a.b2frame" if contiguous else "a.sparse")),
        contiguous=contiguous,
        mode="w",
        meta={"m": 1},
        cparams={"typesize": 4},
        **kw,
    )
    for i in range(3):
        s.append_data(np.full(100, i, np.int32))
    return s


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "sparse"])
def test_set_chunks_with_meta_is_one_commit(tmp_path: Path, contiguous: bool) -> None:
    s = _schunk(tmp_path, contiguous)
    new = s.compress_data(np.full(100, 9, np.int32))
    s.set_chunks([2, new, 0], meta={"m": b"\x07"})
    back = pb.open(s.urlpath)
    assert back.meta["m"] == 7
    got = np.frombuffer(back[:], np.int32).reshape(3, 100)[:, 0].tolist()
    assert got == [2, 9, 0]


def test_set_chunks_refuses_a_metalayer_of_another_size(tmp_path: Path) -> None:
    s = _schunk(tmp_path)
    before = s.to_cframe()
    with pytest.raises(pb.ParamError, match="keep its size"):
        s.set_chunks([0], meta={"m": b"\x01\x02"})
    assert s.to_cframe() == before


def test_reserved_vlmeta_names_are_refused(tmp_path: Path) -> None:
    s = _schunk(tmp_path, fingerprint=True)
    with pytest.raises(pb.ParamError, match="reserved"):
        s.vlmeta["_pyblosc2_fp"] = 1
    s.append_data(np.full(100, 5, np.int32))
    assert s.verify() == []


@pytest.mark.parametrize("key", [5, "", "x" * 32])
def test_bad_vlmeta_names(tmp_path: Path, key) -> None:
    s = _schunk(tmp_path)
    with pytest.raises(pb.ParamError, match="vlmeta names"):
        s.vlmeta[key] = 1


def test_a_frame_file_with_a_corrupted_magic_is_refused(tmp_path: Path) -> None:
    s = _schunk(tmp_path)
    path = s.urlpath
    raw = bytearray(Path(path).read_bytes())
    raw[3] ^= 0xFF  # inside "b2frame"
    Path(path).write_bytes(raw)
    with pytest.raises(pb.FormatError, match="magic at offset 2"):
        pb.open(path)


@pytest.mark.parametrize("pos", [0, 1, 10, 15, 24, 29, 38, 47, 52, 57, 62, 65, 69])
def test_every_prefix_tag_is_checked(tmp_path: Path, pos: int) -> None:
    raw = bytearray(_schunk(tmp_path).to_cframe())
    raw[pos] ^= 0x01
    with pytest.raises(pb.FormatError, match=f"at offset {pos} "):
        FrameHeader.from_bytes(bytes(raw))


def test_plan_goes_variable_and_back() -> None:
    h = FrameHeader(0, 200, 0x12, 0, 0x55, 2, 800, 0, 4, 0, 400)
    assert plan_chunks(h, [400, 400], [0, 1], None).chunksize == 400
    chunk = pb.compress2(np.zeros(50, np.int32), typesize=4)
    assert plan_chunks(h, [400, 400], [0, chunk, 1], None).chunksize == 0
    assert plan_chunks(h, [400, 400], [1, 0, chunk], None).chunksize == 400


def test_placements() -> None:
    c = ContiguousPlacement(100)
    assert (c.place(b"ab"), c.place(b"cde"), c.end, c.data) == (100, 102, 105, b"abcde")
    s = SparsePlacement(7)
    assert (s.place(b"x"), s.place(b"y"), s.placed) == (7, 8, {7: b"x", 8: b"y"})


def test_a_small_slice_of_a_small_chunk_reads_about_that_chunk(tmp_path: Path) -> None:
    """Chunks smaller than the partial-read threshold are fetched whole, and only themselves
    (a bound up to the end of the data area once made a slice read the chunks after it)."""
    path = str(tmp_path / "s.b2frame")
    s = pb.SChunk(chunksize=400_000, urlpath=path, mode="w", cparams={"typesize": 8})
    for i in range(8):
        s.append_data(np.linspace(i, i + 1, 50_000))
    s = pb.open(path)
    offsets = s.chunk_offsets
    chunk3 = int(offsets[4] - offsets[3])
    before = s.bytes_read
    s[3 * 50_000 + 10 : 3 * 50_000 + 20]
    assert s.bytes_read - before <= chunk3 + 64


def test_an_in_memory_frame_is_edited_right_after_a_threaded_read() -> None:
    """python-blosc2's test_schunk_delete/insert/update: a chunk decompressed on two threads,
    then the in-memory frame resized at once (no task of the read may keep a view of it)."""
    s = pb.SChunk(
        chunksize=200_000 * 4, cparams={"nthreads": 2}, dparams={"nthreads": 2}, contiguous=True
    )
    for i in range(6):
        s.append_data(i * np.arange(200_000, dtype=np.int32))
    for _ in range(40):
        kept = s.decompress_chunk(1)  # kept alive across the edit, as the test does
        s.delete_chunk(0)
        s.insert_data(0, np.arange(200_000, dtype=np.int32), copy=True)
        s.update_data(2, np.zeros(200_000, np.int32), copy=True)
        assert kept == s.decompress_chunk(1)
