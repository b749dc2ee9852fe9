"""SuLQ k-plane: private k-plane whose every subspace update is Alg. 5 (App. E of the
subspace clustering paper; the "SuLQ-10" / "SuLQ-50" baseline of Fig. 2).

For T iterations: (1) assign every point to its nearest current subspace (the current
subspaces are already private, so this is post-processing of earlier answers);
(2) for every cluster ℓ answer one query with Alg. 5:

    B_ℓ = Σ_{i: zᵢ = ℓ} xᵢxᵢᵀ   (A_ℓA_ℓᵀ in the paper's column notation),
    B̃_ℓ = B_ℓ + σ·W,  W a d×d matrix of i.i.d. N(0, 1),
    S_ℓ ← span of the top-q left singular vectors of B̃_ℓ.

Replacing one point x (‖x‖ ≤ 1) by x′ changes vec(B_ℓ) by at most 2 in ℓ2 (Prop. E.1),
so with σ = 2√(2 ln(1.25/δ))/ε every query is (ε, δ)-DP, and the kT queries together are
(ε′, δ′)-DP by Prop. E.2 (advanced composition with slack δ):

    ε′ = √(2kT ln(1/δ))·ε + kT·ε(e^ε − 1),   δ′ = (kT + 1)·δ.

The user sets the TOTAL (ε′, δ′); the per-query (ε, δ) are solved from Prop. E.2
(:func:`dpcore.privacy.advanced_composition_inverse`) and exposed as
``per_query_epsilon_`` / ``per_query_delta_``. With ``composition="basic"`` they are
ε′/(kT), δ′/(kT) (sequential composition) instead, and ``composition="best"`` takes
whichever of the two theorems allows the larger per-query ε (both are valid guarantees;
``composition_used_`` says which one the ledger relies on). Prop. E.2 is not always the
better one: because of its kT·ε(e^ε − 1) term the per-query ε only grows like ln ε′, so
for k = 3, T = 10 and δ′ = 1/(n ln n), n = 1000, the even split wins from ε′ ≈ 3 on (at
ε′ = 1000: 2.57 by Prop. E.2 against 33.3 by the split; at ε′ = 1e6: 8.3 against 33 333,
so with Prop. E.2 the noise σ ≈ 1.2 on A_ℓA_ℓᵀ never becomes negligible - on the Fig. 2
middle setting the cost stays ≈ 1.3 % above k-plane's even at ε′ = 1e6). The default stays
``"advanced"``, the paper's choice.

Decisions where the paper is silent:
- **Per-query ε ≥ 1.** The classic Gaussian mechanism (σ above, Dwork & Roth Thm A.1) is
  only proven for ε < 1, and a total ε′ of 10 or more (Fig. 2 goes to 1000) gives
  per-query ε ≥ 1. With ``gaussian="auto"`` (default) we use Alg. 5's classic σ when the
  per-query ε < 1 and the analytic Gaussian mechanism of Balle & Wang (2018) — valid for
  every ε > 0 — when ε ≥ 1. (Where the classic σ is valid, ε < 1, the analytic σ is
  smaller; the classic formula evaluated at ε ≥ 1 is no guarantee, and it is larger than
  the analytic σ only up to a δ-dependent ε ≈ 4–12, smaller beyond: see
  :func:`dpcore.privacy.gaussian_sigma_analytic`.)
  ``noise_mechanism_`` says which was used; ``"classic"`` forces Alg. 5's formula (and
  raises ValueError when the per-query ε ≥ 1), ``"analytic"`` always uses Balle & Wang.
- **Norm bound.** Prop. E.1 needs ‖xᵢ‖ ≤ 1; rows outside the unit ball are scaled onto it
  (public radius 1) before anything else, ``n_clipped_`` counts them (not private) and a
  warning is issued.
- **Initial subspaces** are k uniformly random q-dimensional subspaces (the column space
  of a d×q Gaussian matrix, as §5 generates subspaces): no data is used, so they cost no
  privacy. Exposed as ``init_subspaces_``.
- **All T iterations are always run** (no data-dependent early stop), so exactly kT
  queries are answered. An empty cluster still gets its query (B_ℓ = 0, so the update is
  pure noise): the number of queries never depends on the data.
- δ′ defaults to 1/(n ln n) as in §5.

Private: ``subspaces_``, ``subspace_history_`` (all T+1 iterates) and
``init_subspaces_``. NOT private: ``labels_`` (raw points assigned to the released
subspaces), ``cost_`` and ``cost_history_`` (eq. (3) on the raw data), ``n_clipped_``.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_delta, check_epsilon, check_int, check_random_state, record_features
from ..work import Work, clusters_of, matmul_cost, param_int, small_eig_cost, subspace_distances_cost, unit_cost
from ..data import random_subspaces
from ..metrics import squared_distances_to_subspaces
from ..preprocessing import clip_rows
from ..privacy import (PrivacyEvent, PrivacyLedger, PrivateEstimatorMixin, advanced_composition,
                       advanced_composition_inverse, gaussian_sigma)
from ..privacy.exact import gaussian_release
from .common import SubspacePredictMixin, check_solver_input
from .sample_aggregate import default_delta

__all__ = ["SuLQKPlane", "sulq_query", "noisy_scatter", "sulq_per_query_budget", "SULQ_SENSITIVITY"]

#: L2 sensitivity of vec(A_ℓA_ℓᵀ) for points in the unit ball (Prop. E.1).
SULQ_SENSITIVITY = 2.0


def sulq_per_query_budget(epsilon, delta, n_queries, composition="advanced"):
    """Per-query (ε, δ) whose composition over ``n_queries`` queries is exactly the total
    (``epsilon``, ``delta``): Prop. E.2 inverted (``"advanced"``), an even split
    (``"basic"``), or whichever of the two gives the larger per-query ε (``"best"``).

    Returns ``(per_query_epsilon, per_query_delta, theorem)`` with theorem ``"advanced"``
    or ``"basic"``.

    Parameters
    ----------
    epsilon : float > 0
        Total ε.
    delta : float in (0, 1)
        Total δ.
    n_queries : int ≥ 1
        Number of queries (kT for SuLQ k-plane).
    composition : {"advanced", "basic", "best"}, default "advanced"

    Returns
    -------
    per_query_epsilon : float
    per_query_delta : float
    theorem : str
        "advanced" or "basic".

    Raises
    ------
    ValueError
        If a parameter is out of its range or ``composition`` is unknown.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n_queries = check_int(n_queries, "n_queries", 1)
    if composition not in ("advanced", "basic", "best"):
        raise ValueError(f"composition must be 'advanced', 'basic' or 'best'; got {composition!r}")
    basic = (epsilon / n_queries, delta / n_queries, "basic")
    if composition == "basic":
        return basic
    adv = advanced_composition_inverse(epsilon, delta, n_queries) + ("advanced",)
    if composition == "advanced" or adv[0] >= basic[0]:
        return adv
    return basic


