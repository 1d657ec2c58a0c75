"""Malformed CTable schema documents (ctable/storage.py, ctable/schema.py): each is written
into the ``/_meta`` vlmeta of a real ``.b2d`` table and ``CTable.open`` gives a FormatError
naming the schema (or NotImplementedError naming a feature) — never a RecursionError, a
KeyError, a TypeError or an AttributeError out of the decoding."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError


@dataclasses.dataclass
class Row:
    x: int = 0
    z: complex = 0j


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("t") / "t.b2d"
    with pb.CTable(Row, urlpath=str(path), mode="w") as t:
        t.extend([(1, 2j), (3, 4j)])
    return path, pb.CTable.open(str(path)).schema_dict()


def _with(doc: dict[str, Any], column: int = 0, **entry: Any) -> dict[str, Any]:
    cols = [dict(c) for c in doc["columns"]]
    cols[column].update(entry)
    return {**doc, "columns": [{k: v for k, v in c.items() if v is not None} for c in cols]}


SCHEMA = "CTable: /_meta vlmeta 'schema'"
CASES: dict[str, tuple[Any, str]] = {
    "nested 100 deep": ("[" * 100 + "]" * 100, "JSON nesting depth is 100, expected at most 64"),
    "not JSON": ("{", "JSON at offset 1 is Expecting property name"),
    "bytes, not UTF-8": (b"{\xff}", "JSON at offset 1 is invalid start byte, expected UTF-8"),
    "an int": (5, "is int, expected a JSON str"),
    "not an object": ("[1]", "is \\[1\\], expected a JSON object"),
    "no columns": ({"version": 1}, "with 'columns'"),
    "metadata not a mapping": (lambda d: {**d, "metadata": 5}, "'metadata' must be a mapping"),
    "version 99": (lambda d: {**d, "version": 99}, "Unsupported schema version 99"),
    "column not a mapping": (lambda d: {**d, "columns": [5]}, "needs 'name' and 'kind'"),
    "column without kind": (lambda d: _with(d, kind=None), "needs 'name' and 'kind'"),
    "unknown kind": (lambda d: _with(d, kind="int7"), "Unknown column kind 'int7'"),
    # found by the schema fuzz target: a TypeError (unhashable) escaped
    "kind a list": (lambda d: _with(d, kind=["int64"]), r"kind must be a str, got \['int64'\]"),
    "spec keyword unknown": (lambda d: _with(d, bogus=1), "bad int64 spec metadata"),
    "chunks not a list": (lambda d: _with(d, chunks=5), "chunks must be a list of one positive"),
    "blocks of two": (lambda d: _with(d, blocks=[2, 2]), "blocks must be a list of one positive"),
    "complex default without imag": (
        lambda d: _with(d, 1, default={"__complex__": True, "real": 1}),
        "a complex default needs numbers 'real' and 'imag'",
    ),
    "bytes default not base64": (
        lambda d: _with(d, 0, default={"__bytes__": True, "base64": "@@"}),
        "a bytes default needs 'base64' text",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_schema(table: tuple[Path, dict[str, Any]], tmp_path: Path, case: str) -> None:
    source, doc = table
    path = tmp_path / "t.b2d"
    shutil.copytree(source, path)
    value, match = CASES[case]
    value = value(doc) if callable(value) else value
    meta = pb.open(str(path / "_meta.b2f"), mode="a")
    meta.vlmeta["schema"] = json.dumps(value) if isinstance(value, dict) else value
    del meta
    with pytest.raises(FormatError, match=match) as exc:
        pb.CTable.open(str(path))
    assert str(exc.value).startswith(SCHEMA)
