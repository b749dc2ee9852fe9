"""The sample-aggregate framework (Nissim, Raskhodnikova & Smith 2007), Alg. 1 of the
subspace clustering paper, for any function f whose output is a vector of R^D.

The steps: :func:`alg1_constants` (s = ⌊√m⌋ and the calibrated α, β), :func:`draw_subsets`
(m subsets, no record in more than s of them), the caller's f on every subset,
:func:`center_of_attention` (g(B)), :func:`smooth_sensitivity` (a β-smooth bound S(B)) and
:func:`private_aggregate` (g(B) + S(B)/α·u, on a public grid); :func:`sample_aggregate` runs
them on a dataset and records the release in a :class:`~dpcore.privacy.accounting.PrivacyLedger`. The
distance between subset outputs is pluggable (:func:`euclidean_distances`,
:func:`matching_distances` for k unordered blocks such as subspaces or centres).

The proofs (S(B) is β-smooth; the exact privacy profile of the Gaussian step and the
calibration of (α, β) in :func:`calibrate_gaussian_step`; the conventions where Alg. 1 leaves
a detail open; privacy versus Thm 3.1's utility conditions) are in ``docs/sample_aggregate.md``.
Besides the released vector nothing here is private.
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy import stats

from ..metrics import matching_permutations, min_matching_cost
from ..validation import check_array, check_delta, check_epsilon, check_int, check_random_state, check_real
from .accounting import PrivacyLedger
from .exact import _gaussian_on_grid, _gaussian_tau, _grid_exponent, _plan_sigma_int, _sigma_int, _sqrt_up
from .mechanisms import analytic_gaussian_delta

__all__ = [
    "Alg1Constants", "alg1_constants", "paper_constants", "gaussian_hockey_stick", "gaussian_step_delta",
    "GaussianStepCalibration", "calibrate_gaussian_step", "draw_subsets", "subset_redraw_probability",
    "euclidean_distances", "matching_distances", "MATCHING_DENSE_CELLS", "nearest_neighbour_radii", "radii_at", "rho_at",
    "center_of_attention", "smooth_sensitivity", "smooth_sensitivity_floor", "AggregateResult", "private_aggregate",
    "exact_smooth_gaussian", "sample_aggregate", "theorem31_conditions", "privacy_note",
]

MECHANISM_NAME = "smooth-sensitivity Gaussian (sample-aggregate, Alg. 1)"
B_GRID = 11          # number of b values in [−β, β] (odd: contains 0 and both endpoints)
BETA_MAX = 50.0      # largest β the calibration verifies (e^{-50} ≈ 2e-22: larger β changes no term of S(B))
#: the exact release rounds σ_int² up by a relative 2^−32 at most, so the ratio of two neighbours' noise
#: scales is within e^{±(β + 2^−33)}: the calibration checks the profile at β + BETA_SLACK
BETA_SLACK = 2.0 ** -32
#: S(B) is floored at 2Λ·2^−S_FLOOR_BITS (still a β-smooth upper bound on the local sensitivity) so
#: that the integer noise scale of every release lies within 2^S_FLOOR_BITS of the grid's
S_FLOOR_BITS = 11


# --------------------------------------------------------------------------- step 7's privacy profile
def _log_ive(nu, y):
    """log(I_ν(y)·e^{−y}) for y > 0: scipy's ``ive``, its large-argument (Hankel) expansion
    where ``ive`` gives nan (y ≳ 1e9) and its leading small-argument term where it
    underflows (y ≪ ν)."""
    from scipy import special
    iv = float(special.ive(nu, y))
    if iv > 0.0 and math.isfinite(iv):
        return math.log(iv)
    if y > 10.0 * (nu * nu + 1.0):
        # I_ν(y)e^{−y} = (2πy)^{−1/2} Σ_k (−1)^k a_k(ν)/y^k, a_k = Π_{i≤k}(4ν² − (2i−1)²)/(k! 8^k)
        mu4, term, tot = 4.0 * nu * nu, 1.0, 1.0
        for k in range(1, 40):
            term *= -(mu4 - (2 * k - 1) ** 2) / (k * 8.0 * y)
            tot += term
            if abs(term) < 1e-17 * abs(tot):
                break
        return -0.5 * math.log(2.0 * math.pi * y) + math.log(tot)
    return nu * math.log(0.5 * y) - math.lgamma(nu + 1.0) - y


def _log_ncx2_pdf(w, D, lam):
    """log density of the noncentral χ²_D(λ) at w > 0 (λ = 0: central χ²_D), for scalars.

    Uses f(w) = ½ e^{−(w+λ)/2} (w/λ)^{ν/2} I_ν(√(λw)), ν = D/2 − 1, with the exponentially
    scaled Bessel function so that e^{−(w+λ)/2 + √(λw)} = e^{−(√w − √λ)²/2} is formed without
    cancellation. (Agrees with scipy.stats.ncx2.logpdf to ~1e-14 where that is accurate; used
    for its speed per scalar call, docs/benchmarks.md.)
    """
    if w <= 0.0:
        return -math.inf
    if lam <= 0.0:
        h = 0.5 * D
        return (h - 1.0) * math.log(w) - 0.5 * w - h * math.log(2.0) - math.lgamma(h)
    nu = 0.5 * D - 1.0
    sw, sl = math.sqrt(w), math.sqrt(lam)
    return (-math.log(2.0) + 0.5 * nu * (math.log(w) - math.log(lam)) + _log_ive(nu, sw * sl)
            - 0.5 * (sw - sl) ** 2)


def gaussian_hockey_stick(mu, b, epsilon, D):
    """Exact H_ε(P ‖ Q) = ∫(p − e^ε q)_+ for P = N(0, I_D), Q = N(μ·e₁, e^{2b}·I_D).

    b = 0: the analytic Gaussian formula (Balle & Wang 2018). b ≠ 0: the 1-D integral of
    docs/sample_aggregate.md, E_P[(1 − e^{ε − L})_+] over the noncentral χ² law of ‖x − x₀‖²
    (adaptive quadrature, relative tolerance 1e-10), clipped to [0, 1].

    Parameters
    ----------
    mu : float
        Shift of Q (its absolute value is used).
    b : float in [−BETA_MAX, BETA_MAX]
        Log of Q's standard deviation relative to P's.
    epsilon : float
    D : int
        Dimension.

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        If |b| > BETA_MAX (50), or b ≠ 0 is so close to 0 for this μ that the noncentrality
        exceeds 1e28.
    """
    from scipy import integrate
    mu = abs(float(mu))
    b = float(b)
    epsilon = float(epsilon)
    if abs(b) > BETA_MAX:
        raise ValueError(f"b must be in [-{BETA_MAX:g}, {BETA_MAX:g}] (the range the quadrature is checked on); got {b:g}")
    if b == 0.0:
        if mu == 0.0:
            return 0.0
        return min(1.0, max(0.0, float(analytic_gaussian_delta(1.0, mu, epsilon))))
    tau2 = math.exp(2.0 * b)
    c = 0.5 * math.expm1(-2.0 * b)                  # (τ⁻² − 1)/2: > 0 iff τ < 1
    a = mu / -math.expm1(2.0 * b)                   # x₀ = a·e₁ = μ/(1 − τ²)·e₁
    lam = a * a
    K = mu * mu / (2.0 * tau2) + D * b              # L = c(W − λ) + K
    wstar = lam + (epsilon - K) / c                 # L > ε  ⟺  c(W − w*) > 0
    mean, sd = D + lam, math.sqrt(2.0 * (D + 2.0 * lam))
    if lam > 1e28:   # W's spread (~2√λ) would be below the float resolution of λ: refuse rather than guess
        raise ValueError(f"b = {b:g} is too close to 0 for shift mu = {mu:g} (noncentrality {lam:.3g}); "
                         "use b = 0 or a larger |b|")
    if c > 0:                                       # {W > w*}
        lo = max(wstar, 0.0)
        hi = max(lo, mean) + 60.0 * sd + 200.0      # P(W > hi) < e^{-100}
        side = 1.0
    else:                                           # {W < w*}
        lo, hi, side = 0.0, wstar, -1.0
        if hi <= 0.0:
            return 0.0
    if hi <= lo:
        return 0.0
    ac = abs(c)

    def integrand(w):
        lf = _log_ncx2_pdf(w, D, lam)
        if lf < -745.0:
            return 0.0
        return -math.expm1(-ac * abs(w - wstar)) * math.exp(lf)

    pts = sorted(p for p in (mean - 10 * sd, mean - 3 * sd, mean, mean + 3 * sd, mean + 10 * sd,
                             wstar + side / ac, wstar + 10 * side / ac) if lo < p < hi)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val, _ = integrate.quad(integrand, lo, hi, points=pts or None, epsabs=1e-300, epsrel=1e-10, limit=500)
    return min(1.0, max(0.0, float(val)))


def gaussian_step_delta(alpha, beta, epsilon, D, n_grid=B_GRID):
    """δ(α, β; ε, D): the worst H_ε of the Gaussian step over the admissible neighbours,
    sup over b on an ``n_grid``-point grid of [−β, β] (endpoints and 0 included) with the
    shift at its maximum α·min(1, e^b). Returns ``(delta, b_worst)``.

    Parameters
    ----------
    alpha : float > 0
        Noise divisor α.
    beta : float in [0, BETA_MAX]
        Smoothness β.
    epsilon : float > 0
    D : int ≥ 1
        Output dimension.
    n_grid : int, default B_GRID (11)
        Number of values of b; odd, so that 0 is on the grid.

    Returns
    -------
    delta : float
        The worst H_ε on the grid.
    b_worst : float
        The b at which it is reached.
    """
    best, b_best = -1.0, 0.0
    for b in np.linspace(-beta, beta, n_grid):
        b = float(b)
        if abs(b) < 1e-15 * max(beta, 1e-300):
            b = 0.0
        v = gaussian_hockey_stick(alpha * min(1.0, math.exp(b)), b, epsilon, D)
        if v > best:
            best, b_best = v, b
    return best, b_best


def paper_constants(epsilon, delta, D):
    """The paper's step-2 constants α = ε/(5√(2 ln(2/δ))), β = ε/(4(D + ln(2/δ))).

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    D : int
        Output dimension.

    Returns
    -------
    alpha, beta : float
    """
    log_term = math.log(2.0 / delta)
    return epsilon / (5.0 * math.sqrt(2.0 * log_term)), epsilon / (4.0 * (D + log_term))


@dataclass(frozen=True)
class GaussianStepCalibration:
    """The constants the Gaussian step uses for (ε, δ, D) and how they were chosen.

    Attributes
    ----------
    alpha, beta : float
        The constants used.
    exact_delta : float
        δ(α, β; ε, D) at the constants used (≤ the target δ).
    alpha_paper, beta_paper : float
        The paper's constants (:func:`paper_constants`).
    paper_delta : float
        δ(α_paper, β_paper; ε, D) (nan when β_paper > BETA_MAX: not computed).
    rule : str
        "paper", "beta reduced" or "alpha and beta reduced".
    """
    alpha: float
    beta: float
    exact_delta: float          # δ(α, β; ε, D) at the constants used (≤ the target δ)
    alpha_paper: float
    beta_paper: float
    paper_delta: float          # δ(α_paper, β_paper; ε, D) (nan when β_paper > BETA_MAX: not computed)
    rule: str                   # "paper" | "beta reduced" | "alpha and beta reduced"

    @property
    def paper_constants_kept(self):
        """True when the paper's (α, β) are (ε, δ)-DP by the exact computation and used."""
        return self.rule == "paper"


