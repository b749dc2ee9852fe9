"""Metrics of the three papers: subspace distances, d_W, the k-means subspace cost,
clustering agreement (accuracy under the best matching, NMI, ARI) and centre objectives.

Subspaces are passed as stacks of orthonormal bases, an array of shape (k, d, q).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn import metrics as _skm

from .validation import check_array, check_subspaces
from .kmeans.common import check_points, nearest_centres

__all__ = [
    "principal_angles", "subspace_distance", "pairwise_subspace_distances", "wasserstein_distance",
    "squared_distances_to_subspaces", "subspace_cost", "clustering_accuracy", "nmi", "ari",
    "kmeans_objective", "kmedian_objective",
]


def principal_angles(U, V):
    """Principal angles θ₁ ≤ … ≤ θ_q (radians) between range(U) and range(V).

    Computed from the singular values of UᵀV (cosines), clipped to [0, 1].

    Parameters
    ----------
    U : array_like of shape (d, q)
        Orthonormal basis (not checked).
    V : array_like of shape (d, q')
        Orthonormal basis (not checked).

    Returns
    -------
    ndarray of shape (min(q, q'),)
        Increasing angles in [0, π/2].
    """
    s = np.linalg.svd(np.asarray(U).T @ np.asarray(V), compute_uv=False)
    return np.sort(np.arccos(np.clip(s, 0.0, 1.0)))


def subspace_distance(U, V):
    """d(S, S') = ‖UUᵀ − VVᵀ‖_F, eq. (1) of the subspace clustering paper.

    This is the form the paper's figures use. Note that it equals √2·‖sin Θ‖_F (eq. (1)
    writes ‖sin Θ‖_F, which is off by that factor): two orthogonal lines are at √2, and the
    largest possible distance between q-dimensional subspaces is √(2q).
    Computed as √(2q − 2‖UᵀV‖_F²) without forming d×d matrices.

    Parameters
    ----------
    U, V : array_like of shape (d, q)
        Orthonormal bases (not checked).

    Returns
    -------
    float
    """
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    q = U.shape[1]
    return float(np.sqrt(max(2.0 * q - 2.0 * np.sum((U.T @ V) ** 2), 0.0)))


def pairwise_subspace_distances(Us, Vs):
    """Matrix of d(Uᵢ, Vⱼ) for stacks (k, d, q) and (k', d, q).

    Parameters
    ----------
    Us : array_like of shape (k, d, q)
    Vs : array_like of shape (k', d, q)
        Orthonormal bases (not checked).

    Returns
    -------
    ndarray of shape (k, k')
    """
    Us = np.asarray(Us, dtype=np.float64)
    Vs = np.asarray(Vs, dtype=np.float64)
    cross = np.einsum("adi,bdj->abij", Us, Vs)
    sq = 2.0 * Us.shape[2] - 2.0 * np.sum(cross ** 2, axis=(2, 3))
    return np.sqrt(np.maximum(sq, 0.0))


def wasserstein_distance(Us, Vs):
    """d_W of eq. (2): √(min over matchings π of Σᵢ d²(Sᵢ, S'_π(i))).

    The optimal matching is found by ``scipy.optimize.linear_sum_assignment`` on the
    squared distances, so d_W is invariant to the order of either set.

    Parameters
    ----------
    Us, Vs : array_like of shape (k, d, q)
        Orthonormal bases of the two sets (same shape).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If either stack is not of orthonormal bases, or the shapes differ.
    """
    Us = check_subspaces(Us, "Us")
    Vs = check_subspaces(Vs, "Vs", d=Us.shape[1])
    if Us.shape != Vs.shape:
        raise ValueError(f"Us and Vs must have the same shape (k, d, q); got {Us.shape} and {Vs.shape}")
    D2 = pairwise_subspace_distances(Us, Vs) ** 2
    rows, cols = linear_sum_assignment(D2)
    return float(np.sqrt(D2[rows, cols].sum()))


def squared_distances_to_subspaces(X, Us):
    """n×k matrix of d²(xᵢ, S_ℓ) = ‖xᵢ‖² − ‖U_ℓᵀxᵢ‖² (points as rows).

    Parameters
    ----------
    X : array_like of shape (n, d)
    Us : array_like of shape (k, d, q)
        Orthonormal bases (not checked).

    Returns
    -------
    ndarray of shape (n, k)
        Non-negative.
    """
    X = np.asarray(X, dtype=np.float64)
    Us = np.asarray(Us, dtype=np.float64)
    proj = np.einsum("nd,kdq->nkq", X, Us)
    return np.maximum(np.sum(X ** 2, axis=1)[:, None] - np.sum(proj ** 2, axis=2), 0.0)


def subspace_cost(X, Us):
    """k-means subspace cost of eq. (3): (1/n) Σᵢ min_ℓ d²(xᵢ, S_ℓ).

    Parameters
    ----------
    X : array_like of shape (n, d)
    Us : array_like of shape (k, d, q)
        Orthonormal bases in R^d.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If X is not a finite 2-D array or ``Us`` are not orthonormal bases in R^d.
    """
    X = check_array(X)
    Us = check_subspaces(Us, "Us", d=X.shape[1])
    return float(squared_distances_to_subspaces(X, Us).min(axis=1).mean())


def _contingency(labels_true, labels_pred):
    lt = np.unique(labels_true, return_inverse=True)[1]
    lp = np.unique(labels_pred, return_inverse=True)[1]
    C = np.zeros((lt.max() + 1, lp.max() + 1))
    np.add.at(C, (lt, lp), 1)
    return C


def clustering_accuracy(labels_true, labels_pred):
    """Fraction of points whose predicted cluster matches the true class under the best
    one-to-one matching of cluster ids (Hungarian algorithm); extra clusters count as wrong.

    Parameters
    ----------
    labels_true, labels_pred : array_like of shape (n,)
        Labels of any values (flattened).

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        If the two label arrays differ in length.
    """
    labels_true = np.asarray(labels_true).ravel()
    labels_pred = np.asarray(labels_pred).ravel()
    if labels_true.shape != labels_pred.shape:
        raise ValueError(f"labels_true and labels_pred must have the same length; got {labels_true.size} and {labels_pred.size}")
    C = _contingency(labels_true, labels_pred)
    rows, cols = linear_sum_assignment(-C)
    return float(C[rows, cols].sum() / labels_true.size)


def nmi(labels_true, labels_pred):
    """Normalised mutual information (scikit-learn, arithmetic normalisation).

    Parameters
    ----------
    labels_true, labels_pred : array_like of shape (n,)

    Returns
    -------
    float in [0, 1]
    """
    return float(_skm.normalized_mutual_info_score(labels_true, labels_pred))


def ari(labels_true, labels_pred):
    """Adjusted Rand index (scikit-learn).

    Parameters
    ----------
    labels_true, labels_pred : array_like of shape (n,)

    Returns
    -------
    float
        1 for identical partitions, about 0 for independent ones.
    """
    return float(_skm.adjusted_rand_score(labels_true, labels_pred))


def _nearest_sq_dists(X, centres):
    return nearest_centres(check_points(X), centres)[1]


def kmeans_objective(X, centres):
    """The k-means objective Σᵢ min_j ‖xᵢ − c_j‖² (a sum, as in the high-dimensional paper).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
        The points (rows); sparse input is never densified.
    centres : array_like of shape (k, d)

    Returns
    -------
    float
    """
    return float(_nearest_sq_dists(X, centres).sum())


def kmedian_objective(X, centres):
    """The k-median objective Σᵢ min_j ‖xᵢ − c_j‖.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    centres : array_like of shape (k, d)

    Returns
    -------
    float
    """
    return float(np.sqrt(_nearest_sq_dists(X, centres)).sum())
