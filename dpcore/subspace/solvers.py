"""Registry of the non-private subspace clustering solvers.

``SOLVERS`` maps a short name to the estimator class; :func:`make_solver` builds one by
name, which is how the sample-aggregate framework, the Gibbs sampler's initialisation and
the app's Cluster page pick a solver. Every solver's ``fit(X)`` returns self and sets
``labels_`` (n,), ``subspaces_`` (k, d, q orthonormal), ``cost_`` (eq. (3) on X) and, where
meaningful, ``n_iter_``.
"""
from __future__ import annotations

from .kplane import KPlane
from .lrr import LRR
from .ssc import SSC
from .tsc import TSC

__all__ = ["SOLVERS", "SOLVER_NAMES", "make_solver"]

SOLVERS = {"kplane": KPlane, "tsc": TSC, "ssc": SSC, "lrr": LRR}

#: Human-readable names for the UI.
SOLVER_NAMES = {
    "kplane": "k-plane (Bradley & Mangasarian)",
    "tsc": "TSC — thresholding subspace clustering (Heckel & Bölcskei)",
    "ssc": "SSC — sparse subspace clustering, ADMM (Elhamifar & Vidal)",
    "lrr": "LRR — low-rank representation, inexact ALM (Liu et al.)",
}


def make_solver(name, n_clusters, subspace_dim, random_state=None, **params):
    """Build the solver ``name`` (one of ``SOLVERS``).

    It gets k, q, random_state and any of its other parameters.

    Unknown names or parameters raise ValueError.

    Parameters
    ----------
    name : {"kplane", "tsc", "ssc", "lrr"}
        Key of ``SOLVERS``.
    n_clusters : int
        Number of subspaces k (validated by the solver's ``fit``).
    subspace_dim : int
        Dimension q of every subspace (validated by the solver's ``fit``).
    random_state : None, int or numpy.random.Generator, optional
        Passed to the solver.
    **params
        Any other constructor parameter of the solver.

    Returns
    -------
    KPlane, TSC, SSC or LRR
        The unfitted estimator.

    Raises
    ------
    ValueError
        If ``name`` is not in ``SOLVERS`` or a parameter is not accepted by the solver.
    """
    if name not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(SOLVERS)}; got {name!r}")
    try:
        return SOLVERS[name](n_clusters=n_clusters, subspace_dim=subspace_dim, random_state=random_state, **params)
    except TypeError as exc:
        raise ValueError(f"bad parameter for solver {name!r}: {exc}") from None
