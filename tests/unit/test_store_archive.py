"""Writing and unpacking .b2z archives (stores/archive.py): python-blosc2's member order,
all members stored, an atomic replace that leaves the old archive on failure, and unpacking
that refuses unsafe names before writing anything."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from pyblosc2.backends.memory import MemoryStore
from pyblosc2.errors import FormatError
from pyblosc2.stores import archive
from pyblosc2.stores.archive import extract_archive, store_files, write_archive


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    (d / "dir1").mkdir(parents=True)
    (d / "embed.b2e").write_bytes(b"E" * 5000)  # the largest, yet last
    (d / "dir1" / "big.b2nd").write_bytes(b"B" * 300)
    (d / "small.b2f").write_bytes(b"S" * 10)
    (d / "same.b2f").write_bytes(b"T" * 10)
    (d / "embed.b2e.b2lock").write_bytes(bytes(16))  # a lock sidecar: never archived
    (d / "dir1" / "x.b2nd.123.tmp").write_bytes(b"staging")  # a crashed write: never archived
    return d


def test_member_order(workdir: Path) -> None:
    names = [name for name, _ in store_files(str(workdir))]
    assert names == ["dir1/big.b2nd", "same.b2f", "small.b2f", "embed.b2e"]


def test_written_archive(workdir: Path, tmp_path: Path) -> None:
    target = tmp_path / "s.b2z"
    assert write_archive(str(target), store_files(str(workdir))) == str(target)
    with zipfile.ZipFile(target) as zf:
        infos = zf.infolist()
        assert [i.filename for i in infos][-1] == "embed.b2e"
        assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
        assert zf.read("dir1/big.b2nd") == b"B" * 300
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_permissions(workdir: Path, tmp_path: Path) -> None:
    target = tmp_path / "s.b2z"
    old = os.umask(0o022)
    try:
        write_archive(str(target), store_files(str(workdir)))
    finally:
        os.umask(old)
    # python-blosc2 leaves 0600 (mkstemp's); a new archive here gets the umask's mode
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    os.chmod(target, 0o640)
    write_archive(str(target), store_files(str(workdir)))
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640  # a rewrite keeps them


def test_failed_write_keeps_the_old_archive(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "s.b2z"
    write_archive(str(target), [("a.b2f", str(workdir / "small.b2f"))])
    before = target.read_bytes()
    calls = []

    def failing_write(self: zipfile.ZipFile, path: str, arcname: str) -> None:
        calls.append(arcname)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        original(self, path, arcname)

    original = zipfile.ZipFile.write
    monkeypatch.setattr(zipfile.ZipFile, "write", failing_write)
    with pytest.raises(OSError, match="No space"):
        write_archive(str(target), store_files(str(workdir)))
    assert target.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["s.b2z", "work"]


def _zip(names: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in names.items():
            info = zipfile.ZipInfo("x")
            info.filename = name
            info.compress_type = compression
            zf.writestr(info, data)
    return buf.getvalue()


def test_extract_stored_and_deflated(tmp_path: Path) -> None:
    members = {"a/b.b2nd": b"x" * 1000, "embed.b2e": b"e" * 10}
    for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        out = tmp_path / f"out{compression}"
        extract_archive(MemoryStore(_zip(members, compression)), str(out))
        assert (out / "a" / "b.b2nd").read_bytes() == b"x" * 1000
        assert (out / "embed.b2e").read_bytes() == b"e" * 10
        assert not [p for p in os.listdir(out / "a") if p.endswith(".tmp")]


@pytest.mark.parametrize("bad", ["../evil.b2nd", "/etc/evil.b2nd", "a/../../evil"])
def test_extract_refuses_unsafe_names_before_writing(tmp_path: Path, bad: str) -> None:
    raw = _zip({"good.b2nd": b"g", bad: b"evil"})
    out = tmp_path / "out"
    with pytest.raises(FormatError, match="member name"):
        extract_archive(MemoryStore(raw), str(out))
    assert not out.exists()  # refused before anything was written
    assert not (tmp_path / "evil.b2nd").exists()


def test_tmp_names_are_hidden_and_unique() -> None:
    assert archive.TMP_SUFFIX == ".b2z.tmp"  # what python-blosc2's own test looks for


def _zip_of(members: dict[str, tuple[bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, (data, compression) in members.items():
            zf.writestr(name, data, compress_type=compression)
    return buf.getvalue()


def test_extract_checks_sizes_and_crc(tmp_path: Path) -> None:
    """The issue-37 case: the central directory claims 4 GB for a stored member."""
    raw = bytearray(_zip_of({"a.b2nd": (b"x" * 100, zipfile.ZIP_STORED)}))
    cd = raw.index(b"PK\x01\x02")
    raw[cd + 20 : cd + 28] = (0xFFFFFFF0).to_bytes(4, "little") * 2
    out = tmp_path / "out"
    with pytest.raises(FormatError, match=r"data of 'a.b2nd' at offset \d+ is 4294967\d+"):
        extract_archive(MemoryStore(bytes(raw)), str(out))
    assert not out.exists()


def test_extract_refuses_a_wrong_crc_keeping_nothing(tmp_path: Path) -> None:
    raw = bytearray(_zip_of({"a.b2nd": (b"x" * 100, zipfile.ZIP_DEFLATED)}))
    cd = raw.index(b"PK\x01\x02")
    raw[cd + 16] ^= 1  # the CRC-32
    out = tmp_path / "out"
    with pytest.raises(FormatError, match="CRC-32"):
        extract_archive(MemoryStore(bytes(raw)), str(out))
    assert os.listdir(out) == []  # the staging file is gone, nothing renamed into place


def test_extract_refuses_other_methods_before_writing(tmp_path: Path) -> None:
    raw = _zip_of({"a.b2nd": (b"a", zipfile.ZIP_STORED), "b.b2nd": (b"b", zipfile.ZIP_BZIP2)})
    out = tmp_path / "out"
    with pytest.raises(NotImplementedError, match=r"method 12 \(bzip2\) of member 'b.b2nd'"):
        extract_archive(MemoryStore(raw), str(out))
    assert not out.exists()


def test_extract_a_path_too_long_for_the_system(tmp_path: Path) -> None:
    name = "/".join(["d" * 250] * 20) + "/x.b2nd"  # each segment fits, the path does not
    out = tmp_path / "out"
    with pytest.raises(FormatError, match="a path this system can create"):
        extract_archive(MemoryStore(_zip_of({name: (b"x", zipfile.ZIP_STORED)})), str(out))
