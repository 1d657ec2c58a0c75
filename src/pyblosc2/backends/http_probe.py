"""Opening a remote object in one round trip, as servers really answer.

Over HTTP(S) the open is two concurrent GETs: the first :data:`HEAD_BYTES` (``bytes=0-4095``)
and the last :data:`TAIL_BYTES` as a suffix range (``bytes=-16384``); a ``206`` answer's
``Content-Range`` gives the object's size, and the two bodies hold a frame's header, index
and trailer. Servers differ, so:

* **a suffix range refused** (``400``, ``416`` or ``501``, as some CDNs, proxies and
  ``RangeHTTPServer`` answer): the size comes from the first range's ``Content-Range`` (or a
  ``HEAD`` when that is refused too) and the tail is fetched as an absolute range;
* **no Range support** (``200`` with the whole body): the body is read once, streamed to a
  temporary file (:class:`~.spill.Spill`, bounded memory), the other answer is dropped
  unread, one :class:`~pyblosc2.errors.RemoteWarning` says so, and every later read is served
  from that file.

Other protocols answer ``fs.info(path)`` and fetch their head and tail afterwards.
"""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import dataclass, field
from typing import Any

from ..errors import FrameChangedError, RemoteError, RemoteWarning
from .retry import ShortRead, protocol, retrying
from .spill import PIECE, Spill

__all__ = ["HEAD_BYTES", "HTTP", "REFUSED", "TAIL_BYTES", "Probe", "stat"]

#: bytes fetched from the start of an object at open (a frame header with its metalayers)
HEAD_BYTES = 1 << 12
#: bytes fetched from the end of an object at open (the index chunk and the trailer)
TAIL_BYTES = 1 << 14
HTTP = ("http", "https")
#: statuses with which servers refuse a range they do not support (then: another way)
REFUSED = frozenset({400, 416, 501})


@dataclass
class Probe:
    """What an open learnt: ``info`` (``size``, ``ETag``, ...), byte ``pieces`` already
    fetched (``(start, bytes)``), and the ``spill`` holding the whole object when the server
    sent it whole."""

    info: dict[str, Any]
    pieces: list[tuple[int, bytes]] = field(default_factory=list)
    spill: Spill | None = None


@dataclass
class _Reply:
    kind: str  # "part", "whole", "refused", "dropped"
    start: int = 0
    total: int = 0
    etag: str | None = None
    body: bytes = b""
    status: int = 0


class _Whole:
    """The one answer (of the concurrent ones) allowed to stream a whole body to the spill."""

    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self.spill: Spill | None = None
        self.taken = False

    def take(self) -> bool:
        taken, self.taken = self.taken, True
        return not taken

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None


def stat(fs: Any, path: str, url: str, spill_dir: str | None = None) -> Probe:
    """Open ``url``: its info, and over HTTP its head and tail (or the whole object in a
    spill, see the module docstring). ``FileNotFoundError`` when there is no such object.

    >>> import fsspec; fsspec.filesystem("memory").pipe_file("/probe/x", b"abc")
    >>> stat(fsspec.filesystem("memory"), "/probe/x", "memory://probe/x").info["size"]
    3
    """
    if protocol(url) not in HTTP or not hasattr(fs, "set_session"):
        return Probe(fs.info(path))

    from fsspec.asyn import sync

    probe: Probe = retrying(
        url, "opening", lambda: sync(fs.loop, _probe, fs, path, url, spill_dir), missing=True
    )
    if probe.spill is not None:
        warnings.warn(
            f"{url}: the server does not answer Range requests: the whole object "
            f"({probe.info['size']} bytes) was downloaded once, to a temporary file",
            RemoteWarning,
            stacklevel=4,
        )
    return probe


async def _probe(fs: Any, path: str, url: str, spill_dir: str | None) -> Probe:
    session = await fs.set_session()
    whole = _Whole(spill_dir)
    try:
        return await _open(session, fs, path, url, whole)
    except BaseException:
        whole.close()
        raise


