"""Privacy–utility sweeps: dataset × algorithms × ε grid × trials × metrics -> a tidy DataFrame.

Design
------
- **Declarative.** A :class:`Sweep` names a dataset by its small parameters (the dict that
  :func:`dpcore.data.load_dataset` takes), methods by catalogue name (:mod:`dpcore.lab.methods`) with parameters, an ε
  grid, a number of trials and metric names. Bad specs raise ``ValueError``.
- **Reproducible whatever the order or the number of workers.** Each run's generator comes
  from ``numpy.random.SeedSequence(seed, spawn_key=(label, ε, trial))`` (strings hashed
  stably), so a run's result depends on what it is, never on when or where it ran; rows are
  sorted before they are returned.
- **Any executor.** Runs go through a ``concurrent.futures.Executor``: none (in process) for
  ``n_jobs=1``, a spawn-based process pool for ``n_jobs > 1``, or one you pass — e.g. a Dask
  distributed client's executor (:func:`dask_executor`) for sweeps that outgrow one machine.
- **Workers import dpcore, not the caller's script.** A spawned worker normally re-runs the
  parent's ``__main__`` before its first task. Under Streamlit ``__main__`` is the app's page
  script, so every worker ran ``app.py`` without a session, importing Streamlit and logging "missing ScriptRunContext". The pool's processes
  (:func:`worker_context`) skip that step: a task carries its method's spec (import paths and
  fields, :meth:`dpcore.lab.methods.Method.spec`) and its function is :func:`run_task`, so a
  worker imports the method's class itself and needs neither ``__main__`` nor the parent's
  catalogue. A method registered from a script (:func:`dpcore.lab.methods.register_method`) is
  imported by the script's module name: guard the script's top level with
  ``if __name__ == "__main__":``.
- **Resumable.** With ``store=DIR`` every finished run is written to its own JSON file named by
  a hash of everything that defines it; a re-run (after a crash or Ctrl-C) loads those files and
  computes only the missing runs.

Non-private algorithms ignore ε: they run once per trial and their rows have ε = NaN (the
reference line of a privacy–utility plot).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
import time
import warnings
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from functools import lru_cache
from multiprocessing import context as mp_context
from multiprocessing import spawn as mp_spawn
from pathlib import Path

import numpy as np
import pandas as pd

from .. import metrics as M
from ..validation import check_epsilon, check_int
from ..data import load_dataset
from ..subspace.common import single_threaded
from ..privacy.accountant import PrivacyEvent, active_accountants
from ..privacy.meter import events_from_json, events_to_json
from .methods import METHODS, Method, build_estimator, get_method, run_seed
from .verdicts import RunContext, estimator_reasons, judge_row, plan_run
from .verdicts import dataset_key as _dataset_key

__all__ = ["METRICS", "Sweep", "run_sweep", "run_task", "row_event", "row_events", "plan_sweep", "sweep_context",
           "summarize", "dask_executor", "worker_context", "warning_summary"]


def _metric_subspace_dw(ds, est):
    """d_W to the true subspaces; NaN without them, or when the run's q (or k) differs from the
    planted one (d_W compares two sets of subspaces of the same shape)."""
    if ds.subspaces is None or np.shape(est.subspaces_) != np.shape(ds.subspaces):
        return math.nan
    return M.wasserstein_distance(ds.subspaces, est.subspaces_)


def _class_subspaces(X, labels, q):
    """The top-q principal (linear, uncentred) subspace of each class's rows: (k, d, q).
    The reference C* for labelled data without known subspaces (e.g. Yale B, whose classes
    lie near 9-D affine, hence 10-D linear, subspaces): the best q-dimensional linear fit of
    each class. Evaluation only (it reads the labels and the raw points)."""
    from ..subspace.common import fit_subspaces
    _, lab, counts = np.unique(labels, return_inverse=True, return_counts=True)
    if counts.min() < q:
        raise ValueError(f"every class needs at least q = {q} points to define its subspace")
    return fit_subspaces(X, lab, counts.size, q)


def _metric_subspace_dw_class(ds, est):
    """d_W to the classes' top-q subspaces (see :func:`_class_subspaces`); NaN without labels."""
    if ds.labels is None:
        return math.nan
    U = np.asarray(est.subspaces_)
    return M.wasserstein_distance(_class_subspaces(np.asarray(ds.X), ds.labels, U.shape[2]), U)


