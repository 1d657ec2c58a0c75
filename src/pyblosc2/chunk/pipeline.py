"""Running a block through the filter pipeline, forward and backward (spec §9.0).

Slots run 0→5 when compressing and 5→0 when decompressing; empty slots are skipped. Forward,
each filter writes a fresh array. Backward, lossy filters (whose backward step is a copy) are
skipped and the others ping-pong between the source block and one scratch array, the last
writing straight into the caller's output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._threads import scratch
from ..constants import Filter
from ..filters.base import BaseFilter, FilterContext

__all__ = ["Pipeline", "scratch_pair"]


@dataclass(frozen=True, slots=True)
class Pipeline:
    """The active (filter, meta) steps of a chunk, slot order."""

    steps: tuple[tuple[BaseFilter, int], ...]
    typesize: int
    version: int
    #: the steps decoding runs, last slot first, lossy ones (nothing to undo) left out
    backward_steps: tuple[tuple[BaseFilter, int], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        backward = tuple((f, m) for f, m in reversed(self.steps) if not f.lossy)
        object.__setattr__(self, "backward_steps", backward)

    @property
    def has_delta(self) -> bool:
        return any(f.id == Filter.DELTA for f, _ in self.steps)

    def forward(self, block: np.ndarray, ref: np.ndarray | None) -> np.ndarray:
        """Filter one block; returns a new array (never ``block`` itself unless no filter)."""
        cur = block
        for flt, meta in self.steps:
            out = np.empty_like(block)
            flt.forward(cur, out, FilterContext(self.typesize, meta, self.version, ref))
            cur = out
        return cur

    def backward(
        self,
        src: np.ndarray,
        dst: np.ndarray,
        ref: np.ndarray | None,
        scratch: np.ndarray | None = None,
    ) -> None:
        """Undo the filters of ``src`` into ``dst``; ``src`` may be overwritten (scratch use)."""
        steps = self.backward_steps
        if not steps:
            if src is not dst:
                dst[:] = src
            return
        cur = src
        for i, (flt, meta) in enumerate(steps):
            last = i == len(steps) - 1
            if last:
                out = dst
            elif cur is src:
                out = (
                    scratch
                    if scratch is not None and len(scratch) >= len(src)
                    else np.empty_like(src)
                )
                out = out[: len(src)]
            else:
                out = src  # ping-pong back into the source buffer
            flt.backward(cur, out, FilterContext(self.typesize, meta, self.version, ref))
            cur = out


def scratch_pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    """This thread's two block-sized work buffers (decoded streams, filter ping-pong)."""
    return scratch(n, "block"), scratch(n, "block-aux")
