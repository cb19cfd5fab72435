# A minimal HTTP/1.1 JSON client with keep-alive, for the worker's calls to the platform. http.client would
# import the email package and ssl (about 20 ms of cold start for every worker); the platform speaks plain JSON.
import json
import socket
import time

from ._invoke import json_default

# Node's HTTP server drops keep-alive sockets idle for 5 s; reconnecting before that avoids racing its close.
_IDLE_REUSE_S = 4.0
_MAX_LINE = 65536


class HttpError(Exception):
    """The request did not get an HTTP answer: connection refused or reset, timeout, malformed response."""


class Response:
    __slots__ = ("status", "data", "text")

    def __init__(self, status, data, text):
        self.status = status
        self.data = data  # parsed JSON body, or None when the body is empty or not JSON
        self.text = text  # the body as text (for error messages)


class _Stale(Exception):
    """A reused connection was closed by the server before it answered: safe to resend on a new one."""


class Connection:
    """One keep-alive connection to a base URL. Not thread-safe: each concurrent loop owns one."""

    def __init__(self, base_url, headers=None, timeout=30.0):
        scheme, sep, rest = base_url.partition("://")
        if not sep or scheme not in ("http", "https"):
            raise ValueError(f"platform URL must start with http:// or https://, got: {base_url}")
        hostport, _, prefix = rest.partition("/")
        host, _, port = hostport.rpartition(":")
        if not port.isdigit():  # no port given (an IPv6 literal has colons too)
            host, port = hostport, ""
        self.tls = scheme == "https"
        self.host = host.strip("[]")
        self.port = int(port) if port else (443 if self.tls else 80)
        self.prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
        self.timeout = timeout
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._head = f"Host: {hostport}\r\nContent-Type: application/json\r\n{extra}"
        self._sock = None
        self._file = None
        self._last_used = 0.0

    def close(self):
        if self._sock is not None:
            try:
                self._file.close()
                self._sock.close()
            except OSError:
                pass
        self._sock = self._file = None

    def _connect(self, timeout):
        try:
            sock = socket.create_connection((self.host, self.port), timeout=timeout)
        except OSError as e:
            raise HttpError(f"cannot connect to {self.host}:{self.port}: {e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls:
            import ssl  # only remote platforms over https pay for it

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)
        self._sock = sock
        self._file = sock.makefile("rb")

    def post(self, path, body, timeout=None):
        """POST body as JSON to prefix+path; returns a Response. Raises HttpError, or TypeError/ValueError for a
        body that is not JSON serializable (before anything is sent)."""
        # allow_nan=False: NaN is not JSON and would break the platform's parser; better a clear error here.
        data = json.dumps(body, separators=(",", ":"), allow_nan=False, default=json_default).encode()
        head = f"POST {self.prefix}{path} HTTP/1.1\r\n{self._head}Content-Length: {len(data)}\r\n\r\n"
        request = head.encode() + data
        timeout = timeout or self.timeout
        if self._sock is not None and time.monotonic() - self._last_used > _IDLE_REUSE_S:
            self.close()
        for attempt in (1, 2):
            reused = self._sock is not None
            if not reused:
                self._connect(timeout)
            try:
                self._sock.settimeout(timeout)
                self._sock.sendall(request)
                response = self._read_response()
            except _Stale:
                self.close()
                if reused and attempt == 1:
                    continue
                raise HttpError(f"{self.host}:{self.port} closed the connection without answering") from None
            except (OSError, ValueError) as e:
                self.close()
                raise HttpError(f"request to {self.host}:{self.port}{self.prefix}{path} failed: {e}") from None
            self._last_used = time.monotonic()
            return response
        raise AssertionError("unreachable")

    def tunnel(self, path, timeout=None):
        """CONNECT prefix+path (the worker's job channel). On 200 the connection leaves this object: returns
        (socket, buffered reader) with no timeout set. Otherwise returns the Response (an older platform answers
        405, or closes: status 0). Raises HttpError when the platform cannot be reached."""
        self.close()
        self._connect(timeout or self.timeout)
        try:
            self._sock.sendall(f"CONNECT {self.prefix}{path} HTTP/1.1\r\n{self._head}\r\n".encode())
            status, headers = self._read_head()
            if status != 200:
                response = self._read_body(status, headers)
                self.close()
                return response
        except _Stale:
            self.close()
            return Response(0, None, "the platform closed the connection without answering CONNECT")
        except (OSError, ValueError) as e:
            self.close()
            raise HttpError(f"CONNECT to {self.host}:{self.port}{self.prefix}{path} failed: {e}") from None
        sock, reader = self._sock, self._file
        sock.settimeout(None)
        self._sock = self._file = None
        return sock, reader

    def _read_response(self):
        return self._read_body(*self._read_head())

    def _read_head(self):
        f = self._file
        try:
            line = f.readline(_MAX_LINE)
        except (ConnectionResetError, BrokenPipeError):
            raise _Stale() from None
        if not line:
            raise _Stale()
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise ValueError(f"malformed status line {line[:80]!r}")
        status = int(parts[1])
        headers = {}
        while True:
            line = f.readline(_MAX_LINE)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise ValueError("connection closed inside the response headers")
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    def _read_body(self, status, headers):
        f = self._file
        if status < 200 or status in (204, 304):
            payload = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            payload = self._read_chunked()
        elif "content-length" in headers:
            length = int(headers["content-length"])
            payload = f.read(length)
            if len(payload) != length:
                raise ValueError("connection closed inside the response body")
        else:
            payload = f.read()
            headers["connection"] = "close"
        if headers.get("connection", "").lower() == "close":
            self.close()
        text = payload.decode("utf-8", "replace")
        try:
            data = json.loads(text) if text else None
        except ValueError:
            data = None
        return Response(status, data, text)

    def _read_chunked(self):
        f = self._file
        parts = []
        while True:
            size = int(f.readline(_MAX_LINE).split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while f.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            chunk = f.read(size)
            if len(chunk) != size:
                raise ValueError("connection closed inside a chunk")
            parts.append(chunk)
            f.readline(_MAX_LINE)
