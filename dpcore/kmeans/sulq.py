"""SuLQ k-means (Blum, Dwork, McSherry & Nissim 2005) as run in §7 of Balcan et al. 2017:
private Lloyd iterations with Gaussian noise on the per-cluster sums and counts, 20
iterations, centres initialised uniformly at random in a public box.

The start box. §7: "The SuLQ algorithm initializes its centers to be k randomly chosen points
from the bounding box of the data." The data's own box would leak; the default public box is
[−Λ/√d, Λ/√d]^d, the cube inscribed in the ball B(0, Λ) (its corners lie on the sphere), derived
from Λ alone and so private. It matches the data's scale: a point of norm ≤ Λ has coordinates of
typical size Λ/√d, and the start centres have norm ≈ Λ/√3 in every dimension. The box [−Λ, Λ]^d
of the ball itself (the earlier default, still available as ``bounds="ball"``) puts them at
norm ≈ Λ·√(d/3), far outside the ball in high dimension (≈ 81 against data of norm ≈ 5.8 on the
paper's mixture, d = 100, Λ = 14): most clusters then never receive a point and keep their
start, and SuLQ used 1–4 of 10 clusters at every ε.

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
from ..work import Work, clusters_of, matmul_cost, param_int, unit_cost
from ..privacy import GaussianBudget, PrivacyLedger, PrivateEstimatorMixin
from ..preprocessing import clip_rows, row_sq_norms
from .common import CentresPredictMixin, RADIUS_LEAK_REASON, check_points, resolve_radius, warn_if_data_scaled
from .recovery import MEANS_SENSITIVITY_FACTOR, private_lloyd

__all__ = ["SuLQKMeans", "START_BOXES", "start_box"]

#: the named public start boxes (``bounds=``): half-width of the cube as a function of (Λ, d)
START_BOXES = {"inscribed": lambda lam, d: lam / np.sqrt(d), "ball": lambda lam, d: lam}


def start_box(bounds, radius, d):
    """The public box ``(lower, upper)`` of the initial centres (each an array of length d).

    Parameters
    ----------
    bounds : {"inscribed", "ball"} or tuple (lower, upper)
        A name of :data:`START_BOXES` ([−Λ/√d, Λ/√d]^d or [−Λ, Λ]^d) or an explicit box.
    radius : float
        The public radius Λ.
    d : int
        Dimension.

    Returns
    -------
    tuple of ndarray
        ``(lower, upper)``, float64.

    Raises
    ------
    ValueError
        An unknown name, a box of the wrong shape, not finite or with lower > upper.
    """
    if isinstance(bounds, str):
        if bounds not in START_BOXES:
            raise ValueError(f"bounds must be one of {', '.join(map(repr, START_BOXES))} or (lower, upper); "
                             f"got {bounds!r}")
        h = float(START_BOXES[bounds](radius, d))
        return np.full(d, -h), np.full(d, h)
    try:
        lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), (d,)) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be 'inscribed', 'ball' or (lower, upper), scalars or arrays of length d={d}; "
                         f"got {bounds!r}") from None
    if not np.all(np.isfinite(lo)) or not np.all(np.isfinite(hi)) or np.any(lo > hi):
        raise ValueError("bounds must be finite with lower <= upper in every coordinate")
    return lo, hi


class SuLQKMeans(CentresPredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-DP SuLQ k-means.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (n_iter × (nnz·k + k·d exact draws); :meth:`planned_work`) is refused past the caps of
    :mod:`dpcore.work` with a ValueError, before any value of X is read.

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
    bounds : {"inscribed", "ball"} or tuple (lower, upper), default="inscribed"
        Public box in which the initial centres are drawn uniformly: ``"inscribed"``, the cube
        [−Λ/√d, Λ/√d]^d inscribed in B(0, Λ) (the scale of the data's box, which §7 uses; see
        the module docstring); ``"ball"``, the box [−Λ, Λ]^d of the ball (the earlier default:
        in high dimension its centres lie far outside the data); or an explicit ``(lower,
        upper)`` (scalars or arrays of length d, finite, lower ≤ upper). A box computed from
        the data would leak, as the radius.
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

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=None, delta=1e-6, n_iter=20, bounds="inscribed",
                 random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.radius = radius
        self.delta = delta
        self.n_iter = n_iter
        self.bounds = bounds
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): n_iter private Lloyd
        iterations."""
        w = Work(n, d, nnz, sparse)
        k = clusters_of(self, n)
        T = param_int(self, "n_iter", 20)
        near = (unit_cost("sparse", nnz * k) if sparse else matmul_cost(n, d, k)) + unit_cost("elem", 4 * n * k)
        w.add("SuLQ k-means: n_iter × (nearest centres n·k·d + noisy sums k·d)",
              T * (near + unit_cost("sparse", nnz) + unit_cost("draw", k * d + k) + unit_cost("call", 1)
                   + unit_cost("loop", 10)), "n_iter", "n_clusters")
        w.hold("SuLQ k-means: the centres of every iteration (n_iter·k·d) and n·k distances",
               T * k * d * 8 + 3 * n * k * 8, "n_iter", "n_clusters")
        return w.plan(type(self).__name__)

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
        lo, hi = start_box(self.bounds, lam, d)
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
