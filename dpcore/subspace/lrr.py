"""Low-rank representation (LRR; Liu, Lin, Yan, Sun, Yu & Ma, TPAMI 2012), inexact ALM.

Columns-as-points notation of the paper (Y = Xᵀ is d×n):

    min_{Z,E} ‖Z‖_* + λ‖E‖_{2,1}   s.t.  Y = YZ + E,

where ‖E‖_{2,1} = Σ_i ‖E[:, i]‖₂ models sample-specific corruption. Solved by the inexact
augmented Lagrange multiplier method of the paper (Alg. 1) with the auxiliary J = Z:

    J ← SVT(Z + Y₂/μ, 1/μ)
    Z ← (I + AᵀA)⁻¹(Aᵀ(Y − E) + J + (AᵀY₁ − Y₂)/μ)
    E ← column-shrink(Y − AZ + Y₁/μ, λ/μ)
    Y₁ ← Y₁ + μ(Y − AZ − E),  Y₂ ← Y₂ + μ(Z − J),  μ ← min(ρμ, μ_max)

until ‖Y − AZ − E‖_∞ < tol and ‖Z − J‖_∞ < tol. Parameters as in the authors' code:
μ₀ = 10⁻⁶, ρ = 1.1, μ_max = 10¹⁰, tol = 10⁻⁸ (``max_iter`` caps the loop).

Speed (the d×d structure): by Liu et al.'s Thm. 3 every minimiser Z* lies in the row space
of Y, so with the skinny SVD Y = U_r Σ_r V_rᵀ (r = rank ≤ d) we solve with the r-column
dictionary A = U_r Σ_r and recover Z* = V_r Z̃* (the authors' ``solve_lrr`` does the same
with orth(Yᵀ)). Every iteration then costs O(n·d·r) instead of an n×n SVD.

Clustering: affinity |Z| + |Z|ᵀ (the paper's Alg. 2), the shared spectral step, subspaces
from :func:`fit_subspaces`.

Default λ (decision; Liu et al. tune λ per data set): ``lam=4``, their value for motion
segmentation with the ℓ2,1 error. On the Fig. 2 synthetic settings accuracy does not move
for λ in [0.05, 100] (≥ 0.995 at σ = 0.1, 1.0 at σ = 0.01, seed 0); on Yale B (5 subjects,
d = 50) λ ≤ 0.3 lets E swallow the faces (accuracy < 0.5) while λ ≥ 3 gives 1.0, so a
large-ish λ is the safe default here. The benchmark prints the figures.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_int, check_random_state, check_real, record_features
from ..work import BoundedWorkMixin, Work, add_lrr, clusters_of, param_int
from ..metrics import subspace_cost
from .common import (SubspaceScoreMixin, affinity_from_coefficients, check_solver_input, fit_subspaces,
                     spectral_clustering, single_threaded)

__all__ = ["LRR", "lrr_inexact_alm"]


def _svt(M, tau):
    """Singular value thresholding: argmin_J τ‖J‖_* + ½‖J − M‖_F²."""
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    s = np.maximum(s - tau, 0.0)
    r = int(np.sum(s > 0))
    return (U[:, :r] * s[:r]) @ Vt[:r]


def _col_shrink(M, tau):
    """argmin_E τ‖E‖_{2,1} + ½‖E − M‖_F² (shrink every column's norm by τ)."""
    norms = np.linalg.norm(M, axis=0)
    scale = np.where(norms > tau, 1.0 - tau / np.where(norms > 0, norms, 1.0), 0.0)
    return M * scale[None, :]


def lrr_inexact_alm(X, lam, max_iter=1000, tol=1e-8, mu=1e-6, rho=1.1, mu_max=1e10, rank_tol=1e-10):
    """Solve LRR on X (rows = points) with the dictionary X itself.

    Returns (Z, E, n_iter, err): Z n×n (column i expresses point i), E d×n.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        The points as rows (not validated here; :class:`LRR` validates).
    lam : float
        Weight λ > 0 of the ℓ2,1 error term.
    max_iter : int, default=1000
        Maximum ALM iterations.
    tol : float, default=1e-8
        Stop when ‖Y − AZ − E‖_∞ and ‖Z − J‖_∞ are both below it.
    mu : float, default=1e-6
        Initial ALM penalty μ₀.
    rho : float, default=1.1
        Growth factor of μ (> 1).
    mu_max : float, default=1e10
        Cap on μ.
    rank_tol : float, default=1e-10
        Relative threshold on the singular values of Y defining its rank r.

    Returns
    -------
    Z : ndarray, shape (n, n)
        Column i expresses point i.
    E : ndarray, shape (d, n)
        Sample-specific error, columns = points.
    n_iter : int
        Iterations run (0 when X is zero).
    err : float
        Final max of the two constraint violations.
    """
    Y = np.ascontiguousarray(X.T)  # d×n, columns = points
    d, n = Y.shape
    Uy, s, Vt = np.linalg.svd(Y, full_matrices=False)
    r = int(np.sum(s > rank_tol * max(s[0], 1e-300))) if s.size else 0
    if r == 0:
        return np.zeros((n, n)), Y.copy(), 0, 0.0
    A = Uy[:, :r] * s[:r]          # d×r dictionary in row-space coordinates
    Q = Vt[:r].T                   # n×r, Z = Q Z̃
    AtA = A.T @ A
    inv_a = np.linalg.inv(AtA + np.eye(r))
    AtY = A.T @ Y
    Zt = np.zeros((r, n))
    J = np.zeros((r, n))
    E = np.zeros((d, n))
    Y1 = np.zeros((d, n))
    Y2 = np.zeros((r, n))
    err = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        J = _svt(Zt + Y2 / mu, 1.0 / mu)
        Zt = inv_a @ (AtY - A.T @ E + J + (A.T @ Y1 - Y2) / mu)
        R = Y - A @ Zt
        E = _col_shrink(R + Y1 / mu, lam / mu)
        leq1 = R - E
        leq2 = Zt - J
        err = max(float(np.max(np.abs(leq1))), float(np.max(np.abs(leq2))))
        if err < tol:
            break
        Y1 += mu * leq1
        Y2 += mu * leq2
        mu = min(rho * mu, mu_max)
    return Q @ Zt, E, it, err


class LRR(SubspaceScoreMixin, BoundedWorkMixin, ClusterMixin, BaseEstimator):
    """Low-rank representation subspace clustering (non-private reference).

    No ``predict``: a transductive spectral method, its labels come from an affinity between the
    training points, which has no rule for a new point. ``score`` is minus the subspace cost.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (max_iter ALM iterations, n×n matrices and an n³ spectral step; :meth:`planned_work`) is refused
    past the caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters k (1 ≤ k ≤ n).
    subspace_dim : int, default=3
        Dimension q (1 ≤ q < d) of the subspaces fitted to the clusters.
    lam : float, default=4.0
        > 0, weight λ of the ℓ2,1 error term. Small λ lets E absorb
        more of every point (more robust, lower-rank Z); large λ forces Y ≈ YZ.
    max_iter : int, default=1000
        ≥ 1, ALM stopping rule (cap on iterations).
    tol : float, default=1e-8
        > 0, ALM stopping rule (constraint violation).
    rho : float, default=1.1
        > 1, growth factor of the ALM penalty μ.
    normalize_affinity : bool, default=False
        False = the paper's |Z| + |Z|ᵀ; True divides each column of |Z| by its maximum
        first, as SSC does.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the k-means of the spectral step (and the fallback of
        :func:`fit_subspaces`).

    Attributes
    ----------
    labels_ : ndarray of int, shape (n,)
        Cluster of every point.
    subspaces_ : ndarray, shape (k, d, q)
        Orthonormal bases.
    cost_ : float
        Eq. (3) of ``subspaces_`` on X.
    coef_ : ndarray, shape (n, n)
        The representation Z.
    error_ : ndarray, shape (d, n)
        E, columns = points.
    affinity_ : ndarray, shape (n, n)
        The affinity.
    n_iter_ : int
        ALM iterations.
    alm_error_ : float
        Final constraint violation.
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.

    ``max_iter`` is a cap on iterations with early stopping (the vocabulary of every dpcore
    estimator; ``n_iter`` names an exact count).
    """

    def __init__(self, *, n_clusters=3, subspace_dim=3, lam=4.0, max_iter=1000, tol=1e-8, rho=1.1,
                 normalize_affinity=False, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.rho = rho
        self.normalize_affinity = normalize_affinity
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): max_iter ALM iterations
        and an n×n spectral step."""
        w = Work(n, d, nnz, sparse)
        k, q = clusters_of(self, n, default=3), min(param_int(self, "subspace_dim", 3), max(d - 1, 1))
        add_lrr(w, n, d, k, q, param_int(self, "max_iter", 1000))
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Cluster the rows of X (BLAS single-threaded, see common.single_threaded).

        Parameters
        ----------
        X : array_like, shape (n, d)
            The points as rows; finite, n ≥ 1, d ≥ 2.
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            If X is not a finite 2-D array with at least 1 row and 2 columns, or a
            parameter is out of its range.
        """
        with single_threaded():
            return self._fit(X)

    def _fit(self, X):
        record_features(self, X)
        X, k, q = check_solver_input(X, self.n_clusters, self.subspace_dim)
        lam = check_real(self.lam, "lam", 0.0, None, low_inclusive=False)
        max_iter = check_int(self.max_iter, "max_iter", 1)
        tol = check_real(self.tol, "tol", 0.0, None, low_inclusive=False)
        rho = check_real(self.rho, "rho", 1.0, None, low_inclusive=False)
        rng = check_random_state(self.random_state)
        Z, E, it, err = lrr_inexact_alm(X, lam, max_iter=max_iter, tol=tol, rho=rho)
        W = affinity_from_coefficients(Z, normalize_columns=bool(self.normalize_affinity))
        labels = spectral_clustering(W, k, rng)
        self.coef_ = Z
        self.error_ = E
        self.affinity_ = W
        self.n_iter_ = int(it)
        self.alm_error_ = err
        self.labels_ = labels
        self.subspaces_ = fit_subspaces(X, labels, k, q, rng)
        self.cost_ = subspace_cost(X, self.subspaces_)
        self.n_features_in_ = X.shape[1]
        return self
