"""Decoded chunks an open HDF5 dataset keeps for its next reads, within a bound: HDF5's raw
data chunk cache, with h5py's knobs (``rdcc_nbytes``, ``rdcc_nslots``, ``rdcc_w0``).

pyblosc2 reads Blosc chunks through ``read_direct_chunk``, which bypasses HDF5's own cache;
this module is the same cache, on pyblosc2's side, one per :class:`~.dataset.Dataset`:

* A chunk is held while its decoded bytes fit: a chunk larger than ``nbytes`` is never held
  (HDF5: "the chunk is larger than the entire cache so we don't cache it"); ``nbytes`` or
  ``nslots`` of 0 hold nothing. The bytes held never exceed ``nbytes``: chunks are evicted
  before a new one is allocated.
* Each chunk has one of ``nslots`` slots (its C-order index in the chunk grid modulo
  ``nslots``); a chunk taking an occupied slot evicts the chunk there (HDF5 resolves no
  collisions either).
* To make room, held chunks are walked from the least recently used with HDF5's two
  pointers: the first evicts chunks read in full (as many bytes read out of them as they
  hold, HDF5's ``rd_count``), the second, started once the first has passed ``w0`` of the held
  chunks, evicts any. ``w0`` 0: least recently used first; 1: chunks read in full first.
  (HDF5 moves a chunk read again one place towards the end of its list; here it goes to the
  end: plain LRU order.)

A chunk is held from its second read on, if it comes while the chunk would still be held
(:meth:`ChunkCache.read_before`), or from a first read that decodes most of it anyway
(:mod:`.dataset` decides): a chunk read once is only noted (its read decodes just the blocks
it needs, the cheapest way: reads spread over many chunks, or cycling over more than the cache
holds, cost no more than without a cache), as the frames keep a block only when it is read
again (:mod:`pyblosc2.frame.heldblock`). h5py keeps a chunk from its first read.

A held chunk (:class:`HeldChunk`) is the chunk's items in C order (edge chunks whole, as
stored), decoded block by block as reads need them: ``done`` says which blocks are in
``items`` (Blosc blocks of bytes for flat chunks, b2nd blocks for b2nd chunks, one block
for chunks only decoded whole). A read whose blocks are all done is one numpy index of
``items``. :mod:`.chunkread` fills the blocks; :mod:`.dataset` decides when a held chunk is
still the stored one (see its docstring).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError

__all__ = ["NOTED_MAX", "CacheInfo", "CacheParams", "ChunkCache", "HeldChunk"]

#: chunks read once (not held) a cache remembers at most, least recently read forgotten first
NOTED_MAX = 1024

#: ``(address, size, filter mask)`` of a stored chunk in the file: what a held chunk was
#: decoded from
StoredId = tuple[int, int, int]


def parse_nbytes(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ParamError(f"rdcc_nbytes must be an int >= 0, got {value!r}")
    return int(value)


def parse_nslots(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ParamError(f"rdcc_nslots must be an int >= 0, got {value!r}")
    return int(value)


def parse_w0(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise ParamTypeError(f"rdcc_w0 must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ParamError(f"rdcc_w0 must be in [0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class CacheParams:
    """The bound of a dataset's cache: bytes, slots and the eviction weight ``w0``.

    >>> CacheParams.from_h5py_tuple((521, 1 << 20, 0.75)).replaced(nbytes=0).holds(1)
    False
    """

    nbytes: int
    nslots: int
    w0: float

    def __post_init__(self) -> None:
        parse_nbytes(self.nbytes)
        parse_nslots(self.nslots)
        parse_w0(self.w0)

    @classmethod
    def from_h5py_tuple(cls, values: tuple[int, int, float]) -> CacheParams:
        """From ``(nslots, nbytes, w0)`` as h5py's ``get_chunk_cache()`` gives them."""
        nslots, nbytes, w0 = values
        return cls(int(nbytes), int(nslots), float(w0))

    def replaced(
        self, nbytes: int | None = None, nslots: int | None = None, w0: float | None = None
    ) -> CacheParams:
        """These parameters with those given (not None) instead."""
        return CacheParams(
            self.nbytes if nbytes is None else parse_nbytes(nbytes),
            self.nslots if nslots is None else parse_nslots(nslots),
            self.w0 if w0 is None else parse_w0(w0),
        )

    def holds(self, nbytes: int) -> bool:
        """Whether a chunk of ``nbytes`` decoded bytes is ever held."""
        return self.nslots > 0 and 0 < nbytes <= self.nbytes


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """What a cache did: reads served from held chunks (``hits``), chunks taken into it
    (``added``) and evicted, chunks held now and their bytes, and the most bytes ever held."""

    hits: int
    added: int
    evicted: int
    held: int
    nbytes: int
    peak_nbytes: int


