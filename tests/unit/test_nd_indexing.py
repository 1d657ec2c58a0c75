"""ndarray/indexing.py: which index keys are integers and which are basic (numpy's rules),
the predicates the indexing code shares (fancy.py, keys.py, io.py, NDArray's key checks)."""

from __future__ import annotations

import numpy as np
import pytest

from pyblosc2.ndarray.indexing import is_basic_key, is_int_key

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
