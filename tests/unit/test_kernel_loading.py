"""kernels/select: numba's set loaded in the background while numpy's serves the first calls.

Every case runs in a fresh child process (the choice is made once per process) that reads real
frames and checks their bytes; assertions are on bytes and states, never on times. A slow load
is made deterministic by gating the real loader on an event the child releases.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import CHILD_S, run_child

# kernel_sets() names every set this version knows, installed or not: ask for numba itself
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="numba is not installed"
)

N = 200_000
#: the fork's wait for the background load in the children (the library's is 10 s): a bound
#: for a hung loader only. A fork that should inherit a finished load must not depend on how
#: fast the load is: at load 18 with an empty numba cache it took longer than 10 s, and the
#: child served numpy ("interrupted by a fork"). Cases that fork past the wait set 0.
FORK_WAIT_S = 200.0
#: the child's preamble: ``check()`` reads the frames (a byte-shuffled LZ4 array, a
#: bit-shuffled BloscLZ one and a delta+bytedelta one) and compares them with what was written
PRELUDE = """
import os, sys, threading, warnings
import numpy as np
import pyblosc2 as pb
from pyblosc2.kernels import select
select.FORK_WAIT = {fork_wait}
WANT = np.arange({n}, dtype=np.int64) * 3
PATHS = sys.argv[1:4]
def check():
    for path in PATHS:
        got = pb.open(path, mode="r")[:]
        assert got.tobytes() == WANT.tobytes(), (path, select.active().name)
def gate():
    ev = threading.Event()
    real = select._LOADERS["numba"]
    def gated():  # only the background loader waits at the gate
        if threading.current_thread().name == "pyblosc2-kernels":
            ev.wait()
        return real()
    select._LOADERS["numba"] = gated
    return ev
def loaders():
    return sum(t.name == "pyblosc2-kernels" for t in threading.enumerate())
