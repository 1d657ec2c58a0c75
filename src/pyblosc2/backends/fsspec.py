"""Frames behind any fsspec URL (``https://``, ``s3://``, ``memory://``, chained ``zip://…::``):
one :class:`FsspecStore` (a :class:`~.base.ByteStore` over one remote object) and one
:class:`FsspecDirectory` (an :class:`~.base.ObjectStore` over a remote "directory", for sparse
frames), behind the same protocol as the local backends.

Reads are lazy: opening fetches the object's size and validator (ETag or mtime), then its
first :data:`HEAD_BYTES` and last :data:`TAIL_BYTES` together (where a frame keeps its
header, index and trailer; over HTTP in one round trip, with fallbacks for servers that
refuse suffix ranges or ignore ranges altogether: :mod:`.http_probe`); any other read
fetches exactly the bytes asked for (or reads them from the temporary file that a range-less
server's object went to). :meth:`FsspecStore.prefetch` fetches several ranges concurrently
(adjacent ones merged) for readers that know what they will read next. HTTP reads carry
``If-Match`` with the ETag seen at open, so an object that changed meanwhile is an error,
never a mix of two versions; on a versioned S3 bucket reads ask for the version opened
(other file systems give no such guarantee). Transient failures (5xx, dropped connections,
short bodies) are retried :data:`RETRIES` times, then raise
:class:`~pyblosc2.errors.RemoteError`. ``cache_storage=`` keeps fetched ranges in a local
directory, reused while the object's validator is unchanged.

fsspec (and the protocol's driver) is imported when a URL is first opened, never by
``import pyblosc2``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from typing import Any

from ..errors import FormatError, ParamError, RemoteError
from .base import READ_ONLY
from .http_probe import HEAD_BYTES, HTTP, TAIL_BYTES, Probe, stat
from .retry import RETRIES, ShortRead, protocol, retrying
from .spill import Spill

__all__ = [
    "HEAD_BYTES",
    "MAX_MERGED",
    "MEMORY_BYTES",
    "RETRIES",
    "TAIL_BYTES",
    "FsspecDirectory",
    "FsspecStore",
    "connect",
    "stat",
]

#: adjacent ranges are merged into one request up to this size (larger reads stay several
#: requests, fetched concurrently)
MAX_MERGED = 1 << 22
#: prefetched ranges kept in memory for later reads (oldest dropped first)
MEMORY_BYTES = 1 << 26
_RECENT, _RECENT_BYTES = 8, 4096  # small reads remembered


def connect(url: str, storage_options: dict[str, Any] | None = None) -> tuple[Any, str]:
    """The fsspec file system and path of ``url`` (HTTP gets a default timeout, so a server
    that stops answering is an error, not a hang)."""
    from fsspec.core import url_to_fs

    options = dict(storage_options or {})
    if protocol(url) in HTTP and "client_kwargs" not in options:
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
        options["client_kwargs"] = {"timeout": timeout}
    return url_to_fs(url, **options)


def _validator(info: dict[str, Any]) -> str:
    """What identifies this version of an object (a cache is valid while it is unchanged)."""
    keys = ("ETag", "etag", "LastModified", "Last-Modified", "mtime", "created", "size")
    return json.dumps({k: str(info[k]) for k in keys if info.get(k) is not None}, sort_keys=True)


def _merge(spans: list[tuple[int, int]], limit: int | None = None) -> list[tuple[int, int]]:
    """Sorted spans with overlapping and adjacent ones merged (while the merged span stays
    within ``limit`` bytes, when given).

    >>> _merge([(10, 20), (0, 5), (5, 8), (15, 30)])
    [(0, 8), (10, 30)]
    >>> _merge([(0, 5), (5, 8), (8, 12)], limit=8)
    [(0, 8), (8, 12)]
    """
    out: list[tuple[int, int]] = []
    for a, b in sorted(s for s in spans if s[1] > s[0]):
        if out and a <= out[-1][1] and (limit is None or max(out[-1][1], b) - out[-1][0] <= limit):
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


class _RangeCache:
    """Fetched ranges of one object kept in a local directory (``<key>.data``, a sparse file
    as large as the object, and ``<key>.json``: the validator and the ranges held). A cache
    whose validator differs from the object's is discarded."""

    def __init__(self, directory: str, url: str, validator: str, size: int) -> None:
        os.makedirs(directory, exist_ok=True)
        key = hashlib.sha256(url.encode()).hexdigest()[:32]
        self.data_path = os.path.join(directory, key + ".data")
        self.meta_path = os.path.join(directory, key + ".json")
        self.validator, self.size = validator, size
        self.spans: list[tuple[int, int]] = []
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            with open(self.meta_path) as f:
                meta = json.load(f)
            if meta["validator"] == validator and meta["size"] == size:
                self.spans = [(int(a), int(b)) for a, b in meta["spans"]]
        if not self.spans:
            with open(self.data_path, "wb") as f:
                f.truncate(size)

    def get(self, pos: int, end: int) -> bytes | None:
        if not any(a <= pos and end <= b for a, b in self.spans):
            return None
        with open(self.data_path, "rb") as f:
            f.seek(pos)
            data = f.read(end - pos)
        return data if len(data) == end - pos else None

    def put(self, pos: int, data: bytes) -> None:
        with open(self.data_path, "r+b") as f:
            f.seek(pos)
            f.write(data)
        self.spans = _merge([*self.spans, (pos, pos + len(data))])
        tmp = f"{self.meta_path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            json.dump({"validator": self.validator, "size": self.size, "spans": self.spans}, f)
        os.replace(tmp, self.meta_path)


