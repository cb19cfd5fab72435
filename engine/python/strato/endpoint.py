# The @Endpoint decorator users write in worker files: validates the configuration when the module is imported
# and records the decorated function, class or load-balanced routes, which stay callable as plain Python.
import functools
import re

from .catalog import (
    ENDPOINT_NAME_PATTERN, MESSAGES, PARAMETER_BOUNDS, PARAMETER_DEFAULTS, WORKERS_MAX_UPPER_BOUND, CpuInstanceType,
    GpuGroup, GpuType,
)

__all__ = ["Endpoint"]

_NAME = re.compile(ENDPOINT_NAME_PATTERN)
_PATH_PARAM = re.compile(r"\{([^{}]*)\}")
_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, read from the code object so that inspect is not imported
_CO_GENERATOR = 0x20

# Lower-cased spelling -> canonical value, so that gpu="ada_24" or "nvidia h200" is accepted too.
_GPU_VALUES = {m.value.lower(): m.value for enum in (GpuGroup, GpuType) for m in enum}
_CPU_VALUES = {m.value.lower(): m.value for m in CpuInstanceType}


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _rule(key, **values):
    """A rule message in the words of catalog.json, shared with the analysis and the platform."""
    return MESSAGES[key].format(**values)


def _int_in_bounds(param, value):
    low, high = PARAMETER_BOUNDS[param]
    if not _is_int(value):
        raise ValueError(_rule("int-type", param=param, min=low, max=high, value=repr(value)))
    if not low <= value <= high:
        key = f"{param}-range" if f"{param}-range" in MESSAGES else "int-range"
        raise ValueError(_rule(key, param=param, min=low, max=high, value=value))
    return value


def _check_name(name):
    if not isinstance(name, str):
        raise ValueError(f"endpoint name must be a string, got: {name!r}")
    if not _NAME.fullmatch(name):
        raise ValueError(_rule("invalid-name", value=repr(name)))
    return name


def _gpu_list(gpu):
    items = list(gpu) if isinstance(gpu, (list, tuple)) else [gpu]
    if not items:
        raise ValueError("gpu list is empty: name at least one GpuGroup or GpuType, or omit gpu for any GPU")
    values = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"gpu must be a GpuGroup, a GpuType, a string or a list of them, got: {item!r}")
        value = _GPU_VALUES.get(str.__str__(item).lower())
        if value is None:
            raise ValueError(
                f"unknown gpu {str.__str__(item)!r}: use a GpuGroup (such as GpuGroup.ADA_24) "
                "or a GpuType model name (such as 'NVIDIA H200')"
            )
        values.append(value)
    return values


def _cpu_value(cpu):
    value = _CPU_VALUES.get(str.__str__(cpu).lower()) if isinstance(cpu, str) else None
    if value is None:
        raise ValueError(
            f"unknown cpu instance type {cpu!r}: use a CpuInstanceType such as CpuInstanceType.CPU3C_2_4 ('cpu3c-2-4')"
        )
    return value


def _workers_pair(workers):
    if workers is None:
        return PARAMETER_DEFAULTS["workers"]
    if _is_int(workers):
        pair = (0, workers)
    elif isinstance(workers, (tuple, list)) and len(workers) == 2 and all(_is_int(w) for w in workers):
        pair = (workers[0], workers[1])
    else:
        raise ValueError(_rule("workers-shape", value=repr(workers)))
    low, high = pair
    if low < 0 or high < 0:
        raise ValueError(_rule("workers-negative", min=low, max=high))
    if low > high:
        raise ValueError(_rule("workers-order", min=low, max=high))
    if high == 0:
        raise ValueError(_rule("workers-empty"))
    if high > WORKERS_MAX_UPPER_BOUND:
        raise ValueError(_rule("workers-upper", max=high, limit=WORKERS_MAX_UPPER_BOUND))
    return pair


def _dependencies(deps):
    if deps is None:
        return []
    if not isinstance(deps, (list, tuple)) or not all(isinstance(d, str) and d.strip() for d in deps):
        raise ValueError(f"dependencies must be a list of package names (non-empty strings), got: {deps!r}")
    return list(deps)


def _env(env):
    if env is None:
        return {}
    if not isinstance(env, dict):
        raise ValueError(f"env must be a dict of str to str, got: {env!r}")
    for key, value in env.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"env keys must be non-empty strings, got: {key!r}")
        if not isinstance(value, str):
            raise ValueError(f"env value of {key!r} must be a str, got: {value!r}")
    return dict(env)


