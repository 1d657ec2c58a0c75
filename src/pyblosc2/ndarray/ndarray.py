"""NDArray: a typed N-d array stored in a super-chunk with the ``b2nd`` metalayer
(frame-format.md §8.3-§8.5).

A chunk's decompressed buffer is its blocks in C order over the block grid, each block a
C-contiguous ``blocks``-shaped array; chunks are padded to whole blocks and the array to whole
chunks (padding is written as zeros). Reads decode only the chunks a selection intersects;
writes recompress only the chunks they touch.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.encode import EncodeSpec
from ..chunk.layout import ChunkKind
from ..chunk.reencode import encode_changed_blocks
from ..chunk.special import make_special_chunk
from ..constants import SpecialValue
from ..errors import ParamError
from ..frame.location import put_cframe, whole_at_url
from .blocklayout import buffer_to_chunk, chunk_to_buffer
from .build import copy_of
from .fancy import getitem, setitem
from .geometry import Geometry, ShapeLike, resize_plan
from .indexing import parse_key, selection_box
from .lazyhook import engine
from .linalg_members import NDArrayLinalg
from .members import NDArrayMembers
from .operand import Operand
from .reader import read_box, read_point, read_selection

if TYPE_CHECKING:
    from ..schunk import SChunk

__all__ = ["ChunkInfoNDArray", "NDArray", "ShapeLike"]


@dataclass(frozen=True, slots=True)
class ChunkInfoNDArray:
    """What :meth:`NDArray.iterchunks_info` yields (python-blosc2's field order)."""

    nchunk: int
    coords: tuple[int, ...]
    cratio: float
    special: SpecialValue
    repeated_value: bytes | None
    lazychunk: bool


class NDArray(NDArrayMembers, NDArrayLinalg, Operand):
    """An N-d array in a super-chunk (its state and basic properties:
    :class:`~.core.ArrayCore`; the constructors: :mod:`.constructors`).

    >>> from pyblosc2 import asarray
    >>> a = asarray(np.arange(35, dtype=np.int16).reshape(5, 7), chunks=(3, 4), blocks=(2, 3))
    >>> a[1:4, 2:6]
    array([[ 9, 10, 11, 12],
           [16, 17, 18, 19],
           [23, 24, 25, 26]], dtype=int16)
    """

    @property
    def info(self) -> str:
        """A readable summary."""
        cp = self.schunk.cparams
        return (
            f"NDArray shape={self.shape} dtype={self.dtype} chunks={self.chunks} "
            f"blocks={self.blocks} nbytes={self.nbytes} cbytes={self.cbytes} "
            f"cratio={self.cratio:.2f} codec={cp.codec!r} clevel={cp.clevel} "
            f"filters={list(cp.filters)}"
        )

    def __repr__(self) -> str:
        return f"<NDArray shape={self.shape} dtype={self.dtype}>"

    # -- boxes ----------------------------------------------------------------------------
    def _read_box(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> np.ndarray:
        return read_box(self, lo, hi)

    def _write_box(self, lo: tuple[int, ...], value: np.ndarray) -> None:
        geo = self._geometry
        if not geo.ndim:
            self.schunk.update_chunk(0, self._compress(value.reshape(())))
            return
        refs: list[int | bytes] = list(range(self.schunk.nchunks))
        if self._place_box(geo, refs, lo, value):  # one commit: all or none of the write
            self.schunk.set_chunks(refs)

    def _place_box(
        self, geo: Geometry, refs: list[int | bytes], lo: tuple[int, ...], value: np.ndarray
    ) -> bool:
        """Put ``value`` at ``lo`` into the chunk list ``refs`` of an array of geometry
        ``geo`` (a kept chunk ``k`` is read, a new chunk's bytes decoded, and the result
        compressed in its place); returns whether any chunk changed."""
        hi = tuple(a + s for a, s in zip(lo, value.shape, strict=True))
        changed = False
        written = _Written.of(self)
        for coords, n in self._chunks_in(lo, hi, geo):
            origin = [c * s for c, s in zip(coords, geo.chunks, strict=True)]
            valid = [min(c, s - o) for c, s, o in zip(geo.chunks, geo.shape, origin, strict=True)]
            src, dst, full = [], [], True
            for a, b, o, v in zip(lo, hi, origin, valid, strict=True):
                s0, s1 = max(a, o), min(b, o + v)
                dst.append(slice(s0 - o, s1 - o))
                src.append(slice(s0 - a, s1 - a))
                full &= s0 == o and s1 == o + v
            ref = refs[n]
            if not full and isinstance(ref, int):
                chunk = written.blocks_changed(ref, geo, tuple(dst), value[tuple(src)])
                if chunk is not None:
                    refs[n] = chunk
                    changed = True
                    continue
            arr = np.zeros(geo.ext, geo.dtype) if full else self._ref_array(ref, geo)
            arr[tuple(dst)] = value[tuple(src)]
            refs[n] = written.note(n, self._compress(arr))
            changed = True
        return changed

    def _ref_array(self, ref: int | bytes, geo: Geometry) -> np.ndarray:
        """A writable ``ext``-shaped copy of chunk ``ref`` (stored chunk k, or new bytes)."""
        if isinstance(ref, int):
            return self._chunk_array(ref).copy()
        raw = np.frombuffer(ChunkReader.open(ref).decode_bytes(), geo.dtype)
        return buffer_to_chunk(raw, geo.ext, geo.blocks).copy()

    # -- indexing -------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        if (isinstance(key, Operand) and not isinstance(key, NDArray)) or (
            isinstance(key, str) and key not in (self.dtype.names or ())
        ):
            return engine().select(self, key)  # a lazy filter (pyblosc2.compute)
        with self.schunk._frame.reading():  # the shape and the chunks read: one view
            return self._getitem(key)

    def _getitem(self, key: Any) -> np.ndarray:
        parsed = parse_key(key, self.shape)  # the key checked and normalised once
        if parsed is None:  # advanced keys: ndarray/fancy.py
            if isinstance(key, str):  # a field of a structured dtype: its NDField view
                return self.fields[key]  # type: ignore[return-value]
            return getitem(self, key)
        ranges, squeeze, point = parsed
        if point is not None:
            item = read_point(self, point)  # one item: the short path
            if item is not None:
                return item
        out = read_selection(self, ranges)
        if not squeeze:  # (a 0-d array stays one, as python-blosc2 returns it)
            return out
        # integer keys drop their axes, a subarray dtype's trailing axes stay
        picks = (*(0 if d in squeeze else slice(None) for d in range(len(ranges))), Ellipsis)
        return out[picks]

    def __setitem__(self, key: Any, value: Any) -> None:
        """Write ``value`` at ``key``: the key is read against the current shape (another
        handle's resize is followed first, as python-blosc2 does), and the chunks it touches
        are read, changed and committed inside one write hold of the frame (with locking:
        one exclusive lock), so concurrent writers of other items lose nothing."""
        self.schunk._check_writable()
        self.schunk._frame.follow()
        with self.schunk.holding_lock():
            self._setitem(key, value)
        self._indexes_mutated()

    def _setitem(self, key: Any, value: Any) -> None:
        parsed = parse_key(key, self.shape)
        if parsed is None:  # advanced keys: ndarray/fancy.py
            if isinstance(key, str):  # a field of a structured dtype
                self.fields[key][...] = value
                return
            setitem(self, key, value)
            return
        ranges, squeeze, _ = parsed
        lo, hi, local = selection_box(ranges)
        shape = tuple(len(r) for r in ranges)
        visible = tuple(n for d, n in enumerate(shape) if d not in squeeze)
        try:
            val = np.broadcast_to(np.asarray(value, dtype=self.dtype), visible).reshape(shape)
        except (OverflowError, TypeError, ValueError) as exc:
            raise ParamError(
                f"value cannot be stored as {self.dtype} in a selection of shape {visible}: {exc}"
            ) from None
        if val.size == 0:
            return
        if all(r.step == 1 for r in ranges):
            self._write_box(lo, np.ascontiguousarray(val))
            return
        box = self._read_box(lo, hi)  # steps: read-modify-write the bounding box
        box[local] = val
        self._write_box(lo, box)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[...]
        return out if dtype is None else out.astype(dtype)

    # -- layout (``.T``, ``.mT`` and ``@``: ndarray/linalg_members.py) ------------------------
    def transpose(self, *axes: Any) -> np.ndarray:
        """The array with its axes permuted (reversed by default), as ``np.transpose``."""
        nd = len(self.shape)
        perm = axes[0] if len(axes) == 1 and not isinstance(axes[0], int | np.integer) else axes
        perm = tuple(range(nd))[::-1] if perm in ((), None) else tuple(perm)
        ok = all(isinstance(p, int | np.integer) and -nd <= p < nd for p in perm)
        if not ok or sorted(int(p) % nd for p in perm) != list(range(nd)):
            raise ParamError(f"axes must be a permutation of {nd} axes, got {perm}")
        return np.transpose(self[...], perm)

    # -- whole array ----------------------------------------------------------------------
    def to_cframe(self) -> bytes:
        """The array as an in-memory contiguous frame (see :func:`ndarray_from_cframe`)."""
        return self.schunk.to_cframe()

    def copy(
        self, chunks: ShapeLike | None = None, blocks: ShapeLike | None = None, **kwargs: Any
    ) -> NDArray:
        """A copy with new storage, partition or ``cparams`` (the current ones by default)."""
        return copy_of(self, chunks, blocks, **kwargs)

    def save(self, urlpath: Any, contiguous: bool = True, **kwargs: Any) -> None:
        """Write a copy to ``urlpath`` (a ``.b2nd`` file, or a directory when not
        ``contiguous``); ``kwargs`` as for :meth:`copy` (``mode="w"`` overwrites).

        >>> import os, tempfile
        >>> from pyblosc2 import asarray, open
        >>> path = os.path.join(tempfile.mkdtemp(), "a.b2nd")
        >>> asarray(np.arange(5)).save(path)
        >>> asarray(np.arange(3)).save(path, mode="w")
        >>> open(path)[1:3]
        array([1, 2])
        """
        if whole_at_url(urlpath, {**kwargs, "contiguous": contiguous}):  # written whole
            own = {k: v for k, v in kwargs.items() if k not in ("mode", "storage_options")}
            put_cframe(urlpath, copy_of(self, **own).to_cframe(), kwargs)
            return
        copy_of(self, urlpath=urlpath, contiguous=contiguous, **kwargs)

    def iterchunks_info(self) -> Iterator[ChunkInfoNDArray]:
        """A :class:`ChunkInfoNDArray` per chunk: the SChunk's chunk info plus the chunk's
        coordinates in the chunk grid (reads chunk headers only).

        >>> from pyblosc2 import zeros
        >>> a = zeros((4,), chunks=(2,), blocks=(2,))
        >>> [(i.coords, i.special.name) for i in a.iterchunks_info()]
        [((0,), 'ZERO'), ((1,), 'ZERO')]
        """
        grid = self._geometry.grid if self.ndim else ()
        for info in self.schunk.iterchunks_info():
            coords = tuple(int(c) for c in np.unravel_index(info.nchunk, grid)) if grid else ()
            yield ChunkInfoNDArray(info.nchunk, coords, *astuple(info)[1:])

    # -- shared with other handles ---------------------------------------------------------
    @property
    def locking(self) -> bool:
        """Whether this handle uses C-Blosc2's cross-process frame lock."""
        return self.schunk.locking

    @contextlib.contextmanager
    def holding_lock(self) -> Iterator[NDArray]:
        """Hold the frame for several operations at once (with locking: the exclusive lock,
        re-entrant, shared with ``schunk.holding_lock()``); the shape is current inside, so a
        ``resize`` decided from it keeps what other handles wrote.

        >>> from pyblosc2 import zeros
        >>> a = zeros(4, np.int64)
        >>> with a.holding_lock():
        ...     a[0] = a[0] + 1
        >>> int(a[0])
        1
        """
        with self.schunk.holding_lock():
            yield self

    def refresh(self) -> bool:
        """Re-read the frame and the shape (after another handle resized or wrote); returns
        whether anything changed (always False in memory), as python-blosc2's does. Another
        handle may change the shape only: a new partition or dtype is a ``FormatError``.

        >>> from pyblosc2 import zeros
        >>> zeros(4).refresh()
        False
        """
        changed = self.schunk.refresh()
        self._geometry  # noqa: B018 - derived now: a changed partition raises here
        return changed

    def resize(self, newshape: tuple[int, ...]) -> None:
        """Change the shape (same number of dimensions); new items are zero.

        The chunk grid is rebuilt and committed together with the new ``b2nd`` metalayer:
        kept chunks are reused, edge chunks whose valid extent changes are rewritten with
        their data beyond the valid part zeroed, new chunks are special zero chunks. The
        shape it starts from is read in the same write hold (with locking, under the
        exclusive lock). An ``expand_dims`` view keeps its added axes at length 1.
        """
        newshape = tuple(int(n) for n in newshape)
        self.schunk._check_writable()
        with self.schunk.holding_lock():
            old = self._geometry
            refs, geo = self._resized(old, newshape)
            self._commit_shape(refs, geo)
        self._indexes_mutated()

    def _resized(
        self, old: Geometry, newshape: tuple[int, ...]
    ) -> tuple[list[int | bytes], Geometry]:
        """The chunk list and geometry of this array resized to ``newshape``."""
        if len(newshape) != old.ndim or any(n < 0 for n in newshape):
            raise ParamError(f"newshape must have {old.ndim} non-negative entries, got {newshape}")
        if all(newshape) and not all(old.chunks):
            raise ParamError(f"an array with chunks {old.chunks} cannot grow to {newshape}")
        if any(newshape[d] != 1 for d in self._axes):
            raise ParamError(
                f"an expand_dims view keeps its added axes {self._axes} at length 1, got {newshape}"
            )
        geo = old.resized(newshape)
        # every chunk of the new grid as the old one numbers it (-1: new, a zero chunk);
        # only the edge chunks (in both grids, cut by either shape) are looked at one by one
        flat, edges = resize_plan(old, newshape)
        refs: list[int | bytes] = flat.tolist()
        new = np.flatnonzero(flat < 0).tolist()
        if new:
            zero = make_special_chunk(
                SpecialValue.ZERO,
                old.chunk_nbytes,
                self.schunk.typesize,
                blocksize=self.schunk.cparams.blocksize,
            )
            for i in new:
                refs[i] = zero
        for i in edges.tolist():
            n = int(flat[i])
            coords = np.unravel_index(n, old.grid)
            keep = [
                min(k, o_s - c * k, n_s - c * k)
                for k, o_s, n_s, c in zip(old.chunks, old.shape, newshape, coords, strict=True)
            ]
            if _zero_blocks_past(self.schunk, n, keep, old):
                continue  # already zero past the kept part (a growing array): kept as is
            raw = self.schunk.decompress_chunk(n)
            if _zero_past(raw, keep, old):
                continue
            arr = np.zeros(old.ext, old.dtype)
            region = tuple(slice(0, kp) for kp in keep)
            arr[region] = buffer_to_chunk(np.frombuffer(raw, old.dtype), old.ext, old.blocks)[
                region
            ]
            refs[i] = self._compress(arr)
        return refs, geo

    def _commit_shape(self, refs: list[int | bytes], geo: Geometry) -> None:
        """Commit the chunk list ``refs`` with the ``b2nd`` metalayer of ``geo`` (as stored:
        without a view's added axes); the geometry follows the commit."""
        stored = self._stored_geometry(geo).to_meta().to_bytes()
        keep = 0  # the stored chunks kept in place, then only new ones (a growing array):
        while keep < len(refs) and refs[keep] == keep:  # a commit that reads no old offset
            keep += 1
        if keep and all(isinstance(r, bytes) for r in refs[keep:]):
            tail = [r for r in refs[keep:] if isinstance(r, bytes)]
            self.schunk.replace_tail(keep, tail, meta={"b2nd": stored})
        else:
            self.schunk.set_chunks(refs, meta={"b2nd": stored})


def _zero_past(raw: bytes, keep: list[int], geo: Geometry) -> bool:
    """Whether every byte of the decoded chunk ``raw`` (of an array of geometry ``geo``) past
    the box ``[0, keep)`` is zero: the chunk then already is what a resize would write.

    >>> from pyblosc2.ndarray.geometry import Geometry
    >>> geo = Geometry((4, 2), (4, 2), (2, 2), np.dtype("<i2"))
    >>> _zero_past(bytes([1, 0] * 4 + [0] * 8), [2, 2], geo)
    True
    >>> _zero_past(bytes([1, 0] * 4 + [0] * 7 + [128]), [2, 2], geo)
    False
    """
    t = geo.dtype.itemsize
    if t not in (1, 2, 4, 8):  # (bytes of other sizes compared whole)
        full = np.frombuffer(raw, geo.dtype)
        arr = np.zeros(geo.ext, geo.dtype)
        region = tuple(slice(0, k) for k in keep)
        arr[region] = buffer_to_chunk(full, geo.ext, geo.blocks)[region]
        return chunk_to_buffer(arr, geo.blocks).tobytes() == raw
    items = buffer_to_chunk(np.frombuffer(raw, f"<u{t}"), geo.ext, geo.blocks)
    for d, k in enumerate(keep):  # the slab past the box along axis d (earlier axes in it)
        slab = items[tuple(slice(0, x) for x in keep[:d]) + (slice(k, None),)]  # noqa: RUF005
        if slab.any():
            return False
    return True


def _zero_blocks_past(schunk: SChunk, n: int, keep: list[int], geo: Geometry) -> bool:
    """Whether chunk ``n`` holds only zero bytes past the box ``[0, keep)``, told from its
    blocks when they tell it: a block inside the box is not read, a block whose streams are
    all zero runs (a pipeline of at most one SHUFFLE) is zero without decoding, the others
    are decoded one by one. False when that does not settle it (the caller decodes the
    chunk whole: :func:`_zero_past`)."""
    if schunk._postfilter is not None:
        return False
    reader = ChunkReader.open(schunk.get_chunk(n))
    h = reader.header
    t = geo.dtype.itemsize
    if h.special == SpecialValue.ZERO:
        return True
    if reader.layout.kind != ChunkKind.BLOCKS or reader.shuffle_group() is None:
        return False
    bsize = math.prod(geo.blocks) * t
    if h.effective_blocksize != bsize or h.nbytes != math.prod(geo.ext) * t:
        return False
    grid = [range(e // b) for e, b in zip(geo.ext, geo.blocks, strict=True)]
    for j, coords in enumerate(itertools.product(*grid)):
        lo = [c * b for c, b in zip(coords, geo.blocks, strict=True)]
        if all(a + b <= k for a, b, k in zip(lo, geo.blocks, keep, strict=True)):
            continue  # inside the box
        if not any(reader.block_streams(j)[0]):
            continue  # zero runs only
        items = reader.decode_range(j * bsize, (j + 1) * bsize).reshape((*geo.blocks, t))
        for d in range(len(lo)):  # the part of the block past the box along axis d
            inside = tuple(slice(0, max(0, k - a)) for a, k in zip(lo[:d], keep[:d], strict=True))
            if items[inside + (slice(max(0, keep[d] - lo[d]), None),)].any():  # noqa: RUF005
                return False
    return True


class _Written:
    """The chunks this array's handle wrote last (at most :attr:`KEEP`), each with the
    parameters it was written with: a write of some whole blocks of one of them, when the
    stored bytes are still those, compresses only the blocks it changes
    (:func:`~pyblosc2.chunk.reencode.encode_changed_blocks`), the rest of the chunk kept as
    stored (the same bytes the whole chunk compressed again would give)."""

    KEEP = 4

    def __init__(self) -> None:
        self.chunks: dict[int, tuple[bytes, EncodeSpec]] = {}
        self.schunk: SChunk | None = None
        self.spec: EncodeSpec | None = None

    @classmethod
    def of(cls, arr: NDArray) -> _Written:
        """``arr``'s record (made at its first write), with the parameters of this write."""
        got = arr.__dict__.get("_written")
        if got is None:
            got = arr.__dict__["_written"] = cls()
        schunk = got.schunk = arr.schunk
        got.spec = None
        if schunk._prefilter is None:  # (a prefilter sees the whole chunk)
            got.spec = EncodeSpec.from_cparams(schunk.cparams, context=schunk._frame.reader.context)
        return got

    def note(self, n: int, chunk: bytes) -> bytes:
        """``chunk`` was just compressed whole for position ``n``: kept (returned)."""
        if self.spec is not None:
            chunks = self.chunks
            chunks.pop(n, None)
            if len(chunks) >= self.KEEP:
                del chunks[next(iter(chunks))]
            chunks[n] = (chunk, self.spec)
        return chunk

    def blocks_changed(
        self, k: int, geo: Geometry, box: tuple[slice, ...], part: np.ndarray
    ) -> bytes | None:
        """Stored chunk ``k`` with the items ``box`` (of its ``ext`` shape) set to ``part``,
        compressing only the blocks they touch, when this handle wrote the stored bytes with
        this write's parameters; else None (the caller compresses the whole chunk)."""
        spec, schunk = self.spec, self.schunk
        kept = self.chunks.get(k)
        if spec is None or schunk is None or kept is None or kept[1] != spec:
            return None
        stored = bytes(schunk.get_chunk(k))
        if stored != kept[0]:
            return None  # another handle wrote it since
        t = geo.dtype.itemsize
        bsize = math.prod(geo.blocks) * t
        reader = None
        blocks = {}
        bgrid = [e // b for e, b in zip(geo.ext, geo.blocks, strict=True)]
        ranges = [
            range(x.start // b, -(-x.stop // b)) for x, b in zip(box, geo.blocks, strict=True)
        ]
        for coords in itertools.product(*ranges):
            j = int(np.ravel_multi_index(coords, bgrid))
            lo = [c * b for c, b in zip(coords, geo.blocks, strict=True)]
            inner = tuple(
                slice(max(x.start, a) - a, min(x.stop, a + b) - a)
                for x, a, b in zip(box, lo, geo.blocks, strict=True)
            )
            outer = tuple(
                slice(max(x.start, a) - x.start, min(x.stop, a + b) - x.start)
                for x, a, b in zip(box, lo, geo.blocks, strict=True)
            )
            whole = all(
                i.start == 0 and i.stop == b for i, b in zip(inner, geo.blocks, strict=True)
            )
            if whole:
                block = np.empty(geo.blocks, geo.dtype)
            else:  # the block's other items: decoded from the stored chunk
                if reader is None:
                    reader = ChunkReader.open(stored)
                raw = reader.decode_range(j * bsize, (j + 1) * bsize)
                block = raw.view(geo.dtype).reshape(geo.blocks).copy()
            block[inner] = part[outer]
            blocks[j] = block.reshape(-1).view(np.uint8)
        chunk = encode_changed_blocks(stored, spec, blocks)
        if chunk is not None:
            self.note(k, chunk)
        return chunk
