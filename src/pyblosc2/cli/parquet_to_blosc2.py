"""``python -m pyblosc2.cli.parquet_to_blosc2``: a Parquet file to a CTable store (``.b2z``
or ``.b2d``), or back with ``--export`` (python-blosc2's ``parquet_to_blosc2`` command,
``main(argv) -> int``). Needs the ``[arrow]`` extra (pyarrow).

Built: ``--export``, ``--parquet-batch-size``/``--batch-size``, ``--blosc2-batch-size``,
``--max-rows``, ``--fixed-str-maxlen``, ``--timestamp-unit`` (``auto`` too),
``--codec``/``--clevel``, ``--decode-dictionaries``, ``--[no-]separate-nested-cols``,
``--progress`` and ``--overwrite``. List columns are written with the msgpack serializer
(python-blosc2 defaults to ``arrow``, which pyblosc2 does not write); the other options of
python-blosc2's command (``--roundtrip``, ``--list-serializer arrow``, ``--use-dict``,
``--float-trunc-prec``, ``--chunks``, ``--blocks``, memory and profile reports, ...) raise
``NotImplementedError`` naming them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from ..constants import Codec
from ..ctable import CTable
from ..ctable.parquet_convert import export_parquet, import_parquet

__all__ = ["build_parser", "main"]

DEFAULT_BATCH_SIZE = 65536
_CODECS = ["ZSTD", "LZ4", "LZ4HC", "BLOSCLZ", "ZLIB"]
#: python-blosc2's options pyblosc2 does not build: (flag, argparse keywords)
_NOT_BUILT = [
    ("--roundtrip", {"action": "store_true"}),
    ("--fixed-bytes-maxlen", {"type": int}),
    ("--blosc2-items-per-block", {"type": int}),
    ("--use-dict", {"action": "store_true"}),
    ("--float-trunc-prec", {"action": "append"}),
    ("--chunks", {"type": int}),
    ("--blocks", {"type": int}),
    ("--reduce-mem", {"action": "store_true"}),
    ("--mem-report", {"action": "store_true"}),
    ("--mem-every", {"type": int}),
    ("--batch-report-every", {"type": int}),
    ("--profile", {"action": "store_true"}),
    ("--no-summary-index", {"action": "store_true"}),
]


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments (python-blosc2's names)."""
    p = argparse.ArgumentParser(prog="parquet_to_blosc2", description=__doc__.split("\n")[0])
    p.add_argument("--export", action="store_true", help="export a .b2z/.b2d to Parquet")
    p.add_argument("input_path", type=Path)
    p.add_argument("output_path", type=Path, nargs="?")
    p.add_argument("--parquet-batch-size", "--batch-size", type=int, default=None)
    p.add_argument("--blosc2-batch-size", type=int, default=None)
    p.add_argument("--max-rows", type=int, default=None)
    p.add_argument("--fixed-str-maxlen", type=int, default=None)
    p.add_argument("--list-serializer", choices=["msgpack", "arrow"], default="msgpack")
    p.add_argument("--timestamp-unit", choices=["s", "ms", "us", "ns", "auto"], default=None)
    p.add_argument("--codec", type=str.upper, default="ZSTD", choices=_CODECS)
    p.add_argument("--clevel", type=int, default=5)
    p.add_argument("--progress", action="store_true", help="print a line per Parquet batch")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--decode-dictionaries", action="store_true")
    p.add_argument(
        "--separate-nested-cols",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="flatten structs into dotted columns (and an unnamed list<struct> root to rows)",
    )
    for flag, kwargs in _NOT_BUILT:
        p.add_argument(flag, default=None, help=argparse.SUPPRESS, **kwargs)  # type: ignore[arg-type]
    return p


def _check_built(args: argparse.Namespace) -> None:
    for flag, _ in _NOT_BUILT:
        if getattr(args, flag.lstrip("-").replace("-", "_")) not in (None, False, []):
            raise NotImplementedError(f"parquet_to_blosc2 {flag} is not implemented by pyblosc2")
    if args.list_serializer == "arrow":
        raise NotImplementedError("parquet_to_blosc2 --list-serializer arrow (Arrow IPC lists)")


def _prepare(path: Path, overwrite: bool) -> None:
    if path.exists():
        if not overwrite:
            raise FileExistsError(f"{path} exists (use --overwrite)")
        shutil.rmtree(path) if path.is_dir() else path.unlink()


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 on success.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"x": [1, 2]}), os.path.join(d, "in.parquet"))
    >>> main([os.path.join(d, "in.parquet"), os.path.join(d, "out.b2z")])
    0
    """
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    _check_built(args)
    src: Path = args.input_path
    if args.export:
        out = args.output_path or src.with_suffix(".parquet")
        _prepare(out, args.overwrite)
        export_parquet(CTable, src, out, batch_size=args.parquet_batch_size or DEFAULT_BATCH_SIZE)
        return 0
    out = args.output_path or src.with_suffix(".b2z")
    _prepare(out, args.overwrite)
    parquet_batch = args.parquet_batch_size or args.blosc2_batch_size or DEFAULT_BATCH_SIZE
    table = import_parquet(
        CTable,
        src,
        out,
        parquet_batch_size=parquet_batch,
        blosc2_batch_size=args.blosc2_batch_size or parquet_batch,
        max_rows=args.max_rows,
        separate_nested_cols=args.separate_nested_cols,
        decode_dictionaries=args.decode_dictionaries,
        timestamp_unit=args.timestamp_unit,
        cparams={"codec": Codec[args.codec], "clevel": args.clevel},
        string_max_length=args.fixed_str_maxlen,
        progress=(lambda line: print(line, flush=True)) if args.progress else None,
    )
    table.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
