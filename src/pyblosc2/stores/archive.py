"""Writing and unpacking a ``.b2z`` archive (a DictStore/TreeStore in one zip file).

The layout, as python-blosc2 4.x writes it: a zip archive whose members are all *stored*
(``ZIP_STORED``, so each is a frame readable where it lies), named by their path in the
store's directory (``dir1/node3.b2nd``), the largest first and ``embed.b2e`` last.

Writing is crash-safe: the archive is written whole to a new file beside the target
(``<random>.b2z.tmp``), synced, and renamed over the target (``os.replace``, then the
directory is synced). A reader, or a process killed at any moment, sees the old archive or
the new one, never a mix; a kill leaves at most the stray ``.b2z.tmp`` file. The new file gets
the target's permissions (or the umask's for a new one). Unpacking checks every member name
(no absolute paths, no ``..``) before anything is written.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import shutil
import zipfile
from collections.abc import Iterable
from typing import Any

from ..backends.base import ByteStore
from .keys import EMBED_NAME, NOT_STORED
from .zipindex import check_member_name

__all__ = ["StoreReader", "extract_archive", "store_files", "write_archive"]

TMP_SUFFIX = ".b2z.tmp"


def store_files(working_dir: str) -> list[tuple[str, str]]:
    """(member name, file path) of a store directory in archive order: the largest first,
    then by name, and ``embed.b2e`` last (python-blosc2's order)."""
    found = []
    for root, _, files in os.walk(working_dir):
        for name in files:
            path = os.path.join(root, name)
            arcname = os.path.relpath(path, working_dir).replace(os.sep, "/")
            if arcname == EMBED_NAME or name.endswith(NOT_STORED):
                continue
            found.append((os.path.getsize(path), arcname, path))
    found.sort(key=lambda t: (-t[0], t[1]))
    members = [(arcname, path) for _, arcname, path in found]
    embed = os.path.join(working_dir, EMBED_NAME)
    if os.path.exists(embed):
        members.append((EMBED_NAME, embed))
    return members


def _new_file(directory: str) -> tuple[int, str]:
    """A new file beside the target, created with the umask's permissions."""
    while True:
        path = os.path.join(directory, f".{secrets.token_hex(8)}{TMP_SUFFIX}")
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), path
        except FileExistsError:  # pragma: no cover - 64 random bits
            continue


def _sync_directory(directory: str) -> None:
    with contextlib.suppress(OSError):  # some filesystems cannot sync a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_archive(target: str, members: Iterable[tuple[str, str]]) -> str:
    """Write the files ``members`` ((member name, path) pairs, in order) as the stored zip
    archive ``target``, replacing it atomically; returns its absolute path."""
    target = os.path.abspath(target)
    directory = os.path.dirname(target)
    fd, tmp = _new_file(directory)
    try:
        with os.fdopen(fd, "wb") as f:
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
                for arcname, path in members:
                    zf.write(path, check_member_name(arcname))
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_directory(directory)
    return target


class StoreReader(io.RawIOBase):
    """A read-only, seekable file over a :class:`ByteStore` (for :mod:`zipfile`)."""

    def __init__(self, store: ByteStore) -> None:
        self._store = store
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._store.size}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._store.read(self._pos, len(view))
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)


def extract_archive(source: ByteStore, target_dir: str) -> None:
    """Unpack the zip archive in ``source`` into ``target_dir`` (created if missing), each
    member written whole to a new file and renamed into place; deflated members are inflated
    (an archive repacked by another tool), unsafe names refused before anything is written."""
    os.makedirs(target_dir, exist_ok=True)
    with zipfile.ZipFile(io.BufferedReader(StoreReader(source))) as zf:
        infos = [i for i in zf.infolist() if not i.filename.endswith("/")]
        for info in infos:
            check_member_name(info.filename)
        for info in infos:
            dest = os.path.join(target_dir, *info.filename.split("/"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            fd, tmp = _new_file(os.path.dirname(dest))
            try:
                with os.fdopen(fd, "wb") as out, zf.open(info) as member:
                    shutil.copyfileobj(member, out, 1 << 20)
                os.replace(tmp, dest)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
