"""Rényi differential privacy (RDP) of the accountant's events, and its conversion to (ε, δ).

A mechanism is (α, r)-RDP when the Rényi divergence of order α between its output distributions
on any two neighbours is at most r (Mironov 2017); RDP curves of adaptively composed mechanisms
add up order by order. :meth:`dpcore.privacy.PrivacyAccountant.rdp_total` uses this module:

- Gaussian, noise multiplier z, count n: r(α) = α·n/(2z²), exact (Mironov 2017).
- Laplace, noise multiplier b (ε₀ = 1/b): Mironov 2017, Prop. 6, exact:
  r(α) = ε₀ + log(1 + (α − 1)(e^((1−2α)ε₀) − 1)/(2α − 1))/(α − 1) (:func:`laplace_rdp`, the
  numerics of dp-accounting's own ``_laplace_rdp``).
- discrete Laplace, P(z) ∝ e^(−|z|/s) on the integers, integer sensitivity Δ: exact for a shift of
  d (:func:`discrete_laplace_rdp`; derivation in its Notes), maximised over the ways an L1 shift of
  Δ can split into integer shifts of independent coordinates. For d = 1 it is the curve of
  randomized response at ε = 1/s.
- pure ε-DP releases (exponential mechanism, approx_dp and slack with δ = 0): the curve of
  randomized response, r(α) = (log cosh((α − ½)ε) − log cosh(ε/2))/(α − 1)
  (:func:`pure_dp_rdp`). Every ε-DP pair of output distributions is a post-processing of
  randomized response (its trade-off curve is at least RR's, Kairouz, Oh & Viswanath 2015;
  Blackwell's theorem, as in Dong, Roth & Su 2019), so by data processing this bounds
  every ε-DP mechanism, and it is never above min(ε, αε²/2) (Bun & Steinke 2016, Prop. 3.3).
- releases with δ > 0 (approx_dp, slack) are not RDP: they are taken apart, their δ comes off the
  target δ and their ε is added. An (ε, δ)-DP pair of output distributions is a mixture
  (1 − δ)·(an ε-indistinguishable pair) + δ·(anything) (Kairouz, Oh & Viswanath 2015; Murtagh &
  Vadhan 2016), i.e. δ-approximately (α, ε)-RDP at every order; approximate RDP composes by adding
  the δ and the curves (as approximate zCDP, Bun & Steinke 2016, §8), and a constant ε added to the
  curve adds exactly ε to the conversion below.

Conversion (:func:`rdp_to_dp`): the improved bound of Canonne, Kamath & Steinke 2020 (Prop. 12;
also Asoodeh et al. 2020, eq. 20), ε = r(α) + log(1 − 1/α) − log(δα)/(α − 1), minimised over a
public grid of orders, with dp-accounting's shortcut ε = 0 where δ² > 1 − e^(−r(α)) (the
Bretagnolle–Huber bound on total variation) — the same computation as dp-accounting's
``RdpAccountant.get_epsilon``. Where every RDP part is pure, the order α = ∞ (the sum of the pure
ε) is also tried.
"""
from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["RDP_ORDERS", "gaussian_rdp", "laplace_rdp", "pure_dp_rdp", "discrete_laplace_rdp", "event_rdp",
           "rdp_to_dp"]

#: the public grid of Rényi orders: dp-accounting's ``DEFAULT_RDP_ORDERS`` (1.1 … 10.9 by 0.1,
#: 11 … 63, 128, 256, 512, 1024)
RDP_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024])
#: an L1 sensitivity up to this is split over coordinates exactly in :func:`discrete_laplace_rdp`
_MAX_SPLIT = 64


def _check_order(order):
    a = float(order)
    if not (a > 1.0) or math.isnan(a):
        raise ValueError(f"a Renyi order must be > 1; got {order!r}")
    return a


def _check_eps(epsilon, name="epsilon"):
    e = float(epsilon)
    if not (0.0 <= e < math.inf):
        raise ValueError(f"{name} must be a finite number >= 0; got {epsilon!r}")
    return e


def gaussian_rdp(mu, order):
    """RDP of μ-GDP (a Gaussian of noise multiplier 1/μ; n releases of multiplier z: μ = √n/z)
    at order α: α·μ²/2 (Mironov 2017), exact.

    Parameters
    ----------
    mu : float ≥ 0
    order : float > 1

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``mu`` is negative or not finite, or ``order`` ≤ 1.
    """
    mu = _check_eps(mu, "mu")
    return _check_order(order) * mu * mu / 2.0


