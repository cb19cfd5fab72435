# The endpoint as the manifest describes it: finds strato_manifest.json beside the handler file, imports the
# endpoint's functions, and turns a job's input into a call of the function or of a method of the class.
import importlib
import json
import os
import sys

from ._invoke import error_text, json_type, user_traceback
from .catalog import MESSAGES

MANIFEST = "strato_manifest.json"
_CO_COROUTINE = 0x80
_CO_ASYNC = _CO_COROUTINE | 0x200  # | CO_ASYNC_GENERATOR


class SetupError(Exception):
    """The artifact or the endpoint's code cannot be served; the message says what to fix. detail: a traceback."""

    def __init__(self, message, detail=None):
        super().__init__(message)
        self.detail = detail


def find_manifest(handler_file):
    places = [os.path.dirname(os.path.abspath(handler_file))] if handler_file else []
    places.append(os.getcwd())
    for place in places:
        path = os.path.join(place, MANIFEST)
        if os.path.isfile(path):
            return path
    raise SetupError(f"{MANIFEST} not found beside the handler or in the current directory "
                     f"({', '.join(dict.fromkeys(places))}): run the handler from a built artifact (strato build)")


def load_endpoint(name, handler_file):
    """(resource, routes, root) of endpoint `name`; root (the artifact root) is put on sys.path."""
    path = find_manifest(handler_file)
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise SetupError(f"cannot read {path}: {e}") from None
    resources = manifest.get("resources") or {}
    resource = resources.get(name)
    if resource is None:
        raise SetupError(f"endpoint {name!r} is not in {path} (it has: {', '.join(resources) or 'none'}); "
                         "rebuild the artifact")
    root = os.path.dirname(path)
    if root not in sys.path:
        sys.path.insert(0, root)
    return resource, (manifest.get("routes") or {}).get(name, {}), root


def import_function(module, name):
    """The user's function or class, without the @Endpoint wrapper (the wrapper only forwards the call)."""
    try:
        mod = importlib.import_module(module)
    except Exception as e:
        raise SetupError(f"importing module {module!r} failed: {error_text(e)}", user_traceback(e)) from None
    obj = getattr(mod, name, None)
    if obj is None:
        raise SetupError(f"module {module!r} has no {name!r}: rebuild the artifact after renaming functions")
    from .endpoint import Endpoint

    if isinstance(getattr(obj, "endpoint", None), Endpoint) and hasattr(obj, "__wrapped__"):
        obj = obj.__wrapped__
    return obj


def _is_async(fn, flags=_CO_ASYNC):
    fn = getattr(fn, "__func__", fn)
    return bool(getattr(getattr(fn, "__code__", None), "co_flags", 0) & flags)


def returns_coroutines(fn):
    """fn is an `async def` (not an async generator): every call returns a coroutine and runs none of its body."""
    return _is_async(fn, _CO_COROUTINE)


def public_methods(cls):
    from .endpoint import Endpoint

    names = {}
    for klass in reversed(cls.__mro__[:-1]):  # without object; subclasses override
        for key, value in vars(klass).items():
            # Nested classes and the `endpoint` attribute the decorator sets are not methods.
            if key.startswith("_") or isinstance(value, (type, Endpoint)):
                continue
            if callable(value) or isinstance(value, (staticmethod, classmethod)):
                names[key] = True
    return list(names)


# The key of a class endpoint's input that carries the constructor's arguments a caller gave (`Model("large")`):
# {"args": [...], "kwargs": {...}}. Each set of them gets an instance of its own, the last few kept.
INIT_KEY = "__init__"
_INSTANCES_KEPT = 4


