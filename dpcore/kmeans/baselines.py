"""Peer baselines: diffprivlib's DP k-means (DPLloyd) with public bounds, and plain k-means++.

Both take points as rows (dense arrays or ``scipy.sparse``) and expose ``cluster_centers_``
and ``labels_`` like scikit-learn, so the co-clustering page (documents × terms) and the
high-dimensional k-means page can share them.

diffprivlib and this scikit-learn
---------------------------------
diffprivlib 0.6.6 imports ``DOUBLE`` and ``DTYPE`` from ``sklearn.tree._tree`` when the
package is imported (for its random forests); scikit-learn ≥ 1.8 no longer defines them, so
``import diffprivlib`` fails. :func:`_load_diffprivlib` restores the two historical constants
(``DOUBLE = np.float64``, ``DTYPE = np.float32``) only when they are missing, before the
import; k-means never uses them. A diffprivlib release that supports the installed
scikit-learn (or pinning ``scikit-learn<1.8``) makes the shim a no-op.

diffprivlib's budget split
--------------------------
``diffprivlib.models.KMeans._split_epsilon`` returns (per-coordinate ε, count ε) while
``_update_centers`` unpacks it as (count ε, per-coordinate ε). Each iteration then spends
ε₀ + d·ε_i with the two swapped, i.e. ε/iters · (1 + d·c)/(d + c) with c = ∛(4dρ²), ρ = 0.225:
more than the ε asked for as soon as d ≥ 5 (×1.5 at d = 20, ×9.5 at d = 4303). Our subclass
:class:`_FixedSplitKMeans` hands ``_update_centers`` the pair in the order it expects (it
checks which order sums to ε/iters, so it stays correct if diffprivlib fixes the bug), so a
run spends exactly ε: per iteration ε_count + d·ε_coord = ε/iters, parallel over clusters
(each point is in one cluster), sequential over iterations. ``tests/test_kmeans_baselines.py``
records the ε of every mechanism diffprivlib creates and checks the total.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans as _SkKMeans
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import check_array, check_epsilon, check_int, check_random_state, check_real
from ..privacy import PrivacyLedger, PrivateEstimatorMixin
from ..data import MAX_DENSE_CELLS
from ..preprocessing import ROW_MAPS, map_rows_to_ball_counted, normalize_rows
from .common import RADIUS_LEAK_REASON, resolve_radius

__all__ = ["DPLloydKMeans", "KMeansPlusPlus"]


_DPL = None


def _load_diffprivlib():
    """Import diffprivlib's KMeans and BudgetAccountant (with the scikit-learn shim above)."""
    global _DPL
    if _DPL is None:
        try:
            import sklearn.tree._tree as _tree
            for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
                if not hasattr(_tree, name):
                    setattr(_tree, name, value)
        except ImportError:  # pragma: no cover - scikit-learn without trees
            pass
        from diffprivlib import BudgetAccountant
        from diffprivlib.models import KMeans as DPKMeans
        _DPL = (DPKMeans, BudgetAccountant)
    return _DPL


def _fixed_split_class():
    DPKMeans, _ = _load_diffprivlib()

    class _FixedSplitKMeans(DPKMeans):
        """diffprivlib's KMeans with the (count ε, coordinate ε) pair handed over in the order
        ``_update_centers`` unpacks it (see the module docstring)."""

        def _split_epsilon(self, dims, total_iters, rho=0.225):
            a, b = super()._split_epsilon(dims, total_iters, rho)
            target = self.epsilon / total_iters
            # _update_centers does `eps_count, eps_coord = self._split_epsilon(...)` and spends
            # eps_count + dims * eps_coord per iteration: return the order that sums to target.
            if math.isclose(a + dims * b, target, rel_tol=1e-9):
                return a, b
            if math.isclose(b + dims * a, target, rel_tol=1e-9):
                return b, a
            raise RuntimeError("diffprivlib's KMeans budget split changed; check DPLloydKMeans")  # pragma: no cover

    return _FixedSplitKMeans


