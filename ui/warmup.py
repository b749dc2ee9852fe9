"""Import, once per server and in the background, the heavy modules the pages use.

The first session of a fresh server renders the Home page, which needs little; meanwhile a
daemon thread imports pandas, scipy's optimisers and dpcore's estimators and figures, so that
the next page a user opens does not pay for them (pandas alone is ~0.4 s here). Python's
import lock makes a page that needs a module while the thread is importing it wait for that
one import, never import it twice.
"""
from __future__ import annotations

import importlib
import threading

#: what the pages import beyond the Home page and the sidebar
MODULES = ("pandas", "scipy.optimize", "scipy.special", "sklearn.cluster", "dpcore.plots", "dpcore.experiments",
           "dpcore.export", "dpcore.subspace.solvers", "dpcore.subspace.gibbs", "dpcore.subspace.sample_aggregate",
           "dpcore.subspace.sulq", "dpcore.cocluster.dptaucc", "dpcore.kmeans.compare", "dpcore.audit")

_lock = threading.Lock()
_thread: threading.Thread | None = None


def _import_all():
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a page that needs it will report the error itself
            pass


def start() -> threading.Thread:
    """Start the background import (only the first call does anything); returns the thread."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_import_all, name="dpclust-warmup", daemon=True)
            _thread.start()
    return _thread
