# The platform worker of a queue-based endpoint (docs/worker-protocol.md): takes jobs over the job channel
# (_channel.py), or where the platform offers none by long-polling `take`; runs up to STRATO_MAX_CONCURRENCY jobs at
# once, posts `stream` and `done` (over HTTP: chaining the next job), stops on SIGTERM.
import queue
import threading
import time
from types import CoroutineType

from . import _log as log
from ._channel import ChannelSlots, Refused, open_channel
from ._http import HttpError
from ._invoke import Run, encoded_output, event_loop, execute, failed, log_failure, output_json, start_task
from ._platform import GRACE_S, Contact, Stopper, post_ready, start_heartbeat

TAKE_WAIT_MS = 20000


class QueueWorker:
    """Threads: one heartbeat, and one slot thread per job in progress (sync user code runs right in it, async code
    on the shared event loop). Over the job channel, slot threads take turns reading it (ChannelSlots). Over HTTP,
    one poller holds the only long-poll, and a slot that finishes a job asks `done` for the next one (take: 1), so
    under load jobs flow without long-polls or thread hand-offs."""

    def __init__(self, settings, make_call, coroutines=False):
        self.settings = settings
        self.make_call = make_call  # job dict -> result of the user's code (value, coroutine, generator...)
        # Every call returns a coroutine (async def): over the channel one thread reads the jobs and each runs as a
        # task on the event loop, which sends its result (start_coroutine); no slot thread waits for it.
        self.coroutines = coroutines
        self.loop = None
        self.capacity = settings.max_concurrency
        # The state below is guarded by `lock`; `cv` waits on it. Python's Condition costs a few calls on every `with`
        # and `notify_all` (with nobody waiting too), paid several times per job: sections take the lock itself, and
        # `_changed` notifies only when a thread waits (`_wait`).
        self.lock = threading.Lock()
        self.cv = threading.Condition(self.lock)
        self.waiting = 0  # threads in cv.wait
        self.runs = {}  # job id -> Run: jobs holding a slot
        self.reserved = 0  # slots kept while their `done` asks for a next job
        # Jobs whose handler returned and whose result is being encoded, logged or sent: still reported in heartbeats,
        # or a result that takes longer than the platform's hand-over bound to leave has its job run again.
        self.leaving = set()
        self.idle = 0  # slot threads waiting for a job
        self.pending = queue.SimpleQueue()  # jobs handed to slot threads
        self.stopping = False
        self.stopper = Stopper()
        self.contact = Contact(self.stopper)
        self.slots = None  # ChannelSlots over the job channel; None over HTTP

    # Main thread: ready, start the threads, wait for a stop, end the process.
    def run(self):
        post_ready(self.settings, self.contact)
        if self.stopper.code is None:
            start_heartbeat(self.settings, self.contact, self._in_progress, self.cancel)
            threading.Thread(target=self._start_transport, name="strato-channel", daemon=True).start()
        graceful = self.stopper.wait()
        with self.lock:
            self.stopping = True
            self._changed()
            if graceful:
                log.info(f"stopping: finishing {len(self.runs)} running job(s), taking no new ones")
                deadline = time.monotonic() + GRACE_S
                while (self.runs or self.reserved) and time.monotonic() < deadline:
                    self._wait(deadline - time.monotonic())
                if self.runs or self.reserved:
                    log.warn(f"stopping: {len(self.runs) + self.reserved} job(s) not finished within {GRACE_S} s: "
                             "exiting without them")
        self.stopper.end_process()

    def _wait(self, timeout=None):
        """cv.wait, counted (holding self.lock)."""
        self.waiting += 1
        try:
            self.cv.wait(timeout)
        finally:
            self.waiting -= 1

    def _changed(self):
        """Wakes the threads waiting for the slots or jobs to change (holding self.lock)."""
        if self.waiting:
            self.cv.notify_all()

    def _start_transport(self):
        delay = 0.05
        while self.stopper.code is None:
            try:
                self.slots = ChannelSlots(self, open_channel(self.settings, self.contact))
                self.slots.start()
                self._say_ready("over the job channel")
                return
            except Refused as e:
                if self.stopper.code is None:
                    threading.Thread(target=self._poll, name="strato-poll", daemon=True).start()
                    self._say_ready(f"over HTTP long-polls (no job channel: {e})")
                return
            except HttpError as e:
                self.contact.failed("job channel", e)
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _say_ready(self, how):
        log.info(f"worker {self.settings.worker_id} ready: up to {self.capacity} job(s) at once, {how}")

    def _in_progress(self):
        with self.lock:
            return [*self.runs, *self.leaving]

    def cancel(self, job_id):
        with self.lock:
            run = self.runs.pop(job_id, None)
            self.leaving.discard(job_id)  # a result still leaving is dropped there: no longer reported
            self._changed()  # its slot is free for the poller at once, even if sync code keeps running
        if run is not None:
            run.cancel()
            log.info(f"job {job_id} cancelled by the platform")
            if self.slots is not None:
                self.slots.slot_freed()

    # Poller: the single long-poll, asking for as many jobs as there are free slots.
    def _poll(self):
        conn = self.settings.connect(timeout=TAKE_WAIT_MS / 1000 + 15)
        backoff = 0.05
        while True:
            with self.lock:
                while not self.stopping and len(self.runs) + self.reserved >= self.capacity:
                    self._wait()
                if self.stopping:
                    return
                free = self.capacity - len(self.runs) - self.reserved
            body = {"workerId": self.settings.worker_id, "max": free, "waitMs": TAKE_WAIT_MS}
            try:
                response = conn.post("take", body)
            except HttpError as e:
                self.contact.failed("take", e)
                time.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            if self.contact.unwanted(response, "take"):
                return
            if response.status != 200:
                # 429: the platform sheds load; anything else: wait and ask again.
                self.contact.failed("take", f"HTTP {response.status} {response.text[:200]}")
                time.sleep(1.0 if response.status == 429 else backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            self.contact.ok()
            backoff = 0.05
            for job in (response.data or {}).get("jobs") or []:
                self._accept(job)

    def admit(self, job):
        """Counts a job handed out as in progress; False when it cannot run (malformed, the worker is stopping)."""
        if not _well_formed(job):
            return False
        with self.lock:
            if self.stopping:
                log.warn(f"job {job.get('id')} not started: the worker is stopping")
                return False
            self.runs[job["id"]] = Run(job["id"])
        return True

    def _accept(self, job):
        if not self.admit(job):
            return
        with self.lock:
            wake_idle = self.idle > 0
            if wake_idle:
                self.idle -= 1  # claimed here, so that two jobs never count on the same idle thread
        self.pending.put(job)
        if not wake_idle:
            threading.Thread(target=self._slot, name="strato-slot", daemon=True).start()

    # Slot threads: run a job, report it, run the next one `done` returned; then wait for the poller.
    def _slot(self):
        conn = self.settings.connect()
        while True:
            job = self.pending.get()
            while job is not None:
                job = self._run(conn, job)
            with self.lock:
                self.idle += 1

    def _run(self, conn, job):
        """HTTP: runs the job, reports it with `done`, and returns the next job that answer hands out (or None)."""
        body = self.result(conn, job, reserve=True)
        if body is None:
            return None
        body["take"] = 0 if self.stopping else 1
        response = self.post(conn, "done", body)
        jobs = ((response.data or {}).get("jobs") or []) if response is not None and response.status == 200 else []
        return self._release(jobs, body["jobId"])

    def result(self, conn, job, reserve=False):
        """Runs an admitted job; the body of its `done`, or None when it was cancelled (the result is dropped).
        With `reserve` the slot stays counted (a graceful stop waits for it) until _release or unreserve: while the
        result is sent, and over HTTP while `done` asks for the next job."""
        job_id = job["id"]
        with self.lock:
            run = self.runs.get(job_id)
        if run is None:  # cancelled before it started
            return None
        started = time.monotonic()
        index = [0]

        def on_chunk(value):
            try:
                # The value's own JSON text, as a job's output travels (_body): a parse and re-encode on the way
                # would round 12345678901234567891 and turn 2.0 into 2 in /stream, but not in /status.
                text = output_json(value)
            except (TypeError, ValueError) as e:  # nothing was sent: fails the job
                raise TypeError(f"a streamed value is not JSON serializable: {e}") from None
            chunk = {"outputJson": text, "metrics": {"stream_index": index[0]}}
            index[0] += 1
            response = self.post(conn, "stream", {"workerId": self.settings.worker_id, "jobId": job_id,
                                                  "chunks": [chunk]})
            return not (response is not None and (response.data or {}).get("cancelled"))

        outcome = execute(lambda: self.make_call(job), run, on_chunk)
        return self._body(job_id, run, outcome, started, reserve)

    def start_coroutine(self, job, deliver):
        """A job of a coroutine endpoint over the channel: its coroutine runs as a task on the event loop, which calls
        deliver(body) when it ends (body None: cancelled, nothing to send); returns at once, so the reading thread
        goes on reading. The slot stays reserved until deliver has sent it (unreserve)."""
        job_id = job["id"]
        with self.lock:
            run = self.runs.get(job_id)
        if run is None:  # cancelled before it started
            return
        started = time.monotonic()

        def done(outcome):
            deliver(self._body(job_id, run, outcome, started, True))

        try:
            result = self.make_call(job)  # an async def: makes the coroutine, runs none of its body
        except BaseException as exc:  # the input does not fit its arguments
            return done(failed(exc, run))
        if type(result) is CoroutineType:
            if self.loop is None:
                self.loop = event_loop()
            return start_task(self.loop, result, run, done)
        # Declared async, but this call gave something else (a wrapper): settled here, as execute() does.
        done(execute(lambda: result, run, None))

    def _body(self, job_id, run, outcome, started, reserve):
        """The body of a job's `done` from its outcome; None when it was cancelled (the result is dropped)."""
        with self.lock:
            owned = self.runs.get(job_id) is run
            if owned:
                del self.runs[job_id]
                self.reserved += reserve
                if reserve and not outcome.cancelled:
                    self.leaving.add(job_id)
            self._changed()
        if not owned or outcome.cancelled:
            if owned and reserve:
                self._release(())
            log.info(f"job {job_id} cancelled after {(time.monotonic() - started) * 1000:.0f} ms: result dropped")
            return None
        body = {"workerId": self.settings.worker_id, "jobId": job_id}
        if outcome.error is None:
            # The output's own JSON text travels as a string, so that the platform stores and answers exactly it
            # (12345678901234567890 stays whole, 2.0 stays 2.0, -0.0 stays -0.0); an output that cannot be sent fails
            # the job with the reason.
            text, failure = encoded_output(outcome.output)
            if failure is None:
                body["outputJson"] = text
            else:
                outcome = failure
        if outcome.error is not None:
            body["error"] = outcome.error
            log_failure(job_id, outcome)
        if log.enabled("DEBUG"):
            log.debug(f"job {job_id} done in {(time.monotonic() - started) * 1000:.1f} ms")
        return body

    def unreserve(self, job_id):
        """The result of a reserved slot left (call it holding self.lock)."""
        self.reserved -= 1
        self.leaving.discard(job_id)
        self._changed()

    def _release(self, jobs, job_id=None):
        """Gives back the slot reserved for `done` (of job_id, whose result left); the first chained job runs in this
        thread, extra ones (a platform handing out more than asked) go through the usual hand-off."""
        with self.lock:
            self.reserved -= 1
            self.leaving.discard(job_id)
            self._changed()
            first = None
            if jobs and not self.stopping and _well_formed(jobs[0]):
                first = jobs[0]
                self.runs[first["id"]] = Run(first["id"])
        for extra in jobs[1:]:
            self._accept(extra)
        return first

    def post(self, conn, what, body):
        """POSTs one protocol call; None when it got no usable answer (the failure is logged). A body that is
        not JSON serializable raises TypeError or ValueError before anything is sent."""
        try:
            response = conn.post(what, body)
        except HttpError as e:
            self.contact.failed(what, e)
            return None
        if self.contact.unwanted(response, what):
            return None
        if response.status != 200:
            log.warn(f"{what} for job {body.get('jobId')} answered HTTP {response.status}: {response.text[:200]}")
            return None
        self.contact.ok()
        return response


def _well_formed(job):
    if isinstance(job, dict) and isinstance(job.get("id"), str):
        return True
    log.error(f"the platform sent a malformed job (no string id), skipped: {job!r:.200}")
    return False
