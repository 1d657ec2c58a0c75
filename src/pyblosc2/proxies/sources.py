"""What a :class:`~pyblosc2.Proxy` reads from: python-blosc2's source protocol.

A source of N-d data (:class:`ProxyNDSource`) says its ``shape``, ``chunks``, ``blocks`` and
``dtype`` and hands out compressed chunks by number (``get_chunk(nchunk)``, C order of the
chunk grid, each chunk holding its blocks in C order of the block grid as b2nd frames do,
frame-format.md §8.4); a source of plain bytes (:class:`ProxySource`) says its ``nbytes``,
``chunksize`` and ``typesize``. Both may add ``aget_chunk`` (for ``Proxy.afetch``) and
``cparams``. A source that can also serve single blocks of a chunk adds the block protocol
(``blocks_per_chunk``, ``wants_blocks``, ``chunk_layout``, ``block_plan``, ``read_range``),
as :class:`~pyblosc2.proxy_source.ByteRangeNDSource` does over a frame read by byte ranges.

A source may name the exact bytes it serves with ``stamp`` (anything comparable, stored in a
cache's vlmeta as ``proxy-stamp``): a cache filled from another stamp is stale.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..params import CParams

__all__ = ["NotRanged", "ProxyNDSource", "ProxySource"]


class NotRanged(ValueError):
    """A byte-range transport answered with something other than the range asked for (a
    server that streams the whole object, a busy one). Not fatal to a fetch: the proxy then
    asks for the chunks it wanted whole."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProxyNDSource(ABC):
    """The interface of an N-d source of a :class:`~pyblosc2.Proxy` (python-blosc2's).

    >>> import numpy as np, pyblosc2 as blosc2
    >>> class Source(ProxyNDSource):
    ...     def __init__(self, a): self.a = a
    ...     shape = property(lambda self: self.a.shape)
    ...     chunks = property(lambda self: self.a.chunks)
    ...     blocks = property(lambda self: self.a.blocks)
    ...     dtype = property(lambda self: self.a.dtype)
    ...     def get_chunk(self, nchunk): return self.a.schunk.get_chunk(nchunk)
    >>> a = blosc2.asarray(np.arange(10), chunks=(4,), blocks=(2,))
    >>> blosc2.Proxy(Source(a))[3:6]
    array([3, 4, 5])
    """

    @property
    @abstractmethod
    def shape(self) -> tuple[int, ...]:
        """The shape of the source."""

    @property
    @abstractmethod
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape of the source."""

    @property
    @abstractmethod
    def blocks(self) -> tuple[int, ...]:
        """The block shape of the source."""

    @property
    @abstractmethod
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the source."""

    @property
    def cparams(self) -> CParams:
        """The compression parameters of the cache (default: the typesize only)."""
        return CParams(typesize=np.dtype(self.dtype).itemsize)

    @abstractmethod
    def get_chunk(self, nchunk: int) -> bytes:
        """The compressed chunk ``nchunk``."""

    async def aget_chunk(self, nchunk: int) -> bytes:
        """The compressed chunk ``nchunk``, for ``Proxy.afetch`` (optional)."""
        raise NotImplementedError(
            "aget_chunk is only available if the source has an async aget_chunk method"
        )

    @property
    def meta(self) -> dict[str, Any]:
        """The fixed-length metadata of the source."""
        return {}

    @property
    def vlmeta(self) -> dict[str, Any]:
        """The variable-length metadata of the source."""
        return {}

    @property
    def attrs(self) -> dict[str, Any]:
        """The user attributes of the source (its vlmeta)."""
        return self.vlmeta


class ProxySource(ABC):
    """The interface of a source of plain bytes (an SChunk-like source) of a
    :class:`~pyblosc2.Proxy` (python-blosc2's).

    >>> import numpy as np, pyblosc2 as blosc2
    >>> class Source(ProxySource):
    ...     nbytes, chunksize, typesize = 40, 16, 4
    ...     def get_chunk(self, n):
    ...         data = np.arange(10, dtype=np.int32).tobytes()[16 * n : 16 * (n + 1)]
    ...         return blosc2.compress2(data, typesize=4)
    >>> np.frombuffer(blosc2.Proxy(Source())[2:5], np.int32)
    array([2, 3, 4], dtype=int32)
    """

    @property
    @abstractmethod
    def nbytes(self) -> int:
        """The total number of bytes of the source."""

    @property
    @abstractmethod
    def chunksize(self) -> int:
        """The bytes in one chunk of the source."""

    @property
    @abstractmethod
    def typesize(self) -> int:
        """The item size of the source."""

    @property
    def cparams(self) -> CParams:
        """The compression parameters of the cache (default: the typesize only)."""
        return CParams(typesize=self.typesize)

    @abstractmethod
    def get_chunk(self, nchunk: int) -> bytes:
        """The compressed chunk ``nchunk``."""

    async def aget_chunk(self, nchunk: int) -> bytes:
        """The compressed chunk ``nchunk``, for ``Proxy.afetch`` (optional)."""
        raise NotImplementedError(
            "aget_chunk is only available if the source has an async aget_chunk method"
        )