class FsspecStore:
    """One remote object's bytes (read-only unless ``writable``; writes replace the whole
    object, which suits the small index object of a sparse frame).

    >>> import fsspec; fsspec.filesystem("memory").pipe_file("/doc/x.bin", b"hello world")
    >>> s = FsspecStore("memory://doc/x.bin"); s.size, bytes(s.read(6, 5))
    (11, b'world')
    >>> bytes(FsspecStore("memory://doc/x.bin", offset=6).read(0, 3))  # from an offset on
    b'wor'
    """

    def __init__(
        self,
        url: str,
        storage_options: dict[str, Any] | None = None,
        *,
        writable: bool = False,
        cache_storage: str | os.PathLike[str] | None = None,
        fs: Any = None,
        path: str | None = None,
        probe: Probe | None = None,
        offset: int = 0,
    ) -> None:
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ParamError(f"offset must be a non-negative int, got {offset!r}")
        if offset and writable:
            raise NotImplementedError("writing to a frame embedded at an offset")
        self.url, self.offset = url, offset
        self.storage_options = storage_options
        self.cache_storage = None if cache_storage is None else os.fspath(cache_storage)
        self._writable = writable
        if fs is None or path is None:
            fs, path = connect(url, storage_options)
        self.fs, self.path = fs, path
        self.bytes_read = 0  # bytes returned by read()
        self.bytes_fetched = 0  # bytes fetched from the remote object
        self._lock = threading.Lock()
        self._held: list[tuple[int, bytes]] = []  # prefetched ranges
        self._recent: list[tuple[int, bytes]] = []  # the last small reads (chunk headers)
        if probe is None:  # FileNotFoundError when missing, as for local files
            probe = stat(fs, path, url, self.cache_storage)
        self.requests = len(probe.pieces)  # range requests made
        self._load(probe.info, probe.pieces, probe.spill)
        if offset > self._size:
            raise FormatError("frame", "offset", offset, f"at most the size {self._size}", offset)

    def _load(
        self,
        info: dict[str, Any],
        pieces: list[tuple[int, bytes]] | None = None,
        spill: Spill | None = None,
    ) -> None:
        """Take ``info`` (size, validator) and the pinned head and tail: ``pieces`` when
        given, else fetched now (together); or the ``spill`` holding the whole object."""
        self._spill = spill
        size = info.get("size")
        if not isinstance(size, int):
            raise RemoteError(f"{self.url}: the server gives no size (Content-Length)")
        self._size = size
        self.validator = _validator(info)
        etag = info.get("ETag")
        self._kwargs: dict[str, Any] = {}
        if etag and protocol(self.url) in HTTP:
            self._kwargs = {"headers": {"If-Match": etag}}
        elif info.get("VersionId") and protocol(self.url) in ("s3", "s3a"):
            self._kwargs = {"version_id": info["VersionId"]}  # the version opened, always
        self._cache = (
            None
            if self.cache_storage is None or spill is not None
            else _RangeCache(self.cache_storage, self.url, self.validator, size)
        )
        if spill is not None:  # every byte is local already
            self._pinned = []
        elif pieces:
            if self._cache is not None:
                for start, data in pieces:
                    self._cache.put(start, data)
            self._pinned = list(pieces)
        else:
            if size <= HEAD_BYTES + TAIL_BYTES:
                spans = [(0, size)]
            else:
                spans = [(0, HEAD_BYTES), (size - TAIL_BYTES, size)]
            self._pinned = list(zip([a for a, _ in spans], self._get(spans), strict=True))
        self._held, self._recent = [], []

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy (pickle, another process) connects again: no session crosses processes.
        return (
            _reopen,
            (self.url, self.storage_options, self._writable, self.cache_storage, self.offset),
        )

    @property
    def size(self) -> int:
        return self._size - self.offset

    @property
    def writable(self) -> bool:
        return self._writable

    def _fetch(self, spans: list[tuple[int, int]]) -> list[bytes]:
        """The bytes of ``spans`` from the remote object, concurrently, exactly as asked (from
        the spill when the server sent the object whole)."""
        spill = self._spill
        if spill is not None:
            return [spill.read(a, b - a) for a, b in spans]

        def once() -> list[bytes]:
            if len(spans) == 1:
                (a, b), n = spans[0], 1
                out = [self.fs.cat_file(self.path, start=a, end=b, **self._kwargs)]
            else:
                n = len(spans)
                out = self.fs.cat_ranges(
                    [self.path] * n,
                    [a for a, _ in spans],
                    [b for _, b in spans],
                    on_error="return",
                    **self._kwargs,
                )
            with self._lock:
                self.requests += n
            for (a, b), data in zip(spans, out, strict=True):
                if isinstance(data, BaseException):
                    raise data
                if len(data) != b - a:
                    raise ShortRead(f"bytes [{a}, {b}): got {len(data)} bytes (short body)")
            return [bytes(d) for d in out]

        what = f"reading bytes {spans[0][0]}..{spans[-1][1]} ({len(spans)} ranges)"
        data: list[bytes] = retrying(self.url, what, once)
        with self._lock:
            self.bytes_fetched += sum(len(d) for d in data)
        return data

    def _get(self, spans: list[tuple[int, int]]) -> list[bytes]:
        """Like :meth:`_fetch`, served from the local cache where it holds the ranges."""
        if self._cache is None:
            return self._fetch(spans) if spans else []
        cache = self._cache
        with self._lock:
            found = [cache.get(a, b) for a, b in spans]
        missing = [s for s, d in zip(spans, found, strict=True) if d is None]
        fetched = iter(self._fetch(missing) if missing else [])
        out = []
        for (a, _), d in zip(spans, found, strict=True):
            if d is None:
                d = next(fetched)
                with self._lock:
                    cache.put(a, d)
            out.append(d)
        return out

    def _lookup(self, pos: int, end: int) -> bytes | None:
        with self._lock:
            for start, data in (*self._pinned, *self._held, *self._recent):
                if start <= pos and end <= start + len(data):
                    return data[pos - start : end - start]
        return None

    def read(self, pos: int, n: int) -> bytes:
        pos += self.offset
        end = min(pos + n, self._size)
        if end <= pos:
            return b""
        data = self._lookup(pos, end)
        if data is None:
            data = self._get([(pos, end)])[0]
            if len(data) <= _RECENT_BYTES:  # a chunk header is often read twice in a row
                with self._lock:
                    self._recent = [*self._recent[-(_RECENT - 1) :], (pos, data)]
        self.bytes_read += len(data)
        return data

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        """Fetch ``spans`` now, concurrently and with adjacent spans merged, so that reads
        inside them are served from memory (the last :data:`MEMORY_BYTES` of them)."""
        shifted = [(a + self.offset, b + self.offset) for a, b in spans]
        wanted = [
            (a, min(b, self._size))
            for a, b in _merge(shifted, MAX_MERGED)
            if a < self._size and self._lookup(a, min(b, self._size)) is None
        ]
        held = list(zip([a for a, _ in wanted], self._get(wanted), strict=True))
        with self._lock:
            keep = self._held
            room = MEMORY_BYTES - sum(len(d) for _, d in held)
            while keep and sum(len(d) for _, d in keep) > room:
                keep = keep[1:]
            self._held = [*keep, *held]

    def write(self, pos: int, data: bytes | memoryview) -> None:
        whole = bytearray(self.read(0, self._size))
        end = pos + len(data)
        self._check_writable()
        if end > len(whole):
            whole.extend(bytes(end - len(whole)))
        whole[pos:end] = data
        self._replace(bytes(whole))

    def truncate(self, size: int) -> None:
        self._check_writable()
        whole = self.read(0, min(size, self._size))
        self._replace(whole + bytes(size - len(whole)))

    def _check_writable(self) -> None:
        if not self._writable:
            raise ParamError(f"{READ_ONLY} ({self.url} is open read-only)")

    def _replace(self, data: bytes) -> None:
        retrying(self.url, "writing", lambda: self.fs.pipe_file(self.path, data))
        self._load(self.fs.info(self.path))

    def sync(self) -> None:
        pass

    def close(self) -> None:
        with self._lock:
            self._held, self._recent = [], []
            if self._spill is not None:
                self._spill.close()
                self._spill = None


