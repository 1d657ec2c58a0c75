"""``pyblosc2.linalg.matmul`` and NDArray's ``@`` (linalg/matmul.py, linalg/backend.py,
ndarray/linalg_members.py): numpy's shapes, broadcasting and dtypes, computed by work regions
and steps whose budgets the ``tiny`` fixture shrinks so that every path runs on small arrays."""

from __future__ import annotations

import math
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
import pyblosc2.linalg as la
from pyblosc2.errors import ParamError, ParamTypeError
from pyblosc2.linalg import output, plan

SETTINGS = settings(max_examples=25, deadline=None)


class Duck:
    """An array with only ``shape``, ``dtype`` and ``__getitem__`` (the protocol of a lazy
    expression), recording the boxes read."""

    def __init__(self, a: np.ndarray, chunks: tuple[int, ...] | None = None) -> None:
        self._a = a
        self.reads: list[Any] = []
        if chunks is not None:
            self.chunks = chunks

    @property
    def shape(self) -> tuple[int, ...]:
        return self._a.shape

    @property
    def dtype(self) -> np.dtype:
        return self._a.dtype

    def __getitem__(self, key: Any) -> np.ndarray:
        self.reads.append(key)
        return self._a[key]


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets of a few hundred bytes: many work regions, steps and unkept panels."""
    monkeypatch.setattr(plan, "STEP_BYTES", 256)
    monkeypatch.setattr(plan, "PANEL_BYTES", 256)
    monkeypatch.setattr(plan, "WORK_BYTES", 512)
    monkeypatch.setattr(output, "WRITE_BATCH_BYTES", 512)


def _rand(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, dtype=dtype)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _same(got: pb.NDArray, want: np.ndarray) -> None:
    assert isinstance(got, pb.NDArray)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if want.dtype.kind in "fc":  # summation order only
        tol = 1e-4 if want.dtype in (np.float32, np.complex64) else 1e-10
        np.testing.assert_allclose(got[()], want, rtol=tol, atol=tol * 10)
    else:
        np.testing.assert_array_equal(got[()], want)


SHAPES = {
    "matrix@matrix": ((12, 10), (10, 7)),
    "matrix@vector": ((12, 10), (10,)),
    "vector@matrix": ((10,), (10, 7)),
    "vector@vector": ((10,), (10,)),
    "stack@matrix": ((3, 5, 4), (4, 6)),
    "matrix@stack": ((5, 4), (2, 4, 6)),
    "broadcast stacks": ((2, 1, 5, 4), (3, 4, 6)),
    "size-1 stack over several chunks": ((1, 2, 2), (3, 2, 2)),
    "empty inner axis": ((4, 0), (0, 3)),
    "empty rows": ((0, 4), (4, 3)),
    "empty vectors": ((0,), (0,)),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
@pytest.mark.parametrize("budgets", ["default", "tiny"])
def test_shapes_and_broadcasting_are_numpys(case: str, budgets: str, request: Any) -> None:
    if budgets == "tiny":
        request.getfixturevalue("tiny")
    sa, sb = SHAPES[case]
    x, y = _rand(sa, np.float64, 1), _rand(sb, np.float64, 2)
    a = pb.asarray(x, chunks=tuple(max(1, n // 2) for n in sa))
    want = np.matmul(x, y)
    chunks = tuple(max(1, n // 3) for n in want.shape) if want.ndim else None
    _same(la.matmul(a, y, chunks=chunks), want)
    _same(la.matmul(x, pb.asarray(y)), want)  # a numpy first operand, an NDArray second


@pytest.mark.parametrize(
    ("da", "db"),
    [
        ("i1", "i1"),  # sums overflow int8: numpy's wrapped result
        ("u8", "i8"),  # float64 by numpy's promotion
        ("i4", "f4"),
        ("?", "?"),  # logical or of ands
        ("c8", "c16"),
        ("f2", "f2"),
        ("i2", "?"),
    ],
)
def test_dtypes_are_numpys_and_integers_exact(da: str, db: str, tiny: None) -> None:
    x, y = _rand((9, 11), da, 3), _rand((11, 5), db, 4)
    got = la.matmul(pb.asarray(x, chunks=(4, 3)), pb.asarray(y, chunks=(5, 2)), chunks=(3, 2))
    want = np.matmul(x, y)
    if want.dtype == np.float16:
        np.testing.assert_allclose(got[()], want, rtol=1e-2, atol=0.1)
    else:
        _same(got, want)


def test_operands_are_read_by_boxes_never_whole(tiny: None) -> None:
    x, y = _rand((40, 30), np.int32, 5), _rand((30, 20), np.int32, 6)
    dx, dy = Duck(x, chunks=(10, 10)), Duck(y)
    _same(la.matmul(dx, dy, chunks=(10, 10)), x @ y)
    biggest = max(math.prod(s.stop - s.start for s in box) for box in dx.reads + dy.reads)
    assert biggest < min(x.size, y.size) // 4
    assert len(dx.reads) > 4 and len(dy.reads) > 4


def test_kept_panels_are_read_once_per_work_region(monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for x1's panel only, each work region reads x1's rows once and x2 step by
    step, the steps a multiple of x2's chunks along the contracted axis."""
    monkeypatch.setattr(plan, "STEP_BYTES", 8 * (10 + 20) * 6)  # 6 rows of x2 at a time
    monkeypatch.setattr(plan, "PANEL_BYTES", 10 * 60 * 8)  # x1's 10 rows, not x2's 60
    monkeypatch.setattr(plan, "WORK_BYTES", 10 * 20 * 8)  # one result chunk
    x, y = _rand((40, 60), np.float64, 7), _rand((60, 20), np.float64, 8)
    dx, dy = Duck(x), Duck(y, chunks=(6, 20))
    _same(la.matmul(dx, dy, chunks=(10, 20)), x @ y)
    assert len(dx.reads) == 4  # one panel of 10 rows per work region
    assert {(k[0].stop - k[0].start) for k in dy.reads} == {6}  # steps on y's chunk grain


