"""Empirical privacy checks: do output frequencies on neighbouring inputs respect e^ε?

For a mechanism M, neighbouring inputs D, D′ and any set S of outputs, (ε, δ)-DP requires
P[M(D) ∈ S] ≤ e^ε P[M(D′) ∈ S] + δ and symmetrically. :func:`frequency_check` tests this
on output buckets from repeated runs: it flags a bucket only when the *lower* Clopper–Pearson
bound of one side exceeds e^ε times the *upper* bound of the other plus δ, at a stated
confidence with a Bonferroni correction over buckets and both directions. A pass means the
runs show no violation at that confidence (not a proof of privacy); a failure is strong
evidence of a violation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._validation import check_real

__all__ = ["clopper_pearson", "FrequencyCheck", "frequency_check", "bucket_counts"]


def clopper_pearson(successes, trials, alpha):
    """Two-sided (1 − alpha) Clopper–Pearson interval for a binomial proportion (arrays ok)."""
    x = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    lo = np.where(x > 0, stats.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
    hi = np.where(x < n, stats.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
    return lo, hi


def bucket_counts(outputs_a, outputs_b, edges=None):
    """Counts of two samples of scalar outputs over common buckets.

    Discrete outputs (integers) are bucketed by value when ``edges`` is None; otherwise
    ``edges`` are histogram edges and values outside go into the first/last bucket.
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
