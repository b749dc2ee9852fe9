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
from scipy import stats

from ..data import CLUTO_NAMES, PAPER_SPECS, load_dataset
from ..validation import check_int
from .methods import DPNMF_PAPER, get_method, preset, run_seed
from .sweeps import Sweep, run_sweep, worker_context
from ..subspace.common import single_threaded
from ..plots.paper import _jsonable

__all__ = ["FIGURES", "IMAGE_FORMATS", "LEVELS", "SETTINGS", "ImageBackendError", "Runner", "image_backend", "main",
           "run_figure", "write_panel_images"]

FIGURES = ("subspace-fig2", "subspace-fig3", "cocluster-fig2", "cocluster-fig3", "highdim-fig2")
LEVELS = ("tiny", "quick", "full")

_SUB_LEFT = {"kind": "subspaces", "n": 5000, "d": 5, "k": 3, "q": 3, "sigma": 0.01, "random_state": 0}
_SUB_MIDDLE = PAPER_SPECS["fig2_middle"]
_YALEB = PAPER_SPECS["yaleb_5"]
_MIXTURE = {"kind": "gaussians", "d": 100, "k": 64, "sigma": 0.1, "random_state": 0}
_DIGITS = {"kind": "digits"}
CLUTO_ALL = CLUTO_NAMES
CLUTO_FIG3 = ("classic3", "cstr", "hitech", "reviews")


def _half_decades(lo, hi):
    """10^lo, 10^(lo + 1/2), ..., 10^hi (rounded to 6 decimals)."""
    return [float(round(10.0 ** (e / 2), 6)) for e in range(2 * lo, 2 * hi + 1)]


#: every number each figure uses, per level (the table of docs/reproduce.md)
SETTINGS = {
    "subspace-fig2": {
        "full": dict(epsilons=_half_decades(-1, 3), trials=5,
                     panels={"left": dict(dataset=_SUB_LEFT, gibbs_iter=10_000, ssc=True),
                             "middle": dict(dataset=_SUB_MIDDLE, gibbs_iter=10_000, ssc=True),
                             "yaleb": dict(dataset=_YALEB, gibbs_iter=10_000, ssc=True)}),
        "quick": dict(epsilons=[0.1, 1.0, 10.0, 100.0, 1000.0], trials=3,
                      panels={"left": dict(dataset=_SUB_LEFT, gibbs_iter=200, ssc=False),
                              "middle": dict(dataset=_SUB_MIDDLE, gibbs_iter=200, ssc=True),
                              "yaleb": dict(dataset=_YALEB, gibbs_iter=100, ssc=True, gibbs_kplane=False)}),
        "tiny": dict(epsilons=[1.0, 1000.0], trials=1,
                     panels={"left": dict(dataset={**_SUB_LEFT, "n": 400}, gibbs_iter=10, ssc=False),
                             "middle": dict(dataset={**_SUB_MIDDLE, "n": 300}, gibbs_iter=10, ssc=False),
                             "yaleb": dict(dataset={**_YALEB, "n_per_subject": 12}, gibbs_iter=5, ssc=False)}),
    },
    "subspace-fig3": {
        "full": dict(dataset=_SUB_MIDDLE, epsilons=[0.1, 1.0, 10.0, 100.0], n_iter=10_000, n_chains=8,
                     inits=["random", "kplane"]),
        "quick": dict(dataset=_SUB_MIDDLE, epsilons=[0.1, 1.0, 10.0, 100.0], n_iter=500, n_chains=8,
                      inits=["random", "kplane"]),
        "tiny": dict(dataset={**_SUB_MIDDLE, "n": 200}, epsilons=[1.0, 100.0], n_iter=20, n_chains=2,
                     inits=["random"]),
    },
    "cocluster-fig2": {
        "full": dict(datasets=CLUTO_ALL, epsilons=[0.1, 0.25, 0.5, 0.75, 1.0, 2.0, 3.0], trials=10, n_iter=4),
        "quick": dict(datasets=CLUTO_ALL, epsilons=[0.1, 0.5, 1.0, 3.0], trials=3, n_iter=4),
        "tiny": dict(datasets=("cstr",), epsilons=[0.5, 3.0], trials=1, n_iter=2),
    },
    "cocluster-fig3": {
        "full": dict(datasets=CLUTO_FIG3, iterations=list(range(2, 11)), epsilons=_half_decades(-1, 1), trials=5),
        "quick": dict(datasets=CLUTO_FIG3, iterations=[2, 4, 6, 8, 10], epsilons=[0.1, 1.0, 10.0], trials=2),
        "tiny": dict(datasets=("cstr",), iterations=[2, 3], epsilons=[1.0, 10.0], trials=1),
    },
    "highdim-fig2": {
        "full": dict(dataset={**_MIXTURE, "n": 100_000}, ks=[2, 4, 8, 16, 32, 64], k_eps=1.0,
                     epsilons=[0.1, 0.3, 1.0, 3.0, 10.0], eps_k=10, trials=5, delta=1e-6, digits=_DIGITS),
        "quick": dict(dataset={**_MIXTURE, "n": 20_000}, ks=[2, 8, 32], k_eps=1.0,
                      epsilons=[0.1, 1.0, 10.0], eps_k=10, trials=2, delta=1e-6, digits=_DIGITS),
        "tiny": dict(dataset={**_MIXTURE, "n": 1500, "d": 20, "k": 8}, ks=[2, 4], k_eps=1.0,
                     epsilons=[1.0], eps_k=4, trials=1, delta=1e-6, digits=_DIGITS),
    },
}


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


