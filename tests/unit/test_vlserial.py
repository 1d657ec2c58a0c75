"""The msgpack rules of stored values (vlarrays/serial.py), the deserialization policy
(vlarrays/policy.py) and Ref (vlarrays/ref.py), without a reference library."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.msgpack_utils import msgpack_packb, msgpack_unpackb
from pyblosc2.vlarrays import Ref, UnsafeDeserializationError
from pyblosc2.vlarrays.serial import packb, unpackb

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.binary(max_size=20),
    st.complex_numbers(allow_nan=False),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=5), inner, max_size=4),
        st.frozensets(st.integers(-(2**63), 2**63 - 1), max_size=4).map(set),
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(values)
def test_roundtrip(value) -> None:
    assert unpackb(packb(value)) == value
    assert unpackb(packb(value), "safe") == value  # passive values only: safe reads them


def _same(a, b) -> bool:
    return (
        type(a) is type(b)
        and a.dtype == b.dtype
        and a.shape == b.shape
        and (a.tobytes() == b.tobytes() if a.dtype != object else a.tolist() == b.tolist())
    )


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(12, dtype="<i4").reshape(3, 4),
        np.zeros(0, "f8"),
        np.array(["ab", "c"]),
        np.zeros((2,), "i2,f8"),
        np.zeros(2, [("a", "<u1", (2,)), (("title", "b"), "<f4")]),
        np.array([1, "x", None], dtype=object),
    ],
    ids=["int", "empty", "unicode", "struct", "subarray+title", "object"],
)
def test_numpy_arrays(arr) -> None:
    assert _same(unpackb(packb(arr)), arr)


def test_numpy_scalars_become_python_values() -> None:
    value = [np.int16(3), np.float32(1.5), np.bool_(True), np.bytes_(b"x"), np.str_("y")]
    assert unpackb(packb(value)) == [3, 1.5, True, b"x", "y"]
    assert [type(v) for v in unpackb(packb(value))] == [int, float, bool, bytes, str]


def test_unknown_types_are_refused() -> None:
    with pytest.raises(TypeError):
        packb(object())


def test_containers_are_embedded_and_need_full_mode() -> None:
    arr = pb.asarray(np.arange(6))
    blob = packb({"a": arr, "s": pb.SChunk(chunksize=8, data=b"abcdefgh")})
    assert msgpack.unpackb(blob, raw=False, ext_hook=lambda c, d: c)["a"] == 42
    full = unpackb(blob)
    np.testing.assert_array_equal(full["a"][:], np.arange(6))
    assert full["s"][:] == b"abcdefgh"
    with pytest.raises(UnsafeDeserializationError, match="embedded cframe"):
        unpackb(blob, "safe")


def test_refs() -> None:
    ref = Ref.dictstore_key("store.b2z", "/a")
    blob = packb([ref])
    assert unpackb(blob) == [ref]
    with pytest.raises(UnsafeDeserializationError, match="ref"):
        unpackb(blob, "safe")


@pytest.mark.parametrize(
    ("kind", "name"), [("c2array", "C2Array"), ("lazyexpr", "LazyExpr"), ("lazyudf", "LazyUDF")]
)
def test_python_blosc2_objects_pyblosc2_lacks_are_named(kind: str, name: str) -> None:
    payload = msgpack.packb({"kind": kind, "version": 1, "path": "x"})
    blob = msgpack.packb(msgpack.ExtType(43, payload))
    with pytest.raises(NotImplementedError, match=name):
        unpackb(blob)
    with pytest.raises(UnsafeDeserializationError, match=kind):
        unpackb(blob, "safe")


def _ext(code: int, body) -> bytes:
    data = body if isinstance(body, bytes) else msgpack.packb(body, use_bin_type=True)
    return msgpack.packb(msgpack.ExtType(code, data))


@pytest.mark.parametrize(
    ("blob", "match"),
    [
        (_ext(46, {"dtype": {"str": "<i4"}, "shape": [3], "data": b"\0" * 8}), "12 bytes"),
        (_ext(46, {"dtype": {"str": "<i4"}, "shape": [-1], "data": b""}), "shape"),
        (_ext(46, {"dtype": {"str": "<i4"}, "shape": [2**40, 2**40], "data": b""}), "bytes"),
        (_ext(46, {"dtype": {"str": "nonsense"}, "shape": [1], "data": b"x"}), "dtype"),
        (_ext(46, {"dtype": {"str": "O"}, "shape": [1], "data": b"x" * 8}), "bytes"),
        (_ext(46, {"values": [1, 2], "shape": [3]}), "3 items"),
        (_ext(44, b"\0" * 15), "16"),
        (_ext(45, {"a": 1}), "list"),
        (_ext(43, {"kind": "ref", "version": 2}), "version"),
        (_ext(43, {"kind": "other", "version": 1}), "kind"),
        (b"\xc1", "msgpack"),
        (b"\x92\x01", "msgpack"),
    ],
    ids=[
        "short-data", "negative-shape", "huge-shape", "bad-dtype", "object-dtype",
        "values-count", "complex-size", "set-not-list", "ref-version", "unknown-kind",
        "reserved-byte", "truncated",
    ],
)  # fmt: skip
def test_malformed_values_are_format_errors(blob: bytes, match: str) -> None:
    with pytest.raises(pb.FormatError, match=match):
        unpackb(blob)


def test_unknown_extensions() -> None:
    blob = _ext(99, b"raw")
    assert unpackb(blob) == msgpack.ExtType(99, b"raw")
    with pytest.raises(UnsafeDeserializationError, match="99"):
        unpackb(blob, "safe")


def test_msgpack_utils_is_python_blosc2s_module() -> None:
    assert msgpack_unpackb(msgpack_packb((1, [2, (3,)]))) == (1, [2, (3,)])
    with pytest.raises(pb.ParamError):
        msgpack_unpackb(msgpack_packb(1), deserialize="maybe")
    with pytest.raises(TypeError):
        msgpack_unpackb(msgpack_packb(1), deserialize=True)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"kind": "urlpath"}, TypeError),
        ({"kind": "urlpath", "urlpath": "a", "key": "k"}, ValueError),
        ({"kind": "dictstore_key", "urlpath": "a"}, TypeError),
        ({"kind": "c2array", "path": "p", "urlpath": "a"}, ValueError),
        ({"kind": "nope"}, ValueError),
    ],
)
def test_ref_fields_are_checked(kwargs, error) -> None:
    with pytest.raises(error):
        Ref(**kwargs)


def test_ref_payloads_and_opening(tmp_path) -> None:
    path = str(tmp_path / "a.b2nd")
    a = pb.asarray(np.arange(5), urlpath=path, mode="w")
    ref = Ref.from_object(a)
    assert ref.to_dict() == {"kind": "urlpath", "version": 1, "urlpath": path}
    np.testing.assert_array_equal(ref.open()[:], np.arange(5))
    assert Ref.c2array_ref("@p/x", "https://h/").to_dict() == {
        "kind": "c2array", "version": 1, "path": "@p/x", "urlbase": "https://h/",
    }  # fmt: skip
    with pytest.raises(ValueError, match="stored on disk"):
        Ref.from_object(pb.asarray(np.arange(3)))
    with pytest.raises(NotImplementedError):
        Ref.zarr_ref("s3://b/z").open()
    with pytest.raises(ValueError, match="version"):
        Ref.from_dict({"kind": "urlpath", "urlpath": "x"})
