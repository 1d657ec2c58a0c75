"""Writing and unpacking a ``.b2z`` archive (a DictStore/TreeStore in one zip file).

The layout, as python-blosc2 4.x writes it: a zip archive whose members are all *stored*
(``ZIP_STORED``, so each is a frame readable where it lies), named by their path in the
store's directory (``dir1/node3.b2nd``), the largest first and ``embed.b2e`` last.

Writing is crash-safe: the archive is written whole to a new file beside the target
(``<random>.b2z.tmp``), synced, and renamed over the target (``os.replace``, then the
directory is synced). A reader, or a process killed at any moment, sees the old archive or
the new one, never a mix; a kill leaves at most the stray ``.b2z.tmp`` file. The new file gets
the target's permissions (or the umask's for a new one). Unpacking reads the archive with the
same checked reader as opening it in place (:class:`.zipindex.ZipIndex`: every name, offset
and size checked, members disjoint) and refuses what it cannot read before anything is
written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import zipfile
from collections.abc import Iterable

from ..backends.base import ByteStore
from ..errors import FormatError
from .discovery import store_walk
from .keys import EMBED_NAME, NOT_STORED
from .zipindex import ZipIndex, check_member_name
from .zipmember import check_member, member_pieces

__all__ = ["extract_archive", "store_files", "write_archive"]

TMP_SUFFIX = ".b2z.tmp"


def store_files(working_dir: str) -> list[tuple[str, str]]:
    """(member name, file path) of a store directory in archive order: the largest first,
    then by name, and ``embed.b2e`` last (python-blosc2's order). Only the store's files are
    packed: a symlink out of the directory, a FIFO or a device is not
    (:func:`.discovery.refusal`)."""
    found = []
    for arcname, path, why in store_walk(working_dir):
        if why is not None or arcname == EMBED_NAME or arcname.endswith(NOT_STORED):
            continue  # no file of the store (a symlink out of it, a FIFO): see .discovery
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


def extract_archive(source: ByteStore, target_dir: str, where: str = "zip archive") -> None:
    """Unpack the zip archive in ``source`` into ``target_dir`` (created if missing), each
    member written whole to a new file and renamed into place. The archive is read by
    :class:`.zipindex.ZipIndex` (every offset, size and name checked) and each member by
    :func:`.zipmember.member_pieces` (deflated members of an archive repacked by another tool
    are inflated, in bounded pieces checked against their declared size and CRC-32);
    everything that can be refused from the directory alone is refused before anything is
    written. ``where`` names the archive in errors."""
    index = ZipIndex.read(source)
    members = list(index.members.values())
    for m in members:
        check_member(m, where)
    os.makedirs(target_dir, exist_ok=True)
    for m in members:
        dest = os.path.join(target_dir, *m.name.split("/"))
        try:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            fd, tmp = _new_file(os.path.dirname(dest))
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            raise FormatError(
                where, "member name", None, "a path this system can create", repr(m.name)
            ) from None
        try:
            with os.fdopen(fd, "wb") as out:
                for piece in member_pieces(source, m, where):
                    out.write(piece)
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
