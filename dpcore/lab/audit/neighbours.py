"""Neighbouring datasets: the constructions of D′ from D, the relation each belongs to and the
relation each method claims its ε for.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from ...privacy.accountant import RELATIONS as _RELATIONS
from ..methods import METHODS, get_method

__all__ = ["add_point", "remove_point", "replace_point", "change_cell", "far_outlier", "RELATIONS",
           "CLAIMED_RELATION", "NEIGHBOURS", "ALL_NEIGHBOURS", "NEIGHBOUR_RELATION", "claimed_relation",
           "default_neighbour", "make_neighbour"]


def add_point(X, point):
    """D′ = D plus one row (add/remove-one neighbours, points as rows).

    Parameters
    ----------
    X : array_like of shape (n, d)
    point : array_like of shape (d,)

    Returns
    -------
    ndarray of shape (n + 1, d)
        X with ``point`` appended as the last row.
    """
    X = np.asarray(X, dtype=float)
    return np.vstack([X, np.asarray(point, dtype=float)[None, :]])


def remove_point(X, index):
    """D′ = D without row ``index``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    index : int in [0, n − 1]

    Returns
    -------
    ndarray of shape (n − 1, d)

    Raises
    ------
    ValueError
        If ``index`` is out of range.
    """
    X = np.asarray(X)
    if not 0 <= index < X.shape[0]:
        raise ValueError(f"index must be in [0, {X.shape[0] - 1}]; got {index}")
    return np.delete(X, index, axis=0)


def replace_point(X, index, point):
    """D′ = D with row ``index`` replaced by ``point`` (replace-one neighbours: n is the same).

    Parameters
    ----------
    X : array_like of shape (n, d)
        Not modified (a copy is returned).
    index : int in [0, n − 1]
    point : array_like of shape (d,)

    Returns
    -------
    ndarray of float of shape (n, d)

    Raises
    ------
    ValueError
        If ``index`` is out of range.
    """
    X = np.array(X, dtype=float)
    if not 0 <= index < X.shape[0]:
        raise ValueError(f"index must be in [0, {X.shape[0] - 1}]; got {index}")
    X[index] = np.asarray(point, dtype=float)
    return X


def change_cell(A, i, j, by=1):
    """D′ = A with cell (i, j) changed by ``by`` (the co-clustering paper's neighbouring
    relation for count matrices is |by| = 1). Works on dense and scipy.sparse input.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
        Count matrix; not modified.
    i, j : int
        Row and column of the cell.
    by : float, default 1
        Change of the cell.

    Returns
    -------
    ndarray of float or scipy.sparse CSR matrix
        The changed copy (CSR when ``A`` is sparse).

    Raises
    ------
    ValueError
        If the change would make the count negative.
    """
    B = sp.lil_matrix(A, dtype=float) if sp.issparse(A) else np.array(A, dtype=float)
    if B[i, j] + by < 0:
        raise ValueError("change_cell would make a count negative")
    B[i, j] = B[i, j] + by
    return sp.csr_matrix(B) if sp.issparse(A) else B


def far_outlier(X, subspaces=None, radius=1.0):
    """A point of norm ``radius`` as far as possible from the data's subspaces (Fig. 1 of the
    subspace paper): the direction least explained by ``subspaces`` (or, without them, the
    smallest right singular vector of X). This builds the audit's neighbour; it is not a release.

    Parameters
    ----------
    X : array_like of shape (n, d)
    subspaces : array_like of shape (k, d, q), optional
        Orthonormal bases of the data's subspaces.
    radius : float, default 1.0
        Norm of the returned point.

    Returns
    -------
    ndarray of shape (d,)
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    if subspaces is not None:
        P = sum(U @ U.T for U in np.asarray(subspaces))
    else:
        P = X.T @ X
    w, V = np.linalg.eigh(P + 1e-12 * np.eye(d))
    return radius * V[:, 0]


