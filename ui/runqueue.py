"""The server's run queue: at most C heavy runs at once, the others wait their turn.

A class of thirty pressing Run together on a 2-core server made every run slow (each got a
fifteenth of a core, and the event loop starved). Here at most :func:`slots` runs execute at
once; the others wait in a first-come, first-served queue with **one place per session** (a
session that presses again while waiting keeps its place; it cannot hold two), and see their
position and the expected wait. Waiting polls every :data:`WAIT_POLL` s, so Stop and leaving
the page still work while waiting.

C, the number of runs at once, is the number of CPUs this process may use, unless set at
launch: ``streamlit run app.py -- --max-runs 3`` or ``DPCLUST_MAX_RUNS=3``.

A place is given back when the run ends (:meth:`RunQueue.release`), and also when the thread
that held it has ended without saying so (a run stopped by Stop or by leaving the page never
reaches its end: Streamlit ends its script thread), so a place is never lost.

This module is Streamlit-free: :func:`ui.common.run_started` and :func:`ui.common.run_ended`
use it.
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from ui import launch_option

__all__ = ["RunQueue", "Ticket", "slots", "server_queue", "WAIT_POLL", "ENV_MAX_RUNS"]

WAIT_POLL = 0.25                 # seconds between two looks at the queue while waiting
ENV_MAX_RUNS = "DPCLUST_MAX_RUNS"
_DURATIONS_KEPT = 30             # recent run durations, for the expected wait


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:       # not Linux
        return os.cpu_count() or 1


def slots(argv=None, environ=None):
    """Runs at once: ``--max-runs N`` after ``--`` on the command line, else the environment
    variable ``DPCLUST_MAX_RUNS``, else the number of CPUs this process may use.

    Raises
    ------
    ValueError
        If the value given is not a whole number ≥ 1.
    """
    environ = os.environ if environ is None else environ
    text = launch_option("--max-runs", argv)
    if text is None:
        text = environ.get(ENV_MAX_RUNS)
    if text is None:
        return max(1, _cpus())
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"--max-runs (or {ENV_MAX_RUNS}) must be a whole number ≥ 1; got {text!r}")
    return value


@dataclass(eq=False)
class Ticket:
    """One session's place: waiting, then running. ``thread`` owns it (only the owner gives it
    back); ``previous``: the session's earlier script thread, still running on this place when the
    session pressed again (the new run waits until that one has ended)."""
    session: str
    thread: threading.Thread = field(default_factory=threading.current_thread)
    asked: float = field(default_factory=time.monotonic)
    started: float | None = None
    previous: threading.Thread | None = None


class RunQueue:
    """At most ``capacity`` runs at once; the others wait, first come first served, one place per
    session.

    Parameters
    ----------
    capacity : int
        Runs at once (≥ 1).
    clock : callable, default=time.monotonic
    """

    def __init__(self, capacity, clock=time.monotonic):
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be a whole number ≥ 1; got {capacity!r}")
        self.capacity, self.clock = capacity, clock
        self._lock = threading.Lock()
        self._waiting: deque[Ticket] = deque()
        self._running: list[Ticket] = []
        self._durations: deque[float] = deque(maxlen=_DURATIONS_KEPT)

    # -------------------------------------------------------------------- under the lock
    def _reap(self):
        """Give back the places of threads that ended without releasing them."""
        for t in self._running:
            if t.previous is not None and not t.previous.is_alive():
                t.previous = None
        self._running = [t for t in self._running if t.thread.is_alive()]
        alive = [t for t in self._waiting if t.thread.is_alive()]
        if len(alive) != len(self._waiting):
            self._waiting = deque(alive)

    def _grant(self):
        while self._waiting and len(self._running) < self.capacity:
            t = self._waiting.popleft()
            t.started = self.clock()
            self._running.append(t)

    # -------------------------------------------------------------------- API
    def ask(self, session, thread=None):
        """Join the queue (or keep the place this session already has) and return the ticket;
        granted at once when a place is free (:meth:`granted`)."""
        thread = thread or threading.current_thread()
        with self._lock:
            self._reap()
            for t in list(self._running) + list(self._waiting):
                if t.session == session:            # one place per session: a new script run of it keeps its place
                    if t.thread is not thread:
                        if t in self._running and t.thread.is_alive():
                            t.previous = t.thread   # pressed again while running: runs once that run has ended
                        t.thread = thread
                    return t
            ticket = Ticket(session, thread, self.clock())
            self._waiting.append(ticket)
            self._grant()
            return ticket

    def granted(self, ticket):
        """Whether ``ticket`` may run now (it is among the running, and the session's previous run
        on it has ended)."""
        with self._lock:
            self._reap()
            self._grant()
            return ticket in self._running and ticket.previous is None

    def release(self, ticket, thread=None):
        """The run of ``ticket`` ended (or it stopped waiting): give its place back. Only its owner
        (``thread``, default the calling thread) gives it back; the session's previous run ending
        lets the new one start; any other thread's call does nothing."""
        thread = thread or threading.current_thread()
        with self._lock:
            if ticket.previous is thread:
                ticket.previous = None
                return
            if ticket.thread is not thread:
                return
            if ticket.previous is not None and ticket.previous.is_alive():
                ticket.thread, ticket.previous = ticket.previous, None     # the earlier run still holds the place
                return
            if ticket in self._running:
                self._running.remove(ticket)
                if ticket.started is not None:
                    self._durations.append(self.clock() - ticket.started)
            elif ticket in self._waiting:
                self._waiting.remove(ticket)
            self._grant()

    def position(self, ticket):
        """Runs ahead of ``ticket`` in the queue (0 when running or first in line)."""
        with self._lock:
            try:
                return list(self._waiting).index(ticket)
            except ValueError:
                return 0

    def expected_wait(self, ticket):
        """Seconds until ``ticket`` runs, from the recent runs' durations (None before any run
        ended): the runs ahead of it and those running, shared by the places."""
        with self._lock:
            if not self._durations or (ticket in self._running and ticket.previous is None):
                return None if not self._durations else 0.0
            mean = sum(self._durations) / len(self._durations)
            ahead = list(self._waiting).index(ticket) if ticket in self._waiting else 0
            now = self.clock()
            # what is left of the running runs, at least a tenth of a mean run each
            left = sum(max(0.1 * mean, mean - (now - t.started)) for t in self._running)
            return (left + ahead * mean) / self.capacity

    def counts(self):
        """(running, waiting)."""
        with self._lock:
            self._reap()
            return len(self._running), len(self._waiting)

    def wait(self, ticket, show=None, poll=WAIT_POLL, sleep=time.sleep):
        """Block until ``ticket`` is granted, calling ``show(position, expected_wait)`` every
        ``poll`` s while it waits (it may raise to stop waiting: the place is then given back).
        """
        try:
            while not self.granted(ticket):
                if show is not None:
                    show(self.position(ticket), self.expected_wait(ticket))
                sleep(poll)
        except BaseException:
            self.release(ticket)
            raise


_server = {"queue": None}
_server_lock = threading.Lock()


def server_queue():
    """The queue of this server process (created on first use with :func:`slots` places)."""
    with _server_lock:
        if _server["queue"] is None:
            _server["queue"] = RunQueue(slots())
        return _server["queue"]


def wait_words(position, seconds, capacity):
    """What a waiting session reads."""
    ahead = "yours is next" if position == 0 else f"{position} run{'s' if position != 1 else ''} ahead of yours"
    when = "" if seconds is None else (" · expected wait about " + (f"{math.ceil(seconds)} s" if seconds < 90
                                                                    else f"{math.ceil(seconds / 60)} min"))
    return (f"**Waiting for a free place on the server** ({capacity} run{'s' if capacity != 1 else ''} at once, "
            f"first come first served): {ahead}{when}. Your settings are kept; Stop leaves the queue.")
