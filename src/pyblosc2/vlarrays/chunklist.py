"""What ObjectArray and BatchArray share: a list of entries, one chunk each, in a super-chunk
tagged by a fixed metalayer (python-blosc2's ``objectarray.py`` and ``batch_array.py``).

The super-chunk is created with ``chunksize=-1`` (chunks of any size) and ``typesize`` 1;
an existing file is reopened when ``mode`` is ``"r"`` or ``"a"``. Entries are appended,
inserted, replaced and deleted as whole chunks (:class:`~pyblosc2.SChunk` edits, each one
crash-safe); ``clear`` writes a new empty super-chunk in place of the old one. Indexing
follows Python lists (negative indices, slices, extended slices of the same length on
assignment); a read-only container refuses every change with a ``ValueError``.
"""

from __future__ import annotations

import copy as _copy
import os
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from typing import Any, ClassVar, Literal

from ..errors import ArgumentConflictError, BoundsError, ParamError, ParamTypeError
from ..params import CParams, DParams
from ..schunk import SChunk, Storage, remove_urlpath
from ..schunk import open as open_schunk
from ..schunk.members import InfoReport
from .policy import DeserializeMode, get_deserialize, set_deserialize

__all__ = ["ChunkList", "storage_of"]

_STORAGE_FIELDS = tuple(f.name for f in fields(Storage))
#: ``extend`` commits after this many entries or bytes of chunks
EXTEND_GROUP = 4096
EXTEND_BYTES = 64 * 2**20


def storage_of(storage: Any, kwargs: dict[str, Any]) -> Storage:
    """The :class:`Storage` of a container's constructor: ``storage`` (a Storage or a dict,
    copied) or the storage keywords of ``kwargs`` (removed from it), not both."""
    given = {name: kwargs.pop(name) for name in _STORAGE_FIELDS if name in kwargs}
    if storage is None:
        return Storage(**given)
    if given:
        raise ArgumentConflictError(
            "Cannot pass both `storage` and other kwargs already included in Storage: "
            + ", ".join(sorted(given))
        )
    if isinstance(storage, Storage):
        return _copy.deepcopy(storage)
    if isinstance(storage, dict):
        return Storage(**storage)
    raise ParamTypeError(f"storage must be a Storage or a dict, got {type(storage).__name__}")


