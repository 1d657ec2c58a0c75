"""Progress bars: tqdm on a terminal, nothing otherwise (``--quiet``, pipes, no tqdm).

>>> bar = progress(10, "decode", enabled=False)
>>> bar.update(3); bar.close()
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

__all__ = ["Progress", "progress"]


class Progress(Protocol):
    def update(self, n: int = 1) -> Any: ...

    def close(self) -> None: ...


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress(total: int | None, desc: str, *, enabled: bool, unit: str = "chunk") -> Progress:
    """A progress bar over ``total`` steps on stderr, shown only when ``enabled``, stderr is a
    terminal and tqdm is installed (the ``cli`` extra)."""
    if not enabled or not sys.stderr.isatty():
        return _Silent()
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return _Silent()
    bar: Progress = tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)
    return bar