#: neighbouring relations a privacy claim can be stated for (one table, in the library's accountant,
#: which also converts between them: :mod:`dpcore.privacy.accountant`)
RELATIONS = _RELATIONS


class _ClaimedRelations(Mapping):
    """name -> claimed relation of every private method of the catalogue (a live, read-only
    view of the entries' ``relation``, so methods registered later are in it)."""

    def __getitem__(self, name):
        method = METHODS[name]
        if not method.private:
            raise KeyError(name)
        return method.relation

    def __iter__(self):
        return (name for name, method in METHODS.items() if method.private)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return repr(dict(self))


#: the relation each private method of the catalogue states its ε for (its entry's
#: ``relation``; the reasons are in docs/audit.md, "Neighbours and claimed relations")
CLAIMED_RELATION = _ClaimedRelations()

NEIGHBOURS = {
    "points": {"add_outlier": "add one far outlier (Fig. 1 of the subspace paper)",
               "replace_outlier": "replace one point (the first row) by the far outlier (n stays the same)",
               "remove_point": "remove one point (the first row)"},
    "counts": {"change_cell": "add 1 to one cell (the co-clustering paper's neighbouring relation)",
               "replace_document": "replace the first document (row) by one made of the rarest word (n stays the "
                                   "same)",
               "remove_document": "remove the first document (row)"},
}
#: every construction, whatever the data kind (what a page may offer)
ALL_NEIGHBOURS = {k: v for kind in NEIGHBOURS.values() for k, v in kind.items()}
#: the relation each construction's pair (D, D′) belongs to
NEIGHBOUR_RELATION = {"add_outlier": "add_remove", "remove_point": "add_remove", "replace_outlier": "replace_one",
                      "change_cell": "cell_pm1", "replace_document": "replace_one", "remove_document": "add_remove"}


def claimed_relation(name):
    """The neighbouring relation method ``name`` claims its ε for (its catalogue entry's
    ``relation``, a key of :data:`RELATIONS`), or None for a non-private method.

    Parameters
    ----------
    name : str or dpcore.lab.methods.Method
        A key of :data:`dpcore.lab.methods.METHODS`, or an entry.

    Returns
    -------
    str or None

    Raises
    ------
    ValueError
        If ``name`` is not in the catalogue, or a private method states no known relation.
    """
    method = get_method(name)
    if not method.private:
        return None
    if method.relation not in RELATIONS:
        raise ValueError(f"method {method.name} states no neighbouring relation the audit knows "
                         f"({method.relation!r}); its catalogue entry's relation must be one of {', '.join(RELATIONS)}")
    return method.relation


def default_neighbour(name, kind):
    """The construction an audit of ``name`` on data of ``kind`` uses by default: the first one
    of :data:`NEIGHBOURS` for that kind whose relation is the one ``name`` claims (the first
    construction of the kind for a non-private algorithm), or None if there is none.

    Parameters
    ----------
    name : str or dpcore.lab.methods.Method
        A key of :data:`dpcore.lab.methods.METHODS`, or an entry.
    kind : str
        Data kind ("points" or "counts").

    Returns
    -------
    str or None
        A key of ``NEIGHBOURS[kind]``.

    Raises
    ------
    ValueError
        As :func:`claimed_relation`.
    """
    rel = claimed_relation(name)
    options = list(NEIGHBOURS.get(kind, {}))
    if rel is None:
        return options[0] if options else None
    return next((k for k in options if NEIGHBOUR_RELATION[k] == rel), None)


def _outlier_radius(dataset):
    """Norm of the audit's outlier: the public radius the algorithms clip to when the
    dataset has one (the most influence a single point may have), 1 (the unit ball) for
    synthetic subspace data, otherwise the mean row norm."""
    if "public_radius" in dataset.extras:
        return float(dataset.extras["public_radius"])
    if dataset.subspaces is not None:
        return 1.0
    return float(np.linalg.norm(dataset.X, axis=1).mean())


