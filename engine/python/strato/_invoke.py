# Turns a call of user code into a job outcome: awaits coroutines on a shared event loop, streams generators
# chunk by chunk, maps exceptions and {"error": ...} results to error text. Shared by the worker and local server.
import json
import queue
import threading
import traceback
from json import encoder as _json_encoder
from types import AsyncGeneratorType, GeneratorType

from . import _log as log
from .catalog import REFERENCE_PACKAGE, WORKER_MESSAGE_BYTES

_loop = None
_loop_lock = threading.Lock()
_END = object()


def event_loop():
    """The process's one asyncio loop, run by a daemon thread and started on first use: async user code
    shares it (clients, caches), and sync-only endpoints never import asyncio."""
    global _loop
    with _loop_lock:
        if _loop is None:
            import asyncio

            loop = asyncio.new_event_loop()
            started = threading.Event()

            def run():
                asyncio.set_event_loop(loop)
                loop.call_soon(started.set)
                loop.run_forever()

            threading.Thread(target=run, name="strato-asyncio", daemon=True).start()
            started.wait()
            _loop = loop
    return _loop


class Run:
    """One execution, cancellable from another thread (heartbeat answer, stream answer, local cancel)."""

    __slots__ = ("id", "cancelled", "future")

    def __init__(self, job_id):
        self.id = job_id
        self.cancelled = False
        self.future = None  # the concurrent future of the coroutine being awaited, if any

    def cancel(self):
        # Async work is cancelled for real; a sync call cannot be interrupted, so its result is dropped.
        self.cancelled = True
        future = self.future
        if future is not None:
            future.cancel()

    def _watch(self, future):
        self.future = future
        if self.cancelled:  # cancel() ran before the future existed
            future.cancel()


class Cancelled(Exception):
    pass


class Outcome:
    __slots__ = ("output", "error", "traceback", "cancelled")

    def __init__(self, output=None, error=None, traceback=None, cancelled=False):
        self.output = output
        self.error = error
        self.traceback = traceback
        self.cancelled = cancelled


def exception_message(exc):
    """str(exc), or what Python's own traceback prints when that raises (an exception whose __str__ fails or answers
    something other than text): the job still fails with the exception's type, and the worker goes on."""
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


def error_text(exc):
    message = exception_message(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] == REFERENCE_PACKAGE:
        # An import line a migration did not change: no package to install.
        text += (f"; {REFERENCE_PACKAGE} is the reference product's package, which Strato replaces: change the import "
                 "line to import from strato (the names are the same)")
    elif isinstance(exc, ModuleNotFoundError) and exc.name and not _is_project_module(exc.name):
        # Packages reach a worker only one way: the first thing a newcomer needs to know here.
        text += (f"; add {exc.name.split('.')[0]!r} to the endpoint's dependencies=[...] or to requirements.txt (a worker "
                 "has only the packages its build installed)")
    return text


def _is_project_module(name):
    # The project's own modules sit beside the worker file (the artifact's root, on sys.path first): a missing one of
    # those is a typo or a file left out, not a package to install.
    import os
    import sys

    top = name.split(".")[0]
    root = sys.path[0] if sys.path else ""
    return bool(root) and (os.path.exists(os.path.join(root, top)) or os.path.exists(os.path.join(root, top + ".py")))


def user_traceback(exc):
    """The traceback from the first frame of user code on: the runtime's and asyncio's own frames only hide it.
    Just the exception line when no user code ran (a missing argument, an input that is not an object)."""
    import os
    import traceback

    stdlib = os.path.dirname(os.__file__)
    internal = (os.path.dirname(__file__), os.path.join(stdlib, "asyncio"), os.path.join(stdlib, "concurrent"),
                os.path.join(stdlib, "importlib"), "<frozen importlib")
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(internal):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def json_default(value):
    """json.dumps(default=...) of every output: the JSON form a load-balanced route answers with (_jsonable.py: a
    dataclass as the object of its fields, a set as a sorted list, a pydantic model, a datetime, a UUID, a Decimal,
    an Enum...); anything else JSON cannot hold is refused, saying what it can."""
    from ._jsonable import json_form  # only for values JSON cannot hold by itself: loaded on first need

    return json_form(value)


