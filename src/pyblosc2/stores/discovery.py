"""Which files of a store are its external leaves, and under which keys (python-blosc2's
discovery, done whenever a DictStore is opened).

A file of the store's directory (or a member of its archive) other than ``embed.b2e`` is a
leaf: with a canonical suffix (``.b2nd``, ``.b2f``, ``.b2b``) it is trusted as one; with any
other suffix it is opened and kept if its frame holds a container a store can hold (a
``UserWarning`` then says which suffix it should have had), else ignored with a warning. A
deflated archive member is no frame where it lies and is left out. The key of a leaf is its
path without the suffix (:func:`.keys.key_of_path`).

A store directory may come from anywhere, so only its regular files are its files: a symlink
whose target lies outside the directory (a directory symlink too; one inside is not followed,
as :func:`os.walk` does not), a symlink to nothing, a FIFO, a device or a socket is left out
of the keys with a ``UserWarning`` (:func:`leaves_in_directory`) and out of an archive
packed from the directory (:func:`.archive.store_files`); reading its key is a
:class:`FormatError` saying why (not a ``KeyError``), and so is opening such a file all the
same (``embed.b2e``, a leaf replaced since the keys were listed: :func:`store_file`).
Symlinks to files inside the directory are followed (python-blosc2 writes none; they do no
harm).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import stat
import warnings
from collections.abc import Callable, Iterable, Iterator

from ..backends.directory import is_inside
from ..backends.file import kind_of
from ..errors import FormatError
from ..schunk import SChunk
from .keys import EMBED_NAME, EXTERNAL_SUFFIXES, NOT_STORED, key_of_path
from .leaves import CONTAINER_OPENERS, leaf_suffix
from .zipindex import ZipIndex

__all__ = [
    "EMBED_NAME",
    "frame_kind",
    "leaves_in_archive",
    "leaves_in_directory",
    "refusal",
    "remove_stale_staging",
    "store_file",
    "store_walk",
]

CANONICAL = frozenset(EXTERNAL_SUFFIXES.values())
# metalayers of frames a store does not hold as leaves (python-blosc2 warns and skips them)
_UNSUPPORTED = {"LazyArray": "LazyArray", "proxy-source": "Proxy"}
Probe = Callable[[str], SChunk]
# the staging file of a leaf being written: "<leaf>.<pid>.tmp" (python-blosc2's naming too)
_STAGING = re.compile(r"\.(\d+)\.tmp$")


def frame_kind(schunk: SChunk) -> tuple[str | None, str]:
    """(kind, container name) of the frame of ``schunk``; kind None when a store cannot hold
    it.

    >>> frame_kind(SChunk(data=b"abc"))
    ('schunk', 'SChunk')
    """
    names = {name for name, _ in schunk.header.metalayers}
    if "b2o" in names:
        return "ndarray", "NDArray"
    for layer, what in _UNSUPPORTED.items():
        if layer in names:
            return None, what
    for layer, (container, _) in CONTAINER_OPENERS.items():
        if layer in names:
            return layer, container
    if "b2nd" in names:
        return "ndarray", "NDArray"
    return "schunk", "SChunk"


def _probe(relpath: str, probe: Probe) -> bool:
    """Whether the file at ``relpath`` (a non-canonical suffix) is a leaf, with the warnings
    python-blosc2 gives."""
    try:
        schunk = probe(relpath)
    except (ValueError, OSError, NotImplementedError):
        return False
    kind, name = frame_kind(schunk)
    if kind is None:
        warnings.warn(
            f"Ignoring unsupported Blosc2 object at '{relpath}' during DictStore discovery: {name}",
            UserWarning,
            stacklevel=4,
        )
        return False
    expected = leaf_suffix(kind)
    found = posixpath.splitext(relpath)[1]
    if found != expected:
        warnings.warn(
            f"External leaf '{relpath}' uses extension '{found}' but metadata resolves to "
            f"{name}; expected '{expected}'.",
            UserWarning,
            stacklevel=4,
        )
    return True


def _map(relpaths: Iterable[str], probe: Probe) -> dict[str, str]:
    found: dict[str, str] = {}
    for rel in relpaths:
        if rel == EMBED_NAME or rel.endswith(NOT_STORED):
            continue
        if posixpath.splitext(rel)[1] in CANONICAL or _probe(rel, probe):
            found[key_of_path(rel)] = rel
    return found


def refusal(root_real: str, path: str) -> str | None:
    """Why the file ``path`` of a store directory (whose real path is ``root_real``) is no
    part of the store: a symlink (or a directory symlink on the way) whose target lies
    outside the directory, or anything but a regular file once symlinks inside it are
    followed. None: it is a file of the store.

    >>> import tempfile
    >>> d = os.path.realpath(tempfile.mkdtemp())
    >>> os.symlink("/etc/hostname", os.path.join(d, "leak.b2nd"))
    >>> refusal(d, os.path.join(d, "leak.b2nd"))
    'a symlink to /etc/hostname, outside the store directory'
    """
    real = os.path.realpath(path)
    if not is_inside(root_real, real):
        return f"a symlink to {real}, outside the store directory"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "a symlink to nothing"
    return None if stat.S_ISREG(mode) else kind_of(mode)


def store_file(working_dir: str, rel: str, where: str) -> str:
    """The path of the file ``rel`` (``/``-separated) of the store directory ``working_dir``;
    a :class:`FormatError` when it is no part of the store (:func:`refusal`). A missing file
    is left to the caller (its path is returned)."""
    path = os.path.join(working_dir, *rel.split("/"))
    if os.path.lexists(path):
        why = refusal(os.path.realpath(working_dir), path)
        if why is not None:
            raise FormatError(where, f"file {rel!r}", None, "a regular file of the store", why)
    return path


def store_walk(working_dir: str) -> Iterator[tuple[str, str, str | None]]:
    """(relative path, path, why it is refused or None) of each file under ``working_dir``,
    directory by directory in sorted order, as :func:`os.walk` visits them: directory
    symlinks are not followed (one leading out of the directory is reported, one inside is
    skipped), unreadable directories are skipped. A regular file is told from its directory
    entry, so only symlinks cost a :func:`refusal`."""
    root_real = os.path.realpath(working_dir)
    stack = [""]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(os.path.join(working_dir, folder)) as it:
                found = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        below = []
        for entry in found:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir(follow_symlinks=False):
                below.append(rel)
                continue
            if entry.is_file(follow_symlinks=False):
                yield rel, entry.path, None
                continue
            if entry.is_symlink():
                why = refusal(root_real, entry.path)
                if why != kind_of(stat.S_IFDIR):  # a directory symlink inside: not followed
                    yield rel, entry.path, why
                continue
            yield rel, entry.path, kind_of(entry.stat(follow_symlinks=False).st_mode)
        stack.extend(reversed(below))


def leaves_in_directory(
    working_dir: str, probe: Probe, refused: dict[str, str] | None = None
) -> dict[str, str]:
    """key -> relative path of the leaves under ``working_dir``; ``probe(relpath)`` opens a
    file whose suffix is not canonical. A file that is no part of the store (a symlink out
    of it, a FIFO, a device: :func:`refusal`) is left out with a ``UserWarning``, and put in
    ``refused`` (its key -> why) so that reading the key can say why it is not there."""
    rels = []
    for rel, _, why in store_walk(working_dir):
        if why is not None:
            if rel != EMBED_NAME and not rel.endswith(NOT_STORED):
                warnings.warn(
                    f"Ignoring '{rel}' during DictStore discovery: {why}",
                    UserWarning,
                    stacklevel=3,
                )
                if refused is not None:
                    refused[key_of_path(rel)] = f"{rel!r}, {why}"
            continue
        rels.append(rel)
    return _map(rels, probe)


def leaves_in_archive(index: ZipIndex, probe: Probe) -> dict[str, str]:
    """key -> member name of the stored leaves of an archive; ``probe(name)`` opens a member
    whose suffix is not canonical."""
    return _map((name for name in index if index[name].stored), probe)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_staging(working_dir: str) -> list[str]:
    """Remove the staging files (``<leaf>.<pid>.tmp``) that writers killed before their
    rename left behind, those of processes no longer alive; returns their relative paths.
    (python-blosc2 would otherwise open such a file as a leaf of a key ending in
    ``.<pid>``.)"""
    removed = []
    for root, _, files in os.walk(working_dir):
        for name in files:
            found = _STAGING.search(name)
            if found is None or _alive(int(found.group(1))):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(root, name))
                removed.append(os.path.relpath(os.path.join(root, name), working_dir))
    return removed