def _metric_tau_rc(ds, est):
    """τ̂_{R|C} of the released contingency table ``T_`` (DP-τCC: post-processing, private)."""
    return est.tau_rc_


def _metric_subspace_cost(ds, est):
    return M.subspace_cost(ds.X, est.subspaces_)


def _labels(est):
    # DP-τCC: the paper's NMI uses row_assignment_ (raw rows against the last private T)
    for name in ("labels_", "row_assignment_", "row_labels_"):
        if hasattr(est, name):
            return getattr(est, name)
    raise ValueError("the estimator has no labels_ to evaluate")


def _metric_nmi(ds, est):
    return M.nmi(ds.labels, _labels(est)) if ds.labels is not None else math.nan


def _metric_accuracy(ds, est):
    return M.clustering_accuracy(ds.labels, _labels(est)) if ds.labels is not None else math.nan


def _metric_kmeans_objective(ds, est):
    return M.kmeans_objective(ds.X, est.cluster_centers_)


def _metric_objective_ratio(ds, est):
    """k-means objective of the released centres / that of the true centres (mixtures only)."""
    if ds.centers is None:
        return math.nan
    return M.kmeans_objective(ds.X, est.cluster_centers_) / M.kmeans_objective(ds.X, ds.centers)


METRICS = {
    "d_W": (_metric_subspace_dw, {"subspace"}),
    "d_W_class": (_metric_subspace_dw_class, {"subspace"}),
    "cost": (_metric_subspace_cost, {"subspace"}),
    "nmi": (_metric_nmi, {"subspace", "cocluster", "kmeans", "documents"}),
    "accuracy": (_metric_accuracy, {"subspace", "cocluster", "kmeans", "documents"}),
    "objective": (_metric_kmeans_objective, {"kmeans"}),
    "objective_ratio": (_metric_objective_ratio, {"kmeans"}),
    "tau_rc": (_metric_tau_rc, {"cocluster"}),
}


# ----------------------------------------------------------------------------- sweep spec
@dataclass
class Sweep:
    """What to run. ``algorithms`` items are dicts ``{"name", "label"?, "params"?}``.

    Attributes
    ----------
    dataset : dict
        Keyword arguments of :func:`dpcore.data.load_dataset` (with a "kind").
    algorithms : list of dict or str
        Method names (keys of :data:`dpcore.lab.methods.METHODS`) or dicts
        ``{"name", "label"?, "params"?}``; labels must be unique.
    epsilons : list of float
        The ε grid (each > 0, at least one).
    trials : int ≥ 1, default 5
        Runs per (algorithm, ε).
    metrics : list of str, default ["d_W", "cost"]
        Keys of :data:`METRICS` (at least one).
    delta : float or None, default None
        δ passed to the algorithms that take one (None: their default).
    seed : int or None, default 0
        Root of every run's SeedSequence (:func:`run_seed`): a public seed (the runs can be
        redrawn, so a meter lists them as not private); None: fresh OS entropy for every run
        (secret noise; the rows' ``seed`` column then gives it away: drop it before sharing).
    """
    dataset: dict
    algorithms: list
    epsilons: list
    trials: int = 5
    metrics: list = field(default_factory=lambda: ["d_W", "cost"])
    delta: float | None = None
    seed: int | None = 0

    def validated(self):
        """A checked, normalised copy: algorithm dicts with "label" and "params", ε as floats.

        Returns
        -------
        Sweep

        Raises
        ------
        ValueError
            If the dataset has no "kind", the ε grid is empty or holds an ε ≤ 0, ``trials`` < 1,
            no or an unknown algorithm is named, labels repeat, or a metric is unknown or none
            is named.
        """
        if not isinstance(self.dataset, dict) or "kind" not in self.dataset:
            raise ValueError("dataset must be a dict of load_dataset parameters with a 'kind'")
        eps = [check_epsilon(e, "epsilons") for e in self.epsilons]
        if not eps:
            raise ValueError("epsilons must hold at least one epsilon > 0 (the grid is empty)")
        trials = check_int(self.trials, "trials", 1)
        if not self.algorithms:
            raise ValueError("algorithms must name at least one algorithm")
        algs = []
        for a in self.algorithms:
            a = {"name": a} if isinstance(a, str) else dict(a)
            if a.get("name") not in METHODS:
                raise ValueError(f"algorithm must be one of {', '.join(METHODS)}; got {a.get('name')!r} "
                                 "(add your own with dpcore.lab.methods.register_method)")
            a.setdefault("label", a["name"])
            a.setdefault("params", {})
            algs.append(a)
        labels = [a["label"] for a in algs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"algorithm labels must be unique; got {labels}")
        for m in self.metrics:
            if m not in METRICS:
                raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {m!r}")
        if not self.metrics:
            raise ValueError("metrics must name at least one metric")
        return Sweep(dict(self.dataset), algs, eps, trials, list(self.metrics), self.delta,
                     None if self.seed is None else check_int(self.seed, "seed", 0))

    def tasks(self):
        """One dict per run (non-private algorithms once per trial, ε = NaN).

        Call it on a :meth:`validated` sweep. Each task carries its method's spec
        (:meth:`dpcore.lab.methods.Method.spec`), so a worker needs no catalogue lookup.

        Returns
        -------
        list of dict
            Keys "dataset", "algorithm", "method" (the spec), "epsilon", "delta", "trial",
            "seed" and "metrics".
        """
        out = []
        for a in self.algorithms:
            method = get_method(a["name"])
            spec = method.spec()
            grid = self.epsilons if method.private else [math.nan]
            for eps in grid:
                for t in range(self.trials):
                    out.append({"dataset": self.dataset, "algorithm": a, "method": spec, "epsilon": eps,
                                "delta": self.delta, "trial": t, "seed": self.seed, "metrics": self.metrics})
        return out