@functools.lru_cache(maxsize=512)
def _calibrate(epsilon, delta, D):
    from scipy import optimize
    a_p, b_p = paper_constants(epsilon, delta, D)
    d_p, _ = gaussian_step_delta(a_p, min(b_p + BETA_SLACK, BETA_MAX), epsilon, D)
    if d_p <= delta and b_p + BETA_SLACK <= BETA_MAX:
        return GaussianStepCalibration(a_p, b_p, d_p, a_p, b_p, d_p, "paper")
    if b_p + BETA_SLACK > BETA_MAX:
        d_p = math.nan           # not computed: the paper's β is beyond what the calibration verifies
    alpha, rule = a_p, "beta reduced"
    half = 0.5 * delta
    if gaussian_hockey_stick(a_p, 0.0, epsilon, D) > half:
        # the b = 0 part alone is too large: α with analytic δ = δ/2 (δ increases with α)
        g = lambda la: gaussian_hockey_stick(math.exp(la), 0.0, epsilon, D) - half  # noqa: E731
        lo = math.log(a_p)
        while g(lo) > 0:
            lo -= 1.0
        alpha = math.exp(optimize.brentq(g, lo, math.log(a_p), xtol=1e-12, rtol=1e-12))
        alpha = min(alpha, a_p)
        while gaussian_hockey_stick(alpha, 0.0, epsilon, D) > half:      # land on the safe side
            alpha *= 1.0 - 1e-9
        rule = "alpha and beta reduced"

    def f(lb):
        return gaussian_step_delta(alpha, math.exp(lb) + BETA_SLACK, epsilon, D)[0]

    hi = math.log(min(b_p, BETA_MAX - BETA_SLACK))
    lo = hi - 1.0
    d_lo = f(lo)
    for _ in range(200):                             # as β → 0, δ → the b = 0 part ≤ δ/2
        if d_lo <= delta:
            break
        hi, lo = lo, lo - 1.0
        d_lo = f(lo)
    else:  # pragma: no cover - unreachable: δ(β) → δ_{b=0} ≤ δ/2
        raise RuntimeError("Gaussian-step calibration failed")
    # bisection on log β: f(lo) ≤ δ < f(hi); stop at a relative width of 1e-4
    while hi - lo > 1e-4:
        mid = 0.5 * (lo + hi)
        d_mid = f(mid)
        if d_mid <= delta:
            lo, d_lo = mid, d_mid
        else:
            hi = mid
    return GaussianStepCalibration(alpha, math.exp(lo), d_lo, a_p, b_p, d_p, rule)


