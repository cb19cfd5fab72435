# The local handler test server and one-shot test runs (service.md, "Local handler test server"): the flags
# --rp_serve_api, --rp_api_*, --rp_log_level, --rp_debugger, --test_input, and test_input.json beside the handler.
import argparse
import json
import os
import queue
import sys
import threading
import time
import uuid
from collections import OrderedDict

from . import _log as log
from . import _server
from ._invoke import Run, encoded_output, execute, json_default, log_failure, output_json
from ._server import JsonHandler

_KEEP_JOBS = 1000  # finished jobs kept for /status and /stream
_STREAM_WAIT_S = 3.0  # /stream waits this long for a new chunk of a running job (decisions.md)
_RUN_LIMIT, _RUNSYNC_LIMIT = 10 * 1024 * 1024, 20 * 1024 * 1024
# A handler(job)'s example input; an endpoint's is built from its function's parameters (the manifest's sample_input).
_DEFAULT_INPUT = {"name": "world"}
_EXAMPLE = json.dumps({"input": _DEFAULT_INPUT})


def example_request(sample_input=None):
    """A request body on one line: {"input": the function's sample input} (the manifest's), else _EXAMPLE."""
    return _EXAMPLE if sample_input is None else json.dumps({"input": sample_input}, ensure_ascii=False)


def parse_flags(argv, example=_EXAMPLE):
    parser = argparse.ArgumentParser(prog=os.path.basename(argv[0] or "handler"), allow_abbrev=False,
                                     description="Run a Strato handler locally.")
    parser.add_argument("--rp_serve_api", action="store_true", help="start the local API server")
    parser.add_argument("--rp_api_host", default="localhost", help="host (0.0.0.0: reachable from other devices)")
    parser.add_argument("--rp_api_port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--rp_api_concurrency", type=int, default=1, help="jobs run at once (needs main.py)")
    parser.add_argument("--rp_log_level", type=str.upper, choices=["ERROR", "WARN", "INFO", "DEBUG"])
    parser.add_argument("--rp_debugger", action="store_true", help="tracebacks in results, debug logs")
    parser.add_argument("--test_input", help="JSON test input, e.g. " + example)
    flags, _ = parser.parse_known_args(argv[1:])  # the user's own arguments are theirs
    return flags


class LocalJob:
    __slots__ = ("id", "input", "status", "output", "error", "traceback", "chunks", "cursor", "created",
                 "started", "ended", "run")

    def __init__(self, job_id, job_input):
        self.id, self.input, self.status = job_id, job_input, "IN_QUEUE"
        self.output = self.error = self.traceback = self.started = self.ended = None
        self.chunks, self.cursor, self.created, self.run = [], 0, time.monotonic(), Run(job_id)

    def view(self, debug=False):
        job = {"id": self.id, "status": self.status}
        if self.status == "COMPLETED":
            job["output"] = self.output
        elif self.status == "FAILED":
            job["error"] = self.error
            if debug and self.traceback:
                job["traceback"] = self.traceback
        if self.started is not None:
            job["delayTime"] = round((self.started - self.created) * 1000)
        if self.ended is not None:
            job["executionTime"] = round((self.ended - self.started) * 1000)
        return job


