# The @Endpoint decorator users write in worker files: validates the configuration when the module is imported
# and records the decorated function, class or load-balanced routes, which stay callable as plain Python.
import functools
import re
import threading


from ._params import (
    _bool, _check_name, _cpu_value, _cuda_version, _datacenters, _dependencies, _env, _gpu_list, _image, _int_in_bounds,
    _placement, _rule, _scaler_type, _system_dependencies, _template, _volumes, _workers_pair,
)
from .catalog import MESSAGES, PARAMETER_DEFAULTS

__all__ = ["Endpoint", "remote"]

_PATH_PARAM = re.compile(r"\{([^{}]*)\}")
_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, read from the code object so that inspect is not imported
_CO_GENERATOR = 0x20
_CO_ASYNC_GENERATOR = 0x200


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

    def __init__(self, name=None, *, id=None, gpu=None, cpu=None, workers=None,
                 idle_timeout=PARAMETER_DEFAULTS["idle_timeout"], dependencies=None, system_dependencies=None,
                 accelerate_downloads=PARAMETER_DEFAULTS["accelerate_downloads"], volume=None, datacenter=None, env=None,
                 gpu_count=PARAMETER_DEFAULTS["gpu_count"], execution_timeout_ms=PARAMETER_DEFAULTS["execution_timeout_ms"],
                 flashboot=PARAMETER_DEFAULTS["flashboot"], image=None, scaler_type=None,
                 scaler_value=PARAMETER_DEFAULTS["scaler_value"], template=None,
                 min_cuda_version=PARAMETER_DEFAULTS["min_cuda_version"], max_concurrency=PARAMETER_DEFAULTS["max_concurrency"]):
        # What this endpoint serves: one decorated function or class, or routes ("METHOD /path" -> function).
        self.target = None
        self.routes = {}
        self.id = None
        if id is not None:
            # A client of an endpoint that exists (Endpoint(id="...").run(input)): nothing to declare.
            if image is not None:
                raise ValueError(_rule("id-and-image"))
            if not isinstance(id, str) or not id.strip():
                raise ValueError(f"id must be the id of a deployed endpoint (a non-empty string), got: {id!r}")
            self.id = id.strip()
            self.name = name
            self.execution_timeout_ms = execution_timeout_ms or None
            return
        self.name = None if name is None else _check_name(name)
        if gpu is not None and cpu is not None:
            raise ValueError(_rule("gpu-and-cpu"))
        self.cpu = None if cpu is None else _cpu_value(cpu)
        # Neither gpu nor cpu: a GPU endpoint on any GPU (decisions.md).
        self.gpu = None if self.cpu is not None else (["any"] if gpu is None else _gpu_list(gpu))
        self.workers = _workers_pair(workers)
        self.idle_timeout = _int_in_bounds("idle_timeout", idle_timeout)
        self.dependencies = _dependencies(dependencies)
        self.system_dependencies = _system_dependencies(system_dependencies)
        self.template = _template(template)
        template_env = _env(self.template.env) if self.template is not None else {}
        self.env = {**template_env, **_env(env)}
        self.gpu_count = _int_in_bounds("gpu_count", gpu_count)
        # 0, the reference's default, means no limit of the endpoint's own: the platform's default applies.
        self.execution_timeout_ms = _int_in_bounds("execution_timeout_ms", execution_timeout_ms) or None
        self.max_concurrency = _int_in_bounds("max_concurrency", max_concurrency)
        self.scaler_type = _scaler_type(scaler_type)
        self.scaler_value = _int_in_bounds("scaler_value", scaler_value)
        self.min_cuda_version = _cuda_version(min_cuda_version)
        self.flashboot = _bool("flashboot", flashboot)
        self.accelerate_downloads = _bool("accelerate_downloads", accelerate_downloads)
        self.image = _image(image)
        self.volumes = _volumes(volume)
        self.volume = volume
        self.datacenter = _placement(self.cpu is not None, _datacenters(datacenter), self.volumes)

    @property
    def is_load_balanced(self):
        return bool(self.routes)

    def config(self):
        """The configuration after defaults, as plain data."""
        return {
            "name": self.name, "gpu": self.gpu, "cpu": self.cpu, "workers": self.workers,
            "idle_timeout": self.idle_timeout, "dependencies": list(self.dependencies), "env": dict(self.env),
            "gpu_count": self.gpu_count, "execution_timeout_ms": self.execution_timeout_ms,
            "max_concurrency": self.max_concurrency, "datacenter": self.datacenter,
            "volume": [v.config() for v in self.volumes],
            "scaler_type": self.scaler_type or ("REQUEST_COUNT" if self.routes else "QUEUE_DELAY"),
            "scaler_value": self.scaler_value, "min_cuda_version": self.min_cuda_version,
            "system_dependencies": list(self.system_dependencies), "image": self.image,
            "template": None if self.template is None else self.template.config(),
            "flashboot": self.flashboot, "accelerate_downloads": self.accelerate_downloads,
        }

    def __repr__(self):
        if self.id is not None:
            return f"Endpoint(id={self.id!r})"
        hardware = f"cpu={self.cpu!r}" if self.cpu else f"gpu={self.gpu!r}"
        return f"Endpoint(name={self.name!r}, {hardware}, workers={self.workers!r})"

    # Queue-based: @Endpoint(...) on a def, an async def or a class.
    def __call__(self, target):
        if self.id is not None:
            raise ValueError(_rule("id-with-function"))
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
            _construct_remotely(self, target)
            return target
        wrapper = _dispatching_wrapper(self, target, None)
        wrapper.endpoint = self
        return wrapper

    # Load-balanced: @api.get("/path") and friends; the function stays callable (see _dispatching_wrapper).
    # On a client (Endpoint(id=...)) they call the route instead: api.post("/process", {"text": "hi"}).
    def get(self, path, body=None, **kw):
        return self._route_or_call("GET", path, body, kw)

    def post(self, path, body=None, **kw):
        return self._route_or_call("POST", path, body, kw)

    def put(self, path, body=None, **kw):
        return self._route_or_call("PUT", path, body, kw)

    def patch(self, path, body=None, **kw):
        return self._route_or_call("PATCH", path, body, kw)

    def delete(self, path, body=None, **kw):
        return self._route_or_call("DELETE", path, body, kw)

    def _route_or_call(self, method, path, body, kw):
        if self.id is None:
            if body is not None or kw:
                raise ValueError(f"@{method.lower()}(path) declares a route and takes only the path; to call a deployed "
                                 "endpoint, use Endpoint(id=...)")
            return self._route(method, path)
        from . import _client, _remote

        if _remote.awaited(3):  # `await endpoint.post(...)`: the caller of get/post/..., as the reference's code writes it
            return _remote.awaitable(_client.route, self.id, method, path, body, kw.get("timeout"))
        return _client.route(self.id, method, path, body, timeout=kw.get("timeout"))

    # A client of an existing queue-based endpoint (Endpoint(id="...")).
    def run(self, input):
        """Submits a job and returns its EndpointJob at once (status(), wait(), output, error, done, cancel(), result(),
        stream())."""
        from . import _client, _remote

        if _remote.awaited():  # `await endpoint.run(...)`, as the reference product's code writes it
            return _remote.awaitable(_client.run, self._client_id("run"), input)
        return _client.run(self._client_id("run"), input)

    def runsync(self, input, timeout=None):
        """Runs a job and returns its output; a failed job raises StratoRemoteError with its error. Awaited
        (`job = await endpoint.runsync(...)`, as the reference product's code writes it) it gives the ended EndpointJob,
        whose `output` or `error` holds the result, as the reference's does."""
        from . import _client, _remote

        if timeout is None and self.execution_timeout_ms:
            timeout = self.execution_timeout_ms / 1000
        if _remote.awaited():
            return _remote.awaitable(_client.runsync_job, self._client_id("runsync"), input, timeout)
        return _client.runsync(self._client_id("runsync"), input, timeout=timeout)

    def cancel(self, job_id):
        """Cancels a job of this endpoint by its id and returns its EndpointJob (awaited too, as the reference's)."""
        from . import _client, _remote

        if _remote.awaited():
            return _remote.awaitable(_client.cancel, self._client_id("cancel"), job_id)
        return _client.cancel(self._client_id("cancel"), job_id)

    def _client_id(self, op):
        if self.id is None:
            raise ValueError(
                f".{op}() calls an endpoint that exists: connect with Endpoint(id=\"<endpoint id>\"); a declared "
                "endpoint's function is called directly once it is deployed"
            )
        return self.id

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
                convertor = re.fullmatch(r"([A-Za-z_]\w*):(\w+)", param)
                raise ValueError(MESSAGES["route-path-param"].format(
                    param=f"{{{param}}}", path=path,
                    convertor=(f"; a convertor (:{convertor[2]}) is not taken: write {{{convertor[1]}}}, which matches one "
                               "path segment") if convertor else ""))
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


