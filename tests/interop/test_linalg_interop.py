"""Linear algebra both ways with python-blosc2: its files in, both libraries compute the same
function, the results agree; our result files open in python-blosc2 and its result files in
pyblosc2, with the same items."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb


def _close(ours: Any, theirs: Any) -> None:
    ours, theirs = np.asarray(ours[()]), np.asarray(theirs[()])
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    if ours.dtype.kind in "fc":
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-9)
    else:
        np.testing.assert_array_equal(ours, theirs)


# name -> (operand shapes, chunks, dtype, the call on a module ``m`` and operands ``x``)
CASES: dict[str, tuple[list[tuple[int, ...]], list[tuple[int, ...]], str, Callable[..., Any]]] = {
    "matmul f8": ([(60, 45), (45, 30)], [(16, 45), (20, 10)], "f8", lambda m, x: m.matmul(*x)),
    "matmul i4 stack": (
        [(3, 20, 15), (15, 12)],
        [(1, 8, 15), (5, 12)],
        "i4",
        lambda m, x: m.matmul(*x),
    ),
    "matmul vector": ([(40, 33), (33,)], [(9, 33), (10,)], "f4", lambda m, x: m.matmul(*x)),
    "tensordot": (
        [(8, 9, 10), (10, 9, 4)],
        [(3, 4, 5), (4, 9, 4)],
        "i8",
        lambda m, x: m.tensordot(*x, axes=([1, 2], [1, 0])),
    ),
    "vecdot": ([(20, 30), (30,)], [(7, 11), (30,)], "c16", lambda m, x: m.vecdot(*x)),
    "outer": ([(25,), (17,)], [(10,), (5,)], "f8", lambda m, x: m.outer(*x)),
    "permute_dims": ([(7, 8, 9)], [(3, 4, 5)], "u2", lambda m, x: m.permute_dims(x[0], (2, 0, 1))),
    "matrix_transpose": ([(4, 9, 7)], [(2, 5, 7)], "f8", lambda m, x: m.matrix_transpose(x[0])),
    "diagonal": ([(3, 30, 25)], [(1, 10, 8)], "i2", lambda m, x: m.diagonal(x[0], offset=-3)),
}


def _operands(lib: ModuleType, tmp: Path, case: str) -> list[Any]:
    shapes, chunks, dtype, _ = CASES[case]
    rng = np.random.default_rng(len(case))
    out = []
    for i, (shape, ch) in enumerate(zip(shapes, chunks, strict=True)):
        x = rng.integers(-50, 50, shape).astype(dtype)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.integers(-50, 50, shape)
        out.append(lib.asarray(x, chunks=ch, urlpath=str(tmp / f"op{i}.b2nd"), mode="w"))
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_results_on_python_blosc2s_files(
    cblosc2: ModuleType, tmp_path: Path, case: str
) -> None:
    call = CASES[case][3]
    theirs = call(cblosc2, _operands(cblosc2, tmp_path, case))  # their files...
    ops = [pb.open(str(tmp_path / f"op{i}.b2nd")) for i in range(len(CASES[case][0]))]
    _close(call(pb, ops), theirs)  # ... read and computed by pyblosc2


@pytest.mark.parametrize("case", ["matmul f8", "tensordot", "permute_dims", "diagonal"])
def test_result_files_open_in_the_other_library(
    cblosc2: ModuleType, tmp_path: Path, case: str
) -> None:
    call = CASES[case][3]
    ops = _operands(pb, tmp_path, case)
    ours = call(pb, ops).copy(urlpath=str(tmp_path / "ours.b2nd"))
    back = cblosc2.open(str(tmp_path / "ours.b2nd"))
    _close(ours, back)
    theirs_ops = [cblosc2.open(str(tmp_path / f"op{i}.b2nd")) for i in range(len(ops))]
    call(cblosc2, theirs_ops).save(str(tmp_path / "theirs.b2nd"))
    _close(pb.open(str(tmp_path / "theirs.b2nd")), back)


def test_result_written_straight_to_a_file_reads_in_python_blosc2(
    cblosc2: ModuleType, tmp_path: Path
) -> None:
    a, b = _operands(pb, tmp_path, "matmul f8")
    path = str(tmp_path / "c.b2nd")
    c = pb.matmul(a, b, urlpath=path, chunks=(16, 30), blocks=(4, 30), cparams={"clevel": 1})
    back = cblosc2.open(path)
    assert (back.chunks, back.blocks) == ((16, 30), (4, 30))
    np.testing.assert_array_equal(back[...], c[...])


def test_squeeze_views_of_their_files(cblosc2: ModuleType, tmp_path: Path) -> None:
    x = np.arange(30, dtype=np.int32).reshape(1, 30, 1)
    cblosc2.asarray(x, chunks=(1, 7, 1), blocks=(1, 3, 1), urlpath=str(tmp_path / "s.b2nd"))
    theirs = cblosc2.squeeze(cblosc2.open(str(tmp_path / "s.b2nd")), axis=(0, 2))
    ours = pb.squeeze(pb.open(str(tmp_path / "s.b2nd"), mode="a"), axis=(0, 2))
    np.testing.assert_array_equal(ours[...], theirs[...])
    ours[3:6] = -1
    np.testing.assert_array_equal(cblosc2.open(str(tmp_path / "s.b2nd"))[0, :8, 0], ours[:8])
