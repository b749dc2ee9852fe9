"""Privacy mechanisms, composition and the privacy ledger: the one home of DP randomness.

Everything that adds noise for privacy in :mod:`dpcore` calls a function of this module,
and every private estimator records what it released in a :class:`PrivacyLedger`.
Mechanisms and accounting are kept apart from the models, as in diffprivlib.

Neighbouring datasets differ in one record (a point, a row, or - for count matrices - one
cell changed by 1); each caller states the sensitivity it relies on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, asdict

import numpy as np

# scipy.optimize and scipy.special are imported inside the few functions that need them: at
# module level they cost ~0.3 s of the app's first page (the sidebar only needs the ledger).
from ._validation import check_delta, check_epsilon, check_int, check_random_state, check_real

__all__ = [
    "laplace_mechanism", "gaussian_mechanism", "gaussian_sigma", "gaussian_sigma_classic",
    "gaussian_sigma_analytic", "analytic_gaussian_delta", "exponential_mechanism",
    "exponential_mechanism_probabilities", "basic_composition", "advanced_composition",
    "advanced_composition_inverse", "Release", "PrivacyLedger", "PrivateEstimatorMixin",
]


# --------------------------------------------------------------------------- mechanisms
def laplace_mechanism(value, sensitivity, epsilon, random_state=None):
    """Release ``value + Lap(sensitivity / epsilon)`` (i.i.d. per coordinate); ε-DP.

    ``sensitivity`` is the L1 sensitivity of ``value`` over neighbouring datasets.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    rng = check_random_state(random_state)
    value = np.asarray(value, dtype=np.float64)
    return value + rng.laplace(0.0, sensitivity / epsilon, size=value.shape)