def _replace_file(path: str, data: bytes) -> None:
    """Put ``data`` at ``path`` in one step (a synced temporary file renamed over it)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _typesize_one(cparams: Any) -> CParams:
    cp = CParams.from_any(cparams) if cparams is not None else CParams()
    return replace(cp, typesize=1)


class ChunkList:
    """Entries stored one chunk each (the shared part of ObjectArray and BatchArray)."""

    #: the metalayer that tags the super-chunk
    _tag: ClassVar[str]
    #: the class name errors and ``info`` use
    _label: ClassVar[str]
    schunk: SChunk
    mode: str
    mmap_mode: str | None

    # -- construction -----------------------------------------------------------------
    def _create(
        self,
        fixed_meta: dict[str, Any],
        kwargs: dict[str, Any],
        deserialize: Any,
        chunksize: int = -1,
    ) -> None:
        """Open the existing container ``kwargs`` names, or create a new one whose ``_tag``
        metalayer holds ``fixed_meta``."""
        cparams = kwargs.pop("cparams", None)
        dparams = kwargs.pop("dparams", None)
        storage = storage_of(kwargs.pop("storage", None), kwargs)
        if kwargs:
            raise ParamError(
                f"Unsupported {self._label} keyword argument(s): {', '.join(sorted(kwargs))}"
            )
        if storage.mmap_mode not in (None, "r"):
            raise ParamError(f"For {self._label} containers, mmap_mode must be None or 'r'")
        cp = self._cparams(cparams)
        dp = DParams.from_any(dparams)
        if self._open_existing(storage, deserialize):
            return
        storage.meta = {**(storage.meta or {}), self._tag: fixed_meta}
        schunk = SChunk(chunksize=chunksize, cparams=cp, dparams=dp, storage=storage)
        set_deserialize(schunk, DeserializeMode.FULL if deserialize is None else deserialize)
        self._attach(schunk)

    def _cparams(self, cparams: Any) -> CParams:
        """The compression parameters of a new container (typesize 1)."""
        return _typesize_one(cparams)

    def _open_existing(self, storage: Storage, deserialize: Any) -> bool:
        path = storage.path
        if path is None or storage.mode not in ("r", "a") or not os.path.exists(path):
            return False
        kw: dict[str, Any] = {"mmap_mode": storage.mmap_mode} if storage.mmap_mode else {}
        schunk = open_schunk(path, storage.mode, 0, **kw)
        set_deserialize(schunk, DeserializeMode.SAFE if deserialize is None else deserialize)
        self._attach(schunk)
        return True

    def _attach(self, schunk: SChunk) -> None:
        """Use ``schunk`` (its tag checked) as this container's super-chunk."""
        if self._tag not in dict(schunk.header.metalayers):
            raise ParamError(f"The supplied SChunk is not tagged as a {self._label}")
        self.schunk = schunk
        self.mode = schunk.mode
        self.mmap_mode = schunk._storage.mmap_mode

    def _make_storage(self) -> Storage:
        return Storage(
            contiguous=self.schunk.contiguous,
            urlpath=self.urlpath,
            mode=self.mode,
            mmap_mode=self.mmap_mode,
            meta=self._copy_meta(),
        )

    def _copy_meta(self) -> dict[str, Any]:
        return {name: self.meta[name] for name in self.meta}

    def _recreate(self, storage: Storage, vlmeta: dict[str, Any] | None = None) -> None:
        """Replace the super-chunk by a new empty one with the same parameters, metalayers
        from ``storage`` and the user ``vlmeta`` entries given (``clear``, or a layout fixed
        by the first entry).

        A contiguous file is replaced in one step: the new frame is written beside it and
        renamed over it, so a killed process leaves the old file or the new one. A sparse
        frame (a directory) is removed, then created again.
        """
        deserialize = get_deserialize(self.schunk)
        cp, dp = _copy.deepcopy(self.cparams), _copy.deepcopy(self.dparams)
        path = storage.path
        if path is not None and storage.contiguous:
            in_memory = replace(storage, urlpath=None, mode="w", mmap_mode=None)
            mem = SChunk(chunksize=-1, cparams=cp, dparams=dp, storage=in_memory)
            mem.vlmeta.update_all(vlmeta or {})
            _replace_file(path, mem.to_cframe())
            schunk = open_schunk(path, "a", cparams=cp, dparams=dp)
        else:
            if path is not None:
                remove_urlpath(path)
            schunk = SChunk(chunksize=-1, cparams=cp, dparams=dp, storage=storage)
            if vlmeta:
                schunk.vlmeta.update_all(vlmeta)
        set_deserialize(schunk, deserialize)
        self._attach(schunk)

    # -- hooks of the subclasses ------------------------------------------------------
    def _encode(self, value: Any) -> tuple[bytes, Any]:
        """``(chunk, info)`` of one entry; ``info`` goes to the bookkeeping hooks."""
        raise NotImplementedError

    def _entry(self, index: int) -> Any:
        """What ``self[index]`` gives (``index`` normalised)."""
        raise NotImplementedError

    def _value(self, index: int) -> Any:
        """What ``pop(index)`` gives (``index`` normalised)."""
        return self._entry(index)

    def _inserted(self, index: int, info: Any) -> None:
        """An entry with ``info`` was inserted at ``index``."""

    def _replaced(self, index: int, info: Any) -> None:
        """The entry at ``index`` was replaced by one with ``info``."""

    def _deleted(self, index: int) -> None:
        """The entry at ``index`` was deleted."""

    def _changed(self) -> None:
        """One change (append, insert, ...) is done: persist the bookkeeping."""

    def _cleared(self) -> None:
        """Every entry was removed."""

    # -- checks -----------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self.mode == "r":
            raise ParamError(f"Cannot modify a {self._label} opened in read-only mode")

    def _normalize_index(self, index: Any) -> int:
        if isinstance(index, bool) or not isinstance(index, int):
            raise ParamTypeError(f"{self._label} indices must be integers")
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise BoundsError(f"{self._label} index out of range")
        return index

    def _normalize_insert_index(self, index: Any) -> int:
        if isinstance(index, bool) or not isinstance(index, int):
            raise ParamTypeError(f"{self._label} indices must be integers")
        n = len(self)
        if index < 0:
            return max(index + n, 0)
        return min(index, n)

    def _slice_indices(self, index: slice) -> list[int]:
        try:
            return list(range(*index.indices(len(self))))
        except ValueError as exc:  # a zero step
            raise ParamError(str(exc)) from None

    # -- the list -----------------------------------------------------------------------
    def __len__(self) -> int:
        return self.schunk.nchunks

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._entry(i) for i in self._slice_indices(index)]
        return self._entry(self._normalize_index(index))

    def append(self, value: Any) -> int:
        """Append one entry and return the new number of entries."""
        self._check_writable()
        chunk, info = self._encode(value)
        n = self.schunk.append_chunk(chunk)
        self._inserted(n - 1, info)
        self._changed()
        return n

    def insert(self, index: int, value: Any) -> int:
        """Insert one entry at ``index`` (clipped as ``list.insert`` does) and return the new
        number of entries."""
        self._check_writable()
        index = self._normalize_insert_index(index)
        chunk, info = self._encode(value)
        n = self.schunk.insert_chunk(index, chunk)
        self._inserted(index, info)
        self._changed()
        return n

    def extend(self, values: Iterable[Any]) -> None:
        """Append every entry of ``values``: up to ``EXTEND_GROUP`` entries (or
        ``EXTEND_BYTES`` of chunks) per commit, each commit one crash-safe step."""
        self._check_writable()
        pending: list[tuple[bytes, Any]] = []
        size = 0
        for value in values:
            pending.append(self._encode(value))
            size += len(pending[-1][0])
            if len(pending) >= EXTEND_GROUP or size >= EXTEND_BYTES:
                self._append_all(pending)
                pending, size = [], 0
        if pending:
            self._append_all(pending)
        self._changed()

    def _append_all(self, entries: list[tuple[bytes, Any]]) -> None:
        """Append the chunks of ``entries`` in one commit (one index write, not one each)."""
        first = len(self)
        if len(entries) == 1:
            self.schunk.append_chunk(entries[0][0])
        else:
            self.schunk.set_chunks([*range(first), *(chunk for chunk, _ in entries)])
        for k, (_, info) in enumerate(entries):
            self._inserted(first + k, info)

    def delete(self, index: int | slice) -> int:
        """Delete the entry (or entries) at ``index``; returns the new number of entries."""
        self._check_writable()
        if isinstance(index, slice):
            for i in sorted(self._slice_indices(index), reverse=True):
                self.schunk.delete_chunk(i)
                self._deleted(i)
            self._changed()
            return len(self)
        index = self._normalize_index(index)
        n = self.schunk.delete_chunk(index)
        self._deleted(index)
        self._changed()
        return n

    def __delitem__(self, index: int | slice) -> None:
        self.delete(index)

    def pop(self, index: int = -1) -> Any:
        """Remove the entry at ``index`` and return it."""
        self._check_writable()
        if isinstance(index, slice):
            raise NotImplementedError(f"Slicing is not supported for {self._label}.pop()")
        index = self._normalize_index(index)
        value = self._value(index)
        self.delete(index)
        return value

    def clear(self) -> None:
        """Remove every entry (a new empty super-chunk replaces the old one)."""
        self._check_writable()
        self._recreate(self._make_storage())
        self._cleared()
        self._changed()

    def __setitem__(self, index: int | slice, value: Any) -> None:
        self._check_writable()
        if not isinstance(index, slice):
            index = self._normalize_index(index)
            chunk, info = self._encode(value)
            self.schunk.update_chunk(index, chunk)
            self._replaced(index, info)
            self._changed()
            return
        indices = self._slice_indices(index)
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise ParamTypeError("can only assign an iterable to a slice")
        values = list(value)
        if (index.step or 1) == 1:
            start = self._normalize_insert_index(0 if index.start is None else index.start)
            for i in reversed(indices):
                self.schunk.delete_chunk(i)
                self._deleted(i)
            for offset, item in enumerate(values):
                chunk, info = self._encode(item)
                self.schunk.insert_chunk(start + offset, chunk)
                self._inserted(start + offset, info)
            self._changed()
            return
        if len(values) != len(indices):
            raise ParamError(
                f"attempt to assign sequence of size {len(values)} to extended slice of size "
                f"{len(indices)}"
            )
        for i, item in zip(indices, values, strict=True):
            chunk, info = self._encode(item)
            self.schunk.update_chunk(i, chunk)
            self._replaced(i, info)
        self._changed()

    # -- the super-chunk ------------------------------------------------------------------
    @property
    def meta(self) -> Any:
        """The frame's fixed-size metalayers (:class:`~pyblosc2.SChunk` ``meta``)."""
        return self.schunk.meta

    @property
    def vlmeta(self) -> Any:
        """The frame's variable-length metadata (:class:`~pyblosc2.SChunk` ``vlmeta``)."""
        return self.schunk.vlmeta

    @property
    def attrs(self) -> Any:
        """User attributes: :attr:`vlmeta` under its recommended name."""
        return self.vlmeta

    @property
    def cparams(self) -> CParams:
        """Compression parameters of the underlying super-chunk."""
        return self.schunk.cparams

    @property
    def dparams(self) -> DParams:
        """Decompression parameters of the underlying super-chunk."""
        return self.schunk.dparams

    @property
    def typesize(self) -> int:
        """The super-chunk's typesize."""
        return self.schunk.typesize

    @property
    def nbytes(self) -> int:
        """Uncompressed bytes of all chunks."""
        return self.schunk.nbytes

    @property
    def cbytes(self) -> int:
        """Compressed bytes of all chunks."""
        return self.schunk.cbytes

    @property
    def cratio(self) -> float:
        """``nbytes / cbytes``."""
        return self.schunk.cratio

    @property
    def urlpath(self) -> str | None:
        """The file or URL the container is stored at (None in memory)."""
        return self.schunk.urlpath

    @property
    def contiguous(self) -> bool:
        """Whether the frame is contiguous (one file) rather than sparse (a directory)."""
        return self.schunk.contiguous

    @property
    def info_items(self) -> list[tuple[str, Any]]:
        raise NotImplementedError

    @property
    def info(self) -> InfoReport:
        """A summary of the container (``repr`` prints it)."""
        return InfoReport(self.info_items)

    def to_cframe(self) -> bytes:
        """The whole container as an in-memory frame."""
        return self.schunk.to_cframe()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return f"{self._label}(len={len(self)}, urlpath={self.urlpath!r})"
