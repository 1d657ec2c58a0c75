"""Real parts for the remote tests, all on 127.0.0.1 and started here: an HTTP server that
honours ``Range`` and ``If-Match``, counts requests and bytes, and injects faults, and can
behave as other servers do (``mode``: refusing suffix ranges, refusing every range, or
ignoring ``Range`` and sending whole bodies); an S3 endpoint (moto's server mode) for s3fs.
fsspec's ``memory://`` needs no server."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import _reference

# A server that stops answering must fail a test quickly, never hang it.
HTTP_OPTIONS: dict[str, Any] = {}
#: seconds the figures (``counts``) and ``reset`` wait for answers to end before failing: a
#: bound for a hung handler, not a timing the tests rely on (answers end in milliseconds)
SETTLE_S = 60.0
#: seconds a stalled answer waits at most (``reset`` ends it at once)
STALL_S = 120.0


@dataclass
class Fault:
    """What the server does to the next ``times`` matching requests."""

    kind: str  # "404", "500", "truncate", "drop", "stall"
    times: int = 1_000_000
    methods: tuple[str, ...] = ("GET",)


@dataclass
class Counts:
    gets: int = 0
    heads: int = 0
    inflight: int = 0
    max_inflight: int = 0
    bytes_sent: int = 0
    ranges: list[tuple[str, int, int]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # Range headers answered with 400
    whole_bodies: int = 0  # 200 answers whose whole body was written
    partial_bytes: int = 0  # bytes of bodies the client dropped before their end


def parse_range(header: str, size: int) -> tuple[int, int]:
    """``[start, end)`` of a single ``bytes=a-b``, ``bytes=a-`` or suffix ``bytes=-n`` range."""
    a, _, b = header.removeprefix("bytes=").partition("-")
    if not a:
        return max(0, size - int(b)), size
    return int(a), min(size, int(b) + 1 if b else size)


class RangeServer:
    """Serves the files of ``root`` at ``http://127.0.0.1:<port>/<name>``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._counts = Counts()
        self.faults: dict[str, Fault] = {}
        #: each GET waits until this many requests are in flight (at most :data:`SETTLE_S`):
        #: requests sent together overlap however slowly they arrive, one sent alone waits
        self.overlap = 0
        #: "ranges" (RFC 9110), "no-suffix" (400 to ``bytes=-n``, as RangeHTTPServer),
        #: "refuse-ranges" (400 to any Range), "no-ranges" (Range ignored: 200, whole body)
        self.mode = "ranges"
        self.lock = threading.Lock()
        #: notified whenever an answer starts or ends (``counts``, ``reset`` and ``overlap``
        #: wait on it)
        self.answered = threading.Condition(self.lock)
        #: the answers being sent: connection -> "GET name Range" (``reset`` cuts them off)
        self.in_flight: dict[socket.socket, str] = {}
        #: set by ``reset``: a stalled answer of the previous test ends there
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                server.handle(self, head=True)

            def do_GET(self) -> None:
                server.handle(self, head=False)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def counts(self) -> Counts:
        """The figures once every answer being sent is accounted: a client may hold the
        last bytes of an answer before the handler thread adds them up. Waits on the
        handlers (not on a clock); an answer still unsent after :data:`SETTLE_S` fails the
        test, naming it."""
        with self.answered:
            if not self.answered.wait_for(lambda: not self.in_flight, SETTLE_S):
                raise AssertionError(
                    f"the test server still sends {sorted(self.in_flight.values())} after "
                    f"{SETTLE_S} s"
                )
            return self._counts

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def reset(self) -> None:
        """A clean server for the next test: the answers the last one left (stalled, or sent
        to a client that stopped reading) are cut off and end before the figures restart, so
        that none of them adds to the next test's figures."""
        with self.answered:
            self.release.set()
            for conn in self.in_flight:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
            if not self.answered.wait_for(lambda: not self.in_flight, SETTLE_S):
                raise AssertionError(
                    f"answers of the last test still running after {SETTLE_S} s: "
                    f"{sorted(self.in_flight.values())}"
                )
            self.release = threading.Event()
            self._counts = Counts()
            self.faults.clear()
            self.overlap = 0
            self.mode = "ranges"

    def _fault(self, name: str, method: str) -> str | None:
        with self.lock:
            f = self.faults.get(name)
            if f is None or method not in f.methods or f.times <= 0:
                return None
            f.times -= 1
            return f.kind

    def handle(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        """Answer one request; its figures go to the ``Counts`` of the test it came in (a
        ``reset`` meanwhile starts new ones) and are added up before ``counts`` returns."""
        what = f"{'HEAD' if head else 'GET'} {h.path} {h.headers.get('Range', '')}".strip()
        with self.lock:
            counts, release = self._counts, self.release
            counts.inflight += 1
            counts.max_inflight = max(counts.max_inflight, counts.inflight)
            self.in_flight[h.connection] = what
            self.answered.notify_all()
        try:
            self._handle(h, head, counts, release)
        finally:
            with self.answered:
                counts.inflight -= 1
                del self.in_flight[h.connection]
                self.answered.notify_all()

    def _handle(
        self, h: BaseHTTPRequestHandler, head: bool, counts: Counts, release: threading.Event
    ) -> None:
        name = h.path.lstrip("/").split("?")[0]
        method = "HEAD" if head else "GET"
        if self.overlap and not head:
            with self.answered:
                self.answered.wait_for(lambda: counts.inflight >= self.overlap, SETTLE_S)
        with self.lock:
            if head:
                counts.heads += 1
            else:
                counts.gets += 1
        fault = self._fault(name, method)
        path = os.path.join(self.root, name)
        if fault == "drop":
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault == "stall":  # until the test ends (reset) or the server closes
            release.wait(STALL_S)
            return
        if fault in ("404", "500") or not os.path.isfile(path):
            code = 500 if fault == "500" else 404
            h.send_response(code)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        st = os.stat(path)
        etag = f'"{st.st_size:x}-{st.st_mtime_ns:x}"'
        match = h.headers.get("If-Match")
        if match is not None and match != etag:
            h.send_response(412)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        size = st.st_size
        start, end = 0, size
        rng = h.headers.get("Range")
        if rng and self.mode == "no-ranges":
            rng = None
        elif (
            rng
            and (self.mode == "refuse-ranges" or rng.startswith("bytes=-"))
            and (self.mode != "ranges")
        ):
            with self.lock:
                counts.refused.append(rng)
            h.send_response(400)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if rng:
            start, end = parse_range(rng, size)
        h.send_response(206 if rng else 200)
        if self.mode != "no-ranges":
            h.send_header("Accept-Ranges", "bytes")
        h.send_header("ETag", etag)
        h.send_header("Content-Length", str(end - start))
        if rng:
            h.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        h.end_headers()
        if head:
            return
        if fault == "truncate":
            end = start + (end - start) // 2
            h.close_connection = True
        sent = 0
        try:
            with open(path, "rb") as f:
                f.seek(start)
                while sent < end - start:  # in pieces: a dropped answer stops early
                    piece = f.read(min(1 << 20, end - start - sent))
                    h.wfile.write(piece)
                    sent += len(piece)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True
            with self.lock:
                counts.partial_bytes += sent
            return
        with self.lock:
            counts.bytes_sent += sent
            counts.ranges.append((name, start, end))
            counts.whole_bodies += not rng
        if fault == "truncate":
            h.connection.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.reset()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RangeServer]:
    _reference("fsspec")
    _reference("aiohttp")
    server = RangeServer(str(tmp_path_factory.mktemp("www")))
    yield server
    server.close()


@pytest.fixture
def http(http_server: RangeServer) -> Iterator[RangeServer]:
    http_server.reset()
    yield http_server
    http_server.reset()


@pytest.fixture(scope="session")
def s3_options() -> Iterator[dict[str, Any]]:
    """storage_options of s3fs for a moto S3 server on 127.0.0.1 (bucket ``test``)."""
    _reference("s3fs")
    _reference("moto")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": f"http://{host}:{port}"},
        "skip_instance_cache": True,
    }
    import s3fs

    s3fs.S3FileSystem(**options).mkdir("test")
    yield options
    server.stop()