def make_neighbour(dataset, neighbour):
    """(D′, target) for a Dataset and a neighbour construction of :data:`NEIGHBOURS`.

    ``target`` is what the statistics look at: for points a dict with "point" (the outlier,
    or the removed point) and "replaced" (the row a replace-one neighbour overwrote, else
    None); for counts the changed cell (i, j), or with ``replace_document`` /
    ``remove_document`` a dict as for points (:func:`_document_neighbour`). The outlier has the norm of
    :func:`_outlier_radius` and the direction least explained by the data
    (:func:`far_outlier`); ``replace_outlier`` puts it in place of the first row, so that
    D and D′ have the same n. The changed cell is the first non-zero cell of the first row,
    so that the change stays inside the data's support.

    Parameters
    ----------
    dataset : dpcore.data.Dataset
    neighbour : str
        A key of ``NEIGHBOURS[dataset.kind]``.

    Returns
    -------
    D_b : ndarray or scipy.sparse matrix
        The neighbour D′.
    target : dict or tuple
        As above.

    Raises
    ------
    ValueError
        If the dataset's kind has no neighbour construction, or ``neighbour`` is not one for it.
    """
    kind = dataset.kind
    if kind not in NEIGHBOURS:
        raise ValueError(f"neighbour: there is no neighbour construction for data of kind {kind!r} (the audit knows "
                         f"{', '.join(NEIGHBOURS)}), so this dataset cannot be audited")
    if neighbour not in NEIGHBOURS[kind]:
        other = next((k for k, v in NEIGHBOURS.items() if neighbour in v), None)
        why = f"{neighbour!r} is a construction for data of kind {other!r}" if other else f"got {neighbour!r}"
        raise ValueError(f"neighbour must be one of {', '.join(NEIGHBOURS[kind])} for a dataset of kind {kind!r}: "
                         f"{why}")
    X = dataset.X
    if neighbour in ("add_outlier", "replace_outlier"):
        p = far_outlier(X, dataset.subspaces, radius=_outlier_radius(dataset))
        if neighbour == "add_outlier":
            return add_point(X, p), {"point": p, "replaced": None}
        return replace_point(X, 0, p), {"point": p, "replaced": np.asarray(X[0], dtype=float)}
    if neighbour == "remove_point":
        return remove_point(X, 0), {"point": np.asarray(X[0], dtype=float), "replaced": None}
    if neighbour in ("replace_document", "remove_document"):
        return _document_neighbour(X, neighbour)
    row = sp.csr_matrix(X)[0]
    j = int(row.indices[0]) if row.nnz else 0
    return change_cell(X, 0, j, 1), (0, j)


def _document_neighbour(X, neighbour):
    """(D′, target) for a count matrix whose rows are documents. ``replace_document``: the
    first row becomes a document made only of the rarest word (the column of smallest total;
    the first such), with the first row's total count - the document least like the others,
    the count analogue of :func:`far_outlier`; ``remove_document``: the first row is removed.
    Sparse input stays sparse; the target's "point" and "replaced" are dense rows."""
    sparse = sp.issparse(X)
    A = sp.csr_matrix(X, dtype=float) if sparse else np.asarray(X, dtype=float)
    first = np.asarray(A[0].toarray()).ravel() if sparse else A[0].copy()
    if neighbour == "remove_document":
        B = A[1:] if sparse else np.delete(A, 0, axis=0)
        return B, {"point": first, "replaced": None}
    totals = np.asarray(A.sum(axis=0)).ravel()
    doc = np.zeros(A.shape[1])
    doc[int(np.argmin(totals))] = max(float(first.sum()), 1.0)
    if sparse:
        B = sp.vstack([sp.csr_matrix(doc[None, :]), A[1:]], format="csr")
    else:
        B = A.copy()
        B[0] = doc
    return B, {"point": doc, "replaced": first}

