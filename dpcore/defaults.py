"""Defaults that follow the dataset: one home for them, used by the pages, the sweeps, the
audits and the estimators alike.

- :func:`default_n_clusters`: the number of classes when the dataset has labels, else 3.
- :func:`default_subspace_dim`: q of a subspace method — the planted dimension when the
  dataset has true subspaces, 9 for Extended Yale B (the paper's per-subject 9-D PCA, §5),
  otherwise 3; always capped to d − 1 (a subspace of dimension d is the whole space).
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
           "YALEB_SUBSPACE_DIM",
           "FALLBACK_SUBSPACE_DIM"]

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
    if dataset.subspaces is not None:
        q = int(dataset.subspaces.shape[2])
    elif dataset.params.get("kind") == "yaleb":
        q = YALEB_SUBSPACE_DIM
    else:
        q = FALLBACK_SUBSPACE_DIM
    return max(1, min(q, dataset.d - 1))


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
