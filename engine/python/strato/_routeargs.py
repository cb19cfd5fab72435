# How a route's request becomes its function's arguments (the load-balanced server, _lb.py): path and query values
# converted by annotation, body fields checked and converted by annotation as FastAPI does (with pydantic when the
# user's code loaded it), one pydantic-model parameter taking the whole body; what is wrong is a RouteError (400/422).
import collections.abc
import re
import sys

from ._invoke import json_type
from ._jsonable import dumps
from ._lax import LAX, Invalid

_CO_VARKEYWORDS = 0x08


class RouteError(Exception):
    def __init__(self, status, error, detail, headers=None, errors=None):
        super().__init__(detail)
        self.status, self.error, self.detail, self.headers = status, error, detail, headers or {}
        self.errors = errors  # a 422's list of what is wrong, field by field (FastAPI's detail items)

    def payload(self):
        if self.errors is None:
            return {"error": self.error, "detail": self.detail}
        return {"error": self.error, "detail": self.detail, "errors": self.errors}


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


def _scalar(kind, value, loc=()):
    """A path or query string as the annotation's kind, by pydantic's lax rules as FastAPI converts it; a string
    that is none raises Invalid with pydantic's error (loc within the value)."""
    if kind not in ("int", "float", "bool"):
        return value
    try:
        return LAX[kind](value)
    except Invalid as e:
        raise Invalid([{**error, "loc": loc} for error in e.errors]) from None


def _convert(fn, name, value):
    """Path and query values are strings: convert them when the parameter is annotated int, float or bool (or an
    Optional of one: `limit: Optional[int] = None` given as ?limit=3 is 3, not "3"). A query parameter annotated as
    a list, set or tuple came as the values of its repeated key (query_args), each converted as its item type says."""
    annotation = getattr(fn, "__annotations__", {}).get(name)
    if type(value) is list:
        container, kind = _items(annotation)
        return container(_scalar(kind, item, (i,)) for i, item in enumerate(value))
    return _scalar(_scalar_kind(annotation), value)


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


# Body fields are checked and converted by annotation, as FastAPI does: with pydantic when the user's code loaded it
# (never imported here: a worker that does not use it does not pay for it), otherwise int, float, bool and str
# annotations by pydantic's lax rules ("3" is 3 for an int, 3 is not a str). A value an annotation refuses is a 422
# whose `errors` lists each problem as FastAPI's detail items do: {"type", "loc": ["body", field, ...], "msg", "input"}.
# The checks without pydantic are _lax.py's.


def _nullable(annotation):
    if isinstance(annotation, str):
        text = annotation.replace(" ", "").removeprefix("typing.")
        return text.startswith("Optional[") or text.endswith("|None") or text.startswith("None|")
    return type(None) in (getattr(annotation, "__args__", None) or ())


def _scalar_check(annotation):
    """The check of a body field annotated int, float, bool or str (or an Optional of one), by pydantic's lax rules;
    None for any other annotation (not checked)."""
    bare = _unoptional(annotation)
    kind = "str" if bare in (str, "str") else _scalar_kind(annotation)
    if kind is None:
        return None
    convert, nullable = LAX[kind], _nullable(annotation)

    def check(value):
        return None if value is None and nullable else convert(value)

    return check


_MODEL_BASES = {("pydantic.main", "BaseModel"), ("pydantic.v1.main", "BaseModel")}


def _bare(annotation):
    """The annotation without Annotated[...] and Optional: the type a value must be."""
    for _ in range(3):
        if getattr(annotation, "__metadata__", None) is not None:  # Annotated[X, ...]
            annotation = annotation.__origin__
        annotation = _unoptional(annotation)
    return annotation


def _model_class(annotation):
    """The pydantic model class (v2, v1 or pydantic.v1) an annotation names, optional or not; None for any other."""
    bare = _bare(annotation)
    if isinstance(bare, type) and any((getattr(k, "__module__", None), k.__qualname__) in _MODEL_BASES
                                      for k in bare.__mro__[1:]):
        return bare
    return None


def _validation_errors(exc):
    """A pydantic ValidationError's errors as FastAPI lists them (type, loc, msg, input); None for any other error."""
    if type(exc).__name__ != "ValidationError" or not callable(getattr(exc, "errors", None)):
        return None
    try:
        items = exc.errors(include_url=False)
    except TypeError:  # pydantic v1
        items = exc.errors()
    errors = []
    for item in items:
        error = {"type": item.get("type", "value_error"), "loc": tuple(item.get("loc", ())), "msg": item.get("msg", "")}
        if "input" in item:
            error["input"] = item["input"]
        errors.append(error)
    return errors