def _task_key(task) -> str:
    """A hash of what defines a run (the method's spec a task carries to workers is left out:
    the name and parameters already say which run it is, and stored runs keep their keys)."""
    what = {k: v for k, v in task.items() if k != "method"}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=repr).encode()).hexdigest()[:24]


# ----------------------------------------------------------------------------- running
@lru_cache(maxsize=4)
def _dataset(spec_json):
    return load_dataset(**json.loads(spec_json))


def _fitted_q(est):
    """The dimension of the released subspaces (subspace methods), else NaN."""
    U = getattr(est, "subspaces_", None)
    return int(np.shape(U)[2]) if U is not None and np.ndim(U) == 3 else math.nan


def run_task(task) -> dict:
    """Run one task (a dict from :meth:`Sweep.tasks`) and return its result row.

    Parameters
    ----------
    task : dict
        An item of :meth:`Sweep.tasks` (without "method": the catalogue entry named by
        ``task["algorithm"]["name"]``).

    Returns
    -------
    dict
        "algorithm", "name", "private", "released_private", "epsilon", "events" (the ledger's
        typed events, JSON: :func:`dpcore.privacy.meter.events_from_json`), "not_private" (the
        estimator's reasons, " | "-separated), "delta", "epsilon_spent", "trial", "q" (dimension
        of the released subspaces; NaN for other methods), "seed", "seconds", "warnings" and one
        column per metric (NaN where the metric does not apply to the family).
    """
    ds = _dataset(json.dumps(task["dataset"], sort_keys=True))
    a = task["algorithm"]
    # the task's own spec (a worker imports the class from it); a task without one names a catalogue entry
    entry = _task_method(task)
    ss = run_seed(task["seed"], a["label"], task["epsilon"], task["trial"])
    rng = np.random.default_rng(ss)
    est = entry.build(ds, params=a["params"], epsilon=task["epsilon"] if entry.private else None,
                      delta=task["delta"], random_state=rng)
    t0 = time.perf_counter()
    # BLAS single-threaded: runs are small-to-mid linear algebra, and multithreaded OpenBLAS
    # was measured up to 16x slower on them on a shared 2-core machine (a 50x50 SVD: 30 ms
    # with 2 threads, 1.9 ms with one); parallelism comes from the sweep's workers instead.
    with warnings.catch_warnings(record=True) as caught, single_threaded():  # warnings kept with the row
        warnings.simplefilter("always")
        est.fit(ds.X)
    seconds = time.perf_counter() - t0
    # "private": the method is a private one (the figure draws it against ε); "released_private":
    # this run really released something private (not so with a radius read off the data, a
    # non-private start or selection) - what the app's privacy meter may count
    released_private = entry.private and getattr(est, "released_private_", False)
    row = {"algorithm": a["label"], "name": a["name"], "private": entry.private,
           "released_private": released_private, "epsilon": task["epsilon"],
           # what the run spent, exactly (typed events), and why the estimator itself says it is not private:
           # a run in a worker is charged as one in this process
           "events": events_to_json(est.ledger_.events()) if entry.private else "",
           "not_private": " | ".join(estimator_reasons(est, fitted=True)) if entry.private else "",
           "delta": getattr(est, "delta_spent_", math.nan) if entry.private else math.nan,
           "epsilon_spent": getattr(est, "epsilon_spent_", math.nan) if entry.private else math.nan,
           "trial": task["trial"], "q": _fitted_q(est), "seed": int(ss.generate_state(1)[0]), "seconds": seconds,
           "warnings": " | ".join(dict.fromkeys(str(w.message) for w in caught))}
    failed = []
    for m in task["metrics"]:
        fn, families = METRICS[m]
        try:           # a run that was charged always comes back: a metric that cannot be computed is NaN
            row[m] = float(fn(ds, est)) if entry.family in families else math.nan
        except (ValueError, ArithmeticError, IndexError) as exc:
            row[m] = math.nan
            failed.append(f"metric {m} could not be computed ({exc})")
    if failed:
        row["warnings"] = " | ".join([w for w in [row["warnings"]] if w] + failed)
    return row


