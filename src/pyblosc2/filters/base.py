"""The filter protocol: a reversible (or lossy) transform of one block, keyed by filter id.

Filters run per block (spec §9.0): compression applies slots 0→5, decompression undoes 5→0.
Every filter reads a 1-D ``uint8`` array and writes a preallocated one of the same length;
``src`` and ``dst`` never alias.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

if TYPE_CHECKING:
    from ..context import ChunkContext

__all__ = ["BaseFilter", "FilterContext"]


@dataclass(frozen=True, slots=True)
class FilterContext:
    """What a filter may know about the block it transforms.

    ``typesize`` is the chunk's (capped) typesize, ``meta`` the slot's ``filters_meta`` byte
    (0-255, filters that take a signed value reinterpret it), ``version`` the chunk format
    version (2 = written by C-Blosc 1.x), ``ref`` the DELTA reference: ``None`` for the first
    block (which is its own reference), else block 0 of the *unfiltered input* when compressing
    and of the *decoded output* when decompressing (spec §9.3).
    """

    typesize: int
    meta: int = 0
    version: int = 5
    ref: np.ndarray | None = None


class BaseFilter(ABC):
    """A Blosc filter."""

    id: ClassVar[int]
    name: ClassVar[str]
    #: a lossy filter drops information when compressing and has nothing to undo when
    #: decompressing (its backward step is a copy, which the pipeline skips); DELTA must not
    #: follow one (spec §9.3)
    lossy: ClassVar[bool] = False
    #: the forward step drops information even though decoding has work to do (NDMEAN): DELTA
    #: must not follow it either
    drops_data: ClassVar[bool] = False

    def bound(self, ctx: ChunkContext | None) -> BaseFilter:
        """This filter for the chunks of one super-chunk ``ctx`` (None: a chunk on its own).

        Filters that need the super-chunk (NDCELL and NDMEAN read its ``b2nd`` metalayer, user
        filters receive it) return a copy bound to it; the others return themselves."""
        return self

    def check(self, typesize: int, meta: int) -> None:  # noqa: B027 - optional hook
        """Raise :class:`~pyblosc2.errors.ParamError` if this filter cannot compress with
        these parameters (called once per chunk before compressing)."""

    @abstractmethod
    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        """Filter ``src`` into ``dst`` (compression direction)."""

    @abstractmethod
    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        """Undo the filter from ``src`` into ``dst`` (decompression direction)."""

    def __repr__(self) -> str:
        return f"<filter {self.name} id={self.id}>"
