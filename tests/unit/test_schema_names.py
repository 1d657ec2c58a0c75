"""python-blosc2's schema names beside the scalar specs: ``blosc2.ndarray(item_shape, dtype)``
(N-d cells, stored: tests/unit/test_ctable_ndcells.py; ``pyblosc2.ndarray`` is also the
array's package) and ``blosc2.schema.ObjectSpec`` / ``blosc2.object()`` (msgpack objects,
stored: tests/unit/test_ctable_objects.py). Their metadata is python-blosc2's."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.schema import NDArraySpec, ObjectSpec


def test_the_ndarray_package_is_also_the_column_spec() -> None:
    spec = pb.ndarray((2, 3), pb.float32())
    assert isinstance(spec, NDArraySpec) and spec.item_shape == (2, 3)
    assert spec.to_metadata_dict() == {"kind": "ndarray", "item_shape": [2, 3], "dtype_str": "<f4"}
    assert pb.ndarray(4).item_shape == (4,) and pb.ndarray((3,)).dtype == np.float64
    assert pb.ndarray.NDArray is pb.NDArray  # the package is still the package
    from pyblosc2.ndarray.ndarray import NDArray

    assert NDArray is pb.NDArray


def test_the_same_metadata_as_python_blosc2() -> None:
    cblosc2 = pytest.importorskip("blosc2")
    theirs = cblosc2.ndarray((2, 3), dtype=cblosc2.float32()).to_metadata_dict()
    ours = pb.ndarray((2, 3), dtype=pb.float32()).to_metadata_dict()
    assert ours == theirs
    for kwargs in ({"nullable": True}, {"null_value": -1}, {"null_storage": "mask"}):
        for dtype in (np.int16, np.bool_, np.float64):
            theirs = cblosc2.ndarray((4, 1), dtype, **kwargs).to_metadata_dict()
            assert pb.ndarray((4, 1), dtype, **kwargs).to_metadata_dict() == theirs
    for kwargs in ({}, {"nullable": True, "batch_rows": 7}, {"items_per_block": 3}):
        assert pb.object(**kwargs).to_metadata_dict() == cblosc2.object(**kwargs).to_metadata_dict()


def test_object_spec() -> None:
    spec = pb.object(nullable=True)
    assert isinstance(spec, ObjectSpec) and spec.nullable and spec.dtype is None
    assert spec.to_metadata_dict() == {
        "kind": "object",
        "nullable": True,
        "serializer": "msgpack",
        "batch_rows": 2048,
    }