# ----------------------------------------------------------------------------- worker processes
_launching = threading.local()          # .bare: this thread is starting a sweep worker
_IN_SWEEP_WORKER = False                # this process is a worker of a sweep's pool
_original_preparation_data = mp_spawn.get_preparation_data
_install_lock = threading.Lock()


def _preparation_data(name):
    """:func:`multiprocessing.spawn.get_preparation_data`, without the parent's ``__main__``
    when the calling thread is starting a sweep worker (:class:`_WorkerProcess`)."""
    data = _original_preparation_data(name)
    if getattr(_launching, "bare", False):
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
    return data


class _WorkerProcess(mp_context.SpawnProcess):
    """A spawned process that does not re-run the parent's ``__main__`` (see the module docstring)."""

    def run(self):
        global _IN_SWEEP_WORKER
        _IN_SWEEP_WORKER = True         # a sweep started from here is a script's unguarded top level
        return super().run()

    @staticmethod
    def _Popen(process_obj):
        _launching.bare = True
        try:
            return mp_context.SpawnProcess._Popen(process_obj)
        finally:
            _launching.bare = False


class _WorkerContext(mp_context.SpawnContext):
    Process = _WorkerProcess


def worker_context():
    """The multiprocessing context of the sweep's process pool: "spawn" (safe in a threaded
    server, unlike "fork"), except that a worker does not re-run the parent's ``__main__``.

    Under ``streamlit run`` the parent's ``__main__`` is the app script, which a worker would
    run without a session (importing Streamlit and logging "missing ScriptRunContext" for
    every st call); a worker needs only dpcore (:func:`run_task` and the estimators it names).
    Only processes started through this context are affected: the standard library's
    ``get_preparation_data`` is wrapped once, and the wrapper changes nothing unless the
    calling thread is starting one of these processes.

    Returns
    -------
    multiprocessing.context.SpawnContext
    """
    with _install_lock:
        if mp_spawn.get_preparation_data is not _preparation_data:
            mp_spawn.get_preparation_data = _preparation_data
    return _WorkerContext()


def dask_executor(address: str):
    """A ``concurrent.futures`` executor backed by a Dask distributed scheduler at ``address``
    (e.g. ``"tcp://10.0.0.5:8786"``), for sweeps larger than one machine. Needs the
    ``distributed`` package and dpcore importable on every worker.

    Parameters
    ----------
    address : str
        The scheduler's address.

    Returns
    -------
    concurrent.futures.Executor

    Raises
    ------
    ValueError
        If the ``distributed`` package is not installed.
    """
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("a scheduler address needs the 'distributed' package (pip install distributed)") from None
    return Client(address).get_executor()


