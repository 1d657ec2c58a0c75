"""Frames behind any fsspec URL (``https://``, ``s3://``, ``memory://``, chained ``zip://…::``):
one :class:`FsspecStore` (a :class:`~.base.ByteStore` over one remote object) and one
:class:`FsspecDirectory` (an :class:`~.base.ObjectStore` over a remote "directory", for sparse
frames), behind the same protocol as the local backends.

Reads are lazy: opening fetches the object's size and validator (ETag or mtime), then its
first :data:`HEAD_BYTES` and last :data:`TAIL_BYTES` together (where a frame keeps its header,
index and trailer); any other read fetches exactly the bytes asked for. :meth:`FsspecStore.prefetch`
fetches several ranges concurrently (adjacent ones merged) for readers that know what they
will read next. HTTP reads carry ``If-Match`` with the ETag seen at open, so an object that
changed meanwhile is an error, never a mix of two versions; on a versioned S3 bucket reads
ask for the version opened (other file systems give no such guarantee). Transient failures
(5xx, dropped connections, short bodies) are retried :data:`RETRIES` times, then raise
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
import time
from typing import Any

from ..errors import FormatError, FrameChangedError, ParamError, RemoteError
from .base import READ_ONLY

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

#: bytes fetched from the start of an object at open (a frame header with its metalayers)
HEAD_BYTES = 1 << 12
#: bytes fetched from the end of an object at open (the index chunk and the trailer)
TAIL_BYTES = 1 << 14
#: adjacent ranges are merged into one request up to this size (larger reads stay several
#: requests, fetched concurrently)
MAX_MERGED = 1 << 22
#: prefetched ranges kept in memory for later reads (oldest dropped first)
MEMORY_BYTES = 1 << 26
#: retries of a failed fetch (5xx, dropped connection, short body) before RemoteError
RETRIES = 2
_BACKOFF = 0.05  # seconds before the first retry, doubled after each
_HTTP = ("http", "https")
_RECENT, _RECENT_BYTES = 8, 4096  # small reads remembered


def _protocol(url: str) -> str:
    head, sep, _ = url.split("::", 1)[0].partition("://")
    return head if sep else "file"


def connect(url: str, storage_options: dict[str, Any] | None = None) -> tuple[Any, str]:
    """The fsspec file system and path of ``url`` (HTTP gets a default timeout, so a server
    that stops answering is an error, not a hang)."""
    from fsspec.core import url_to_fs

    options = dict(storage_options or {})
    if _protocol(url) in _HTTP and "client_kwargs" not in options:
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
        options["client_kwargs"] = {"timeout": timeout}
    return url_to_fs(url, **options)


def stat(fs: Any, path: str, url: str) -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
    """``fs.info(path)`` and no bytes; over HTTP instead two concurrent ranged GETs, of the
    first :data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` (a suffix range), whose
    ``Content-Range`` gives the size: the object's info and its head and tail in one round
    trip. ``FileNotFoundError`` when there is no such object."""
    if _protocol(url) not in _HTTP or not hasattr(fs, "set_session"):
        return fs.info(path), []

    async def get(session: Any, rng: str) -> tuple[int, int, str | None, bytes]:
        kw = dict(fs.kwargs)
        headers = {**kw.pop("headers", {}), "Range": rng}
        async with session.get(fs.encode_url(path), headers=headers, **kw) as r:
            if r.status == 404:
                raise FileNotFoundError(url)
            r.raise_for_status()
            body = await r.read()
            crange = r.headers.get("Content-Range", "")
            first, _, total = crange.removeprefix("bytes ").partition("/")
            if r.status == 206 and total.isdigit():
                return int(first.partition("-")[0]), int(total), r.headers.get("ETag"), body
            if r.status == 200:  # the server ignored Range: this is the whole object
                return 0, len(body), r.headers.get("ETag"), body
            raise RemoteError(f"{url}: no usable Content-Range ({r.status}: {crange!r})")

    async def probe() -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
        import asyncio

        session = await fs.set_session()
        parts = await asyncio.gather(
            get(session, f"bytes=0-{HEAD_BYTES - 1}"), get(session, f"bytes=-{TAIL_BYTES}")
        )
        sizes, etags = {p[1] for p in parts}, {p[2] for p in parts}
        if len(sizes) != 1 or len(etags) != 1:
            raise FrameChangedError(f"{url} changed while it was being opened")
        size = sizes.pop()
        for start, _, _, body in parts:
            want = min(size - start, HEAD_BYTES if start == 0 else TAIL_BYTES)
            if len(body) < want:
                raise _ShortRead(f"bytes [{start}, {start + want}): got {len(body)} (short body)")
        return {"size": size, "ETag": etags.pop()}, [(p[0], p[3]) for p in parts]

    from fsspec.asyn import sync

    info, pieces = _retrying(url, "opening", lambda: sync(fs.loop, probe), missing=True)
    return info, pieces


def _validator(info: dict[str, Any]) -> str:
    """What identifies this version of an object (a cache is valid while it is unchanged)."""
    keys = ("ETag", "etag", "LastModified", "Last-Modified", "mtime", "created", "size")
    return json.dumps({k: str(info[k]) for k in keys if info.get(k) is not None}, sort_keys=True)


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def _retrying(url: str, what: str, fn: Any, *, missing: bool = False) -> Any:
    """``fn()`` with bounded retries of transient failures; errors become pyblosc2 errors
    (``missing``: a missing object stays a ``FileNotFoundError``)."""
    for attempt in range(RETRIES + 1):
        try:
            return fn()
        except FileNotFoundError as exc:  # noqa: PERF203 - a retry loop
            if missing:
                raise
            raise RemoteError(f"{url}: {what}: the object is gone ({exc})") from exc
        except Exception as exc:
            status = _status(exc)
            if status == 412:
                raise FrameChangedError(
                    f"{url} changed since it was opened ({what}): open it again"
                ) from exc
            if (status is not None and 400 <= status < 500) or attempt == RETRIES:
                raise RemoteError(f"{url}: {what} failed: {type(exc).__name__}: {exc}") from exc
            time.sleep(_BACKOFF * 2**attempt)
    raise AssertionError("unreachable")


class _ShortRead(OSError):
    """A body shorter than the range asked for (retried like a dropped connection)."""


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
        info: dict[str, Any] | None = None,
        pieces: list[tuple[int, bytes]] | None = None,
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
        self.requests = len(pieces or ())  # range requests made
        self._lock = threading.Lock()
        self._held: list[tuple[int, bytes]] = []  # prefetched ranges
        self._recent: list[tuple[int, bytes]] = []  # the last small reads (chunk headers)
        if info is None:  # FileNotFoundError when missing, as for local files
            info, pieces = stat(fs, path, url)
            self.requests = len(pieces)
        self._load(info, pieces)
        if offset > self._size:
            raise FormatError("frame", "offset", offset, f"at most the size {self._size}", offset)

    def _load(self, info: dict[str, Any], pieces: list[tuple[int, bytes]] | None = None) -> None:
        """Take ``info`` (size, validator) and the pinned head and tail: ``pieces`` when
        given, else fetched now (together)."""
        size = info.get("size")
        if not isinstance(size, int):
            raise RemoteError(f"{self.url}: the server gives no size (Content-Length)")
        self._size = size
        self.validator = _validator(info)
        etag = info.get("ETag")
        self._kwargs: dict[str, Any] = {}
        if etag and _protocol(self.url) in _HTTP:
            self._kwargs = {"headers": {"If-Match": etag}}
        elif info.get("VersionId") and _protocol(self.url) in ("s3", "s3a"):
            self._kwargs = {"version_id": info["VersionId"]}  # the version opened, always
        self._cache = (
            None
            if self.cache_storage is None
            else _RangeCache(self.cache_storage, self.url, self.validator, size)
        )
        if pieces:
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
        """The bytes of ``spans`` from the remote object, concurrently, exactly as asked."""

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
                    raise _ShortRead(f"bytes [{a}, {b}): got {len(data)} bytes (short body)")
            return [bytes(d) for d in out]

        what = f"reading bytes {spans[0][0]}..{spans[-1][1]} ({len(spans)} ranges)"
        data: list[bytes] = _retrying(self.url, what, once)
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
        _retrying(self.url, "writing", lambda: self.fs.pipe_file(self.path, data))
        self._load(self.fs.info(self.path))

    def sync(self) -> None:
        pass

    def close(self) -> None:
        with self._lock:
            self._held, self._recent = [], []


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
        return bool(
            _retrying(self.url, f"looking up {name}", lambda: self.fs.exists(self._p(name)))
        )

    def object_size(self, name: str) -> int:
        what = f"size of {name}"
        return int(_retrying(self.url, what, lambda: self.fs.size(self._p(name)), missing=True))

    def read_object(self, name: str, limit: int | None = None) -> bytes:
        with self._lock:
            held = self._held.pop(name, None)
        if held is None:
            path = self._p(name)
            size = self._local_size(name) if _is_local(self.fs) else None
            if limit is not None and size is not None and size > limit:
                raise FormatError(self.url, f"object {name} size", None, f"at most {limit}", size)
            held = bytes(
                _retrying(
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
        got = _retrying(
            self.url, f"reading {len(paths)} objects", lambda: self.fs.cat(paths, on_error="omit")
        )
        with self._lock:
            self._held = {n: bytes(got[p]) for n, p in zip(names, paths, strict=True) if p in got}

    def write_object(self, name: str, data: bytes | memoryview) -> None:
        _retrying(
            self.url, f"writing {name}", lambda: self.fs.pipe_file(self._p(name), bytes(data))
        )

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
