# Calling a deployed endpoint from a script or from another endpoint: resolve the app context, look the endpoint
# up by name through the control plane (cached 300 s), send the call, return its result or raise its error.
import inspect
import json
import os
import re
import sys
import threading
import time

from .catalog import DEFAULT_CLIENT_TIMEOUT_MS, PEER_CACHE_SECONDS, PROJECT_MARKERS, RUN_BODY_BYTES, RUNSYNC_BODY_BYTES

_cache = {}
_cache_lock = threading.Lock()


class StratoContextError(RuntimeError):
    """No app context: the endpoint cannot be found without knowing the app and environment."""


class StratoRemoteError(RuntimeError):
    """The deployed endpoint ran the call and it failed (or timed out, or was cancelled)."""

    def __init__(self, message, status=None, job_id=None):
        super().__init__(message)
        self.status = status
        self.job_id = job_id


def runs_locally(endpoint):
    """True when a call of this endpoint's function runs in this process instead of on the endpoint."""
    flag = os.environ.get("STRATO_LOCAL", "").lower()
    if flag in ("1", "true", "yes"):
        return True
    if os.environ.get("STRATO_WORKER_TOKEN"):
        own = os.environ.get("STRATO_ENDPOINT_NAME", "")
        prefix = os.environ.get("STRATO_ENDPOINT_PREFIX", "")
        return own in (endpoint.name, prefix + str(endpoint.name))
    return False


