"""How a :class:`~pyblosc2.Proxy` fills its cache: fetching from the source, then committing.

Fetches run outside any lock (they are the slow part: a network round trip each), overlapped
in a thread pool up to ``max_concurrency``; what arrived is committed in batches of at most
:data:`BATCH_BYTES`, each under one hold of the cache's frame for writing (with locking, C-Blosc2's
exclusive frame lock, shared with python-blosc2 processes). A commit first re-reads what the
cache holds (another process may have filled or evicted chunks since), stores what is still
missing, and then records it: chunk bytes first, the bitmap after (:mod:`.bitmap`), so a
process killed between the two leaves a cache that refetches rather than one that serves
bytes it never stored. Two processes fetching the same chunk both store it; the bytes are the
same (the source's stamp says so), and the second finds it held and skips it.

A source that serves single blocks (the block protocol, see :mod:`.sources`) is asked only for
the blocks a key touches when it says that pays (``wants_blocks``); those are spliced into the
cached chunk beside the blocks it already holds (:mod:`.splice`).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..chunk.header import ChunkHeader
from ..chunk.special import special_chunk
from ..constants import SpecialValue
from .bitmap import BPC_KEY, DIRTY_KEY, INDEX_KEY, FetchedMap
from .cache import check_chunk, nd_blocksize, special_chunks, uninit_chunks
from .sources import NotRanged
from .splice import chunk_payloads, needs_block0, splice_chunk

__all__ = ["BATCH_BYTES", "BLOCK_HOT_CHUNKS", "Filler"]

#: fetched bytes held before they are committed to the cache
BATCH_BYTES = 1 << 25
#: partly filled chunks whose blocks are kept in memory for the next splice
BLOCK_HOT_CHUNKS = 8


@dataclass
class _Batch:
    whole: dict[int, bytes] = field(default_factory=dict)
    parts: dict[int, tuple[bytes, dict[int, bytes]]] = field(default_factory=dict)
    nbytes: int = 0


def run_tasks(func: Callable[[Any], Any], tasks: list[Any], workers: int) -> Iterator[Any]:
    """``func(task)`` for every task, in order, ``workers`` at a time."""
    if workers <= 1 or len(tasks) < 2:
        yield from map(func, tasks)
        return
    pool = ThreadPoolExecutor(max_workers=min(workers, len(tasks)))
    try:
        yield from pool.map(func, tasks)
    finally:
        pool.shutdown(cancel_futures=True)


def _runs(blocks: list[int]) -> int:
    """How many runs of consecutive numbers ``blocks`` (sorted) has."""
    return 1 + sum(b != a + 1 for a, b in itertools.pairwise(blocks))


class Filler:
    """The filling half of :class:`~pyblosc2.Proxy` (a mixin: the proxy holds the state)."""

    src: Any
    _cache: Any
    _schunk_cache: Any
    _map: FetchedMap
    _bpc: int
    _stamped: bool
    _saved_index: Any
    _hot: dict[int, tuple[dict[int, bytes], bytes]]
    _seen_version: int
    _evict_version: int

    # -- what the cache holds ----------------------------------------------------------------
    @property
    def _shared(self) -> bool:
        return self._schunk_cache.urlpath is not None

    def _reading(self) -> contextlib.AbstractContextManager[Any]:
        return (
            self._schunk_cache.holding_shared_lock() if self._shared else contextlib.nullcontext()
        )

    def _refresh_map(self, writing: bool = False) -> None:
        """Bring the bitmap up to what the cache holds now (inside a hold): re-read when
        another handle may have changed it, then drop evicted chunks."""
        s = self._schunk_cache
        version = s._frame.version
        if self._shared and version != self._seen_version:
            vlmeta = s.vlmeta
            if DIRTY_KEY in vlmeta:  # a python-blosc2 writer died mid-change: trust nothing
                self._map.bits[...] = False
                if writing:
                    del vlmeta[DIRTY_KEY]
                    self._save_map(force=True)
            else:
                self._map.load(vlmeta, special_chunks(s) if self._bpc == 1 else None)
            self._seen_version = s._frame.version
        if s._frame.version != self._evict_version:  # evicting changes the frame: look then
            self._map.evict(uninit_chunks(s))
            self._evict_version = s._frame.version

    def _save_map(self, force: bool = False) -> None:
        """Record the bitmap (and what the source kept of where things are) in the cache's
        vlmeta, in one commit."""
        vlmeta = self._schunk_cache.vlmeta
        updates: dict[str, Any] = {self._map.key: self._map.to_bytes()}
        if self._bpc > 1 and (force or vlmeta.get(BPC_KEY) != self._bpc):
            updates[BPC_KEY] = self._bpc
        state = getattr(self.src, "_index_state", None)
        if state is not None and self._stamped:
            index = state(self._map.partly_filled())
            if index != self._saved_index:
                updates[INDEX_KEY] = index
                self._saved_index = index
        vlmeta.update_all(updates)
        self._seen_version = self._schunk_cache._frame.version

    def _chunk_nbytes(self, n: int) -> int:
        s = self._schunk_cache
        if s.nbytes and n == s.nchunks - 1 and s.nbytes % s.chunksize:
            return int(s.nbytes % s.chunksize)
        return int(s.chunksize)

    # -- fetching ----------------------------------------------------------------------------
    def _workers(self, max_concurrency: int | None) -> int:
        if max_concurrency is None:
            max_concurrency = getattr(self.src, "max_concurrency", 1)
        return max(int(max_concurrency), 1)

    def _fill(self, missing: dict[int, list[int]], max_concurrency: int | None) -> None:
        """Fetch what ``missing`` (chunk -> blocks absent) names and commit it."""
        workers = self._workers(max_concurrency)
        if self._bpc > 1:
            try:
                self._fill_blocks(missing, workers)
                return
            except NotRanged:
                with self._reading():
                    self._refresh_map()
                    missing = {n: b for n, b in missing.items() if not self._map.complete(n)}
        self._fill_whole(list(missing), workers)

    def _fill_whole(self, chunks: list[int], workers: int) -> None:
        batch = _Batch()
        try:
            for n, chunk in zip(
                chunks, run_tasks(self.src.get_chunk, chunks, workers), strict=True
            ):
                batch.whole[n] = self._checked(n, chunk)
                batch.nbytes += len(batch.whole[n])
                if batch.nbytes >= BATCH_BYTES:
                    self._commit(batch)
                    batch = _Batch()
        finally:
            self._commit(batch)

    def _asked(self, missing: dict[int, list[int]]) -> dict[int, list[int]]:
        """The chunks the source wants taken apart, with the blocks asked of each."""
        wants = self.src.wants_blocks
        if getattr(self.src, "wants_wave", False):
            wave = (
                {n: len(b) for n, b in missing.items()}
                if getattr(self.src, "max_ranges", 1) > 1
                else None
            )
            return {n: b for n, b in missing.items() if wants(n, len(b), wave, _runs(b))}
        return {n: b for n, b in missing.items() if wants(n, len(b))}

    def _layouts(self, chunks: list[int], workers: int) -> list[Any]:
        many = getattr(self.src, "chunk_layouts", None)
        if many is None:
            return list(run_tasks(self.src.chunk_layout, chunks, workers))
        size = max(getattr(self.src, "max_ranges", 1), 1)
        tasks = [chunks[i : i + size] for i in range(0, len(chunks), size)]
        return [lay for got in run_tasks(many, tasks, workers) for lay in got]

    def _fill_blocks(self, missing: dict[int, list[int]], workers: int) -> None:
        wanted = self._asked(missing)
        whole = [n for n in missing if n not in wanted]
        layouts = dict(zip(wanted, self._layouts(list(wanted), workers), strict=True))
        whole += [n for n, lay in layouts.items() if lay is None]
        blocks: dict[int, list[int]] = {}
        for n, lay in layouts.items():
            if lay is None:
                continue
            want = list(wanted[n])
            delta = needs_block0(ChunkHeader.from_bytes(lay.header))
            if delta and 0 not in want and not self._map.bits[n, 0]:
                want.insert(0, 0)  # DELTA blocks decode against block 0
            blocks[n] = sorted(want)
        runs = [(n, run) for n in blocks for run in self.src.block_plan(n, blocks[n])]
        size = max(getattr(self.src, "max_ranges", 1), 1)
        tasks: list[tuple[tuple[int, Any], ...]] = [((n, None),) for n in whole]
        tasks += [tuple(runs[i : i + size]) for i in range(0, len(runs), size)]
        read_ranges = getattr(self.src, "read_ranges", None)

        def fetch(task: tuple[tuple[int, Any], ...]) -> list[bytes]:
            if task[0][1] is None:
                return [self.src.get_chunk(task[0][0])]
            spans = [(run[0], run[1]) for _, run in task]
            if read_ranges is None:
                return [self.src.read_range(*span) for span in spans]
            return list(read_ranges(spans))

        batch = _Batch()
        pending: dict[int, dict[int, bytes]] = {}  # chunk -> the blocks arrived so far
        try:
            for task, answers in zip(tasks, run_tasks(fetch, tasks, workers), strict=True):
                for (n, run), data in zip(task, answers, strict=True):
                    if run is None:
                        batch.whole[n] = self._checked(n, data)
                        batch.nbytes += len(data)
                        continue
                    got = pending.setdefault(n, {})
                    for j, offset, nbytes in run[2]:
                        piece = bytes(data[offset : offset + nbytes])
                        if len(piece) != nbytes:
                            raise NotRanged(
                                f"block {j} of chunk {n}: {len(piece)} of {nbytes} bytes"
                            )
                        got[j] = piece
                    if len(got) == len(blocks[n]):
                        batch.parts[n] = (layouts[n].header, pending.pop(n))
                        batch.nbytes += sum(len(p) for p in got.values())
                if batch.nbytes >= BATCH_BYTES:
                    self._commit(batch)
                    batch = _Batch()
        finally:
            self._commit(batch)

    # -- committing --------------------------------------------------------------------------
    def _checked(self, n: int, chunk: Any) -> bytes:
        """Source chunk ``n`` checked to fit the cache; a chunk never written (uninit) is
        stored as zeros, so an uninitialized chunk in the cache always means *not fetched*."""
        raw = check_chunk(
            chunk, n, self._chunk_nbytes(n), self._schunk_cache.typesize, nd_blocksize(self._cache)
        )
        h = ChunkHeader.from_bytes(raw)
        if h.special == SpecialValue.UNINIT:
            return special_chunk(SpecialValue.ZERO, h.nbytes, h.typesize, h.blocksize)
        return raw

    def _commit(self, batch: _Batch) -> None:
        """Store what ``batch`` holds that the cache still lacks, in one commit of its frame,
        then record it (the bits are set only once the bytes are stored)."""
        if not batch.whole and not batch.parts:
            return
        s = self._schunk_cache
        with s.holding_lock():
            self._refresh_map(writing=True)
            refs: list[int | bytes] = list(range(s.nchunks))
            marks: list[tuple[int, list[int] | None]] = []
            hot: dict[int, dict[int, bytes]] = {}
            for n, chunk in batch.whole.items():
                if not self._map.complete(n):
                    refs[n] = chunk
                    marks.append((n, None))
            for n, (header, payloads) in batch.parts.items():
                new = {j: p for j, p in payloads.items() if not self._map.bits[n, j]}
                if not new or self._map.complete(n):
                    continue
                kept = self._held_payloads(n)
                kept.update(new)
                refs[n] = splice_chunk(header, kept)
                marks.append((n, list(new)))
                hot[n] = kept
            if not marks:
                return
            s.set_chunks(refs)
            for n, blocks in marks:
                self._map.mark(n, blocks)
                self._hot.pop(n, None)
            for n, kept in hot.items():
                self._keep_hot(n, kept)
            self._save_map()

    def _held_payloads(self, n: int) -> dict[int, bytes]:
        """The stored bytes of the blocks the cache holds of chunk ``n``."""
        held = self._map.held(n)
        if not held:
            return {}
        hot = self._hot.pop(n, None)
        if hot is not None and hot[1] == self._map.bits[n].tobytes():
            return hot[0]
        return chunk_payloads(self._schunk_cache.get_chunk(n), held)

    def _keep_hot(self, n: int, kept: dict[int, bytes]) -> None:
        if self._map.complete(n):
            self._hot.pop(n, None)
            return
        self._hot[n] = (kept, self._map.bits[n].tobytes())
        while len(self._hot) > BLOCK_HOT_CHUNKS:
            self._hot.pop(next(iter(self._hot)))

    def _missing(self, wanted: dict[int, list[int] | None]) -> dict[int, list[int]]:
        """Of ``wanted`` (chunk -> blocks, None: all), what the cache does not hold."""
        out = {}
        for n, blocks in wanted.items():
            absent = self._map.missing(n, blocks)
            if absent:
                out[n] = absent
        return out