_here = threading.local()  # set while the runtime builds the instance it serves (construct_here)


def construct_here(cls, args=(), kwargs=None):
    """The instance a worker or a local server serves: the class itself, built in this process whatever the
    environment says (a worker started without STRATO_ENDPOINT_NAME is its endpoint's still); with the constructor's
    arguments a caller sent (`Model("large")` in a script)."""
    _here.active = True
    try:
        return cls(*args, **(kwargs or {}))
    finally:
        _here.active = False


def _construct_remotely(endpoint, cls):
    """`Model()` of a class endpoint, in a script or another endpoint, is a handle on the deployed endpoint: each call
    of a public method runs there, as a call of a decorated function does (before, the class was built and its method
    run in the caller's process: a GPU model loaded on a laptop, without a word). The endpoint's own worker,
    STRATO_LOCAL=1 and subclasses construct the class itself."""
    from . import _context

    own = cls.__dict__.get("__new__")
    own = own.__func__ if isinstance(own, staticmethod) else own

    def __new__(klass, *args, **kwargs):
        if klass is cls and not getattr(_here, "active", False) and not _context.runs_locally(endpoint):
            return _RemoteInstance(endpoint, cls, args, kwargs)
        if own is not None:
            return own(klass, *args, **kwargs)
        parent = super(cls, klass).__new__
        return parent(klass) if parent is object.__new__ else parent(klass, *args, **kwargs)

    cls.__new__ = staticmethod(__new__)