"""


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("frames")
    a = np.arange(N, dtype=np.int64) * 3
    specs = [
        ("lz4-shuffle", {"codec": pb.Codec.LZ4, "filters": [pb.Filter.SHUFFLE]}),
        ("blosclz-bitshuffle", {"codec": pb.Codec.BLOSCLZ, "filters": [pb.Filter.BITSHUFFLE]}),
        ("zstd-delta", {"codec": pb.Codec.ZSTD, "filters": [pb.Filter.DELTA, pb.Filter.BYTEDELTA]}),
    ]
    paths = []
    for name, cparams in specs:
        path = str(d / f"{name}.b2nd")
        pb.asarray(a, chunks=(50_000,), blocks=(10_000,), cparams=cparams, urlpath=path, mode="w")
        paths.append(path)
    return paths


def _run(code: str, frames: list[str], env_set: str | None = None, timeout: float = CHILD_S):
    env = {k: v for k, v in os.environ.items() if k != "PYBLOSC2_KERNELS"}
    if env_set is not None:
        env["PYBLOSC2_KERNELS"] = env_set
    script = PRELUDE.format(n=N, fork_wait=FORK_WAIT_S) + textwrap.dedent(code)
    return run_child(
        [sys.executable, "-c", script, *frames],
        "load the kernels and read the frames",
        timeout,
        capture_output=True,
        text=True,
        env=env,
    )


def _lines(out: subprocess.CompletedProcess[str]) -> list[str]:
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_numpy_serves_while_numba_loads_then_numba(frames: list[str]) -> None:
    out = _run(
        """
        ev = gate()
        print(select.active().name, select.kernels_status())
        check()
        print(pb.clib_info(pb.Codec.BLOSCLZ)[1].decode().split(" ", 2)[2])
        print(loaders(), "numba" in sys.modules)
        ev.set()
        print(select.wait_for_kernels().name, select.kernels_status())
        check()
        print(pb.clib_info(pb.Codec.BLOSCLZ)[1].decode().split(" ", 2)[2])
        """,
        frames,
    )
    assert _lines(out) == [
        "numpy numpy (numba loading)",
        "(numpy (numba loading) kernels)",
        "1 False",  # the loader thread waits at the gate: numba not imported yet
        "numba numba",
        "(numba kernels)",
    ]
    assert out.stderr == ""


def test_a_failed_background_load_keeps_numpy_with_one_visible_warning(frames) -> None:
    out = _run(
        """
        def broken():
            raise ImportError("no such JIT here")
        select._LOADERS["numba"] = broken
        for _ in range(3):
            select.active(); check()
        print(select.wait_for_kernels().name)
        check()
        print(select.active().name, "|", select.kernels_status())
        pb.print_versions()
        """,
        frames,
    )
    lines = _lines(out)
    assert lines[:2] == ["numpy", "numpy | numpy (numba failed: ImportError: no such JIT here)"]
    assert "Kernels: numpy (numba failed: ImportError: no such JIT here)" in out.stdout
    assert out.stderr.count("RuntimeWarning") == 1
    assert "'numba' kernels are not usable (ImportError: no such JIT here)" in out.stderr


def test_a_set_asked_for_during_the_load_is_kept(frames: list[str]) -> None:
    out = _run(
        """
        ev = gate()
        print(select.active().name)
        with select.kernels_in_use("numpy") as ks:
            ev.set(); select.wait_for_kernels()
            print(ks.name, select.active().name)  # asked for: the load does not replace it
            check()
        print(select.active().name)  # restored: the choice that was waiting for numba
        print(select.use_kernels("numpy").name, select.active().name, select.kernels_status())
        check()
        """,
        frames,
    )
    assert _lines(out) == ["numpy", "numpy numpy", "numba", "numpy numpy numpy"]


def test_use_kernels_numba_during_the_load_is_synchronous(frames: list[str]) -> None:
    out = _run(
        """
        ev = gate()
        print(select.active().name)
        print(select.use_kernels("numba").name)  # the real loader, not the gated one
        check()
        ev.set(); select.wait_for_kernels()
        print(select.active().name)
        """,
        frames,
    )
    assert _lines(out) == ["numpy", "numba", "numba"]


@pytest.mark.parametrize(
    ("env", "first"), [("numba", "numba"), (" NumBa ", "numba"), ("numpy", "numpy")]
)
def test_the_environment_loads_synchronously_without_a_thread(frames, env, first) -> None:
    out = _run(
        """
        print(select.active().name, select.kernels_status(), select._loader is None)
        check()
        print(loaders(), "numba" in sys.modules)
        """,
        frames,
        env_set=env,
    )
    assert _lines(out) == [f"{first} {first} True", f"0 {first == 'numba'}"]
    assert out.stderr == ""


def test_readers_in_threads_see_the_same_bytes_across_the_swap(frames: list[str]) -> None:
    out = _run(
        """
        ev = gate()
        seen, errors, stop = set(), [], threading.Event()
        def reader():
            try:
                while not stop.is_set():
                    seen.add(select.active().name)
                    check()
            except BaseException as exc:
                errors.append(repr(exc))
        ts = [threading.Thread(target=reader) for _ in range(4)]
        for t in ts: t.start()
        while "numpy" not in seen: pass
        ev.set(); select.wait_for_kernels()
        import time
        while "numba" not in seen: time.sleep(0.01)
        stop.set()
        for t in ts: t.join()
        print(sorted(seen), errors)
        """,
        frames,
    )
    assert _lines(out) == ["['numba', 'numpy'] []"]


FORK_CHILD = """
def child(tag):
    try:
        check()
        name = select.active().name
        ks = select.use_kernels("numba")  # an import in the child: must not hang
        check()
        print(tag, name, ks.name, select.kernels_status(), flush=True)
        os._exit(0)
    except BaseException as exc:
        print(tag, "error", repr(exc), flush=True)
        os._exit(1)
"""


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.15, 0.4])
@pytest.mark.parametrize("fork_wait", [FORK_WAIT_S, 0.0], ids=["wait", "no-wait"])
def test_a_fork_during_the_load_gives_a_working_child(frames, fork_wait: float, delay) -> None:
    """A child forked ``delay`` seconds into a real load (``no-wait``: past the fork's wait, so
    that it may inherit a half-imported numba) reads the frames right and never hangs; with
    the wait, the child inherits a finished load and the parent had one thread at the fork."""
    out = _run(
        FORK_CHILD
        + f"""