class DPLloydKMeans(PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """ε-DP k-means by DPLloyd (Su et al. 2016), i.e. ``diffprivlib.models.KMeans`` - the
    DP-KMeans peer of the co-clustering paper's §5 - run with PUBLIC bounds.

    A limitation of diffprivlib's DPLloyd (0.6.x, ``KMeans._update_centers``), stated as a fact
    about that library: a cluster that receives no point in an iteration is skipped - its
    centre stays where it was and gets no noise. Whether a cluster is empty is a function of
    the data, so the released centres reveal it without noise; the pages say so next to the
    peer. We run it as published (it is a peer, not one of our methods).

    Parameters
    ----------
    n_clusters : int
        Number k ≥ 1 of clusters.
    epsilon : float
        Privacy budget ε > 0 of the whole run. Neighbouring datasets differ by adding or
        removing ONE ROW (a whole document), a stronger unit than DP-τCC's single count.
    radius : float > 0 (required) or ``"data"``
        Public radius Λ: rows are mapped into the ball of radius Λ (see ``row_map``), and
        the per-coordinate bounds handed to diffprivlib are [0, Λ] when ``nonnegative`` and
        [−Λ, Λ] otherwise - never bounds read off the data. For L2-normalised documents
        (the co-clustering paper's use) Λ = 1 is a public fact. ``"data"`` uses max ‖x‖ with
        a :class:`DataDerivedRadiusWarning`; the run is then not private (as for every
        k-means method of dpcore).
    nonnegative : bool
        Declare the data non-negative (e.g. counts): a public, schema-level fact. Input with
        a negative entry is then rejected (``ValueError``), not silently clipped.
    row_map : {"normalize", "clip"}, default="normalize"
        How rows are mapped into B(0, Λ); see :func:`dpcore.preprocessing.map_rows_to_ball`.
    max_dense_cells : int
        Diffprivlib needs a dense n×d array: inputs with more cells are refused with a
        ``ValueError`` (default :data:`dpcore.data.MAX_DENSE_CELLS`).
    random_state : None, int or Generator
        Diffprivlib draws its own randomness (initial centres and noise) from a
        ``numpy.random.RandomState``; we pass it an integer seed drawn from our Generator
        (also when ``random_state`` is None - then from a fresh unseeded Generator), so runs
        are reproducible with a seed and never touch numpy's global state. diffprivlib's
        cryptographically secure source is thus not used (fine for teaching).

    Attributes
    ----------
    cluster_centers_ : (k, d) private centres (in the mapped space).
    labels_ : NOT private - each mapped row assigned to its nearest released centre.
    n_iter_ : iterations diffprivlib chose (from ε, n, d, k; it treats n as public).
    bounds_ : the public (lower, upper) per-coordinate bounds used.
    radius_ : Λ used; n_clipped_ : rows longer than Λ (NOT private) - shrunk onto the sphere with
        ``row_map="clip"``; with ``"normalize"`` every non-zero row is scaled to norm Λ anyway.
    ledger_, private_outputs_, nonprivate_outputs_ : as every private estimator.
    n_features_in_ : d.
    """

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=None, nonnegative=False, row_map="normalize",
                 max_dense_cells=MAX_DENSE_CELLS, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.radius = radius
        self.nonnegative = nonnegative
        self.row_map = row_map
        self.max_dense_cells = max_dense_cells
        self.random_state = random_state

    def fit(self, X, y=None):
        """Run diffprivlib's DPLloyd on the rows of X mapped into B(0, Λ).

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n, d)
            The points as rows.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.
        """
        k = check_int(self.n_clusters, "n_clusters", 1)
        eps = check_epsilon(self.epsilon)
        max_cells = check_int(self.max_dense_cells, "max_dense_cells", 1)
        if self.row_map not in ROW_MAPS:
            raise ValueError(f"row_map must be 'normalize' or 'clip'; got {self.row_map!r}")
        X = check_array(X, "X", allow_sparse=True)
        n, d = X.shape
        if n < k:
            raise ValueError(f"n_clusters must be <= the number of rows ({n}); got {k}")
        if n * d > max_cells:
            raise ValueError(f"X is too large for diffprivlib's dense k-means: {n}×{d} = {n * d:,} cells > "
                             f"max_dense_cells = {max_cells:,} (diffprivlib needs a dense array)")
        has_neg = (X.data < 0).any() if sp.issparse(X) else (X < 0).any()
        if self.nonnegative and has_neg:
            raise ValueError("X has negative entries but nonnegative=True was declared (bounds [0, radius])")
        radius, derived = resolve_radius(self.radius, X)
        self.radius_ = radius
        # normalising scales every non-zero row to norm Λ; n_clipped_ counts the rows longer than Λ either way
        Xm, self.n_clipped_ = map_rows_to_ball_counted(X, radius, self.row_map)
        rng = check_random_state(self.random_state)
        Xm = Xm.toarray() if sp.issparse(Xm) else np.asarray(Xm)
        lower = np.zeros(d) if self.nonnegative else np.full(d, -radius)
        upper = np.full(d, radius)
        _, BudgetAccountant = _load_diffprivlib()
        seed = int(rng.integers(0, 2 ** 31 - 1))
        km = _fixed_split_class()(n_clusters=k, epsilon=eps, bounds=(lower, upper), random_state=seed,
                                   accountant=BudgetAccountant())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=FutureWarning)
            km.fit(Xm)
        self.cluster_centers_ = np.asarray(km.cluster_centers_, dtype=np.float64)
        self.labels_ = np.asarray(km.labels_, dtype=np.int64)
        self.n_iter_ = int(km.n_iter_)
        self.bounds_ = (float(lower[0]), float(upper[0]))
        self.n_features_in_ = d
        self.ledger_ = PrivacyLedger(budget_epsilon=eps)
        self.ledger_.record(
            f"{k} cluster centres in R^{d}", "diffprivlib KMeans (DPLloyd)", eps,
            note=(f"{self.n_iter_} iterations × (folded geometric noise on each cluster count + bounded-domain "
                  f"Laplace on each coordinate sum, sensitivity = bound width {upper[0] - lower[0]:g}); "
                  "parallel over clusters, sequential over iterations; neighbours = one row added/removed"))
        self.private_outputs_ = [] if derived else ["cluster_centers_"]
        self.nonprivate_outputs_ = {
            "labels_": "raw rows assigned to the nearest released centre (reads the data without noise)",
            "n_clipped_": "exact number of rows longer than Λ, computed from the data",
        }
        if derived:
            self.nonprivate_outputs_["cluster_centers_"] = RADIUS_LEAK_REASON
            self.nonprivate_outputs_["radius_"] = RADIUS_LEAK_REASON
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class KMeansPlusPlus(ClusterMixin, BaseEstimator):
    """Non-private k-means with k-means++ seeding (scikit-learn), the reference for the DP
    k-means peers. Sparse input works as is.

    Parameters
    ----------
    n_clusters : int, default=8
        Number k ≥ 1 of clusters.
    n_init : int, default=10
        Number ≥ 1 of k-means++ seedings; the best by inertia is kept.
    normalize_rows : bool, default=False
        L2-normalise rows first (as :class:`DPLloydKMeans` does by default; for documents
        this is "spherical-like" k-means on the unit sphere).
    random_state : None, int or numpy.random.Generator, default=None
        Seed or generator; an int seed for scikit-learn is drawn from it.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        The centres.
    labels_ : ndarray of int of shape (n,)
        Cluster index of every row.
    inertia_ : float
        Sum of squared distances to the nearest centre.
    n_iter_ : int
        Lloyd iterations of the kept seeding.
    n_features_in_ : int
        Number d of columns seen in ``fit``.
    """

    def __init__(self, *, n_clusters=8, n_init=10, normalize_rows=False, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.normalize_rows = normalize_rows
        self.random_state = random_state

    def fit(self, X, y=None):
        """Run scikit-learn's k-means (k-means++ seeding) on the rows of X.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n, d)
            The points as rows.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.
        """
        k = check_int(self.n_clusters, "n_clusters", 1)
        n_init = check_int(self.n_init, "n_init", 1)
        X = check_array(X, "X", allow_sparse=True)
        if X.shape[0] < k:
            raise ValueError(f"n_clusters must be <= the number of rows ({X.shape[0]}); got {k}")
        if self.normalize_rows:
            X = normalize_rows(X)
        rng = check_random_state(self.random_state)
        km = _SkKMeans(n_clusters=k, init="k-means++", n_init=n_init,
                       random_state=int(rng.integers(0, 2 ** 31 - 1))).fit(X)
        self.cluster_centers_ = np.asarray(km.cluster_centers_, dtype=np.float64)
        self.labels_ = np.asarray(km.labels_, dtype=np.int64)
        self.inertia_ = float(km.inertia_)
        self.n_features_in_ = X.shape[1]
        self.n_iter_ = int(km.n_iter_)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
