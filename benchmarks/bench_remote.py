"""Remote reads over HTTP: pyblosc2 ``open(url)`` beside python-blosc2 ``open(url, lazy=True)``
on the same ``.b2nd`` file, served from 127.0.0.1 by a server that honours ``Range``, counts
requests and bytes, and sleeps ``--latency`` seconds per request (a far-away server).

For each library and each step (open, a 10x10 slice, a one-chunk slab, a full read) it
reports requests, bytes sent and wall time; it prints a table with the pyblosc2 /
python-blosc2 ratios and writes the numbers as JSON.

    PYTHONPATH=src python benchmarks/bench_remote.py --latency 0.02 --json bench_remote.json
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

import pyblosc2


def parse_range(header: str, size: int) -> tuple[int, int]:
    """``[start, end)`` of a single ``bytes=a-b``, ``bytes=a-`` or suffix ``bytes=-n`` range."""
    a, _, b = header.removeprefix("bytes=").partition("-")
    if not a:
        return max(0, size - int(b)), size
    return int(a), min(size, int(b) + 1 if b else size)


class Server:
    """Serves ``root`` with Range support, counting GET/HEAD requests and body bytes."""

    def __init__(self, root: str, latency: float) -> None:
        self.root, self.latency = root, latency
        self.requests = self.bytes = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                outer.serve(self, head=True)

            def do_GET(self) -> None:
                outer.serve(self, head=False)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"

    def serve(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        time.sleep(self.latency)
        path = os.path.join(self.root, h.path.lstrip("/").split("?")[0])
        if not os.path.isfile(path):
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        st = os.stat(path)
        start, end = 0, st.st_size
        rng = h.headers.get("Range")
        if rng:
            start, end = parse_range(rng, st.st_size)
        h.send_response(206 if rng else 200)
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("ETag", f'"{st.st_size:x}-{st.st_mtime_ns:x}"')
        h.send_header("Content-Length", str(end - start))
        if rng:
            h.send_header("Content-Range", f"bytes {start}-{end - 1}/{st.st_size}")
        h.end_headers()
        body = b""
        if not head:
            with open(path, "rb") as f:
                f.seek(start)
                body = f.read(end - start)
            h.wfile.write(body)
        with self.lock:
            self.requests += 1
            self.bytes += len(body)

    def snapshot(self) -> tuple[int, int]:
        with self.lock:
            return self.requests, self.bytes


def measure(server: Server, fn: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    r0, b0 = server.snapshot()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    r1, b1 = server.snapshot()
    return out, {"requests": r1 - r0, "bytes": b1 - b0, "seconds": dt}


def run(lib: Any, url: str, server: Server, x: np.ndarray, chunks: tuple[int, ...]) -> dict:
    kwargs = {"lazy": True}
    a, res_open = measure(server, lambda: lib.open(url, **kwargs))
    steps = {"open": res_open}
    cases = {
        "slice 10x10": (slice(500, 510), slice(300, 310)),
        "one-chunk slab": (slice(chunks[0], 2 * chunks[0]), slice(None)),
        "full read": (slice(None), slice(None)),
    }
    for name, key in cases.items():
        got, res = measure(server, lambda key=key: a[key])
        np.testing.assert_array_equal(got, x[key])
        steps[name] = res
    return steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.02, help="seconds per request")
    ap.add_argument("--shape", type=int, nargs=2, default=(2000, 2000))
    ap.add_argument("--chunks", type=int, nargs=2, default=(250, 2000))
    ap.add_argument("--blocks", type=int, nargs=2, default=(25, 200))
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    import blosc2

    root = tempfile.mkdtemp()
    x = np.round(np.random.default_rng(0).random(tuple(args.shape)), 3)
    chunks, blocks = tuple(args.chunks), tuple(args.blocks)
    pyblosc2.asarray(x, chunks=chunks, blocks=blocks, urlpath=os.path.join(root, "a.b2nd"))
    size = os.path.getsize(os.path.join(root, "a.b2nd"))
    pyblosc2.asarray(np.arange(10.0), urlpath=os.path.join(root, "warm.b2nd"))
    server = Server(root, args.latency)
    url = server.url("a.b2nd")
    for lib in (pyblosc2, blosc2):  # imports and HTTP sessions are not what is measured
        lib.open(server.url("warm.b2nd"), lazy=True)[...]
    results = {
        "pyblosc2": run(pyblosc2, url, server, x, chunks),
        "python-blosc2": run(blosc2, url, server, x, chunks),
    }
    print(
        f"# {url}: shape {tuple(args.shape)} float64, chunks {chunks}, blocks {blocks}, "
        f"{size / 1e6:.1f} MB stored, {args.latency * 1000:.0f} ms per request "
        f"(python-blosc2 {blosc2.__version__})"
    )
    print(
        f"{'step':<16}{'requests':>18}{'KB sent':>24}{'ms':>22}\n"
        f"{'':<16}{'pyb2 / blosc2':>18}{'pyb2 / blosc2':>24}{'pyb2 / blosc2 (ratio)':>22}"
    )
    for step in results["pyblosc2"]:
        p, c = results["pyblosc2"][step], results["python-blosc2"][step]
        ratio = p["seconds"] / c["seconds"] if c["seconds"] else float("nan")
        print(
            f"{step:<16}{p['requests']:>9} /{c['requests']:>6}"
            f"{p['bytes'] / 1024:>14.1f} /{c['bytes'] / 1024:>8.1f}"
            f"{p['seconds'] * 1e3:>8.0f} /{c['seconds'] * 1e3:>5.0f} ({ratio:.2f})"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "stored_bytes": size, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
