"""Child process of the hostile-file tests: ``python hostile_child.py LIB ACTION PATH``.

Imports LIB (``pyblosc2`` or ``blosc2``), then limits itself — address space to what it
maps now plus :data:`MEMORY_MIB`, CPU time to what it used so far plus :data:`CPU_S` — and
prints ``ready``; the parent starts its clock there. It then does ACTION on the file at PATH
and prints one JSON line: the exception (class names along its MRO, message) or the result,
and the growth of its peak RSS. A hang is the parent's timeout, a crash the exit signal, an
allocation past the limit a ``MemoryError``.

Actions: ``open``; ``open-mmap`` / ``open-cow`` (``mmap_mode`` "r" / "c"); ``meta:NAME`` and
``vlmeta:NAME`` (one value); ``values`` (every vlmeta value, through iteration); ``info``
(pyblosc2's CLI ``info``, its text output as the result); ``read`` (chunk 0); ``verify``;
``small-stack:NAME`` (vlmeta NAME decoded in a thread with a 256 KiB stack); for stores and
tables ``treestore:MODE`` (the keys of ``TreeStore(PATH, mode=MODE)``), ``dictstore-a:KEY``
(leaf KEY of ``DictStore(PATH, mode="a")``), ``keys`` and ``get:KEY`` (of what ``open``
returns), ``ctable-open`` (the length of ``CTable.open(PATH)``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import threading
from typing import Any

MEMORY_MIB = 100
CPU_S = 5  # the action's CPU seconds (a first call of a numba kernel compiles it)
SMALL_STACK = 256 * 1024


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _rss_peak() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _small_stack(fn: Any) -> Any:
    threading.stack_size(SMALL_STACK)
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:
            out["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def act(lib: Any, action: str, path: str) -> Any:
    verb, _, name = action.partition(":")
    if verb == "open":
        return lib.open(path)
    if verb == "open-mmap":
        return lib.open(path, mmap_mode="r")
    if verb == "open-cow":
        return lib.open(path, mmap_mode="c")
    if verb == "treestore":
        with lib.TreeStore(path, mode=name) as t:
            return sorted(t.keys())
    if verb == "dictstore-a":
        with lib.DictStore(path, mode="a") as d:
            return d[name][:]
    if verb == "ctable-open":
        return len(lib.CTable.open(path))
    s = lib.open(path)
    if verb == "keys":
        return sorted(s.keys())
    if verb == "get":
        return s[name][:]
    if verb == "meta":
        return s.meta[name]
    if verb == "vlmeta":
        return s.vlmeta[name]
    if verb == "values":
        return [v for _, v in s.vlmeta.items()]
    if verb == "read":
        return s.decompress_chunk(0)
    if verb == "verify":
        return s.verify()
    if verb == "small-stack":
        return _small_stack(lambda: s.vlmeta[name])
    raise ValueError(f"unknown action {action}")


def main(lib_name: str, action: str, path: str) -> None:
    if lib_name == "pyblosc2":
        import numpy as np

        import pyblosc2 as lib
        from pyblosc2.cli.main import main as cli_main
        from pyblosc2.kernels import wait_for_kernels
        from pyblosc2.meta import pack_vlmeta, unpack_vlmeta

        # lazy imports (codecs, numpy's np.unique helpers) happen before the clock starts, and
        # the kernel set's background load (numba's import and warm-up: ~0.6 s of CPU and
        # hundreds of MiB of address space, which the limits below would count against the
        # action, so that a slower machine's child was killed by SIGXCPU before it answered)
        wait_for_kernels()
        unpack_vlmeta(pack_vlmeta([1]))
        np.unique(np.arange(3))
        if path.startswith("local://"):
            from pyblosc2.backends.fsspec import connect

            connect(path)
    else:
        import blosc2 as lib  # type: ignore[no-redef]

        cli_main = None
    limit = _vm_bytes() + MEMORY_MIB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime) + 1 + CPU_S
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak RSS restarts from the current RSS (Linux >= 4.0)
    rss0 = _rss_peak()
    print("ready", flush=True)
    report: dict[str, Any] = {"error": None}
    try:
        if action == "info":
            if cli_main is None:
                raise NotImplementedError("python-blosc2 has no info command")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = cli_main(["info", path])
            report["result"] = f"exit {code}: {out.getvalue()}"
        else:
            report["result"] = repr(act(lib, action, path))[:300]
    except BaseException as exc:
        report["error"] = [c.__name__ for c in type(exc).__mro__]
        report["message"] = str(exc)[:2000]
    report["rss_growth_mib"] = (_rss_peak() - rss0) / 2**20
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    os._exit(0)  # no interpreter teardown: the parent's clock measures the action


if __name__ == "__main__":
    main(*sys.argv[1:4])
