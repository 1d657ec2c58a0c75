"""Compression and decompression parameters (python-blosc2's ``CParams`` and ``DParams``), and
the one parser per parameter that every entry point uses.

Same names, defaults and meaning as python-blosc2 4.14.1. Every value is validated when it
enters the library — by :class:`CParams`/:class:`DParams`, the functions of :mod:`pyblosc2.api`
and the zarr/numcodecs codecs alike — by the parsers below, with one rule each:

* integers: Python ``int`` or numpy integer scalars (``np.int64(5)``); ``bool`` and floats
  (``5.0``) are refused;
* enumerations (``Codec``, ``Filter``, ``SplitMode``, ``Tuner``): a member, a member of
  python-blosc2's enum of the same name, or an int id in range (plugin ids have no member);
* booleans: ``bool`` or ``np.bool_``; the ints 0 and 1 are accepted too because
  python-blosc2 accepts them (``CParams(use_dict=1)``), and become ``False``/``True``;
* every refusal is a :class:`~pyblosc2.errors.ParamError` reading
  ``"<field> must be <expected>, got <repr>"`` (a :class:`~pyblosc2.errors.ParamTypeError`,
  also a ``TypeError``, when the type is wrong).

>>> import numpy as np
>>> parse_clevel(np.int64(5))
5
>>> parse_clevel(5.0)
Traceback (most recent call last):
...
pyblosc2.errors.ParamTypeError: clevel must be an int in 0..9, got 5.0
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, NoReturn, TypeVar

import numpy as np

from ._threads import default_nthreads
from .constants import MAX_FILTERS, MAX_TYPESIZE, Codec, Filter, SplitMode, Tuner
from .errors import ArgumentConflictError, ParamError, ParamTypeError

__all__ = [
    "CParams",
    "DParams",
    "is_int",
    "parse_blocksize",
    "parse_bool",
    "parse_choice",
    "parse_clevel",
    "parse_codec",
    "parse_enum",
    "parse_fill_value",
    "parse_filters",
    "parse_int",
    "parse_nthreads",
    "parse_splitmode",
    "parse_tuner",
    "parse_typesize",
    "refuse",
]

E = TypeVar("E", bound=Enum)
T = TypeVar("T")

#: Largest block size a chunk header can hold (a signed 32-bit field).
MAX_BLOCKSIZE_PARAM = 2**31 - 1


def refuse(name: str, expected: str, got: object, *, wrong_type: bool = False) -> NoReturn:
    """Raise the library's one parameter error: ``<name> must be <expected>, got <repr>``.

    >>> refuse("clevel", "an int in 0..9", 10)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: clevel must be an int in 0..9, got 10
    """
    cls = ParamTypeError if wrong_type else ParamError
    raise cls(f"{name} must be {expected}, got {got!r}")


def is_int(value: object) -> bool:
    """Whether ``value`` is an integer parameter: an ``int`` or numpy integer, not a bool.

    >>> is_int(np.uint8(3)), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _range_text(lo: int | None, hi: int | None) -> str:
    if lo is None and hi is None:
        return "an int"
    if hi is None:
        return f"an int >= {lo}"
    if lo is None:
        return f"an int <= {hi}"
    return f"an int in {lo}..{hi}"


def parse_int(
    value: object,
    name: str,
    lo: int | None = None,
    hi: int | None = None,
    expected: str | None = None,
) -> int:
    """An int (numpy integer scalars accepted, bools and floats refused) in ``lo..hi``.

    >>> parse_int(np.int32(7), "typesize", 1, 255)
    7
    >>> parse_int(True, "typesize", 1, 255)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamTypeError: typesize must be an int in 1..255, got True
    """
    text = expected or _range_text(lo, hi)
    if not is_int(value):
        refuse(name, text, value, wrong_type=True)
    number = int(value)  # type: ignore[call-overload]  # is_int: int or np.integer
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        refuse(name, text, value)
    return number


def parse_bool(value: object, name: str) -> bool:
    """A bool (``np.bool_`` too); the ints 0 and 1, which python-blosc2 accepts, as well.

    >>> parse_bool(1, "use_dict"), parse_bool(np.bool_(False), "use_dict")
    (True, False)
    >>> parse_bool(2, "use_dict")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: use_dict must be a bool (or 0 or 1), got 2
    """
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if is_int(value) and value in (0, 1):
        return bool(value)
    refuse(name, "a bool (or 0 or 1)", value, wrong_type=not is_int(value))


