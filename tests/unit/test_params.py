"""params.py: one parser per field, one rule and one message style at every entry point.

Each table row is (field, value, expected) where expected is the parsed value or an
``(error class, exact message)`` pair.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.compat import Blosc
from pyblosc2.constants import MAX_TYPESIZE
from pyblosc2.errors import BoundsError, ParamTypeError

C, F, S, T = pb.Codec, pb.Filter, pb.SplitMode, pb.Tuner
PE, PTE = pb.ParamError, ParamTypeError


def bad(cls: type[Exception], message: str) -> tuple[type[Exception], str]:
    return cls, message


CPARAMS_CASES: list[tuple[str, Any, Any]] = [
    ("codec", C.LZ4, C.LZ4),
    ("codec", 1, C.LZ4),
    ("codec", np.int64(5), C.ZSTD),
    ("codec", 200, 200),  # a plugin id: no member
    ("codec", 256, bad(PE, "codec must be a Codec or an int in 0..255, got 256")),
    ("codec", -1, bad(PE, "codec must be a Codec or an int in 0..255, got -1")),
    ("codec", "lz4", bad(PTE, "codec must be a Codec or an int in 0..255, got 'lz4'")),
    ("codec", 1.0, bad(PTE, "codec must be a Codec or an int in 0..255, got 1.0")),
    ("codec", True, bad(PTE, "codec must be a Codec or an int in 0..255, got True")),
    (
        "codec",
        F.SHUFFLE,
        bad(PTE, "codec must be a Codec or an int in 0..255, got <Filter.SHUFFLE: 1>"),
    ),
    ("codec_meta", np.uint8(7), 7),
    ("codec_meta", 256, bad(PE, "codec_meta must be an int in 0..255, got 256")),
    ("clevel", 0, 0),
    ("clevel", np.int64(5), 5),
    ("clevel", np.uint8(9), 9),
    ("clevel", 10, bad(PE, "clevel must be an int in 0..9, got 10")),
    ("clevel", -1, bad(PE, "clevel must be an int in 0..9, got -1")),
    ("clevel", np.int64(10), bad(PE, f"clevel must be an int in 0..9, got {np.int64(10)!r}")),
    ("clevel", True, bad(PTE, "clevel must be an int in 0..9, got True")),
    ("clevel", 5.0, bad(PTE, "clevel must be an int in 0..9, got 5.0")),
    ("clevel", "5", bad(PTE, "clevel must be an int in 0..9, got '5'")),
    ("clevel", None, bad(PTE, "clevel must be an int in 0..9, got None")),
    ("use_dict", True, True),
    ("use_dict", np.bool_(True), True),
    ("use_dict", 1, True),  # python-blosc2 accepts 0/1
    ("use_dict", np.int64(0), False),
    ("use_dict", 2, bad(PE, "use_dict must be a bool (or 0 or 1), got 2")),
    ("use_dict", "yes", bad(PTE, "use_dict must be a bool (or 0 or 1), got 'yes'")),
    ("use_dict", 1.0, bad(PTE, "use_dict must be a bool (or 0 or 1), got 1.0")),
    ("typesize", np.int32(4), 4),
    ("typesize", MAX_TYPESIZE, MAX_TYPESIZE),
    ("typesize", 0, bad(PE, f"typesize must be an int in 1..{MAX_TYPESIZE}, got 0")),
    ("typesize", 4.0, bad(PTE, f"typesize must be an int in 1..{MAX_TYPESIZE}, got 4.0")),
    ("nthreads", np.int16(2), 2),
    ("nthreads", 0, bad(PE, "nthreads must be an int in 1..256, got 0")),
    ("nthreads", 257, bad(PE, "nthreads must be an int in 1..256, got 257")),
    ("blocksize", np.int64(2**31 - 1), 2**31 - 1),
    ("blocksize", -1, bad(PE, "blocksize must be an int in 0..2147483647 (0: automatic), got -1")),
    (
        "blocksize",
        2**31,
        bad(PE, "blocksize must be an int in 0..2147483647 (0: automatic), got 2147483648"),
    ),
    ("splitmode", 2, S.NEVER_SPLIT),
    ("splitmode", np.int8(4), S.FORWARD_COMPAT_SPLIT),
    ("splitmode", 5, bad(PE, "splitmode must be a SplitMode or an int in 1..4, got 5")),
    (
        "splitmode",
        C.LZ4,
        bad(PTE, "splitmode must be a SplitMode or an int in 1..4, got <Codec.LZ4: 1>"),
    ),
    ("tuner", 0, T.STUNE),
    ("tuner", -1, bad(PE, "tuner must be a Tuner or an int in 0..255, got -1")),
    ("tuner", T.BTUNE, bad(NotImplementedError, "tuners other than STUNE")),
    ("filters", [F.SHUFFLE], [F.SHUFFLE]),
    ("filters", (1, np.int64(2)), [F.SHUFFLE, F.BITSHUFFLE]),
    ("filters", np.array([0, 3]), [F.NOFILTER, F.DELTA]),
    ("filters", [200], [200]),  # a user filter id
    ("filters", [1] * 7, bad(PE, "filters must be a list of at most 6 filters, got 7 entries")),
    ("filters", "shuffle", bad(PTE, "filters must be a list, got 'shuffle'")),
    ("filters", [256], bad(PE, "filters[0] must be a Filter or an int in 0..255, got 256")),
    ("filters", [1.0], bad(PTE, "filters[0] must be a Filter or an int in 0..255, got 1.0")),
    (
        "filters",
        [0, C.LZ4],
        bad(PTE, "filters[1] must be a Filter or an int in 0..255, got <Codec.LZ4: 1>"),
    ),
    ("filters_meta", [np.int8(-3)] * 6, [-3] * 6),
    (
        "filters_meta",
        [0] * 5 + [300],
        bad(PE, "filters_meta[5] must be an int in -128..255, got 300"),
    ),
    ("filters_meta", [0.5] * 6, bad(PTE, "filters_meta[0] must be an int in -128..255, got 0.5")),
    (
        "filters_meta",
        [0],
        bad(PE, "filters_meta must have at least as many entries as filters (6), got 1"),
    ),
]


def _check(make: Any, expected: Any) -> Any:
    if isinstance(expected, tuple) and isinstance(expected[0], type):
        cls, message = expected
        with pytest.raises(cls, match=re.escape(message)) as info:
            make()
        assert type(info.value) is cls
        return None
    value = make()
    assert value == expected and type(value) is type(expected)
    return value


@pytest.mark.parametrize(
    ("field", "value", "expected"), CPARAMS_CASES, ids=[f"{f}={v!r}" for f, v, _ in CPARAMS_CASES]
)
def test_cparams_field(field: str, value: Any, expected: Any) -> None:
    _check(lambda: getattr(pb.CParams(**{field: value}), field), expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.int64(3), 3),
        (0, bad(PE, "nthreads must be an int in 1..256, got 0")),
        (2.0, bad(PTE, "nthreads must be an int in 1..256, got 2.0")),
    ],
)
def test_dparams_nthreads(value: Any, expected: Any) -> None:
    _check(lambda: pb.DParams(nthreads=value).nthreads, expected)


def test_bytedelta_meta_defaults_to_typesize() -> None:
    cp = pb.CParams(typesize=4, filters=[F.SHUFFLE, F.BYTEDELTA], filters_meta=[0, 0])
    assert cp.filters_meta == [0, 4]


def test_python_blosc2_enums_are_accepted(cblosc2) -> None:
    cp = pb.CParams(
        codec=cblosc2.Codec.LZ4,
        splitmode=cblosc2.SplitMode.NEVER_SPLIT,
        filters=[cblosc2.Filter.BITSHUFFLE],
        filters_meta=[0],
    )
    assert (cp.codec, cp.splitmode, cp.filters) == (C.LZ4, S.NEVER_SPLIT, [F.BITSHUFFLE])


# -- the same rule at every entry point ----------------------------------------------------------

DATA = np.arange(1000, dtype=np.int32)

CLEVEL_ENTRY_POINTS = {
    "CParams": lambda v: pb.CParams(clevel=v),
    "compress2": lambda v: pb.compress2(DATA, typesize=4, clevel=v),
    "compress": lambda v: pb.compress(DATA, typesize=4, clevel=v),
    "compress_blosc1": lambda v: pb.compress_blosc1(DATA, typesize=4, clevel=v),
    "numcodecs Blosc": lambda v: Blosc(clevel=v),
    "numcodecs Blosc.from_config": lambda v: Blosc.from_config({"id": "blosc", "clevel": v}),
}
CLEVEL_VALUES = [
    (np.int64(5), None),
    (10, bad(PE, "clevel must be an int in 0..9, got 10")),
    (True, bad(PTE, "clevel must be an int in 0..9, got True")),
    (5.0, bad(PTE, "clevel must be an int in 0..9, got 5.0")),
]


@pytest.mark.parametrize("entry", CLEVEL_ENTRY_POINTS)
@pytest.mark.parametrize(("value", "expected"), CLEVEL_VALUES, ids=lambda v: repr(v))
def test_clevel_same_rule_everywhere(entry: str, value: Any, expected: Any) -> None:
    make = CLEVEL_ENTRY_POINTS[entry]
    if expected is None:
        assert make(value) is not None
    else:
        _check(lambda: make(value), expected)


@pytest.mark.parametrize(("value", "expected"), CLEVEL_VALUES, ids=lambda v: repr(v))
def test_clevel_same_rule_in_zarr_codec(zarr_codec, value: Any, expected: Any) -> None:
    if expected is None:
        assert zarr_codec.BloscCodec(clevel=value).clevel == 5
    else:
        _check(lambda: zarr_codec.BloscCodec(clevel=value), expected)


API_CASES = [
    (
        "set_nthreads",
        lambda: pb.set_nthreads(0),
        bad(PE, "nthreads must be an int in 1..256, got 0"),
    ),
    (
        "compress filter",
        lambda: pb.compress(DATA, typesize=4, filter="shuffle"),
        bad(PTE, "filter must be a Filter or an int in 0..255, got 'shuffle'"),
    ),
    (
        "compress_blosc1 shuffle",
        lambda: pb.compress_blosc1(DATA, typesize=4, shuffle=F.DELTA),
        bad(
            PE,
            "shuffle must be one of NOFILTER (0), SHUFFLE (1), BITSHUFFLE (2), "
            "got <Filter.DELTA: 3>",
        ),
    ),
    (
        "compress_blosc1 shuffle type",
        lambda: pb.compress_blosc1(DATA, typesize=4, shuffle="1"),
        bad(PTE, "shuffle must be a Filter or an int in 0..255, got '1'"),
    ),
    (
        "compress_blosc1 blocksize",
        lambda: pb.compress_blosc1(DATA, typesize=4, blocksize=-1),
        bad(PE, "blocksize must be an int in 0..2147483647 (0: automatic), got -1"),
    ),
    (
        "getitem start",
        lambda: pb.getitem(pb.compress2(DATA, typesize=4), 1.5, 3),
        bad(PTE, "start must be an int >= 0, got 1.5"),
    ),
    (
        "decompress as_bytearray",
        lambda: pb.decompress(pb.compress2(DATA, typesize=4), as_bytearray="yes"),
        bad(PTE, "as_bytearray must be a bool (or 0 or 1), got 'yes'"),
    ),
    (
        "compress2 cparams",
        lambda: pb.compress2(DATA, cparams=[5]),
        bad(PTE, "cparams must be a CParams or a dict, got [5]"),
    ),
    (
        "numcodecs shuffle",
        lambda: Blosc(shuffle=np.int64(3)),
        bad(PE, f"shuffle must be one of (0, 1, 2, -1), got {np.int64(3)!r}"),
    ),
    (
        "numcodecs cname",
        lambda: Blosc(cname="lz5"),
        bad(
            PE,
            "cname must be one of ('lz4', 'lz4hc', 'blosclz', 'zstd', 'snappy', 'zlib'), got 'lz5'",
        ),
    ),
]


@pytest.mark.parametrize(("name", "call", "expected"), API_CASES, ids=[c[0] for c in API_CASES])
def test_api_argument_errors(name: str, call: Any, expected: Any) -> None:
    _check(call, expected)


@pytest.mark.parametrize(
    ("call", "same_as"),
    [
        (
            lambda: pb.compress(DATA, typesize=np.int64(4), clevel=np.int8(5)),
            lambda: pb.compress(DATA, typesize=4, clevel=5),
        ),
        (
            lambda: pb.compress_blosc1(DATA, typesize=np.int64(4), shuffle=np.int64(2)),
            lambda: pb.compress_blosc1(DATA, typesize=4, shuffle=2),
        ),
        (
            lambda: Blosc(clevel=np.int64(5), shuffle=np.int8(-1), blocksize=np.uint16(256)),
            lambda: Blosc(clevel=5, shuffle=-1, blocksize=256),
        ),
    ],
)
def test_numpy_scalars_are_accepted(call: Any, same_as: Any) -> None:
    assert call() == same_as()


def test_getitem_with_numpy_bounds() -> None:
    c = pb.compress2(DATA, typesize=4)
    assert pb.getitem(c, np.int64(10), np.int32(12)) == DATA[10:12].tobytes()


# -- config <-> object round trips ---------------------------------------------------------------


@pytest.mark.parametrize(
    "cparams",
    [
        pb.CParams(),
        pb.CParams(codec=C.LZ4, clevel=9, typesize=4, nthreads=1, use_dict=True),
        pb.CParams(codec=200, filters=[F.SHUFFLE, F.BYTEDELTA], filters_meta=[0, 0], typesize=2),
        pb.CParams(
            splitmode=S.NEVER_SPLIT, blocksize=4096, filters=[F.TRUNC_PREC], filters_meta=[-7]
        ),
    ],
)
def test_cparams_json_round_trip(cparams: pb.CParams) -> None:
    text = json.dumps(cparams.to_dict())
    assert pb.CParams.from_dict(json.loads(text)) == cparams
    assert pb.CParams.from_dict(json.loads(text)).to_dict() == cparams.to_dict()


@pytest.mark.parametrize("nthreads", [1, 7])
def test_dparams_json_round_trip(nthreads: int) -> None:
    dp = pb.DParams(nthreads=nthreads)
    assert pb.DParams.from_dict(json.loads(json.dumps(dp.to_dict()))) == dp


@pytest.mark.parametrize(
    ("cls", "data", "message"),
    [
        (pb.CParams, {"level": 5}, "unknown compression parameters ['level']"),
        (pb.DParams, {"threads": 5}, "unknown decompression parameters ['threads']"),
        (pb.CParams, {"clevel": 12}, "clevel must be an int in 0..9, got 12"),
    ],
)
def test_from_dict_refuses(cls: type, data: dict[str, Any], message: str) -> None:
    with pytest.raises(PE, match=re.escape(message)):
        cls.from_dict(data)


# -- the error hierarchy -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (pb.ParamError, (ValueError,)),
        (ParamTypeError, (pb.ParamError, ValueError, TypeError)),
        (BoundsError, (pb.Blosc2Error, IndexError)),
        (pb.FormatError, (pb.Blosc2Error, ValueError)),
        (pb.CodecError, (pb.FormatError,)),
    ],
)
def test_error_hierarchy(cls: type, bases: tuple[type, ...]) -> None:
    assert all(issubclass(cls, b) for b in bases)


def test_non_buffer_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="src must be a bytes-like object"):
        pb.compress2(object())


# -- NDArray constructors ------------------------------------------------------------------------

CONSTRUCTOR_CASES = [
    ("np shape", lambda: pb.zeros(np.int64(5)).shape, (5,)),
    ("np shape entries", lambda: pb.zeros((np.int32(2), 3)).shape, (2, 3)),
    ("np chunks", lambda: pb.zeros((4, 4), chunks=[np.int8(2), 2], blocks=(1, 2)).chunks, (2, 2)),
    (
        "float shape",
        lambda: pb.zeros(5.0),
        bad(PTE, "shape must be an int or a sequence of ints, got 5.0"),
    ),
    ("float entry", lambda: pb.empty((2, 3.0)), bad(PTE, "shape[1] must be an int >= 0, got 3.0")),
    ("negative", lambda: pb.ones((-1,)), bad(PE, "shape[0] must be an int >= 0, got -1")),
    ("too many dims", lambda: pb.zeros((1,) * 17), bad(PE, "shape must be at most 16 dimensions")),
    (
        "chunks per dim",
        lambda: pb.zeros((4, 4), chunks=(2,)),
        bad(PE, "chunks must be 2 entries (one per dimension), got (2,)"),
    ),
    (
        "blocks > chunks",
        lambda: pb.full((4,), 1.5, chunks=(2,), blocks=(3,)),
        bad(PE, "blocks must be 0 < blocks <= chunks (chunks=(2,)), got (3,)"),
    ),
    ("dtype", lambda: pb.zeros(3, dtype="nonsense"), bad(PTE, "dtype must be a numpy dtype")),
    ("linspace", lambda: pb.linspace(0, 1), bad(PE, "linspace needs num or shape")),
    ("linspace num", lambda: pb.linspace(0, 1, 2.5), bad(PTE, "num must be an int >= 0, got 2.5")),
    (
        "asarray chunks",
        lambda: pb.asarray(np.ones(3), chunks="a"),
        bad(PTE, "chunks must be an int"),
    ),
]


@pytest.mark.parametrize(
    ("name", "call", "expected"), CONSTRUCTOR_CASES, ids=[c[0] for c in CONSTRUCTOR_CASES]
)
def test_ndarray_constructor_arguments(name: str, call: Any, expected: Any) -> None:
    _check(call, expected)
