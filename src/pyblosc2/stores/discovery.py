"""Which files of a store are its external leaves, and under which keys (python-blosc2's
discovery, done whenever a DictStore is opened).

A file of the store's directory (or a member of its archive) other than ``embed.b2e`` is a
leaf: with a canonical suffix (``.b2nd``, ``.b2f``, ``.b2b``) it is trusted as one; with any
other suffix it is opened and kept if its frame holds a container a store can hold (a
``UserWarning`` then says which suffix it should have had), else ignored with a warning. A
deflated archive member is no frame where it lies and is left out. The key of a leaf is its
path without the suffix (:func:`.keys.key_of_path`).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import warnings
from collections.abc import Callable, Iterable

from ..schunk import SChunk
from .keys import EMBED_NAME, EXTERNAL_SUFFIXES, NOT_STORED, key_of_path
from .leaves import CONTAINER_OPENERS, leaf_suffix
from .zipindex import ZipIndex

__all__ = [
    "EMBED_NAME",
    "frame_kind",
    "leaves_in_archive",
    "leaves_in_directory",
    "remove_stale_staging",
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


def leaves_in_directory(working_dir: str, probe: Probe) -> dict[str, str]:
    """key -> relative path of the leaves under ``working_dir``; ``probe(relpath)`` opens a
    file whose suffix is not canonical."""
    rels = []
    for root, dirs, files in os.walk(working_dir):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            rels.append(os.path.relpath(path, working_dir).replace(os.sep, "/"))
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
