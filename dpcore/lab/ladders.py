"""ε ladders: a teaching preset's method run once at every ε of a fixed log-spaced ladder, so
that a page can answer "and at this ε?" at once, from the stored result.

A **ladder** belongs to one teaching preset of a page (the private presets of the Cluster page,
whose "Compare ε" section shows them; the k-means page's presets with an "ε side by side"
method; the Gibbs page's Fig. 3 presets). It is the preset's method, with the preset's
settings, on the preset's own dataset, fitted at every ε of :attr:`LadderSpec.epsilons` (1-2-5
steps per decade, up to the largest ε the page offers), built through the method catalogue
(:func:`dpcore.lab.methods.build_estimator`; the k-means ladders through
:func:`dpcore.lab.compare.compare_methods`, as the page) from a fixed, PUBLIC seed
(:data:`LADDER_SEED`, written into the file with the recipe of every rung's seed), so that
anyone can recompute it, noise included.

A ladder is therefore a **precomputed demonstration, not a private release**: what it shows
was computed from the data with a published seed, as the Paper figures page's reproductions
are. The pages say so beside it and record nothing of it in the privacy meter; a page's
"Run live" button runs the same method again at the chosen ε with secret noise, through the
page's own run path, and that run is charged as every run is.

Files
-----
One compressed ``.npz`` per ladder, ``<name>.npz`` in :data:`LADDER_DIR` (package data,
``dpcore/lab/ladder_data/``, a few hundred kB each at most): the arrays of every rung, stored
small (labels as int8, subspaces, centres and traces as float32, Gibbs traces thinned to at
most :attr:`LadderSpec.max_points` sweeps per chain, the last sweep kept), and ``meta``, a JSON
text with the spec, the seed and its recipe, the dataset's fingerprint (SHA-256 of its points),
the library versions, the commit, the date, the machine's CPU count and the **seconds of every
rung** (what a page's "Run live" button quotes as the time a live run takes, "measured when the
ladder was built"). :func:`load_ladder` refuses a file whose format, spec or dataset no longer
matches the code (a page then builds the ladder anew).

Built by ``python -m dpcore.lab.ladders build [--preset NAME ...] [--out DIR]`` (all of them:
a few minutes on 2 cores, most of it the Gibbs ladders); ``python -m dpcore.lab.ladders list``
lists them. Streamlit-free: the app's side is ``ui/ladder.py``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..data import PAPER_SPECS, load_dataset
from .methods import build_estimator, get_method, run_seed

__all__ = ["FORMAT", "LADDER_SEED", "LADDER_DIR", "CLUSTER_EPSILONS", "KMEANS_EPSILONS", "GIBBS_EPSILONS",
           "GIBBS_TRACES", "LadderSpec", "Ladder", "LADDERS", "find_ladder", "build_ladder", "save_ladder",
           "load_ladder", "ladder_path", "dataset_fingerprint", "main"]

#: version of the file layout (a file of another version is refused by :func:`load_ladder`)
FORMAT = 1
#: the public root seed of every ladder (recorded in each file with the recipe of each rung's seed)
LADDER_SEED = 0
#: where the shipped ladders live (package data)
LADDER_DIR = Path(__file__).resolve().parent / "ladder_data"


def _ladder(lo_exp, hi_exp, top=None):
    """1-2-5 steps per decade from 10**lo_exp up to 5·10**hi_exp, then ``top``."""
    values = [round(m * 10.0 ** e, 10) for e in range(lo_exp, hi_exp + 1) for m in (1, 2, 5)]
    return tuple(values + ([float(top)] if top is not None else []))


#: the Cluster page's ladder: its ε slider's grid, 0.01 … 1000 (ui.cluster.EPSILON_GRID)
CLUSTER_EPSILONS = _ladder(-2, 2, 1000)
#: the k-means page's ladder: the ε values it offers side by side, 0.01 … 100 (ui.kmeans.EPS_LADDER)
KMEANS_EPSILONS = _ladder(-2, 1, 100)
#: the Gibbs page's ladder: Fig. 3's ε (0.1, 1, 10, 100) and the 1-2-5 steps between, one decade on, 0.1 … 1000
GIBBS_EPSILONS = _ladder(-1, 2, 1000)
#: the Gibbs traces a ladder keeps (those the page draws)
GIBBS_TRACES = ("statistic", "cost", "dw", "accuracy")
#: the subspace metrics kept per rung, in this order (the Cluster page's words)
SUBSPACE_METRICS = ("accuracy", "NMI", "d_W to truth", "k-means subspace cost (eq. 3)")


# ----------------------------------------------------------------------------- specs
def _canon(x):
    """A value in a canonical form for comparison: numbers as floats, tuples as lists, dict keys sorted."""
    if isinstance(x, dict):
        return {str(k): _canon(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_canon(v) for v in x]
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(x, str):
        return bool(x) if isinstance(x, np.bool_) else x
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    return x


@dataclass(frozen=True)
class LadderSpec:
    """What one ladder is: a page's preset, its method, data and settings, and the ε ladder.

    Attributes
    ----------
    name : str
        File stem and key of :data:`LADDERS`.
    page : {"cluster", "kmeans", "gibbs"}
        The page whose preset it is (and how its runs are made and stored).
    preset : str
        The preset's label on that page.
    method : str
        The catalogue name of the method (:data:`dpcore.lab.methods.METHODS`).
    dataset : dict
        The dataset spec (keyword arguments of :func:`dpcore.data.load_dataset`).
    params : dict
        The method's settings as the page passes them. "cluster": constructor parameters
        (``n_clusters``, ``subspace_dim`` and the method's own); "gibbs": the sampler's
        constructor parameters; "kmeans": ``n_clusters``, ``radius``, ``delta`` and
        ``options`` (method -> constructor options) of :func:`dpcore.lab.compare.compare_methods`.
    epsilons : tuple of float
        The ladder, increasing.
    reference : str or None, default None
        "cluster": the non-private solver drawn beside the private one (catalogue name).
    seed : int, default LADDER_SEED
        The public root seed.
    max_points : int, default 200
        "gibbs": most sweeps kept per chain (evenly spaced, the last kept).
    """
    name: str
    page: str
    preset: str
    method: str
    dataset: dict = field(hash=False)
    params: dict = field(hash=False)
    epsilons: tuple
    reference: str | None = None
    seed: int = LADDER_SEED
    max_points: int = 200

    def __post_init__(self):
        if self.page not in ("cluster", "kmeans", "gibbs"):
            raise ValueError(f"page must be 'cluster', 'kmeans' or 'gibbs'; got {self.page!r}")
        eps = tuple(float(e) for e in self.epsilons)
        if not eps or any(not (math.isfinite(e) and e > 0) for e in eps) or list(eps) != sorted(set(eps)):
            raise ValueError(f"epsilons must be increasing finite values > 0; got {self.epsilons!r}")
        object.__setattr__(self, "epsilons", eps)

    def as_dict(self) -> dict:
        """The spec as plain data (what the file records).

        Returns
        -------
        dict
        """
        return {"name": self.name, "page": self.page, "preset": self.preset, "method": self.method,
                "dataset": dict(self.dataset), "params": json.loads(json.dumps(self.params)),
                "epsilons": list(self.epsilons), "reference": self.reference, "seed": self.seed,
                "max_points": self.max_points}

    def matches(self, page, method, dataset, params) -> bool:
        """Whether a page's settings are this ladder's (numbers compared as floats).

        Parameters
        ----------
        page, method : str
        dataset, params : dict
            As :attr:`dataset` and :attr:`params`.

        Returns
        -------
        bool
        """
        return (page == self.page and method == self.method and _canon(dataset) == _canon(self.dataset)
                and _canon(params) == _canon(self.params))


def _kmeans_options(method, projection_dim, candidate=0.4, localswap=0.1, refine_iter=0):
    """The options the k-means page passes for the candidate set (its defaults, split as it computes it)."""
    split = {"candidate": candidate, "localswap": localswap, "recovery": 1.0 - candidate - localswap}
    return {method: {"projection_dim": projection_dim, "refine_iter": refine_iter, "budget_split": split}}


def _subspace(name, preset, method, dataset, k, q, reference, **params):
    return LadderSpec(name, "cluster", preset, method, dict(dataset), {"n_clusters": k, "subspace_dim": q, **params},
                      CLUSTER_EPSILONS, reference=reference)


def _kmeans(name, preset, dataset, k, radius, projection_dim, method="candidate_kmeans"):
    return LadderSpec(name, "kmeans", preset, method, dict(dataset),
                      {"n_clusters": k, "radius": radius, "delta": 1e-6,
                       "options": _kmeans_options(method, projection_dim)}, KMEANS_EPSILONS)


def _gibbs(name, preset, n_iter, n_chains, init):
    return LadderSpec(name, "gibbs", preset, "gibbs", dict(PAPER_SPECS["fig2_middle"]),
                      {"n_clusters": 3, "subspace_dim": 3, "n_iter": n_iter, "n_chains": n_chains, "init": init,
                       "release": "sample", "n_average": min(100, n_iter), "select": "first"}, GIBBS_EPSILONS)


_SA = {"n_subsets": None}
_SULQ10 = {"n_iter": 10, "composition": "advanced"}
_GAUSS8 = dict(PAPER_SPECS["gaussians"])
_GAUSS64 = {**PAPER_SPECS["gaussians"], "n": 20_000, "d": 100, "k": 64}

#: every shipped ladder, by name (the presets' labels are the pages')
LADDERS: dict[str, LadderSpec] = {s.name: s for s in [
    _subspace("cluster-fig2-sulq10", "Paper Fig. 2: SuLQ-10 at ε = 10", "sulq_kplane", PAPER_SPECS["fig2_middle"],
              3, 3, "kplane", **_SULQ10),
    _subspace("cluster-fig2-sa-tsc", "Paper Fig. 2: sample-aggregate (TSC) at ε = 1000", "sample_aggregate",
              PAPER_SPECS["fig2_middle"], 3, 3, "tsc", solver="tsc", **_SA),
    _subspace("cluster-lines-sa", "Three lines in R³: sample-aggregate at ε = 100 (private)", "sample_aggregate",
              PAPER_SPECS["lines_r3"], 3, 1, "kplane", solver="kplane", **_SA),
    _subspace("cluster-planes-sulq", "Two planes in R³: SuLQ k-plane at ε = 100 (private)", "sulq_kplane",
              PAPER_SPECS["planes_r3"], 2, 2, "kplane", **_SULQ10),
    _subspace("cluster-circle-sa", "Points on a circle (Fig. 1): sample-aggregate at ε = 100 (private)",
              "sample_aggregate", PAPER_SPECS["circle"], 2, 1, "kplane", solver="kplane", **_SA),
    _subspace("cluster-lines-r2-sa", "Two lines in R² (Fig. 1's contrast): sample-aggregate at ε = 100 (private)",
              "sample_aggregate", PAPER_SPECS["lines_r2"], 2, 1, "kplane", solver="kplane", **_SA),
    _kmeans("kmeans-8-gaussians", "ε side by side: 8 Gaussians in R^50, ε = 0.1 to 100", _GAUSS8, 8, 10.0, 5),
    _kmeans("kmeans-64-gaussians", "64 Gaussians in R^100 (§7: n = 20,000, k = 16, ε = 1)", _GAUSS64, 16, 14.0, 5),
    _kmeans("kmeans-yaleb", "Yale B faces, 5 subjects", PAPER_SPECS["yaleb_5"], 5, 1.0, 3),
    _gibbs("gibbs-fig3-random", "Paper Fig. 3 mixing (random start, 1,000 sweeps)", 1000, 8, "random"),
    _gibbs("gibbs-fig3-kplane", "Paper Fig. 3 from the k-plane start (NOT private)", 1000, 8, "kplane"),
    _gibbs("gibbs-quick-look", "Quick look: ε = 1 and 10, 200 sweeps", 200, 4, "random"),
]}


def find_ladder(page, method, dataset, params, ladders=None):
    """The ladder of a page's current settings, or None when they are no preset's.

    Parameters
    ----------
    page : {"cluster", "kmeans", "gibbs"}
    method : str
        Catalogue name.
    dataset : dict
        The page's dataset spec.
    params : dict
        The page's settings, in the form of :attr:`LadderSpec.params` (without ε and the seed).
    ladders : dict, optional
        Where to look (default :data:`LADDERS`).

    Returns
    -------
    LadderSpec or None
    """
    for spec in (LADDERS if ladders is None else ladders).values():
        if spec.matches(page, method, dataset, params):
            return spec
    return None


# ----------------------------------------------------------------------------- a built ladder
@dataclass
class Ladder:
    """A built ladder: its spec, the record of its build and the arrays of every rung.

    Attributes
    ----------
    spec : LadderSpec
    meta : dict
        Seed and seed recipe, dataset fingerprint, versions, commit, date, CPU count,
        ``seconds`` (fit time of every rung, in the order of the ε), ``reference_seconds``,
        ``ledger`` ((ε, δ) a live run of every rung would spend) and, for Gibbs, ``verdicts``.
    arrays : dict of str to numpy.ndarray
        Per-rung arrays have the rungs on their first axis.
    """
    spec: LadderSpec
    meta: dict
    arrays: dict

    @property
    def epsilons(self) -> tuple:
        """The ladder's ε values.

        Returns
        -------
        tuple of float
        """
        return self.spec.epsilons

    def index(self, epsilon) -> int:
        """The rung of ``epsilon``.

        Parameters
        ----------
        epsilon : float

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If ``epsilon`` is not on the ladder.
        """
        for i, e in enumerate(self.epsilons):
            if math.isclose(e, float(epsilon), rel_tol=1e-9):
                return i
        raise ValueError(f"epsilon must be one of the ladder's values {', '.join(f'{e:g}' for e in self.epsilons)}; "
                         f"got {epsilon!r}")

    def rung(self, epsilon) -> dict:
        """The arrays of one rung (first axis dropped), the shared arrays, and its record.

        Parameters
        ----------
        epsilon : float
            A value of the ladder.

        Returns
        -------
        dict
            Array name -> array; plus ``epsilon``, ``seconds``, ``ledger`` ((ε, δ)) and, for a
            Gibbs ladder, ``verdict`` (dict: mixed, frozen, text, rule).
        """
        i = self.index(epsilon)
        out = {k: (v[i] if k in self.meta["per_rung"] else v) for k, v in self.arrays.items()}
        out.update(epsilon=self.epsilons[i], seconds=float(self.meta["seconds"][i]),
                   ledger=tuple(self.meta["ledger"][i]))
        if "verdicts" in self.meta:
            out["verdict"] = dict(self.meta["verdicts"][i])
        return out

    def live_seconds(self, epsilon) -> float:
        """What a live run of one rung took when the ladder was built: the rung's fit and the
        non-private reference the page runs with it.

        Parameters
        ----------
        epsilon : float

        Returns
        -------
        float
        """
        return float(self.meta["seconds"][self.index(epsilon)]) + float(self.meta.get("reference_seconds", 0.0))


# ----------------------------------------------------------------------------- building
def dataset_fingerprint(X) -> str:
    """SHA-256 (hex, first 16 digits) of a dataset's points as float64, C order.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix

    Returns
    -------
    str
    """
    import hashlib
    import scipy.sparse as sp

    h = hashlib.sha256()
    if sp.issparse(X):
        X = X.tocsr()
        for part in (X.data.astype(np.float64), X.indices.astype(np.int64), X.indptr.astype(np.int64)):
            h.update(np.ascontiguousarray(part).tobytes())
        h.update(repr(X.shape).encode())
    else:
        A = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
        h.update(A.tobytes())
        h.update(repr(A.shape).encode())
    return h.hexdigest()[:16]


def _rng(spec, epsilon, what=""):
    """The Generator of one run: run_seed(seed, name + what, ε, 0) (the recipe in the file)."""
    return np.random.default_rng(run_seed(spec.seed, spec.name + what, epsilon, 0))


def _versions():
    import importlib.metadata as md

    from .. import __version__
    out = {"dpcore": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scipy", "scikit-learn", "numba", "diffprivlib"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    return out


def _subspace_metrics(ds, model):
    from ..metrics import clustering_accuracy, nmi, subspace_cost, wasserstein_distance

    U = model.subspaces_
    acc = clustering_accuracy(ds.labels, model.labels_) if ds.labels is not None else math.nan
    mi = nmi(ds.labels, model.labels_) if ds.labels is not None else math.nan
    dw = (wasserstein_distance(U, ds.subspaces) if ds.subspaces is not None and ds.subspaces.shape == U.shape
          else math.nan)
    return [acc, mi, dw, subspace_cost(ds.X, U)]


def _labels(labels):
    labels = np.asarray(labels)
    if labels.min() < -128 or labels.max() > 127:
        raise ValueError("a ladder stores labels as int8: at most 127 clusters")
    return labels.astype(np.int8)


def _build_cluster(spec, ds, report):
    R = len(spec.epsilons)
    labels, subspaces, metrics, seconds, ledger = [], [], [], [], []
    for i, eps in enumerate(spec.epsilons):
        report(i, f"ε = {eps:g}")
        est = build_estimator(spec.method, None, spec.params, epsilon=eps, random_state=_rng(spec, eps))
        t0 = time.perf_counter()
        est.fit(ds.X)
        seconds.append(time.perf_counter() - t0)
        labels.append(_labels(est.labels_))
        subspaces.append(np.asarray(est.subspaces_, dtype=np.float32))
        metrics.append(_subspace_metrics(ds, est))
        ledger.append(list(est.ledger_.total()))
    report(R, "the non-private reference")
    ref_params = {"n_clusters": spec.params["n_clusters"], "subspace_dim": spec.params["subspace_dim"]}
    ref = build_estimator(spec.reference, None, ref_params, random_state=_rng(spec, math.nan, " reference"))
    t0 = time.perf_counter()
    ref.fit(ds.X)
    ref_seconds = time.perf_counter() - t0
    arrays = {"labels": np.stack(labels), "subspaces": np.stack(subspaces),
              "metrics": np.asarray(metrics, dtype=np.float64), "ref_labels": _labels(ref.labels_),
              "ref_subspaces": np.asarray(ref.subspaces_, dtype=np.float32),
              "ref_metrics": np.asarray(_subspace_metrics(ds, ref), dtype=np.float64)}
    meta = {"per_rung": ["labels", "subspaces", "metrics"], "metrics": list(SUBSPACE_METRICS),
            "reference_seconds": ref_seconds, "reference_label": get_method(spec.reference).label,
            "seed_recipe": ("rung at ε: random_state = numpy.random.default_rng(dpcore.lab.methods.run_seed(seed, "
                            "name, ε, 0)); the non-private reference: run_seed(seed, name + ' reference', nan, 0)")}
    return arrays, meta, seconds, ledger


def _build_kmeans(spec, ds, report):
    from ..preprocessing import normalize_rows
    from .compare import compare_methods

    X = normalize_rows(ds.X) if ds.kind == "counts" else ds.X
    p = spec.params
    centres, objective, ratio, kmedian_ratio, seconds, ledger = [], [], [], [], [], []
    ref = first = None
    for i, eps in enumerate(spec.epsilons):
        report(i, f"ε = {eps:g}")
        cmp = compare_methods(X, p["n_clusters"], eps, p["radius"], [spec.method], p["delta"], p["options"],
                              random_state=spec.seed, trial=0)
        r = cmp.results[0]
        first = first or cmp
        ref = ref or cmp.reference
        centres.append(np.asarray(r.centres, dtype=np.float32))
        objective.append(r.objective)
        ratio.append(r.objective / ref.objective)
        kmedian_ratio.append(r.kmedian_objective / ref.kmedian_objective)
        seconds.append(r.seconds)
        ledger.append(list(r.estimator.ledger_.total()))
    arrays = {"centres": np.stack(centres), "objective": np.asarray(objective), "ratio": np.asarray(ratio),
              "kmedian_ratio": np.asarray(kmedian_ratio), "ref_centres": np.asarray(ref.centres, dtype=np.float32),
              "ref_objective": np.asarray(ref.objective)}
    meta = {"per_rung": ["centres", "objective", "ratio", "kmedian_ratio"], "reference_seconds": ref.seconds,
            "reference_label": ref.label, "radius": first.radius, "n_clipped": int(first.n_clipped),
            "seed_recipe": ("as dpcore.lab.compare.compare_methods(random_state=seed, trial=0) at every ε: the method "
                            "from run_seed(seed, method, ε, 0), k-means++ from run_seed(seed, 'kmeanspp', nan, 0)")}
    return arrays, meta, seconds, ledger


def _thin_index(T, max_points):
    step = max(1, math.ceil(T / max_points))
    idx = np.arange(0, T, step)
    return idx if idx[-1] == T - 1 else np.append(idx, T - 1)


def _build_gibbs(spec, ds, report):
    from ..metrics import clustering_accuracy, wasserstein_distance
    from ..subspace.diagnostics import mixing_verdict

    p = spec.params
    truth = ds.subspaces if ds.subspaces is not None and ds.subspaces.shape == (
        p["n_clusters"], ds.d, p["subspace_dim"]) else None
    traces = {name: [] for name in GIBBS_TRACES}
    burn_in, released, summary, seconds, ledger, verdicts, ms = [], [], [], [], [], [], []
    idx = None
    for i, eps in enumerate(spec.epsilons):
        report(i, f"ε = {eps:g}")
        est = build_estimator("gibbs", None, p, epsilon=eps, random_state=_rng(spec, eps))
        t0 = time.perf_counter()
        est.fit(ds.X, ds.labels, truth)
        seconds.append(time.perf_counter() - t0)
        T = est.traces_["cost"].shape[1]
        idx = _thin_index(T, spec.max_points) if idx is None else idx
        for name in GIBBS_TRACES:
            if name in est.traces_:
                traces[name].append(np.asarray(est.traces_[name], dtype=np.float32)[:, idx])
        v = mixing_verdict(est.traces_, est.burn_in_)
        verdicts.append({"mixed": bool(v["mixed"]), "frozen": bool(v["frozen"]), "text": v["text"],
                         "rule": v["rule"]})
        burn_in.append(int(est.burn_in_))
        released.append(int(est.selected_chain_))
        dw = wasserstein_distance(est.subspaces_, truth) if truth is not None else math.nan
        acc = clustering_accuracy(ds.labels, est.labels_) if ds.labels is not None else math.nan
        summary.append([est.cost_, dw, acc])
        ms.append(1e3 * est.seconds_per_sweep_)
        ledger.append(list(est.ledger_.total()))
    arrays = {f"trace_{name}": np.stack(v) for name, v in traces.items() if v}
    arrays.update(sweeps=(idx + 1).astype(np.int32), burn_in=np.asarray(burn_in, dtype=np.int32),
                  released=np.asarray(released, dtype=np.int32), summary=np.asarray(summary, dtype=np.float64),
                  ms_per_sweep=np.asarray(ms, dtype=np.float64))
    meta = {"per_rung": [k for k in arrays if k.startswith("trace_")] + ["burn_in", "released", "summary",
                                                                         "ms_per_sweep"],
            "summary": ["cost of the released sample", "d_W of the released sample",
                        "accuracy of the released labels"], "verdicts": verdicts, "n_iter": int(p["n_iter"]),
            "seed_recipe": "rung at ε: random_state = numpy.random.default_rng(dpcore.lab.methods.run_seed(seed, "
                           "name, ε, 0))"}
    return arrays, meta, seconds, ledger


_BUILDERS = {"cluster": _build_cluster, "kmeans": _build_kmeans, "gibbs": _build_gibbs}


def build_ladder(spec, progress=None) -> Ladder:
    """Fit the spec's method at every ε of its ladder, with its public seed.

    Parameters
    ----------
    spec : LadderSpec or str
        A spec, or the name of one of :data:`LADDERS`.
    progress : callable, optional
        ``progress(done, total, text)``: ``done`` rungs of ``total`` are built (the
        reference, where there is one, counts as the last), ``text`` says what runs now.

    Returns
    -------
    Ladder

    Raises
    ------
    ValueError
        For an unknown name, a dataset or a parameter the library refuses.
    """
    spec = _spec(spec)
    ds = load_dataset(**spec.dataset)
    total = len(spec.epsilons) + (spec.page == "cluster")

    def report(done, text):
        if progress is not None:
            progress(done, total, text)

    t0 = time.perf_counter()
    # one untimed run of the first rung first: the seconds recorded are a run's, not the process's warm-up
    # (numba's kernels loaded, caches filled), which a live run on a warm server does not pay
    report(0, "warming up")
    _BUILDERS[spec.page](replace(spec, epsilons=spec.epsilons[:1]), ds, lambda done, text: None)
    warm = time.perf_counter() - t0
    arrays, meta, seconds, ledger = _BUILDERS[spec.page](spec, ds, report)
    report(total, "done")
    meta.update(format=FORMAT, spec=spec.as_dict(), seed=spec.seed, fingerprint=dataset_fingerprint(ds.X),
                dataset_name=ds.name, n=int(ds.n), d=int(ds.d), seconds=[float(s) for s in seconds],
                ledger=[[float(e), float(d)] for e, d in ledger],
                built=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                build_seconds=time.perf_counter() - t0, warm_up_seconds=warm, versions=_versions(),
                cpus=os.cpu_count(), method_label=get_method(spec.method).label)
    try:
        from .gallery import code_version
        meta.update(code_version())
    except Exception:  # noqa: BLE001 - the record is informative; a build does not fail for want of git
        meta.update(commit=None, dirty=None)
    return Ladder(spec, meta, arrays)


def _spec(spec):
    if isinstance(spec, LadderSpec):
        return spec
    if spec not in LADDERS:
        raise ValueError(f"ladder must be one of {', '.join(LADDERS)}; got {spec!r}")
    return LADDERS[spec]


# ----------------------------------------------------------------------------- files
def ladder_path(spec, directory=None) -> Path:
    """The file of a ladder.

    Parameters
    ----------
    spec : LadderSpec or str
    directory : path-like, optional
        Default :data:`LADDER_DIR`.

    Returns
    -------
    pathlib.Path
    """
    return Path(directory or LADDER_DIR) / f"{_spec(spec).name}.npz"


def save_ladder(ladder, directory=None) -> Path:
    """Write a built ladder to ``<directory>/<name>.npz`` (compressed).

    Parameters
    ----------
    ladder : Ladder
    directory : path-like, optional
        Default :data:`LADDER_DIR` (created if missing).

    Returns
    -------
    pathlib.Path
        The file written.
    """
    path = ladder_path(ladder.spec, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez_compressed(tmp, meta=np.array(json.dumps(ladder.meta, sort_keys=True)), **ladder.arrays)
    os.replace(tmp, path)
    return path


def load_ladder(spec, directory=None, verify=True) -> Ladder:
    """Read a ladder's file and check it still describes what the code would build.

    Parameters
    ----------
    spec : LadderSpec or str
    directory : path-like, optional
        Default :data:`LADDER_DIR`.
    verify : bool, default True
        Also load the spec's dataset and compare its fingerprint with the file's.

    Returns
    -------
    Ladder

    Raises
    ------
    FileNotFoundError
        If there is no file.
    ValueError
        If the file's format, spec or dataset is not the code's (the ladder must be built anew).
    """
    spec = _spec(spec)
    path = ladder_path(spec, directory)
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        arrays = {k: z[k] for k in z.files if k != "meta"}
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path.name}: format {meta.get('format')!r}, this code reads format {FORMAT}")
    if _canon(meta.get("spec")) != _canon(spec.as_dict()):
        raise ValueError(f"{path.name} was built for other settings than the code's ladder {spec.name!r}")
    if verify:
        found = dataset_fingerprint(load_dataset(**spec.dataset).X)
        if found != meta.get("fingerprint"):
            raise ValueError(f"{path.name} was built on other data than the dataset {spec.dataset} gives now")
    return Ladder(spec, meta, arrays)


# ----------------------------------------------------------------------------- the command
def main(argv=None) -> int:
    """``python -m dpcore.lab.ladders build [--preset NAME ...] [--out DIR]`` or ``list``.

    Parameters
    ----------
    argv : list of str, optional

    Returns
    -------
    int
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m dpcore.lab.ladders",
                                     description="Build the ε ladders of the pages' teaching presets.")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build ladders and write them (default: all, into the package data)")
    b.add_argument("--preset", action="append", choices=list(LADDERS), metavar="NAME",
                   help="a ladder's name (repeatable; default: all of them)")
    b.add_argument("--out", default=None, help=f"folder to write into (default: {LADDER_DIR})")
    sub.add_parser("list", help="list the ladders and whether their files are present and current")
    args = parser.parse_args(argv)
    if args.command == "list":
        for name, spec in LADDERS.items():
            try:
                lad = load_ladder(spec, verify=False)
                state = f"built {lad.meta['built']}, {sum(lad.meta['seconds']):.1f} s of fits"
            except FileNotFoundError:
                state = "missing"
            except ValueError as exc:
                state = f"stale ({exc})"
            print(f"{name:24s} {spec.page:8s} {len(spec.epsilons):2d} rungs  {state}")
        return 0
    for name in args.preset or list(LADDERS):
        spec = LADDERS[name]
        t0 = time.perf_counter()

        def progress(done, total, text, name=name):
            print(f"  {name}: {done}/{total} {text}", flush=True)

        lad = build_ladder(spec, progress)
        path = save_ladder(lad, args.out)
        per = ", ".join(f"{e:g}: {s:.2f}" for e, s in zip(spec.epsilons, lad.meta["seconds"]))
        print(f"{name}: wrote {path} ({path.stat().st_size / 1024:.0f} kB) in {time.perf_counter() - t0:.1f} s; "
              f"seconds per rung {per}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