def _pydantic_check(pydantic, annotation, model):
    """The check of a body field by pydantic: the model's own validation for a v1 model, a TypeAdapter (v2) for any
    other annotation; None where pydantic cannot check the annotation (a class it has no schema for)."""
    if isinstance(annotation, str) or annotation is object or annotation is getattr(sys.modules.get("typing"), "Any", None):
        return None
    if model is not None and not hasattr(model, "model_validate"):
        validate = model.parse_obj  # pydantic v1 (or pydantic.v1 under v2)
    else:
        adapter = getattr(pydantic, "TypeAdapter", None)
        if adapter is None:  # pydantic v1 installed: its models are checked, scalars by the lax rules
            return None
        try:
            validate = adapter(annotation).validate_python
        except Exception:  # noqa: BLE001 - an annotation pydantic has no schema for: passed on unchecked, as before
            return None
    nullable = _nullable(annotation)

    def check(value):
        if value is None and nullable:
            return None
        try:
            return validate(value)
        except Exception as e:  # noqa: BLE001 - a ValidationError is the client's; anything else is the route's own
            errors = _validation_errors(e)
            if errors is None:
                raise
            raise Invalid(errors) from None

    return check


def _hints(fn, annotations):
    """The function's annotations as types (those written as text under `from __future__ import annotations` too),
    their Annotated metadata kept; as written where one cannot be resolved."""
    typing = sys.modules.get("typing")  # loaded: pydantic imports it
    if typing is not None:
        try:
            return typing.get_type_hints(fn, include_extras=True)
        except Exception:  # noqa: BLE001 - a name the module cannot resolve (a TYPE_CHECKING import)
            pass
    return annotations


ABSENT = object()  # a request without a body


class Signature:
    """What binding needs of a route's function, read once, on its first request (from its code object: inspect would
    cost cold-start time): the parameters it takes, the required ones, whether it takes **kwargs, the checks of its
    annotated parameters, and the parameter that takes the whole body: one parameter annotated with a pydantic model,
    the only one, takes the JSON body as that model, as FastAPI binds it (its other parameters: path and query)."""

    __slots__ = ("names", "required", "open", "defaults", "checks", "model_param", "model", "model_fields")

    def __init__(self, fn):
        code = fn.__code__
        self.names = code.co_varnames[code.co_posonlyargcount:code.co_argcount + code.co_kwonlyargcount]
        self.open = bool(code.co_flags & _CO_VARKEYWORDS)
        given = fn.__defaults__ or ()
        self.defaults = dict(zip(code.co_varnames[code.co_argcount - len(given):code.co_argcount], given))
        self.defaults.update(fn.__kwdefaults__ or {})
        self.required = [k for k in self.names if k not in self.defaults]
        self.checks = {}
        self.model_param = self.model = None
        self.model_fields = frozenset()
        annotations = getattr(fn, "__annotations__", None) or {}
        if any(name in annotations for name in self.names):
            self._read(fn, annotations)

    def _read(self, fn, annotations):
        pydantic = sys.modules.get("pydantic")  # only when the user's code loaded it
        hints = _hints(fn, annotations) if pydantic is not None else annotations
        models = []
        for name in self.names:
            if name not in hints:
                continue
            check = None
            if pydantic is not None:
                model = _model_class(hints[name])
                if model is not None:
                    models.append((name, model))
                check = _pydantic_check(pydantic, hints[name], model)
            check = check or _scalar_check(hints[name])
            if check is not None:
                self.checks[name] = check
        if len(models) == 1:
            self.model_param, self.model = models[0]
            fields = getattr(self.model, "model_fields", None) or getattr(self.model, "__fields__", None) or {}
            names = set(fields)
            for field in fields.values():
                alias = getattr(field, "alias", None)
                if isinstance(alias, str):
                    names.add(alias)
            self.model_fields = frozenset(names)

    def whole_body(self, body):
        """Whether the body is the model parameter's value as a whole (FastAPI's default). An object whose fields are
        the function's parameters by name instead (what the typed clients and the Python client send: {"item": {...}})
        is taken as they are: one that holds the parameter's name and the model has no field of that name, or one
        whose every field is a parameter and not every one a field of the model."""
        if self.model_param is None:
            return False
        if type(body) is not dict or not body:
            return True
        if self.model_param in body and self.model_param not in self.model_fields:
            return False
        if len(body) == 1 and self.model_param in body and isinstance(body[self.model_param], dict):
            # {"config": {...}} for a model with a field named config too: the form that the model takes wins (the
            # typed clients send it by name); where both or neither do, the whole body, as FastAPI reads it.
            return self._valid(body) or not self._valid(body[self.model_param])
        return not (all(k in self.names for k in body) and not all(k in self.model_fields for k in body))

    def _valid(self, value):
        validate = getattr(self.model, "model_validate", None) or getattr(self.model, "parse_obj", None)
        try:
            validate(value)
            return True
        except Exception:  # pydantic's ValidationError (v1 or v2), or the model's own validator
            return False


