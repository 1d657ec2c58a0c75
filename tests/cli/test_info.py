"""``pyblosc2 info`` on files written by python-blosc2 (C-Blosc2), pyblosc2 and C-Blosc."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import pyblosc2
from pyblosc2.cli.sources import frame_layout


def test_info_text_of_a_python_blosc2_b2nd(cli, c_b2nd: Path) -> None:
    r = cli("info", c_b2nd.name)
    assert r.returncode == 0, r.stderr
    lines = dict(
        (k.strip(), v.strip()) for k, v in (ln.split(":", 1) for ln in r.stdout.splitlines()[1:])
    )
    assert lines["kind"] == "NDArray"
    assert lines["shape"] == "(60, 40)"
    assert lines["dtype"] == "float64"
    assert lines["chunks"] == "(25, 40)"
    assert lines["blocks"] == "(5, 40)"
    assert lines["nchunks"] == "3"
    assert lines["units"] == "'K'"
    assert lines["source"] == "{'instrument': 'x7'}"


def test_info_json_agrees_with_python_blosc2(cli, c_b2nd: Path, cblosc2: ModuleType) -> None:
    r = cli("info", "--json", c_b2nd.name)
    assert r.returncode == 0, r.stderr
    [d] = json.loads(r.stdout)
    ref = cblosc2.open(str(c_b2nd))
    assert d["shape"] == list(ref.shape)
    assert d["nbytes"] == ref.schunk.nbytes and d["cbytes"] == ref.schunk.cbytes
    assert d["codec"] == ref.schunk.cparams.codec.name.lower()
    assert d["clevel"] == ref.schunk.cparams.clevel
    assert d["vlmeta"] == {"source": {"instrument": "x7"}}
    assert d["metalayers"]["units"] == "K"
    assert d["fingerprint"] == "none"


def test_info_chunks_table(cli, c_b2frame: Path) -> None:
    r = cli("info", "--json", "--chunks", c_b2frame.name)
    [d] = json.loads(r.stdout)
    rows = d["chunk_table"]
    s = pyblosc2.open(str(c_b2frame))
    assert [row["index"] for row in rows] == [0, 1, 2, 3]
    assert [row["offset"] for row in rows] == frame_layout(s).offsets
    data = c_b2frame.read_bytes()
    for row in rows:  # each offset points at the chunk with the reported sizes
        h = pyblosc2.get_chunk_header(data[row["offset"] : row["offset"] + 32])
        assert (h.nbytes, h.cbytes) == (row["nbytes"], row["cbytes"]) == (4000, row["cbytes"])
    text = cli("info", "--chunks", c_b2frame.name).stdout
    assert "offset" in text.splitlines()[-5] and len(text.splitlines()) > 5


def test_info_special_chunks_and_fingerprint(cli, tmp_path: Path, cblosc2, fp_b2frame) -> None:
    cblosc2.zeros((100, 10), chunks=(50, 10), urlpath=str(tmp_path / "z.b2nd"), mode="w")
    r = cli("info", "--json", "z.b2nd", fp_b2frame.name)
    zeros, fp = json.loads(r.stdout)
    assert zeros["special_chunks"] == {"zero": 2}
    table = json.loads(cli("info", "--json", "--chunks", "z.b2nd").stdout)[0]["chunk_table"]
    assert [(row["offset"], row["special"]) for row in table] == [(None, "zero")] * 2
    assert fp["fingerprint"].startswith("XXH3-128")
    assert fp["special_chunks"] == {}


@pytest.mark.parametrize("writer", ["blosc2", "blosc"])
def test_info_single_chunk_files(cli, tmp_path: Path, writer: str) -> None:
    from tests.cli.conftest import reference

    lib = reference(writer)
    data = np.arange(1000, dtype=np.int64)
    chunk = lib.compress2(data) if writer == "blosc2" else lib.compress(data.tobytes(), 8)
    (tmp_path / "one.chunk").write_bytes(chunk)
    [d] = json.loads(cli("info", "--json", "one.chunk").stdout)
    assert d["kind"] == ("Blosc2 chunk" if writer == "blosc2" else "Blosc1 chunk")
    assert (d["nbytes"], d["cbytes"], d["typesize"]) == (8000, len(chunk), 8)
    assert d["filters"] == ["shuffle"]


@pytest.mark.parametrize("writer", ["pyblosc2", "blosc2"])
def test_info_sparse_frame(cli, tmp_path: Path, writer: str) -> None:
    from tests.cli.conftest import reference

    lib = pyblosc2 if writer == "pyblosc2" else reference("blosc2")
    s = lib.SChunk(
        chunksize=400,
        urlpath=str(tmp_path / "sp"),
        contiguous=False,
        mode="w",
        cparams={"typesize": 4},
    )
    s.append_data(np.arange(100, dtype=np.int32))
    [d] = json.loads(cli("info", "--json", "sp").stdout)
    assert (d["storage"], d["nchunks"], d["nbytes"]) == ("sparse frame", 1, 400)


PNG = b"\x89PNG\r\n\x1a\n"


def test_info_plot_writes_a_png(cli, tmp_path: Path, c_b2nd: Path) -> None:
    pytest.importorskip("matplotlib")
    r = cli("info", "--plot", "nd.png", c_b2nd.name)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "nd.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize("shape", [(1000,), (40, 30, 20)])
def test_plot_ratios_flat_and_nd(tmp_path: Path, shape: tuple[int, ...]) -> None:
    pytest.importorskip("matplotlib")
    from pyblosc2.cli.plot import plot_ratios
    from pyblosc2.cli.sources import Source

    a = pyblosc2.zeros(shape, chunks=tuple(max(s // 4, 1) for s in shape))
    a[: shape[0] // 2] = 1.5  # half the chunks stop being special
    out = tmp_path / "p.png"
    plot_ratios(Source("a", "ndarray", a), str(out), (2, 0) if len(shape) == 3 else (0, 1))
    assert out.read_bytes()[:8] == PNG


def test_info_reports_each_file_and_fails_on_the_bad_one(cli, c_b2nd: Path) -> None:
    r = cli("info", "missing.b2nd", c_b2nd.name)
    assert r.returncode == 2
    assert r.stderr.strip() == "pyblosc2: error: missing.b2nd: no such file or directory"
    assert "NDArray" in r.stdout


def test_plot_refusals(cli, tmp_path: Path, c_b2nd: Path, c_b2frame: Path) -> None:
    pytest.importorskip("matplotlib")
    (tmp_path / "one.chunk").write_bytes(pyblosc2.compress2(np.arange(100)))
    r = cli("info", "--plot", "p.png", c_b2nd.name, c_b2frame.name)
    assert r.returncode == 2 and "give a single PATH" in r.stderr
    r = cli("info", "--plot", "p.png", "one.chunk")
    assert r.returncode == 2 and "--plot needs a frame" in r.stderr
    assert not (tmp_path / "p.png").exists()


def test_info_of_a_table_store_lists_its_leaves(cli, tmp_path: Path) -> None:
    """``open`` gives the CTable of a table's own store; ``info`` still lists the store."""
    import dataclasses

    @dataclasses.dataclass
    class Row:
        x: int = 0

    with pyblosc2.CTable(Row, urlpath=str(tmp_path / "t.b2d"), mode="w") as t:
        t.extend({"x": [1, 2, 3]})
    r = cli("info", "t.b2d")
    assert r.returncode == 0, r.stderr
    assert "TreeStore" in r.stdout
    assert "/_cols/x" in r.stdout and "/_valid_rows" in r.stdout
