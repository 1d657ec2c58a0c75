"""python-blosc2's ``blosc2.core`` helpers that scripts and tests call directly:
:func:`normalize_urlpath` (a ``file://`` URL as the local path it names) and
:func:`localize_fsspec_url` (a local copy of a remote object or directory, kept while the
remote is unchanged: :mod:`pyblosc2.backends.localize`).

>>> normalize_urlpath("file://localhost/tmp/a.b2nd")
'/tmp/a.b2nd'
"""

from __future__ import annotations

import os
from typing import Any

from .backends.localize import localize
from .frame.location import local_path

__all__ = ["localize_fsspec_url", "normalize_urlpath"]


def normalize_urlpath(urlpath: Any) -> Any:
    """``urlpath`` with a ``file://`` URL turned into the local path it names (a host other
    than ``localhost`` is refused off Windows); anything else unchanged."""
    if isinstance(urlpath, str | os.PathLike):
        path = os.fsdecode(urlpath)
        return local_path(path) if path.startswith("file://") else urlpath
    return urlpath


def localize_fsspec_url(
    urlpath: str, cache_dir: str | os.PathLike[str], storage_options: dict[str, Any] | None = None
) -> str:
    """The local copy of the fsspec URL ``urlpath`` in ``cache_dir`` (fetched again when the
    remote changed)."""
    return localize(urlpath, cache_dir, storage_options)
