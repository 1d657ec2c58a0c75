"""The storage backends behind the frame layer: one protocol, each backend checked alike."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.backends import (
    ByteStore,
    DirectoryStore,
    FileStore,
    MemoryStore,
    MmapStore,
    ObjectStore,
)

WRITABLE: dict[str, Callable[[Path], ByteStore]] = {
    "memory": lambda tmp: MemoryStore(b"0123456789"),
    "file": lambda tmp: _file(tmp, b"0123456789", 0),
    "file-at-offset": lambda tmp: _file(tmp, b"xxxx0123456789", 4),
}


def _file(tmp: Path, content: bytes, offset: int) -> FileStore:
    p = tmp / "f.bin"
    p.write_bytes(content)
    return FileStore(p, offset, writable=True)


@pytest.mark.parametrize("kind", sorted(WRITABLE))
def test_writable_stores_follow_the_protocol(tmp_path: Path, kind: str) -> None:
    s = WRITABLE[kind](tmp_path)
    assert isinstance(s, ByteStore)
    assert s.writable and s.size == 10
    assert bytes(s.read(2, 3)) == b"234"
    assert bytes(s.read(8, 10)) == b"89"  # short at the end
    s.write(12, b"ab")  # past the end: the gap reads as zeros
    assert bytes(s.read(9, 10)) == b"9\x00\x00ab"
    s.truncate(4)
    assert s.size == 4 and bytes(s.read(0, 10)) == b"0123"
    assert s.bytes_read == 3 + 2 + 5 + 4
    s.close()
    s.close()  # idempotent


def test_file_at_offset_never_touches_the_bytes_before(tmp_path: Path) -> None:
    s = _file(tmp_path, b"xxxx0123456789", 4)
    s.truncate(0)
    s.write(0, b"new")
    s.close()
    assert (tmp_path / "f.bin").read_bytes() == b"xxxxnew"


@pytest.mark.parametrize(
    "make",
    [
        lambda p: MemoryStore(b"abc", readonly=True),
        lambda p: FileStore(p),
        lambda p: MmapStore(p),
    ],
    ids=["memory", "file", "mmap"],
)
def test_read_only_stores_refuse_writes(tmp_path: Path, make) -> None:
    p = tmp_path / "r.bin"
    p.write_bytes(b"abc")
    s = make(p)
    assert not s.writable
    with pytest.raises(pb.ParamError, match="reading mode"):
        s.write(0, b"z")
    with pytest.raises(pb.ParamError, match="reading mode"):
        s.truncate(1)
    assert bytes(s.read(0, 3)) == b"abc"
    s.close()


def test_read_only_memory_store_is_a_view() -> None:
    buf = bytearray(b"abcdef")
    s = MemoryStore(buf, readonly=True)
    buf[0] = ord("z")
    assert bytes(s.read(0, 1)) == b"z"


@pytest.mark.parametrize("offset", [-5, 1.5, True])
def test_file_store_refuses_bad_offsets(tmp_path: Path, offset) -> None:
    p = tmp_path / "f.bin"
    p.write_bytes(b"abc")
    with pytest.raises(pb.ParamError, match="offset must be a non-negative int"):
        FileStore(p, offset)


def test_file_store_offset_past_the_end_is_a_format_error(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    p.write_bytes(b"abc")
    with pytest.raises(pb.FormatError, match="offset"):
        FileStore(p, 10)


def test_directory_store_objects(tmp_path: Path) -> None:
    d = DirectoryStore(tmp_path / "d", create=True)
    assert isinstance(d, ObjectStore)
    d.write_object("a", b"one")
    d.write_object("a", b"two!")  # replaced atomically
    assert d.read_object("a") == b"two!" and d.object_size("a") == 4
    assert sorted(os.listdir(tmp_path / "d")) == ["a"]  # no temporary left behind
    with pytest.raises(FileExistsError):
        DirectoryStore(tmp_path / "d", create=True)


def test_directory_store_remove_and_missing(tmp_path: Path) -> None:
    d = DirectoryStore(tmp_path, create=False)
    d.write_object("x", np.arange(3, dtype=np.uint8).data)
    assert bytes(d.open_object("x", writable=False).read(0, 3)) == b"\x00\x01\x02"
    d.remove_object("x")
    d.remove_object("x")  # a missing object is a no-op
    assert not d.exists("x")
    with pytest.raises(FileNotFoundError):
        d.read_object("x")
