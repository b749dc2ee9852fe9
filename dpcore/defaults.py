"""Defaults that follow the dataset: one home for them, used by the pages, the sweeps, the
audits and the estimators alike.

- :func:`default_n_clusters`: the number of classes when the dataset has labels, else 3.
- :func:`default_subspace_dim`: q of a subspace method — the planted dimension when the
  dataset has true subspaces, 9 for Extended Yale B (the paper's per-subject 9-D PCA, §5),
  for an upload the q fixed with it (e.g. the accepted data-derived suggestion) or else
  min(3, ⌊d/2⌋) (:func:`public_upload_subspace_dim`), otherwise 3; always capped to d − 1 (a
  subspace of dimension d is the whole space). :func:`subspace_dim_reason` says which, in words.
- :func:`default_n_subsets`: m of subspace sample-aggregate — ⌈(ln n)²⌉ (the smallest m with
  m ≥ (ln n)², the finite-n reading of Thm 3.1's m = ω(log² n)), at least 2 and at most
  ⌊n / (k(q + 1))⌋ so that every subset has enough points for k subspaces of dimension q.
- :func:`default_kmeans_n_subsets`: m of sample-and-aggregate k-means — min(100, ⌊n/(2k)⌋), a
  different rule (see its docstring).
"""
from __future__ import annotations

import math

from .validation import check_int

__all__ = ["default_n_clusters", "default_subspace_dim", "default_n_subsets", "default_kmeans_n_subsets",
           "public_upload_subspace_dim", "subspace_dim_reason", "YALEB_SUBSPACE_DIM", "FALLBACK_SUBSPACE_DIM"]

#: the paper's per-subject PCA dimension on Extended Yale B (§5)
YALEB_SUBSPACE_DIM = 9
#: q when nothing in the dataset suggests one
FALLBACK_SUBSPACE_DIM = 3


def default_n_clusters(dataset) -> int:
    """Number of classes of ``dataset`` (a :class:`dpcore.data.Dataset`), else 3.

    Parameters
    ----------
    dataset : dpcore.data.Dataset

    Returns
    -------
    int
    """
    return int(dataset.n_classes or 3)


def default_subspace_dim(dataset) -> int:
    """q for ``dataset``: its planted subspace dimension, 9 for Yale B, else 3; in [1, d − 1].

    Parameters
    ----------
    dataset : dpcore.data.Dataset

    Returns
    -------
    int
    """
    params = dataset.params or {}
    if dataset.subspaces is not None:
        q = int(dataset.subspaces.shape[2])
    elif params.get("kind") == "yaleb":
        q = YALEB_SUBSPACE_DIM
    elif params.get("kind") == "upload":
        q = params.get("subspace_dim") or public_upload_subspace_dim(dataset.d)
    else:
        q = FALLBACK_SUBSPACE_DIM
    return max(1, min(int(q), dataset.d - 1))


# Decision (uploads). q is a hyperparameter of the private methods: a q read off the data
# values is a release about the data that no private method accounts for. So the default of an
# upload depends on its shape only: d is public (the columns of the file), and
# q = min(3, ⌊d/2⌋). Why d/2: two subspaces of dimension q > d/2 in R^d always share a line
# at least (their intersection has dimension ≥ 2q − d), so k ≥ 2 clusters of that dimension
# cannot be told apart along it; 3 is the fallback of every other dataset without planted
# subspaces. On the sample two_planes.csv (d = 5) this gives 2, where 3 left k-plane at
# d_W 1.02 and Gibbs at 1.53 (Gibbs at q = 2: 0.024). A better q read off the data is only a
# suggestion, labelled not private (dpcore.upload.suggest_subspace_dim), which the user may
# accept: it is then kept in the upload's spec (params["subspace_dim"]) and this function returns it.
def public_upload_subspace_dim(d) -> int:
    """The public default q of an upload with ``d`` columns: min(3, ⌊d/2⌋), at least 1.

    Parameters
    ----------
    d : int ≥ 1, number of columns (public: the file's shape).

    Returns
    -------
    int
    """
    d = check_int(d, "d", 1)
    return max(1, min(FALLBACK_SUBSPACE_DIM, d // 2))


def subspace_dim_reason(dataset) -> str:
    """Where :func:`default_subspace_dim` of ``dataset`` comes from, in one sentence for a help text.

    Parameters
    ----------
    dataset : dpcore.data.Dataset

    Returns
    -------
    str
    """
    q = default_subspace_dim(dataset)
    params = dataset.params or {}
    if dataset.subspaces is not None:
        return f"default {q}: the dimension of the true (planted) subspaces."
    if params.get("kind") == "yaleb":
        return f"default {q}: the paper's per-subject PCA dimension on Yale B (§5)."
    if params.get("kind") == "upload":
        if params.get("subspace_dim"):
            return (f"default {q}: the q accepted on the Data page, read off the data — NOT private (the private "
                    "methods' guarantee does not cover this choice).")
        return (f"default {q} = min(3, ⌊d/2⌋) with d = {dataset.d}: public, from the number of columns only (two "
                "subspaces of dimension above d/2 always share a line). The Data page suggests a q read off the "
                "data (not private).")
    return f"default {q}: a guess (no true subspaces are known); at most d − 1."


def default_n_subsets(n, k, q) -> int:
    """m = ⌈(ln n)²⌉ clipped to [2, ⌊n/(k(q+1))⌋] (see the module docstring).

    Parameters
    ----------
    n : int ≥ 2, number of points.
    k : int ≥ 1, number of subspaces.
    q : int ≥ 0, their dimension (each subset needs k(q + 1) points).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        When n is too small for two subsets of k(q + 1) points.
    """
    n = check_int(n, "n", 2)
    k = check_int(k, "n_clusters", 1)
    q = check_int(q, "subspace_dim", 0)
    min_size = k * (q + 1)
    m_max = n // min_size
    if m_max < 2:
        raise ValueError(f"n = {n} points cannot be split into 2 subsets of at least k·(q+1) = {min_size} points "
                         "(n_subsets must be at least 2)")
    return min(max(math.ceil(math.log(n) ** 2), 2), m_max)


def default_kmeans_n_subsets(n, k) -> int:
    """m of sample-and-aggregate k-means: min(100, ⌊n/(2k)⌋), at least 2.

    Alg. 1's subsampling rule (no point in more than √m subsets) is practically never met
    below m ≈ 50 for n in the thousands, and every subset needs at least k points (here ≥ 2k)
    for k-means to run.

    Parameters
    ----------
    n : int, number of points.
    k : int ≥ 1, number of centres.

    Returns
    -------
    int
    """
    return max(2, min(100, n // (2 * k)))
