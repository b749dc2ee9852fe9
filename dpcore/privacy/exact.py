"""Additive releases as executed: values on a public dyadic grid plus exact integer noise.

Every Gaussian or Laplace release of :mod:`dpcore` goes through this module. A release of a
real vector x ∈ R^D is computed as

    a = round(x / g) ∈ Z^D,   y = a + Z,   Z integer noise drawn exactly,   release g·y,

with g = 2^−k a public power of two (so x / g is exact in binary floating point and g·y is a
float function of the integer y, exact below 2^53 grid steps: no float arithmetic touches the
noise) and Z from the integer samplers of
:mod:`dpcore.privacy.exact_samplers` (Canonne, Kamath & Steinke 2020; integer arithmetic
only). Every point of the grid is a possible output whatever the input, so no release can
rule out a neighbouring input (the floating-point attack of Mironov 2012 has nothing to
find). The proofs are in ``docs/privacy_as_executed.md``; in short:

*Rounding.* |round(x/g) − x/g| ≤ 1/2 per coordinate, so the integer query a has
L2 sensitivity Δ₂/g + √D and L1 sensitivity Δ₁/g + D. The noise is inflated by exactly that
factor (σ_int = σ/g + σ√D/Δ₂, t = b/g + bD/Δ₁, both rounded up), so the ratio of noise to
sensitivity — the only thing the privacy analyses read — is never below the continuous
mechanism's: the rounding is paid for in the sensitivity. The grid is chosen so that the
integer noise scale is about 2^32: the inflation is a relative √D·σ/(Δ·2^32); values up to
2^28·σ fit the int64 grid (larger ones are clamped, which keeps the privacy and warns).

*Laplace.* The discrete Laplace of scale t on Z with an integer query of L1 sensitivity Δ_int
is (Δ_int/t)-DP exactly (pure DP, no slack): the ε delivered is ≤ the ε asked.

*Gaussian.* The discrete Gaussian N_Z(0, σ²) with σ ≥ 2^32 is within a factor e^{±τ₁} of the
rounded continuous Gaussian round(σN) at every |k| ≤ 64σ, τ₁ = 171/σ² (Poisson summation for
the normaliser; Jensen and sinh(a)/a ≤ e^{a²/6} for the cell integral). The rounded
continuous mechanism a + round(σN) = round(a + σN) is post-processing of the continuous
Gaussian mechanism on the integer query a, so every continuous analysis (analytic Gaussian,
Gaussian-DP composition, privacy-loss distributions, sample-aggregate's smooth-sensitivity
profile) holds for it; the discrete release then satisfies (ε + 2τ, e^τ·δ + 2D·e^{−2047}(1+e^{ε+τ}))
with τ = D·τ₁ ≤ D·9.3e-18 per release, summed over composed releases (one D = 165 release:
1.5e-15; 10⁵ coordinates in all: 1.9e-12). The ledgers record the continuous analysis's
(ε, δ); the slack is reported by each plan (:attr:`GaussianPlan.tau`,
``AggregateResult.discretisation_slack``), not added to them.

*What "exact" covers.* The analyses take Δ to be the sensitivity of the real-valued query;
what is rounded is the float-computed value (a float matrix product or sum), whose difference
between neighbours can exceed Δ by that computation's own rounding error (relative ~1e-16).
That error is not paid for; the noise is.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..validation import check_random_state, check_real
from .exact_samplers import discrete_gaussian_noise, discrete_laplace_int_noise, geometric_noise

__all__ = ["GRID_BITS", "GaussianPlan", "LaplacePlan", "plan_gaussian", "plan_laplace", "gaussian_release",
           "laplace_release", "bounded_laplace_release", "plan_bounded_laplace", "BoundedLaplacePlan",
           "on_grid_support", "TAU_PER_COORDINATE_BOUND", "FLOAT_PARTS", "execution_note"]

#: the integer noise scale σ/g (or b/g) lies in [2^GRID_BITS, 2^(GRID_BITS+1)) before inflation
GRID_BITS = 32
#: |x/g| is clamped below this (a 1-Lipschitz map: the sensitivity bound still holds), so that
#: a + noise stays far inside int64
_CLAMP = float(2 ** 61)
#: largest exponent m of σ_int² = 2^m·w the sampler takes
_M_MAX = 52
#: τ₁·σ_int² for |k| ≤ 64σ: 64²/24 (< 171)
_TAU_NUMERATOR = 64 ** 2 / 24
#: the per-coordinate slack at the smallest σ_int (2^32): 171/2^64
TAU_PER_COORDINATE_BOUND = _TAU_NUMERATOR / 2.0 ** (2 * GRID_BITS)


def _grid_exponent(scale):
    """k with scale·2^k in [2^GRID_BITS, 2^(GRID_BITS+1)) (exactly, from the float's exponent)."""
    _, e = math.frexp(scale)             # scale = f·2^e, f in [0.5, 1): scale in [2^(e−1), 2^e)
    return GRID_BITS - (e - 1)


def _sqrt_up(n):
    """⌈√n⌉ for a positive int (an upper bound on √n)."""
    r = math.isqrt(n)
    return r if r * r == n else r + 1


def _to_grid(value, k, low=-_CLAMP, high=_CLAMP, warn=True):
    """round(clamp(value·2^k)) as int64: exact (a power-of-two scaling), ties to even. Clamping
    is 1-Lipschitz, so the sensitivity bound still holds; a value beyond the grid's range loses
    accuracy (never privacy) and a RuntimeWarning says so."""
    v = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        raise ValueError("value must be finite")
    v = np.ldexp(v, k)
    if warn and v.size and (v.min() < low or v.max() > high):
        warnings.warn("a released value is more than 2^28 noise scales from 0 and was clamped to the release "
                      "grid's range (privacy unaffected; that coordinate's accuracy is lost). This warning is for "
                      "the data's curator: it depends on the data", RuntimeWarning, stacklevel=3)
    return np.rint(np.clip(v, low, high)).astype(np.int64)


def _from_grid(y, k):
    """The released floats g·y (post-processing of the integer release y)."""
    return np.ldexp(y.astype(np.float64), -k)


def _sigma_int(m, w):
    """σ_int = √(2^m·w) as a float (for display and the effective σ)."""
    return math.sqrt(w) * 2.0 ** (m / 2)


def _gaussian_tau(dim, m, w):
    """The slack τ = D·τ₁ of a discrete Gaussian release with σ_int² = 2^m·w (module docstring)."""
    return dim * _TAU_NUMERATOR / (w * 2.0 ** m)


def _gaussian_on_grid(value, k, m, w, rng):
    """round(value·2^k) + N_Z(0, 2^m·w) noise, released as floats on the grid 2^−k."""
    a = _to_grid(value, k)
    return _from_grid(a + discrete_gaussian_noise(m, w, size=a.shape, random_state=rng), k)


# --------------------------------------------------------------------------- Gaussian
@dataclass(frozen=True)
class GaussianPlan:
    """The public plan of one exact Gaussian release (all of it data-independent).

    Attributes
    ----------
    k : int
        Grid g = 2^−k.
    m, w : int
        σ_int² = 2^m·w: the integer noise's variance parameter (exact).
    dim : int
        D, the number of coordinates.
    sigma : float
        The continuous σ asked for.
    sensitivity : float
        The continuous L2 sensitivity Δ₂ the σ was calibrated for.
    sigma_effective : float
        g·σ_int: the noise actually added, ≥ ``sigma``.
    tau : float
        The discretisation slack of the module docstring: (ε + 2τ, e^τ δ) of the continuous
        analysis.
    """
    k: int
    m: int
    w: int
    dim: int
    sigma: float
    sensitivity: float
    sigma_effective: float
    tau: float

    @property
    def grid(self):
        """g = 2^−k."""
        return math.ldexp(1.0, -self.k)

    @property
    def sigma_int(self):
        """σ_int = √(2^m·w) (a float, for display)."""
        return _sigma_int(self.m, self.w)

    @property
    def noise_multiplier(self):
        """σ_int / Δ_int ≥ σ/Δ₂: what a Gaussian privacy analysis of this release reads."""
        return self.sigma_int / (self.sensitivity * 2.0 ** self.k + math.sqrt(self.dim))


def _plan_sigma_int(sigma_grid, extra):
    """(m, w) with 2^m·w ≥ (sigma_grid + extra)², both exact Fractions; w in [2^m, 2^(m+2))."""
    s = sigma_grid + extra
    s2 = s * s
    m = max(0, math.floor(math.log2(s.numerator) - math.log2(s.denominator)))
    while Fraction(2) ** (2 * m) > s2 and m > 0:    # exact: 2^m ≤ s
        m -= 1
    while Fraction(2) ** (2 * (m + 1)) <= s2:
        m += 1
    if m > _M_MAX:
        raise ValueError(f"the noise is more than 2^{_M_MAX - GRID_BITS} times the grid's range "
                         "(σ·√D/Δ is too large); lower the noise or raise the sensitivity")
    w = math.ceil(s2 / Fraction(2) ** m)
    return m, w


def plan_gaussian(sigma, sensitivity, dim):
    """The grid and integer noise of an exact Gaussian release of ``dim`` coordinates.

    Parameters
    ----------
    sigma : float > 0
        The continuous noise σ a privacy analysis calibrated for L2 sensitivity ``sensitivity``.
    sensitivity : float > 0
        Δ₂ of the released vector over neighbouring datasets.
    dim : int ≥ 1
        D.

    Returns
    -------
    GaussianPlan

    Raises
    ------
    ValueError
        If a parameter is out of range.
    """
    sigma = check_real(sigma, "sigma", 0.0, None, low_inclusive=False)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    dim = int(dim)
    if dim < 1:
        raise ValueError(f"dim must be an integer >= 1; got {dim}")
    k = _grid_exponent(sigma)
    scale = Fraction(2) ** k
    sigma_grid = Fraction(sigma) * scale                        # σ/g, exact
    extra = Fraction(sigma) * _sqrt_up(dim) / Fraction(sensitivity)   # σ√D/Δ: pays the rounding
    m, w = _plan_sigma_int(sigma_grid, extra)
    return GaussianPlan(k=k, m=m, w=w, dim=dim, sigma=sigma, sensitivity=sensitivity,
                        sigma_effective=math.ldexp(_sigma_int(m, w), -k), tau=_gaussian_tau(dim, m, w))


def gaussian_release(value, sigma, sensitivity, random_state=None, plan=None):
    """Release ``value`` with Gaussian noise of (at least) σ, exactly on a public grid.

    The privacy of the release is that of the continuous Gaussian mechanism with noise σ and
    L2 sensitivity ``sensitivity`` (any analysis of it), up to the slack τ of
    :class:`GaussianPlan` (module docstring).

    Parameters
    ----------
    value : array_like
        The exact answer (any shape).
    sigma : float > 0
    sensitivity : float > 0
        Δ₂ of ``value``.
    random_state : None, int or numpy.random.Generator
    plan : GaussianPlan, optional
        A plan from :func:`plan_gaussian` for the same (σ, Δ₂, size) (saves recomputing it).

    Returns
    -------
    ndarray of float64
        ``value``'s shape; every entry is an integer multiple of the plan's grid.
    """
    value = np.asarray(value, dtype=np.float64)
    if plan is None:
        plan = plan_gaussian(sigma, sensitivity, max(value.size, 1))
    elif (plan.dim, plan.sigma, plan.sensitivity) != (max(value.size, 1), float(sigma), float(sensitivity)):
        raise ValueError(f"plan is for dim = {plan.dim}, sigma = {plan.sigma:g}, sensitivity = {plan.sensitivity:g}; "
                         f"got {value.size} values, sigma = {sigma:g}, sensitivity = {sensitivity:g}")
    return _gaussian_on_grid(value, plan.k, plan.m, plan.w, check_random_state(random_state))


# --------------------------------------------------------------------------- Laplace
@dataclass(frozen=True)
class LaplacePlan:
    """The public plan of one exact Laplace release.

    Attributes
    ----------
    k : int
        Grid g = 2^−k.
    t : int
        Integer noise scale: P(z) ∝ exp(−|z|/t).
    dim : int
    scale : float
        The continuous scale b asked for.
    sensitivity : float
        Δ₁ the scale was calibrated for.
    epsilon_delivered : float
        (Δ₁/g + D)/t (rounded up): the exact ε of the release, ≤ Δ₁/b.
    """
    k: int
    t: int
    dim: int
    scale: float
    sensitivity: float
    epsilon_delivered: float

    @property
    def grid(self):
        """g = 2^−k."""
        return math.ldexp(1.0, -self.k)


def plan_laplace(scale, sensitivity, dim):
    """Grid and integer scale of an exact Laplace release (pure ε-DP with ε ≤ Δ₁/b).

    Parameters
    ----------
    scale : float > 0
        b of the continuous mechanism (ε = Δ₁/b).
    sensitivity : float > 0
        Δ₁ of the released vector.
    dim : int ≥ 1

    Returns
    -------
    LaplacePlan
    """
    scale = check_real(scale, "scale", 0.0, None, low_inclusive=False)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    dim = int(dim)
    if dim < 1:
        raise ValueError(f"dim must be an integer >= 1; got {dim}")
    k = _grid_exponent(scale)
    b = Fraction(scale)
    t_exact = b * Fraction(2) ** k + b * dim / Fraction(sensitivity)      # b/g + bD/Δ₁
    t = math.ceil(t_exact)
    if t > 2 ** 56:
        raise ValueError("the Laplace scale is too large for its sensitivity (b·D/Δ₁ above 2^55)")
    eps = (Fraction(sensitivity) * Fraction(2) ** k + dim) / t
    eps_up = float(eps)
    if Fraction(eps_up) < eps:
        eps_up = math.nextafter(eps_up, math.inf)
    return LaplacePlan(k=k, t=t, dim=dim, scale=scale, sensitivity=sensitivity, epsilon_delivered=eps_up)


def laplace_release(value, scale, sensitivity, random_state=None):
    """Release ``value`` with Laplace noise of scale (at least) b, exactly on a public grid:
    (Δ₁/b)-DP as executed (:class:`LaplacePlan`).

    Parameters
    ----------
    value : array_like
    scale : float > 0
    sensitivity : float > 0
        Δ₁ of ``value``.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of float64
        ``value``'s shape, on the plan's grid.
    """
    value = np.asarray(value, dtype=np.float64)
    plan = plan_laplace(scale, sensitivity, max(value.size, 1))
    rng = check_random_state(random_state)
    a = _to_grid(value, plan.k)
    z = discrete_laplace_int_noise(plan.t, size=a.shape, random_state=rng)
    return _from_grid(a + z, plan.k)


# --------------------------------------------------------------------------- bounded-domain Laplace
def _log_z_ratio(q_log, delta_int, width):
    """log max Z(j)/Z(0) over 0 ≤ j ≤ min(Δ, W) for Z(a) = Σ_{y=0}^{W} q^|y−a| (q = e^{q_log}).

    Z(a)·(1 − q) = 1 + q − q^{a+1} − q^{W−a+1}: concave in a, symmetric about W/2, so log Z is
    concave and its largest increase over a window of length Δ starts at a = 0 and ends at
    min(Δ, the nearest integer to W/2)."""
    j = min(delta_int, width // 2)
    q = math.exp(q_log)
    # (1 − q)(Z(j) − Z(0)) = q(1 − q^j)(1 − q^{W−j}) and (1 − q)Z(0) = 1 − q^{W+1}: the log of the
    # ratio as log1p of a product of expm1 terms, accurate to a few ulp (no difference of two logs)
    gain = q * math.expm1(j * q_log) * math.expm1((width - j) * q_log)
    return math.log1p(gain / -math.expm1((width + 1) * q_log))


@dataclass(frozen=True)
class BoundedLaplacePlan:
    """The public plan of an exact bounded-domain Laplace release of one coordinate.

    Attributes
    ----------
    k : int
        Grid g = 2^−k.
    t : int
        Integer scale.
    lo, hi : int
        The output interval on the grid, [lo·g, hi·g] ⊆ [lower, upper].
    epsilon_delivered : float
        Δ_int/t + log max Z ratio, computed with a safety margin: ≤ the ε asked.
    sensitivity_int : int
        Δ_int = ⌈Δ·2^k⌉ + 1, the integer query's sensitivity after rounding.
    """
    k: int
    t: int
    lo: int
    hi: int
    epsilon_delivered: float
    sensitivity_int: int = 0


#: relative margin on the floating-point evaluation of the bounded Laplace's ε (public constants only)
_BL_MARGIN = 1e-9


def plan_bounded_laplace(lower, upper, sensitivity, epsilon):
    """The grid, interval and integer scale t of an exact bounded-domain Laplace release: the
    smallest t whose exact ε, Δ_int/t + log max_j Z(j)/Z(0) (the discrete analogue of Holohan
    et al. 2020's Δc), is at most ε (evaluated with a relative margin of 1e-9).

    Parameters
    ----------
    lower, upper : float, lower < upper
    sensitivity : float > 0
        Δ of one coordinate.
    epsilon : float > 0

    Returns
    -------
    BoundedLaplacePlan
    """
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"the interval must be finite with lower < upper; got [{lower:g}, {upper:g}]")
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    epsilon = check_real(epsilon, "epsilon", 0.0, None, low_inclusive=False)
    # the grid of the noise scale, coarsened (publicly: the interval is public) until the interval fits int64
    k = _grid_exponent(sensitivity / epsilon)
    k = min(k, 60 - math.frexp(max(abs(lower), abs(upper)))[1])
    lo = math.ceil(math.ldexp(lower, k))
    hi = math.floor(math.ldexp(upper, k))
    if hi - lo < 1:
        raise ValueError(f"the interval [{lower:g}, {upper:g}] holds fewer than two points of the release grid")
    width = hi - lo
    d_int = math.ceil(Fraction(sensitivity) * Fraction(2) ** k) + 1

    def eps_of(t):     # an upper bound on the worst privacy loss; exact when 2Δ ≤ W (the usual case)
        return (min(d_int, width) / t + _log_z_ratio(-1.0 / t, d_int, width)) * (1 + _BL_MARGIN)

    t_lo = max(1, math.floor(min(d_int, width) / epsilon))      # ε(t) ≥ min(Δ, W)/t: smaller t fail
    t_hi = t_lo
    while eps_of(t_hi) > epsilon:
        t_hi *= 2
        if t_hi > 2 ** 56:
            raise ValueError("no integer scale reaches this epsilon on the grid")
    while t_hi - t_lo > 1:
        mid = (t_lo + t_hi) // 2
        if eps_of(mid) <= epsilon:
            t_hi = mid
        else:
            t_lo = mid
    t = t_hi if eps_of(t_lo) > epsilon else t_lo
    return BoundedLaplacePlan(k=k, t=t, lo=lo, hi=hi, epsilon_delivered=eps_of(t), sensitivity_int=d_int)


def bounded_laplace_release(values, lower, upper, sensitivity, epsilon, random_state=None):
    """Each coordinate of ``values`` clipped into [lower, upper] and released with discrete
    Laplace noise conditioned on the interval: P(y) ∝ exp(−|y − v|/t) over the grid points of
    [lower, upper]; ε-DP per coordinate as executed (:func:`plan_bounded_laplace`).

    Sampling is exact with a bounded expected number of rounds: a fair sign s and a
    geometric magnitude M reduced modulo (room on the larger side + 1) — by memorylessness
    that is exactly the geometric law truncated there — accepted when M fits the room on
    side s (and not s = −, M = 0, so 0 is counted once). Each accepted (s, M) has probability
    ∝ e^{−M/t}: the conditioned law. At least one side always fits, so each round accepts
    with probability ≥ 1/2·(1 − P(M = 0)).

    Parameters
    ----------
    values : array_like of shape (d,)
    lower, upper : float
    sensitivity : float > 0
    epsilon : float > 0
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of float64 of shape (d,), each in [lower, upper] on the plan's grid.
    """
    plan = plan_bounded_laplace(lower, upper, sensitivity, epsilon)
    rng = check_random_state(random_state)
    v = _to_grid(values, plan.k, float(plan.lo), float(plan.hi), warn=False).ravel()
    out = _bounded_integer_laplace(v, plan.lo, plan.hi, plan.t, rng)
    return _from_grid(out, plan.k).reshape(np.shape(values))


def _bounded_integer_laplace(v, lo, hi, t, rng):
    """Integers y in [lo, hi] with P(y) ∝ exp(−|y − v|/t), one per entry of the int64 array v
    (each in [lo, hi]): the sampler of :func:`bounded_laplace_release`."""
    up, down = hi - v, v - lo
    big = np.maximum(up, down) + 1
    out = np.empty_like(v)
    pending = np.arange(v.size)
    while pending.size:
        n = pending.size
        sign = rng.integers(0, 2, size=n).astype(bool)            # True: downwards
        mag = geometric_noise(t, size=n, random_state=rng) % big[pending]
        room = np.where(sign, down[pending], up[pending])
        ok = (mag <= room) & ~(sign & (mag == 0))
        idx = pending[ok]
        out[idx] = v[idx] + np.where(sign[ok], -mag[ok], mag[ok])
        pending = pending[~ok]
    return out


# --------------------------------------------------------------------------- checks
def on_grid_support(released, k, lo=None, hi=None):
    """For each released float, whether it is g·y for an integer y of the support (all of Z,
    or [lo, hi] for the bounded Laplace): exactly the releases a neighbouring input can also
    produce under these samplers (their noise has every integer of the support in its
    support). Used by the tests to decide reachability exactly.

    Parameters
    ----------
    released : array_like of float
    k : int
    lo, hi : int, optional

    Returns
    -------
    ndarray of bool
    """
    y = np.ldexp(np.asarray(released, dtype=np.float64), k)
    ok = np.isfinite(y) & (y == np.floor(y))
    if lo is not None:
        ok &= y >= lo
    if hi is not None:
        ok &= y <= hi
    return ok


# --------------------------------------------------------------------------- what each estimator runs exactly
#: the parts of each private estimator that stay floating-point, and why (the privacy boxes show it)
FLOAT_PARTS = {
    "GibbsSubspaceClustering": "the Gibbs sampler's continuous draws (matrix Bingham: float normals through float "
                               "linear algebra) are floating-point — no exact sampler of that law is known, and its "
                               "privacy is asymptotic anyway; its assignments and chain choice are drawn exactly, its "
                               "acceptance tests bounded and paid from ε (the ledger's 'float part' entry)",
    "DPLloydKMeans": "all of its noise is diffprivlib's own floating-point Laplace (a peer run as published): it can "
                     "leak through low-order bits (Mironov 2012)",
}

#: the estimators' names in the pages' words
METHOD_WORDS = {"GibbsSubspaceClustering": "Gibbs", "CandidateKMeans": "the candidate method", "DPHD": "DPHD",
                "DPTauCC": "DP-τCC", "DPLloydKMeans": "DP-Lloyd (diffprivlib)", "SuLQKMeans": "SuLQ k-means",
                "SuLQKPlane": "SuLQ k-plane", "SampleAggregateSubspace": "sample-aggregate",
                "SampleAggregateKMeans": "sample-aggregate k-means", "SparseDPLloydKMeans": "DP-KMeans",
                "DPNMF": "DPNMF"}


def execution_note(*estimators):
    """One sentence on how the estimators' noise is drawn as executed: exact, and what stays float.

    Parameters
    ----------
    *estimators : estimator instances, classes or class names

    Returns
    -------
    str
    """
    names = []
    for e in estimators:
        name = e if isinstance(e, str) else e.__name__ if isinstance(e, type) else type(e).__name__
        if name not in names:
            names.append(name)
    own = [n for n in names if n != "DPLloydKMeans"]
    parts = []
    if own or not names:
        parts.append("Noise as executed: every Gaussian and Laplace release of dpcore's own methods is exact — rounded "
                     "to a public grid with integer noise drawn exactly, so no released number rules out a "
                     "neighbouring dataset")
    floats = [(f"{METHOD_WORDS.get(n, n)}: " if len(names) > 1 else "") + FLOAT_PARTS[n] for n in own if n in FLOAT_PARTS]
    if floats:
        parts[-1] += "; floating-point: " + "; ".join(floats)
    if "DPLloydKMeans" in names:
        parts.append(("" if own else "Noise as executed: ") + "DP-Lloyd (diffprivlib): " + FLOAT_PARTS["DPLloydKMeans"])
    return ". ".join(parts) + "."
