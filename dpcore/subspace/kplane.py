"""k-plane clustering (Bradley & Mangasarian 2000), App. E steps 1–3 of the subspace paper.

Alternate (1) nearest-subspace assignment and (2) refitting every subspace to the top-q
eigenvectors of its cluster's scatter, until the assignment stops changing. Each step can
only lower the k-means subspace cost of eq. (3), so the loop converges to a local optimum;
``n_init`` restarts keep the run with the lowest cost.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_array, check_int, check_random_state, check_real, check_subspaces, record_features
from ..work import BoundedWorkMixin, Work, add_kplane, clusters_of, param_int
from ..data import random_subspaces
from ..metrics import squared_distances_to_subspaces
from .common import SubspacePredictMixin, check_solver_input, complete_basis, fit_subspaces, single_threaded

__all__ = ["KPlane", "kplane_step", "reseed_small_clusters", "init_subspaces"]


def reseed_small_clusters(X, labels, sqdist, n_clusters, subspace_dim):
    """Give every cluster with fewer than q points the worst-fitted points of other clusters.

    A cluster with fewer than q = ``subspace_dim`` points (in particular an empty one) would
    have an under-determined subspace. Such a cluster receives, one at a time, the points
    with the largest squared distance to their own assigned subspace (``sqdist`` is the n×k
    matrix of squared distances), taken only from clusters that keep more than q points.
    This is the k-plane analogue of the usual k-means fix for empty clusters
    (documented decision). Returns a new label array.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        The points as rows (not used by the rule; kept for a uniform signature).
    labels : ndarray of int, shape (n,)
        Current assignment, entries in [0, k).
    sqdist : ndarray, shape (n, k)
        Squared distance of every point to every subspace.
    n_clusters : int
        Number of clusters k.
    subspace_dim : int
        Subspace dimension q, the minimum cluster size wanted.

    Returns
    -------
    ndarray of int, shape (n,)
        A new label array (``labels`` is not modified). Clusters may still have fewer than q
        points when not enough points can be moved (n < k·q).
    """
    k, q = n_clusters, subspace_dim
    labels = labels.copy()
    counts = np.bincount(labels, minlength=k)
    small = np.flatnonzero(counts < q)
    if small.size == 0:
        return labels
    resid = sqdist[np.arange(labels.size), labels]
    order = np.argsort(-resid, kind="stable")
    pos = 0
    moved = np.zeros(labels.size, dtype=bool)
    for ell in small:
        while counts[ell] < q and pos < order.size:
            i = order[pos]
            pos += 1
            src = labels[i]
            if moved[i] or src == ell or counts[src] <= q:
                continue
            labels[i] = ell
            counts[src] -= 1
            counts[ell] += 1
            moved[i] = True
    return labels


def kplane_step(X, subspaces, random_state=None):
    """One k-plane iteration: assign every row to its nearest subspace, then refit.

    Parameters
    ----------
    X : (n, d) array of points as rows.
    subspaces : (k, d, q) array of orthonormal bases.
    random_state : used only by the fallback of :func:`fit_subspaces` when a cluster
        still has fewer than q points (possible only if n < k·q).

    Returns
    -------
    labels : (n,) the assignment used for the refit (nearest subspace, except that
        clusters with fewer than q points were re-seeded, see :func:`reseed_small_clusters`).
    new_subspaces : (k, d, q) the refitted bases.

    Raises
    ------
    ValueError
        If X is not a finite 2-D array or ``subspaces`` is not a (k, d, q) stack of
        orthonormal bases matching X's d.
    """
    X = check_array(X, "X")
    U = check_subspaces(subspaces, "subspaces", d=X.shape[1])
    k, _, q = U.shape
    D2 = squared_distances_to_subspaces(X, U)
    labels = np.argmin(D2, axis=1)
    labels = reseed_small_clusters(X, labels, D2, k, q)
    return labels, fit_subspaces(X, labels, k, q, random_state)


def init_subspaces(X, n_clusters, subspace_dim, method, rng):
    """Starting bases for k-plane.

    ``"random"``: k independent uniformly random q-dimensional subspaces (the column space
    of a d×q Gaussian matrix, as the paper generates subspaces). ``"points"``: the span of q
    distinct data points drawn at random for each subspace (completed randomly if the
    points are linearly dependent) — data-driven, usually a better start when d is large.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        The points as rows.
    n_clusters : int
        Number of subspaces k.
    subspace_dim : int
        Subspace dimension q (1 ≤ q < d, checked by the caller).
    method : {"random", "points"}
        How the bases are drawn (see above).
    rng : numpy.random.Generator
        Source of every random choice.

    Returns
    -------
    ndarray of float64, shape (k, d, q)
        Orthonormal starting bases.

    Raises
    ------
    ValueError
        If ``method`` is not ``"random"`` or ``"points"``.
    """
    n, d = X.shape
    k, q = n_clusters, subspace_dim
    if method == "random":
        return random_subspaces(k, d, q, rng)
    if method == "points":
        out = np.empty((k, d, q))
        m = min(q, n)
        for ell in range(k):
            P = X[rng.choice(n, size=m, replace=False)].T  # d×m
            Uq, s, _ = np.linalg.svd(P, full_matrices=False)
            r = int(np.sum(s > 1e-10 * max(s[0], 1e-300))) if s.size else 0
            out[ell] = complete_basis(Uq[:, :r] if r else None, d, q, rng)
        return out
    raise ValueError(f"init must be 'random', 'points' or an array of shape (k, d, q); got {method!r}")


class KPlane(SubspacePredictMixin, BoundedWorkMixin, ClusterMixin, BaseEstimator):
    """k-plane subspace clustering (non-private reference; App. E steps 1–3).

    ``predict`` assigns new points to the nearest fitted subspace (on the training rows it
    gives ``labels_``); ``score`` is minus the subspace cost (:class:`~.common.SubspaceScoreMixin`).

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (n_init × min(max_iter, 30) iterations of n·k·d·q; :meth:`planned_work`) is refused past the
    caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of subspaces k (1 ≤ k ≤ n).
    subspace_dim : int, default=3
        Dimension q of every subspace (1 ≤ q < d).
    n_init : int, default=10
        Number of restarts (≥ 1); the run with the lowest eq. (3) cost is kept.
        Ignored (one run) when ``init`` is an array.
    max_iter : int, default=100
        Maximum number of assignment/refit iterations per run (≥ 1).
    init : {"random", "points"} or array of shape (k, d, q), default="random"
        ``"random"`` (uniform random subspaces), ``"points"`` (spans of q random data
        points) or an array (k, d, q) of starting bases.
    tol : float, default=1e-8
        ≥ 0; a run stops when the assignment no longer changes or the cost
        decreases by at most ``tol`` (absolute, on the eq. (3) scale).
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the starts and the small-cluster fallback.

    Notes
    -----
    ``max_iter`` is a cap on iterations with early stopping (the vocabulary of every dpcore
    estimator; ``n_iter`` names an exact count).

    Attributes
    ----------
    labels_ : ndarray of int, shape (n,)
        Nearest-subspace assignment to ``subspaces_``.
    subspaces_ : ndarray, shape (k, d, q)
        Orthonormal bases.
    cost_ : float
        Eq. (3) cost of ``subspaces_`` on X (mean squared distance to the nearest one).
    n_iter_ : int
        Iterations of the kept run.
    cost_history_ : list of float
        Eq. (3) cost after every iteration of the kept run (non-increasing).
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    """

    def __init__(self, *, n_clusters=3, subspace_dim=3, n_init=10, max_iter=100, init="random", tol=1e-8,
                 random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.n_init = n_init
        self.max_iter = max_iter
        self.init = init
        self.tol = tol
        self.random_state = random_state

    def _validate(self, X):
        X, k, q = check_solver_input(X, self.n_clusters, self.subspace_dim)
        n_init = check_int(self.n_init, "n_init", 1)
        max_iter = check_int(self.max_iter, "max_iter", 1)
        tol = check_real(self.tol, "tol", 0.0, None)
        if isinstance(self.init, str):
            if self.init not in ("random", "points"):
                raise ValueError(f"init must be 'random', 'points' or an array of shape (k, d, q); got {self.init!r}")
            init = self.init
        else:
            init = check_subspaces(self.init, "init", d=X.shape[1])
            if init.shape != (k, X.shape[1], q):
                raise ValueError(f"init must have shape (n_clusters, d, subspace_dim) = {(k, X.shape[1], q)}; "
                                 f"got {init.shape}")
            n_init = 1
        return X, k, q, n_init, max_iter, tol, init

    @staticmethod
    def _run(X, U, max_iter, tol, rng):
        k, _, q = U.shape
        D2 = squared_distances_to_subspaces(X, U)
        labels = np.argmin(D2, axis=1)
        cost = D2[np.arange(X.shape[0]), labels].mean()
        history = []
        it = 0
        for it in range(1, max_iter + 1):
            fit_labels = reseed_small_clusters(X, labels, D2, k, q)
            U = fit_subspaces(X, fit_labels, k, q, rng)
            D2 = squared_distances_to_subspaces(X, U)
            new_labels = np.argmin(D2, axis=1)
            new_cost = D2.min(axis=1).mean()
            history.append(float(new_cost))
            converged = np.array_equal(new_labels, labels) or (cost - new_cost) <= tol
            labels, cost = new_labels, new_cost
            if converged:
                break
        return U, labels, float(cost), it, history

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): n_init runs of k-plane."""
        w = Work(n, d, nnz, sparse)
        k, q = clusters_of(self, n, default=3), min(param_int(self, "subspace_dim", 3), max(d - 1, 1))
        n_init = 1 if not isinstance(self.init, str) else param_int(self, "n_init", 10)
        add_kplane(w, n, d, k, q, n_init, param_int(self, "max_iter", 100))
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
        X, k, q, n_init, max_iter, tol, init = self._validate(X)
        rng = check_random_state(self.random_state)
        best = None
        for _ in range(n_init):
            U0 = init if not isinstance(init, str) else init_subspaces(X, k, q, init, rng)
            res = self._run(X, np.array(U0, dtype=np.float64), max_iter, tol, rng)
            if best is None or res[2] < best[2]:
                best = res
        self.subspaces_, self.labels_, self.cost_, self.n_iter_, self.cost_history_ = best
        self.n_features_in_ = X.shape[1]
        return self
