"""Sparse subspace clustering (SSC; Elhamifar & Vidal, TPAMI 2013), noisy formulation by ADMM.

Every point is written as a sparse combination of the others (columns-as-points notation
of the paper, Y = Xᵀ is d×n):

    min_C ‖C‖₁ + (λ_z/2)‖Y − YC‖_F²   s.t. diag(C) = 0,

solved by ADMM with the splitting C = Z (Z carries the quadratic term and diag(Z) = 0,
C carries the ℓ1 term), the iteration of the authors' reference code except that the
Z-step enforces diag(Z) = 0 exactly (see :func:`ssc_admm`):

    Z ← argmin λ_z/2‖Y − YZ‖² + ρ/2‖Z − C + Λ/ρ‖²  s.t. diag(Z) = 0
    C ← soft-threshold(Z + Λ/ρ, 1/ρ),             diag(C) ← 0
    Λ ← Λ + ρ(Z − C)

stopping when max|Z − C| ≤ ``tol`` or after ``max_iter`` iterations.

Default parameterisation (the authors' code, stated here as required):
λ_z = α/μ_z with μ_z = min_i max_{j≠i} |xᵢᵀxⱼ| (the data's mutual coherence bound of
Elhamifar & Vidal, Prop. 1: any λ_z > 1/μ_z gives non-zero coefficients), α = 20; the ADMM
penalty ρ = α; tol = 2·10⁻⁴; max_iter = 200. The affinity is |C| + |C|ᵀ after dividing
every column of |C| by its largest entry (authors' ``BuildAdjacency``); labels come from the
shared spectral step, subspaces from :func:`fit_subspaces`. The affine constraint 1ᵀC = 1ᵀ
is not used (linear subspaces, as in the paper's data).

Speed: (λ_z YᵀY + ρI)⁻¹ is an n×n inverse of a rank-d update of ρI; by the Woodbury
identity Z = V + X K⁻¹ Xᵀ(I − V) with V = C − Λ/ρ and K = (ρ/λ_z)I_d + XᵀX (d×d), so no
n×n system is ever formed or solved; one iteration costs O(n²d).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_int, check_random_state, check_real, record_features
from ..work import BoundedWorkMixin, Work, add_ssc, clusters_of, param_int
from ..metrics import subspace_cost
from .common import (SubspaceScoreMixin, affinity_from_coefficients, check_solver_input, fit_subspaces,
                     spectral_clustering, single_threaded)

__all__ = ["SSC", "ssc_admm", "mutual_coherence_lambda"]


def _coherence(X):
    G = np.abs(X @ X.T)
    np.fill_diagonal(G, -np.inf)
    return float(G.max(axis=1).min())


def mutual_coherence_lambda(X, alpha=20.0):
    """λ_z = α/μ_z with μ_z = min_i max_{j≠i} |xᵢᵀxⱼ| (points as rows). Returns (λ_z, μ_z).

    Parameters
    ----------
    X : ndarray, shape (n, d)
        The points as rows (n ≥ 2).
    alpha : float, default=20.0
        The factor α (> 0 in :class:`SSC`; not checked here).

    Returns
    -------
    lam : float
        λ_z = α/μ_z.
    mu : float
        The mutual coherence bound μ_z.

    Raises
    ------
    ValueError
        If some point is orthogonal to all others (μ_z = 0).
    """
    mu = _coherence(X)
    if not mu > 0:
        raise ValueError("X has a point orthogonal to all others (mutual coherence μ_z = 0): "
                         "SSC's default λ_z = alpha/μ_z is undefined; pass lam explicitly")
    return alpha / mu, mu


def ssc_admm(X, lam, rho, max_iter=200, tol=2e-4, block_size=None, check_every=1):
    """ADMM for min ‖C‖₁ + (lam/2)‖Xᵀ − XᵀC‖_F² s.t. diag(C)=0 (X rows = points).

    Returns (C, n_iter, err): C n×n (column i the coefficients expressing xᵢ), n_iter the
    largest number of iterations any column block needed, err the largest final
    max|Z − C|.

    Implementation of the authors' iteration in an equivalent cheaper form. With the
    scaled dual U = Λ/ρ and V = C − U, the Z-step is Z = V + X K⁻¹Xᵀ(I − V) (Woodbury,
    K = (ρ/lam)I_d + XᵀX, d×d). Writing T = Z + U = C + X K⁻¹Xᵀ(I − V) (zero diagonal),
    the C-step is C⁺ = T − clip(T, ±1/ρ) and the dual step gives
    U⁺ = U + Z − C⁺ = clip(T, ±1/ρ) (diag(U) stays 0), so the residual is Z − C⁺ = U⁺ − U.

    The Z-step is solved exactly under diag(Z) = 0: for column i the constraint adds a
    multiple of A eᵢ (A = (lam YᵀY + ρI)⁻¹ = (I − P)/ρ, P = X K⁻¹Xᵀ), i.e.
    Zᵢ = Zᵢᵘ − γᵢ(eᵢ − P eᵢ) with γᵢ = (Zᵘ)ᵢᵢ/(1 − Pᵢᵢ). (The authors' code instead zeroes
    the diagonal after the unconstrained solve; that shortcut's fixed point is not the
    minimiser — on a 60-point test its objective was 3 % above scikit-learn's Lasso —
    while this exact step converges to the Lasso optimum.)

    The problem separates over the columns of C (one Lasso per point sharing the Gram
    matrix), and so does this ADMM: it is run on blocks of ``block_size`` columns that fit
    in the CPU cache, each block stopping when its own max|Z − C| ≤ tol. Every column thus
    meets the authors' stopping rule; a block that converges early is not iterated further
    (the global loop of the reference code would keep moving it by less than tol).
    BLAS is limited to one thread inside: these thin products are memory bound, and
    multithreaded BLAS is much slower on a loaded machine (docs/benchmarks.md).

    ``check_every`` > 1 evaluates the stopping rule only every that many iterations (one
    pass fewer per skipped check; the loop may then run a few iterations past tol).
    ``block_size`` None = max(8, 32768 // n) columns (≈ 256 KB per n×block array).

    Parameters
    ----------
    X : ndarray, shape (n, d)
        The points as rows (not validated here; :class:`SSC` validates).
    lam : float
        λ_z > 0, weight of the quadratic term.
    rho : float
        ADMM penalty ρ > 0.
    max_iter : int, default=200
        Maximum iterations per column block.
    tol : float, default=2e-4
        Stopping threshold on max|Z − C|.
    block_size : int, optional
        Columns per block; None = max(8, min(n, 32768 // n)).
    check_every : int, default=1
        Evaluate the stopping rule every that many iterations (values < 1 count as 1).

    Returns
    -------
    C : ndarray, shape (n, n)
        Column i holds the coefficients expressing xᵢ (zero diagonal).
    n_iter : int
        Largest number of iterations any column block needed.
    err : float
        Largest final max|Z − C| over the blocks.
    """
    n, d = X.shape
    if block_size is None:
        block_size = max(8, min(n, 32768 // max(n, 1)))
    block_size = int(block_size)
    check_every = max(1, int(check_every))
    K = (rho / lam) * np.eye(d) + X.T @ X
    B = np.ascontiguousarray(np.linalg.solve(K, X.T).T)  # X K⁻¹ (n×d)
    Xt = np.ascontiguousarray(X.T)
    C_all = np.empty((n, n))
    thr = 1.0 / rho
    n_iter, err_all = 0, 0.0
    with single_threaded():
        for s0 in range(0, n, block_size):
            s1 = min(n, s0 + block_size)
            m = s1 - s0
            C = np.zeros((n, m))
            U = np.zeros((n, m))      # scaled dual Λ/ρ
            U_new = np.empty((n, m))
            T = np.empty((n, m))
            Xt_blk = np.ascontiguousarray(Xt[:, s0:s1])
            B_blk = B[s0:s1]
            rows, cols = np.arange(s0, s1), np.arange(m)
            inv_gap = 1.0 / (1.0 - np.einsum("id,di->i", B_blk, Xt_blk))   # 1/(1 − P_ii)
            err, it = np.inf, 0
            for it in range(1, max_iter + 1):
                Wd = Xt_blk - Xt @ C + Xt @ U             # Xᵀ(I − V), V = C − U, d×m
                gamma = np.einsum("id,di->i", B_blk, Wd) * inv_gap   # (P(I − V))ᵢᵢ/(1 − Pᵢᵢ)
                Wd += Xt_blk * gamma[None, :]             # P(I − V) + γᵢPeᵢ = B(Wd + Xᵀeᵢγᵢ)
                np.matmul(B, Wd, out=T)
                T += C                                    # T = Z + U (constrained Z-step)
                T[rows, cols] = 0.0                       # diag(Z) = 0 (exact: −γᵢeᵢ)
                np.clip(T, -thr, thr, out=U_new)          # U⁺ = clip(T)
                np.subtract(T, U_new, out=C)              # C⁺ = soft(T, 1/ρ)
                check = it % check_every == 0 or it == max_iter
                if check:
                    np.subtract(U_new, U, out=T)          # Z − C⁺ = U⁺ − U
                    err = float(max(T.max(), -T.min()))
                U, U_new = U_new, U
                if check and err <= tol:
                    break
            C_all[:, s0:s1] = C
            n_iter = max(n_iter, it)
            err_all = max(err_all, err)
    return C_all, n_iter, err_all


class SSC(SubspaceScoreMixin, BoundedWorkMixin, ClusterMixin, BaseEstimator):
    """Sparse subspace clustering by ADMM (non-private reference).

    No ``predict``: a transductive spectral method, its labels come from an affinity between the
    training points, which has no rule for a new point. ``score`` is minus the subspace cost.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (max_iter ADMM iterations of n²·d, n×n matrices and an n³ spectral step; :meth:`planned_work`)
    is refused past the caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters k (1 ≤ k ≤ n).
    subspace_dim : int, default=3
        Dimension q (1 ≤ q < d) of the subspaces fitted to the clusters.
    alpha : float, default=20.0
        > 0; λ_z = alpha/μ_z (default 20, the authors' value for noisy data).
        Larger alpha = less regularisation (closer to exact self-expression).
    lam : float or None, default=None
        > 0; if given, λ_z itself (alpha is then ignored).
    rho : float or None, default=None
        > 0, ADMM penalty; None = alpha (authors' choice).
    max_iter : int, default=200
        ≥ 1, maximum ADMM iterations.
    tol : float, default=2e-4
        > 0, stopping threshold on max|Z − C|.
    normalize_affinity : bool, default=True
        Divide each column of |C| by its maximum before |C| + |C|ᵀ.
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
        The coefficient matrix C.
    affinity_ : ndarray, shape (n, n)
        The affinity.
    lambda_ : float
        λ_z used.
    coherence_ : float
        μ_z.
    n_iter_ : int
        ADMM iterations.
    admm_error_ : float
        Final max|Z − C|.
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.

    ``max_iter`` is a cap on iterations with early stopping (the vocabulary of every dpcore
    estimator; ``n_iter`` names an exact count).
    """

    def __init__(self, *, n_clusters=3, subspace_dim=3, alpha=20.0, lam=None, rho=None, max_iter=200, tol=2e-4,
                 normalize_affinity=True, random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.alpha = alpha
        self.lam = lam
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.normalize_affinity = normalize_affinity
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): max_iter ADMM iterations
        of n² and an n×n spectral step."""
        w = Work(n, d, nnz, sparse)
        k, q = clusters_of(self, n, default=3), min(param_int(self, "subspace_dim", 3), max(d - 1, 1))
        add_ssc(w, n, d, k, q, param_int(self, "max_iter", 200))
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Cluster the rows of X (BLAS single-threaded, see common.single_threaded).

        Parameters
        ----------
        X : array_like, shape (n, d)
            The points as rows; finite, n ≥ 2, d ≥ 2.
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            If X is not a finite 2-D array with at least 2 rows and 2 columns, or a
            parameter is out of its range, or (default ``lam``) a point is orthogonal to all
            others.
        """
        with single_threaded():
            return self._fit(X)

    def _fit(self, X):
        record_features(self, X)
        X, k, q = check_solver_input(X, self.n_clusters, self.subspace_dim)
        if X.shape[0] < 2:
            raise ValueError("X must have at least 2 rows for SSC (a point is expressed by the others)")
        alpha = check_real(self.alpha, "alpha", 0.0, None, low_inclusive=False)
        max_iter = check_int(self.max_iter, "max_iter", 1)
        tol = check_real(self.tol, "tol", 0.0, None, low_inclusive=False)
        if self.lam is None:
            lam, mu = mutual_coherence_lambda(X, alpha)
        else:
            lam = check_real(self.lam, "lam", 0.0, None, low_inclusive=False)
            mu = _coherence(X)
        rho = alpha if self.rho is None else check_real(self.rho, "rho", 0.0, None, low_inclusive=False)
        rng = check_random_state(self.random_state)
        C, it, err = ssc_admm(X, lam, rho, max_iter, tol)
        W = affinity_from_coefficients(C, normalize_columns=bool(self.normalize_affinity))
        labels = spectral_clustering(W, k, rng)
        self.coef_ = C
        self.affinity_ = W
        self.lambda_ = float(lam)
        self.coherence_ = float(mu)
        self.n_iter_ = int(it)
        self.admm_error_ = err
        self.labels_ = labels
        self.subspaces_ = fit_subspaces(X, labels, k, q, rng)
        self.cost_ = subspace_cost(X, self.subspaces_)
        self.n_features_in_ = X.shape[1]
        return self
