"""The chunk-list and item edits of an SChunk (python-blosc2's ``insert_chunk``,
``update_data``, ``delete_chunk``, ``reorder_offsets``, ``fill_special``, slice assignment),
each expressed as one new chunk list committed by ``set_chunks``.

Each edit runs inside one write hold of the frame (:func:`.guards.writes`): the chunk count,
sizes and contents it decides from are read under the same lock as its commit, so an edit
never drops what another handle wrote meanwhile (data is compressed before the hold)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np

from .._bytes import as_view
from ..chunk.special import make_special_chunk
from ..constants import SpecialValue
from ..errors import BoundsError, OrderError, ParamError
from ..params import parse_fill_value, parse_int
from .guards import writes

__all__ = ["MAX_FILL_CHUNKS", "ChunkListEdits"]

#: the most chunks one fill_special call makes (a 32 MiB index; 64 TiB with 16 MiB chunks):
#: a bound on the work and memory a single call can ask for
MAX_FILL_CHUNKS = 1 << 22


class _Host(Protocol):
    """The SChunk primitives the edits are made of."""

    @property
    def nchunks(self) -> int: ...
    @property
    def typesize(self) -> int: ...
    @property
    def chunksize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def variable_chunks(self) -> bool: ...
    def set_chunks(self, refs: list[int | bytes], meta: dict[str, bytes] | None = None) -> int: ...
    def compress_data(self, data: Any, nchunk: int | None = None) -> bytes: ...
    def _chunk_index(self, n: int) -> int: ...
    def decompress_chunk(self, nchunk: int, dst: Any = None) -> bytes | None: ...
    def append_data(self, data: Any) -> int: ...
    def update_data(self, nchunk: int, data: Any, copy: bool) -> int: ...
    def update_chunk(self, nchunk: int, chunk: Any) -> int: ...
    def insert_chunk(self, nchunk: int, chunk: Any) -> int: ...
    def holding_lock(self) -> AbstractContextManager[Any]: ...
    def _write_items(self, data: np.ndarray, start: int, stop: int) -> None: ...


class ChunkListEdits:
    """Mixed into :class:`~pyblosc2.schunk.SChunk`, whose primitives (:class:`_Host`) it
    uses."""

    # -- edits ------------------------------------------------------------------------------
    @writes
    def insert_chunk(self: _Host, nchunk: int, chunk: Any) -> int:
        """Insert a compressed chunk before position ``nchunk``."""
        if not 0 <= nchunk <= self.nchunks:
            raise BoundsError(f"nchunk {nchunk} out of range 0..{self.nchunks}")
        refs: list[int | bytes] = list(range(self.nchunks))
        refs.insert(nchunk, bytes(as_view(chunk)))
        return self.set_chunks(refs)

    def insert_data(self: _Host, nchunk: int, data: Any, copy: bool) -> int:
        """Compress ``data`` and insert it as chunk ``nchunk``."""
        return self.insert_chunk(nchunk, self.compress_data(data, nchunk))

    @writes
    def update_chunk(self: _Host, nchunk: int, chunk: Any) -> int:
        """Replace chunk ``nchunk`` by a compressed chunk."""
        n = self._chunk_index(nchunk)
        refs: list[int | bytes] = list(range(self.nchunks))
        refs[n] = bytes(as_view(chunk))
        return self.set_chunks(refs)

    def update_data(self: _Host, nchunk: int, data: Any, copy: bool) -> int:
        """Compress ``data`` and make it chunk ``nchunk``."""
        if self.nchunks == 0:
            return 0
        chunk = self.compress_data(data, nchunk)
        with self.holding_lock():
            return self.update_chunk(nchunk, chunk) if self.nchunks else 0

    @writes
    def delete_chunk(self: _Host, nchunk: int) -> int:
        """Remove chunk ``nchunk``."""
        n = self._chunk_index(nchunk)
        return self.set_chunks([k for k in range(self.nchunks) if k != n])

    @writes
    def reorder_offsets(self: _Host, order: Any) -> None:
        """Permute the chunks: new chunk ``i`` is old chunk ``order[i]``."""
        order = np.asarray(order)
        if order.ndim != 1 or len(order) != self.nchunks:
            raise ParamError(f"order must be a permutation of range({self.nchunks})")
        if sorted(order.tolist()) != list(range(self.nchunks)):
            raise OrderError(f"order must be a permutation of range({self.nchunks}), got {order}")
        self.set_chunks([int(k) for k in order])

    @writes
    def fill_special(
        self: _Host, nitems: int, special_value: SpecialValue | int, value: Any = None
    ) -> int:
        """Fill an empty SChunk with ``nitems`` items of a special value."""
        if self.nchunks:
            raise ParamError("fill_special needs an empty SChunk")
        kind = SpecialValue(special_value)
        if (value is None) != (kind != SpecialValue.VALUE):
            raise ParamError("value is needed for (and only for) SpecialValue.VALUE")
        nitems = parse_int(nitems, "nitems", 0)
        ts, cs = self.typesize, self.chunksize
        if value is not None:  # python-blosc2's conversion of ints/floats to typesize bytes
            value = np.frombuffer(parse_fill_value(value, ts), np.uint8)
        total = nitems * ts
        nchunks = -(-total // cs)
        if nchunks > MAX_FILL_CHUNKS:
            raise ParamError(
                f"fill_special of {nitems} items needs {nchunks} chunks of {cs} bytes; "
                f"at most {MAX_FILL_CHUNKS} are made in one call (use a larger chunksize)"
            )
        full = make_special_chunk(kind, cs, ts, value) if total >= cs else b""
        chunks: list[int | bytes] = [full] * (total // cs)
        if total % cs:
            chunks.append(make_special_chunk(kind, total % cs, ts, value))
        return self.set_chunks(chunks)

    def __setitem__(self: _Host, key: slice, value: Any) -> None:
        """Write items ``key.start:key.stop``; writing past the end grows the SChunk."""
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise BoundsError("only slices with step 1 are supported")
        data = np.frombuffer(as_view(value), np.uint8)
        first = parse_int(key.start or 0, "start")
        last = None if key.stop is None else parse_int(key.stop, "stop")
        with self.holding_lock():  # the size, and the chunks rewritten: read under one lock
            ts = self.typesize
            n = self.nbytes // ts
            first += n if first < 0 else 0  # negative positions count from the end
            start = first * ts
            stop = start + len(data) if last is None else (last + n if last < 0 else last) * ts
            if stop - start != len(data):
                raise ParamError(f"value has {len(data)} bytes, the slice needs {stop - start}")
            if self.variable_chunks and self.nchunks:
                raise NotImplementedError("__setitem__ on variable-size SChunks")
            if start < 0 or start > self.nbytes:
                raise BoundsError(
                    f"slice start {start // ts} is outside 0..{self.nbytes // ts} (writes past "
                    "the end must start at the current end)"
                )
            self._write_items(data, start, stop)

    def _write_items(self: _Host, data: np.ndarray, start: int, stop: int) -> None:
        """Recompress the chunks the items touch and append the ones past the end, all in
        one commit (a crash leaves all or none of the write)."""
        cs = self.chunksize
        refs: list[int | bytes] = list(range(self.nchunks))
        pos = start
        while pos < stop:
            k, within = divmod(pos, cs)
            take = min(cs - within, stop - pos)
            piece = data[pos - start : pos - start + take]
            if k < self.nchunks:
                cur = np.frombuffer(self.decompress_chunk(k) or b"", np.uint8).copy()
                need = within + take
                if len(cur) < need:
                    cur = np.concatenate([cur, np.zeros(need - len(cur), np.uint8)])
                cur[within : within + take] = piece
                refs[k] = self.compress_data(cur, k)
            else:
                refs.append(self.compress_data(piece, len(refs)))
            pos += take
        self.set_chunks(refs)
