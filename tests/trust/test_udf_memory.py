"""A UDF computed over files larger than its memory bound stays near the bound: a child
process computes ``lazyudf`` (a plain function and a DSL kernel) from two on-disk arrays of
32 MB each (64 MB of input) into a file with ``max_memory=`` 24 MB, and its peak RSS
(``VmHWM``) grows by less than the bound plus :data:`SLACK` (what the plan does not count:
codec contexts, thread stacks, the allocator's arenas: measured 4-8 MB); the same UDF into
numpy (32 MB) is refused before anything is allocated."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import run_child

BOUND = 28 << 20  # the plan of one thread, committing chunk by chunk: 24 MiB + 32 B
SLACK = 12 << 20
SHAPE = (2048, 2048)  # 32 MB of float64 per input

CHILD = r"""
import json, sys
import numpy as np
import pyblosc2 as pb

def hwm():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmHWM")) * 1024

d, bound, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
a = pb.open(f"{d}/a.b2nd", mode="r")
b = pb.open(f"{d}/b.b2nd", mode="r")

def f(inputs, output, offset):
    x, y = inputs
    output[:] = x * 2 + y

@pb.dsl_kernel
def k(x, y):
    if x > y:
        return x * 2 + y
    return y

func = f if kind == "udf" else k
a[:8], b[:8]  # the read path warmed up (thread pools, codec contexts) before the baseline
base = hwm()
u = pb.lazyudf(func, (a, b), np.float64)
res = u.compute(urlpath=f"{d}/out_{kind}.b2nd", mode="w", max_memory=bound)
grew = hwm() - base
try:
    u.compute(max_memory=bound)
    refused = False
except pb.MemoryBudgetError:
    refused = True
print(json.dumps({"grew": grew, "refused": refused, "after": hwm() - base}))
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("udf_memory")
    for name, scale in (("a", 1.0), ("b", 0.5)):
        arr = pb.empty(
            SHAPE,
            np.float64,
            chunks=(64, 2048),
            blocks=(16, 2048),
            urlpath=str(d / f"{name}.b2nd"),
            mode="w",
        )
        rows = 512
        for i in range(0, SHAPE[0], rows):
            idx = np.arange(i * SHAPE[1], (i + rows) * SHAPE[1], dtype=np.float64)
            arr[i : i + rows] = (np.sin(idx * 1e-5) * scale).reshape(rows, SHAPE[1])
    return d


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
@pytest.mark.parametrize("kind", ["udf", "dsl"])
def test_a_udf_over_files_stays_under_its_bound(inputs: Path, kind: str) -> None:
    env = dict(os.environ, PYBLOSC2_KERNELS="numpy", ME_DSL_JIT="0")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(pb.__file__).parents[1]), env.get("PYTHONPATH", "")]
    )
    script = inputs / "child.py"  # a file: the DSL kernel needs its source
    script.write_text(CHILD)
    p = run_child(
        [sys.executable, str(script), str(inputs), str(BOUND), kind],
        f"the {kind} over files under a {BOUND >> 20} MiB memory bound",
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["refused"]  # a 32 MB numpy result does not fit 24 MB: refused up front
    assert got["after"] == got["grew"]  # ... before it allocated anything
    assert got["grew"] < BOUND + SLACK, got
    a = pb.open(str(inputs / "a.b2nd"))[1000:1003]
    b = pb.open(str(inputs / "b.b2nd"))[1000:1003]
    want = a * 2 + b if kind == "udf" else np.where(a > b, a * 2 + b, b)
    np.testing.assert_array_equal(pb.open(str(inputs / f"out_{kind}.b2nd"))[1000:1003], want)
