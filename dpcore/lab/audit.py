"""Empirical privacy checks: do output frequencies on neighbouring inputs respect e^ε?

For a mechanism M, neighbouring inputs D, D′ and any set S of outputs, (ε, δ)-DP requires
P[M(D) ∈ S] ≤ e^ε P[M(D′) ∈ S] + δ and symmetrically. :func:`frequency_check` tests this
on output buckets from repeated runs: it flags a bucket only when the *lower* Clopper–Pearson
bound of one side exceeds e^ε times the *upper* bound of the other plus δ, at a stated
confidence with a Bonferroni correction over buckets and both directions. A pass means the
runs show no violation at that confidence (not a proof of privacy); a failure is strong
evidence of a violation.

:func:`audit_estimator` audits a registered algorithm end to end: many runs on D and on a
neighbour D′ (:data:`NEIGHBOURS`), a threshold test on a scalar statistic of the private
output (:data:`STATISTICS`), and a Clopper–Pearson lower bound ε̂ on the ε spent
(:func:`epsilon_lower_bound`). :data:`AUDIT_SETS` are small datasets on which hundreds of
runs take seconds; :func:`three_axes` is built so that a single far outlier flips a
non-private k-plane start, which shows that the Gibbs sampler stopped after one sweep from
that start leaks more than its ε (issue 9).
"""
from __future__ import annotations

import warnings
from concurrent.futures import as_completed
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..validation import check_int, check_real
from ..privacy.accountant import RELATIONS as _RELATIONS
from .reachability import check_mechanism, reachable

__all__ = ["clopper_pearson", "FrequencyCheck", "frequency_check", "bucket_counts", "epsilon_lower_bound",
           "AuditResult", "audit_from_statistics", "run_audit", "add_point", "remove_point", "replace_point",
           "change_cell", "far_outlier", "gaussian_llr", "laplace_llr", "exponential_llr", "LRScore", "fit_lr_score",
           "gdp_mu_lower_bound", "gdp_delta", "gdp_epsilon", "GDPAudit", "gdp_audit_from_statistics",
           "STATISTICS", "STATISTIC_HELP", "EstimatorStatistic", "release_features",
           "RELATIONS", "CLAIMED_RELATION", "NEIGHBOUR_RELATION", "claimed_relation", "default_neighbour",
           "NEIGHBOURS", "MIN_TRIALS", "make_neighbour", "audit_estimator", "audit_delta",
           "three_axes", "AuditSet", "AUDIT_SETS", "audit_dataset", "ALL_NEIGHBOURS", "ReachabilityAudit",
           "reachability_audit"]


