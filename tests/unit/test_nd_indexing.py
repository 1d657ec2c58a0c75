"""ndarray/indexing.py: which index keys are integers and which are basic (numpy's rules),
the predicates the indexing code shares (fancy.py, keys.py, io.py, NDArray's key checks)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ndarray.indexing import (
    check_key,
    is_basic_key,
    is_int_key,
    normalize_key,
    parse_key,
)

INT_KEYS = {
    "int": (3, True),
    "negative int": (-1, True),
    "numpy int8": (np.int8(-2), True),
    "numpy uint64": (np.uint64(7), True),
    "bool": (True, False),
    "numpy bool": (np.bool_(False), False),
    "float": (3.0, False),
    "numpy float": (np.float64(1), False),
    "0-d int array (an advanced key)": (np.array(3), False),
    "str": ("3", False),
    "None": (None, False),
}


@pytest.mark.parametrize(("key", "want"), INT_KEYS.values(), ids=list(INT_KEYS))
def test_is_int_key(key, want) -> None:
    assert is_int_key(key) is want


@pytest.mark.parametrize(("key", "want"), INT_KEYS.values(), ids=list(INT_KEYS))
def test_numpy_reads_the_same_keys_as_integers(key, want) -> None:
    """numpy drops the axis of an integer key and of nothing else in the table, but for the
    0-d integer array, which the indexing code takes as an array key (fancy.py)."""
    try:
        dropped = np.ndim(np.arange(10)[key]) == 0
    except IndexError:
        dropped = False
    assert dropped is (want or isinstance(key, np.ndarray))


BASIC = {
    "int": (2, True),
    "slice": (slice(1, None, -2), True),
    "Ellipsis": (Ellipsis, True),
    "mixed tuple": ((1, ..., slice(2), np.int64(0)), True),
    "empty tuple": ((), True),
    "bool in tuple": ((True, 1), False),
    "None": ((None, 1), False),
    "list": ([1, 2], False),
    "array": (np.array([1]), False),
    "field name": ("x", False),
}


@pytest.mark.parametrize(("key", "want"), BASIC.values(), ids=list(BASIC))
def test_is_basic_key(key, want) -> None:
    assert is_basic_key(key) is want


def _three_visits(key, shape):  # the checks parse_key replaces, in their old order
    check_key(key)
    if not is_basic_key(key):
        return None
    return normalize_key(key, shape)


KEY_ITEMS = st.one_of(
    st.integers(-12, 12),
    st.builds(
        slice,
        st.none() | st.integers(-12, 12),
        st.none() | st.integers(-12, 12),
        st.none() | st.integers(-3, 3) | st.just(1.5),
    ),
    st.just(Ellipsis),
    st.just(None),
    st.sampled_from([2.0, np.float32(1), [0, 1], np.array([1, 0]), np.array([0.5]), True]),
)


@settings(max_examples=400, deadline=None)
@given(
    items=st.lists(KEY_ITEMS, max_size=4),
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    bare=st.booleans(),
)
def test_parse_key_is_the_three_visits_in_one(items, shape, bare) -> None:
    """parse_key answers as check_key, is_basic_key and normalize_key did one after the
    other: the same error, None for the same advanced keys, the same ranges and squeezed
    axes, and for one int per axis the item's coordinates."""
    key = items[0] if bare and len(items) == 1 else tuple(items)
    shape = tuple(shape)
    try:
        want = _three_visits(key, shape)
    except Exception as exc:
        with pytest.raises(type(exc), match=re.escape(str(exc))):
            parse_key(key, shape)
        return
    got = parse_key(key, shape)
    if want is None:
        assert got is None
        return
    assert got is not None and (got.ranges, got.squeeze) == want
    ints = len(want[1]) == len(shape) and len(items) == len(shape)
    assert got.point == (tuple(r[0] for r in got.ranges) if ints else None)


def _indexing_calls(fn) -> list[str]:
    """The functions of ndarray/indexing.py that ``fn()`` calls, at any depth, in order
    (found by code object: an alias imported elsewhere is counted too)."""
    import inspect
    import sys

    import pyblosc2.ndarray.indexing as ix

    codes = {
        f.__code__: name
        for name, f in vars(ix).items()
        if inspect.isfunction(f) and f.__module__ == ix.__name__
    }
    seen: list[str] = []

    def spy(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            seen.append(codes[frame.f_code])

    sys.setprofile(spy)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


ONCE_KEYS = {
    "one item": (2, 3),
    "one item, negative": (-1, 0),
    "slices with steps": (slice(1, 7), slice(None, None, 3)),
    "ellipsis and int": (Ellipsis, 4),
    "bare int": 5,
    "bare slice": slice(2, 4),
    "everything": Ellipsis,
}


@pytest.mark.parametrize("where", ["memory", "disk"])
@pytest.mark.parametrize("key", ONCE_KEYS.values(), ids=list(ONCE_KEYS))
def test_a_read_and_a_write_normalise_the_key_once(key, where, tmp_path) -> None:
    """``a[key]`` and ``a[key] = v`` visit indexing.py through one parse_key (and the
    helpers it calls); none of the separate passes it replaced (check_key, is_basic_key,
    normalize_key) runs on the way down."""
    x = np.arange(80, dtype=np.int32).reshape(8, 10)
    kw = {"urlpath": str(tmp_path / "a.b2nd"), "mode": "w"} if where == "disk" else {}
    a = pb.asarray(x, chunks=(4, 5), blocks=(2, 5), **kw)
    for fn in (lambda: a[key], lambda: a.__setitem__(key, 7)):
        calls = _indexing_calls(fn)
        assert calls.count("parse_key") == 1, calls
        assert not {"check_key", "is_basic_key", "normalize_key"} & set(calls), calls
    x[key] = 7
    np.testing.assert_array_equal(a[...], x)
