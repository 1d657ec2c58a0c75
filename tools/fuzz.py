"""Coverage-guided fuzzing of everything that reads untrusted bytes (atheris / libFuzzer).

    pip install -e ".[fuzz]"        # atheris
    python tools/fuzz.py chunk -atheris_runs=1000000 -rss_limit_mb=2048 -timeout=10
    python tools/fuzz.py frame -max_total_time=600
    python tools/fuzz.py metadata -atheris_runs=1000000 -rss_limit_mb=2048 -timeout=10 -max_len=4096
    python tools/fuzz.py b2z -max_total_time=900 -rss_limit_mb=2048 -timeout=10 -max_len=65536
    python tools/fuzz.py schema -max_total_time=600 -rss_limit_mb=2048 -timeout=10

Targets: ``chunk``, ``frame``, ``meta`` (msgpack values and the b2nd layer), ``metadata``
(metalayers and vlmeta from the index that names them to the decoded values, each value
written and read again: what the writer accepts must read back), ``b2z`` (a ``.b2z`` from
its zip directory to its members, opened as a store or table, read in place and unpacked into
a working copy) and ``schema`` (a CTable's schema document, from JSON text to the table
opened over a seed table's arrays).

The targets are in tests/trust/fuzz_targets.py (the suite runs a smoke version). Seeds are
C-Blosc2's golden chunks and frames; a crash is any exception that is not a pyblosc2 error or
NotImplementedError, a hang (-timeout), or memory beyond -rss_limit_mb (an allocation sized by
an unchecked field). At the end the script prints executions, distinct coverage edges and
crashes.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

import atheris

with atheris.instrument_imports():
    import pyblosc2  # noqa: F401

from tests.trust import fuzz_targets


def main() -> None:
    target = sys.argv[1]
    fn = fuzz_targets.TARGETS[target]

    def one(data: bytes) -> None:
        with contextlib.suppress(fuzz_targets.EXPECTED):
            fn(data)

    corpus = Path(tempfile.mkdtemp(prefix=f"pyblosc2-fuzz-{target}-"))
    for i, seed in enumerate(fuzz_targets.seeds()[target]):
        (corpus / f"seed{i}").write_bytes(seed)
    atheris.Setup([sys.argv[0], *sys.argv[2:], str(corpus)], one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
