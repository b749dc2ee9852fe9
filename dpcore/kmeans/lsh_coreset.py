"""Private k-means by an LSH tree and a private coreset: the method of Google's open-source
library (``learning/clustering`` of google/differential-privacy, its README, and the Google AI
blog post "Practical differentially private clustering", 2021), written from that description
and its code's facts (the code here is ours).

The mechanism (reference file in brackets, all under ``learning/clustering/``):

1. every point is clipped to the public ball B(0, Λ) (``clustering_params.Data.clip_by_radius``);
2. a private count of all points, n + discrete Laplace noise (``central_privacy_utils.get_private_count``,
   reused as the root's count, ``default_clustering_params.default_tree_param``);
3. a prefix tree of SimHash bits: ``max_depth`` = 20 hyperplanes through 0 with N(0, I) normals, one per
   level, bit 0 where ⟨x, v⟩ ≥ 0 (``lsh.SimHash``; ``clustering_algorithm.private_lsh_clustering``:
   max_depth 20). Built level by level (``lsh_tree.LshTree``): both children of every node whose noisy
   count is ≥ ``min_points_to_branch`` get a noisy count (discrete Laplace, empty ones too); a child is
   kept when its noisy count is ≥ ``min_points_in_node``; a node without a kept child is a leaf (points of
   a dropped child of a node with a kept sibling are dropped);
4. thresholds (``default_tree_param``): min_points_in_node = max(1, min(⌊10·√d·σ/Λ⌋, ⌊ñ/(2k)⌋)) with ñ
   the private count and σ the sums' noise, min_points_to_branch = 3 × that;
5. the coreset: each leaf's noisy sum (Gaussian, σ) divided by its noisy count, clipped to B(0, Λ),
   weighted by its noisy count (``clustering_algorithm.get_private_coreset``,
   ``central_privacy_utils.get_private_average``);
6. non-private k-means++ and Lloyd (scikit-learn's ``KMeans``) on the weighted coreset, with
   min(k, #coreset points) centres; those centres are the release.

Noise calibration (``privacy_calculator.PrivacyCalculator``): one parameter α sets both noises,
σ = α·Δ₂ on the sums and discrete Laplace parameter 1/(20α) on the counts
(``clustering_params.PrivacyCalculatorMultiplier``: Gaussian multiplier 1, discrete Laplace multiplier
20), and α is the smallest value for which the composition of the Gaussian release and all
``max_depth`` + 1 levels of counts is (ε, δ)-DP by dp-accounting's privacy-loss distributions
(``mechanism_calibration.calibrate_dp_mechanism`` with its ``PLDAccountant``), so the counts and the
sums share (ε, δ) by tight composition rather than a fixed split (their old ``PrivacyBudgetSplit`` is
deprecated). We do the same (:func:`calibrate_lsh_noise`) for ε ≤ ``PLD_MAX_EPSILON``; above it a
PLD grid takes seconds, and α solves basic composition instead (pure ε of the counts plus the analytic
Gaussian's ε at δ: looser, never less private).

Neighbouring relation. Google accounts under add/remove-one: each level's counts move by 1 in one node
(max_depth + 1 discrete Laplace releases of sensitivity 1) and the leaf sums by Λ. dpcore's k-means
estimators claim replace-one (n public, :mod:`dpcore.kmeans.common`); under it the root count does not
move, each deeper level moves by +1 in one node and −1 in another (2·max_depth releases of sensitivity
1: exactly the pair, not a bound) and the leaf sums by at most 2Λ (both points in one leaf). The
calibration is redone for that relation, so at the same ε the Gaussian noise is about twice Google's.
``claimed_relation = "add_remove"`` on a subclass reproduces Google's accounting
(``benchmarks/bench_lsh_k64.py`` does, to compare with their published numbers).

Noise as executed: the counts with the exact discrete Laplace sampler
(:func:`dpcore.privacy.discrete_laplace_mechanism`, scale rounded up), the sums with the exact discrete
Gaussian on a public grid (:func:`dpcore.privacy.exact.gaussian_release`); the hyperplanes and the
k-means++ seeding are public randomness drawn from the run's Generator.
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import replace, dataclass
from fractions import Fraction

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..validation import (check_delta, check_epsilon, check_int, check_random_state, check_real, input_float_dtype,
                          record_features)
from ..work import Work, add_sklearn_kmeans, clusters_of, matmul_cost, param_int, unit_cost
from ..privacy import (PrivacyEvent, PrivacyLedger, PrivateEstimatorMixin, analytic_gaussian_delta,
                       discrete_laplace_mechanism, discrete_laplace_scale)
from ..privacy.exact import gaussian_release
from ..preprocessing import clip_rows, row_sq_norms
from .common import CentresPredictMixin, RADIUS_LEAK_REASON, check_points, cluster_sums, resolve_radius, \
    warn_if_data_scaled

__all__ = ["LSHCoresetKMeans", "LSHCalibration", "LSHCoreset", "calibrate_lsh_noise", "private_lsh_coreset",
           "default_tree_thresholds", "DEFAULT_MAX_DEPTH", "COUNT_NOISE_MULTIPLIER", "BRANCH_FACTOR",
           "LOW_NOISE_FACTOR", "PLD_MAX_EPSILON", "SUM_SENSITIVITY_FACTOR"]

#: Google's tree depth (``private_lsh_clustering``: "chosen experimentally over multiple datasets")
DEFAULT_MAX_DEPTH = 20
#: Google's ``dlaplace_param_multiplier`` (the Gaussian one is 1): count parameter 1/(20α) for σ = α·Δ₂
COUNT_NOISE_MULTIPLIER = 20.0
#: Google's ``min_num_points_in_branching_node = 3 * min_num_points_in_node``
BRANCH_FACTOR = 3
#: Google's ``num_points_in_node_for_low_noise = int(10 * sqrt(d) * sigma / radius)``
LOW_NOISE_FACTOR = 10.0
#: above this ε the calibration uses basic composition (a PLD grid grows too large to be quick)
PLD_MAX_EPSILON = 10.0
#: L2 sensitivity of the leaf sums in units of Λ, per relation
SUM_SENSITIVITY_FACTOR = {"replace_one": 2.0, "add_remove": 1.0}
#: dp-accounting's PLD grid (its own default)
_VALUE_DISCRETIZATION_INTERVAL = 1e-4


def _dp_accounting():
    try:
        from dp_accounting import dp_event, mechanism_calibration
        from dp_accounting.pld import accountant, common, pld_privacy_accountant
    except ImportError as exc:      # pragma: no cover - a declared dependency of dpcore
        raise ImportError("LSHCoresetKMeans calibrates its noise with Google's dp-accounting, a dependency of "
                          "dpcore: pip install 'dp-accounting>=0.4'") from exc
    return dp_event, mechanism_calibration, accountant, common, pld_privacy_accountant


def _no_bracket_error():
    """dp-accounting's error when its calibration finds no noise (ε far too small for the run)."""
    try:
        from dp_accounting.mechanism_calibration import NoBracketIntervalFoundError
    except ImportError:         # pragma: no cover - an older dp-accounting
        return RuntimeError
    return NoBracketIntervalFoundError


