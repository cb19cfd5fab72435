# The local test server's /docs and /openapi.json (the reference's local server has /docs): what it serves, and a form
# that sends a job to /runsync. Self-contained (no script or style from elsewhere: the server runs offline).
import json

def _escape(text):
    """Text for HTML (the stdlib html module is not imported: a project's own html.py would be found first)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#x27;")


_ROUTES = [
    ("POST", "/runsync", "Runs a job and answers it when it ends: {id, status, output | error}."),
    ("POST", "/run", "Queues a job and answers {id, status} at once; follow it with /status or /stream."),
    ("GET, POST", "/status/{id}", "The job: IN_QUEUE, IN_PROGRESS, then COMPLETED, FAILED or CANCELLED."),
    ("GET, POST", "/stream/{id}", "What a generator handler has yielded since the last read."),
    ("POST", "/cancel/{id}", "Cancels a queued or running job."),
]

_STYLE = ("body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}"
          "code,pre,textarea{font:13px ui-monospace,monospace}table{border-collapse:collapse;width:100%}"
          "td{border-top:1px solid #ddd;padding:.4rem .6rem;vertical-align:top}textarea{width:100%;height:7rem}"
          "pre{background:#f5f5f5;padding:.8rem;overflow:auto}button{font-size:14px;padding:.3rem .9rem}")

_SCRIPT = ("async function send(){const out=document.getElementById('out');out.textContent='running...';"
           "try{const r=await fetch('/runsync',{method:'POST',headers:{'content-type':'application/json'},"
           "body:document.getElementById('body').value});const t=await r.text();"
           "try{out.textContent=r.status+' '+JSON.stringify(JSON.parse(t),null,2)}catch(e){out.textContent=r.status+' '+t}}"
           "catch(e){out.textContent=String(e)}}")


def docs_page(title, example):
    """The HTML of /docs for the handler `title`, its form filled with `example` (a request body)."""
    rows = "".join(f"<tr><td><code>{m}</code></td><td><code>{_escape(p)}</code></td><td>{_escape(d)}</td></tr>"
                   for m, p, d in _ROUTES)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{_escape(title)}: local test server</title>"
            f"<style>{_STYLE}</style></head><body><h1>{_escape(title)}</h1>"
            "<p>The local test server of a queue handler: the jobs API of a deployed endpoint, run in this process "
            "(no key). Send <code>{\"input\": {...}}</code>, the handler's arguments inside <code>input</code>.</p>"
            f"<table>{rows}</table><h2>Try it</h2><textarea id='body'>{_escape(example)}</textarea>"
            "<p><button onclick='send()'>POST /runsync</button></p><pre id='out'></pre>"
            "<p>The same as an OpenAPI document: <a href='/openapi.json'>/openapi.json</a></p>"
            f"<script>{_SCRIPT}</script></body></html>")


def openapi_document(title):
    """The OpenAPI 3.0 document of the local test server's routes."""
    job = {"type": "object", "properties": {"id": {"type": "string"}, "status": {"type": "string"},
                                            "output": {}, "error": {"type": "string"}}}
    request = {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "required": ["input"], "properties": {"input": {"type": "object"}}}}}}
    answer = {"200": {"description": "the job", "content": {"application/json": {"schema": job}}}}
    paths = {}
    for methods, path, doc in _ROUTES:
        for method in methods.split(", "):
            op = {"summary": doc, "responses": answer}
            if "{id}" in path:
                op["parameters"] = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
            elif method == "POST":
                op["requestBody"] = request
            paths.setdefault(path, {})[method.lower()] = op
    return {"openapi": "3.0.3", "info": {"title": f"{title}: local test server", "version": "1"}, "paths": paths}


def example_body(job_input):
    """A request body for the form: {"input": job_input}, indented."""
    return json.dumps({"input": job_input}, indent=2, ensure_ascii=False)
