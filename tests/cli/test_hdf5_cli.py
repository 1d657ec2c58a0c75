"""``pyblosc2 convert file.h5:/dataset out.b2nd``: HDF5 datasets (written by hdf5plugin, read
without it) converted to b2nd with their chunk shape; errors name the input."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2
from tests.cli.conftest import run_cli
from tests.conftest import _reference

h5py = pytest.importorskip("h5py")


@pytest.mark.parametrize("filt", ["Blosc", "Blosc2"])
def test_convert_hdf5_dataset_to_b2nd(tmp_path, filt) -> None:
    hdf5plugin = _reference("hdf5plugin")
    a = np.arange(60 * 70, dtype="i4").reshape(60, 70)
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f.create_dataset("g/v", data=a, chunks=(25, 30), **getattr(hdf5plugin, filt)())
    done = run_cli("convert", "d.h5:/g/v", "out.b2nd", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = pyblosc2.open(str(tmp_path / "out.b2nd"))
    assert out.chunks == (25, 30)
    np.testing.assert_array_equal(out[...], a)


def test_convert_missing_dataset_names_the_input(tmp_path) -> None:
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f["x"] = np.arange(3)
    done = run_cli("convert", "d.h5:/nope", "out.b2nd", cwd=tmp_path)
    assert done.returncode == 2 and "d.h5:/nope" in done.stderr
    assert not (tmp_path / "out.b2nd").exists()
