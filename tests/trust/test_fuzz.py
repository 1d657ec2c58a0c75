"""Smoke run of the fuzz targets (tools/fuzz.py runs them coverage-guided for millions of
executions): seeds mutated by byte flips, truncations, size-field rewrites, splices and runs
of nested containers must decode or raise a pyblosc2 error, quickly."""

from __future__ import annotations

import numpy as np
import pytest

from pyblosc2.kernels import wait_for_kernels
from tests.bounded import cpu_budget, cpu_seconds

from . import fuzz_targets

SEEDS = fuzz_targets.seeds()


def _mutants(seed: bytes, rng: np.random.Generator, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        b = bytearray(seed)
        how = rng.integers(5)
        if how == 0:  # flip a few bytes
            for p in rng.integers(0, len(b), size=int(rng.integers(1, 4))):
                b[p] ^= int(rng.integers(1, 256))
        elif how == 1:  # truncate
            del b[int(rng.integers(0, len(b))) :]
        elif how == 2:  # a size-like field set to 0, -1 or huge
            p = int(rng.integers(0, max(len(b) - 4, 1)))
            b[p : p + 4] = int(rng.choice([0, 0xFFFFFFFF, 0x7FFFFFFF])).to_bytes(4, "little")
        elif how == 3:  # splice two seeds
            other = SEEDS["chunk"][int(rng.integers(len(SEEDS["chunk"])))]
            cut = int(rng.integers(0, len(b)))
            b = b[:cut] + bytearray(other[cut:])
        else:  # nest: open a run of one-item arrays, maps or set extensions somewhere
            p = int(rng.integers(0, len(b) + 1))
            unit = [b"\x91", b"\x81\xa1k", b"\xd5\x2d\x91"][int(rng.integers(3))]
            b[p:p] = unit * int(rng.choice([10, 63, 64, 65, 300]))
        out.append(bytes(b))
    return out


#: mutants per seed (the metadata target is quick: a few thousand runs in seconds)
PER_SEED = {"metadata": 100}
#: CPU seconds an input may take (measured on its second run when its first took longer: the
#: first call of a numba kernel specialisation compiles it, seconds of CPU)
QUICK_CPU_S = 5.0
#: CPU seconds after which an input is stopped as a hang, named (above any compile)
HANG_CPU_S = 60.0


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # a mutant dtype "a5" (numpy 2)
@pytest.mark.parametrize("target", sorted(fuzz_targets.TARGETS))
def test_mutated_seeds_raise_only_pyblosc2_errors(target: str) -> None:
    """Bounded by CPU time, never by wall time: at load 18 an input of 0.2 s of CPU took 4.5 s,
    and a 5 s ``alarm`` went off inside a numba compile (from an empty cache), whose
    interruption numba then reported as ``RuntimeError: no compiled object yet``."""
    wait_for_kernels()  # the background loader's compiles are no input's CPU time
    rng = np.random.default_rng(sorted(fuzz_targets.TARGETS).index(target))
    seeds = SEEDS[target]
    per_seed = PER_SEED.get(target, 25)
    step = 1 if target in PER_SEED else max(1, len(seeds) // 12)
    runs = 0
    for i, seed in enumerate(seeds[::step]):
        for k, data in enumerate(_mutants(seed, rng, per_seed)):
            what = f"{target} target, seed {i * step}, mutant {k} ({len(data)} bytes)"
            with cpu_budget(HANG_CPU_S, what):
                spent = cpu_seconds(fuzz_targets.run, target, data)
                if spent > QUICK_CPU_S:
                    spent = cpu_seconds(fuzz_targets.run, target, data)
            assert spent <= QUICK_CPU_S, f"{what}: {spent:.1f} s of CPU time"
            runs += 1
    assert runs >= 100