def parse_enum(
    value: object,
    enum: type[E],
    name: str,
    lo: int,
    hi: int,
    allowed: Collection[int] | None = None,
) -> E | int:
    """A member of the int enum ``enum``, or an int id in ``lo..hi`` (a plain int when the id
    has no member: plugin and user ids). Members of another enum with the same class name
    (python-blosc2's) count as their value; members of a different enum are refused.
    ``allowed`` restricts the ids further.

    >>> parse_enum(np.int64(1), Codec, "codec", 0, 255)
    <Codec.LZ4: 1>
    >>> parse_enum(200, Codec, "codec", 0, 255)
    200
    >>> parse_enum(Filter.SHUFFLE, Codec, "codec", 0, 255)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamTypeError: codec must be a Codec or an int in 0..255, got \
<Filter.SHUFFLE: 1>
    """
    expected = f"a {enum.__name__} or an int in {lo}..{hi}"
    if isinstance(value, Enum) and not isinstance(value, enum):
        if type(value).__name__ != enum.__name__:
            refuse(name, expected, value, wrong_type=True)
        value = value.value  # e.g. python-blosc2's (non-int) enums
    number = parse_int(value, name, lo, hi, expected)
    if allowed is not None and number not in allowed:
        names = ", ".join(_member_text(enum, i) for i in allowed)
        refuse(name, f"one of {names}", value)
    try:
        return enum(number)
    except ValueError:
        return number


def _member_text(enum: type[Enum], number: int) -> str:
    try:
        return f"{enum(number).name} ({number})"
    except ValueError:
        return str(number)


def parse_choice(value: object, name: str, choices: Sequence[T]) -> T:
    """One of ``choices`` (all ints or all strs), of the same type (no ``"1"`` for ``1``).

    >>> parse_choice(np.int8(-1), "shuffle", (0, 1, 2, -1))
    -1
    >>> parse_choice("1", "shuffle", (0, 1, 2, -1))
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamTypeError: shuffle must be one of (0, 1, 2, -1), got '1'
    """
    expected = f"one of {tuple(choices)}"
    strings = all(isinstance(c, str) for c in choices)
    if not (isinstance(value, str) if strings else is_int(value)):
        refuse(name, expected, value, wrong_type=True)
    for choice in choices:
        if value == choice:
            return choice
    refuse(name, expected, value)


def parse_fill_value(value: object, typesize: int) -> bytes:
    """The bytes of one item for a VALUE special chunk of ``typesize``-byte items, as
    python-blosc2's ``fill_special`` makes them: the value's own bytes when their size is
    ``typesize``, else a Python int (or bool) as a signed int and a Python float as a float of
    ``typesize`` bytes.

    >>> parse_fill_value(34, 4).hex(), parse_fill_value(True, 2).hex(), parse_fill_value(b"ab", 2)
    ('22000000', '0100', b'ab')
    >>> parse_fill_value(1.5, 3)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: value must be a value of 3 bytes (or an int or float), got 1.5
    """
    raw = np.asarray(value)
    if raw.dtype.itemsize == typesize and raw.size == 1:
        return raw.tobytes()
    kind = "i" if isinstance(value, int | np.integer) else "f" if isinstance(value, float) else ""
    if kind and (kind, typesize) in {
        ("i", 1),
        ("i", 2),
        ("i", 4),
        ("i", 8),
        ("f", 2),
        ("f", 4),
        ("f", 8),
    }:
        return np.asarray(value, f"<{kind}{typesize}").tobytes()
    refuse("value", f"a value of {typesize} bytes (or an int or float)", value)


# -- one parser per field ----------------------------------------------------------------------


def parse_codec(value: object) -> Codec | int:
    """``codec``: a :class:`Codec` or a codec id in 0..255."""
    return parse_enum(value, Codec, "codec", 0, 255)


def parse_clevel(value: object) -> int:
    """``clevel``: an int in 0..9.

    >>> parse_clevel(10)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: clevel must be an int in 0..9, got 10
    """
    return parse_int(value, "clevel", 0, 9)


