# The HTTP side of calling the platform from Python (scripts, endpoints calling endpoints, Endpoint(id=...)):
# one request function (size limits said before sending, errors as StratoRemoteError), the control plane's GraphQL,
# the query of a route call, and the text of an error answer.
import json

from .catalog import RUN_BODY_BYTES, RUNSYNC_BODY_BYTES

ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT")  # the job states that are final


class StratoRemoteError(RuntimeError):
    """The deployed endpoint ran the call and it failed (or timed out, or was cancelled)."""

    def __init__(self, message, status=None, job_id=None):
        super().__init__(message)
        self.status = status
        self.job_id = job_id


def transient(error):
    """Whether a failed request may well succeed if made again: the platform was out of reach (restarting), or said it
    is not ready or too busy (502, 503, 504, 429)."""
    return error.status is None or error.status in (429, 502, 503, 504)


StratoRemoteError.__module__ = "strato"  # a traceback names it as callers import it: from strato import StratoRemoteError


def request(method, url, key, body=None, timeout=60.0):
    import urllib.error
    import urllib.parse
    import urllib.request

    data = None if body is None else _body_json(body).encode("utf-8")
    if data is not None:
        # The platform answers 413 to a larger body, but closes the connection while it is still being sent, and
        # the sender sees only a broken pipe: said here, before anything is sent.
        path = urllib.parse.urlsplit(url).path
        limit = RUN_BODY_BYTES if path.endswith("/run") else RUNSYNC_BODY_BYTES
        if len(data) > limit:
            raise StratoRemoteError(
                f"the call's arguments are {len(data) / 1048576:.1f} MB as JSON, over the {limit // 1048576} MB the "
                f"platform takes for {'a /run' if limit == RUN_BODY_BYTES else 'a call'} (HTTP 413): pass large data "
                "by reference (a URL, or a file on a network volume)",
                status=413,
            )
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            raw = res.read()
            status = res.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    except (urllib.error.URLError, OSError) as e:
        raise StratoRemoteError(f"could not reach the Strato platform at {url.split('/v2/')[0].split('/lb/')[0]}: {getattr(e, 'reason', e)}") from None
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode("utf-8", "replace")
    if status == 401:
        # The platform's own sentence says more when it has one (a revoked key names itself and when), as the CLI shows.
        said = _said(body)
        raise StratoRemoteError(
            f"the Strato platform refused the API key (401): {said}" if said else
            "the Strato platform refused the API key (401): check STRATO_API_KEY", status=401)
    return status, body


def _said(body):
    """The platform's sentence in an error answer: the jobs API's {"error"}, or GraphQL's first error's message."""
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("error"), str):
        return body["error"]
    errors = body.get("errors")
    first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
    return first.get("message") if isinstance(first.get("message"), str) else None


def _body_json(body):
    """The JSON text of what is sent: a pydantic model, a datetime, a UUID, a Decimal, an Enum, a set, a dataclass (and
    a container of those) in the JSON form a FastAPI route would answer it with (_jsonable), as the route reads it."""
    from ._jsonable import dumps

    try:
        return dumps(body)
    except (TypeError, ValueError) as e:
        raise (TypeError if isinstance(e, TypeError) else ValueError)(f"the call's arguments cannot be sent as JSON: {e}") from None


def graphql(base, key, query, variables):
    status, body = request("POST", f"{base}/graphql", key, {"query": query, "variables": variables})
    if not isinstance(body, dict) or body.get("errors"):
        errors = body.get("errors") if isinstance(body, dict) else None
        raise StratoRemoteError(f"the control plane refused the lookup: {errors[0].get('message') if errors else body}")
    return body["data"]


def query_string(args):
    """The query of a GET or DELETE route call: each argument as its text (a string as it is, anything else as its
    JSON form, the quotes of a text form dropped: a UUID or a datetime as itself), a list, set or tuple as its key
    once per item, and None (an Optional left at its default) left out."""
    import urllib.parse

    pairs = []
    for key, value in args.items():
        if value is None:
            continue
        items = value if isinstance(value, (list, tuple, set, frozenset)) else (value,)
        pairs += [(key, param_text(item)) for item in items]
    return urllib.parse.urlencode(pairs)


def param_text(value):
    """A value as a query parameter's or a path segment's text (_jsonable.text_form); what JSON cannot hold raises
    TypeError or ValueError saying so."""
    from ._jsonable import text_form

    try:
        return text_form(value)
    except (TypeError, ValueError) as e:
        raise (TypeError if isinstance(e, TypeError) else ValueError)(f"a route argument cannot be sent as text: {e}") from None


def follow_stream(read_chunks, job_ended):
    """Yields a job's stream values as its /stream answers bring them (read_chunks() is one answer, a list) until every
    chunk of an ended job was delivered. An empty answer (its wait ran out) is followed by job_ended(), a status read;
    once the job has ended, reads go on until one is empty again: the job may have ended between the empty answer and
    the status read, and a handler that does not stream makes its one chunk as it completes."""
    pieces = []
    ended = False
    while True:
        chunks = read_chunks()
        yield from stream_values(chunks, pieces)
        if chunks:
            continue
        if ended:
            return
        ended = job_ended()


def stream_values(chunks, pieces):
    """The handler's values in a /stream answer: a value the platform split (over 1 MB: metrics part, parts and, for
    JSON text, json) is put together from its pieces; `pieces` holds those of one not complete yet, across answers."""
    for chunk in chunks:
        value = chunk.get("output") if isinstance(chunk, dict) else chunk
        metrics = (chunk.get("metrics") if isinstance(chunk, dict) else None) or {}
        if "parts" not in metrics:
            yield value
            continue
        pieces.append(value)
        if metrics.get("part") == metrics["parts"] - 1:
            text = "".join(pieces)
            pieces.clear()
            yield json.loads(text) if metrics.get("json") else text


def error_text(body):
    if isinstance(body, dict) and "error" in body:
        return f"{body['error']}: {body['detail']}" if body.get("detail") else str(body["error"])
    return str(body)[:500]
