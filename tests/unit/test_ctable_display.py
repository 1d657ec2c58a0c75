"""CTable display options and text (pyblosc2.ctable.printopts, render): python-blosc2
4.14.1's ``str`` of the same table under the same options is the oracle; bad options are
refused naming the option."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.ctable.render import shown_rows
from pyblosc2.errors import ParamError, ParamTypeError

blosc2 = pytest.importorskip("blosc2")


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    saved = pb.get_printoptions()
    ref_saved = blosc2.get_printoptions()
    yield
    pb.set_printoptions(**saved)
    blosc2.set_printoptions(**ref_saved)


def _tables(rows: list[tuple[int, float, bool]]) -> tuple[Any, Any]:
    @dataclasses.dataclass
    class Ours:
        id: int = pb.field(pb.int64(), default=0)
        x: float = pb.field(pb.float64(), default=0.0)
        ok: bool = pb.field(pb.bool(), default=True)

    @dataclasses.dataclass
    class Theirs:
        id: int = blosc2.field(blosc2.int64(), default=0)
        x: float = blosc2.field(blosc2.float64(), default=0.0)
        ok: bool = blosc2.field(blosc2.bool(), default=True)

    return CTable(Ours, new_data=rows), blosc2.CTable(Theirs, new_data=rows)


ROWS = st.lists(
    st.tuples(
        st.integers(-(10**9), 10**9),
        st.floats(-1e6, 1e6, allow_nan=False) | st.integers(-50, 50).map(float),
        st.booleans(),
    ),
    max_size=30,
)


@given(
    ROWS,
    st.sampled_from([-1, 0, 1, 4, 10, 60]),
    st.booleans(),
    st.integers(0, 8),
)
@settings(max_examples=40, deadline=None)
def test_str_is_python_blosc2s(rows: list[Any], nrows: int, index: bool, digits: int) -> None:
    ours, theirs = _tables(rows)
    opts: dict[str, Any] = dict(
        display_rows=nrows, display_index=index, display_precision=digits, display_width=-1
    )
    pb.set_printoptions(**opts)
    blosc2.set_printoptions(**opts)
    assert str(ours) == str(theirs)
    assert repr(ours) == str(ours)


@given(ROWS, st.booleans())
@settings(max_examples=20, deadline=None)
def test_to_string_is_python_blosc2s(rows: list[Any], index: bool) -> None:
    ours, theirs = _tables(rows)
    pb.set_printoptions(display_rows=2)  # to_string ignores it
    blosc2.set_printoptions(display_rows=2)
    assert ours.to_string(display_index=index) == theirs.to_string(display_index=index)
    dims = ours.to_string(show_dimensions=True)
    assert dims == theirs.to_string(show_dimensions=True)
    assert dims.endswith(f"[{len(rows)} rows x 3 columns]")


def test_narrow_width_drops_middle_columns() -> None:
    @dataclasses.dataclass
    class Wide:
        c0: int = 0
        c1: int = 0
        c2: int = 0
        c3: int = 0
        c4: int = 0

    t = CTable(Wide, new_data=[(1, 2, 3, 4, 5)] * 3)
    header = t.to_string(max_width=24).splitlines()[0].split()
    assert header[0] == "c0" and "..." in header and header[-1] == "c4" and "c2" not in header
    assert t.to_string(max_width=-1).splitlines()[0].split() == ["c0", "c1", "c2", "c3", "c4"]
    text = t.to_string(max_width=24, show_dimensions="truncate")
    assert text.endswith("[3 rows x 5 columns]")


@pytest.mark.parametrize(
    ("nrows", "max_rows"), [(0, 0), (5, 0), (5, -1), (11, 10), (100, 3), (7, 7)]
)
def test_shown_rows(nrows: int, max_rows: int) -> None:
    head, tail, hidden = shown_rows(nrows, max_rows)
    assert head.size + tail.size + hidden == nrows
    assert head.tolist() == list(range(head.size))
    assert tail.tolist() == list(range(nrows - tail.size, nrows))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"display_index": 1}, "display_index"),
        ({"fancy": "yes"}, "fancy"),
        ({"display_rows": -2}, "display_rows"),
        ({"display_rows": True}, "display_rows"),
        ({"display_width": -2}, "display_width"),
        ({"display_width": 1.5}, "display_width"),
        ({"display_precision": -1}, "display_precision"),
    ],
)
def test_bad_options_name_the_option(kwargs: dict[str, Any], name: str) -> None:
    before = pb.get_printoptions()
    with pytest.raises(ParamTypeError, match=name):
        pb.set_printoptions(**kwargs)
    assert pb.get_printoptions() == before


def test_printoptions_restores_and_defaults_are_python_blosc2s() -> None:
    assert pb.get_printoptions() == blosc2.get_printoptions()
    before = pb.get_printoptions()
    with pb.printoptions(display_rows=-1, display_width=7):
        assert pb.get_printoptions()["display_width"] == 7
    assert pb.get_printoptions() == before
    with pytest.raises(ParamTypeError), pb.printoptions(display_rows="x"):
        pass
    assert pb.get_printoptions() == before


def test_bad_to_string_arguments_and_fancy() -> None:
    t, _ = _tables([(1, 1.0, True)])
    with pytest.raises(ParamTypeError, match="max_rows"):
        t.to_string(max_rows=-3)
    with pytest.raises(ParamTypeError, match="display_index"):
        t.to_string(display_index="no")
    with pytest.raises(ParamError, match="show_dimensions"):
        t.to_string(show_dimensions="always")
    pb.set_printoptions(fancy=True)
    with pytest.raises(NotImplementedError, match="fancy=True"):
        str(t)


def test_float_cells() -> None:
    t, theirs = _tables([(1, 1.23456789, True), (2, np.nan, False)])
    assert "1.234568" in str(t) and str(t) == str(theirs)
    pb.set_printoptions(display_precision=2)
    assert "1.23" in str(t) and "1.234568" not in str(t)
