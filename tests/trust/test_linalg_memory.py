"""A product of arrays on disk holds a bounded part of them: ``matmul`` of files of many chunks,
with budgets of 512 KiB set in a child process, peaks (numpy's and Python's allocations, as
``tracemalloc`` traces them) at a fraction of the operands' size, and no higher when the first
operand is 8 times larger; its result is numpy's. No time is measured.

The children use the numpy kernels (``PYBLOSC2_KERNELS=numpy``): loading numba in the
background would add its import (tens of MiB of Python objects) to the trace.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

import pyblosc2 as pb
from tests.bounded import run_child

CHILD = r"""
import json, sys, tracemalloc
import pyblosc2 as pb
from pyblosc2.linalg import output, plan

plan.STEP_BYTES = plan.PANEL_BYTES = plan.WORK_BYTES = output.WRITE_BATCH_BYTES = 1 << 19
d = sys.argv[1]
a, b = pb.open(d + "/a.b2nd"), pb.open(d + "/b.b2nd")
tracemalloc.start()
pb.matmul(a, b, urlpath=d + "/c.b2nd", chunks=(256, 256), blocks=(32, 256))
print(json.dumps({"peak": tracemalloc.get_traced_memory()[1]}))
"""


def _peak(d: Path, rows: int) -> tuple[int, int]:
    """The child's traced peak for ``a @ b``, a of ``rows`` x 256 and b of 256 x 256 float64
    (chunks of 512 and 128 KiB), and the operands' bytes."""
    d.mkdir()
    rng = np.random.default_rng(rows)
    x = rng.integers(-8, 8, (rows, 256)).astype(np.float64)
    y = rng.integers(-8, 8, (256, 256)).astype(np.float64)
    pb.asarray(x, urlpath=str(d / "a.b2nd"), chunks=(256, 256), blocks=(32, 256))
    pb.asarray(y, urlpath=str(d / "b.b2nd"), chunks=(64, 256), blocks=(32, 256))
    env = {**os.environ, "PYBLOSC2_KERNELS": "numpy"}
    out = run_child(
        [sys.executable, "-c", CHILD, str(d)],
        f"a @ b of files, {rows} rows, under tracemalloc",
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    np.testing.assert_array_equal(pb.open(str(d / "c.b2nd"))[...], x @ y)  # exact: integers
    return json.loads(out.stdout)["peak"], x.nbytes + y.nbytes


def test_matmul_of_files_peaks_below_the_operands_whatever_their_size(tmp_path: Path) -> None:
    small, _ = _peak(tmp_path / "small", 1024)
    big, operands = _peak(tmp_path / "big", 8192)  # 16.5 MiB of operands, 64 + 1 chunks
    assert big < operands // 3, f"peak {big >> 10} KiB for {operands >> 10} KiB of operands"
    assert big < small + (1 << 20), f"peak {big >> 10} KiB, {small >> 10} KiB at 1/8 the rows"