def run_sweep(sweep: Sweep, n_jobs: int = 1, executor: Executor | None = None, store=None, progress=None,
              on_cell=None, meter=None, dataset_key=None, context=None, session=None, seed_is_secret=False):
    """Run every task of ``sweep`` and return one DataFrame row per run.

    ``progress(done, total)`` is called after each finished run (and once at the start with
    runs loaded from ``store``). Rows are sorted by (algorithm order, ε, trial).

    Parameters
    ----------
    sweep : Sweep
        Validated here.
    n_jobs : int in [1, 4 × cpu_count] (at least 2 allowed), default 1
        Worker processes (a spawn-based pool, :func:`worker_context`) when no ``executor`` is given.
    executor : concurrent.futures.Executor, optional
        Runs the tasks (e.g. :func:`dask_executor`); wins over ``n_jobs``.
    store : str or path-like, optional
        Directory of one JSON file per finished run; runs found there are not recomputed.
    progress : callable, optional
        ``progress(done, total)``.
    on_cell : callable, optional
        ``on_cell(label, epsilon, rows)``, called once per *cell* (one algorithm at one ε; a
        non-private algorithm's cell has ε = NaN) as soon as all its trials have finished, with
        the cell's rows in trial order; cells loaded whole from ``store`` are reported at the
        start. With it the runs are started ε by ε (the non-private references first, then the
        grid from the smallest ε; the algorithms in their order within an ε), so a caller can draw
        the sweep as it grows. A run's result does not depend on when it runs (see the module
        docstring): the returned frame is the same with or without ``on_cell``. An exception
        raised by ``on_cell`` (or ``progress``) stops the sweep: queued runs are cancelled.
    meter : dpcore.privacy.meter.PrivacyMeter, optional
        Plan the whole sweep against it before any run (:meth:`~dpcore.privacy.meter.PrivacyMeter.reserve`:
        refused whole, nothing run, when its budget does not allow it) and charge every run
        as it finishes, with its verdict (:func:`dpcore.lab.verdicts.judge_row`).
    dataset_key : str, optional
        The dataset's name in the meter (default: the dataset's name).
    context : dpcore.lab.verdicts.RunContext, optional
        The runs' context for their verdicts (default :func:`sweep_context`: the sweep's seed
        is public when given; Gibbs' mixing is not checked). A context without a seed gets the
        sweep's, unless ``seed_is_secret``.
    session : str, optional
        Passed to the meter's rows.
    seed_is_secret : bool, default False
        The sweep's seed was drawn in secret (e.g. from fresh entropy by an app that shows it to
        nobody): its runs can be private. A seed written in a script is public.

    Returns
    -------
    pandas.DataFrame
        One row per run (the columns of :func:`run_task`).

    Raises
    ------
    ValueError
        If the sweep is invalid (:meth:`Sweep.validated`), ``n_jobs`` is out of range, or the
        planned private runs would pass the budget of an active accountant.

    Notes
    -----
    Privacy accounting: the whole sweep is planned against every active accountant
    (:class:`dpcore.privacy.PrivacyAccountant` used as ``with acc:``) and the ``meter`` before
    any run, whatever the executor: a sweep past a budget is refused whole and nothing is
    recorded. Every private run is then charged with its ledger's typed events: in this process
    by the estimators' ``fit``, from workers here as each result arrives (the events travel in
    the row), so the same sweep gives the same basic and tight totals wherever it ran. A run
    that was charged is in the returned frame; when the sweep stops on an exception (a failing
    run, Ctrl-C, an ``on_cell`` that raises), the finished runs are the exception's ``partial``
    (a DataFrame). Runs loaded from ``store`` are not charged again.
    """
    if _IN_SWEEP_WORKER:
        # a worker imported the script that registered a method, and the script's top level
        # started a sweep again: without this, every worker would start a pool of its own
        raise RuntimeError("run_sweep was called inside a sweep's worker process: the script that defines your "
                           "method runs again when a worker imports it, so put its top level under "
                           "if __name__ == \"__main__\":")
    sweep = sweep.validated()
    # worker processes may outnumber the cores (they share them), up to a sane bound
    n_jobs = check_int(n_jobs, "n_jobs", 1, max(2, 4 * (os.cpu_count() or 1)))
    tasks = sweep.tasks()
    store = Path(store) if store is not None else None
    rows, todo = {}, []
    for task in tasks:
        key = _task_key(task)
        path = store / f"{key}.json" if store else None
        if path is not None and path.exists():
            rows[key] = json.loads(path.read_text())
        else:
            todo.append((key, task))
    if store is not None:
        store.mkdir(parents=True, exist_ok=True)
    total = len(tasks)
    cells = _Cells(tasks, on_cell)
    if on_cell is not None:
        todo.sort(key=lambda item: _eps_first(item[1]))     # stable: algorithm order, then trials
    if progress:
        progress(len(rows), total)
    cells.loaded(rows)

    def finish(key, row):
        rows[key] = row
        if store is not None:
            tmp = store / f"{key}.json.tmp"
            tmp.write_text(json.dumps(row))
            tmp.replace(store / f"{key}.json")  # atomic: a killed sweep never leaves half a file
        if progress:
            progress(len(rows), total)
        cells.finished(key, row)

    # plan first, whatever the executor: every enclosing accountant and the meter see the whole sweep
    # before any run, and refuse it whole (nothing is recorded then)
    accs = active_accountants()
    ds_plan = _dataset(json.dumps(sweep.dataset, sort_keys=True)) if (accs or meter is not None) and todo else None
    if context is None:
        context = sweep_context(sweep, ds_plan, seed_is_secret)
    elif context.seed is None and sweep.seed is not None and not seed_is_secret:
        context = replace(context, seed=sweep.seed)          # a public seed is public whatever the context says
    if accs and todo:
        _check_budgets(accs, todo, ds_plan)
    reservation = None
    if meter is not None:
        key_name = dataset_key or (_dataset_key(ds_plan) if ds_plan is not None else str(sweep.dataset))
        reservation = meter.reserve(key_name, plan_sweep(sweep, context, [t for _, t in todo], ds_plan))

    def charge(task, row):
        if reservation is not None:
            reservation.charge(judge_row(row, _task_method(task), context,
                                         params=task["algorithm"]["params"] | _q_param(row),
                                         label=f"sweep: {row['algorithm']}, ε = {row['epsilon']:g}, "
                                               f"trial {row['trial']}"), session=session)

    own_pool = None
    if executor is None and n_jobs > 1 and len(todo) > 1:
        executor = own_pool = ProcessPoolExecutor(n_jobs, mp_context=worker_context())
    try:
        if executor is None:
            for key, task in todo:       # the estimators' fit checks and records in the accountants
                row = run_task(task)
                charge(task, row)
                finish(key, row)
        else:
            # runs in worker processes are not seen by this process's accountants: charged here
            futures = {executor.submit(run_task, task): (key, task) for key, task in todo}
            for fut in as_completed(futures):
                key, task = futures[fut]
                row = fut.result()
                for acc in accs:
                    _charge(acc, task, row)
                charge(task, row)
                finish(key, row)
    except BaseException as exc:
        # a run that was charged always returns its result: the finished runs travel with the exception
        if rows:
            exc.partial = pd.DataFrame([rows[k] for k in rows])
        raise
    finally:
        if own_pool is not None:
            own_pool.shutdown(cancel_futures=True)
        if reservation is not None:
            reservation.release()
    order = {a["label"]: i for i, a in enumerate(sweep.algorithms)}
    df = pd.DataFrame([rows[_task_key(t)] for t in tasks])
    df["_o"] = df["algorithm"].map(order)
    df = df.sort_values(["_o", "epsilon", "trial"], na_position="first").drop(columns="_o").reset_index(drop=True)
    return df


