"""``pyblosc2 verify``: decode every chunk and check the fingerprint digests where the file
has them (pyblosc2's ``fingerprint=True``); without a fingerprint the check is decode-only.

Exit status: 0 intact, 1 damaged (a chunk that does not decode or whose digest differs, a
frame shorter than its header says: truncated), 2 unreadable (not a frame or chunk file at
all, or missing). Notes (e.g. "no fingerprint") are printed once, after all files.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

import pyblosc2
from pyblosc2.frame.header import FRAME_MAGIC, HEADER_MINLEN, POS_FRAME_LEN, POS_MAGIC

from .progress import progress
from .sources import CliError, Source, about, frame_layout

__all__ = ["Report", "notes", "truncation", "verify"]

NO_FINGERPRINT = (
    "note: no fingerprint in {files}: damage that still decodes (e.g. inside a zstd or lz4 "
    "stream) cannot be seen; files written with fingerprint=True can be checked fully"
)
_FRAME_LEN = struct.Struct(">Q")


def truncation(path: str) -> str | None:
    """Why the frame at ``path`` (a contiguous frame file, or a sparse frame's
    ``chunks.b2frame``) is truncated — shorter than the frame length its header records —
    or None (not truncated, or not recognisably a frame).

    >>> import tempfile; p = os.path.join(tempfile.mkdtemp(), "t.b2frame")
    >>> _ = pyblosc2.SChunk(chunksize=40, urlpath=p, mode="w", cparams={"typesize": 4})
    >>> truncation(p) is None
    True
    >>> data = open(p, "rb").read(); _ = open(p, "wb").write(data[:100])
    >>> truncation(p)  # doctest: +ELLIPSIS
    'truncated: the file has 100 bytes, its frame header says ... (frame_len)'
    """
    if os.path.isdir(path):
        path = os.path.join(path, "chunks.b2frame")
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_MINLEN)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return None
    if head[POS_MAGIC : POS_MAGIC + len(FRAME_MAGIC)] != FRAME_MAGIC:
        return None
    if len(head) < POS_FRAME_LEN + _FRAME_LEN.size:
        return f"truncated: the file has {size} bytes, less than a frame header"
    (frame_len,) = _FRAME_LEN.unpack_from(head, POS_FRAME_LEN)
    if frame_len > size:
        return (
            f"truncated: the file has {size} bytes, its frame header says {frame_len} (frame_len)"
        )
    return None


INTACT, DAMAGED, UNREADABLE = 0, 1, 2
STALE = 0  # trailer fingerprint type of a frame rewritten by a writer that drops the digests


@dataclass
class Report:
    """What ``verify`` found in one file: ``damaged`` maps a chunk index to the problem;
    ``problems`` holds damage that belongs to no single chunk (e.g. the digest list)."""

    path: str
    nchunks: int = 0
    fingerprint: bool = False
    damaged: dict[int, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    truncated: str | None = None

    @property
    def status(self) -> int:
        return DAMAGED if self.damaged or self.problems or self.truncated else INTACT

    def lines(self) -> list[str]:
        """The report, without the notes (:func:`notes` gathers those of all files)."""
        checked = "decoded, fingerprint digests checked" if self.fingerprint else "decoded"
        chunks = f"{self.nchunks} chunk{'s' * (self.nchunks != 1)}"
        if self.status == INTACT:
            return [f"{self.path}: OK ({chunks} {checked})"]
        if self.truncated:
            return [f"{self.path}: DAMAGED ({self.truncated})"]
        n = len(self.damaged)
        out = [f"{self.path}: DAMAGED ({n} of {chunks} damaged; {checked})"]
        out.extend(
            f"  {why}" if why.startswith(f"chunk {k}:") else f"  chunk {k}: {why}"
            for k, why in sorted(self.damaged.items())
        )
        out.extend(f"  {p}" for p in self.problems)
        return out


def notes(reports: list[Report]) -> list[str]:
    """Each distinct note once, naming the files it is about."""
    files: dict[str, list[str]] = {}
    for r in reports:
        for note in r.notes:
            files.setdefault(note, []).append(r.path)
    return [note.format(files=", ".join(paths)) for note, paths in files.items()]


def verify(source: Source, show_progress: bool = False) -> Report:
    """Decode every chunk of ``source``; then compare the fingerprint digests if present."""
    report = Report(source.path)
    if source.kind == "chunk":
        report.nchunks = 1
        try:
            pyblosc2.decompress2(source.obj)
        except ValueError as exc:
            report.damaged[0] = str(exc)
        return report
    s = source.schunk
    report.nchunks = s.nchunks
    bar = progress(s.nchunks, "verify", enabled=show_progress)
    total = 0
    for n in range(s.nchunks):
        try:
            data = s.decompress_chunk(n)
            total += len(data) if data is not None else 0
        except ValueError as exc:
            report.damaged[n] = str(exc)
        bar.update()
    bar.close()
    if not report.damaged and total != s.nbytes:
        report.problems.append(f"chunks decode to {total} bytes, the frame header says {s.nbytes}")
    layout = frame_layout(s)
    if layout.has_digests and layout.fingerprint_type == STALE:
        report.notes.append(
            "note: the fingerprint digests of {files} are stale (the trailer fingerprint was "
            "reset, e.g. by C-Blosc2 writing to the frame): checked by decoding only"
        )
    elif layout.has_digests:
        report.fingerprint = True
        try:
            bad = s.verify()
        except ValueError as exc:
            report.problems.append(f"fingerprint: {exc}")
        else:
            for k in bad:
                report.damaged.setdefault(k, "stored bytes do not match the fingerprint digest")
    else:
        report.notes.append(NO_FINGERPRINT)
    return report


def verify_member(
    name: str, where: str, source: Callable[[], Source], show_progress: bool, strip: str = ""
) -> tuple[int, list[str]]:
    """Verify one member of a store (``source()`` opens it, errors named after ``where``):
    its status and its report lines, indented, the details only when it is not intact (a
    member that cannot be opened is DAMAGED; ``strip`` is taken off the first line)."""
    try:
        with about(where):
            report = verify(source(), show_progress)
    except CliError as exc:
        return DAMAGED, [f"  {name}: DAMAGED (cannot be opened: {exc.message})"]
    first, *rest = report.lines()
    lines = ["  " + (first.replace(strip, "", 1) if strip else first)]
    lines += ["  " + line for line in rest if report.status != INTACT]
    return report.status, lines
