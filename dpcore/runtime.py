"""Cancelling a running fit: a token that long loops poll.

A fit that may run for long (the Gibbs sampler's compiled sweeps; any loop that calls
:func:`check_cancelled`) polls a :class:`CancelToken`: after :meth:`CancelToken.cancel` it
stops at its next poll and raises :class:`FitCancelled`; nothing of the cancelled fit is kept
on the estimator. The compiled Gibbs kernels read the token's flag at every sweep (so another
thread's ``cancel()`` ends them within one sweep, without the GIL), and the fit hands back to
Python at least every :data:`POLL_SECONDS` to call the token's ``poll`` (an app's heartbeat,
e.g. a Streamlit element update through which Streamlit's Stop raises in the script thread).

A token reaches a fit explicitly (``GibbsSubspaceClustering.fit(..., cancel=token)``) or
through :func:`cancellable`, which makes it the current token of this thread (as
scikit-learn's ``config_context`` sets thread-local configuration)::

    token = CancelToken()
    with cancellable(token):
        model.fit(X)          # another thread may call token.cancel()

At interpreter exit every live token is cancelled before the thread pools are joined, so a
process told to stop (SIGTERM) is not held by a compiled loop running in a worker thread
(:func:`cancel_all`).
"""
from __future__ import annotations

import concurrent.futures.thread  # noqa: F401 - registered first: its exit hook must run after cancel_all
import threading
import time
import weakref
from contextlib import contextmanager

import numpy as np

__all__ = ["CancelToken", "FitCancelled", "cancellable", "current_token", "check_cancelled", "cancel_all",
           "POLL_SECONDS"]

#: the longest a cancellable fit computes between two calls of its token's ``poll``
POLL_SECONDS = 0.25


class FitCancelled(Exception):
    """A fit stopped because its :class:`CancelToken` was cancelled (nothing of it is kept).

    Attributes
    ----------
    done : int or None
        Units of work finished before the stop (sweeps, for the Gibbs sampler), if known.
    """

    def __init__(self, message="the fit was cancelled", done=None):
        super().__init__(message)
        self.done = done


_live = weakref.WeakSet()
_live_lock = threading.Lock()


class CancelToken:
    """A flag that a running fit polls, and an optional heartbeat it calls while it runs.

    Parameters
    ----------
    poll : callable, optional
        Called by the fit at least every :data:`POLL_SECONDS` while it runs, and at most every
        ``POLL_SECONDS / 2`` (in the fit's thread). It may call :meth:`cancel` or raise to end
        the fit (the exception passes through the fit unchanged).

    Examples
    --------
    >>> from dpcore.runtime import CancelToken
    >>> token = CancelToken()
    >>> token.cancelled
    False
    >>> token.cancel()
    >>> token.cancelled
    True
    """

    def __init__(self, poll=None):
        if poll is not None and not callable(poll):
            raise ValueError(f"poll must be callable or None; got {poll!r}")
        #: one byte read by compiled loops (set by :meth:`cancel`, from any thread)
        self.flag = np.zeros(1, dtype=np.uint8)
        self.poll = poll
        self._last_poll = -float("inf")
        with _live_lock:
            _live.add(self)

    def cancel(self):
        """Ask every fit polling this token to stop (safe from any thread)."""
        self.flag[0] = 1

    @property
    def cancelled(self):
        """Whether :meth:`cancel` was called."""
        return bool(self.flag[0])

    def check(self, done=None):
        """Call ``poll`` (unless called less than ``POLL_SECONDS / 2`` ago); raise
        :class:`FitCancelled` if the token is cancelled."""
        if self.poll is not None:
            now = time.perf_counter()
            if now - self._last_poll >= POLL_SECONDS / 2:
                self._last_poll = now
                self.poll()
        if self.flag[0]:
            raise FitCancelled(done=done)


_local = threading.local()


def current_token():
    """The token of the innermost :func:`cancellable` of this thread, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def cancellable(token):
    """Make ``token`` the current token of this thread for the block (fits started in it poll
    it unless given another).

    Parameters
    ----------
    token : CancelToken
    """
    if not isinstance(token, CancelToken):
        raise ValueError(f"token must be a CancelToken; got {token!r}")
    stack = _local.__dict__.setdefault("stack", [])
    stack.append(token)
    try:
        yield token
    finally:
        stack.remove(token)


def check_cancelled(token=None, done=None):
    """Poll ``token`` (default: :func:`current_token`): call its heartbeat, raise
    :class:`FitCancelled` if it was cancelled. A no-op without a token."""
    token = current_token() if token is None else token
    if token is not None:
        token.check(done)


def cancel_all():
    """Cancel every live token (called at interpreter exit, before the thread pools are
    joined: a compiled loop in a worker thread would otherwise hold the process)."""
    with _live_lock:
        tokens = list(_live)
    for t in tokens:
        t.cancel()


# threading's exit hooks run in reverse order of registration, after the non-daemon threads
# other than pools' were joined: concurrent.futures.thread registered its join above, so this
# one runs first and the pool's threads end at their next sweep.
threading._register_atexit(cancel_all)
