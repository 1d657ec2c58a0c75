"""A hypothesis stateful model of SChunk: random append/insert/update/zeros/delete/reorder/
set-slice sequences against a plain list of chunks, over memory, contiguous-file and sparse
storage (frame-format.md §4.7). No reference library; the C cross-check of the same operations
is tests/interop/test_schunk.py::test_mutation_sequences_read_by_c.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import pyblosc2 as pb
from tests.helpers import MODEL_CHUNKSIZE, apply_schunk_op

STORAGES = ["memory", "file", "sparse"]


class SChunkModel(RuleBasedStateMachine):
    """The SChunk must always hold exactly ``self.chunks``, also once reopened."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="pyblosc2-model-"))
        self.path: str | None = None
        self.s: pb.SChunk | None = None
        self.chunks: list[bytes] = []
        self.counter = 0

    @initialize(where=st.sampled_from(STORAGES), codec=st.sampled_from(["LZ4", "ZSTD"]))
    def create(self, where: str, codec: str) -> None:
        self.path = None if where == "memory" else str(self.dir / "s.b2frame")
        self.s = pb.SChunk(
            chunksize=MODEL_CHUNKSIZE,
            urlpath=self.path,
            contiguous=where != "sparse",
            cparams={"typesize": 4, "codec": pb.Codec[codec]},
        )

    def _apply(self, op: str, arg: object) -> None:
        self.counter += 1
        self.chunks = apply_schunk_op(self.s, self.chunks, op, arg, self.counter)

    @rule(n=st.integers(0, 100))
    def append(self, n: int) -> None:
        self._apply("append", n)

    @rule(k=st.integers(0, 10))
    def insert(self, k: int) -> None:
        self._apply("insert", k)

    @rule(k=st.integers(0, 10))
    def update(self, k: int) -> None:
        self._apply("update", k)

    @rule(k=st.integers(0, 10))
    def zeros(self, k: int) -> None:
        self._apply("zeros", k)

    @rule(k=st.integers(0, 10))
    def delete(self, k: int) -> None:
        self._apply("delete", k)

    @rule(rnd=st.randoms(use_true_random=False))
    def reorder(self, rnd: random.Random) -> None:
        self._apply("reorder", rnd)

    @rule(start=st.integers(0, 600))
    def setitem(self, start: int) -> None:
        self._apply("setitem", start)

    def _check(self, view: pb.SChunk) -> None:
        model = b"".join(self.chunks)
        assert view.nchunks == len(self.chunks)
        assert view.nbytes == len(model)
        assert [view.decompress_chunk(i) for i in range(view.nchunks)] == self.chunks
        assert view[:] == model

    @invariant()
    def holds_the_model(self) -> None:
        if self.s is None:
            return
        self._check(self.s)
        self._check(pb.schunk_from_cframe(self.s.to_cframe()))
        if self.path is not None:
            reopened = pb.open(self.path, mode="r")
            assert isinstance(reopened, pb.SChunk)
            self._check(reopened)

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


SChunkModel.TestCase.settings = settings(max_examples=40, stateful_step_count=10, deadline=None)
TestSChunkModel = SChunkModel.TestCase
