"""What a proxy cache holds: python-blosc2's bitmaps of fetched chunks and blocks.

A cache cannot tell from its own chunks what it holds: a fetched chunk that is a run of one
value is a special chunk like the empty ones the cache starts with, and a chunk filled block
by block reads zeros where blocks are missing. So the cache keeps, in its vlmeta (python-
blosc2's names and layout, so either library adopts the other's cache):

* ``proxy-fetched``: one bit per chunk (chunk ``n`` is bit ``n % 8`` of byte ``n // 8``),
  for sources served whole;
* ``proxy-fetched-blocks``: one bit per block (block ``b`` of chunk ``n`` is bit
  ``n * bpc + b``), for sources that serve single blocks, with ``proxy-fetched-bpc`` (blocks
  per chunk) beside it.

A bit is set only after the bytes it stands for are committed, so a cache killed in between
refetches rather than serves what it never got. A chunk whose cache offset is *uninitialized*
was evicted (``update_special(n, UNINIT)``) whatever its bits say (:meth:`FetchedMap.evict`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import FormatError

__all__ = [
    "BLOCKS_KEY",
    "BPC_KEY",
    "CHUNKS_KEY",
    "DIRTY_KEY",
    "INDEX_KEY",
    "RESERVED",
    "STAMP_KEY",
    "FetchedMap",
]

CHUNKS_KEY = "proxy-fetched"
BLOCKS_KEY = "proxy-fetched-blocks"
BPC_KEY = "proxy-fetched-bpc"
STAMP_KEY = "proxy-stamp"
INDEX_KEY = "proxy-index"
#: python-blosc2 4.x marks a cache while a writer changes it; found at a write, the writer died
DIRTY_KEY = "proxy-dirty"
#: vlmeta names a caller cannot set (python-blosc2's reserved set, and its dirty marker)
RESERVED = frozenset({CHUNKS_KEY, BLOCKS_KEY, BPC_KEY, STAMP_KEY, INDEX_KEY, DIRTY_KEY})


def _nbytes(nbits: int) -> int:
    return (nbits + 7) // 8


class FetchedMap:
    """The fetched bits of ``nchunks`` chunks of ``bpc`` blocks each.

    >>> m = FetchedMap(3, 2); m.mark(1, [1]); m.mark(2)
    >>> m.to_bytes(), m.complete(2), m.missing(1, [0, 1]), m.partly_filled()
    (b'8', True, [0], [1])
    """

    def __init__(self, nchunks: int, bpc: int) -> None:
        self.nchunks, self.bpc = nchunks, bpc
        self.bits = np.zeros((nchunks, bpc), np.bool_)

    @property
    def key(self) -> str:
        """The vlmeta entry this map is stored in."""
        return BLOCKS_KEY if self.bpc > 1 else CHUNKS_KEY

    def copy(self) -> FetchedMap:
        out = FetchedMap(self.nchunks, self.bpc)
        out.bits[...] = self.bits
        return out

    # -- queries -----------------------------------------------------------------------------
    def complete(self, nchunk: int) -> bool:
        return bool(self.bits[nchunk].all())

    def missing(self, nchunk: int, blocks: Iterable[int] | None = None) -> list[int]:
        """The blocks of ``blocks`` (None: all) of chunk ``nchunk`` not fetched."""
        row = self.bits[nchunk]
        if blocks is None:
            return np.flatnonzero(~row).tolist()
        idx = np.fromiter(blocks, np.int64)
        return idx[~row[idx]].tolist()

    def held(self, nchunk: int) -> list[int]:
        return np.flatnonzero(self.bits[nchunk]).tolist()

    def partly_filled(self) -> list[int]:
        """Chunks holding some of their blocks but not all."""
        if self.bpc == 1:
            return []
        counts = self.bits.sum(axis=1)
        return np.flatnonzero((counts > 0) & (counts < self.bpc)).tolist()

    # -- changes -----------------------------------------------------------------------------
    def mark(self, nchunk: int, blocks: Iterable[int] | None = None) -> None:
        if blocks is None:
            self.bits[nchunk] = True
        else:
            self.bits[nchunk, np.fromiter(blocks, np.int64)] = True

    def clear(self, nchunk: int) -> None:
        self.bits[nchunk] = False

    def evict(self, uninit: np.ndarray) -> None:
        """Clear the chunks flagged in the boolean array ``uninit`` (their cache offset says
        *uninitialized*: evicted, or never written)."""
        self.bits[uninit[: self.nchunks]] = False

    # -- bytes -------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        return np.packbits(self.bits.reshape(-1), bitorder="little").tobytes()

    def chunkwise_bytes(self) -> bytes:
        """The chunk bitmap (a chunk counts when all of its blocks do)."""
        return np.packbits(self.bits.all(axis=1), bitorder="little").tobytes()

    def _set_bytes(self, raw: bytes, bpc: int) -> None:
        flat = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")
        bits = flat[: self.nchunks * bpc].astype(np.bool_).reshape(self.nchunks, bpc)
        self.bits[...] = bits if bpc == self.bpc else bits.all(axis=1, keepdims=True)

    def load(self, vlmeta: Mapping[str, Any], stored_specials: np.ndarray | None) -> None:
        """Take the bits a cache's ``vlmeta`` records (python-blosc2's rules): this map's own
        entry; else, for blocks, a chunk bitmap promoted to whole chunks; else, for chunks
        and a cache without any bitmap (written before bitmaps, or handed over), every
        chunk that is not special (``stored_specials``: a boolean per chunk).

        A bitmap entry of the wrong type or length is a damaged cache: :class:`FormatError`.
        """
        self.bits[...] = False
        own = self._entry(vlmeta, self.key, self.nchunks * self.bpc)
        if own is not None:
            self._set_bytes(own, self.bpc)
            return
        chunkwise = self._entry(vlmeta, CHUNKS_KEY, self.nchunks)
        if chunkwise is not None:
            self._set_bytes(chunkwise, 1)
        elif self.bpc == 1 and stored_specials is not None:
            self.bits[~stored_specials[: self.nchunks], :] = True

    @staticmethod
    def _entry(vlmeta: Mapping[str, Any], key: str, nbits: int) -> bytes | None:
        if key not in vlmeta:
            return None
        raw = vlmeta[key]
        if not isinstance(raw, bytes | bytearray) or len(raw) != _nbytes(nbits):
            got = f"{type(raw).__name__} of {len(raw)} bytes" if hasattr(raw, "__len__") else raw
            raise FormatError(
                "proxy cache",
                f"vlmeta {key!r}",
                None,
                f"bytes of length {_nbytes(nbits)} (one bit per {nbits} cells); "
                "open the proxy with mode='w' to rebuild it",
                got,
            )
        return bytes(raw)
