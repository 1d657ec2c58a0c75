"""``pyblosc2``: argument parsing, dispatch, error reporting and exit statuses.

Exit status: 0 success (``verify``: intact), 1 ``verify`` found damage, 2 an error (bad
arguments, unreadable input, failed write). Errors print as one line, ``pyblosc2: error:
<file>: <message>``; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import textwrap
from typing import Any

import numpy as np

import pyblosc2

from ..errors import ParamError
from . import convert, hdf5_info, info, slicing, xarray_store
from . import stores as store_cli
from . import verify as verify_mod
from .codec_io import compress_input, fill_defaults, source_array, write_array
from .outputs import atomic_output
from .sources import CliError, about, open_source

__all__ = ["build_parser", "main"]

PROG = "pyblosc2"
#: the codecs offered: what pyblosc2 writes and C-Blosc2 (python-blosc2) reads
CODECS = ["zstd", "lz4", "lz4hc", "blosclz", "zlib"]
#: written only with --allow-snappy: C-Blosc2 cannot read it
SNAPPY = "snappy"
FILTERS = ["nofilter", "shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta", "int_trunc"]

EXAMPLES = {
    "info": """\
        pyblosc2 info data.b2nd                  # shape, dtype, codec, ratio, metadata
        pyblosc2 info --chunks data.b2frame      # plus one row per chunk
        pyblosc2 info --json *.b2nd | jq '.[0].ratio'
        pyblosc2 info --plot ratio.png data.b2nd
        pyblosc2 info bundle.b2z                 # a store: one row per array it holds
        pyblosc2 info data.h5                    # HDF5: every dataset, its Blosc filter
        pyblosc2 info weather.b2:t2m             # a variable of an xarray-blosc2 store""",
    "verify": """\
        pyblosc2 verify data.b2nd other.b2frame  # exit 0 intact, 1 damaged (also truncated),
                                                 # 2 unreadable (not a frame, missing)
        pyblosc2 verify bundle.b2z               # every array of a store
        pyblosc2 verify data.h5:/g/temp          # every stored chunk of an HDF5 dataset""",
    "compress": """\
        pyblosc2 compress table.npy table.b2nd --codec lz4 --chunks 1000,100
        pyblosc2 compress raw.bin raw.b2frame --typesize 8 --filter bitshuffle
        producer | pyblosc2 compress - out.b2frame""",
    "decompress": """\
        pyblosc2 decompress table.b2nd table.npy
        pyblosc2 decompress raw.b2frame - | consumer""",
    "convert": """\
        pyblosc2 convert data.b2nd data.zarr            # zarr v3 with the blosc codec
        pyblosc2 convert data.zarr data.b2nd --chunks 100,100
        pyblosc2 convert old.b2nd new.b2nd --codec zstd --clevel 9 --filter bitshuffle
        pyblosc2 convert bundle.b2z bundle.b2d          # a store's zip form <-> directory form
        pyblosc2 convert data.h5:/g/temp temp.b2nd      # an HDF5 dataset (no plugin needed)
        pyblosc2 convert weather.b2z:t2m t2m.b2nd       # an xarray-blosc2 store's variable""",
    "slice": """\
        pyblosc2 slice data.b2nd "[0:10, ::2, 5]"
        pyblosc2 slice data.b2nd "[-1]" --out last.npy
        pyblosc2 slice raw.b2frame "[100:110]" --dtype float64""",
}


def _container(path: str) -> Any:
    """The module describing and verifying ``path`` when it is not a frame: an HDF5 file or
    dataset, an xarray-blosc2 store (told by content first: it may be a zip or a directory
    like a python-blosc2 store) or a python-blosc2 store; None for frames and chunk files."""
    for kind in (hdf5_info, xarray_store, store_cli):
        if kind.handles(path):
            return kind
    return None


def _epilog(cmd: str) -> str:
    return "examples:\n" + textwrap.dedent(EXAMPLES[cmd])


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress (shown only on a terminal)"
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks of errors")