class Target:
    """What a queue job's input is applied to: the function, or a method of the class instantiated once (and once per
    set of constructor arguments callers send)."""

    def __init__(self, obj):
        self.fn = self.methods = None
        if isinstance(obj, type):
            import collections
            import threading

            self.cls, self.names = obj, None
            self.built = collections.OrderedDict()  # json text of constructor arguments -> the methods of its instance
            self.build_lock = threading.Lock()
            self.label = f"class {obj.__name__}"
            names = public_methods(obj)
            if not names:
                raise SetupError(MESSAGES["class-without-method"].format(name=obj.__name__))
            from .endpoint import construct_here

            try:
                instance = construct_here(obj)
            except Exception as e:
                raise SetupError(f"creating the instance of {self.label} failed: {type(e).__name__}: {e}",
                                 user_traceback(e)) from None
            self.methods = {n: getattr(instance, n) for n in names}
            self.names = names
        else:
            self.label = f"{getattr(obj, '__name__', 'the function')}()"
            self.fn = obj

    @property
    def is_async(self):
        return any(_is_async(f) for f in ([self.fn] if self.fn else self.methods.values()))

    @property
    def returns_coroutines(self):
        return all(returns_coroutines(f) for f in ([self.fn] if self.fn else self.methods.values()))

    def __call__(self, job_input):
        if not isinstance(job_input, dict):
            raise TypeError(f"input must be a JSON object whose keys are the arguments of {self.label}, "
                            f"got {json_type(job_input)}")
        if self.fn is not None:
            return self.fn(**job_input)
        methods = self.methods
        if INIT_KEY in job_input:
            methods = self._methods_of(job_input[INIT_KEY])
            job_input = {k: v for k, v in job_input.items() if k != INIT_KEY}
        if len(methods) == 1:
            ((name, method),) = methods.items()
            if job_input.get("method") == name:
                job_input = {k: v for k, v in job_input.items() if k != "method"}
            elif "method" in job_input and not _takes(method, "method"):
                raise ValueError(f"unknown method {job_input['method']!r} of {self.label}: use {name!r} (or no \"method\")")
            return method(**job_input)
        name = job_input.get("method")
        choices = ", ".join(repr(n) for n in sorted(self.methods))
        if name is None:
            raise ValueError(f'input needs "method" to pick the method of {self.label} to call: one of {choices}')
        method = methods.get(name) if isinstance(name, str) else None
        if method is None:
            raise ValueError(f"unknown method {name!r} of {self.label}: use one of {choices}")
        return method(**{k: v for k, v in job_input.items() if k != "method"})

    def _methods_of(self, init):
        """The methods of the instance built with these constructor arguments, built on first use; a few are kept."""
        if not isinstance(init, dict) or not isinstance(init.get("args", []), list) or not isinstance(init.get("kwargs", {}), dict):
            raise TypeError(f'"{INIT_KEY}" of a call of {self.label} must be {{"args": [...], "kwargs": {{...}}}}, '
                            f"got {json_type(init)}")
        key = json.dumps(init, sort_keys=True)
        with self.build_lock:  # jobs running at once (max_concurrency) build one instance per set
            methods = self.built.get(key)
            if methods is None:
                from .endpoint import construct_here

                instance = construct_here(self.cls, init.get("args", []), init.get("kwargs", {}))
                methods = self.built[key] = {n: getattr(instance, n) for n in self.names}
                while len(self.built) > _INSTANCES_KEPT:
                    self.built.popitem(last=False)
            else:
                self.built.move_to_end(key)
        return methods


def route_table(resource, routes):
    """{"METHOD /path": function} of a load-balanced endpoint, functions imported from their modules."""
    modules = {f["name"]: f["module"] for f in resource.get("functions", [])}
    table = {}
    for key, fn_name in routes.items():
        if fn_name not in modules:
            raise SetupError(f"route {key} names {fn_name!r}, which is not among the endpoint's functions in "
                             f"{MANIFEST}: rebuild the artifact")
        table[key] = import_function(modules[fn_name], fn_name)
    return table


def _takes(fn, name):
    """Whether fn has a parameter called name (or takes **kwargs); True when its signature cannot be read."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