def calibrate_gaussian_step(epsilon, delta, D):
    """(α, β) of the Gaussian step for (ε, δ, D) by the rule in docs/sample_aggregate.md (cached).

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    D : int ≥ 1
        Output dimension.

    Returns
    -------
    GaussianStepCalibration

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    D = check_int(D, "D", 1)
    return _calibrate(float(epsilon), float(delta), int(D))


# --------------------------------------------------------------------------- step 2
@dataclass(frozen=True)
class Alg1Constants:
    """The data-independent constants of Alg. 1 (all public).

    Attributes
    ----------
    m : int
        Number of subsets.
    D : int
        Output dimension.
    epsilon : float
    delta : float
    s : int
        ⌊√m⌋: the most subsets one record may be in.
    alpha : float
        Noise divisor used (the paper's ε/(5√(2 ln(2/δ))) unless recalibrated).
    beta : float
        Smoothness used (the paper's ε/(4(D + ln(2/δ))) unless recalibrated).
    t0 : int
        ⌈(m + s)/2⌉ + 1.
    alpha_paper, beta_paper : float
        The paper's constants.
    exact_delta : float
        Exact worst δ of the Gaussian step at (alpha, beta), ≤ delta.
    paper_delta : float
        Exact worst δ at the paper's constants (nan when not computed).
    calibration : str
        "paper", "beta reduced" or "alpha and beta reduced".
    """
    m: int          # number of subsets
    D: int          # output dimension
    epsilon: float
    delta: float
    s: int          # ⌊√m⌋: the most subsets one record may be in
    alpha: float    # noise divisor used (the paper's ε/(5√(2 ln(2/δ))) unless recalibrated)
    beta: float     # smoothness used (the paper's ε/(4(D + ln(2/δ))) unless recalibrated)
    t0: int         # ⌈(m + s)/2⌉ + 1
    alpha_paper: float
    beta_paper: float
    exact_delta: float            # exact worst δ of the Gaussian step at (alpha, beta), ≤ delta
    paper_delta: float            # exact worst δ at the paper's constants
    calibration: str              # "paper" | "beta reduced" | "alpha and beta reduced"

    @property
    def paper_constants_kept(self):
        """True when the paper's (α, β) are (ε, δ)-DP by the exact computation and used."""
        return self.calibration == "paper"


def alg1_constants(m, epsilon, delta, D):
    """Step 2 of Alg. 1 plus t₀, with (α, β) from :func:`calibrate_gaussian_step`.

    Parameters
    ----------
    m : int ≥ 2
        Number of subsets (named ``n_subsets`` in error messages).
    epsilon : float > 0
    delta : float in (0, 1)
    D : int ≥ 1
        Output dimension.

    Returns
    -------
    Alg1Constants

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    m = check_int(m, "n_subsets", 2)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    D = check_int(D, "D", 1)
    s = math.isqrt(m)
    t0 = math.ceil((m + s) / 2) + 1
    cal = calibrate_gaussian_step(epsilon, delta, D)
    return Alg1Constants(m=m, D=D, epsilon=epsilon, delta=delta, s=s, alpha=cal.alpha, beta=cal.beta, t0=t0,
                         alpha_paper=cal.alpha_paper, beta_paper=cal.beta_paper, exact_delta=cal.exact_delta,
                         paper_delta=cal.paper_delta, calibration=cal.rule)


def theorem31_conditions(epsilon, D, m, n):
    """Thm 3.1's conditions for a *useful* sample-aggregate release (utility, not privacy:
    the privacy of a run comes from the exact calibration of the Gaussian step).

    Returns a dict with ``eps_ok`` (ε > 2D/√m), ``eps_threshold`` (2D/√m), ``m_ok``
    (m ≥ (ln n)², the finite-n reading of m = ω(log² n)), ``m_threshold`` ((ln n)²) and
    ``messages`` (one sentence per broken condition, empty when both hold).

    Parameters
    ----------
    epsilon : float
    D : int
        Output dimension.
    m : int
        Number of subsets.
    n : int
        Number of records.

    Returns
    -------
    dict
        The keys above.
    """
    eps_thr = 2.0 * D / math.sqrt(m)
    m_thr = math.log(n) ** 2 if n > 1 else 0.0
    msgs = []
    if not epsilon > eps_thr:
        msgs.append(f"Theorem 3.1's utility bound assumes ε > 2D/√m = 2·{D}/√{m} = {eps_thr:.4g}; "
                    f"got ε = {epsilon:g}: the release is still (ε, δ)-DP, but the theorem's "
                    f"accuracy bound does not cover this run and the noise will likely swamp the aggregate")
    if not m >= m_thr:
        msgs.append(f"Theorem 3.1's utility bound assumes m = ω(log² n), checked as n_subsets ≥ (ln n)² = "
                    f"{m_thr:.4g} for n = {n}; got n_subsets = {m}: the release is still (ε, δ)-DP, but "
                    f"the theorem's accuracy bound does not cover this run")
    return {"eps_ok": epsilon > eps_thr, "eps_threshold": eps_thr, "m_ok": m >= m_thr, "m_threshold": m_thr,
            "messages": msgs}


def privacy_note(constants, n=None):
    """The ledger note of a release with these constants: the privacy claim (exact privacy
    profile of the Gaussian step, which constants) and, separately, Thm 3.1's utility
    conditions (when ``n`` is given).

    Parameters
    ----------
    constants : Alg1Constants
    n : int, optional
        Number of records; without it the utility conditions are left out.

    Returns
    -------
    str
    """
    c = constants
    if c.paper_constants_kept:
        how = f"paper's constants kept (alpha={c.alpha:.4g}, beta={c.beta:.4g})"
    else:
        how = (f"paper's constants (alpha={c.alpha_paper:.4g}, beta={c.beta_paper:.4g}) give delta = "
               f"{c.paper_delta:.3g} > {c.delta:.3g}, so " +
               (f"beta reduced to {c.beta:.4g} (alpha={c.alpha:.4g} kept)" if c.calibration == "beta reduced" else
                f"alpha reduced to {c.alpha:.4g} and beta to {c.beta:.4g}"))
    note = (f"privacy: (ε, δ) from the exact privacy profile of the Gaussian step: worst δ = "
            f"{c.exact_delta:.3g} ≤ δ = {c.delta:.3g}; {how}")
    if n is not None:
        th = theorem31_conditions(c.epsilon, c.D, c.m, n)
        parts = [f"ε > 2D/√m = {th['eps_threshold']:.4g}: " + ("met" if th["eps_ok"] else "NOT met"),
                 f"m ≥ (ln n)² = {th['m_threshold']:.4g}: " + ("met" if th["m_ok"] else "NOT met")]
        note += "; utility (Thm 3.1, not needed for privacy): " + ", ".join(parts)
    return note


# --------------------------------------------------------------------------- step 3
def subset_redraw_probability(n, m, subset_size=None):
    """Approximate probability that one draw of step 3 is accepted.

    A record is in each subset independently with probability p = size/n, so its count is
    Binomial(m, p); treating the n records as independent (their counts are negatively
    correlated, so this slightly underestimates) P(accept) ≈ (1 − P[Bin(m, p) > ⌊√m⌋])ⁿ.

    Parameters
    ----------
    n : int
        Number of records.
    m : int
        Number of subsets.
    subset_size : int, optional
        Records per subset; default ⌊n/m⌋.

    Returns
    -------
    float in [0, 1]
    """
    size = n // m if subset_size is None else subset_size
    tail = stats.binom.sf(math.isqrt(m), m, size / n)
    return float(np.exp(n * np.log1p(-tail))) if tail < 1 else 0.0


def draw_subsets(n, m, random_state=None, subset_size=None, max_redraws=1000):
    """Step 3 of Alg. 1: m subsets of ⌊n/m⌋ distinct indices each, drawn independently and
    uniformly; the whole draw is repeated until no index is in more than √m subsets.

    The rule only looks at indices, never at data values, so redrawing costs no privacy.
    Returns ``(subsets, n_draws)``: an (m, size) int array (each row sorted) and the number
    of draws made. Raises ``ValueError`` naming ``n_subsets`` when m > n, and when m is so
    small that the rule is practically never met (estimated acceptance probability below
    1/``max_redraws``, or ``max_redraws`` draws all rejected).

    Parameters
    ----------
    n : int ≥ 2
        Number of records.
    m : int in [2, n]
        Number of subsets.
    random_state : None, int or numpy.random.Generator, optional
    subset_size : int in [1, n], optional
        Records per subset; default ⌊n/m⌋.
    max_redraws : int ≥ 1, default 1000

    Returns
    -------
    subsets : ndarray of int of shape (m, size)
    n_draws : int

    Raises
    ------
    ValueError
        As above, or if a parameter is out of its range.
    """
    n = check_int(n, "n", 2)
    m = check_int(m, "n_subsets", 2, n)
    size = n // m if subset_size is None else check_int(subset_size, "subset_size", 1, n)
    max_redraws = check_int(max_redraws, "max_redraws", 1)
    rng = check_random_state(random_state)
    s = math.isqrt(m)
    p_accept = subset_redraw_probability(n, m, size)
    if p_accept < 1.0 / max_redraws:
        raise ValueError(
            f"n_subsets = {m} is too small for n = {n}: with subsets of {size} points, some point lands in more "
            f"than sqrt(m) = {s} subsets in almost every draw (acceptance probability ~{p_accept:.1e}); "
            f"use a larger n_subsets")
    for draw in range(1, max_redraws + 1):
        keys = rng.random((m, n))
        subsets = np.sort(np.argpartition(keys, size - 1, axis=1)[:, :size], axis=1)
        counts = np.bincount(subsets.ravel(), minlength=n)
        if counts.max() <= s:
            return subsets, draw
    raise ValueError(f"n_subsets = {m}: no draw out of {max_redraws} met the rule 'no point in more than "
                     f"sqrt(m) = {s} subsets'; use a larger n_subsets")


# --------------------------------------------------------------------------- d_M
def euclidean_distances(B):
    """m×m matrix of ℓ2 distances between the rows of B.

    Parameters
    ----------
    B : array_like of shape (m, D)

    Returns
    -------
    ndarray of shape (m, m)
        Symmetric, zero diagonal.
    """
    B = np.asarray(B, dtype=np.float64)
    sq = np.sum(B ** 2, axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * B @ B.T, 0.0)
    np.fill_diagonal(D2, 0.0)
    return np.sqrt(D2)


#: Largest all-pairs cost array (m²·k² cells) :func:`matching_distances` builds at once; above
#: it the distances are computed one output at a time (memory m·k²).
MATCHING_DENSE_CELLS = 4_000_000


def matching_distances(B, n_blocks, max_cells=MATCHING_DENSE_CELLS):
    """m×m matrix of the matching (Wasserstein) distance between rows of B seen as sets of
    ``n_blocks`` equal blocks:

        d(v, w) = √( min over permutations π of Σ_a ‖v_a − w_π(a)‖² ),

    the d_W of eq. (2) when each block is an isometric encoding of one subspace, and the
    distance Nissim et al. use between lists of k-means centres. Exact; the minimum over
    matchings is :func:`dpcore.metrics.min_matching_cost` (all k! matchings up to
    :data:`dpcore.metrics.MATCHING_BRUTE_FORCE_MAX_K`, the Hungarian algorithm per pair above).

    Parameters
    ----------
    B : array_like of shape (m, D)
        One output per row.
    n_blocks : int
        Number k of blocks of each row (k divides D); k = 1 is the Euclidean distance.
    max_cells : int, default :data:`MATCHING_DENSE_CELLS`
        Above m²·k² cells the pairwise costs are built one output at a time (memory m·k²);
        the result is the same.

    Returns
    -------
    ndarray of shape (m, m)
        Symmetric, zero diagonal.
    """
    B = np.asarray(B, dtype=np.float64)
    m, D = B.shape
    k = check_int(n_blocks, "n_blocks", 1, D)
    if D % k:
        raise ValueError(f"n_blocks must divide the vector length D = {D}; got {k}")
    if k == 1:
        return euclidean_distances(B)
    V = B.reshape(m, k, D // k)
    sq = np.sum(V ** 2, axis=2)                                     # (m, k)
    brute = matching_permutations(k) is not None
    if m * m * k * k <= max_cells:
        C = sq[:, None, :, None] + sq[None, :, None, :] - 2.0 * np.einsum("iab,jcb->ijac", V, V)
        C = np.maximum(C, 0.0)                                      # C[i, j, a, c] = ‖v_ia − v_jc‖²
        if brute:                                                   # vectorised: all m² pairs at once
            D2 = min_matching_cost(C)
        else:                                                       # one Hungarian call per pair i < j
            D2 = np.zeros((m, m))
            iu = np.triu_indices(m, 1)
            D2[iu] = min_matching_cost(C[iu])
            D2 = D2 + D2.T
    else:
        D2 = np.zeros((m, m))
        for i in range(m - 1):                                      # output i against outputs i+1, …
            C = sq[i][None, :, None] + sq[i + 1:, None, :] - 2.0 * np.einsum("ab,jcb->jac", V[i], V[i + 1:])
            D2[i, i + 1:] = min_matching_cost(np.maximum(C, 0.0))
        D2 = D2 + D2.T
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.sqrt(D2)


# --------------------------------------------------------------------------- steps 5-6
def nearest_neighbour_radii(dist):
    """(m, m−1) array R with R[i, t−1] = r_i(t): the sorted distances from output i to the
    other m − 1 outputs (its own zero distance excluded).

    Parameters
    ----------
    dist : array_like of shape (m, m)
        The d_M matrix of B.

    Returns
    -------
    ndarray of shape (m, m − 1)

    Raises
    ------
    ValueError
        If ``dist`` is not square.
    """
    dist = np.asarray(dist, dtype=np.float64)
    m = dist.shape[0]
    if dist.shape != (m, m):
        raise ValueError(f"distances must return an m×m matrix; got shape {dist.shape}")
    off = ~np.eye(m, dtype=bool)
    return np.sort(dist[off].reshape(m, m - 1), axis=1)


def radii_at(R, t, diameter):
    """(m,) vector r_i(t); r_i(t) = Λ = ``diameter`` when t ≥ m (no t-th other output).

    Parameters
    ----------
    R : ndarray of shape (m, m − 1)
        From :func:`nearest_neighbour_radii`.
    t : int ≥ 1
    diameter : float
        Λ.

    Returns
    -------
    ndarray of shape (m,)

    Raises
    ------
    ValueError
        If t < 1.
    """
    m = R.shape[0]
    if t < 1:
        raise ValueError(f"t must be >= 1; got {t}")
    if t > m - 1:
        return np.full(m, float(diameter))
    return R[:, t - 1]


def rho_at(R, j, t, diameter):
    """ρ_j(t): the j-th smallest of r_1(t), …, r_m(t); Λ = ``diameter`` when j > m.

    Parameters
    ----------
    R : ndarray of shape (m, m − 1)
        From :func:`nearest_neighbour_radii`.
    j : int ≥ 1
    t : int ≥ 1
    diameter : float
        Λ.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If j < 1 or t < 1.
    """
    m = R.shape[0]
    if j < 1:
        raise ValueError(f"j must be >= 1; got {j}")
    if j > m:
        return float(diameter)
    r = radii_at(R, t, diameter)
    return float(np.partition(r, j - 1)[j - 1])


def center_of_attention(R, t0, diameter):
    """Step 5: i* = argmin_i r_i(t₀) (ties → lowest index). Returns ``(i*, r(t₀))``.

    Parameters
    ----------
    R : ndarray of shape (m, m − 1)
        From :func:`nearest_neighbour_radii`.
    t0 : int ≥ 1
    diameter : float
        Λ.

    Returns
    -------
    i_star : int
    r_t0 : ndarray of shape (m,)
    """
    r = radii_at(R, t0, diameter)
    return int(np.argmin(r)), r


def smooth_sensitivity(R, t0, s, beta, diameter):
    """Step 6: S(B) = max_{k ≥ 0} e^{−βk} · 2ρ_{(k+1)s+1}(t₀ + (k+1)s), the β-smooth upper
    bound on the local sensitivity of the centre of attention proved in docs/sample_aggregate.md.

    Returns ``(S, terms)`` where ``terms`` is a list of (k, t, ρ_j(t), ρ_j(t)e^{−βk}) with
    t = t₀ + (k+1)s and j = (k+1)s + 1, for every k examined: k runs until t ≥ m, where every
    radius is Λ and larger k can only give smaller terms. S(B) is twice the largest last entry.

    Parameters
    ----------
    R : ndarray of shape (m, m − 1)
        From :func:`nearest_neighbour_radii`.
    t0 : int
    s : int ≥ 1
        ⌊√m⌋.
    beta : float
    diameter : float
        Λ.

    Returns
    -------
    S : float
    terms : list of tuple
    """
    m = R.shape[0]
    terms = []
    k = 0
    while True:
        t = t0 + (k + 1) * s
        rho = rho_at(R, (k + 1) * s + 1, t, diameter)
        terms.append((k, t, rho, rho * math.exp(-beta * k)))
        if t > m - 1:
            break
        k += 1
    return 2.0 * max(term[3] for term in terms), terms


# --------------------------------------------------------------------------- step 7
@dataclass
class AggregateResult:
    """Everything one sample-aggregate run computed. Only ``released`` is differentially
    private; the rest is data-dependent diagnostics (see ``nonprivate``).

    Attributes
    ----------
    released : ndarray of shape (D,)
        g(B) + S(B)/α·u (PRIVATE).
    center : ndarray of shape (D,)
        g(B) = s_{i*}, blocks in released order (not private).
    chosen_index : int
        i*.
    constants : Alg1Constants
    smooth_sensitivity : float
        S(B).
    noise_scale : float
        S(B)/α, the per-coordinate noise standard deviation.
    radii_t0 : ndarray of shape (m,)
        r_i(t₀) for every i.
    sensitivity_terms : list of tuple
        (k, t, ρ_j(t), ρ_j(t)e^{−βk}), j = (k+1)s+1, of step 6.
    distances : ndarray of shape (m, m)
        d_M matrix of B.
    outputs : ndarray of shape (m, D)
        B.
    block_permutation : ndarray of int
        Order in which g(B)'s blocks were released.
    diameter : float
        Λ.
    subsets : ndarray of int of shape (m, size) or None
        Set by :func:`sample_aggregate`.
    n_draws : int or None
        Set by :func:`sample_aggregate`.
    ledger : PrivacyLedger or None
        Set by :func:`sample_aggregate`.
    nonprivate : dict
        Field name -> why it is not private.
    discretisation_slack : float
        τ of the exact release: (ε + 2τ, e^τ·δ) (:mod:`dpcore.privacy.exact`).
    grid_exponent : int
        k of the public release grid 2^−k (a function of the public constants and Λ only).
    """
    released: np.ndarray            # g(B) + S(B)/α·u  (PRIVATE)
    center: np.ndarray              # g(B) = s_{i*}, blocks in released order (not private)
    chosen_index: int               # i*
    constants: Alg1Constants
    smooth_sensitivity: float       # S(B)
    noise_scale: float              # S(B)/α, the per-coordinate noise standard deviation
    radii_t0: np.ndarray            # r_i(t₀) for every i
    sensitivity_terms: list         # (k, t, ρ_j(t), ρ_j(t)e^{−βk}), j = (k+1)s+1, of step 6
    distances: np.ndarray           # m×m d_M matrix of B
    outputs: np.ndarray             # B, m×D
    block_permutation: np.ndarray   # order in which g(B)'s blocks were released
    diameter: float
    subsets: np.ndarray | None = None
    n_draws: int | None = None
    ledger: PrivacyLedger | None = None
    discretisation_slack: float = 0.0
    grid_exponent: int | None = None
    nonprivate: dict = field(default_factory=lambda: {
        "center": "the exact subset output g(B) chosen from the data",
        "chosen_index": "which subset output was chosen depends on the data",
        "smooth_sensitivity": "S(B) is computed from the data; only S(B)/α·u with the noise is safe",
        "noise_scale": "S(B)/α is computed from the data",
        "radii_t0": "distances between subset outputs computed from the data",
        "outputs": "the raw (non-private) subset outputs",
    })

    @property
    def n_far_neighbours(self):
        """For every output i: how many of the other m−1 outputs are farther than the chosen
        output's radius r_{i*}(t₀) (the 'far neighbours'; the chosen output has the fewest
        up to ties)."""
        r = self.radii_t0[self.chosen_index]
        far = (self.distances > r + 1e-12).sum(axis=1)
        return far


def private_aggregate(B, epsilon, delta, *, diameter, distances=None, n_blocks=1, max_multiplicity=None,
                      random_state=None):
    """Steps 2 and 5–7 of Alg. 1 on given subset outputs B (m×D).

    Parameters
    ----------
    B : (m, D) array, the subset outputs s_i = f(X_{S_i}).
    epsilon, delta : privacy parameters, ε > 0, δ ∈ (0, 1).
    diameter : Λ > 0, a public bound on d_M between any two possible outputs (used for
        r_i(t) with t ≥ m). A computed distance above Λ raises ``ValueError``.
    distances : callable B -> m×m d_M matrix; default :func:`euclidean_distances`, or
        :func:`matching_distances` with ``n_blocks`` when ``n_blocks > 1`` and None given.
    n_blocks : the number of unordered blocks of each output (1 = an ordinary vector).
        With n_blocks > 1 the blocks of g(B) are released in a random order (module doc).
    max_multiplicity : the most outputs one record can affect; Alg. 1 guarantees ⌊√m⌋ by its
        subsampling rule, which is the default. Must equal the s of Alg. 1 (a smaller value
        would under-state the sensitivity), so only ⌊√m⌋ is accepted.
    random_state : None, int or Generator (the block order and the Gaussian noise).

    Returns
    -------
    AggregateResult
        Without ``subsets``, ``n_draws`` and ``ledger`` (set by :func:`sample_aggregate`).

    Raises
    ------
    ValueError
        If B has fewer than 2 rows or is not finite, ε, δ, Λ or ``n_blocks`` is out of
        range, ``n_blocks`` does not divide D, ``max_multiplicity`` is not ⌊√m⌋,
        ``distances`` does not return a finite m×m matrix, or two outputs are farther apart
        than Λ.
    """
    B = check_array(B, "B")
    m, D = B.shape
    if m < 2:
        raise ValueError(f"n_subsets must be an integer >= 2; got {m}")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    diameter = check_real(diameter, "diameter", 0.0, None, low_inclusive=False)
    n_blocks = check_int(n_blocks, "n_blocks", 1, D)
    if D % n_blocks:
        raise ValueError(f"n_blocks must divide the output dimension D = {D}; got {n_blocks}")
    if max_multiplicity is not None and check_int(max_multiplicity, "max_multiplicity", 1) != math.isqrt(m):
        raise ValueError(f"max_multiplicity must be floor(sqrt(m)) = {math.isqrt(m)} (Alg. 1's subsampling "
                         f"rule); got {max_multiplicity}")
    rng = check_random_state(random_state)
    c = alg1_constants(m, epsilon, delta, D)
    if distances is None:
        distances = euclidean_distances if n_blocks == 1 else (lambda A: matching_distances(A, n_blocks))
    dist = np.asarray(distances(B), dtype=np.float64)
    if dist.shape != (m, m) or not np.all(np.isfinite(dist)):
        raise ValueError(f"distances must return a finite m×m matrix; got shape {dist.shape}")
    if dist.max() > diameter * (1 + 1e-9) + 1e-12:
        raise ValueError(f"diameter must bound d_M between outputs; got diameter = {diameter:g} but two outputs "
                         f"are {dist.max():g} apart")
    # distances within the float tolerance above Λ are Λ: the smoothness argument takes every d_M ≤ Λ
    dist = np.minimum(dist, diameter)
    R = nearest_neighbour_radii(dist)
    i_star, r_t0 = center_of_attention(R, c.t0, diameter)
    S, terms = smooth_sensitivity(R, c.t0, c.s, c.beta, diameter)
    S = max(S, smooth_sensitivity_floor(c, diameter))
    perm = rng.permutation(n_blocks) if n_blocks > 1 else np.zeros(1, dtype=np.int64)
    center = B[i_star].reshape(n_blocks, D // n_blocks)[perm].ravel()
    released, noise_scale, tau, k = exact_smooth_gaussian(center, S, c, diameter, rng)
    return AggregateResult(released=released, center=center, chosen_index=i_star, constants=c,
                           smooth_sensitivity=S, noise_scale=noise_scale, radii_t0=r_t0,
                           sensitivity_terms=terms, distances=dist, outputs=B, block_permutation=perm,
                           diameter=diameter, discretisation_slack=tau, grid_exponent=k)


def smooth_sensitivity_floor(constants, diameter):
    """The public lower bound S_lo of the S(B) used.

    S_lo = max(2Λe^{−βK}, 2Λ·2^−11), K the last k of step 6 (where every radius is Λ, so S(B) ≥ 2Λe^{−βK} for every B). Flooring S(B) at
    2Λ·2^−11 keeps it a β-smooth upper bound on the local sensitivity (a max of β-smooth
    functions and a constant) and bounds the range of the noise scale for the exact release.

    Parameters
    ----------
    constants : Alg1Constants
    diameter : float
        Λ.

    Returns
    -------
    float
        S_lo; :func:`private_aggregate` floors S(B) at it and fixes the public grid from it.
    """
    m, s, t0 = constants.m, constants.s, constants.t0
    k_last = max(0, -(-(m - t0 - s) // s))         # smallest k ≥ 0 with t0 + (k+1)s ≥ m
    return max(2.0 * diameter * math.exp(-constants.beta * k_last), math.ldexp(2.0 * diameter, -S_FLOOR_BITS))


def exact_smooth_gaussian(center, S, constants, diameter, rng):
    """Step 7 as executed: g(B) on a public grid plus exact discrete Gaussian noise whose
    scale follows S(B).

    The grid g = 2^−k is fixed by the public S_lo (:func:`smooth_sensitivity_floor`):
    S_lo/(αg) ∈ [2^32, 2^33). The integer noise scale is σ_int(B) ≥ c·S(B)/(αg) with
    c = 1 + √D·g/S_lo (rounded up to 2^m·w, a relative 2^−33 at most). Then for s-neighbours
    the rounded centres differ by at most min(S, S′)/g + √D ≤ α·min(σ_int(B), σ_int(B′)) — the
    shift condition of the continuous analysis holds exactly — and σ_int(B′)/σ_int(B) is
    within e^{±(β + 2^−33)}, which the calibration covers (BETA_SLACK). The continuous
    analysis therefore holds for the rounded continuous mechanism, and the discrete release
    within the slack τ of :mod:`dpcore.privacy.exact` (the proof: ``docs/privacy_as_executed.md``).

    Parameters
    ----------
    center : ndarray of shape (D,)
        g(B), the centre of attention.
    S : float
        The smooth sensitivity S(B), at least :func:`smooth_sensitivity_floor` (constants, diameter).
    constants : Alg1Constants
    diameter : float
        Λ.
    rng : numpy.random.Generator
        The noise's random stream.

    Returns
    -------
    released : ndarray of shape (D,)
    noise_scale : float
        The per-coordinate standard deviation actually added, g·σ_int.
    tau : float
        The discretisation slack (ε + 2τ, e^τ δ).
    k : int
        The grid exponent (g = 2^−k), public.
    """
    D = center.size
    alpha = constants.alpha
    s_lo = smooth_sensitivity_floor(constants, diameter)
    if not S >= s_lo:
        raise ValueError(f"S must be at least the public floor S_lo = {s_lo:g} (smooth_sensitivity_floor); got {S:g}")
    k = _grid_exponent(s_lo / alpha)
    f_alpha, f_s = Fraction(alpha), Fraction(S)
    sigma_grid = f_s / f_alpha * Fraction(2) ** k
    extra = f_s * _sqrt_up(D) / (f_alpha * Fraction(s_lo))
    m_exp, w = _plan_sigma_int(sigma_grid, extra)
    released = _gaussian_on_grid(center, k, m_exp, w, rng)
    return released, math.ldexp(_sigma_int(m_exp, w), -k), _gaussian_tau(D, m_exp, w), k


def sample_aggregate(X, f, n_subsets, epsilon, delta, *, diameter, distances=None, n_blocks=1,
                     random_state=None, ledger=None, what="sample-aggregate release of f", max_redraws=1000,
                     subset_size=None):
    """Alg. 1 on a dataset: subsample (step 3), evaluate f on every subset (step 4),
    aggregate privately (steps 5–7) and record the release in ``ledger``.

    ``f`` maps an array of rows X[S_i] to a vector of R^D (the same D for every subset);
    any randomness f needs should come from a Generator the caller controls. Returns an
    :class:`AggregateResult` with ``subsets``, ``n_draws`` and ``ledger`` filled in. The
    ledger gets ONE entry (ε, δ): the release g(B) + S(B)/α·u.

    Parameters
    ----------
    X : array_like of shape (n, ...)
        The records as rows.
    f : callable
        ``f(X[S_i]) -> array_like`` of D values.
    n_subsets : int in [2, n]
        m.
    epsilon : float > 0
    delta : float in (0, 1)
    diameter : float > 0
        Λ, as in :func:`private_aggregate`.
    distances : callable, optional
        As in :func:`private_aggregate`.
    n_blocks : int, default 1
        As in :func:`private_aggregate`.
    random_state : None, int or numpy.random.Generator, optional
        Subsets, block order and noise.
    ledger : PrivacyLedger, optional
        Ledger to record in (a new one by default).
    what : str, default "sample-aggregate release of f"
        The ledger entry's description.
    max_redraws : int ≥ 1, default 1000
        As in :func:`draw_subsets`.
    subset_size : int, optional
        As in :func:`draw_subsets`.

    Returns
    -------
    AggregateResult

    Raises
    ------
    ValueError
        If X is not finite, ε or δ is out of range, the subsets cannot be drawn
        (:func:`draw_subsets`), f's outputs differ in length, :func:`private_aggregate`
        refuses B, or the release exceeds the ledger's budget.
    """
    X = check_array(X, "X", ensure_2d=False)
    n = X.shape[0]
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    rng = check_random_state(random_state)
    subsets, n_draws = draw_subsets(n, n_subsets, rng, subset_size=subset_size, max_redraws=max_redraws)
    outs = [np.asarray(f(X[idx]), dtype=np.float64).ravel() for idx in subsets]
    if len({o.size for o in outs}) != 1:
        raise ValueError("f must return vectors of the same length D on every subset")
    B = np.stack(outs)
    res = private_aggregate(B, epsilon, delta, diameter=diameter, distances=distances, n_blocks=n_blocks,
                            random_state=rng)
    res.subsets = subsets
    res.n_draws = n_draws
    ledger = PrivacyLedger() if ledger is None else ledger
    c = res.constants
    ledger.record(what, MECHANISM_NAME, epsilon, delta,
                  note=f"{privacy_note(c, n)}; m={c.m} subsets of {subsets.shape[1]} points, D={c.D}, s={c.s}, "
                       f"t0={c.t0}")
    res.ledger = ledger
    return res