select.FORK_WAIT = {fork_wait}
threads_at_fork = []
os.register_at_fork(after_in_parent=lambda: threads_at_fork.append(threading.active_count()))
import time
select.active(); time.sleep({delay})
pid = os.fork()
if pid == 0:
    child("child")
_, status = os.waitpid(pid, 0)
print("parent", os.waitstatus_to_exitcode(status), select.wait_for_kernels().name, threads_at_fork)
""",
        frames,
    )
    child, parent = _lines(out)
    _, name, asked, status = child.split(" ", 3)
    if fork_wait:  # the fork waited for the load: the child has numba
        assert (name, asked, status) == ("numba", "numba", "numba")
        assert parent == "parent 0 numba [1]"
    else:  # a half-imported numba is never imported again: numpy, with a warning
        assert name in ("numpy", "numba")
        assert asked == "numba" or status == "numpy (numba interrupted by a fork)", child
        assert parent.startswith("parent 0 numba")


def test_a_multiprocessing_fork_pool_during_the_load(frames: list[str]) -> None:
    out = _run(
        """
        import multiprocessing as mp
        def work(path):
            got = pb.open(path, mode="r")[:]
            return got.tobytes() == WANT.tobytes(), select.active().name
        if __name__ == "__main__":
            warnings.simplefilter("error", DeprecationWarning)  # 3.12+: fork with threads
            select.active()
            ctx = mp.get_context("fork")
            with ctx.Pool(2) as pool:
                res = pool.map(work, PATHS * 2)
            print(all(ok for ok, _ in res), sorted({n for _, n in res}))
        """,
        frames,
    )
    assert _lines(out) == ["True ['numba']"]
    assert "DeprecationWarning" not in out.stderr


def test_a_process_that_exits_during_the_load_exits_cleanly(frames: list[str]) -> None:
    for _ in range(5):
        out = _run(
            """
            s = pb.open(PATHS[1], mode="r").schunk
            chunk = s.decompress_chunk(0)
            assert chunk == WANT[:50_000].tobytes()
            print(select.kernels_status())
            """,
            frames,
        )
        assert _lines(out) == ["numpy (numba loading)"]
        assert out.stderr == ""


def test_a_child_forked_past_the_wait_serves_numpy_and_never_imports_numba(frames) -> None:
    out = _run(
        FORK_CHILD
        + """
ev = gate()
select.FORK_WAIT = 0.0
select.active()
pid = os.fork()
if pid == 0:
    child("child")
_, status = os.waitpid(pid, 0)
ev.set()
print("parent", select.wait_for_kernels().name, os.waitstatus_to_exitcode(status))
""",
        frames,
    )
    assert _lines(out) == [
        "child numpy numpy numpy (numba interrupted by a fork)",
        "parent numba 0",
    ]
    assert out.stderr.count("'numba' kernels are not usable") == 1


def test_numpy_serves_a_plain_read_while_the_loader_is_stuck(tmp_path: Path, frames) -> None:
    """The loader never holds the lock a reader needs: reads go on while it is stuck."""
    out = _run(
        """
        ev = gate()
        for _ in range(3):
            check()
        print(select.active().name, select.wait_for_kernels(0.05).name)
        """,
        frames,
    )
    assert _lines(out) == ["numpy numpy"]


#: the child's view of numba's kernels: every dispatcher of the numba modules (the byte
#: shuffles made per group size included) -> the signatures it holds (compiled or loaded)
SIGNATURES = """
def signatures():
    from pyblosc2.kernels import blosclz_nb, delta_nb, shuffle_nb
    out = {f"made {kind} {g}": k.signatures for (kind, g), k in shuffle_nb._made.items()}
    for mod in (shuffle_nb, blosclz_nb, delta_nb):
        for name, obj in vars(mod).items():
            if hasattr(obj, "signatures"):
                out[f"{mod.__name__}.{name}"] = obj.signatures
    return {k: sorted(map(str, v)) for k, v in out.items()}
