"""Per-record maps of the rows: the one home of row clipping, normalising and truncation.

Each map looks at one row at a time (a point, a document), so applying it to a dataset
spends no privacy budget: neighbouring datasets stay neighbours. What a private method may
NOT do is choose the radius from the data; every ``radius`` here must be public (chosen
without looking at the data). Dense arrays and ``scipy.sparse`` matrices (rows = points) are
both accepted; sparse input gives CSR output.

- :func:`clip_rows` - rows longer than Λ scaled back onto the sphere of radius Λ (also used
  on released centres, as post-processing);
- :func:`normalize_rows` - every non-zero row scaled to norm Λ;
- :func:`map_rows_to_ball` - either of the two, by name;
- :func:`truncate_rows_to_sparsity` - keep the s largest-magnitude entries of each row;
- :func:`row_sq_norms` - squared row norms, dense or sparse.

Outputs, dense or CSR, satisfy ‖x‖ ≤ Λ as computed in floating point both by the sum of
squares (:func:`row_sq_norms`) and by numpy's / scipy's ``norm`` of the same array (rows that
rounding leaves one ulp above are shrunk by a hair), as the sensitivity bounds require. Two
other ways of computing a norm (e.g. of the CSR rows after ``toarray()``) can still differ from
these in the last bit.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401  (sp.linalg.norm)

from .validation import check_array, check_int, check_real

__all__ = ["ROW_MAPS", "row_sq_norms", "clip_rows", "normalize_rows", "map_rows_to_ball", "map_rows_to_ball_counted",
           "truncate_rows_to_sparsity"]

#: The row maps of :func:`map_rows_to_ball`.
ROW_MAPS = ("normalize", "clip")


def row_sq_norms(X):
    """Squared L2 norm of every row.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)

    Returns
    -------
    ndarray of shape (n,)
    """
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _scale_rows(X, scale):
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(scale) @ X)
    return X * scale[:, None]


def _within_radius(X, radius):
    """Rows that rounding left above ``radius`` shrunk by a hair, until both the sum-of-squares
    norm and the library norm of the same array are ≤ radius (dense or CSR)."""
    shrink = 1.0 - 4 * np.finfo(float).eps
    while True:
        # two ways of computing a norm can differ in the last bit: both must be within the radius
        other = (sp.linalg.norm(X, axis=1) if sp.issparse(X) else np.linalg.norm(X, axis=1))
        above = np.maximum(np.sqrt(row_sq_norms(X)), other) > radius
        if not above.any():
            return X
        if sp.issparse(X):
            X = _scale_rows(X, np.where(above, shrink, 1.0))
        else:
            X[above] *= shrink


def clip_rows(X, radius):
    """Scale every row with ‖x‖ > Λ back onto the sphere of radius Λ; other rows are unchanged.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
        Finite rows. The input is not modified.
    radius : float > 0
        The public radius Λ.

    Returns
    -------
    X_clipped : ndarray (float64) or CSR matrix of shape (n, d)
    n_clipped : int
        Number of rows that were scaled (computed from the data: not private).
    """
    X = check_array(X, "X", allow_sparse=True)
    radius = check_real(radius, "radius", 0.0, None, low_inclusive=False)
    norms = np.sqrt(row_sq_norms(X))
    over = norms > radius
    if sp.issparse(X):
        scale = np.ones_like(norms)
        scale[over] = radius / norms[over]
        return _within_radius(_scale_rows(X, scale), radius), int(over.sum())
    Xc = X.copy()
    Xc[over] *= (radius / norms[over])[:, None]
    return _within_radius(Xc, radius), int(over.sum())


def normalize_rows(X, radius=1.0):
    """Scale every non-zero row to norm Λ (zero rows stay zero).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    radius : float > 0, default 1.0
        The public radius Λ.

    Returns
    -------
    ndarray (float64) or CSR matrix of shape (n, d)
    """
    X = check_array(X, "X", allow_sparse=True)
    radius = check_real(radius, "radius", 0.0, None, low_inclusive=False)
    norms = np.sqrt(row_sq_norms(X))
    nz = norms > 0
    if sp.issparse(X):
        scale = np.zeros_like(norms)
        scale[nz] = radius / norms[nz]
        return _within_radius(_scale_rows(X, scale), radius)
    out = np.divide(X, norms[:, None], out=np.zeros_like(X), where=nz[:, None])
    if radius != 1.0:
        out *= radius
    return _within_radius(out, radius)


def map_rows_to_ball(X, radius=1.0, row_map="normalize"):
    """Map the rows into the public ball of radius Λ by :func:`normalize_rows` or :func:`clip_rows`.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    radius : float > 0, default 1.0
    row_map : {"normalize", "clip"}, default "normalize"

    Returns
    -------
    ndarray (float64) or CSR matrix of shape (n, d)
    """
    if row_map == "normalize":
        return normalize_rows(X, radius)
    if row_map == "clip":
        return clip_rows(X, radius)[0]
    raise ValueError(f"row_map must be 'normalize' or 'clip'; got {row_map!r}")


def map_rows_to_ball_counted(X, radius=1.0, row_map="normalize"):
    """:func:`map_rows_to_ball` and the number of rows longer than Λ (those clipping scales;
    normalising scales every non-zero row, and the count is the same rows).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    radius : float > 0, default 1.0
    row_map : {"normalize", "clip"}, default "normalize"

    Returns
    -------
    X_mapped : ndarray (float64) or CSR matrix of shape (n, d)
    n_longer : int
        Number of rows with ‖x‖ > Λ (computed from the data: not private).
    """
    if row_map == "clip":
        return clip_rows(X, radius)
    X = check_array(X, "X", allow_sparse=True)
    return map_rows_to_ball(X, radius, row_map), int(np.count_nonzero(np.sqrt(row_sq_norms(X)) > radius))


def truncate_rows_to_sparsity(X, s):
    """Keep the ``s`` largest-magnitude entries of every row, set the others to 0.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    s : int >= 1
        Entries kept per row.

    Returns
    -------
    X_s : ndarray (float64) or CSR matrix of shape (n, d)
    n_truncated : int
        Number of rows that had more than ``s`` non-zeros (computed from the data: not private).
    """
    s = check_int(s, "s", 1)
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
