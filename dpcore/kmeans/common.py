"""Shared helpers of the private k-means code: the public radius Λ, per-cluster sums for dense
or ``scipy.sparse`` CSR points (rows) and what every fitted k-means estimator offers
(:class:`CentresPredictMixin`: ``predict`` and ``score``). The input check
(:func:`~dpcore.validation.check_points`) and the nearest-centre rule
(:func:`~dpcore.metrics.nearest_centres`) live below this package and are re-exported here; the
row maps (clipping, normalising, truncation) are in :mod:`dpcore.preprocessing`.

Leaks are warned about with :class:`dpcore.exceptions.PrivacyLeakWarning`: a radius read off
the data (:class:`DataDerivedRadiusWarning`, a subclass) and input that looks scaled by the
data's own statistics (:func:`warn_if_data_scaled`, called at the start of every private
k-means estimator's ``fit``).

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


import numpy as np
import scipy.sparse as sp
from ..exceptions import PrivacyLeakWarning, warn_privacy_leak
from ..metrics import kmeans_objective, kmedian_objective, nearest_centres
from ..validation import check_array, check_fitted_input, check_points, check_real
from ..preprocessing import clip_rows, row_sq_norms

__all__ = ["CentresPredictMixin", "DataDerivedRadiusWarning", "PrivacyLeakWarning", "resolve_radius", "check_points",
           "nearest_centres", "cluster_sums", "data_radius", "RADIUS_LEAK_REASON", "SCALING_TOL", "data_scaling",
           "warn_if_data_scaled", "check_radius", "MIN_RADIUS", "MAX_RADIUS"]

RADIUS_LEAK_REASON = ("radius Λ was computed from the data (max row norm): this leaks information "
                      "about the largest point, so no output of this run is differentially private")


class DataDerivedRadiusWarning(PrivacyLeakWarning):
    """A bound computed from the data was used where a public one is required (privacy leak);
    a :class:`dpcore.exceptions.PrivacyLeakWarning`."""


#: Tolerance of :func:`data_scaling`: a column "has mean 0 and standard deviation 1" (or "min 0,
#: max 1") when it does to 1e-5, relative to its scale. Loose enough for a float32 scaler's
#: output (≈ 1e-6 off), far tighter than unscaled data match by chance in every column.
SCALING_TOL = 1e-5

_SCALING_TEXT = {
    "standardised": ("every column has mean 0 and standard deviation 1",
                     "means and standard deviations (e.g. scikit-learn's StandardScaler)"),
    "unit variance": ("every column has standard deviation 1",
                      "standard deviations (e.g. StandardScaler(with_mean=False))"),
    "min-max": ("every column has minimum 0 (or −1) and maximum 1",
                "minima and maxima (e.g. scikit-learn's MinMaxScaler, or MaxAbsScaler on non-negative data)"),
    "max-abs": ("every column has maximum absolute value 1",
                "maximum absolute values (e.g. scikit-learn's MaxAbsScaler)"),
}


def _column_stats(X):
    """Per-column mean, population variance, min and max of dense or sparse X (no n×d float temporary)."""
    n = X.shape[0]
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        sq = np.asarray(X.multiply(X).sum(axis=0)).ravel() / n
        lo = X.min(axis=0).toarray().ravel()
        hi = X.max(axis=0).toarray().ravel()
    else:
        mean = X.mean(axis=0)
        sq = np.einsum("ij,ij->j", X, X) / n
        lo, hi = X.min(axis=0), X.max(axis=0)
    return mean, np.maximum(sq - mean ** 2, 0.0), lo, hi


def _all_integers(X):
    values = X.data if sp.issparse(X) else X
    return bool(np.all(np.mod(values, 1.0) == 0.0))


def data_scaling(X, tol=SCALING_TOL):
    """Whether X looks scaled by statistics of the data itself - what a scaler fitted on X
    (``Pipeline(StandardScaler(), est)``) hands an estimator.

    Constant columns are left out (the scalers map them to a constant); at least one column
    must vary. Returns the first pattern that holds in every varying column:

    - ``"standardised"``: mean 0 and standard deviation 1 (population or sample), to ``tol``;
    - ``"unit variance"``: standard deviation 1 (scaled, not centred);
    - ``"min-max"``: minimum 0 and maximum 1 (or −1 and 1), to ``tol``;
    - ``"max-abs"``: maximum absolute value 1.

    The last two need ≥ 2 varying columns and one non-integer entry: a 0/1 (or ±1) matrix has
    these bounds without any scaler, and so can a single column of proportions.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
        Finite float points as rows.
    tol : float, default :data:`SCALING_TOL`

    Returns
    -------
    str or None
        One of the names above, or None (no pattern, or fewer than 2 rows).
    """
    n = X.shape[0]
    if n < 2 or X.shape[1] == 0:
        return None
    mean, var, lo, hi = _column_stats(X)
    varying = hi > lo
    if not varying.any():
        return None
    mean, var, lo, hi = mean[varying], var[varying], lo[varying], hi[varying]
    std0, std1 = np.sqrt(var), np.sqrt(var * n / (n - 1))
    unit = (np.abs(std0 - 1.0) <= tol) | (np.abs(std1 - 1.0) <= tol)
    if unit.all():
        return "standardised" if np.all(np.abs(mean) <= tol) else "unit variance"
    if varying.sum() < 2:
        return None
    kind = None
    if any(np.all(np.abs(lo - a) <= tol) and np.all(np.abs(hi - 1.0) <= tol) for a in (0.0, -1.0)):
        kind = "min-max"
    elif np.all(np.abs(np.maximum(np.abs(lo), np.abs(hi)) - 1.0) <= tol):
        kind = "max-abs"
    return None if kind is None or _all_integers(X) else kind


def warn_if_data_scaled(X, estimator="this estimator", stacklevel=4):
    """Warn with :class:`~dpcore.exceptions.PrivacyLeakWarning` when X looks scaled by
    statistics of the data itself (:func:`data_scaling`). Called at the start of the private
    k-means estimators' ``fit``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
        The input of ``fit`` (after dpcore's validation).
    estimator : str, default "this estimator"
        Name used in the message.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (3: the caller of ``fit``).

    Returns
    -------
    str or None
        What :func:`data_scaling` found.
    """
    kind = data_scaling(X)
    if kind is not None:
        found, stats = _SCALING_TEXT[kind]
        warn_privacy_leak(
            f"{estimator}: the input looks scaled by statistics of the data themselves ({found}). If a "
            f"scaler fitted on these data produced it (e.g. in a Pipeline), its {stats} were read off the "
            "data without noise: they are not private, and neither is the release as a function of the raw "
            "data. Scale with a fixed transform whose constants are public (known before seeing the data, "
            "e.g. a FunctionTransformer with published bounds) and give a public radius.",
            PrivacyLeakWarning, stacklevel=stacklevel)   # also marks the running fit as not private
    return kind


def data_radius(X):
    """max ‖xᵢ‖ — NOT public: using it as Λ leaks the largest norm.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)

    Returns
    -------
    float
    """
    return float(np.sqrt(row_sq_norms(X).max()))


def resolve_radius(radius, X):
    """The public radius Λ. Returns ``(Λ, derived)``.

    ``radius`` is a positive number chosen without looking at the data, or the string
    ``"data"``, which uses max ‖xᵢ‖ and issues a :class:`DataDerivedRadiusWarning` (the
    caller must then record that nothing it releases is private). ``None`` is refused:
    every private k-means method needs a public Λ.

    Parameters
    ----------
    radius : float > 0 or "data"
    X : ndarray or scipy.sparse matrix of shape (n, d)
        Read only when ``radius == "data"``.

    Returns
    -------
    (float, bool)
        Λ and whether it was derived from the data.
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
        warn_privacy_leak("radius='data': Λ = max ‖x‖ is computed from the data and will result in "
                      "additional privacy leakage; pass a public radius to get a private result",
                      DataDerivedRadiusWarning, stacklevel=4)
        return lam, True
    return check_radius(radius), False