def compact_encoder(default=None, allow_nan=True):
    """value -> its compact JSON text (no spaces, non-ASCII kept), with an encoder made once: json.dumps builds a new
    C encoder on every call, which costs several times what encoding a small value does (a no-op job's output: 4 µs
    against 0.6). It keeps no state between calls, so threads share it; a value that contains itself, or nests
    deeper than the recursion limit, raises ValueError."""
    make = _json_encoder.c_make_encoder
    if make is None:  # an interpreter without the C accelerator
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=default, allow_nan=allow_nan).encode
    # No markers dict (the circular-reference check): that dict would be shared by every call, of every thread.
    encode = make(None, default, _json_encoder.encode_basestring, None, ":", ",", False, False, allow_nan)

    def text(value):
        try:
            return "".join(encode(value, 0))
        except RecursionError:
            raise ValueError("it contains itself, or nests deeper than Python's recursion limit") from None

    return text


_output_text = compact_encoder(default=json_default, allow_nan=False)


def output_json(value):
    """A job's output (or a route's answer) as compact JSON text, non-ASCII kept; what JSON cannot hold (NaN, an
    infinity, an object) raises TypeError or ValueError. A lone surrogate (only in a string) is written as its JSON
    escape, as json.dumps writes it: the text is valid UTF-8, so it reaches the caller as the escape, not as U+FFFD."""
    text = _output_text(value)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


# Room in a worker's message for what goes around the output (ids, the frame): a few hundred bytes, generously.
_MESSAGE_ROOM = 65536


def oversized(text):
    """Why an output's JSON text is too large for the platform to take (a sentence), else None. Sent anyway, it
    would be refused, and the job run again, each time."""
    limit = WORKER_MESSAGE_BYTES - _MESSAGE_ROOM
    if len(text) * 4 <= limit:  # UTF-8 takes at most 4 bytes a character: no need to count
        return None
    size = len(text) if text.isascii() else len(text.encode("utf-8", "backslashreplace"))
    if size <= limit:
        return None
    return (f"ValueError: the output is {size / 1048576:.0f} MB as JSON, over the {WORKER_MESSAGE_BYTES // 1048576} MB a "
            "job's result may be: return less, or write large results to a network volume or object storage and "
            "return where they are")


def encoded_output(value):
    """A job's output as the platform gets it: (its JSON text, None), or (None, an Outcome failing the job with why
    it cannot be sent: not JSON, a serializer that raised, too large). The platform worker's rule; the local server
    applies it too."""
    try:
        text = output_json(value)
    except (TypeError, ValueError) as e:
        return None, Outcome(error=f"TypeError: the output is not JSON serializable: {e}")
    except Exception as e:  # a model's serializer, a property of the output that raises
        return None, Outcome(error=f"{type(e).__name__} while turning the output into JSON: {e}",
                             traceback=traceback.format_exc())
    too_large = oversized(text)
    return (None, Outcome(error=too_large)) if too_large else (text, None)


def json_type(value):
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


def execute(call, run, on_chunk=None):
    """Runs call() (user code) to an Outcome. on_chunk(value) receives each streamed value and returns False
    when the consumer cancelled the job. A returned dict whose "error" is not empty fails the job with it, whatever
    else it holds (the reference worker SDK's rule, for decorated functions and hand-written handlers alike)."""
    try:
        output = settle(call(), run, on_chunk)
    except Cancelled:
        return Outcome(cancelled=True)
    except BaseException as exc:  # the user's code failed (KeyboardInterrupt and sys.exit too): the job's result
        return failed(exc, run)
    return finished(output, run)


def failed(exc, run):
    """The Outcome of user code that raised exc. Never raises: what the user's exception does when it is described
    (a __str__ or a __traceback__ of its own) must not leave its job without an outcome."""
    if run.cancelled:
        return Outcome(cancelled=True)
    try:
        return Outcome(error=error_text(exc), traceback=user_traceback(exc))
    except BaseException as e:
        return Outcome(error=f"{type(exc).__name__} (describing it raised {type(e).__name__})")


def finished(output, run):
    """The Outcome of user code that returned output (settled). Never raises: an {"error": ...} value whose truth or
    JSON form the user's code computes (and raises in) fails the job saying so."""
    if run.cancelled:
        return Outcome(cancelled=True)
    if type(output) is dict and "error" in output:
        error = output["error"]
        try:
            if not error:
                return Outcome(output=output)
            return Outcome(error=error if isinstance(error, str) else json.dumps(error, default=str))
        except BaseException as e:
            return Outcome(error=f"the result's \"error\" value could not be read as text ({error_text(e)})",
                           traceback=traceback.format_exc())
    return Outcome(output=output)


class _TaskCancel:
    """Run.future for a task on the loop: cancel() may come from any thread."""

    __slots__ = ("loop", "task")

    def __init__(self, loop, task):
        self.loop = loop
        self.task = task

    def cancel(self):
        self.loop.call_soon_threadsafe(self.task.cancel)


