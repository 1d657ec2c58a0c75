"""``pyblosc2 compress`` / ``decompress``: files, pipes, python-blosc2 reading what we write
and us reading what it writes; bad arguments write nothing."""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import pyblosc2
from tests.cli.conftest import ARRAY


def _npy(arr: np.ndarray) -> bytes:
    f = io.BytesIO()
    np.save(f, arr)
    return f.getvalue()


@pytest.mark.parametrize(
    ("dtype", "shape", "chunks"),
    [("f8", (60, 40), "20,40"), ("i2", (1000,), "300"), ("<U3", (7, 5), None), ("u1", (), None)],
)
def test_npy_to_b2nd_opens_in_python_blosc2(
    cli, tmp_path: Path, cblosc2: ModuleType, dtype: str, shape: tuple, chunks: str | None
) -> None:
    arr = (np.arange(int(np.prod(shape))) % 97).astype(dtype).reshape(shape)
    (tmp_path / "in.npy").write_bytes(_npy(arr))
    extra = ["--chunks", chunks] if chunks else []
    r = cli("compress", "in.npy", "out.b2nd", "--codec", "lz4", "--clevel", "7", *extra)
    assert r.returncode == 0, r.stderr
    back = cblosc2.open(str(tmp_path / "out.b2nd"))
    assert back.shape == shape and back.dtype == arr.dtype
    np.testing.assert_array_equal(back[()] if not shape else back[:], arr)
    assert back.schunk.cparams.codec == cblosc2.Codec.LZ4
    assert back.schunk.cparams.clevel == 7
    if chunks:
        assert back.chunks == tuple(int(c) for c in chunks.split(","))


def test_raw_stdin_to_b2frame_and_back_to_stdout(cli, tmp_path: Path, cblosc2) -> None:
    raw = np.arange(300_000, dtype=np.int64).tobytes()
    r = cli(
        "compress",
        "-",
        "out.b2frame",
        "--typesize",
        "8",
        "--chunks",
        "100000",
        "--filter",
        "bitshuffle",
        stdin=raw,
    )
    assert r.returncode == 0, r.stderr
    s = cblosc2.open(str(tmp_path / "out.b2frame"))
    assert (s.nchunks, s.typesize, s.chunksize) == (3, 8, 800_000)
    assert s.cparams.filters[-1] == cblosc2.Filter.BITSHUFFLE
    assert s[:] == raw
    r = cli("decompress", "out.b2frame", "-")
    assert r.returncode == 0 and r.raw == raw


def test_pipe_through_both_commands(cli, tmp_path: Path) -> None:
    arr = np.linspace(0, 1, 5000).reshape(50, 100)
    r = cli("compress", "-", "x.b2nd", stdin=_npy(arr))
    assert r.returncode == 0, r.stderr
    r = cli("decompress", "x.b2nd", "-", "--format", "npy")
    np.testing.assert_array_equal(np.load(io.BytesIO(r.raw)), arr)


def test_decompress_python_blosc2_files(cli, tmp_path: Path, c_b2nd: Path, c_b2frame) -> None:
    assert cli("decompress", c_b2nd.name, "a.npy").returncode == 0
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), ARRAY)
    assert cli("decompress", c_b2frame.name, "b.npy", "--dtype", "i4").returncode == 0
    expected = np.concatenate([np.arange(1000, dtype=np.int32) + i for i in range(4)])
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), expected)


