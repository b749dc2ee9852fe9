"""Building blocks shared by every subspace clustering solver (private or not).

- :func:`fit_subspaces` — the ONE "fit a q-dimensional subspace to each cluster" step
  (top-q right singular vectors of the cluster's rows = top-q eigenvectors of
  ``A_ℓ A_ℓᵀ`` in the paper's column notation, App. E step 2);
- :func:`assign_to_subspaces` — nearest-subspace assignment (App. E step 1);
- :func:`spectral_clustering` — the ONE spectral step used by TSC, SSC and LRR
  (normalised Laplacian embedding + k-means, Ng, Jordan & Weiss 2002);
- :class:`SubspaceScoreMixin` and :class:`SubspacePredictMixin` — ``score`` (every subspace
  estimator) and ``predict`` (those whose model assigns new points).

Subspaces are always stacks of orthonormal bases, an array of shape (k, d, q).
Points are rows (X is n×d).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from sklearn.cluster import KMeans
from threadpoolctl import ThreadpoolController

from ..validation import check_array, check_fitted_input, check_int, check_random_state, check_subspaces
from ..metrics import squared_distances_to_subspaces

__all__ = ["fit_subspaces", "assign_to_subspaces", "spectral_clustering", "check_solver_input",
           "complete_basis", "affinity_from_coefficients", "single_threaded",
           "single_threaded_depth", "SubspaceScoreMixin", "SubspacePredictMixin"]

# Above this ambient dimension the per-cluster d×d scatter eigendecomposition is replaced
# by a thin SVD of the cluster's rows (cheaper when d ≫ n_ℓ, e.g. raw 2016-pixel faces).
_SCATTER_MAX_D = 256


_CONTROLLER = None
_LOCAL = threading.local()


@contextmanager
def single_threaded():
    """Context manager limiting BLAS/OpenMP thread pools to one thread.

    Every solver's ``fit`` runs inside this context: on its thin or mid-sized matrices
    multithreaded BLAS gains little and is many times slower on a shared machine
    (busy-waiting threads; the measurements: docs/benchmarks.md, "Why these defaults").
    Nested uses are free and the thread-pool controller is built once, since sample-aggregate
    calls a solver hundreds of times.

    Compiled kernels' threads (numba): the Gibbs engine runs its chains in parallel threads
    unless the calling code is inside a ``single_threaded()`` context *entered around* the
    solver (the reproduction's worker processes, ``dpcore.lab.sweeps.run_task``): then it uses one
    thread, so that parallel worker processes do not oversubscribe the cores. The solver's
    own context (its ``fit``) limits BLAS only; the engine tells the two apart by the
    nesting depth (:func:`single_threaded_depth`).

    Yields
    ------
    None
        Use as ``with single_threaded(): ...``.
    """
    global _CONTROLLER
    depth = getattr(_LOCAL, "depth", 0)
    if depth > 0:
        _LOCAL.depth = depth + 1
        try:
            yield
        finally:
            _LOCAL.depth = depth
        return
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1):
        _LOCAL.depth = 1
        try:
            yield
        finally:
            _LOCAL.depth = 0


def single_threaded_depth():
    """How many :func:`single_threaded` contexts the calling thread is inside (0: none).

    Returns
    -------
    int
        The nesting depth.
    """
    return getattr(_LOCAL, "depth", 0)


def check_solver_input(X, n_clusters, subspace_dim, name_k="n_clusters", name_q="subspace_dim"):
    """Validate (X, k, q) the same way for every solver.

    X: finite n×d array with n ≥ 1; k an integer in [1, n]; q an integer in [1, d−1]
    (a proper subspace of R^d). Returns ``(X, k, q)``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The points as rows; finite, n ≥ 1, d ≥ 2.
    n_clusters : int
        k, in [1, n].
    subspace_dim : int
        q, in [1, d − 1].
    name_k : str, default="n_clusters"
        Name of k in error messages.
    name_q : str, default="subspace_dim"
        Name of q in error messages.

    Returns
    -------
    X : ndarray of float64, shape (n, d)
        The validated array.
    k : int
        Number of clusters.
    q : int
        Subspace dimension.

    Raises
    ------
    ValueError
        If X is not a finite 2-D array with n ≥ 1 and d ≥ 2, or k or q is out of range.
    """
    X = check_array(X, "X")
    n, d = X.shape
    if d < 2:
        raise ValueError(f"X must have at least 2 columns (features) so that a proper subspace exists; got {d}")
    k = check_int(n_clusters, name_k, 1, n)
    q = check_int(subspace_dim, name_q, 1, d - 1)
    return X, k, q


def complete_basis(B, d, q, rng):
    """Extend the orthonormal columns of ``B`` (d×r, r ≤ q) to q orthonormal columns.

    The new columns are random directions orthogonal to range(B) (uniform on the
    complement's Grassmannian).

    Parameters
    ----------
    B : ndarray of shape (d, r) or None
        Orthonormal columns to keep (None = no column, r = 0). If r ≥ q the first q columns
        are returned.
    d : int
        Ambient dimension.
    q : int
        Number of columns wanted (≤ d).
    rng : numpy.random.Generator
        Source of the random directions.

    Returns
    -------
    ndarray of float64, shape (d, q)
        ``B``'s columns followed by q − r random orthonormal ones.
    """
    r = 0 if B is None else B.shape[1]
    if r >= q:
        return B[:, :q]
    G = rng.standard_normal((d, q - r))
    if r:
        G -= B @ (B.T @ G)
        G -= B @ (B.T @ G)  # second pass for numerical orthogonality
    Q, _ = np.linalg.qr(G)
    return Q if r == 0 else np.hstack([B, Q])


def fit_subspaces(X, labels, n_clusters, subspace_dim, random_state=None):
    """Best-fitting q-dimensional linear subspace of every cluster.

    For cluster ℓ the basis is the top-q right singular vectors of the rows
    ``X[labels == ℓ]`` (equivalently the top-q eigenvectors of the unnormalised scatter
    ``Σ_{i∈ℓ} xᵢxᵢᵀ``), which minimises Σ_{i∈ℓ} d²(xᵢ, S) over q-dimensional S.

    Fallback for an empty or too-small cluster (documented decision): a cluster with no
    point gets a uniformly random subspace; a cluster whose rows span r < q dimensions
    gets the span of its rows completed by random orthogonal directions, both drawn from
    ``random_state``. (:func:`dpcore.subspace.kplane.kplane_step` avoids this case by
    re-seeding small clusters with badly fitted points first.)

    Labels outside [0, k) are ignored (e.g. −1 for "unassigned").

    Returns an array of shape (k, d, q) with orthonormal columns.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The points as rows; finite.
    labels : array_like of int, shape (n,)
        Cluster of every row; entries outside [0, k) are ignored.
    n_clusters : int
        k ≥ 1.
    subspace_dim : int
        q, in [1, d − 1].
    random_state : None, int or numpy.random.Generator, optional
        Source of the fallback's random directions.

    Returns
    -------
    ndarray of float64, shape (k, d, q)
        Orthonormal bases.

    Raises
    ------
    ValueError
        If X is not a finite 2-D array, k < 1, q is outside [1, d − 1], or ``labels`` does
        not have one entry per row.
    """
    X = check_array(X, "X")
    n, d = X.shape
    k = check_int(n_clusters, "n_clusters", 1)
    q = check_int(subspace_dim, "subspace_dim", 1, d - 1)
    labels = np.asarray(labels).ravel()
    if labels.shape[0] != n:
        raise ValueError(f"labels must have one entry per row of X ({n}); got {labels.shape[0]}")
    labels = labels.astype(np.int64)
    rng = check_random_state(random_state)
    valid = (labels >= 0) & (labels < k)
    counts = np.bincount(labels[valid], minlength=k)
    out = np.empty((k, d, q))
    if d <= _SCATTER_MAX_D:
        # batched scatter matrices S_ℓ = X_ℓᵀ X_ℓ, then one batched eigh
        S = np.zeros((k, d, d))
        for ell in np.flatnonzero(counts):
            Xl = X[labels == ell]
            S[ell] = Xl.T @ Xl
        w, V = np.linalg.eigh(S)  # ascending eigenvalues
        tops = V[:, :, ::-1][:, :, :q]
        wtop = w[:, ::-1][:, :q]
    for ell in range(k):
        if counts[ell] == 0:
            out[ell] = complete_basis(None, d, q, rng)
            continue
        if d <= _SCATTER_MAX_D:
            B, sv2 = tops[ell], wtop[ell]
            scale = max(sv2[0], 0.0)
            rank = int(np.sum(sv2 > 1e-12 * scale)) if scale > 0 else 0
        else:
            _, s, Vt = np.linalg.svd(X[labels == ell], full_matrices=False)
            B = Vt[:q].T
            rank = int(np.sum(s[:q] > 1e-6 * s[0])) if s.size and s[0] > 0 else 0
        if rank >= q:
            out[ell] = B
        else:
            out[ell] = complete_basis(B[:, :rank] if rank else None, d, q, rng)
    return out


def assign_to_subspaces(X, subspaces):
    """Index of the nearest subspace of every row: argmin_ℓ d²(xᵢ, S_ℓ) (ties → lowest ℓ).

    Parameters
    ----------
    X : array_like, shape (n, d)
        The points as rows; finite.
    subspaces : array_like, shape (k, d, q)
        Orthonormal bases.

    Returns
    -------
    ndarray of int, shape (n,)
        Index in [0, k) of the nearest subspace.

    Raises
    ------
    ValueError
        If X is not a finite 2-D array or ``subspaces`` is not a (k, d, q) stack of
        orthonormal bases matching X's d.
    """
    X = check_array(X, "X")
    U = check_subspaces(subspaces, "subspaces", d=X.shape[1])
    return np.argmin(squared_distances_to_subspaces(X, U), axis=1)


def affinity_from_coefficients(C, normalize_columns=True):
    """Symmetric affinity |C| + |C|ᵀ of a self-expression matrix (SSC, LRR).

    With ``normalize_columns`` each column of |C| (the coefficients that express one
    point) is first divided by its largest entry, as in the SSC authors' code
    (``BuildAdjacency``), so that every point has at least one edge of weight 1.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Self-expression coefficients, column i expressing point i.
    normalize_columns : bool, default=True
        Divide every column of |C| by its largest entry first (zero columns are left as
        they are).

    Returns
    -------
    ndarray of float64, shape (n, n)
        Symmetric non-negative affinity with zero diagonal.
    """
    A = np.abs(np.asarray(C, dtype=np.float64))
    if normalize_columns:
        m = A.max(axis=0)
        A = A / np.where(m > 0, m, 1.0)[None, :]
    W = A + A.T
    np.fill_diagonal(W, 0.0)
    return W


def spectral_clustering(affinity, n_clusters, random_state=None, n_init=10):
    """Normalised spectral clustering (Ng, Jordan & Weiss 2002), the shared spectral step.

    1. L_sym = I − D^{-1/2} W D^{-1/2}; take the eigenvectors of its k smallest eigenvalues
       (= the k largest of D^{-1/2} W D^{-1/2});
    2. normalise every row of the n×k embedding to unit length;
    3. k-means (scikit-learn, ``n_init`` restarts, seed drawn from ``random_state``).

    ``affinity`` is a symmetric non-negative n×n array or scipy.sparse matrix (negative
    entries are taken in absolute value; it is symmetrised as (W + Wᵀ)/2). Isolated points
    (degree 0) get a zero embedding row and end up in whichever cluster k-means gives them.
    Returns labels in [0, k).

    Parameters
    ----------
    affinity : array_like or scipy.sparse matrix, shape (n, n)
        Finite affinity W (see above).
    n_clusters : int
        k, in [1, n].
    random_state : None, int or numpy.random.Generator, optional
        Source of the k-means seed (and the start vector of the sparse eigensolver).
    n_init : int, default=10
        k-means restarts.

    Returns
    -------
    ndarray of int64, shape (n,)
        Labels in [0, k).

    Raises
    ------
    ValueError
        If ``affinity`` is not square or not finite, or k is outside [1, n].
    """
    k = check_int(n_clusters, "n_clusters", 1)
    rng = check_random_state(random_state)
    if sp.issparse(affinity):
        W = sp.csr_matrix(affinity, dtype=np.float64)
        if W.shape[0] != W.shape[1]:
            raise ValueError(f"affinity must be square (n×n); got shape {W.shape}")
        if not np.all(np.isfinite(W.data)):
            raise ValueError("affinity must contain only finite values (no NaN or inf)")
        W = abs(W)
        W = (W + W.T) * 0.5
        n = W.shape[0]
    else:
        W = np.asarray(affinity, dtype=np.float64)
        if W.ndim != 2 or W.shape[0] != W.shape[1]:
            raise ValueError(f"affinity must be square (n×n); got shape {W.shape}")
        if not np.all(np.isfinite(W)):
            raise ValueError("affinity must contain only finite values (no NaN or inf)")
        W = np.abs(W)
        W = (W + W.T) * 0.5
        n = W.shape[0]
    if k > n:
        raise ValueError(f"n_clusters must be an integer in [1, {n}] (at most the number of points); got {k}")
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    dinv = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
    if sp.issparse(W):
        M = sp.diags(dinv) @ W @ sp.diags(dinv)
        if n <= 3000:
            M = M.toarray()
    else:
        M = W * dinv[:, None] * dinv[None, :]
    seed = int(rng.integers(2**31 - 1))
    with single_threaded():
        if sp.issparse(M):
            v0 = rng.standard_normal(n)
            _, E = scipy.sparse.linalg.eigsh(M, k=k, which="LA", v0=v0)
        else:
            _, E = scipy.linalg.eigh(M, subset_by_index=[n - k, n - 1], check_finite=False)
        norms = np.linalg.norm(E, axis=1, keepdims=True)
        E = E / np.where(norms > 0, norms, 1.0)
        km = KMeans(n_clusters=k, n_init=n_init, random_state=seed)
        return km.fit_predict(E).astype(np.int64)


class SubspaceScoreMixin:
    """``score`` of a fitted subspace estimator: minus the k-means subspace cost of X against
    the fitted ``subspaces_``, as a sum (n times :func:`dpcore.metrics.subspace_cost`).

    The bases stay float64 whatever the input dtype: rounding them to float32 would break
    the orthonormality (UᵀU = I to 1e-6) that :func:`dpcore.validation.check_subspaces`
    requires of them downstream at large d.
    """

    def score(self, X, y=None):
        """−Σᵢ min_ℓ d²(xᵢ, S_ℓ) over the rows of X as given (no clipping) and the fitted
        ``subspaces_``. Higher is better; NOT private (reads X without noise).

        Parameters
        ----------
        X : array_like or pandas.DataFrame of shape (n, d)
            The points as rows, with the d (and feature names) of ``fit``.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        float
        """
        X = check_fitted_input(self, X, "subspaces_")
        return -float(squared_distances_to_subspaces(X, self.subspaces_).min(axis=1).sum())


class SubspacePredictMixin(SubspaceScoreMixin):
    """``predict`` (nearest fitted subspace) and ``score`` (:class:`SubspaceScoreMixin`)."""

    def predict(self, X):
        """Index of the nearest fitted subspace of every row of X: argmin_ℓ d²(xᵢ, S_ℓ) (ties →
        lowest ℓ; scale-free, so clipping the rows would not change it). NOT private: it reads
        the raw points.

        Parameters
        ----------
        X : array_like or pandas.DataFrame of shape (n, d)
            The points as rows, with the d (and feature names) of ``fit``.

        Returns
        -------
        ndarray of int64 of shape (n,)
            Indices into ``subspaces_``.
        """
        X = check_fitted_input(self, X, "subspaces_")
        return np.argmin(squared_distances_to_subspaces(X, self.subspaces_), axis=1).astype(np.int64)
