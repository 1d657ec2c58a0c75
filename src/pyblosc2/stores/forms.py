"""The two forms of a store and the working copy behind them: packing into a ``.b2z``
archive (``to_b2z``), unpacking or copying into a ``.b2d`` directory (``to_b2d``), and the
temporary directory a ``.b2z`` opened for writing works in (``close``, ``discard``; a
changed store is packed back when it is collected, as python-blosc2 does). Mixed into
:class:`~pyblosc2.stores.DictStore`.

A ``.b2d`` is written into a new directory beside the target and renamed into place; a
``.b2z`` by :func:`.archive.write_archive` (a new file renamed over the old one).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol

from ..errors import ParamError
from .archive import extract_archive, store_files, write_archive
from .keys import EMBED_NAME

__all__ = ["StoreForms", "clear_store_directory", "remove_path"]


class _Host(Protocol):
    mode: str
    is_zip_store: bool
    b2z_path: str
    localpath: str
    working_dir: str
    _closed: bool
    _modified: bool
    _remote_archive: Any
    _temp_dir_obj: tempfile.TemporaryDirectory[str] | None

    def _reading(self) -> AbstractContextManager[Any]: ...
    def _archive_store(self) -> Any: ...
    def to_b2z(self, overwrite: Any = False, filename: Any = None) -> str: ...
    def close(self) -> None: ...
    def discard(self) -> None: ...
    def _cleanup(self) -> None: ...


class StoreForms:
    """Mixed into :class:`~pyblosc2.stores.DictStore` (its attributes: :class:`_Host`)."""

    _temp_dir_obj: tempfile.TemporaryDirectory[str] | None

    def to_b2z(
        self: _Host, overwrite: bool | str | os.PathLike[str] = False, filename: Any = None
    ) -> str:
        """Pack the store into the ``.b2z`` file ``filename`` (default: the store's own),
        atomically (a reader sees the old archive or the new one); returns its absolute
        path. ``filename`` may be passed first."""
        if isinstance(overwrite, str | os.PathLike) and filename is None:
            filename, overwrite = overwrite, False
        if self.mode == "r" and self.is_zip_store:
            raise ParamError("Cannot call to_b2z() on a .b2z DictStore opened in read mode.")
        target = os.fspath(self.b2z_path if filename is None else filename)
        if not target.endswith(".b2z"):
            raise ParamError("b2z_path must have a .b2z extension")
        if os.path.exists(target) and not overwrite:
            raise FileExistsError(f"'{target}' already exists. Use overwrite=True to overwrite.")
        with self._reading():
            return write_archive(target, store_files(self.working_dir))

    def to_b2d(self: _Host, dirname: Any = None, *, overwrite: bool = False) -> str:
        """Unpack (or copy) the store into the directory ``dirname`` (default: beside the
        archive, ``.b2d``); returns its absolute path."""
        if dirname is None:
            dirname = self.localpath if not self.is_zip_store else self.b2z_path[:-4] + ".b2d"
        target = os.path.abspath(os.fspath(dirname))
        if not self.is_zip_store and target == os.path.abspath(self.working_dir):
            return target
        if os.path.exists(target) and not overwrite:
            raise FileExistsError(f"'{target}' already exists. Use overwrite=True to overwrite.")
        parent = os.path.dirname(target)
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix="." + os.path.basename(target) + ".", dir=parent)
        try:
            if self.is_zip_store and self.mode == "r":
                archive = self._archive_store()
                try:
                    extract_archive(archive, staging, f"zip archive {self.b2z_path}")
                finally:
                    if archive is not self._remote_archive:
                        archive.close()
            else:
                with self._reading():
                    for arcname, path in store_files(self.working_dir):
                        dest = os.path.join(staging, *arcname.split("/"))
                        os.makedirs(os.path.dirname(dest), exist_ok=True)
                        shutil.copyfile(path, dest)
            if os.path.exists(target):
                remove_path(target)
            os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return target

    def close(self: _Host) -> None:
        """Pack a ``.b2z`` opened for writing back into its archive, and release the
        temporary directory."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.is_zip_store and self.mode in ("w", "a"):
                self.to_b2z(overwrite=True)
        finally:
            self._cleanup()

    def discard(self: _Host) -> None:
        """Release the temporary directory without packing anything back."""
        self._closed = True
        self._cleanup()

    def _cleanup(self: _Host) -> None:
        if self._temp_dir_obj is not None:
            self._temp_dir_obj.cleanup()
            self._temp_dir_obj = None

    def __del__(self: _Host) -> None:
        # Changes made through this handle are packed back, as python-blosc2 does; a handle
        # that changed nothing never rewrites the archive.
        with contextlib.suppress(Exception):
            if not self._closed and not self._modified:
                self.discard()
            else:
                self.close()

    def __enter__(self: Any) -> Any:
        return self

    def __exit__(self: _Host, *exc: object) -> Literal[False]:
        self.close()
        return False


def remove_path(path: str) -> None:
    """Remove a file or a directory; a missing one is a no-op, a symlink is removed (never
    what it points to)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def clear_store_directory(path: str) -> None:
    """Empty the directory of a store (or of its unpacked copy) before it is written anew;
    a non-empty directory that holds no store is refused rather than emptied."""
    names = os.listdir(path)
    if names and EMBED_NAME not in names:
        raise ParamError(
            f"{path} is a non-empty directory that holds no store (no {EMBED_NAME}): not emptied"
        )
    for name in names:
        remove_path(os.path.join(path, name))
