"""The ``blosc2`` codec in zarr v3 arrays, the way zarr v3 takes numcodecs codecs.

zarr-python 3 writes a numcodecs codec into ``zarr.json`` as ``{"name": "numcodecs.<id>",
"configuration": <its numcodecs configuration without "id">}`` (``zarr.codecs.numcodecs``);
:class:`Blosc2Codec` is a bytes -> bytes codec with exactly that metadata for the numcodecs
codec :class:`~pyblosc2.compat.numcodecs_blosc2.Blosc2`, and each chunk it writes is one
Blosc2 chunk (the same bytes ``Blosc2.encode`` gives)::

    {"name": "numcodecs.blosc2", "configuration": {"codec": "zstd", "clevel": 5,
     "filters": ["shuffle"], "filters_meta": [0], "typesize": 4, ...}}

``typesize=None`` (the default) is set to the array's item size when zarr builds the array
(:meth:`Blosc2Codec.evolve_from_array_spec`), and that value is what the metadata records.
The ``zarr.codecs`` entry point ``numcodecs.blosc2`` (installed with pyblosc2; :func:`register`
does the same by hand) lets zarr open such arrays without being told about this class.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from zarr.abc.codec import BytesBytesCodec
from zarr.core.dtype.common import HasItemSize
from zarr.registry import register_codec

from ..params import refuse
from .numcodecs_blosc2 import Blosc2

if TYPE_CHECKING:
    from typing_extensions import Self
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer

__all__ = ["CODEC_NAME", "Blosc2Codec", "register"]

CODEC_NAME = f"numcodecs.{Blosc2.codec_id}"


@dataclass(frozen=True, kw_only=True)
class Blosc2Codec(BytesBytesCodec):
    """zarr v3 codec ``numcodecs.blosc2``: the parameters and defaults of
    :class:`~pyblosc2.compat.numcodecs_blosc2.Blosc2`.

    >>> codec = Blosc2Codec(codec="lz4", clevel=9, filters=["bitshuffle"], typesize=4)
    >>> codec.to_dict()["name"], codec.to_dict()["configuration"]["filters"]
    ('numcodecs.blosc2', ['bitshuffle'])
    >>> Blosc2Codec.from_dict(codec.to_dict()) == codec
    True
    """

    is_fixed_size = False

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
        # the numcodecs codec parses every field; keep its normalised values
        parsed = Blosc2(**{k: getattr(self, k) for k in _FIELDS})
        for k in _FIELDS:
            object.__setattr__(self, k, getattr(parsed, k))

    @property
    def numcodec(self) -> Blosc2:
        """The numcodecs codec with these parameters (it encodes and decodes the chunks)."""
        return Blosc2(**{k: getattr(self, k) for k in _FIELDS})

    def to_dict(self) -> dict[str, Any]:
        """``{"name": "numcodecs.blosc2", "configuration": ...}``, as zarr writes numcodecs
        codecs."""
        config = self.numcodec.get_config()
        del config["id"]
        return {"name": CODEC_NAME, "configuration": config}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Parse the metadata :meth:`to_dict` writes (missing keys take the defaults)."""
        if not isinstance(data, Mapping):
            refuse("codec metadata", "a JSON object", data, wrong_type=True)
        if data.get("name") != CODEC_NAME:
            refuse("name", repr(CODEC_NAME), data.get("name"))
        extra = sorted(set(data) - {"name", "configuration"})
        if extra:
            refuse("codec metadata keys", "among ('name', 'configuration')", extra)
        config = data.get("configuration", {})
        if not isinstance(config, Mapping):
            refuse("configuration", "a JSON object", config, wrong_type=True)
        return cls(**asdict(Blosc2.from_config(config)))

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        """An automatic typesize becomes the array's item size (1 for variable-size types)."""
        if self.typesize is not None:
            return self
        item_size = array_spec.dtype.item_size if isinstance(array_spec.dtype, HasItemSize) else 1
        return replace(self, typesize=item_size)

    def _encode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        encoded = self.numcodec.encode(chunk_bytes.as_numpy_array())
        return chunk_spec.prototype.buffer.from_bytes(encoded)

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        decoded = self.numcodec.decode(chunk_bytes.as_numpy_array())
        return chunk_spec.prototype.buffer.from_bytes(decoded)

    async def _encode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        return await asyncio.to_thread(self._encode_sync, chunk_bytes, chunk_spec)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        return await asyncio.to_thread(self._decode_sync, chunk_bytes, chunk_spec)

    def compute_encoded_size(self, _input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        raise NotImplementedError("blosc2 output has a variable size")


_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Blosc2))


def register() -> None:
    """Register :class:`Blosc2Codec` with zarr's codec registry as ``numcodecs.blosc2`` (what
    the ``zarr.codecs`` entry point does when pyblosc2 is installed).

    >>> import zarr
    >>> register()
    >>> zarr.registry.get_codec_class(CODEC_NAME) is Blosc2Codec
    True
    """
    register_codec(CODEC_NAME, Blosc2Codec)