def _count_releases(max_depth, relation):
    """Sensitivity-1 discrete Laplace releases one neighbouring step moves (module docstring)."""
    return 2 * max_depth if relation == "replace_one" else max_depth + 1


@dataclass(frozen=True)
class LSHCalibration:
    """The noise of one run, for (ε, δ), ``max_depth`` and a relation (:func:`calibrate_lsh_noise`).

    Attributes
    ----------
    epsilon, delta : float
        The budget.
    relation : str
        "replace_one" or "add_remove".
    max_depth : int
    noise_multiplier : float
        α = σ/Δ₂ of the leaf sums.
    count_epsilon : float
        Parameter 1/(multiplier·α) of the discrete Laplace count noise (each count's ε).
    method : str
        "pld" (tight, dp-accounting) or "basic".
    """
    epsilon: float
    delta: float
    relation: str
    max_depth: int
    noise_multiplier: float
    count_epsilon: float
    method: str

    @property
    def n_count_releases(self):
        """Sensitivity-1 count releases per neighbouring step."""
        return _count_releases(self.max_depth, self.relation)

    @property
    def count_scale(self):
        """The executed discrete Laplace scale t/s ≥ 1/count_epsilon (a Fraction)."""
        s, t = discrete_laplace_scale(1, self.count_epsilon)
        return Fraction(t, s)

    def sum_sensitivity(self, radius):
        """Δ₂ of the leaf sums for radius Λ."""
        return SUM_SENSITIVITY_FACTOR[self.relation] * radius

    def events(self):
        """The run as typed events: the counts (discrete Laplace) and the sums (Gaussian).

        With ``method == "basic"`` each part has its own statement (the counts' pure ε, the
        analytic Gaussian's (ε − that, δ)), which basic composition adds up. With
        ``method == "pld"`` only the pair is (ε, δ)-DP, by PLD composition: it is one joint event
        (:meth:`dpcore.privacy.PrivacyEvent.joint`) whose parts are the counts and the sums — the
        tight and RDP totals compose the parts' noise, basic composition adds the pair's (ε, δ),
        and a change of relation restates the parts exactly and the pair by group privacy.

        Returns
        -------
        list of PrivacyEvent
        """
        scale = self.count_scale
        counts = PrivacyEvent.discrete_laplace(scale, 1, count=self.n_count_releases)
        sums = PrivacyEvent.gaussian(self.noise_multiplier)
        if self.method == "pld":
            return [PrivacyEvent.joint(self.epsilon, self.delta, (counts, sums), relation=self.relation)]
        eps_counts = min(self.epsilon, float(self.n_count_releases / scale))
        return [replace(counts, relation=self.relation, stated=(eps_counts, 0.0)),
                replace(sums, relation=self.relation, stated=(max(0.0, self.epsilon - eps_counts), self.delta))]


