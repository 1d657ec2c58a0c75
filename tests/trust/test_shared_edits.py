"""Shared frames lose nothing: every change reads the state it edits inside the lock hold
that commits it (SChunk edits of every kind, NDArray writes, resizes, appends, metadata),
stale handles are refused without locking, NDArray handles follow other handles' shapes,
threads sharing a handle see one shape or the other, and processes of pyblosc2 and
python-blosc2 editing one frame at once lose no returned call (tests/trust/sharer.py; the
long campaign is tools/locking_campaign.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.frame.contiguous import FrameReader
from tests.bounded import join_all

from . import sharer

ITEMS = 100


def _chunk(tag: int) -> np.ndarray:
    return np.full(ITEMS, tag, np.int64)


def _schunk(path: Path, contiguous: bool = True, **kw: Any) -> pb.SChunk:
    s = pb.SChunk(
        chunksize=ITEMS * 8,
        urlpath=str(path),
        contiguous=contiguous,
        mode="w",
        cparams={"typesize": 8, "nthreads": 1},
        **kw,
    )
    for t in range(3):
        s.append_data(_chunk(t))
    return s


def _tags(s: Any) -> list[int]:
    return [int(np.frombuffer(s.decompress_chunk(n), np.int64)[0]) for n in range(s.nchunks)]


EDITS = {
    "update_data": lambda s: s.update_data(1, _chunk(50), True),
    "update_chunk": lambda s: s.update_chunk(1, pb.compress2(_chunk(50), typesize=8)),
    "insert_data": lambda s: s.insert_data(1, _chunk(50), True),
    "delete_chunk": lambda s: s.delete_chunk(1),
    "reorder_offsets": lambda s: s.reorder_offsets(list(range(s.nchunks))[::-1]),
    "slice write": lambda s: s.__setitem__(slice(ITEMS, 2 * ITEMS), _chunk(50)),
    "update_special": lambda s: s.update_special(1, pb.SpecialValue.ZERO),
    "vlmeta": lambda s: s.vlmeta.__setitem__("k", 1),
    "meta": lambda s: s.meta.__setitem__("m", 7),
}


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "sparse"])
@pytest.mark.parametrize("edit", sorted(set(EDITS) - {"reorder_offsets"}))
def test_a_locked_edit_keeps_what_another_handle_appended(
    tmp_path: Path, edit: str, contiguous: bool
) -> None:
    """The issue's two handles: an edit from a handle that has not seen another handle's
    append decides from the frame as it is under the lock, so the append stays."""
    path = tmp_path / "a.b2frame"
    _schunk(path, contiguous, locking=True, meta={"m": 0})
    one = pb.open(str(path), mode="a", locking=True)
    two = pb.open(str(path), mode="a", locking=True)
    assert two.nchunks == 3
    one.append_data(_chunk(99))
    one.vlmeta["other"] = "kept"
    EDITS[edit](two)
    after = pb.open(str(path))
    assert 99 in _tags(after) and after.vlmeta["other"] == "kept"
    expected = {"insert_data": 5, "delete_chunk": 3}.get(edit, 4)
    assert after.nchunks == two.nchunks == expected


def test_a_reorder_of_the_chunks_a_handle_saw_is_refused_when_there_are_more(
    tmp_path: Path,
) -> None:
    """A permutation is the caller's decision: checked against the chunk count under the
    lock, a permutation of a count another handle changed is refused, nothing changes."""
    path = tmp_path / "a.b2frame"
    _schunk(path, locking=True)
    one = pb.open(str(path), mode="a", locking=True)
    two = pb.open(str(path), mode="a", locking=True)
    one.append_data(_chunk(99))
    with pytest.raises(pb.ParamError, match="permutation"):
        two.reorder_offsets([2, 1, 0])
    assert _tags(pb.open(str(path))) == [0, 1, 2, 99]


def test_a_stale_unlocked_edit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.b2frame"
    _schunk(path)
    one, two = pb.open(str(path), mode="a"), pb.open(str(path), mode="a")
    one.append_data(_chunk(99))
    for edit in ("update_data", "delete_chunk", "slice write", "vlmeta"):
        with pytest.raises(pb.FrameChangedError):
            EDITS[edit](two)
    assert _tags(pb.open(str(path))) == [0, 1, 2, 99]


def test_refresh_says_whether_the_frame_changed(tmp_path: Path) -> None:
    path = tmp_path / "a.b2frame"
    w = _schunk(path)
    r = pb.open(str(path))
    assert r.refresh() is False
    w.vlmeta["k"] = 1  # a change that keeps the frame's sizes (the poll cannot see it)
    assert r.refresh() is True and r.vlmeta["k"] == 1
    assert r.refresh() is False
    assert pb.SChunk().refresh() is False and pb.zeros(3).refresh() is False


def test_refresh_of_an_unchanged_frame_parses_nothing_and_keeps_nothing_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader following a writer calls refresh() in a loop: when nothing changed it
    compares the frame's header, index and trailer bytes and parses none of them, but, as
    before, keeps nothing it read of the chunks (a chunk rewritten in place is read again)."""
    path = tmp_path / "a.b2frame"
    w = _schunk(path)
    r = pb.open(str(path))
    assert r[3] == w[3]
    cached = r._frame.reader
    assert cached._wholes or cached._layouts
    opened: list[int] = []
    real = FrameReader._parse.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(1)
        return real(cls, *args, **kwargs)

    # (every open parses through _parse: open and open_consistent alike)
    monkeypatch.setattr(FrameReader, "_parse", classmethod(counted))
    assert r.refresh() is False and opened == []
    fresh = r._frame.reader
    assert fresh is not cached and not fresh._wholes and not fresh._layouts
    assert fresh.header is cached.header  # the parsed parts are the same objects
    w.vlmeta["k"] = 1
    assert r.refresh() is True and opened != []  # a change: parsed again
    assert r.vlmeta["k"] == 1