def test_files_in_files_out(tmp_path: Any) -> None:
    x, y = _rand((30, 20), np.float32, 9), _rand((20, 25), np.float32, 10)
    a = pb.asarray(x, urlpath=str(tmp_path / "a.b2nd"), chunks=(7, 20))
    b = pb.asarray(y, urlpath=str(tmp_path / "b.b2nd"), chunks=(20, 6))
    c = la.matmul(a, b, urlpath=str(tmp_path / "c.b2nd"), chunks=(8, 25), cparams={"clevel": 1})
    _same(pb.open(str(tmp_path / "c.b2nd")), x @ y)
    assert (c.chunks, c.schunk.cparams.clevel) == ((8, 25), 1)
    again = la.matmul(a, b, urlpath=str(tmp_path / "c.b2nd"), mode="w")
    _same(again, x @ y)


def test_default_result_blocks_are_large_for_threaded_compression() -> None:
    c = la.matmul(np.ones((600, 500)), np.ones((500, 600)))
    assert math.prod(c.blocks) * 8 <= output.RESULT_BLOCK_BYTES
    assert math.prod(c.blocks) * 8 > output.RESULT_BLOCK_BYTES // 2
    assert c.blocks[-1] == c.chunks[-1] == 600


@pytest.mark.parametrize("scalar", [5, 2.5, 1 + 2j, np.int8(3), np.float64(1.5), "a", None])
def test_scalars_are_refused(scalar: Any) -> None:
    v = pb.asarray(np.arange(3))
    for args in ((scalar, v), (v, scalar), (scalar, scalar)):
        with pytest.raises(ParamError, match="not scalars"):
            la.matmul(*args)


@pytest.mark.parametrize(
    ("sa", "sb", "match"),
    [
        ((3, 4), (5, 2), "not aligned"),
        ((4,), (5,), "not aligned"),
        ((2, 3, 4), (3, 4, 2), "do not broadcast"),
        ((), (3,), "at least 1 dimension"),
    ],
)
def test_misaligned_shapes_are_value_errors(sa: Any, sb: Any, match: str) -> None:
    with pytest.raises(ParamError, match=match):
        la.matmul(np.ones(sa), pb.asarray(np.ones(sb)))
    with pytest.raises(ValueError):
        np.matmul(np.ones(sa), np.ones(sb))  # numpy refuses them too


@pytest.mark.parametrize("dtype", ["U3", "M8[s]", "O"])
def test_items_that_are_not_numbers_are_refused(dtype: str) -> None:
    x = np.zeros((2, 2), dtype)
    with pytest.raises(ParamTypeError, match="numbers or booleans"):
        la.matmul(x, np.ones((2, 2)))