def typical_work():
    check()  # reads: lz4 + shuffle, blosclz + bitshuffle, zstd + delta + bytedelta
    for dtype, codec, flt in ((np.float32, pb.Codec.BLOSCLZ, pb.Filter.SHUFFLE),
                              (np.int16, pb.Codec.LZ4, pb.Filter.BITSHUFFLE),
                              (np.float64, pb.Codec.ZSTD, pb.Filter.BITSHUFFLE)):
        x = np.linspace(0, 100, 300_000).astype(dtype)
        c = pb.compress2(x, typesize=x.itemsize, codec=codec, filters=[flt])
        assert pb.decompress2(c) == x.tobytes()
        a = pb.asarray(x, chunks=(100_000,), blocks=(20_000,),
                       cparams={"codec": codec, "filters": [flt]})
        assert a[:].tobytes() == x.tobytes()
"""


def test_the_loader_warms_what_a_typical_read_meets_before_the_swap(frames) -> None:
    out = _run(
        SIGNATURES
        + """
select.active()
assert select.wait_for_kernels().name == "numba"
before = signatures()
typical_work()
after = signatures()
print(sorted(k for k in after if after[k] != before.get(k)))
print(sorted(k for k, v in before.items() if k.startswith("made") and v))
print(len(before["pyblosc2.kernels.blosclz_nb._decompress_streams"]))
""",
        frames,
    )
    added, made, streams = _lines(out)
    assert added == "[]"  # the first reads and writes after the swap loaded no kernel
    # one kernel per kind and group size, whatever the length (a frame's chunk-offsets index
    # of python-blosc2, one 8-byte item per chunk, takes the same 8-byte kernels)
    assert made == str(
        sorted(
            f"made {kind} {g}"
            for kind in ("blocks", "runs", "shuffle", "unshuffle")
            for g in (2, 4, 8)
        )
    )
    assert streams == "2"  # read-only and writable sources
    assert out.stderr == ""


def test_a_synchronous_load_warms_one_kernel_and_loads_the_rest_on_use(frames) -> None:
    """``PYBLOSC2_KERNELS=numba`` pays only for the kernels its reads meet (the full list
    costs ~0.15-0.2 s from a warm cache, a typical first read needs a few of them)."""
    out = _run(
        SIGNATURES
        + """
before = signatures() if select.active().name == "numba" else None
typical_work()
after = signatures()
print(sorted(k for k, v in before.items() if k.startswith("made") and v))
print(len(after) > len(before))
""",
        frames,
        env_set="numba",
    )
    assert _lines(out) == ["['made unshuffle 4']", "True"]


def test_a_kernel_that_fails_its_warm_up_keeps_numpy_with_one_warning(frames) -> None:
    """A kernel giving wrong bytes in the warm-up (here: the 2-d byte unshuffle) is found
    before the swap: numpy keeps serving, with the one warning of a failed load."""
    out = _run(
        """
from pyblosc2.kernels import shuffle_nb
def wrong(g):
    return lambda src, dst: dst.fill(0)
shuffle_nb._FACTORIES["blocks"] = wrong
select.active()
print(select.wait_for_kernels().name, "|", select.kernels_status())
check()
""",
        frames,
    )
    assert _lines(out) == [
        "numpy | numpy (numba failed: RuntimeError: the numba unshuffle_blocks kernel gave wrong"
        " bytes)"
    ]
    assert out.stderr.count("RuntimeWarning") == 1


#: a warm-up whose budget is spent at once (as when an empty cache makes it compile): the
#: set is swapped in first and every step runs after the swap, the first waiting at a gate
WARM_AFTER_SWAP = """
import time
select.WARM_BUDGET = 0.0
held = threading.Event()
real_steps = select._WARMERS["numba"]
select._WARMERS["numba"] = lambda: [held.wait, *real_steps()]
def swapped():
    select.active()
    while select.active().name != "numba":
        time.sleep(0.01)
"""


def test_a_warm_up_over_its_budget_goes_on_after_the_swap(frames: list[str]) -> None:
    out = _run(
        SIGNATURES
        + WARM_AFTER_SWAP
        + """
