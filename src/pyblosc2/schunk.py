"""SChunk: a sequence of chunks stored as a contiguous frame, in memory or in a file
(frame-format.md; python-blosc2's ``SChunk`` API).

Contiguous frames (memory, files, files at an offset, ``mmap_mode``) and sparse frames
(directories): creation with metalayers, appends that write only the new chunk, index, trailer
and header, insert/update/delete/reorder/fill_special/slice assignment, reads that touch only
the chunks (and, on files, the blocks) they need, ``meta``, ``vlmeta`` and an opt-in integrity
fingerprint. A failed mutation restores the previous frame.
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._bytes import as_view, writable_view
from .api import compress2, decompress2
from .chunk.decode import ChunkReader
from .chunk.header import ChunkHeader
from .constants import EXTENDED_HEADER_LENGTH, Codec, SpecialValue
from .errors import FormatError, ParamError
from .frame.contiguous import FrameReader, chunk_path
from .frame.fingerprint import FP_KEY, FPT_128, chunk_digest, list_fingerprint, offset_digest
from .frame.header import POS_FRAME_TYPE, SPARSE, FrameHeader
from .frame.store import FileStore, MemoryStore, MmapStore
from .frame.trailer import Trailer
from .frame.writer import SPECIAL_OFFSET_OF, build_cframe, encode_index
from .meta import RawMetalayer, packb, unpackb
from .params import CParams, DParams

__all__ = ["SChunk", "Storage", "open", "remove_urlpath", "schunk_from_cframe"]

SPARSE_INDEX = "chunks.b2frame"
# mmap_mode -> the mode it implies (python-blosc2 conventions, frame-format.md §9.5)
_MMAP_MODES = {"r": "r", "r+": "a", "w+": "w", "c": "a"}
DEFAULT_CHUNKSIZE = 2**24
MAX_DEFAULT_CHUNKSIZE = 2**28
_READONLY = "Cannot do this action with reading mode"
_SPECIAL_IDS = (SpecialValue.ZERO, SpecialValue.NAN, SpecialValue.UNINIT)


@dataclass
class Storage:
    """Where and how an SChunk is stored (python-blosc2's ``Storage``)."""

    contiguous: bool | None = None
    urlpath: str | None = None
    mode: str = "a"
    mmap_mode: str | None = None
    initial_mapping_size: int | None = None
    locking: bool = False
    meta: dict | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("r", "a", "w"):
            raise ParamError(f"mode must be one of 'r', 'a', 'w', got {self.mode!r}")
        if self.contiguous is None:
            self.contiguous = self.urlpath is not None
        if self.mmap_mode is not None:
            if self.mmap_mode not in _MMAP_MODES:
                raise ParamError(
                    f"mmap_mode must be one of {sorted(_MMAP_MODES)}, got {self.mmap_mode!r}"
                )
            if self.urlpath is None or not self.contiguous:
                raise ParamError("mmap_mode needs a urlpath and a contiguous frame")
            if self.locking:
                raise ParamError("mmap_mode and locking cannot be combined")
            self.mode = _MMAP_MODES[self.mmap_mode]


class SChunk:
    """A super-chunk.

    >>> s = SChunk(chunksize=400, cparams={"typesize": 4})
    >>> s.append_data(np.arange(100, dtype=np.int32)); s.append_data(np.arange(50, dtype=np.int32))
    1
    2
    >>> np.frombuffer(s[98:102], np.int32)
    array([98, 99,  0,  1], dtype=int32)
    """

    def __init__(self, chunksize: int | None = None, data: Any = None, **kwargs: Any) -> None:
        fingerprint = bool(kwargs.pop("fingerprint", False))
        storage = kwargs.pop("storage", None)
        cparams = kwargs.pop("cparams", None)
        dparams = kwargs.pop("dparams", None)
        skw = {k: kwargs.pop(k) for k in list(kwargs) if k in Storage.__dataclass_fields__}
        if kwargs:
            raise ParamError(f"unknown SChunk arguments {sorted(kwargs)}")
        if storage is None:
            storage = Storage(**skw)
        elif isinstance(storage, dict):
            storage = Storage(**storage)
        elif skw:
            raise ParamError("pass either storage or individual storage arguments, not both")
        self._storage = storage
        self.dparams = DParams.from_any(dparams)
        path = storage.urlpath
        if path is not None and storage.mode == "w":
            remove_urlpath(path)
        if path is not None and (storage.mode == "r" or os.path.exists(path)):
            if (
                storage.mode == "a"
                and os.path.exists(path)
                and (cparams is not None or data is not None or chunksize)
            ):
                raise ParamError(f"{path} exists: open it with blosc2.open() or mode='w'")
            if not os.path.exists(path):
                raise ParamError(f"Cannot open the SChunk in reading mode: {path} does not exist")
            if os.path.isdir(path):
                self._attach_sparse(path, writable=storage.mode != "r")
            elif storage.mmap_mode == "r":
                self._attach(MmapStore(path))
            elif storage.mmap_mode == "c":  # copy-on-write: changes never reach the file
                with builtins.open(path, "rb") as f:
                    self._attach(MemoryStore(f.read()))
            else:
                self._attach(FileStore(path, writable=storage.mode != "r"))
            self.cparams = self._cparams_from_header(cparams)
            return
        if isinstance(cparams, CParams):
            cp = cparams
        else:
            given = dict(cparams or {})
            if "typesize" not in given:
                given["typesize"] = getattr(data, "itemsize", 1) if data is not None else 1
            cp = CParams.from_any(given)
        self.cparams = cp
        view = as_view(data) if data is not None else None
        if chunksize is None:
            chunksize = (
                DEFAULT_CHUNKSIZE if view is None else max(1, min(len(view), MAX_DEFAULT_CHUNKSIZE))
            )
        self._default_chunksize = self._requested_chunksize = chunksize
        metas = tuple(
            (str(k), bytes(v) if isinstance(v, RawMetalayer) else packb(v))
            for k, v in (storage.meta or {}).items()
        )
        frame = build_cframe(
            [],
            typesize=cp.typesize,
            chunksize=-1,
            metalayers=metas,
            codec=int(cp.codec),
            clevel=cp.clevel,
            splitmode=int(cp.splitmode),
            filters=tuple(int(f) for f in (cp.filters + [0] * 6)[:6]),
            filters_meta=tuple(m & 0xFF for m in (cp.filters_meta + [0] * 6)[:6]),
            blocksize=cp.blocksize,
        )
        if path is not None and not storage.contiguous:
            if fingerprint:
                raise NotImplementedError("fingerprints of sparse frames")
            os.makedirs(path)
            index_file = os.path.join(path, SPARSE_INDEX)
            with builtins.open(index_file, "xb") as f:
                f.write(frame[:POS_FRAME_TYPE] + bytes([SPARSE]) + frame[POS_FRAME_TYPE + 1 :])
            self._attach_sparse(path, writable=True)
        else:
            store = FileStore(path, writable=True, create=True) if path else MemoryStore()
            store.write(0, frame)
            self._attach(store)
        if fingerprint:
            self._commit(self.header, self._reader.offsets, self._reader.trailer, digests=b"")
        if view is not None:
            for pos in range(0, len(view), chunksize):
                self.append_data(view[pos : pos + chunksize])

    # -- plumbing ---------------------------------------------------------------------------
    def _attach_sparse(self, directory: str, writable: bool) -> None:
        """Attach to a sparse frame: ``chunks.b2frame`` plus one file per chunk (§6)."""
        index_file = os.path.join(directory, SPARSE_INDEX)
        if not os.path.exists(index_file):
            raise FormatError(
                "sparse frame", SPARSE_INDEX, None, f"a file in {directory}", "missing"
            )
        self._attach(FileStore(index_file, writable=writable), sparse_dir=directory)

    def _attach(
        self, store: FileStore | MemoryStore | MmapStore, sparse_dir: str | None = None
    ) -> None:
        self._store = store
        reader = FrameReader.open(
            store, exact=isinstance(store, MemoryStore), sparse_dir=sparse_dir
        )
        self._reader = reader
        if not hasattr(self, "_default_chunksize"):
            cs = reader.header.chunksize
            self._default_chunksize = cs if cs >= 0 else DEFAULT_CHUNKSIZE

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
                splitmode=h.splitmode,
                filters=list(h.filters),
                filters_meta=list(h.filters_meta),
                use_dict=h.use_dict,
                codec_meta=h.compcode_meta,
            )
        except ParamError as exc:
            raise FormatError(
                "frame header",
                "compression parameters",
                27,
                "valid codec, clevel, split mode and filters",
                str(exc),
            ) from None

    @property
    def header(self) -> FrameHeader:
        return self._reader.header

    def _check_writable(self) -> None:
        if self._storage.mode == "r":
            raise ValueError(_READONLY)

    def _digests(self) -> bytes | None:
        """The per-chunk digest list, or None when fingerprinting is off."""
        raw = dict(self._reader.trailer.vlmeta).get(FP_KEY)
        return None if raw is None else unpackb(decompress2(raw))

    def _commit(
        self,
        header: FrameHeader,
        offsets: np.ndarray,
        trailer: Trailer,
        chunk: bytes | None = None,
        digests: bytes | None = None,
    ) -> None:
        """Write ``chunk`` (the last bytes of the new data area), the index and the trailer,
        then the header; on any failure restore the previous bytes so the frame stays
        readable. Appends only overwrite the old index and trailer, which is all that is kept
        for the rollback."""
        if self._reader.sparse_dir is not None:
            self._commit_sparse(header, offsets, trailer, {})
            return
        store, old = self._store, self.header
        if digests is not None:  # fingerprinting on: refresh the list and the trailer digest
            entry = compress2(packb(digests), typesize=1, codec=Codec.ZSTD, clevel=5, nthreads=1)
            others = tuple((k, v) for k, v in trailer.vlmeta if k != FP_KEY)
            trailer = Trailer((*others, (FP_KEY, entry)), FPT_128, list_fingerprint(digests))
        chunk = chunk or b""
        pos = header.header_len + header.cbytes - len(chunk)
        keep_from = min(pos, old.header_len + old.cbytes)
        old_tail = bytes(store.read(keep_from, old.frame_len - keep_from))
        index = encode_index(offsets) if len(offsets) else b""
        tail = b"".join([chunk, index, trailer.to_bytes()])
        new = replace(
            header,
            frame_len=header.header_len + header.cbytes + len(index) + len(trailer.to_bytes()),
            has_vlmeta=bool(trailer.vlmeta),
        )
        new_header = new.to_bytes()
        if len(new_header) != old.header_len:
            raise FormatError("frame header", "header_len", 11, old.header_len, len(new_header))
        try:
            store.write(pos, tail)
            store.truncate(pos + len(tail))
            store.write(0, new_header)
        except BaseException:
            store.write(keep_from, old_tail)
            store.truncate(old.frame_len)
            store.write(0, old.to_bytes())
            raise
        self._reader = FrameReader(store, new, trailer, offsets)

    # -- properties -----------------------------------------------------------------------
    @property
    def nchunks(self) -> int:
        return self._reader.nchunks

    @property
    def nbytes(self) -> int:
        return self.header.nbytes

    @property
    def cbytes(self) -> int:
        return self.header.frame_len

    @property
    def cratio(self) -> float:
        return self.nbytes / self.cbytes

    @property
    def chunksize(self) -> int:
        cs = self.header.chunksize
        return self._default_chunksize if cs < 0 else cs

    @property
    def chunkshape(self) -> int:
        return self.chunksize // self.typesize

    @property
    def typesize(self) -> int:
        return self.header.typesize

    @property
    def blocksize(self) -> int:
        return self.header.blocksize

    @property
    def urlpath(self) -> str | None:
        return self._storage.urlpath

    @property
    def contiguous(self) -> bool:
        return bool(self._storage.contiguous)

    @property
    def mode(self) -> str:
        return self._storage.mode

    @property
    def bytes_read(self) -> int:
        """Bytes read from the storage since the SChunk was opened (a pyblosc2 extension:
        shows that slices read only the blocks they need)."""
        return int(self._store.bytes_read)

    @property
    def meta(self) -> Meta:
        return Meta(self)

    @property
    def vlmeta(self) -> VLMeta:
        return VLMeta(self)

    def __len__(self) -> int:
        return self.nbytes // self.typesize

    # -- chunks ---------------------------------------------------------------------------
    def append_chunk(self, chunk: Any) -> int:
        """Append an already compressed chunk; returns the new number of chunks."""
        self._check_writable()
        chunk = bytes(as_view(chunk))
        if self._reader.sparse_dir is not None:
            return self._rewrite([*range(self.nchunks), chunk])
        ch = _check_chunk(chunk)
        h = self.header
        chunksize = h.chunksize
        if chunksize < 0:
            chunksize = self._first_chunksize(ch.nbytes)
        elif chunksize > 0:
            last_short = h.nbytes % chunksize != 0
            if last_short or ch.nbytes > chunksize:
                chunksize = 0  # C switches to variable-size chunks (frame-format.md §2.7)
        if ch.typesize != h.typesize and ch.typesize != 1 and h.typesize <= 255:
            raise ParamError(f"chunk typesize {ch.typesize} differs from the SChunk's {h.typesize}")
        offsets = self._reader.offsets.copy()
        pieces: list[bytes] = []
        cbytes = h.cbytes
        if chunksize == 0 and h.chunksize > 0 and (offsets < 0).any():
            # Special offsets record no size, which a variable-size frame needs: store those
            # chunks as 32-byte chunks (C would write the offsets and then fail to read them).
            for k in np.flatnonzero(offsets < 0):
                raw = bytes(self._reader.get_chunk(int(k)))
                offsets[k] = cbytes
                pieces.append(raw)
                cbytes += len(raw)
        if ch.special in _SPECIAL_IDS and chunksize > 0:
            offset = SPECIAL_OFFSET_OF[SpecialValue(ch.special)]
        else:
            offset = cbytes
            pieces.append(chunk[: ch.cbytes])
            cbytes += ch.cbytes
        stored = b"".join(pieces)
        flags = h.general_flags
        if chunksize == 0:
            flags = (flags & 0xB0) | 0x40 | 3
        offsets = np.append(offsets, np.int64(offset))
        header = replace(
            h, nbytes=h.nbytes + ch.nbytes, cbytes=cbytes, chunksize=chunksize, general_flags=flags
        )
        digests = self._digests()
        if digests is not None:
            digests = self._updated_digests(digests, offsets, pieces, stored)
        self._commit(header, offsets, self._reader.trailer, stored, digests)
        return self.nchunks

    def _updated_digests(
        self, old: bytes, offsets: np.ndarray, pieces: list[bytes], stored: bytes
    ) -> bytes:
        """Digests after an append: only the new chunk is hashed (unless special chunks had to
        be stored as bytes, or the list was stale: then every chunk is)."""
        if len(old) != 8 * (len(offsets) - 1) or len(pieces) > 1:
            return self._all_digests(offsets, stored)
        last = int(offsets[-1])
        return old + (offset_digest(last) if last < 0 else chunk_digest(stored))

    def _all_digests(self, offsets: np.ndarray, pending: bytes = b"") -> bytes:
        """Digests of every chunk for the index ``offsets``; ``pending`` holds the bytes about
        to be written at the current end of the data area."""
        h, src = self.header, self._store
        out = bytearray()
        for off in offsets.tolist():
            if off < 0:
                out += offset_digest(off)
            elif off >= h.cbytes:
                k = off - h.cbytes
                ch = ChunkHeader.from_bytes(pending[k : k + EXTENDED_HEADER_LENGTH])
                out += chunk_digest(pending[k : k + ch.cbytes])
            else:
                pos = h.header_len + off
                ch = ChunkHeader.from_bytes(src.read(pos, EXTENDED_HEADER_LENGTH))
                out += chunk_digest(src.read(pos, ch.cbytes))
        return bytes(out)

    def verify(self) -> list[int]:
        """Rehash every chunk; return the indices of damaged chunks (empty: all intact).

        Raises :class:`FormatError` when fingerprinting is off, or when the digest list does
        not match the trailer fingerprint or the chunk count (a frame changed by a writer that
        does not keep the list, e.g. C-Blosc2, is reported as stale).
        """
        digests = self._digests()
        tr = self._reader.trailer
        if digests is None:
            raise FormatError(
                "frame trailer",
                "fingerprint",
                None,
                "a pyblosc2 fingerprint (SChunk(..., fingerprint=True))",
                "none",
            )
        if tr.fingerprint_type != FPT_128 or tr.fingerprint != list_fingerprint(digests):
            raise FormatError(
                "frame trailer",
                "fingerprint",
                None,
                "the XXH3-128 of the chunk digest list",
                "a different value (stale or damaged digest list)",
            )
        if len(digests) != 8 * self.nchunks:
            raise FormatError(
                "frame trailer",
                "fingerprint",
                None,
                f"{self.nchunks} chunk digests",
                f"{len(digests) // 8}",
            )
        damaged = []
        h = self.header
        for n, off in enumerate(self._reader.offsets.tolist()):
            want = digests[8 * n : 8 * n + 8]
            if off < 0:
                got = offset_digest(off)
            else:
                pos = h.header_len + off
                try:
                    ch = ChunkHeader.from_bytes(self._store.read(pos, EXTENDED_HEADER_LENGTH))
                    got = chunk_digest(self._store.read(pos, ch.cbytes))
                except FormatError:
                    got = b""
            if got != want:
                damaged.append(n)
        return damaged

    def append_data(self, data: Any) -> int:
        """Compress ``data`` (normally ``chunksize`` bytes) and append it as one chunk."""
        self._check_writable()
        # A chunk larger than chunksize, or one after a short last chunk, makes the frame
        # variable-sized, as C-Blosc2 does (frame-format.md §2.7).
        return self.append_chunk(compress2(as_view(data), cparams=self.cparams))

    def get_chunk(self, nchunk: int) -> bytes:
        """The compressed chunk (special offsets give a synthesised 32-byte chunk)."""
        return bytes(self._reader.get_chunk(self._chunk_index(nchunk)))

    def decompress_chunk(self, nchunk: int, dst: Any = None) -> bytes | None:
        """Decompress chunk ``nchunk`` into ``dst`` (returns None) or a new bytes object."""
        return decompress2(
            self._reader.get_chunk(self._chunk_index(nchunk)), dst, dparams=self.dparams
        )

    def _chunk_index(self, n: int) -> int:
        if not -self.nchunks <= n < self.nchunks:
            raise IndexError(f"nchunk {n} out of range for {self.nchunks} chunks")
        return n % self.nchunks

    def iterchunks(self, dtype: Any) -> Iterator[np.ndarray]:
        """Yield each chunk decompressed into an array of ``dtype``."""
        for n in range(self.nchunks):
            yield np.frombuffer(self.decompress_chunk(n), dtype=dtype)

    def iterchunks_info(self) -> Iterator[ChunkInfo]:
        """Yield a :class:`ChunkInfo` per chunk (reads chunk headers only)."""
        for n in range(self.nchunks):
            raw = self._reader.get_chunk(n)
            ch = ChunkHeader.from_bytes(raw[:EXTENDED_HEADER_LENGTH])
            value = bytes(raw[32 : ch.cbytes]) if ch.special == SpecialValue.VALUE else None
            yield ChunkInfo(n, ch.nbytes / ch.cbytes, SpecialValue(ch.special), value, False)

    # -- items ----------------------------------------------------------------------------
    def get_slice(self, start: int = 0, stop: int | None = None, out: Any = None) -> bytes | None:
        """Items ``[start, stop)``, reading only the chunks (and blocks) they cover."""
        n = len(self)
        start, stop, _ = slice(start, stop).indices(n)
        stop = max(stop, start)
        ts = self.typesize
        result = np.empty((stop - start) * ts, np.uint8) if out is None else writable_view(out)
        if out is not None and len(result) < (stop - start) * ts:
            raise ParamError(f"out has {len(result)} bytes, the slice needs {(stop - start) * ts}")
        pos, first = start * ts, start * ts
        end = stop * ts
        for k, (c0, c1) in self._chunk_spans(pos, end):
            lo, hi = max(pos, c0) - c0, min(end, c1) - c0
            dst = result[max(pos, c0) - first : min(end, c1) - first]
            if lo == 0 and hi == c1 - c0:  # the whole chunk: decode straight into the output
                ChunkReader.open(self._reader.get_chunk(k)).decode(dst, self.dparams.nthreads)
            else:
                dst[:] = self._chunk_range(k, lo, hi)
        return result[: end - first].tobytes() if out is None else None

    def _chunk_spans(self, lo: int, hi: int) -> Iterator[tuple[int, tuple[int, int]]]:
        cs = self.header.chunksize
        if cs > 0:
            for k in range(lo // cs, min(-(-hi // cs), self.nchunks)):
                yield k, (k * cs, min((k + 1) * cs, self.nbytes))
            return
        pos = 0
        for k in range(self.nchunks):  # variable sizes: walk the chunk headers
            nb = ChunkHeader.from_bytes(self._reader.get_chunk(k)[:32]).nbytes
            if pos + nb > lo and pos < hi:
                yield k, (pos, pos + nb)
            pos += nb

    def _chunk_range(self, k: int, lo: int, hi: int) -> np.ndarray:
        """Bytes ``[lo, hi)`` of chunk ``k``; on files only the needed blocks are read."""
        return self._reader.read_chunk_range(k, lo, hi)

    def __getitem__(self, key: int | slice) -> bytes:
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise IndexError("step must be 1")
            return self.get_slice(key.start or 0, key.stop)  # type: ignore[return-value]
        n = len(self)
        if not -n <= key < n:
            raise IndexError(f"index {key} out of range for {n} items")
        key %= n
        return self.get_slice(key, key + 1)  # type: ignore[return-value]

    # -- mutations other than append --------------------------------------------------------
    def _first_chunksize(self, nbytes: int) -> int:
        """The chunk size a frame gets from its first chunk: the size the SChunk was created
        with when that chunk fits (a short first chunk, as python-blosc2 reports), else the
        chunk's own size (as C-Blosc2 sets it for frames it did not create)."""
        requested = getattr(self, "_requested_chunksize", None)
        return requested if requested and nbytes <= requested else nbytes

    def _chunk_sizes(self) -> list[int]:
        """Uncompressed size of every chunk (from the header for fixed sizes)."""
        r = self._reader
        if self.header.chunksize > 0:
            return [r.chunk_nbytes(k) for k in range(r.nchunks)]
        return [
            ChunkHeader.from_bytes(r.get_chunk(k)[:EXTENDED_HEADER_LENGTH]).nbytes
            for k in range(r.nchunks)
        ]

    def _plan(self, refs: list[int | bytes]) -> tuple[list[int], list[Any], int]:
        """Sizes, special kinds and the resulting chunk size of the chunk list ``refs``: fixed
        while the sizes are regular (all equal but a shorter last one), else variable (0), as
        in C-Blosc2 (frame-format.md §2.7)."""
        old_sizes = self._chunk_sizes()
        sizes, kinds = [], []
        for ref in refs:
            if isinstance(ref, bytes):
                ch = _check_chunk(ref)
                sizes.append(ch.nbytes)
                kinds.append(SpecialValue(ch.special) if ch.special in _SPECIAL_IDS else None)
            else:
                sizes.append(old_sizes[ref])
                kinds.append(None)
        h = self.header
        cs = h.chunksize
        if cs < 0:
            cs = self._first_chunksize(sizes[0]) if sizes else 0
        elif cs == 0 and sizes:
            cs = sizes[0]  # sizes that became regular again make the frame fixed-size again
        regular = cs > 0 and all(x == cs for x in sizes[:-1]) and (not sizes or 0 < sizes[-1] <= cs)
        return sizes, kinds, cs if regular else (0 if sizes else h.chunksize)

    def _rewrite(self, refs: list[int | bytes]) -> int:
        """Make the chunk list ``refs``: an int reuses stored chunk k, bytes is a new chunk.

        New bytes are written at the end of the data area (bytes no offset refers to any more
        stay as dead space, which readers accept, frame-format.md §4.7); the chunk size
        becomes variable when the sizes stop being regular, as in C-Blosc2.
        """
        self._check_writable()
        if self._reader.sparse_dir is not None:
            return self._rewrite_sparse(refs)
        h, r = self.header, self._reader
        sizes, kinds, chunksize = self._plan(refs)
        offsets = np.empty(len(refs), np.int64)
        pieces: list[bytes] = []
        cbytes = h.cbytes if sizes else 0
        for i, ref in enumerate(refs):
            if isinstance(ref, bytes):
                if kinds[i] is not None and chunksize > 0:
                    offsets[i] = SPECIAL_OFFSET_OF[kinds[i]]
                    continue
                raw = ref[: ChunkHeader.from_bytes(ref).cbytes]
            else:
                old = int(r.offsets[ref])
                if old >= 0 or chunksize > 0:
                    offsets[i] = old
                    continue
                raw = bytes(r.get_chunk(ref))  # a special offset needs a size: store it
            offsets[i] = cbytes
            pieces.append(raw)
            cbytes += len(raw)
        flags = h.general_flags
        if chunksize == 0 and sizes:
            flags = (flags & 0xB0) | 0x40 | 3
        header = replace(
            h, nbytes=sum(sizes), cbytes=cbytes, chunksize=chunksize, general_flags=flags
        )
        stored = b"".join(pieces)
        digests = None
        if self._digests() is not None:
            # only the new bytes are hashed; digests of reused chunks are moved along
            old = self._digests() or b""
            out = bytearray()
            for i, ref in enumerate(refs):
                off = int(offsets[i])
                if (
                    isinstance(ref, int)
                    and len(old) == 8 * r.nchunks
                    and off == int(r.offsets[ref])
                ):
                    out += old[8 * ref : 8 * ref + 8]
                elif off < 0:
                    out += offset_digest(off)
                else:
                    k = off - h.cbytes
                    ch = ChunkHeader.from_bytes(stored[k : k + 32])
                    out += chunk_digest(stored[k : k + ch.cbytes])
            digests = bytes(out)
        self._commit(header, offsets, r.trailer, stored, digests)
        return self.nchunks

    def _rewrite_sparse(self, refs: list[int | bytes]) -> int:
        """``_rewrite`` for sparse frames: new chunks get new ids (1 + the largest id in use)
        and new files; the index file is then replaced atomically, so a failure at any point
        leaves the previous frame intact; files no longer referenced are removed last."""
        h, r = self.header, self._reader
        used = [int(o) for o in r.offsets if o >= 0]
        next_id = max(used, default=-1) + 1
        offsets, new_files = np.empty(len(refs), np.int64), {}
        sizes, kinds, chunksize = self._plan(refs)
        for i, ref in enumerate(refs):
            if isinstance(ref, bytes):
                if kinds[i] is not None and chunksize > 0:
                    offsets[i] = SPECIAL_OFFSET_OF[kinds[i]]
                    continue
                raw = ref[: ChunkHeader.from_bytes(ref).cbytes]
            else:
                old = int(r.offsets[ref])
                if old >= 0 or chunksize > 0:
                    offsets[i] = old
                    continue
                raw = bytes(r.get_chunk(ref))
            offsets[i] = next_id
            new_files[next_id] = raw
            next_id += 1
        flags = h.general_flags
        if chunksize == 0 and sizes:
            flags = (flags & 0xB0) | 0x40 | 3
        header = replace(h, nbytes=sum(sizes), chunksize=chunksize, general_flags=flags)
        self._commit_sparse(header, offsets, r.trailer, new_files)
        return self.nchunks

    def _commit_sparse(
        self,
        header: FrameHeader,
        offsets: np.ndarray,
        trailer: Trailer,
        new_files: dict[int, bytes],
    ) -> None:
        directory = self._reader.sparse_dir
        assert directory is not None
        for cid, data in new_files.items():
            with builtins.open(chunk_path(directory, cid), "wb") as f:
                f.write(data)
        live = {int(o) for o in offsets if o >= 0}
        total = sum(os.path.getsize(chunk_path(directory, cid)) for cid in live)
        index = encode_index(offsets) if len(offsets) else b""
        tbytes = trailer.to_bytes()
        new = replace(
            header,
            cbytes=total,
            has_vlmeta=bool(trailer.vlmeta),
            frame_len=header.header_len + len(index) + len(tbytes),
        )
        frame = new.to_bytes() + index + tbytes
        index_file = os.path.join(directory, SPARSE_INDEX)
        tmp = index_file + ".tmp"
        with builtins.open(tmp, "wb") as f:
            f.write(frame)
        self._store.close()
        os.replace(tmp, index_file)
        for cid in {int(o) for o in self._reader.offsets if o >= 0} - live:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(chunk_path(directory, cid))
        self._attach(FileStore(index_file, writable=True), sparse_dir=directory)

    def insert_chunk(self, nchunk: int, chunk: Any) -> int:
        """Insert a compressed chunk before position ``nchunk``."""
        if not 0 <= nchunk <= self.nchunks:
            raise IndexError(f"nchunk {nchunk} out of range 0..{self.nchunks}")
        refs: list[int | bytes] = list(range(self.nchunks))
        refs.insert(nchunk, bytes(as_view(chunk)))
        return self._rewrite(refs)

    def insert_data(self, nchunk: int, data: Any, copy: bool) -> int:
        """Compress ``data`` and insert it as chunk ``nchunk``."""
        return self.insert_chunk(nchunk, compress2(as_view(data), cparams=self.cparams))

    def update_chunk(self, nchunk: int, chunk: Any) -> int:
        """Replace chunk ``nchunk`` by a compressed chunk."""
        n = self._chunk_index(nchunk)
        refs: list[int | bytes] = list(range(self.nchunks))
        refs[n] = bytes(as_view(chunk))
        return self._rewrite(refs)

    def update_data(self, nchunk: int, data: Any, copy: bool) -> int:
        """Compress ``data`` and make it chunk ``nchunk``."""
        if self.nchunks == 0:
            return 0
        return self.update_chunk(nchunk, compress2(as_view(data), cparams=self.cparams))

    def delete_chunk(self, nchunk: int) -> int:
        """Remove chunk ``nchunk``."""
        n = self._chunk_index(nchunk)
        return self._rewrite([k for k in range(self.nchunks) if k != n])

    def reorder_offsets(self, order: Any) -> None:
        """Permute the chunks: new chunk ``i`` is old chunk ``order[i]``."""
        order = np.asarray(order)
        if order.ndim != 1 or sorted(order.tolist()) != list(range(self.nchunks)):
            raise ValueError(f"order must be a permutation of range({self.nchunks})")
        self._rewrite([int(k) for k in order])

    def fill_special(
        self, nitems: int, special_value: SpecialValue | int, value: Any = None
    ) -> int:
        """Fill an empty SChunk with ``nitems`` items of a special value."""
        from .api import make_special_chunk

        if self.nchunks:
            raise ValueError("fill_special needs an empty SChunk")
        kind = SpecialValue(special_value)
        if (value is None) != (kind != SpecialValue.VALUE):
            raise ValueError("value is needed for (and only for) SpecialValue.VALUE")
        ts, cs = self.typesize, self.chunksize
        total = nitems * ts
        chunks = []
        for pos in range(0, total, cs):
            nb = min(cs, total - pos)
            chunks.append(make_special_chunk(kind, nb, ts, value))
        return self._rewrite(chunks)

    def __setitem__(self, key: slice, value: Any) -> None:
        """Write items ``key.start:key.stop``; writing past the end grows the SChunk."""
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise IndexError("only slices with step 1 are supported")
        ts, cs = self.typesize, self.chunksize
        data = np.frombuffer(as_view(value), np.uint8)
        start = (key.start or 0) * ts
        stop = start + len(data) if key.stop is None else key.stop * ts
        if stop - start != len(data):
            raise ValueError(f"value has {len(data)} bytes, the slice needs {stop - start}")
        if self.header.chunksize <= 0 and self.nchunks:
            raise NotImplementedError("__setitem__ on variable-size SChunks")
        pos = start
        while pos < stop:
            k, within = divmod(pos, cs)
            take = min(cs - within, stop - pos)
            if k < self.nchunks:
                cur = np.frombuffer(self.decompress_chunk(k), np.uint8).copy()
                need = within + take
                if len(cur) < need:
                    cur = np.concatenate([cur, np.zeros(need - len(cur), np.uint8)])
                cur[within : within + take] = data[pos - start : pos - start + take]
                self.update_data(k, cur, copy=True)
            else:
                if within:
                    raise ValueError("writes past the end must start at the current end")
                self.append_data(data[pos - start : pos - start + take])
            pos += take

    def to_cframe(self) -> bytes:
        """The SChunk as a contiguous frame (a sparse frame is gathered into one)."""
        if self._reader.sparse_dir is None:
            return bytes(self._store.read(0, self.header.frame_len))
        h = self.header
        return build_cframe(
            [self.get_chunk(n) for n in range(self.nchunks)],
            typesize=h.typesize,
            chunksize=h.chunksize,
            metalayers=h.metalayers,
            vlmeta=self._reader.trailer.vlmeta,
            codec=h.codec,
            clevel=h.clevel,
            splitmode=h.splitmode,
            filters=h.filters,
            filters_meta=h.filters_meta,
            blocksize=h.blocksize,
        )


def _check_chunk(chunk: bytes) -> ChunkHeader:
    """The header of a chunk given to a mutation: whole, and not empty (a frame has no way to
    hold a chunk of 0 bytes, frame-format.md §2.7)."""
    ch = ChunkHeader.from_bytes(chunk)
    if ch.cbytes > len(chunk):
        raise FormatError("chunk header", "cbytes", 12, f"at most {len(chunk)}", ch.cbytes)
    if ch.nbytes == 0:
        raise ParamError("cannot store an empty chunk in an SChunk")
    ChunkReader.open(chunk)  # the rest of the chunk-level structure must be valid too
    return ch


@dataclass(frozen=True, slots=True)
class ChunkInfo:
    """What :meth:`SChunk.iterchunks_info` yields."""

    nchunk: int
    cratio: float
    special: SpecialValue
    repeated_value: bytes | None
    lazychunk: bool


class Meta(Mapping[str, Any]):
    """Fixed-size metalayers in the header (update in place with same-size content)."""

    def __init__(self, schunk: SChunk) -> None:
        self._s = schunk

    def _items(self) -> dict[str, bytes]:
        return dict(self._s.header.metalayers)

    def __getitem__(self, key: str) -> Any:
        items = self._items()
        if key not in items:
            raise KeyError(f"{key} not found")
        return unpackb(items[key])

    def __setitem__(self, key: str, value: Any) -> None:
        s = self._s
        s._check_writable()
        items = self._items()
        if key not in items:
            raise NotImplementedError("metalayers can only be added when the SChunk is created")
        content = bytes(value) if isinstance(value, RawMetalayer) else packb(value)
        if len(content) != len(items[key]):
            raise ValueError("The length of the content in a metalayer cannot change.")
        metas = tuple((k, content if k == key else v) for k, v in s.header.metalayers)
        header = replace(s.header, metalayers=metas)
        s._store.write(0, header.to_bytes())
        s._reader = replace(s._reader, header=header)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def getall(self) -> dict[str, Any]:
        return {k: self[k] for k in self}


class VLMeta(MutableMapping[str, Any]):
    """Variable-length metalayers in the trailer, values stored as python-blosc2 does."""

    def __init__(self, schunk: SChunk) -> None:
        self._s = schunk

    def _items(self) -> dict[str, bytes]:
        return {k: v for k, v in self._s._reader.trailer.vlmeta if k != FP_KEY}

    def __getitem__(self, key: str) -> Any:
        items = self._items()
        if key not in items:
            raise KeyError(key)
        return unpackb(decompress2(items[key]))

    def _write(self, entries: tuple[tuple[str, bytes], ...]) -> None:
        s = self._s
        s._check_writable()
        if len(entries) > 16:
            raise ParamError("an SChunk holds at most 16 vlmeta entries")
        trailer = replace(s._reader.trailer, vlmeta=entries)
        s._commit(s.header, s._reader.offsets, trailer)

    def __setitem__(self, key: str, value: Any) -> None:
        if not 1 <= len(key.encode()) <= 31:
            raise ParamError(f"vlmeta names must have 1..31 bytes, got {key!r}")
        stored = compress2(
            packb(value), typesize=1, codec=Codec.ZSTD, clevel=5, nthreads=self._s.cparams.nthreads
        )
        entries = self._s._reader.trailer.vlmeta
        if key in dict(entries):
            new = tuple((k, stored if k == key else v) for k, v in entries)
        else:
            new = (*entries, (key, stored))
        self._write(new)

    def __delitem__(self, key: str) -> None:
        entries = self._s._reader.trailer.vlmeta
        if key not in dict(entries):
            raise KeyError(key)
        self._write(tuple((k, v) for k, v in entries if k != key))

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def getall(self) -> dict[str, Any]:
        return {k: self[k] for k in self}


def open(
    urlpath: str | os.PathLike[str], mode: str = "r", offset: int = 0, **kwargs: Any
) -> SChunk:
    """Open a frame file (at ``offset``) as an SChunk."""
    path = os.fspath(urlpath)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such file or directory: {path}")
    if offset:
        if mode != "r":
            raise NotImplementedError("writing to a frame embedded at an offset")
        s = SChunk.__new__(SChunk)
        s._storage = Storage(urlpath=path, mode="r", contiguous=True)
        s.dparams = DParams.from_any(kwargs.get("dparams"))
        s._attach(FileStore(path, offset))
        s.cparams = s._cparams_from_header(kwargs.get("cparams"))
        return s
    if "mmap_mode" in kwargs:
        return SChunk(urlpath=path, **kwargs)
    return SChunk(urlpath=path, mode="r" if mode == "r" else "a", **kwargs)


def schunk_from_cframe(cframe: Any, copy: bool = False) -> SChunk:
    """An in-memory SChunk over a cframe (the bytes are always copied: frames are mutable)."""
    s = SChunk.__new__(SChunk)
    s._storage = Storage(mode="a")
    s.dparams = DParams()
    s._attach(MemoryStore(bytes(as_view(cframe))))
    s.cparams = s._cparams_from_header(None)
    return s


def remove_urlpath(path: str | os.PathLike[str] | None) -> None:
    """Remove a frame file (or a sparse-frame directory); a missing path is a no-op."""
    if path is None:
        return
    p = os.fsdecode(path)
    if os.path.isdir(p):
        for name in os.listdir(p):
            os.unlink(os.path.join(p, name))
        os.rmdir(p)
    elif os.path.exists(p):
        os.unlink(p)
        if os.path.exists(p + ".b2lock"):
            os.unlink(p + ".b2lock")
