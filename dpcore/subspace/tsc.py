"""Thresholding-based subspace clustering (TSC; Heckel & Bölcskei 2015).

Two variants:

- ``variant="simplified"`` — Alg. 2 of the subspace paper (the solver the sample-aggregate
  analysis of §3.3 uses): connect every point to the s other points with the largest
  |⟨xᵢ, xⱼ⟩|, symmetrise, take the connected components as clusters and span each
  subspace by q points drawn at random from its component.
- ``variant="full"`` — the method of Heckel & Bölcskei: the same s-nearest-neighbour graph
  weighted by exp(−2·arccos|⟨xᵢ, xⱼ⟩|), symmetrised, then spectral clustering into k
  clusters, and the subspaces fitted to the clusters by :func:`fit_subspaces`.

Decisions (the paper is silent):

- Inner products are taken between rows normalised to unit length, as in Heckel &
  Bölcskei (|⟨xᵢ, xⱼ⟩| becomes |cos∠(xᵢ, xⱼ)|). In the paper's stochastic model ‖xᵢ‖ ≈ 1,
  so this matches Alg. 2 there; on other data it stops short points from never being
  anyone's neighbour. Rows that are exactly zero are left as zero vectors.
- The simplified variant needs exactly k components. If the graph has a different number
  of components it falls back to the full method's spectral clustering of the weighted
  graph (``used_fallback_`` is then True); its subspaces are still spanned by q random
  points of each cluster, so the variant keeps its character.
- Default s (``n_neighbors=None``): max(3, ⌈n/(10k)⌉) clipped to n−1, i.e. n_ℓ/10 for
  balanced clusters (n_ℓ ≈ n/k) — inside the range 0.04·n_ℓ ≤ s ≤ n_ℓ/6 of Lemma 3.5.
  (n_ℓ/20 split small clusters into several components, e.g. 150 points on two planes
  of R^6 at s = 4.)
- The graph is symmetrised as W + Wᵀ (an edge chosen by both endpoints gets twice the
  weight), as in Heckel & Bölcskei; only its support matters for the components.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_int, check_random_state, record_features
from ..work import BoundedWorkMixin, Work, add_tsc, clusters_of, param_int
from ..metrics import subspace_cost
from .common import (SubspaceScoreMixin, check_solver_input, complete_basis, fit_subspaces, spectral_clustering,
                     single_threaded)

__all__ = ["TSC", "thresholding_graph"]


def thresholding_graph(X, n_neighbors):
    """Symmetric weighted s-nearest-neighbour graph of TSC (CSR, n×n, zero diagonal).

    Row i holds exp(−2·arccos|⟨x̂ᵢ, x̂ⱼ⟩|) for the s points j ≠ i with the largest
    |⟨x̂ᵢ, x̂ⱼ⟩| (x̂ = x/‖x‖); the graph is completed as W + Wᵀ so that an edge exists
    whenever either endpoint chose the other (Alg. 2, step 2); mutual choices add up.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        The points as rows (zero rows stay zero vectors).
    n_neighbors : int
        Number s of neighbours chosen by every point, 1 ≤ s ≤ n − 1 (not checked here;
        :class:`TSC` checks it).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, n)
        The symmetric affinity W + Wᵀ.
    """
    n = X.shape[0]
    s = n_neighbors
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    Xh = X / np.where(norms > 0, norms, 1.0)
    A = np.abs(Xh @ Xh.T)
    np.fill_diagonal(A, -1.0)  # never one's own neighbour
    idx = np.argpartition(-A, s - 1, axis=1)[:, :s]
    rows = np.repeat(np.arange(n), s)
    cols = idx.ravel()
    cosv = np.clip(A[rows, cols], 0.0, 1.0)
    w = np.exp(-2.0 * np.arccos(cosv))
    W = sp.csr_matrix((w, (rows, cols)), shape=(n, n))
    return (W + W.T).tocsr()


class TSC(SubspaceScoreMixin, BoundedWorkMixin, ClusterMixin, BaseEstimator):
    """Thresholding-based subspace clustering (non-private reference).

    No ``predict``: a transductive spectral method, its labels come from an affinity between the
    training points, which has no rule for a new point. ``score`` is minus the subspace cost.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X (n²
    inner products and the spectral step (n³ up to n = 3,000); :meth:`planned_work`) is refused past
    the caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters k (1 ≤ k ≤ n).
    subspace_dim : int, default=3
        Subspace dimension q (1 ≤ q < d), used to fit/span the subspaces.
    n_neighbors : int or None, default=None
        Number s of neighbours, in [1, n−1], or None for max(3, ⌈n/(10k)⌉) clipped to n−1.
    variant : {"full", "simplified"}, default="full"
        ``"full"`` (weighted graph + spectral clustering) or ``"simplified"``
        (connected components, Alg. 2 of the paper).
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the k-means in the spectral step and the random points of the
        simplified variant.

    Attributes
    ----------
    labels_ : ndarray of int, shape (n,)
        Cluster of every point.
    subspaces_ : ndarray, shape (k, d, q)
        Orthonormal bases.
    cost_ : float
        Eq. (3) of ``subspaces_`` on X.
    affinity_ : scipy.sparse.csr_matrix, shape (n, n)
        The thresholding graph.
    n_components_ : int
        Connected components of the graph.
    used_fallback_ : bool
        Simplified variant only: True when the components were not exactly k and spectral
        clustering was used instead.
    n_neighbors_ : int
        The s used.
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    """

    def __init__(self, *, n_clusters=3, subspace_dim=3, n_neighbors=None, variant="full", random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.n_neighbors = n_neighbors
        self.variant = variant
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): n² inner products."""
        w = Work(n, d, nnz, sparse)
        k, q = clusters_of(self, n, default=3), min(param_int(self, "subspace_dim", 3), max(d - 1, 1))
        s = min(max(3, math.ceil(n / (10 * k))), n - 1) if self.n_neighbors is None else \
            min(check_int(self.n_neighbors, "n_neighbors", 1), max(n - 1, 1))
        add_tsc(w, n, d, k, q, s)
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
            parameter is out of its range.
        """
        with single_threaded():
            return self._fit(X)

    def _fit(self, X):
        record_features(self, X)
        X, k, q = check_solver_input(X, self.n_clusters, self.subspace_dim)
        n, d = X.shape
        if n < 2:
            raise ValueError("X must have at least 2 rows for TSC (each point needs a neighbour)")
        if self.variant not in ("full", "simplified"):
            raise ValueError(f"variant must be 'full' or 'simplified'; got {self.variant!r}")
        if self.n_neighbors is None:
            s = min(max(3, math.ceil(n / (10 * k))), n - 1)
        else:
            s = check_int(self.n_neighbors, "n_neighbors", 1, n - 1)
        rng = check_random_state(self.random_state)
        W = thresholding_graph(X, s)
        n_comp, comp = connected_components(W, directed=False)
        self.n_neighbors_ = s
        self.affinity_ = W
        self.n_components_ = int(n_comp)
        self.used_fallback_ = False
        if self.variant == "simplified":
            if n_comp == k:
                labels = comp.astype(np.int64)
            else:
                labels = spectral_clustering(W, k, rng)
                self.used_fallback_ = True
            U = np.empty((k, d, q))
            for ell in range(k):
                members = np.flatnonzero(labels == ell)
                if members.size == 0:
                    U[ell] = complete_basis(None, d, q, rng)
                    continue
                pick = rng.choice(members, size=min(q, members.size), replace=False)
                Uq, sv, _ = np.linalg.svd(X[pick].T, full_matrices=False)
                r = int(np.sum(sv > 1e-10 * max(sv[0], 1e-300))) if sv.size else 0
                U[ell] = complete_basis(Uq[:, :r] if r else None, d, q, rng)
        else:
            labels = spectral_clustering(W, k, rng)
            U = fit_subspaces(X, labels, k, q, rng)
        self.labels_ = labels
        self.subspaces_ = U
        self.cost_ = subspace_cost(X, U)
        self.n_features_in_ = d
        return self
