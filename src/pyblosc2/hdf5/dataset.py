"""A lazy array over an HDF5 dataset whose chunks pyblosc2 decodes and encodes itself, through
h5py's direct chunk I/O (``read_direct_chunk``/``write_direct_chunk``): no filter plugin.

A read fetches only the HDF5 chunks the selection touches (a strided selection skips the
chunks between its items) and decodes only the blocks of each chunk that hold selected items
(:mod:`.storedchunk`). Chunks never written read as the dataset's fill value. A write replaces
whole chunks; a chunk partly covered is read, updated and written back.

Decoded chunks are kept for the next reads, within a bound, as h5py keeps them in HDF5's
chunk cache (:mod:`.chunkcache`; ``rdcc_nbytes``, ``rdcc_nslots``, ``rdcc_w0``, by default the
dataset's own settings in h5py: HDF5's defaults, 8 MiB and 8191 slots from HDF5 2.0, 1 MiB
and 521 slots before). A chunk larger than ``rdcc_nbytes`` is not kept, nor one a read takes
whole without having held it (``ds[...]``, ``iter_chunks``: decoded straight into the result).
A chunk is kept from its first read when that read decodes most of it anyway (several blocks,
more than half of them: a row of a chunk of few large blocks, as hdf5plugin writes them), else
from its second read if it comes while the chunk would still be kept (a first read decodes
only the blocks it needs, the cheapest way, picking single items out of a block: small reads
spread over many chunks, or cycling over more than the cache holds, cost what they cost
without a cache). When a kept chunk is still the stored one:

* a write through this handle (``ds[...] = v``, ``resize``) drops the chunks it changes;
* in a file open read-only (not SWMR) nothing else can change the file while it is open
  (HDF5 locks it: another process opening it for writing fails), and kept chunks are used as
  they are, as h5py uses its cache. With HDF5's file locking turned off
  (``HDF5_USE_FILE_LOCKING=FALSE``, ``locking=False``) another process can rewrite the file
  under it: like h5py's, this handle then goes on reading the chunks it keeps and HDF5's
  cached chunk index (old values, or whatever now lies at their old addresses), until it is
  opened again;
* in a file open for writing or in SWMR mode, a kept chunk is used only while HDF5's index
  still gives it the address, size and filter mask it was decoded from (a chunk another
  handle rewrote in place at the same size is not seen: :meth:`Dataset.refresh` drops every
  kept chunk and, in SWMR mode, refreshes the h5py dataset as ``h5py.Dataset.refresh`` does).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from .._threads import run_parallel
from ..errors import ParamError, ParamTypeError
from .chunkcache import (
    CacheInfo,
    CacheParams,
    ChunkCache,
    HeldChunk,
    StoredId,
    parse_nbytes,
    parse_nslots,
    parse_w0,
)
from .chunkfile import ChunkFile, StoredChunk
from .chunkplan import PlanCache
from .chunkread import is_small, selected_count
from .pipeline import chunk_codec
from .selection import ChunkPart, Selection, one_chunk_key
from .storedchunk import ChunkCodec

try:
    import h5py
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError("pyblosc2.hdf5 needs h5py: pip install 'pyblosc2[hdf5]'") from exc

__all__ = ["RANGED_MIN", "Dataset", "open"]

#: stored chunks from this size on are read by byte ranges when a small part is selected
RANGED_MIN = 1 << 16


class Dataset:
    """An HDF5 dataset read (and written) by pyblosc2: numpy-style slicing, lazily.

    >>> import h5py, tempfile, os, numpy as np
    >>> from pyblosc2 import hdf5
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.h5")
    >>> with h5py.File(path, "w") as f:
    ...     d = hdf5.create_dataset(f, "x", data=np.arange(100.0).reshape(10, 10), chunks=(4, 4))
    ...     d[2, 3:6]
    array([23., 24., 25.])
    >>> with hdf5.open(path, "x") as d:
    ...     d[::4, -1], d.chunks_read
    (array([ 9., 49., 89.]), 3)
    """

    def __init__(
        self,
        dataset: h5py.Dataset,
        *,
        nthreads: int = 1,
        owns_file: bool = False,
        rdcc_nbytes: int | None = None,
        rdcc_nslots: int | None = None,
        rdcc_w0: float | None = None,
    ):
        if not isinstance(dataset, h5py.Dataset):
            raise ParamTypeError(f"an h5py.Dataset is needed, got {type(dataset).__name__}")
        if isinstance(nthreads, bool) or not isinstance(nthreads, int) or nthreads < 1:
            raise ParamError(f"nthreads must be an int >= 1, got {nthreads!r}")
        knobs = _knobs(rdcc_nbytes, rdcc_nslots, rdcc_w0)
        self.h5 = dataset
        self.nthreads = nthreads
        self._owns_file = owns_file
        plist = dataset.id.get_create_plist()
        filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
        #: how chunks are stored, or None: HDF5 decodes this dataset itself (no plugin needed)
        self.codec: ChunkCodec | None = chunk_codec(
            filters, dataset.dtype, dataset.chunks, dataset.name or "dataset", h5py.h5z.filter_avail
        )
        #: HDF5 chunks fetched by reads and writes of this handle (not counting unwritten ones)
        self.chunks_read = 0
        #: bytes of stored chunks read by this handle (whole chunks, or the ranges read)
        self.bytes_read = 0
        #: whether the file is open read-only (not SWMR), learnt on the first read: then the
        #: stored chunks' parsed layouts are kept (``_plans``), kept decoded chunks are used
        #: without asking HDF5 where their chunk is, and ranged reads of the file are
        #: possible (``_file``, opened when first needed; False: not possible)
        self._read_only: bool | None = None
        self._plans: PlanCache | None = None
        self._file: ChunkFile | Literal[False] | None = None
        self._knobs = knobs
        self._cache: ChunkCache | None = None

    @property
    def cache(self) -> ChunkCache | None:
        """The decoded chunks kept for the next reads (:mod:`.chunkcache`), made on first
        use; None when HDF5 decodes this dataset itself (its own chunk cache serves it)."""
        if self._cache is None and self.codec is not None:
            own = self.h5.id.get_access_plist().get_chunk_cache()
            params = CacheParams.from_h5py_tuple(own).replaced(
                self._knobs.get("rdcc_nbytes"),
                self._knobs.get("rdcc_nslots"),
                self._knobs.get("rdcc_w0"),
            )
            self._cache = ChunkCache(params, self._grid(), self.codec.nbytes)
        return self._cache

    def _grid(self) -> tuple[int, ...]:
        assert self.codec is not None
        return tuple(-(-n // c) for n, c in zip(self.shape, self.codec.chunks, strict=True))

    def cache_info(self) -> CacheInfo | None:
        """What the cache of decoded chunks did and holds (None: HDF5 decodes this dataset).

        >>> import h5py, tempfile, os, numpy as np
        >>> from pyblosc2 import hdf5
        >>> path = os.path.join(tempfile.mkdtemp(), "c.h5")
        >>> a = np.arange(1000.0).reshape(10, 100)
        >>> with h5py.File(path, "w") as f:
        ...     _ = hdf5.create_dataset(f, "x", data=a, chunks=(5, 100))
        >>> with hdf5.open(path, "x", rdcc_nbytes=4000) as d:
        ...     rows = [d[i, :3] for i in range(10)]
        ...     info = d.cache_info()
        >>> info.hits, info.added, info.held, info.nbytes  # each chunk kept from its 2nd read
        (6, 2, 1, 4000)
        """
        return None if self.cache is None else self.cache.info()

    # -- array-like properties --------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.h5.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.h5.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...] | None:
        return self.h5.chunks

    @property
    def name(self) -> str | None:
        return self.h5.name

    @property
    def attrs(self) -> Any:
        return self.h5.attrs

    @property
    def fillvalue(self) -> Any:
        return self.h5.fillvalue

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d dataset")
        return self.shape[0]

    def __repr__(self) -> str:
        how = "h5py" if self.codec is None else type(self.codec.values).__name__
        return f"<pyblosc2.hdf5.Dataset {self.name!r} {self.shape} {self.dtype} ({how})>"

    def __enter__(self) -> Dataset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file when this handle opened it (``open(path, name)``), and pyblosc2's
        own descriptor of it (ranged reads); the kept chunks are let go."""
        if isinstance(self._file, ChunkFile):
            self._file.close()
        self._file = False
        if self._cache is not None:
            self._cache.clear()
        if self._owns_file and self.h5.id.valid:
            self.h5.file.close()

    def refresh(self) -> None:
        """Let go of every kept chunk and parsed layout, and in SWMR mode refresh the h5py
        dataset (``h5py.Dataset.refresh``): the next reads see what other handles and
        processes wrote (as far as HDF5 shows it: a read-only file needs opening again)."""
        if self.h5.file.swmr_mode:
            self.h5.refresh()
        if self._cache is not None:
            self._cache.clear(self._grid())
        if self._plans is not None:
            self._plans.clear()

    # -- reading ----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        codec = self.codec
        if codec is None:
            return self.h5[key]
        if self._read_only is None:
            self._learn_mode()
        cache = self._cache if self._cache is not None else self.cache
        assert cache is not None
        if cache.held_any:
            got = self._kept(key, cache, codec)
            if got is not None:
                return got[0]
        sel = Selection.from_key(self.shape, key)
        out = np.empty(sel.read_shape + self.dtype.shape, codec.item_dtype)
        # plans kept while the file is read-only, else for this read only (a first read may
        # parse a chunk to decide whether to keep it, then read it)
        plans = self._plans if self._plans is not None else PlanCache()
        itemsize = self.dtype.itemsize

        def fill(job: Job) -> int:
            part, stored, held, first = job
            dst = out[part.out]
            # a first read keeps the chunk if it decodes most of it anyway
            if (
                first is not None
                and stored is not None
                and codec.decodes_most(stored, part.local, part.index, plans)
            ):
                held = cache.add(part.index, codec.full_shape, codec.item_dtype, first)
            if held is not None:
                if stored is not None:
                    try:
                        codec.fill(stored, held, part.local, part.index, plans)
                    except BaseException:
                        cache.discard(held)
                        raise
                dst[...] = held.items[part.local]
                cache.read(held, selected_count(part.local) * itemsize, stored is None)
            elif stored is None:
                dst[...] = self.h5.fillvalue
            else:
                codec.read_into(stored, part.local, part.index, dst, plans)
            return 0 if stored is None else stored.bytes_read

        # HDF5 calls stay on this thread; the chunks are then decoded on the shared pool, as
        # many at a time as there are threads (a chunk let go by the cache meanwhile is only
        # alive until its part is copied out: memory stays within the cache's bound plus one
        # chunk per thread)
        shape = self.shape
        parts = sel.parts(codec.chunks)
        while batch := list(itertools.islice(parts, self.nthreads)):
            jobs = [self._job(p, cache, codec, shape) for p in batch]
            self.bytes_read += sum(run_parallel(fill, jobs, len(jobs)))
            del jobs
        res = sel.finish(out)
        return res[()] if res.ndim == 0 else res

    def _kept(self, key: Any, cache: ChunkCache, codec: ChunkCodec) -> tuple[Any] | None:
        """``(result,)`` of a key of ints and slices of step 1 inside one chunk that a kept
        chunk covers (one numpy index of its items), else None."""
        found = one_chunk_key(key, self.h5.shape, codec.chunks)
        if found is None:
            return None
        index, loc = found
        held = cache.get(index)
        if held is None or not held.covers(loc):
            return None
        if not self._read_only and self._stored_id(held.index) != held.stored:
            return None  # the general path drops it
        res = held.items[loc]
        if type(res) is np.ndarray:
            res = res.copy()
            cache.read(held, res.nbytes, True)
        else:  # a numpy scalar: a structured one is a view of the items
            if isinstance(res, np.void):
                res = res.copy()  # (np.array(res) would still share the items' memory)
            cache.read(held, held.items.itemsize, True)
        return (res,)

    def _job(
        self, part: ChunkPart, cache: ChunkCache, codec: ChunkCodec, shape: tuple[int, ...]
    ) -> Job:
        """How chunk ``part.index`` is read: ``(part, stored chunk or None, kept chunk or
        None, first)``; a kept chunk with no stored chunk covers the part; ``first``: the
        stored chunk's id when this is the first read of a chunk that could be kept (it is
        kept if the read decodes most of it anyway, see the module docstring)."""
        held = cache.get(part.index) if cache.held_any else None
        if held is not None and self._read_only and held.covers(part.local):
            return part, None, held, None
        info = self.h5.id.get_chunk_info_by_coord(self._offsets(part.index))
        if held is not None and _stored_id(info) != held.stored:
            cache.discard(held)
            held = None
        if held is not None and held.covers(part.local):
            return part, None, held, None
        stored = self._locate(part, info=info)
        if stored is None or held is not None:
            return part, stored, held, None
        if not cache.holds(codec.nbytes) or _takes_whole(part, codec, shape):
            return part, stored, None, None
        sid = _stored_id(info)
        assert sid is not None  # the chunk is stored
        if cache.read_before(part.index):
            return (
                part,
                stored,
                cache.add(part.index, codec.full_shape, codec.item_dtype, sid),
                None,
            )
        return part, stored, None, sid

    def _stored_id(self, index: tuple[int, ...]) -> StoredId | None:
        return _stored_id(self.h5.id.get_chunk_info_by_coord(self._offsets(index)))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = np.asarray(self[()] if self.ndim == 0 else self[...])
        return a if dtype is None else a.astype(dtype, copy=False)

    def _learn_mode(self) -> None:
        file = self.h5.file
        self._read_only = file.mode == "r" and not file.swmr_mode
        if self._read_only:
            self._plans = PlanCache()
        elif self._file is None:
            self._file = False

    def _offsets(self, index: tuple[int, ...]) -> tuple[int, ...]:
        assert self.codec is not None
        return tuple(i * c for i, c in zip(index, self.codec.chunks, strict=True))

    def _locate(self, part: ChunkPart, whole: bool = False, info: Any = None) -> StoredChunk | None:
        """Where chunk ``part.index`` is stored (None: never written): a window of the file
        when a small part of it is selected and it can be read by ranges (unless ``whole``),
        else its bytes. ``info``: HDF5's ``get_chunk_info_by_coord`` of it, when asked."""
        codec = self.codec
        assert codec is not None
        offsets = self._offsets(part.index)
        if info is None:
            info = self.h5.id.get_chunk_info_by_coord(offsets)
        if info.byte_offset is None:
            return None  # (read_direct_chunk fails on it, with an error class that varies)
        self.chunks_read += 1
        address, size, mask = int(info.byte_offset), int(info.size), int(info.filter_mask)
        ranged = (
            not whole
            and size >= RANGED_MIN
            and codec.ranged(mask)
            and is_small(part.local, codec.chunks)
        )
        file = self._chunk_file() if ranged else None
        if file is not None and file.base is not None:
            return StoredChunk(mask, size, address, window=file.window(address, size))
        mask, data = self.h5.id.read_direct_chunk(offsets)
        if file is not None and not file.settle_base(address, data):
            self._file = False  # addresses read neither way: no ranged reads
            file.close()
        return StoredChunk(int(mask), len(data), address, data=memoryview(data))

    def _chunk_file(self) -> ChunkFile | None:
        """Ranged reads of the file, opened on first use (None where not possible)."""
        if self._file is None:
            self._file = ChunkFile.for_file(self.h5.file) or False
        return self._file or None

    def iter_chunks(self) -> Iterator[tuple[tuple[slice, ...], np.ndarray]]:
        """``(region, values)`` for every chunk of the dataset, in C order (values cut to the
        dataset's extent at its edges)."""
        if self.codec is None:
            whole = tuple(slice(0, n) for n in self.shape)
            for region in self.h5.iter_chunks() if self.chunks else [whole]:
                yield region, np.asarray(self.h5[region])
            return
        grid = [range(-(-n // c)) for n, c in zip(self.shape, self.codec.chunks, strict=True)]
        for index in np.ndindex(*(len(g) for g in grid)):
            region = tuple(
                slice(i * c, min((i + 1) * c, n))
                for i, c, n in zip(index, self.codec.chunks, self.shape, strict=True)
            )
            yield region, self[region]

    # -- writing ----------------------------------------------------------------------------
    def __setitem__(self, key: Any, value: Any) -> None:
        if self.codec is None:
            self.h5[key] = value
            return
        codec = self.codec
        sel = Selection.from_key(self.shape, key)
        vals = _to_read_order(sel, np.asarray(value, dtype=codec.item_dtype), self.dtype)
        for part in sel.parts(codec.chunks):
            chunk = self._chunk_for_update(part)
            chunk[part.local] = vals[part.out]
            if self._cache is not None:  # before the write: a failed one leaves nothing stale
                self._cache.drop(part.index)
            self._store(part.index, chunk)

    def _chunk_for_update(self, part: ChunkPart) -> np.ndarray:
        """The chunk ``part`` writes into: its current values, unless the write covers every
        item of it inside the dataset (then the fill value)."""
        codec = self.codec
        assert codec is not None
        covers = all(
            isinstance(k, slice) and k.step == 1 and k.start == 0 and k.stop >= min(c, n - i * c)
            for k, c, n, i in zip(part.local, codec.chunks, self.shape, part.index, strict=True)
        )
        stored = None if covers else self._locate(part, whole=True)
        chunk = np.empty(codec.full_shape, codec.item_dtype)
        if stored is None:
            chunk[...] = self.h5.fillvalue
        else:
            full = tuple(slice(0, c, 1) for c in codec.chunks)
            codec.read_into(stored, full, part.index, chunk)
        return chunk

    def _store(self, index: tuple[int, ...], chunk: np.ndarray) -> None:
        assert self.codec is not None
        mask, data = self.codec.encode(chunk)
        offsets = tuple(i * c for i, c in zip(index, self.codec.chunks, strict=True))
        self.h5.id.write_direct_chunk(offsets, data, filter_mask=mask)

    def resize(self, shape: tuple[int, ...] | int, axis: int | None = None) -> None:
        """Resize (within ``maxshape``), as ``h5py.Dataset.resize``. The kept chunks are let
        go (HDF5 fills or drops the parts of chunks outside the new shape)."""
        if self._cache is not None:
            self._cache.clear()
        self.h5.resize(shape, axis)
        if self._cache is not None:
            self._cache.clear(self._grid())


#: how one chunk of a selection is read (see :meth:`Dataset._job`)
Job = tuple[ChunkPart, StoredChunk | None, HeldChunk | None, StoredId | None]


def _stored_id(info: Any) -> StoredId | None:
    """``(address, size, filter mask)`` of a chunk from HDF5's chunk info (None: unwritten)."""
    if info.byte_offset is None:
        return None
    return int(info.byte_offset), int(info.size), int(info.filter_mask)


def _takes_whole(part: ChunkPart, codec: ChunkCodec, shape: tuple[int, ...]) -> bool:
    """Whether ``part`` selects every item of its chunk inside the dataset of ``shape``, in
    order (decoded straight into the result, not kept)."""
    return all(
        isinstance(k, slice) and k.start == 0 and k.step == 1 and k.stop >= min(c, n - i * c)
        for k, c, n, i in zip(part.local, codec.chunks, shape, part.index, strict=True)
    )


def _to_read_order(sel: Selection, value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``value`` (broadcast to the selection's result shape) laid out as the values a read of
    ``sel`` gets before :meth:`Selection.finish`: dropped axes back, flips undone, array
    indices sorted (a repeated index takes its last value, as numpy assigns)."""
    sub = dtype.shape
    full = np.broadcast_to(value, sel.result_shape + sub)
    it = iter(full.shape)
    shape = [1 if a.drop else next(it) for a in sel.axes]
    out = full.reshape((*shape, *sub))
    for d, a in enumerate(sel.axes):
        if a.inverse is not None:
            last = np.empty(a.size, np.int64)
            last[a.inverse] = np.arange(len(a.inverse))
            out = np.take(out, last, axis=d)
        if a.flip:
            out = np.flip(out, axis=d)
    return out


def open(
    source: Any,
    name: str | None = None,
    mode: str = "r",
    *,
    nthreads: int = 1,
    rdcc_nbytes: int | None = None,
    rdcc_nslots: int | None = None,
    rdcc_w0: float | None = None,
) -> Dataset:
    """A :class:`Dataset` over ``source``: an ``h5py.Dataset``, or a file path / ``h5py.File``
    / ``h5py.Group`` and the dataset's ``name``. A path is opened with ``mode`` ('r' or 'r+')
    and closed by :meth:`Dataset.close` (or the ``with`` block).

    ``rdcc_nbytes``, ``rdcc_nslots``, ``rdcc_w0``: the bound of the decoded chunks kept for
    the next reads, as ``h5py.File`` takes them (bytes, hash slots, eviction weight of chunks
    read in full; see :mod:`pyblosc2.hdf5.chunkcache`). None: the dataset's own settings in
    h5py (HDF5's defaults unless the file was opened with others); a path is opened with the
    ones given, so a dataset HDF5 decodes itself uses them too.

    >>> import h5py, tempfile, os, numpy as np
    >>> from pyblosc2 import hdf5
    >>> path = os.path.join(tempfile.mkdtemp(), "a.h5")
    >>> with h5py.File(path, "w") as f:
    ...     _ = hdf5.create_dataset(f, "g/v", data=np.arange(10), chunks=(4,), codec="lz4")
    >>> with hdf5.open(path, "/g/v") as d:
    ...     d[7:]
    array([7, 8, 9])
    """
    knobs = _knobs(rdcc_nbytes, rdcc_nslots, rdcc_w0)
    if isinstance(source, h5py.Dataset):
        if name is not None:
            raise ParamError("name is given with an h5py.Dataset")
        return Dataset(source, nthreads=nthreads, **knobs)
    if name is None:
        raise ParamError("the dataset's name is needed with a file or group")
    if isinstance(source, h5py.Group):
        obj = source[name]
        if not isinstance(obj, h5py.Dataset):
            raise ParamTypeError(f"{name!r} is a {type(obj).__name__}, not a dataset")
        return Dataset(obj, nthreads=nthreads, **knobs)
    if mode not in ("r", "r+"):
        raise ParamError(f"mode must be 'r' or 'r+', got {mode!r}")
    f = h5py.File(os.fspath(source), mode, **knobs)
    try:
        obj = f[name]
        if not isinstance(obj, h5py.Dataset):
            raise ParamTypeError(f"{name!r} in {source} is a {type(obj).__name__}, not a dataset")
        return Dataset(obj, nthreads=nthreads, owns_file=True, **knobs)
    except BaseException:
        f.close()
        raise


def _knobs(nbytes: Any, nslots: Any, w0: Any) -> dict[str, Any]:
    """The chunk cache arguments given (checked), by h5py's names."""
    out: dict[str, Any] = {}
    if nbytes is not None:
        out["rdcc_nbytes"] = parse_nbytes(nbytes)
    if nslots is not None:
        out["rdcc_nslots"] = parse_nslots(nslots)
    if w0 is not None:
        out["rdcc_w0"] = parse_w0(w0)
    return out
