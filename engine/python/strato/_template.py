# Template ("zygote") mode of a platform worker: with STRATO_TEMPLATE=1 the handler imports the runtime and the
# endpoint's code, then waits; each fork request makes a child that takes its own identity and serves as a worker.
import json
import os
import random
import selectors
import signal
import socket
import sys
import threading

from . import _log as log

REQUESTS_FD = 0  # the platform writes one JSON request a line: {"op": "fork", "id", "env", "log"}
REPLIES_FD = 3  # the template answers one JSON line each: ready, unsafe, forked, exit


def fork_unsafe_reason():
    """Why a fork of this process would not be a sound worker, or None. Threads do not survive fork (a lock
    one of them held stays locked forever in the child); an initialised CUDA context does not either."""
    if threading.active_count() > 1:
        names = ", ".join(sorted(t.name for t in threading.enumerate() if t is not threading.main_thread()))
        return f"a dependency started thread(s) at import ({names}), and threads do not survive fork"
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return "CUDA was initialised at import, and a CUDA context does not survive fork"
    except Exception:  # noqa: BLE001 - a partial torch: not our concern here
        pass
    return None


def _reply(message):
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(REPLIES_FD, data):]


def wait_for_fork():
    """Runs the template loop; returns only in a forked child, after it applied the identity it was sent."""
    reason = fork_unsafe_reason()
    if reason:
        _reply({"t": "unsafe", "reason": reason})
        os._exit(0)
    _libc()  # loaded once here rather than in every child
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: _leave_now())
    sel = selectors.DefaultSelector()
    sel.register(REQUESTS_FD, selectors.EVENT_READ, "requests")
    sel.register(wake_r, selectors.EVENT_READ, "signal")
    _reply({"t": "ready", "pid": os.getpid()})
    pending = b""
    children = set()
    closing = False
    retired = False
    while True:
        for key, _ in sel.select():
            if key.data == "signal":
                try:
                    os.read(wake_r, 512)
                except BlockingIOError:
                    pass
                _reap(children)
                continue
            chunk = os.read(REQUESTS_FD, 65536)
            if not chunk:
                if not retired:
                    # The platform node is gone (SIGKILL): its workers go too, at once (PR_SET_PDEATHSIG), so that none
                    # outlives it while another node starts workers in its slots.
                    os._exit(1)
                # The platform retired this template: leave with the last worker.
                sel.unregister(REQUESTS_FD)
                closing = True
                continue
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                if request.get("op") == "retire":
                    retired = True
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    sel.close()
                    signal.set_wakeup_fd(-1)
                    os.close(wake_r)
                    os.close(wake_w)
                    _become_worker(request)
                    return
                children.add(pid)
                _reply({"t": "forked", "id": request.get("id"), "pid": pid})
        _reap(children)
        if closing and not children:
            os._exit(0)


def _leave_now():
    # SIGTERM comes at platform shutdown, after the workers were stopped: nothing to finish (a worker still
    # running dies with the template, PR_SET_PDEATHSIG).
    os._exit(0)


def _reap(children):
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            return
        if pid == 0:
            return
        children.discard(pid)
        code = os.waitstatus_to_exitcode(status)
        _reply({"t": "exit", "pid": pid, "code": code if code >= 0 else None,
                "signal": signal.Signals(-code).name if code < 0 else None})


def _become_worker(request):
    """In the child: die with the template (the platform learns exits from it), send output to the platform's
    log socket, take the worker's environment, and reseed what the template seeded."""
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:
        os._exit(1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from .runtime import lead_process_group

    lead_process_group()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.close(REPLIES_FD)
    for fd, stream in ((1, "O"), (2, "E")):
        _attach_log(request["log"], request["id"], stream, fd)
    os.environ.clear()
    os.environ.update(request["env"])
    log.set_level(os.environ.get("STRATO_LOG_LEVEL", "INFO"))
    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _attach_log(path, worker_id, stream, fd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(f"{worker_id} {stream}\n".encode())
    s.shutdown(socket.SHUT_RD)
    os.dup2(s.fileno(), fd)
    s.close()


_LIBC = []


def _libc():
    if not _LIBC and sys.platform.startswith("linux"):
        try:
            import ctypes

            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        except OSError:
            pass
    return _LIBC[0] if _LIBC else None


def tie_to_platform():
    """A template dies with the platform node that started it, from its first line on: its pipe is only watched once the
    endpoint's code is imported, and an import that hangs (a model download) would outlive a node killed meanwhile."""
    if not sys.platform.startswith("linux"):
        return
    _die_with_parent()
    if os.getppid() == 1:  # the node died before the tie was made
        os._exit(1)


def _die_with_parent():
    """PR_SET_PDEATHSIG: a worker whose template died would have nobody to report its exit."""
    libc = _libc()
    try:
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except AttributeError:
        log.warn("cannot tie this worker to its template's life (prctl unavailable)")