def _eps_first(task):
    """Sort key of the streamed order: non-private runs (ε = NaN) first, then by ε."""
    eps = task["epsilon"]
    return (0, 0.0) if math.isnan(eps) else (1, eps)


class _Cells:
    """Which runs make each cell (algorithm label, ε) of a sweep, and the call of ``on_cell``
    when the last run of a cell has finished (:func:`run_sweep`)."""

    def __init__(self, tasks, on_cell):
        self.on_cell = on_cell
        self.cell_of, self.keys = {}, {}
        for task in tasks if on_cell is not None else ():
            eps = task["epsilon"]
            cell = (task["algorithm"]["label"], None if math.isnan(eps) else eps)
            key = _task_key(task)
            self.cell_of[key] = cell
            self.keys.setdefault(cell, []).append(key)
        self.rows, self.reported = {}, set()

    def _report(self, cell):
        if cell in self.reported:          # a grid that repeats an ε repeats its runs' keys: one report
            return
        self.reported.add(cell)
        rows = sorted((self.rows[k] for k in self.keys[cell]), key=lambda r: r["trial"])
        label, eps = cell
        self.on_cell(label, math.nan if eps is None else eps, rows)

    def loaded(self, rows):
        """Report the cells whose runs were all loaded from a store."""
        if self.on_cell is None:
            return
        self.rows.update(rows)
        for cell, keys in self.keys.items():
            if all(k in self.rows for k in keys):
                self._report(cell)

    def finished(self, key, row):
        """One run finished: report its cell if it was the cell's last."""
        if self.on_cell is None:
            return
        self.rows[key] = row
        cell = self.cell_of[key]
        if all(k in self.rows for k in self.keys[cell]):
            self._report(cell)