def parse_typesize(value: object, hi: int = MAX_TYPESIZE) -> int:
    """``typesize``: a positive int (at most ``hi``)."""
    return parse_int(value, "typesize", 1, hi)


def parse_nthreads(value: object) -> int:
    """``nthreads``: an int in 1..256."""
    return parse_int(value, "nthreads", 1, 256)


def parse_blocksize(value: object) -> int:
    """``blocksize``: 0 (automatic) or a size in bytes below 2**31. A whole float is taken as
    its int (python-blosc2's C layer converts it; scripts compute block sizes by division).

    >>> parse_blocksize(8000.0)
    8000
    >>> parse_blocksize(-1)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: blocksize must be an int in 0..2147483647 (0: automatic), got -1
    """
    if isinstance(value, float | np.floating) and float(value).is_integer():
        value = int(value)
    return parse_int(
        value,
        "blocksize",
        0,
        MAX_BLOCKSIZE_PARAM,
        f"an int in 0..{MAX_BLOCKSIZE_PARAM} (0: automatic)",
    )


def parse_splitmode(value: object) -> SplitMode:
    """``splitmode``: a :class:`SplitMode` (1..4)."""
    return SplitMode(parse_enum(value, SplitMode, "splitmode", 1, 4))


def parse_tuner(value: object) -> Tuner:
    """``tuner``: only :attr:`Tuner.STUNE` is implemented (others raise NotImplementedError)."""
    tuner = parse_enum(value, Tuner, "tuner", 0, 255)
    if tuner != Tuner.STUNE:
        raise NotImplementedError("tuners other than STUNE (e.g. BTUNE) are not implemented")
    return Tuner.STUNE


def _as_list(value: object, name: str) -> list[object]:
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return list(value)
    refuse(name, "a list", value, wrong_type=True)


def parse_filters(
    filters: object, filters_meta: object, typesize: int
) -> tuple[list[Filter | int], list[int]]:
    """``filters`` (at most 6 ids in 0..255) and ``filters_meta`` (one int in -128..255 per
    filter, extra entries dropped); a BYTEDELTA meta of 0 becomes the typesize, as in
    python-blosc2.

    >>> parse_filters([Filter.BYTEDELTA], [0, 0], 4)
    ([<Filter.BYTEDELTA: 35>], [4])
    >>> parse_filters([1] * 7, [0] * 7, 4)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: filters must be a list of at most 6 filters, got 7 entries
    """
    ids = _as_list(filters, "filters")
    metas = _as_list(filters_meta, "filters_meta")
    if len(ids) > MAX_FILTERS:
        raise ParamError(
            f"filters must be a list of at most {MAX_FILTERS} filters, got {len(ids)} entries"
        )
    if len(ids) > len(metas):
        raise ParamError(
            f"filters_meta must have at least as many entries as filters ({len(ids)}), "
            f"got {len(metas)}"
        )
    parsed = [parse_enum(f, Filter, f"filters[{i}]", 0, 255) for i, f in enumerate(ids)]
    parsed_metas = [
        parse_int(m, f"filters_meta[{i}]", -128, 255) for i, m in enumerate(metas[: len(ids)])
    ]
    for i, f in enumerate(parsed):
        if f == Filter.BYTEDELTA and parsed_metas[i] == 0:
            parsed_metas[i] = typesize if typesize <= 255 else 1
    return parsed, parsed_metas


# -- the parameter objects ---------------------------------------------------------------------


def _default_filters() -> list[Filter | int]:
    filters: list[Filter | int] = [Filter.NOFILTER] * (MAX_FILTERS - 1)
    return [*filters, Filter.SHUFFLE]


