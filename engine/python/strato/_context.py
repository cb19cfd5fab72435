# Where a call from Python goes: the platform (URL and key, from the environment, .env, the worker's platform or the
# local one), the app and environment, and the deployed endpoint looked up by name through the control plane (cached
# 300 s). Each rule is the CLI's (engine/src/deploy/context.ts, engine/src/api/trust.ts), said again here.
import json
import os
import re
import sys
import threading
import time

from ._wire import graphql
from .catalog import MESSAGES, PEER_CACHE_SECONDS, PROJECT_MARKERS

_cache = {}
_cache_lock = threading.Lock()


class StratoContextError(RuntimeError):
    """No app context: the endpoint cannot be found without knowing the app and environment."""


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


def project_root():
    """The project of the running script (the folder of __main__'s file, or one above it with a project marker), else
    the project of the current directory, as the CLI finds it: a console script (pytest, uvicorn, ipython) has its
    file outside the project. Neither in a project: the script's folder (else the current directory)."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    starts = ([os.path.dirname(os.path.abspath(main))] if main else []) + [os.getcwd()]
    for start in starts:
        found = _marked(start)
        if found:
            return found
    return starts[0]


def _marked(start):
    d = start
    while True:
        if any((os.path.isdir if m.endswith("/") else os.path.isfile)(os.path.join(d, m.rstrip("/"))) for m in PROJECT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_QUOTED = re.compile(r"""^(['"])(.*?)\1(?:\s+#.*)?$""")


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
        # A quoted value ends at its closing quote; a comment may follow it (KEY="value"  # note).
        quoted = _QUOTED.match(v)
        if quoted:
            v = quoted.group(2)
        else:
            v = re.sub(r"\s+#.*$", "", v)
        out[m.group(1)] = v
    return out


def app_name(root):
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


def _check_url(url, what):
    """An http(s) URL with a host and a valid port, else the CLI's sentence (catalog messages url-invalid, url-scheme)."""
    from urllib.parse import urlsplit

    example = "http://127.0.0.1:7450"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        parts = None
    if parts is None or not parts.scheme or (parts.scheme in ("http", "https") and not parts.hostname):
        raise StratoContextError(MESSAGES["url-invalid"].format(what=what, value=json.dumps(url), example=example))
    if parts.scheme not in ("http", "https"):
        raise StratoContextError(MESSAGES["url-scheme"].format(what=what, value=json.dumps(url), example=example))


def _trusted(url):
    """True when the user confirmed this URL's origin with `strato trust URL` (the same file the CLI reads)."""
    try:
        with open(os.path.join(_data_dir(), "trusted-urls"), encoding="utf-8") as f:
            return _origin(url) in {line.strip().lower() for line in f if line.strip()}
    except OSError:
        return False


def target(name, root):
    """(base_url, api_key) of the platform, from the environment, .env, the worker's platform or the local one.
    The rule of the CLI (engine/src/api/trust.ts): the user's own key never goes to a URL the project's .env chose
    unless the user trusted it."""
    dotenv = _dotenv(root)
    url = os.environ.get("STRATO_API_URL") or dotenv.get("STRATO_API_URL") or os.environ.get("STRATO_PLATFORM_URL")
    key = os.environ.get("STRATO_API_KEY") or dotenv.get("STRATO_API_KEY")
    project_url = not os.environ.get("STRATO_API_URL") and bool(dotenv.get("STRATO_API_URL"))
    if url:
        _check_url(url, "STRATO_API_URL" if os.environ.get("STRATO_API_URL") or dotenv.get("STRATO_API_URL") else "STRATO_PLATFORM_URL")
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
        raise _no_context(name, "no Strato platform is running here and STRATO_API_URL is not set",
                          "Start the local one (strato platform start), run it through the development server (strato dev), "
                          "or set STRATO_API_URL and STRATO_API_KEY to a remote platform.")
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
    where = "STRATO_API_KEY" if os.environ.get("STRATO_API_KEY") else "STRATO_API_KEY in the project's .env" if dotenv.get("STRATO_API_KEY") else "the local platform's key file"
    problem = unsendable_key(key, where)
    if problem:
        raise StratoContextError(f"calling endpoint '{name}': {problem}")
    return url.rstrip("/"), key


def unsendable_key(key, where):
    """Why a key cannot go in an HTTP header (a line break, a space, a letter outside ASCII: a key pasted with its line
    end, or the wrong text), or None; the key itself is never said. The CLI's rule and sentence
    (engine/src/api/config.ts unsendableKey; test/deploy/context.test.ts holds them together)."""
    at = next((i for i, c in enumerate(key) if not 0x21 <= ord(c) <= 0x7E), None)
    if at is None:
        return None
    c = key[at]
    what = ("a line break" if c in "\n\r" else "a space" if c in " \t" else "a control character" if ord(c) < 0x20
            else f'"{c}" (not ASCII)')
    return f"{where} holds {what} at character {at + 1}, which an API key never has: copy the key again (strato keys create prints one)"


def _no_context(name, why, remedy=None):
    return StratoContextError(
        f"no app context for endpoint '{name}' ({why}). " + (remedy or "Either run it through the development server "
        "(strato dev), or set both STRATO_APP and STRATO_ENV to the app and environment where it is deployed.")
    )


def _environment_names(base, key, app):
    data = graphql(base, key, "query($n: String!) { app(name: $n) { environments { name } } }", {"n": app})
    if not data.get("app"):
        return None
    return sorted(e["name"] for e in data["app"]["environments"] if e["name"] != "live")


def _environment(base, key, app, name):
    env = os.environ.get("STRATO_ENV")
    if env:
        return env
    names = _environment_names(base, key, app)
    if names is None:
        origin = "STRATO_APP" if os.environ.get("STRATO_APP", "").strip() else "from the project directory"
        raise _no_context(name, f"app '{app}' ({origin}) is not deployed")
    # The CLI's rule (engine/src/deploy/context.ts findEnvironment): the only environment, else STRATO_ENV decides.
    if len(names) == 1:
        return names[0]
    if not names:
        raise _no_context(name, f"app '{app}' has no environment", "Deploy it first (strato deploy).")
    raise _no_context(name, f"app '{app}' has environments {', '.join(names)} and STRATO_ENV is not set",
                      f"Set STRATO_ENV to the one to call: {' or '.join(names)}.")


def lookup(name):
    """The deployed endpoint {url, type, timeout_ms} for `name` in the resolved app context (cached 300 s)."""
    root = project_root()
    base, key = target(name, root)
    app = app_name(root)
    env_hint = os.environ.get("STRATO_ENV", "")
    cache_key = (base, app, env_hint, name)
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(cache_key)
        if hit and hit[0] > now:
            return hit[1]
    env = _environment(base, key, app, name)
    full = os.environ.get("STRATO_ENDPOINT_PREFIX", "") + name
    data = graphql(
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
    found = {"id": ep["id"], "url": url, "type": ep["type"], "timeout_ms": ep.get("declaredExecutionTimeoutMs"), "key": key}
    with _cache_lock:
        _cache[cache_key] = (now + PEER_CACHE_SECONDS, found)
    return found