def _task_method(task):
    """A task's method: the spec it carries (a worker imports the class from it), else the catalogue entry it names."""
    return Method.from_spec(task["method"]) if task.get("method") else get_method(task["algorithm"]["name"])


def row_events(row):
    """The privacy events one run of a sweep spent, from its row: its ledger's typed events
    (the ``events`` column), or, for a row without them (written by an older dpcore), one
    (ε, δ) event of its totals; empty when nothing was spent (a non-private method).

    Parameters
    ----------
    row : mapping
        A row of :func:`run_sweep`.

    Returns
    -------
    list of dpcore.privacy.PrivacyEvent
        Without a relation (the method's).
    """
    if not row["private"]:
        return []
    events = events_from_json(row.get("events"))
    if events:
        return events
    if not math.isfinite(row["epsilon_spent"]):
        return []
    delta = 0.0 if not math.isfinite(row["delta"]) else float(row["delta"])
    return [PrivacyEvent.approx_dp(float(row["epsilon_spent"]), delta)]


def row_event(row):
    """What one run of a sweep spent as ONE (ε, δ) event of its ledger's totals, or None when
    nothing was spent. Prefer :func:`row_events` (typed: the tight total needs them).

    Parameters
    ----------
    row : mapping
        A row of :func:`run_sweep` (``private``, ``epsilon_spent``, ``delta``).

    Returns
    -------
    dpcore.privacy.PrivacyEvent or None
    """
    if not row["private"] or not math.isfinite(row["epsilon_spent"]):
        return None
    delta = 0.0 if not math.isfinite(row["delta"]) else float(row["delta"])
    return PrivacyEvent.approx_dp(float(row["epsilon_spent"]), delta)


def _q_param(row):
    q = row.get("q")
    return {} if q is None or q != q else {"subspace_dim": int(q)}


def sweep_context(sweep, dataset=None, seed_is_secret=False):
    """The verdicts' context of a sweep's runs: its master seed (public when given, unless
    ``seed_is_secret``), the dataset, and mixing not checked (a sweep does not judge a Gibbs
    chain).

    Parameters
    ----------
    sweep : Sweep
    dataset : dpcore.data.Dataset, optional
    seed_is_secret : bool, default False

    Returns
    -------
    dpcore.lab.verdicts.RunContext
    """
    return RunContext(seed=None if seed_is_secret else sweep.seed, dataset=dataset, where="a sweep",
                      checks_mixing=False)


def plan_sweep(sweep, context=None, tasks=None, dataset=None):
    """The planned verdict of every run of ``sweep`` (:func:`dpcore.lab.verdicts.plan_run`),
    before any runs: what a budget checks.

    Parameters
    ----------
    sweep : Sweep
    context : dpcore.lab.verdicts.RunContext, optional
        Default :func:`sweep_context`.
    tasks : list of dict, optional
        Only these tasks (default: all of :meth:`Sweep.tasks`).
    dataset : dpcore.data.Dataset, optional
        The sweep's dataset, if already loaded.

    Returns
    -------
    list of dpcore.privacy.meter.Verdict
        One per task, in order.
    """
    sweep = sweep.validated()
    tasks = sweep.tasks() if tasks is None else tasks
    ds = dataset if dataset is not None else _dataset(json.dumps(sweep.dataset, sort_keys=True))
    context = context if context is not None else sweep_context(sweep, ds)
    out = []
    for task in tasks:
        entry = _task_method(task)
        est = entry.build(ds, params=task["algorithm"]["params"],
                          epsilon=task["epsilon"] if entry.private else None, delta=task["delta"])
        out.append(plan_run(entry, est, ds.X, context,
                            label=f"sweep: {task['algorithm']['label']}, ε = {task['epsilon']:g}, "
                                  f"trial {task['trial']}"))
    return out


def _check_budgets(accs, todo, ds):
    """Refuse a sweep whose private runs, as planned by their estimators, would take any of
    ``accs`` past its budget; nothing has run yet. A run its estimator plans as not private is
    listed apart by the accountant, so it is not counted."""
    events = []
    for _, task in todo:
        entry = _task_method(task)
        if not entry.private:
            continue
        est = entry.build(ds, params=task["algorithm"]["params"], epsilon=task["epsilon"], delta=task["delta"])
        plan = est.planned_privacy(ds.X)
        if plan.private:
            events += list(plan.events)
    if events:
        for acc in accs:
            acc.check(0.0, 0.0, relation=events[0].relation, events=events)


