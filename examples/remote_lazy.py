"""Read a remote file lazily: open a ``.b2nd`` at an HTTP URL and slice it; only the frame's
header, index and trailer and the blocks holding the slice are fetched (HTTP Range requests).

Given no URL, the script writes an array into a temporary directory and serves it itself from
127.0.0.1 (a small server that honours Range). Needs the ``remote`` extra (fsspec, aiohttp).

Run: python examples/remote_lazy.py [URL]    e.g. https://host/data.b2nd (or s3://, gs://...)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

import pyblosc2 as blosc2


class RangeHandler(SimpleHTTPRequestHandler):
    """Serves files with ``Range: bytes=a-b`` (and suffix ``bytes=-n``) answered by 206."""

    def log_message(self, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        rng = self.headers.get("Range")
        path = self.translate_path(self.path)
        if not rng or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        first, _, last = rng.removeprefix("bytes=").partition("-")
        start = size - int(last) if not first else int(first)
        end = size - 1 if not first or not last else min(int(last), size - 1)
        f = open(path, "rb")  # noqa: SIM115 (closed by copyfile's caller)
        f.seek(max(0, start))
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {max(0, start)}-{end}/{size}")
        self.send_header("Content-Length", str(end - max(0, start) + 1))
        self.end_headers()
        self.range_left = end - max(0, start) + 1
        return f

    def copyfile(self, source: Any, outputfile: Any) -> None:
        left = getattr(self, "range_left", None)
        if left is None:
            return super().copyfile(source, outputfile)
        outputfile.write(source.read(left))
        return None


def serve_example() -> tuple[str, ThreadingHTTPServer]:
    """Write an example array and serve its directory on 127.0.0.1; returns its URL."""
    root = tempfile.mkdtemp(prefix="pyblosc2-remote-")
    x = np.arange(2000 * 2000, dtype=np.int32).reshape(2000, 2000)
    blosc2.asarray(x, urlpath=os.path.join(root, "data.b2nd"), mode="w",
                   chunks=(500, 2000), blocks=(50, 200))  # fmt: skip

    def handler(*a: Any, **k: Any) -> RangeHandler:
        return RangeHandler(*a, directory=root, **k)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/data.b2nd", httpd


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", help="a .b2nd URL (default: a local example)")
    args = parser.parse_args(argv)
    httpd = None
    url = args.url
    if url is None:
        url, httpd = serve_example()
    try:
        a = blosc2.open(url)  # one round trip: the frame's head and tail
        assert isinstance(a, blosc2.NDArray)
        print(f"{url}: {a.shape} {a.dtype}, chunks {a.chunks}, blocks {a.blocks}")
        print(f"opened: {a.schunk.bytes_read:,} bytes read of {a.schunk.cbytes:,}")
        part = a[1234:1237, 500:504]  # fetches the chunk header, block starts and 1 block
        print(f"a[1234:1237, 500:504] =\n{part}")
        print(f"after the slice: {a.schunk.bytes_read:,} bytes read of {a.schunk.cbytes:,}")
    finally:
        if httpd is not None:
            httpd.shutdown()


if __name__ == "__main__":
    main()