class Panel:
    """One panel's results: tidy rows, the figure, a median table for the summary.

    Parameters
    ----------
    name : str
        Panel name (file names ``<name>.csv`` / ``<name>.html``).
    df : pandas.DataFrame
        Tidy rows of the panel's runs.
    plot : dict
        Plot spec (:mod:`dpcore.plots.paper`); the figure is ``panel_figure(plot, df)``, the
        same call the Paper figures page makes on the shipped CSV.
    table : pandas.DataFrame, optional
        Median table written to summary.md.
    title : str, default=""
        Panel title in summary.md.
    caption : str, default="Medians:"
        Caption of the table in summary.md.
    """

    def __init__(self, name, df, plot, table=None, title="", caption="Medians:"):
        from ..plots.paper import panel_figure
        self.name, self.df, self.plot, self.table, self.title, self.caption = name, df, plot, table, title, caption
        self.fig = panel_figure(plot, df)


def _check(statement, ok, detail):
    return {"check": statement, "ok": bool(ok), "detail": detail}


def _medians(df, metric, index="epsilon", columns="algorithm"):
    """Median of ``metric`` as a table index × columns (NaN ε of references shown as 'non-private')."""
    d = df.copy()
    d[index] = d[index].map(lambda v: "non-private" if isinstance(v, float) and math.isnan(v) else v)
    t = d.groupby([index, columns], sort=False)[metric].median().unstack(columns)
    return t[list(dict.fromkeys(df[columns]))]


def _median_at(df, alg, eps, metric):
    s = df[(df["algorithm"] == alg) & np.isclose(df["epsilon"], eps)][metric]
    return float(s.median()) if len(s) else math.nan


def _trend_check(df, alg, metric, what, decreasing=True, x="epsilon", alpha=0.05):
    """Does ``metric`` fall (or rise) with ε for one method?

    Test: Kendall's rank correlation between ε and the metric over all runs has the expected
    sign with one-sided p < ``alpha``, and the median at the largest ε is better than at the
    smallest. Strict monotonicity of the medians is reported but not required: where a method
    releases noise only (small ε) its d_W is that of random subspaces at every ε, and medians
    of a few runs of the same noise come in random order, however many runs are made."""
    part = df[df["algorithm"] == alg].dropna(subset=[x, metric])
    med = part.groupby(x)[metric].median().sort_index()
    steps = np.diff(med.to_numpy()) if decreasing else -np.diff(med.to_numpy())    # > 0: a wrong-way step
    strict = bool(np.all(steps <= 0))
    tau, p = stats.kendalltau(part[x], part[metric], alternative="less" if decreasing else "greater")
    overall = (med.iloc[-1] < med.iloc[0]) if decreasing else (med.iloc[-1] > med.iloc[0])
    ok = bool(overall and p < alpha)
    word = "decreases" if decreasing else "increases"
    detail = (" → ".join(f"{v:.3g}" for v in med) + f" over {x} = " + ", ".join(f"{e:g}" for e in med.index)
              + f"; Kendall τ = {tau:.2f} (one-sided p = {p:.2g}, {len(part)} runs); medians strictly monotone: "
              + ("yes" if strict else "no"))
    return _check(f"{what}: {metric} of {alg} {word} with {x} (Kendall τ, p < {alpha:g}; last median vs first)",
                  ok, detail)


