"""The parsed small chunks an open frame keeps (``FrameReader._wholes``) never outlive what
it read: another process's commit between two reads of one handle is seen by the second."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import run_child

ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
ITEMS = 1024  # int64 items per chunk: 8 KiB chunks, read whole and kept

UPDATE = """
import sys
import numpy as np
lib, path, locking, value = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
if lib == "pyblosc2":
    import pyblosc2 as mod
else:
    import blosc2 as mod
kw = {"locking": True} if locking else {}
s = mod.open(path, mode="a", **kw)
if sys.argv[5] == "small":
    new = np.full(1024, value, dtype=np.int64)
else:  # the test's _big(value)
    new = np.random.default_rng(5).integers(0, 1 << 24, 1 << 17) + value * (1 << 40)
s.update_data(1, new, copy=True)
"""


def _update(lib: str, path: Path, locking: bool, value: int, kind: str = "small") -> None:
    """Chunk 1 rewritten by another process of ``lib``: ``value`` repeated (``small``) or
    ``_big(value)`` (``big``)."""
    flag = "1" if locking else "0"
    cmd = [sys.executable, "-c", UPDATE, lib, str(path), flag, str(value), kind]
    run_child(cmd, "rewrite chunk 1", env=ENV, check=True)


@pytest.mark.parametrize("locking", [False, True], ids=["polled", "locked"])
@pytest.mark.parametrize("lib", ["pyblosc2", "python-blosc2"])
def test_a_commit_by_another_process_between_two_reads_is_seen(
    tmp_path: Path, lib: str, locking: bool
) -> None:
    pytest.importorskip("blosc2")
    path = tmp_path / "f.b2frame"
    data = np.arange(4 * ITEMS, dtype=np.int64)
    pb.SChunk(chunksize=8 * ITEMS, data=data, urlpath=str(path), mode="w", cparams={"typesize": 8})
    s = pb.open(str(path), mode="r", locking=locking)
    for value in (7, 8):
        before = np.frombuffer(s[ITEMS + 3], np.int64)[0]
        assert 1 in s._frame.reader._wholes  # chunk 1 parsed and kept
        assert np.frombuffer(s[ITEMS + 4], np.int64)[0] == before + (value == 7)
        _update(lib, path, locking, value)
        assert np.frombuffer(s[ITEMS + 3], np.int64)[0] == value
        assert np.frombuffer(s[ITEMS + 4], np.int64)[0] == value
        assert np.frombuffer(s[3], np.int64)[0] == 3


# -- the block kept by one-item reads (``FrameReader._held``) -----------------------------
BIG = 1 << 17  # int64 items per chunk: 1 MiB chunks of 8 blocks, read by byte ranges


def _big(value: int) -> np.ndarray:
    """A chunk whose stored size does not depend on ``value``: three planes of random
    bytes, ``value`` as the run of one constant byte plane (C rewrites it in place)."""
    return np.random.default_rng(5).integers(0, 1 << 24, BIG) + value * (1 << 40)


@pytest.mark.parametrize("locking", [False, True], ids=["polled", "locked"])
@pytest.mark.parametrize("lib", ["pyblosc2", "python-blosc2"])
def test_a_kept_block_is_not_served_after_another_process_rewrote_its_chunk(
    tmp_path: Path, lib: str, locking: bool
) -> None:
    """Reads in one block of a large chunk are served by the block the first one decoded;
    after another process rewrote the chunk (python-blosc2: in place, the frame's header
    unchanged, so no poll sees it) the next read decodes the new bytes."""
    pytest.importorskip("blosc2")
    path = tmp_path / "f.b2frame"
    data = np.concatenate([_big(1), _big(1), _big(1)])
    cp = {"typesize": 8, "codec": pb.Codec.LZ4, "clevel": 5}
    pb.SChunk(chunksize=8 * BIG, data=data, urlpath=str(path), mode="w", cparams=cp)
    s = pb.open(str(path), mode="r", locking=locking)
    i = BIG + 1000
    assert np.frombuffer(s[i], np.int64)[0] == data[i]
    assert np.frombuffer(s[i + 2], np.int64)[0] == data[i + 2]  # read again: kept
    held = s._frame.reader._held
    assert held is not None and held.stored is not None and held.image is not None
    assert np.frombuffer(s[i + 1], np.int64)[0] == data[i + 1]
    assert s._frame.reader._held is held  # served by the kept block
    size, head = path.stat().st_size, path.read_bytes()[:64]
    _update(lib, path, locking, 2, "big")
    if lib == "python-blosc2":  # rewritten in place: the same size and header
        assert (path.stat().st_size, path.read_bytes()[:64]) == (size, head)
    new = _big(2)
    assert np.frombuffer(s[i], np.int64)[0] == new[1000]
    assert np.frombuffer(s[i + 1], np.int64)[0] == new[1001]
    assert np.frombuffer(s.get_slice(i - 5, i + 5), np.int64).tolist() == new[995:1005].tolist()
    assert np.frombuffer(s[3], np.int64)[0] == data[3]


PATCH = """
import sys
a, b = sys.argv[1], sys.argv[2]
new = open(b, "rb").read()
with open(a, "r+b") as f:
    old = f.read()
    assert len(old) == len(new)
    at = [i for i in range(len(old)) if old[i] != new[i]]
    f.seek(at[0])
    f.write(new[at[0] : at[-1] + 1])