#: the range of a public radius Λ: squared distances and sensitivities (4Λ², 2Λ·√n…) overflow or vanish in
#: floating point beyond it (Λ = 1e300 made the row maps loop for ever: their norms were inf)
MIN_RADIUS, MAX_RADIUS = 1e-100, 1e100


def check_radius(radius):
    """A public radius Λ in [:data:`MIN_RADIUS`, :data:`MAX_RADIUS`] (a number, not ``"data"``).

    Parameters
    ----------
    radius : float

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``radius`` and the range.
    """
    lam = check_real(radius, "radius", 0.0, None, low_inclusive=False)
    if not MIN_RADIUS <= lam <= MAX_RADIUS:
        raise ValueError(f"radius must be between {MIN_RADIUS:g} and {MAX_RADIUS:g} (squared distances to the ball "
                         f"overflow or vanish in floating point beyond); got {lam:g}. Rescale the data and the "
                         "radius together (divide both by a power of ten): the clustering does not change")
    return lam


def cluster_sums(X, labels, k):
    """Per-cluster sums and counts of the rows of X.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    labels : array_like of int, shape (n,)
        Cluster of every row, in [0, k).
    k : int
        Number of clusters.

    Returns
    -------
    sums : ndarray of shape (k, d)
    counts : ndarray of float64, shape (k,)
    """
    labels = np.asarray(labels, dtype=np.int64)
    n = X.shape[0]
    ind = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    sums = ind @ X
    sums = sums.toarray() if sp.issparse(sums) else np.asarray(sums)
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    return sums, counts


