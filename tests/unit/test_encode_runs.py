"""The chunk encoder's thread plan (chunk/encode.py): each thread filters and compresses one
run of consecutive blocks, and the bytes do not depend on how the blocks were split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2 import _threads
from pyblosc2.chunk import encode as encode_mod
from pyblosc2.kernels import kernel_sets, kernels_in_use
from tests.helpers import spy_run_parallel


@pytest.mark.parametrize("kernels", kernel_sets())
@pytest.mark.parametrize(
    ("filters", "nblocks"),
    [([pb.Filter.SHUFFLE], 6), ([pb.Filter.NOFILTER], 6), ([pb.Filter.DELTA], 6),
     ([pb.Filter.SHUFFLE], 7)],
)  # fmt: skip
def test_one_task_per_thread_same_bytes(monkeypatch, kernels, filters, nblocks) -> None:
    """Blocks go to the pool as one run per thread (a task per block ran two threads slower
    than one), whatever the pipeline and with a partial last block, and the chunk is the one
    a single thread writes."""
    bs = 2**19  # split into 64 KiB streams: long enough for threads
    n = (nblocks * bs - (bs // 2 if nblocks % 2 else 0)) // 8
    x = np.linspace(0, 1e3, n)
    x[: n // 3] = np.random.default_rng(0).random(n // 3)  # some blocks raw, some runs
    kw = {"typesize": 8, "blocksize": bs, "filters": filters, "codec": pb.Codec.LZ4}
    with kernels_in_use(kernels):
        one = pb.compress2(x, nthreads=1, **kw)
        asked = spy_run_parallel(monkeypatch, encode_mod)  # (threads, work items) per call
        for nthreads in (2, 3):
            asked.clear()
            assert pb.compress2(x, nthreads=nthreads, **kw) == one, nthreads
            assert asked == [(nthreads, nthreads)], nthreads
    assert pb.decompress2(one) == x.tobytes()


def test_short_codec_calls_stay_on_one_thread(monkeypatch) -> None:
    """Streams under the thread rule's size are compressed by the caller alone."""
    asked = spy_run_parallel(monkeypatch, encode_mod)
    x = np.linspace(0, 1, 2**17)
    chunk = pb.compress2(x, typesize=8, blocksize=2**15, nthreads=2)  # 4 KiB streams
    assert asked == [(1, 1)]
    monkeypatch.setattr(_threads, "MIN_PARALLEL_BYTES", 0)
    asked.clear()
    assert pb.compress2(x, typesize=8, blocksize=2**15, nthreads=2) == chunk
    assert asked == [(2, 2)]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["smooth", "random", "mixed", "zeros", "runs"]),
    st.integers(1, 3000),
    st.sampled_from([pb.Codec.LZ4, pb.Codec.ZSTD, pb.Codec.BLOSCLZ]),
    st.sampled_from([2, 4, 8]),
    st.sampled_from([256, 1024, 4096]),
    st.sampled_from([1, 2]),
)
def test_threads_layout_equals_the_budgeted_layout(kind, n, codec, typesize, bs, nthreads) -> None:
    """The streams laid out by the threads (when no stream can meet the output budget) are
    the bytes of the serial, budgeted layout, which the near-incompressible chunks take."""
    rng = np.random.default_rng(n)
    x = {
        "smooth": np.linspace(0, 1, n),
        "random": rng.random(n),
        "mixed": np.concatenate([rng.random(n // 2), np.linspace(0, 1, n - n // 2)]),
        "zeros": np.zeros(n),
        "runs": np.repeat(rng.random(max(1, n // 100)), 100)[:n],
    }[kind]
    kw = {"typesize": typesize, "blocksize": bs, "codec": codec, "nthreads": nthreads}
    taken: list[bool] = []
    real = encode_mod.fast_layout

    def spy(*a):
        lay = real(*a)
        taken.append(lay is not None)
        return lay

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_threads, "MIN_PARALLEL_BYTES", 0)
        mp.setattr(encode_mod, "fast_layout", spy)
        fast = pb.compress2(x, **kw)
        mp.setattr(encode_mod, "fast_layout", lambda *a: None)
        serial = pb.compress2(x, **kw)
    assert fast == serial
    assert pb.decompress2(fast) == x.tobytes()
    if kind == "zeros" and x.nbytes >= 4 * bs:
        assert taken == [True]  # compressible: the threads' layout is the one kept
    if len(fast) + bs < x.nbytes and kind != "zeros":
        assert taken == [True]


def test_budget_met_near_the_end_recompresses_as_c(monkeypatch) -> None:
    """A chunk whose last streams meet the budget takes the serial layout (and its output
    still reads back)."""
    rng = np.random.default_rng(1)
    x = np.concatenate([np.zeros(200, np.uint8), rng.integers(0, 256, 40_000, np.uint8)])
    calls: list[int] = []
    real = encode_mod.budgeted_layout

    def spy(*a):
        calls.append(1)
        return real(*a)

    monkeypatch.setattr(encode_mod, "budgeted_layout", spy)
    chunk = pb.compress2(x, typesize=1, blocksize=4096, codec=pb.Codec.LZ4)
    assert calls == [1]
    assert pb.decompress2(chunk) == x.tobytes()
