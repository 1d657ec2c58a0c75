"""The zarr v3 ``blosc`` codec (zarr-specs ``codecs/blosc`` 1.0) on pyblosc2.

A bytes -> bytes codec whose output is a Blosc1-format chunk as C-Blosc 1.x writes it
(``../shared/specs/chunk-format.md`` §2.4, §8.3-§8.4); any Blosc1/Blosc2 chunk is read. Its
metadata is the spec's, identical to zarr-python's own ``zarr.codecs.BloscCodec`` for the
same settings::

    {"name": "blosc", "configuration": {"typesize": 4, "cname": "lz4", "clevel": 1,
                                        "shuffle": "shuffle", "blocksize": 0}}

``typesize=None`` / ``shuffle=None`` (the defaults) mean "choose for the array":
:meth:`BloscCodec.evolve_from_array_spec` sets the typesize to the data type's item size and
the shuffle to ``bitshuffle`` for 1-byte items, else ``shuffle`` — as zarr-python does — and
the chosen values are what :meth:`~BloscCodec.to_dict` records (the spec's MUST).

Making zarr use it: the ``zarr.codecs`` entry point ``blosc`` registers this class with
zarr's codec registry once pyblosc2 is installed (:func:`register` does the same by hand);
zarr then picks it for ``"blosc"`` metadata when its config says so::

    zarr.config.set({"codecs.blosc": "pyblosc2.compat.zarr_codec.BloscCodec"})

(or ``ZARR_CODECS__BLOSC=pyblosc2.compat.zarr_codec.BloscCodec`` in the environment;
:data:`ZARR_CONFIG` holds that dict). Passing a :class:`BloscCodec` instance as an array's
``compressors`` works without any of this.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from zarr.abc.codec import BytesBytesCodec
from zarr.core.dtype.common import HasItemSize
from zarr.registry import register_codec

from ..params import parse_blocksize, parse_choice, parse_clevel, parse_int, refuse
from .numcodecs_codec import (
    BITSHUFFLE,
    NOSHUFFLE,
    SHUFFLE,
    decode_blosc1,
    encode_blosc1,
    parse_cname,
)

if TYPE_CHECKING:
    from typing_extensions import Self
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer

__all__ = [
    "ZARR_CONFIG",
    "BloscCname",
    "BloscCodec",
    "BloscShuffle",
    "parse_shuffle",
    "parse_typesize",
    "register",
]

CODEC_NAME = "blosc"
#: The zarr config that selects this implementation for ``"blosc"`` metadata.
ZARR_CONFIG = {"codecs.blosc": "pyblosc2.compat.zarr_codec.BloscCodec"}
_CONFIG_KEYS = ("typesize", "cname", "clevel", "shuffle", "blocksize")  # zarr's order


class BloscCname(str, Enum):
    """The ``cname`` values of the spec."""

    lz4 = "lz4"
    lz4hc = "lz4hc"
    blosclz = "blosclz"
    zstd = "zstd"
    snappy = "snappy"
    zlib = "zlib"


class BloscShuffle(str, Enum):
    """The ``shuffle`` values of the spec (numcodecs' 0, 1, 2)."""

    noshuffle = "noshuffle"
    shuffle = "shuffle"
    bitshuffle = "bitshuffle"


_SHUFFLE_INT = {
    BloscShuffle.noshuffle: NOSHUFFLE,
    BloscShuffle.shuffle: SHUFFLE,
    BloscShuffle.bitshuffle: BITSHUFFLE,
}
_SHUFFLE_VALUES = tuple(s.value for s in BloscShuffle)


def parse_shuffle(value: object) -> BloscShuffle:
    """A spec shuffle name (or an ``Enum`` member with that value, e.g. zarr's).

    >>> parse_shuffle("shuffle")
    <BloscShuffle.shuffle: 'shuffle'>
    >>> parse_shuffle(1)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamTypeError: shuffle must be one of ('noshuffle', 'shuffle', \
'bitshuffle'), got 1
    """
    plain = value.value if isinstance(value, Enum) else value
    return BloscShuffle(parse_choice(plain, "shuffle", _SHUFFLE_VALUES))


def parse_typesize(value: object) -> int:
    """The spec's typesize: a positive int.

    >>> parse_typesize(0)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: typesize must be an int >= 1, got 0
    """
    return parse_int(value, "typesize", 1)


@dataclass(frozen=True, kw_only=True)
class BloscCodec(BytesBytesCodec):
    """The zarr v3 ``blosc`` codec, writing Blosc1 chunks with pyblosc2.

    Same parameters and defaults as ``zarr.codecs.BloscCodec``; ``typesize``/``shuffle`` left
    as ``None`` are chosen from the array's data type when zarr builds the array.

    >>> codec = BloscCodec(cname="lz4", clevel=1, shuffle="shuffle", typesize=4)
    >>> codec.to_dict()
    {'name': 'blosc', 'configuration': {'typesize': 4, 'cname': 'lz4', 'clevel': 1, \
'shuffle': 'shuffle', 'blocksize': 0}}
    >>> BloscCodec.from_dict(codec.to_dict()) == codec
    True
    >>> BloscCodec(cname="lz5")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: cname must be one of ('lz4', 'lz4hc', 'blosclz', 'zstd', \
'snappy', 'zlib'), got 'lz5'
    """

    is_fixed_size = False

    typesize: int | None = None
    cname: BloscCname = BloscCname.zstd
    clevel: int = 5
    shuffle: BloscShuffle | None = None
    blocksize: int = 0

    def __post_init__(self) -> None:
        if self.typesize is not None:
            object.__setattr__(self, "typesize", parse_typesize(self.typesize))
        object.__setattr__(self, "cname", BloscCname(parse_cname(self.cname)))
        object.__setattr__(self, "clevel", parse_clevel(self.clevel))
        if self.shuffle is not None:
            object.__setattr__(self, "shuffle", parse_shuffle(self.shuffle))
        object.__setattr__(self, "blocksize", parse_blocksize(self.blocksize))

    # -- metadata ------------------------------------------------------------------------------

    @property
    def resolved_typesize(self) -> int:
        """The typesize written to metadata and chunks (1 while still automatic, as zarr)."""
        return 1 if self.typesize is None else self.typesize

    @property
    def resolved_shuffle(self) -> BloscShuffle:
        """The shuffle written to metadata and chunks (bitshuffle while still automatic)."""
        return BloscShuffle.bitshuffle if self.shuffle is None else self.shuffle

    def to_dict(self) -> dict[str, Any]:
        """The spec's JSON metadata, key for key what zarr-python writes."""
        return {
            "name": CODEC_NAME,
            "configuration": {
                "typesize": self.resolved_typesize,
                "cname": self.cname.value,
                "clevel": self.clevel,
                "shuffle": self.resolved_shuffle.value,
                "blocksize": self.blocksize,
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Parse ``{"name": "blosc", "configuration": {...}}``; missing keys take the defaults
        (a missing typesize/shuffle is chosen for the array, as zarr-python does)."""
        if not isinstance(data, Mapping):
            refuse("codec metadata", "a JSON object", data, wrong_type=True)
        if data.get("name") != CODEC_NAME:
            refuse("name", repr(CODEC_NAME), data.get("name"))
        config = data.get("configuration")
        if not isinstance(config, Mapping):
            refuse("configuration", "a JSON object", config, wrong_type=True)
        unknown = sorted(set(config) - set(_CONFIG_KEYS))
        if unknown:
            refuse("configuration keys", f"among {_CONFIG_KEYS}", unknown)
        extra = sorted(set(data) - {"name", "configuration"})
        if extra:
            refuse("codec metadata keys", "among ('name', 'configuration')", extra)
        return cls(**config)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        """Fill an automatic typesize/shuffle from the array's data type (zarr's rule)."""
        item_size = 1
        if isinstance(array_spec.dtype, HasItemSize):
            item_size = array_spec.dtype.item_size
        new = self
        if self.typesize is None:
            new = replace(new, typesize=item_size)
        if self.shuffle is None:
            new = replace(
                new, shuffle=BloscShuffle.bitshuffle if item_size == 1 else BloscShuffle.shuffle
            )
        return new

    # -- chunks --------------------------------------------------------------------------------

    def encode_bytes(self, data: Any) -> bytes:
        """One Blosc1 chunk of ``data`` (bytes-like), as zarr-python's codec writes it.

        >>> codec = BloscCodec(cname="lz4", typesize=4, shuffle="shuffle")
        >>> codec.encode_bytes(bytes(256))[:4].hex()
        '02013104'
        """
        return encode_blosc1(
            data,
            self.resolved_typesize,
            self.cname.value,
            self.clevel,
            _SHUFFLE_INT[self.resolved_shuffle],
            self.blocksize,
        )

    def _encode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        encoded = self.encode_bytes(chunk_bytes.as_numpy_array())
        return chunk_spec.prototype.buffer.from_bytes(encoded)

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        decoded = decode_blosc1(chunk_bytes.as_numpy_array())
        return chunk_spec.prototype.buffer.from_bytes(decoded.data)

    async def _encode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        return await asyncio.to_thread(self._encode_sync, chunk_bytes, chunk_spec)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        return await asyncio.to_thread(self._decode_sync, chunk_bytes, chunk_spec)

    def compute_encoded_size(self, _input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        raise NotImplementedError("blosc output has a variable size")


def register() -> None:
    """Register :class:`BloscCodec` with zarr's codec registry (what the ``zarr.codecs``
    entry point does when pyblosc2 is installed); select it with :data:`ZARR_CONFIG`.

    >>> import zarr
    >>> register()
    >>> with zarr.config.set(ZARR_CONFIG):
    ...     zarr.registry.get_codec_class("blosc") is BloscCodec
    True
    """
    register_codec(CODEC_NAME, BloscCodec)
