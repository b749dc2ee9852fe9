"""SuLQ k-means (Blum, Dwork, McSherry & Nissim 2005) as run in §7 of Balcan et al. 2017:
private Lloyd iterations with Gaussian noise on the per-cluster sums and counts, 20
iterations, centres initialised uniformly at random in the public bounding box.

Budget: the ``n_iter`` releases of (sums, Λ·counts) — L2 sensitivity 2Λ each when one
point is replaced (:data:`dpcore.kmeans.recovery.MEANS_SENSITIVITY_FACTOR`) — share
(ε, δ) by exact Gaussian-DP composition (:class:`dpcore.privacy.GaussianBudget`):
σ is that of one analytic Gaussian mechanism of sensitivity 2Λ·√n_iter. This is the
tightest honest accounting for the baseline (basic composition would give each iteration
only ε/20). One ledger entry (one stage), described exactly by its Gaussian events
(:meth:`dpcore.privacy.GaussianBudget.events`: n_iter releases of noise multiplier σ/(2Λ)), which a
:class:`~dpcore.privacy.PrivacyAccountant` composes tightly across fits.

Post-processing choices (free): a cluster whose noisy count is below max(1, 3σ/Λ) keeps its
previous centre (its noisy mean would be mostly noise); centres are moved into B(0, Λ).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_delta, check_epsilon, check_int, check_random_state, input_float_dtype, record_features
from ..privacy import GaussianBudget, PrivacyLedger, PrivateEstimatorMixin
from ..preprocessing import clip_rows, row_sq_norms
from .common import CentresPredictMixin, RADIUS_LEAK_REASON, check_points, resolve_radius, warn_if_data_scaled
from .recovery import MEANS_SENSITIVITY_FACTOR, private_lloyd

__all__ = ["SuLQKMeans"]


class SuLQKMeans(CentresPredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-DP SuLQ k-means.

    Parameters
    ----------
    n_clusters : int, default=8
        Number k of clusters, in [1, n].
    epsilon : float, default=1.0
        Privacy parameter ε > 0.
    radius : float or "data", default=None
        Public radius Λ > 0 (required: None is refused with a ValueError; ``"data"`` leaks,
        with a warning).
    delta : float, default=1e-6
        Privacy parameter δ in (0, 1).
    n_iter : int, default=20
        Exact number of Lloyd iterations, in [1, 1000] (default 20, as §7; all run, no early
        stopping, as ``n_iter`` means in every dpcore estimator - ``max_iter`` is a cap with
        early stop).
    bounds : tuple (lower, upper) or None, default=None
        Public bounding box ``(lower, upper)`` (scalars or arrays of length d, finite, lower ≤
        upper) in which the initial centres are drawn uniformly; None for [−Λ, Λ]^d, the box
        of the public ball. A box computed from the data would leak, as the radius.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the initial centres and the noise.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        The released centres (private; not private with ``radius="data"``); float32 for
        float32 input, else float64.
    history_ : list of ndarray of shape (k, d)
        Centres after every iteration (private: each is a release; not private with
        ``radius="data"``).
    init_centers_ : ndarray of shape (k, d)
        The initial centres (public randomness).
    labels_ : ndarray of int of shape (n,)
        Each point assigned to its nearest released centre (NOT private).
    n_clipped_ : int
        Number of points outside B(0, Λ) (NOT private).
    radius_ : float
        Λ used (NOT private with ``radius="data"``).
    ledger_ : PrivacyLedger
        The ledger of the run.
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    """

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=None, delta=1e-6, n_iter=20, bounds=None, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.radius = radius
        self.delta = delta
        self.n_iter = n_iter
        self.bounds = bounds
        self.random_state = random_state

    def fit(self, X, y=None):
        """Run ``n_iter`` private Lloyd iterations on the rows of X (clipped to B(0, Λ)).

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
        T = check_int(self.n_iter, "n_iter", 1, 1000)
        warn_if_data_scaled(X, type(self).__name__)
        lam, derived = resolve_radius(self.radius, X)
        if self.bounds is None:
            lo, hi = np.full(d, -lam), np.full(d, lam)
        else:
            try:
                lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), (d,)) for b in self.bounds)
            except (TypeError, ValueError):
                raise ValueError(f"bounds must be (lower, upper), scalars or arrays of length d={d}") from None
            if not np.all(np.isfinite(lo)) or not np.all(np.isfinite(hi)) or np.any(lo > hi):
                raise ValueError("bounds must be finite with lower <= upper in every coordinate")
        rng = check_random_state(self.random_state)
        X, self.n_clipped_ = clip_rows(X, lam)
        sq = row_sq_norms(X)
        init = rng.uniform(lo, hi, size=(k, d))
        budget = GaussianBudget(eps, delta, T)
        centres, history = private_lloyd(X, init, lam, T, budget, rng, sq)
        ledger = PrivacyLedger(budget_epsilon=eps, budget_delta=delta)
        ledger.record(f"{T} Lloyd iterations (SuLQ)", "Gaussian (noisy sums and counts)", eps, delta,
                      note=f"{T} releases of L2 sensitivity 2Λ composed exactly (GDP), σ = "
                           f"{budget.sigma(MEANS_SENSITIVITY_FACTOR * lam):.4g} each; parallel over clusters",
                      events=budget.events(self.claimed_relation))
        self.radius_ = lam
        self.init_centers_ = init
        self.n_features_in_ = d
        self.history_ = history
        self._set_centres(centres, dtype, X, sq)
        self.ledger_ = ledger
        self.private_outputs_ = [] if derived else ["cluster_centers_", "history_"]
        self.nonprivate_outputs_ = {
            "labels_": "each point assigned to its nearest released centre using the raw data",
            "n_clipped_": "exact number of points outside B(0, Λ), computed from the data",
        }
        if derived:
            self.nonprivate_outputs_["radius_"] = RADIUS_LEAK_REASON
        return self
