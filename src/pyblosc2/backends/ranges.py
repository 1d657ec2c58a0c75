"""Exact byte ranges of one remote object, one request each, as a proxy source reads a frame
(:class:`~pyblosc2.proxy_source.FsspecNDSource`): no read-ahead, no caching (the proxy's
cache is where fetched bytes go), bounded retries (:mod:`.retry`).

The object is named by a *stamp*, python-blosc2's: ``fs.ukey(path)`` (a digest of the object's
info: its size, mtime, ETag, ...) except over HTTP, where it is fsspec's token of the URL and
options followed by the ETag (or the Last-Modified date and size) of the object; HTTP reads
carry ``If-Match`` with that ETag, so an object replaced while it is read is an error rather
than a mix of two versions. A server that does not answer ranges sends the object once, to a
temporary file that later reads are served from (:mod:`.http_probe`).

fsspec is imported when a reader is made, never by ``import pyblosc2``.
"""

from __future__ import annotations

from typing import Any

from .fsspec import connect
from .http_probe import HTTP, stat
from .retry import ShortRead, protocol, retrying
from .spill import Spill

__all__ = ["RangeReader"]


class RangeReader:
    """The object at ``url`` read by ranges (``fs``: an fsspec file system already made).

    >>> import fsspec; fsspec.filesystem("memory").pipe_file("/ranges/x", b"0123456789")
    >>> r = RangeReader("memory://ranges/x"); r.read(3, 4), r.read(8, 5)
    (b'3456', b'89')
    """

    def __init__(
        self, url: str, storage_options: dict[str, Any] | None = None, fs: Any = None
    ) -> None:
        if fs is None:
            fs, path = connect(url, storage_options)
        else:
            path = fs._strip_protocol(url)
        self.url, self.fs, self.path = url, fs, path
        self.http = protocol(url) in HTTP
        if not self.http and fs.isdir(path):
            raise NotImplementedError(
                f"{url} is a directory (a sparse frame or a store), which cannot be read chunk "
                "by chunk; open it with cache_storage= instead"
            )
        self._kwargs: dict[str, Any] = {}
        self._spill: Spill | None = None
        self.stamp = self._stamp()

    def _stamp(self) -> str | None:
        """What names the object now (see the module docstring)."""
        if not self.http:
            return str(
                retrying(
                    self.url, "reading its info", lambda: self.fs.ukey(self.path), missing=True
                )
            )
        from fsspec.utils import tokenize

        # a HEAD request: the validators, and no body (a server that ignores Range is found
        # out by the first read, which then reads through stat()'s spill)
        raw = retrying(self.url, "reading its info", lambda: self.fs.info(self.path), missing=True)
        base = tokenize(self.path, self.fs.kwargs, self.fs.protocol)
        info = {k.lower(): v for k, v in raw.items()}
        etag = info.get("etag")
        if etag:
            self._kwargs = {"headers": {"If-Match": etag}}
            return f"{base}:etag:{etag}"
        modified, size = info.get("last-modified") or info.get("mtime"), info.get("size")
        if modified is not None and size is not None:
            return f"{base}:modified:{modified}:size:{size}"
        return None

    def refresh(self) -> str | None:
        """The stamp of the object as it is now (it may have been replaced)."""
        self.stamp = self._stamp()
        return self.stamp

    def read(self, offset: int, size: int) -> bytes:
        """Bytes ``[offset, offset + size)``; fewer only at the end of the object."""
        if size <= 0:
            return b""
        spill = self._spill
        if spill is not None:
            return bytes(spill.read(offset, size))

        def once() -> bytes:
            return bytes(
                self.fs.cat_file(self.path, start=offset, end=offset + size, **self._kwargs)
            )

        data = retrying(self.url, f"reading bytes {offset}..{offset + size}", once)
        if len(data) > size and self.http:  # the whole object: the server ignores Range
            probe = stat(self.fs, self.path, self.url)
            if probe.spill is None:
                raise ShortRead(f"{self.url}: bytes [{offset}, {offset + size}): got {len(data)}")
            self._spill = probe.spill
            return bytes(probe.spill.read(offset, size))
        if len(data) > size:
            raise ShortRead(f"{self.url}: bytes [{offset}, {offset + size}): got {len(data)}")
        return data