def _charge(acc, task, row):
    """Record one run of a worker process in ``acc``: its ledger's typed events, in its method's
    relation, private as its estimator said (as a fit in this process is recorded)."""
    events = row_events(row)
    if not events:
        return
    acc.record(events, relation=_task_method(task).relation,
               label=f"sweep: {row['algorithm']}, ε = {row['epsilon']:g}, trial {row['trial']}",
               private=bool(row["released_private"]),
               reason="" if row["released_private"] else (row.get("not_private") or "the fit released nothing private"))


def summarize(df: pd.DataFrame, metric: str, by=("algorithm", "epsilon")) -> pd.DataFrame:
    """Median, inter-quartile range and number of runs of ``metric`` per group of the
    columns ``by`` (default: per algorithm and ε; NaN ε of non-private methods is a group).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`run_sweep`.
    metric : str
        A column of ``df``.
    by : sequence of str, default ("algorithm", "epsilon")
        Grouping columns.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns plus "median", "q25", "q75" and "runs".

    Raises
    ------
    ValueError
        If ``metric`` is not a column of ``df``.
    """
    if metric not in df.columns:
        raise ValueError(f"metric must be a column of the results; got {metric!r}")
    g = df.groupby(list(by), dropna=False, sort=False)[metric]
    med = g.median()                                # cythonised quantiles (per-group lambdas: 0.1 s a figure);
    out = pd.DataFrame({"median": med.to_numpy(), "q25": g.quantile(0.25).to_numpy(),   # same group order:
                        "q75": g.quantile(0.75).to_numpy(), "runs": g.count().to_numpy()},  # by position, as
                       index=med.index)             # NaN keys (non-private ε) do not align by label
    return out.reset_index()


_RUN_EPSILON = "\x00ε\x00"     # stands for a run's own ε in a warning while warnings are grouped


def warning_summary(df: pd.DataFrame) -> list[dict]:
    """The distinct warnings of a sweep, each once, with the runs that gave it.

    Estimators put the run's ε into some warnings (sample-aggregate: "Theorem 3.1's utility
    bound assumes epsilon > … ; got epsilon = 0.1: …"), so a sweep gives the same warning once
    per ε. Here a run's own ε (written ``epsilon = {ε:g}`` or ``ε = {ε:g}``, as the estimators
    format it) is taken out before grouping and the group's ε values are put back as a list:
    one entry per warning, e.g. "… got epsilon = 0.1, 0.464, 2.15: …".

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`run_sweep` (columns "algorithm", "epsilon", "warnings"; a run's
        warnings joined by " | ").

    Returns
    -------
    list of dict
        In order of first appearance: "message" (the text, with the ε list), "algorithms"
        (labels, in order), "epsilons" (sorted, the private runs' ε that gave it), "runs"
        (number of runs) and "of" (number of runs of those algorithms).

    Raises
    ------
    ValueError
        If ``df`` lacks one of the columns above.
    """
    for col in ("algorithm", "epsilon", "warnings"):
        if col not in df.columns:
            raise ValueError(f"df must be a sweep's results with a {col!r} column")
    groups: dict[str, dict] = {}
    for alg, eps, text in zip(df["algorithm"], df["epsilon"], df["warnings"]):
        for msg in (m for m in str(text).split(" | ") if m and text == text):
            key = msg
            if isinstance(eps, (int, float)) and math.isfinite(eps):
                key = re.sub(r"(epsilon|ε) = " + re.escape(f"{eps:g}") + r"(?![\d.e])", r"\1 = " + _RUN_EPSILON, msg)
            g = groups.setdefault(key, {"algorithms": [], "epsilons": set(), "runs": 0})
            if alg not in g["algorithms"]:
                g["algorithms"].append(alg)
            if _RUN_EPSILON in key:
                g["epsilons"].add(float(eps))
            g["runs"] += 1
    out = []
    for key, g in groups.items():
        eps = sorted(g["epsilons"])
        out.append({"message": key.replace(_RUN_EPSILON, ", ".join(f"{float(f'{e:.3g}'):g}" for e in eps)),
                    "algorithms": g["algorithms"], "epsilons": eps, "runs": g["runs"],
                    "of": int(df["algorithm"].isin(g["algorithms"]).sum())})
    return out
