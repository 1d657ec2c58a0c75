"""The numcodecs ``blosc2`` codec: one Blosc2 chunk per encoded buffer, on pyblosc2.

What one encoded buffer is: **a single Blosc2 chunk** (32-byte extended header, format
version 5, ``../shared/specs/chunk-format.md`` §2-§3) holding the whole buffer, exactly what
``blosc2_compress_ctx`` of C-Blosc2 writes — also what imagecodecs' ``imagecodecs_blosc2``
codec (``imagecodecs.blosc2_encode``) and python-blosc2's ``compress2`` produce and read. It
is not a frame (no ``.b2frame`` header or index). Decoding reads any Blosc1 or Blosc2 chunk.

:class:`Blosc2` has numcodecs' interface (``codec_id``, ``encode``, ``decode(buf, out=None)``,
``get_config``, ``from_config``) and python-blosc2's parameter names and defaults
(``codec``, ``clevel``, ``filters``, ``filters_meta``, ``typesize``, ``blocksize``,
``splitmode``, ``codec_meta``, ``use_dict``, ``nthreads``); ``cname`` is read as ``codec``
in a configuration. Codecs and filters are named in the configuration ("zstd", "shuffle"), so
it reads as JSON. Only what C-Blosc2 reads is written: blosclz, lz4, lz4hc, zlib, zstd
(pyblosc2's Blosc2-format snappy chunks are refused here).

It neither imports nor subclasses numcodecs: numcodecs finds it through its
``numcodecs.codecs`` entry point (``blosc2``), installed with pyblosc2, so
``numcodecs.get_codec({"id": "blosc2"})`` works and zarr v2-format arrays whose ``.zarray``
names ``"blosc2"`` decode with it; zarr v3 arrays use :mod:`pyblosc2.compat.zarr_blosc2`.

>>> import numpy as np
>>> codec = Blosc2(codec="lz4", clevel=5, filters=["bitshuffle"])
>>> enc = codec.encode(np.arange(1000, dtype="<i4"))
>>> enc[0], np.frombuffer(codec.decode(enc), "<i4")[-1].item()  # version 5: a Blosc2 chunk
(5, 999)
>>> Blosc2.from_config(codec.get_config()) == codec
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from .._bytes import BufferLike
from ..api import compress2, decompress2, get_chunk_header
from ..constants import MAX_FILTERS, Codec, Filter, SplitMode
from ..errors import ParamError
from ..params import (
    CParams,
    parse_blocksize,
    parse_bool,
    parse_clevel,
    parse_enum,
    parse_int,
    parse_nthreads,
    refuse,
)
from .numcodecs_codec import _byte_view, _contiguous_array, decode_into

__all__ = ["CODECS", "FILTERS", "Blosc2"]

#: the codecs written (those C-Blosc2 reads), by the names used in the configuration
CODECS: dict[str, Codec] = {
    c.name.lower(): c for c in (Codec.BLOSCLZ, Codec.LZ4, Codec.LZ4HC, Codec.ZLIB, Codec.ZSTD)
}
#: the filters written, by name (user filters registered with pyblosc2 go by their int id)
FILTERS: dict[str, Filter] = {
    f.name.lower(): f
    for f in (
        Filter.NOFILTER,
        Filter.SHUFFLE,
        Filter.BITSHUFFLE,
        Filter.DELTA,
        Filter.TRUNC_PREC,
        Filter.BYTEDELTA,
        Filter.INT_TRUNC,
    )
}
SPLITMODES: dict[str, SplitMode] = {m.name.lower(): m for m in SplitMode}
#: C-Blosc2's BLOSC2_MAXTYPESIZE: a larger item size is recorded (and used) as 1
MAX_CHUNK_TYPESIZE = 255


def _named(value: object, table: Mapping[str, Any], name: str) -> object:
    """A name of ``table`` (any case) as its member; anything else unchanged."""
    if isinstance(value, str):
        member = table.get(value.lower())
        if member is None:
            refuse(name, f"one of {tuple(table)}", value)
        return member
    return value


def parse_codec_name(value: object) -> str:
    """``codec``: a name ("zstd"), a :class:`Codec` or its id; returns the name.

    >>> parse_codec_name(Codec.LZ4), parse_codec_name("ZSTD")
    ('lz4', 'zstd')
    >>> parse_codec_name("snappy")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: codec must be one of ('blosclz', 'lz4', 'lz4hc', 'zlib', \
'zstd'), got 'snappy'
    """
    allowed = [int(c) for c in CODECS.values()]
    codec = parse_enum(_named(value, CODECS, "codec"), Codec, "codec", 0, 255, allowed)
    return Codec(codec).name.lower()


def parse_filter_names(value: object) -> tuple[str | int, ...]:
    """``filters``: at most 6 names, :class:`Filter` members or ids (ids >= 160 are user
    filters); names are returned for the built-in ones.

    >>> parse_filter_names(["shuffle", Filter.DELTA, 200])
    ('shuffle', 'delta', 200)
    """
    if isinstance(value, str) or not isinstance(value, Sequence):
        refuse("filters", "a list of filter names or ids", value, wrong_type=True)
    if len(value) > MAX_FILTERS:
        refuse("filters", f"a list of at most {MAX_FILTERS} filters", list(value))
    out: list[str | int] = []
    for i, f in enumerate(value):
        parsed = parse_enum(_named(f, FILTERS, f"filters[{i}]"), Filter, f"filters[{i}]", 0, 255)
        if isinstance(parsed, Filter) and parsed.name.lower() not in FILTERS:
            refuse(f"filters[{i}]", f"one of {tuple(FILTERS)} or a user id", f)
        out.append(parsed.name.lower() if isinstance(parsed, Filter) else parsed)
    return tuple(out)


def parse_typesize_or_none(value: object) -> int | None:
    """``typesize``: ``None`` (the item size of each encoded buffer) or a positive int."""
    if value is None:
        return None
    return parse_int(value, "typesize", 1, None, "None or an int >= 1")


@dataclass(frozen=True, repr=False)
class Blosc2:
    """numcodecs codec ``blosc2``: each buffer becomes one Blosc2 chunk (see the module
    docstring). ``typesize=None`` takes the item size of the buffer being encoded (1 for
    ``bytes``); ``filters_meta=None`` is one 0 per filter. The output does not depend on
    ``nthreads``.

    >>> Blosc2().get_config()  # doctest: +NORMALIZE_WHITESPACE
    {'id': 'blosc2', 'codec': 'zstd', 'clevel': 5, 'filters': ['shuffle'], 'filters_meta': [0],
     'typesize': None, 'blocksize': 0, 'splitmode': 'auto_split', 'codec_meta': 0,
     'use_dict': False, 'nthreads': 1}
    >>> Blosc2(clevel=10)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: clevel must be an int in 0..9, got 10
    """

    codec_id: ClassVar[str] = "blosc2"

    codec: str = "zstd"
    clevel: int = 5
    filters: tuple[str | int, ...] = ("shuffle",)
    filters_meta: tuple[int, ...] | None = None
    typesize: int | None = None
    blocksize: int = 0
    splitmode: str = "auto_split"
    codec_meta: int = 0
    use_dict: bool = False
    nthreads: int = 1

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "codec", parse_codec_name(self.codec))
        put(self, "clevel", parse_clevel(self.clevel))
        put(self, "filters", parse_filter_names(self.filters))
        metas = [0] * len(self.filters) if self.filters_meta is None else self.filters_meta
        if isinstance(metas, str) or not isinstance(metas, Sequence):
            refuse("filters_meta", "a list of ints", metas, wrong_type=True)
        if len(metas) != len(self.filters):
            refuse("filters_meta", f"a list of {len(self.filters)} ints (one per filter)", metas)
        put(self, "filters_meta", tuple(parse_int(m, "filters_meta", -128, 255) for m in metas))
        put(self, "typesize", parse_typesize_or_none(self.typesize))
        put(self, "blocksize", parse_blocksize(self.blocksize))
        mode = _named(self.splitmode, SPLITMODES, "splitmode")
        mode = parse_enum(mode, SplitMode, "splitmode", 1, 4)
        put(self, "splitmode", SplitMode(mode).name.lower())
        put(self, "codec_meta", parse_int(self.codec_meta, "codec_meta", 0, 255))
        put(self, "use_dict", parse_bool(self.use_dict, "use_dict"))
        put(self, "nthreads", parse_nthreads(self.nthreads))
        self.cparams(self.typesize or 8)  # every combination is checked before any encode

    def cparams(self, typesize: int) -> CParams:
        """The :class:`~pyblosc2.CParams` of a buffer of ``typesize``-byte items."""
        return CParams(
            codec=CODECS[self.codec],
            codec_meta=self.codec_meta,
            clevel=self.clevel,
            use_dict=self.use_dict,
            typesize=typesize if typesize <= MAX_CHUNK_TYPESIZE else 1,
            nthreads=self.nthreads,
            blocksize=self.blocksize,
            splitmode=SPLITMODES[self.splitmode],
            filters=[FILTERS[f] if isinstance(f, str) else f for f in self.filters],
            filters_meta=list(self.filters_meta or ()),
        )

    def encode(self, buf: BufferLike) -> bytes:
        """Compress ``buf`` (any contiguous buffer or array) into one Blosc2 chunk."""
        arr = _contiguous_array(buf, "buf")
        itemsize = self.typesize if self.typesize is not None else arr.itemsize
        return compress2(_byte_view(arr), cparams=self.cparams(itemsize))

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Decompress the chunk ``buf`` (any Blosc1/Blosc2 chunk): a new ``bytes``, or into
        ``out`` (returned; writable, contiguous, at least the decoded size)."""
        src = _byte_view(_contiguous_array(buf, "buf"))
        if out is None:
            nbytes = get_chunk_header(src).nbytes
            return decompress2(src, nthreads=self.nthreads) if nbytes else b""
        dst = _contiguous_array(out, "out")
        if not dst.flags.writeable:
            raise ParamError("out must be a writable buffer")
        decode_into(src, _byte_view(dst))
        return out

    def get_config(self) -> dict[str, Any]:
        """The configuration (JSON types; codecs, filters and split mode by name)."""
        config: dict[str, Any] = {"id": self.codec_id}
        for f in fields(self):
            value = getattr(self, f.name)
            config[f.name] = list(value) if isinstance(value, tuple) else value
        return config

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Blosc2:
        """Build from :meth:`get_config` output (an ``id``, if present, must be "blosc2";
        ``cname`` is read as ``codec``)."""
        config = dict(config)
        codec_id = config.pop("id", cls.codec_id)
        if codec_id != cls.codec_id:
            refuse("id", repr(cls.codec_id), codec_id)
        if "cname" in config:
            if "codec" in config:
                raise ParamError("give codec or cname, not both")
            config["codec"] = config.pop("cname")
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(config) - set(known))
        if unknown:
            raise ParamError(f"unknown blosc2 configuration keys {unknown}; known: {known}")
        return cls(**config)

    def __repr__(self) -> str:
        shown = [f"{k}={v!r}" for k, v in self.get_config().items() if k != "id"]
        return f"{type(self).__name__}({', '.join(shown)})"
