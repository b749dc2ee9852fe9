"""Reproduce the papers' figures from the command line: ``python -m dpcore.reproduce``.

    python -m dpcore.reproduce FIGURE [FIGURE ...] [--quick | --tiny] [--out DIR] [--jobs N]
                               [--seed S] [--resume] [--scheduler ADDRESS] [--images FMT] [--ship DIR]

For every panel of a figure it writes ``DIR/<figure>/<panel>.csv`` (one row per run),
``<panel>.html`` (plotly; plotly.js from ``plotly.min.js`` written once in each figure's
folder, so a figure folder opens offline on its own: one 4.8 MB copy per figure instead of one
per panel when embedded) and ``<panel>.png`` (Kaleido ≥ 1 and a Chrome/Chromium, the ``images``
extra; skipped with a message when absent), plus ``summary.md``, ``checks.csv`` and
``panels.json``. Every run's seed depends on (``--seed``, method, ε, trial) only, so results do
not depend on ``--jobs`` or ``--scheduler``.

The manual (each figure's runs, settings, workers and memory, times) is ``docs/reproduce.md``.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from ..validation import check_int
from .sweeps import Sweep, run_sweep, worker_context
from ..plots.paper import _jsonable
from .figures import FIGURES, RUNNERS, SETTINGS
from .figures.common import CHECK_COLUMNS, Panel, _trend_check  # noqa: F401 (Panel, _trend_check: used by tests)

__all__ = ["FIGURES", "IMAGE_FORMATS", "LEVELS", "SETTINGS", "ImageBackendError", "Runner", "image_backend", "main",
           "run_figure", "write_panel_images"]

#: the sizes of a run: a smoke test, about 2 minutes, the papers' settings
LEVELS = ("tiny", "quick", "full")


# ============================================================================ running
class Runner:
    """What every figure needs: one executor for all its runs, the store, the seed, a log.

    Parameters
    ----------
    jobs : int, default=1
        Worker processes, 1 ≤ jobs ≤ the number of CPUs; more than 1 starts a spawn-context
        process pool shared by all runs.
    seed : int, default=0
        Master seed of every run.
    store : str or Path, optional
        Folder where finished runs are kept and reused (``--resume``); None = no store.
    log : callable, optional
        ``log(message)``; default: print to stderr.
    scheduler : str, optional
        Address of a running Dask distributed scheduler (e.g. ``"tcp://10.0.0.5:8786"``): runs go
        to its workers (:func:`dpcore.lab.sweeps.dask_executor`) instead of local processes, and
        ``jobs`` is ignored. Results are identical: every run's seed depends on (seed, method,
        ε, trial) only.

    Attributes
    ----------
    executor : concurrent.futures.Executor or None
        The shared pool (None when ``jobs`` = 1 and no scheduler, and after :meth:`close`).
    n_runs : int
        Number of runs made so far.
    sweeps : dict (figure, panel) -> dict
        The validated sweep of every sweep panel run so far (written to panels.json).
    memory : dict or None
        Peak memory and workers, measured by :meth:`close` (see :meth:`peak_memory`).

    Raises
    ------
    ValueError
        If ``jobs`` is not an integer in [1, number of CPUs].
    """

    def __init__(self, jobs=1, seed=0, store=None, log=None, scheduler=None):
        self.jobs = check_int(jobs, "jobs", 1, max(2, 4 * (os.cpu_count() or 1)))
        self.seed = seed
        self.store = Path(store) if store is not None else None
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.scheduler = scheduler
        self.client = None
        if scheduler is not None:
            from .sweeps import dask_executor
            self.executor = dask_executor(scheduler)
            self.client = self.executor._client
        else:
            # spawn workers that do not re-run the caller's __main__ (the app's script under Streamlit)
            self.executor = ProcessPoolExecutor(jobs, mp_context=worker_context()) if jobs > 1 else None
        self.n_runs = 0
        self.sweeps = {}
        self.memory = None

    def workers(self) -> dict:
        """Who runs the runs, now.

        Returns
        -------
        dict
            ``kind`` (``"main process"``, ``"process pool"`` or ``"dask"``), ``n`` (processes
            running runs: 1 for the main process, ``jobs`` for the pool, the Dask cluster's
            workers at this moment), ``threads`` (Dask: the workers' threads, else ``n``) and
            ``text`` (for the log, e.g. ``"2 Dask workers, 2 threads"``).
        """
        if self.client is not None:
            nthreads = self.client.nthreads()
            n, threads = len(nthreads), int(sum(nthreads.values()))
            return {"kind": "dask", "n": n, "threads": threads,
                    "text": f"{n} Dask worker{'s' * (n != 1)}, {threads} thread{'s' * (threads != 1)}"}
        if self.jobs > 1:
            # the pool starts its processes on demand: count the ones it started (none when
            # every run came from the store), not the ones it was allowed
            n = self._pool_started()
            if n == 0 and self.executor is not None:
                return {"kind": "process pool", "n": 0, "threads": 0,
                        "text": f"a pool of up to {self.jobs} worker processes (none started yet)"}
            if n == 0:
                return {"kind": "main process", "n": 1, "threads": 1,
                        "text": f"no worker started (a pool of up to {self.jobs}; every run was already stored)"}
            return {"kind": "process pool", "n": n, "threads": n,
                    "text": f"{n} worker process{'es' * (n != 1)}"}
        return {"kind": "main process", "n": 1, "threads": 1, "text": "no workers: every run in the main process"}

    def _pool_started(self) -> int:
        """Processes the pool has started so far (it starts them on demand, up to ``jobs``)."""
        if self.executor is not None:
            self._started = max(getattr(self, "_started", 0), len(getattr(self.executor, "_processes", None) or {}))
        return getattr(self, "_started", 0)

    def peak_memory(self) -> dict:
        """Peak resident memory of the main process and of the largest worker, in MB.

        The workers' figure depends on who they are: the pool's processes are measured with
        ``getrusage(RUSAGE_CHILDREN)``, valid once the pool has shut down (:meth:`close` calls
        this then); each Dask worker reports its own ``getrusage(RUSAGE_SELF)`` through
        ``Client.run`` (its peak since it started, earlier work included); without workers there
        is nothing to report. NaN where not measured (no ``resource`` module, a worker that
        cannot answer).

        Returns
        -------
        dict
            ``main_mb``, ``largest_worker_mb`` (NaN when not measured) and ``workers_how`` (how
            the workers' figure was measured, or why it was not).
        """
        main = _peak_rss_mb()
        info = self.workers()
        if info["kind"] == "main process":
            return {"main_mb": main, "largest_worker_mb": math.nan,
                    "workers_how": "no worker processes: every run in the main process"}
        if info["kind"] == "process pool":
            if self.executor is not None:
                raise RuntimeError("the pool's peak memory is known once it has shut down (Runner.close)")
            worker = _peak_rss_mb(children=True)
            return {"main_mb": main, "largest_worker_mb": worker,
                    "workers_how": f"largest of the {info['n']} pool processes (getrusage RUSAGE_CHILDREN)"}
        try:
            peaks = [v for v in self.client.run(_peak_rss_mb).values() if not math.isnan(v)]
        except Exception as exc:        # noqa: BLE001 - a measurement must not lose a finished run
            return {"main_mb": main, "largest_worker_mb": math.nan,
                    "workers_how": f"not measured: the Dask workers did not answer ({type(exc).__name__}: {exc})"}
        if not peaks:
            return {"main_mb": main, "largest_worker_mb": math.nan,
                    "workers_how": "not measured: no Dask worker could report its peak memory"}
        return {"main_mb": main, "largest_worker_mb": max(peaks),
                "workers_how": f"largest of {len(peaks)} Dask workers' own peak since they started (getrusage)"}

    def close(self):
        """Shut the process pool down (pending runs are cancelled) or let go of the Dask
        scheduler's executor (the cluster keeps running), and measure :attr:`memory` and the
        workers then (the pool's after it has shut down, the Dask workers' before letting go).
        Calling it again does nothing."""
        if self.memory is not None:
            return
        info = self.workers()
        if self.client is not None:
            self.executor.shutdown(wait=True)
            self.memory = {**self.peak_memory(), "workers": info}
            self.client.close()
            self.client = self.executor = None
            return
        if self.executor is not None:
            self.executor.shutdown(cancel_futures=True)
            self.executor = None
        self.memory = {**self.peak_memory(), "workers": info}

    def sweep(self, figure, panel, sweep: Sweep) -> pd.DataFrame:
        """Run one sweep through the shared executor; progress to the log every ~10 s.

        Parameters
        ----------
        figure : str
            Figure name (log messages, store folder, ``figure`` column).
        panel : str
            Panel name (log messages, store folder, ``panel`` column).
        sweep : dpcore.lab.sweeps.Sweep
            The sweep to run.

        Returns
        -------
        pandas.DataFrame
            The tidy rows of :func:`dpcore.lab.sweeps.run_sweep` with ``figure``, ``panel`` and
            ``dataset`` (the spec as JSON) columns added.
        """
        t0 = time.perf_counter()
        last = [t0]

        def progress(done, total):
            now = time.perf_counter()
            if done == total or now - last[0] >= 10:
                last[0] = now
                self.log(f"  [{figure}/{panel}] {done}/{total} runs, {now - t0:.0f} s")

        store = self.store / figure / "runs" / panel if self.store is not None else None
        self.sweeps[(figure, panel)] = dataclasses.asdict(sweep.validated())
        df = run_sweep(sweep, n_jobs=self.jobs, executor=self.executor, store=store, progress=progress)
        self.n_runs += len(df)
        df.insert(0, "panel", panel)
        df.insert(0, "figure", figure)
        df["dataset"] = json.dumps(sweep.dataset, sort_keys=True)
        return df

    def map(self, fn, kwargs_list):
        """fn(**kw) for every kw, through the executor (results in order).

        Parameters
        ----------
        fn : callable
            A top-level (picklable) function.
        kwargs_list : list of dict
            Keyword arguments of every call.

        Returns
        -------
        list
            The results, in the order of ``kwargs_list``.
        """
        self.n_runs += len(kwargs_list)
        if self.executor is None:
            return [fn(**kw) for kw in kwargs_list]
        if fn.__module__ == "__main__":     # python -m dpcore.reproduce: the workers import fn by its module's name
            fn = getattr(importlib.import_module(__spec__.name if __spec__ else "dpcore.lab.reproduce"), fn.__name__)
        futures = [self.executor.submit(fn, **kw) for kw in kwargs_list]
        return [f.result() for f in futures]


# ============================================================================ output
def _fmt(v):
    if isinstance(v, (float, np.floating)):
        return "" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def _md_table(t: pd.DataFrame) -> str:
    cols = [str(t.index.name or "")] + [str(c) for c in t.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for idx, row in t.iterrows():
        lines.append("| " + " | ".join([_fmt(idx)] + [_fmt(v) for v in row]) + " |")
    return "\n".join(lines)


def _panel_dataset(df):
    """The dataset spec of a panel (the ``dataset`` column, one value per panel), or None."""
    if "dataset" not in df or df["dataset"].nunique() != 1:
        return None
    return json.loads(df["dataset"].iloc[0])


def write_figure(out: Path, figure, level, panels, checks, extra, seconds, n_runs, sweeps=None):
    """Write the CSV and HTML of every panel (and plotly.min.js for the HTML), the extra tables,
    checks.csv, panels.json (titles, captions, plot specs and dataset of every panel: what
    :mod:`dpcore.lab.gallery` reads) and summary.md.

    Parameters
    ----------
    out : Path
        Output folder; files go to ``out / figure``.
    figure : str
        Figure name.
    level : str
        ``"tiny"``, ``"quick"`` or ``"full"`` (in summary.md).
    panels : list of Panel
        The panels.
    checks : list of dict
        Checks with keys ``check``, ``ok`` and ``detail``.
    extra : dict of str to pandas.DataFrame or None
        Extra tables by file name.
    seconds : float
        Wall-clock time (in summary.md).
    n_runs : int
        Number of runs (in summary.md).
    sweeps : dict (figure, panel) -> dict, optional
        The sweeps that made the panels (:attr:`Runner.sweeps`), written to panels.json.

    Returns
    -------
    Path
        The figure's folder.
    """
    d = out / figure
    d.mkdir(parents=True, exist_ok=True)
    for p in panels:
        p.df.to_csv(d / f"{p.name}.csv", index=False)
        # plotly.js once per figure folder (plotly.min.js beside the HTML): offline, see docs/reproduce.md
        p.fig.write_html(d / f"{p.name}.html", include_plotlyjs="directory")
    for fname, table in (extra or {}).items():
        table.to_csv(d / fname, index=False)
    pd.DataFrame(checks, columns=CHECK_COLUMNS).to_csv(d / "checks.csv", index=False)
    meta = {"figure": figure, "level": level, "seconds": round(seconds, 1), "n_runs": n_runs,
            "panels": [{"name": p.name, "title": p.title, "caption": p.caption, "plot": _jsonable(p.plot),
                        "dataset": _panel_dataset(p.df), "sweep": _jsonable((sweeps or {}).get((figure, p.name)))}
                       for p in panels]}
    (d / "panels.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n")
    lines = [f"# {figure} ({level})", "", f"{n_runs} runs in {seconds:.1f} s (wall clock).", ""]
    for p in panels:
        lines += [f"## {p.name}", "", p.title, f"([interactive figure]({p.name}.html))", "", p.caption, "",
                  _md_table(p.table), ""]
    lines += ["## Checks of the paper's statements", ""]
    lines += [f"- [{'x' if c['ok'] else ' '}] {c['check']} — {c['detail']}"
              + (f"\n  - The paper: {c['paper']}" if c.get("paper") else "") for c in checks]
    (d / "summary.md").write_text("\n".join(lines) + "\n")
    return d


#: static image formats of ``--images`` (drawn by Kaleido)
IMAGE_FORMATS = ("png", "svg", "pdf")
#: width of a static image in layout pixels (the height is the panel's own); PNG is drawn at 2× scale
IMAGE_WIDTH = 1000


class ImageBackendError(RuntimeError):
    """Static images cannot be drawn here (no Kaleido ≥ 1, no browser, or the export failed)."""


def image_backend():
    """Why static images cannot be drawn here, or None when they can.

    Plotly draws images through Kaleido ≥ 1 (the ``images`` extra), which drives a Chrome or
    Chromium found on the ``PATH`` or named by the ``BROWSER_PATH`` environment variable.

    Returns
    -------
    str or None
        The reason, or None when Kaleido ≥ 1 and a browser are found.
    """
    from importlib.metadata import PackageNotFoundError, version
    try:
        v = version("kaleido")
    except PackageNotFoundError:
        return "Kaleido is not installed (pip install 'dpcore[images]', i.e. kaleido >= 1)"
    if int(v.split(".")[0]) < 1:
        return f"Kaleido {v} is too old: plotly's image export needs kaleido >= 1 (pip install -U kaleido)"
    import plotly.io
    if not hasattr(plotly.io, "write_images"):
        return f"plotly {version('plotly')} is too old for Kaleido >= 1: pip install -U 'plotly>=6.1'"
    try:
        from choreographer.browsers.chromium import Chromium
        found = Chromium.find_browser(skip_local=False)
    except Exception:       # noqa: BLE001 - a different choreographer: let the export itself tell
        return None
    if not found:
        return ("Kaleido found no Chrome or Chromium: install one, set BROWSER_PATH to its executable, "
                "or run kaleido_get_chrome")
    return None


def write_panel_images(folders, fmt="png"):
    """Draw every panel of reproduction folders as a static image ``<panel>.<fmt>`` beside its HTML.

    Each figure is drawn from its CSV and plot spec (``panels.json``) with
    :func:`dpcore.plots.paper.panel_figure`, as the Paper figures page draws it; all images are
    made by one browser session.

    Parameters
    ----------
    folders : sequence of str or Path
        Figure folders written by :func:`write_figure` (``OUT/<figure>``).
    fmt : {"png", "svg", "pdf"}, default="png"
        Image format.

    Returns
    -------
    list of Path
        The images written.

    Raises
    ------
    ValueError
        If ``fmt`` is not one of :data:`IMAGE_FORMATS`.
    ImageBackendError
        If Kaleido ≥ 1 or a browser is missing (:func:`image_backend`) or the export fails; the
        message says why.
    """
    from ..plots.paper import panel_figure
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f"image format must be one of {', '.join(IMAGE_FORMATS)}; got {fmt!r}")
    reason = image_backend()
    if reason is not None:
        raise ImageBackendError(reason)
    figs, paths = [], []
    for d in map(Path, folders):
        for p in json.loads((d / "panels.json").read_text())["panels"]:
            figs.append(panel_figure(p["plot"], pd.read_csv(d / f"{p['name']}.csv")))
            paths.append(d / f"{p['name']}.{fmt}")
    if not figs:
        return []
    import plotly.io as pio
    try:
        pio.write_images(figs, paths, format=fmt, width=IMAGE_WIDTH, height=[f.layout.height or 500 for f in figs],
                         scale=2 if fmt == "png" else 1)
    except Exception as exc:        # noqa: BLE001 - a browser that fails to start, or crashes
        why = " ".join(str(exc).split())
        raise ImageBackendError(f"the image export failed ({type(exc).__name__}: {why})") from exc
    return paths


def run_figure(figure, level="full", out="reproduce_output", jobs=1, seed=0, resume=False, runner=None, log=None,
               images=None):
    """Run one figure and write its files; returns (directory, checks, seconds).

    Parameters
    ----------
    figure : str
        One of ``FIGURES``.
    level : {"tiny", "quick", "full"}, default="full"
        Size of the run.
    out : str or Path, default="reproduce_output"
        Output folder.
    jobs : int, default=1
        Worker processes (when no ``runner`` is given), in [1, number of CPUs].
    seed : int, default=0
        Master seed (when no ``runner`` is given).
    resume : bool, default=False
        Keep finished runs in ``out/<figure>/runs/`` and reuse them (when no ``runner``).
    runner : Runner, optional
        A shared runner (then ``jobs``, ``seed``, ``resume`` and ``log`` are its own and it
        is not closed here).
    log : callable, optional
        ``log(message)`` for a new runner.
    images : {"png", "svg", "pdf"}, optional
        Also draw a static image of every panel (:func:`write_panel_images`), after the runner
        is closed (so a worker's measured memory is never the browser's); when that cannot be
        done the log says why and the other files stand. Not with a shared ``runner``: its
        owner draws them once it has closed it.

    Returns
    -------
    path : Path
        The figure's folder.
    checks : list of dict
        The checks of the paper's statements.
    seconds : float
        Wall-clock time of the runs.

    Raises
    ------
    ValueError
        If ``figure``, ``level`` or ``images`` is unknown, ``jobs`` is out of range, or
        ``images`` is given with a shared ``runner``.
    """
    if figure not in RUNNERS:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}; got {figure!r}")
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    if images is not None and images not in IMAGE_FORMATS:
        raise ValueError(f"images must be one of {', '.join(IMAGE_FORMATS)} or None; got {images!r}")
    if images is not None and runner is not None:
        raise ValueError("images are drawn by the owner of a shared runner once it is closed (write_panel_images)")
    out = Path(out)
    own = runner is None
    R = runner or Runner(jobs, seed, out if resume else None, log)
    try:
        t0 = time.perf_counter()
        n0 = R.n_runs
        panels, checks, extra = RUNNERS[figure](level, R)
        seconds = time.perf_counter() - t0
        path = write_figure(out, figure, level, panels, checks, extra, seconds, R.n_runs - n0, R.sweeps)
    finally:
        if own:
            R.close()
    if images is not None:
        _draw_images(R.log, [path], images)
    return path, checks, seconds


def _draw_images(log, folders, fmt):
    """:func:`write_panel_images`, or a message saying why there are no images (the rest stands)."""
    try:
        return write_panel_images(folders, fmt)
    except ImageBackendError as exc:
        log(f"no {fmt.upper()} images written (the CSV and HTML files are): {exc}")
        return []


# ============================================================================ CLI
def _jobs(text):
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
    cpus = os.cpu_count() or 1
    if not 1 <= n <= max(2, cpus):
        raise argparse.ArgumentTypeError(f"must be between 1 and the number of CPUs ({cpus}; 2 allowed on one CPU); "
                                         f"got {n}")
    return n


def build_parser():
    """The command-line parser of ``python -m dpcore.reproduce``.

    Returns
    -------
    argparse.ArgumentParser
        Parser of FIGURE ... [--quick | --tiny] [--out DIR] [--jobs N] [--seed S] [--resume]
        [--scheduler ADDRESS] [--images FMT] [--ship DIR].
    """
    ap = argparse.ArgumentParser(prog="python -m dpcore.reproduce",
                                 description="Reproduce the figures of the three papers (CSV, HTML and an image "
                                             "per panel). Manual: docs/reproduce.md.")
    ap.add_argument("figures", nargs="+", choices=list(FIGURES) + ["all"], metavar="FIGURE",
                    help=f"one or more of: {', '.join(FIGURES)}, all")
    lvl = ap.add_mutually_exclusive_group()
    lvl.add_argument("--quick", action="store_true", help="fewer trials, ε values and iterations (all: ≤ 10 min)")
    lvl.add_argument("--tiny", action="store_true", help="smoke test: tiny data, seconds; the numbers mean nothing")
    ap.add_argument("--out", default="reproduce_output", help="output folder (default: ./reproduce_output)")
    ap.add_argument("--jobs", type=_jobs, default=1, help="worker processes (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    ap.add_argument("--resume", action="store_true",
                    help="keep finished runs in OUT/<figure>/runs/ and reuse them when run again")
    ap.add_argument("--scheduler", metavar="ADDRESS",
                    help="run on an existing Dask cluster: its scheduler's address, e.g. tcp://10.0.0.5:8786 "
                         "(same results as local runs; --jobs is then ignored)")
    ap.add_argument("--images", choices=[*IMAGE_FORMATS, "none"], default="png",
                    help="static image of every panel (default png; needs kaleido >= 1 and Chrome/Chromium, "
                         "the 'images' extra; without them the rest is written and a message says why)")
    ap.add_argument("--ship", metavar="DIR",
                    help="also write compact results to DIR for the app's Paper figures page "
                         "(the app reads sample_data/paper_figures)")
    return ap


def main(argv=None):
    """Command-line entry point: run the figures and print their checks.

    Writes every figure's files and ``OUT/timings_<level>.csv``, then the panels' images (once
    the workers are shut down and measured); with ``--ship DIR`` also the compact copies and
    manifest of :func:`dpcore.lab.gallery.ship` (command, commit, wall times, workers, peak
    memory).

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0, or 2 when the scheduler cannot be reached.
    """
    args = build_parser().parse_args(argv)
    level = "tiny" if args.tiny else "quick" if args.quick else "full"
    figures = list(FIGURES) if "all" in args.figures else list(dict.fromkeys(args.figures))
    out = Path(args.out)
    try:
        R = Runner(args.jobs, args.seed, out if args.resume else None, scheduler=args.scheduler)
    except (ValueError, OSError) as exc:
        print(f"error: --scheduler {args.scheduler}: {exc}", file=sys.stderr)
        return 2
    total0 = time.perf_counter()
    timing, paths = [], []
    try:
        for fig in figures:
            workers = R.workers()
            R.log(f"{fig} ({level}, {workers['text']})")
            path, checks, secs = run_figure(fig, level, out, runner=R)
            paths.append(path)
            ok = sum(c["ok"] for c in checks)
            print(f"{fig}: {secs:.1f} s, {ok}/{len(checks)} checks hold -> {path}")
            for c in checks:
                print(f"  [{'ok' if c['ok'] else '--'}] {c['check']}: {c['detail']}")
            timing.append({"figure": fig, "level": level, "jobs": args.jobs, "workers": workers["n"],
                           "worker_kind": workers["kind"], "seconds": round(secs, 1),
                           "n_runs": json.loads((path / "panels.json").read_text())["n_runs"],
                           "checks_ok": ok, "checks": len(checks)})
    finally:
        R.close()
    total = time.perf_counter() - total0
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(timing).to_csv(out / f"timings_{level}.csv", index=False)
    memory, workers = {k: v for k, v in R.memory.items() if k != "workers"}, R.memory["workers"]
    worker_mb = memory["largest_worker_mb"]
    print(f"total: {total:.1f} s; {workers['text']}; peak memory (RSS): main process {memory['main_mb']:.0f} MB"
          + ("" if workers["kind"] == "main process" else
             f", largest worker {'not measured' if math.isnan(worker_mb) else f'{worker_mb:.0f} MB'}"
             f" ({memory['workers_how']})"))
    if args.images != "none":
        drawn = _draw_images(R.log, paths, args.images)
        if drawn:
            print(f"{len(drawn)} {args.images.upper()} image{'s' * (len(drawn) != 1)} beside the HTML files")
    if args.ship:
        from .gallery import code_version, ship
        shipped_argv = [a for a in (argv if argv is not None else sys.argv[1:])]
        made = {"command": "python -m dpcore.reproduce " + " ".join(shipped_argv), **code_version(),
                "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        manifest = {**made, "level": level, "jobs": args.jobs, "scheduler": args.scheduler, "cpus": os.cpu_count(),
                    "workers": {k: workers[k] for k in ("kind", "n", "threads")},
                    "total_seconds": round(total, 1), "peak_memory": memory,
                    "figures": [{**row, **made} for row in timing]}     # each figure keeps its own provenance
        print(f"shipped to {ship(out, args.ship, figures, manifest, order=FIGURES)}")
    return 0


def _peak_rss_mb(children=False):
    """Peak resident memory of this process (or of its largest finished child) in MB, from
    ``getrusage``; NaN where there is no ``resource`` module (Windows). Top-level: Dask workers
    run it (:meth:`Runner.peak_memory`)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return math.nan
    unit = 1 / 1024 if sys.platform != "darwin" else 1 / 1024 ** 2      # KB on Linux, bytes on macOS
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return round(resource.getrusage(who).ru_maxrss * unit, 1)


if __name__ == "__main__":
    sys.exit(main())