# ============================================================================ subspace Fig. 2
def _subspace_fig2(level, R):
    S = SETTINGS["subspace-fig2"][level]
    panels, checks = [], []
    for pname, P in S["panels"].items():
        ds_kind = P["dataset"]["kind"]
        dw = "d_W" if ds_kind == "subspaces" else "d_W_class"
        algs = [preset("SuLQ-10"), preset("SuLQ-50")]
        if ds_kind == "subspaces":  # Yale B: n = 320 allows ≤ 6 subsets of k(q + 1) = 50 points: Alg. 1's
            # rule "no point in more than √m subsets" is never met
            algs += [preset("s.a. TSC"), preset("s.a. SSC")]
        algs.append({"name": "gibbs", "label": "Gibbs", "params": {"n_iter": P["gibbs_iter"], "init": "random"}})
        if P.get("gibbs_kplane", True):
            algs.append({"name": "gibbs", "label": "Gibbs, k-plane start (not private)",
                         "params": {"n_iter": P["gibbs_iter"], "init": "kplane"}})
        algs.append(preset("k-plane"))
        if P["ssc"]:
            algs.append(preset("SSC"))
        sweep = Sweep(dataset=P["dataset"], algorithms=algs, epsilons=S["epsilons"], trials=S["trials"],
                      metrics=["cost", dw], seed=R.seed)
        df = R.sweep("subspace-fig2", pname, sweep)
        title = f"Subspace clustering, Fig. 2 ({pname}): {load_dataset_name(P['dataset'])}"
        panels.append(Panel(pname, df, {"kind": "privacy_utility", "metrics": ["cost", dw], "title": title},
                            _medians(df, dw), title))
        private = [a["label"] for a in algs if get_method(a["name"]).private]
        for alg in private:
            checks.append(_trend_check(df, alg, dw, pname))
        if ds_kind == "subspaces" and 10.0 in S["epsilons"]:
            at10 = df[np.isclose(df["epsilon"], 10.0)]
            sa = {a: _median_at(df, a, 10.0, dw) for a in ("s.a. TSC", "s.a. SSC")}
            sa_min = at10[at10["algorithm"].isin(list(sa))][dw].min()
            for alg in ("Gibbs", "Gibbs, k-plane start (not private)", "SuLQ-10", "SuLQ-50"):
                v = _median_at(df, alg, 10.0, dw)
                mine = at10[at10["algorithm"] == alg][dw]
                sep = bool((mine < sa_min).all())
                # below each sample-aggregate method: one-sided Mann–Whitney p < 0.05 (medians alone call a
                # difference between methods that all sit at the level of random subspaces a win)
                p = max(stats.mannwhitneyu(mine, at10[at10["algorithm"] == a][dw], alternative="less").pvalue
                        for a in sa)
                checks.append(_check(f"{pname}: at ε = 10 the {dw} of {alg} is below sample-aggregate's (TSC and SSC; "
                                     "one-sided Mann–Whitney, p < 0.05)", v < min(sa.values()) and p < 0.05,
                                     f"medians {alg} {v:.3f} vs s.a. TSC {sa['s.a. TSC']:.3f}, s.a. SSC "
                                     f"{sa['s.a. SSC']:.3f}; p = {p:.2g}; every run below every s.a. run: "
                                     f"{'yes' if sep else 'no'}"))
    # "SuLQ scales poorly with the ambient dimension d ... Gibbs sampling seems to be robust"
    dfs = {p.name: p.df for p in panels}
    if {"left", "middle"} <= set(dfs) and 10.0 in S["epsilons"]:
        r = {n: _median_at(dfs[n], "SuLQ-10", 10.0, "d_W") / _median_at(dfs[n], "Gibbs", 10.0, "d_W")
             for n in ("left", "middle")}
        checks.append(_check("SuLQ scales poorly with d: at ε = 10, SuLQ-10's median d_W ÷ Gibbs' is larger at d = 10 "
                             "(middle) than at d = 5 (left)", r["middle"] > r["left"],
                             f"left ×{r['left']:.2f}, middle ×{r['middle']:.2f}"))
    return panels, checks, []


