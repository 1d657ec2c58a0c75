"""The memory bound of the compute engine (compute/plan.py): the bound itself, plans that
shrink to fit it, refusals before anything is allocated, and the out-of-core proof — a child
process computing on an on-disk array larger than its bound stays within it (VmHWM)."""

from __future__ import annotations

import os
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.compute import plan
from pyblosc2.errors import MemoryBudgetError, ParamError
from pyblosc2.kernels.select import active, wait_for_kernels
from tests.bounded import run_child

MiB = 1 << 20


def test_the_bound_is_max_memory_then_the_environment_then_the_machine(monkeypatch) -> None:
    assert plan.memory_bound(5 * MiB) == 5 * MiB
    monkeypatch.setenv("PYBLOSC2_MAX_MEMORY", str(7 * MiB))
    assert plan.memory_bound() == 7 * MiB
    assert plan.memory_bound(3 * MiB) == 3 * MiB  # the argument wins
    monkeypatch.delenv("PYBLOSC2_MAX_MEMORY")
    assert plan.memory_bound() == plan.available_memory() or plan.memory_bound() > 0


@pytest.mark.parametrize("bad", [0, -1, "1000", True, 1.5e-3])
def test_a_bad_bound_is_a_param_error(bad) -> None:
    with pytest.raises(ParamError, match="max_memory"):
        plan.memory_bound(bad)


def test_a_bad_environment_bound_is_a_param_error(monkeypatch) -> None:
    monkeypatch.setenv("PYBLOSC2_MAX_MEMORY", "lots")
    with pytest.raises(ParamError, match="PYBLOSC2_MAX_MEMORY"):
        plan.memory_bound()


def test_available_memory_falls_back_when_the_machine_does_not_say(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(plan, "MEMINFO", str(tmp_path / "missing"))
    pages = plan.available_memory()
    assert pages > 0  # os.sysconf's available pages
    monkeypatch.setattr(os, "sysconf", lambda name: (_ for _ in ()).throw(OSError(name)))
    assert plan.available_memory() == plan.FALLBACK_BOUND


def test_a_plan_takes_fewer_threads_to_fit_then_refuses() -> None:
    per = MiB + plan.THREAD_OVERHEAD  # what one running piece of 1 MiB projects
    assert plan.Plan.make("x", MiB, 0, 8, 3 * per).nthreads == 3
    with pytest.raises(MemoryBudgetError) as info:
        plan.Plan.make("x", MiB, 4 * MiB, 8, 4 * MiB + per - 1)
    assert info.value.needed == 4 * MiB + per and info.value.bound == 4 * MiB + per - 1
    assert isinstance(info.value, MemoryError) and isinstance(info.value, ValueError)


def _huge() -> np.ndarray:
    """An operand claiming 8 TB (a zero-stride numpy view: nothing behind it)."""
    return np.broadcast_to(np.float64(1.0), (10**6, 10**6))


@pytest.mark.parametrize(
    "action",
    [
        lambda e: e[:],
        lambda e: np.asarray(e),
        lambda e: e.compute(),  # an in-memory NDArray counts at its uncompressed size
        lambda e: e.sum(axis=1, max_memory=4 * MiB),  # an 8 MB result over a 4 MB bound
        lambda e: e.cumulative_sum(axis=0),
        lambda e: e[:, :50_000],  # 400 GB of a slice
    ],
    ids=["getitem", "asarray", "compute", "sum-axis", "cumsum", "slice"],
)
def test_what_cannot_fit_is_refused_before_it_allocates(action) -> None:
    expr = blosc2.lazyexpr("x * 2 + 1", {"x": _huge()})
    tracemalloc.start()
    try:
        with pytest.raises(MemoryBudgetError, match="over the memory bound"):
            action(expr)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MiB


def test_what_fits_is_computed_in_pieces_within_the_bound() -> None:
    x = np.linspace(0, 1, 2 * MiB)  # 16 MB
    a = blosc2.asarray(x, chunks=(MiB // 4,), blocks=(MiB // 16,))
    expr = a * 2 + 1
    tracemalloc.start()
    try:
        total = expr.sum(max_memory=24 * MiB)
        small = expr[10:20]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == pytest.approx(np.sum(x * 2 + 1))
    np.testing.assert_array_equal(small, x[10:20] * 2 + 1)
    assert peak < 24 * MiB
    with pytest.raises(MemoryBudgetError):
        expr.sum(
            max_memory=plan.THREAD_OVERHEAD
        )  # not even one piece fits  # not even one piece of decoded blocks fits


def test_a_reduction_of_a_huge_array_of_special_chunks_holds_no_plan(tmp_path) -> None:
    # issue 33 item 8: a file claiming 1.6 TB of zeros; the reduction reads the offsets index
    # chunk by chunk (no list of chunks, no decoding) and answers each special chunk at once
    path = str(tmp_path / "huge.b2nd")
    a = blosc2.zeros((2 * 10**11,), np.float64, chunks=(2**27,), blocks=(2**20,), urlpath=path)
    assert a.schunk.nchunks == 1491
    a = blosc2.open(path)
    w = blosc2.zeros((100,), chunks=(10,))
    w.sum(), w.max(), (w + 1).sum()  # warm up (lazy imports: not the engine's memory)
    active()
    wait_for_kernels(60)  # the kernel loader's imports neither
    tracemalloc.start()
    try:
        assert a.sum() == 0.0 and a.max() == 0.0
        assert (a + 1).sum() == 2 * 10**11
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MiB


CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import pyblosc2 as blosc2
    from pyblosc2.kernels.select import active, wait_for_kernels

    def hwm():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

    path, out, bound = sys.argv[1], sys.argv[2], int(sys.argv[3])
    a = blosc2.open(path)
    (a[:8] * 2).sum()  # warm up: imports, thread pools, codec contexts
    active()
    wait_for_kernels(60)  # (numba's import, when installed, is not the computation's)
    base = hwm()
    total = (a * 2 + 1).sum(max_memory=bound)
    (a * 2 + 1).compute(urlpath=out, mode="w", max_memory=bound)
    try:
        (a * 2 + 1).compute(max_memory=bound)  # in memory: the result does not fit
        refused = False
    except blosc2.MemoryBudgetError:
        refused = True
    print(base, hwm(), a.nbytes, float(total), refused)
    """
)


def test_out_of_core_peak_memory_stays_within_the_bound(tmp_path: Path) -> None:
    src, out = str(tmp_path / "a.b2nd"), str(tmp_path / "out.b2nd")
    n = 16 * MiB  # 128 MB of float64, over a 32 MB bound
    shape, chunks, blocks = (n // 4096, 4096), (32, 4096), (8, 4096)  # 1 MiB chunks
    blosc2.linspace(0, 1, n, shape=shape, chunks=chunks, blocks=blocks, urlpath=src, mode="w")
    bound = 32 * MiB
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    done = run_child(
        [sys.executable, str(script), src, out, str(bound)],
        f"compute a 128 MB expression out of core within {bound >> 20} MiB",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    base, peak, nbytes, total, refused = done.stdout.split()
    assert int(nbytes) >= 4 * bound
    assert int(peak) - int(base) <= bound  # the computations stayed within the bound
    assert float(total) == pytest.approx(n + 2 * np.sum(np.linspace(0, 1, n)))
    assert refused == "True"
    back = blosc2.open(out)
    np.testing.assert_allclose(back[-2:, -3:], blosc2.open(src)[-2:, -3:] * 2 + 1)
