"""The exact reachability test as an audit: releases of one count on D and on D′, and the test
"this release cannot come from the other side's value" (:mod:`dpcore.lab.reachability`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...validation import check_real
from ..reachability import check_mechanism, reachable
from .bounds import epsilon_lower_bound

__all__ = ["ReachabilityAudit", "reachability_audit"]


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
