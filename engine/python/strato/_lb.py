# The HTTP server of a load-balanced endpoint: its routes (path parameters, JSON body fields and query parameters
# as keyword arguments, checked and converted by annotation as FastAPI does) plus GET /ping, behind the platform's
# proxy (worker mode) or for a developer (local mode). Behind the platform it answers only the platform's proxy, which
# sends the worker's token: its port is on the host's loopback (or an agent's network), where any local process could
# otherwise call the routes without an API key.
import hmac
import json
import re
from urllib.parse import parse_qsl, unquote, urlsplit

from . import _log as log
from . import _server
from ._invoke import error_text, settle, user_traceback
from ._routeargs import ABSENT, RouteError, bind, query_args
from ._server import JsonHandler

_TOO_DEEP = "the body nests arrays and objects deeper than Python's JSON decoder goes; flatten it"
# The header the platform's proxy (lbRouter.ts) sends the worker's token in.
TOKEN_HEADER = "X-Strato-Worker-Token"


def _norm(path):
    return path.rstrip("/") or "/"


class Router:
    """Finds the function of a request; "METHOD /path" keys, `{name}` segments match one path segment."""

    def __init__(self, table):
        self.static = {}  # path -> {method: fn}
        self.dynamic = []  # (regex, path, {method: fn})
        for key, fn in table.items():
            method, path = key.split(" ", 1)
            path = _norm(path)
            if "{" not in path:
                self.static.setdefault(path, {})[method] = fn
                continue
            pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path))
            for regex, other, methods in self.dynamic:
                if other == path:
                    methods[method] = fn
                    break
            else:
                self.dynamic.append((re.compile(pattern + r"\Z"), path, {method: fn}))
        self.keys = list(table)

    def match(self, method, path):
        path = _norm(path)
        methods, params = self.static.get(path), {}
        if methods is None:
            for regex, _, candidate in self.dynamic:
                m = regex.match(path)
                if m:
                    methods, params = candidate, {k: unquote(v) for k, v in m.groupdict().items()}
                    break
        if methods is None:
            raise RouteError(404, "not found", f"no route matches {method} {path}; routes: {', '.join(self.keys)}")
        fn = methods.get(method)
        if fn is None:
            allowed = ", ".join(sorted(methods))
            raise RouteError(405, "method not allowed", f"{method} {path} is not declared; allowed: {allowed}",
                             {"Allow": allowed})
        return fn, params


class RouteHandler(JsonHandler):
    router = None  # set on a subclass per server
    token = None  # behind a platform: the worker's token, which every request must carry

    def answer(self):
        if self.token is not None and not hmac.compare_digest(self.headers.get(TOKEN_HEADER, "").encode(), self.token):
            self.close_connection = True  # its body is not read
            return 401, {"error": "unauthorized",
                         "detail": "this worker answers its platform only: call the endpoint through the platform, "
                                   "/lb/<endpoint id>/<route>, with an API key"}, None
        try:
            raw = self.read_body()
            url = urlsplit(self.path)
            if _norm(url.path) == "/ping":
                if self.command != "GET":
                    raise RouteError(405, "method not allowed", "/ping answers GET only", {"Allow": "GET"})
                return 200, {"status": "healthy"}, None
            fn, params = self.router.match(self.command, url.path)
            body = ABSENT
            if raw.strip():
                try:
                    body = json.loads(raw)
                except ValueError as e:
                    raise RouteError(400, "invalid JSON body", str(e)) from None
                except RecursionError:
                    raise RouteError(400, "invalid JSON body", _TOO_DEEP) from None
            kwargs = bind(fn, body, query_args(fn, parse_qsl(url.query, keep_blank_values=True)), params)
            result = settle(fn(**kwargs))
        except RouteError as e:
            return e.status, e.payload(), e.headers
        except BaseException as e:  # the route's code failed, sys.exit and KeyboardInterrupt too: a 500, logged
            return self._failure(e)
        status = 200
        if type(result) is tuple and len(result) == 2 and type(result[1]) is int:
            result, status = result
        return status, result, None

    def _failure(self, exc):
        # An exception carrying an HTTP status (like FastAPI's HTTPException) answers with that status.
        status = getattr(exc, "status_code", None)
        if type(status) is int and 400 <= status <= 599:
            detail = getattr(exc, "detail", None)
            return status, {"error": self.responses.get(status, ("error",))[0].lower(),
                            "detail": detail if detail is not None else str(exc)}, None
        log.error(f"{self.command} {self.path} failed: {error_text(exc)}")
        log.error(user_traceback(exc).rstrip())
        return 500, {"error": "internal server error", "detail": error_text(exc)}, None


def start_server(table, host, port, token=None):
    """Serves the routes of table ({"METHOD /path": function}) in a daemon thread; returns the server. With a token,
    a request without it in TOKEN_HEADER is refused (401)."""
    handler = type("Routes", (RouteHandler,), {"router": Router(table),
                                               "token": None if token is None else token.encode()})
    return _server.start(handler, host, port)
