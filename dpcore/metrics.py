"""Metrics of the three papers: subspace distances, d_W, the k-means subspace cost,
clustering agreement (accuracy under the best matching, NMI, ARI), nearest centres and the
centre objectives.

Subspaces are passed as stacks of orthonormal bases, an array of shape (k, d, q).
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn import metrics as _skm

from .validation import check_array, check_points, check_subspaces
from .preprocessing import row_sq_norms

__all__ = [
    "principal_angles", "subspace_distance", "pairwise_subspace_distances", "wasserstein_distance",
    "MATCHING_BRUTE_FORCE_MAX_K", "matching_permutations", "min_matching_cost",
    "squared_distances_to_subspaces", "subspace_cost", "clustering_accuracy", "nmi", "ari",
    "nearest_centres", "kmeans_objective", "kmedian_objective",
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


def pairwise_subspace_distances(Us, Vs, *, squared=False):
    """Matrix of d(Uᵢ, Vⱼ) = √(2q − 2‖UᵢᵀVⱼ‖²_F) for stacks (k, d, q) and (k', d, q).

    The one implementation of the pairwise subspace distance (d_W, the Gibbs sampler's traces
    and its aligned mean all use it). Leading dimensions broadcast, so stacks of stacks
    (..., k, d, q) and (..., k', d, q) give (..., k, k') at once.

    Parameters
    ----------
    Us : array_like of shape (..., k, d, q)
        Orthonormal bases (not checked).
    Vs : array_like of shape (..., k', d, q)
        Orthonormal bases (not checked); leading dimensions broadcast against those of ``Us``.
    squared : bool, default False
        Return d² (no square root), what a matching minimises.

    Returns
    -------
    ndarray of shape (..., k, k')
        The distances (or their squares when ``squared``), in [0, √(2q)].
    """
    Us = np.asarray(Us, dtype=np.float64)
    Vs = np.asarray(Vs, dtype=np.float64)
    q = Us.shape[-1]
    cross = np.einsum("...adi,...bdj->...abij", Us, Vs)
    cross *= cross
    sq = np.maximum(2.0 * q - 2.0 * np.add.reduce(cross.reshape(cross.shape[:-2] + (-1,)), -1), 0.0)
    return sq if squared else np.sqrt(sq)


#: Largest k for which :func:`min_matching_cost` enumerates all k! matchings at once (one
#: vectorised gather over the whole stack); above it, the Hungarian algorithm
#: (``scipy.optimize.linear_sum_assignment``) per matrix. Both are exact and sum a matching
#: in the same order, so only the speed depends on it: enumeration is the faster up to k = 5
#: (measured: docs/benchmarks.md, "Why these defaults").
MATCHING_BRUTE_FORCE_MAX_K = 5

#: Largest gathered array (stack size × k! × k cells) :func:`min_matching_cost` builds at once;
#: a larger stack is minimised in chunks (same result, bounded memory).
MATCHING_GATHER_CELLS = 4_000_000


@functools.lru_cache(maxsize=None)
def _permutation_table(k):
    table = np.array(list(itertools.permutations(range(k))), dtype=np.intp).reshape(-1, k)
    table.setflags(write=False)
    return table


def matching_permutations(k):
    """All k! matchings of k items, or None when k is above the brute-force threshold.

    Parameters
    ----------
    k : int
        Number of items on each side (k ≥ 1).

    Returns
    -------
    ndarray of int of shape (k!, k) or None
        Row p is the matching ℓ ↦ ``perms[p, ℓ]``, in lexicographic order (read-only, cached);
        None when ``k > MATCHING_BRUTE_FORCE_MAX_K`` (the Hungarian algorithm is faster there).
    """
    return _permutation_table(int(k)) if k <= MATCHING_BRUTE_FORCE_MAX_K else None


def min_matching_cost(C, *, return_matching=False):
    """Minimum over matchings π of Σ_ℓ C[..., ℓ, π(ℓ)] for a stack of square cost matrices.

    The one matching minimisation of dpcore: d_W (:func:`wasserstein_distance`), the
    sample-and-aggregate matching distance
    (:func:`dpcore.privacy.sample_aggregate.matching_distances`) and the Gibbs sampler's
    d_W and accuracy traces and label alignment all call it. Exact: all k! matchings for
    k ≤ :data:`MATCHING_BRUTE_FORCE_MAX_K` (the first minimiser in lexicographic order),
    the Hungarian algorithm per matrix above.

    Parameters
    ----------
    C : array_like of shape (..., k, k)
        The cost matrices; any real dtype (integer costs are summed exactly).
    return_matching : bool, default False
        Also return a minimising matching.

    Returns
    -------
    cost : ndarray of shape (...)
        The minimum total cost of every matrix of the stack.
    matching : ndarray of int of shape (..., k)
        Only with ``return_matching``: row ℓ is matched to column ``matching[..., ℓ]``.
    """
    C = np.asarray(C)
    k = C.shape[-1]
    if C.ndim < 2 or C.shape[-2] != k:
        raise ValueError(f"C must be a stack of square matrices (..., k, k); got shape {C.shape}")
    lead = C.shape[:-2]
    perms = matching_permutations(k)
    if perms is not None:
        cols = np.arange(k)
        n_mat = math.prod(lead)
        chunk = max(1, MATCHING_GATHER_CELLS // (len(perms) * k))
        if n_mat <= chunk:                                  # one gather (the Gibbs trace path)
            tot = np.add.reduce(C[..., cols, perms], -1)    # (..., k!)
            if not return_matching:
                return np.minimum.reduce(tot, -1)
            best = tot.argmin(axis=-1)
            return np.take_along_axis(tot, best[..., None], -1)[..., 0], perms[best]
        flat = C.reshape(n_mat, k, k)
        parts = [min_matching_cost(flat[a:a + chunk], return_matching=return_matching)
                 for a in range(0, n_mat, chunk)]
        if not return_matching:
            return np.concatenate(parts).reshape(lead)
        return (np.concatenate([p[0] for p in parts]).reshape(lead),
                np.concatenate([p[1] for p in parts]).reshape(lead + (k,)))
    flat = C.reshape(-1, k, k)
    vals = np.empty(flat.shape[0], dtype=np.result_type(C.dtype, np.float64))
    pis = np.empty((flat.shape[0], k), dtype=np.intp) if return_matching else None
    for p, M in enumerate(flat):
        r, c = linear_sum_assignment(M)
        vals[p] = M[r, c].sum()
        if return_matching:
            pis[p] = c
    if not return_matching:
        return vals.reshape(lead)
    return vals.reshape(lead), pis.reshape(lead + (k,))


def wasserstein_distance(Us, Vs):
    """d_W of eq. (2): √(min over matchings π of Σᵢ d²(Sᵢ, S'_π(i))).

    The optimal matching is found by :func:`min_matching_cost` on the squared distances, so
    d_W is invariant to the order of either set.

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
    return float(np.sqrt(min_matching_cost(pairwise_subspace_distances(Us, Vs, squared=True))))


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


def nearest_centres(X, C, chunk=None, sq_norms=None):
    """For each row: index of the nearest centre and the squared distance to it.

    The one nearest-centre rule of dpcore (the k-means estimators' ``labels_`` and
    ``predict``, and the objectives below). Chunked over rows so that the n×k distance block
    stays below ~32 MB; sparse rows are never densified.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
        Finite float points as rows (not checked).
    C : array_like of shape (k, d)
        The centres (any float dtype; the distances are computed in float64).
    chunk : int, optional
        Rows per block (default: about 4 million distances per block).
    sq_norms : ndarray of shape (n,), optional
        Precomputed squared row norms of X.

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        Ties go to the lowest index.
    sq_dists : ndarray of float64, shape (n,)
        Squared distance of every row to its nearest centre.
    """
    C = np.atleast_2d(np.asarray(C, dtype=np.float64))
    n = X.shape[0]
    k = C.shape[0]
    chunk = chunk or max(1, int(4_000_000 // max(k, 1)))
    xx = row_sq_norms(X) if sq_norms is None else sq_norms
    cc = np.einsum("ij,ij->i", C, C)
    labels = np.empty(n, dtype=np.int64)
    d2 = np.empty(n)
    for s in range(0, n, chunk):
        Xs = X[s:s + chunk]
        D = xx[s:s + chunk, None] - 2.0 * np.asarray(Xs @ C.T) + cc[None]
        lab = np.argmin(D, axis=1)
        labels[s:s + chunk] = lab
        d2[s:s + chunk] = np.maximum(D[np.arange(D.shape[0]), lab], 0.0)
    return labels, d2


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
