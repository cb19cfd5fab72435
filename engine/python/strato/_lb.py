# The HTTP server of a load-balanced endpoint: its routes (path parameters, JSON body fields and query parameters
# as keyword arguments) plus GET /ping, behind the platform's proxy (worker mode) or for a developer (local mode).
import collections.abc
import json
import re
from urllib.parse import parse_qsl, unquote, urlsplit

from . import _log as log
from . import _server
from ._invoke import error_text, settle, user_traceback
from ._server import JsonHandler

_CO_VARKEYWORDS = 0x08
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
_TOO_DEEP = "the body nests arrays and objects deeper than Python's JSON decoder goes; flatten it"


class RouteError(Exception):
    def __init__(self, status, error, detail, headers=None):
        super().__init__(detail)
        self.status, self.error, self.detail, self.headers = status, error, detail, headers or {}


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


_SCALARS = {int: "int", float: "float", bool: "bool"}
_KINDS = ("int", "float", "bool")
# Containers a query parameter may be annotated with: its values are the key's repeats (?tag=a&tag=b).
_CONTAINERS = {list: list, set: set, frozenset: frozenset, tuple: tuple, collections.abc.Sequence: list}
_CONTAINER_NAMES = {"list": list, "List": list, "Sequence": list, "set": set, "Set": set, "frozenset": frozenset,
                    "FrozenSet": frozenset, "tuple": tuple, "Tuple": tuple}
_ITEMS_TEXT = re.compile(r"(?:typing\.)?(\w+)(?:\[(\w+)(?:,\.\.\.)?\])?")


def _unoptional(annotation):
    """The annotation without its Optional (Optional[X], X | None, and their text under `from __future__ import
    annotations`); None for a union of several types."""
    if isinstance(annotation, str):
        text = annotation.replace(" ", "").removeprefix("typing.")
        if text.startswith("Optional[") and text.endswith("]"):
            return text[len("Optional["):-1]
        return text.removesuffix("|None").removeprefix("None|")
    args = getattr(annotation, "__args__", None)
    if args is not None and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else None
    return annotation


def _scalar_kind(annotation):
    """'int', 'float' or 'bool' when the annotation is that type, optional or not; None for any other."""
    annotation = _unoptional(annotation)
    if isinstance(annotation, str):
        return annotation if annotation in _KINDS else None
    return _SCALARS.get(annotation)


def _items(annotation):
    """(container, item kind) when the annotation is a list, set or tuple (list[int], List[str], tuple[float, ...],
    optional or not; the kind as _scalar_kind says, None for text); None for any other annotation."""
    annotation = _unoptional(annotation)
    if isinstance(annotation, str):
        m = _ITEMS_TEXT.fullmatch(annotation)
        container = _CONTAINER_NAMES.get(m.group(1)) if m else None
        return (container, m.group(2) if m.group(2) in _KINDS else None) if container else None
    container = _CONTAINERS.get(getattr(annotation, "__origin__", annotation))
    if container is None:
        return None
    args = getattr(annotation, "__args__", None) or (None,)
    return container, _SCALARS.get(args[0])


def _scalar(kind, name, value):
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "bool":
            if value.lower() in _TRUE or value.lower() in _FALSE:
                return value.lower() in _TRUE
            raise ValueError(value)
    except ValueError:
        raise RouteError(400, "invalid argument", f"{name} must be {kind}, got: {value!r}") from None
    return value


def _convert(fn, name, value):
    """Path and query values are strings: convert them when the parameter is annotated int, float or bool (or an
    Optional of one: `limit: Optional[int] = None` given as ?limit=3 is 3, not "3"). A query parameter annotated as
    a list, set or tuple came as the values of its repeated key (query_args), each converted as its item type says."""
    annotation = getattr(fn, "__annotations__", {}).get(name)
    if type(value) is list:
        container, kind = _items(annotation)
        return container(_scalar(kind, f"each {name}", item) for item in value)
    return _scalar(_scalar_kind(annotation), name, value)


def query_args(fn, pairs):
    """A request's query as arguments of fn: a key's last value, or all its values for a parameter annotated as a
    list, set or tuple (?tag=a&tag=b: ["a", "b"]), as _wire.query_string sends them."""
    annotations = getattr(fn, "__annotations__", {})
    args = {}
    for key, value in pairs:
        if _items(annotations.get(key)) is None:
            args[key] = value
        else:
            values = args.get(key)
            args[key] = values + [value] if type(values) is list else [value]
    return args


def bind(fn, body, query, params):
    """The keyword arguments of a call, checked against the function's signature (read from its code object:
    inspect would cost cold-start time) so that a bad request is a 400, not an exception inside the call."""
    strings = {**query, **params}
    kwargs = {**query, **body, **params}
    code = getattr(fn, "__code__", None)
    if code is None:  # a callable object: no signature to check against
        return kwargs
    names = code.co_varnames[code.co_posonlyargcount:code.co_argcount + code.co_kwonlyargcount]
    if not code.co_flags & _CO_VARKEYWORDS:
        # Unknown query parameters are ignored (cache busters, tracking); unknown body fields are likely typos.
        unexpected = [k for k in body if k not in names and k not in params]
        if unexpected:
            raise RouteError(400, "unexpected argument",
                             f"{fn.__name__}() got unexpected argument(s) {', '.join(map(repr, unexpected))}; "
                             f"it takes: {', '.join(names) or 'no arguments'}")
        kwargs = {k: v for k, v in kwargs.items() if k in names}
    defaults = len(fn.__defaults__ or ())
    required = list(code.co_varnames[code.co_posonlyargcount:code.co_argcount - defaults])
    required += [k for k in code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
                 if k not in (fn.__kwdefaults__ or {})]
    missing = [k for k in required if k not in kwargs]
    if missing:
        raise RouteError(400, "missing argument",
                         f"{fn.__name__}() missing required argument(s): {', '.join(map(repr, missing))}")
    for key in strings:
        if key in kwargs and kwargs[key] is strings[key]:
            kwargs[key] = _convert(fn, key, kwargs[key])
    return kwargs


class RouteHandler(JsonHandler):
    router = None  # set on a subclass per server

    def answer(self):
        try:
            raw = self.read_body()
            url = urlsplit(self.path)
            if _norm(url.path) == "/ping":
                if self.command != "GET":
                    raise RouteError(405, "method not allowed", "/ping answers GET only", {"Allow": "GET"})
                return 200, {"status": "healthy"}, None
            fn, params = self.router.match(self.command, url.path)
            body = {}
            if raw.strip():
                try:
                    body = json.loads(raw)
                except ValueError as e:
                    raise RouteError(400, "invalid JSON body", str(e)) from None
                except RecursionError:
                    raise RouteError(400, "invalid JSON body", _TOO_DEEP) from None
                if not isinstance(body, dict):
                    raise RouteError(400, "invalid body", "the body must be a JSON object whose fields are the "
                                                          "function's arguments")
            kwargs = bind(fn, body, query_args(fn, parse_qsl(url.query, keep_blank_values=True)), params)
            result = settle(fn(**kwargs))
        except RouteError as e:
            return e.status, {"error": e.error, "detail": e.detail}, e.headers
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


def start_server(table, host, port):
    """Serves the routes of table ({"METHOD /path": function}) in a daemon thread; returns the server."""
    return _server.start(type("Routes", (RouteHandler,), {"router": Router(table)}), host, port)