swapped()
print(select.kernels_status())
check()
held.set()
print(select.wait_for_kernels().name, select.kernels_status())
before = signatures()
typical_work()
print(before == signatures())
""",
        frames,
    )
    assert _lines(out) == ["numba (numba warming)", "numba numba", "True"]
    assert out.stderr == ""


def test_a_kernel_found_wrong_after_the_swap_brings_numpy_back(frames: list[str]) -> None:
    out = _run(
        WARM_AFTER_SWAP
        + """
from pyblosc2.kernels import shuffle_nb
shuffle_nb._FACTORIES["blocks"] = lambda g: (lambda src, dst: dst.fill(0))
swapped()
held.set()
print(select.wait_for_kernels().name, "|", select.kernels_status())
check()
""",
        frames,
    )
    assert _lines(out) == [
        "numpy | numpy (numba failed: RuntimeError: the numba unshuffle_blocks kernel gave wrong"
        " bytes)"
    ]
    assert out.stderr.count("RuntimeWarning") == 1


def test_a_child_forked_while_the_loader_warms_after_the_swap_serves_numpy(frames) -> None:
    """The loader may hold numba's compiler lock at the fork: the child never compiles."""
    out = _run(
        FORK_CHILD
        + WARM_AFTER_SWAP
        + """
select.FORK_WAIT = 0.0
swapped()
pid = os.fork()
if pid == 0:
    child("child")
_, status = os.waitpid(pid, 0)
held.set()
print("parent", select.wait_for_kernels().name, os.waitstatus_to_exitcode(status))
""",
        frames,
    )
    assert _lines(out) == [
        "child numpy numpy numpy (numba interrupted by a fork)",
        "parent numba 0",
    ]


def test_a_fork_cuts_the_warm_up_short_and_the_child_has_numba(frames: list[str]) -> None:
    """A fork waits for the warm-up step under way, not for the whole list (from an empty
    cache it compiles for ~30 s): the loader stops there, the child has numba, and the
    kernels left load on first use."""
    out = _run(
        FORK_CHILD
        + SIGNATURES
        + WARM_AFTER_SWAP
        + """
swapped()
threading.Timer(0.3, held.set).start()  # the step under way ends while the fork waits
pid = os.fork()
if pid == 0:
    child("child")
_, status = os.waitpid(pid, 0)
print("parent", select.wait_for_kernels().name, select.kernels_status(),
      os.waitstatus_to_exitcode(status))
print(sorted(k for k, v in signatures().items() if k.startswith("made") and v))
check()
""",
        frames,
    )
    assert _lines(out) == [
        "child numba numba numba",
        "parent numba numba 0",
        "['made unshuffle 4']",  # warm_up's one kernel: the steps after the gate never ran
    ]


#: ``os.environ`` whose listing, in the loader thread, names a key that is gone when it is
#: read, ``{times}`` times: what another thread deleting a variable (pytest's
#: PYTEST_CURRENT_TEST between tests) does to numba's scan of the environment on import and
#: before each compile
ENV_RACE = """
class Racy(dict):
    left = {times}
    def __iter__(self):
        keys = list(super().__iter__())
        if threading.current_thread().name == "pyblosc2-kernels" and Racy.left > 0:
            Racy.left -= 1
            keys.append(b"PYBLOSC2_GONE")
        return iter(keys)
os.environ._data = Racy(os.environ._data)
select.active()
print(select.wait_for_kernels().name, "|", select.kernels_status(), "|", Racy.left)
check()
"""


def test_a_load_that_meets_another_thread_changing_the_environment_is_tried_again(
    frames: list[str],
) -> None:
    """The clean-clone CI of session 31 lost numba this way (KeyError: 'PYTEST_CURRENT_TEST'
    from numba's import in the loader thread, pytest deleting the variable meanwhile)."""
    out = _run(ENV_RACE.format(times=2), frames)
    assert _lines(out) == ["numba | numba | 0"]
    assert "RuntimeWarning" not in out.stderr


def test_a_load_that_keeps_meeting_it_falls_back_to_numpy_once(frames: list[str]) -> None:
    out = _run(ENV_RACE.format(times=1000), frames)
    (line,) = _lines(out)
    assert line.startswith("numpy | numpy (numba failed: KeyError: ")
    assert out.stderr.count("RuntimeWarning") == 1
