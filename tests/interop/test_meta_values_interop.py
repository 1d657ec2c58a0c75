"""Metalayer and vlmeta values both ways with python-blosc2 4.14.1 (frame-format.md §9.1, §9.2):
what one library writes, the other reads as the same value — numpy arrays inside lists
(``[np.arange(3), 1]``, issue 25), tuples, sets, complex numbers, structured and object arrays
— and values that python-blosc2 writes but cannot read back the same, which pyblosc2 refuses
to write (and reads, from python-blosc2's files, as python-blosc2 does)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.helpers import same_value

VALUES: dict[str, Any] = {
    "array-in-list": [np.arange(3), 1],
    "arrays-in-dict": {"a": np.arange(6, dtype="<f4").reshape(2, 3), "b": [np.zeros(0, "u1")]},
    "tuples": {"t": (1, (2, "x"), ()), "l": [(1,), []]},
    "set-and-complex": [{1, "a", (2, 3)}, 1 - 2j],
    "structured": np.array([(1, 2.5), (3, -1.0)], dtype=[("a", "<i4"), ("b", ">f8")]),
    "nested-structured": np.zeros(2, dtype=[("p", [("x", "<i2"), ("y", "<i2")]), ("q", "S3")]),
    "subarray-field": np.zeros(2, dtype=[("v", "<f4", (3,))]),
    "void": np.zeros(3, dtype="V4"),
    "unicode": np.array(["a", "bcd"]),
    "datetime": np.array(["2024-01-01", "2025-06-30"], dtype="datetime64[D]"),
    "object-array": np.array([1, "x", None, [1, [2]]], dtype=object),
    "object-array-of-arrays": np.array([np.arange(2), np.arange(3)], dtype=object),
    "bytes-keys": {b"k": 1, "s": b"v"},
    "numpy-scalars": [np.int8(-3), np.float32(0.5), np.bool_(True), np.str_("z")],
    "deep-64": [1],
    "big-ints": [2**64 - 1, -(2**63)],
}


for _ in range(63):  # 64 arrays deep: the deepest value pyblosc2 reads (MAX_DEPTH)
    VALUES["deep-64"] = [VALUES["deep-64"]]


def _plain(value: Any) -> Any:
    """``value`` with numpy scalars as the Python values both libraries store."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


@pytest.mark.parametrize("name", sorted(VALUES))
@pytest.mark.parametrize("writer", ["pyblosc2", "python-blosc2"])
def test_vlmeta_values_both_ways(cblosc2, tmp_path, name: str, writer: str) -> None:
    value = VALUES[name]
    path = str(tmp_path / "v.b2frame")
    w, r = (pb, cblosc2) if writer == "pyblosc2" else (cblosc2, pb)
    s = w.SChunk(urlpath=path, mode="w")
    s.vlmeta["x"] = value
    del s
    for lib in (r, w):
        handle = lib.open(path)  # python-blosc2's vlmeta needs its SChunk alive
        got = handle.vlmeta["x"]
        assert same_value(_plain(value), got), f"{lib.__name__} read {got!r}"


# python-blosc2's ``meta=`` packs without its extension types (§9.2): plain values only
META_VALUES: dict[str, Any] = {
    "tuples": {"t": (1, (2, "x"))},
    "deep-64": VALUES["deep-64"],
    "bytes-and-floats": [b"\x00\xff", 1.5, None, True],
}


@pytest.mark.parametrize("name", sorted(META_VALUES))
@pytest.mark.parametrize("writer", ["pyblosc2", "python-blosc2"])
def test_meta_values_both_ways(cblosc2, tmp_path, name: str, writer: str) -> None:
    value = META_VALUES[name]
    path = str(tmp_path / "m.b2frame")
    w, r = (pb, cblosc2) if writer == "pyblosc2" else (cblosc2, pb)
    del_me = w.SChunk(urlpath=path, mode="w", meta={"m": value})
    del del_me
    for lib in (r, w):
        handle = lib.open(path)
        assert same_value(value, handle.meta["m"])


@pytest.mark.parametrize("name", ["array-in-list", "set-and-complex", "structured"])
def test_meta_values_with_ext_types_to_python_blosc2(cblosc2, tmp_path, name: str) -> None:
    path = str(tmp_path / "m.b2frame")
    pb.SChunk(urlpath=path, mode="w", meta={"m": VALUES[name]})
    handle = cblosc2.open(path)
    assert same_value(VALUES[name], handle.meta["m"])


# python-blosc2 stores these, then reads back something else or nothing at all
ASYMMETRIC: dict[str, tuple[Any, str]] = {
    "tuple-lookalike": (["__tuple__", 1], "reads back as a tuple"),
    "int-keys": ({1: "a"}, "map key"),
    "tuple-keys": ({(1, 2): "a"}, "map key"),
    "deeper-than-64": ([VALUES["deep-64"]], "nesting depth"),
}


@pytest.mark.parametrize("name", sorted(ASYMMETRIC))
def test_values_that_do_not_read_back_are_refused(cblosc2, tmp_path, name: str) -> None:
    value, why = ASYMMETRIC[name]
    path = str(tmp_path / "v.b2frame")
    s = pb.SChunk(urlpath=path, mode="w")
    s.vlmeta["keep"] = 1
    with pytest.raises(pb.ParamError, match=why):
        s.vlmeta["x"] = value
    assert pb.open(path).vlmeta[:] == {"keep": 1}  # nothing written
    # python-blosc2 writes it; what it reads back differs (or fails), and pyblosc2 reads its
    # file as it does, or refuses with a FormatError where it fails
    t = cblosc2.SChunk(urlpath=str(tmp_path / "c.b2frame"), mode="w")
    t.vlmeta["x"] = value
    try:
        theirs = t.vlmeta["x"]
    except (ValueError, RecursionError):
        theirs = None
    if name != "deeper-than-64":
        assert not same_value(value, theirs)
    if theirs is None or name == "deeper-than-64":
        with pytest.raises(pb.FormatError):
            pb.open(str(tmp_path / "c.b2frame")).vlmeta["x"]
    else:
        assert same_value(theirs, pb.open(str(tmp_path / "c.b2frame")).vlmeta["x"])
