"""meta.py: metalayer and vlmeta values as python-blosc2 packs them (frame-format.md §9.1, §9.2).

No reference library: the vectors are the examples of §9.1 and the msgpack spec's own encodings
of the fixed-width types python-blosc2's ``strict_types`` packer produces.
"""

from __future__ import annotations

import math

import msgpack
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2 import FormatError
from pyblosc2.frame.header import FrameHeader
from pyblosc2.meta import RawMetalayer, packb, unpackb

# (name, value, msgpack hex)
VECTORS = [
    ("tuple", (1, 2), "93a95f5f7475706c655f5f0102"),  # §9.1: ["__tuple__", 1, 2]
    ("bytes", b"xy", "c4027879"),  # §9.1: bin8
    ("list", [1, 2], "920102"),  # §3.1 example metalayer
    ("str", "hi", "a26869"),  # §5.2 example vlmeta
    ("float", 1.0, "cb3ff0000000000000"),  # python floats are float64
    ("none", None, "c0"),
    ("bool", True, "c3"),
    ("negative", -1, "ff"),
    ("big", 2**64 - 1, "cfffffffffffffffff"),
    ("map", {"a": 1}, "81a16101"),
    ("nested-tuple", [(1,)], "9192a95f5f7475706c655f5f01"),
    ("complex", 1 + 2j, "d82c3ff00000000000004000000000000000"),  # ext 44: BE float64 pair
    ("set", {1, 2}, "c7032d920102"),  # ext 45: msgpack array of the elements
]


@pytest.mark.parametrize(
    ("value", "hexbytes"), [v[1:] for v in VECTORS], ids=[v[0] for v in VECTORS]
)
def test_packb_vectors(value, hexbytes: str) -> None:
    assert packb(value).hex() == hexbytes
    assert unpackb(bytes.fromhex(hexbytes)) == value


def test_ndarray_ext46_layout() -> None:
    """Ext 46: a map {"dtype": {"str": s}, "shape": [...], "data": bytes}."""
    a = np.arange(3, dtype="<i2")
    packed = packb(a)
    assert packed[:3].hex() == "c7252e"  # ext8, 37 bytes, type 46
    body = msgpack.unpackb(packed[3:])
    assert body == {"dtype": {"str": "<i2"}, "shape": [3], "data": a.tobytes()}


@pytest.mark.parametrize(
    ("scalar", "expected"),
    [(np.int64(3), 3), (np.float32(1.5), 1.5), (np.bool_(True), True), (np.str_("x"), "x")],
    ids=["int64", "float32", "bool", "str"],
)
def test_numpy_scalars_become_python(scalar, expected) -> None:
    assert packb(scalar) == packb(expected)
    assert type(unpackb(packb(scalar))) is type(expected)


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12, dtype="<f8").reshape(3, 4),
        np.array([b"ab", b"c"]),
        np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
        np.zeros((0, 2), dtype="u1"),
        np.arange(6, dtype=">i4")[::2],  # non-contiguous, big-endian
    ],
    ids=["f8-2d", "bytes", "struct", "empty", "strided-be"],
)
def test_ndarray_roundtrip(array: np.ndarray) -> None:
    got = unpackb(packb(array))
    assert got.dtype == array.dtype and got.shape == array.shape
    np.testing.assert_array_equal(got, array)


def test_object_ndarray_roundtrip() -> None:
    a = np.array([1, "x", None], dtype=object)
    got = unpackb(packb(a))
    assert got.dtype == object and got.tolist() == [1, "x", None]


# -- hypothesis round trip --------------------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5).filter(lambda xs: not xs or xs[0] != "__tuple__"),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(st.text(max_size=8), inner, max_size=5),
    ),
    max_leaves=20,
)


@given(VALUES)
def test_roundtrip(value) -> None:
    assert unpackb(packb(value)) == value


@given(st.complex_numbers(allow_nan=False), st.frozensets(st.integers(-100, 100)))
def test_roundtrip_ext(c: complex, s: frozenset) -> None:
    assert unpackb(packb(c)) == c
    assert unpackb(packb(s)) == set(s)


def test_nan_float_roundtrip() -> None:
    assert math.isnan(unpackb(packb(float("nan"))))


# -- malformed values -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"", b"\xc1", b"\x92\x01", b"\x01\x02", b"\xc4\x05ab", b"\xdd\xff\xff\xff\xff"],
    ids=["empty", "reserved-c1", "short-array", "extra-data", "short-bin", "huge-array32"],
)
def test_bad_msgpack(data: bytes) -> None:
    with pytest.raises(FormatError, match=r"^metalayer value: msgpack is undecodable \("):
        unpackb(data)


COMPOSITE = packb({"a": [1, (2, 3), b"xyz"], "b": {"c": 1.5, "d": 1 + 1j}, "e": "text"})


@pytest.mark.parametrize("cut", range(len(COMPOSITE)))
def test_truncated_at_every_offset(cut: int) -> None:
    """msgpack is prefix-free: every proper prefix is incomplete."""
    with pytest.raises(FormatError, match=r"^metalayer value: msgpack is undecodable"):
        unpackb(COMPOSITE[:cut])


@pytest.mark.parametrize("code", [42, 43, 0, 7, 47, 127])
def test_unknown_or_unsafe_ext(code: int) -> None:
    """42 (embedded cframe) and 43 (references) are refused as python-blosc2's safe mode does."""
    data = msgpack.packb(msgpack.ExtType(code, b"\x00" * 4))
    with pytest.raises(
        FormatError, match=rf"^metalayer value: msgpack ext type is {code}, expected 44"
    ):
        unpackb(data)


@pytest.mark.parametrize(
    "value", [object(), type, print, range(3)], ids=["object", "type", "function", "range"]
)
def test_unserializable(value) -> None:
    with pytest.raises(TypeError, match=r"cannot serialize \w+ into a metalayer"):
        packb(value)


def test_raw_metalayer_is_stored_as_given() -> None:
    """§9.2: ``meta=`` values are msgpack-encoded unless they are RawMetalayer."""
    s = pb.SChunk(
        chunksize=40,
        cparams={"typesize": 4},
        meta={"raw": RawMetalayer(b"\x01\x02\x03"), "packed": [1, 2]},
    )
    h = FrameHeader.from_bytes(s.to_cframe())
    assert dict(h.metalayers) == {"raw": b"\x01\x02\x03", "packed": bytes.fromhex("920102")}
