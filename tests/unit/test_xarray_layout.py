"""xarray-blosc2 stores read as stores from someone else (xarray/layout.py, no xarray needed):
a zip through the stores' checked reader (deflated members too), a directory's arrays only
when they are regular files inside it, ``dataset.json`` and the JSON attributes within bounds
(a too-deep attribute document is ignored, as xarray-blosc2 ignores what it cannot decode)."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError
from pyblosc2.xarray import layout


def _store(root: Path, attrs: str = '{"units": "K"}', manifest: str | None = None) -> Path:
    root.mkdir()
    a = pb.asarray(np.arange(6.0), urlpath=str(root / "t.b2nd"), mode="w")
    a.vlmeta["dims"] = ["x"]
    a.vlmeta["var"] = "t"
    a.vlmeta["attrs"] = attrs
    doc = manifest if manifest is not None else json.dumps({"data_vars": ["t"], "attrs": {"a": 1}})
    (root / layout.MANIFEST).write_text(doc)
    return root


def _zip(root: Path, target: Path, compression: int) -> Path:
    with zipfile.ZipFile(target, "w", compression) as zf:
        for p in sorted(root.iterdir()):
            zf.write(p, p.name)
    return target


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_zip_stores_read_through_the_checked_reader(tmp_path: Path, compression: int) -> None:
    z = _zip(_store(tmp_path / "d.b2"), tmp_path / "d.b2z", compression)
    got = layout.read_store(z)
    assert got.attrs == {"a": 1}
    [var] = got.variables
    assert var.attrs == {"units": "K"}
    assert list(var.array[:]) == list(np.arange(6.0))


def test_a_zip_claiming_4gb_sizes_is_refused(tmp_path: Path) -> None:
    z = _zip(_store(tmp_path / "d.b2"), tmp_path / "d.b2z", zipfile.ZIP_STORED)
    raw = bytearray(z.read_bytes())
    pos = raw.index(b"PK\x01\x02")
    struct.pack_into("<II", raw, pos + 20, 0xFFFFFFF0, 0xFFFFFFF0)
    z.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match=r"zip archive: data of .* is 4294967\d+"):
        layout.read_store(z)
    assert layout.is_store(z) is False


@pytest.mark.parametrize("form", ["dir", "zip"])
def test_a_deep_manifest_is_refused(tmp_path: Path, form: str) -> None:
    root = _store(tmp_path / "d.b2", manifest="[" * 20_000 + "]" * 20_000)
    path = root if form == "dir" else _zip(root, tmp_path / "d.b2z", zipfile.ZIP_DEFLATED)
    with pytest.raises(
        FormatError, match="manifest JSON nesting depth is 20000, expected at most 64"
    ):
        layout.read_store(path)


def test_a_deep_attribute_document_is_ignored(tmp_path: Path) -> None:
    root = _store(tmp_path / "d.b2", attrs="[" * 20_000 + "]" * 20_000)
    assert layout.read_store(root).variables[0].attrs == {}


def test_a_manifest_symlinked_out_is_refused(tmp_path: Path) -> None:
    root = _store(tmp_path / "d.b2")
    (tmp_path / "elsewhere.json").write_text("{}")
    (root / layout.MANIFEST).unlink()
    (root / layout.MANIFEST).symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(FormatError, match=r"file 'dataset.json' is a symlink to .*elsewhere.json"):
        layout.read_store(root)


def test_an_array_symlinked_out_is_left_out(tmp_path: Path) -> None:
    root = _store(tmp_path / "d.b2")
    other = pb.asarray(np.arange(3.0), urlpath=str(tmp_path / "secret.b2nd"), mode="w")
    other.vlmeta["dims"] = ["y"]
    (root / "leak.b2nd").symlink_to(tmp_path / "secret.b2nd")
    with pytest.warns(UserWarning, match=r"Ignoring 'leak.b2nd' .*: a symlink to .*secret"):
        got = layout.read_store(root)
    assert [v.name for v in got.variables] == ["t"]