_signatures = {}


def signature(fn):
    sig = _signatures.get(fn)
    if sig is None:
        sig = _signatures[fn] = Signature(fn)
    return sig


def _shown(value):
    try:
        text = dumps(value)  # as the client wrote it: "x", null, true
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _invalid(fn, sig, whole, errors):
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error["loc"][1:]) or "the body"
        part = f"{where}: {error['msg']}"
        if error["type"] != "missing" and "input" in error:
            part += f" (got {_shown(error['input'])})"
        parts.append(part)
    if whole:
        lead = (f"{fn.__name__}() takes the JSON body as {sig.model_param}: {sig.model.__name__}, and the body is not "
                f"a valid {sig.model.__name__}")
    else:
        lead = f"{fn.__name__}() got invalid argument(s)"
    for error in errors:
        error["loc"] = list(error["loc"])
    return RouteError(422, "invalid argument", f"{lead}: {'; '.join(parts)}", errors=errors)


def bind(fn, body, query, params):
    """The keyword arguments of a call (body: the parsed JSON body, or ABSENT), checked against the function's
    signature and its annotations, so that a bad request is a 400 or a 422, not an exception inside the call."""
    code = getattr(fn, "__code__", None)
    sig = signature(fn) if code is not None else None
    whole = sig is not None and sig.whole_body(body)
    if whole:
        absent = body is ABSENT and sig.model_param in sig.defaults  # no body for an optional model: its default
        fields = {} if absent else {sig.model_param: {} if body is ABSENT else body}
    elif body is ABSENT:
        fields = {}
    elif type(body) is not dict:
        raise RouteError(400, "invalid body", "the body must be a JSON object whose fields are the function's "
                                              f"arguments, got {json_type(body)}")
    else:
        fields = body
    strings = {**query, **params}
    kwargs = {**query, **fields, **params}
    if sig is None:  # a callable object: no signature to check against
        return kwargs
    names = sig.names
    if not sig.open:
        # Unknown query parameters are ignored (cache busters, tracking); unknown body fields are likely typos.
        unexpected = [k for k in fields if k not in names and k not in params]
        if unexpected:
            raise RouteError(400, "unexpected argument",
                             f"{fn.__name__}() got unexpected argument(s) {', '.join(map(repr, unexpected))}; "
                             f"it takes: {', '.join(names) or 'no arguments'}")
        kwargs = {k: v for k, v in kwargs.items() if k in names}
    missing = [k for k in sig.required if k not in kwargs]
    if missing:
        # A 422 with FastAPI's items, as a refused value is; the words name the function's arguments.
        where = "query" if body is ABSENT else "body"
        raise RouteError(422, "missing argument",
                         f"{fn.__name__}() missing required argument(s): {', '.join(map(repr, missing))}",
                         errors=[{"type": "missing", "loc": [where, k], "msg": "Field required", "input": None} for k in missing])
    converted = []
    for key in strings:
        if key in kwargs and kwargs[key] is strings[key]:
            try:
                kwargs[key] = _convert(fn, key, kwargs[key])
            except Invalid as e:
                where = ("path" if key in params else "query", key)
                converted += [{**error, "loc": where + tuple(error["loc"])} for error in e.errors]
    if converted:
        raise _invalid(fn, sig, False, converted)
    if sig.checks:
        errors = []
        for key, value in fields.items():
            check = sig.checks.get(key)
            if check is None or key in params or kwargs.get(key) is not value:
                continue
            if value is None and sig.defaults.get(key, 0) is None:
                continue  # null for a parameter whose default is None: that default
            try:
                kwargs[key] = check(value)
            except Invalid as e:
                where = ("body",) if whole else ("body", key)
                errors += [{**error, "loc": where + tuple(error["loc"])} for error in e.errors]
        if errors:
            raise _invalid(fn, sig, whole, errors)
    return kwargs
