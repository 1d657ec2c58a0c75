"""Where python-blosc2 4.14.1 (C-Blosc2 inside) and pyblosc2 disagree on shared frames, as
named cases: python-blosc2 decides some locked edits from its handle's cached chunk count,
read before it takes the lock; pyblosc2 reads the count inside the lock hold of the commit
(frame/sharing.py). Each test asserts pyblosc2's behaviour and python-blosc2's, so that a
fix on either side shows here.

A slice write of python-blosc2 checks the shape under the shared lock, lets it go, then
takes the exclusive lock to write (C-Blosc2 ``b2nd_set_slice_cbuffer``: ``frame_check_stale``
then ``frame_lock``). When a writer gets the lock in between and grows the array, the write
decides from the old shape: the old last chunk looks wholly overwritten, is not read, and
what the other writer put in it comes back as zeros
(:func:`test_a_slice_write_decides_from_a_shape_read_before_its_exclusive_lock`). These are
the losses ``tools/locking_campaign.py`` saw on 2026-11-26: 2 rows of the rows array (about
26,000 calls) and 1 vector item (8,155 calls; its frame and logs kept and read back).
Inside ``holding_lock()`` the shape is read under the exclusive lock and nothing is lost.

Also seen under concurrency (not reproducible in one process, so measured by
``tools/locking_campaign.py --pyblosc2 0 --blosc2 8 --bare-blosc2``): python-blosc2 workers
that set vlmeta or edit by position without ``holding_lock()`` while others append fail
(``RuntimeError``) or leave frames that neither library opens; tests/trust/sharer.py
brackets those calls for python-blosc2 workers.

C-Blosc2 writes a trailer of at most 16 vlmeta entries (``frame_update_trailer``), though it
keeps up to 8192 in memory: a frame with 17 makes every later change of it by C-Blosc2 fail
half-way (its header written, its trailer not). pyblosc2 keeps every frame within 16,
counting the entry a fingerprinted frame keeps for its digests.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import CHILD_S, readline_within, started


def _handles(mod: Any, path: Path) -> tuple[Any, Any]:
    """Two locked handles on a 3-chunk frame; the first then appends a 4th chunk (9)."""
    s = mod.SChunk(
        chunksize=800, urlpath=str(path), mode="w", cparams={"typesize": 8}, locking=True
    )
    for t in range(3):
        s.append_data(np.full(100, t, np.int64))
    one = mod.open(str(path), mode="a", locking=True)
    two = mod.open(str(path), mode="a", locking=True)
    one.append_data(np.full(100, 9, np.int64))
    return one, two


def _tags(cblosc2: Any, path: Path) -> list[int]:
    s = cblosc2.open(str(path))
    return [int(np.frombuffer(s.decompress_chunk(n), np.int64)[0]) for n in range(s.nchunks)]


def test_a_slice_write_of_a_chunk_a_stale_handle_has_not_seen(tmp_path: Path, cblosc2: Any) -> None:
    """Writing items 300..399 (chunk 3, appended by the other handle): pyblosc2 updates
    chunk 3; python-blosc2 takes the write to start at the end it knows and appends a
    fifth chunk."""
    for mod, expected in ((pb, [0, 1, 2, 5]), (cblosc2, [0, 1, 2, 9, 5])):
        path = tmp_path / f"{mod.__name__}.b2frame"
        _, stale = _handles(mod, path)
        stale[300:400] = np.full(100, 5, np.int64)
        assert _tags(cblosc2, path) == expected, mod.__name__


@pytest.mark.parametrize("edit", ["update_data", "delete_chunk"])
def test_an_edit_of_a_chunk_a_stale_handle_has_not_seen(
    tmp_path: Path, edit: str, cblosc2: Any
) -> None:
    """Updating or deleting chunk 3: pyblosc2 does it; python-blosc2 refuses it as out of
    range (``RuntimeError``), its count being the stale 3."""
    calls = {
        "update_data": lambda s: s.update_data(3, np.full(100, 5, np.int64), True),
        "delete_chunk": lambda s: s.delete_chunk(3),
    }
    path = tmp_path / "ours.b2frame"
    _, stale = _handles(pb, path)
    calls[edit](stale)
    assert _tags(cblosc2, path) == ([0, 1, 2, 5] if edit == "update_data" else [0, 1, 2])
    path = tmp_path / "theirs.b2frame"
    _, stale = _handles(cblosc2, path)
    with pytest.raises(RuntimeError, match="Could not"):
        calls[edit](stale)
    assert _tags(cblosc2, path) == [0, 1, 2, 9]


def test_vlmeta_entries_stay_within_what_c_blosc2_writes(tmp_path: Path, cblosc2: Any) -> None:
    """A fingerprinted frame takes 15 entries of the user's (its digest list is the 16th);
    pyblosc2 refuses the next before writing anything. python-blosc2 refuses a 17th entry
    only when it tries to write the trailer (an empty ``RuntimeError``)."""
    path = tmp_path / "a.b2frame"
    s = pb.SChunk(
        chunksize=800, urlpath=str(path), mode="w", cparams={"typesize": 8}, fingerprint=True
    )
    s.append_data(np.arange(100))
    s.vlmeta[:] = {f"k{i}": i for i in range(15)}
    before = path.read_bytes()
    with pytest.raises(pb.ParamError, match="at most 16 vlmeta entries"):
        s.vlmeta["k15"] = 15
    s.vlmeta["k0"] = "updated"  # an entry that exists can change
    del s.vlmeta["k0"]
    s.vlmeta["k0"] = 0
    assert path.read_bytes() != before and pb.open(str(path)).verify() == []
    c = cblosc2.open(str(path), mode="a")
    assert len(c.vlmeta.getall()) == 16
    with pytest.raises(RuntimeError):
        c.vlmeta["k15"] = 15
    assert len(pb.open(str(path)).vlmeta) == 15


_WRITER = """
import sys, numpy as np
sys.path.insert(0, sys.argv[4])
if sys.argv[2] == "pyblosc2":
    import pyblosc2 as mod
