"""How a frame changes (frame-format.md §2.7, §4.3, §4.7): the chunk-size plan of a new chunk
list, where new chunk bytes go (a placement), and the contiguous commit.

A mutation is described by ``refs``, the new logical chunk list: an ``int`` keeps stored chunk
``k`` where it is, ``bytes`` is a new chunk. A placement puts each new chunk's bytes somewhere
no live offset points (the end of a contiguous frame's data area; a fresh object id in a sparse
frame) and returns the offset to record; the commit then makes the new index live.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.header import OFF_CBYTES, ChunkHeader
from ..constants import SpecialValue
from ..errors import FormatError, ParamError
from .header import FrameHeader
from .index import STORABLE_SPECIALS
from .writer import encode_index

__all__ = [
    "ContiguousPlacement",
    "Placement",
    "Plan",
    "SparsePlacement",
    "check_chunk",
    "first_chunksize",
    "index_bytes",
    "plan_chunks",
    "special_kind",
]

Ref = int | bytes


def check_chunk(chunk: bytes, layout: bool = True) -> ChunkHeader:
    """The header of a chunk given to a mutation: whole, and not empty (a frame has no way to
    hold a chunk of 0 bytes, §2.7); ``layout=False`` skips the check of the rest of its
    structure (a chunk pyblosc2's encoder has just written)."""
    ch = ChunkHeader.from_bytes(chunk)
    if ch.cbytes > len(chunk):
        raise FormatError("chunk header", "cbytes", OFF_CBYTES, f"at most {len(chunk)}", ch.cbytes)
    if ch.nbytes == 0:
        raise ParamError("cannot store an empty chunk in an SChunk")
    if layout:
        ChunkReader.open(chunk)  # the rest of the chunk-level structure must be valid too
    return ch


def special_kind(ch: ChunkHeader) -> SpecialValue | None:
    """The special value a chunk can be recorded as, if any."""
    return SpecialValue(ch.special) if ch.special in STORABLE_SPECIALS else None


def first_chunksize(nbytes: int, requested: int | None) -> int:
    """The chunk size a frame gets from its first chunk: the size the container was created
    with when that chunk fits (a short first chunk, as python-blosc2 reports), else the chunk's
    own size (as C-Blosc2 sets it for frames it did not create)."""
    return requested if requested and nbytes <= requested else nbytes


@dataclass(frozen=True, slots=True)
class Plan:
    """Sizes and special kinds of a new chunk list, and the frame's resulting chunk size."""

    sizes: list[int]
    kinds: list[SpecialValue | None]
    chunksize: int


def plan_chunks(
    header: FrameHeader, old_sizes: Sequence[int], refs: Sequence[Ref], requested: int | None
) -> Plan:
    """The plan of ``refs``: a fixed chunk size while the sizes are regular (all equal but a
    shorter last one), else variable (0), as in C-Blosc2 (§2.7)."""
    sizes: list[int] = []
    kinds: list[SpecialValue | None] = []
    checked: dict[int, ChunkHeader] = {}  # a chunk object repeated (fill_special) is checked once
    for ref in refs:
        if isinstance(ref, bytes):
            ch = checked.get(id(ref))
            if ch is None:
                ch = checked[id(ref)] = check_chunk(ref)
            sizes.append(ch.nbytes)
            kinds.append(special_kind(ch))
        else:
            sizes.append(old_sizes[ref])
            kinds.append(None)
    cs = header.chunksize
    if cs < 0:
        cs = first_chunksize(sizes[0], requested) if sizes else 0
    elif cs == 0 and sizes:
        cs = sizes[0]  # sizes that became regular again make the frame fixed-size again
    regular = (
        cs > 0 and sizes[:-1].count(cs) == len(sizes[:-1]) and (not sizes or 0 < sizes[-1] <= cs)
    )
    return Plan(sizes, kinds, cs if regular else (0 if sizes else header.chunksize))


@dataclass(slots=True)
class ContiguousPlacement:
    """New chunks go, in order, after the end of the data area (``start`` = its size)."""

    start: int
    placed: dict[int, bytes] = field(default_factory=dict)
    end: int = -1

    def __post_init__(self) -> None:
        self.end = self.start

    def place(self, raw: bytes) -> int:
        off, self.end = self.end, self.end + len(raw)
        self.placed[off] = raw
        return off

    @property
    def data(self) -> bytes:
        """Everything placed, in order: the bytes to write at ``start``."""
        return b"".join(self.placed.values())


@dataclass(slots=True)
class SparsePlacement:
    """New chunks become new objects with ids after every id in use."""

    next_id: int
    placed: dict[int, bytes] = field(default_factory=dict)

    def place(self, raw: bytes) -> int:
        cid, self.next_id = self.next_id, self.next_id + 1
        self.placed[cid] = raw
        return cid


Placement = ContiguousPlacement | SparsePlacement


def index_bytes(offsets: np.ndarray) -> bytes:
    """The index chunk of ``offsets`` (none for an empty frame)."""
    return encode_index(offsets) if len(offsets) else b""
