"""Metalayers and vlmeta: values as python-blosc2 writes them, read within bounds
(:mod:`.scan`, :mod:`.values`), and the ``meta``/``vlmeta`` mappings of a container
(:mod:`.layers`)."""

from __future__ import annotations

from .layers import Meta, MetaHost, RawMetalayer, VLMeta
from .scan import MAX_DEPTH
from .values import pack_vlmeta, packb, unpack_vlmeta, unpackb

__all__ = [
    "MAX_DEPTH",
    "Meta",
    "MetaHost",
    "RawMetalayer",
    "VLMeta",
    "pack_vlmeta",
    "packb",
    "unpack_vlmeta",
    "unpackb",
]
