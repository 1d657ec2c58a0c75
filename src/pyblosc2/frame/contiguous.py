"""Reading contiguous frames (cframes) from memory or from a file at an offset
(frame-format.md §1, §2.9, §4, §5, §7). Opening reads the header, the index chunk and the
trailer only; a chunk is read when asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.encode import special_chunk
from ..chunk.header import ChunkHeader
from ..constants import EXTENDED_HEADER_LENGTH, SpecialValue
from ..errors import FormatError, ParamError
from .header import CONTIGUOUS, FRAME_MAGIC, HEADER_MINLEN, SPARSE, FrameHeader
from .index import decode_index, special_of
from .trailer import TRAILER_MINLEN, Trailer, locate_trailer

__all__ = ["BufferSource", "FileSource", "FrameReader"]

PARTIAL_READ_MIN = 1 << 18  # chunks smaller than this are read whole


class ByteSource(Protocol):
    """Random access to the bytes of one frame (position 0 = first byte of the frame)."""

    size: int

    def read(self, pos: int, n: int) -> bytes | memoryview: ...


class BufferSource:
    """A frame held in memory; ``read`` returns views, no copies."""

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        self._mv = memoryview(buf).cast("B")
        self.size = len(self._mv)

    def read(self, pos: int, n: int) -> memoryview:
        return self._mv[pos : pos + n]


class FileSource:
    """A frame inside a file, starting at ``offset``; counts the bytes it reads."""

    def __init__(self, path: str | os.PathLike[str], offset: int = 0) -> None:
        self.path = os.fspath(path)
        self.offset = offset
        self._fd = os.open(self.path, os.O_RDONLY)
        self.size = os.fstat(self._fd).st_size - offset
        self.bytes_read = 0
        if self.size < 0:
            raise FormatError("frame", "offset", offset, "at most the file size", offset)

    def read(self, pos: int, n: int) -> bytes:
        data = os.pread(self._fd, n, self.offset + pos)
        self.bytes_read += len(data)
        return data

    def close(self) -> None:
        os.close(self._fd)


def _partial_sources() -> tuple[type, ...]:
    from .store import FileStore

    return (FileSource, FileStore)


@dataclass(slots=True)
class FrameReader:
    """A validated contiguous frame: header, trailer, chunk offsets."""

    source: ByteSource
    header: FrameHeader
    trailer: Trailer
    offsets: np.ndarray
    sparse_dir: str | None = None

    @classmethod
    def open(
        cls, source: ByteSource, *, exact: bool = False, sparse_dir: str | None = None
    ) -> FrameReader:
        """Parse the frame at the start of ``source`` (``exact``: the source must be exactly
        the frame, as for in-memory cframes). ``sparse_dir``: ``source`` is the
        ``chunks.b2frame`` of that sparse-frame directory (§6)."""
        prefix = source.read(0, HEADER_MINLEN)
        if len(prefix) < HEADER_MINLEN:
            raise FormatError(
                "frame header", "length", 0, f"at least {HEADER_MINLEN} bytes", len(prefix)
            )
        if exact and bytes(prefix[2:10]) != FRAME_MAGIC:
            raise FormatError("frame header", "magic", 2, repr(FRAME_MAGIC), bytes(prefix[2:10]))
        header_len = int.from_bytes(prefix[11:15], "big", signed=True)
        if not HEADER_MINLEN < header_len <= source.size:
            raise FormatError(
                "frame header", "header_len", 11, f"{HEADER_MINLEN + 10}..{source.size}", header_len
            )
        h = FrameHeader.from_bytes(source.read(0, header_len), buffer_len=source.size)
        if exact and h.frame_len != source.size:
            raise FormatError(
                "frame header", "frame_len", 16, f"the buffer size {source.size}", h.frame_len
            )
        expected_type = CONTIGUOUS if sparse_dir is None else SPARSE
        if h.frame_type != expected_type:
            raise FormatError(
                "frame header",
                "frame_type",
                26,
                f"{expected_type} ({'sparse' if sparse_dir else 'contiguous'})",
                h.frame_type,
            )
        if h.frame_len < h.header_len + TRAILER_MINLEN:
            raise FormatError(
                "frame header", "frame_len", 16, f">= header_len + {TRAILER_MINLEN}", h.frame_len
            )
        tlen = locate_trailer(
            source.read(h.frame_len - TRAILER_MINLEN, TRAILER_MINLEN), h.frame_len, h.header_len
        )
        tpos = h.frame_len - tlen
        trailer = Trailer.from_bytes(source.read(tpos, tlen), tpos)
        if h.nbytes == 0:
            offsets = np.empty(0, np.int64)
        else:
            ipos = h.header_len + (h.cbytes if sparse_dir is None else 0)
            if ipos + EXTENDED_HEADER_LENGTH > tpos:
                raise FormatError(
                    "frame header",
                    "cbytes",
                    39,
                    f"at most {tpos - h.header_len - EXTENDED_HEADER_LENGTH} "
                    "(room for the index chunk)",
                    h.cbytes,
                )
            offsets = decode_index(source.read(ipos, tpos - ipos), h.nchunks_fixed, ipos)
        return cls(source, h, trailer, offsets, sparse_dir)

    @property
    def nchunks(self) -> int:
        return len(self.offsets)

    def chunk_nbytes(self, n: int) -> int:
        """Uncompressed size of chunk ``n`` as the frame header implies (fixed chunk sizes)."""
        h = self.header
        if n == self.nchunks - 1 and h.nbytes % h.chunksize:
            return h.nbytes % h.chunksize
        return h.chunksize

    def _variable_special_size(self, n: int) -> int:
        """Size of special chunk ``n`` in a variable-chunk frame: the offset stores none, but
        when it is the only special one the total ``nbytes`` determines it. (C-Blosc2 writes
        such frames and then fails to read them back, frame-format.md §2.7.)"""
        specials = np.flatnonzero(self.offsets < 0)
        if len(specials) != 1:
            raise FormatError(
                "index chunk",
                f"offset[{n}]",
                None,
                "at most one special offset in a variable-chunk frame "
                "(its size is otherwise unknown)",
                f"{len(specials)} of them",
            )
        stored = sum(
            ChunkHeader.from_bytes(self.get_chunk(k)[:EXTENDED_HEADER_LENGTH]).nbytes
            for k in range(self.nchunks)
            if k != n
        )
        size = self.header.nbytes - stored
        if size < 0:
            raise FormatError(
                "frame header",
                "nbytes",
                30,
                f"at least the stored chunks' {stored} bytes",
                self.header.nbytes,
            )
        return size

    def get_chunk(self, n: int) -> bytes | memoryview:
        """The stored (or, for special offsets, synthesised) chunk ``n``."""
        if not 0 <= n < self.nchunks:
            raise IndexError(f"chunk {n} out of range 0..{self.nchunks - 1}")
        h = self.header
        off = int(self.offsets[n])
        if off < 0:
            kind = special_of(off)
            nb = self.chunk_nbytes(n) if h.chunksize > 0 else self._variable_special_size(n)
            ts = h.typesize
            bs = h.blocksize if 0 < h.blocksize <= nb else max(nb, 1)
            if kind == SpecialValue.NAN and ts not in (4, 8):
                raise FormatError("frame header", "typesize", 48, "4 or 8 for NaN chunks", ts)
            try:
                return special_chunk(kind, nb, ts, bs)
            except ParamError as exc:
                raise FormatError(
                    "frame header",
                    "chunksize/typesize",
                    58,
                    f"sizes a {kind.name} chunk can have",
                    str(exc),
                ) from None
        if self.sparse_dir is not None:
            data = read_chunk_file(self.sparse_dir, off, n)
            self._check_size(n, ChunkHeader.from_bytes(data), None)
            return data
        if off > h.cbytes - EXTENDED_HEADER_LENGTH:
            raise FormatError(
                "index chunk",
                f"offset[{n}]",
                None,
                f"at most cbytes - 32 = {h.cbytes - EXTENDED_HEADER_LENGTH}",
                off,
            )
        pos = h.header_len + off
        ch = ChunkHeader.from_bytes(self.source.read(pos, EXTENDED_HEADER_LENGTH))
        self._check_size(n, ch, pos)
        if off + ch.cbytes > h.cbytes:
            raise FormatError(
                f"chunk {n}",
                "cbytes",
                pos + 12,
                f"at most {h.cbytes - off} (end of the data area)",
                ch.cbytes,
            )
        return self.source.read(pos, ch.cbytes)

    def _check_size(self, n: int, ch: ChunkHeader, pos: int | None) -> None:
        """A stored chunk must hold the size the frame header implies (§2.7, chunk spec
        §15.2.10): otherwise item positions computed from ``chunksize`` would be wrong."""
        if self.header.chunksize > 0 and ch.nbytes != self.chunk_nbytes(n):
            raise FormatError(
                f"chunk {n}",
                "nbytes",
                None if pos is None else pos + 4,
                f"{self.chunk_nbytes(n)} (from the frame's nbytes and chunksize)",
                ch.nbytes,
            )

    def read_chunk_range(self, n: int, lo: int, hi: int) -> np.ndarray:
        """Bytes ``[lo, hi)`` of chunk ``n``, reading only the blocks they need (plus block 0
        for DELTA): the chunk header, block starts and dictionary, then each needed block's
        span (to the next larger block start, frame-format.md §4.5)."""
        off = int(self.offsets[n])
        h = self.header
        small = (
            off < 0
            or self.sparse_dir is not None
            or not isinstance(self.source, _partial_sources())
        )
        pos = h.header_len + off
        first = None if small else bytes(self.source.read(pos, EXTENDED_HEADER_LENGTH))
        ch = None if first is None else ChunkHeader.from_bytes(first)
        if ch is not None:
            self._check_size(n, ch, pos)
        if (
            ch is None
            or ch.cbytes < PARTIAL_READ_MIN
            or ch.special
            or ch.vl_blocks
            or ch.nbytes == 0
            or off + ch.cbytes > h.cbytes
        ):
            return ChunkReader.open(self.get_chunk(n)).decode_range(lo, hi)
        if ch.memcpyed:
            hl = ch.header_len
            hi = min(hi, ch.nbytes)
            return np.frombuffer(bytes(self.source.read(pos + hl + lo, max(hi - lo, 0))), np.uint8)
        buf = np.zeros(ch.cbytes, np.uint8)  # untouched pages cost nothing
        nblocks = ch.nblocks
        meta_end = ch.header_len + 4 * nblocks
        if meta_end + (4 if ch.use_dict else 0) > ch.cbytes:
            return ChunkReader.open(self.get_chunk(n)).decode_range(lo, hi)
        buf[:meta_end] = np.frombuffer(self.source.read(pos, meta_end), np.uint8)
        if ch.use_dict:
            dsize = int.from_bytes(self.source.read(pos + meta_end, 4), "little", signed=True)
            end = min(meta_end + 4 + max(dsize, 0), ch.cbytes)
            buf[meta_end:end] = np.frombuffer(
                self.source.read(pos + meta_end, end - meta_end), np.uint8
            )
        starts = buf[ch.header_len : meta_end].view("<i4").astype(np.int64)
        bs = ch.effective_blocksize
        need = set(range(lo // bs, (max(hi, lo + 1) - 1) // bs + 1))
        if any(f == 3 for f, _ in ch.pipeline):  # DELTA needs block 0
            need.add(0)
        order = np.sort(starts)
        for j in sorted(need):
            if not 0 <= j < nblocks:
                continue
            a = int(starts[j])
            later = order[order > a]
            b = int(later[0]) if later.size else ch.cbytes
            if not meta_end <= a < b <= ch.cbytes:
                return ChunkReader.open(self.get_chunk(n)).decode_range(lo, hi)
            buf[a:b] = np.frombuffer(self.source.read(pos + a, b - a), np.uint8)
        return ChunkReader.open(memoryview(buf)).decode_range(lo, hi)


MAX_CHUNK_ID = 0xFFFFFFFF


def chunk_path(directory: str, chunk_id: int) -> str:
    """The file of chunk ``chunk_id`` in a sparse frame (8 upper-case hex digits, §6.1)."""
    return os.path.join(directory, f"{chunk_id:08X}.chunk")


def read_chunk_file(directory: str, chunk_id: int, n: int) -> bytes:
    """The whole ``.chunk`` file of a sparse frame's chunk ``n``, validated."""
    if chunk_id > MAX_CHUNK_ID:
        raise FormatError(
            "index chunk", f"offset[{n}]", None, f"a chunk id <= {MAX_CHUNK_ID}", chunk_id
        )
    path = chunk_path(directory, chunk_id)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FormatError(
            "sparse frame", f"chunk {n}", None, f"the file {path}", "missing"
        ) from None
    ch = ChunkHeader.from_bytes(data)
    if ch.cbytes > len(data):
        raise FormatError(f"chunk file {path}", "cbytes", 12, f"at most {len(data)}", ch.cbytes)
    return data[: ch.cbytes]