@dataclass
class CParams:
    """Compression parameters.

    ``use_dict`` also takes 0 and 1 (as python-blosc2 does), stored as ``False``/``True``.

    >>> CParams(codec=Codec.LZ4, clevel=9, typesize=4).filters
    [<Filter.NOFILTER: 0>, <Filter.NOFILTER: 0>, <Filter.NOFILTER: 0>, <Filter.NOFILTER: 0>, \
<Filter.NOFILTER: 0>, <Filter.SHUFFLE: 1>]
    >>> CParams(clevel=10)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: clevel must be an int in 0..9, got 10
    >>> CParams.from_dict(CParams(typesize=4).to_dict()) == CParams(typesize=4)
    True
    """

    codec: Codec | int = Codec.ZSTD
    codec_meta: int = 0
    clevel: int = 5
    use_dict: bool = False
    typesize: int = 8
    nthreads: int = field(default_factory=default_nthreads)
    blocksize: int = 0
    splitmode: SplitMode = SplitMode.AUTO_SPLIT
    filters: list[Filter | int] = field(default_factory=_default_filters)
    filters_meta: list[int] = field(default_factory=lambda: [0] * MAX_FILTERS)
    tuner: Tuner = Tuner.STUNE

    def __post_init__(self) -> None:
        self.codec = parse_codec(self.codec)
        self.codec_meta = parse_int(self.codec_meta, "codec_meta", 0, 255)
        self.clevel = parse_clevel(self.clevel)
        self.use_dict = parse_bool(self.use_dict, "use_dict")
        self.typesize = parse_typesize(self.typesize)
        self.nthreads = parse_nthreads(self.nthreads)
        self.blocksize = parse_blocksize(self.blocksize)
        self.splitmode = parse_splitmode(self.splitmode)
        self.tuner = parse_tuner(self.tuner)
        self.filters, self.filters_meta = parse_filters(
            self.filters, self.filters_meta, self.typesize
        )

    @classmethod
    def from_any(cls, value: CParams | Mapping[str, Any] | None, **kwargs: Any) -> CParams:
        """Build from a ``CParams``, a dict, or keyword arguments (python-blosc2 conventions)."""
        return _from_any(cls, "cparams", "compression", value, kwargs)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CParams:
        """The inverse of :meth:`to_dict` (unknown keys refused, every value parsed)."""
        return _from_any(cls, "cparams", "compression", data, {})

    def to_dict(self) -> dict[str, Any]:
        """Plain ``int``/``bool``/``list`` dict (JSON-friendly); :meth:`from_dict` rebuilds it.

        >>> CParams(codec=Codec.LZ4, nthreads=1).to_dict()["codec"]
        1
        """
        return {
            "codec": int(self.codec),
            "codec_meta": self.codec_meta,
            "clevel": self.clevel,
            "use_dict": self.use_dict,
            "typesize": self.typesize,
            "nthreads": self.nthreads,
            "blocksize": self.blocksize,
            "splitmode": int(self.splitmode),
            "filters": [int(f) for f in self.filters],
            "filters_meta": list(self.filters_meta),
            "tuner": int(self.tuner),
        }


@dataclass
class DParams:
    """Decompression parameters.

    >>> DParams(nthreads=2)
    DParams(nthreads=2)
    >>> DParams.from_dict(DParams(nthreads=3).to_dict())
    DParams(nthreads=3)
    """

    nthreads: int = field(default_factory=default_nthreads)

    def __post_init__(self) -> None:
        self.nthreads = parse_nthreads(self.nthreads)

    @classmethod
    def from_any(cls, value: DParams | Mapping[str, Any] | None, **kwargs: Any) -> DParams:
        """Build from a ``DParams``, a dict, or keyword arguments."""
        return _from_any(cls, "dparams", "decompression", value, kwargs)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DParams:
        """The inverse of :meth:`to_dict`."""
        return _from_any(cls, "dparams", "decompression", data, {})

    def to_dict(self) -> dict[str, Any]:
        """``{"nthreads": n}`` (JSON-friendly)."""
        return {"nthreads": self.nthreads}


P = TypeVar("P", CParams, DParams)


def _from_any(cls: type[P], name: str, kind: str, value: object, kwargs: dict[str, Any]) -> P:
    """A ``cls`` from an instance, a dict or keyword arguments, refusing unknown keys."""
    if value is not None and kwargs:
        raise ArgumentConflictError(f"pass either {name} or individual {kind} parameters, not both")
    if value is None:
        value = kwargs
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        refuse(name, f"a {cls.__name__} or a dict", value, wrong_type=True)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ParamError(f"unknown {kind} parameters {unknown}; known: {sorted(known)}")
    return cls(**value)
