"""The keys of a store and the file names they become (python-blosc2's rules).

A key names a leaf with ``/``-separated segments: ``"/dir1/node3"``. An external leaf is the
file ``dir1/node3.b2nd`` (``.b2f`` for a super-chunk, ``.b2b`` for a BatchArray or ListArray)
under the store's directory or in its zip archive, and a file there is the key of its path
without the suffix. An :class:`~pyblosc2.EmbedStore` takes its keys as given; a
:class:`~pyblosc2.TreeStore` adds a missing leading ``/``.

Keys become file names, so pyblosc2 also refuses the segments ``.`` and ``..`` (which
python-blosc2 writes outside the store) and the characters it refuses in embedded keys.
"""

from __future__ import annotations

import posixpath
from typing import Any

from ..errors import ParamError, ParamTypeError

__all__ = [
    "EMBED_NAME",
    "EXTERNAL_SUFFIXES",
    "NOT_STORED",
    "VLMETA_LEAF",
    "check_key",
    "key_of_path",
    "path_of_key",
    "tree_key",
]

#: suffix of an external leaf by what it holds (python-blosc2 4.x)
EXTERNAL_SUFFIXES = {"ndarray": ".b2nd", "schunk": ".b2f", "batcharray": ".b2b"}
#: the file of a store's embedded store (its directory's, or its archive's member)
EMBED_NAME = "embed.b2e"
#: suffixes of files in a store directory that are no part of the store: frame lock
#: sidecars and the staging files of a write (left by a crash)
NOT_STORED = (".b2lock", ".tmp")
#: the last segment of the key under which a TreeStore keeps a group's vlmeta
VLMETA_LEAF = "__vlmeta__"
# characters python-blosc2 refuses in embedded keys
_FORBIDDEN = (":", "\0", "\n", "\r", "\t")


def _check_shape(key: str) -> None:
    if len(key) > 1 and key.endswith("/"):
        raise ParamError(f"Key cannot end with '/' unless it is the root key '/', got: {key!r}")
    if "//" in key:
        raise ParamError(
            f"Key cannot contain consecutive slashes '//' (empty path segments), got: {key!r}"
        )
    segments = key.split("/")[1:]
    if any(s in (".", "..") for s in segments):
        raise ParamError(f"Key cannot contain '.' or '..' segments, got: {key!r}")


def check_key(key: Any) -> str:
    """``key`` if it is a valid store key (starts with ``/``), else a :class:`ParamError`.

    >>> check_key("/a/b")
    '/a/b'
    >>> check_key("a")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: Key must start with '/', got: 'a'
    """
    if not isinstance(key, str):
        raise ParamTypeError(f"Key must be a string, got {type(key).__name__}")
    if not key.startswith("/"):
        raise ParamError(f"Key must start with '/', got: {key!r}")
    for char in _FORBIDDEN:
        if char in key:
            raise ParamError(f"Key cannot contain character: {char!r}, got: {key!r}")
    _check_shape(key)
    return key


def tree_key(key: Any) -> str:
    """A TreeStore key: ``/`` added in front when missing, then checked as a store key
    (``:`` is allowed, as python-blosc2's TreeStore allows it).

    >>> tree_key("group/leaf"), tree_key("/")
    ('/group/leaf', '/')
    >>> tree_key("/a//b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: Key cannot contain consecutive slashes '//' (empty path ...
    """
    if not isinstance(key, str):
        raise ParamTypeError(f"Key must be a string, got {type(key)}")
    if not key.startswith("/"):
        key = "/" + key
    for char in _FORBIDDEN[1:]:
        if char in key:
            raise ParamError(f"Key cannot contain invalid character {char!r}, got: {key!r}")
    _check_shape(key)
    return key


def path_of_key(key: str, suffix: str) -> str:
    """The relative file name (``/``-separated) of the external leaf ``key``.

    >>> path_of_key("/dir1/node3", ".b2nd")
    'dir1/node3.b2nd'
    """
    return key.lstrip("/") + suffix


def key_of_path(relpath: str) -> str:
    """The key of the external leaf at ``relpath`` (its suffix dropped).

    >>> key_of_path("dir1/node3.b2nd"), key_of_path("__vlmeta__.b2f")
    ('/dir1/node3', '/__vlmeta__')
    """
    return "/" + posixpath.splitext(relpath)[0].lstrip("/")
