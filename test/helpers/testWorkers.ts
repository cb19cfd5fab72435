// Python worker sources the platform tests deploy: small handlers that echo, fail, sleep, stream, report
// their environment, touch marker files, or crash; each becomes its own endpoint through `queueSpec`.
import type { TestEndpointSpec } from './artifact';

export const WORKER_PY = `
import asyncio
import os
import time


def echo(**kw):
    return {"echo": kw}


def noop(**kw):
    return {"ok": True}


class Interrupted(BaseException):
    """Not an Exception: what code that means to stop more than a job raises."""


def fail(message="boom", kind="value"):
    raise {"value": ValueError, "interrupt": KeyboardInterrupt, "base": Interrupted}[kind](message)


async def afail(message="boom", kind="value"):
    fail(message, kind)


def fail_dict(message="bad input"):
    return {"error": message}


def sleep(seconds=1.0, marker=None, until=None, **kw):
    start = time.time()
    if until:  # held until the test makes this file (at most \`seconds\`): no window for the test to hit
        while not os.path.exists(until) and time.time() - start < seconds:
            time.sleep(0.02)
    else:
        time.sleep(seconds)
    if marker:
        with open(marker, "a") as f:
            f.write("done %s\\n" % kw.get("tag", ""))
    return {"slept": seconds, "pid": os.getpid(), "start": start, "end": time.time(), **kw}


async def asleep(seconds=1.0, marker=None, until=None):
    start = time.time()
    if until:  # as sleep() above
        while not os.path.exists(until) and time.time() - start < seconds:
            await asyncio.sleep(0.02)
    else:
        await asyncio.sleep(seconds)
    if marker:
        with open(marker, "a") as f:
            f.write("done\\n")
    return {"slept": seconds, "start": start, "end": time.time()}


def env_info(**kw):
    keys = ["STRATO_APP", "STRATO_ENV", "STRATO_ENDPOINT_NAME", "STRATO_ENDPOINT_ID", "MY_VAR", "STRATO_API_KEY"]
    return {"env": {k: os.environ.get(k) for k in keys}, "pid": os.getpid(), "cwd": os.getcwd(),
            "cuda": os.environ.get("CUDA_VISIBLE_DEVICES")}


def gen(n=3, delay=0.0):
    for i in range(n):
        if delay:
            time.sleep(delay)
        yield {"i": i}


async def agen(n=3):
    for i in range(n):
        await asyncio.sleep(0.01)
        yield {"a": i}


def big(size=10):
    return "x" * size


def crash(code=3):
    os._exit(code)


def hold(marker, seconds=30.0):
    # Tells the test which process runs the job, then keeps running.
    with open(marker, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(seconds)
    return {"pid": os.getpid()}


def record(marker, tag, seconds=0.0):
    # Appends one line per execution: the fault tests count them to find duplicates.
    if seconds:
        time.sleep(seconds)
    with open(marker, "a") as f:
        f.write(tag + "\\n")
    return {"tag": tag}
`;

export const BROKEN_PY = `
import not_a_module_that_exists  # fails at import: the worker cannot start


def handler(**kw):
    return kw
`;

export function queueSpec(name: string, fn: string, extra: Partial<TestEndpointSpec> = {}): TestEndpointSpec {
  return { name, file: 'worker.py', fn, ...extra };
}

export const LB_PY = `
import os
import time


def process(text="", times=1):
    return {"result": text * times, "pid": os.getpid()}


def health():
    return {"status": "ok", "pid": os.getpid()}


def item(item_id, q=None):
    return {"item_id": item_id, "q": q}


def boom():
    raise RuntimeError("kaboom")


def slow(seconds=0.5):
    time.sleep(float(seconds))
    return {"pid": os.getpid()}
`;
