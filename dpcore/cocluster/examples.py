"""The leak of Fig. 1 (§3.3), worked out: exact best co-clusterings of the two neighbouring
4×6 matrices, and how often DP-τCC releases each column partition on either of them."""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..validation import check_int, check_random_state
from .dptaucc import DPTauCC
from .taucc import best_cocluster_bruteforce, figure1_matrices

__all__ = ["figure1_solutions", "partition_key", "column_partition_frequencies"]


def figure1_solutions():
    """A, A′ of Fig. 1 and their exact best 2×2 co-clusterings (exhaustive search of
    τ̂_{R|C} + τ̂_{C|R}). Returns a dict with ``A``, ``A_prime`` and, for each, ``rows``,
    ``cols``, ``T`` and ``taus``. The search reproduces the paper: T = [[10, 1], [1, 14]]
    with columns {1,2,3}|{4,5,6} for A, T′ = [[9, 2], [0, 16]] with {1,2}|{3,4,5,6} for A′.

    Returns
    -------
    dict
        "A", "A_prime" (the matrices) and "A_solution", "A_prime_solution" (dicts with
        "rows", "cols", "T" and "taus").
    """
    A, A2 = figure1_matrices()
    out = {"A": A, "A_prime": A2}
    for key, M in (("A", A), ("A_prime", A2)):
        r, c, T, taus = best_cocluster_bruteforce(M, 2, 2)
        out[key + "_solution"] = dict(rows=r, cols=c, T=T, taus=taus)
    return out


def partition_key(labels):
    """Canonical text of a partition of items 1..m, e.g. ``"123|456"`` (clusters ordered by
    their smallest item; items in no cluster, label −1, listed after a ``/``).

    Parameters
    ----------
    labels : array_like of int of shape (m,)

    Returns
    -------
    str
    """
    labels = np.asarray(labels)
    groups = {}
    for j, l in enumerate(labels, start=1):
        groups.setdefault(int(l), []).append(str(j))
    none = groups.pop(-1, [])
    key = "|".join("".join(g) for g in sorted(groups.values(), key=lambda g: int(g[0])))
    return key + (("/" + "".join(none)) if none else "")


def column_partition_frequencies(epsilon=1.0, n_runs=400, n_iter=1, random_state=None):
    """Run DP-τCC (K0 = L0 = 2) ``n_runs`` times on A and on A′ of Fig. 1 and count the
    released column partitions. DP promises, for every partition S,
    P[S | A] ≤ e^ε P[S | A′] (and the reverse): the two frequency columns differ by at most
    that factor up to sampling error. Returns a list of dicts (partition, freq_A, freq_A′)
    sorted by total frequency.

    Parameters
    ----------
    epsilon : float > 0, default 1.0
    n_runs : int in [1, 100000], default 400
        Runs on each matrix.
    n_iter : int, default 1
        DP-τCC iterations.
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    list of dict
        Keys "partition" (:func:`partition_key`), "freq_A" and "freq_A_prime".

    Raises
    ------
    ValueError
        If ``n_runs`` is out of range or DP-τCC refuses ``epsilon`` or ``n_iter``.
    """
    n_runs = check_int(n_runs, "n_runs", 1, 100_000)
    rng = check_random_state(random_state)
    A, A2 = figure1_matrices()
    counts = []
    for M in (A, A2):
        cnt = Counter()
        for _ in range(n_runs):
            cnt[partition_key(DPTauCC(n_row_clusters=2, n_col_clusters=2, epsilon=epsilon, n_iter=n_iter,
                                      random_state=rng).fit(M).column_labels_)] += 1
        counts.append(cnt)
    keys = sorted(set(counts[0]) | set(counts[1]), key=lambda k: -(counts[0][k] + counts[1][k]))
    return [dict(partition=k, freq_A=counts[0][k] / n_runs, freq_A_prime=counts[1][k] / n_runs) for k in keys]
