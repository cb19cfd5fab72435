# Debugging with debugpy (docs/debugging.md). Two entry points:
# - listen_if_asked(): a platform worker of `strato dev --debug` (STRATO_DEBUG_DIR set) listens for a debugger and
#   announces itself in <dir>/<pid>.json, where the VS Code extension finds it and attaches;
# - `python -m strato._debug ...`: one call of one function (or route) from the project's sources, run under the
#   debugger the extension launched, its result written to a file for the extension to show.
import json
import os
import sys
import threading
import time

from . import _log as log

DEBUG_DIR_ENV = "STRATO_DEBUG_DIR"
WAIT_ENV = "STRATO_DEBUG_WAIT_S"
INSTALL_HINT = ("install debugpy for this interpreter: `{python} -m pip install debugpy`, or on Debian/Ubuntu "
                "`apt-get install python3-debugpy`")

_announced = None  # the file this worker wrote, removed when it stops


def listen_if_asked():
    """In a worker of `strato dev --debug`: debugpy listens on a free loopback port, the worker announces it, and
    waits (bounded) for a debugger before it takes work, so that the first job already stops at breakpoints."""
    global _announced
    folder = os.environ.get(DEBUG_DIR_ENV)
    if not folder or _announced:
        return
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # its frozen-modules notice would fill the log
    try:
        import debugpy
    except ImportError:
        log.error("strato dev --debug: debugpy is missing, the worker runs without a debugger; "
                  + INSTALL_HINT.format(python=sys.executable))
        return
    host, port = debugpy.listen(("127.0.0.1", 0))
    info = {"pid": os.getpid(), "host": host, "port": port, "endpoint": os.environ.get("STRATO_ENDPOINT_NAME", ""),
            "root": os.getcwd(), "python": sys.executable}
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{os.getpid()}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(info, f)
    os.replace(path + ".tmp", path)  # a reader never sees half a file
    _announced = path
    wait_s = float(os.environ.get(WAIT_ENV) or 10)
    log.info(f"debugpy listens on {host}:{port}; waiting up to {wait_s:g} s for a debugger "
             "(VS Code: Strato: Attach to Dev Server)")
    timer = threading.Timer(wait_s, debugpy.wait_for_client.cancel)
    timer.daemon = True
    timer.start()
    debugpy.wait_for_client()
    timer.cancel()
    log.info("debugger attached" if debugpy.is_client_connected() else "no debugger attached: running without one")


def forget():
    """Removes this worker's announcement (the process is ending)."""
    if _announced:
        try:
            os.remove(_announced)
        except OSError:
            pass


def untraced(fn):
    """fn, for a runtime thread (the heartbeat) that must keep running while the debugger holds the user's code at a
    breakpoint: a worker whose heartbeat stops is replaced by the platform."""
    if _announced is None:
        return fn

    def run():
        import debugpy

        debugpy.trace_this_thread(False)
        fn()

    return run


def _call_queue(module, name, job_input):
    from ._app import Target, import_function
    from ._invoke import Run, execute

    target = Target(import_function(module, name))
    chunks = []

    def on_chunk(value):
        chunks.append(value)
        log.info(f"streamed: {json.dumps(value, default=repr)[:500]}")

    outcome = execute(lambda: target(job_input), Run("debug"), on_chunk)
    if outcome.error is not None:
        return {"status": "FAILED", "error": outcome.error, "traceback": outcome.traceback}
    return {"status": "COMPLETED", "output": outcome.output}


def _call_route(module, name, method, path, body):
    """The route served by the load-balanced runtime on a free loopback port, called once over HTTP: path
    parameters, query strings and status codes behave as they do on a worker."""
    import http.client
    from urllib.parse import quote

    from ._app import import_function
    from ._jsonable import dumps
    from ._wire import query_string
    from ._lb import start_server

    server = start_server({f"{method} {path}": import_function(module, name)}, "127.0.0.1", 0)
    body = dict(body)
    url = path
    for key in list(body):
        if "{" + key + "}" in url:
            url = url.replace("{" + key + "}", quote(str(body.pop(key)), safe=""))
    data = None
    if method in ("GET", "DELETE"):
        if body:
            url += "?" + query_string(body)
    else:
        data = dumps(body).encode()  # the JSON form a script's call sends (_jsonable.py)
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port)
    conn.request(method, url, body=data, headers={"Content-Type": "application/json"} if data else {})
    response = conn.getresponse()
    raw = response.read()
    conn.close()  # the server's thread is a daemon: it ends with this one-call process
    try:
        answer = json.loads(raw) if raw else None
    except ValueError:
        answer = raw.decode("utf-8", "replace")
    if 200 <= response.status < 300:
        return {"status": "COMPLETED", "output": answer}
    detail = answer.get("detail") if isinstance(answer, dict) else answer
    error = answer.get("error") if isinstance(answer, dict) else f"HTTP {response.status}"
    return {"status": "FAILED", "error": f"HTTP {response.status} {error}: {detail}"}


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m strato._debug", description="Run one function of a Strato "
                                     "project once, from its sources (the VS Code extension's Debug).")
    parser.add_argument("--module", required=True, help="module of the function, e.g. workers.cpu_worker")
    parser.add_argument("--function", required=True, help="function (or class) name")
    parser.add_argument("--route", help='a load-balanced route: "POST /process"')
    parser.add_argument("--input", required=True, help="file holding the JSON input object (the route's body)")
    parser.add_argument("--result", required=True, help="file the outcome is written to, as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("STRATO_LOCAL", "1")  # other endpoints' functions run in this process too
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    with open(args.input, encoding="utf-8") as f:
        job_input = json.load(f)
    from ._app import SetupError
    from ._invoke import json_default

    started = time.monotonic()
    try:
        if args.route:
            method, _, path = args.route.partition(" ")
            result = _call_route(args.module, args.function, method, path, job_input)
        else:
            result = _call_queue(args.module, args.function, job_input)
    except SetupError as e:
        result = {"status": "FAILED", "error": str(e), "traceback": e.detail}
    result["executionTime"] = round((time.monotonic() - started) * 1000)
    try:
        text = json.dumps(result, default=json_default, allow_nan=False)
    except (TypeError, ValueError) as e:
        text = json.dumps({"status": "FAILED", "error": f"TypeError: the output is not JSON serializable: {e}",
                           "executionTime": result["executionTime"]})
    with open(args.result, "w", encoding="utf-8") as f:
        f.write(text)
    if result["status"] == "COMPLETED":
        log.info(f"{args.function} completed in {result['executionTime']} ms")
    else:
        log.error(f"{args.function} failed: {result['error']}")
        if result.get("traceback"):
            log.error(result["traceback"].rstrip())
    return 0 if result["status"] == "COMPLETED" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
