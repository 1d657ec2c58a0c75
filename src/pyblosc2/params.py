"""Compression and decompression parameters (python-blosc2's ``CParams`` and ``DParams``).

Same names, defaults and meaning as python-blosc2 4.14.1; values are validated when the object
is made, each field by its own parser.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any

from ._threads import default_nthreads
from .constants import MAX_FILTERS, MAX_TYPESIZE, Codec, Filter, SplitMode, Tuner
from .errors import ParamError

__all__ = ["CParams", "DParams"]


def _enum_or_int(enum: type, value: Any, name: str, lo: int, hi: int) -> Any:
    if isinstance(value, Enum) and not isinstance(value, int):
        value = value.value  # e.g. python-blosc2's (non-int) enums
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(f"{name} must be an integer or {enum.__name__}, got {value!r}")
    if not lo <= int(value) <= hi:
        raise ParamError(f"{name} must be in {lo}..{hi}, got {value!r}")
    try:
        return enum(value)
    except ValueError:
        return int(value)  # plugin/user ids have no enum member


def parse_int(value: Any, name: str, lo: int, hi: int) -> int:
    """An int in ``lo..hi`` (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(f"{name} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise ParamError(f"{name} must be in {lo}..{hi}, got {value}")
    return int(value)


@dataclass
class CParams:
    """Compression parameters.

    >>> CParams(codec=Codec.LZ4, clevel=9, typesize=4).filters
    [<Filter.NOFILTER: 0>, <Filter.NOFILTER: 0>, <Filter.NOFILTER: 0>, <Filter.NOFILTER: 0>, \
<Filter.NOFILTER: 0>, <Filter.SHUFFLE: 1>]
    >>> CParams(clevel=10)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: clevel must be in 0..9, got 10
    """

    codec: Codec | int = Codec.ZSTD
    codec_meta: int = 0
    clevel: int = 5
    use_dict: bool = False
    typesize: int = 8
    nthreads: int = field(default_factory=default_nthreads)
    blocksize: int = 0
    splitmode: SplitMode = SplitMode.AUTO_SPLIT
    filters: list[Filter | int] = field(
        default_factory=lambda: [Filter.NOFILTER] * (MAX_FILTERS - 1) + [Filter.SHUFFLE]
    )
    filters_meta: list[int] = field(default_factory=lambda: [0] * MAX_FILTERS)
    tuner: Tuner = Tuner.STUNE

    def __post_init__(self) -> None:
        self.codec = _enum_or_int(Codec, self.codec, "codec", 0, 255)
        self.codec_meta = parse_int(self.codec_meta, "codec_meta", 0, 255)
        self.clevel = parse_int(self.clevel, "clevel", 0, 9)
        if not isinstance(self.use_dict, bool | int):
            raise ParamError(f"use_dict must be a bool, got {self.use_dict!r}")
        self.use_dict = bool(self.use_dict)
        self.typesize = parse_int(self.typesize, "typesize", 1, MAX_TYPESIZE)
        self.nthreads = parse_int(self.nthreads, "nthreads", 1, 256)
        self.blocksize = parse_int(self.blocksize, "blocksize", 0, 2**31 - 1)
        self.splitmode = _enum_or_int(SplitMode, self.splitmode, "splitmode", 1, 4)
        self.tuner = _enum_or_int(Tuner, self.tuner, "tuner", 0, 255)
        if self.tuner != Tuner.STUNE:
            raise NotImplementedError("tuners other than STUNE (e.g. BTUNE) are not implemented")
        filters = list(self.filters)
        metas = list(self.filters_meta)
        if len(filters) > MAX_FILTERS:
            raise ParamError(f"filters must have at most {MAX_FILTERS} entries, got {len(filters)}")
        if len(filters) > len(metas):
            raise ParamError(
                f"filters_meta must have at least as many entries as filters "
                f"({len(filters)}), got {len(metas)}"
            )
        metas = metas[: len(filters)]
        self.filters = [
            _enum_or_int(Filter, f, f"filters[{i}]", 0, 255) for i, f in enumerate(filters)
        ]
        self.filters_meta = [
            parse_int(m, f"filters_meta[{i}]", -128, 255) for i, m in enumerate(metas)
        ]
        for i, f in enumerate(self.filters):
            if f == Filter.BYTEDELTA and self.filters_meta[i] == 0:
                self.filters_meta[i] = self.typesize if self.typesize <= 255 else 1

    @classmethod
    def from_any(cls, value: CParams | Mapping[str, Any] | None, **kwargs: Any) -> CParams:
        """Build from a ``CParams``, a dict, or keyword arguments (python-blosc2 conventions)."""
        return _from_any(cls, "cparams", "compression", value, kwargs)

    def to_dict(self) -> dict[str, Any]:
        """Plain-``int`` dict (JSON-friendly); ``CParams(**d)`` rebuilds it."""
        return {
            k: (
                list(map(int, v))
                if isinstance(v, list)
                else (int(v) if not isinstance(v, bool) else v)
            )
            for k, v in asdict(self).items()
        }


@dataclass
class DParams:
    """Decompression parameters.

    >>> DParams(nthreads=2)
    DParams(nthreads=2)
    """

    nthreads: int = field(default_factory=default_nthreads)

    def __post_init__(self) -> None:
        self.nthreads = parse_int(self.nthreads, "nthreads", 1, 256)

    @classmethod
    def from_any(cls, value: DParams | Mapping[str, Any] | None, **kwargs: Any) -> DParams:
        """Build from a ``DParams``, a dict, or keyword arguments."""
        return _from_any(cls, "dparams", "decompression", value, kwargs)


def _from_any(cls: type, name: str, kind: str, value: Any, kwargs: dict[str, Any]) -> Any:
    """A ``cls`` from an instance, a dict or keyword arguments, refusing unknown keys."""
    if value is not None and kwargs:
        raise ParamError(f"pass either {name} or individual {kind} parameters, not both")
    if value is None:
        value = kwargs
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise ParamError(f"{name} must be a {cls.__name__} or a dict, got {type(value).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ParamError(f"unknown {kind} parameters {unknown}; known: {sorted(known)}")
    return cls(**value)