async def _open(session: Any, fs: Any, path: str, url: str, whole: _Whole) -> Probe:
    replies = await asyncio.gather(
        _get(session, fs, path, url, f"bytes=0-{HEAD_BYTES - 1}", whole),
        _get(session, fs, path, url, f"bytes=-{TAIL_BYTES}", whole),
        return_exceptions=True,  # both finish before the spill may be closed
    )
    for reply in replies:
        if isinstance(reply, BaseException):
            raise reply
    head, tail = replies
    assert isinstance(head, _Reply) and isinstance(tail, _Reply)
    if whole.spill is not None:
        return _spilled(whole, head, tail)
    if head.kind == "part" and tail.kind == "part":
        return _checked(url, head, tail)
    if head.kind == "part":  # the suffix range was refused: an absolute one
        start = max(0, head.total - TAIL_BYTES)
        if head.start + len(head.body) >= head.total:  # the head holds the whole object
            return _checked(url, head)
        tail = await _get(session, fs, path, url, f"bytes={start}-{head.total - 1}", whole)
        if whole.spill is not None:
            return _spilled(whole, tail)
        if tail.kind != "part":
            raise RemoteError(f"{url}: the server refused the range bytes={start}-")
        return _checked(url, head, tail)
    # both ranges refused: the size from a HEAD, then the whole object (no range works here)
    size, etag = await _head(session, fs, path, url)
    if size == 0:
        return Probe({"size": 0, "ETag": etag})
    body = await _get(session, fs, path, url, None, whole)
    if whole.spill is None:
        raise RemoteError(f"{url}: the server refuses ranges and sent no body ({body.status})")
    return _spilled(whole, body)


def _checked(url: str, *parts: _Reply) -> Probe:
    """The probe of ranged answers, which must agree on the size and the ETag and be whole."""
    sizes, etags = {p.total for p in parts}, {p.etag for p in parts}
    if len(sizes) != 1 or len(etags) != 1:
        raise FrameChangedError(f"{url} changed while it was being opened")
    size = sizes.pop()
    for p in parts:
        want = min(size - p.start, HEAD_BYTES if p.start == 0 else TAIL_BYTES)
        if len(p.body) < want:
            raise ShortRead(f"bytes [{p.start}, {p.start + want}): got {len(p.body)} (short body)")
    return Probe({"size": size, "ETag": etags.pop()}, [(p.start, p.body) for p in parts])


def _spilled(whole: _Whole, *replies: _Reply) -> Probe:
    spill = whole.spill
    assert spill is not None
    etag = next((r.etag for r in replies if r.kind == "whole"), None)
    whole.spill = None  # the probe owns it now
    return Probe({"size": spill.size, "ETag": etag}, [], spill)


def _request(fs: Any, rng: str | None) -> dict[str, Any]:
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", {}) or {})
    if rng is not None:
        headers["Range"] = rng
    return {**kw, "headers": headers}


async def _get(
    session: Any, fs: Any, path: str, url: str, rng: str | None, whole: _Whole
) -> _Reply:
    """One GET of ``rng`` (``None``: no Range): a part, a whole body streamed to the spill
    (only the first whole answer; others are dropped unread), or a refusal."""
    async with session.get(fs.encode_url(path), **_request(fs, rng)) as r:
        if r.status == 404:
            raise FileNotFoundError(url)
        if rng is not None and r.status in REFUSED:
            return _Reply("refused", status=r.status)
        r.raise_for_status()
        etag = r.headers.get("ETag")
        if r.status == 206:
            crange = r.headers.get("Content-Range", "")
            first, _, total = crange.removeprefix("bytes ").partition("/")
            start = first.partition("-")[0]
            if not (total.isdigit() and start.isdigit()):
                raise RemoteError(f"{url}: no usable Content-Range ({crange!r})")
            return _Reply("part", int(start), int(total), etag, await r.read(), r.status)
        if r.status != 200:
            raise RemoteError(f"{url}: unexpected answer {r.status} to a GET")
        if not whole.take():
            return _Reply("dropped", status=r.status)  # another answer streams this body
        length = r.content_length
        whole.spill = spill = Spill(whole.directory, length)
        async for piece in r.content.iter_chunked(PIECE):
            spill.write(piece)
        if length is not None and spill.size != length:
            raise ShortRead(f"whole object: got {spill.size} of {length} bytes (short body)")
        spill.done()
        return _Reply("whole", 0, spill.size, etag, status=r.status)


async def _head(session: Any, fs: Any, path: str, url: str) -> tuple[int, str | None]:
    """The size (``Content-Length``) and ETag from a HEAD request."""
    async with session.head(fs.encode_url(path), allow_redirects=True, **_request(fs, None)) as r:
        if r.status == 404:
            raise FileNotFoundError(url)
        r.raise_for_status()
        if r.content_length is None:
            raise RemoteError(f"{url}: the server gives no size (Content-Length)")
        return int(r.content_length), r.headers.get("ETag")
