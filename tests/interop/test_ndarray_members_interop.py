"""NDArray members against python-blosc2 on the same files, both ways: cbytes/cratio,
arrays grown from empty (resize, append), slices and reshapes written by one library and
read by the other, and advanced indexing of their files."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb

X = np.arange(30 * 12, dtype=np.float64).reshape(30, 12)


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("writer", ["ours", "theirs"])
def test_cbytes_agree_on_the_same_file(cblosc2, tmp_path, writer, contiguous) -> None:
    path = str(tmp_path / "a.b2nd")
    lib = pb if writer == "ours" else cblosc2
    a = lib.asarray(X, chunks=(10, 12), blocks=(5, 6), urlpath=path, contiguous=contiguous)
    a[0:10] = 0  # one chunk becomes a special chunk
    ours, theirs = pb.open(path), cblosc2.open(path)
    assert ours.cbytes == theirs.cbytes == ours.schunk.cbytes == theirs.schunk.cbytes
    assert ours.cratio == pytest.approx(theirs.cratio)


@pytest.mark.parametrize("writer", ["ours", "theirs"])
def test_grown_from_empty_reads_in_both(cblosc2, tmp_path, writer) -> None:
    path = str(tmp_path / "g.b2nd")
    lib = pb if writer == "ours" else cblosc2
    lib.zeros((0, 4), dtype=np.int32, chunks=(3, 4), blocks=(1, 4), urlpath=path)
    other = pb if writer == "theirs" else cblosc2
    a = other.open(path, mode="a")
    a.resize((5, 4))
    a[...] = np.arange(20, dtype=np.int32).reshape(5, 4)
    for reader in (pb, cblosc2):
        np.testing.assert_array_equal(reader.open(path)[...], np.arange(20).reshape(5, 4))


def test_append_read_by_c(cblosc2, tmp_path) -> None:
    path = str(tmp_path / "log.b2nd")
    a = pb.zeros(0, dtype=np.int64, chunks=(4,), blocks=(2,), urlpath=path)
    a.append(np.arange(6))
    a.append(6)
    np.testing.assert_array_equal(cblosc2.open(path)[:], np.arange(7))
    c = cblosc2.open(path, mode="a")
    c.append([7, 8])
    np.testing.assert_array_equal(pb.open(path)[...], np.arange(9))


@pytest.mark.parametrize(
    "key", [(slice(10, 30), slice(0, 12)), (slice(3, 17), slice(2, 11))], ids=["aligned", "other"]
)
def test_slice_and_save_read_by_c(cblosc2, tmp_path, key) -> None:
    a = pb.asarray(X, chunks=(10, 12), blocks=(5, 6))
    path = str(tmp_path / "s.b2nd")
    a.slice(key).save(path, mode="w")
    np.testing.assert_array_equal(cblosc2.open(path)[:], X[key])


def test_fancy_indexing_their_file(cblosc2, tmp_path) -> None:
    path = str(tmp_path / "t.b2nd")
    cblosc2.asarray(X, chunks=(7, 5), blocks=(3, 2), urlpath=path)
    a = pb.open(path, mode="a")
    rows, mask = [29, 0, 14], X[:, 0] % 3 == 0
    np.testing.assert_array_equal(a[rows, ::-5], X[rows, ::-5])
    np.testing.assert_array_equal(a[mask, None, 3], X[mask, None, 3])
    a[rows, [1, 2, 3]] = -1
    want = X.copy()
    want[rows, [1, 2, 3]] = -1
    np.testing.assert_array_equal(cblosc2.open(path)[:], want)