class CentresPredictMixin:
    """What the dpcore k-means estimators share once fitted: ``predict`` (nearest released
    centre), ``score`` (minus the objective) and scikit-learn's tag that they accept sparse
    input (CSR rows).

    Both first map the rows of X as ``fit`` did before assigning them (:meth:`_map_rows`: the
    per-record map onto the public ball, e.g. clipping to B(0, Λ) or L2-normalising
    documents), so ``predict`` on the training rows gives ``labels_`` and ``score`` is the
    objective the method minimised. Neither is private: they read X without noise (a
    hyper-parameter chosen by its ``score``, e.g. in ``GridSearchCV``, is not private either).

    dtype: the fit computes in float64 (the noise is added exactly on an integer grid,
    :mod:`dpcore.privacy.exact`) and ``cluster_centers_`` is returned in the input's float
    dtype (:func:`~dpcore.validation.input_float_dtype`: float32 stays float32, as in
    scikit-learn's KMeans; rounding a release is post-processing). Subclasses set
    ``cluster_centers_`` through :meth:`_set_centres`.
    """

    def data_leaks(self, X):
        """The k-means fits' own check on the values (:func:`warn_if_data_scaled`): an input
        scaled by statistics of the data themselves makes the release not private. Run before
        the fit by :func:`dpcore.lab.verdicts.plan_run` (given the data, not only its shape)."""
        try:
            kind = data_scaling(check_array(X, "X", allow_sparse=True))
        except (TypeError, ValueError):
            return []                     # the fit refuses such an input itself
        if kind is None:
            return []
        found, stats = _SCALING_TEXT[kind]
        return [f"the input looks scaled by statistics of the data themselves ({found}): its {stats} were read off "
                "the data without noise"]

    def _map_rows(self, X):
        """The per-record map ``fit`` applied before assigning the rows: clipping to
        B(0, ``radius_``). Subclasses with another map override it."""
        return clip_rows(X, self.radius_)[0]

    def _set_centres(self, centres, dtype, X_mapped, sq_norms=None):
        """Store ``cluster_centers_`` in ``dtype`` and ``labels_`` (nearest of those centres)."""
        self.cluster_centers_ = np.asarray(centres).astype(dtype, copy=False)
        self.labels_ = nearest_centres(X_mapped, self.cluster_centers_, sq_norms=sq_norms)[0]

    def _mapped_input(self, X):
        X = check_fitted_input(self, X, "cluster_centers_", allow_sparse=True)
        return self._map_rows(X)

    def predict(self, X):
        """Nearest released centre of every row of X, mapped as in ``fit`` (NOT private: it reads
        the raw points).

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, d)
            The points as rows, with the d (and feature names) of ``fit``.

        Returns
        -------
        ndarray of int64 of shape (n,)
            Indices into ``cluster_centers_``.
        """
        return nearest_centres(self._mapped_input(X), self.cluster_centers_)[0]

    def score(self, X, y=None):
        """Minus the objective of the rows of X (mapped as in ``fit``) against the released
        centres: −Σᵢ minⱼ ‖xᵢ − cⱼ‖² (k-means, like scikit-learn's ``KMeans.score``), or
        −Σᵢ minⱼ ‖xᵢ − cⱼ‖ for ``objective="kmedian"``. Higher is better. NOT private.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, d)
            The points as rows, with the d (and feature names) of ``fit``.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        float
        """
        Xm = self._mapped_input(X)
        objective = kmedian_objective if getattr(self, "objective", "kmeans") == "kmedian" else kmeans_objective
        return -objective(Xm, self.cluster_centers_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