"""


def test_a_kept_block_is_not_served_after_its_stored_bytes_changed_in_place(
    tmp_path: Path,
) -> None:
    """Another process rewrites a chunk's bytes in place, the frame's header and size
    unchanged (what a poll of the header cannot see): the next read in the kept block
    compares the block's stored bytes and decodes the new ones."""
    path, other = tmp_path / "f.b2frame", tmp_path / "g.b2frame"
    cp = {"typesize": 8, "codec": pb.Codec.LZ4, "clevel": 5}
    for p, value in ((path, 1), (other, 2)):
        data = np.concatenate([_big(1), _big(value), _big(1)])
        pb.SChunk(chunksize=8 * BIG, data=data, urlpath=str(p), mode="w", cparams=cp)
    head = path.read_bytes()[:4096]
    assert other.read_bytes()[:4096] == head  # only chunk 1's stored bytes differ
    s = pb.open(str(path), mode="r")
    i = BIG + 1000
    assert np.frombuffer(s[i], np.int64)[0] == _big(1)[1000]
    assert np.frombuffer(s[i + 2], np.int64)[0] == _big(1)[1002]
    reader = s._frame.reader
    assert reader._held is not None and reader._held.image is not None  # kept
    run_child(
        [sys.executable, "-c", PATCH, str(path), str(other)],
        "patch a block in place",
        env=ENV,
        check=True,
    )
    assert np.frombuffer(s[i + 1], np.int64)[0] == _big(2)[1001]
    assert s._frame.reader is reader  # no poll saw it: the block's bytes were compared
    assert np.frombuffer(s[i], np.int64)[0] == _big(2)[1000]


# -- small chunks of an NDArray read block by block (FrameReader.with_chunk_blocks) ----------
def _nd(value: int) -> np.ndarray:
    """(64, 64) int64 whose chunk (1, 0) stores as many bytes at any ``value``: three random
    byte planes (stored raw), ``value`` as a run in the sixth."""
    a = np.random.default_rng(9).integers(0, 1 << 24, (64, 64))
    a[32:, :32] += value * (1 << 40)
    return a


def _nd_file(path: Path, value: int) -> None:
    pb.asarray(
        _nd(value), urlpath=str(path), mode="w", chunks=(32, 32), blocks=(8, 32),
        cparams={"codec": pb.Codec.LZ4, "clevel": 5},
    )  # fmt: skip


def test_a_small_chunk_read_by_blocks_is_kept_from_its_second_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first read of a few blocks of a small chunk reads those blocks; the second reads
    the chunk whole, parses and keeps it; later reads parse nothing; another process's
    rewrite of its bytes in place (header and size unchanged) is seen by the next read."""
    from pyblosc2.frame.contiguous import FrameReader

    path, other = tmp_path / "a.b2nd", tmp_path / "b.b2nd"
    _nd_file(path, 1)
    _nd_file(other, 2)
    assert path.stat().st_size == other.stat().st_size
    parsed: list[int] = []
    real = FrameReader._whole_reader

    def spy(self: FrameReader, n: int, small: object) -> object:
        parsed.append(n)
        return real(self, n, small)

    monkeypatch.setattr(FrameReader, "_whole_reader", spy)
    a = pb.open(str(path), mode="r")
    reader = a.schunk._frame.reader
    want = _nd(1)[32:40, 3:9]
    np.testing.assert_array_equal(a[32:40, 3:9], want)
    assert parsed == [] and 2 in reader._by_blocks and 2 not in reader._wholes
    np.testing.assert_array_equal(a[32:40, 3:9], want)
    assert parsed == [2] and 2 in reader._wholes  # read whole, parsed, kept
    np.testing.assert_array_equal(a[40:48, 0:4], _nd(1)[40:48, 0:4])
    np.testing.assert_array_equal(a[33, 5], _nd(1)[33, 5])
    assert parsed == [2]  # served by the kept reader
    run_child(
        [sys.executable, "-c", PATCH, str(path), str(other)],
        "patch a chunk in place",
        env=ENV,
        check=True,
    )
    np.testing.assert_array_equal(a[32:40, 3:9], _nd(2)[32:40, 3:9])
    assert a.schunk._frame.reader is reader  # no poll saw it: the chunk's bytes were compared


def test_small_chunks_read_whole_by_an_ndarray_read_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks an NDArray read decodes whole are parsed once and kept when small: the next
    whole read parses none of them; a rewrite in place is seen."""
    from pyblosc2.chunk.layout import ChunkLayout

    path, other = tmp_path / "a.b2nd", tmp_path / "b.b2nd"
    _nd_file(path, 1)
    _nd_file(other, 2)
    parsed: list[int] = []
    real = ChunkLayout.parse

    def spy(h: object, *args: object, **kwargs: object) -> object:
        parsed.append(1)
        return real(h, *args, **kwargs)

    a = pb.open(str(path), mode="r")
    np.testing.assert_array_equal(a[:], _nd(1))
    assert sorted(a.schunk._frame.reader._wholes) == [0, 1, 2, 3]
    monkeypatch.setattr(ChunkLayout, "parse", staticmethod(spy))
    np.testing.assert_array_equal(a[:], _nd(1))
    assert parsed == []
    run_child(
        [sys.executable, "-c", PATCH, str(path), str(other)],
        "patch a chunk in place",
        env=ENV,
        check=True,
    )
    np.testing.assert_array_equal(a[:], _nd(2))
    assert len(parsed) == 1  # the rewritten chunk, parsed again
