"""Opt-in integrity fingerprints (frame/fingerprint.py): C-Blosc2 reads such frames without
complaint; verify() names exactly the damaged chunks; other writers make the list stale."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.frame.fingerprint import FP_KEY


def _frame(path: str) -> pb.SChunk:
    s = pb.SChunk(chunksize=4000, urlpath=path, cparams={"typesize": 4}, fingerprint=True)
    for i in range(6):
        s.append_data(np.arange(i * 1000, (i + 1) * 1000, dtype=np.int32))
    s.append_data(np.zeros(1000, np.int32))  # a special offset
    s.vlmeta["user"] = 1
    return s


def _flip(path: str, pos: int) -> None:
    with open(path, "r+b") as f:
        f.seek(pos)
        b = f.read(1)
        f.seek(pos)
        f.write(bytes([b[0] ^ 0x5A]))


def test_intact_frames_verify_and_c_reads_them(cblosc2, tmp_path) -> None:
    path = str(tmp_path / "fp.b2frame")
    s = _frame(path)
    s.insert_data(2, np.full(1000, 3, np.int32), copy=True)
    s.delete_chunk(5)
    s.reorder_offsets(list(reversed(range(s.nchunks))))
    assert s.verify() == [] and pb.open(path).verify() == []
    assert list(s.vlmeta) == ["user"]  # the digest list is not a user entry
    c = cblosc2.open(path)
    assert c[:] == s[:] and FP_KEY in list(c.vlmeta) and c.vlmeta["user"] == 1


@pytest.mark.parametrize("victim", [0, 3, 5])
def test_verify_names_the_damaged_chunk(tmp_path, victim) -> None:
    path = str(tmp_path / "fp.b2frame")
    s = _frame(path)
    pos = s.header.header_len + int(s._reader.offsets[victim]) + 40
    del s
    _flip(path, pos)
    assert pb.open(path).verify() == [victim]


def test_other_writers_make_the_list_stale(cblosc2, tmp_path) -> None:
    path = str(tmp_path / "fp.b2frame")
    _frame(path)
    c = cblosc2.open(path, mode="a")
    c.append_data(np.arange(1000, dtype=np.int32))
    del c
    with pytest.raises(pb.FormatError, match="stale"):
        pb.open(path).verify()


def test_verify_without_fingerprint(tmp_path) -> None:
    s = pb.SChunk(chunksize=400, cparams={"typesize": 4})
    with pytest.raises(pb.FormatError, match="fingerprint"):
        s.verify()
