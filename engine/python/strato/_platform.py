# What queue and load-balanced platform workers share (docs/worker-protocol.md): settings from the environment,
# authenticated keep-alive connections to /_worker/<endpoint>/, `ready`, the heartbeat thread and the stop signal.
import os
import signal
import sys
import threading
import time

from . import _log as log
from ._app import SetupError
from ._http import Connection, HttpError

GIVE_UP_S = 30.0  # the platform unreachable this long: it is gone, and so is the reason for this worker
GRACE_S = 4.5  # after SIGTERM the platform sends SIGKILL at 5 s: finish running work within this


def _env_int(env, key, default, minimum):
    raw = env.get(key, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SetupError(f"{key} must be an integer, got: {raw!r}") from None
    if value < minimum:
        raise SetupError(f"{key} must be >= {minimum}, got: {value}")
    return value


class Settings:
    """The worker environment the platform sets (table "Worker environment" of the protocol)."""

    def __init__(self, env, default_concurrency=1):
        missing = [k for k in ("STRATO_PLATFORM_URL", "STRATO_WORKER_TOKEN") if not env.get(k)]
        if missing:
            raise SetupError(f"{' and '.join(missing)} not set: platform workers are started by the platform")
        self.url = env["STRATO_PLATFORM_URL"].rstrip("/")
        self.token = env["STRATO_WORKER_TOKEN"]
        self.worker_id = env.get("STRATO_WORKER_ID") or f"worker-{os.getpid()}"
        self.endpoint_id = env.get("STRATO_ENDPOINT_ID") or env.get("STRATO_ENDPOINT_NAME") or ""
        if not self.endpoint_id:
            raise SetupError("STRATO_ENDPOINT_ID not set: platform workers are started by the platform")
        self.max_concurrency = _env_int(env, "STRATO_MAX_CONCURRENCY", default_concurrency, 1)
        self.heartbeat_s = _env_int(env, "STRATO_HEARTBEAT_MS", 1000, 10) / 1000
        self.lb_port = _env_int(env, "STRATO_LB_PORT", 0, 0)
        # Loopback unless the platform reaches the worker from outside (a container: 0.0.0.0).
        self.lb_host = env.get("STRATO_LB_HOST") or "127.0.0.1"

    def connect(self, timeout=30.0):
        """A new keep-alive connection whose paths are relative to /_worker/<endpoint_id>/."""
        return Connection(f"{self.url}/_worker/{self.endpoint_id}/",
                          {"Authorization": f"Bearer {self.token}"}, timeout)


class Stopper:
    """Wakes the main thread, which then ends the process: on SIGTERM/SIGINT (graceful: running work may
    finish), or when a worker thread finds the process must end (not wanted any more, platform gone)."""

    def __init__(self):
        # The main thread blocks reading a pipe that signal.set_wakeup_fd writes to: the kernel may deliver
        # SIGTERM to any thread, and only this wakes a main thread blocked in a system call. (An Event set by
        # a Python handler would also risk deadlock on the lock the waiting main thread holds.)
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self.code = None  # set by the first exit(); a signal alone means 0
        self._lock = threading.Lock()
        signal.set_wakeup_fd(self._write_fd)
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, frame):
        pass  # the wakeup fd already woke the main thread; this replaces the default action (dying)

    def exit(self, code, message):
        with self._lock:
            if self.code is not None:
                return
            self.code = code
        (log.error if code else log.info)(message)
        os.write(self._write_fd, b"x")

    def wait(self):
        """Blocks until a stop; True when it came from a signal (graceful), False when exit() was called."""
        return os.read(self._read_fd, 1) != b"x"  # the wakeup fd writes the signal number

    def end_process(self, code=None):
        # os._exit: a user's non-daemon thread or executor must not keep a stopped worker alive until SIGKILL.
        debugging = sys.modules.get("strato._debug")
        if debugging:
            debugging.forget()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code if code is not None else self.code or 0)


class Contact:
    """Tracks the last successful exchange with the platform; gives up after GIVE_UP_S of failures."""

    def __init__(self, stopper):
        self.stopper = stopper
        self.last_ok = time.monotonic()

    def ok(self):
        self.last_ok = time.monotonic()

    def failed(self, what, err):
        log.warn(f"{what} failed: {err}")
        if time.monotonic() - self.last_ok > GIVE_UP_S:
            self.stopper.exit(1, f"the platform has been unreachable for {GIVE_UP_S:.0f} s ({err}): exiting")

    def unwanted(self, response, what):
        """A 401/404 from the platform means this worker is no longer wanted: exit 0 (protocol)."""
        if response.status in (401, 404):
            self.stopper.exit(0, f"the platform answered {what} with {response.status}: this worker is no "
                                 "longer wanted, exiting")
            return True
        return False


def post_ready(settings, contact, port=None):
    body = {"workerId": settings.worker_id}
    if port is not None:
        body["port"] = port
    conn = settings.connect()
    delay = 0.05
    while True:
        try:
            response = conn.post("ready", body)
        except HttpError as e:
            contact.failed("ready", e)
        else:
            if contact.unwanted(response, "ready") or response.status == 200:
                contact.ok()
                break
            contact.failed("ready", f"HTTP {response.status} {response.text[:200]}")
        if contact.stopper.code is not None:
            break
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
    conn.close()


def start_heartbeat(settings, contact, in_progress, cancel):
    """Posts the ids of in_progress() every STRATO_HEARTBEAT_MS; cancel(id) for each id the answer lists."""

    def loop():
        conn = settings.connect(timeout=max(5.0, settings.heartbeat_s * 3))
        period = settings.heartbeat_s
        due = time.monotonic() + period
        while True:
            time.sleep(max(0.0, due - time.monotonic()))
            due = max(due + period, time.monotonic())
            try:
                response = conn.post("heartbeat", {"workerId": settings.worker_id, "jobs": in_progress()})
            except HttpError as e:
                contact.failed("heartbeat", e)
                continue
            if contact.unwanted(response, "heartbeat"):
                return
            if response.status != 200:
                contact.failed("heartbeat", f"HTTP {response.status} {response.text[:200]}")
                continue
            contact.ok()
            for job_id in (response.data or {}).get("cancel") or []:
                cancel(job_id)

    from ._debug import untraced

    threading.Thread(target=untraced(loop), name="strato-heartbeat", daemon=True).start()