def _project_root():
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    start = os.path.dirname(os.path.abspath(main)) if main else os.getcwd()
    d = start
    while True:
        if any((os.path.isdir if m.endswith("/") else os.path.isfile)(os.path.join(d, m.rstrip("/"))) for m in PROJECT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return start
        d = parent


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def _dotenv(root):
    """KEY=VALUE lines of the project's .env, read as the CLI reads them (engine/src/api/config.ts readDotEnv):
    quotes stripped, `export ` allowed, comments ignored, also after an unquoted value."""
    out = {}
    try:
        with open(os.path.join(root, ".env"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        m = _DOTENV_LINE.match(line)
        if not m:
            continue
        v = m.group(2)
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1]
        else:
            v = re.sub(r"\s+#.*$", "", v)
        out[m.group(1)] = v
    return out


def _app(root):
    """The app: STRATO_APP, else the project directory's name (engine/src/deploy/context.ts appNameFor)."""
    return os.environ.get("STRATO_APP", "").strip() or os.path.basename(os.path.abspath(root))


def _data_dir():
    if os.environ.get("STRATO_DATA_DIR"):
        return os.path.abspath(os.environ["STRATO_DATA_DIR"])
    xdg = os.environ.get("XDG_DATA_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "strato")


def _origin(url):
    """scheme://host[:port], lower-cased: the unit of trust (engine/src/api/trust.ts originOf)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    port = f":{parts.port}" if parts.port and parts.port != default else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}".lower()


def _trusted(url):
    """True when the user confirmed this URL's origin with `strato trust URL` (the same file the CLI reads)."""
    try:
        with open(os.path.join(_data_dir(), "trusted-urls"), encoding="utf-8") as f:
            return _origin(url) in {line.strip().lower() for line in f if line.strip()}
    except OSError:
        return False


def _target(name, root):
    """(base_url, api_key) of the platform, from the environment, .env, the worker's platform or the local one.
    The rule of the CLI (engine/src/api/trust.ts): the user's own key never goes to a URL the project's .env chose
    unless the user trusted it."""
    dotenv = _dotenv(root)
    url = os.environ.get("STRATO_API_URL") or dotenv.get("STRATO_API_URL") or os.environ.get("STRATO_PLATFORM_URL")
    key = os.environ.get("STRATO_API_KEY") or dotenv.get("STRATO_API_KEY")
    project_url = not os.environ.get("STRATO_API_URL") and bool(dotenv.get("STRATO_API_URL"))
    if project_url and os.environ.get("STRATO_API_KEY") and not _trusted(url):
        raise StratoContextError(
            f"calling endpoint '{name}': STRATO_API_URL {_origin(url)} comes from the project's .env, and your "
            f"STRATO_API_KEY is not sent to a server the project chose: if you trust it, run strato trust {_origin(url)} "
            "(or set STRATO_API_URL in your own environment)"
        )
    if not url:
        platform = os.path.join(_data_dir(), "platform")
        try:
            with open(os.path.join(platform, "platform.json"), encoding="utf-8") as f:
                url = json.load(f).get("url")
        except (OSError, ValueError):
            url = None
        if url and not key:
            try:
                with open(os.path.join(platform, "api-key"), encoding="utf-8") as f:
                    key = f.read().strip()
            except OSError:
                key = None
    if not url:
        raise _no_context(name, "no Strato platform is running here and STRATO_API_URL is not set")
    if not key and os.environ.get("STRATO_WORKER_TOKEN"):
        # A deployed worker: .env is not deployed; strato deploy gives the key to endpoints it sees calling others.
        raise StratoContextError(
            f"endpoint '{os.environ.get('STRATO_ENDPOINT_NAME', '')}' calls endpoint '{name}' but was deployed without "
            "a key to call others: strato deploy gives one to an endpoint whose code names another endpoint's function "
            "(defined in its file or imported); for a call made some other way (getattr, a name built at run time), "
            "import that function inside the calling function, and deploy again"
        )
    if not key:
        raise StratoContextError(f"calling endpoint '{name}' needs the API key: set STRATO_API_KEY in the environment or in .env")
    return url.rstrip("/"), key


def _no_context(name, why, remedy=None):
    return StratoContextError(
        f"no app context for endpoint '{name}' ({why}). " + (remedy or "Either run it through the development server "
        "(strato dev), or set both STRATO_APP and STRATO_ENV to the app and environment where it is deployed.")
    )


def _environment_names(base, key, app):
    data = _graphql(base, key, "query($n: String!) { app(name: $n) { environments { name } } }", {"n": app})
    if not data.get("app"):
        return None
    return sorted(e["name"] for e in data["app"]["environments"] if e["name"] != "live")


def _request(method, url, key, body=None, timeout=60.0):
    import urllib.error
    import urllib.parse
    import urllib.request

    data = None if body is None else json.dumps(body).encode("utf-8")
    if data is not None:
        # The platform answers 413 to a larger body, but closes the connection while it is still being sent, and
        # the sender sees only a broken pipe: said here, before anything is sent.
        path = urllib.parse.urlsplit(url).path
        limit = RUN_BODY_BYTES if path.endswith("/run") else RUNSYNC_BODY_BYTES
        if len(data) > limit:
            raise StratoRemoteError(
                f"the call's arguments are {len(data) / 1048576:.1f} MB as JSON, over the {limit // 1048576} MB the "
                f"platform takes for {'a /run' if limit == RUN_BODY_BYTES else 'a call'} (HTTP 413): pass large data "
                "by reference (a URL, or a file on a network volume)",
                status=413,
            )
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            raw = res.read()
            status = res.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    except (urllib.error.URLError, OSError) as e:
        raise StratoRemoteError(f"could not reach the Strato platform at {url.split('/v2/')[0].split('/lb/')[0]}: {getattr(e, 'reason', e)}") from None
    if status == 401:
        raise StratoRemoteError("the Strato platform refused the API key (401): check STRATO_API_KEY", status=401)
    try:
        return status, (json.loads(raw) if raw else None)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def _graphql(base, key, query, variables):
    status, body = _request("POST", f"{base}/graphql", key, {"query": query, "variables": variables})
    if not isinstance(body, dict) or body.get("errors"):
        errors = body.get("errors") if isinstance(body, dict) else None
        raise StratoRemoteError(f"the control plane refused the lookup: {errors[0].get('message') if errors else body}")
    return body["data"]


def _environment(base, key, app, name):
    env = os.environ.get("STRATO_ENV")
    if env:
        return env
    names = _environment_names(base, key, app)
    if names is None:
        raise _no_context(name, f"app '{app}' (from the project directory) is not deployed")
    # The CLI's rule (engine/src/deploy/context.ts findEnvironment): the only environment, else STRATO_ENV decides.
    if len(names) == 1:
        return names[0]
    if not names:
        raise _no_context(name, f"app '{app}' has no environment", "Deploy it first (strato deploy).")
    raise _no_context(name, f"app '{app}' has environments {', '.join(names)} and STRATO_ENV is not set",
                      f"Set STRATO_ENV to the one to call: {' or '.join(names)}.")


def lookup(name):
    """The deployed endpoint {url, type, timeout_ms} for `name` in the resolved app context (cached 300 s)."""
    root = _project_root()
    base, key = _target(name, root)
    app = _app(root)
    env_hint = os.environ.get("STRATO_ENV", "")
    cache_key = (base, app, env_hint, name)
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(cache_key)
        if hit and hit[0] > now:
            return hit[1]
    env = _environment(base, key, app, name)
    full = os.environ.get("STRATO_ENDPOINT_PREFIX", "") + name
    data = _graphql(
        base, key,
        "query($a: String!, $e: String!, $n: String!) { endpointByName(app: $a, environment: $e, name: $n) "
        "{ id url type declaredExecutionTimeoutMs } }",
        {"a": app, "e": env, "n": full},
    )
    ep = data.get("endpointByName")
    if not ep:
        names = _environment_names(base, key, app) if env_hint else None
        if names is not None and env not in names:  # STRATO_ENV names no environment of the app: a typo, most likely
            raise _no_context(name, f"app '{app}' has no environment '{env}' (STRATO_ENV); it has {', '.join(names) or 'none'}",
                              f"Set STRATO_ENV to one of those{' or unset it' if len(names) == 1 else ''}.")
        raise _no_context(name, f"no endpoint named '{full}' in app '{app}', environment '{env}'")
    url = ep["url"]
    if base == os.environ.get("STRATO_PLATFORM_URL", "").rstrip("/"):
        # A worker calls through the address it reaches its platform at (a preview container: strato-platform),
        # not the one the platform advertises to clients on its own machine.
        url = base + "/" + url.split("/", 3)[3] if url.count("/") >= 3 else url
    found = {"url": url, "type": ep["type"], "timeout_ms": ep.get("declaredExecutionTimeoutMs"), "key": key}
    with _cache_lock:
        _cache[cache_key] = (now + PEER_CACHE_SECONDS, found)
    return found


def _arguments(fn, args, kwargs):
    """The call's arguments by name, as the endpoint's function receives them (fn(**input)). A call the function's
    signature refuses raises the TypeError a local call would, here, before any request: a missing or misspelled
    argument never starts a worker (on a GPU endpoint scaled to zero, a cold start) just to fail."""
    name = getattr(fn, "__name__", "the function")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # nothing to check against (a callable without a signature): sent as given
        return {**dict(zip(getattr(getattr(fn, "__code__", None), "co_varnames", ()), args)), **kwargs}
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


def call_queue(endpoint, fn, args, kwargs, method=None):
    """Runs the function on its queue-based endpoint through /runsync, polling /status past the wait; `method`: the
    method of a class endpoint it calls (the input's "method")."""
    payload = _with_method(method, _arguments(fn, args, kwargs))
    ep = lookup(endpoint.name)
    timeout_ms = endpoint.execution_timeout_ms or ep["timeout_ms"] or DEFAULT_CLIENT_TIMEOUT_MS
    wait = max(1000, min(int(timeout_ms), 300_000))
    deadline = time.monotonic() + timeout_ms / 1000
    status, job = _request("POST", f"{ep['url']}/runsync?wait={wait}", ep["key"], {"input": payload}, timeout=wait / 1000 + 10)
    if status != 200 or not isinstance(job, dict):
        raise StratoRemoteError(f"endpoint '{endpoint.name}' refused the call (HTTP {status}): {_error_text(job)}", status=status)
    while job.get("status") in ("IN_QUEUE", "IN_PROGRESS"):
        if time.monotonic() >= deadline:
            raise StratoRemoteError(
                f"endpoint '{endpoint.name}' did not finish job {job.get('id')} within {timeout_ms} ms "
                "(set execution_timeout_ms for longer jobs)", status=job.get("status"), job_id=job.get("id"))
        time.sleep(0.2)
        status, job = _request("GET", f"{ep['url']}/status/{job['id']}", ep["key"])
        if status != 200 or not isinstance(job, dict):
            raise StratoRemoteError(f"status of job on '{endpoint.name}' failed (HTTP {status}): {_error_text(job)}", status=status)
    if job.get("status") != "COMPLETED":
        raise StratoRemoteError(
            f"endpoint '{endpoint.name}' job {job.get('id')} {job.get('status')}: {job.get('error') or 'no error text'}",
            status=job.get("status"), job_id=job.get("id"))
    return job.get("output")


ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT")  # the job states that are final


def stream_values(chunks, pieces):
    """The handler's values in a /stream answer: a value the platform split (over 1 MB: metrics part, parts and, for
    JSON text, json) is put together from its pieces; `pieces` holds those of one not complete yet, across answers."""
    for chunk in chunks:
        value = chunk.get("output") if isinstance(chunk, dict) else chunk
        metrics = (chunk.get("metrics") if isinstance(chunk, dict) else None) or {}
        if "parts" not in metrics:
            yield value
            continue
        pieces.append(value)
        if metrics.get("part") == metrics["parts"] - 1:
            text = "".join(pieces)
            pieces.clear()
            yield json.loads(text) if metrics.get("json") else text


def _with_method(method, payload):
    return payload if method is None else {"method": method, **payload}


def stream_queue(endpoint, fn, args, kwargs, method=None):
    """Runs a generator function on its queue-based endpoint (/run) and yields each value as the handler yields it
    (/stream), the pieces of a value the platform split (over 1 MB) put together again. A failure is raised after
    the values that came before it, as iterating the function locally would."""
    import urllib.parse

    payload = _with_method(method, _arguments(fn, args, kwargs))
    ep = lookup(endpoint.name)
    status, job = _request("POST", f"{ep['url']}/run", ep["key"], {"input": payload})
    if status != 200 or not isinstance(job, dict) or not job.get("id"):
        raise StratoRemoteError(f"endpoint '{endpoint.name}' refused the call (HTTP {status}): {_error_text(job)}", status=status)
    job_id = job["id"]
    stream_url = f"{ep['url']}/stream/{urllib.parse.quote(job_id, safe='')}"
    status_url = f"{ep['url']}/status/{urllib.parse.quote(job_id, safe='')}"
    timeout_ms = endpoint.execution_timeout_ms or ep["timeout_ms"] or DEFAULT_CLIENT_TIMEOUT_MS
    deadline = time.monotonic() + timeout_ms / 1000
    pieces = []
    ended = False
    while True:
        status, chunks = _request("GET", stream_url, ep["key"], timeout=330)
        if status != 200 or not isinstance(chunks, list):
            raise StratoRemoteError(f"stream of job {job_id} on '{endpoint.name}' failed (HTTP {status}): {_error_text(chunks)}",
                                    status=status, job_id=job_id)
        yield from stream_values(chunks, pieces)
        if chunks:
            continue
        if ended:  # every chunk of an ended job delivered
            break
        status, job = _request("GET", status_url, ep["key"])
        if status != 200 or not isinstance(job, dict):
            raise StratoRemoteError(f"status of job {job_id} on '{endpoint.name}' failed (HTTP {status}): {_error_text(job)}",
                                    status=status, job_id=job_id)
        # Ended: one more read takes what came between the empty answer and this one.
        ended = job.get("status") in ENDED
        if not ended and time.monotonic() >= deadline:
            raise StratoRemoteError(
                f"endpoint '{endpoint.name}' did not finish job {job_id} within {timeout_ms} ms "
                "(set execution_timeout_ms for longer jobs)", status=job.get("status"), job_id=job_id)
    if job.get("status") != "COMPLETED":
        raise StratoRemoteError(
            f"endpoint '{endpoint.name}' job {job_id} {job.get('status')}: {job.get('error') or 'no error text'}",
            status=job.get("status"), job_id=job_id)


def call_route(endpoint, method, path, fn, args, kwargs):
    """Calls a load-balanced route: path parameters filled in, the rest as the JSON body (or query for GET/DELETE)."""
    import urllib.parse

    payload = _arguments(fn, args, kwargs)
    for param in [p[1:-1] for p in path.split("/") if p.startswith("{") and p.endswith("}")]:
        path = path.replace("{" + param + "}", urllib.parse.quote(str(payload.pop(param, "")), safe=""))
    ep = lookup(endpoint.name)
    timeout = (endpoint.execution_timeout_ms or ep["timeout_ms"] or DEFAULT_CLIENT_TIMEOUT_MS) / 1000
    url = f"{ep['url']}{path}"
    body = None
    if method in ("GET", "DELETE"):
        if payload:
            url += "?" + urllib.parse.urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in payload.items()})
    else:
        body = payload
    status, res = _request(method, url, ep["key"], body, timeout=timeout)
    if status >= 400:
        raise StratoRemoteError(f"{method} {path} on '{endpoint.name}' failed (HTTP {status}): {_error_text(res)}", status=status)
    return res


def _error_text(body):
    if isinstance(body, dict) and "error" in body:
        return f"{body['error']}: {body['detail']}" if body.get("detail") else str(body["error"])
    return str(body)[:500]
