"""``squeeze`` views (ndarray/views.py, the ``_dropped`` axes of ndarray/core.py): numpy's
result, the same stored chunks read and written, composed with ``expand_dims``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError, ParamError


def _stored(shape: tuple[int, ...], **kw: Any) -> tuple[np.ndarray, pb.NDArray]:
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    return x, pb.asarray(x, **kw)


@pytest.mark.parametrize("axis", [None, 0, 2, (0, 3), (-1, 0), ()])
def test_squeeze_is_numpys_and_a_view(axis: Any) -> None:
    x, a = _stored((1, 6, 1, 1), chunks=(1, 4, 1, 1), blocks=(1, 2, 1, 1))
    v = pb.squeeze(a, axis)
    want = np.squeeze(x, axis)
    assert v.shape == want.shape
    np.testing.assert_array_equal(v[...], want)
    assert v.schunk is a.schunk  # no copy: the same super-chunk
    v[...] = want + 100
    np.testing.assert_array_equal(a[...], x + 100)


def test_the_method_and_array_likes() -> None:
    assert pb.zeros((1, 3, 1)).squeeze().shape == (3,)
    assert pb.zeros((1, 3, 1)).squeeze(axis=2).shape == (1, 3)
    got = pb.squeeze(np.arange(3).reshape(1, 3))
    assert isinstance(got, pb.NDArray) and got[1] == 1


def test_writes_and_resizes_through_the_view_keep_the_stored_axes(tmp_path: Path) -> None:
    path = str(tmp_path / "a.b2nd")
    _, a = _stored((1, 10), chunks=(1, 4), blocks=(1, 2), urlpath=path)
    v = a.squeeze(0)
    v[2:5] = -1
    v.resize((13,))
    v[12] = 7
    back = pb.open(path)
    assert back.shape == (1, 13) and a.shape == (1, 13)
    np.testing.assert_array_equal(back[0, :5], [0, 1, -1, -1, -1])
    assert back[0, 12] == 7


def test_squeeze_and_expand_dims_compose() -> None:
    x, a = _stored((1, 5, 1), chunks=(1, 2, 1))
    v = pb.squeeze(a)  # (5,)
    e = pb.expand_dims(v, (0, 2))  # (1, 5, 1): added axes over a squeezed view
    np.testing.assert_array_equal(e[...], x)
    w = pb.squeeze(e, 2)  # drops an added axis
    assert w.shape == (1, 5)
    w[0, 0] = 42
    assert a[0, 0, 0] == 42
    assert pb.squeeze(pb.expand_dims(a, 1)).shape == (5,)


@pytest.mark.parametrize(
    ("axis", "match"),
    [(1, "size not equal to one"), ((0, 0), "distinct"), (3, "axis"), (1.5, "int")],
)
def test_bad_axes_are_refused(axis: Any, match: str) -> None:
    _, a = _stored((1, 4, 1))
    with pytest.raises(ParamError, match=match):
        pb.squeeze(a, axis)


def test_an_axis_chunked_longer_than_one_cannot_be_a_view() -> None:
    """Its chunks are padded past the array inside every block: no shape without the axis
    describes the stored layout (python-blosc2 makes a view that fails on its first read)."""
    _, a = _stored((1, 20), chunks=(4, 5), blocks=(2, 5))
    with pytest.raises(NotImplementedError, match="chunked 4 long"):
        pb.squeeze(a, 0)
    b = a.copy(chunks=(1, 5), blocks=(1, 5))
    np.testing.assert_array_equal(pb.squeeze(b, 0)[...], np.arange(20))


def test_a_hidden_axis_grown_by_another_handle_is_a_format_error(tmp_path: Path) -> None:
    path = str(tmp_path / "a.b2nd")
    _, a = _stored((1, 6), chunks=(1, 3), urlpath=path)
    v = a.squeeze(0)
    other = pb.open(path, mode="a")
    other.resize((2, 6))
    with pytest.raises(FormatError, match="squeeze view hides"):
        v[...]