def _compression(p: argparse.ArgumentParser, defaults: str) -> None:
    g = p.add_argument_group(f"compression (defaults: {defaults})")
    g.add_argument(
        "--codec",
        choices=[*CODECS, SNAPPY],
        metavar="{" + ",".join(CODECS) + "}",
        help="every one is read by C-Blosc2 and python-blosc2",
    )
    g.add_argument(
        "--allow-snappy",
        action="store_true",
        help="allow --codec snappy: pyblosc2 reads it back, but C-Blosc2 (python-blosc2) "
        "cannot read it, nor can the C-Blosc 1.x of numcodecs/zarr",
    )
    g.add_argument("--clevel", type=int, metavar="0-9")
    g.add_argument(
        "--filter",
        action="append",
        choices=FILTERS,
        help="a filter of the pipeline (repeat for several, in order)",
    )
    g.add_argument("--typesize", type=int, help="bytes per item (.b2frame; default: the dtype's)")
    g.add_argument("--chunks", help="chunk shape in items, e.g. 1000,100 (.b2frame: one number)")
    g.add_argument("--blocks", help="block shape in items, e.g. 100,100")
    g.add_argument("--nthreads", type=int)
    g.add_argument(
        "--fingerprint",
        action="store_true",
        help="store per-chunk digests that `pyblosc2 verify` checks",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Inspect, verify, compress, convert and slice Blosc2 files.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(f"{c}:\n" + textwrap.dedent(EXAMPLES[c]) for c in EXAMPLES)
        + "\n\nRun `pyblosc2 COMMAND --help` for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {pyblosc2.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help,
            description=help,
            epilog=_epilog(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _common(p)
        return p

    p = command(
        "info",
        "describe frames (.b2frame/.b2nd), chunk files, stores (.b2z/.b2d), HDF5 files and "
        "xarray-blosc2 stores",
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--chunks", action="store_true", help="add a table with one row per chunk")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per file")
    p.add_argument("--plot", metavar="OUT.png", help="draw the compression ratio per chunk")
    p.add_argument("--axes", default="0,1", help="the two axes of an N-d plot (default 0,1)")

    p = command(
        "verify",
        "decode every chunk and check fingerprint digests; exit status 0: every file intact, "
        "1: a file damaged (a chunk that does not decode or whose digest differs, or a frame "
        "shorter than its header says: truncated), 2: a file unreadable (not a frame or chunk "
        "file, or missing)",
    )
    p.add_argument("paths", nargs="+", metavar="PATH")

    p = command("compress", "raw bytes or .npy (- for stdin) to .b2frame or .b2nd")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--dtype", help="item type of raw input (default: unsigned ints of typesize)")
    p.add_argument(
        "--format",
        choices=["b2frame", "b2nd"],
        help="output format (default: from OUT's extension, else b2frame)",
    )
    _compression(p, "zstd, clevel 5, shuffle")

    p = command("decompress", "a .b2frame, .b2nd or chunk file to raw bytes or .npy")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--dtype", help="item type of an SChunk's items in .npy output")
    p.add_argument(
        "--format",
        choices=["raw", "npy"],
        help="output format (default: npy if OUT ends in .npy, else raw)",
    )

    p = command("convert", "between .b2nd, .b2frame, .npy and zarr v3 stores")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--dtype", help="item type of an SChunk's items")
    p.add_argument(
        "--format",
        choices=[*convert.FORMATS, "b2z", "b2d"],
        help="output format (default: from OUT's extension)",
    )
    _compression(p, "the input's, else zstd, clevel 5, shuffle")

    p = command("slice", "print (or save) a slice, reading only what it needs")
    p.add_argument("path", metavar="PATH")
    p.add_argument("index", metavar="INDEX", help='numpy-style index, e.g. "[0:10, ::2, 5]"')
    p.add_argument("--out", metavar="OUT.npy", help="save the slice as .npy instead")
    p.add_argument(
        "--dtype",
        help="item type of an SChunk's or chunk's items, e.g. float64 (they record only their "
        "typesize: without it they show as unsigned ints of that size); an NDArray uses the "
        "dtype it records",
    )
    return parser


# -- commands ------------------------------------------------------------------------------
def run_info(args: Any, stack: contextlib.ExitStack) -> int:
    with about("--axes"):
        axes = tuple(int(a) for a in args.axes.split(","))
        if len(axes) != 2:
            raise ParamError(f"need two axes like 0,1, got {args.axes!r}")
    if args.plot and len(args.paths) > 1:
        raise CliError(args.plot, "--plot draws one file: give a single PATH")
    status, found = 0, []
    for path in args.paths:
        try:
            kind = _container(path)
            if kind is not None:  # HDF5, an xarray-blosc2 store, a store: one row per array
                d = kind.describe(path, chunks=args.chunks)
                found.append(d)
                if not args.json:
                    print(kind.format_text(d))
                continue
            source = open_source(path, stack)
            with about(path):
                d = info.describe(source, chunks=args.chunks, show_progress=not args.quiet)
                if args.plot:
                    from .plot import plot_ratios

                    with about(args.plot), atomic_output(args.plot) as tmp:
                        plot_ratios(source, tmp, (axes[0], axes[1]))
        except CliError as exc:
            _report(exc, args)
            status = 2
            continue
        found.append(d)
        if not args.json:
            print(info.format_text(d))
    if args.json:
        print(json.dumps(found, indent=2))
    return status


def run_verify(args: Any, stack: contextlib.ExitStack) -> int:
    status, reports = 0, []
    for path in args.paths:
        try:
            kind = _container(path)
            if kind is not None:  # every dataset, variable or leaf
                lines, found = kind.verify(path, show_progress=not args.quiet)
                print("\n".join(lines))
                status = max(status, found)
                continue
            source = open_source(path, stack)
            with about(path):
                report = verify_mod.verify(source, show_progress=not args.quiet)
        except CliError as exc:
            cut = verify_mod.truncation(path) if path != "-" else None
            if cut is None:
                _report(exc, args)
                status = 2
                continue
            report = verify_mod.Report(path, truncated=cut)  # damaged, not unreadable
        print("\n".join(report.lines()))
        status = max(status, report.status)
        reports.append(report)
    for note in verify_mod.notes(reports):
        print(note)
    return status


def run_compress(args: Any, stack: contextlib.ExitStack) -> int:
    fmt = args.format or ("b2nd" if args.output.endswith(".b2nd") else "b2frame")
    args.format = fmt
    with about("--codec"):
        fill_defaults(args, None)
    with about(args.input):
        src = compress_input(args, stack, need_shape=fmt == "b2nd")
    with about(args.output), atomic_output(args.output) as tmp:
        write_array(src, tmp, args)
    return 0


def run_decompress(args: Any, stack: contextlib.ExitStack) -> int:
    source = open_source(args.input, stack)
    src = source_array(source, args.dtype)
    args.format = args.format or ("npy" if args.output.endswith(".npy") else "raw")
    with about(args.output), atomic_output(args.output) as tmp:
        write_array(src, tmp, args)
    return 0


def run_convert(args: Any, stack: contextlib.ExitStack) -> int:
    if store_cli.handles(args.input):  # .b2z <-> .b2d
        return store_cli.convert(args)
    convert.run_convert(args, stack)
    return 0


def run_slice(args: Any, stack: contextlib.ExitStack) -> int:
    source = open_source(args.path, stack)
    with about(args.path):
        key = slicing.parse_index(args.index)
        result = slicing.read_slice(source.kind, source.obj, key, args.dtype)
    if source.kind != "ndarray" and args.dtype is None:
        print(slicing.raw_items_note(source.kind, result.dtype), file=sys.stderr)
    if args.out:
        with about(args.out), atomic_output(args.out) as tmp, open(tmp, "wb") as f:
            np.save(f, result)
        return 0
    with np.printoptions(threshold=1000):
        print(
            np.array2string(np.asarray(result), separator=", ")
            if result.ndim
            else repr(result.item())
        )
    return 0


COMMANDS = {
    "info": run_info,
    "verify": run_verify,
    "compress": run_compress,
    "decompress": run_decompress,
    "convert": run_convert,
    "slice": run_slice,
}


def _report(exc: CliError, args: Any) -> None:
    if getattr(args, "debug", False):
        import traceback

        traceback.print_exception(exc.__cause__ or exc)
    print(f"{PROG}: error: {exc.path}: {exc.message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run ``pyblosc2`` with ``argv``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with contextlib.ExitStack() as stack:
            return COMMANDS[args.command](args, stack)
    except CliError as exc:
        _report(exc, args)
        return 2
    except BrokenPipeError:  # e.g. `pyblosc2 decompress x - | head`
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
