"""Bounded retries of remote requests, shared by the fsspec backend and its HTTP probe:
transient failures (5xx, dropped connections, short bodies) are retried :data:`RETRIES`
times, then become :class:`~pyblosc2.errors.RemoteError`; a 412 (the object changed since it
was opened) is a :class:`~pyblosc2.errors.FrameChangedError`; other 4xx answers fail at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from ..errors import FrameChangedError, RemoteError

__all__ = ["RETRIES", "ShortRead", "protocol", "retrying", "status_of"]

#: retries of a failed fetch (5xx, dropped connection, short body) before RemoteError
RETRIES = 2
_BACKOFF = 0.05  # seconds before the first retry, doubled after each

T = TypeVar("T")


class ShortRead(OSError):
    """A body shorter than the range asked for (retried like a dropped connection)."""


def protocol(url: str) -> str:
    """The fsspec protocol of ``url`` (of its first link when chained).

    >>> protocol("zip://a.b2nd::s3://bucket/x.zip"), protocol("/tmp/a.b2nd")
    ('zip', 'file')
    """
    head, sep, _ = url.split("::", 1)[0].partition("://")
    return head if sep else "file"


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries (aiohttp's ``status``), if any."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def retrying(url: str, what: str, fn: Callable[[], T], *, missing: bool = False) -> T:
    """``fn()`` with bounded retries of transient failures; errors become pyblosc2 errors
    (``missing``: a missing object stays a ``FileNotFoundError``)."""
    for attempt in range(RETRIES + 1):
        try:
            return fn()
        except FileNotFoundError as exc:  # noqa: PERF203 - a retry loop
            if missing:
                raise
            raise RemoteError(f"{url}: {what}: the object is gone ({exc})") from exc
        except (RemoteError, FrameChangedError):
            raise  # already decided (e.g. a spill that cannot fit)
        except Exception as exc:
            status = status_of(exc)
            if status == 412:
                raise FrameChangedError(
                    f"{url} changed since it was opened ({what}): open it again"
                ) from exc
            if (status is not None and 400 <= status < 500) or attempt == RETRIES:
                raise RemoteError(f"{url}: {what} failed: {type(exc).__name__}: {exc}") from exc
            time.sleep(_BACKOFF * 2**attempt)
    raise AssertionError("unreachable")