def load_dataset_name(spec):
    """A short human name of a dataset spec (without loading it).

    Parameters
    ----------
    spec : dict
        A dataset spec (keyword arguments of :func:`dpcore.data.load_dataset`, with ``kind``).

    Returns
    -------
    str
        E.g. ``"CLUTO classic3"`` or ``"subspaces (n=1000, d=10, …)"`` (``random_state``
        omitted).
    """
    s = dict(spec)
    kind = s.pop("kind")
    s.pop("random_state", None)
    if kind == "cluto":
        return f"CLUTO {s['name']}"
    return f"{kind} (" + ", ".join(f"{k}={v}" for k, v in s.items()) + ")"


# ============================================================================ subspace Fig. 3
def gibbs_traces(dataset, epsilon, init, n_iter, n_chains, seed):
    """One Fig. 3 run: ``n_chains`` Gibbs chains at ``epsilon``.

    Returns the traces (dict name -> (n_chains, n_iter)), the burn-in and the seconds per
    sweep. Top-level so workers can run it.

    Parameters
    ----------
    dataset : dict
        Dataset spec for :func:`dpcore.data.load_dataset` (must have true subspaces).
    epsilon : float
        Privacy parameter of the Gibbs sampler.
    init : str
        The sampler's ``init``.
    n_iter : int
        Sweeps per chain.
    n_chains : int
        Number of chains.
    seed : int
        Master seed (the run's seed is derived from it, ``init`` and ``epsilon``).

    Returns
    -------
    dict
        ``traces`` (dict name -> array (n_chains, n_iter)), ``burn_in`` (int) and
        ``seconds_per_sweep`` (float).
    """
    ds = load_dataset(**dataset)
    rng = np.random.default_rng(run_seed(seed, f"fig3 {init}", epsilon, 0))
    est = get_method("gibbs").build(ds, params={"n_clusters": int(ds.n_classes), "subspace_dim": int(ds.subspaces.shape[2]),
                                                "n_iter": n_iter, "n_chains": n_chains, "init": init},
                                    epsilon=epsilon, random_state=rng)
    with single_threaded():                         # as every sweep run (dpcore.lab.sweeps.run_task)
        est.fit(ds.X, y=ds.labels, true_subspaces=ds.subspaces)
    return {"traces": est.traces_, "burn_in": est.burn_in_, "seconds_per_sweep": est.seconds_per_sweep_}


def _thin_index(T, max_points):
    step = max(1, math.ceil(T / max_points))
    idx = np.arange(0, T, step)
    return idx if idx[-1] == T - 1 else np.append(idx, T - 1)


#: the starts of Fig. 3's chains in words
_INIT_WORDS = {"random": "random start (private)", "kplane": "k-plane start (not private)"}


def _subspace_fig3(level, R, max_points=2000):
    from ..subspace.diagnostics import diagnostics_table, mixing_verdict
    S = SETTINGS["subspace-fig3"][level]
    jobs = [dict(dataset=S["dataset"], epsilon=e, init=i, n_iter=S["n_iter"], n_chains=S["n_chains"], seed=R.seed)
            for i in S["inits"] for e in S["epsilons"]]
    R.log(f"  [subspace-fig3] {len(jobs)} runs of {S['n_chains']} chains × {S['n_iter']} sweeps")
    results = R.map(gibbs_traces, jobs)
    panels, checks, diag_rows = [], [], []
    for init in S["inits"]:
        burn, rows = {}, []
        for job, res in zip(jobs, results):
            if job["init"] != init:
                continue
            eps, tr = job["epsilon"], res["traces"]
            burn[eps] = res["burn_in"]
            C, T = tr["cost"].shape
            idx = _thin_index(T, max_points)            # the CSV keeps ≤ max_points sweeps per chain
            for ch in range(C):
                rows.append(pd.DataFrame({"init": init, "epsilon": eps, "chain": ch, "sweep": idx + 1,
                                          **{name: tr[name][ch, idx] for name in tr}}))
            verdict = mixing_verdict(tr, burn_in=res["burn_in"])
            for r in diagnostics_table(tr, burn_in=res["burn_in"]):
                diag_rows.append({"init": init, "epsilon": eps, "n_iter": T, "n_chains": C, "burn_in": res["burn_in"],
                                  "seconds_per_sweep": res["seconds_per_sweep"], "mixed": verdict["mixed"], **r})
            rhat = {r["trace"]: r["split_rhat"] for r in verdict["rows"]}
            checks.append(_check(f"{_INIT_WORDS[init]}, ε = {eps:g}: the {C} chains mixed (split-R̂ < 1.1 and ESS ≥ 100 "
                                 f"on cost and d_W after {res['burn_in']} burn-in sweeps)", verdict["mixed"],
                                 ", ".join(f"R̂({k}) = {v:.3g}" for k, v in rhat.items())
                                 + f"; final median d_W {np.median(tr['dw'][:, -1]):.3f}"))
        df = pd.concat(rows, ignore_index=True)
        df.insert(0, "figure", "subspace-fig3")
        title = (f"Gibbs sampler mixing (Fig. 3), {_INIT_WORDS[init]}: {S['n_chains']} chains, "
                 f"{load_dataset_name(S['dataset'])}")
        plot = {"kind": "traces", "metrics": ["statistic", "cost", "dw"], "title": title,
                "burn_in": {str(e): int(b) for e, b in burn.items()}}
        table = df.groupby(["epsilon", "chain"])["dw"].last().unstack("chain")
        panels.append(Panel(f"{init}-init", df, plot, table.round(4), title,
                            caption="d_W to the truth of the last sample of each chain (columns: chains):"))
    extra = {"diagnostics.csv": pd.DataFrame(diag_rows)}
    return panels, checks, extra


