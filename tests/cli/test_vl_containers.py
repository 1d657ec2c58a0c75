"""``pyblosc2 info`` and ``verify`` on the files of ObjectArray, BatchArray and ListArray: the
frame under the container is described and checked (the containers open as their classes
through ``pyblosc2.open``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import pyblosc2


def _write(kind: str, path: Path) -> None:
    if kind == "object":
        pyblosc2.ObjectArray(urlpath=str(path), mode="w").extend([1, "two", (3,)])
    elif kind == "batch":
        pyblosc2.BatchArray(urlpath=str(path), mode="w").extend([[1, 2], ["x"]])
    else:
        la = pyblosc2.ListArray(item_spec=pyblosc2.int32(), urlpath=str(path), mode="w")
        la.extend([[1], [2, 3]])
        la.flush()


@pytest.mark.parametrize(("kind", "nchunks"), [("object", 3), ("batch", 2), ("list", 1)])
def test_info_and_verify(cli, tmp_path: Path, kind: str, nchunks: int) -> None:
    _write(kind, tmp_path / "c.b2b")
    r = cli("info", "c.b2b")
    assert r.returncode == 0, r.stderr
    assert "kind          : SChunk" in r.stdout and f"nchunks       : {nchunks}" in r.stdout
    r = cli("verify", "c.b2b")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"c.b2b: OK ({nchunks} chunk")