def _pld_epsilon(alpha, n_counts, multiplier, delta):
    dp_event, _, _, _, pld = _dp_accounting()
    acc = pld.PLDAccountant(value_discretization_interval=_VALUE_DISCRETIZATION_INTERVAL)
    acc.compose(_pld_event(alpha, n_counts, multiplier))
    return acc.get_epsilon(delta)


def _pld_event(alpha, n_counts, multiplier):
    dp_event = _dp_accounting()[0]
    return dp_event.ComposedDpEvent([
        dp_event.GaussianDpEvent(alpha),
        dp_event.SelfComposedDpEvent(dp_event.DiscreteLaplaceDpEvent(1.0 / (multiplier * alpha), 1), n_counts)])


def _gaussian_epsilon(alpha, delta):
    """ε of one Gaussian release of noise multiplier α at δ (analytic, Balle & Wang 2018)."""
    from scipy import optimize
    if analytic_gaussian_delta(alpha, 1.0, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while analytic_gaussian_delta(alpha, 1.0, hi) > delta:
        hi *= 2.0
    return optimize.brentq(lambda e: analytic_gaussian_delta(alpha, 1.0, e) - delta, 0.0, hi, xtol=1e-12,
                           rtol=1e-12)


@functools.lru_cache(maxsize=64)
def _calibrate(epsilon, delta, max_depth, multiplier, relation):
    n_counts = _count_releases(max_depth, relation)
    if epsilon <= PLD_MAX_EPSILON:
        _, mc, accountant, common, pld = _dp_accounting()
        # the Gaussian alone at (ε, δ) gives a lower bound on α (as Google's get_alpha_interval)
        low = accountant.get_smallest_gaussian_noise(common.DifferentialPrivacyParameters(epsilon, delta), 1, 1.0)
        alpha = mc.calibrate_dp_mechanism(
            functools.partial(pld.PLDAccountant, value_discretization_interval=_VALUE_DISCRETIZATION_INTERVAL),
            functools.partial(_pld_event, n_counts=n_counts, multiplier=multiplier), epsilon, delta,
            mc.LowerEndpointAndGuess(low, 2.0 * low), tol=1e-6 * low)
        method = "pld"
    else:
        from scipy import optimize

        def excess(log_alpha):
            a = math.exp(log_alpha)
            return n_counts / (multiplier * a) + _gaussian_epsilon(a, delta) - epsilon
        lo, hi = -1.0, 1.0
        while excess(lo) < 0:
            lo -= 2.0
        while excess(hi) > 0:
            hi += 2.0
        alpha = math.exp(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12)) * (1 + 1e-9)
        method = "basic"
    return LSHCalibration(epsilon, delta, relation, max_depth, float(alpha), 1.0 / (multiplier * float(alpha)), method)


