"""Where a saved expression lies, and so where its operands may be: the rule that keeps a
saved expression from reading anything outside the directory or store that holds it.

A :class:`Place` has a *root* (a real path: every operand must resolve inside it), a *base*
(the directory a relative operand path is taken from, python-blosc2's ``carrier_path``) and,
for a member of a store, the store itself:

* a file of its own (``dir/expr.b2nd``): root and base are its directory;
* a member of a ``.b2d`` store: root is the store's directory, base the member's directory;
* a member of a ``.b2z`` archive or of an EmbedStore: root is the store file itself (so only
  references to members of that store resolve), base its directory;
* an in-memory frame (``from_cframe``): root and base are the current directory (where
  python-blosc2 resolves such paths too).

An operand path (:func:`resolve_path`) is refused — before any operand is opened — when it
is empty, a URL, holds a NUL, or when its real path (:func:`os.path.realpath`: ``..`` and
every symlink followed) is not inside the root; an absolute path is accepted only when it
resolves inside the root (python-blosc2 writes absolute paths for operands of in-memory
carriers and DictStore members). A path that is inside but missing is reported as missing
(python-blosc2's ``MissingOperands``); one that is neither a regular file nor a directory
(a FIFO, a device) is refused.

Opening a saved expression whose operands are saved expressions recurses; :func:`opening`
keeps the chain of carriers being opened (per thread and task, in a context variable) so that
an expression naming itself, directly or through others, is refused as a cycle, and chains
deeper than :data:`MAX_CHAIN` are refused.

>>> import tempfile; d = tempfile.mkdtemp(); p = Place.of_file(os.path.join(d, "e.b2nd"))
>>> resolve_path("../x.b2nd", p, "operand 'a'")
Traceback (most recent call last):
...
pyblosc2.errors.FormatError: operand 'a': urlpath is '../x.b2nd', expected a path inside ...
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from ...errors import FormatError
from ...frame.location import is_url

__all__ = ["MAX_CHAIN", "Place", "is_inside", "opening", "resolve_path"]

#: the deepest chain of saved expressions whose operands are saved expressions
MAX_CHAIN = 32
_CHAIN: contextvars.ContextVar[tuple[tuple[str, str | None], ...]] = contextvars.ContextVar(
    "pyblosc2_saved_chain", default=()
)


def is_inside(root_real: str, real: str) -> bool:
    """Whether the real path ``real`` is ``root_real`` or lies under it.

    >>> is_inside("/data/s.b2d", "/data/s.b2d/a.b2nd"), is_inside("/data/s.b2d", "/data/s.b2dx")
    (True, False)
    """
    return os.path.commonpath([real, root_real]) == root_real


@dataclass(frozen=True, slots=True)
class Place:
    """Where a saved expression lies (see the module docstring)."""

    root: str
    base: str
    store: str | None
    label: str
    key: str | None = None

    @classmethod
    def of_file(cls, path: str) -> Place:
        """A saved expression in a file of its own."""
        d = os.path.dirname(os.path.abspath(path))
        return cls(os.path.realpath(d), d, None, f"saved expression {path}")

    @classmethod
    def in_store(cls, store: str, key: str, member_file: str | None = None) -> Place:
        """The member ``key`` of the store at ``store`` (``member_file``: the member's own
        file, for a ``.b2d`` directory store)."""
        real = os.path.realpath(store)
        base = os.path.dirname(os.path.abspath(member_file or store))
        return cls(real, base, real, f"saved expression {key!r} of {store}", key)

    @classmethod
    def in_memory(cls) -> Place:
        """A saved expression read from memory (a cframe): paths are the current
        directory's."""
        d = os.getcwd()
        return cls(os.path.realpath(d), d, None, "saved expression (in memory)")

    @property
    def identity(self) -> tuple[str, str | None] | None:
        """What names this carrier in a chain of carriers (None: in memory)."""
        if self.key is not None and self.store is not None:
            return (self.store, self.key)
        return None


def resolve_path(path: str, place: Place, what: str, *, store_ok: bool = False) -> str | None:
    """The real path of operand path ``path`` of a saved expression at ``place``, checked to
    lie inside its root (``store_ok``: the root itself may be named, as a store); None when
    it is inside but does not exist."""

    def refuse(expected: str) -> FormatError:
        return FormatError(what, "urlpath", None, expected, repr(path))

    inside = f"a path inside {place.root}"
    if not path or "\x00" in path or is_url(path):
        raise refuse(f"{inside} (a local path, not empty)")
    joined = path if os.path.isabs(path) else os.path.join(place.base, path)
    real = os.path.realpath(joined)
    if not is_inside(place.root, real) or (real == place.root and not store_ok):
        raise refuse(f"{inside} (no '..', absolute path or symlink leading out)")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise refuse(f"a readable path ({exc.strerror})") from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise refuse("a regular file or a directory (not a FIFO, socket or device)")
    return real


@contextlib.contextmanager
def opening(place: Place, carrier: str | None) -> Iterator[None]:
    """Mark the carrier at ``place`` (its real path ``carrier``, None in memory) as being
    opened: a carrier already in the chain is a cycle, a chain longer than
    :data:`MAX_CHAIN` is refused."""
    chain = _CHAIN.get()
    ident = place.identity or ((carrier, None) if carrier is not None else None)
    if ident is not None and ident in chain:
        raise FormatError(
            place.label, "operands", None, "operands that are not the expression itself", "a cycle"
        )
    if len(chain) >= MAX_CHAIN:
        raise FormatError(
            place.label,
            "operands",
            None,
            f"saved expressions nested at most {MAX_CHAIN} deep",
            f"{len(chain) + 1} deep",
        )
    token = _CHAIN.set((*chain, ident) if ident is not None else (*chain, ("<memory>", None)))
    try:
        yield
    finally:
        _CHAIN.reset(token)
