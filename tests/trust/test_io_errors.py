"""I/O errors at every write, truncate and sync call of every mutation (once, or from then
on: a disk that stays full or broken): the call raises and the frame holds the old content,
or the call returns and it holds the new one; the file always opens, and the handle keeps
working once the disk does."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

import pyblosc2 as pb
from pyblosc2.backends.file import FileStore

from . import mutator

SEED = 3


def _first_of_each(n: int = 80) -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    for i, (kind, _) in enumerate(mutator.operations(SEED, n)):
        if i >= 3:
            seen.setdefault(kind, i)
    return sorted(seen.items())


class Disk:
    """Makes FileStore calls fail from the ``nth`` one on (``persistent``) or only there."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, nth: int, persistent: bool) -> None:
        self.calls, self.nth, self.persistent, self.failed = 0, nth, persistent, False
        for name in ("write", "truncate", "sync"):
            real = getattr(FileStore, name)
            monkeypatch.setattr(FileStore, name, self._wrap(real))

    def _wrap(self, real: Any) -> Any:
        def call(store: FileStore, *args: Any) -> Any:
            self.calls += 1
            if self.calls == self.nth or (self.persistent and self.calls > self.nth):
                self.failed = True
                code = errno.ENOSPC if self.persistent else errno.EIO
                raise OSError(code, "injected")
            return real(store, *args)

        return call


@pytest.mark.parametrize("persistent", [False, True], ids=["once", "from-then-on"])
@pytest.mark.parametrize(("kind", "op"), _first_of_each(), ids=[k for k, _ in _first_of_each()])
def test_every_storage_call_of_every_mutation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, op: int, persistent: bool
) -> None:
    ops = mutator.operations(SEED, op + 2)
    states = mutator.states(SEED, op + 2)
    nth = 1
    while True:
        path = str(tmp_path / f"f{nth}.b2frame")
        s = mutator.create(path)
        for k, a in ops[:op]:
            mutator._apply_real(k, a, s)
        with monkeypatch.context() as m:
            disk = Disk(m, nth, persistent)
            try:
                mutator._apply_real(*ops[op], s)
                raised = False
            except OSError as exc:
                assert "injected" in str(exc)
                raised = True
        back = pb.open(path)
        assert mutator.matches(back, states[op if raised else op + 1]), (nth, raised)
        assert back.verify() == []
        if raised:  # the same handle retries on a working disk, and succeeds
            mutator._apply_real(*ops[op], s)
            assert mutator.matches(pb.open(path), states[op + 1])
        if not disk.failed:
            break
        nth += 1
    assert nth > 1


def test_a_failed_create_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Creating a frame on a full disk leaves no 0-byte file that nothing can open."""
    Disk(monkeypatch, 1, persistent=True)
    path = tmp_path / "new.b2frame"
    with pytest.raises(OSError, match="injected"):
        pb.SChunk(urlpath=str(path), mode="w")
    assert not path.exists()


def test_fsync_syncs_every_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    syncs = []
    real = FileStore.sync
    monkeypatch.setattr(FileStore, "sync", lambda self: syncs.append(1) or real(self))
    s = pb.SChunk(
        chunksize=400,
        urlpath=str(tmp_path / "d.b2frame"),
        mode="w",
        fsync=True,
        cparams={"typesize": 4},
    )
    n = len(syncs)
    s.append_data(bytes(400))
    assert n >= 1 and len(syncs) - n >= 4  # stage, commit 1, tail, commit 2 (+ truncate)