else:
    import blosc2 as mod
a = mod.open(sys.argv[1], mode="a", locking=True)
print(a.shape[0], flush=True)
sys.stdin.readline()
key = slice(444, 474) if sys.argv[3] == "vector" else 20
value = np.full(30, 11, np.int64) if sys.argv[3] == "vector" else np.full(8, 11, np.int64)
if sys.argv[2] == "blosc2-holding-lock":
    with a.holding_lock():
        a[key] = value
else:
    a[key] = value
print("done", flush=True)
"""

#: per kind: the array, what the child writes (items 444..473 / row 20, 11s), what another
#: writer does meanwhile, the items checked, what they hold when nothing is lost and when the
#: child's write zeroes what the other writer put in the old last chunk
_CASES: dict[str, tuple[Any, Any, slice, list[int], list[int]]] = {
    "vector": (
        lambda p: pb.asarray(
            np.zeros(474, np.int64), chunks=(25,), blocks=(5,), urlpath=p, mode="w"
        ),
        lambda a: a.append(np.full(2, 8, np.int64)),
        slice(470, 476),
        [11, 11, 11, 11, 8, 8],
        [11, 11, 11, 11, 0, 8],
    ),
    "rows": (
        lambda p: pb.asarray(
            np.zeros((21, 8), np.int64), chunks=(4, 8), blocks=(2, 8), urlpath=p, mode="w"
        ),
        lambda a: (a.resize((23, 8)), a.__setitem__(slice(21, 23), 8)),
        slice(19, 23),
        [0, 11, 8, 8],
        [0, 11, 0, 0],
    ),
}


def _waits_for_the_lock(pid: int, inode: int) -> bool:
    """Whether process ``pid`` waits for a ``flock`` of the file ``inode`` (a line
    ``N: -> FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF`` of /proc/locks)."""
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            waits = fields[1:3] == ["->", "FLOCK"] and fields[5] == str(pid)
            if waits and int(fields[6].rsplit(":", 1)[1]) == inode:
                return True
    return False


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux's /proc/locks")
@pytest.mark.parametrize("kind", ["vector", "rows"])
@pytest.mark.parametrize(
    ("writer", "loses"), [("pyblosc2", False), ("blosc2", True), ("blosc2-holding-lock", False)]
)
def test_a_slice_write_decides_from_a_shape_read_before_its_exclusive_lock(
    tmp_path: Path, cblosc2: Any, kind: str, writer: str, loses: bool
) -> None:
    """A child process writes with ``locking=True`` into the last chunk of an array: items
    444..473 of a 474-item vector of 25-item chunks, or row 20 of a 21-row array of 4-row
    chunks. This test holds the frame lock shared, lets the child check the frame and wait
    for the exclusive lock, then grows the array by 2 items or rows of 8s, standing in for a
    writer that got the lock first (the generation counter bumped as such a writer bumps it),
    and lets go. pyblosc2 decides the write under the exclusive lock and keeps the 8s.
    python-blosc2 writes the old last chunk whole from the shape it saw, and the 8s that
    chunk now holds come back as zeros (the 1 item and the 2 rows the campaigns lost);
    inside ``holding_lock()`` it keeps them."""
    create, grow, checked, kept, zeroed = _CASES[kind]
    path = str(tmp_path / "a.b2nd")
    create(path)
    src = str(Path(pb.__file__).parents[1])
    what = f"a slice write with {writer} into the last chunk"
    with started(
        [sys.executable, "-c", _WRITER, path, writer, kind, src],
        what,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdin is not None and child.stdout is not None
        shape = readline_within(child.stdout, CHILD_S, f"{what}: the shape it opened")
        assert shape.strip() in ("474", "21")
        fd = os.open(path + ".b2lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            child.stdin.write("go\n")
            child.stdin.flush()
            deadline = time.monotonic() + CHILD_S
            inode = os.fstat(fd).st_ino
            while not _waits_for_the_lock(child.pid, inode):  # the child checked, now waits
                assert child.poll() is None, f"{what}: exited ({child.returncode}) instead"
                assert time.monotonic() < deadline, f"{what}: never waited for the lock"
                time.sleep(0.01)
            grow(pb.open(path, mode="a"))  # no lock of its own: this test holds it
            raw = os.pread(fd, 8, 8).ljust(8, b"\0")
            os.pwrite(fd, struct.pack("=Q", struct.unpack("=Q", raw)[0] + 1), 8)
        finally:
            os.close(fd)  # lets go of the shared lock
        assert readline_within(child.stdout, CHILD_S, f"{what}: done").strip() == "done"
    expected = zeroed if loses else kept
    for got in (pb.open(path)[checked], cblosc2.open(path)[checked]):
        assert got.reshape(len(kept), -1)[:, 0].tolist() == expected, writer