# ============================================================================ co-clustering Fig. 2
def _cocluster_fig2(level, R):
    S = SETTINGS["cocluster-fig2"][level]
    panels, checks = [], []
    dp = {"name": "dp_taucc", "label": "DP-τCC", "params": {"n_iter": S["n_iter"]}}
    peers = [{**preset(m), "label": m} for m in PEERS_FIG2]
    meds = {}
    for name in S["datasets"]:
        sweep = Sweep(dataset={"kind": "cluto", "name": name}, algorithms=[dp, *peers, preset("Fast-τCC")],
                      epsilons=S["epsilons"], trials=S["trials"], metrics=["nmi"], delta=DELTA_FIG2, seed=R.seed)
        df = R.sweep("cocluster-fig2", name, sweep)
        meds[name] = df[df["private"]]
        title = f"Co-clustering, Fig. 2: row NMI on CLUTO {name} (𝓘 = {S['n_iter']})"
        panels.append(Panel(name, df, {"kind": "privacy_utility", "metrics": ["nmi"], "title": title},
                            _medians(df, "nmi"), title))
        checks.append(_trend_check(df, "DP-τCC", "nmi", name, decreasing=False))
        hi = max(S["epsilons"])
        fast = float(df[df["algorithm"] == "Fast-τCC"]["nmi"].median())
        at_hi, at1 = _median_at(df, "DP-τCC", hi, "nmi"), _median_at(df, "DP-τCC", 1.0, "nmi")
        checks.append(_check(f"{name}: DP-τCC at ε = {hi:g} reaches ≥ 60 % of Fast-τCC's median NMI",
                             at_hi >= 0.6 * fast, f"{at_hi:.3f} vs {fast:.3f} ({at_hi / fast:.0%})"))
        if 1.0 in S["epsilons"] and hi > 1.0:
            checks.append(_check(f"{name}: DP-τCC is near its best by ε = 1 (median NMI at ε = 1 ≥ 80 % of ε = {hi:g})",
                                 at1 >= 0.8 * at_hi, f"{at1:.3f} vs {at_hi:.3f}"))
    return panels, checks + _peer_checks(meds, S["epsilons"]), []


#: the co-clustering paper's other peers in its Fig. 2 (presets of dpcore.lab.sweeps; DPNMF in the
#: paper's setting, whose NNDSVD start is not private, and its label says so)
PEERS_FIG2 = ("DP-KMeans", "DPHD", DPNMF_PAPER)
#: δ of the (ε, δ) peers: the paper's δ = 1e-5 for DPNMF (DPHD takes it too; DP-τCC and DP-KMeans are ε-DP)
DELTA_FIG2 = 1e-5


def _above(df, a, b, eps, alpha=0.05):
    """Are the runs of ``a`` at ``eps`` significantly above those of ``b`` (one-sided
    Mann–Whitney U, p < alpha)? Medians alone call a 0.002 gap between two methods at chance a win."""
    x = df[(df["algorithm"] == a) & np.isclose(df["epsilon"], eps)]["nmi"].dropna()
    y = df[(df["algorithm"] == b) & np.isclose(df["epsilon"], eps)]["nmi"].dropna()
    if len(x) < 2 or len(y) < 2:
        return False
    return bool(stats.mannwhitneyu(x, y, alternative="greater").pvalue < alpha)


