"""Shared helpers of the private k-means code: the public radius Λ, clipping, distances and
per-cluster sums for dense or ``scipy.sparse`` CSR points (rows).

Neighbouring datasets (used by every sensitivity in :mod:`dpcore.kmeans`): X and X′ differ
in one point, *replaced*, and the number of points n is public, as in the paper (its f(m),
depth bound and JL dimension depend on n). That is the relation the guarantees are stated
for. They do NOT extend to adding or removing a point: although the sensitivities below also
bound the change of the noisy sums and counts under addition/removal, the released outputs
depend on n itself (e.g. the candidate method's projection dimension p = ⌈ln(n)/2⌉, the
candidate-set sizes and thresholds), so a release can reveal n and with it whether a record
was added.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp

from .._validation import check_array, check_real
from ..data import clip_to_ball

__all__ = ["DataDerivedRadiusWarning", "resolve_radius", "check_points", "row_sq_norms", "clip_rows",
           "nearest_centres", "cluster_sums", "project_to_ball", "l2_normalize_rows", "data_radius",
           "truncate_rows_to_sparsity", "RADIUS_LEAK_REASON"]

RADIUS_LEAK_REASON = ("radius Λ was computed from the data (max row norm): this leaks information "
                      "about the largest point, so no output of this run is differentially private")


class DataDerivedRadiusWarning(UserWarning):
    """A bound computed from the data was used where a public one is required (privacy leak),
    as diffprivlib's ``PrivacyLeakWarning``."""


def check_points(X, name="X"):
    """Finite float points as rows, dense ndarray or CSR (for the CLUTO document sets)."""
    return check_array(X, name, allow_sparse=True)


def row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def data_radius(X):
    """max ‖xᵢ‖ — NOT public: using it as Λ leaks the largest norm."""
    return float(np.sqrt(row_sq_norms(X).max()))


def resolve_radius(radius, X):
    """The public radius Λ. Returns ``(Λ, derived)``.

    ``radius`` is a positive number chosen without looking at the data, or the string
    ``"data"``, which uses max ‖xᵢ‖ and issues a :class:`DataDerivedRadiusWarning` (the
    caller must then record that nothing it releases is private). ``None`` is refused:
    every private k-means method needs a public Λ.
    """
    if radius is None:
        raise ValueError("radius is required: a public bound Λ > 0 on the norm of the points "
                         "(or 'data' to use max ‖x‖, which leaks privacy)")
    if isinstance(radius, str):
        if radius != "data":
            raise ValueError(f"radius must be a number > 0 or 'data'; got {radius!r}")
        lam = data_radius(X)
        if not lam > 0:
            raise ValueError("radius='data' needs at least one non-zero point; give a public radius > 0")
        warnings.warn("radius='data': Λ = max ‖x‖ is computed from the data and will result in "
                      "additional privacy leakage; pass a public radius to get a private result",
                      DataDerivedRadiusWarning, stacklevel=3)
        return lam, True
    return check_real(radius, "radius", 0.0, None, low_inclusive=False), False


def clip_rows(X, radius):
    """Rows with ‖x‖ > Λ scaled onto the sphere of radius Λ (a per-record map: it spends no
    privacy). Returns ``(X_clipped, n_clipped)``; dense input goes through
    :func:`dpcore.data.clip_to_ball`."""
    if not sp.issparse(X):
        return clip_to_ball(X, radius)
    norms = np.sqrt(row_sq_norms(X))
    over = norms > radius
    scale = np.ones_like(norms)
    scale[over] = radius / norms[over]
    return sp.csr_matrix(sp.diags(scale) @ X), int(over.sum())


def l2_normalize_rows(X):
    """Each non-zero row divided by its own norm (a per-record map, leaks nothing); the
    public radius is then Λ = 1. Used for the CLUTO document sets."""
    X = check_points(X)
    norms = np.sqrt(row_sq_norms(X))
    scale = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(scale) @ X)
    return X * scale[:, None]


def truncate_rows_to_sparsity(X, s):
    """Keep the s largest-magnitude entries of every row (a per-record map). Returns
    ``(X_s, n_truncated)`` — the count is computed from the data, hence not private."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        n_trunc = 0
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            if hi - lo > s:
                vals = X.data[lo:hi]
                drop = np.argsort(np.abs(vals))[: hi - lo - s]
                vals[drop] = 0.0
                n_trunc += 1
        X.eliminate_zeros()
        return X, n_trunc
    X = np.array(X, dtype=np.float64, copy=True)
    nnz = np.count_nonzero(X, axis=1)
    rows = np.flatnonzero(nnz > s)
    if rows.size:
        part = np.argpartition(-np.abs(X[rows]), s, axis=1)[:, s:]
        X[rows[:, None], part] = 0.0
    return X, int(rows.size)


def project_to_ball(C, radius):
    """Centres outside B(0, Λ) moved onto its sphere (post-processing)."""
    C = np.array(C, dtype=np.float64, copy=True)
    norms = np.linalg.norm(C, axis=-1)
    over = norms > radius
    C[over] *= (radius / norms[over])[:, None]
    return C


def nearest_centres(X, C, chunk=None, sq_norms=None):
    """For each row: index of the nearest centre and the squared distance to it.

    Chunked over rows so that the n×k distance block stays below ~32 MB."""
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


def cluster_sums(X, labels, k):
    """Per-cluster sums (k×d dense) and counts (k,) of the rows of X."""
    labels = np.asarray(labels, dtype=np.int64)
    n = X.shape[0]
    ind = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    sums = ind @ X
    sums = sums.toarray() if sp.issparse(sums) else np.asarray(sums)
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    return sums, counts


def ceil_log(n):
    """⌈ln n⌉ with a floor of 1."""
    return max(1, math.ceil(math.log(max(n, 2))))