class LocalRunner:
    """Runs jobs on `concurrency` threads, really at once; keeps them for /status and /stream."""

    def __init__(self, call_job, concurrency, debug):
        self.call_job, self.debug = call_job, debug
        self.jobs = OrderedDict()
        self.cv = threading.Condition()
        self.pending = queue.SimpleQueue()
        for _ in range(concurrency):
            threading.Thread(target=self._work, name="strato-local", daemon=True).start()

    def submit(self, job_input):
        job = LocalJob(f"test-{uuid.uuid4()}", job_input)
        with self.cv:
            self.jobs[job.id] = job
            while len(self.jobs) > _KEEP_JOBS:
                self.jobs.popitem(last=False)
        self.pending.put(job)
        return job

    def get(self, job_id):
        with self.cv:
            return self.jobs.get(job_id)

    def wait(self, job):
        with self.cv:
            self.cv.wait_for(lambda: job.ended is not None)
        return job

    def cancel(self, job):
        with self.cv:
            if job.ended is None:
                job.run.cancel()
                job.status, job.ended = "CANCELLED", time.monotonic()
                job.started = job.started or job.ended
                self.cv.notify_all()

    def stream(self, job):
        """The chunks since the previous call; waits a few seconds for one while the job runs."""
        with self.cv:
            self.cv.wait_for(lambda: len(job.chunks) > job.cursor or job.ended is not None, _STREAM_WAIT_S)
            chunks, job.cursor = job.chunks[job.cursor:], len(job.chunks)
        return chunks

    def _work(self):
        while True:
            self._execute(self.pending.get())

    def _execute(self, job):
        with self.cv:
            if job.ended is not None:  # cancelled while queued
                return
            job.status, job.started = "IN_PROGRESS", time.monotonic()

        def on_chunk(value):
            _check_json(value, "a streamed value")
            with self.cv:
                job.chunks.append({"output": value, "metrics": {"stream_index": len(job.chunks)}})
                self.cv.notify_all()
            log.debug(f"job {job.id} streamed: {json.dumps(value, default=repr)[:500]}")

        outcome = execute(lambda: self.call_job({"id": job.id, "input": job.input}), job.run, on_chunk)
        if outcome.error is None and not outcome.cancelled:
            failure = encoded_output(outcome.output)[1]  # the platform worker fails such a job too: better to learn it here
            if failure is not None:
                outcome = failure
        ended = time.monotonic()
        if job.ended is not None or outcome.cancelled:  # cancelled meanwhile
            return
        # Logged before the job is published: a one-shot run exits as soon as it sees the result.
        if outcome.error is not None:
            log_failure(job.id, outcome)
        else:
            log.info(f"job {job.id} completed in {round((ended - job.started) * 1000)} ms")
        with self.cv:
            if job.ended is not None:
                return
            job.ended = ended
            if outcome.error is not None:
                job.status, job.error, job.traceback = "FAILED", outcome.error, outcome.traceback
            else:
                job.status, job.output = "COMPLETED", outcome.output
                if not job.chunks:  # a handler that does not stream: one chunk with the whole output
                    job.chunks.append({"output": outcome.output, "metrics": {"stream_index": 0}})
            self.cv.notify_all()


class LocalApi(JsonHandler):
    runner = None  # set on a subclass per server
    title = "handler"  # the handler file's name, on the docs page
    example = _EXAMPLE  # the docs page's request body
    hint = _EXAMPLE  # the request body that errors show, on one line

    def answer(self):
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        action, _, job_id = path.lstrip("/").partition("/")
        if action in ("run", "runsync") and not job_id:
            return self._submit(action)
        self.read_body()  # unused, but read so that the connection can serve the next request
        if action in ("status", "stream", "cancel") and job_id:
            return self._follow(action, job_id)
        if path == "/":
            return 200, {"status": "ready", "docs": "/docs", "routes": ["POST /runsync", "POST /run",
                                                                      "GET|POST /status/<id>", "GET|POST /stream/<id>",
                                                                      "POST /cancel/<id>"]}, None
        if path in ("/docs", "/openapi.json") and self.command == "GET":
            from ._localdocs import docs_page, openapi_document

            page = docs_page(self.title, self.example) if path == "/docs" else openapi_document(self.title)
            return 200, _server.Page(page) if path == "/docs" else page, None
        return 404, {"error": f"no route {self.command} {path}: use POST /runsync or POST /run with {self.hint}"}, None

    def _submit(self, action):
        if self.command != "POST":
            self.read_body()
            return 405, {"error": f"/{action} answers POST only: send {self.hint}"}, {"Allow": "POST"}
        limit = _RUN_LIMIT if action == "run" else _RUNSYNC_LIMIT
        raw = self.read_body(limit)
        if raw is None:
            return 413, {"error": f"the body is over the {limit // 2**20} MB limit of /{action}"}, None
        job_input, problem = parse_request(raw, self.hint)
        if problem:
            return 400, {"error": problem}, None
        job = self.runner.submit(job_input)
        if action == "run":
            # The reference answers IN_PROGRESS without running the job; this server runs it too.
            return 200, {"id": job.id, "status": "IN_PROGRESS"}, None
        return 200, self.runner.wait(job).view(self.runner.debug), None

    def _follow(self, action, job_id):
        allowed = ("POST",) if action == "cancel" else ("GET", "POST")
        if self.command not in allowed:
            return 405, {"error": f"/{action}/<id> answers {' and '.join(allowed)}"}, {"Allow": ", ".join(allowed)}
        job = self.runner.get(job_id)
        if job is None:
            return 404, {"error": f"no job {job_id!r}: ids come from POST /run or /runsync of this server"}, None
        if action == "stream":
            return 200, self.runner.stream(job), None
        if action == "cancel":
            self.runner.cancel(job)
        return 200, job.view(self.runner.debug), None


def _check_json(value, what):
    try:
        output_json(value)  # what a platform worker sends, by the same rule
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} is not JSON serializable: {e}") from None