def _peer_checks(runs, epsilons):
    """The co-clustering paper's two statements about its peers, on the private runs of every set.

    "DP-Kmeans and DPHD struggle in achieving performances that are comparable with those of
    DP-τCC and DP-NMF": holds if in at least 3/4 of the (set, ε) cells both DP-KMeans' and
    DPHD's median NMI are below both DP-τCC's and DPNMF's. "DPNMF outperforms DP-τCC only for
    small value of ε" ("with some exceptions"): holds if DPNMF's runs are significantly above
    DP-τCC's at the smallest ε (one-sided Mann–Whitney, p < 0.05) on a majority of sets and not
    significantly above them at ε = 1 (the paper runs DPNMF up to 0.99999) on a majority of sets."""
    dpnmf = DPNMF_PAPER
    cells, per_set = 0, []
    above_small, not_above_1 = [], []
    lo = min(epsilons)
    for name, df in runs.items():
        m = df.groupby(["algorithm", "epsilon"])["nmi"].median()
        get = lambda alg, e: float(m.get((alg, e), math.nan))      # noqa: E731
        ok = [max(get("DP-KMeans", e), get("DPHD", e)) < min(get("DP-τCC", e), get(dpnmf, e)) for e in epsilons]
        cells += sum(ok)
        per_set.append(f"{name} {sum(ok)}/{len(ok)}")
        if _above(df, dpnmf, "DP-τCC", lo):
            above_small.append(name)
        if 1.0 in epsilons and not _above(df, dpnmf, "DP-τCC", 1.0):
            not_above_1.append(name)
    n_cells = len(runs) * len(epsilons)
    out = [_check("DP-KMeans and DPHD struggle to reach DP-τCC and DPNMF (both below both in ≥ 3/4 of the "
                  "(set, ε) cells, medians)", cells >= 0.75 * n_cells,
                  f"{cells}/{n_cells} cells: " + ", ".join(per_set))]
    if 1.0 in epsilons and lo < 1.0:
        half = len(runs) / 2
        out.append(_check(f"DPNMF beats DP-τCC only at small ε (significantly above it at ε = {lo:g} and not at ε = 1, "
                          "on a majority of sets; one-sided Mann–Whitney, p < 0.05)",
                          len(above_small) > half and len(not_above_1) > half,
                          f"significantly above at ε = {lo:g}: {', '.join(above_small) or 'no set'}; not above at ε = 1: "
                          f"{', '.join(not_above_1) or 'no set'} (of {len(runs)} sets)"))
    return out


# ============================================================================ co-clustering Fig. 3
def _cocluster_fig3(level, R):
    S = SETTINGS["cocluster-fig3"][level]
    panels, checks = [], []
    labels = {f"DP-τCC, 𝓘 = {i}": i for i in S["iterations"]}
    algs = [{"name": "dp_taucc", "label": lab, "params": {"n_iter": i}} for lab, i in labels.items()]
    for name in S["datasets"]:
        sweep = Sweep(dataset={"kind": "cluto", "name": name}, algorithms=algs, epsilons=S["epsilons"],
                      trials=S["trials"], metrics=["tau_rc", "nmi"], seed=R.seed)
        df = R.sweep("cocluster-fig3", name, sweep)
        df.insert(df.columns.get_loc("epsilon") + 1, "n_iter", df["algorithm"].map(labels))
        title = f"Co-clustering, Fig. 3: τ̂_R|C of the released T against 𝓘, CLUTO {name}"
        plot = {"kind": "curves", "x": "n_iter", "metrics": ["tau_rc", "nmi"], "group": "epsilon", "group_name": "ε",
                "title": title, "x_title": "iterations 𝓘"}
        panels.append(Panel(name, df, plot, _medians(df, "tau_rc", index="n_iter", columns="epsilon").round(4),
                            title))
        lo, hi = min(S["epsilons"]), max(S["epsilons"])
        med = df.groupby(["n_iter", "epsilon"])["tau_rc"].median()
        up_eps = [i for i in S["iterations"] if med[(i, hi)] > med[(i, lo)]]
        checks.append(_check(f"{name}: τ̂ is higher at ε = {hi:g} than at ε = {lo:g} for every 𝓘",
                             len(up_eps) == len(S["iterations"]),
                             f"{len(up_eps)}/{len(S['iterations'])} values of 𝓘; at 𝓘 = {S['iterations'][0]}: "
                             f"{med[(S['iterations'][0], lo)]:.4f} → {med[(S['iterations'][0], hi)]:.4f}"))
        i0, i1 = S["iterations"][0], S["iterations"][-1]
        checks.append(_check(f"{name}: at ε = {hi:g}, τ̂ is higher with 𝓘 = {i1} than with 𝓘 = {i0}",
                             med[(i1, hi)] > med[(i0, hi)],
                             " → ".join(f"{med[(i, hi)]:.4f}" for i in S["iterations"]) + " over 𝓘"))
        if 1.0 in S["epsilons"] and len(S["iterations"]) > 2:   # the trade-off: ε/(2𝓘) per half-step
            curve = [med[(i, 1.0)] for i in S["iterations"]]
            best = S["iterations"][int(np.argmax(curve))]
            checks.append(_check(f"{name}: at ε = 1 more iterations stop paying (τ̂ at 𝓘 = {i1} below its best; "
                                 "paper: good trade-offs for 3 ≤ 𝓘 ≤ 5)", curve[-1] < max(curve),
                                 " → ".join(f"{v:.4f}" for v in curve) + f" over 𝓘; best 𝓘 = {best}"))
    return panels, checks, []