def start_task(loop, coro, run, done):
    """Runs the coroutine of a call as a task on `loop` (the caller's thread goes on at once) and calls done(outcome)
    on the loop when it ends, with the Outcome that execute() would give. No thread waits for it: a job of a coroutine
    endpoint costs one hand-off (to the loop) instead of three (a slot thread, the loop, the slot thread again)."""
    import asyncio  # already imported by event_loop()

    async def task():
        try:
            output = await coro
        except asyncio.CancelledError:
            if run.cancelled:
                return done(Outcome(cancelled=True))
            # The coroutine cancelled itself (asyncio.CancelledError escaped): a failure, not our cancel.
            return done(failed(RuntimeError("the coroutine was cancelled from inside (asyncio.CancelledError)"), run))
        except BaseException as exc:
            return done(failed(exc, run))
        done(finished(output, run))  # failed() and finished() never raise: done() is always called

    def begin():
        if run.cancelled:  # before its task existed (a task cancelled before its first step never runs its body)
            coro.close()
            return done(Outcome(cancelled=True))
        # A cancel from now on reaches the task after its first step (call_soon keeps the order): inside `try`.
        run._watch(_TaskCancel(loop, loop.create_task(task())))

    loop.call_soon_threadsafe(begin)


# What most calls return: a value that is final as it is (no generator, nothing to await).
_PLAIN = frozenset((dict, list, str, int, float, bool, type(None)))


def settle(result, run=None, on_chunk=None):
    """The final value of a call's result: coroutines awaited, generators drained into the list of values."""
    if type(result) in _PLAIN:
        return result
    run = run or Run(None)
    if isinstance(result, GeneratorType):
        return _drain(result, run, on_chunk)
    if isinstance(result, AsyncGeneratorType):
        return _drain_async(result, run, on_chunk)
    if hasattr(result, "__await__"):
        return _await(result, run)
    return result


class _Escaped(Exception):
    """KeyboardInterrupt or SystemExit raised by user code on the event loop, carried out of it: asyncio re-raises
    those two out of the loop itself, which would end the loop's thread and every job on it."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner


async def _contained(awaitable):
    try:
        return await awaitable
    except (KeyboardInterrupt, SystemExit) as e:
        raise _Escaped(e) from None


def _result(future):
    """future.result(), with what _contained carried raised as itself."""
    try:
        return future.result()
    except _Escaped as e:
        raise e.inner from None


def _submit(coro, run):
    import asyncio  # already imported by event_loop()

    future = asyncio.run_coroutine_threadsafe(coro, event_loop())
    run._watch(future)
    return future


def _await(awaitable, run):
    future = _submit(_contained(awaitable), run)
    try:
        return _result(future)
    except BaseException:
        if run.cancelled:
            raise Cancelled() from None
        if future.cancelled():
            # The coroutine cancelled itself (asyncio.CancelledError escaped): a failure, not our cancel.
            raise RuntimeError("the coroutine was cancelled from inside (asyncio.CancelledError)") from None
        raise


def _drain(gen, run, on_chunk):
    values = []
    try:
        for value in gen:
            if run.cancelled:
                raise Cancelled()
            values.append(value)
            if on_chunk is not None and on_chunk(value) is False:
                run.cancel()
                raise Cancelled()
    finally:
        gen.close()
    return values


def _drain_async(agen, run, on_chunk):
    # The generator runs as one task on the loop (so its context and cancellation behave as in asyncio);
    # values cross to this thread through a queue, where they are streamed.
    values_q = queue.SimpleQueue()

    async def pump():
        async for value in agen:
            values_q.put(value)

    future = _submit(_contained(pump()), run)
    future.add_done_callback(lambda _: values_q.put(_END))
    values = []
    try:
        while True:
            value = values_q.get()
            if value is _END:
                break
            values.append(value)
            if on_chunk is not None and on_chunk(value) is False:
                run.cancel()
                raise Cancelled()
    except BaseException:
        # A value that cannot be streamed (not JSON), or a stream that failed: the job ends here, and so does the
        # generator (cancelled at its await), which would otherwise go on running on the shared loop, uncounted.
        future.cancel()
        raise
    if run.cancelled:
        raise Cancelled()
    if future.cancelled():
        raise RuntimeError("the async generator was cancelled from inside (asyncio.CancelledError)")
    _result(future)  # re-raises the generator's exception
    return values


def log_failure(job_id, outcome):
    log.error(f"job {job_id} failed: {outcome.error}")
    if outcome.traceback and outcome.traceback.startswith("Traceback"):
        log.error(outcome.traceback.rstrip())
