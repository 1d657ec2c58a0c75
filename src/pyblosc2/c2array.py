"""python-blosc2's Caterva2 client (``blosc2.c2array``: ``C2Array``, ``info``, ``c2context``):
not implemented by pyblosc2.

Caterva2 serves arrays over its own HTTP API; pyblosc2 reads frames over HTTP through fsspec
URLs (``pyblosc2.open("https://...")``) but has no client for that API. The names exist so
that code importing them runs until it calls one, which raises :class:`NotImplementedError`
naming the feature. ObjectArray and BatchArray values that are C2Array references (msgpack ext
43, kind ``c2array``) raise the same error when read.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["C2Array", "c2context", "info"]

_WHAT = "C2Array (python-blosc2's Caterva2 client) is not implemented by pyblosc2"


def _refuse() -> NoReturn:
    raise NotImplementedError(_WHAT)


def info(*args: Any, **kwargs: Any) -> NoReturn:
    """Caterva2's metadata of a remote array (not implemented)."""
    _refuse()


def c2context(*args: Any, **kwargs: Any) -> NoReturn:
    """Caterva2 connection settings (not implemented)."""
    _refuse()


class C2Array:
    """A Caterva2 remote array (not implemented).

    >>> C2Array("@public/a.b2nd")
    Traceback (most recent call last):
    ...
    NotImplementedError: C2Array (python-blosc2's Caterva2 client) is not implemented by pyblosc2
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _refuse()