def laplace_rdp(epsilon, order):
    """RDP at order α of one Laplace release of scale b = Δ/ε (Mironov 2017, Prop. 6), exact:
    ε + log(1 + (α − 1)(e^((1−2α)ε) − 1)/(2α − 1))/(α − 1).

    For 1 < α < 1.1 the logarithm is a Taylor series, as in dp-accounting's ``_laplace_rdp``.

    Parameters
    ----------
    epsilon : float ≥ 0
        1/noise multiplier (the release's pure ε).
    order : float > 1

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``epsilon`` is negative or not finite, or ``order`` ≤ 1.
    """
    eps, a = _check_eps(epsilon), _check_order(order)
    if eps == 0.0:
        return 0.0
    if a < 1.1:
        c = math.expm1(eps * (1 - 2 * a)) / (2 * a - 1)
        v = -c * (a - 1)
        return eps + c * math.fsum(v ** (k - 1) / k for k in range(1, 100))
    return eps + math.log1p((a - 1) * math.expm1(eps * (1 - 2 * a)) / (2 * a - 1)) / (a - 1)


def _log_cosh(x):
    x = abs(x)
    if x > 20.0:
        return x + math.log1p(math.exp(-2.0 * x)) - math.log(2.0)
    return math.log1p(2.0 * math.sinh(x / 2.0) ** 2)


def pure_dp_rdp(epsilon, order):
    """RDP at order α that every ε-DP release satisfies: that of randomized response,
    (log cosh((α − ½)ε) − log cosh(ε/2))/(α − 1).

    Randomized response's pair of output distributions, (e^ε, 1)/(1 + e^ε) and (1, e^ε)/(1 + e^ε),
    has Σ p^α q^(1−α) = (e^(αε) + e^((1−α)ε))/(1 + e^ε) = cosh((α − ½)ε)/cosh(ε/2). Every ε-DP pair
    is a post-processing of it (Kairouz, Oh & Viswanath 2015; Blackwell's theorem, Dong, Roth & Su 2019), so
    by data processing this is the tight RDP bound of pure ε-DP; it is at most min(ε, αε²/2)
    (Bun & Steinke 2016, Prop. 3.3) and tends to ε as α → ∞.

    Parameters
    ----------
    epsilon : float ≥ 0
    order : float > 1

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``epsilon`` is negative or not finite, or ``order`` ≤ 1.
    """
    eps, a = _check_eps(epsilon), _check_order(order)
    if eps == 0.0:
        return 0.0
    r = (_log_cosh((a - 0.5) * eps) - _log_cosh(eps / 2.0)) / (a - 1.0)
    return min(max(r, 0.0), eps, a * eps * eps / 2.0)


def _dlap_shift_rdp(inv_scale, d, a):
    """Exact RDP at order a of the discrete Laplace P(z) ∝ r^|z|, r = e^(−1/s), against its shift by
    the integer d ≥ 1 (see :func:`discrete_laplace_rdp`)."""
    if d == 1:
        return pure_dp_rdp(inv_scale, a)
    e1 = d * inv_scale
    # S = Σ_{z=1}^{d−1} q^z, q = r^(2a−1)
    log_q = -(2.0 * a - 1.0) * inv_scale
    s = math.exp(log_q) * (-math.expm1((d - 1) * log_q)) / (-math.expm1(log_q))
    one_minus_r = -math.expm1(-inv_scale)
    inner = 1.0 + math.exp(-(2.0 * a - 1.0) * e1) + one_minus_r * s
    r = e1 + (math.log(inner) - math.log1p(math.exp(-inv_scale))) / (a - 1.0)
    return min(max(r, 0.0), pure_dp_rdp(e1, a))


def discrete_laplace_rdp(scale, sensitivity, order):
    """RDP at order α of one discrete Laplace release, P(z) ∝ e^(−|z|/s) on the integers, of an
    integer query of L1 sensitivity Δ.

    Parameters
    ----------
    scale : Fraction or float > 0
        s (:class:`~dpcore.privacy.PrivacyEvent`'s ``scale``).
    sensitivity : int ≥ 1
        Δ.
    order : float > 1

    Returns
    -------
    float
        The largest exact RDP over the ways an L1 shift of Δ splits into integer shifts
        d₁ + … + d_m = Δ of independent coordinates (for Δ ≤ 64; above, randomized response's
        bound at the pure ε = Δ/s, :func:`pure_dp_rdp`).

    Raises
    ------
    ValueError
        If a parameter is out of range.

    Notes
    -----
    With r = e^(−1/s), p(z) = (1 − r)/(1 + r)·r^|z| and q(z) = p(z − d), splitting the sum over z ≤ 0,
    0 < z < d and z ≥ d gives

        Σ_z p^α q^(1−α) = [e^((α−1)ε_d) + e^(−αε_d) + (1 − r)·e^((α−1)ε_d)·Σ_{z=1}^{d−1} r^((2α−1)z)] / (1 + r)

    with ε_d = d/s, so r(α) = ε_d + (log(1 + e^(−(2α−1)ε_d) + (1 − r)·Σ_{z=1}^{d−1} r^((2α−1)z))
    − log(1 + r))/(α − 1). The pair is symmetric (a shift by −d gives the same), and for d = 1 the
    privacy loss takes only the values ±1/s: randomized response at ε = 1/s.
    """
    a = _check_order(order)
    inv = 1.0 / float(Fraction(scale)) if isinstance(scale, (Fraction, int)) else 1.0 / float(scale)
    if not (0.0 < inv < math.inf):
        raise ValueError(f"scale must be a finite number > 0; got {scale!r}")
    if isinstance(sensitivity, bool) or int(sensitivity) != sensitivity or sensitivity < 1:
        raise ValueError(f"sensitivity must be an integer >= 1; got {sensitivity!r}")
    delta = int(sensitivity)
    if delta > _MAX_SPLIT:
        return pure_dp_rdp(delta * inv, a)
    f = [0.0] + [_dlap_shift_rdp(inv, d, a) for d in range(1, delta + 1)]
    best = [0.0] * (delta + 1)      # best[n]: the largest sum of f over splits of n
    for n in range(1, delta + 1):
        best[n] = max(f[d] + best[n - d] for d in range(1, n + 1))
    return best[delta]


