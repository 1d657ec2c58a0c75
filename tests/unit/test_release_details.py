"""API details that broke user code (issue 23, item 6), each as python-blosc2 behaves or, where
python-blosc2 accepts nonsense, refused before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import ParamError, ParamTypeError, TruncatedError

A = np.linspace(0, 1, 5000)


@pytest.mark.parametrize("form", ["object", "dict"])
@pytest.mark.parametrize("fn", ["pack_tensor", "pack_array2"])
def test_packers_take_cparams_objects_and_dicts(fn: str, form: str) -> None:
    cp = pb.CParams(codec=pb.Codec.LZ4, clevel=7, typesize=8)
    given = cp if form == "object" else {"codec": pb.Codec.LZ4, "clevel": 7}
    cframe = getattr(pb, fn)(A, cparams=given)
    s = pb.schunk_from_cframe(cframe)
    assert s.cparams.codec == pb.Codec.LZ4 and s.cparams.clevel == 7 and s.typesize == 8
    assert np.array_equal(pb.unpack_tensor(cframe), A)


@pytest.mark.parametrize("fn", ["save_tensor", "save_array"])
def test_savers_take_cparams_objects(fn: str, tmp_path: Path) -> None:
    path = str(tmp_path / "a.b2frame")
    size = getattr(pb, fn)(A, path, cparams=pb.CParams(codec=pb.Codec.ZSTD, clevel=3))
    assert size == os.path.getsize(path)
    assert np.array_equal(pb.load_tensor(path), A)
    assert pb.open(path).cparams.codec == pb.Codec.ZSTD


def test_python_blosc2_reads_what_packers_wrote_with_a_cparams_object() -> None:
    blosc2 = pytest.importorskip("blosc2")
    cframe = pb.pack_tensor(A, cparams=pb.CParams(codec=pb.Codec.LZ4))
    assert np.array_equal(blosc2.unpack_tensor(cframe), A)


def test_packers_refuse_a_cparams_of_another_type() -> None:
    with pytest.raises(ParamTypeError, match="cparams must be a CParams or a dict"):
        pb.pack_tensor(A, cparams=[("codec", 1)])


def test_linspace_takes_a_whole_float_num_as_python_blosc2_does() -> None:
    assert np.array_equal(pb.linspace(0, 1, num=1000.0)[:], np.linspace(0, 1, 1000))
    with pytest.raises(ParamError, match="num"):
        pb.linspace(0, 1, num=1000.5)


@pytest.mark.parametrize("mode", ["q", "rw", "x", ""])
def test_open_refuses_an_unknown_mode_before_touching_the_file(mode: str, tmp_path: Path) -> None:
    path = tmp_path / "a.b2frame"
    pb.save_array(A, str(path))
    before = path.read_bytes()
    with pytest.raises(ParamError, match="mode must be one of"):
        pb.open(str(path), mode=mode)
    assert path.read_bytes() == before


@pytest.mark.parametrize("keep", [0.2, 0.5, 0.9, 0.99])
def test_a_truncated_file_says_truncated_and_is_a_runtime_error(
    keep: float, tmp_path: Path
) -> None:
    whole = tmp_path / "whole.b2nd"
    pb.asarray(np.arange(100_000), urlpath=str(whole), mode="w")
    raw = whole.read_bytes()
    cut = tmp_path / "cut.b2nd"
    cut.write_bytes(raw[: int(len(raw) * keep)])
    with pytest.raises(RuntimeError, match="truncated") as exc:  # python-blosc2's class
        pb.open(str(cut))
    assert isinstance(exc.value, TruncatedError) and isinstance(exc.value, ValueError)


def test_a_truncated_chunk_says_truncated() -> None:
    chunk = pb.compress2(A, typesize=8)
    with pytest.raises(TruncatedError, match=r"^chunk header: cbytes at offset 12 .*: truncated$"):
        pb.decompress2(chunk[:-10])


def test_every_format_error_is_also_a_runtime_error() -> None:
    assert issubclass(pb.FormatError, RuntimeError) and issubclass(pb.FormatError, ValueError)
    with pytest.raises(RuntimeError):
        pb.schunk_from_cframe(b"\x00" * 200)


def test_zero_chunks_are_named_as_chunks() -> None:
    with pytest.raises(ParamError, match=r"^chunks must be no 0 entry where the shape"):
        pb.zeros((10, 5), chunks=(0, 5))
    assert pb.zeros((0, 5), chunks=(0, 5)).shape == (0, 5)  # a zero-length axis may have it


@pytest.mark.parametrize(
    "args", [(6, 4), ((6, 4),), ([6, 4],), (6, -1), ((-1, 4),), (np.int64(6), np.int32(4))]
)
def test_reshape_takes_numpys_forms(args: tuple) -> None:
    a = pb.arange(24)
    assert np.array_equal(a.reshape(*args)[:], np.arange(24).reshape(*args))


@pytest.mark.parametrize("args", [(5, 4), ((5, 4),), (-1, -1), (7, -1)])
def test_reshape_refuses_other_sizes_with_numpys_words(args: tuple) -> None:
    with pytest.raises(ParamError, match=r"cannot reshape array of size 24|at most one -1"):
        pb.arange(24).reshape(*args)


def test_reshape_needs_a_shape() -> None:
    with pytest.raises(ParamTypeError, match="needs a shape"):
        pb.arange(24).reshape()


def test_reshape_of_a_huge_array_checks_the_shape_without_allocating() -> None:
    a = pb.zeros((10**7, 10**5), np.bool_)  # 1 TB of items: the check must not allocate them
    with pytest.raises(ParamError, match="cannot reshape"):
        a.reshape(3, -1)


def test_operators_are_lazy_and_evaluate_fills_out() -> None:
    a = pb.asarray(np.arange(10.0))
    expr = a + 1  # a lazy expression (issue 33); np.asarray and [:] still give numpy
    assert isinstance(expr, pb.LazyExpr) and isinstance(np.asarray(expr), np.ndarray)
    out = pb.zeros((10,))
    assert pb.evaluate("a * 2 + 1", out=out) is out
    assert np.array_equal(out[:], np.arange(10.0) * 2 + 1)
