"""SChunk: a sequence of chunks stored as a frame (python-blosc2's ``SChunk`` API).

The object model only: where the frame lives is :mod:`.frame.location`, how it changes is
:mod:`.frame.frame` (one commit path for every mutation), the metalayer mappings are
:mod:`.meta`. Frames may be contiguous (memory, files, files at an offset, ``mmap_mode``) or
sparse (directories).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, overload

import numpy as np

from .._bytes import BufferLike, as_view, writable_view
from .._threads import run_parallel
from ..backends.memory import MemoryStore
from ..chunk.decode import ChunkReader, fill_bytes
from ..chunk.encode import EncodeSpec, encode_chunk
from ..constants import MAX_BUFFERSIZE, SplitMode
from ..errors import BoundsError, FormatError, ParamError
from ..frame.contiguous import FrameReader
from ..frame.frame import Frame
from ..frame.header import CONTIGUOUS, POS_CODEC_FLAGS, SPARSE, FrameHeader
from ..frame.location import REMOTE_OPTIONS, create_frame, exists, open_frame, remove_urlpath
from ..frame.trailer import Trailer
from ..frame.writer import build_cframe
from ..meta import Meta, RawMetalayer, VLMeta, packb
from ..params import CParams, DParams, parse_int
from ..plugins import check_python_plugins
from ..storage import Storage
from .edits import ChunkListEdits
from .guards import reads, writes
from .hooks import FilterHooks, apply_prefilter, postfiltered_decompress, postfiltered_read
from .members import ChunkInfo, SChunkMembers
from .sharing import SharingMembers

__all__ = ["ChunkInfo", "SChunk", "remove_urlpath", "schunk_from_cframe"]

DEFAULT_CHUNKSIZE = 2**24
MAX_DEFAULT_CHUNKSIZE = 2**28
_READONLY = "Cannot do this action with reading mode"
_STORAGE_ARGS = frozenset(Storage.__dataclass_fields__)


class SChunk(ChunkListEdits, FilterHooks, SChunkMembers, SharingMembers):
    """A super-chunk.

    >>> s = SChunk(chunksize=400, cparams={"typesize": 4})
    >>> s.append_data(np.arange(100, dtype=np.int32)); s.append_data(np.arange(50, dtype=np.int32))
    1
    2
    >>> np.frombuffer(s[98:102], np.int32)
    array([98, 99,  0,  1], dtype=int32)
    """

    _frame: Frame
    _storage: Storage
    _remote: dict[str, Any] = {}  # noqa: RUF012 - how a URL was reached (never mutated)
    _offset: int
    _requested_chunksize: int | None
    cparams: CParams
    dparams: DParams

    def __init__(self, chunksize: int | None = None, data: Any = None, **kwargs: Any) -> None:
        fingerprint = bool(kwargs.pop("fingerprint", False))
        initial = kwargs.pop("_chunks", ())  # a new array's chunks, written with the frame
        any_frame = kwargs.pop("_any_frame", False)  # open(): NDArray frames are fine
        storage = kwargs.pop("storage", None)
        cparams = kwargs.pop("cparams", None)
        dparams = kwargs.pop("dparams", None)
        given = {k: kwargs.pop(k) for k in list(kwargs) if k in _STORAGE_ARGS}
        remote = {k: kwargs.pop(k) for k in REMOTE_OPTIONS if k in kwargs}
        if kwargs:
            raise ParamError(f"unknown SChunk arguments {sorted(kwargs)}")
        storage = Storage.from_args(storage, given)
        path = storage.path
        if path is None and "r" in (storage.mode, storage.mmap_mode):
            raise ParamError(
                "Cannot open the SChunk in reading mode (mode or mmap_mode is 'r'): you did "
                "not specify a urlpath pointing to an existing frame"
            )
        if path is not None and storage.mode == "w":
            remove_urlpath(path, remote.get("storage_options"))
        if path is not None and (storage.mode == "r" or exists(path, remote)):
            there = exists(path, remote)
            if storage.mode == "a" and there and (cparams, data, chunksize) != (None,) * 3:
                raise ParamError(f"{path} exists: open it with blosc2.open() or mode='w'")
            if not there:
                raise ParamError(f"Cannot open the SChunk in reading mode: {path} does not exist")
            self._init(open_frame(path, storage, 0, remote), storage, None, cparams, dparams)
            self._remote = remote
            if not any_frame and "b2nd" in dict(self.header.metalayers):
                raise ParamError(f"Cannot open an NDArray as a SChunk: open {path} with open()")
            return
        cp = self._new_cparams(cparams, data)
        if chunksize is not None and chunksize != -1:  # -1: taken from the first chunk (C's)
            chunksize = parse_int(chunksize, "chunksize", 1, MAX_BUFFERSIZE)
        view = as_view(data) if data is not None else None
        if chunksize is None:
            chunksize = (
                DEFAULT_CHUNKSIZE if view is None else max(1, min(len(view), MAX_DEFAULT_CHUNKSIZE))
            )
        if fingerprint and path is not None and not storage.contiguous:
            raise NotImplementedError("fingerprints of sparse frames")
        dparams = DParams.from_any(dparams)
        check_python_plugins(int(cp.codec), cp.filters, cp.nthreads, "cparams")
        check_python_plugins(int(cp.codec), cp.filters, dparams.nthreads, "dparams")
        metas = tuple(
            (str(k), bytes(v) if isinstance(v, RawMetalayer) else packb(v))
            for k, v in (storage.meta or {}).items()
        )
        empty = build_cframe(
            [],
            typesize=cp.typesize,
            # b2nd arrays declare their chunk size up front, as C's b2nd does (an empty
            # array must stay resizable by C); other super-chunks take it from chunk 1
            chunksize=chunksize if any(k == "b2nd" for k, _ in metas) else -1,
            metalayers=metas,
            codec=int(cp.codec),
            clevel=cp.clevel,
            splitmode=int(cp.splitmode),
            filters=tuple(int(f) for f in (cp.filters + [0] * 6)[:6]),
            filters_meta=tuple(m & 0xFF for m in (cp.filters_meta + [0] * 6)[:6]),
            blocksize=cp.blocksize,
            frame_type=CONTIGUOUS if path is None or storage.contiguous else SPARSE,
            use_dict=cp.use_dict,
        )
        frame = create_frame(
            storage, empty, remote, fingerprint=fingerprint, chunks=initial, requested=chunksize
        )
        self._init(frame, storage, chunksize, cp, dparams)
        self._remote = remote
        if view is not None:
            for pos in range(0, len(view), chunksize):
                self.append_data(view[pos : pos + chunksize])

    @staticmethod
    def _new_cparams(cparams: Any, data: Any) -> CParams:
        if isinstance(cparams, CParams):
            return cparams
        given = dict(cparams or {})
        if "typesize" not in given:
            given["typesize"] = getattr(data, "itemsize", 1) if data is not None else 1
        return CParams.from_any(given)

    def _init(
        self, frame: Frame, storage: Storage, requested: int | None, cparams: Any, dparams: Any
    ) -> None:
        self._frame, self._storage, self._offset = frame, storage, 0
        self._requested_chunksize = requested
        self.dparams = DParams.from_any(dparams)
        self.cparams = cparams if requested is not None else self._cparams_from_header(cparams)

    @classmethod
    def _from_frame(cls, frame: Frame, storage: Storage, cparams: Any = None) -> SChunk:
        """An SChunk over an already open frame."""
        s = cls.__new__(cls)
        s._init(frame, storage, None, cparams, None)
        return s

    def _cparams_from_header(self, given: Any) -> CParams:
        """Compression defaults for new chunks: the frame header's (C does the same)."""
        h = self.header
        if given is not None:
            return replace(CParams.from_any(given), typesize=h.typesize)
        try:
            return CParams(
                codec=h.codec,
                clevel=h.clevel,
                typesize=h.typesize,
                blocksize=max(h.blocksize, 0),
                splitmode=SplitMode(h.splitmode),
                filters=list(h.filters),
                filters_meta=list(h.filters_meta),
                use_dict=h.use_dict,
                codec_meta=h.compcode_meta,
            )
        except ParamError as exc:
            raise FormatError(
                "frame header",
                "compression parameters",
                POS_CODEC_FLAGS,
                "valid codec, clevel, split mode and filters",
                str(exc),
            ) from None

    # -- internals kept for tests and tools that inspect the frame ------------------------
    @property
    def _reader(self) -> FrameReader:
        return self._frame.reader

    @property
    def _store(self) -> Any:
        return self._frame.store

    def _check_writable(self) -> None:
        if self._storage.mode == "r":
            raise ParamError(_READONLY)

    # -- properties -----------------------------------------------------------------------
    @property
    def header(self) -> FrameHeader:
        """The parsed frame header."""
        return self._frame.header

    @property
    def trailer(self) -> Trailer:
        """The parsed frame trailer (vlmeta entries as stored, fingerprint)."""
        return self._frame.trailer

    @property
    def chunk_offsets(self) -> np.ndarray:
        """The frame's chunk index (a pyblosc2 extension): per chunk, its offset from the start
        of the data area (contiguous frames) or its object id (sparse frames); negative for a
        special chunk recorded without bytes (frame-format.md §4)."""
        return self._frame.offsets.copy()

    @property
    def nchunks(self) -> int:
        """Number of chunks."""
        return self._frame.nchunks

    @property
    def nbytes(self) -> int:
        """Uncompressed size of all chunks."""
        return self.header.nbytes

    @property
    def cbytes(self) -> int:
        """Size of the chunks' data area (the frame header's ``cbytes``, as C-Blosc2 counts
        it: chunks stored as special values in the index count nothing)."""
        return self.header.cbytes

    @property
    def cratio(self) -> float:
        """``nbytes / cbytes`` (infinite when data is stored but takes no bytes)."""
        if not self.cbytes:
            return math.inf if self.nbytes else 0.0
        return self.nbytes / self.cbytes

    @property
    def chunksize(self) -> int:
        """Uncompressed bytes per chunk (the last may be shorter; 0: variable sizes)."""
        cs = self.header.chunksize
        if cs >= 0:
            return cs
        return self._requested_chunksize or DEFAULT_CHUNKSIZE

    @property
    def chunkshape(self) -> int:
        """Items per chunk."""
        return self.chunksize // self.typesize

    @property
    def variable_chunks(self) -> bool:
        """Whether chunks have different sizes (the frame's ``chunksize`` is 0)."""
        return self.header.chunksize <= 0

    @property
    def typesize(self) -> int:
        """Bytes per item."""
        return self.header.typesize

    @property
    def blocksize(self) -> int:
        """The block size new chunks request (0: automatic)."""
        return self.header.blocksize

    @property
    def urlpath(self) -> str | None:
        """Where the frame is stored (None in memory)."""
        return self._storage.path

    @property
    def contiguous(self) -> bool:
        """Whether the frame is contiguous (one file or buffer) rather than sparse; in memory,
        the ``contiguous`` the SChunk was created with (as python-blosc2 reports it)."""
        return bool(self._storage.contiguous) if self.urlpath is None else not self._frame.sparse

    @property
    def mode(self) -> str:
        """``'r'``, ``'a'`` or ``'w'``."""
        return self._storage.mode

    @property
    def bytes_read(self) -> int:
        """Bytes read from the storage since the SChunk was opened (a pyblosc2 extension:
        shows that slices read only the blocks they need)."""
        return int(self._frame.store.bytes_read)

    @property
    def meta(self) -> Meta:
        """The fixed-size metalayers (``b2nd`` and the user's)."""
        return Meta(self)

    @property
    def vlmeta(self) -> VLMeta:
        """The variable-length metalayers."""
        return VLMeta(self)

    def __len__(self) -> int:
        return self.nbytes // self.typesize

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy (pickle, copy, another process) reopens the frame: no handle state crosses.
        if self.urlpath is None:
            return (schunk_from_cframe, (self.to_cframe(),))
        storage = replace(self._storage, meta=None)
        if storage.mmap_mode in ("w+", "r+"):
            storage = replace(storage, mmap_mode="r+")  # never recreate the file
        elif storage.mode == "w":
            storage = replace(storage, mode="a")
        return (_reopen, (storage, self._offset, self.cparams, self.dparams, self._remote))

    # -- chunks ---------------------------------------------------------------------------
    def append_chunk(self, chunk: Any) -> int:
        """Append an already compressed chunk; returns the new number of chunks."""
        return self._append(bytes(as_view(chunk)), False)

    def append_data(self, data: Any) -> int:
        """Compress ``data`` (normally ``chunksize`` bytes) and append it as one chunk."""
        self._check_writable()
        # A chunk larger than chunksize, or one after a short last chunk, makes the frame
        # variable-sized, as C-Blosc2 does (frame-format.md §2.7).
        return self._append(self.compress_data(data), True)

    @writes
    def _append(self, chunk: bytes, ours: bool) -> int:
        """Append ``chunk`` (``ours``: :meth:`compress_data` just wrote it: its layout is not
        checked again)."""
        self._frame.append(chunk, self._requested_chunksize, checked=ours)
        return self.nchunks

    def compress_data(self, data: Any, nchunk: int | None = None) -> bytes:
        """``data`` compressed with this SChunk's ``cparams`` into a chunk that is not stored
        (a pyblosc2 extension, for containers built on an SChunk); ``nchunk``: the position
        it is for (default: appended), which a prefilter sees."""
        if self._prefilter is not None:
            data = apply_prefilter(
                self, self._prefilter, data, self.nchunks if nchunk is None else nchunk
            )
        spec = EncodeSpec.from_cparams(self.cparams, context=self._frame.reader.context)
        return encode_chunk(as_view(data), spec)

    @writes
    def set_chunks(self, refs: list[int | bytes], meta: dict[str, bytes] | None = None) -> int:
        """Make the chunk list ``refs`` in one commit: an ``int`` keeps stored chunk ``k``,
        ``bytes`` is a new compressed chunk; ``meta`` replaces metalayer contents (same
        sizes) in the same commit. Returns the new number of chunks (a pyblosc2 extension)."""
        self._check_writable()
        metalayers = None
        if meta:
            current = dict(self.header.metalayers)
            for name, content in meta.items():
                if name not in current or len(content) != len(current[name]):
                    raise ParamError(f"metalayer {name!r} must exist and keep its size")
            metalayers = tuple((k, meta.get(k, v)) for k, v in self.header.metalayers)
        self._frame.rewrite(refs, self._requested_chunksize, metalayers)
        return self.nchunks

    @writes
    def replace_tail(self, keep: int, chunks: list[bytes], meta: dict[str, bytes]) -> int:
        """:meth:`set_chunks` of ``[0, ..., keep - 1, *chunks]``, in time that does not grow
        with ``keep`` (see :meth:`Frame.replace_tail`; a pyblosc2 extension)."""
        self._check_writable()
        current = dict(self.header.metalayers)
        for name, content in meta.items():
            if name not in current or len(content) != len(current[name]):
                raise ParamError(f"metalayer {name!r} must exist and keep its size")
        metalayers = tuple((k, meta.get(k, v)) for k, v in self.header.metalayers)
        self._frame.replace_tail(keep, chunks, self._requested_chunksize, metalayers)
        return self.nchunks

    @reads
    def verify(self) -> list[int]:
        """Rehash every chunk; return the indices of damaged chunks (empty: all intact).

        Raises :class:`FormatError` when fingerprinting is off, or when the digest list does
        not match the trailer fingerprint or the chunk count (a frame changed by a writer that
        does not keep the list, e.g. C-Blosc2, is reported as stale).
        """
        return self._frame.damaged_chunks()

    @reads
    def get_chunk(self, nchunk: int) -> bytes:
        """The compressed chunk (special offsets give a synthesised 32-byte chunk)."""
        return bytes(self._frame.get_chunk(self._chunk_index(nchunk)))

    @overload
    def decompress_chunk(self, nchunk: int, dst: None = None) -> bytes: ...
    @overload
    def decompress_chunk(self, nchunk: int, dst: BufferLike) -> None: ...
    @reads
    def decompress_chunk(self, nchunk: int, dst: BufferLike | None = None) -> bytes | None:
        """Decompress chunk ``nchunk`` into ``dst`` (returns None) or a new bytes object."""
        if self._postfilter is not None:
            return postfiltered_decompress(self, self._postfilter, nchunk, dst)
        frame = self._frame
        reader = ChunkReader.open(frame.get_chunk(self._chunk_index(nchunk)), frame.reader.context)
        if dst is None:
            return reader.decode_bytes(self.dparams.nthreads)
        out = writable_view(dst)
        if len(out) < reader.header.nbytes:
            raise ParamError(f"dst has {len(out)} bytes, the chunk needs {reader.header.nbytes}")
        reader.decode(out, nthreads=self.dparams.nthreads)
        return None

    @reads
    def read_chunk_range(self, nchunk: int, start: int, stop: int) -> np.ndarray:
        """Bytes ``[start, stop)`` of chunk ``nchunk`` decompressed, reading (on files) and
        decoding only the blocks they need (a pyblosc2 extension)."""
        return self._frame.read_chunk_range(self._chunk_index(nchunk), start, stop)

    def _prefetch(self, chunks: list[int]) -> None:
        """``chunks`` are about to be read whole: a remote store fetches them concurrently."""
        self._frame.reader.prefetch(chunks)

    def _chunk_index(self, n: int) -> int:
        if not -self.nchunks <= n < self.nchunks:
            raise BoundsError(f"nchunk {n} out of range for {self.nchunks} chunks")
        return n % self.nchunks

    def iterchunks(self, dtype: Any) -> Iterator[np.ndarray]:
        """Yield each chunk decompressed into an array of ``dtype``."""
        for n in range(self.nchunks):
            yield np.frombuffer(self.decompress_chunk(n) or b"", dtype=dtype)

    # -- items ----------------------------------------------------------------------------
    @reads
    def get_slice(self, start: int = 0, stop: int | None = None, out: Any = None) -> bytes | None:
        """Items ``[start, stop)``, reading only the chunks (and blocks) they cover."""
        if self._postfilter is not None:
            return postfiltered_read(self, self._postfilter, start, stop, out)
        h = self.header
        ts = h.typesize
        start, stop, _ = slice(start, stop).indices(h.nbytes // ts)
        stop = max(stop, start)
        pos, end = start * ts, max(stop, start) * ts
        frame, nthreads = self._frame, self.dparams.nthreads
        cs = h.chunksize
        if out is None and cs > 0 and pos < end and (k := pos // cs) == (end - 1) // cs:
            c0 = k * cs  # a part of one chunk (a one-item read): a ranged read, no set-up
            if pos > c0 or end < min(c0 + cs, h.nbytes):
                return bytes(frame.read_chunk_range(k, pos - c0, end - c0))
        ctx = frame.reader.context

        def read(result: np.ndarray) -> None:
            # Straight into the result: whole chunks decoded concurrently (one chunk per
            # thread beats the blocks of one chunk at a time), partial ones by ranged reads.
            spans = list(self._chunk_spans(pos, end))
            self._prefetch([k for k, (c0, c1) in spans if pos <= c0 and c1 <= end])
            whole: list[tuple[int, np.ndarray]] = []
            for k, (c0, c1) in spans:
                lo, hi = max(pos, c0) - c0, min(end, c1) - c0
                dst = result[max(pos, c0) - pos : min(end, c1) - pos]
                if lo == 0 and hi == c1 - c0:
                    whole.append((k, dst))
                else:
                    frame.read_chunk_range(k, lo, hi, dst)
            if len(whole) == 1:
                ChunkReader.open(frame.get_chunk(whole[0][0]), ctx).decode(whole[0][1], nthreads)
            else:
                run_parallel(
                    lambda w: ChunkReader.open(frame.get_chunk(w[0]), ctx).decode(w[1]),
                    whole,
                    nthreads,
                )

        if out is None:
            return fill_bytes(end - pos, read)
        result = writable_view(out)
        if len(result) < end - pos:
            raise ParamError(
                f"Not enough space in out: {len(result)} bytes, the slice needs {end - pos}"
            )
        read(result[: end - pos])
        return None

    def _chunk_spans(self, lo: int, hi: int) -> Iterator[tuple[int, tuple[int, int]]]:
        cs = self.header.chunksize
        if cs > 0:
            for k in range(lo // cs, min(-(-hi // cs), self.nchunks)):
                yield k, (k * cs, min((k + 1) * cs, self.nbytes))
            return
        pos = 0
        for k, nb in enumerate(self._frame.chunk_sizes()):  # variable sizes
            if pos + nb > lo and pos < hi:
                yield k, (pos, pos + nb)
            pos += nb

    def __getitem__(self, key: int | slice) -> bytes:
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise BoundsError("step must be 1")
            return self.get_slice(key.start or 0, key.stop) or b""
        n = len(self)
        if not -n <= key < n:
            raise BoundsError(f"index {key} out of range for {n} items")
        key %= n
        return self.get_slice(key, key + 1) or b""

    @reads
    def to_cframe(self) -> bytes:
        """The SChunk as a contiguous frame (a sparse frame is gathered into one)."""
        return self._frame.to_cframe()


def _reopen(
    storage: Storage,
    offset: int,
    cparams: CParams,
    dparams: DParams,
    remote: dict[str, Any] | None = None,
) -> SChunk:
    path = os.fsdecode(storage.urlpath or "")
    s = SChunk._from_frame(open_frame(path, storage, offset, remote), storage)
    s.cparams, s.dparams, s._offset, s._remote = cparams, dparams, offset, remote or {}
    return s


def schunk_from_cframe(cframe: Any, copy: bool = False) -> SChunk:
    """An in-memory SChunk over a cframe (the bytes are always copied: frames are mutable).

    >>> s = SChunk(chunksize=400, data=np.arange(250, dtype=np.int32), cparams={"typesize": 4})
    >>> t = schunk_from_cframe(s.to_cframe())
    >>> t.nchunks, np.frombuffer(t[100:103], np.int32)
    (3, array([100, 101, 102], dtype=int32))
    """
    frame = Frame(MemoryStore(bytes(as_view(cframe))), exact=True)
    return SChunk._from_frame(frame, Storage(mode="a", contiguous=True))
