"""Sample-and-aggregate k-means (Nissim, Raskhodnikova & Smith 2007), the baseline of §7 of
Balcan et al. 2017, on top of the generic aggregator :mod:`dpcore.privacy.sample_aggregate`.

f(X_S) = k-means (scikit-learn, k-means++ seeding, one run) on a random subset S; its k
centres are encoded as one vector of R^{kd} (the centres' coordinates one after the other,
block j = centre j). The order in which k-means lists its centres is arbitrary, so the
distance between two outputs is the permutation-invariant matching distance

    d_M(v, w) = √( min over permutations π of Σ_j ‖v_j − w_π(j)‖² ),

(:func:`dpcore.privacy.sample_aggregate.matching_distances` with ``n_blocks = k``, which
evaluates it one output at a time for large m·k).
Centres lie in B(0, Λ), so d_M ≤ 2Λ√k: the public diameter. The aggregator then releases
the centre of attention plus Gaussian noise scaled to its smooth sensitivity, (ε, δ)-DP;
the released blocks are moved into B(0, Λ) (post-processing). The (ε, δ) guarantee holds
for every ε, by the exact privacy profile of the Gaussian step (the paper's α, β where they
are private; a smaller β, and at very large ε a smaller α, where they are not: see
:func:`dpcore.privacy.sample_aggregate.calibrate_gaussian_step`).

As the paper reports, the noise is orders of magnitude too large in high dimension: Alg. 1's
*utility* bound (Thm 3.1) needs ε > 2D/√m with D = kd, so m would have to exceed (2kd/ε)²
subsets for the noise to be small.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.cluster import KMeans as _SkKMeans
from sklearn.base import BaseEstimator, ClusterMixin

from ..defaults import default_kmeans_n_subsets
from ..validation import check_delta, check_epsilon, check_int, check_random_state, input_float_dtype, record_features
from ..work import Work, add_aggregate, add_sklearn_kmeans, clusters_of, expected_draws
from ..privacy.sample_aggregate import subset_redraw_probability
from ..privacy import PrivacyLedger, PrivateEstimatorMixin
from ..privacy.sample_aggregate import sample_aggregate
from ..preprocessing import clip_rows
from .common import CentresPredictMixin, RADIUS_LEAK_REASON, check_points, resolve_radius, warn_if_data_scaled

__all__ = ["SampleAggregateKMeans"]


class SampleAggregateKMeans(CentresPredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-DP k-means by sample and aggregate (Nissim et al. 2007).

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (k-means on each of the m subsets and m² matching distances; :meth:`planned_work`) is refused
    past the caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=8
        Number k of clusters, in [1, n]; n must be at least 4k (at least 2 subsets of 2k points).
    epsilon : float, default=1.0
        Privacy parameter ε > 0.
    radius : float or "data", default=None
        Public radius Λ > 0 (required: None is refused with a ValueError; ``"data"`` leaks,
        with a warning).
    delta : float, default=1e-6
        Privacy parameter δ ∈ (0, 1).
    n_subsets : int or None, default=None
        Number m of subsets, in [2, ⌊n/k⌋] (default :func:`dpcore.defaults.default_kmeans_n_subsets`); subsets
        have ⌊n/m⌋ ≥ k points.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the subsets, the k-means runs on them and the noise.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        The released centres (private; not private with ``radius="data"``); float32 for
        float32 input, else float64.
    aggregate_ : AggregateResult
        The :class:`dpcore.privacy.sample_aggregate.AggregateResult`, whose fields other
        than ``released`` are NOT private.
    labels_ : ndarray of int of shape (n,)
        Each point assigned to its nearest released centre (NOT private).
    n_clipped_ : int
        Number of points outside B(0, Λ) (NOT private).
    radius_ : float
        Λ used (NOT private with ``radius="data"``).
    n_subsets_ : int
        m used.
    ledger_ : PrivacyLedger
        The ledger of the run.
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    """

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=None, delta=1e-6, n_subsets=None, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.radius = radius
        self.delta = delta
        self.n_subsets = n_subsets
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): k-means on each of the m
        subsets of a dense copy, the subset draws and the m² matching distances."""
        w = Work(n, d, nnz, sparse)
        k = clusters_of(self, n)
        if n < 4 * k:
            return None                                   # the fit refuses it in its own words
        m = default_kmeans_n_subsets(n, k) if self.n_subsets is None else \
            min(check_int(self.n_subsets, "n_subsets", 2), max(n // k, 2))
        size = n // m
        sub = Work(size, d, size * d)
        add_sklearn_kmeans(sub, size, d, size * d, k, 1, "k-means")
        w.extend(sub.plan("KMeans"), "on each of the m subsets: ", m, "n_subsets", inner=None)
        w.hold("sample and aggregate: a dense copy of the data (n·d)", float(n) * d * 8)
        add_aggregate(w, n, m, k * d, k, expected_draws(subset_redraw_probability(n, m, size), 1000))
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Release k centres of the rows of X (clipped to B(0, Λ)) by sample and aggregate.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, d)
            The points as rows.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.
        """
        dtype = input_float_dtype(X)
        record_features(self, X)
        X = check_points(X)
        n, d = X.shape
        k = check_int(self.n_clusters, "n_clusters", 1, n)
        eps = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        if n < 4 * k:
            raise ValueError(f"sample and aggregate needs n >= 4·n_clusters (at least 2 subsets of 2k points); "
                             f"got n={n}, n_clusters={k}")
        m = default_kmeans_n_subsets(n, k) if self.n_subsets is None else check_int(self.n_subsets, "n_subsets", 2, n // k)
        warn_if_data_scaled(X, type(self).__name__)
        lam, derived = resolve_radius(self.radius, X)
        rng = check_random_state(self.random_state)
        X, self.n_clipped_ = clip_rows(X, lam)
        dense = X.toarray() if hasattr(X, "toarray") else X
        seeds = rng.integers(0, 2 ** 31 - 1, size=m)
        counter = iter(range(m))

        def f(Xs):  # k-means on one subset (any algorithm may be used: f is a black box)
            km = _SkKMeans(n_clusters=k, init="k-means++", n_init=1, random_state=int(seeds[next(counter)]))
            return km.fit(Xs).cluster_centers_.ravel()

        ledger = PrivacyLedger(budget_epsilon=eps, budget_delta=delta)
        res = sample_aggregate(dense, f, m, eps, delta, diameter=2.0 * lam * math.sqrt(k),
                               n_blocks=k, random_state=rng, ledger=ledger,
                               what=f"{k} centres (vector of R^{k * d}) by sample and aggregate")
        self.radius_ = lam
        self.n_subsets_ = m
        self.n_features_in_ = d
        self.aggregate_ = res
        self._set_centres(clip_rows(res.released.reshape(k, d), lam)[0], dtype, X)
        self.ledger_ = ledger
        self.private_outputs_ = [] if derived else ["cluster_centers_"]
        self.nonprivate_outputs_ = {
            "labels_": "each point assigned to its nearest released centre using the raw data",
            "n_clipped_": "exact number of points outside B(0, Λ), computed from the data",
            "aggregate_": "diagnostics of the aggregator (subset outputs, smooth sensitivity, chosen subset); "
                          "only aggregate_.released is private",
        }
        if derived:
            self.nonprivate_outputs_["radius_"] = RADIUS_LEAK_REASON
        return self