class Endpoint:
    """One serverless endpoint: decorate a function or class (queue-based), or declare routes (load-balanced).

    Queue-based::

        @Endpoint(name="hello", gpu=GpuGroup.ADA_24, workers=(0, 3))
        def hello(name: str): ...

    Load-balanced::

        api = Endpoint(name="api", cpu=CpuInstanceType.CPU3C_2_4)

        @api.post("/process")
        def process(text: str): ...
    """

    def __init__(self, name=None, *, gpu=None, cpu=None, workers=None, idle_timeout=PARAMETER_DEFAULTS["idle_timeout"],
                 dependencies=None, env=None, gpu_count=PARAMETER_DEFAULTS["gpu_count"], execution_timeout_ms=None,
                 max_concurrency=PARAMETER_DEFAULTS["max_concurrency"]):
        self.name = None if name is None else _check_name(name)
        if gpu is not None and cpu is not None:
            raise ValueError(_rule("gpu-and-cpu"))
        self.cpu = None if cpu is None else _cpu_value(cpu)
        # Neither gpu nor cpu: a GPU endpoint on any GPU (decisions.md).
        self.gpu = None if self.cpu is not None else (["any"] if gpu is None else _gpu_list(gpu))
        self.workers = _workers_pair(workers)
        self.idle_timeout = _int_in_bounds("idle_timeout", idle_timeout)
        self.dependencies = _dependencies(dependencies)
        self.env = _env(env)
        self.gpu_count = _int_in_bounds("gpu_count", gpu_count)
        self.execution_timeout_ms = (
            None if execution_timeout_ms is None
            else _int_in_bounds("execution_timeout_ms", execution_timeout_ms)
        )
        self.max_concurrency = _int_in_bounds("max_concurrency", max_concurrency)
        # What this endpoint serves: one decorated function or class, or routes ("METHOD /path" -> function).
        self.target = None
        self.routes = {}

    @property
    def is_load_balanced(self):
        return bool(self.routes)

    def config(self):
        """The configuration after defaults, as plain data."""
        return {
            "name": self.name, "gpu": self.gpu, "cpu": self.cpu, "workers": self.workers,
            "idle_timeout": self.idle_timeout, "dependencies": list(self.dependencies), "env": dict(self.env),
            "gpu_count": self.gpu_count, "execution_timeout_ms": self.execution_timeout_ms,
            "max_concurrency": self.max_concurrency,
        }

    def __repr__(self):
        hardware = f"cpu={self.cpu!r}" if self.cpu else f"gpu={self.gpu!r}"
        return f"Endpoint(name={self.name!r}, {hardware}, workers={self.workers!r})"

    # Queue-based: @Endpoint(...) on a def, an async def or a class.
    def __call__(self, target):
        if self.routes:
            raise ValueError(
                f"endpoint {self.name!r} has routes ({', '.join(self.routes)}): a load-balanced endpoint cannot "
                "also decorate a function; give the function its own Endpoint(...)"
            )
        if not callable(target):
            raise ValueError(f"Endpoint(...) decorates a function, an async function or a class, got: {target!r}")
        if self.target is not None:
            raise ValueError(
                f"endpoint {self.name!r} already serves {self.target.__name__!r}: a queue-based endpoint has one "
                f"function or class; give {getattr(target, '__name__', target)!r} its own Endpoint(name=...)"
            )
        if self.name is None:
            self.name = _check_name(target.__name__)
        self.target = target
        if isinstance(target, type):
            # A class stays itself (isinstance and subclassing keep working); the runtime instantiates it once.
            target.__strato_endpoint__ = self
            if "endpoint" not in vars(target):
                target.endpoint = self
            return target
        wrapper = _dispatching_wrapper(self, target, None)
        wrapper.endpoint = self
        return wrapper

    # Load-balanced: @api.get("/path") and friends; the function stays callable (see _dispatching_wrapper).
    def get(self, path):
        return self._route("GET", path)

    def post(self, path):
        return self._route("POST", path)

    def put(self, path):
        return self._route("PUT", path)

    def patch(self, path):
        return self._route("PATCH", path)

    def delete(self, path):
        return self._route("DELETE", path)

    def _route(self, method, path):
        if self.target is not None:
            raise ValueError(
                f"endpoint {self.name!r} already serves {self.target.__name__!r} as a queue-based endpoint: "
                "declare routes on their own Endpoint(...)"
            )
        if not isinstance(path, str):
            raise ValueError(f"path must be a string, got: {path!r}")
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got: {path}")
        if path.rstrip("/") == "/ping":
            raise ValueError("path '/ping' is reserved")
        for param in _PATH_PARAM.findall(path):
            if not param.isidentifier():
                raise ValueError(f"path parameter {{{param}}} in {path} must be a Python identifier")
        key = f"{method} {path}"

        def register(fn):
            if not callable(fn):
                raise ValueError(f"@{method.lower()}({path!r}) decorates a function, got: {fn!r}")
            existing = self.routes.get(key)
            if existing is not None:
                raise ValueError(f"duplicate route: {key} (already registered to {existing.__name__!r})")
            self.routes[key] = fn
            wrapper = _dispatching_wrapper(self, fn, (method, path))
            wrapper.endpoint = self
            return wrapper

        return register


def _dispatching_wrapper(endpoint, fn, route):
    """A wrapper with fn's kind (coroutine and generator functions stay so) that runs fn here when this process is
    the endpoint's own worker (or STRATO_LOCAL=1), and otherwise calls the deployed endpoint (scripts, other
    endpoints). `fn.__wrapped__` is always the plain function."""
    from . import _remote

    def remote(args, kwargs):
        if route is None:
            return _remote.call_queue(endpoint, fn, args, kwargs)
        return _remote.call_route(endpoint, route[0], route[1], fn, args, kwargs)

    flags = getattr(getattr(fn, "__code__", None), "co_flags", 0)
    if flags & _CO_COROUTINE:
        async def wrapper(*args, **kwargs):
            if _remote.runs_locally(endpoint):
                return await fn(*args, **kwargs)
            import asyncio

            return await asyncio.to_thread(remote, args, kwargs)
    elif flags & _CO_GENERATOR:
        def wrapper(*args, **kwargs):
            if _remote.runs_locally(endpoint):
                return (yield from fn(*args, **kwargs))
            yield from (remote(args, kwargs) or [])
    else:
        def wrapper(*args, **kwargs):
            if _remote.runs_locally(endpoint):
                return fn(*args, **kwargs)
            return remote(args, kwargs)
    return functools.wraps(fn)(wrapper)
