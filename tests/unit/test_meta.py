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
from pyblosc2.meta import MAX_DEPTH, RawMetalayer, packb, unpackb
from tests.helpers import same_value

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
    ("data", "field"),
    [
        (b"", r"value at offset 0 is the end of the bytes, expected 1 more item"),
        (b"\xc1", r"marker at offset 0 is 0xc1"),
        (b"\x92\x01", r"item count at offset 0 is 2, expected at most 1"),
        (b"\x92\x01\xc4", r"length field at offset 3 is 0, expected 1 bytes"),
        (b"\x92\x01\xcd\x01", r"value at offset 2 is 2, expected 3 bytes"),
        (b"\x01\x02", r"trailing bytes at offset 1 is 1, expected 0"),
        (b"\xc4\x05ab", r"length at offset 1 is 5, expected at most 2"),
        (b"\xdd\xff\xff\xff\xff", r"item count at offset 0 is 4294967295, expected at most 0"),
        (b"\xdb\xff\xff\xff\xffab", r"length at offset 1 is 4294967295, expected at most 2"),
        (b"\xc7\x01\x2d", r"length at offset 1 is 1, expected at most 0"),
        (b"\xc7\x00\x2d", r"value at offset 3 is the end of the bytes, expected 1 more item"),
        (b"\xc7\x02\x2d\x01\x02", r"extension 45 payload trailing bytes at offset 4 is 1, "),
        (b"\xd6\x2c\x00\x00\x00\x00", r"extension 44 length at offset 1 is 4, expected 16"),
        (b"\x81\x01\x02", r"map key at offset 1 is 0x1, expected a str or bin"),
        (b"\x81\x90\x02", r"map key at offset 1 is 0x90, expected a str or bin"),
        (b"\xa2\xff\xfe", r"at offset 0 is undecodable \("),  # invalid UTF-8
        (b"\xc7\x01\x2d\x01", r"extension 45 \(set\) at offset 3 is int, expected an array"),
        (b"\xc7\x02\x2d\x91\x90", r"extension 45 \(set\) at offset 3 is .*expected hashable"),
        (b"\xc7\x03\x2d\x91\x90\x00", r"extension 45 payload trailing bytes at offset 5 is 1"),
    ],
    ids=[
        *("empty", "reserved-c1", "short-array", "short-bin8-length", "short-uint16"),
        *("extra-data", "short-bin", "huge-array32"),
        *("huge-str32", "ext-past-end", "empty-ext-payload", "ext-payload-extra"),
        *("complex-short", "int-key", "list-key", "bad-utf8", "set-of-int", "set-of-lists"),
        "set-payload-extra",
    ],
)
def test_bad_msgpack(data: bytes, field: str) -> None:
    with pytest.raises(FormatError, match=rf"^metalayer value: msgpack {field}"):
        unpackb(data)


COMPOSITE = packb({"a": [1, (2, 3), b"xyz"], "b": {"c": 1.5, "d": 1 + 1j}, "e": "text"})


@pytest.mark.parametrize("cut", range(len(COMPOSITE)))
def test_truncated_at_every_offset(cut: int) -> None:
    """msgpack is prefix-free: every proper prefix is incomplete, and the scan says where."""
    fields = "(value|length|length field|item count|ext type)"
    with pytest.raises(FormatError, match=rf"^metalayer value: msgpack {fields} at offset"):
        unpackb(COMPOSITE[:cut])


@pytest.mark.parametrize("code", [42, 43, 0, 7, 47, 127, -1])
def test_unknown_or_unsafe_ext(code: int) -> None:
    """42 (embedded cframe) and 43 (references) are refused as python-blosc2's safe mode does;
    so is -1 (msgpack's timestamp, which msgpack would decode without asking)."""
    data = bytes([0xD6, code % 256]) + bytes(4)  # fixext 4
    with pytest.raises(
        FormatError, match=rf"^metalayer value: msgpack ext type at offset 1 is {code % 256}, "
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


# -- what is written reads back (issue 25) -----------------------------------------------------


def test_array_inside_a_list_reads_back(tmp_path) -> None:
    """``[np.arange(3), 1]`` was written but not read (the tuple check compared an array)."""
    path = str(tmp_path / "v.b2frame")
    pb.SChunk(urlpath=path, mode="w").vlmeta["x"] = [np.arange(3), 1]
    got = pb.open(path).vlmeta["x"]
    assert isinstance(got, list) and got[1] == 1
    np.testing.assert_array_equal(got[0], np.arange(3))


def _deep(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


REFUSED = [
    (["__tuple__", 1], "a list whose first item is '__tuple__' reads back as a tuple"),
    ({"a": [["__tuple__"]]}, "reads back as a tuple"),
    ({1: 2}, "map key at offset 1 is 0x1, expected a str or bin"),
    ({(1, 2): 3}, "map key"),
    ({None: 3}, "map key"),
    (_deep(65), "nesting depth at offset 64 is 65, expected at most 64"),
    ({frozenset(range(3)), 1}, "a set holding a set or an array reads back unhashable"),
    ({(1, frozenset()), 1}, "reads back unhashable"),
    (
        np.zeros(2, dtype=np.dtype({"names": ["a"], "formats": ["<i4"], "itemsize": 8})),
        "does not read back",
    ),
    (np.zeros(2, dtype=[("o", object)]), "a structured dtype with object fields"),
    (np.datetime64("2024-01-01"), "cannot serialize datetime64"),
    (2**64, "cannot serialize int"),
    ("\ud800", "cannot be stored"),
]


@pytest.mark.parametrize(
    ("value", "why"), REFUSED, ids=[f"refused{i}" for i in range(len(REFUSED))]
)
def test_values_that_would_not_read_back_are_refused(value, why) -> None:
    with pytest.raises(pb.ParamError, match=why):
        packb(value)


def test_a_refused_vlmeta_value_writes_nothing(tmp_path) -> None:
    path = str(tmp_path / "v.b2frame")
    s = pb.SChunk(urlpath=path, mode="w")
    s.vlmeta["keep"] = (1, 2)
    with pytest.raises(pb.ParamError, match=r"^vlmeta 'x': .*map key"):
        s.vlmeta[:] = {"y": 1, "x": {1: 2}}
    assert pb.open(path).vlmeta[:] == {"keep": (1, 2)}


def test_the_deepest_value_reads_back() -> None:
    assert unpackb(packb(_deep(MAX_DEPTH))) == _deep(MAX_DEPTH)


KEYS = st.one_of(st.text(max_size=4), st.binary(max_size=4), st.integers(-3, 3))
SET_ITEMS = st.one_of(
    st.integers(-5, 5),
    st.just("__tuple__"),
    st.tuples(st.integers(), st.text(max_size=2)),
    st.frozensets(st.integers(-5, 5), max_size=2),
)
ANY_VALUES = st.recursive(
    st.one_of(SCALARS, st.just("__tuple__"), st.complex_numbers(allow_nan=False)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(KEYS, inner, max_size=4),
        st.frozensets(st.integers(-5, 5), max_size=3).map(set),
        st.frozensets(SET_ITEMS, max_size=3),
        st.lists(st.integers(-100, 100), max_size=5).map(lambda xs: np.array(xs, dtype="<i2")),
    ),
    max_leaves=30,
)


@given(ANY_VALUES)
def test_what_is_written_reads_back(value) -> None:
    """Symmetry: any value either is refused on write or reads back as written (int keys,
    lists led by '__tuple__' and sets of sets included among the inputs)."""
    try:
        packed = packb(value)
    except pb.ParamError:
        return
    assert same_value(value, unpackb(packed))
