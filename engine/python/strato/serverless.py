# Entry point of hand-written handlers, as in the reference SDK: start({"handler": fn}) calls fn(job) with each
# job {"id", "input"}: as a platform worker when the platform started the process, else locally for testing.
import os

from ._app import SetupError
from .runtime import caller_file, exit_setup_error

__all__ = ["start"]


def start(config):
    """Runs config["handler"] (sync, async, generator or async generator) for each job. Without a platform:
    --rp_serve_api starts the local test server; --test_input or test_input.json runs it once."""
    handler = config.get("handler") if isinstance(config, dict) else None
    if not callable(handler):
        raise ValueError('start() needs {"handler": function}; the function receives each job {"id", "input"}')
    handler_file = caller_file()
    try:
        if os.environ.get("STRATO_WORKER_TOKEN"):
            from ._debug import listen_if_asked
            from ._platform import Settings
            from ._worker import QueueWorker

            listen_if_asked()

            # A dict holding "error" fails the job, whatever else it holds: the reference SDK's rule.
            from ._app import returns_coroutines

            QueueWorker(Settings(os.environ), handler, coroutines=returns_coroutines(handler)).run()
        else:
            from . import _local

            os.environ.setdefault("STRATO_LOCAL", "1")  # other endpoints' functions run in this process too
            _local.main(handler, handler_file)
    except SetupError as e:
        exit_setup_error(e)
