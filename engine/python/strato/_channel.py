# The queue worker's job channel (docs/worker-protocol.md): one connection opened with
# `CONNECT /_worker/<endpoint>/channel`, then length-prefixed JSON frames both ways: the platform sends jobs as soon as
# a slot is free, the worker sends each result. Slot threads take turns reading it (leader/follower): the thread that
# reads a job runs it, so a job reaches the user's code with no hand-off between threads, and no HTTP request is made
# per job. An older platform, or one behind a proxy that refuses CONNECT, gets the HTTP long-poll instead (_worker.py).
import collections
import json
import select
import socket
import threading
import time

from . import _log as log
from ._http import HttpError
from ._invoke import compact_encoder

_HEADER = 4
# A coroutine job's result up to this size is sent from the event loop's thread (a socket's buffer takes it at once);
# a larger one from a thread of its own, so that the loop's other tasks never wait for the platform to read it.
_INLINE_RESULT_CHARS = 65536
# Made once: json.dumps and json.loads build a new encoder or decoder on every call.
_ENCODE = compact_encoder()
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))
_DECODER = json.JSONDecoder()


class Refused(Exception):
    """The platform answered CONNECT with something else than 200 (an older platform, a proxy): use HTTP."""


class Channel:
    def __init__(self, sock, reader):
        self._sock = sock
        self._reader = reader
        self._send_lock = threading.Lock()
        self._poller = None
        if hasattr(select, "poll"):
            self._poller = select.poll()
            self._poller.register(sock, select.POLLIN)

    def read(self):
        """The next message; raises EOFError when the platform closed the channel, OSError when it broke."""
        head = self._reader.read(_HEADER)
        if len(head) < _HEADER:
            raise EOFError("the platform closed the job channel")
        n = int.from_bytes(head, "big")
        data = self._reader.read(n)
        if len(data) < n:
            raise EOFError("the platform closed the job channel inside a frame")
        # raw_decode: what decode() does without its two whitespace scans (a frame has none around its value).
        text = data.decode()
        message, end = _DECODER.raw_decode(text)
        if end != len(text):
            raise ValueError(f"the job channel frame has extra data after its JSON value at {end}")
        return message

    def send(self, message):
        text = _ENCODE(message)
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate (the text of an error): escaped, as the HTTP calls send it
            data = _ASCII_ENCODER.encode(message).encode()
        with self._send_lock:
            # A write to a connection the platform closed still succeeds once (the kernel takes it): look first, so
            # that a result goes on the next channel rather than into a closed one.
            if self._peer_closed():
                raise OSError("the platform closed the job channel")
            self._sock.sendall(len(data).to_bytes(_HEADER, "big") + data)

    def _peer_closed(self):
        # Usually nothing is waiting to be read: one poll says so, without the exception a peek would raise.
        if self._poller is not None and not self._poller.poll(0):
            return False
        try:
            return self._sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def close(self):
        try:
            self._sock.shutdown(2)
        except OSError:
            pass
        try:
            self._reader.close()
            self._sock.close()
        except OSError:
            pass


def open_channel(settings, contact):
    """A new channel; raises Refused (use HTTP), HttpError (unreachable). A 401/404 makes the worker exit."""
    conn = settings.connect()
    if conn.tls:
        raise Refused("the platform URL is https (a TLS socket is not shared between a reading and a writing thread)")
    answer = conn.tunnel("channel")
    if isinstance(answer, tuple):
        contact.ok()
        return Channel(*answer)
    if contact.unwanted(answer, "the job channel"):
        raise Refused("not wanted")
    raise Refused(f"HTTP {answer.status} {answer.text[:200]}")


