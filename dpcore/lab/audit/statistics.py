"""Estimator statistics: what an audit looks at in a fitted estimator's release.

:class:`EstimatorStatistic` fits a method of the catalogue on D or D′ and reduces its
release to a scalar or to a feature vector (:func:`release_features`) for the fitted
likelihood-ratio score.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ...metrics import squared_distances_to_subspaces
from ...subspace.common import single_threaded
from ..reachability import reachable
from ..methods import Method, get_method

__all__ = ["STATISTIC_HELP", "FAMILY_STATISTICS", "release_features", "EstimatorStatistic"]


#: what each statistic is (every one a function of the *private* outputs only)
STATISTIC_HELP = {
    "outlier_distance": "distance from the audited point to the nearest released subspace",
    "table_cell": "the released contingency-table cell that holds the changed matrix cell "
                  "(located with the released row and column partitions)",
    "cell_unreachable": "1 if the released contingency-table cell holding the changed matrix cell could not have "
                        "been produced from the neighbour's count (exact reachability, dpcore.lab.reachability), "
                        "else 0",
    "nearest_centre": "distance from the audited point to the nearest released centre",
    "likelihood_ratio": "a likelihood-ratio score of the release: features of the released subspaces, centres or "
                        "NMF basis (distances to the audited and the replaced point or document, the released "
                        "projector or centre moments) combined by a score fitted on the first half of the runs only",
}
#: the statistics an audit can read off each family's release (a method's default is its catalogue
#: entry's ``audit_statistic``)
FAMILY_STATISTICS = {"subspace": ("likelihood_ratio", "outlier_distance"),
                     "kmeans": ("likelihood_ratio", "nearest_centre"),
                     "cocluster": ("table_cell", "cell_unreachable"),
                     "documents": ("likelihood_ratio",)}


def release_features(family, est, target):
    """Feature vector of a private release (a function of the private outputs only) for the
    likelihood-ratio score. ``target`` is a dict with "point" (the outlier or removed point)
    and "replaced" (the row a replace-one neighbour overwrote, or None).

    subspace: distance from the point (and from the replaced row) to the nearest released
    subspace, and the upper triangle of Σᵢ UᵢUᵢᵀ (order-free summary of the release).
    kmeans: distance from the point (and from the replaced row) to the nearest released
    centre, the sum of the centres and the upper triangle of Σ c cᵀ (order-free).
    documents: the same distances for the documents scaled to unit norm, the sorted norms of
    the released centres (or NMF basis rows) and their sorted inner products with the audited
    document (k-sized and order-free: the vocabulary is in the thousands).

    Parameters
    ----------
    family : {"subspace", "kmeans", "documents"}
    est : estimator
        A fitted estimator with ``subspaces_`` (subspace), ``cluster_centers_`` (kmeans;
        documents) or ``components_`` (documents: DPNMF).
    target : dict
        "point" and "replaced" as above.

    Returns
    -------
    ndarray of float of shape (features,)

    Raises
    ------
    ValueError
        If ``family`` is not "subspace", "kmeans" or "documents".
    """
    p, r = np.asarray(target["point"], dtype=float), target.get("replaced")
    pts = [p] + ([np.asarray(r, dtype=float)] if r is not None else [])
    if family == "subspace":
        U = np.asarray(est.subspaces_)
        dist = [float(np.sqrt(squared_distances_to_subspaces(x[None], U).min())) for x in pts]
        P = np.einsum("kdq,keq->de", U, U)
        return np.r_[dist, P[np.triu_indices(P.shape[0])]]
    if family == "kmeans":
        C = np.atleast_2d(np.asarray(est.cluster_centers_, dtype=float))
        dist = [float(np.sqrt(((C - x[None]) ** 2).sum(1).min())) for x in pts]
        M = C.T @ C
        return np.r_[dist, C.sum(0), M[np.triu_indices(M.shape[0])]]
    if family == "documents":
        # centres (DPHD, DP-KMeans) or the NMF basis (DPNMF: rows of components_), all in the space of
        # unit-norm documents; the audited documents are normalised the same way (per record). Only
        # k-sized, order-free summaries: m (the vocabulary) is in the thousands.
        R = est.cluster_centers_ if hasattr(est, "cluster_centers_") else est.components_
        R = np.atleast_2d(np.asarray(R, dtype=float))
        unit = [x / max(float(np.linalg.norm(x)), 1e-300) for x in pts]
        dist = [float(np.sqrt(((R - x[None]) ** 2).sum(1).min())) for x in unit]
        return np.r_[dist, np.sort(np.linalg.norm(R, axis=1)), np.sort(R @ unit[0])]
    raise ValueError(f"family must be 'subspace', 'kmeans' or 'documents' for the likelihood-ratio statistic; "
                     f"got {family!r}")


def _as_target(target):
    if isinstance(target, dict):
        return target
    if isinstance(target, tuple):          # a cell
        return target
    return {"point": np.asarray(target, dtype=float), "replaced": None}


@dataclass
class EstimatorStatistic:
    """``(X, rng) -> float or feature vector``: fit a method of the catalogue
    (:data:`dpcore.lab.methods.METHODS`) on X and reduce its release. Picklable, so it can run
    in worker processes (the entry travels with it, so a registered method works there too).

    ``target`` is the audited point (an array, or a dict with "point" and "replaced": the
    row a replace-one neighbour overwrote) for ``outlier_distance``, ``nearest_centre`` and
    ``likelihood_ratio``, or the (row, column) of the changed cell (``table_cell``).

    Attributes
    ----------
    name : str or dpcore.lab.methods.Method
        A key of :data:`dpcore.lab.methods.METHODS`, or an entry (kept as its name).
    params : dict
        Parameters of the estimator (ε is added from ``epsilon``).
    epsilon : float or None
        ε of a private method; must be None for a non-private one.
    statistic : str
        A key of :data:`STATISTIC_HELP` allowed for the method's family
        (:data:`FAMILY_STATISTICS`).
    target : dict or tuple
        As above (an array is turned into ``{"point": array, "replaced": None}``).
    method : dpcore.lab.methods.Method
        The catalogue entry (set on construction).

    Raises
    ------
    ValueError
        On construction, if ``name`` is not in the catalogue, ``epsilon`` is missing for a
        private method or given for a non-private one, or ``statistic`` does not fit the family.
    """
    name: str
    params: dict
    epsilon: float | None
    statistic: str
    target: object
    method: Method = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        self.method = get_method(self.name)
        self.name = self.method.name
        if self.method.private and self.epsilon is None:
            raise ValueError(f"epsilon must be given (> 0) for the private method {self.name}")
        if not self.method.private and self.epsilon is not None:
            raise ValueError(f"epsilon must be empty for {self.name}: it is not private and makes no privacy claim "
                             "(the audit then measures how much it leaks)")
        if self.statistic not in STATISTIC_HELP:
            raise ValueError(f"statistic must be one of {', '.join(STATISTIC_HELP)}; got {self.statistic!r}")
        allowed = FAMILY_STATISTICS[self.method.family]
        if self.statistic not in allowed:
            raise ValueError(f"statistic must be one of {', '.join(sorted(allowed))} for {self.name}; "
                             f"got {self.statistic!r}")
        self.target = _as_target(self.target)

    @classmethod
    def for_dataset(cls, name, dataset, epsilon, target, params=None, statistic=None):
        """The statistic of method ``name`` with the dataset's defaults (k, q from its classes
        and subspaces, as in a sweep) and the entry's default statistic.

        Parameters
        ----------
        name : str or dpcore.lab.methods.Method
            A key of :data:`dpcore.lab.methods.METHODS`, or an entry.
        dataset : dpcore.data.Dataset
        epsilon : float or None
        target : array, dict or tuple
            The audited point, or the changed cell (i, j) (D's count there is appended).
        params : dict, optional
            Parameters over the dataset defaults.
        statistic : str, optional
            Defaults to the entry's ``audit_statistic``.

        Returns
        -------
        EstimatorStatistic

        Raises
        ------
        ValueError
            If ``name`` is not in the catalogue, no statistic is given or named by the entry,
            or as the constructor.
        """
        method = get_method(name)
        statistic = statistic or method.audit_statistic
        if statistic is None:
            raise ValueError(f"statistic must be given for {method.name}: its catalogue entry names no audit_statistic")
        if isinstance(target, tuple) and len(target) == 2:     # a changed cell: keep D's count there too
            target = (*target, float(dataset.X[target[0], target[1]]))
        return cls(method, {**method.dataset_defaults(dataset), **(params or {})}, epsilon, statistic, target)

    def __call__(self, X, rng):
        with warnings.catch_warnings(), single_threaded():     # many small fits: one BLAS thread each (as in sweeps)
            warnings.simplefilter("ignore")
            est = self.method.build(params=self.params, epsilon=self.epsilon, random_state=rng).fit(X)
        if self.statistic == "likelihood_ratio":
            return release_features(self.method.family, est, self.target)
        if self.statistic == "outlier_distance":
            p = np.asarray(self.target["point"])
            return float(np.sqrt(squared_distances_to_subspaces(p[None], est.subspaces_).min()))
        if self.statistic == "nearest_centre":
            C = np.atleast_2d(est.cluster_centers_)
            return float(np.sqrt(((C - np.asarray(self.target["point"])[None]) ** 2).sum(1).min()))
        i, j = self.target[:2]
        r, c = int(est.row_labels_[i]), int(est.column_labels_[j])
        if self.statistic == "table_cell":
            return float(est.T_[r, c]) if r >= 0 and c >= 0 else 0.0
        # cell_unreachable: the neighbour's count in the same (private) co-cluster differs by 1, up on D
        # (the side that holds the count of D at the changed cell) and down on D′
        if r < 0 or c < 0:
            return 0.0                       # the cell's row or column cluster was deleted: nothing released holds it
        other = float(est.T_exact_[r, c]) + (1.0 if X[i, j] == self.target[2] else -1.0)
        return float(not reachable([float(est.T_[r, c])], other, "discrete_laplace", clip_low=0.0)[0])

