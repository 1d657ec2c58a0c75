"""The chunk encoder's thread plan (chunk/encode.py): each thread filters and compresses one
run of consecutive blocks, and the bytes do not depend on how the blocks were split."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import _threads
from pyblosc2.chunk import encode as encode_mod
from pyblosc2.kernels import kernel_sets, kernels_in_use


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
    asked: list[tuple[int, int]] = []  # (threads, work items) per run_parallel call
    real = encode_mod.run_parallel

    def spy(fn, items, nthreads):
        items = list(items)
        asked.append((nthreads, len(items)))
        return real(fn, items, nthreads)

    bs = 2**19  # split into 64 KiB streams: long enough for threads
    n = (nblocks * bs - (bs // 2 if nblocks % 2 else 0)) // 8
    x = np.linspace(0, 1e3, n)
    x[: n // 3] = np.random.default_rng(0).random(n // 3)  # some blocks raw, some runs
    kw = {"typesize": 8, "blocksize": bs, "filters": filters, "codec": pb.Codec.LZ4}
    with kernels_in_use(kernels):
        one = pb.compress2(x, nthreads=1, **kw)
        monkeypatch.setattr(encode_mod, "run_parallel", spy)
        for nthreads in (2, 3):
            asked.clear()
            assert pb.compress2(x, nthreads=nthreads, **kw) == one, nthreads
            assert asked == [(nthreads, nthreads)], nthreads
    assert pb.decompress2(one) == x.tobytes()


def test_short_codec_calls_stay_on_one_thread(monkeypatch) -> None:
    """Streams under the thread rule's size are compressed by the caller alone."""
    asked: list[tuple[int, int]] = []
    real = encode_mod.run_parallel

    def spy(fn, items, nthreads):
        items = list(items)
        asked.append((nthreads, len(items)))
        return real(fn, items, nthreads)

    monkeypatch.setattr(encode_mod, "run_parallel", spy)
    x = np.linspace(0, 1, 2**17)
    chunk = pb.compress2(x, typesize=8, blocksize=2**15, nthreads=2)  # 4 KiB streams
    assert asked == [(1, 1)]
    monkeypatch.setattr(_threads, "MIN_PARALLEL_BYTES", 0)
    asked.clear()
    assert pb.compress2(x, typesize=8, blocksize=2**15, nthreads=2) == chunk
    assert asked == [(2, 2)]