def sulq_noise(epsilon, delta, n_queries, composition="advanced", gaussian="auto"):
    """The noise a SuLQ k-plane run will add, from public quantities only: returns
    ``(sigma, per_query_epsilon, per_query_delta, composition_used, mechanism)`` — σ of the
    Gaussian noise on every entry of each A_l A_l^T (L2 sensitivity 2, Prop. E.1). The app
    shows it as the user moves ε.

    Parameters
    ----------
    epsilon : float > 0
        Total ε.
    delta : float in (0, 1)
        Total δ.
    n_queries : int ≥ 1
        Number of queries (kT).
    composition : {"advanced", "basic", "best"}, default "advanced"
        As in :func:`sulq_per_query_budget`.
    gaussian : {"auto", "classic", "analytic"}, default "auto"
        Calibration of σ; "auto" takes the classic one when the per-query ε < 1, else the
        analytic one.

    Returns
    -------
    sigma : float
    per_query_epsilon : float
    per_query_delta : float
    composition_used : str
        "advanced" or "basic".
    mechanism : str
        "classic" or "analytic".

    Raises
    ------
    ValueError
        If a parameter is out of its range, ``composition`` or ``gaussian`` is unknown, or
        ``gaussian="classic"`` with a per-query ε ≥ 1.
    """
    eps_q, delta_q, used = sulq_per_query_budget(epsilon, delta, n_queries, composition)
    if gaussian not in ("auto", "classic", "analytic"):
        raise ValueError(f"gaussian must be 'auto', 'classic' or 'analytic'; got {gaussian!r}")
    method = ("classic" if eps_q < 1.0 else "analytic") if gaussian == "auto" else gaussian
    if method == "classic" and eps_q >= 1.0:
        raise ValueError(f"gaussian='classic' needs a per-query epsilon < 1 (the classic Gaussian mechanism's "
                         f"theorem); the total epsilon = {epsilon:g} over kT = {n_queries} queries gives "
                         f"{eps_q:.4g}. Use gaussian='auto' or 'analytic'")
    return gaussian_sigma(SULQ_SENSITIVITY, eps_q, delta_q, method=method), eps_q, delta_q, used, method