def _reopen(
    url: str, options: dict[str, Any] | None, writable: bool, cache: str | None, offset: int = 0
) -> FsspecStore:
    return FsspecStore(url, options, writable=writable, cache_storage=cache, offset=offset)


def _reopen_directory(
    url: str, options: dict[str, Any] | None, cache: str | os.PathLike[str] | None
) -> FsspecDirectory:
    return FsspecDirectory(url, options, cache_storage=cache)


def _is_local(fs: Any) -> bool:
    """Whether ``fs`` is fsspec's local file system (``local://`` or a chained ``file://``)."""
    protocol = fs.protocol if isinstance(fs.protocol, tuple | list) else (fs.protocol,)
    return bool({"file", "local"} & set(protocol))


def _join(url: str, name: str) -> str:
    """The URL of object ``name`` inside directory ``url`` (chained URLs: in the first link).

    >>> _join("memory://d/a.b2frame", "chunks.b2frame")
    'memory://d/a.b2frame/chunks.b2frame'
    """
    first, sep, rest = url.partition("::")
    return f"{first.rstrip('/')}/{name}{sep}{rest}"


class FsspecDirectory:
    """A remote "directory" of whole objects (a sparse frame, frame-format.md §6). Object
    writes are single PUTs (atomic on object stores); there is no cross-process lock.

    >>> d = FsspecDirectory("memory://doc/sparse.b2frame", create=True)
    >>> d.write_object("a.chunk", b"xyz"); d.read_object("a.chunk"), d.exists("b.chunk")
    (b'xyz', False)
    """

    def __init__(
        self,
        url: str,
        storage_options: dict[str, Any] | None = None,
        *,
        create: bool = False,
        cache_storage: str | os.PathLike[str] | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.storage_options = storage_options
        self.cache_storage = cache_storage
        self.fs, self.path = connect(self.url, storage_options)
        self.path = self.path.rstrip("/")
        self._held: dict[str, bytes] = {}
        self._lock = threading.Lock()
        if create:
            if self.fs.exists(self.path):
                raise FileExistsError(f"{url} exists")
            with contextlib.suppress(NotImplementedError):
                self.fs.makedirs(self.path, exist_ok=True)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen_directory, (self.url, self.storage_options, self.cache_storage))

    def _p(self, name: str) -> str:
        return f"{self.path}/{name}"

    def exists(self, name: str) -> bool:
        return bool(retrying(self.url, f"looking up {name}", lambda: self.fs.exists(self._p(name))))

    def object_size(self, name: str) -> int:
        what = f"size of {name}"
        return int(retrying(self.url, what, lambda: self.fs.size(self._p(name)), missing=True))

    def read_object(self, name: str, limit: int | None = None) -> bytes:
        with self._lock:
            held = self._held.pop(name, None)
        if held is None:
            path = self._p(name)
            size = self._local_size(name) if _is_local(self.fs) else None
            if limit is not None and size is not None and size > limit:
                raise FormatError(self.url, f"object {name} size", None, f"at most {limit}", size)
            held = bytes(
                retrying(
                    self.url,
                    f"reading {name}",
                    lambda: self.fs.cat_file(path, end=size),
                    missing=True,
                )
            )
        if limit is not None and len(held) > limit:
            raise FormatError(self.url, f"object {name} size", None, f"at most {limit}", len(held))
        return held

    def _local_size(self, name: str) -> int:
        """The size of a local object, refused unless it is a regular file (fsspec's local
        file system follows symlinks to devices and opens FIFOs, which would never end)."""
        info = self.fs.info(self._p(name))
        if info.get("type") != "file":
            raise FormatError(self.url, f"object {name}", None, "a regular file", info.get("type"))
        return int(info["size"])

    def prefetch_objects(self, names: list[str]) -> None:
        """Fetch ``names`` concurrently; each is then read once from memory."""
        paths = [self._p(n) for n in names]
        if not paths:
            return
        got = retrying(
            self.url, f"reading {len(paths)} objects", lambda: self.fs.cat(paths, on_error="omit")
        )
        with self._lock:
            self._held = {n: bytes(got[p]) for n, p in zip(names, paths, strict=True) if p in got}

    def write_object(self, name: str, data: bytes | memoryview) -> None:
        retrying(self.url, f"writing {name}", lambda: self.fs.pipe_file(self._p(name), bytes(data)))

    def remove_object(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._p(name))

    def open_object(self, name: str, *, writable: bool) -> FsspecStore:
        url = _join(self.url, name)
        return FsspecStore(
            url,
            self.storage_options,
            writable=writable,
            cache_storage=self.cache_storage,
            fs=self.fs,
            path=self._p(name),
        )