def gaussian_sigma_classic(sensitivity, epsilon, delta):
    """Classic Gaussian mechanism σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth Thm A.1).

    The theorem only holds for ε < 1, so larger ε raises ``ValueError``; use the analytic
    calibration there.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    if epsilon >= 1.0:
        raise ValueError(f"epsilon must be in (0, 1) for the classic Gaussian mechanism; got {epsilon:g} "
                         "(use method='analytic', valid for every epsilon > 0)")
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_delta(sigma, sensitivity, epsilon):
    """δ(σ) of Balle & Wang (2018), Thm 8: the smallest δ for which N(0, σ²) noise on a
    query of L2 sensitivity Δ is (ε, δ)-DP:

        δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).

    The second term is computed in log space (``log_ndtr``) so huge ε do not overflow.
    """
    from scipy import special
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b))


def gaussian_sigma_analytic(sensitivity, epsilon, delta):
    """Smallest σ with ``analytic_gaussian_delta(σ) = δ`` (Balle & Wang 2018), any ε > 0.

    δ(σ) decreases strictly in σ, so the root is bracketed and found by Brent's method in
    log σ to machine precision. Always at most the classic σ.
    """
    from scipy import optimize
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)

    def f(log_s):
        return analytic_gaussian_delta(math.exp(log_s), sensitivity, epsilon) - delta

    lo, hi = math.log(sensitivity) - 1.0, math.log(sensitivity) + 1.0
    while f(lo) < 0:  # σ too large already: go smaller
        lo -= 2.0
    while f(hi) > 0:
        hi += 2.0
    log_s = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(log_s)


def gaussian_sigma(sensitivity, epsilon, delta, method="analytic"):
    """σ of the Gaussian mechanism: ``method`` is ``"analytic"`` (default) or ``"classic"``."""
    if method == "analytic":
        return gaussian_sigma_analytic(sensitivity, epsilon, delta)
    if method == "classic":
        return gaussian_sigma_classic(sensitivity, epsilon, delta)
    raise ValueError(f"method must be 'analytic' or 'classic'; got {method!r}")


def gaussian_mechanism(value, sensitivity, epsilon, delta, random_state=None, method="analytic"):
    """Release ``value + N(0, σ²)`` i.i.d. per coordinate, σ from :func:`gaussian_sigma`; (ε, δ)-DP
    for a query of L2 sensitivity ``sensitivity``."""
    sigma = gaussian_sigma(sensitivity, epsilon, delta, method)
    rng = check_random_state(random_state)
    value = np.asarray(value, dtype=np.float64)
    return value + sigma * rng.standard_normal(value.shape)


def _exponential_scale(epsilon, sensitivity, range_sensitivity):
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    # McSherry & Talwar: P ∝ exp(ε u / (2Δu)). With the range sensitivity
    # Δ = sup (max_r diff − min_r diff) (co-clustering paper, Def. 4) P ∝ exp(ε u / Δ) suffices.
    return epsilon / sensitivity if range_sensitivity else epsilon / (2.0 * sensitivity)


def exponential_mechanism_probabilities(utility, epsilon, sensitivity, range_sensitivity=False):
    """Output probabilities of :func:`exponential_mechanism` (softmax along the last axis,
    computed with log-sum-exp)."""
    from scipy import special
    scale = _exponential_scale(epsilon, sensitivity, range_sensitivity)
    logits = scale * np.asarray(utility, dtype=np.float64)
    return np.exp(logits - special.logsumexp(logits, axis=-1, keepdims=True))


def exponential_mechanism(utility, epsilon, sensitivity, random_state=None, range_sensitivity=False):
    """Pick an index along the last axis of ``utility`` with P ∝ exp(scale · u), ε-DP.

    ``scale = ε/(2Δ)`` for the usual sensitivity Δ = sup |u(D,r) − u(D',r)|, or ``ε/Δ`` with
    ``range_sensitivity=True`` (Δ is then the range sensitivity of the co-clustering paper,
    Def. 4). Sampling is by the Gumbel-max trick, so no exponential is ever summed and
    utilities of any magnitude are safe. A 2-D ``utility`` gives one independent draw per row
    (each row is a separate use of the mechanism; the caller accounts for them).
    """
    scale = _exponential_scale(epsilon, sensitivity, range_sensitivity)
    rng = check_random_state(random_state)
    logits = scale * np.asarray(utility, dtype=np.float64)
    if not np.all(np.isfinite(logits)):
        raise ValueError("utility must contain only finite values")
    return np.argmax(logits + rng.gumbel(size=logits.shape), axis=-1)


# --------------------------------------------------------------------------- composition
def basic_composition(epsilons, deltas=None):
    """Sequential composition: (Σ εᵢ, Σ δᵢ), each sum correctly rounded (``math.fsum``),
    so a total does not depend on the order of the releases and a split that ends with
    "the rest of ε" adds up to exactly ε."""
    eps = math.fsum(float(e) for e in np.ravel(epsilons))
    dlt = 0.0 if deltas is None else math.fsum(float(d) for d in np.ravel(deltas))
    return eps, dlt


def advanced_composition(epsilon, delta, k, delta_slack=None):
    """Advanced composition of k (ε, δ)-DP mechanisms (Dwork, Rothblum & Vadhan 2010).

    ε' = √(2k ln(1/δ̃))·ε + k·ε(e^ε − 1),  δ' = k·δ + δ̃.

    With the default ``delta_slack=None`` the slack δ̃ equals δ, which is exactly Prop. E.2
    of the subspace clustering paper: δ' = (k + 1)·δ.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_int(k, "k", 1)
    slack = delta if delta_slack is None else check_delta(delta_slack, "delta_slack")
    eps_total = math.sqrt(2.0 * k * math.log(1.0 / slack)) * epsilon + k * epsilon * math.expm1(epsilon)
    return eps_total, k * delta + slack


def advanced_composition_inverse(total_epsilon, total_delta, k):
    """Per-query (ε, δ) whose k-fold advanced composition (Prop. E.2, slack = δ) is exactly
    (total_epsilon, total_delta): δ = δ'/(k+1) and ε solves the monotone equation by Brent's
    method. The root is bracketed by hi = min(ε′, ln(1 + ε′) + 1): composing k ≥ 1 queries of
    ε costs more than ε, and at ε = ln(1 + ε′) + 1 ≥ 1 the term k·ε(e^ε − 1) alone is at
    least e(1 + ε′) − 1 > ε′ — so e^ε never overflows, even for ε′ = 1e6."""
    from scipy import optimize
    total_epsilon = check_epsilon(total_epsilon, "total_epsilon")
    total_delta = check_delta(total_delta, "total_delta")
    k = check_int(k, "k", 1)
    delta = total_delta / (k + 1)

    def f(eps):
        return advanced_composition(eps, delta, k)[0] - total_epsilon

    hi = min(total_epsilon, math.log1p(total_epsilon) + 1.0)
    eps = optimize.brentq(f, 1e-300, hi, xtol=1e-300, rtol=1e-14, maxiter=1000)
    return eps, delta


# --------------------------------------------------------------------------- ledger
@dataclass
class Release:
    """One private release: what was released, by which mechanism, at what price."""
    what: str
    mechanism: str
    epsilon: float
    delta: float = 0.0
    note: str = ""

    def as_dict(self):
        return asdict(self)


@dataclass
class PrivacyLedger:
    """Record of every private release, totalled by sequential (basic) composition.

    A release that is itself a composition (e.g. the kT SuLQ queries composed by Prop. E.2,
    or disjoint rows answered in parallel) is recorded as one entry whose ``note`` says which
    theorem gives its (ε, δ). With a ``budget_epsilon``/``budget_delta`` a release that would
    exceed the budget raises ``ValueError`` and is not recorded.
    """
    budget_epsilon: float | None = None
    budget_delta: float | None = None
    entries: list = field(default_factory=list)

    def record(self, what, mechanism, epsilon, delta=0.0, note=""):
        epsilon = check_real(epsilon, "epsilon", 0.0, None)
        delta = check_real(delta, "delta", 0.0, 1.0)
        eps_total, delta_total = self.total()
        tol = 1e-9
        if self.budget_epsilon is not None and eps_total + epsilon > self.budget_epsilon * (1 + tol):
            raise ValueError(f"epsilon budget exceeded: {eps_total:g} spent + {epsilon:g} asked > budget {self.budget_epsilon:g}")
        if self.budget_delta is not None and delta_total + delta > self.budget_delta * (1 + tol) + 1e-300:
            raise ValueError(f"delta budget exceeded: {delta_total:g} spent + {delta:g} asked > budget {self.budget_delta:g}")
        entry = Release(what, mechanism, epsilon, delta, note)
        self.entries.append(entry)
        return entry

    def rest_of(self, epsilon):
        """The ε a last release may take so that the total is ``epsilon``: ε minus what was
        spent, moved by units in the last place so that the (correctly rounded) total is
        exactly ``epsilon``, or, in the rare case where rounding makes that impossible (a
        tie), the largest value whose total stays below it: never more than the budget."""
        spent = [e.epsilon for e in self.entries]
        total = lambda r: math.fsum(spent + [r])
        rest = epsilon - math.fsum(spent)
        for _ in range(64):                                   # down until the budget holds
            if total(rest) <= epsilon:
                break
            rest = math.nextafter(rest, -math.inf)
        for _ in range(64):                                   # up while it still holds
            up = math.nextafter(rest, math.inf)
            if total(up) > epsilon:
                break
            rest = up
        return rest

    def extend(self, other: "PrivacyLedger", prefix: str = ""):
        for e in other.entries:
            self.record(prefix + e.what, e.mechanism, e.epsilon, e.delta, e.note)

    def total(self):
        """(ε, δ) spent so far by sequential composition of the entries."""
        return basic_composition([e.epsilon for e in self.entries], [e.delta for e in self.entries])

    @property
    def epsilon(self):
        return self.total()[0]

    @property
    def delta(self):
        return self.total()[1]

    def as_records(self):
        """A list of dicts (one per release), e.g. for ``pandas.DataFrame``."""
        return [e.as_dict() for e in self.entries]

    def __len__(self):
        return len(self.entries)


class PrivateEstimatorMixin:
    """What every private estimator of dpcore exposes after ``fit``.

    Subclasses set in ``fit``:
    - ``ledger_``: the :class:`PrivacyLedger` of the run;
    - ``private_outputs_``: names of fitted attributes that are differentially private;
    - ``nonprivate_outputs_``: dict name -> why it is *not* private (e.g. labels computed by
      assigning the raw points to released subspaces).
    """

    @property
    def epsilon_spent_(self):
        return self.ledger_.epsilon

    @property
    def delta_spent_(self):
        return self.ledger_.delta

    def privacy_report(self):
        eps, dlt = self.ledger_.total()
        return {
            "epsilon": eps,
            "delta": dlt,
            "private": list(self.private_outputs_),
            "not_private": dict(self.nonprivate_outputs_),
            "releases": self.ledger_.as_records(),
        }