# ============================================================================ high-dimensional k-means Fig. 2
_KMEANS = ("k-means++", "candidate set", "SuLQ k-means", "s.a. k-means", "DP-Lloyd")


def _ratio_to_kmeanspp(df, by):
    ref = df[df["method"] == "k-means++"].groupby(by)["objective"].median()
    return df["objective"] / df[by].map(ref)


def _highdim_fig2(level, R):
    S = SETTINGS["highdim-fig2"][level]
    panels, checks = [], []
    # (c) objective against k at ε = 1: one algorithm entry per (method, k)
    labels, algs = {}, []
    for k in S["ks"]:
        for m in _KMEANS:
            a = preset(m)
            a["params"]["n_clusters"] = k
            a["label"] = f"{m} (k = {k})"
            labels[a["label"]] = (m, k)
            algs.append(a)
    sweep = Sweep(dataset=S["dataset"], algorithms=algs, epsilons=[S["k_eps"]], trials=S["trials"],
                  metrics=["objective", "objective_ratio"], delta=S["delta"], seed=R.seed)
    df = R.sweep("highdim-fig2", "vs-k", sweep)
    df.insert(df.columns.get_loc("algorithm") + 1, "method", df["algorithm"].map(lambda a: labels[a][0]))
    df.insert(df.columns.get_loc("method") + 1, "k", df["algorithm"].map(lambda a: labels[a][1]))
    df["ratio_kmeanspp"] = _ratio_to_kmeanspp(df, "k")
    title = (f"High-dimensional k-means, Fig. 2 (c): objective against k at ε = {S['k_eps']:g}, "
             f"{load_dataset_name(S['dataset'])}")
    plot = {"kind": "curves", "x": "k", "metrics": ["objective", "ratio_kmeanspp"], "group": "method", "title": title,
            "log_x": True, "log_y": True}
    panels.append(Panel("vs-k", df, plot, _medians(df, "ratio_kmeanspp", index="k", columns="method").round(3), title))
    med = df.groupby(["method", "k"])["ratio_kmeanspp"].median()
    for other in ("SuLQ k-means", "s.a. k-means", "DP-Lloyd"):
        wins = [k for k in S["ks"] if med[("candidate set", k)] < med[(other, k)]]
        checks.append(_check(f"vs-k: the candidate set's objective is below {other}'s at every k",
                             len(wins) == len(S["ks"]),
                             ", ".join(f"k={k}: {med[('candidate set', k)]:.3g} vs {med[(other, k)]:.3g}"
                                       for k in S["ks"]) + " (÷ k-means++)"))
    # (d) objective against ε at k = eps_k: on the mixture, and on real data (digits; the paper's is MNIST)
    for pname, dataset, where in (("vs-eps", S["dataset"], "the mixture"),
                                  ("digits-vs-eps", S["digits"], "scikit-learn's digits (the paper: MNIST)")):
        df, pchecks = _highdim_vs_eps(R, S, pname, dataset)
        title = f"High-dimensional k-means, Fig. 2 (d) on {where}: objective against ε at k = {S['eps_k']}"
        panels.append(Panel(pname, df, {"kind": "privacy_utility", "metrics": ["objective", "ratio_kmeanspp"],
                                        "title": title}, _medians(df, "ratio_kmeanspp").round(3), title))
        checks += pchecks
    return panels, checks, []