def test_refresh_follows_a_replaced_file_with_the_same_index(tmp_path: Path) -> None:
    """A file replaced by another whose header, index and trailer are the same bytes (same
    shape, same compressed sizes, other values): refresh() reads the new file and says so."""
    path = tmp_path / "a.b2nd"
    pb.asarray(np.arange(100), urlpath=str(path), mode="w")
    r = pb.open(str(path))
    assert r[:3].tolist() == [0, 1, 2]
    tmp = tmp_path / "new.b2nd"
    pb.asarray(np.arange(2000, 2100), urlpath=str(tmp), mode="w")
    os.replace(tmp, path)
    assert r.refresh() is True and r[:3].tolist() == [2000, 2001, 2002]
    assert r.refresh() is False


def _array(path: Path, contiguous: bool = True, **kw: Any) -> pb.NDArray:
    return pb.zeros(
        (8, 4),
        np.int64,
        chunks=(4, 4),
        blocks=(2, 4),
        urlpath=str(path),
        mode="w",
        contiguous=contiguous,
        **kw,
    )


ND_EDITS = {
    "row write": lambda a: a.__setitem__(9, 5),
    "resize": lambda a: a.resize((14, 4)),
    "field-free slice": lambda a: a.__setitem__((slice(10, 12), slice(None)), 5),
    "vlmeta": lambda a: a.vlmeta.__setitem__("k", 1),
}


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "sparse"])
@pytest.mark.parametrize("edit", sorted(ND_EDITS))
def test_a_locked_ndarray_handle_follows_a_resize_before_it_writes(
    tmp_path: Path, edit: str, contiguous: bool, cblosc2: Any
) -> None:
    """A handle that has not seen another handle grow the array writes with the current
    shape (the issue: a stale handle wrote a file neither library opens)."""
    path = tmp_path / "a.b2nd"
    _array(path, contiguous, locking=True)
    one = pb.open(str(path), mode="a", locking=True)
    two = pb.open(str(path), mode="a", locking=True)
    assert two.shape == (8, 4)
    one.resize((12, 4))
    one[8:12] = 3
    ND_EDITS[edit](two)
    ours, theirs = pb.open(str(path))[...], cblosc2.open(str(path))[...]
    np.testing.assert_array_equal(ours, theirs)
    assert ours.shape == ((14, 4) if edit == "resize" else (12, 4))
    assert (ours[8:12] != 0).all() and two.shape == ours.shape


def test_ndarray_holding_lock_refresh_and_locking(tmp_path: Path) -> None:
    path = tmp_path / "a.b2nd"
    a = _array(path, locking=True)
    b = pb.open(str(path), mode="a", locking=True)
    assert a.locking and b.locking and not pb.zeros(2).locking
    a.resize((10, 4))
    assert b.shape == (8, 4)  # a property does not re-read the frame ...
    with b.holding_lock():  # ... a hold does: a decision inside it sees the current shape
        assert b.shape == (10, 4)
        b.resize((b.shape[0] + 2, 4))
        with b.schunk.holding_lock():  # the same (re-entrant) lock
            b[11] = 1
    assert a.refresh() is True and a.shape == (12, 4) and a.refresh() is False
    assert a[11].tolist() == [1, 1, 1, 1]


