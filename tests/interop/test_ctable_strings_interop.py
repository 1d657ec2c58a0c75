"""CTable text columns (``utf8``, ``vlstring``, ``vlbytes``, ``dictionary``, a utf8 null
sentinel) both ways with python-blosc2 4.14.1: tables written by one library, read and
appended to by the other, in ``.b2d`` and ``.b2z`` files, deleted rows included."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb

blosc2 = pytest.importorskip("blosc2")

FORMS = ["b2d", "b2z"]
ROWS = [
    ("héllo", "a", b"x", "Uber", "p", 1),
    ("", None, b"", None, None, 2),
    ("日本語 🎉", "c", b"\x00y", "Lyft", "q", 3),
    ("x" * 3000, "ddd", b"\xff" * 9, "Uber", None, 4),
] + [(f"r{i}", f"v{i % 7}", bytes([i % 256]), f"k{i % 5}", f"s{i}", 10 + i) for i in range(300)]
DELETED = [0, 7, 150]


def _row(lib: Any) -> type:
    @dataclasses.dataclass
    class Row:
        name: str = lib.field(lib.utf8())
        v: str = lib.field(lib.vlstring(nullable=True, batch_rows=64), default=None)
        b: bytes = lib.field(lib.vlbytes(), default=b"")
        d: str = lib.field(lib.dictionary(), default=None)
        s: str = lib.field(lib.utf8(null_value="<NA>"), default=None)
        x: int = 0

    return Row


def _write(lib: Any, path: str) -> None:
    t = lib.CTable(_row(lib), urlpath=path, mode="w")
    t.extend(ROWS)
    t.delete(DELETED)
    t.close()


def _expected(extra: tuple[tuple[Any, ...], ...] = ()) -> dict[str, list[Any]]:
    rows = [r for i, r in enumerate(ROWS) if i not in DELETED] + list(extra)
    cols = {k: [r[i] for r in rows] for i, k in enumerate(["name", "v", "b", "d", "s", "x"])}
    cols["s"] = ["<NA>" if v is None else v for v in cols["s"]]
    return cols


def _read(t: Any) -> dict[str, list[Any]]:
    return {k: list(np.asarray(t[k][:], dtype=object).tolist()) for k in t.col_names}


TAIL = ("tail", "t", b"t", "Via", None, 999)


@pytest.mark.parametrize("form", FORMS)
def test_python_blosc2_reads_and_extends_ours(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    _write(pb, path)
    theirs = blosc2.CTable.open(path, mode="a")
    assert _read(theirs) == _expected()
    assert theirs.where(theirs["d"] == "Uber")["x"][:].tolist() == [4]
    theirs.append(TAIL)
    theirs.close()
    assert _read(pb.CTable.open(path)) == _expected((TAIL,))


@pytest.mark.parametrize("form", FORMS)
def test_we_read_and_extend_python_blosc2s(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    _write(blosc2, path)
    ours = pb.CTable.open(path, mode="a")
    assert _read(ours) == _expected()
    assert ours.where('d == "k3" and x < 40').x[:].tolist() == [
        18,
        23,
        28,
        33,
        38,
    ]
    assert ours.sort_by("name", ascending=False).x[:3].tolist() == [3, 4, 109]
    ours.append(TAIL)
    ours.close()
    assert _read(blosc2.CTable.open(path)) == _expected((TAIL,))