def parse_request(raw, example=_EXAMPLE):
    """(input, None) from a request body {"input": ...}, or (None, a sentence saying what is wrong, showing `example`)."""
    try:
        body = json.loads(raw) if raw.strip() else None
    except ValueError as e:
        return None, f"the body is not valid JSON ({e}): send {example}"
    except RecursionError:
        return None, f"the body nests arrays and objects deeper than Python's JSON decoder goes: send {example}"
    if not isinstance(body, dict) or "input" not in body:
        return None, f'the body must be a JSON object with an "input" key, like {example}'
    return body["input"], None


def _fail(message, status=2):
    log.error(message)
    sys.exit(status)


def _test_input_file(handler_file):
    """test_input.json beside the handler, else in the working directory; or None."""
    places = [os.path.dirname(os.path.abspath(handler_file))] if handler_file else []
    return next((p for p in (os.path.join(d, "test_input.json") for d in places + [os.getcwd()]) if os.path.isfile(p)),
                None)


def _example_input(handler_file):
    """The handler's test_input.json for the docs page's form, when it reads as a request; else None."""
    path = _test_input_file(handler_file)
    try:
        with open(path or "", encoding="utf-8") as f:
            job_input, problem = parse_request(f.read().encode())
    except (OSError, UnicodeDecodeError):
        return None
    return None if problem else job_input


def _test_input(flags, handler_file):
    """The input of a one-shot run: --test_input first, then test_input.json beside the handler; or None."""
    if flags.test_input is not None:
        source, text = "--test_input", flags.test_input
    else:
        path = _test_input_file(handler_file)
        if path is None:
            return None
        source = path
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            _fail(f"cannot read {path}: {e}")
    job_input, problem = parse_request(text.encode())
    if problem:
        _fail(f"{source}: {problem.replace('the body', 'the test input')}")
    log.info(f"running once with the input of {source}")
    return job_input


def main(call_job, handler_file, sample_input=None):
    """Local entry point of a queue handler: call_job({"id", "input"}) runs the user's code. `sample_input`: an input
    built from the function's parameters (the manifest's), shown in examples; a bare handler(job) has none."""
    hint = example_request(sample_input)
    flags = parse_flags(sys.argv, hint)
    log.set_level(flags.rp_log_level or ("DEBUG" if flags.rp_debugger else "INFO"))
    concurrency = flags.rp_api_concurrency
    if concurrency < 1:
        _fail(f"--rp_api_concurrency must be >= 1, got: {concurrency}")
    main_file = os.path.basename(sys.argv[0] or "")
    if concurrency > 1 and main_file != "main.py":
        _fail(f"--rp_api_concurrency {concurrency} needs the handler file to be named main.py (it is "
              f"{main_file or 'unknown'}): rename it, or drop the flag to run one job at a time")
    if flags.rp_serve_api:
        if flags.test_input is not None:
            log.warn("--test_input is ignored with --rp_serve_api: POST it to /runsync instead")
        runner = LocalRunner(call_job, concurrency, flags.rp_debugger)
        from ._localdocs import example_body

        test_input = _example_input(handler_file)
        page = {"title": os.path.basename(handler_file or sys.argv[0] or "handler"), "hint": hint,
                "example": example_body(next(i for i in (test_input, sample_input, _DEFAULT_INPUT) if i is not None))}
        try:
            server = _server.start(type("Api", (LocalApi,), {"runner": runner, **page}), flags.rp_api_host,
                                   flags.rp_api_port)
        except OSError as e:
            _fail(f"cannot listen on {flags.rp_api_host}:{flags.rp_api_port}: {e.strerror or e}; "
                  "pick another port with --rp_api_port", 1)
        log.info(f"local test server on http://{flags.rp_api_host}:{server.server_port} ({concurrency} job(s) at "
                 f"once): POST /runsync or /run with {hint}, then GET /status/<id> or /stream/<id>; "
                 f"docs and a form to try it at /docs")
        wait_for_interrupt()
        return
    job_input = _test_input(flags, handler_file)
    if job_input is None:
        import shlex

        _fail(f"nothing to run: pass --test_input {shlex.quote(hint)}, put a test_input.json (same shape) beside "
              "the handler, or start the local test server with --rp_serve_api", 1)
    runner = LocalRunner(call_job, 1, flags.rp_debugger)
    try:
        job = runner.wait(runner.submit(job_input))
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    sys.stdout.write(json.dumps(job.view(flags.rp_debugger), default=json_default) + "\n")
    sys.stdout.flush()
    sys.exit(0 if job.status == "COMPLETED" else 1)


def wait_for_interrupt():
    """Blocks the main thread until Ctrl+C or SIGTERM; the servers run in daemon threads."""
    from ._platform import Stopper

    Stopper().wait()
    log.info("stopped")
