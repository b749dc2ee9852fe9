"""Run several k-means methods on one dataset and compare their objectives with k-means++
(what the k-means page and ``benchmarks/bench_kmeans.py`` show).

Every method is built through the method catalogue (:mod:`dpcore.lab.methods`) with the same
k, ε, δ and public radius Λ, and gets its own seed from the one seed recipe
(:func:`dpcore.lab.methods.run_seed` of ``random_state``, the method's catalogue name, ε and
the trial). The objectives are computed on the clipped points (the data every private method
actually clusters) and are evaluation only: not private.

One name per method: the comparison's methods are named by their catalogue names
(:data:`METHODS`: ``candidate_kmeans``, ``sulq_kmeans``, ``sa_kmeans``, ``dplloyd``,
``lsh_coreset``, ...), as everywhere else (presets, pages, links). The comparison's own keys
of earlier versions ("candidate", "sulq", "sample_aggregate", "lsh") are still accepted
(:data:`OLD_KEYS`) and give the same runs.

Whether a run is private, and what it spends, is not decided here:
:func:`plan_comparison` asks :func:`dpcore.lab.verdicts.plan_run` for every estimator the
comparison will fit, and :func:`judge_comparison` asks :func:`dpcore.lab.verdicts.judge_run`
for every fitted one.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..validation import check_epsilon, check_int
from ..metrics import kmeans_objective, kmedian_objective
from ..preprocessing import clip_rows
from ..kmeans.common import check_points, data_radius, resolve_radius
from ..data import MAX_DENSE_CELLS
from .methods import SPARSITY, build_estimator, get_method, preset, run_seed
from .verdicts import RunContext, judge_run, plan_run

__all__ = ["METHODS", "OLD_KEYS", "LSH_PRESET", "REFERENCE", "MethodResult", "Comparison", "compare_methods",
           "method_name", "comparison_estimators", "plan_comparison", "judge_comparison"]

#: the catalogue preset of today's practical peer (not in the paper): Google's LSH-coreset k-means
LSH_PRESET = "LSH coreset"
_LSH = preset(LSH_PRESET)
#: the comparison's own method keys of earlier versions (old links, old callers) -> catalogue names
OLD_KEYS = {"candidate": "candidate_kmeans", "sulq": "sulq_kmeans", "sample_aggregate": "sa_kmeans",
            "lsh": _LSH["name"]}
#: fixed parameters of a method's catalogue preset (applied before k, Λ and the user's options)
_PRESET_PARAMS = {_LSH["name"]: _LSH["params"]}
#: the catalogue name of the non-private reference
REFERENCE = "kmeanspp"
#: what the comparison says of each method (the catalogue's label; a longer description), by catalogue name
_ABOUT = {
    "candidate_kmeans": "Balcan et al. 2017, Alg. 1-4: private candidate centres in a JL projection, local swaps by the "
                 "exponential mechanism, noisy means in R^d",
    "candidate_sparse": "the same, with centres kept s-sparse by Alg. 5 (for sparse data such as documents)",
    "candidate_kmedian": "the same candidate set and local search for the k-median loss, private 1-medians",
    "sulq_kmeans": "Blum et al. 2005: 20 private Lloyd iterations from a random start in the public box "
            "[−Λ/√d, Λ/√d]^d (the paper's start in the data's box, at a public scale)",
    "sa_kmeans": "Nissim et al. 2007: k-means on random subsets, the most central solution released with "
                        "smooth-sensitivity noise",
    "dplloyd": "diffprivlib's DP k-means (Su et al. 2016) with public bounds [−Λ, Λ] and a public number of "
               "iterations (2 unless set; never read off n)",
    _LSH["name"]: "today's practical peer, not in the paper: Google's open-source private k-means (2021) - an LSH tree "
           "with noisy counts, a private coreset of noisy leaf means, k-means++ on the coreset",
}
#: catalogue name -> (label, short description): the methods a comparison can run
METHODS = {name: (get_method(name).label, about) for name, about in _ABOUT.items()}


def method_name(key):
    """The catalogue name of a comparison method: ``key`` itself, or the name an old key
    (:data:`OLD_KEYS`) stands for.

    Parameters
    ----------
    key : str

    Returns
    -------
    str
        A key of :data:`METHODS`.

    Raises
    ------
    ValueError
        If ``key`` names no comparison method.
    """
    name = OLD_KEYS.get(key, key)
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {key!r}")
    return name


@dataclass
class MethodResult:
    """One method's run in :func:`compare_methods`.

    Attributes
    ----------
    key : str
        The method's catalogue name, a key of :data:`METHODS` ("kmeans++" for the reference).
    label : str
        Display name.
    estimator : object
        The fitted estimator.
    centres : ndarray of shape (k, d)
        The released centres.
    objective : float
        k-means objective on the clipped points (evaluation only, not private).
    kmedian_objective : float
        k-median objective on the clipped points.
    ratio : float, default nan
        ``objective`` / the reference's.
    kmedian_ratio : float, default nan
        ``kmedian_objective`` / the reference's.
    seconds : float, default 0.0
        Fit time.
    private : bool, default True
        Whether the fit released anything private, by the estimator's own record
        (``released_private_``: False with Λ read off the data, and for the DP-Lloyd peer,
        whose floating-point noise is not private as executed); False for the reference. A
        public seed is not seen here: :func:`judge_comparison` gives each run's verdict.
    """
    key: str
    label: str
    estimator: object
    centres: np.ndarray
    objective: float
    kmedian_objective: float
    ratio: float = float("nan")
    kmedian_ratio: float = float("nan")
    seconds: float = 0.0
    private: bool = True


@dataclass
class Comparison:
    """Output of :func:`compare_methods`: the k-means++ reference and one result per method.

    Attributes
    ----------
    reference : MethodResult
        The k-means++ run.
    results : list of MethodResult
        One per method, in the order asked.
    radius : float, default 0.0
        The Λ used.
    radius_from_data : bool, default False
        True when Λ was computed from the data (nothing is private then).
    n_clipped : int, default 0
        Rows changed by clipping to Λ.
    """
    reference: MethodResult
    results: list = field(default_factory=list)
    radius: float = 0.0
    radius_from_data: bool = False
    n_clipped: int = 0

    def ratios(self):
        """Objective ratio of every method to k-means++.

        Returns
        -------
        dict
            Label -> ratio.
        """
        return {r.label: r.ratio for r in self.results}


#: a reference objective at most this × the mean squared norm of the points is an exact fit
EXACT_FIT_RTOL = 1e-12


def _check_reference(ref, Xc, k):
    """Refuse data that k-means++ fits exactly (at most k distinct points, e.g. identical rows):
    every ratio to its objective would divide by (nearly) zero."""
    sq = Xc.multiply(Xc).sum() if sp.issparse(Xc) else float(np.square(Xc).sum())
    if ref.objective > EXACT_FIT_RTOL * max(sq / Xc.shape[0], np.finfo(float).tiny):
        return
    dense = Xc.toarray() if sp.issparse(Xc) else np.asarray(Xc)
    m = len(np.unique(dense, axis=0))
    what = "all rows are the same point" if m == 1 else f"only {m} distinct points"
    todo = ("Choose data whose rows differ: one point is fitted exactly by any k" if m == 1 else
            f"Choose fewer clusters than distinct points (k < {m})")
    raise ValueError(f"k-means++ fits these data exactly ({what}, k = {k}): its objective is 0, so no method can be "
                     f"compared with it (every ratio would divide by 0). {todo}.")


def _build(name, k, epsilon, delta, radius, opts, seed):
    """The unfitted estimator of comparison method ``name`` (a catalogue name), through the
    catalogue: k, ε, δ (where the method takes one), the radius Λ (a number or "data"; DP-Lloyd
    clips its rows to it) and the method's options from ``opts``."""
    params = {**_PRESET_PARAMS.get(name, {}), "n_clusters": k, "radius": radius}
    if name == "candidate_sparse":
        params["sparsity"] = SPARSITY
    if name == "dplloyd":
        params["row_map"] = "clip"
    params.update(opts.get(name, {}))
    return build_estimator(name, None, params, epsilon=epsilon, delta=delta, random_state=seed)


