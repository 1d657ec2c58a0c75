"""Every bad argument is refused up front with a pyblosc2 error (a ValueError, TypeError or
IndexError subclass) that says what was expected, before any byte is written, and sizes and
counts are bounded before anything is allocated or looped over (the cases found by trying
pyblosc2 as a user would, issue 12)."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import cpu_budget


def _s200() -> pb.SChunk:
    s = pb.SChunk(chunksize=400, cparams={"typesize": 4})
    s.append_data(np.arange(100, dtype=np.int32))
    s.append_data(np.arange(100, dtype=np.int32))
    return s


CASES: list[tuple[str, Callable[[Path], Any], type[Exception], str]] = [
    ("chunksize 2**31", lambda p: pb.SChunk(chunksize=2**31), pb.ParamError, "chunksize must be"),
    ("chunksize -2", lambda p: pb.SChunk(chunksize=-2), pb.ParamError, "chunksize must be"),
    ("chunksize 0", lambda p: pb.SChunk(chunksize=0), pb.ParamError, "chunksize must be"),
    ("chunksize 1.5", lambda p: pb.SChunk(chunksize=1.5), TypeError, "chunksize must be"),
    (
        "special typesize 0",
        lambda p: pb.make_special_chunk(pb.SpecialValue.ZERO, 80, 0),
        pb.ParamError,
        "typesize must be",
    ),
    ("arange step 0", lambda p: pb.arange(0, 10, 0), pb.ParamError, "step must not be 0"),
    ("vlmeta name 5", lambda p: pb.SChunk().vlmeta.__setitem__(5, 1), pb.ParamError, "names"),
    (
        "reserved vlmeta",
        lambda p: pb.SChunk(fingerprint=True).vlmeta.__setitem__("_pyblosc2_fp", 1),
        pb.ParamError,
        "reserved",
    ),
    ("open offset -5", lambda p: pb.open(p / "z.b2z", offset=-5), pb.ParamError, "offset"),
    (
        "int64 overflow",
        lambda p: pb.zeros((3,), np.int64).__setitem__(0, 2**70),
        pb.ParamError,
        "cannot be stored as int64",
    ),
    (
        "expression syntax",
        lambda p: pb.evaluate("x +* 1", {"x": np.arange(3)}),
        pb.ParamError,
        "is not valid",
    ),
    (
        "fill_special 10**15",
        lambda p: pb.SChunk(cparams={"typesize": 4}).fill_special(10**15, pb.SpecialValue.ZERO),
        pb.ParamError,
        "at most 4194304",
    ),
    (
        "zeros 10**24 items",
        lambda p: pb.zeros((10**12, 10**12)),
        pb.ParamError,
        "int64 nbytes",
    ),
    (
        "fill_special -1",
        lambda p: pb.SChunk(cparams={"typesize": 4}).fill_special(-1, pb.SpecialValue.ZERO),
        pb.ParamError,
        "nitems must be",
    ),
    (
        "slice past the end",
        lambda p: _s200().__setitem__(slice(1000, 1010), np.arange(10, dtype=np.int32)),
        IndexError,
        "outside 0..200",
    ),
    (
        "getitem start -1",
        lambda p: pb.getitem(pb.compress2(b"x" * 100), -1, 5),
        pb.ParamError,
        "start must be",
    ),
    ("mode x", lambda p: pb.SChunk(mode="x"), pb.ParamError, "mode must be one of"),
    ("object dtype", lambda p: pb.zeros(3, dtype=object), TypeError, "Python objects"),
    (
        "frame bytes as urlpath",
        lambda p: pb.open(b"\x9e\xa8b2frame\x00" + bytes(10**6)),
        TypeError,
        "urlpath must be a path, got 1000010 bytes",
    ),
    ("a .b2z zip", lambda p: pb.open(str(p / "z.b2z")), pb.FormatError, "zip archive"),
    ("zeros shape -1", lambda p: pb.zeros((-1,)), pb.ParamError, r"shape\[0\] must be"),
    # keys numpy refuses (issue 25), read and written
    *(
        (f"{op} key {name}", fn, err, match)
        for name, key, err, match in (
            ("nan", np.nan, IndexError, "index nan: only integers"),
            ("inf", (0, np.inf), IndexError, "index inf"),
            ("1.5", 1.5, IndexError, "index 1.5"),
            ("float array", np.array([0.0, 1.0]), IndexError, "array of floats"),
            ("step 0", slice(0, 3, 0), pb.ParamError, "step cannot be zero"),
            ("float bound", slice(0.5, 3), TypeError, "slice start must be an integer"),
            ("two ellipses", (..., ...), IndexError, "single ellipsis"),
        )
        for op, fn in (
            ("get", lambda p, key=key: pb.zeros((4, 4))[key]),
            ("set", lambda p, key=key: pb.zeros((4, 4)).__setitem__(key, 1)),
        )
    ),
    (
        "nested storage dict",
        lambda p: pb.zeros(3, storage={"urlpath": str(p / "n.b2nd"), "storage": {"mode": "w"}}),
        pb.ParamError,
        "storage has no field 'storage'",
    ),
    ("locking in memory", lambda p: pb.zeros(3, locking=True), pb.ParamError, "needs a urlpath"),
]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    with zipfile.ZipFile(tmp_path / "z.b2z", "w") as z:
        z.writestr("embed.b2e", b"not a frame")
    return tmp_path


@pytest.mark.parametrize(
    ("call", "error", "match"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_refused_up_front(workdir: Path, call, error, match) -> None:
    before = {p.name: p.read_bytes() for p in workdir.iterdir() if p.is_file()}
    with cpu_budget(10.0, "refusing a bad argument"), pytest.raises(error, match=match) as info:
        call(workdir)
    assert isinstance(info.value, pb.Blosc2Error), type(info.value)
    assert len(str(info.value)) < 300
    assert {p.name: p.read_bytes() for p in workdir.iterdir() if p.is_file()} == before


def test_refused_on_a_file_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.b2frame"
    s = pb.SChunk(chunksize=400, urlpath=str(path), mode="w", cparams={"typesize": 4})
    s.append_data(np.arange(100, dtype=np.int32))
    before = path.read_bytes()
    for bad in (
        lambda: s.__setitem__(slice(500, 510), np.arange(10, dtype=np.int32)),
        lambda: s.vlmeta.__setitem__("", 1),
        lambda: s.meta.__setitem__("nope", 1),
        lambda: s.insert_chunk(5, pb.compress2(bytes(400), typesize=4)),
        lambda: s.append_chunk(b"garbage"),
        lambda: s.reorder_offsets([1]),
    ):
        with pytest.raises((pb.Blosc2Error, NotImplementedError)):
            bad()
    assert path.read_bytes() == before


def test_refused_keys_write_nothing_to_an_array_file(tmp_path: Path) -> None:
    path = tmp_path / "a.b2nd"
    a = pb.zeros((4, 4), np.int32, urlpath=str(path), mode="w")
    before = path.read_bytes()
    for key in (np.nan, 1.5, (0, np.inf), slice(0, 2, 0), (..., ...), slice(None, 2.0)):
        with pytest.raises(pb.Blosc2Error):
            a[key] = 1
    assert path.read_bytes() == before
