"""Sample-aggregate private subspace clustering (§3 of the subspace clustering paper).

Alg. 1 (:mod:`dpcore.privacy.sample_aggregate`) with f = a non-private subspace clustering solver
(TSC, SSC, LRR or k-plane, from :mod:`dpcore.subspace.solvers`) and d_M = d_W (eq. (2)).

Encoding of one solver output (k subspaces of dimension q in R^d) as a vector of R^D
------------------------------------------------------------------------------------
Each subspace S_ℓ with basis U_ℓ is represented by its projection matrix P_ℓ = U_ℓU_ℓᵀ (d×d,
symmetric, independent of the choice of basis), and P_ℓ by its *symmetric vectorisation*

    svec(P) = (P_11, …, P_dd, √2·P_ij for i < j)   ∈ R^{d(d+1)/2},

which is an isometry: ‖svec(P) − svec(P′)‖₂ = ‖P − P′‖_F = d(S, S′) of eq. (1). The k blocks
are stacked in the solver's order, so

    D = k·d(d+1)/2      (165 for the Fig. 2 middle setting d = 10, k = 3),

about half of the k·d² of stacking the full matrices, which matters because D enters β
(and the exact privacy calibration of the Gaussian step) and Thm 3.1's utility condition
ε > 2D/√m. The d_M between two encodings is the matching distance
over the k blocks (:func:`dpcore.privacy.sample_aggregate.matching_distances`), which by the
isometry is exactly d_W(Ĉ, Ĉ′) of eq. (2) with d = ‖UUᵀ − VVᵀ‖_F. The blocks of the chosen
output are released in a random order (see the generic module). The public diameter of
the output space is Λ = √(2k·min(q, d − q)) (two q-dimensional subspaces of R^d are at
most √(2·min(q, d−q)) apart).

Decoding (post-processing, no privacy cost): every noisy block is turned back into a
symmetric d×d matrix (svec⁻¹) and the subspace is spanned by its q eigenvectors with the
largest eigenvalues — the nearest rank-q projection matrix in Frobenius norm.

What is private: ``subspaces_`` and ``released_vector_``. Labels from assigning the raw
points to the released subspaces, their cost, the subset solutions, which one was
chosen and the smooth sensitivity S(B) are NOT private (``nonprivate_outputs_``).

Privacy: the release is (ε, δ)-DP for every ε > 0 and any solver, by the exact privacy
profile of the Gaussian step (:func:`dpcore.privacy.sample_aggregate.calibrate_gaussian_step`: the
paper's α, β where they are private, a smaller β (and α) at large ε where they are not).
Thm 3.1's conditions ε > 2D/√m and m = ω(log² n) are about utility only; when one fails
the estimator warns that the theorem's accuracy bound does not cover the run.

Decisions where the paper is silent:
- δ defaults to 1/(n ln n) as in §5; ``n_subsets`` defaults to ⌈(ln n)²⌉ (the smallest m
  with m ≥ (ln n)², the finite-n reading of m = ω(log² n)), capped so that every subset has
  at least k·(q+1) points; a larger m is allowed up to that cap.
- Points are NOT clipped: sample-aggregate is private for any f and any data.
- Each subset's solver gets its own seed drawn from ``random_state``.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_delta, check_epsilon, check_int, check_random_state, record_features
from ..work import (Work, add_aggregate, clusters_of, expected_draws, matmul_cost, param_int, small_eig_cost,
                   subspace_distances_cost, unit_cost)
from ..privacy.sample_aggregate import subset_redraw_probability
from ..metrics import subspace_cost
from ..defaults import default_n_subsets
from ..privacy import PrivacyLedger, PrivateEstimatorMixin
from ..privacy.sample_aggregate import matching_distances, sample_aggregate, theorem31_conditions
from .common import SubspacePredictMixin, assign_to_subspaces, check_solver_input
from .solvers import SOLVERS, make_solver

__all__ = ["SampleAggregateSubspace", "encode_subspaces", "decode_subspaces", "encoding_dim",
           "subspace_set_diameter", "default_delta"]


def encoding_dim(n_clusters, d):
    """D = k·d(d+1)/2, the length of :func:`encode_subspaces`' vectors.

    Parameters
    ----------
    n_clusters : int
        k.
    d : int
        Ambient dimension.

    Returns
    -------
    int
    """
    return n_clusters * d * (d + 1) // 2


def _svec_index(d):
    iu = np.triu_indices(d)
    w = np.where(iu[0] == iu[1], 1.0, math.sqrt(2.0))
    return iu, w


def encode_subspaces(U):
    """(k, d, q) bases -> vector of R^{k·d(d+1)/2}: svec(U_ℓU_ℓᵀ) stacked in order ℓ = 1..k.
    A (m, k, d, q) stack gives an (m, D) array.

    Parameters
    ----------
    U : array_like of shape (k, d, q) or (m, k, d, q)
        Orthonormal bases (not checked).

    Returns
    -------
    ndarray of shape (D,) or (m, D)
    """
    U = np.asarray(U, dtype=np.float64)
    single = U.ndim == 3
    if single:
        U = U[None]
    m, k, d, _ = U.shape
    P = np.einsum("mkdq,mkeq->mkde", U, U)
    iu, w = _svec_index(d)
    V = (P[:, :, iu[0], iu[1]] * w).reshape(m, k * len(w))
    return V[0] if single else V


def decode_subspaces(v, n_clusters, d, q):
    """Vector of R^D -> (k, d, q): every block back to a symmetric matrix, then its top-q
    eigenvectors (post-processing). Inverse of :func:`encode_subspaces` on exact encodings.

    Parameters
    ----------
    v : array_like of length D = k·d(d+1)/2
        An (exact or noisy) encoding; flattened.
    n_clusters : int
        k.
    d : int
        Ambient dimension.
    q : int
        Subspace dimension.

    Returns
    -------
    ndarray of shape (k, d, q)
        Orthonormal bases.

    Raises
    ------
    ValueError
        If ``v`` does not have length k·d(d+1)/2.
    """
    v = np.asarray(v, dtype=np.float64).ravel()
    k = n_clusters
    if v.size != encoding_dim(k, d):
        raise ValueError(f"v must have length k·d(d+1)/2 = {encoding_dim(k, d)}; got {v.size}")
    iu, w = _svec_index(d)
    blocks = v.reshape(k, -1) / w
    M = np.zeros((k, d, d))
    M[:, iu[0], iu[1]] = blocks
    M[:, iu[1], iu[0]] = blocks
    _, vecs = np.linalg.eigh(M)               # ascending eigenvalues
    return np.ascontiguousarray(vecs[:, :, ::-1][:, :, :q])


def subspace_set_diameter(n_clusters, d, q):
    """Λ = √(2k·min(q, d − q)): the largest d_W between two sets of k q-dim subspaces of R^d.

    Parameters
    ----------
    n_clusters : int
        k.
    d : int
        Ambient dimension.
    q : int
        Subspace dimension.

    Returns
    -------
    float
    """
    return math.sqrt(2.0 * n_clusters * min(q, d - q))


def default_delta(n):
    """δ = 1/(n ln n), the choice of §5 of the paper.

    Parameters
    ----------
    n : int > 1
        Number of points.

    Returns
    -------
    float
    """
    return 1.0 / (n * math.log(n))


class SampleAggregateSubspace(SubspacePredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-differentially private subspace clustering by sample-and-aggregate (Alg. 1).

    ``fit_predict`` (inherited from ``ClusterMixin``: ``fit``, then ``labels_``) returns
    labels that are NOT private: the raw points assigned to the released subspaces.
    ``predict`` assigns any points to the nearest released subspace (``labels_`` on the
    training rows) and ``score`` is minus their subspace cost; neither is private.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X (the
    solver on each of the m subsets, the subset draws (up to max_redraws) and m² matching distances;
    :meth:`planned_work`) is refused past the caps of :mod:`dpcore.work` with a ValueError, before
    any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=3
        Number k of subspaces, in [1, n].
    subspace_dim : int, default=3
        Dimension q of every subspace, in [1, d−1].
    solver : {"tsc", "ssc", "lrr", "kplane"}, default="tsc"
        The non-private f run on every subset.
    solver_params : dict or None, default=None
        Extra parameters for the solver (e.g. {"variant": "simplified"} for Alg. 2's TSC),
        or None for its defaults.
    n_subsets : int or None, default=None
        Number m of subsets, an integer in [2, ⌊n / (k(q+1))⌋] (every subset needs ≥ k(q+1) points),
        or None for ⌈(ln n)²⌉ capped to that range.
    epsilon : float, default=1.0
        Privacy parameter ε > 0.
    delta : float or None, default=None
        Privacy parameter δ in (0, 1), or None for 1/(n ln n) (§5).
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the subsets, the solver runs and the noise.
    max_redraws : int, default=1000
        How many subset draws (≥ 1) step 3 may try before giving up (ValueError).

    Attributes
    ----------
    subspaces_ : ndarray of shape (k, d, q)
        The released subspaces (PRIVATE).
    released_vector_ : ndarray of shape (D,)
        The noisy encoding g(B) + S(B)/α·u (PRIVATE).
    encoding_dim_ : int
        D (public constant).
    n_subsets_ : int
        m (public constant).
    subset_size_ : int
        ⌊n/m⌋ (public constant).
    max_multiplicity_ : int
        s (public constant).
    alpha_ : float
        α, a calibrated constant of the Gaussian step (public).
    beta_ : float
        β, a calibrated constant of the Gaussian step (public).
    t0_ : int
        t0 (public constant).
    diameter_ : float
        Λ (public constant).
    delta_spent_ : float
        δ, read off the ledger as in every private estimator (formerly ``delta_``).
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    constants_ : Alg1Constants
        The :class:`~dpcore.privacy.sample_aggregate.Alg1Constants` (``alpha_paper``,
        ``beta_paper``, ``paper_constants_kept``, ``exact_delta`` = the exact worst δ of the
        Gaussian step, ≤ ``delta_spent_``).
    theorem31_ : dict
        Thm 3.1's *utility* conditions (see ``theorem31_conditions``).
    warnings_ : list of str
        Messages for every broken condition (also sent to warnings.warn);
        the release is (ε, δ)-DP either way.
    n_draws_ : int
        How many subset draws step 3 needed.
    subsets_ : ndarray of int of shape (m, ⌊n/m⌋)
        Indices (data-independent).
    subset_subspaces_ : ndarray of shape (m, k, d, q)
        NOT private (diagnostics; see ``nonprivate_outputs_``).
    chosen_index_ : int
        NOT private (diagnostics; see ``nonprivate_outputs_``).
    chosen_subspaces_ : ndarray of shape (k, d, q)
        NOT private (diagnostics; see ``nonprivate_outputs_``).
    radii_t0_ : ndarray of shape (m,)
        NOT private (diagnostics; see ``nonprivate_outputs_``).
    n_far_neighbours_ : ndarray of int of shape (m,)
        NOT private (diagnostics; see ``nonprivate_outputs_``).
    smooth_sensitivity_ : float
        S(B); NOT private (diagnostics; see ``nonprivate_outputs_``).
    noise_scale_ : float
        S(B)/α; NOT private (diagnostics; see ``nonprivate_outputs_``).
    sensitivity_terms_ : list of tuple
        The terms of S(B); NOT private (diagnostics; see ``nonprivate_outputs_``).
    aggregate_ : AggregateResult
        The full diagnostic record of the run; NOT private (see ``nonprivate_outputs_``).
    labels_ : ndarray of int of shape (n,)
        NOT private (diagnostics; see ``nonprivate_outputs_``).
    cost_ : float
        NOT private (diagnostics; see ``nonprivate_outputs_``).
    ledger_ : PrivacyLedger
        PrivacyLedger with one entry (ε, δ).
    """

    #: δ = 1/(n ln n) when ``delta`` is None (§5): what an accountant plans before the fit
    _default_delta = staticmethod(default_delta)

    def __init__(self, *, n_clusters=3, subspace_dim=3, solver="tsc", solver_params=None, n_subsets=None,
                 epsilon=1.0, delta=None, random_state=None, max_redraws=1000):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.solver = solver
        self.solver_params = solver_params
        self.n_subsets = n_subsets
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.max_redraws = max_redraws

    def _validate(self, X):
        X, k, q = check_solver_input(X, self.n_clusters, self.subspace_dim)
        n, d = X.shape
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {', '.join(SOLVERS)}; got {self.solver!r}")
        params = {} if self.solver_params is None else dict(self.solver_params)
        epsilon = check_epsilon(self.epsilon)
        if n < 3:
            raise ValueError(f"X must have at least 3 rows for sample-aggregate; got {n}")
        delta = default_delta(n) if self.delta is None else check_delta(self.delta)
        min_size = k * (q + 1)
        m_max = n // min_size
        if m_max < 2:
            raise ValueError(f"X has too few rows for sample-aggregate: n = {n} cannot be split into 2 subsets of at "
                             f"least k·(q+1) = {min_size} points")
        if self.n_subsets is None:
            m = default_n_subsets(n, k, q)
        else:
            try:
                m = check_int(self.n_subsets, "n_subsets", 2, m_max)
            except ValueError:
                raise ValueError(f"n_subsets must be an integer in [2, {m_max}] so that each of the m subsets has at "
                                 f"least k·(q+1) = {min_size} of the n = {n} points; got {self.n_subsets!r}") from None
        max_redraws = check_int(self.max_redraws, "max_redraws", 1)
        return X, k, q, params, epsilon, delta, m, max_redraws

    def _public_constants(self):
        """The aggregation's public constants (after ``fit``): D, m, n/m, s, α, β, the exact δ
        of the Gaussian step, t₀ and Thm 3.1's utility thresholds."""
        if not hasattr(self, "constants_"):
            return []
        c, th = self.constants_, self.theorem31_
        return [
            ("D", self.encoding_dim_, "length of the encoded output k·d(d+1)/2"),
            ("m", self.n_subsets_, "number of subsets"),
            ("n/m", self.subset_size_, "points per subset"),
            ("s", self.max_multiplicity_, "no point is in more than s = ⌊√m⌋ subsets"),
            ("α", self.alpha_, "noise divisor: the paper's ε/(5√(2 ln(2/δ)))" + (
                "" if self.alpha_ == c.alpha_paper else f" = {c.alpha_paper:.4g}, reduced")),
            ("β", self.beta_, "smoothness: the paper's ε/(4(D + ln(2/δ)))" + (
                "" if self.beta_ == c.beta_paper else f" = {c.beta_paper:.4g}, reduced")),
            ("exact δ", c.exact_delta, "δ of the Gaussian step at these α, β, computed exactly (worst neighbouring "
             "pair); must be ≤ δ" + ("" if c.paper_constants_kept else
                                     f" — the paper's constants would give {c.paper_delta:.3g}")),
            ("t₀", self.t0_, "⌈(m+s)/2⌉+1: the aggregation looks at each output's t₀-th nearest neighbour"),
            ("2D/√m", th["eps_threshold"], "Thm 3.1's utility bound needs ε above this (privacy does not)"
             + (" ✓" if th["eps_ok"] else " ✗")),
            ("(ln n)²", th["m_threshold"], "Thm 3.1's utility bound needs m ≥ this" + (" ✓" if th["m_ok"] else " ✗")),
        ]

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): the solver on each of
        the m subsets, the subset draws and the m² matching distances."""
        w = Work(n, d, nnz, sparse)
        k, q = clusters_of(self, n, default=3), min(param_int(self, "subspace_dim", 3), max(d - 1, 1))
        m_max = n // (k * (q + 1))
        if m_max < 2 or self.solver not in SOLVERS:
            return None                                   # the fit refuses it in its own words
        m = default_n_subsets(n, k, q) if self.n_subsets is None else \
            min(check_int(self.n_subsets, "n_subsets", 2), m_max)
        size = n // m
        solver = SOLVERS[self.solver](n_clusters=k, subspace_dim=q, **dict(self.solver_params or {}))
        w.extend(solver._planned_work(size, d, size * d, False),
                 f"solver {self.solver} on each of the m subsets of n/m points: ", m, "n_subsets",
                 inner="solver_params['{}']")
        D = encoding_dim(k, d)
        w.add("encoding the m outputs (m·k·d²·q)", matmul_cost(m * k, d, d * q) + unit_cost("elem", m * k * d * d))
        w.hold("encoded outputs: m·k·d² projection matrices", 2 * float(m) * k * d * d * 8, "n_subsets")
        draws = expected_draws(subset_redraw_probability(n, m, size), param_int(self, "max_redraws", 1000))
        add_aggregate(w, n, m, D, k, draws)
        w.add("decoding: k eigendecompositions (d³) and the nearest-subspace labels",
              k * small_eig_cost(d) + subspace_distances_cost(n, d, k, q))
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Run Alg. 1 on the rows of X.

        Parameters
        ----------
        X : array_like or pandas.DataFrame of shape (n, d)
            The points as rows.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.
        """
        record_features(self, X)
        X, k, q, params, epsilon, delta, m, max_redraws = self._validate(X)
        n, d = X.shape
        rng = check_random_state(self.random_state)
        # fail on bad solver parameters before any work is done
        make_solver(self.solver, k, q, random_state=0, **params)
        D = encoding_dim(k, d)
        diameter = subspace_set_diameter(k, d, q)
        seeds = iter(rng.integers(0, 2**31 - 1, size=m))
        solutions = []

        def f(X_sub):
            est = make_solver(self.solver, k, q, random_state=int(next(seeds)), **params).fit(X_sub)
            solutions.append(np.asarray(est.subspaces_, dtype=np.float64))
            return encode_subspaces(est.subspaces_)

        ledger = PrivacyLedger()
        res = sample_aggregate(
            X, f, m, epsilon, delta, diameter=diameter, distances=lambda B: matching_distances(B, k), n_blocks=k,
            random_state=rng, ledger=ledger, max_redraws=max_redraws,
            what=f"{k} subspaces (solver {self.solver}, m = {m} subsets) as one vector of {D} numbers")
        c = res.constants
        U = decode_subspaces(res.released, k, d, q)

        self.subspaces_ = U
        self.released_vector_ = res.released
        self.encoding_dim_ = D
        self.n_subsets_ = m
        self.subset_size_ = int(res.subsets.shape[1])
        self.max_multiplicity_ = c.s
        self.alpha_, self.beta_, self.t0_ = c.alpha, c.beta, c.t0
        self.constants_ = c
        self.diameter_ = diameter
        self.n_features_in_ = d
        self.n_draws_ = res.n_draws
        self.subsets_ = res.subsets
        self.subset_subspaces_ = np.stack(solutions)
        self.chosen_index_ = res.chosen_index
        self.chosen_subspaces_ = self.subset_subspaces_[res.chosen_index]
        self.radii_t0_ = res.radii_t0
        self.n_far_neighbours_ = res.n_far_neighbours
        self.smooth_sensitivity_ = res.smooth_sensitivity
        self.noise_scale_ = res.noise_scale
        self.sensitivity_terms_ = res.sensitivity_terms
        self.aggregate_ = res
        self.labels_ = assign_to_subspaces(X, U)
        self.cost_ = subspace_cost(X, U)

        th = theorem31_conditions(epsilon, D, m, n)
        msgs = list(th["messages"])
        if c.t0 > m - 1:
            msgs.append(f"with n_subsets = {m}, t0 = {c.t0} exceeds the m - 1 = {m - 1} other subset outputs, so the "
                        "aggregation cannot prefer any output and the noise is calibrated to the full diameter")
        self.theorem31_ = th
        self.warnings_ = msgs
        for msg in msgs:
            warnings.warn(msg, UserWarning, stacklevel=3)   # the mixin's fit wrapper adds a frame

        self.ledger_ = ledger
        self.private_outputs_ = ["subspaces_", "released_vector_"]
        self.nonprivate_outputs_ = {
            "labels_": "computed by assigning the raw points to the released subspaces",
            "cost_": "eq. (3) cost of the released subspaces evaluated on the raw data",
            "subset_subspaces_": "the non-private solver's output on each subset",
            "chosen_index_": "which subset solution the aggregation chose depends on the data",
            "chosen_subspaces_": "the exact (noise-free) chosen subset solution",
            "radii_t0_": "distances between subset solutions computed from the data",
            "n_far_neighbours_": "computed from the distances between subset solutions",
            "smooth_sensitivity_": "S(B) is computed from the data; only the noisy release that uses it is private",
            "noise_scale_": "S(B)/alpha is computed from the data",
            "sensitivity_terms_": "the terms of S(B), computed from the data",
            "aggregate_": "the full diagnostic record of the run",
        }
        return self