def calibrate_lsh_noise(epsilon, delta, max_depth=DEFAULT_MAX_DEPTH, count_noise_multiplier=COUNT_NOISE_MULTIPLIER,
                        relation="replace_one"):
    """The smallest noise multiplier α for which the LSH coreset is (ε, δ)-DP (cached).

    σ = α·Δ₂ on the leaf sums and discrete Laplace parameter 1/(``count_noise_multiplier``·α) on each
    count; the Gaussian release and the count releases (``n_count_releases``) are
    composed with dp-accounting's PLD accountant and α found by its mechanism calibration, as Google's
    ``PrivacyCalculator`` does (ε ≤ ``PLD_MAX_EPSILON``; basic composition above).

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    max_depth : int >= 1, default 20
    count_noise_multiplier : float > 0, default 20
    relation : {"replace_one", "add_remove"}, default "replace_one"

    Returns
    -------
    LSHCalibration
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    max_depth = check_int(max_depth, "max_depth", 1, 64)
    multiplier = check_real(count_noise_multiplier, "count_noise_multiplier", 0.0, None, low_inclusive=False)
    if relation not in SUM_SENSITIVITY_FACTOR:
        raise ValueError(f"relation must be one of {', '.join(SUM_SENSITIVITY_FACTOR)}; got {relation!r}")
    try:
        return _calibrate(float(epsilon), float(delta), int(max_depth), float(multiplier), relation)
    except (ArithmeticError, RuntimeError, ValueError, _no_bracket_error()) as exc:   # no α found: say which input
        big = epsilon > 1.0
        raise ValueError(f"epsilon = {epsilon:g} is {'too large' if big else 'too small'} for the LSH coreset's noise "
                         f"calibration (δ = {delta:g}, max_depth = {max_depth}): no noise multiplier makes the run "
                         f"(ε, δ)-DP within floating point ({type(exc).__name__}); use a "
                         f"{'smaller ε (at most about 1e15)' if big else 'larger ε (at least about 0.01)'}") from None


def default_tree_thresholds(private_count, n_clusters, d, sigma, radius):
    """Google's ``default_tree_param``: (min_points_in_node, min_points_to_branch).

    min_points_in_node = max(1, min(⌊10·√d·σ/Λ⌋, ⌊ñ/(2k)⌋)) - a node holds enough points for its
    average's noise to be ≈ 0.1·Λ, or one node per cluster fits - and branching needs 3 times that.

    Parameters
    ----------
    private_count : int
        The noisy number of points ñ (may be negative).
    n_clusters, d : int
    sigma, radius : float > 0
        The sums' noise σ and Λ.

    Returns
    -------
    (int, int)
    """
    low_noise = int(LOW_NOISE_FACTOR * math.sqrt(d) * sigma / radius)
    node = max(1, min(low_noise, int(private_count) // (2 * int(n_clusters))))
    return node, BRANCH_FACTOR * node


@dataclass(frozen=True)
class LSHCoreset:
    """A private weighted coreset (:func:`private_lsh_coreset`).

    Attributes
    ----------
    points : ndarray of shape (m, d)
        Noisy leaf averages, clipped to B(0, Λ).
    weights : ndarray of int64 of shape (m,)
        Noisy leaf counts (≥ 1).
    depths : ndarray of int64 of shape (m,)
        Level of each leaf.
    private_count : int
        The noisy number of points.
    min_points_in_node, min_points_to_branch : int
        The thresholds used.
    n_levels : int
        Levels built below the root.
    sigma : float
        The sums' noise σ.
    """
    points: np.ndarray
    weights: np.ndarray
    depths: np.ndarray
    private_count: int
    min_points_in_node: int
    min_points_to_branch: int
    n_levels: int
    sigma: float


def private_lsh_coreset(X, radius, n_clusters, calibration, rng, hyperplanes=None, min_points_in_node=None,
                        min_points_to_branch=None):
    """The private coreset of the rows of X (already in B(0, Λ)): steps 2-5 of the module docstring.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
        Points with norm ≤ Λ.
    radius : float > 0
        Λ.
    n_clusters : int >= 1
        k (for the default thresholds).
    calibration : LSHCalibration
    rng : numpy.random.Generator
        Every noise draw (and the hyperplanes when not given).
    hyperplanes : ndarray of shape (max_depth, d), optional
        Public SimHash normals; default N(0, I) rows drawn from ``rng``.
    min_points_in_node, min_points_to_branch : int or None
        Thresholds; None: :func:`default_tree_thresholds` (branching: 3 × the node threshold, at least it).

    Returns
    -------
    LSHCoreset
    """
    n, d = X.shape
    L = calibration.max_depth
    V = rng.standard_normal((L, d)) if hyperplanes is None else np.asarray(hyperplanes, dtype=np.float64)
    bits = np.asarray(X @ V.T) < 0                           # bit 0 where <x, v> >= 0 (Google's SimHash)
    a = calibration.count_epsilon
    sigma = calibration.noise_multiplier * calibration.sum_sensitivity(radius)
    private_count = int(discrete_laplace_mechanism(np.array([n]), 1, a, rng)[0])
    node_min, branch_min = default_tree_thresholds(private_count, n_clusters, d, sigma, radius)
    if min_points_in_node is not None:
        node_min = int(min_points_in_node)
        branch_min = BRANCH_FACTOR * node_min
    if min_points_to_branch is not None:
        branch_min = max(int(min_points_to_branch), node_min)

    node = np.zeros(n, dtype=np.int64)                       # each point's node at this level, −1: none
    counts = np.array([max(1, private_count)], dtype=np.int64)
    leaf_of = np.full(n, -1, dtype=np.int64)
    leaf_counts, leaf_depths, n_leaves, level = [], [], 0, 0
    while True:
        branch = counts >= branch_min if level < L else np.zeros(counts.size, dtype=bool)
        inner = np.zeros(counts.size, dtype=bool)
        active = np.flatnonzero(node >= 0)
        if branch.any():
            nb = int(branch.sum())
            pos = np.full(counts.size, -1, dtype=np.int64)
            pos[branch] = np.arange(nb)
            parent = pos[node[active]]
            moving = active[parent >= 0]
            child = 2 * parent[parent >= 0] + bits[moving, level]
            noisy = discrete_laplace_mechanism(np.bincount(child, minlength=2 * nb), 1, a, rng)   # empty ones too
            keep = noisy >= node_min
            inner[np.flatnonzero(branch)[keep.reshape(nb, 2).any(axis=1)]] = True
        leaves = np.flatnonzero(~inner)                      # no kept child: a leaf at this level
        ids = np.full(counts.size, -1, dtype=np.int64)
        ids[leaves] = n_leaves + np.arange(leaves.size)
        here = active[~inner[node[active]]]
        leaf_of[here] = ids[node[here]]
        leaf_counts.append(counts[leaves])
        leaf_depths.append(np.full(leaves.size, level, dtype=np.int64))
        n_leaves += leaves.size
        if not inner.any():
            break
        index = np.full(2 * nb, -1, dtype=np.int64)
        index[keep] = np.arange(int(keep.sum()))
        node = np.full(n, -1, dtype=np.int64)
        node[moving] = index[child]                          # a dropped child's points leave the tree
        counts = noisy[keep]
        level += 1

    weights = np.concatenate(leaf_counts)
    kept = leaf_of >= 0
    sums, _ = cluster_sums(X[kept], leaf_of[kept], n_leaves)
    noisy_sums = gaussian_release(sums, sigma, calibration.sum_sensitivity(radius), rng)
    points, _ = clip_rows(noisy_sums / weights[:, None], radius)
    return LSHCoreset(points, weights, np.concatenate(leaf_depths), private_count, node_min, branch_min, level,
                      sigma)


def _weighted_kmeans(points, weights, k, n_init, rng):
    """scikit-learn's k-means++ and Lloyd on the weighted coreset (post-processing), min(k, m) centres
    repeated cyclically to k rows."""
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    k_eff = min(k, points.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # fewer distinct coreset points than k
        km = KMeans(n_clusters=k_eff, init="k-means++", n_init=n_init,
                    random_state=int(rng.integers(0, 2 ** 31 - 1))).fit(points, sample_weight=weights.astype(float))
    centres = np.asarray(km.cluster_centers_, dtype=np.float64)
    return centres[np.arange(k) % k_eff], k_eff


class LSHCoresetKMeans(CentresPredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """(ε, δ)-DP k-means by an LSH tree and a private coreset (Google's ``learning/clustering``).

    See :mod:`dpcore.kmeans.lsh_coreset` for the mechanism, its sources and the accounting. The
    noise is calibrated with dp-accounting (:func:`~dpcore.kmeans.lsh_coreset.calibrate_lsh_noise`)
    because the tree's discrete Laplace counts and the one Gaussian release of the leaf sums compose
    far more tightly by privacy-loss distributions than by adding their (ε, δ): at ε = 1 the counts
    then cost the sums only ≈ 5 % more noise than a Gaussian given the whole budget.

    Work is bounded before the fit starts: its estimate from the parameters and the shape of X
    (max_depth levels of the tree and n_init k-means runs on its leaves; :meth:`planned_work`) is
    refused past the caps of :mod:`dpcore.work` with a ValueError, before any value of X is read.

    Parameters
    ----------
    n_clusters : int, default=8
        Number k of clusters, in [1, n].
    epsilon : float, default=1.0
        Privacy parameter ε > 0.
    radius : float or "data", default=None
        Public radius Λ > 0 (required: None is refused with a ValueError; ``"data"`` leaks,
        with a warning).
    delta : float, default=1e-6
        Privacy parameter δ in (0, 1).
    max_depth : int, default=20
        Levels of the tree (SimHash bits), in [1, 64]; Google's 20.
    min_points_in_node : int or None, default=None
        Smallest noisy count of a kept node (≥ 1); None: Google's rule
        (:func:`~dpcore.kmeans.lsh_coreset.default_tree_thresholds`).
    min_points_to_branch : int or None, default=None
        Smallest noisy count of a node that branches (≥ 1, at least ``min_points_in_node``); None: 3 ×
        the node threshold.
    count_noise_multiplier : float, default=20.0
        Google's ``dlaplace_param_multiplier``: count noise parameter 1/(multiplier·α) for σ = α·Δ₂.
    n_init : int, default=10
        k-means++ seedings on the coreset, in [1, 1000] (scikit-learn's default when Google's
        benchmarks ran; post-processing).
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the hyperplanes, the noise and the seeding.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (k, d)
        The released centres (private; not private with ``radius="data"``); float32 for float32
        input, else float64. With fewer than k coreset points they repeat.
    coreset_ : ndarray of shape (m, d)
        The private coreset points (private).
    coreset_weights_ : ndarray of int64 of shape (m,)
        Their noisy counts (private).
    coreset_result_ : LSHCoreset
        The coreset with its tree facts (private).
    calibration_ : LSHCalibration
        The noise (public: from ε, δ, ``max_depth`` and the relation).
    hyperplanes_ : ndarray of shape (max_depth, d)
        The SimHash normals (public randomness).
    labels_ : ndarray of int of shape (n,)
        Each point assigned to its nearest released centre (NOT private).
    n_clipped_ : int
        Number of points outside B(0, Λ) (NOT private).
    radius_ : float
        Λ used (NOT private with ``radius="data"``).
    ledger_ : PrivacyLedger
        The ledger of the run.
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    """

    def __init__(self, *, n_clusters=8, epsilon=1.0, radius=None, delta=1e-6, max_depth=DEFAULT_MAX_DEPTH,
                 min_points_in_node=None, min_points_to_branch=None, count_noise_multiplier=COUNT_NOISE_MULTIPLIER,
                 n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.radius = radius
        self.delta = delta
        self.max_depth = max_depth
        self.min_points_in_node = min_points_in_node
        self.min_points_to_branch = min_points_to_branch
        self.count_noise_multiplier = count_noise_multiplier
        self.n_init = n_init
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        """The fit's work and memory from the shape alone (:mod:`dpcore.work`): the tree's levels, the
        leaves' noisy sums and k-means on the coreset; the leaves bounded by the thresholds the fit would
        use (:func:`default_tree_thresholds` with the noisy count ñ read as n)."""
        w = Work(n, d, nnz, sparse)
        k = clusters_of(self, n)
        L = param_int(self, "max_depth", DEFAULT_MAX_DEPTH)
        n_init = param_int(self, "n_init", 10)
        node = self.min_points_in_node
        if node is None:
            cal = calibrate_lsh_noise(self.epsilon, self.delta, L, self.count_noise_multiplier, self.claimed_relation)
            low_noise = LOW_NOISE_FACTOR * math.sqrt(d) * cal.noise_multiplier * SUM_SENSITIVITY_FACTOR[cal.relation]
            node = max(1, min(int(low_noise), n // (2 * k)))
        else:
            node = check_int(node, "min_points_in_node", 1)
        branch = BRANCH_FACTOR * node if self.min_points_to_branch is None else \
            max(check_int(self.min_points_to_branch, "min_points_to_branch", 1), node)
        w.add("LSH coreset: noise calibration (privacy-loss distributions of 2·max_depth counts)", 2e8 + 2e7 * L,
              "max_depth")
        w.add("LSH coreset: SimHash bits (nnz·max_depth)",
              unit_cost("sparse", nnz * L) if sparse else matmul_cost(n, d, L))
        # a level holds at most 2^level nodes, and the two children of each node that branches: a node
        # branches when its noisy count reaches min_points_to_branch, so about n/min_points_to_branch do
        nodes = sum(min(2.0 ** (lvl + 1), 2.0 * n / branch + 8.0) for lvl in range(L + 1))
        leaves = min(nodes, 2.0 * n / node + 2.0 * (L + 1), 4.0 * n)
        w.add("LSH tree: max_depth levels of n points and their nodes' exact noisy counts",
              (L + 1) * (unit_cost("elem", 12 * n) + unit_cost("call", 1) + unit_cost("loop", 30))
              + unit_cost("draw", nodes), "max_depth")
        w.add("coreset: noisy sums of the leaves (leaves·d exact draws)", unit_cost("sparse", nnz)
              + unit_cost("draw", leaves * d) + unit_cost("elem", 3 * leaves * d), "min_points_in_node")
        m = max(int(leaves), 1)
        sub = Work(m, d, m * d)
        add_sklearn_kmeans(sub, m, d, m * d, min(k, m), n_init, f"k-means on the coreset (≈ {m:,} leaves)")
        w.extend(sub.plan("KMeans"), "", 1, "n_init", "min_points_in_node", inner=None)
        w.hold("LSH coreset: the leaves' sums (leaves·d) and the n×max_depth hash bits",
               3 * leaves * d * 8 + n * L + 4 * n * 8, "min_points_in_node", "max_depth")
        return w.plan(type(self).__name__)

    def fit(self, X, y=None):
        """Build the private coreset of the rows of X (clipped to B(0, Λ)) and cluster it.

        Parameters
        ----------
        X : array_like, scipy.sparse matrix or pandas.DataFrame of shape (n, d)
            The points as rows.
        y : None
            Ignored (present for scikit-learn's API).

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter is out of range (named in the message) or X has fewer rows than
            ``n_clusters``.
        """
        dtype = input_float_dtype(X)
        record_features(self, X)
        X = check_points(X)
        n, d = X.shape
        if d < 1:
            raise ValueError(f"X must have at least one column; got shape {X.shape}")
        k = check_int(self.n_clusters, "n_clusters", 1, n)
        eps = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        depth = check_int(self.max_depth, "max_depth", 1, 64)
        node_min = None if self.min_points_in_node is None else check_int(self.min_points_in_node,
                                                                          "min_points_in_node", 1)
        branch_min = None if self.min_points_to_branch is None else check_int(
            self.min_points_to_branch, "min_points_to_branch", 1 if node_min is None else node_min)
        n_init = check_int(self.n_init, "n_init", 1, 1000)
        cal = calibrate_lsh_noise(eps, delta, depth, self.count_noise_multiplier, self.claimed_relation)
        warn_if_data_scaled(X, type(self).__name__)
        lam, derived = resolve_radius(self.radius, X)
        rng = check_random_state(self.random_state)
        X, self.n_clipped_ = clip_rows(X, lam)
        sq = row_sq_norms(X)
        self.hyperplanes_ = rng.standard_normal((depth, d))
        core = private_lsh_coreset(X, lam, k, cal, rng, self.hyperplanes_, node_min, branch_min)
        centres, k_eff = _weighted_kmeans(core.points, core.weights, k, n_init, rng)
        ledger = PrivacyLedger(budget_epsilon=eps, budget_delta=delta)
        ledger.record(f"LSH tree counts and {core.points.shape[0]} leaf averages (coreset)",
                      "discrete Laplace (counts) + Gaussian (leaf sums)", eps, delta,
                      note=f"{cal.n_count_releases} count releases of sensitivity 1 at parameter "
                           f"{cal.count_epsilon:.4g} and one sum release of L2 sensitivity "
                           f"{SUM_SENSITIVITY_FACTOR[cal.relation]:g}Λ, σ = {core.sigma:.4g}, composed "
                           + ("tightly with dp-accounting's PLD (the events' stated (ε, δ) share the joint budget)"
                              if cal.method == "pld" else "by basic composition (ε above the PLD range)")
                           + f"; k-means++ on the coreset with {k_eff} centres (post-processing)",
                      events=cal.events())
        self.radius_ = lam
        self.calibration_ = cal
        self.coreset_result_ = core
        self.coreset_ = core.points
        self.coreset_weights_ = core.weights
        self.n_features_in_ = d
        self._set_centres(centres, dtype, X, sq)
        self.ledger_ = ledger
        self.private_outputs_ = [] if derived else ["cluster_centers_", "coreset_", "coreset_weights_",
                                                    "coreset_result_"]
        self.nonprivate_outputs_ = {
            "labels_": "each point assigned to its nearest released centre using the raw data",
            "n_clipped_": "exact number of points outside B(0, Λ), computed from the data",
        }
        if derived:
            self.nonprivate_outputs_["radius_"] = RADIUS_LEAK_REASON
        return self