def test_an_unlocked_stale_ndarray_resize_is_refused_and_a_write_follows(tmp_path: Path) -> None:
    """Without locking, a resize from a handle that has not seen another's change raises
    FrameChangedError (as SChunk edits do); a write first follows the other handle's resize
    (python-blosc2's SWMR), then writes under the write guard."""
    path = tmp_path / "a.b2nd"
    a = _array(path)
    b = pb.open(str(path), mode="a")
    a.vlmeta["k"] = 1  # same sizes: b cannot see it without a refresh
    with pytest.raises(pb.FrameChangedError):
        b.resize((9, 4))
    b.refresh()
    a.resize((10, 4))
    b[9] = 7  # follows the resize first
    assert pb.open(str(path))[9].tolist() == [7] * 4


def test_another_partition_under_a_handle_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "a.b2nd"
    a = _array(path, contiguous=False)
    pb.zeros(
        (8, 4),
        np.int64,
        chunks=(2, 2),
        blocks=(1, 2),
        urlpath=str(path),
        mode="w",
        contiguous=False,
    )
    with pytest.raises(pb.FormatError, match="another handle may change the shape only"):
        a.refresh()


def test_an_expand_dims_view_keeps_its_axes_when_the_array_grows(tmp_path: Path) -> None:
    path = tmp_path / "a.b2nd"
    a = pb.asarray(np.arange(6).reshape(2, 3), chunks=(1, 3), blocks=(1, 3), urlpath=str(path))
    v = pb.expand_dims(a, (0, 3))
    other = pb.open(str(path), mode="a")
    other.resize((3, 3))
    other[2] = [7, 8, 9]
    assert v.refresh() is True and v.shape == (1, 3, 3, 1)
    assert v[0, 2, :, 0].tolist() == [7, 8, 9]
    v.resize((1, 4, 3, 1))  # a view resizes the stored array, its axes kept at length 1
    assert pb.open(str(path)).shape == (4, 3)
    with pytest.raises(pb.ParamError, match="added axes"):
        v.resize((2, 4, 3, 1))


def test_threads_sharing_an_ndarray_see_one_shape_or_the_other(tmp_path: Path) -> None:
    """One handle, a thread resizing it back and forth while others read whole and by
    points: every read sees the old or the new shape and its data, never an error."""
    a = pb.asarray(
        np.ones((40, 6), np.int64), chunks=(7, 6), blocks=(7, 3), urlpath=str(tmp_path / "a.b2nd")
    )
    errors: list[BaseException] = []
    seen: set[tuple[int, ...]] = set()
    stop = threading.Event()

    def read() -> None:
        try:
            while not stop.is_set():
                whole = a[...]
                assert whole.shape in ((40, 6), (80, 6))
                assert (whole[:40] == 1).all() and (whole[40:] == 0).all()
                assert a[39, 5] == 1
                seen.add(whole.shape)
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=read, daemon=True) for _ in range(2)]
    for t in readers:
        t.start()
    try:
        for _ in range(15):
            a.resize((80, 6))
            a.resize((40, 6))
    finally:
        stop.set()
        join_all(readers, "reads of a handle being resized")
    assert errors == [] and seen


@pytest.mark.parametrize(
    "edit", ["update_data", "delete_chunk", "insert_data", "reorder_offsets", "slice write"]
)
def test_a_fingerprinted_frame_python_blosc2_appended_to_is_edited(
    tmp_path: Path, edit: str, cblosc2: Any
) -> None:
    """The issue's KeyError: python-blosc2 does not keep pyblosc2's digest list, so after its
    append the list is stale; the next pyblosc2 edit makes it again from the stored chunks,
    and the frame verifies."""
    path = tmp_path / "a.b2frame"
    _schunk(path, fingerprint=True)
    cblosc2.open(str(path), mode="a").append_data(_chunk(9))
    s = pb.open(str(path), mode="a")
    with pytest.raises(pb.FormatError, match="stale"):
        s.verify()
    EDITS[edit](s)
    assert pb.open(str(path)).verify() == []
    assert cblosc2.open(str(path)).nchunks == s.nchunks