def _options(options):
    """The options by catalogue name (an old key's options under its catalogue name)."""
    return {OLD_KEYS.get(key, key): dict(value) for key, value in (options or {}).items()}


def comparison_estimators(n_clusters, epsilon, radius, methods=("candidate_kmeans", "sulq_kmeans"), delta=1e-6,
                          options=None):
    """The unfitted estimators :func:`compare_methods` fits with these settings (without their
    seeds), by catalogue name: what :func:`plan_comparison` plans.

    Parameters
    ----------
    n_clusters : int
    epsilon : float > 0
    radius : float > 0 or "data"
    methods : sequence of str, default ("candidate_kmeans", "sulq_kmeans")
        Catalogue names (keys of :data:`METHODS`; old keys are accepted).
    delta : float, default 1e-6
    options : dict, optional
        Method -> extra constructor parameters.

    Returns
    -------
    list of (str, estimator)

    Raises
    ------
    ValueError
        For an unknown method.
    """
    opts = _options(options)
    return [(name, _build(name, n_clusters, epsilon, delta, radius, opts, None))
            for name in (method_name(m) for m in methods)]


def plan_comparison(X, n_clusters, epsilon, radius, methods=("candidate_kmeans", "sulq_kmeans"), delta=1e-6,
                    options=None, context=RunContext(), labels=None):
    """The planned verdicts of a comparison (:func:`dpcore.lab.verdicts.plan_run`), one per
    method: what a budget reserves before :func:`compare_methods` runs, and whether each run
    will be private (not with Λ read off the data, a public seed, or the DP-Lloyd peer's
    floating-point noise).

    Parameters
    ----------
    X : array_like or tuple (n, d)
        The data or its shape (only the shape is read).
    n_clusters, epsilon, radius, methods, delta, options
        As :func:`compare_methods`.
    context : dpcore.lab.verdicts.RunContext, optional
        The public seed (if any) and the dataset.
    labels : callable, optional
        ``labels(name)`` -> the verdict's label (default: the catalogue's).

    Returns
    -------
    list of dpcore.privacy.meter.Verdict

    Raises
    ------
    ValueError
        For an unknown method or a parameter the estimators' plans refuse.
    """
    return [plan_run(name, est, X, context, label=labels(name) if labels else "")
            for name, est in comparison_estimators(n_clusters, epsilon, radius, methods, delta, options)]