def noisy_scatter(X, labels, ell, sigma, rng):
    """Steps 2–3 of Alg. 5: B̃ = Σ_{zᵢ=ℓ} xᵢxᵢᵀ + σW, W a d×d matrix of i.i.d. N(0, 1), released
    exactly on a public grid (:func:`dpcore.privacy.exact.gaussian_release`: the scatter matrix
    rounded to g = 2^−k, exact discrete Gaussian noise, the rounding paid for in the noise).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The points as rows (clipped to the unit ball by the estimator).
    labels : ndarray of int of shape (n,)
        Current assignments.
    ell : int
        The cluster ℓ.
    sigma : float ≥ 0
        Noise standard deviation.
    rng : numpy.random.Generator or None

    Returns
    -------
    ndarray of shape (d, d)
    """
    A = X[labels == ell]
    d = X.shape[1]  # noqa: F841
    if sigma == 0:
        return A.T @ A
    return gaussian_release(A.T @ A, sigma, SULQ_SENSITIVITY, rng)


def sulq_query(X, labels, ell, subspace_dim, sigma, rng):
    """Alg. 5 for cluster ``ell``: the top-q left singular vectors of :func:`noisy_scatter`
    (step 4; post-processing of the noisy matrix).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    labels : ndarray of int of shape (n,)
    ell : int
    subspace_dim : int
        q.
    sigma : float ≥ 0
    rng : numpy.random.Generator or None
        As in :func:`noisy_scatter`.

    Returns
    -------
    ndarray of shape (d, q)
        Orthonormal basis of the released subspace.
    """
    U, _, _ = np.linalg.svd(noisy_scatter(X, labels, ell, sigma, rng))
    return U[:, :subspace_dim]