def test_a_large_metalayer_change_replaces_the_file_and_other_handles_follow(
    tmp_path: Path, cblosc2: Any
) -> None:
    """A metalayer change that reaches past the first sector cannot be one untearable write
    in place: the file is rewritten beside and renamed over (frame/commit.py); a locked
    handle that read the old file re-reads the new one, an unlocked one is refused."""
    path = tmp_path / "a.b2frame"
    _schunk(path, locking=True, meta={"big": bytes(3000)})
    other = pb.open(str(path), mode="a", locking=True)
    unlocked = pb.open(str(path), mode="a")
    inode = os.stat(path).st_ino
    pb.open(str(path), mode="a", locking=True).meta["big"] = b"\x07" * 3000
    assert os.stat(path).st_ino != inode
    assert bytes(other.meta["big"][:2]) == b"\x07\x07"  # the read re-read the frame
    other.append_data(_chunk(5))
    with pytest.raises(pb.FrameChangedError):
        unlocked.append_data(_chunk(6))
    assert _tags(cblosc2.open(str(path))) == [0, 1, 2, 5]
    assert bytes(cblosc2.open(str(path)).meta["big"][:2]) == b"\x07\x07"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_zero_length_arrays_resize(tmp_path: Path) -> None:
    a = pb.zeros((0,), np.int64, chunks=(1000,), urlpath=str(tmp_path / "z.b2nd"))
    assert a.blocks == (1000,)
    a.resize((2500,))
    a[2400:] = 1
    a.resize((0,))
    assert a.shape == (0,) and a.schunk.nchunks == 0
    assert a.append([4, 5]) == 2 and pb.open(str(tmp_path / "z.b2nd"))[...].tolist() == [4, 5]


CASES = [(k, c) for k in sharer.KINDS for c in (True, False)]


@pytest.mark.parametrize(
    ("kind", "contiguous"), CASES, ids=[f"{k}-{'contiguous' if c else 'sparse'}" for k, c in CASES]
)
def test_processes_of_both_libraries_lose_no_returned_call(
    tmp_path: Path, kind: str, contiguous: bool, cblosc2: Any
) -> None:
    """2 pyblosc2 + 2 python-blosc2 processes editing one frame with locking=True; every
    call that returned is in the final frame, which both libraries read alike (the
    campaign, tools/locking_campaign.py, runs 8 + 8)."""
    name = "f.b2nd" if kind != "schunk" else ("f.b2frame" if contiguous else "f.dir")
    path = str(tmp_path / name)
    sharer.create(pb, kind, path, contiguous)
    env = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
    libs = ["pyblosc2", "blosc2", "pyblosc2", "blosc2"]
    logs = sharer.run(kind, path, libs, 12, 5, str(tmp_path), env)
    result = sharer.check(kind, path, logs, pb, cblosc2)
    assert result["problems"] == [] and result["lost"] == 0
    assert result["calls"] >= 30  # most of the 48 calls (a shrink with no own tail is none)
    assert result["verify"] in ("clean", "stale", "n/a")


def test_a_frame_that_cannot_be_read_again_releases_the_lock(tmp_path: Path) -> None:
    """Re-reading a frame another handle broke raises (a FormatError), and the lock is free
    again for the other processes."""
    import fcntl

    from pyblosc2.backends.lock import FrameLock

    path = tmp_path / "a.b2frame"
    s = _schunk(path, locking=True)
    other = FrameLock(str(path) + ".b2lock")
    other.acquire(exclusive=True)  # another writer ...
    with open(path, "r+b") as f:  # ... that leaves a frame nobody reads
        f.write(b"\x00" * 16)
    other.release()
    with pytest.raises(pb.FormatError):
        s.decompress_chunk(0)
    fd = os.open(str(path) + ".b2lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the handle kept the lock
    finally:
        os.close(fd)


def test_the_kernel_set_is_chosen_before_the_exclusive_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the kernels (with numba: importing it and warming a kernel, up to a second)
    happens before a change takes the frame lock, not while every other sharer waits (a row
    write reads, unshuffles and rewrites its chunk inside the hold)."""
    from pyblosc2.backends.lock import FrameLock
    from pyblosc2.kernels import select

    path = str(tmp_path / "a.b2nd")
    pb.asarray(np.zeros((8, 8)), chunks=(4, 8), urlpath=path, mode="w")
    a = pb.open(path, mode="a", locking=True)
    chosen_at_lock: list[bool] = []
    acquire = FrameLock.acquire

    def spy(self: FrameLock, exclusive: bool) -> bool:
        if exclusive and self.depth == 0:
            chosen_at_lock.append(select._active is not None)
        return acquire(self, exclusive)

    monkeypatch.setattr(FrameLock, "acquire", spy)
    monkeypatch.setattr(select, "_active", None)  # as in a fresh process
    a[1] = np.arange(8.0)
    assert chosen_at_lock == [True]
    assert pb.open(path)[1].tolist() == list(range(8))
