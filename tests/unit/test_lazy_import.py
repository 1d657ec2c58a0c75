"""``import pyblosc2`` loads the compute engine, the tables, the indexes and the proxies only
when they are first used (issue 35: a fresh process's first read). Each case runs in a fresh
interpreter (this one has them all loaded) and prints what it found; the test checks it."""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2
from pyblosc2._engine_list import ENGINE_NAMES
from tests.bounded import run_child

#: modules a process that only reads arrays does not need
HEAVY = [
    "pyblosc2.compute",
    "pyblosc2.linalg",
    "pyblosc2.dsl",
    "pyblosc2.ctable.table",
    "pyblosc2.indexes",
    "pyblosc2.proxies.proxy",
    "pyblosc2.backends.fsspec",
    "asyncio",
    "numexpr",
]


@dataclass
class Row:
    x: int = 0
    y: float = 0.0


def child(body: str, tmp_path: Path | None = None) -> Any:
    """Run ``body`` after ``import pyblosc2 as blosc2`` in a fresh interpreter; ``loaded()``
    there lists the :data:`HEAVY` modules imported so far. Returns what it prints (JSON)."""
    code = (
        "import json, sys\n"
        "import numpy as np\n"
        "import pyblosc2 as blosc2\n"
        f"HEAVY = {HEAVY!r}\n"
        "def loaded():\n"
        "    return sorted(m for m in HEAVY if m in sys.modules)\n" + textwrap.dedent(body)
    )
    out = run_child(
        [sys.executable, "-c", code],
        "a fresh pyblosc2 process",
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_then_read_loads_none_of_them(tmp_path: Path) -> None:
    a = np.arange(1000.0).reshape(10, 100)
    pyblosc2.asarray(a, urlpath=str(tmp_path / "a.b2nd"), mode="w", chunks=(5, 50))
    got = child(
        """
        at_import = loaded()
        arr = blosc2.open("a.b2nd", mode="r")
        s = float(arr[2:4, 10:20].sum()) + float(arr[:].sum())
        print(json.dumps([at_import, loaded(), s]))
        """,
        tmp_path,
    )
    assert got == [[], [], float(a[2:4, 10:20].sum() + a.sum())]


def test_an_operator_loads_the_engine() -> None:
    got = child(
        """
        a = blosc2.asarray(np.arange(10.0))
        e = a * 2 + 1
        print(json.dumps([type(e).__name__, e[3:5].tolist(), "pyblosc2.compute" in loaded()]))
        """
    )
    assert got == ["LazyExpr", [7.0, 9.0], True]


def test_matmul_and_transpose_load_linalg() -> None:
    got = child(
        """
        v = blosc2.asarray(np.arange(6.0).reshape(2, 3))
        print(json.dumps([(v @ v.T)[...].tolist(), v.mT.shape, "pyblosc2.linalg" in loaded()]))
        """
    )
    assert got == [[[5.0, 14.0], [14.0, 50.0]], [3, 2], True]


@pytest.mark.parametrize("name", ["lazyexpr", "CTable", "Proxy", "IndexKind", "linalg", "pi"])
def test_a_name_loads_its_module(name: str) -> None:
    got = child(
        f"""
        value = getattr(blosc2, {name!r})
        print(json.dumps([loaded(), value is getattr(blosc2, {name!r})]))
        """
    )
    assert got[1] is True
    assert got[0], f"blosc2.{name} loaded none of {HEAVY}"


def test_a_function_named_like_a_submodule_stays_the_function() -> None:
    """python-blosc2's ``blosc2.lazyexpr`` is a module and a function: importing the module
    before the function was ever asked for must not make the package attribute the module."""
    got = child(
        """
        import pyblosc2.lazyexpr
        import pyblosc2.dsl_kernel
        mod = sys.modules["pyblosc2.lazyexpr"]
        print(json.dumps([callable(blosc2.lazyexpr), type(mod).__name__,
                          callable(blosc2.dsl_kernel)]))
        """
    )
    assert got == [True, "module", True]


def test_star_import_and_dir_see_every_name() -> None:
    got = child(
        """
        ns = {}
        exec("from pyblosc2 import *", ns)
        missing = sorted(set(blosc2.__all__) - set(ns))
        print(json.dumps([missing, sorted(set(blosc2.__all__) - set(dir(blosc2)))]))
        """
    )
    assert got == [[], []]


def test_the_engine_names_list_is_the_engines() -> None:
    """``_engine_list.ENGINE_NAMES`` (read without importing the engine) names exactly what
    :mod:`pyblosc2._engine_names` exports, each defined there."""
    from pyblosc2 import _engine_names

    assert list(ENGINE_NAMES) == _engine_names.__all__
    assert len(set(ENGINE_NAMES)) == len(ENGINE_NAMES)
    for name in ENGINE_NAMES:
        assert getattr(pyblosc2, name) is getattr(_engine_names, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = pyblosc2.no_such_name  # type: ignore[attr-defined]


def test_a_saved_expression_opened_first_loads_the_engine(tmp_path: Path) -> None:
    a = pyblosc2.asarray(np.arange(20.0), urlpath=str(tmp_path / "a.b2nd"), mode="w")
    (a + 1).save(urlpath=str(tmp_path / "e.b2nd"))
    got = child(
        """
        e = blosc2.open("e.b2nd", mode="r", deserialize="full")
        print(json.dumps([type(e).__name__, e[:3].tolist(), "pyblosc2.compute" in loaded()]))
        """,
        tmp_path,
    )
    assert got == ["LazyExpr", [1.0, 2.0, 3.0], True]


def test_a_table_opened_first_loads_the_tables(tmp_path: Path) -> None:
    with pyblosc2.CTable(Row, urlpath=str(tmp_path / "t.b2d"), mode="w") as t:
        t.extend({"x": np.arange(5)})
    got = child(
        """
        t = blosc2.open("t.b2d", mode="r")
        x = t["x"][:].tolist()
        print(json.dumps([type(t).__name__, x, "pyblosc2.ctable.table" in loaded()]))
        """,
        tmp_path,
    )
    assert got == ["CTable", [0, 1, 2, 3, 4], True]


def test_an_index_found_on_write_is_kept_current(tmp_path: Path) -> None:
    """An array with an index, written by a fresh process that never asked for the indexes:
    the write still reaches them (the provider's loader), so the index answers the new
    values."""
    a = pyblosc2.asarray(np.arange(100), urlpath=str(tmp_path / "i.b2nd"), mode="w", chunks=(10,))
    a.create_index()
    del a
    got = child(
        """
        a = blosc2.open("i.b2nd", mode="a")
        a[5] = 1000
        print(json.dumps("pyblosc2.indexes" in loaded()))
        """,
        tmp_path,
    )
    assert got is True
    a = pyblosc2.open(str(tmp_path / "i.b2nd"), mode="r")
    assert a[a == 1000].compute()[:].tolist() == [1000]
    assert a[a == 5].compute()[:].tolist() == []


def test_the_table_module_imported_alone_registers_its_column_kinds() -> None:
    """``ctable/__init__`` no longer imports every module first: the table module itself makes
    sure list and object columns are registered (the CLI's Parquet import reaches it so)."""
    got = child(
        """
        from pyblosc2.ctable.table import CTable
        from pyblosc2.ctable import strings
        print(json.dumps(sorted(t.__name__ for t in strings._MEMORY_KINDS)))
        """
    )
    assert got == ["ListSpec", "ObjectSpec"]