class SuLQKPlane(SubspacePredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-differentially private k-plane via the SuLQ framework (App. E, Alg. 5).

    ``fit_predict`` (inherited from ``ClusterMixin``: ``fit``, then ``labels_``) returns
    labels that are NOT private: the raw points assigned to the released subspaces.
    ``predict`` assigns any points to the nearest released subspace (``labels_`` on the
    training rows) and ``score`` is minus their subspace cost; neither is private.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (n_iter × (n·k·d·q + k noisy d×d matrices); :meth:`planned_work`) is refused past the caps of
    :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=3
        Number k ≥ 1 of subspaces.
    subspace_dim : int, default=3
        Dimension q in [1, d−1] of every subspace.
    n_iter : int, default=10
        Exact number T ≥ 1 of iterations (Fig. 2 also uses 50); kT queries are answered.
    epsilon : float, default=1.0
        Total ε′ > 0.
    delta : float or None, default=None
        Total δ′ in (0, 1), or None for 1/(n ln n).
    composition : {"advanced", "basic", "best"}, default="advanced"
        Prop. E.2 (``"advanced"``), an even split (``"basic"``) or whichever of the two
        gives the larger per-query ε (``"best"``).
    gaussian : {"auto", "classic", "analytic"}, default="auto"
        Noise calibration: ``"auto"`` uses the classic σ of Alg. 5 when the per-query ε < 1
        and the analytic Gaussian otherwise.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the initial subspaces and the noise.

    Attributes
    ----------
    subspaces_ : ndarray of shape (k, d, q)
        The released subspaces (PRIVATE).
    subspace_history_ : ndarray of shape (T+1, k, d, q)
        The subspaces after every iteration (PRIVATE: each is a release).
    init_subspaces_ : ndarray of shape (k, d, q)
        The data-independent start (PRIVATE).
    per_query_epsilon_ : float
        ε of each of the kT queries (public).
    per_query_delta_ : float
        δ of each query (public).
    n_queries_ : int
        kT (public).
    noise_sigma_ : float
        σ of the Gaussian noise (public).
    composition_used_ : {"advanced", "basic"}
        The composition applied (public).
    noise_mechanism_ : {"classic", "analytic"}
        The Gaussian calibration applied (public).
    delta_spent_ : float
        Total δ′ used, read off the ledger as in every private estimator (formerly
        ``delta_``).
    labels_ : ndarray of int of shape (n,)
        Raw points assigned to the nearest released subspace (NOT private).
    cost_ : float
        Eq. (3) on the input X, before clipping (NOT private).
    cost_history_ : list of float
        Eq. (3) on X after every iteration (NOT private).
    n_clipped_ : int
        Number of rows outside the unit ball (NOT private).
    ledger_ : PrivacyLedger
        One entry for the kT composed queries, (ε′, δ′).
    n_features_in_ : int
        Number d of columns seen in ``fit``.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.

    Notes
    -----
    Vocabulary: ``n_iter`` is an exact number of iterations (all T run, no early stopping:
    the budget is split over kT queries), as in every dpcore estimator; ``max_iter`` would
    be a cap with early stopping.
    """

    #: δ = 1/(n ln n) when ``delta`` is None (§5): what an accountant plans before the fit
    _default_delta = staticmethod(default_delta)

    def __init__(self, *, n_clusters=3, subspace_dim=3, n_iter=10, epsilon=1.0, delta=None, composition="advanced",
                 gaussian="auto", random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.n_iter = n_iter
        self.epsilon = epsilon
        self.delta = delta
        self.composition = composition
        self.gaussian = gaussian
        self.random_state = random_state

    def _validate(self, X):
        X, k, q = check_solver_input(X, self.n_clusters, self.subspace_dim)
        n = X.shape[0]
        T = check_int(self.n_iter, "n_iter", 1)
        epsilon = check_epsilon(self.epsilon)
        if self.delta is None:
            if n < 2:
                raise ValueError("X must have at least 2 rows for the default delta = 1/(n ln n)")
            delta = default_delta(n)
        else:
            delta = check_delta(self.delta)
        if self.composition not in ("advanced", "basic", "best"):
            raise ValueError(f"composition must be 'advanced', 'basic' or 'best'; got {self.composition!r}")
        if self.gaussian not in ("auto", "classic", "analytic"):
            raise ValueError(f"gaussian must be 'auto', 'classic' or 'analytic'; got {self.gaussian!r}")
        return X, k, q, T, epsilon, delta

    def _public_constants(self):
        """The queries' public constants (after ``fit``): k·T, the per-query (ε, δ) and σ."""
        if not hasattr(self, "n_queries_"):
            return []
        return [
            ("k·T", self.n_queries_, "number of noisy queries"),
            ("per-query ε", self.per_query_epsilon_, f"from the total ε by {self.composition_used_} composition"),
            ("per-query δ", self.per_query_delta_, "per-query δ"),
            ("σ", self.noise_sigma_, f"noise per matrix entry ({self.noise_mechanism_} Gaussian mechanism)"),
        ]

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): n_iter iterations of
        nearest subspaces and k noisy d×d scatter matrices."""
        w = Work(n, d, nnz, sparse)
        k, q = clusters_of(self, n, default=3), min(param_int(self, "subspace_dim", 3), max(d - 1, 1))
        T = param_int(self, "n_iter", 10)
        per = 2 * subspace_distances_cost(n, d, k, q) + matmul_cost(n, d, d) + unit_cost("elem", 2 * n * d) \
            + k * (unit_cost("draw", d * d) + unit_cost("call", 1) + small_eig_cost(d) + unit_cost("loop", 1))
        w.add("SuLQ k-plane: n_iter × (nearest subspaces + k noisy scatter matrices d×d and their SVDs)", T * per,
              "n_iter", "n_clusters")
        w.hold("SuLQ k-plane: the subspaces of every iteration ((n_iter + 1)·k·d·q) and k noisy d×d matrices",
               (T + 1) * k * d * q * 8 + 3 * k * d * d * 8 + 3 * n * k * 8, "n_iter")
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Run T private k-plane iterations on the rows of X.

        Parameters
        ----------
        X : array_like or pandas.DataFrame of shape (n, d)
            The points as rows (rows longer than 1 are scaled onto the unit ball).
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.
        """
        record_features(self, X)
        X, k, q, T, epsilon, delta = self._validate(X)
        n, d = X.shape
        rng = check_random_state(self.random_state)
        n_queries = k * T
        sigma, eps_q, delta_q, used, method = sulq_noise(epsilon, delta, n_queries, self.composition, self.gaussian)

        X_raw = X
        X, _ = clip_rows(X, 1.0)
        # count (and warn about) real violations only, not norms of 1 + rounding error
        n_clipped = int(np.sum(np.linalg.norm(X_raw, axis=1) > 1.0 + 1e-12))
        if n_clipped:
            warnings.warn(f"{n_clipped} of {n} rows had norm > 1 and were scaled onto the unit ball (Prop. E.1 "
                          "assumes ||x|| <= 1)", UserWarning, stacklevel=3)

        U = random_subspaces(k, d, q, rng)   # data-independent start
        history = [U]
        costs = []
        for _ in range(T):
            D2 = squared_distances_to_subspaces(X, U)
            labels = np.argmin(D2, axis=1)
            U = np.stack([sulq_query(X, labels, ell, q, sigma, rng) for ell in range(k)])
            history.append(U)
            costs.append(float(squared_distances_to_subspaces(X_raw, U).min(axis=1).mean()))

        D2 = squared_distances_to_subspaces(X_raw, U)
        self.subspaces_ = U
        self.subspace_history_ = np.stack(history)
        self.init_subspaces_ = history[0]
        self.labels_ = np.argmin(D2, axis=1)
        self.cost_ = float(D2.min(axis=1).mean())
        self.cost_history_ = costs
        self.n_clipped_ = n_clipped
        self.n_iter_ = T
        self.n_queries_ = n_queries
        self.per_query_epsilon_ = eps_q
        self.per_query_delta_ = delta_q
        self.noise_sigma_ = sigma
        self.noise_mechanism_ = method
        self.n_features_in_ = d

        self.composition_used_ = used
        if used == "advanced":
            eps_check, delta_check = advanced_composition(eps_q, delta_q, n_queries)
            note = (f"Prop. E.2 (advanced composition, slack δ) of kT = {k}·{T} = {n_queries} queries, each "
                    f"(ε = {eps_q:.4g}, δ = {delta_q:.3g})-DP: composes to "
                    f"({eps_check:.4g}, {delta_check:.3g})")
        else:
            note = (f"sequential composition of kT = {k}·{T} = {n_queries} queries, each "
                    f"(ε = {eps_q:.4g}, δ = {delta_q:.3g})-DP")
        mech = ("Gaussian mechanism, classic σ = 2√(2 ln(1.25/δ))/ε (Alg. 5)" if method == "classic"
                else "Gaussian mechanism, analytic sigma (Balle & Wang 2018), L2 sensitivity 2 (Prop. E.1)")
        ledger = PrivacyLedger()
        # typed: kT Gaussian releases of noise multiplier σ/Δ (Δ = 2; the exact release pays its rounding on
        # top, σ_int/Δ_int ≥ σ/Δ), stated (ε, δ) by the composition above — checked against the noise by the
        # accountant, and composed exactly (one Gaussian of μ = √(kT)·Δ/σ) in the tight and RDP totals
        events = ([PrivacyEvent.gaussian(sigma / SULQ_SENSITIVITY, count=n_queries, relation=self.claimed_relation,
                                         stated=(epsilon, delta))] if sigma > 0 else None)
        ledger.record(f"{n_queries} noisy scatter matrices A_ℓ A_ℓᵀ ({k} clusters × {T} iterations), "
                      f"σ = {sigma:.4g}", mech, epsilon, delta, note=note, events=events)
        self.ledger_ = ledger
        self.private_outputs_ = ["subspaces_", "subspace_history_", "init_subspaces_"]
        self.nonprivate_outputs_ = {
            "labels_": "computed by assigning the raw points to the released subspaces",
            "cost_": "eq. (3) cost of the released subspaces evaluated on the raw data",
            "cost_history_": "eq. (3) cost on the raw data after every iteration",
            "n_clipped_": "number of rows outside the unit ball, counted on the raw data",
        }
        return self
