"""An open frame, contiguous or sparse: its chunks read on demand, and every change made
through one commit path (frame-format.md §2.7, §4, §5, §6).

Every mutation builds the new chunk list, places new chunk bytes where no live offset points
(:mod:`.edit`), and then commits: a contiguous frame writes its new data, index and trailer and
rewrites its header last (rolled back on failure); a sparse frame writes new chunk objects and
then replaces its index frame atomically (:mod:`.sparse`). Fingerprinted frames keep their
digest list current on the way (:mod:`.fingerprint`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..backends.base import ByteStore, ObjectStore
from ..backends.lock import FrameLock
from ..chunk.header import ChunkHeader
from ..constants import EXTENDED_HEADER_LENGTH, MAX_HEADER_TYPESIZE
from ..errors import FormatError, ParamError
from .commit import commit_contiguous
from .contiguous import FrameReader
from .edit import (
    ContiguousPlacement,
    Placement,
    Plan,
    SparsePlacement,
    check_chunk,
    first_chunksize,
    plan_chunks,
    special_kind,
)
from .fingerprint import FP_KEY, DigestList, chunk_digest, offset_digest
from .header import FrameHeader
from .index import SPECIAL_OFFSET_OF
from .sharing import SharedFrame
from .sparse import SPARSE_INDEX, commit_sparse, live_cbytes, next_chunk_id
from .trailer import Trailer
from .writer import IndexEncoder, build_cframe

__all__ = ["HIDDEN_VLMETA", "Frame"]

# vlmeta entries that belong to pyblosc2, not to the user
HIDDEN_VLMETA = frozenset({FP_KEY})
#: the most vlmeta entries C-Blosc2 writes in a trailer (frame.c frame_update_trailer
#: refuses more than BLOSC2_MAX_METALAYERS), hidden ones included
MAX_VLMETA = 16
Ref = int | bytes


class Frame(SharedFrame):
    """A frame in ``store`` (for a sparse frame: the ``chunks.b2frame`` of ``directory``);
    how it is shared with other handles is :class:`~.sharing.SharedFrame`."""

    def __init__(
        self,
        store: ByteStore,
        directory: ObjectStore | None = None,
        *,
        exact: bool = False,
        durable: bool = False,
        lock: FrameLock | None = None,
    ) -> None:
        self.durable = durable  # sync after every commit step
        self._index = IndexEncoder()  # keeps the unchanged blocks of the index chunk
        # the buffer appended offsets grow in, and the view of it made last (see _grown)
        self._spare: np.ndarray | None = None
        self._spare_view: np.ndarray | None = None
        super().__init__(store, directory, lock, exact)

    @classmethod
    def create_sparse(
        cls,
        directory: ObjectStore,
        empty_frame: bytes,
        writable: bool,
        lock: FrameLock | None = None,
    ) -> Frame:
        """Write the index frame of a new sparse frame and open it."""
        directory.write_object(SPARSE_INDEX, empty_frame)
        return cls.open_sparse(directory, writable, lock)

    @classmethod
    def open_sparse(
        cls, directory: ObjectStore, writable: bool, lock: FrameLock | None = None
    ) -> Frame:
        """Open the sparse frame in ``directory``."""
        if not directory.exists(SPARSE_INDEX):
            raise FormatError("sparse frame", SPARSE_INDEX, None, "an object", "missing")
        store = directory.open_object(SPARSE_INDEX, writable=writable)
        return cls(store, directory, lock=lock)

    # -- reading ----------------------------------------------------------------------------
    @property
    def offsets(self) -> np.ndarray:
        return self.reader.offsets

    @property
    def nchunks(self) -> int:
        return self.reader.nchunks

    @property
    def sparse(self) -> bool:
        return self.directory is not None

    def get_chunk(self, n: int) -> bytes | memoryview:
        """The stored (or, for special offsets, synthesised) chunk ``n``."""
        return self.reader.get_chunk(n)

    def read_chunk_range(
        self, n: int, lo: int, hi: int, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Bytes ``[lo, hi)`` of chunk ``n`` (into ``out`` when given), reading only the
        blocks they need."""
        return self.reader.read_chunk_range(n, lo, hi, out)

    def chunk_sizes(self) -> list[int]:
        """Uncompressed size of every chunk (from the header for fixed sizes)."""
        r = self.reader
        h = self.header
        if h.chunksize > 0:  # (FrameReader.chunk_nbytes of every chunk, in one list)
            n = r.nchunks
            sizes = [h.chunksize] * n
            if n and h.nbytes % h.chunksize:
                sizes[-1] = h.nbytes % h.chunksize
            return sizes
        return [
            ChunkHeader.from_bytes(r.get_chunk(k)[:EXTENDED_HEADER_LENGTH]).nbytes
            for k in range(r.nchunks)
        ]

    def stored_chunk(self, n: int, off: int) -> bytes | memoryview:
        """The stored bytes of chunk ``n`` at non-negative offset ``off`` (what is hashed)."""
        if self.directory is not None:
            return self.reader.get_chunk(n)
        pos = self.header.header_len + off
        ch = ChunkHeader.from_bytes(self.store.read(pos, EXTENDED_HEADER_LENGTH))
        return self.store.read(pos, ch.cbytes)

    @property
    def digests(self) -> DigestList | None:
        """The chunk digest list, or None when fingerprinting is off."""
        return DigestList.from_trailer(self.trailer)

    def damaged_chunks(self) -> list[int]:
        """Indices of chunks that no longer match their digests (see :class:`DigestList`)."""
        digests = self.digests
        if digests is None:
            raise FormatError(
                "frame trailer",
                "fingerprint",
                None,
                "a pyblosc2 fingerprint (SChunk(..., fingerprint=True))",
                "none",
            )
        return digests.damaged(self.trailer, self.offsets, self.stored_chunk)

    def to_cframe(self) -> bytes:
        """The frame as one contiguous frame (a sparse frame is gathered into one)."""
        h = self.header
        if self.directory is None:
            return bytes(self.store.read(0, h.frame_len))
        return build_cframe(
            [bytes(self.get_chunk(n)) for n in range(self.nchunks)],
            typesize=h.typesize,
            chunksize=h.chunksize,
            metalayers=h.metalayers,
            vlmeta=self.trailer.vlmeta,
            codec=h.codec,
            clevel=h.clevel,
            splitmode=h.splitmode,
            filters=h.filters,
            filters_meta=h.filters_meta,
            blocksize=h.blocksize,
        )

    # -- changing ---------------------------------------------------------------------------
    def start_fingerprint(self) -> None:
        """Turn fingerprinting on (the frame must be empty)."""
        self._commit(self.header, self.offsets, self.trailer, None, DigestList())

    def append(self, chunk: bytes, requested: int | None, *, checked: bool = False) -> None:
        """Append one compressed chunk; only it (and the index and trailer) is written, in
        time that does not grow with the number of chunks (but for copies of the index's
        compressed blocks). ``checked``: the chunk was just written by pyblosc2's own encoder
        (its layout needs no second check)."""
        ch = check_chunk(chunk, layout=not checked)
        h = self.header
        chunksize = h.chunksize
        if chunksize < 0:
            chunksize = first_chunksize(ch.nbytes, requested)
        elif chunksize > 0 and (h.nbytes % chunksize or ch.nbytes > chunksize):
            chunksize = 0  # C switches to variable-size chunks (§2.7)
        if ch.typesize != h.typesize and ch.typesize != 1 and h.typesize <= MAX_HEADER_TYPESIZE:
            raise ParamError(f"chunk typesize {ch.typesize} differs from the SChunk's {h.typesize}")
        offsets = self.offsets
        placement: Placement
        if self.directory is None:
            placement = ContiguousPlacement(h.cbytes)
        else:
            placement = SparsePlacement(next_chunk_id(offsets))
        if chunksize == 0 and h.chunksize > 0 and (offsets < 0).any():
            # Special offsets record no size, which a variable-size frame needs: store those
            # chunks as 32-byte chunks (C would write the offsets and then fail to read them).
            offsets = offsets.copy()
            for k in np.flatnonzero(offsets < 0):
                offsets[k] = placement.place(bytes(self.reader.get_chunk(int(k))))
        kind = special_kind(ch)
        if kind is not None and chunksize > 0:
            offset = int(SPECIAL_OFFSET_OF[kind])
        else:
            offset = placement.place(chunk[: ch.cbytes])
        offsets = self._grown(offsets, offset)
        cbytes = placement.end if isinstance(placement, ContiguousPlacement) else h.cbytes
        header = h.with_fields(nbytes=h.nbytes + ch.nbytes, chunksize=chunksize, cbytes=cbytes)
        if chunksize == 0:
            header = header.with_variable_chunks()
        header = header.with_vl_blocks(self._vl_blocks_of([chunk], [ch]))
        digests = self.digests if self.directory is None else None
        if digests is not None:
            new = offset_digest(offset) if offset < 0 else chunk_digest(placement.placed[offset])
            current = digests.describes(self.trailer, self.nchunks) and len(placement.placed) <= 1
            # a list another writer left stale is made again from the chunks as stored
            digests = DigestList(digests.digests + new) if current else None
            digests = digests or self._all_digests(offsets, placement)
        self._commit(header, offsets, self.trailer, placement, digests, appended=True)

    def _grown(self, offsets: np.ndarray, offset: int) -> np.ndarray:
        """``offsets`` with ``offset`` appended, as a read-only view of a buffer that grows
        by doubling, so that appending N chunks copies the index O(log N) times, not N.

        Offsets arrays are never written in place (they are read-only views): the bytes
        past a view's end are free, and a later append writes there only when ``offsets``
        is the last view this handle made of the buffer (else, after a rewrite, a failed
        commit or a refresh, it starts a new buffer)."""
        n = offsets.size
        buf = self._spare
        if offsets is not self._spare_view or buf is None or n >= buf.size:
            buf = np.empty(max(64, 2 * n + 1), np.int64)
            buf[:n] = offsets
            self._spare = buf
        buf[n] = offset
        view = buf[: n + 1]
        view.flags.writeable = False
        self._spare_view = view
        return view

    def rewrite(
        self,
        refs: Sequence[Ref],
        requested: int | None,
        metalayers: tuple[tuple[str, bytes], ...] | None = None,
    ) -> None:
        """Make the chunk list ``refs`` (an int keeps stored chunk k, bytes is a new chunk),
        and optionally new metalayer contents of the same sizes, in one commit.

        Bytes no offset refers to any more stay as dead space in a contiguous frame, which
        readers accept (§4.7); the chunk size becomes variable when the sizes stop being
        regular, as in C-Blosc2.
        """
        h = self.header
        plan = plan_chunks(h, self.chunk_sizes(), refs, requested)
        placement: Placement
        if self.directory is None:
            placement = ContiguousPlacement(h.cbytes if plan.sizes else 0)
        else:
            placement = SparsePlacement(next_chunk_id(self.offsets))
        offsets = self._place(refs, plan, placement)
        header = replace(h, nbytes=sum(plan.sizes), chunksize=plan.chunksize)
        if isinstance(placement, ContiguousPlacement):
            header = replace(header, cbytes=placement.end)
        if plan.chunksize == 0 and plan.sizes:
            header = header.with_variable_chunks()
        if plan.sizes:
            header = header.with_vl_blocks(
                self._vl_blocks_of([r for r in refs if isinstance(r, bytes)])
            )
        if metalayers is not None:
            header = replace(header, metalayers=metalayers)
        digests = None
        if self.digests is not None and self.directory is None:
            digests = self._moved_digests(refs, offsets, placement)
        self._commit(header, offsets, self.trailer, placement, digests)

    def replace_tail(
        self,
        keep: int,
        chunks: Sequence[bytes],
        requested: int | None,
        metalayers: tuple[tuple[str, bytes], ...] | None = None,
    ) -> None:
        """:meth:`rewrite` of ``[0, ..., keep - 1, *chunks]`` (what growing a 1-d array does),
        in time that does not grow with ``keep`` when the frame is contiguous, has fixed-size
        chunks that stay fixed, and no fingerprint; else through :meth:`rewrite`."""
        h = self.header
        cs = h.chunksize
        headers = [check_chunk(c) for c in chunks]
        sizes = [ch.nbytes for ch in headers]
        kept_full = keep < self.nchunks or h.nbytes == cs * self.nchunks
        if (
            self.directory is not None
            or self.digests is not None
            or cs <= 0
            or not 0 < keep <= self.nchunks
            or not kept_full
            or any(x != cs for x in sizes[:-1])
            or (sizes and not 0 < sizes[-1] <= cs)
        ):
            self.rewrite([*range(keep), *chunks], requested, metalayers)
            return
        placement = ContiguousPlacement(h.cbytes)
        new = np.empty(len(chunks), np.int64)
        for i, (c, ch) in enumerate(zip(chunks, headers, strict=True)):
            kind = special_kind(ch)
            if kind is not None:
                new[i] = SPECIAL_OFFSET_OF[kind]
            else:
                new[i] = placement.place(c[: ch.cbytes])
        offsets = np.concatenate([self.offsets[:keep], new])
        header = replace(h, nbytes=keep * cs + sum(sizes), cbytes=placement.end)
        header = header.with_vl_blocks(self._vl_blocks_of(chunks))
        if metalayers is not None:
            header = replace(header, metalayers=metalayers)
        self._commit(header, offsets, self.trailer, placement, None)

    def _vl_blocks_of(
        self, new: Sequence[bytes], headers: Sequence[ChunkHeader] | None = None
    ) -> bool:
        """Whether the frame holds VL-block chunks once ``new`` chunks join its chunks: C
        keeps the kind of the first chunk (header bit 7) and refuses to mix the two kinds
        (spec §12). Chunk 0 is read only when a VL-block chunk joins a frame without the bit
        (a frame of regular chunks, or one written before the bit was kept)."""
        if headers is None:
            headers = [ChunkHeader.from_bytes(c[:EXTENDED_HEADER_LENGTH]) for c in new]
        kinds = {ch.vl_blocks for ch in headers}
        if self.nchunks:
            current = self.header.vl_blocks
            if not current and True in kinds:
                first = self.reader.get_chunk(0)[:EXTENDED_HEADER_LENGTH]
                current = ChunkHeader.from_bytes(bytes(first)).vl_blocks
            kinds.add(current)
        if len(kinds) > 1:
            raise ParamError("an SChunk cannot mix regular and VL-block chunks (C refuses it)")
        return kinds.pop() if kinds else self.header.vl_blocks

    def _place(self, refs: Sequence[Ref], plan: Plan, placement: Placement) -> np.ndarray:
        """The index of ``refs``: kept chunks keep their offsets, new ones are placed."""
        r = self.reader
        stored = r.offsets if any(not isinstance(ref, bytes) for ref in refs) else None
        offsets = np.empty(len(refs), np.int64)
        for i, ref in enumerate(refs):
            kind = plan.kinds[i]
            if isinstance(ref, bytes):
                if kind is not None and plan.chunksize > 0:
                    offsets[i] = SPECIAL_OFFSET_OF[kind]
                    continue
                raw = ref[: ChunkHeader.from_bytes(ref).cbytes]
            else:
                assert stored is not None
                old = int(stored[ref])
                if old >= 0 or plan.chunksize > 0:
                    offsets[i] = old
                    continue
                raw = bytes(r.get_chunk(ref))  # a special offset needs a size: store it
            offsets[i] = placement.place(raw)
        return offsets

    def _moved_digests(
        self, refs: Sequence[Ref], offsets: np.ndarray, placement: Placement
    ) -> DigestList:
        """Digests after a rewrite: those of kept chunks move along, new bytes are hashed.
        A list another writer left stale (python-blosc2 changed the frame) is made again from
        the chunks as stored, so the frame verifies after this change."""
        old = self.digests
        assert old is not None
        current = old.describes(self.trailer, self.nchunks)
        out = bytearray()
        for i, ref in enumerate(refs):
            off = int(offsets[i])
            new = placement.placed.get(off) if off >= 0 else None
            if off < 0:
                out += offset_digest(off)
            elif new is not None:
                out += chunk_digest(new)
            elif isinstance(ref, int) and current:
                out += old[ref]
            else:  # a kept chunk (bytes refs are always placed or special)
                out += chunk_digest(self.stored_chunk(ref if isinstance(ref, int) else i, off))
        return DigestList(bytes(out))

    def _all_digests(self, offsets: np.ndarray, placement: Placement) -> DigestList:
        def stored(n: int, off: int) -> bytes | memoryview:
            new = placement.placed.get(off)
            return new if new is not None else self.stored_chunk(n, off)

        return DigestList.of(offsets, stored)

    def set_vlmeta(
        self, entries: tuple[tuple[str, bytes], ...], requested: int | None = None
    ) -> None:
        """Make ``entries`` the user's vlmeta (pyblosc2's hidden entries are kept). A new
        name is refused beyond ``MAX_VLMETA`` entries in all: C-Blosc2 cannot write a trailer
        of more (its next change of the frame would fail half-way). A frame still without a
        chunk size records ``requested`` (the container's), as C-Blosc2 writes its chunk size
        into every header it rewrites (C readers need it to grow it)."""
        hidden = tuple((k, v) for k, v in self.trailer.vlmeta if k in HIDDEN_VLMETA)
        names = {k for k, _ in self.trailer.vlmeta}
        if len(entries) + len(hidden) > MAX_VLMETA and any(k not in names for k, _ in entries):
            raise ParamError(
                f"a frame holds at most {MAX_VLMETA} vlmeta entries, the ones C-Blosc2 can "
                f"write back; this one keeps {len(hidden)} for pyblosc2's chunk digests"
            )
        trailer = replace(self.trailer, vlmeta=(*entries, *hidden))
        header = self.header
        if header.chunksize < 0 and requested:
            header = replace(header, chunksize=requested)
        self._commit(header, self.offsets, trailer, None, None)

    def update_metalayers(self, metalayers: tuple[tuple[str, bytes], ...]) -> None:
        """New metalayer contents of the same sizes, through the commit of every change (a
        header change larger than a sector replaces the whole file, see :mod:`.commit`)."""
        header = replace(self.header, metalayers=metalayers)
        if len(header.to_bytes()) != self.header.header_len:
            raise ParamError("The length of the content in a metalayer cannot change.")
        self._commit(header, self.offsets, self.trailer, None, None)

    def _commit(
        self,
        header: FrameHeader,
        offsets: np.ndarray,
        trailer: Trailer,
        placement: Placement | None,
        digests: DigestList | None,
        appended: bool = False,
    ) -> None:
        """The one commit point of every change (see the module docstring); ``appended``:
        the change only added chunks (a sparse frame then needs no scan of its objects)."""
        if digests is not None:
            trailer = digests.in_trailer(trailer)
        if header.has_vlmeta != bool(trailer.vlmeta):
            header = replace(header, has_vlmeta=bool(trailer.vlmeta))
        # an append extends the offsets this handle committed last (the encoder's hint)
        index = self._index.encode(offsets, self.offsets if appended else None)
        tbytes = trailer.to_bytes()
        if self.directory is None:
            data = placement.data if isinstance(placement, ContiguousPlacement) else b""
            try:
                header = commit_contiguous(
                    self.store, self.header, header, index, tbytes, data, durable=self.durable
                )
            except BaseException:
                reader = FrameReader.open(self.store)  # what the store holds now
                self._set_reader(reader, self._on_disk(reader))
                raise
            reader = FrameReader(self.store, header, trailer, offsets)
            self._set_reader(reader, header.to_bytes() + index + tbytes)
            return
        objects = placement.placed if isinstance(placement, SparsePlacement) else {}
        if appended:  # the objects in use are the old ones and the new ones
            cbytes = self.header.cbytes + sum(map(len, objects.values()))
        else:
            cbytes = live_cbytes(self.directory, offsets, objects)
        header = replace(
            header, cbytes=cbytes, frame_len=header.header_len + len(index) + len(tbytes)
        )
        frame = header.to_bytes() + index + tbytes
        writable = self.store.writable
        self.store.close()
        old = self.offsets[:0] if appended else self.offsets  # an append leaves nothing stale
        try:
            commit_sparse(self.directory, frame, objects, old, offsets[:0] if appended else offsets)
        except BaseException:
            self.store = self.directory.open_object(SPARSE_INDEX, writable=writable)
            reader = FrameReader.open(self.store, directory=self.directory)
            self._set_reader(reader, self._on_disk(reader))
            raise
        self.store = self.directory.open_object(SPARSE_INDEX, writable=writable)
        self._set_reader(FrameReader(self.store, header, trailer, offsets, self.directory), frame)
