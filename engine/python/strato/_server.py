# JSON over http.server: the request-handler base shared by the load-balanced server and the local handler
# test server (keep-alive, whole-body reads, JSON answers, http.server's own errors as JSON, quiet logs).
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import _log as log
from ._invoke import error_text, output_json


class Page(str):
    """An HTML page an answer sends as it is, in place of a JSON payload (the local test server's /docs)."""


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    server_version = "strato"
    sys_version = ""

    def setup(self):
        super().setup()
        # Headers and body are two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _dispatch(self):
        started = time.monotonic()
        self.server.enter()
        try:
            status, payload, headers = self.answer()
            self.send_json(status, payload, headers)
        finally:
            self.server.leave()
        if log.enabled("DEBUG"):
            log.debug(f"{self.command} {self.path} -> {status} in {(time.monotonic() - started) * 1000:.1f} ms")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _dispatch

    def answer(self):
        """(status, JSON payload, extra headers or None) of the request; subclasses implement it."""
        raise NotImplementedError

    def read_body(self, limit=None):
        """The whole request body (always read in full: the connection is reused for the next request). None when it is
        over `limit`: it is read and dropped then, so that the client, which sends it whole before it reads an answer,
        gets the 413 rather than a broken connection; a chunked body is held to the limit as well."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts, total = [], 0
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data = self.rfile.read(size)
                self.rfile.readline()
                total += size
                if limit is None or total <= limit:
                    parts.append(data)
            if limit is not None and total > limit:
                self.close_connection = True
                return None
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        if limit is not None and length > limit:
            left = length
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 20))
                if not chunk:
                    break
                left -= len(chunk)
            self.close_connection = True
            return None
        return self.rfile.read(length) if length > 0 else b""

    def send_json(self, status, payload, headers=None):
        content_type = "application/json"
        try:
            if isinstance(payload, Page):
                data, content_type = payload.encode(), "text/html; charset=utf-8"
            else:
                # In the JSON form FastAPI renders (_jsonable: pydantic models, datetimes, UUIDs, Decimals, Enums, sets,
                # dataclasses), compact, non-ASCII text kept, as queue outputs are: no \uXXXX escapes, but for a lone
                # surrogate (output_json).
                data = output_json(payload).encode()
        except Exception as e:  # not JSON (TypeError, ValueError), or a model's serializer that raised
            log.error(f"{self.command} {self.path}: the answer cannot be sent as JSON: {error_text(e)}")
            status, data = 500, output_json({"error": "response is not JSON serializable",
                                             "detail": error_text(e)}).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error(self, code, message=None, explain=None):
        # Errors http.server detects itself (malformed request line, oversized headers) as JSON too.
        self.close_connection = True
        reason = message or self.responses.get(code, ("error",))[0]
        self.send_json(code, {"error": reason.lower(), "detail": explain or ""})

    def log_request(self, code="-", size="-"):
        pass  # _dispatch logs one line per request, at DEBUG

    def log_message(self, format, *args):
        log.debug(format % args)


class JsonServer(ThreadingHTTPServer):
    """A threaded server that counts requests in progress, so that a stop can wait for them."""

    daemon_threads = True

    def __init__(self, address, handler):
        super().__init__(address, handler)
        self._lock = threading.Lock()
        self.active = 0

    def enter(self):
        with self._lock:
            self.active += 1

    def leave(self):
        with self._lock:
            self.active -= 1

    def handle_error(self, request, client_address):
        # Mostly a client that went away mid-answer; socketserver would print a traceback to stderr.
        import sys

        log.debug(f"connection from {client_address[0]} ended: {error_text(sys.exc_info()[1])}")

    def wait_idle(self, seconds):
        deadline = time.monotonic() + seconds
        while self.active > 0 and time.monotonic() < deadline:
            time.sleep(0.02)


def start(handler, host, port):
    """Binds the server and serves in a daemon thread; server.server_port is the bound port."""
    server = JsonServer((host, port), handler)
    threading.Thread(target=server.serve_forever, name="strato-http", daemon=True).start()
    return server
