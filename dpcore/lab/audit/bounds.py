"""ε lower bounds from counts: Clopper–Pearson intervals, the frequency check, the threshold
test's bound and the Gaussian-DP (f-DP) bound.

The derivations are in ``docs/audit.md`` ("Bounds").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from scipy.special import ndtri

from ...privacy import analytic_gaussian_delta
from ...validation import check_real

__all__ = ["clopper_pearson", "FrequencyCheck", "frequency_check", "bucket_counts", "epsilon_lower_bound",
           "gdp_mu_lower_bound", "gdp_delta", "gdp_epsilon"]


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


# ----------------------------------------------------------------------------- threshold tests
# (ε, δ)-DP gives TPR ≤ e^ε FPR + δ for every test; one-sided Clopper–Pearson bounds on the
# rates turn that into a lower bound on ε (docs/audit.md, "The threshold test").

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


# ----------------------------------------------------------------------------- f-DP (Gaussian DP)
# Valid ONLY if the mechanism's tradeoff curve is Gaussian (docs/audit.md, "Gaussian DP").

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

    μ-GDP is the tradeoff curve of the Gaussian mechanism with sensitivity/σ = μ, so this is
    :func:`dpcore.privacy.analytic_gaussian_delta` with σ = 1 and sensitivity μ.

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
    if mu <= 0:
        return 0.0
    return float(analytic_gaussian_delta(1.0, mu, epsilon))


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
    mu = check_real(mu, "mu", 0.0, None)
    delta = check_real(delta, "delta", 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if mu == 0 or gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-12))

