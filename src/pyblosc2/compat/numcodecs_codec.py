"""numcodecs' ``Blosc`` codec, on pyblosc2: zarr v2 arrays and everything built on numcodecs.

:class:`Blosc` has numcodecs' interface (``codec_id``, ``encode``, ``decode(buf, out=None)``,
``get_config``, ``from_config``) and its configuration (``cname``, ``clevel``, ``shuffle``
as 0/1/2/-1, ``blocksize``), and writes Blosc1-format chunks (16-byte header, version 2) as
C-Blosc 1.x does (``../shared/specs/chunk-format.md`` §2.4, §8.3-§8.4). It neither imports
nor subclasses numcodecs: it satisfies zarr's ``Numcodec`` protocol and numcodecs' registry.

The helpers here (:func:`encode_blosc1`, :func:`decode_into`, the ``parse_*`` functions) are
shared with the zarr v3 codec (:mod:`pyblosc2.compat.zarr_codec`); every parameter is parsed
by the parsers of :mod:`pyblosc2.params` (``clevel``, ``blocksize``) or built on them, so the
rules and messages are those of :class:`~pyblosc2.CParams`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

import numpy as np

from .._bytes import BufferLike
from ..api import compress_blosc1, decompress2, get_chunk_header
from ..constants import Codec, Filter
from ..errors import ParamError
from ..params import parse_blocksize, parse_choice, parse_clevel, parse_int, refuse

__all__ = [
    "AUTOSHUFFLE",
    "BITSHUFFLE",
    "CNAMES",
    "NOSHUFFLE",
    "SHUFFLE",
    "Blosc",
    "decode_blosc1",
    "decode_into",
    "encode_blosc1",
    "parse_blocksize",
    "parse_clevel",
    "parse_cname",
    "parse_shuffle_int",
]

NOSHUFFLE = 0
SHUFFLE = 1
BITSHUFFLE = 2
AUTOSHUFFLE = -1
#: The largest buffer numcodecs' Blosc accepts (``Blosc.max_buffer_size``).
MAX_BUFFER_SIZE = 2**31 - 1
#: C-Blosc 1.x's ``BLOSC_MAX_TYPESIZE``: a larger typesize is recorded (and used) as 1.
MAX_BLOSC1_TYPESIZE = 255

#: cname (as the zarr spec and numcodecs spell it) -> pyblosc2 codec, in the spec's order.
CNAMES: dict[str, Codec] = {
    "lz4": Codec.LZ4,
    "lz4hc": Codec.LZ4HC,
    "blosclz": Codec.BLOSCLZ,
    "zstd": Codec.ZSTD,
    "snappy": Codec.SNAPPY,
    "zlib": Codec.ZLIB,
}
_SHUFFLE_INTS = (NOSHUFFLE, SHUFFLE, BITSHUFFLE, AUTOSHUFFLE)
_SHUFFLE_NAMES = {
    AUTOSHUFFLE: "AUTOSHUFFLE",
    NOSHUFFLE: "NOSHUFFLE",
    SHUFFLE: "SHUFFLE",
    BITSHUFFLE: "BITSHUFFLE",
}


def _plain(value: object) -> object:
    """The value of an ``Enum`` member (e.g. zarr's ``BloscCname.lz4``), else ``value``."""
    return value.value if isinstance(value, Enum) else value


def parse_cname(value: object) -> str:
    """A cname string (``bytes`` and ``Enum`` members with a str value are accepted).

    >>> parse_cname(b"zstd")
    'zstd'
    >>> parse_cname("lz5")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: cname must be one of ('lz4', 'lz4hc', 'blosclz', 'zstd', \
'snappy', 'zlib'), got 'lz5'
    """
    value = _plain(value)
    if isinstance(value, bytes):
        value = value.decode("ascii", errors="replace")
    return parse_choice(value, "cname", tuple(CNAMES))


def parse_typesize_or_none(value: object) -> int | None:
    """``None`` (take the buffer's itemsize) or a positive int.

    >>> parse_typesize_or_none(0)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: typesize must be None or an int >= 1, got 0
    """
    if value is None:
        return None
    return parse_int(value, "typesize", 1, None, "None or an int >= 1")


def parse_shuffle_int(value: object) -> int:
    """numcodecs' shuffle: 0 (NOSHUFFLE), 1 (SHUFFLE), 2 (BITSHUFFLE) or -1 (AUTOSHUFFLE).

    >>> parse_shuffle_int(3)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: shuffle must be one of (0, 1, 2, -1), got 3
    """
    return parse_choice(value, "shuffle", _SHUFFLE_INTS)


def encode_blosc1(
    data: BufferLike, typesize: int, cname: str, clevel: int, shuffle: int, blocksize: int
) -> bytes:
    """One Blosc1 chunk, as ``blosc_compress_ctx(clevel, shuffle, typesize, ..., cname,
    blocksize, 1)`` of C-Blosc 1.x writes it (a typesize above 255 is used as 1, as C does).

    >>> encode_blosc1(bytes(256), 4, "lz4", 5, SHUFFLE, 0)[:4].hex()
    '02013104'
    """
    if typesize > MAX_BLOSC1_TYPESIZE:
        typesize = 1
    return compress_blosc1(
        data,
        typesize=typesize,
        clevel=clevel,
        shuffle=Filter(shuffle),
        codec=CNAMES[cname],
        blocksize=blocksize,
        nthreads=1,
    )


def decoded_size(buf: BufferLike) -> int:
    """The uncompressed size a chunk declares (its header is validated)."""
    return get_chunk_header(buf).nbytes


def decode_into(buf: BufferLike, out: np.ndarray) -> None:
    """Decode the chunk ``buf`` into the first ``nbytes`` bytes of the uint8 array ``out``."""
    if not out.size:  # decompress2 refuses an empty dst (as python-blosc2); still validate
        decompress2(buf, nthreads=1)
        return
    decompress2(buf, dst=out, nthreads=1)


def decode_blosc1(buf: BufferLike) -> np.ndarray:
    """A new uint8 array holding the decoded chunk ``buf`` (any Blosc1/Blosc2 chunk).

    >>> bytes(decode_blosc1(encode_blosc1(b"abc" * 100, 3, "zstd", 5, SHUFFLE, 0))[:6])
    b'abcabc'
    """
    out = np.empty(decoded_size(buf), np.uint8)
    decode_into(buf, out)
    return out


def _contiguous_array(buf: Any, name: str) -> np.ndarray:
    """``buf`` as a 1-D array in memory order, without copying (numcodecs'
    ``ensure_contiguous_ndarray``): C- or F-contiguous arrays and any buffer object."""
    if isinstance(buf, np.ndarray):
        arr = buf
    else:
        try:
            arr = np.asarray(memoryview(buf))
        except TypeError:
            raise ParamError(
                f"{name} must support the buffer protocol, got {type(buf).__name__}"
            ) from None
    if arr.dtype.hasobject:
        raise ParamError(f"{name} must not be an object array")
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raise ParamError(f"{name} must be an array with contiguous memory")
    if arr.nbytes > MAX_BUFFER_SIZE:
        raise ParamError(f"{name} has {arr.nbytes} bytes, the maximum is {MAX_BUFFER_SIZE}")
    return arr.reshape(-1, order="A")


def _byte_view(arr: np.ndarray) -> np.ndarray:
    """The bytes of a 1-D contiguous array, as a uint8 view."""
    return arr.view(np.uint8)


@dataclass(frozen=True, repr=False)
class Blosc:
    """numcodecs-compatible Blosc codec (``codec_id = "blosc"``), writing C-Blosc 1.x chunks.

    ``typesize=None`` uses the item size of the buffer being encoded (1 for ``bytes``);
    ``shuffle=-1`` (AUTOSHUFFLE) picks BITSHUFFLE when that size is 1, else SHUFFLE. As in
    numcodecs, ``typesize`` is not part of :meth:`get_config`. Chunks are made one thread
    per call; callers (zarr) run many calls concurrently.

    >>> import numpy as np
    >>> codec = Blosc(cname="zstd", clevel=5, shuffle=Blosc.SHUFFLE)
    >>> enc = codec.encode(np.arange(1000, dtype="f8"))
    >>> float(np.frombuffer(codec.decode(enc), "f8")[-1])
    999.0
    >>> codec.get_config()
    {'id': 'blosc', 'cname': 'zstd', 'clevel': 5, 'shuffle': 1, 'blocksize': 0}
    >>> Blosc.from_config(codec.get_config()) == codec
    True
    """

    codec_id: ClassVar[str] = "blosc"
    NOSHUFFLE: ClassVar[int] = NOSHUFFLE
    SHUFFLE: ClassVar[int] = SHUFFLE
    BITSHUFFLE: ClassVar[int] = BITSHUFFLE
    AUTOSHUFFLE: ClassVar[int] = AUTOSHUFFLE
    max_buffer_size: ClassVar[int] = MAX_BUFFER_SIZE

    cname: str = "lz4"
    clevel: int = 5
    shuffle: int = SHUFFLE
    blocksize: int = 0
    typesize: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "cname", parse_cname(self.cname))
        object.__setattr__(self, "clevel", parse_clevel(self.clevel))
        object.__setattr__(self, "shuffle", parse_shuffle_int(self.shuffle))
        object.__setattr__(self, "blocksize", parse_blocksize(self.blocksize))
        object.__setattr__(self, "typesize", parse_typesize_or_none(self.typesize))

    def encode(self, buf: BufferLike) -> bytes:
        """Compress ``buf`` (any contiguous buffer or array) into one Blosc1 chunk."""
        arr = _contiguous_array(buf, "buf")
        itemsize = self.typesize if self.typesize is not None else arr.itemsize
        shuffle = self.shuffle
        if shuffle == AUTOSHUFFLE:
            shuffle = BITSHUFFLE if itemsize == 1 else SHUFFLE
        return encode_blosc1(
            _byte_view(arr), itemsize, self.cname, self.clevel, shuffle, self.blocksize
        )

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Decompress the chunk ``buf``: a new ``bytes``, or into ``out`` (which is returned;
        it must be writable, contiguous and hold at least the decoded size)."""
        src = _byte_view(_contiguous_array(buf, "buf"))
        if out is None:
            return decode_blosc1(src).tobytes()
        dst = _contiguous_array(out, "out")
        if not dst.flags.writeable:
            raise ParamError("out must be a writable buffer")
        decode_into(src, _byte_view(dst))
        return out

    def get_config(self) -> dict[str, Any]:
        """The configuration numcodecs writes (``id``, ``cname``, ``clevel``, ``shuffle``,
        ``blocksize``); JSON-serialisable."""
        return {
            "id": self.codec_id,
            "cname": self.cname,
            "clevel": self.clevel,
            "shuffle": self.shuffle,
            "blocksize": self.blocksize,
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Blosc:
        """Build from :meth:`get_config` output (an ``id``, if present, must be "blosc")."""
        config = dict(config)
        codec_id = config.pop("id", cls.codec_id)
        if codec_id != cls.codec_id:
            refuse("id", repr(cls.codec_id), codec_id)
        unknown = sorted(set(config) - {"cname", "clevel", "shuffle", "blocksize", "typesize"})
        if unknown:
            raise ParamError(
                f"unknown Blosc configuration keys {unknown}; known: "
                f"['blocksize', 'clevel', 'cname', 'shuffle', 'typesize']"
            )
        return cls(**config)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(cname={self.cname!r}, clevel={self.clevel!r}, "
            f"shuffle={_SHUFFLE_NAMES[self.shuffle]}, blocksize={self.blocksize})"
        )