#: Fig. 2 (d): the methods of (c) and the candidate set with the paper's 8 SuLQ refinement iterations (§7)
_KMEANS_EPS = _KMEANS + ("candidate set + 8 SuLQ",)
#: "competitive with the non-private k-means": objective ≤ this × the k-means++ median (our threshold)
COMPETITIVE_RATIO = 1.2


def _highdim_vs_eps(R, S, pname, dataset):
    """One Fig. 2 (d) panel (objective against ε at k = eps_k) and the checks of its statements:
    the trends, the candidate set below SuLQ at every ε, "our algorithm is competitive with the
    non-private k-means algorithm even for small ε, while the SuLQ algorithm objective
    deteriorates quickly" (competitive: ratio ≤ COMPETITIVE_RATIO at every ε; deteriorates:
    SuLQ's ratio at the smallest ε is above the candidate set's), and the refinement's effect
    ("gave improved empirical performance": lower median at a majority of ε)."""
    k = S["eps_k"]
    algs = []
    for m in _KMEANS_EPS:
        a = preset(m)
        a["label"] = m
        a["params"]["n_clusters"] = k
        algs.append(a)
    sweep = Sweep(dataset=dataset, algorithms=algs, epsilons=S["epsilons"], trials=S["trials"],
                  metrics=["objective", "objective_ratio"], delta=S["delta"], seed=R.seed)
    df = R.sweep("highdim-fig2", pname, sweep)
    df.insert(df.columns.get_loc("algorithm") + 1, "method", df["algorithm"])
    df.insert(df.columns.get_loc("method") + 1, "k", k)
    df["ratio_kmeanspp"] = _ratio_to_kmeanspp(df, "k")
    eps = S["epsilons"]
    med = {(m, e): _median_at(df, m, e, "ratio_kmeanspp") for m in _KMEANS_EPS for e in eps}
    checks = []
    if len(eps) > 1:
        for m in ("candidate set", "SuLQ k-means", "s.a. k-means", "DP-Lloyd"):
            checks.append(_trend_check(df, m, "ratio_kmeanspp", pname))
    pairs = ", ".join(f"ε={e:g}: {med[('candidate set', e)]:.3g} vs {med[('SuLQ k-means', e)]:.3g}" for e in eps)
    checks.append(_check(f"{pname}: the candidate set's objective is below SuLQ k-means' at every ε",
                         all(med[("candidate set", e)] < med[("SuLQ k-means", e)] for e in eps),
                         pairs + " (÷ k-means++)"))
    lo = min(eps)
    checks.append(_check(f"{pname}: the candidate set is competitive with k-means++ even for small ε (objective ≤ "
                         f"{COMPETITIVE_RATIO:g} × k-means++ at every ε) while SuLQ's is worse at ε = {lo:g}",
                         all(med[("candidate set", e)] <= COMPETITIVE_RATIO for e in eps)
                         and med[("SuLQ k-means", lo)] > med[("candidate set", lo)], pairs + " (÷ k-means++)"))
    better = [e for e in eps if med[("candidate set + 8 SuLQ", e)] < med[("candidate set", e)]]
    checks.append(_check(f"{pname}: the paper's 8 SuLQ refinement iterations improve the candidate set's objective "
                         "(lower median at a majority of ε)", len(better) > len(eps) / 2,
                         ", ".join(f"ε={e:g}: {med[('candidate set + 8 SuLQ', e)]:.3g} vs {med[('candidate set', e)]:.3g}"
                                   for e in eps) + " (refined vs not, ÷ k-means++)"))
    return df, checks


RUNNERS = {"subspace-fig2": _subspace_fig2, "subspace-fig3": _subspace_fig3, "cocluster-fig2": _cocluster_fig2,
           "cocluster-fig3": _cocluster_fig3, "highdim-fig2": _highdim_fig2}


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
    pd.DataFrame(checks, columns=["check", "ok", "detail"]).to_csv(d / "checks.csv", index=False)
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
    lines += [f"- [{'x' if c['ok'] else ' '}] {c['check']} — {c['detail']}" for c in checks]
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
