"""Codec registry: codec id → codec object, and the compformat → decoder dispatch (spec §2.3).

Built-in codecs are always present and cannot be replaced. Plugin codecs take ids 32-255 (the
ranges C-Blosc2 reserves for registered and user codecs) and are written with compformat 6,
their id in ``udcompcode``. The registry is process-wide like C-Blosc2's; tests that register
codecs restore it with :func:`registry_snapshot`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..constants import DEFINED_CODECS_STOP, USER_REGISTERED_CODECS_STOP, Codec
from ..errors import ParamError
from .base import BaseCodec
from .blosclz import BloscLZCodec
from .lz4 import LZ4Codec, LZ4HCCodec
from .snappy import SnappyCodec
from .zlib import ZlibCodec
from .zstd import ZstdCodec

__all__ = [
    "UDCODEC_FORMAT",
    "codec_for_format",
    "get_codec",
    "register_codec",
    "registered_codecs",
    "registry_snapshot",
    "unregister_codec",
]

UDCODEC_FORMAT = 6  # compformat of plugin/user codecs; the id is in udcompcode

_BUILTINS: dict[int, BaseCodec] = {
    c.compcode: c
    for c in (BloscLZCodec(), LZ4Codec(), LZ4HCCodec(), SnappyCodec(), ZlibCodec(), ZstdCodec())
}
# compformat → decoder of the built-in formats (LZ4 and LZ4HC share format 1).
_FORMAT_DECODERS: dict[int, BaseCodec] = {
    0: _BUILTINS[Codec.BLOSCLZ],
    1: _BUILTINS[Codec.LZ4],
    2: _BUILTINS[Codec.SNAPPY],
    3: _BUILTINS[Codec.ZLIB],
    4: _BUILTINS[Codec.ZSTD],
}
_plugins: dict[int, BaseCodec] = {}


def register_codec(codec: BaseCodec) -> None:
    """Register a plugin codec under ``codec.compcode`` (32-255).

    Its ``compformat`` must be 6 (:data:`UDCODEC_FORMAT`).
    """
    cid = int(codec.compcode)
    if not DEFINED_CODECS_STOP < cid <= USER_REGISTERED_CODECS_STOP:
        raise ParamError(f"codec id must be in 32..255 for plugins, got {cid}")
    if codec.compformat != UDCODEC_FORMAT:
        raise ParamError(
            f"plugin codec compformat must be {UDCODEC_FORMAT}, got {codec.compformat}"
        )
    if cid in _plugins:
        raise ParamError(f"codec id {cid} is already registered ({_plugins[cid]!r})")
    _plugins[cid] = codec


def unregister_codec(compcode: int) -> None:
    """Remove a plugin codec (built-ins cannot be removed)."""
    if _plugins.pop(int(compcode), None) is None:
        raise ParamError(f"no plugin codec registered with id {compcode}")


def registered_codecs() -> dict[int, BaseCodec]:
    """All codecs by id, built-ins first."""
    return {**_BUILTINS, **_plugins}


def get_codec(compcode: int) -> BaseCodec:
    """The codec for an API id (``Codec`` value or plugin id); :class:`ParamError` if unknown.

    >>> get_codec(Codec.ZSTD).name
    'zstd'
    """
    codec = _BUILTINS.get(int(compcode)) or _plugins.get(int(compcode))
    if codec is None and int(compcode) in Codec._value2member_map_:
        raise NotImplementedError(
            f"codec {Codec(int(compcode)).name} (a C-Blosc2 plugin) is not implemented by pyblosc2"
        )
    if codec is None:
        known = sorted(registered_codecs())
        raise ParamError(f"codec must be one of {known}, got {compcode}")
    return codec


def codec_for_format(compformat: int, udcompcode: int) -> BaseCodec | None:
    """The decoder for a chunk's compformat (and ``udcompcode`` for format 6), or ``None``."""
    if compformat == UDCODEC_FORMAT:
        return _plugins.get(udcompcode)
    return _FORMAT_DECODERS.get(compformat)


@contextmanager
def registry_snapshot() -> Iterator[None]:
    """Restore the plugin registry on exit (for tests)."""
    saved = dict(_plugins)
    try:
        yield
    finally:
        _plugins.clear()
        _plugins.update(saved)
