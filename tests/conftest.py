"""What every test session shares: numba's kernels compiled once, beside the tests.

The first Gibbs run of a fresh clone compiles the sampler's numba kernels (≈ 20-30 s, one
core) and the first private release the exact samplers' (≈ 3 s); numba writes them to its
on-disk cache (``cache=True``: ``__pycache__`` beside the sources, or $NUMBA_CACHE_DIR), and
every later process loads them in ≈ 1.5 s. So that a test run does not wait for that compile,
the main pytest process (the xdist controller under ``-n``) starts one child process that fills
the cache, and the tests whose id names Gibbs run last: by then the kernels are compiled once
and the test processes only load them. A test that needs a kernel earlier compiles it itself,
as without this file (same results; only the time differs). $DPCLUST_TEST_PRECOMPILE=0 turns the
child off. The cache persists across sessions, so only the first run after a clone or a change of
the kernels compiles anything.

It also prints, at the end, the first render of every page the browser tests opened (gathered
from the xdist worker that ran them): for information, not a budget.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PRECOMPILE = ("from dpcore.privacy import exact_samplers; exact_samplers.warm_up()\n"
              "from dpcore.subspace import gibbs_kernels; gibbs_kernels.warmup()\n")

_precompile: subprocess.Popen | None = None


def _die_with_parent():
    """Linux: the child gets SIGTERM when pytest dies, so a killed run leaves nothing behind."""
    try:
        import ctypes
        import signal
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort, other systems
        pass


def pytest_configure(config):
    global _precompile
    if hasattr(config, "workerinput") or os.environ.get("DPCLUST_TEST_PRECOMPILE", "1") == "0":
        return                                        # an xdist worker: the controller started it
    if config.option.collectonly:
        return
    try:
        import numba  # noqa: F401
    except ImportError:                               # the kernels' pure-Python paths: nothing to compile
        return
    _precompile = subprocess.Popen([sys.executable, "-c", PRECOMPILE], cwd=str(ROOT), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL,
                                   preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)


def pytest_unconfigure(config):
    global _precompile
    if _precompile is not None and _precompile.poll() is None:
        _precompile.terminate()                       # a short session: the next one compiles what is left
        try:
            _precompile.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _precompile.kill()
    _precompile = None


def _uses_gibbs(item) -> bool:
    """The test's id names Gibbs (browser tests excepted: the app's server compiles on its own)."""
    return "gibbs" in item.nodeid.lower() and "tests/browser/" not in item.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests whose id names Gibbs last (stable: their order among themselves, and of the
    others, is kept), so that the kernels they need have been compiled meanwhile."""
    items[:] = [i for i in items if not _uses_gibbs(i)] + [i for i in items if _uses_gibbs(i)]


# ----------------------------------------------------------------------------- browser render times
#: first render of each page, from the xdist workers that ran tests/browser (for the summary)
_render = {"times": {}, "breakdown": {}}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """(pytest-xdist) collect a worker's render times (tests/browser/conftest.py hands them over)."""
    output = getattr(node, "workeroutput", None) or {}
    _render["times"].update(output.get("render_times", {}))
    _render["breakdown"].update(output.get("render_breakdown", {}))


def pytest_terminal_summary(terminalreporter):
    """The first render of every page the browser tests opened: for information, no budget
    (python benchmarks/bench_render.py measures them against the budgets)."""
    stdriver = sys.modules.get("stdriver")              # the browser tests ran in this process
    times = dict(_render["times"], **(stdriver.RENDER_TIMES if stdriver else {}))
    breakdown = dict(_render["breakdown"], **(stdriver.RENDER_BREAKDOWN if stdriver else {}))
    if not times:
        return
    tr = terminalreporter
    tr.section("first render of every page (default settings, server up; for information: "
               "python benchmarks/bench_render.py measures it against the budgets)")
    tr.write_line(f"  {'page':<18} {'run done, shown':>16} {'all drawn':>10}")
    for path, seconds in times.items():
        run = breakdown.get(path, {}).get("run")
        tr.write_line(f"  {path:<18} {'' if run is None else f'{run:.2f} s':>16} {seconds:8.2f} s")


@pytest.fixture(autouse=True)
def _fresh_server_meter():
    """Every test starts with a fresh privacy meter of the (in-process) app server: the meter is
    one per server (``ui.meter.class_meter``, held by the process), shared by every AppTest
    of this process, as by every session of a real server. Cleared only where the app is loaded."""
    if "ui.meter" in sys.modules:
        sys.modules["ui.meter"].class_meter.clear()
    yield
