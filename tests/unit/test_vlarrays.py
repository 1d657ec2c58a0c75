"""ObjectArray, BatchArray and ListArray (vlarrays/), without a reference library: stateful
models against Python lists, the on-disk layout python-blosc2 uses, reopening, read-only
handles and errors (interop: tests/interop/test_vlarrays.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import pyblosc2 as pb
from pyblosc2.vlarrays import Batch, BatchArray, ListArray, ObjectArray

items = st.one_of(
    st.integers(-(2**31), 2**31),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.none(),
    st.tuples(st.integers(0, 9), st.text(max_size=3)),
    st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=2),
)
batches = st.lists(items, min_size=1, max_size=7)


class _ListModel(RuleBasedStateMachine):
    """A container against a Python list, every change checked and the file reopened."""

    make: type
    values: st.SearchStrategy

    def __init__(self) -> None:
        super().__init__()
        import tempfile

        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "c.b2frame")
        self.c = self.make(urlpath=self.path, mode="w", **self.kwargs())
        self.model: list = []

    def kwargs(self) -> dict:
        return {}

    def read(self, i: int):
        return self.c[i]

    @rule(v=st.data())
    def append(self, v) -> None:
        value = v.draw(self.values)
        assert self.c.append(value) == len(self.model) + 1
        self.model.append(value)

    @rule(v=st.data(), i=st.integers(-12, 12))
    def insert(self, v, i: int) -> None:
        value = v.draw(self.values)
        self.c.insert(i, value)
        self.model.insert(i, value)

    @precondition(lambda self: self.model)
    @rule(v=st.data(), i=st.integers(0, 50))
    def setitem(self, v, i: int) -> None:
        i %= len(self.model)
        value = v.draw(self.values)
        self.c[i] = value
        self.model[i] = value

    @precondition(lambda self: self.model)
    @rule(i=st.integers(0, 50))
    def pop(self, i: int) -> None:
        i %= len(self.model)
        got = self.c.pop(i)
        expected = self.model.pop(i)
        assert got == expected

    @rule(a=st.integers(-6, 6), b=st.integers(-6, 6), step=st.sampled_from([None, 2, -1, -2]))
    def delete_slice(self, a: int, b: int, step) -> None:
        del self.c[a:b:step]
        del self.model[a:b:step]

    @rule(a=st.integers(0, 6), b=st.integers(0, 6), v=st.data())
    def set_slice(self, a: int, b: int, v) -> None:
        new = v.draw(st.lists(self.values, max_size=3))
        self.c[a:b] = new
        self.model[a:b] = new

    @precondition(lambda self: len(self.model) > 4)
    @rule()
    def clear(self) -> None:
        self.c.clear()
        self.model.clear()

    @invariant()
    def same(self) -> None:
        assert len(self.c) == len(self.model)
        if self.model:
            assert self.read(len(self.model) - 1) == self.model[-1]

    def teardown(self) -> None:
        reopened = pb.open(self.path, mode="r")
        assert type(reopened) is self.make
        assert [self.read_from(reopened, i) for i in range(len(reopened))] == self.model
        pb.remove_urlpath(self.path)

    def read_from(self, c, i: int):
        return c[i]


class ObjectArrayModel(_ListModel):
    make = ObjectArray
    values = items


class BatchArrayModel(_ListModel):
    make = BatchArray
    values = batches

    def kwargs(self) -> dict:
        return {"items_per_block": 3}

    def read(self, i: int):
        return self.c[i][:]

    def read_from(self, c, i: int):
        return c[i][:]

    @invariant()
    def lengths_stored(self) -> None:
        stored = self.c.vlmeta.get("_batch_array_metadata")
        if self.model:
            assert stored == {"batch_lengths": [len(b) for b in self.model]}
            assert len(self.c.items) == sum(len(b) for b in self.model)
        else:
            assert stored is None


TestObjectArrayModel = ObjectArrayModel.TestCase
TestObjectArrayModel.settings = settings(max_examples=25, stateful_step_count=12, deadline=None)
TestBatchArrayModel = BatchArrayModel.TestCase
TestBatchArrayModel.settings = settings(max_examples=25, stateful_step_count=12, deadline=None)


# -- the layout python-blosc2 uses ------------------------------------------------------------


def test_objectarray_layout() -> None:
    oa = ObjectArray()
    oa.extend(["a", {"b": 1}])
    assert oa.meta["vlarray"] == {"version": 1, "serializer": "msgpack"}
    assert oa.typesize == 1 and oa.cparams.use_dict  # zstd dictionaries by default
    assert pb.msgpack_utils.msgpack_unpackb(oa.schunk.decompress_chunk(1)) == {"b": 1}
    assert not ObjectArray(cparams={"codec": pb.Codec.LZ4}).cparams.use_dict
    assert not ObjectArray(cparams={"use_dict": False}).cparams.use_dict
    assert not ObjectArray(cparams=pb.CParams(codec=pb.Codec.ZSTD)).cparams.use_dict


def test_batcharray_layout() -> None:
    ba = BatchArray(items_per_block=2)
    ba.extend([[1, 2, 3], ["x"]])
    assert ba.meta["batcharray"] == {
        "version": 1, "serializer": "msgpack", "items_per_block": 2, "arrow_schema": None,
    }  # fmt: skip
    assert ba.vlmeta["_batch_array_metadata"] == {"batch_lengths": [3, 1]}
    chunk = ba.schunk.get_chunk(0)
    assert pb.blosc2_ext.vldecompress(chunk) == [
        pb.msgpack_utils.msgpack_packb([1, 2]),
        pb.msgpack_utils.msgpack_packb([3]),
    ]
    assert pb.get_chunk_header(chunk).version == 6
    assert ba.schunk.header.vl_blocks


@pytest.mark.parametrize(
    ("clevel", "sizes", "expected"),
    [(3, [300 * 1024] * 4, 3), (5, [5 * 2**20] * 4, 1), (7, [6 * 2**20] * 4, 2), (9, [100] * 4, 4)],
)
def test_items_per_block_budget(clevel: int, sizes: list, expected: int) -> None:
    assert BatchArray(cparams={"clevel": clevel})._guess_blocksize(sizes) == expected


def test_first_batch_fixes_the_layout_keeping_user_vlmeta(tmp_path) -> None:
    path = str(tmp_path / "b.b2b")
    ba = BatchArray(urlpath=path, mode="w")
    ba.vlmeta["user"] = [1, 2]
    ba.append(list(range(10)))
    assert ba.items_per_block == 10
    again = pb.open(path)
    assert again.items_per_block == 10 and again.vlmeta["user"] == [1, 2]
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_batch_reads_one_block_at_a_time() -> None:
    ba = BatchArray(items_per_block=2)
    ba.append(list(range(7)))
    calls: list = []
    real = ba.schunk.get_vlblock
    ba.schunk.get_vlblock = lambda n, b: calls.append((n, b)) or real(n, b)
    batch = ba[0]
    assert isinstance(batch, Batch)
    assert [batch[i] for i in (0, 1, 5, 4, 6)] == [0, 1, 5, 4, 6]
    assert calls == [(0, 0), (0, 2), (0, 3)]
    assert batch[-1] == 6 and batch[2:4] == [2, 3]
    with pytest.raises(IndexError):
        batch[7]


def test_items_view() -> None:
    ba = BatchArray(items_per_block=2)
    ba.extend([["a", "b"], [1, 2, 3], [None]])
    flat = ["a", "b", 1, 2, 3, None]
    assert ba.items[:] == flat and ba.items[::-2] == flat[::-2] and ba.items[-2] == 3
    with pytest.raises(IndexError):
        ba.items[6]
    with pytest.raises(TypeError):
        ba.items[1.5]


@pytest.mark.parametrize("make", [ObjectArray, BatchArray], ids=["object", "batch"])
def test_read_only_handles_refuse_changes(tmp_path, make) -> None:
    path = str(tmp_path / "c.b2frame")
    c = make(urlpath=path, mode="w")
    c.append([1])
    ro = pb.open(path, mode="r")
    for change in (
        lambda: ro.append([2]),
        lambda: ro.insert(0, [2]),
        lambda: ro.__setitem__(0, [2]),
        lambda: ro.__delitem__(0),
        lambda: ro.pop(),
        lambda: ro.clear(),
        lambda: ro.extend([[2]]),
    ):
        with pytest.raises(ValueError, match="read-only"):
            change()
    mm = make(urlpath=path, mode="r", mmap_mode="r")
    assert len(mm) == 1
    rw = pb.open(path, mode="a")
    rw.append([3])
    assert len(pb.open(path)) == 2


@pytest.mark.parametrize("make", [ObjectArray, BatchArray], ids=["object", "batch"])
def test_argument_errors(make) -> None:
    c = make()
    c.append([1])
    with pytest.raises(TypeError):
        c.insert("0", [1])
    with pytest.raises(IndexError):
        c.delete(3)
    with pytest.raises(IndexError):
        make().pop()
    with pytest.raises(NotImplementedError):
        c.pop(slice(0, 1))
    with pytest.raises(ValueError, match="extended slice"):
        c[::2] = [[1], [2]]
    with pytest.raises(TypeError):
        c[0:1] = 3
    with pytest.raises(ValueError):
        c[::0]
    with pytest.raises(ValueError, match="Unsupported"):
        make(bogus=1)
    with pytest.raises(ValueError):
        make(storage=pb.Storage(), urlpath="x.b2frame")


def test_batcharray_entries_are_non_empty_sequences() -> None:
    ba = BatchArray()
    for bad, error in (("abc", TypeError), (b"abc", TypeError), (5, TypeError), ([], ValueError)):
        with pytest.raises(error):
            ba.append(bad)
    with pytest.raises(ValueError):
        BatchArray(items_per_block=0)
    with pytest.raises(ValueError):
        BatchArray(serializer="pickle")
    with pytest.raises(NotImplementedError, match="arrow"):
        BatchArray(serializer="arrow").append([1])


def test_copies(tmp_path) -> None:
    ba = BatchArray(items_per_block=2, meta={"m": 1})
    ba.vlmeta["v"] = "x"
    ba.extend([[1, 2, 3], [4]])
    fast = ba.chunk_copy(urlpath=str(tmp_path / "c.b2b"))
    assert [b[:] for b in fast] == [[1, 2, 3], [4]] and fast.vlmeta["v"] == "x"
    assert fast.meta["m"] == 1 and pb.open(str(tmp_path / "c.b2b"))._batch_lengths == [3, 1]
    with pytest.raises(ValueError, match="cparams"):
        ba.chunk_copy(cparams={"codec": pb.Codec.LZ4})
    slow = ba.copy(cparams={"codec": pb.Codec.LZ4, "clevel": 1})
    assert slow.cparams.codec == pb.Codec.LZ4 and [b[:] for b in slow] == [[1, 2, 3], [4]]
    oa = ObjectArray()
    oa.extend([1, "b"])
    assert list(oa.copy(contiguous=False)) == [1, "b"]
    with pytest.raises(ValueError, match="meta"):
        oa.copy(meta={})


def test_info() -> None:
    ba = BatchArray(items_per_block=2)
    ba.extend([[1, 2, 3, 4, 5], [6, 7], [8]])
    items = dict(ba.info_items)
    assert items["nblocks"] == "5 (items per block: mean=1.60, max=2, min=1)"
    assert items["nbatches"].startswith("3 (items per batch: mean=2.67")
    assert "BatchArray" in repr(ba.info)
    oa = ObjectArray()
    oa.extend(["x", "yy"])
    assert dict(oa.info_items)["entries"] == 2


def test_containers_inside_containers() -> None:
    inner = BatchArray(items_per_block=1)
    inner.extend([[1], [2, 3]])
    oa = ObjectArray()
    oa.append({"inner": inner, "arr": pb.asarray(np.arange(4))})
    got = oa[0]
    assert [b[:] for b in got["inner"]] == [[1], [2, 3]]
    np.testing.assert_array_equal(got["arr"][:], np.arange(4))
    restored = pb.from_cframe(oa.to_cframe())
    assert isinstance(restored, ObjectArray)
    with pytest.raises(pb.UnsafeDeserializationError, match="ObjectArray index 0"):
        restored[0]  # safe by default: embedded containers are refused
    assert pb.from_cframe(oa.to_cframe(), deserialize="full")[0]["arr"].shape == (4,)


def test_opened_files_default_to_safe(tmp_path) -> None:
    path = str(tmp_path / "o.b2frame")
    oa = ObjectArray(urlpath=path, mode="w")
    oa.extend([pb.Ref.urlpath_ref("x.b2nd"), 5])
    assert oa[0] == pb.Ref.urlpath_ref("x.b2nd")  # created here: full
    assert pb.open(path)[1] == 5
    with pytest.raises(pb.UnsafeDeserializationError):
        pb.open(path)[0]
    assert pb.open(path, deserialize="full")[0].urlpath == "x.b2nd"


# -- ListArray ----------------------------------------------------------------------------------


@pytest.mark.parametrize("storage", ["batch", "vl"])
def test_listarray_rows(tmp_path, storage: str) -> None:
    path = str(tmp_path / "l.b2b")
    la = ListArray(item_spec=pb.string(max_length=4), nullable=True, storage=storage,
                   batch_rows=2, urlpath=path, mode="w")  # fmt: skip
    la.append(["a", "b"])
    la.extend([[], None, ["c"]])
    assert la[:] == [["a", "b"], [], None, ["c"]]
    la[3] = ["x", "y"]
    assert la[[3, 0]] == [["x", "y"], ["a", "b"]]
    assert la[np.array([True, False, True, False])] == [["a", "b"], None]
    la.flush()
    back = pb.open(path)
    assert isinstance(back, ListArray) and back[:] == [["a", "b"], [], None, ["x", "y"]]
    assert back.meta["listarray"]["backend"] == storage
    assert pb.from_cframe(la.to_cframe())[:] == back[:]


def test_listarray_pending_rows_and_context() -> None:
    la = ListArray(item_spec=pb.int32(), batch_rows=3)
    with la:
        la.extend([[1], [2]])
        assert la._pending_cells and la[:] == [[1], [2]] and la.schunk.nchunks == 0
    assert not la._pending_cells and la.schunk.nchunks == 1


@pytest.mark.parametrize(
    ("spec", "bad", "error"),
    [
        (pb.int32(), None, ValueError),
        (pb.int32(), "abc", TypeError),
        (pb.int32(), [1, None], ValueError),
        (pb.int32(ge=0), [-1], ValueError),
        (pb.string(max_length=2), ["abc"], ValueError),
        (pb.struct({"x": pb.int8()}), [{"y": 1}], ValueError),
    ],
)
def test_listarray_checks_cells(spec, bad, error) -> None:
    with pytest.raises(error):
        ListArray(item_spec=spec).append(bad)


def test_listarray_nested_and_struct_items() -> None:
    spec = pb.list(pb.struct({"x": pb.int64(), "tags": pb.list(pb.string())}))
    la = ListArray(spec=spec)
    la.append([{"x": np.int16(3), "tags": ["a"]}])
    la.flush()
    again = pb.from_cframe(la.to_cframe())
    assert again[0] == [{"x": 3, "tags": ["a"]}]
    assert again.spec.to_listarray_metadata() == spec.to_listarray_metadata()


def test_listarray_copy_paths(tmp_path) -> None:
    la = ListArray(item_spec=pb.int32(), nullable=True, batch_rows=2)
    la.extend([[1], None, [2, 3]])
    la.flush()
    fast = la.copy(urlpath=str(tmp_path / "f.b2b"), mode="w")
    assert fast[:] == [[1], None, [2, 3]] == pb.open(str(tmp_path / "f.b2b"))[:]
    slow = la.copy(cparams={"codec": pb.Codec.LZ4})
    assert slow[:] == [[1], None, [2, 3]] and slow.cparams.codec == pb.Codec.LZ4


def test_listarray_arrow_is_named() -> None:
    with pytest.raises(NotImplementedError, match="arrow"):
        ListArray(item_spec=pb.int32(), serializer="arrow")


def test_objectarray_size_limit_is_read_from_the_package_at_call_time(monkeypatch) -> None:
    """python-blosc2 reads ``blosc2.MAX_BUFFERSIZE`` when an object is appended; so do we
    (lowering it is honoured, raising it above what a chunk can hold is not)."""
    oa = ObjectArray()
    oa.append("payload")
    monkeypatch.setattr(pb, "MAX_BUFFERSIZE", 4)
    with pytest.raises(pb.ParamError, match="cannot be larger than 4 bytes"):
        oa.append("payload")
    assert list(oa) == ["payload"]
    monkeypatch.setattr(pb, "MAX_BUFFERSIZE", 2**40)
    from pyblosc2.vlarrays.objectarray import check_serialized_size

    with pytest.raises(pb.ParamError, match=str(pb.constants.MAX_BUFFERSIZE)):
        check_serialized_size(_Sized())


class _Sized(bytes):
    """A payload that claims to be larger than any chunk, without allocating it."""

    def __len__(self) -> int:
        return 2**31