class ChannelSlots:
    """Runs the jobs of a QueueWorker that come over a channel. Threads: one per job in progress, plus at most one
    waiting to read (threads start as needed, never more than one idle reader beyond the running jobs). A coroutine
    endpoint's jobs run as tasks on the event loop instead: one thread reads them all, the loop sends each result."""

    def __init__(self, worker, channel):
        self.w = worker
        self.channel = channel
        self.read_lock = threading.Lock()  # the leader holds it while it reads
        self.reopen_lock = threading.Lock()
        self.readers = 0  # threads not running a job (under worker.lock)
        self.backlog = collections.deque()  # jobs read in one frame beyond the first

    def start(self):
        if self.w.coroutines:
            threading.Thread(target=self._read_for_loop, name="strato-reader", daemon=True).start()
            return
        with self.w.lock:
            self._spawn()

    def slot_freed(self):
        """A job left its slot without its thread (cancelled): make sure someone reads the next one."""
        if self.w.coroutines:  # its one reader never stops reading
            return
        with self.w.lock:
            if self.readers == 0 and not self.w.stopping:
                self._spawn()

    def _spawn(self):  # under worker.lock
        self.readers += 1
        threading.Thread(target=self._slot, name="strato-slot", daemon=True).start()

    def _slot(self):
        conn = self.w.settings.connect()  # for `stream` calls; connects on first use
        while True:
            with self.read_lock:
                job = self._next()
            if job is None:
                return
            with self.w.lock:
                self.readers -= 1
                if self.readers == 0 and not self.w.stopping and (self.backlog or len(self.w.runs) < self.w.capacity):
                    self._spawn()  # the next leader: jobs may come while this one runs
            # Reserved: a graceful stop waits for the result to leave, not just for the job to end.
            body = self.w.result(conn, job, reserve=True)
            if body is not None:
                self._send(conn, body)
            with self.w.lock:
                if body is not None:
                    self.w.unreserve(body["jobId"])
                self.readers += 1

    def _read_for_loop(self):
        """A coroutine endpoint's one reader: starts each job on the event loop and reads the next one at once."""
        while True:
            job = self._next()
            if job is None:
                return
            self.w.start_coroutine(job, self._deliver)

    def _deliver(self, body):
        """Sends a coroutine job's result, on the event loop's thread (or the reader's), then frees its slot. A large
        result, and one whose channel broke (it is replaced, or the result posted over HTTP), is left to a thread of
        its own: the loop never waits for the network."""
        if body is None:
            return
        if len(body.get("outputJson") or "") + len(body.get("error") or "") > _INLINE_RESULT_CHARS:
            threading.Thread(target=self._deliver_slowly, args=(body,), name="strato-deliver", daemon=True).start()
            return
        channel = self.channel
        try:
            channel.send({"op": "done", **body})
        except OSError:
            threading.Thread(target=self._deliver_slowly, args=(body,), name="strato-deliver", daemon=True).start()
            return
        with self.w.lock:
            self.w.unreserve(body["jobId"])

    def _deliver_slowly(self, body):
        self._send(self.w.settings.connect(), body)
        with self.w.lock:
            self.w.unreserve(body["jobId"])

    def _next(self):
        """The next job to run (None: the worker is ending). Only the leader calls it."""
        while True:
            if self.backlog:
                return self.backlog.popleft()
            channel = self.channel
            try:
                message = channel.read()
            except (OSError, EOFError, ValueError) as e:
                if not self._reopen(channel, e):
                    return None
                continue
            if not isinstance(message, dict):
                log.error(f"the platform sent a job channel frame that is not an object, skipped: {message!r:.200}")
                continue
            if "exit" in message:
                self.w.stopper.exit(0, f"the platform closed the job channel ({message['exit']}): exiting")
                return None
            for job in message.get("jobs") or []:
                if self.w.admit(job):
                    self.backlog.append(job)

    def _send(self, conn, body):
        while True:
            channel = self.channel
            try:
                channel.send({"op": "done", **body})
                return
            except OSError as e:
                if not self._reopen(channel, e):
                    # Stopping with the channel gone: the result still goes, over HTTP.
                    self.w.post(conn, "done", body)
                    return

    def _reopen(self, broken, err):
        """Replaces a broken channel (once, whichever thread finds it first); False when the worker is ending."""
        with self.reopen_lock:
            if self.channel is not broken:
                return True
            broken.close()
            delay = 0.05
            while self.w.stopper.code is None and not self.w.stopping:
                self.w.contact.failed("job channel", err)
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
                try:
                    self.channel = open_channel(self.w.settings, self.w.contact)
                    log.info("job channel open again")
                    return True
                except (HttpError, Refused) as e:
                    err = e
            return False
