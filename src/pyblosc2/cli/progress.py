"""Progress on a terminal: a tqdm bar when tqdm is installed (the ``cli`` extra), else one
plain line rewritten in place (``convert: 12.0/96.0 MiB (12%)``); nothing with ``--quiet`` or
when standard error is not a terminal (pipes, files, CI logs).

>>> bar = progress(10, "decode", enabled=False)
>>> bar.update(3); bar.close()
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any, Protocol

__all__ = ["Line", "Progress", "progress"]

_EVERY = 0.2  # seconds between two redraws of the plain line


class Progress(Protocol):
    def update(self, n: int = 1) -> Any: ...

    def close(self) -> None: ...


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class Line:
    """A plain progress line on ``stream``, redrawn at most every 0.2 s and erased at the end.

    >>> import io; out = io.StringIO()
    >>> line = Line(4 << 20, "convert", "B", out); line.update(1 << 20); line.close()
    >>> out.getvalue().split("\\r")[2]  # drawn at the start, at the end, then erased
    'convert: 1.0/4.0 MiB (25%)'
    """

    def __init__(self, total: int | None, desc: str, unit: str, stream: IO[str]) -> None:
        self.total, self.desc, self.unit, self.stream = total, desc, unit, stream
        self.n, self._shown, self._width = 0, 0.0, 0
        self._draw()

    def _text(self) -> str:
        if self.unit == "B":
            done = f"{self.n / 2**20:.1f}"
            total = f"/{self.total / 2**20:.1f}" if self.total else ""
            text = f"{self.desc}: {done}{total} MiB"
        else:
            total = f"/{self.total}" if self.total else ""
            text = f"{self.desc}: {self.n}{total} {self.unit}s"
        if self.total:
            text += f" ({100 * self.n // self.total}%)"
        return text

    def _draw(self) -> None:
        text = self._text()
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width, self._shown = len(text), time.monotonic()

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.monotonic() - self._shown >= _EVERY:
            self._draw()

    def close(self) -> None:
        self._draw()
        self.stream.write("\r" + " " * self._width + "\r")
        self.stream.flush()


def progress(total: int | None, desc: str, *, enabled: bool, unit: str = "chunk") -> Progress:
    """Progress over ``total`` steps (``unit="B"``: bytes) on standard error, shown only when
    ``enabled`` and standard error is a terminal: tqdm's bar, else a plain :class:`Line`."""
    if not enabled or not sys.stderr.isatty():
        return _Silent()
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return Line(total, desc, unit, sys.stderr)
    scaled = {"unit_scale": True, "unit_divisor": 1024} if unit == "B" else {}
    bar: Progress = tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr, **scaled)
    return bar
