"""Writing outputs so that a failure leaves nothing behind: everything is written to a
temporary name beside the target (a file or a directory) and renamed over it only when the
command succeeded; ``-`` means standard output (the temporary file is copied there at the
end)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator

from .sources import STDIO, CliError

__all__ = ["atomic_output", "is_stdout"]


def is_stdout(path: str) -> bool:
    return path == STDIO


def _discard(tmp: str) -> None:
    if os.path.isdir(tmp):
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def atomic_output(path: str, *, directory: bool = False) -> Iterator[str]:
    """Yield a temporary path to write; on success it replaces ``path`` (or is copied to
    standard output when ``path`` is ``-``), on failure it is removed.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "out.bin")
    >>> with atomic_output(target) as tmp:
    ...     _ = open(tmp, "wb").write(b"data")
    >>> open(target, "rb").read()
    b'data'
    """
    if is_stdout(path):
        if directory:
            raise CliError(path, "this output is a directory and cannot go to standard output")
        parent, base = None, "stdout"
    else:
        parent = os.path.dirname(os.path.abspath(path))
        base = os.path.basename(path)
        if not os.path.isdir(parent):
            raise CliError(path, f"directory {parent} does not exist")
        if directory and os.path.exists(path):
            raise CliError(path, "already exists (remove it first)")
        if not directory and os.path.isdir(path):
            raise CliError(path, "is a directory")
    # the temporary name keeps the target's extension (some readers look at it)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{base}.", suffix=f".tmp{os.path.splitext(base)[1]}", dir=parent
    )
    os.close(fd)
    os.unlink(tmp)  # writers create it themselves (files or directories)
    try:
        yield tmp
        if parent is None:
            with open(tmp, "rb") as f:
                shutil.copyfileobj(f, sys.stdout.buffer, 1 << 20)
            sys.stdout.buffer.flush()
            _discard(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
