"""A local copy of a remote object or directory, kept while the remote is unchanged: how a
store that lives in many files (a ``.b2d`` directory) or needs random access to a whole
archive (``.b2z``) is opened from an fsspec URL with ``cache_storage=`` (python-blosc2's
``localize_fsspec_url``).

The copy is ``<directory>/fsspec-<digest of the URL><suffix>`` with a manifest beside it
(``...manifest.json``): every file's relative name and fsspec ``ukey`` (a digest of its
info: size, mtime, ETag...), so a remote file replaced by one of the same size is seen. A
stale copy is replaced whole: the new one is downloaded beside it and renamed into place.
Names listed by the remote are checked: one that would land outside the copy (absolute,
``..``) is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from typing import Any

from ..errors import FormatError
from .retry import retrying

__all__ = ["localize"]


def _manifest(fs: Any, path: str, url: str) -> dict[str, str]:
    """Relative name -> ukey of every file at ``path`` ("" for a single object)."""
    if not fs.isdir(path):
        return {"": str(retrying(url, "reading its info", lambda: fs.ukey(path), missing=True))}
    base = path.rstrip("/") + "/"
    out = {}
    for full in sorted(retrying(url, "listing", lambda: fs.find(path))):
        rel = full[len(base) :] if full.startswith(base) else full
        parts = rel.split("/")
        if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise FormatError(url, "listed name", None, "a relative name inside the directory", rel)
        out[rel] = str(fs.ukey(full))
    return out


def _fetch(fs: Any, url: str, path: str, rel: str) -> bytes:
    return bytes(retrying(url, f"downloading {rel}", lambda: fs.cat_file(path)))


def localize(
    url: str, directory: str | os.PathLike[str], storage_options: dict[str, Any] | None = None
) -> str:
    """The local copy of the object or directory at ``url`` in ``directory`` (see the module
    docstring).

    >>> import fsspec, tempfile
    >>> fsspec.filesystem("memory").pipe_file("/loc/a.b2d/x.bin", b"abc")
    >>> d = localize("memory://loc/a.b2d", tempfile.mkdtemp())
    >>> open(os.path.join(d, "x.bin"), "rb").read()
    b'abc'
    """
    from .fsspec import connect  # fsspec (and asyncio) only when a URL is met

    fs, path = connect(url, storage_options)
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    suffix = os.path.splitext(path.rstrip("/"))[1]
    target = os.path.join(
        directory, "fsspec-" + hashlib.sha256(url.encode()).hexdigest()[:32] + suffix
    )
    manifest_path = target + ".manifest.json"
    wanted = _manifest(fs, path, url)
    with contextlib.suppress(OSError, ValueError), open(manifest_path) as f:
        if json.load(f) == wanted and os.path.exists(target):
            return target
    fresh = f"{target}.{os.getpid()}.tmp"
    shutil.rmtree(fresh, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.remove(fresh)
    if "" in wanted:
        data = retrying(url, "downloading", lambda: fs.cat_file(path))
        with open(fresh, "wb") as f:
            f.write(data)
    else:
        base = path.rstrip("/") + "/"
        for rel in wanted:
            local = os.path.join(fresh, *rel.split("/"))
            os.makedirs(os.path.dirname(local), exist_ok=True)
            data = _fetch(fs, url, base + rel, rel)
            with open(local, "wb") as f:
                f.write(data)
    old = f"{target}.{os.getpid()}.old"
    if os.path.exists(target):
        os.replace(target, old)
    os.replace(fresh, target)
    shutil.rmtree(old, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.remove(old)
    with open(manifest_path + ".tmp", "w") as f:
        json.dump(wanted, f)
    os.replace(manifest_path + ".tmp", manifest_path)
    return target
