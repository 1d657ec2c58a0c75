"""What a chunk's codec and filters may know of the super-chunk holding it.

C-Blosc2 hands plug-in codecs and filters the super-chunk through ``cparams->schunk`` /
``dparams->schunk``: the NDCELL and NDMEAN filters read the block shape from its ``b2nd``
metalayer, user codecs and filters written in Python receive it as their ``schunk`` argument.
pyblosc2 hands them a :class:`ChunkContext` instead: the typesize and the metalayers of the
frame the chunk belongs to, fixed when the chunk is written or read. A chunk compressed or
decompressed on its own (``compress2``/``decompress2``) gets a context with the chunk's
typesize and no metalayers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

__all__ = ["ChunkContext"]


@dataclass(frozen=True, slots=True)
class ChunkContext:
    """The super-chunk a chunk belongs to, as its plug-ins see it.

    >>> ctx = ChunkContext(4, (("b2nd", b"raw"), ("user", b"\\xa1x")))
    >>> ctx.typesize, ctx.metalayer("b2nd"), ctx.meta["user"]
    (4, b'raw', 'x')
    """

    typesize: int
    #: ``(name, content)`` of each fixed-length metalayer, content as stored
    metalayers: tuple[tuple[str, bytes], ...] = ()

    def metalayer(self, name: str) -> bytes | None:
        """The stored content of metalayer ``name``, or None."""
        for key, content in self.metalayers:
            if key == name:
                return content
        return None

    @property
    def meta(self) -> Mapping[str, Any]:
        """The metalayers decoded as msgpack (python-blosc2's ``schunk.meta``); contents that
        are not msgpack (``b2nd`` is) are given as stored."""
        return {key: _decoded(content) for key, content in self.metalayers}


def _decoded(content: bytes) -> Any:
    try:
        return msgpack.unpackb(content, raw=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
        return content
