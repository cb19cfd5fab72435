# Entry point of the generated handler files (docs/worker-protocol.md): serve(endpoint) reads the manifest beside
# the handler, imports the endpoint's code and runs it as a platform worker, or locally without a platform.
import os
import sys

from . import _log as log
from ._app import SetupError, Target, import_function, load_endpoint, route_table

__all__ = ["serve"]


def caller_file(depth=2):
    """The file that called the public entry point (the handler), else the main script."""
    try:
        return sys._getframe(depth).f_globals.get("__file__") or sys.argv[0]
    except ValueError:
        return sys.argv[0]


def serve(endpoint_name):
    """Serves endpoint `endpoint_name` of the manifest: a platform worker when STRATO_WORKER_TOKEN is set,
    else the local handler test server (--rp_serve_api, --test_input, test_input.json)."""
    handler_file = caller_file()
    if os.environ.get("STRATO_WORKER_TOKEN") and (os.environ.get("STRATO_WORKER_HOST") or os.environ.get("STRATO_PARENT_PIPE")):
        lead_process_group()
        exit_with_agent()
    try:
        _serve(endpoint_name, handler_file)
    except SetupError as e:
        exit_setup_error(e)


def exit_setup_error(e):
    if e.detail:
        log.error(e.detail.rstrip())
    log.error(str(e))
    sys.exit(1)


def lead_process_group():
    """A platform worker leads a process group of its own: what its code starts (a DataLoader's workers, an inference
    engine's processes) joins it, and the platform ends the group with the worker, so that nothing the worker started
    keeps the GPUs it held once they are handed to another worker."""
    try:
        os.setpgid(0, 0)
    except (AttributeError, OSError):  # not POSIX, or already a group leader
        pass


def exit_with_agent():
    """A worker started by a worker host's agent, or by a platform node on its own machine (STRATO_PARENT_PIPE): its
    stdin is a pipe from that process. When it dies (even by SIGKILL) the pipe closes, and the worker goes too: the
    platform runs its jobs again elsewhere, another node may start a worker in its slot, and an orphan must not keep
    a GPU that is offered again."""
    import threading

    def watch():
        try:
            # The raw descriptor, not sys.stdin's buffered reader: a daemon thread blocked holding that reader's lock
            # makes the interpreter abort at exit (a worker that exits on a setup error would die by SIGABRT).
            while os.read(0, 4096):
                pass
        except (OSError, ValueError):
            pass
        os._exit(1)

    threading.Thread(target=watch, name="strato-agent-watch", daemon=True).start()


def _serve(name, handler_file):
    if os.environ.get("STRATO_TEMPLATE") == "1":
        from ._template import tie_to_platform

        tie_to_platform()
    resource, routes, _ = load_endpoint(name, handler_file)
    if os.environ.get("STRATO_TEMPLATE") == "1":
        return _serve_template(name, resource, routes)
    as_worker = bool(os.environ.get("STRATO_WORKER_TOKEN"))
    if not as_worker:
        # Local testing: calls of other endpoints' functions run in this process too.
        os.environ.setdefault("STRATO_LOCAL", "1")
    if resource.get("is_load_balanced"):
        table = route_table(resource, routes)
        if not table:
            raise SetupError(f"load-balanced endpoint {name!r} has no routes in the manifest: rebuild the artifact")
        return run_lb_worker(table) if as_worker else run_lb_local(table, name)
    functions = resource.get("functions") or []
    if len(functions) != 1:
        raise SetupError(f"queue-based endpoint {name!r} must have one function or class in the manifest, it has "
                         f"{len(functions)}: rebuild the artifact")
    target = Target(import_function(functions[0]["module"], functions[0]["name"]))
    if as_worker:
        run_queue_worker(resource, target)
    else:
        from . import _local

        _local.main(lambda job: target(job["input"]), handler_file, sample_input=functions[0].get("sample_input"))


def run_queue_worker(resource, target):
    from ._debug import listen_if_asked
    from ._platform import Settings
    from ._worker import QueueWorker

    listen_if_asked()

    call_job = lambda job: target(job["input"])  # noqa: E731
    settings = Settings(os.environ, resource.get("max_concurrency") or 1)
    if target.is_async:
        from ._invoke import event_loop

        event_loop()  # before `ready`, so that the first job does not pay for starting it
    QueueWorker(settings, call_job, coroutines=target.returns_coroutines).run()


def _serve_template(name, resource, routes):
    """Template mode (_template.py): import everything a worker needs, then fork workers on request."""
    from ._template import wait_for_fork

    if resource.get("is_load_balanced"):
        table = route_table(resource, routes)
        if not table:
            raise SetupError(f"load-balanced endpoint {name!r} has no routes in the manifest: rebuild the artifact")
        from . import _lb, _platform  # noqa: F401 - imported once here, not in every forked worker

        wait_for_fork()
        return run_lb_worker(table)
    functions = resource.get("functions") or []
    if len(functions) != 1:
        raise SetupError(f"queue-based endpoint {name!r} must have one function or class in the manifest, it has "
                         f"{len(functions)}: rebuild the artifact")
    target = Target(import_function(functions[0]["module"], functions[0]["name"]))
    from . import _platform, _worker  # noqa: F401 - imported once here, not in every forked worker

    wait_for_fork()
    run_queue_worker(resource, target)


def run_lb_worker(table):
    from ._debug import listen_if_asked
    from ._lb import start_server
    from ._platform import GRACE_S, Contact, Settings, Stopper, post_ready, start_heartbeat

    listen_if_asked()
    settings = Settings(os.environ)
    stopper = Stopper()
    contact = Contact(stopper)
    try:
        server = start_server(table, settings.lb_host, settings.lb_port, token=settings.token)
    except OSError as e:
        raise SetupError(f"cannot listen on {settings.lb_host}:{settings.lb_port}: {e.strerror or e}") from None
    post_ready(settings, contact, server.server_port)
    if stopper.code is None:
        start_heartbeat(settings, contact, lambda: [], lambda job_id: None)
        log.info(f"worker {settings.worker_id} ready on {settings.lb_host}:{server.server_port}: {', '.join(table)}")
    if stopper.wait():  # SIGTERM: answer the requests in progress, accept no more
        server.shutdown()
        server.wait_idle(GRACE_S)
    stopper.end_process()


def run_lb_local(table, name):
    from . import _local
    from ._lb import start_server

    flags = _local.parse_flags(sys.argv)
    log.set_level(flags.rp_log_level or ("DEBUG" if flags.rp_debugger else "INFO"))
    try:
        server = start_server(table, flags.rp_api_host, flags.rp_api_port)
    except OSError as e:
        raise SetupError(f"cannot listen on {flags.rp_api_host}:{flags.rp_api_port}: {e.strerror or e}; "
                         "pick another port with --rp_api_port") from None
    log.info(f"load-balanced endpoint {name!r} on http://{flags.rp_api_host}:{server.server_port}: "
             f"{', '.join(table)}, GET /ping")
    _local.wait_for_interrupt()