def _bounds(k: Any) -> tuple[int, int] | None:
    """The first and last index a chunk-local key selects on its axis (None: none)."""
    if isinstance(k, slice):
        n = len(range(k.start, k.stop, k.step))
        return None if n == 0 else (k.start, k.start + k.step * (n - 1))
    if isinstance(k, int | np.integer):
        return int(k), int(k)
    return None if len(k) == 0 else (int(k[0]), int(k[-1]))  # sorted index array


@dataclass(eq=False, slots=True)
class HeldChunk:
    """Chunk ``index``'s items decoded from the stored chunk ``stored``, in C order.

    ``done`` (None until the first read fills it): which blocks ``items`` holds, over the
    block grid: b2nd blocks of ``blocks`` items per axis, or (``blocks`` None) Blosc blocks
    of ``blocksize`` bytes of the C-ordered items (a chunk decoded whole: one block)."""

    index: tuple[int, ...]
    items: np.ndarray
    stored: StoredId
    slot: int
    done: np.ndarray | None = None
    blocks: tuple[int, ...] | None = None
    blocksize: int = 0
    #: every block is decoded
    complete: bool = False
    #: times blocks were decoded into it
    fills: int = 0
    #: bytes not yet read out of it (HDF5's ``rd_count``): 0 means read in full
    unread: int = field(default=0)

    def __post_init__(self) -> None:
        self.unread = self.items.nbytes

    @property
    def nbytes(self) -> int:
        return int(self.items.nbytes)

    @property
    def raw(self) -> np.ndarray:
        """``items`` as bytes, in C order."""
        return self.items.reshape(-1).view(np.uint8)

    def start_flat(self, nblocks: int, blocksize: int) -> None:
        """Lay out ``done`` (unless laid out) as ``nblocks`` Blosc blocks of ``blocksize``
        bytes of the C-ordered items."""
        if self.done is None:
            self.blocksize = blocksize
            self.done = np.zeros(nblocks, bool)

    def start_b2nd(self, blocks: tuple[int, ...]) -> None:
        """Lay out ``done`` (unless laid out) over the grid of b2nd blocks of shape
        ``blocks``."""
        if self.done is None:
            self.blocks = blocks
            self.done = np.zeros(_block_grid(self.items.shape, blocks), bool)

    def mark_all(self) -> None:
        """Every block is decoded (``done`` laid out as one block when not yet)."""
        self.start_flat(1, self.nbytes)
        assert self.done is not None
        self.done[...] = True
        self.complete = True
        self.fills += 1

    def covers(self, local: tuple[Any, ...]) -> bool:
        """Whether every block holding an item of the chunk-local key ``local`` (slices with
        positive steps, sorted index arrays, ints) is decoded: looked at over the span from
        its first to its last item on each axis (a hit is never wrong; a key whose span
        reaches undecoded blocks is read by :mod:`.chunkread`, which decodes exactly those
        it needs)."""
        if self.complete:
            return True
        done = self.done
        if done is None:
            return False
        firsts: list[int] = []
        lasts: list[int] = []
        for k in local:
            if type(k) is int:
                firsts.append(k)
                lasts.append(k)
                continue
            span = _bounds(k)
            if span is None:
                return True  # nothing selected
            firsts.append(span[0])
            lasts.append(span[1])
        blocks = self.blocks
        if blocks is not None:
            lo = [a // b for a, b in zip(firsts, blocks, strict=False)]
            hi = [z // b for z, b in zip(lasts, blocks, strict=False)]
            if lo == hi:  # one block
                return bool(done[tuple(lo)])
            return bool(done[tuple(slice(a, z + 1) for a, z in zip(lo, hi, strict=True))].all())
        shape = self.items.shape
        tail = self.items.itemsize * math.prod(shape[len(local) :])  # bytes per key item
        first = last = 0
        stride = tail
        for d in range(len(local) - 1, -1, -1):
            first += firsts[d] * stride
            last += lasts[d] * stride
            stride *= shape[d]
        bs = self.blocksize
        a, z = first // bs, (last + tail - 1) // bs
        return bool(done[a]) if a == z else bool(done[a : z + 1].all())

    def note_done(self, which: Any) -> None:
        """Blocks ``which`` (an index of ``done``) are now decoded."""
        assert self.done is not None
        self.done[which] = True
        self.fills += 1
        if self.done.all():
            self.complete = True


def _block_grid(shape: tuple[int, ...], blocks: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-(-n // b) for n, b in zip(shape, blocks, strict=False))


class ChunkCache:
    """The held chunks of one dataset (see the module docstring).

    >>> c = ChunkCache(CacheParams(nbytes=100, nslots=7, w0=0.0), grid=(4,))
    >>> for i in range(3):
    ...     _ = c.add((i,), (5,), np.dtype("f8"), (0, 0, 0))
    >>> c.get((0,)) is None, c.get((2,)) is not None, c.info().nbytes
    (True, True, 80)
    """

    def __init__(
        self, params: CacheParams, grid: tuple[int, ...], chunk_nbytes: int | None = None
    ) -> None:
        self.params = params
        self._strides = _strides(grid)
        self._held: OrderedDict[int, HeldChunk] = OrderedDict()  # by slot, oldest first
        #: chunks read and not held, least recently read first: as many as the cache holds
        #: chunks of ``chunk_nbytes`` (at most NOTED_MAX)
        self._noted: OrderedDict[tuple[int, ...], None] = OrderedDict()
        fit = params.nbytes // chunk_nbytes if chunk_nbytes else NOTED_MAX
        self._noted_max = max(1, min(NOTED_MAX, params.nslots, fit))
        #: the most recently used held chunk (the last of ``_held``), or None
        self._mru: HeldChunk | None = None
        self._lock = threading.Lock()
        self._used = 0
        self._peak = 0
        self._hits = self._added = self._evicted = 0

    # -- lookups ------------------------------------------------------------------------------
    def slot(self, index: tuple[int, ...]) -> int:
        lin = 0
        for i, s in zip(index, self._strides, strict=False):
            lin += i * s
        return lin % self.params.nslots if self.params.nslots else 0

    def get(self, index: tuple[int, ...]) -> HeldChunk | None:
        """The held chunk ``index`` (now the most recently used), or None."""
        mru = self._mru
        if mru is not None and mru.index == index:  # already the most recently used
            return mru
        slot = self.slot(index)
        held = self._held.get(slot)  # (a dict lookup is atomic)
        if held is None or held.index != index:
            return None
        with self._lock:
            if self._held.get(slot) is not held:  # evicted meanwhile
                return None
            self._held.move_to_end(slot)
            self._mru = held
            return held

    def holds(self, nbytes: int) -> bool:
        """Whether a chunk of ``nbytes`` decoded bytes would be held."""
        return self.params.holds(nbytes)

    def read_before(self, index: tuple[int, ...]) -> bool:
        """Whether chunk ``index`` (not held) was read recently: among the last chunks read
        that were not held, as many as the cache holds; it is noted now. A chunk is held from
        its second read on (one read of it decodes only the blocks it needs, the cheapest way,
        picking single items out of them, as the frames' kept block does:
        :mod:`pyblosc2.frame.heldblock`), if that read comes soon enough for the chunk to
        have still been held: reads cycling over more chunks than the cache holds would only
        take chunks in to evict them unread, and keep the cheapest reads.

        >>> c = ChunkCache(CacheParams(nbytes=200, nslots=7, w0=0.75), (9,), chunk_nbytes=100)
        >>> [c.read_before((i,)) for i in (0, 1, 0, 2, 3, 0)]
        [False, False, True, False, False, False]
        """
        with self._lock:
            seen = index in self._noted
            self._noted[index] = None
            self._noted.move_to_end(index)
            if len(self._noted) > self._noted_max:
                self._noted.popitem(last=False)
            return seen

    # -- changes ------------------------------------------------------------------------------
    def add(
        self, index: tuple[int, ...], shape: tuple[int, ...], dtype: np.dtype, stored: StoredId
    ) -> HeldChunk:
        """Hold a new array of ``shape`` and ``dtype`` (nothing decoded into it yet) as chunk
        ``index``, decoded from ``stored``: what must go is evicted before it is allocated.
        The caller checked :meth:`holds`."""
        nbytes = math.prod(shape) * dtype.itemsize
        if not self.params.holds(nbytes):
            raise ParamError(f"a chunk of {nbytes} bytes is not held by {self.params}")
        with self._lock:
            slot = self.slot(index)
            old = self._held.get(slot)
            if old is not None:
                self._evict(old)
            self._prune(nbytes)
            held = HeldChunk(index, np.empty(shape, dtype), stored, slot)
            self._held[slot] = held
            self._mru = held
            self._used += nbytes
            self._peak = max(self._peak, self._used)
            self._added += 1
            return held

    def read(self, held: HeldChunk, nbytes: int, hit: bool) -> None:
        """``nbytes`` were read out of ``held`` (a read served whole from it when ``hit``)."""
        held.unread = max(0, held.unread - nbytes)
        if hit:
            self._hits += 1

    def drop(self, index: tuple[int, ...]) -> None:
        """Forget chunk ``index`` (its stored bytes changed, or may have)."""
        with self._lock:
            held = self._held.get(self.slot(index))
            if held is not None and held.index == index:
                self._evict(held)

    def discard(self, held: HeldChunk) -> None:
        """Forget ``held`` if it is still held (a read of it failed half-way)."""
        with self._lock:
            if self._held.get(held.slot) is held:
                self._evict(held)

    def clear(self, grid: tuple[int, ...] | None = None) -> None:
        """Forget every held chunk (and take the chunk grid ``grid`` for the slots)."""
        with self._lock:
            self._noted.clear()
            for held in list(self._held.values()):
                self._evict(held)
            if grid is not None:
                self._strides = _strides(grid)

    def info(self) -> CacheInfo:
        return CacheInfo(
            self._hits, self._added, self._evicted, len(self._held), self._used, self._peak
        )

    def __len__(self) -> int:
        return len(self._held)

    @property
    def held_any(self) -> bool:
        """Whether any chunk is held."""
        return bool(self._held)

    # -- eviction (under the lock) --------------------------------------------------------------
    def _evict(self, held: HeldChunk) -> None:
        if self._mru is held:
            self._mru = None
        del self._held[held.slot]
        self._used -= held.nbytes
        self._evicted += 1

    def _prune(self, nbytes: int) -> None:
        """Evict until ``nbytes`` more fit: HDF5's two pointers over the LRU order (the
        first evicts chunks read in full; the second starts after ``w0`` of the held chunks
        and evicts any; each gets a turn before both move on)."""
        limit = self.params.nbytes - nbytes
        if self._used <= limit:
            return
        order = list(self._held.values())
        n = len(order)
        alive = [True] * n

        def live(p: int | None) -> int | None:
            while p is not None and p < n and not alive[p]:
                p += 1
            return p if p is not None and p < n else None

        w = int(n * self.params.w0)
        ptr: list[int | None] = [0, None]
        while self._used > limit and (ptr[0] is not None or ptr[1] is not None):
            if w == 0:
                ptr[1] = live(0)
            for method in (0, 1):
                q = live(ptr[method])
                if self._used <= limit or q is None:
                    continue
                if method == 1 or order[q].unread == 0:
                    alive[q] = False
                    self._evict(order[q])
            ptr = [None if p is None else live(p + 1) for p in ptr]
            w -= 1
        # HDF5's walk can end before making room (w0 near 1, no chunk read in full) and then
        # goes over its bound; here the least recently used go
        for q in range(n):
            if self._used <= limit:
                break
            if alive[q]:
                alive[q] = False
                self._evict(order[q])


def _strides(grid: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    s = 1
    for n in reversed(grid):
        out.append(s)
        s *= max(n, 1)
    return tuple(reversed(out))
