"""The server exits promptly on SIGTERM, also while runs are going on (issue 33).

Streamlit stops its server on SIGTERM and its script threads are daemons; what kept the process
alive were (1) compiled Gibbs sweeps running in a non-daemon thread pool, which the interpreter
joins at exit — they stop within a sweep once their cancel token is cancelled
(:func:`dpcore.runtime.cancel_all`) — and (2) the interpreter's own finalization
(garbage-collecting a heap of loaded datasets, figures and compiled kernels: 3 s and more after
a Gibbs run). Once Streamlit has stopped there is nothing left to save, so :func:`install`
registers a hook that runs first when the interpreter begins to exit: it cancels every running
fit, waits briefly for the worker threads, terminates worker processes, runs the ``atexit``
hooks, flushes the standard streams and ends the process without the finalization.

Only in a real ``streamlit run app.py`` process (Streamlit sets ``sys.argv[0]`` to the app's
script); never under pytest or an AppTest.
"""
from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import threading
from pathlib import Path

from dpcore.runtime import cancel_all

_installed = threading.Event()
JOIN_SECONDS = 1.0          # at most this long for the worker threads after their fits were cancelled


def _finish():
    cancel_all()
    main = threading.main_thread()
    for th in threading.enumerate():
        if th is not main and th is not threading.current_thread() and not th.daemon:
            th.join(JOIN_SECONDS / 4)
    for child in multiprocessing.active_children():
        child.terminate()
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream: nothing to flush
                pass
        os._exit(0)


def in_server(argv=None, modules=None):
    """Whether this process is a ``streamlit run app.py`` server (not a test)."""
    argv = sys.argv if argv is None else argv
    modules = sys.modules if modules is None else modules
    return bool(argv) and Path(argv[0]).name == "app.py" and "pytest" not in modules


def install():
    """Register the prompt exit once per server process (a no-op elsewhere): a hook of
    threading's exit, registered after the thread pools' (so it runs before they are joined)."""
    if _installed.is_set() or not in_server():
        return
    _installed.set()
    threading._register_atexit(_finish)
