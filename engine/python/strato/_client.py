# Endpoint(id="...") with no function: a client of an endpoint that already exists, as in the reference product.
# .run(input) -> EndpointJob (status, wait, output, error, done, cancel, result, stream); .runsync(input); .cancel(job_id);
# .get/.post/... on load-balanced ones.
import time
import urllib.parse

from . import _context, _remote, _wire
from .catalog import DEFAULT_CLIENT_TIMEOUT_MS

__all__ = ["EndpointJob"]

_ENDED = _wire.ENDED
# How long a wait with no time-out goes on while the platform is out of reach, before it says so.
_OUT_OF_REACH_S = 60


def _base(endpoint_id):
    base, key = _context.target(endpoint_id, _context.project_root())
    return base, key


def _checked(status, body, what):
    if status >= 400 or not isinstance(body, dict):
        raise _wire.StratoRemoteError(f"{what} failed (HTTP {status}): {_wire.error_text(body)}", status=status)
    return body


class EndpointJob:
    """One job of a queue-based endpoint, as the reference product has it: `id`, `output`, `error` and `done` as they
    were last read; `status()` reads them again, `wait(timeout)` until the job ends, `cancel()` stops it. Awaited
    (`await job.status()`, `await job.wait()`), each is a coroutine, as the reference's code writes it; called plainly, it
    answers at once. Strato's own: `result(timeout)` waits and returns the output, or raises StratoRemoteError with the
    job's error; `stream()` yields what a generator handler yields."""

    def __init__(self, endpoint_id, job_id, status="IN_QUEUE", _job=None):
        self.endpoint_id = endpoint_id
        self.id = job_id
        self.job_id = job_id
        self._status = status
        self._job = _job

    @property
    def output(self):
        """The job's output once it completed (as last read: status(), wait()); None before, and when it failed."""
        return self._job.get("output") if self._job is not None and self._status == "COMPLETED" else None

    @property
    def error(self):
        """The job's error once it failed, was cancelled or timed out (as last read); None otherwise."""
        return self._job.get("error") if self._job is not None and self._status in _ENDED else None

    @property
    def done(self):
        """Whether the job ended (COMPLETED, FAILED, CANCELLED or TIMED_OUT), as last read."""
        return self._status in _ENDED

    def _url(self, op):
        # Resolved once: the job is on that platform, and a platform restarting (its state file gone a moment) is not a
        # reason to look for another.
        if getattr(self, "_target", None) is None:
            self._target = _base(self.endpoint_id)
        base, key = self._target
        return f"{base}/v2/{urllib.parse.quote(self.endpoint_id, safe='')}/{op}/{urllib.parse.quote(self.id, safe='')}", key

    def _refresh(self, timeout=None):
        url, key = self._url("status")
        status, body = _wire.request("GET", url, key, **({} if timeout is None else {"timeout": timeout}))
        self._job = _checked(status, body, f"status of job {self.id}")
        self._status = self._job.get("status", self._status)
        return self._job

    def _read_status(self, timeout=None):
        if self._status not in _ENDED:
            self._refresh(timeout)
        return self._status

    def status(self):
        """The job's status now: IN_QUEUE, IN_PROGRESS, COMPLETED, FAILED, CANCELLED or TIMED_OUT."""
        if _remote.awaited():
            return _remote.awaitable(self._read_status)
        return self._read_status()

    def _wait(self, timeout, deadline=None):
        if deadline is None and timeout is not None:
            deadline = time.monotonic() + timeout
        delay = 0.05
        failing_since = None
        while True:
            # Each read is bounded by what is left of the wait: a platform that stops answering ends it on time.
            left = None if deadline is None else deadline - time.monotonic()
            try:
                ended = self._read_status(None if left is None else min(60, max(0.5, left))) in _ENDED
                failing_since = None
                if ended:
                    break
            except _wire.StratoRemoteError as e:
                # Out of reach a moment (a restart, a node joining its cluster: 503): the job is in the store, and the
                # wait goes on, until its deadline (else for _OUT_OF_REACH_S in a row).
                now = time.monotonic()
                if not _wire.transient(e):
                    raise
                failing_since = failing_since or now
                if deadline is not None and now >= deadline:
                    raise TimeoutError(f"job {self.id} did not end within {timeout} s (its status could not be read: {e})") from None
                if deadline is None and now - failing_since > _OUT_OF_REACH_S:
                    raise
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {self.id} did not end within {timeout} s (status {self._status})")
            time.sleep(delay if deadline is None else max(0, min(delay, deadline - time.monotonic())))
            delay = min(delay * 2, 1.0)
        if self._job is None:
            self._refresh()
        return self

    def wait(self, timeout=None):
        """Waits for the job to end (at most `timeout` seconds, else TimeoutError; None waits for good) and returns the
        job: its `output` or `error` is then read. A failed job does not raise: read `error`, or use result()."""
        if _remote.awaited():
            return _remote.awaitable(self._wait, timeout)
        return self._wait(timeout)

    def result(self, timeout=None):
        """Waits for the job to end (at most `timeout` seconds) and returns its output; a failed, cancelled or timed-out
        job raises StratoRemoteError with its error."""
        self._wait(timeout)
        self._raise_unless_completed()
        return self.output

    def _raise_unless_completed(self):
        """An ended job that did not complete raises StratoRemoteError with its error (its record is read once)."""
        if self._job is None:
            self._refresh()
        if self._status != "COMPLETED":
            raise _wire.StratoRemoteError(
                f"job {self.id} {self._status}: {self._job.get('error') or 'no error text'}", status=self._status, job_id=self.id)

    def _cancel(self):
        url, key = self._url("cancel")
        status, body = _wire.request("POST", url, key)
        self._status = _checked(status, body, f"cancel of job {self.id}").get("status", self._status)
        self._job = None
        return self._status

    def cancel(self):
        """Cancels the job (a queued job never runs; a running one is stopped). Called plainly it returns the job's
        status after; awaited, the job itself, as the reference's does."""
        if _remote.awaited():
            return _remote.awaitable(lambda: (self._cancel(), self)[1])
        return self._cancel()

    def stream(self):
        """Yields the job's stream values (what a generator handler yields) as they arrive, split ones whole; a job that
        ends failed, cancelled or timed out then raises StratoRemoteError with its error, as result() does."""
        def read_chunks():
            url, key = self._url("stream")
            status, body = _wire.request("GET", url, key, timeout=330)
            if status >= 400 or not isinstance(body, list):
                _checked(status, body, f"stream of job {self.id}")
            return body

        yield from _wire.follow_stream(read_chunks, lambda: self._read_status() in _ENDED)
        self._raise_unless_completed()

    def __repr__(self):
        return f"EndpointJob(endpoint_id={self.endpoint_id!r}, id={self.id!r}, status={self._status!r})"


