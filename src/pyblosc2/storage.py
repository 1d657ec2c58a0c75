"""``Storage``: where and how a container is stored (python-blosc2's ``Storage``), and the
rules that tie its fields together (frame-format.md §9.5 for ``mmap_mode``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .errors import ArgumentConflictError, ParamError

__all__ = ["MMAP_MODES", "MODES", "Storage"]

MODES = ("r", "a", "w")
# mmap_mode -> the mode it implies (python-blosc2 conventions)
MMAP_MODES = {"r": "r", "r+": "a", "w+": "w", "c": "a"}


@dataclass
class Storage:
    """Where and how an SChunk is stored (python-blosc2's ``Storage``).

    >>> Storage(urlpath="a.b2frame").contiguous, Storage().contiguous
    (True, False)
    >>> Storage(urlpath="a.b2frame", mmap_mode="r+").mode
    'a'
    """

    contiguous: bool | None = None
    urlpath: str | os.PathLike[str] | None = None
    mode: str = "a"
    mmap_mode: str | None = None
    initial_mapping_size: int | None = None
    locking: bool = False
    meta: dict[str, Any] | None = None
    #: pyblosc2 extension: sync (fsync) after every step of a change, so that a power loss
    #: keeps the same old-or-new guarantee as a killed process (slower)
    fsync: bool = False

    def __post_init__(self) -> None:
        if self.mode is None:  # python-blosc2 accepts None: the default, or mmap_mode's
            self.mode = "a"
        if self.mode not in MODES:
            raise ParamError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.urlpath is not None and not isinstance(self.urlpath, str | os.PathLike):
            raise ParamError(f"urlpath must be a str or path-like, got {self.urlpath!r}")
        if self.contiguous is None:
            self.contiguous = self.urlpath is not None
        if self.locking and self.urlpath is None:
            raise ParamError("locking needs a urlpath (a frame in memory has no other handles)")
        if self.mmap_mode is not None:
            if self.mmap_mode not in MMAP_MODES:
                raise ParamError(
                    f"mmap_mode must be one of {sorted(MMAP_MODES)}, got {self.mmap_mode!r}"
                )
            if self.urlpath is None:
                raise ParamError("mmap_mode needs a file: urlpath must be set")
            if not self.contiguous:
                raise ParamError("Only contiguous storage is supported with mmap_mode")
            if self.locking:
                raise ParamError("mmap_mode and locking cannot be combined")
            self.mode = MMAP_MODES[self.mmap_mode]
        if self.initial_mapping_size is not None:  # python-blosc2's rules and messages
            if self.mmap_mode is None:
                raise ParamError("initial_mapping_size can only be used with mmap_mode")
            if self.mmap_mode == "r":
                raise ParamError(
                    "initial_mapping_size can only be used with writing modes (r+, w+, c)"
                )

    @property
    def path(self) -> str | None:
        """``urlpath`` as a ``str`` (None in memory)."""
        return None if self.urlpath is None else os.fsdecode(self.urlpath)

    @classmethod
    def from_args(cls, storage: Any, given: dict[str, Any]) -> Storage:
        """The Storage of a constructor call: ``storage`` (a Storage, a dict or None) or the
        individual storage keyword arguments ``given``, not both."""
        if storage is None:
            return cls(**given)
        if given:
            raise ArgumentConflictError(
                "pass either storage or individual storage arguments, not both"
            )
        if isinstance(storage, dict):
            unknown = sorted(set(storage) - set(cls.__dataclass_fields__))
            if unknown:
                raise ParamError(
                    f"storage has no field {unknown[0]!r} (a Storage takes "
                    f"{', '.join(cls.__dataclass_fields__)}; cparams and dparams are arguments "
                    "of their own)"
                )
            return cls(**storage)
        if isinstance(storage, Storage):
            return storage
        raise ParamError(f"storage must be a Storage or a dict, got {type(storage).__name__}")