def judge_comparison(comparison, context=RunContext(), labels=None):
    """The verdict of every fitted run of ``comparison`` (:func:`dpcore.lab.verdicts.judge_run`),
    in the order of its results: what a meter charges.

    Parameters
    ----------
    comparison : Comparison
    context : dpcore.lab.verdicts.RunContext, optional
        The public seed the comparison ran from (None: secret noise) and the dataset.
    labels : callable, optional
        ``labels(result)`` -> the verdict's label (default: the catalogue's).

    Returns
    -------
    list of dpcore.privacy.meter.Verdict
    """
    return [judge_run(r.key, r.estimator, context, label=labels(r) if labels else "") for r in comparison.results]


def compare_methods(X, n_clusters, epsilon, radius, methods=("candidate_kmeans", "sulq_kmeans"), delta=1e-6,
                    options=None, random_state=None, progress=None, reference_n_init=1, trial=0):
    """Fit k-means++ (non-private reference) and every method of ``methods`` on X.

    ``radius``: the public Λ, or ``"data"`` (leaks; every private method then warns).
    ``options``: dict method -> extra constructor parameters. ``progress``: optional
    callable(fraction, text). Raises ``ValueError`` (bad parameters, unknown method) before
    anything runs when it can, otherwise from the failing method.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    n_clusters : int in [1, n]
    epsilon : float > 0
    radius : float > 0 or "data"
    methods : sequence of str, default ("candidate_kmeans", "sulq_kmeans")
        Catalogue names, keys of :data:`METHODS` (an old key of :data:`OLD_KEYS` is accepted
        and runs, and is reported, as its catalogue name).
    delta : float, default 1e-6
        δ of the methods that take one (DP-Lloyd is ε-DP).
    options : dict, optional
    random_state : None or int, optional
        Root seed: method ``name`` runs from ``run_seed(random_state, name, ε, trial)``, the
        reference from ``run_seed(random_state, "kmeanspp", NaN,
        trial)`` (:func:`dpcore.lab.methods.run_seed`); None: fresh OS entropy.
    progress : callable, optional
    reference_n_init : int, default 1
        ``n_init`` of the k-means++ reference.
    trial : int, default 0
        The run's trial in the seed recipe (repeated comparisons at one seed).

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        As above.
    """
    X = check_points(X)
    k = check_int(n_clusters, "n_clusters", 1, X.shape[0])
    check_epsilon(epsilon)
    methods = [method_name(m) for m in methods]
    if "sa_kmeans" in methods and sp.issparse(X) and X.shape[0] * X.shape[1] > MAX_DENSE_CELLS:
        raise ValueError(f"sample and aggregate needs a dense array: {X.shape[0]}×{X.shape[1]} is more than "
                         f"{MAX_DENSE_CELLS:,} cells; choose a smaller dataset or another method")
    opts = _options(options)
    if radius == "data":
        lam, derived = data_radius(X), True
        if lam == 0:
            raise ValueError("every point is the zero vector: there is nothing to cluster (every distance is 0), and "
                             "a radius read off these data would be 0. Choose other data.")
    else:
        lam, derived = resolve_radius(radius, X)
    Xc, n_clipped = clip_rows(X, lam)
    trial = check_int(trial, "trial", 0)
    report = progress or (lambda f, t: None)
    report(0.0, "k-means++ (non-private reference)")
    t0 = time.perf_counter()
    km = build_estimator(REFERENCE, None, {"n_clusters": k, "n_init": reference_n_init},
                         random_state=np.random.default_rng(run_seed(random_state, REFERENCE, float("nan"), trial)))
    km.fit(Xc)
    ref = MethodResult("kmeans++", "k-means++ (non-private)", km, km.cluster_centers_,
                       kmeans_objective(Xc, km.cluster_centers_),
                       kmedian_objective(Xc, km.cluster_centers_), 1.0, 1.0, time.perf_counter() - t0, private=False)
    _check_reference(ref, Xc, k)
    out = Comparison(ref, [], lam, derived, n_clipped)
    for i, name in enumerate(methods):
        report((i + 1) / (len(methods) + 1), METHODS[name][0])
        rng = np.random.default_rng(run_seed(random_state, name, epsilon, trial))
        est = _build(name, k, epsilon, delta, "data" if derived else lam, opts, rng)
        t0 = time.perf_counter()
        est.fit(X)
        secs = time.perf_counter() - t0
        C = est.cluster_centers_
        obj, med = kmeans_objective(Xc, C), kmedian_objective(Xc, C)
        out.results.append(MethodResult(name, METHODS[name][0], est, C, obj, med, obj / ref.objective,
                                        med / ref.kmedian_objective, secs, private=bool(est.released_private_)))
    report(1.0, "done")
    return out