def test_decompress_a_single_chunk_file(cli, tmp_path: Path, cblosc1) -> None:
    data = np.arange(1000, dtype=np.int64).tobytes()
    (tmp_path / "one.chunk").write_bytes(cblosc1.compress(data, typesize=8))
    r = cli("decompress", "one.chunk", "-")
    assert r.returncode == 0 and r.raw == data


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--clevel", "10"], "clevel must be an int in 0..9, got 10"),
        (["--chunks", "0"], "--chunks must be positive integers"),
        (["--chunks", "a,b"], "--chunks must be integers separated by commas"),
        (["--chunks", "5,5"], "--chunks needs 1 values"),
        (["--dtype", "nonsense"], "--dtype: data type 'nonsense' not understood"),
    ],
)
def test_bad_arguments_write_nothing(cli, tmp_path: Path, args: list, message: str) -> None:
    (tmp_path / "in.npy").write_bytes(_npy(np.arange(100)))
    (tmp_path / "in.bin").write_bytes(bytes(100))
    src = "in.bin" if "--dtype" in args else "in.npy"
    before = sorted(p.name for p in tmp_path.iterdir())
    r = cli("compress", src, "out.b2nd", *args)
    assert r.returncode == 2
    assert r.stderr.startswith("pyblosc2: error: ") and message in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--codec", "gzip"], "argument --codec: invalid choice: 'gzip'"),
        (["--clevel", "x"], "argument --clevel: invalid int value: 'x'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        ([], "the following arguments are required: OUT"),
    ],
)
def test_argparse_errors_exit_2(
    tmp_path: Path, monkeypatch, capsys, argv: list, message: str
) -> None:
    from pyblosc2.cli.main import main

    monkeypatch.chdir(tmp_path)  # in-process: argparse exits before anything runs
    with pytest.raises(SystemExit) as exc:
        main(["compress", *(["in.bin", "out.b2frame"] if argv else ["in.bin"]), *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.startswith("usage: pyblosc2") and message in err
    assert list(tmp_path.iterdir()) == []


def test_truncated_npy_input_writes_nothing(cli, tmp_path: Path) -> None:
    (tmp_path / "in.npy").write_bytes(_npy(np.arange(1000))[:-100])
    r = cli("compress", "in.npy", "out.b2nd")
    assert r.returncode == 2
    assert "expected" in r.stderr and "input ends early" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy"]


def test_failed_output_keeps_the_old_file(cli, tmp_path: Path) -> None:
    (tmp_path / "out.b2frame").write_bytes(b"old")
    (tmp_path / "in.bin").write_bytes(bytes(10))
    r = cli("compress", "in.bin", "out.b2frame", "--typesize", "3")
    assert r.returncode == 2 and "out.b2frame" not in r.stderr.split(":")[1]
    assert (tmp_path / "out.b2frame").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.bin", "out.b2frame"]


def test_raw_stdin_to_b2nd_and_frame_from_stdin(cli, tmp_path: Path, c_b2frame: Path) -> None:
    raw = np.arange(5000, dtype=np.uint16).tobytes()
    r = cli("compress", "-", "r.b2nd", "--dtype", "u2", stdin=raw)  # spooled: needs the shape
    assert r.returncode == 0, r.stderr
    back = pyblosc2.open(str(tmp_path / "r.b2nd"))
    assert back.shape == (5000,) and back[:].tobytes() == raw
    r = cli("decompress", "-", "-", stdin=c_b2frame.read_bytes())  # a frame on stdin
    assert r.returncode == 0 and r.raw == pyblosc2.open(str(c_b2frame))[:]


# -- the codecs offered (issue 23): what pyblosc2 writes and C-Blosc2 reads ---------------------


def test_offered_codecs_are_those_c_blosc2_reads() -> None:
    from pyblosc2.cli.main import CODECS, SNAPPY, build_parser

    assert sorted(CODECS) == ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
    compress = build_parser()._subparsers._group_actions[0].choices["compress"]  # type: ignore[union-attr]
    [codec] = [a for a in compress._actions if a.dest == "codec"]
    assert list(codec.choices) == [*CODECS, SNAPPY]  # snappy: only with --allow-snappy
    help_text = compress.format_help()
    for plugin in ("ndlz", "zfp_acc", "zfp_prec", "zfp_rate", "openhtj2k", "grok", "openzl"):
        assert plugin not in help_text
    assert "j2k" not in help_text.replace("openhtj2k", "")


@pytest.mark.parametrize("fmt", ["b2nd", "b2frame"])
@pytest.mark.parametrize("codec", ["zstd", "lz4", "lz4hc", "blosclz", "zlib"])
def test_every_offered_codec_writes_what_python_blosc2_reads(
    cli, tmp_path: Path, cblosc2: ModuleType, codec: str, fmt: str
) -> None:
    arr = np.linspace(0, 100, 30_000).reshape(300, 100)
    (tmp_path / "in.npy").write_bytes(_npy(arr))
    r = cli("compress", "in.npy", f"out.{fmt}", "--codec", codec)
    assert r.returncode == 0, r.stderr
    back = cblosc2.open(str(tmp_path / f"out.{fmt}"))
    got = back[:] if fmt == "b2nd" else np.frombuffer(back[:], arr.dtype).reshape(arr.shape)
    np.testing.assert_array_equal(got, arr)
    cparams = back.schunk.cparams if fmt == "b2nd" else back.cparams
    assert cparams.codec.name.lower() == codec


def test_snappy_needs_its_flag_and_c_blosc2_cannot_read_it(
    cli, tmp_path: Path, cblosc2: ModuleType
) -> None:
    arr = np.arange(10_000, dtype=np.int32)
    (tmp_path / "in.npy").write_bytes(_npy(arr))
    r = cli("compress", "in.npy", "s.b2frame", "--codec", "snappy")
    assert r.returncode == 2 and not (tmp_path / "s.b2frame").exists()
    assert "C-Blosc2 (python-blosc2) cannot read; pass --allow-snappy" in r.stderr
    r = cli("compress", "in.npy", "s.b2frame", "--codec", "snappy", "--allow-snappy")
    assert r.returncode == 0, r.stderr
    ours = pyblosc2.open(str(tmp_path / "s.b2frame"))
    assert np.array_equal(np.frombuffer(ours[:], np.int32), arr)
    with pytest.raises(RuntimeError):  # what the flag's help says
        np.frombuffer(cblosc2.open(str(tmp_path / "s.b2frame"))[:], np.int32)
    help_text = " ".join(cli("compress", "--help").stdout.split())
    assert "--allow-snappy allow --codec snappy: pyblosc2 reads it back, but C-Blosc2" in help_text


def test_a_source_codec_c_cannot_read_is_not_inherited(cli, tmp_path: Path, cblosc2) -> None:
    arr = np.arange(10_000, dtype=np.int32)
    (tmp_path / "in.npy").write_bytes(_npy(arr))
    cli("compress", "in.npy", "s.b2nd", "--codec", "snappy", "--allow-snappy")
    r = cli("convert", "s.b2nd", "t.b2nd")  # no --codec: the source's, unless C cannot read it
    assert r.returncode == 0, r.stderr
    back = cblosc2.open(str(tmp_path / "t.b2nd"))
    np.testing.assert_array_equal(back[:], arr)
    assert back.schunk.cparams.codec == cblosc2.Codec.ZSTD