def clopper_pearson(successes, trials, alpha):
    """Two-sided (1 − alpha) Clopper–Pearson interval for a binomial proportion (arrays ok).

    Parameters
    ----------
    successes : int or array_like of int
        Number of successes (broadcast against ``trials``).
    trials : int or array_like of int
        Number of trials.
    alpha : float
        Total miss probability of the interval (alpha/2 on each side).

    Returns
    -------
    lo, hi : ndarray of float
        Lower and upper bounds (0 when ``successes == 0``, 1 when ``successes == trials``);
        0-d arrays for scalar input.
    """
    x = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    lo = np.where(x > 0, stats.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
    hi = np.where(x < n, stats.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
    return lo, hi


def bucket_counts(outputs_a, outputs_b, edges=None):
    """Counts of two samples of scalar outputs over common buckets.

    Discrete outputs (integers) are bucketed by value when ``edges`` is None; otherwise
    ``edges`` are histogram edges and values outside go into the first/last bucket.

    Parameters
    ----------
    outputs_a, outputs_b : array_like
        Scalar outputs of the runs on D and on D′ (flattened).
    edges : array_like of float, optional
        Increasing histogram edges (at least 2). None buckets by the distinct values of both
        samples.

    Returns
    -------
    counts_a, counts_b : ndarray of int
        Counts per bucket, the same length for both samples.
    """
    a = np.asarray(outputs_a).ravel()
    b = np.asarray(outputs_b).ravel()
    if edges is None:
        values = np.union1d(a, b)
        return (np.searchsorted(values, a)[:, None] == np.arange(values.size)).sum(0), \
               (np.searchsorted(values, b)[:, None] == np.arange(values.size)).sum(0)
    edges = np.asarray(edges, dtype=float)
    ia = np.clip(np.searchsorted(edges, a, side="right") - 1, 0, edges.size - 2)
    ib = np.clip(np.searchsorted(edges, b, side="right") - 1, 0, edges.size - 2)
    nb = edges.size - 1
    return np.bincount(ia, minlength=nb), np.bincount(ib, minlength=nb)


@dataclass
class FrequencyCheck:
    """Result of :func:`frequency_check`.

    Attributes
    ----------
    passed : bool
        True when no bucket shows a violation (``worst_margin <= 0``).
    epsilon : float
        The ε tested.
    delta : float
        The δ tested.
    confidence : float
        Family-wise confidence of the check.
    worst_margin : float
        Max over buckets/directions of LCB(p) − (e^ε UCB(p') + δ); > 0 is a violation.
    worst_bucket : int
        Index of the bucket with ``worst_margin``.
    empirical_epsilon : float
        Max over buckets of log(p̂/p̂′) with both counts > 0 (a point estimate); NaN when no
        bucket has both counts > 0.
    """
    passed: bool
    epsilon: float
    delta: float
    confidence: float
    worst_margin: float  # max over buckets/directions of LCB(p) − (e^ε UCB(p') + δ); > 0 is a violation
    worst_bucket: int
    empirical_epsilon: float  # max over buckets of log(p̂/p̂′) with both counts > 0 (a point estimate)


def frequency_check(counts_a, counts_b, epsilon, delta=0.0, confidence=0.99):
    """Test P_a(b) ≤ e^ε P_b(b) + δ and P_b(b) ≤ e^ε P_a(b) + δ on every bucket b.

    ``counts_a``/``counts_b``: counts of outputs per bucket from runs on D and on D′.
    The family-wise error is 1 − confidence (Bonferroni over 2 × buckets intervals of each
    side), so a correct mechanism fails this check with probability at most 1 − confidence.

    Parameters
    ----------
    counts_a, counts_b : array_like of int
        Counts of outputs per bucket (same length) from the runs on D and on D′, e.g. from
        :func:`bucket_counts`.
    epsilon : float ≥ 0
        The claimed ε.
    delta : float in [0, 1], default 0.0
        The claimed δ.
    confidence : float in (0, 1), default 0.99
        Family-wise confidence.

    Returns
    -------
    FrequencyCheck

    Raises
    ------
    ValueError
        If ``epsilon``, ``delta`` or ``confidence`` is out of its range.
    """
    epsilon = check_real(epsilon, "epsilon", 0.0, None)
    delta = check_real(delta, "delta", 0.0, 1.0)
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    ca = np.asarray(counts_a, dtype=float)
    cb = np.asarray(counts_b, dtype=float)
    alpha = (1 - confidence) / (2 * ca.size)
    lo_a, hi_a = clopper_pearson(ca, ca.sum(), alpha)
    lo_b, hi_b = clopper_pearson(cb, cb.sum(), alpha)
    margin = np.maximum(lo_a - (np.exp(epsilon) * hi_b + delta), lo_b - (np.exp(epsilon) * hi_a + delta))
    pa, pb = ca / ca.sum(), cb / cb.sum()
    both = (ca > 0) & (cb > 0)
    emp = float(np.max(np.abs(np.log(pa[both] / pb[both])))) if both.any() else float("nan")
    worst = int(np.argmax(margin))
    return FrequencyCheck(bool(margin.max() <= 0), epsilon, delta, confidence, float(margin.max()), worst, emp)


# ============================================================================ empirical audit
# An audit runs a mechanism many times on D and on a neighbour D′, reduces each output to a
# scalar statistic, and lets a threshold test guess which dataset produced it. For any
# (ε, δ)-DP mechanism and any test, TPR ≤ e^ε FPR + δ and (1 − FPR) ≤ e^ε (1 − TPR) + δ, so
#     ε ≥ max( log((TPR − δ)/FPR), log((1 − FPR − δ)/(1 − TPR)) ).
# Plugging in a one-sided Clopper–Pearson *lower* bound for the numerator and *upper* bound
# for the denominator gives a lower bound on the ε actually spent that holds with the stated
# confidence (Bonferroni over the four one-sided bounds). The threshold and orientation are
# chosen on one half of the runs and the bound is computed on the other half, so the choice
# does not bias the bound (Jagielski et al. 2020; Nasr et al. 2021).

def _cp_one_sided(tp, n_a, fp, n_b, alpha):
    """One-sided Clopper–Pearson bounds (arrays): TPR_lo, FPR_hi, TNR_lo, FNR_hi at level α each."""
    tp, fp = np.asarray(tp, dtype=float), np.asarray(fp, dtype=float)
    n_a, n_b = np.asarray(n_a, dtype=float), np.asarray(n_b, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr_lo = np.where(tp > 0, stats.beta.ppf(alpha, np.maximum(tp, 1), n_a - tp + 1), 0.0)
        fpr_hi = np.where(fp < n_b, stats.beta.ppf(1 - alpha, fp + 1, np.maximum(n_b - fp, 1)), 1.0)
        tnr_lo = np.where(fp < n_b, stats.beta.ppf(alpha, np.maximum(n_b - fp, 1), fp + 1), 0.0)
        fnr_hi = np.where(tp > 0, stats.beta.ppf(1 - alpha, n_a - tp + 1, np.maximum(tp, 1)), 1.0)
    return tpr_lo, fpr_hi, tnr_lo, fnr_hi


def _epsilon_lower_bounds(tp, n_a, fp, n_b, confidence=0.95, delta=0.0):
    """:func:`epsilon_lower_bound` on arrays of counts (same values, vectorised)."""
    tpr_lo, fpr_hi, tnr_lo, fnr_hi = _cp_one_sided(tp, n_a, fp, n_b, (1.0 - confidence) / 4.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        e1 = np.where(tpr_lo - delta > 0, np.log(np.maximum(tpr_lo - delta, 1e-300) / fpr_hi), 0.0)
        e2 = np.where(tnr_lo - delta > 0, np.log(np.maximum(tnr_lo - delta, 1e-300) / fnr_hi), 0.0)
    return np.maximum(0.0, np.maximum(e1, e2))


def epsilon_lower_bound(tp, n_a, fp, n_b, confidence=0.95, delta=0.0):
    """Lower bound on ε from a test that said "D" ``tp`` times out of ``n_a`` runs on D and
    ``fp`` times out of ``n_b`` runs on D′ (one-sided Clopper–Pearson bounds, Bonferroni over
    four). Never negative. For fixed rates tp/n_a and fp/n_b it is non-decreasing in the
    number of runs, since the intervals only narrow.

    Parameters
    ----------
    tp : int
        Runs on D where the test said "D" (true positives).
    n_a : int
        Runs on D.
    fp : int
        Runs on D′ where the test said "D" (false positives).
    n_b : int
        Runs on D′.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.
    delta : float, default 0.0
        The mechanism's δ, subtracted from the lower rate bounds.

    Returns
    -------
    float
        ε̂ ≥ 0.
    """
    return float(_epsilon_lower_bounds(tp, n_a, fp, n_b, confidence, delta))


def _point_estimate(tp, n_a, fp, n_b, delta=0.0):
    """Plug-in ε of the held-out rates, with ½ added to every count (tp, misses, fp, true
    negatives) so that a zero count gives a large but finite value instead of ∞. A point
    estimate, not a bound."""
    tpr, fpr = (tp + 0.5) / (n_a + 1), (fp + 0.5) / (n_b + 1)
    vals = [0.0]
    for num, den in ((tpr - delta, fpr), (1 - fpr - delta, 1 - tpr)):
        if num > 0:
            vals.append(np.log(num / den))
    return float(max(vals))


@dataclass
class AuditResult:
    """What an audit found. ``epsilon_lower`` is the bound at ``confidence``; ``epsilon_point``
    the plug-in estimate on the held-out runs (counts + ½); rates are on the held-out runs.
    ``stats_a``/``stats_b`` hold every run's scalar test statistic (the score of
    :func:`fit_lr_score` when the runs released feature vectors, kept in
    ``features_a``/``features_b``); with ``split`` the first half of each side chose the
    score and the threshold and the second half gave the bound, without it the threshold
    was fixed before the runs and every run is held out. ``relation`` is the neighbouring
    relation of the audited pair (D, D′) and ``claimed_relation`` the one the method's ε is
    stated for (:data:`CLAIMED_RELATION`; None when unknown or not private).

    Attributes
    ----------
    epsilon_lower : float
        Clopper–Pearson lower bound on ε at ``confidence`` (held-out runs).
    epsilon_point : float
        Plug-in ε of the held-out rates, counts + ½ (a point estimate, not a bound).
    threshold : float
        Threshold of the test.
    orientation : str
        "D if statistic >= threshold" or "D if statistic <= threshold".
    tpr, fpr : float
        True- and false-positive rates of the test on the held-out runs.
    tpr_ci, fpr_ci : tuple of float
        Two-sided (1 − confidence) Clopper–Pearson intervals of ``tpr`` and ``fpr``.
    n_runs : int
        Runs on both sides.
    n_heldout : int
        Held-out runs on both sides (those that gave the bound).
    confidence : float
        Confidence of the bound.
    delta : float
        δ subtracted by the bound.
    nominal_epsilon : float or None
        The claimed ε; None for a non-private algorithm.
    stats_a, stats_b : ndarray of shape (runs,)
        Every run's scalar statistic (or fitted score) on D and on D′.
    split : bool, default True
        Whether the first half of each side selected the score and threshold.
    score : str, default "statistic"
        What ``stats_a``/``stats_b`` are: the statistic itself or a fitted score.
    features_a, features_b : ndarray of shape (runs, features) or None
        The runs' feature vectors, when they released some.
    statistic : str or None
        Label of the test statistic.
    relation : str or None
        Neighbouring relation of the audited pair (a key of :data:`RELATIONS`).
    claimed_relation : str or None
        Relation the method's ε is stated for.
    """
    epsilon_lower: float
    epsilon_point: float
    threshold: float
    orientation: str  # "D if statistic >= threshold" or "D if statistic <= threshold"
    tpr: float
    fpr: float
    tpr_ci: tuple
    fpr_ci: tuple
    n_runs: int
    n_heldout: int
    confidence: float
    delta: float
    nominal_epsilon: float | None
    stats_a: np.ndarray
    stats_b: np.ndarray
    split: bool = True
    score: str = "statistic"          # what stats_a/stats_b are: the statistic itself or a fitted score
    features_a: np.ndarray | None = None
    features_b: np.ndarray | None = None
    statistic: str | None = None
    relation: str | None = None
    claimed_relation: str | None = None

    #: the three verdicts, in the words the page shows
    CONSISTENT = "consistent with the claim"
    LEAKS = "leaks more than claimed"
    NOT_PRIVATE = "no bound: not private"

    @property
    def verdict(self):
        """"no bound: not private" when there is no claimed ε, "leaks more than claimed"
        when ε̂ > ε, otherwise "consistent with the claim" (no violation found with these
        runs: not a proof of privacy). The verdict is about the audited ``relation``; see
        :attr:`relation_is_claimed`."""
        if self.nominal_epsilon is None:
            return self.NOT_PRIVATE
        if self.epsilon_lower > self.nominal_epsilon:
            return self.LEAKS
        return self.CONSISTENT

    @property
    def relation_is_claimed(self):
        """True when the audited relation is the one the method's ε is claimed for, False
        when it is another one (then ε̂ > ε is not a violation of the claim), None if unknown."""
        if self.relation is None or self.claimed_relation is None:
            return None
        return self.relation == self.claimed_relation

    @property
    def epsilon_ceiling(self):
        """The largest ε̂ these held-out runs could give (a test that separates D from D′
        perfectly). An audit with a ceiling below the claimed ε could never say "leaks more
        than claimed": it needs more runs."""
        if self.split:
            ha, hb = self.stats_a.size - self.stats_a.size // 2, self.stats_b.size - self.stats_b.size // 2
        else:
            ha, hb = self.stats_a.size, self.stats_b.size
        return epsilon_lower_bound(ha, ha, 0, hb, self.confidence, self.delta)


def _threshold_counts(sa, sb, thresholds):
    """Counts of ``sa``/``sb`` at or above (">=") and at or below ("<=") every threshold."""
    xa, xb = np.sort(sa), np.sort(sb)
    ge_a = sa.size - np.searchsorted(xa, thresholds, side="left")
    ge_b = sb.size - np.searchsorted(xb, thresholds, side="left")
    le_a = np.searchsorted(xa, thresholds, side="right")
    le_b = np.searchsorted(xb, thresholds, side="right")
    return ge_a, ge_b, le_a, le_b


def _choose_threshold(sa, sb, confidence, delta, max_candidates=256):
    """(threshold, orientation, bound) maximising :func:`epsilon_lower_bound` on these runs."""
    pooled = np.unique(np.r_[sa, sb])
    if pooled.size > max_candidates:
        pooled = np.unique(np.quantile(pooled, np.linspace(0, 1, max_candidates)))
    ge_a, ge_b, le_a, le_b = _threshold_counts(sa, sb, pooled)
    # candidates in the order (t₀, ">="), (t₀, "<="), (t₁, ">="), …: argmax keeps the first best
    tp = np.column_stack([ge_a, le_a]).ravel()
    fp = np.column_stack([ge_b, le_b]).ravel()
    vals = _epsilon_lower_bounds(tp, sa.size, fp, sb.size, confidence, delta)
    i = int(np.argmax(vals))
    return float(pooled[i // 2]), (">=", "<=")[i % 2], float(vals[i])


# ----------------------------------------------------------------------------- LR scores
# The most powerful test of D against D′ at any level thresholds the log-likelihood ratio
# log p_D(o)/p_D′(o) of the release o (Neyman–Pearson). When the release's law is known in
# shape the ratio is computed exactly (the *_llr functions below, used by
# benchmarks/audit_mechanisms.py); for the full estimators it is estimated from the runs
# by :func:`fit_lr_score` on the first half, which then only scores the held-out half.

def gaussian_llr(x, mean_a, mean_b, sigma):
    """log p_D(x)/p_D′(x) for x ~ N(mean, σ² I) around ``mean_a`` on D and ``mean_b`` on D′
    (summed over the last axis).

    Parameters
    ----------
    x : array_like of shape (..., d)
        Releases.
    mean_a, mean_b : array_like of shape (d,)
        Means on D and on D′.
    sigma : float > 0
        Noise standard deviation.

    Returns
    -------
    ndarray of shape (...) or float
        The log-likelihood ratio of each release.

    Raises
    ------
    ValueError
        If ``sigma`` is not a finite positive number.
    """
    x = np.asarray(x, dtype=float)
    sigma = check_real(sigma, "sigma", 0.0, None, low_inclusive=False)
    d = np.sum((x - np.asarray(mean_b)) ** 2 - (x - np.asarray(mean_a)) ** 2, axis=-1, keepdims=x.ndim > 0)
    return np.squeeze(d / (2 * sigma ** 2), axis=-1) if x.ndim > 0 else d / (2 * sigma ** 2)


def laplace_llr(x, mean_a, mean_b, scale):
    """log p_D(x)/p_D′(x) for x = mean + Lap(scale) i.i.d. per coordinate (summed over the last axis).

    Parameters
    ----------
    x : array_like of shape (..., d)
        Releases.
    mean_a, mean_b : array_like of shape (d,)
        Means on D and on D′.
    scale : float > 0
        Laplace scale b.

    Returns
    -------
    ndarray of shape (...) or float
        The log-likelihood ratio of each release.

    Raises
    ------
    ValueError
        If ``scale`` is not a finite positive number.
    """
    x = np.asarray(x, dtype=float)
    scale = check_real(scale, "scale", 0.0, None, low_inclusive=False)
    d = np.abs(x - np.asarray(mean_b)) - np.abs(x - np.asarray(mean_a))
    return (d.sum(-1) if x.ndim > 0 else d) / scale


def exponential_llr(index, probs_a, probs_b):
    """log p_D(i)/p_D′(i) for a release i drawn from the finite laws ``probs_a`` (on D) and
    ``probs_b`` (on D′), e.g. :func:`dpcore.privacy.exponential_mechanism_probabilities`.

    Parameters
    ----------
    index : int or array_like of int
        Released indices.
    probs_a, probs_b : array_like of shape (m,)
        The release's law on D and on D′.

    Returns
    -------
    float or ndarray
        log probs_a[i] − log probs_b[i] (±inf where a probability is 0).

    Raises
    ------
    ValueError
        If ``probs_a`` and ``probs_b`` are not 1-D of the same length.
    """
    pa, pb = np.asarray(probs_a, dtype=float), np.asarray(probs_b, dtype=float)
    if pa.shape != pb.shape or pa.ndim != 1:
        raise ValueError("probs_a and probs_b must be 1-D laws of the same length")
    i = np.asarray(index, dtype=int)
    with np.errstate(divide="ignore"):
        return np.log(pa[i]) - np.log(pb[i])


@dataclass
class LRScore:
    """A fitted score ``F -> s`` (larger: more like D) over feature vectors ``F`` (runs ×
    features): ``kind`` is "feature j" (one standardised feature), "linear" (shrunk Fisher
    discriminant: the log-likelihood ratio of two Gaussians with a common covariance, i.e.
    the projection on the difference of the two sides' means, whitened) or "quadratic" (the
    log-likelihood ratio of two Gaussians with their own, shrunk covariances).

    Attributes
    ----------
    kind : str
        "feature j", "linear" or "quadratic".
    mean : ndarray of shape (features,)
        Mean used to standardise the features.
    scale : ndarray of shape (features,)
        Scale used to standardise the features (1 where a feature is constant).
    w : ndarray of shape (features,) or None
        Weights of the "linear" score.
    gauss : tuple or None
        ``((mean_a, precision_a, logdet_a), (mean_b, precision_b, logdet_b))`` of the
        "quadratic" score.
    feature : int or None
        Index of the feature of a "feature j" score.
    """
    kind: str
    mean: np.ndarray
    scale: np.ndarray
    w: np.ndarray | None = None
    gauss: tuple | None = None
    feature: int | None = None

    def __call__(self, F):
        Z = (np.atleast_2d(np.asarray(F, dtype=float)) - self.mean) / self.scale
        if self.feature is not None:
            return Z[:, self.feature]
        if self.w is not None:
            return Z @ self.w
        (ma, Pa, lda), (mb, Pb, ldb) = self.gauss
        qa = np.einsum("ij,jk,ik->i", Z - ma, Pa, Z - ma)
        qb = np.einsum("ij,jk,ik->i", Z - mb, Pb, Z - mb)
        return 0.5 * (qb - qa) + 0.5 * (ldb - lda)


def _shrunk_cov(Z, shrink):
    S = np.atleast_2d(np.cov(Z, rowvar=False)) if Z.shape[0] > 1 else np.eye(Z.shape[1])
    f = S.shape[0]
    return (1 - shrink) * S + shrink * (np.trace(S) / f + 1e-9) * np.eye(f)


def _fit_one(kind, Za, Zb, mean, scale, shrink=0.2):
    if kind.startswith("feature"):
        return LRScore(kind, mean, scale, feature=int(kind.split()[1]))
    ma, mb = Za.mean(0), Zb.mean(0)
    if kind == "linear":
        S = _shrunk_cov(np.r_[Za - ma, Zb - mb], shrink)
        return LRScore(kind, mean, scale, w=np.linalg.solve(S, ma - mb))
    gauss = []
    for Z, m in ((Za, ma), (Zb, mb)):
        S = _shrunk_cov(Z, shrink)
        gauss.append((m, np.linalg.inv(S), np.linalg.slogdet(S)[1]))
    return LRScore(kind, mean, scale, gauss=tuple(gauss))


def fit_lr_score(features_a, features_b, confidence=0.95, delta=0.0):
    """Fit a likelihood-ratio style score on runs' feature vectors (one row per run).

    Candidates: every single (standardised) feature, the shrunk linear discriminant and the
    shrunk quadratic (Gaussian) log-likelihood ratio. Each is ranked by two-fold
    cross-fitting *within the given runs* (fit on one fold, best threshold bound on the
    other), and the best is refitted on all the given runs. Call it on the selection half
    only: the held-out half must not be seen by the fit (:func:`audit_from_statistics` does
    so), otherwise the bound is biased upwards.

    Parameters
    ----------
    features_a, features_b : array_like of shape (runs, features)
        Feature vectors of the runs on D and on D′ (same number of features).
    confidence : float in (0, 1), default 0.95
        Confidence of the bound used to rank the candidates.
    delta : float, default 0.0
        δ of the bound used to rank the candidates.

    Returns
    -------
    LRScore

    Raises
    ------
    ValueError
        If the inputs are not 2-D with the same number of features.
    """
    Fa, Fb = np.asarray(features_a, dtype=float), np.asarray(features_b, dtype=float)
    if Fa.ndim != 2 or Fb.ndim != 2 or Fa.shape[1] != Fb.shape[1]:
        raise ValueError("features_a and features_b must be 2-D (runs × features) with the same number of features")
    pooled = np.r_[Fa, Fb]
    mean = pooled.mean(0)
    scale = pooled.std(0)
    scale[~(scale > 1e-12)] = 1.0
    Za, Zb = (Fa - mean) / scale, (Fb - mean) / scale
    f = Fa.shape[1]
    kinds = [f"feature {j}" for j in range(f) if np.ptp(pooled[:, j]) > 0] + (["linear", "quadratic"] if f > 1 else [])
    if not kinds:
        return LRScore("feature 0", mean, scale, feature=0)
    ia, ib = np.arange(Za.shape[0]) % 2, np.arange(Zb.shape[0]) % 2
    best, best_val = kinds[0], -1.0
    for kind in kinds:
        val = 0.0
        for fold in (0, 1):
            fit = _fit_one(kind, Za[ia != fold], Zb[ib != fold], 0.0, 1.0)
            sa, sb = fit(Za[ia == fold]), fit(Zb[ib == fold])
            val += _choose_threshold(sa, sb, confidence, delta)[2]
        if val > best_val + 1e-12:
            best, best_val = kind, val
    return _fit_one(best, Za, Zb, mean, scale)


def audit_from_statistics(stats_a, stats_b, confidence=0.95, delta=0.0, nominal_epsilon=None, threshold=None,
                          orientation=">=", statistic=None, relation=None, claimed_relation=None):
    """ε lower bound from the runs on D (``stats_a``) and on D′ (``stats_b``).

    ``stats_a``/``stats_b`` are one scalar statistic per run (1-D) or one feature vector per
    run (2-D, runs × features). By default the first half of each side *selects* (for
    feature vectors: fits a likelihood-ratio score with :func:`fit_lr_score`; then: chooses
    the threshold and orientation) and only the second half (held out, never seen by the
    selection) gives the rates and the Clopper–Pearson bound, so the choice does not bias
    the bound. A ``threshold`` (with ``orientation`` ">=" or "<=") fixed before the runs —
    e.g. from the claimed law, never from these runs — skips the selection and holds out
    every run (scalar statistics only). ``statistic``, ``relation`` and
    ``claimed_relation`` are labels kept in the result.

    Parameters
    ----------
    stats_a, stats_b : array_like of shape (runs,) or (runs, features)
        Statistics of the runs on D and on D′; at least 4 runs on each side.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.
    delta : float in [0, 1], default 0.0
        The mechanism's δ.
    nominal_epsilon : float, optional
        The claimed ε (None for a non-private algorithm).
    threshold : float, optional
        A threshold fixed before the runs (scalar statistics only).
    orientation : {">=", "<="}, default ">="
        Direction of a fixed ``threshold``: "D if statistic >= threshold" or "<=".
    statistic, relation, claimed_relation : str, optional
        Labels kept in the result.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        If the statistics are not both 1-D or both 2-D with the same features, a side has
        fewer than 4 runs, ``orientation`` is not ">=" or "<=", ``confidence`` or ``delta``
        is out of range, or a ``threshold`` is given for feature vectors.
    """
    sa = np.asarray(stats_a, dtype=float)
    sb = np.asarray(stats_b, dtype=float)
    if sa.ndim not in (1, 2) or sb.ndim != sa.ndim or (sa.ndim == 2 and sa.shape[1] != sb.shape[1]):
        raise ValueError("stats_a and stats_b must both be 1-D (one statistic per run) or 2-D (runs × features, "
                         "the same features)")
    if sa.shape[0] < 4 or sb.shape[0] < 4:
        raise ValueError("trials must give at least 4 runs on each side (2 to choose the threshold, 2 to test)")
    if orientation not in (">=", "<="):
        raise ValueError(f"orientation must be '>=' or '<='; got {orientation!r}")
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    delta = check_real(delta, "delta", 0.0, 1.0)
    features_a = features_b = None
    score = "statistic"
    split = threshold is None
    ha, hb = (sa.shape[0] // 2, sb.shape[0] // 2) if split else (0, 0)
    if sa.ndim == 2:
        if not split:
            raise ValueError("threshold must be None for feature vectors (the score is fitted on half of the runs)")
        features_a, features_b = sa, sb
        fit = fit_lr_score(sa[:ha], sb[:hb], confidence, delta)
        score = f"likelihood-ratio score ({fit.kind}), fitted on the first half"
        sa, sb = fit(sa), fit(sb)
    if split:
        t, orient, _ = _choose_threshold(sa[:ha], sb[:hb], confidence, delta)
    else:
        t, orient = check_real(threshold, "threshold"), orientation
    ea, eb = sa[ha:], sb[hb:]
    hit_a = ea >= t if orient == ">=" else ea <= t
    hit_b = eb >= t if orient == ">=" else eb <= t
    tp, fp = int(hit_a.sum()), int(hit_b.sum())
    alpha = 1 - confidence
    tpr_ci = tuple(float(v) for v in clopper_pearson(tp, ea.size, alpha))
    fpr_ci = tuple(float(v) for v in clopper_pearson(fp, eb.size, alpha))
    return AuditResult(
        epsilon_lower=epsilon_lower_bound(tp, ea.size, fp, eb.size, confidence, delta),
        epsilon_point=_point_estimate(tp, ea.size, fp, eb.size, delta), threshold=t,
        orientation=f"D if statistic {orient} threshold", tpr=tp / ea.size, fpr=fp / eb.size,
        tpr_ci=tpr_ci, fpr_ci=fpr_ci, n_runs=sa.size + sb.size, n_heldout=ea.size + eb.size,
        confidence=confidence, delta=delta, nominal_epsilon=nominal_epsilon, stats_a=sa, stats_b=sb,
        split=split, score=score, features_a=features_a, features_b=features_b, statistic=statistic,
        relation=relation, claimed_relation=claimed_relation)


# ----------------------------------------------------------------------------- f-DP (Gaussian DP)
# For a mechanism whose tradeoff curve is Gaussian (μ-GDP, Dong, Roth & Su 2022), every
# test has FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ), so upper bounds on FPR and FNR give a lower bound
# μ ≥ Φ⁻¹(1 − FPR_hi) − Φ⁻¹(FNR_hi); μ-GDP is (ε, δ(ε))-DP for every ε with
# δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), so μ̂ converts to an ε̂ at the claimed δ
# (Nasr et al. 2023, "Tight auditing of differentially private machine learning"). Valid
# ONLY under the assumption that the tradeoff curve is Gaussian (e.g. the Gaussian
# mechanism); it uses the whole tradeoff curve instead of its tail, which is why it can
# audit (ε, δ) mechanisms whose privacy loss reaches ε only with probability ~δ.

def gdp_mu_lower_bound(tp, n_a, fp, n_b, confidence=0.95):
    """Lower bound on the GDP parameter μ from a test with ``tp``/``n_a`` "D" answers on D
    and ``fp``/``n_b`` on D′ (one-sided Clopper–Pearson upper bounds on FPR and FNR,
    Bonferroni over two). Never negative. Valid under the Gaussian-tradeoff assumption.

    Parameters
    ----------
    tp : int or array_like of int
        Runs on D where the test said "D".
    n_a : int
        Runs on D.
    fp : int or array_like of int
        Runs on D′ where the test said "D".
    n_b : int
        Runs on D′.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.

    Returns
    -------
    float or ndarray of float
        μ̂ ≥ 0 (an array for array input).
    """
    from scipy.special import ndtri
    alpha = (1.0 - confidence) / 2.0
    tp, fp = np.asarray(tp, dtype=float), np.asarray(fp, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        fpr_hi = np.where(fp < n_b, stats.beta.ppf(1 - alpha, fp + 1, np.maximum(n_b - fp, 1)), 1.0)
        fnr_hi = np.where(tp > 0, stats.beta.ppf(1 - alpha, n_a - tp + 1, np.maximum(tp, 1)), 1.0)
        mu = ndtri(1 - fpr_hi) - ndtri(fnr_hi)
    mu = np.where(np.isfinite(mu), mu, 0.0)
    return np.maximum(mu, 0.0) if mu.ndim else float(max(mu, 0.0))


def gdp_delta(epsilon, mu):
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022, Cor. 2.13).

    Parameters
    ----------
    epsilon : float
        The ε at which δ is evaluated.
    mu : float
        The GDP parameter; δ = 0 when μ ≤ 0.

    Returns
    -------
    float
    """
    from scipy.special import log_ndtr, ndtr
    if mu <= 0:
        return 0.0
    return float(ndtr(-epsilon / mu + mu / 2) - np.exp(epsilon + log_ndtr(-epsilon / mu - mu / 2)))


def gdp_epsilon(mu, delta):
    """The smallest ε ≥ 0 with δ(ε) ≤ ``delta`` for μ-GDP (0 when μ = 0).

    Parameters
    ----------
    mu : float ≥ 0
        The GDP parameter.
    delta : float in (0, 1)
        Target δ.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``mu`` or ``delta`` is out of its range.
    """
    from scipy import optimize
    mu = check_real(mu, "mu", 0.0, None)
    delta = check_real(delta, "delta", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if mu == 0 or gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-12))


@dataclass
class GDPAudit:
    """A GDP (f-DP) audit: ``mu_lower`` bounds μ and ``epsilon_lower`` = the ε of μ_lower-GDP at
    ``delta``; both valid only if the mechanism's tradeoff curve is Gaussian.

    Attributes
    ----------
    mu_lower : float
        Lower bound on μ at ``confidence``.
    epsilon_lower : float
        ε of μ_lower-GDP at ``delta`` (0 when ``mu_lower`` is 0).
    threshold : float
        Threshold of the test.
    orientation : str
        "D if statistic >= threshold" or "D if statistic <= threshold".
    fpr, fnr : float
        False-positive and false-negative rates on the held-out runs.
    n_heldout : int
        Held-out runs on both sides.
    confidence : float
        Confidence of the bound.
    delta : float
        δ at which ``epsilon_lower`` is stated.
    """
    mu_lower: float
    epsilon_lower: float
    threshold: float
    orientation: str
    fpr: float
    fnr: float
    n_heldout: int
    confidence: float
    delta: float


def gdp_audit_from_statistics(stats_a, stats_b, delta, confidence=0.95, threshold=None, orientation=">="):
    """μ and ε lower bounds under the Gaussian-tradeoff assumption from scalar statistics.

    As in :func:`audit_from_statistics`, the threshold maximising the μ bound is chosen on
    the first half of each side and the bound is computed on the held-out second half —
    unless ``threshold`` is fixed before the runs (then every run is held out).

    Parameters
    ----------
    stats_a, stats_b : array_like
        Scalar statistics of the runs on D and on D′ (flattened); at least 4 on each side.
    delta : float in (0, 1)
        δ at which the ε bound is stated.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.
    threshold : float, optional
        A threshold fixed before the runs.
    orientation : {">=", "<="}, default ">="
        Direction of a fixed ``threshold``.

    Returns
    -------
    GDPAudit

    Raises
    ------
    ValueError
        If a side has fewer than 4 runs, or (when μ̂ > 0) ``delta`` is out of range.
    """
    sa, sb = np.asarray(stats_a, dtype=float).ravel(), np.asarray(stats_b, dtype=float).ravel()
    if sa.size < 4 or sb.size < 4:
        raise ValueError("trials must give at least 4 runs on each side (2 to choose the threshold, 2 to test)")
    if threshold is None:
        ha, hb = sa.size // 2, sb.size // 2
        xa, xb = sa[:ha], sb[:hb]
        pooled = np.unique(np.r_[xa, xb])
        if pooled.size > 256:
            pooled = np.unique(np.quantile(pooled, np.linspace(0, 1, 256)))
        ge_a, ge_b, le_a, le_b = _threshold_counts(xa, xb, pooled)
        vals = gdp_mu_lower_bound(np.column_stack([ge_a, le_a]).ravel(), ha,
                                  np.column_stack([ge_b, le_b]).ravel(), hb, confidence)
        i = int(np.argmax(vals))
        t, orient = float(pooled[i // 2]), (">=", "<=")[i % 2]
    else:
        ha = hb = 0
        t, orient = float(threshold), orientation
    ea, eb = sa[ha:], sb[hb:]
    tp = int(np.sum(ea >= t) if orient == ">=" else np.sum(ea <= t))
    fp = int(np.sum(eb >= t) if orient == ">=" else np.sum(eb <= t))
    mu = gdp_mu_lower_bound(tp, ea.size, fp, eb.size, confidence)
    return GDPAudit(mu, gdp_epsilon(mu, delta) if mu > 0 else 0.0, t, f"D if statistic {orient} threshold",
                    fp / eb.size, 1 - tp / ea.size, ea.size + eb.size, confidence, delta)


def run_audit(statistic, data_a, data_b, trials, confidence=0.95, delta=0.0, nominal_epsilon=None, seed=0,
              executor=None, chunks=None, progress=None, labels=None):
    """Run ``statistic(data, rng)`` (the mechanism followed by the test statistic: a float, or
    a 1-D feature vector of fixed length for a likelihood-ratio score fitted on half the runs)
    ``trials`` times on each dataset and bound ε with :func:`audit_from_statistics`
    (``labels``: a dict of its ``statistic``, ``relation`` and ``claimed_relation``).

    Every run's generator is ``SeedSequence(seed, spawn_key=(side, trial))``, so results do
    not depend on the executor or the chunking. The runs go in ``chunks`` pieces per side
    (default 8 with an executor, 25 in process, so that ``progress(done, total)`` moves
    often); with ``executor`` (any ``concurrent.futures.Executor``, e.g. a process pool or a
    Dask client's) ``statistic`` must be picklable.

    Parameters
    ----------
    statistic : callable
        ``statistic(data, rng) -> float or 1-D ndarray``.
    data_a, data_b : object
        D and D′, passed to ``statistic`` unchanged.
    trials : int ≥ 4
        Runs per side.
    confidence : float in (0, 1), default 0.95
        Confidence of the bound.
    delta : float in [0, 1], default 0.0
        The mechanism's δ.
    nominal_epsilon : float, optional
        The claimed ε (None for a non-private algorithm).
    seed : int, default 0
        Root of every run's ``SeedSequence``.
    executor : concurrent.futures.Executor, optional
        Runs the pieces; None runs them in this process.
    chunks : int ≥ 1, optional
        Pieces per side (default 8 with an executor, 25 without).
    progress : callable, optional
        ``progress(done, total)`` called after each piece.
    labels : dict, optional
        ``statistic``, ``relation`` and ``claimed_relation`` for :func:`audit_from_statistics`.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        If ``trials`` < 4, ``chunks`` < 1, or :func:`audit_from_statistics` refuses the runs.
    """
    trials = check_int(trials, "trials", 4)
    chunks = check_int(chunks if chunks is not None else (8 if executor is not None else 25), "chunks", 1)
    bounds = np.unique(np.linspace(0, trials, min(chunks, trials) + 1).astype(int))
    pieces = [(side, lo, hi) for side in (0, 1) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
    results = {}

    def finish(side, lo, hi, values):
        results[(side, lo)] = values
        if progress:
            progress(sum(v.shape[0] for v in results.values()), 2 * trials)

    if executor is None:
        for side, lo, hi in pieces:
            finish(side, lo, hi, _run_range(statistic, (data_a, data_b)[side], side, seed, lo, hi))
    else:
        futs = {executor.submit(_run_range, statistic, (data_a, data_b)[side], side, seed, lo, hi): (side, lo, hi)
                for side, lo, hi in pieces}
        for f in as_completed(futs):
            finish(*futs[f], f.result())
    sa = np.concatenate([results[k] for k in sorted(k for k in results if k[0] == 0)])
    sb = np.concatenate([results[k] for k in sorted(k for k in results if k[0] == 1)])
    return audit_from_statistics(sa, sb, confidence, delta, nominal_epsilon, **(labels or {}))


def _run_range(statistic, data, side, seed, lo, hi):
    """The statistic of runs lo..hi−1 of one side: (runs,) for scalars, (runs, f) for feature vectors."""
    out = [np.asarray(statistic(data, np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(side, t)))),
                      dtype=float) for t in range(lo, hi)]
    return np.stack(out) if out else np.empty(0)


# ----------------------------------------------------------------------------- neighbours
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
    import scipy.sparse as sp
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
#: the relation each registered private method states its ε for (from its docstring / paper):
#: the subspace methods (Prop. E.1, Alg. 1 with public n, the exponential mechanism of §4)
#: and the k-means methods of dpcore.kmeans (n public) replace one point; DP-Lloyd
#: (diffprivlib) adds or removes one row; DP-τCC changes one count by ±1; the co-clustering
#: paper's row-clustering peers protect one document (row): DPHD and DPNMF replaced, DP-KMeans
#: (our sparse DP-Lloyd) added or removed. An estimator class
#: may also declare ``claimed_relation`` (or ``neighbour_relation``; one of :data:`RELATIONS`), which
#: wins over this table.
CLAIMED_RELATION = {
    "sulq_kplane": "replace_one",
    "sample_aggregate": "replace_one",
    "gibbs": "replace_one",
    "dp_taucc": "cell_pm1",
    "candidate_kmeans": "replace_one",
    "sulq_kmeans": "replace_one",
    "sa_kmeans": "replace_one",
    "dplloyd": "add_remove",
    # the co-clustering paper's peers, which protect a whole document (row) of a count matrix
    "dphd": "replace_one",
    "dp_kmeans": "add_remove",
    "dpnmf": "replace_one",
}

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
MIN_TRIALS = 50


def _declared_relation(cls):
    """The relation a class declares itself (``neighbour_relation``, or ``claimed_relation`` set by
    the class or a base other than the mixin's default), else None."""
    from ..privacy.accounting import PrivateEstimatorMixin
    if getattr(cls, "neighbour_relation", None) is not None:
        return cls.neighbour_relation
    return next((c.__dict__["claimed_relation"] for c in getattr(cls, "__mro__", ())
                 if "claimed_relation" in c.__dict__ and c is not PrivateEstimatorMixin), None)


def claimed_relation(name):
    """The neighbouring relation the registered algorithm ``name`` claims its ε for (a key of
    :data:`RELATIONS`), or None for a non-private algorithm. A private algorithm without a
    stated relation raises ValueError (add it to :data:`CLAIMED_RELATION`).

    Parameters
    ----------
    name : str
        A key of ``dpcore.lab.sweeps.ALGORITHMS``.

    Returns
    -------
    str or None

    Raises
    ------
    ValueError
        If ``name`` is not a registered algorithm, or a private one states no known relation.
    """
    from .sweeps import ALGORITHMS
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {name!r}")
    entry = ALGORITHMS[name]
    if not entry.private:
        return None
    declared = None
    try:
        declared = _declared_relation(entry.load())
    except ValueError:
        pass
    rel = declared if declared is not None else CLAIMED_RELATION.get(name)
    if rel not in RELATIONS:
        raise ValueError(f"algorithm {name} states no neighbouring relation the audit knows ({rel!r}); "
                         f"add it to dpcore.lab.audit.CLAIMED_RELATION (one of {', '.join(RELATIONS)})")
    return rel


def default_neighbour(name, kind):
    """The construction an audit of ``name`` on data of ``kind`` uses by default: the first one
    of :data:`NEIGHBOURS` for that kind whose relation is the one ``name`` claims (the first
    construction of the kind for a non-private algorithm), or None if there is none.

    Parameters
    ----------
    name : str
        A key of ``dpcore.lab.sweeps.ALGORITHMS``.
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


# ----------------------------------------------------------------------------- estimators
#: default test statistic per algorithm family (each a function of the *private* outputs only)
STATISTICS = {
    "subspace": "likelihood_ratio",
    "cocluster": "table_cell",
    "kmeans": "likelihood_ratio",
    "documents": "likelihood_ratio",
}
STATISTIC_HELP = {
    "outlier_distance": "distance from the audited point to the nearest released subspace",
    "table_cell": "the released contingency-table cell that holds the changed matrix cell "
                  "(located with the released row and column partitions)",
    "cell_unreachable": "1 if the released contingency-table cell holding the changed matrix cell could not have "
                        "been produced from the neighbour's count (exact reachability, dpcore.lab.reachability), else 0",
    "nearest_centre": "distance from the audited point to the nearest released centre",
    "likelihood_ratio": "a likelihood-ratio score of the release: features of the released subspaces, centres or "
                        "NMF basis (distances to the audited and the replaced point or document, the released "
                        "projector or centre moments) combined by a score fitted on the first half of the runs only",
}


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
        from ..metrics import squared_distances_to_subspaces
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
    """``(X, rng) -> float or feature vector``: fit a registered algorithm
    (``dpcore.lab.sweeps.ALGORITHMS``) on X and reduce its release. Picklable, so it can run
    in worker processes.

    ``target`` is the audited point (an array, or a dict with "point" and "replaced": the
    row a replace-one neighbour overwrote) for ``outlier_distance``, ``nearest_centre`` and
    ``likelihood_ratio``, or the (row, column) of the changed cell (``table_cell``).

    Attributes
    ----------
    name : str
        A key of ``dpcore.lab.sweeps.ALGORITHMS``.
    params : dict
        Parameters of the estimator (ε is added from ``epsilon``).
    epsilon : float or None
        ε of a private algorithm; must be None for a non-private one.
    statistic : str
        A key of :data:`STATISTIC_HELP` allowed for the algorithm's family.
    target : dict or tuple
        As above (an array is turned into ``{"point": array, "replaced": None}``).

    Raises
    ------
    ValueError
        On construction, if ``name`` is not registered, ``epsilon`` is missing for a private
        algorithm or given for a non-private one, or ``statistic`` does not fit the family.
    """
    name: str
    params: dict
    epsilon: float | None
    statistic: str
    target: object

    def __post_init__(self):
        from .sweeps import ALGORITHMS
        if self.name not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {self.name!r}")
        entry = ALGORITHMS[self.name]
        if entry.private and self.epsilon is None:
            raise ValueError(f"epsilon must be given (> 0) for the private algorithm {self.name}")
        if not entry.private and self.epsilon is not None:
            raise ValueError(f"epsilon must be empty for {self.name}: it is not private and makes no privacy claim "
                             "(the audit then measures how much it leaks)")
        if self.statistic not in STATISTIC_HELP:
            raise ValueError(f"statistic must be one of {', '.join(STATISTIC_HELP)}; got {self.statistic!r}")
        allowed = {"subspace": {"outlier_distance", "likelihood_ratio"}, "kmeans": {"nearest_centre", "likelihood_ratio"},
                   "cocluster": {"table_cell", "cell_unreachable"}, "documents": {"likelihood_ratio"}}[entry.family]
        if self.statistic not in allowed:
            raise ValueError(f"statistic must be one of {', '.join(sorted(allowed))} for {self.name}; "
                             f"got {self.statistic!r}")
        self.target = _as_target(self.target)

    @classmethod
    def for_dataset(cls, name, dataset, epsilon, target, params=None, statistic=None):
        """The statistic of algorithm ``name`` with the dataset's defaults (k, q from its
        classes and subspaces, as in the experiments) and the family's default statistic.

        Parameters
        ----------
        name : str
            A key of ``dpcore.lab.sweeps.ALGORITHMS``.
        dataset : dpcore.data.Dataset
        epsilon : float or None
        target : array, dict or tuple
            The audited point, or the changed cell (i, j) (D's count there is appended).
        params : dict, optional
            Parameters overriding the family defaults.
        statistic : str, optional
            Defaults to the family's entry of :data:`STATISTICS`.

        Returns
        -------
        EstimatorStatistic

        Raises
        ------
        ValueError
            If ``name`` is not registered, or as the constructor.
        """
        from .sweeps import ALGORITHMS, FAMILY_DEFAULTS
        if name not in ALGORITHMS:                      # before the lookup below; __init__ checks the rest
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {name!r}")
        import inspect
        family = ALGORITHMS[name].family
        accepted = inspect.signature(ALGORITHMS[name].load().__init__).parameters   # as in experiments.run_task
        defaults = {k: v for k, v in FAMILY_DEFAULTS[family](dataset).items() if k in accepted}
        if isinstance(target, tuple) and len(target) == 2:     # a changed cell: keep D's count there too
            target = (*target, float(dataset.X[target[0], target[1]]))
        return cls(name, {**defaults, **(params or {})}, epsilon, statistic or STATISTICS[family], target)

    def __call__(self, X, rng):
        from .sweeps import ALGORITHMS
        entry = ALGORITHMS[self.name]
        params = dict(self.params)
        if self.epsilon is not None:
            params["epsilon"] = self.epsilon
        from ..subspace.common import single_threaded
        with warnings.catch_warnings(), single_threaded():     # many small fits: one BLAS thread each (as in sweeps)
            warnings.simplefilter("ignore")
            est = entry.load()(**params, random_state=rng).fit(X)
        if self.statistic == "likelihood_ratio":
            return release_features(entry.family, est, self.target)
        if self.statistic == "outlier_distance":
            from ..metrics import squared_distances_to_subspaces
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
    import scipy.sparse as sp
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
    import scipy.sparse as sp
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


def audit_delta(name, dataset, params=None):
    """The δ an (ε, δ) algorithm is run with in an audit, and that the bound subtracts:
    ``params["delta"]`` if given, else the estimator's own default computed on D (e.g.
    1/(n ln n) for the subspace methods, 10⁻⁶ for the k-means ones). It is passed to the
    estimator explicitly so that D and D′ (which may differ in n) use the same public δ.
    0 for pure ε-DP algorithms.

    Parameters
    ----------
    name : str
        A key of ``dpcore.lab.sweeps.ALGORITHMS``.
    dataset : dpcore.data.Dataset
        D.
    params : dict, optional
        The audit's parameters.

    Returns
    -------
    float
    """
    import inspect

    from .sweeps import ALGORITHMS
    entry = ALGORITHMS[name]
    if not (entry.private and entry.takes_delta):
        return 0.0
    if (params or {}).get("delta") is not None:
        return float(params["delta"])
    default = inspect.signature(entry.load().__init__).parameters["delta"].default
    if default is None:                             # the subspace methods: δ = 1/(n ln n) of D
        from ..subspace.sample_aggregate import default_delta
        return default_delta(dataset.n)
    return float(default)


def audit_estimator(name, dataset, neighbour, trials, epsilon=None, params=None, confidence=0.95, seed=0,
                    executor=None, progress=None, statistic=None):
    """Audit a registered algorithm on ``dataset`` and its neighbour (see :func:`make_neighbour`).

    ``neighbour`` None takes :func:`default_neighbour`: a construction of the relation the
    algorithm claims (replace-one for the subspace and dpcore k-means methods, add/remove
    for DP-Lloyd, one cell for DP-τCC). Another construction is allowed — the result's
    ``relation`` and ``claimed_relation`` then differ, and a "leak" found on it is not a
    violation of the claim. The statistic is the family default of :data:`STATISTICS`
    (``statistic`` overrides it): for the subspace and k-means methods a likelihood-ratio
    score of release features (:func:`release_features`) fitted on the first half of the
    runs, for DP-τCC the released table cell. The bound is always computed on the held-out
    second half. δ for the bound (and for the runs) is :func:`audit_delta`. ``trials`` ≥ 50
    runs per side. Raises ValueError naming the parameter for: too few trials, an ε for a
    non-private algorithm (or none for a private one), an algorithm that does not run on
    this kind of data, a neighbour construction that does not exist for it.

    Parameters
    ----------
    name : str
        A key of ``dpcore.lab.sweeps.ALGORITHMS``.
    dataset : dpcore.data.Dataset
        D.
    neighbour : str or None
        A key of ``NEIGHBOURS[dataset.kind]``; None for the default.
    trials : int ≥ MIN_TRIALS (50)
        Runs per side.
    epsilon : float > 0, optional
        ε of a private algorithm; None for a non-private one.
    params : dict, optional
        Estimator parameters (over the family defaults).
    confidence : float in (0, 1), default 0.95
    seed : int, default 0
    executor : concurrent.futures.Executor, optional
    progress : callable, optional
        As in :func:`run_audit`.
    statistic : str, optional
        A key of :data:`STATISTIC_HELP`; defaults to the family's entry of :data:`STATISTICS`.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        As listed above, or if ``epsilon`` or ``confidence`` is out of range.
    """
    from .sweeps import ALGORITHMS, FAMILY_KINDS
    trials = check_int(trials, "trials", MIN_TRIALS)
    if epsilon is not None:
        epsilon = check_real(epsilon, "epsilon", 0.0, None, low_inclusive=False)
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {name!r}")
    kinds = FAMILY_KINDS[ALGORITHMS[name].family]
    if dataset.kind not in kinds:
        raise ValueError(f"algorithm {name} runs on data of kind {' or '.join(sorted(kinds))}; this dataset is of "
                         f"kind {dataset.kind!r}")
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if neighbour is None:
        neighbour = default_neighbour(name, dataset.kind)
        if neighbour is None:
            raise ValueError(f"neighbour: no construction for data of kind {dataset.kind!r} belongs to the relation "
                             f"{name} claims ({claimed_relation(name)!r}); pass one explicitly")
    D_b, target = make_neighbour(dataset, neighbour)
    family = ALGORITHMS[name].family
    if family == "cocluster" and not isinstance(target, tuple):
        raise ValueError(f"neighbour must be change_cell for {name}: its statistics look at the released table cell "
                         f"of one changed count; got {neighbour!r}")
    if family == "documents" and isinstance(target, tuple):   # a changed cell changes one document: audit that row
        import scipy.sparse as sp

        def row(M):
            return np.asarray(M[0].toarray()).ravel() if sp.issparse(M) else np.asarray(M[0], dtype=float)
        target = {"point": row(D_b), "replaced": row(dataset.X)}
    params = dict(params or {})
    delta = audit_delta(name, dataset, params) if epsilon is not None else 0.0
    if delta > 0:
        params["delta"] = delta
    stat = EstimatorStatistic.for_dataset(name, dataset, epsilon, target, params, statistic)
    # D (without the change) is side a; for "remove_point" D′ is the smaller set
    labels = {"statistic": stat.statistic, "relation": NEIGHBOUR_RELATION[neighbour],
              "claimed_relation": claimed_relation(name)}
    return run_audit(stat, dataset.X, D_b, trials, confidence, delta, epsilon, seed, executor, progress=progress,
                     labels=labels)


# ----------------------------------------------------------------------------- audit data sets
def three_axes(n_per_axis=400, d=3):
    """Points ±e₁, ±e₂, ±e₃ of R^d (``n_per_axis`` on each axis, signs alternating), except
    that one point of the third axis has norm √½. Built to show the Gibbs sampler's
    start leak (issue 9): with k = 2 lines, the best pair on D is {e₁, e₂} (leaving e₃
    out costs ½ less than leaving out another axis), and the far outlier e₃ (the direction
    least explained by the data) makes {e₃, e₁ or e₂} the best pair on D′ — a non-private
    k-plane start flips deterministically with one record. Rows lie in the unit ball;
    ``extras["public_radius"] = 1``.

    Parameters
    ----------
    n_per_axis : int ≥ 2, default 400
    d : int ≥ 3, default 3

    Returns
    -------
    dpcore.data.Dataset
        3 · ``n_per_axis`` points, labelled by axis.

    Raises
    ------
    ValueError
        If ``n_per_axis`` < 2 or ``d`` < 3.
    """
    from ..data import Dataset
    n_per_axis = check_int(n_per_axis, "n_per_axis", 2)
    d = check_int(d, "d", 3)
    blocks = []
    for a in range(3):
        P = np.zeros((n_per_axis, d))
        P[:, a] = np.where(np.arange(n_per_axis) % 2, 1.0, -1.0)
        blocks.append(P)
    blocks[2][0, 2] = -np.sqrt(0.5)
    return Dataset(
        name=f"three axes ({3 * n_per_axis} points in R^{d})",
        description="points on three orthogonal axes; the third holds ½ less squared norm, so one extra point "
                    "on it changes the best pair of lines (the Gibbs start-leak set)",
        X=np.vstack(blocks), labels=np.repeat(np.arange(3), n_per_axis), kind="points",
        privacy_note="rows in the public unit ball",
        extras={"public_radius": 1.0}, params=dict(kind="three_axes", n_per_axis=n_per_axis, d=d))


@dataclass(frozen=True)
class AuditSet:
    """A small dataset for audits (hundreds of runs must fit in seconds) and the algorithm
    parameters that go with it, per family (merged over the family defaults).

    Attributes
    ----------
    label : str
        Human-readable name.
    build : callable
        ``() -> Dataset``.
    params : dict
        family -> dict of parameters.
    note : str, default ""
        What the set shows.
    """
    label: str
    build: object          # () -> Dataset
    params: dict           # family -> dict of parameters
    note: str = ""


def _subspaces_small():
    from ..data import make_union_of_subspaces
    return make_union_of_subspaces(n=200, d=5, k=2, q=1, sigma=0.05, random_state=0)


def _gaussians_small():
    from ..data import make_gaussian_mixture
    return make_gaussian_mixture(n=200, d=5, k=3, sigma=0.1, random_state=0)


def _blocks_small():
    from ..data import make_block_matrix
    return make_block_matrix(n_rows=60, n_cols=40, k=3, l=3, random_state=0)


AUDIT_SETS = {
    "subspaces": AuditSet("2 lines in R^5, n = 200 (subspace methods)", _subspaces_small, {},
                          "union of 2 random lines, σ = 0.05, clipped to the unit ball; the outlier has norm 1"),
    "gaussians": AuditSet("3 Gaussians in R^5, n = 200 (k-means methods)", _gaussians_small, {},
                          "the outlier sits on the generator's public radius Λ, the largest norm the methods allow"),
    "blocks": AuditSet("60×40 block count matrix (co-clustering)", _blocks_small, {},
                       "Poisson counts with 3×3 co-clusters; D′ adds 1 to one cell"),
    "three_axes": AuditSet("three axes, n = 1200 (Gibbs start leak)", lambda: three_axes(400),
                           {"subspace": {"n_clusters": 2, "subspace_dim": 1}},
                           "fit k = 2 lines: the non-private k-plane start flips with the far outlier e₃"),
}


def audit_dataset(key):
    """(Dataset, params per family) of the audit set ``key`` of :data:`AUDIT_SETS`.

    Parameters
    ----------
    key : str
        A key of :data:`AUDIT_SETS`.

    Returns
    -------
    dataset : dpcore.data.Dataset
    params : dict
        family -> dict of parameters (a copy).

    Raises
    ------
    ValueError
        If ``key`` is unknown.
    """
    if key not in AUDIT_SETS:
        raise ValueError(f"audit set must be one of {', '.join(AUDIT_SETS)}; got {key!r}")
    a = AUDIT_SETS[key]
    return a.build(), dict(a.params)


# --------------------------------------------------------------------------- reachability audits
@dataclass
class ReachabilityAudit:
    """Result of :func:`reachability_audit`.

    ``fired_a_on_a``: runs on D whose release is unreachable from the D′ value (the test
    "it was D" fires); ``fired_a_on_b``: runs on D′ where it fires (0 for an exact model: a
    release from D′ is always reachable from the D′ value). ``fired_b_on_b`` /
    ``fired_b_on_a``: the mirror test "unreachable from the D value, so it was D′".
    ``epsilon_lower``: Clopper–Pearson lower bound on ε at ``confidence`` (the larger of
    the two tests', each at the Bonferroni-corrected confidence 1 − (1 − confidence)/2);
    ``epsilon_lower_a`` / ``epsilon_lower_b``: each test's own bound at that level.

    Attributes
    ----------
    mechanism : str
        The noise model (see :func:`dpcore.lab.reachability.reachable`).
    n_a, n_b : int
        Runs on D and on D′.
    fired_a_on_a, fired_a_on_b, fired_b_on_b, fired_b_on_a : int
        As above.
    epsilon_lower_a, epsilon_lower_b, epsilon_lower : float
        As above.
    confidence : float
        Overall confidence.
    """
    mechanism: str
    n_a: int
    n_b: int
    fired_a_on_a: int
    fired_a_on_b: int
    fired_b_on_b: int
    fired_b_on_a: int
    epsilon_lower_a: float
    epsilon_lower_b: float
    epsilon_lower: float
    confidence: float

    @property
    def fraction_unreachable_a(self):
        """Share of the runs on D whose release rules D′ out."""
        return self.fired_a_on_a / self.n_a

    @property
    def fraction_unreachable_b(self):
        """Share of the runs on D′ whose release rules D out."""
        return self.fired_b_on_b / self.n_b


def _pair(x, name):
    """A scalar, or a pair (values for the runs on D, values for the runs on D′)."""
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError(f"{name} must be a number or a pair (runs on D, runs on D′); got a tuple of {len(x)}")
        return x
    return x, x


def reachability_audit(releases_a, releases_b, v_a, v_b, mechanism, scale=None, confidence=0.95,
                       clip_low=None):
    """Audit releases of one count on D (value ``v_a``) and on D′ (value ``v_b``) with the
    exact test "the release is unreachable from the other side's value".

    Test A says "D" when a release cannot come from ``v_b``; test B says "D′" when it cannot
    come from ``v_a``. Each is a fixed test applied to every run, so TPR ≤ e^ε·FPR for an
    ε-DP mechanism and :func:`epsilon_lower_bound` turns its counts into a
    Clopper–Pearson lower bound on ε. The two tests are combined by Bonferroni (each bound at
    confidence 1 − (1 − ``confidence``)/2; ε̂ is the larger), so ε̂ > ε happens with
    probability ≤ 1 − ``confidence`` for an ε-DP mechanism. No threshold is tuned on the
    data, so all runs are used for the bound.

    Parameters
    ----------
    releases_a, releases_b : arrays of released values from runs on D and on D′.
    v_a, v_b : the count's true value on D and on D′. A number, or - when the count depends
        on earlier private outputs of the run (DP-τCC: which co-cluster holds the changed
        cell) - a pair ``(values for the runs on D, values for the runs on D′)`` of arrays
        the lengths of ``releases_a`` and ``releases_b``.
    mechanism, scale, clip_low : as in :func:`dpcore.lab.reachability.reachable` (``scale`` may be a pair too).
    confidence : float in (0, 1)

    Returns
    -------
    ReachabilityAudit
    """
    check_mechanism(mechanism)
    confidence = check_real(confidence, "confidence", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    ra = np.asarray(releases_a, dtype=np.float64).ravel()
    rb = np.asarray(releases_b, dtype=np.float64).ravel()
    if ra.size == 0 or rb.size == 0:
        raise ValueError("releases_a and releases_b must each hold at least one release")
    va_a, va_b = _pair(v_a, "v_a")
    vb_a, vb_b = _pair(v_b, "v_b")
    sc_a, sc_b = _pair(scale, "scale")
    # test A ("it was D"): release unreachable from the D′ value
    fa_a = int(np.count_nonzero(~reachable(ra, vb_a, mechanism, sc_a, clip_low)))
    fa_b = int(np.count_nonzero(~reachable(rb, vb_b, mechanism, sc_b, clip_low)))
    # test B ("it was D′"): release unreachable from the D value
    fb_b = int(np.count_nonzero(~reachable(rb, va_b, mechanism, sc_b, clip_low)))
    fb_a = int(np.count_nonzero(~reachable(ra, va_a, mechanism, sc_a, clip_low)))
    conf_each = 1.0 - (1.0 - confidence) / 2.0
    eps_a = epsilon_lower_bound(fa_a, ra.size, fa_b, rb.size, conf_each)
    eps_b = epsilon_lower_bound(fb_b, rb.size, fb_a, ra.size, conf_each)
    return ReachabilityAudit(mechanism, int(ra.size), int(rb.size), fa_a, fa_b, fb_b, fb_a, eps_a, eps_b,
                             max(eps_a, eps_b), confidence)
