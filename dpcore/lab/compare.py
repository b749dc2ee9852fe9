"""Run several k-means methods on one dataset and compare their objectives with k-means++
(what the k-means page and ``benchmarks/bench_kmeans.py`` show).

Every method gets the same k, ε, δ and public radius Λ and its own child seed of
``random_state``. The objectives are computed on the clipped points (the data every private
method actually clusters) and are evaluation only: not private.
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
from ..kmeans.baselines import DPLloydKMeans, KMeansPlusPlus
from ..kmeans.candidate import CandidateKMeans, CandidateKMedian
from ..kmeans.sample_aggregate import SampleAggregateKMeans
from ..kmeans.sulq import SuLQKMeans

__all__ = ["METHODS", "MethodResult", "Comparison", "compare_methods"]

#: key -> (label, short description)
METHODS = {
    "candidate": ("candidate set + local swaps",
                  "Balcan et al. 2017, Alg. 1-4: private candidate centres in a JL projection, local swaps by the "
                  "exponential mechanism, noisy means in R^d"),
    "candidate_sparse": ("candidate set, sparse recovery (Alg. 5)",
                         "the same, with centres kept s-sparse by Alg. 5 (for sparse data such as documents)"),
    "candidate_kmedian": ("candidate set, k-median (§6.2)",
                          "the same candidate set and local search for the k-median loss, private 1-medians"),
    "sulq": ("SuLQ k-means", "Blum et al. 2005: 20 private Lloyd iterations from a random start in the public box"),
    "sample_aggregate": ("sample and aggregate", "Nissim et al. 2007: k-means on random subsets, the most central "
                                                 "solution released with smooth-sensitivity noise"),
    "dplloyd": ("DP-Lloyd (diffprivlib)", "diffprivlib's DP k-means (Su et al. 2016) with public bounds [−Λ, Λ] and "
                                          "a public number of iterations (2 unless set; never read off n)"),
}


@dataclass
class MethodResult:
    """One method's run in :func:`compare_methods`.

    Attributes
    ----------
    key : str
        A key of :data:`METHODS` ("kmeans++" for the reference).
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
        False for the reference and when Λ was read off the data.
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


def _build(key, k, epsilon, delta, radius, lam, opts, seed):
    o = dict(opts.get(key, {}))
    if key == "candidate":
        return CandidateKMeans(n_clusters=k, epsilon=epsilon, radius=radius, delta=delta, random_state=seed, **o)
    if key == "candidate_sparse":
        o.setdefault("sparsity", 100)
        return CandidateKMeans(n_clusters=k, epsilon=epsilon, radius=radius, delta=delta, recovery="sparse", random_state=seed, **o)
    if key == "candidate_kmedian":
        return CandidateKMedian(n_clusters=k, epsilon=epsilon, radius=radius, delta=delta, random_state=seed, **o)
    if key == "sulq":
        return SuLQKMeans(n_clusters=k, epsilon=epsilon, radius=radius, delta=delta, random_state=seed, **o)
    if key == "sample_aggregate":
        return SampleAggregateKMeans(n_clusters=k, epsilon=epsilon, radius=radius, delta=delta, random_state=seed, **o)
    if key == "dplloyd":
        return DPLloydKMeans(n_clusters=k, epsilon=epsilon, radius=lam, row_map="clip", random_state=seed, **o)
    raise ValueError(f"method must be one of {', '.join(METHODS)}; got {key!r}")


def compare_methods(X, n_clusters, epsilon, radius, methods=("candidate", "sulq"), delta=1e-6, options=None,
                    random_state=None, progress=None, reference_n_init=1):
    """Fit k-means++ (non-private reference) and every method of ``methods`` on X.

    ``radius``: the public Λ, or ``"data"`` (leaks; every private method then warns).
    ``options``: dict method key -> extra constructor parameters. ``progress``: optional
    callable(fraction, text). Raises ``ValueError`` (bad parameters, unknown method) before
    anything runs when it can, otherwise from the failing method.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    n_clusters : int in [1, n]
    epsilon : float > 0
    radius : float > 0 or "data"
    methods : sequence of str, default ("candidate", "sulq")
        Keys of :data:`METHODS`.
    delta : float, default 1e-6
        δ of the methods that take one (DP-Lloyd is ε-DP).
    options : dict, optional
    random_state : None, int or numpy.random.SeedSequence entropy, optional
        Root of the child seeds (``SeedSequence(random_state).spawn``).
    progress : callable, optional
    reference_n_init : int, default 1
        ``n_init`` of the k-means++ reference.

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
    methods = list(methods)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}; got {m!r}")
    if "sample_aggregate" in methods and sp.issparse(X) and X.shape[0] * X.shape[1] > MAX_DENSE_CELLS:
        raise ValueError(f"sample and aggregate needs a dense array: {X.shape[0]}×{X.shape[1]} is more than "
                         f"{MAX_DENSE_CELLS:,} cells; choose a smaller dataset or another method")
    opts = options or {}
    if radius == "data":
        lam, derived = data_radius(X), True
    else:
        lam, derived = resolve_radius(radius, X)
    Xc, n_clipped = clip_rows(X, lam)
    seeds = np.random.SeedSequence(random_state).spawn(len(methods) + 1)
    report = progress or (lambda f, t: None)
    report(0.0, "k-means++ (non-private reference)")
    t0 = time.perf_counter()
    km = KMeansPlusPlus(n_clusters=k, n_init=reference_n_init, random_state=np.random.default_rng(seeds[0])).fit(Xc)
    ref = MethodResult("kmeans++", "k-means++ (non-private)", km, km.cluster_centers_, kmeans_objective(Xc, km.cluster_centers_),
                       kmedian_objective(Xc, km.cluster_centers_), 1.0, 1.0, time.perf_counter() - t0, private=False)
    out = Comparison(ref, [], lam, derived, n_clipped)
    for i, key in enumerate(methods):
        report((i + 1) / (len(methods) + 1), METHODS[key][0])
        est = _build(key, k, epsilon, delta, "data" if derived else lam, lam, opts, np.random.default_rng(seeds[i + 1]))
        t0 = time.perf_counter()
        est.fit(X)
        secs = time.perf_counter() - t0
        C = est.cluster_centers_
        obj, med = kmeans_objective(Xc, C), kmedian_objective(Xc, C)
        out.results.append(MethodResult(key, METHODS[key][0], est, C, obj, med, obj / ref.objective,
                                        med / ref.kmedian_objective, secs, private=not derived))
    report(1.0, "done")
    return out
