"""``pyblosc2 verify``: decode every chunk and check the fingerprint digests where the file
has them (pyblosc2's ``fingerprint=True``); without a fingerprint the check is decode-only.

Exit status: 0 intact, 1 damaged, 2 unreadable (the file cannot be opened at all).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyblosc2

from .progress import progress
from .sources import Source, frame_layout

__all__ = ["Report", "verify"]

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

    @property
    def status(self) -> int:
        return DAMAGED if self.damaged or self.problems else INTACT

    def lines(self) -> list[str]:
        checked = "decoded, fingerprint digests checked" if self.fingerprint else "decoded"
        chunks = f"{self.nchunks} chunk{'s' * (self.nchunks != 1)}"
        if self.status == INTACT:
            return [f"{self.path}: OK ({chunks} {checked})", *(f"  {n}" for n in self.notes)]
        n = len(self.damaged)
        out = [f"{self.path}: DAMAGED ({n} of {chunks} damaged; {checked})"]
        out.extend(
            f"  {why}" if why.startswith(f"chunk {k}:") else f"  chunk {k}: {why}"
            for k, why in sorted(self.damaged.items())
        )
        out.extend(f"  {p}" for p in [*self.problems, *self.notes])
        return out


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
            "note: the fingerprint digests are stale (the trailer fingerprint was reset, e.g. "
            "by C-Blosc2 writing to the frame): checked by decoding only"
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
        report.notes.append(
            "note: no fingerprint: damage that still decodes (e.g. inside a zstd or lz4 stream) "
            "cannot be seen; files written with fingerprint=True can be checked fully"
        )
    return report
