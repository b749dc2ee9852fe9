"""Import, once per server and in the background, the heavy modules the pages use.

The first session of a fresh server renders the Home page, which needs little; meanwhile a
daemon thread imports pandas, scipy's optimisers and dpcore's estimators and figures, so that
the next page a user opens does not pay for them (pandas alone is ~0.4 s here). Python's
import lock makes a page that needs a module while the thread is importing it wait for that
one import, never import it twice.

The same thread then loads (compiled in a child process after an install) the exact noise
samplers' kernels and compiles the Gibbs sampler's numba kernels
(:func:`dpcore.subspace.gibbs_kernels.warmup`): ≈ 20–22 s on the first start after an install,
in a child process (a compile holds the GIL, and the first pages would render slower meanwhile;
numba writes the kernels to its cache), then ≈ 1.6 s to load them here, as on every later start. A Gibbs run
started while they compile runs on the numpy engine (``engine="auto"`` does not wait), so the
first run after an install is never slower than before. Last, it freezes what is loaded out of
the garbage collector's sight (``gc.freeze``), which Streamlit calls after every script run.
"""
from __future__ import annotations

import gc
import importlib
import subprocess
import sys
import threading

#: what the pages import beyond the Home page and the sidebar
MODULES = ("pandas", "scipy.optimize", "scipy.special", "sklearn.cluster", "dpcore.plots", "dpcore.lab.sweeps",
           "dpcore.export", "dpcore.subspace.solvers", "dpcore.subspace.gibbs", "dpcore.subspace.sample_aggregate",
           "dpcore.subspace.sulq", "dpcore.cocluster.dptaucc", "dpcore.lab.compare", "dpcore.lab.audit",
           "dpcore.lab.reproduce", "dpcore.lab.gallery", "dpcore.plots.paper", "dp_accounting", "dpcore.privacy.exact")

_lock = threading.Lock()
_thread: threading.Thread | None = None


def _import_all():
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a page that needs it will report the error itself
            pass
    try:
        # the exact noise samplers every private run uses: ≈ 3 s to compile after an install (in a child
        # process: a compile here held the GIL 2 s while the first class arrived), 0.3 s to load
        from dpcore.privacy import exact_samplers
        if exact_samplers._kernels():
            _in_child("from dpcore.privacy import exact_samplers as e; e.warm_up()")
        exact_samplers.warm_up()
    except Exception:  # noqa: BLE001 - without numba the samplers run their (exact, slower) Python path
        pass
    try:
        from dpcore.subspace import gibbs_kernels
        # compile (first start after install, in a child process: the ≈ 20 s compile holds the GIL and
        # would slow the first pages drawn meanwhile) or load the Gibbs kernels
        gibbs_kernels.warmup(compile_in_child=True)
    except Exception:  # noqa: BLE001 - without numba the Gibbs page uses the numpy engine
        pass
    # What is loaded now stays for the server's life: out of the collector's sight. Streamlit runs a full
    # collection after every script run (runner.postScriptGC); over these ≈ 270k objects each took
    # 150-220 ms holding the GIL, 74 % of the server's GIL time in a class of 30 (benchmarks/bench_class.py
    # --flow: CPU per student 1.14 -> 0.42 s, Run p95 1.98 -> 0.77 s). The sessions' own garbage is still collected.
    gc.collect()
    gc.freeze()


def _in_child(code):
    """Run ``code`` in a child Python (numba writes what it compiles to its on-disk cache, which
    this process then loads without compiling)."""
    subprocess.run([sys.executable, "-c", code], check=False, timeout=600, capture_output=True)


def start() -> threading.Thread:
    """Start the background import (only the first call does anything); returns the thread."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_import_all, name="dpclust-warmup", daemon=True)
            _thread.start()
    return _thread
