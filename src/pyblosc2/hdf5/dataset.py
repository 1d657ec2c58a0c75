"""A lazy array over an HDF5 dataset whose chunks pyblosc2 decodes and encodes itself, through
h5py's direct chunk I/O (``read_direct_chunk``/``write_direct_chunk``): no filter plugin.

A read fetches only the HDF5 chunks the selection touches (a strided selection skips the
chunks between its items) and decodes only the blocks of each chunk that hold selected items
(:mod:`.storedchunk`). Chunks never written read as the dataset's fill value. A write replaces
whole chunks; a chunk partly covered is read, updated and written back.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from .._threads import run_parallel
from ..errors import ParamError, ParamTypeError
from .chunkfile import ChunkFile, StoredChunk
from .chunkplan import PlanCache
from .chunkread import is_small
from .pipeline import chunk_codec
from .selection import ChunkPart, Selection
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

    def __init__(self, dataset: h5py.Dataset, *, nthreads: int = 1, owns_file: bool = False):
        if not isinstance(dataset, h5py.Dataset):
            raise ParamTypeError(f"an h5py.Dataset is needed, got {type(dataset).__name__}")
        if isinstance(nthreads, bool) or not isinstance(nthreads, int) or nthreads < 1:
            raise ParamError(f"nthreads must be an int >= 1, got {nthreads!r}")
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
        #: stored chunks' parsed layouts are kept (``_plans``) and ranged reads of the file are
        #: possible (``_file``, opened when first needed; False: not possible)
        self._read_only: bool | None = None
        self._plans: PlanCache | None = None
        self._file: ChunkFile | Literal[False] | None = None

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
        own descriptor of it (ranged reads)."""
        if isinstance(self._file, ChunkFile):
            self._file.close()
        self._file = False
        if self._owns_file and self.h5.id.valid:
            self.h5.file.close()

    # -- reading ----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        codec = self.codec
        if codec is None:
            return self.h5[key]
        sel = Selection.from_key(self.shape, key)
        out = np.empty(sel.read_shape + self.dtype.shape, codec.item_dtype)
        parts = list(sel.parts(codec.chunks))
        if self._read_only is None:
            self._learn_mode()
        # HDF5 calls stay on this thread; the chunks are then decoded on the shared pool
        jobs = [(p, self._locate(p)) for p in parts]
        cache = self._plans

        def fill(job: tuple[ChunkPart, StoredChunk | None]) -> int:
            part, stored = job
            if stored is None:
                out[part.out] = self.h5.fillvalue
                return 0
            codec.read_into(stored, part.local, part.index, out[part.out], cache)
            return stored.bytes_read

        self.bytes_read += sum(run_parallel(fill, jobs, min(self.nthreads, len(jobs)) or 1))
        res = sel.finish(out)
        return res[()] if res.ndim == 0 else res

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

    def _locate(self, part: ChunkPart, whole: bool = False) -> StoredChunk | None:
        """Where chunk ``part.index`` is stored (None: never written): a window of the file
        when a small part of it is selected and it can be read by ranges (unless ``whole``),
        else its bytes."""
        codec = self.codec
        assert codec is not None
        offsets = self._offsets(part.index)
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
        """Resize (within ``maxshape``), as ``h5py.Dataset.resize``."""
        self.h5.resize(shape, axis)


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


def open(source: Any, name: str | None = None, mode: str = "r", *, nthreads: int = 1) -> Dataset:
    """A :class:`Dataset` over ``source``: an ``h5py.Dataset``, or a file path / ``h5py.File``
    / ``h5py.Group`` and the dataset's ``name``. A path is opened with ``mode`` ('r' or 'r+')
    and closed by :meth:`Dataset.close` (or the ``with`` block).

    >>> import h5py, tempfile, os, numpy as np
    >>> from pyblosc2 import hdf5
    >>> path = os.path.join(tempfile.mkdtemp(), "a.h5")
    >>> with h5py.File(path, "w") as f:
    ...     _ = hdf5.create_dataset(f, "g/v", data=np.arange(10), chunks=(4,), codec="lz4")
    >>> with hdf5.open(path, "/g/v") as d:
    ...     d[7:]
    array([7, 8, 9])
    """
    if isinstance(source, h5py.Dataset):
        if name is not None:
            raise ParamError("name is given with an h5py.Dataset")
        return Dataset(source, nthreads=nthreads)
    if name is None:
        raise ParamError("the dataset's name is needed with a file or group")
    if isinstance(source, h5py.Group):
        obj = source[name]
        if not isinstance(obj, h5py.Dataset):
            raise ParamTypeError(f"{name!r} is a {type(obj).__name__}, not a dataset")
        return Dataset(obj, nthreads=nthreads)
    if mode not in ("r", "r+"):
        raise ParamError(f"mode must be 'r' or 'r+', got {mode!r}")
    f = h5py.File(os.fspath(source), mode)
    try:
        obj = f[name]
        if not isinstance(obj, h5py.Dataset):
            raise ParamTypeError(f"{name!r} in {source} is a {type(obj).__name__}, not a dataset")
        return Dataset(obj, nthreads=nthreads, owns_file=True)
    except BaseException:
        f.close()
        raise
