# Calling a deployed endpoint from a script or from another endpoint: the call's arguments checked against the
# function's signature, sent to the endpoint found in the app context (_context.py), its result returned or its error
# raised: /runsync for a queue-based function, /run and /stream for a generator, the route for a load-balanced one.
import inspect
import sys
import time

from ._context import StratoContextError, lookup  # noqa: F401 (StratoContextError: what callers catch)
from ._wire import ENDED, StratoRemoteError, error_text, follow_stream, param_text, query_string, request, transient
from ._app import INIT_KEY
from .catalog import DEFAULT_CLIENT_TIMEOUT_MS


def _arguments(fn, args, kwargs):
    """The call's arguments by name, as the endpoint's function receives them (fn(**input)). A call the function's
    signature refuses raises the TypeError a local call would, here, before any request: a missing or misspelled
    argument never starts a worker (on a GPU endpoint scaled to zero, a cold start) just to fail."""
    name = getattr(fn, "__name__", "the function")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # nothing to check against (a callable without a signature): sent as given
        return {**dict(zip(getattr(getattr(fn, "__code__", None), "co_varnames", ()), args)), **kwargs}
    params = signature.parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        # A misspelled keyword is named as a local call names it, before any missing argument it leaves behind.
        unknown = [k for k in kwargs if k not in params or params[k].kind is inspect.Parameter.POSITIONAL_ONLY]
        if unknown:
            raise TypeError(f"{name}(): got an unexpected keyword argument {unknown[0]!r}")
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None
    out = {}
    for key, value in bound.arguments.items():
        kind = signature.parameters[key].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        elif kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):  # bound: given a value
            raise TypeError(f"{name}() cannot send '{key}' to its endpoint: the endpoint calls it with keyword "
                            f"arguments only (fn(**input)); make it an ordinary parameter")
        else:
            out[key] = value
    return out


def call_queue(endpoint, fn, args, kwargs, method=None, init=None):
    """Runs the function on its queue-based endpoint through /runsync, polling /status past the wait; `method`: the
    method of a class endpoint it calls (the input's "method")."""
    payload = _with_method(method, _arguments(fn, args, kwargs), init)
    ep = lookup(endpoint.name)
    timeout_ms = endpoint.execution_timeout_ms or ep["timeout_ms"] or DEFAULT_CLIENT_TIMEOUT_MS
    wait = max(1000, min(int(timeout_ms), 300_000))
    deadline = time.monotonic() + timeout_ms / 1000
    status, job = request("POST", f"{ep['url']}/runsync?wait={wait}", ep["key"], {"input": payload}, timeout=wait / 1000 + 10)
    if status != 200 or not isinstance(job, dict):
        raise StratoRemoteError(f"endpoint '{endpoint.name}' refused the call (HTTP {status}): {error_text(job)}", status=status)
    while job.get("status") in ("IN_QUEUE", "IN_PROGRESS"):
        # The endpoint's execution timeout is the call's: the platform stops a running job then (counted from its
        # start, a moment after the call's), so its TIMED_OUT is waited for a little rather than guessed at.
        grace = _VERDICT_GRACE_S if endpoint.execution_timeout_ms and job.get("status") == "IN_PROGRESS" else 0
        if time.monotonic() >= deadline + grace:
            raise _late(endpoint.name, ep, job, job.get("id"), timeout_ms)
        time.sleep(0.2)
        try:
            status, read = request("GET", f"{ep['url']}/status/{job['id']}", ep["key"], timeout=10)
        except StratoRemoteError as e:
            if not transient(e):
                raise
            continue  # out of reach a moment (a restart): the job is in the store; asked again until the deadline
        if status in (429, 502, 503, 504):
            continue
        if status != 200 or not isinstance(read, dict):
            raise StratoRemoteError(f"status of job on '{endpoint.name}' failed (HTTP {status}): {error_text(read)}", status=status)
        job = read
    if job.get("status") != "COMPLETED":
        raise StratoRemoteError(
            f"endpoint '{endpoint.name}' job {job.get('id')} {job.get('status')}: {job.get('error') or 'no error text'}",
            status=job.get("status"), job_id=job.get("id"))
    return job.get("output")


# How long past the call's time-out a running job's own TIMED_OUT is waited for (see call_queue).
_VERDICT_GRACE_S = 5


def _late(name, ep, job, job_id, timeout_ms):
    """The call's time-out (execution_timeout_ms, or the 60 s default: the time a call waits, a cold start included)
    passed: the job itself goes on, and may still complete; said with where its result will be."""
    queued = job.get("status") == "IN_QUEUE"
    return StratoRemoteError(
        f"endpoint '{name}' did not finish job {job_id} within the call's {timeout_ms} ms "
        f"({'it had not started: its worker was starting or busy' if queued else 'it was still running'}); the job goes on "
        f"and may still complete: read it with EndpointJob('{ep.get('id')}', '{job_id}').result(), or set execution_timeout_ms to "
        "wait longer",
        status=job.get("status"), job_id=job_id)


def _with_method(method, payload, init=None):
    """A class endpoint's input: the method picked, and the constructor's arguments its instance is built with
    (INIT_KEY, _app.Target) when the caller gave some."""
    if init is not None:
        payload = {INIT_KEY: init, **payload}
    return payload if method is None else {"method": method, **payload}


