"""``pyblosc2 verify``: exit 0 intact, 1 damaged (chunk indices printed), 2 unreadable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pyblosc2
from pyblosc2.cli.sources import frame_layout


def _flip(path: Path, pos: int, n: int) -> None:
    data = bytearray(path.read_bytes())
    data[pos : pos + n] = bytes(b ^ 0xFF for b in data[pos : pos + n])
    path.write_bytes(bytes(data))


def test_intact_files_exit_0_and_notes_are_printed_once(
    cli, c_b2nd: Path, c_b2frame: Path, fp_b2frame: Path
) -> None:
    r = cli("verify", c_b2nd.name, c_b2frame.name, fp_b2frame.name)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "c.b2nd: OK (3 chunks decoded)",
        "c.b2frame: OK (4 chunks decoded)",
        "fp.b2frame: OK (3 chunks decoded, fingerprint digests checked)",
        "note: no fingerprint in c.b2nd, c.b2frame: damage that still decodes (e.g. inside a "
        "zstd or lz4 stream) cannot be seen; files written with fingerprint=True can be "
        "checked fully",
    ]


def test_flipped_bytes_in_a_chunk_are_found_by_the_digests(cli, fp_b2frame: Path) -> None:
    offsets = frame_layout(pyblosc2.open(str(fp_b2frame))).offsets
    _flip(fp_b2frame, offsets[1] + 200, 16)  # inside chunk 1's zstd stream
    r = cli("verify", fp_b2frame.name)
    assert r.returncode == 1
    assert "DAMAGED (1 of 3 chunks damaged" in r.stdout
    assert "  chunk 1: " in r.stdout


def test_damaged_chunk_header_is_found_by_decoding(cli, c_b2frame: Path) -> None:
    offsets = frame_layout(pyblosc2.open(str(c_b2frame))).offsets
    _flip(c_b2frame, offsets[2] + 4, 2)  # chunk 2's nbytes
    r = cli("verify", c_b2frame.name)
    assert r.returncode == 1
    damaged = [ln for ln in r.stdout.splitlines() if ln.startswith("  chunk")]
    assert len(damaged) == 1 and damaged[0].startswith("  chunk 2: ")


@pytest.mark.parametrize("keep", [300, 30, 12, -1])
def test_truncated_frame_is_damaged_not_unreadable(
    cli, c_b2nd: Path, c_b2frame: Path, keep: int
) -> None:
    """A frame shorter than its header says (cut anywhere after the magic) exits 1."""
    data = c_b2nd.read_bytes()
    c_b2nd.write_bytes(data[:keep])
    r = cli("verify", c_b2nd.name, c_b2frame.name)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr == ""
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"c.b2nd: DAMAGED (truncated: the file has {len(data[:keep])} bytes")
    assert "c.b2frame: OK" in r.stdout


def test_truncated_sparse_frame_index_is_damaged(cli, tmp_path: Path) -> None:
    import numpy as np

    pyblosc2.asarray(np.arange(1000), urlpath=str(tmp_path / "s.b2nd"), contiguous=False)
    index = tmp_path / "s.b2nd" / "chunks.b2frame"
    index.write_bytes(index.read_bytes()[:-20])
    r = cli("verify", "s.b2nd")
    assert r.returncode == 1 and "DAMAGED (truncated" in r.stdout, r.stdout + r.stderr


def test_not_a_frame_and_missing_files_are_unreadable(cli, tmp_path: Path) -> None:
    (tmp_path / "text.b2frame").write_bytes(b"hello, not a frame" * 10)
    r = cli("verify", "text.b2frame", "missing.b2nd")
    assert r.returncode == 2
    assert r.stdout == "" and len(r.stderr.splitlines()) == 2


def test_exit_statuses_are_documented(cli) -> None:
    text = " ".join(cli("verify", "--help").stdout.split())
    assert "exit status 0: every file intact, 1: a file damaged" in text
    assert "truncated" in text and "2: a file unreadable" in text


def test_single_chunk_files(cli, tmp_path: Path) -> None:
    import numpy as np

    good = pyblosc2.compress2(np.arange(5000, dtype=np.int32), typesize=4)
    (tmp_path / "good.chunk").write_bytes(good)
    bad = bytearray(good)
    bad[16:20] = b"\xff\xff\xff\x7f"  # first bstart points past the chunk
    (tmp_path / "bad.chunk").write_bytes(bytes(bad))
    r = cli("verify", "good.chunk", "bad.chunk")
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines()[0] == "good.chunk: OK (1 chunk decoded)"
    assert r.stdout.splitlines()[2].startswith("  chunk 0: ")


def test_debug_shows_the_traceback(cli, tmp_path: Path) -> None:
    (tmp_path / "junk.b2frame").write_bytes(b"\x00" * 200)
    quiet = cli("verify", "junk.b2frame")
    loud = cli("verify", "--debug", "junk.b2frame")
    assert quiet.returncode == loud.returncode == 2
    assert "Traceback" not in quiet.stderr and len(quiet.stderr.splitlines()) == 1
    assert "Traceback" in loud.stderr
    assert loud.stderr.splitlines()[-1] == quiet.stderr.strip()


def test_stale_digests_after_a_c_blosc2_append_are_not_damage(cli, fp_b2frame, cblosc2) -> None:
    import numpy as np

    c = cblosc2.open(str(fp_b2frame), mode="a")  # C keeps the digest list, resets the trailer
    c.append_data(np.arange(10_000, dtype=np.int32))
    del c
    r = cli("verify", fp_b2frame.name)
    assert r.returncode == 0, r.stdout
    assert r.stdout.splitlines()[0] == "fp.b2frame: OK (4 chunks decoded)"
    assert "digests of fp.b2frame are stale" in r.stdout
    [d] = json.loads(cli("info", "--json", fp_b2frame.name).stdout)
    assert d["fingerprint"].startswith("stale")