class _RemoteInstance:
    """A class endpoint's deployed instance, seen from a caller: its public methods, each a call of the endpoint. The
    constructor's arguments (`Model("large", temperature=0.9)`, as the reference product takes them) go with every
    call, and the worker serves it from an instance built with them (_app.Target)."""

    def __init__(self, endpoint, cls, args=(), kwargs=None):
        from ._app import public_methods

        self._endpoint, self._cls, self._methods = endpoint, cls, set(public_methods(cls))
        self._init = None
        if args or kwargs:
            import inspect

            try:  # a call __init__ refuses raises here, as building the class locally would
                inspect.signature(cls.__init__).bind(None, *args, **(kwargs or {}))
            except TypeError as e:
                raise TypeError(f"{cls.__name__}(): {e}") from None
            except ValueError:  # no signature to check against: the worker's construction says
                pass
            self._init = {"args": list(args), "kwargs": dict(kwargs or {})}

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._methods:
            raise AttributeError(f"the deployed {self._cls.__name__!r} has no method {name!r} to call: its public "
                                 f"methods are {', '.join(sorted(self._methods)) or 'none'}")
        import inspect

        fn = getattr(self._cls, name)
        plain = isinstance(inspect.getattr_static(self._cls, name), (staticmethod, classmethod))
        # The method's arguments are bound without `self` (a static or class method has none to drop).
        signature = fn if plain else functools.partial(fn, None)
        if not plain:
            signature.__name__ = fn.__name__  # for the messages of a call its signature refuses
        wrapper = _dispatching_wrapper(self._endpoint, fn, None, method=name, signature=signature, init=self._init)
        setattr(self, name, wrapper)
        return wrapper

    def __repr__(self):
        return f"<{self._cls.__name__} on the deployed endpoint {self._endpoint.name!r}>"


def _dispatching_wrapper(endpoint, fn, route, method=None, signature=None, init=None):
    """A wrapper with fn's kind (coroutine, generator and async generator functions stay so) that runs fn here when this process is
    the endpoint's own worker (or STRATO_LOCAL=1), and otherwise calls the deployed endpoint (scripts, other
    endpoints). `fn.__wrapped__` is always the plain function. `method`: fn is that method of a class endpoint,
    called only on the endpoint (its arguments bound against `signature`, the method without `self`), `init` the
    constructor's arguments the instance is built with there."""
    from . import _context, _remote

    bind = signature or fn

    def remote(args, kwargs):
        if route is None:
            return _remote.call_queue(endpoint, bind, args, kwargs, method=method, init=init)
        return _remote.call_route(endpoint, route[0], route[1], fn, args, kwargs)

    flags = getattr(getattr(fn, "__code__", None), "co_flags", 0)
    if flags & _CO_COROUTINE:
        async def wrapper(*args, **kwargs):
            if method is None and _context.runs_locally(endpoint):
                return await fn(*args, **kwargs)
            import asyncio

            return await asyncio.to_thread(remote, args, kwargs)
    elif flags & _CO_GENERATOR:
        def wrapper(*args, **kwargs):
            if method is None and _context.runs_locally(endpoint):
                return (yield from fn(*args, **kwargs))
            if route is None:  # each value as the handler yields it
                yield from _remote.stream_queue(endpoint, bind, args, kwargs, method=method, init=init)
            else:
                yield from (remote(args, kwargs) or [])
    elif flags & _CO_ASYNC_GENERATOR:
        async def wrapper(*args, **kwargs):
            if method is None and _context.runs_locally(endpoint):
                async for value in fn(*args, **kwargs):
                    yield value
                return
            import asyncio

            if route is not None:
                for value in await asyncio.to_thread(remote, args, kwargs) or []:
                    yield value
                return
            # Each value as the handler yields it; the event loop goes on while a read waits.
            values = _remote.stream_queue(endpoint, bind, args, kwargs, method=method, init=init)
            end = object()
            while (value := await asyncio.to_thread(next, values, end)) is not end:
                yield value
    else:
        def wrapper(*args, **kwargs):
            # `await fn(...)` of a plain function, as the reference product's code writes it, gets a coroutine.
            if method is None and _context.runs_locally(endpoint):
                value = fn(*args, **kwargs)
                return _remote.ready(value) if _remote.awaited() else value
            if _remote.awaited():
                return _remote.awaitable(remote, args, kwargs)
            return remote(args, kwargs)
    return functools.wraps(fn)(wrapper)


def remote(name=None, **parameters):
    """The reference product's older spelling: @remote(name=..., gpu=...) is @Endpoint(name=..., gpu=...)."""
    if "resource_config" in parameters:
        raise ValueError(
            "remote(resource_config=...) is not supported: pass the endpoint's parameters directly, "
            "e.g. @remote(name=\"infer\", gpu=GpuGroup.ADA_24), or use @Endpoint(...)"
        )
    return Endpoint(name, **parameters)