def test_dtype_keyword_is_refused() -> None:
    with pytest.raises(ParamError, match="dtype is set by the operation"):
        la.matmul(np.ones((2, 2)), np.ones((2, 2)), dtype=np.float32)


def test_at_operator_both_ways_and_np_matmul() -> None:
    x, y = _rand((6, 5), np.int64, 11), _rand((5, 4), np.int64, 12)
    a, b = pb.asarray(x, chunks=(2, 5)), pb.asarray(y)
    for got in (a @ b, a @ y, x @ b, np.matmul(x, b), np.matmul(a, b)):
        _same(got, x @ y)
    _same(x.tolist() @ b, x @ y)  # a list: NDArray.__rmatmul__
    with pytest.raises(TypeError):
        a @ object()  # type: ignore[operator]
    with pytest.raises(ParamError):
        a @ 3


@pytest.mark.parametrize("mode", ["naive", "cblas", "auto"])
def test_backends_give_the_same_products(mode: str) -> None:
    x, y = _rand((20, 30), np.float64, 13), _rand((30, 10), np.float64, 14)
    try:
        la.set_matmul_block_backend(mode)
        assert la.get_matmul_block_backend() == mode
        _same(la.matmul(x, y), x @ y)
    finally:
        la.set_matmul_block_backend("auto")


def test_backend_selection_and_library() -> None:
    assert la.get_selected_matmul_block_backend() in ("cblas", "accelerate", "naive")
    with pytest.raises(ParamError, match="one of"):
        la.set_matmul_block_backend("fast")
    try:
        la.set_matmul_block_backend("naive")
        assert la.get_selected_matmul_block_backend() == "naive"
        assert pb.get_matmul_library() is None
    finally:
        la.set_matmul_block_backend("auto")
    if la.get_selected_matmul_block_backend() == "cblas":
        assert pb.get_matmul_library() == la.get_loaded_matmul_cblas_library()


@st.composite
def _pair(draw: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], tuple[int, ...]]:
    dtype = draw(st.sampled_from(["i2", "i4", "u1", "f4", "f8", "c16", "?"]))
    n, k, m = (draw(st.integers(1, 9)) for _ in range(3))
    batch_a = draw(st.lists(st.sampled_from([1, 2, 3]), max_size=2))
    batch_b = [draw(st.sampled_from([1, n_])) for n_ in batch_a[len(batch_a) - 1 :]]
    sa = (*batch_a, n, k) if draw(st.booleans()) else (k,)
    sb = (*batch_b, k, m) if draw(st.booleans()) else (k,)
    x = draw(hnp.arrays(dtype, sa, elements=hnp.from_dtype(np.dtype(dtype), **_bounds(dtype))))
    y = draw(hnp.arrays(dtype, sb, elements=hnp.from_dtype(np.dtype(dtype), **_bounds(dtype))))
    ca = tuple(draw(st.integers(1, s)) for s in sa)
    cb = tuple(draw(st.integers(1, s)) for s in sb)
    return x, y, ca, cb


def _bounds(dtype: str) -> dict[str, Any]:
    kind = np.dtype(dtype).kind
    if kind == "f":
        return {"min_value": -100, "max_value": 100, "allow_nan": False}
    if kind == "c":
        return {"min_magnitude": 0, "max_magnitude": 100, "allow_nan": False}
    return {}


@SETTINGS
@given(pair=_pair(), step=st.sampled_from([16, 64, 1 << 20]), work=st.sampled_from([32, 1 << 20]))
def test_any_product_equals_numpys(pair: Any, step: int, work: int) -> None:
    x, y, ca, cb = pair
    saved = plan.STEP_BYTES, plan.PANEL_BYTES, plan.WORK_BYTES
    plan.STEP_BYTES, plan.PANEL_BYTES, plan.WORK_BYTES = step, step, work
    try:
        want = np.matmul(x, y)
        got = la.matmul(pb.asarray(x, chunks=ca), pb.asarray(y, chunks=cb))
    finally:
        plan.STEP_BYTES, plan.PANEL_BYTES, plan.WORK_BYTES = saved
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got[()], want, rtol=1e-4, atol=1e-2)
    else:
        np.testing.assert_array_equal(got[()], want)