def stream_queue(endpoint, fn, args, kwargs, method=None, init=None):
    """Runs a generator function on its queue-based endpoint (/run) and yields each value as the handler yields it
    (/stream), the pieces of a value the platform split (over 1 MB) put together again. A failure is raised after
    the values that came before it, as iterating the function locally would."""
    import urllib.parse

    payload = _with_method(method, _arguments(fn, args, kwargs), init)
    ep = lookup(endpoint.name)
    status, job = request("POST", f"{ep['url']}/run", ep["key"], {"input": payload})
    if status != 200 or not isinstance(job, dict) or not job.get("id"):
        raise StratoRemoteError(f"endpoint '{endpoint.name}' refused the call (HTTP {status}): {error_text(job)}", status=status)
    job_id = job["id"]
    stream_url = f"{ep['url']}/stream/{urllib.parse.quote(job_id, safe='')}"
    status_url = f"{ep['url']}/status/{urllib.parse.quote(job_id, safe='')}"
    timeout_ms = endpoint.execution_timeout_ms or ep["timeout_ms"] or DEFAULT_CLIENT_TIMEOUT_MS
    deadline = time.monotonic() + timeout_ms / 1000

    def read_chunks():
        status, chunks = request("GET", stream_url, ep["key"], timeout=330)
        if status != 200 or not isinstance(chunks, list):
            raise StratoRemoteError(f"stream of job {job_id} on '{endpoint.name}' failed (HTTP {status}): {error_text(chunks)}",
                                    status=status, job_id=job_id)
        return chunks

    def job_ended():
        nonlocal job
        status, job = request("GET", status_url, ep["key"])
        if status != 200 or not isinstance(job, dict):
            raise StratoRemoteError(f"status of job {job_id} on '{endpoint.name}' failed (HTTP {status}): {error_text(job)}",
                                    status=status, job_id=job_id)
        ended = job.get("status") in ENDED
        if not ended and time.monotonic() >= deadline:
            raise _late(endpoint.name, ep, job, job_id, timeout_ms)
        return ended

    try:
        yield from follow_stream(read_chunks, job_ended)
    except GeneratorExit:
        # The caller stopped reading (a break, the generator dropped): the call is abandoned, and so is its job,
        # which would otherwise run on (a GPU worker held) for nobody.
        if job.get("status") not in ENDED:
            try:
                request("POST", f"{ep['url']}/cancel/{urllib.parse.quote(job_id, safe='')}", ep["key"], timeout=10)
            except StratoRemoteError:
                pass  # out of reach: the job ends by itself
        raise
    if job.get("status") != "COMPLETED":
        raise StratoRemoteError(
            f"endpoint '{endpoint.name}' job {job_id} {job.get('status')}: {job.get('error') or 'no error text'}",
            status=job.get("status"), job_id=job_id)


def call_route(endpoint, method, path, fn, args, kwargs):
    """Calls a load-balanced route: path parameters filled in, the rest as the JSON body (or query for GET/DELETE),
    each value in the JSON form a FastAPI route would answer it with (a pydantic model as its fields: _jsonable)."""
    import urllib.parse

    payload = _arguments(fn, args, kwargs)
    for param in [p[1:-1] for p in path.split("/") if p.startswith("{") and p.endswith("}")]:
        path = path.replace("{" + param + "}", urllib.parse.quote(param_text(payload.pop(param, "")), safe=""))
    ep = lookup(endpoint.name)
    timeout = (endpoint.execution_timeout_ms or ep["timeout_ms"] or DEFAULT_CLIENT_TIMEOUT_MS) / 1000
    url = f"{ep['url']}{path}"
    body = None
    if method in ("GET", "DELETE"):
        if payload:
            url += "?" + query_string(payload)
    else:
        body = payload
    status, res = request(method, url, ep["key"], body, timeout=timeout)
    if status >= 400:
        raise StratoRemoteError(f"{method} {path} on '{endpoint.name}' failed (HTTP {status}): {error_text(res)}", status=status)
    return res


_AWAITED = {}  # (code, offset of the call) -> whether the caller awaits its result


def awaited(depth=2):
    """True when the function `depth` frames up (the caller of the decorated function) awaits the call's result next:
    `await fn(...)`. The reference product makes every decorated function awaitable, so its code awaits plain `def`
    ones too; such a call then gets a coroutine, and any other call its value. Read from the caller's bytecode (the
    instruction after the call is GET_AWAITABLE), once per call site."""
    frame = sys._getframe(depth)
    code = frame.f_code
    if not code.co_flags & 0x280:  # CO_COROUTINE | CO_ASYNC_GENERATOR: only there can an await follow
        return False
    key = (code, frame.f_lasti)
    hit = _AWAITED.get(key)
    if hit is None:
        import dis

        hit = next((i.opname == "GET_AWAITABLE" for i in dis.get_instructions(code) if i.offset > frame.f_lasti), False)
        if len(_AWAITED) > 4096:
            _AWAITED.clear()
        _AWAITED[key] = hit
    return hit


async def ready(value):
    """A value as the result of an awaited call."""
    return value


def awaitable(call, *args):
    """`call(*args)` run on a thread, as a coroutine: an awaited call of a plain function does not block the loop."""
    import asyncio

    return asyncio.to_thread(call, *args)