def event_rdp(event, orders=RDP_ORDERS):
    """The RDP curve of a :class:`~dpcore.privacy.PrivacyEvent` (all ``count`` releases, slack
    included) and the part that is not RDP.

    Parameters
    ----------
    event : PrivacyEvent
    orders : sequence of float > 1, default :data:`RDP_ORDERS`

    Returns
    -------
    rdp : list of float
        r(α) at each order.
    pure : float
        The event's RDP part at α = ∞ (its pure ε), inf for a Gaussian.
    approx : (float, float)
        The (ε, δ) of the releases with δ > 0 (approx_dp, slack), added by basic composition.
    """
    n = int(event.count)
    kind = event.kind
    approx_eps, approx_delta = [], []
    if kind == "gaussian":
        mu2 = n / float(event.noise_multiplier) ** 2
        rdp = [float(a) * mu2 / 2.0 for a in orders]
        pure = math.inf
    elif kind == "laplace":
        e0 = 1.0 / float(event.noise_multiplier)
        rdp = [n * laplace_rdp(e0, a) for a in orders]
        pure = n * e0
    elif kind == "discrete_laplace":
        rdp = [n * discrete_laplace_rdp(event.scale, event.sensitivity, a) for a in orders]
        pure = float(n * int(event.sensitivity) / Fraction(event.scale))
    elif kind == "joint":          # the parts' curves add up; (ε, δ) parts of them go to the basic part
        rdp, pure = [0.0] * len(orders), 0.0
        for part in event.parts:
            r, p_pure, (a_eps, a_delta) = event_rdp(part, orders)
            rdp = [math.fsum((x, n * y)) for x, y in zip(rdp, r)]
            pure = pure + n * p_pure
            approx_eps.append(n * a_eps)
            approx_delta.append(n * a_delta)
    elif kind == "exponential" or (kind == "approx_dp" and event.delta == 0.0):
        rdp = [n * pure_dp_rdp(event.epsilon, a) for a in orders]
        pure = n * float(event.epsilon)
    else:
        rdp, pure = [0.0] * len(orders), 0.0
        approx_eps.append(n * float(event.epsilon))
        approx_delta.append(n * float(event.delta))
    s_eps, s_delta = event.slack
    if s_delta > 0.0:
        approx_eps.append(n * s_eps)
        approx_delta.append(n * s_delta)
    elif s_eps > 0.0:
        rdp = [math.fsum((r, n * pure_dp_rdp(s_eps, a))) for r, a in zip(rdp, orders)]
        pure = pure + n * s_eps
    return rdp, pure, (math.fsum(approx_eps), math.fsum(approx_delta))


def rdp_to_dp(orders, rdp, delta):
    """ε at δ from an RDP curve: Canonne, Kamath & Steinke 2020, Prop. 12 (dp-accounting's
    ``compute_epsilon``), minimised over the orders.

    Parameters
    ----------
    orders : sequence of float > 1
    rdp : sequence of float ≥ 0
        r(α) at each order.
    delta : float in [0, 1]

    Returns
    -------
    epsilon : float
        ≥ 0; inf when no order gives a bound (δ = 0 with a nonzero curve).
    order : float or None
        The optimal order (None when the curve is 0 everywhere and δ = 0).

    Raises
    ------
    ValueError
        If the lengths differ or ``delta`` is negative.
    """
    if len(orders) != len(rdp):
        raise ValueError("orders and rdp must have the same length")
    delta = float(delta)
    if not delta >= 0.0:
        raise ValueError(f"delta must be >= 0; got {delta!r}")
    if delta == 0.0:
        return (0.0, None) if all(r == 0 for r in rdp) else (math.inf, None)
    best, best_order = math.inf, None
    for a, r in zip(orders, rdp):
        a, r = float(a), float(r)
        if r < 0.0 or delta * delta + math.expm1(-r) > 0.0:
            eps = 0.0                 # total variation below δ (Bretagnolle–Huber): ε = 0 suffices
        elif a > 1.01:
            eps = r + math.log1p(-1.0 / a) - math.log(delta * a) / (a - 1.0)
        else:
            eps = math.inf
        if eps < best:
            best, best_order = eps, a
    return max(0.0, best), best_order
