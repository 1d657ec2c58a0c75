"""Frames on S3 through s3fs, against moto's S3 server on 127.0.0.1."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest

import pyblosc2


@pytest.fixture
def key() -> str:
    return f"test/{uuid.uuid4().hex[:8]}"


def test_contiguous_frame_on_s3(
    s3_options: dict[str, Any], key: str, cblosc2: Any, tmp_path: Any
) -> None:
    import s3fs

    x = np.random.default_rng(2).integers(0, 1000, (300, 400), dtype=np.int16)
    local = str(tmp_path / "a.b2nd")
    cblosc2.asarray(x, chunks=(100, 400), blocks=(20, 100), urlpath=local)
    s3fs.S3FileSystem(**s3_options).put_file(local, f"{key}/a.b2nd")
    a = pyblosc2.open(f"s3://{key}/a.b2nd", storage_options=s3_options)
    np.testing.assert_array_equal(a[150:160, 7:300], x[150:160, 7:300])
    np.testing.assert_array_equal(a[...], x)
    with pytest.raises(pyblosc2.errors.ParamError):
        a[0, 0] = 1


def test_sparse_frame_written_to_s3(s3_options: dict[str, Any], key: str) -> None:
    url = f"s3://{key}/sp.b2nd"
    x = np.arange(5000, dtype=np.float32).reshape(50, 100)
    pyblosc2.asarray(
        x,
        chunks=(10, 100),
        blocks=(5, 50),
        urlpath=url,
        contiguous=False,
        storage_options=s3_options,
    )
    a = pyblosc2.open(url, storage_options=s3_options, mode="a")
    a[3:5] = 0
    x[3:5] = 0
    np.testing.assert_array_equal(pyblosc2.open(url, storage_options=s3_options)[...], x)


def test_missing_object(s3_options: dict[str, Any], key: str) -> None:
    with pytest.raises(FileNotFoundError):
        pyblosc2.open(f"s3://{key}/none.b2nd", storage_options=s3_options)


def test_versioned_bucket_reads_the_version_opened(s3_options: dict[str, Any]) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options)
    bucket = f"ver{uuid.uuid4().hex[:8]}"
    fs.mkdir(bucket)
    fs.make_bucket_versioned(bucket)
    rng = np.random.default_rng(5)
    old, new = rng.integers(0, 2**40, 300_000), rng.integers(0, 2**40, 300_000)
    fs.pipe_file(f"{bucket}/a.b2nd", pyblosc2.asarray(old, chunks=(100_000,)).to_cframe())
    a = pyblosc2.open(f"s3://{bucket}/a.b2nd", storage_options=s3_options)
    fs.pipe_file(f"{bucket}/a.b2nd", pyblosc2.asarray(new, chunks=(100_000,)).to_cframe())
    np.testing.assert_array_equal(a[...], old)  # whole, from the version opened
