"""Opening what the command line is given: a frame file (SChunk or NDArray, contiguous or
sparse), a file holding one Blosc1/Blosc2 chunk, a ``.npy`` file, a zarr v3 store or ``-``
(standard input, spooled to a temporary file so frames can be read at random).

Errors are reported as :class:`CliError` naming the file; :func:`about` turns pyblosc2's own
errors (``ValueError`` subclasses, ``OSError``, ``NotImplementedError``) into one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyblosc2

__all__ = [
    "CliError",
    "FrameLayout",
    "Source",
    "about",
    "frame_layout",
    "open_source",
    "spool_stdin",
]

STDIO = "-"


class CliError(Exception):
    """An error to print as ``pyblosc2: error: <path>: <message>`` (exit status 2)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@contextlib.contextmanager
def about(path: str) -> Iterator[None]:
    """Report any pyblosc2/OS error raised inside as a :class:`CliError` on ``path``."""
    try:
        yield
    except CliError:
        raise
    except FileNotFoundError as exc:
        raise CliError(path, "no such file or directory") from exc
    except OSError as exc:
        raise CliError(path, exc.strerror or str(exc)) from exc
    except NotImplementedError as exc:
        raise CliError(path, f"not implemented: {exc}") from exc
    except (ValueError, KeyError, IndexError, EOFError) as exc:
        raise CliError(path, str(exc) or type(exc).__name__) from exc


@dataclass
class Source:
    """An opened input: ``kind`` is "ndarray", "schunk" or "chunk"; ``obj`` the NDArray, the
    SChunk or the chunk's bytes."""

    path: str
    kind: str
    obj: Any

    @property
    def schunk(self) -> pyblosc2.SChunk:
        return self.obj.schunk if self.kind == "ndarray" else self.obj


def spool_stdin(stack: contextlib.ExitStack) -> str:
    """Copy standard input to a temporary file (piece by piece); returns its path, removed
    when ``stack`` closes."""
    fd, path = tempfile.mkstemp(prefix="pyblosc2-stdin-")
    stack.callback(_remove, path)
    with os.fdopen(fd, "wb") as f:
        shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _single_chunk(path: str) -> bytes | None:
    """The file's bytes when it is exactly one chunk (its header's cbytes is the file size)."""
    if os.path.isdir(path):
        return None
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(pyblosc2.EXTENDED_HEADER_LENGTH)
        try:
            header = pyblosc2.get_chunk_header(head)
        except ValueError:
            return None
        if header.cbytes != size:
            return None
        f.seek(0)
        return f.read()


def _zarr_store(path: str) -> str | None:
    """ "zarr v2" or "zarr v3" when ``path`` is such a directory store."""
    if not os.path.isdir(path):
        return None
    if os.path.exists(os.path.join(path, "zarr.json")):
        return "zarr v3"
    if any(os.path.exists(os.path.join(path, n)) for n in (".zarray", ".zgroup")):
        return "zarr v2"
    return None


def open_source(path: str, stack: contextlib.ExitStack) -> Source:
    """Open ``path`` (``-`` reads standard input) as a frame or a single chunk."""
    real = spool_stdin(stack) if path == STDIO else path
    with about(path):
        if not os.path.exists(real):
            raise FileNotFoundError(2, "No such file or directory", real)
        store = _zarr_store(real)
        if store:
            raise CliError(
                path, f"a {store} store, not a Blosc2 frame: `pyblosc2 convert` reads it"
            )
        chunk = _single_chunk(real)
        if chunk is not None:
            return Source(path, "chunk", chunk)
        obj = pyblosc2.open(real)
        if not isinstance(obj, pyblosc2.NDArray | pyblosc2.SChunk):
            obj = obj.schunk  # a container of values (ObjectArray, BatchArray, ...): its frame
        kind = "ndarray" if isinstance(obj, pyblosc2.NDArray) else "schunk"
        return Source(path, kind, obj)


@dataclass(frozen=True)
class FrameLayout:
    """What the public API does not tell about a frame: where each chunk is stored (the
    offset of its first byte in the file for contiguous frames, its chunk-file number for
    sparse ones; None for chunks stored as a special offset) and the trailer fingerprint."""

    offsets: list[int | None]
    fingerprint_type: int
    has_digests: bool


def frame_layout(schunk: pyblosc2.SChunk) -> FrameLayout:
    """Read the frame's chunk index and trailer fingerprint.

    Uses SChunk's frame-level extensions (``header``, ``chunk_offsets``, ``trailer``).
    """
    sparse = not schunk.contiguous
    base = 0 if sparse else schunk.header.header_len
    offsets = [None if off < 0 else base + off for off in schunk.chunk_offsets.tolist()]
    trailer = schunk.trailer
    has_digests = any(k == "_pyblosc2_fp" for k, _ in trailer.vlmeta)
    return FrameLayout(offsets, int(trailer.fingerprint_type), has_digests)