def run(endpoint_id, payload):
    base, key = _base(endpoint_id)
    status, body = _wire.request("POST", f"{base}/v2/{urllib.parse.quote(endpoint_id, safe='')}/run", key, {"input": payload})
    job = _checked(status, body, f"run on endpoint {endpoint_id}")
    return EndpointJob(endpoint_id, job["id"], job.get("status", "IN_QUEUE"))


def runsync_job(endpoint_id, payload, timeout=None):
    """Runs a job and waits for it to end (at most `timeout` seconds; the platform's default client timeout when None);
    returns its EndpointJob, ended, or raises TimeoutError."""
    timeout = DEFAULT_CLIENT_TIMEOUT_MS / 1000 if timeout is None else timeout
    # One deadline for the whole call: the time /runsync waited counts (it was counted twice: 2x the timeout).
    deadline = time.monotonic() + timeout
    wait = int(max(1, min(timeout, 300)) * 1000)
    base, key = _base(endpoint_id)
    url = f"{base}/v2/{urllib.parse.quote(endpoint_id, safe='')}/runsync?wait={wait}"
    status, body = _wire.request("POST", url, key, {"input": payload}, timeout=wait / 1000 + 10)
    job = _checked(status, body, f"runsync on endpoint {endpoint_id}")
    return EndpointJob(endpoint_id, job["id"], job.get("status", "IN_QUEUE"), job)._wait(timeout, deadline)


def runsync(endpoint_id, payload, timeout=None):
    """Runs a job and returns its output; a failed job raises StratoRemoteError with its error."""
    return runsync_job(endpoint_id, payload, timeout).result()


def cancel(endpoint_id, job_id):
    """Cancels a job of the endpoint by its id; returns its EndpointJob."""
    job = EndpointJob(endpoint_id, job_id)
    job._cancel()
    return job


def route(endpoint_id, method, path, body=None, timeout=None):
    """Calls a route of a load-balanced endpoint; returns its JSON answer, or raises StratoRemoteError."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"path must start with '/', got: {path!r}")
    base, key = _base(endpoint_id)
    url = f"{base}/lb/{urllib.parse.quote(endpoint_id, safe='')}{path}"
    if method in ("GET", "DELETE") and body:
        url += ("&" if "?" in url else "?") + _wire.query_string(body)
        body = None
    status, res = _wire.request(method, url, key, body, timeout=timeout or DEFAULT_CLIENT_TIMEOUT_MS / 1000)
    if status >= 400:
        raise _wire.StratoRemoteError(f"{method} {path} on endpoint {endpoint_id} failed (HTTP {status}): {_wire.error_text(res)}", status=status)
    return res
