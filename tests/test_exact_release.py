"""Privacy as executed: every additive release is on a public grid, and no release rules out
the neighbour.

For each additive mechanism the test decides *exactly* whether a release y produced from x
can also be produced from a neighbour x′: the samplers' integer noise has every integer in
its support, so y can come from x′ iff y/g is an integer of the support (all of Z, or the
bounded Laplace's [lo, hi]) for the grid g that x′ would use — which is public, so the same
as x's. :func:`dpcore.privacy.exact.on_grid_support` makes that decision; the tests also
check it has power: numpy's float noise, as dpcore released before, fails it.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from dpcore.privacy import GaussianBudget, bounded_domain_laplace, gaussian_mechanism, laplace_mechanism
from dpcore.privacy.exact import (GRID_BITS, TAU_PER_COORDINATE_BOUND, _log_z_ratio, gaussian_release, laplace_release, on_grid_support,
                                  plan_bounded_laplace, plan_gaussian, plan_laplace)
from dpcore.privacy.sample_aggregate import (BETA_SLACK, alg1_constants, exact_smooth_gaussian, private_aggregate,
                                             smooth_sensitivity_floor)
from dpcore.subspace.sulq import SULQ_SENSITIVITY, noisy_scatter

N_RELEASES = 100


def _float_gaussian(value, sigma, rng):
    """The float release dpcore made before (value + σ·standard_normal): the attack's target."""
    return value + sigma * rng.standard_normal(np.shape(value))


# ----------------------------------------------------------------------------- Gaussian
def test_gaussian_d165_releases_all_reachable_from_neighbour():
    """Sample-aggregate's setting on the Cluster page (D = 165, Δ = 1, σ = 3): 100 releases
    from x, each decided exactly against x′ = x + e₁·Δ: all reachable. The same decision
    rules out almost every float release (the test has power)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 165)
    sigma, sens = 3.0, 1.0
    plan = plan_gaussian(sigma, sens, x.size)
    out = np.array([gaussian_release(x, sigma, sens, rng, plan=plan) for _ in range(N_RELEASES)])
    assert on_grid_support(out, plan.k).all()
    floats = np.array([_float_gaussian(x, sigma, rng) for _ in range(N_RELEASES)])
    assert (~on_grid_support(floats, plan.k)).any(axis=1).all()      # every float release leaves the grid


@pytest.mark.parametrize("sigma,sens,dim", [(1e-6, 1.0, 1), (3.0, 2.0, 100), (0.05, 2.0, 2500),
                                            (1e6, 1e-3, 165), (7.3, 1e-12, 4), (2.0 ** -30, 1.0, 10)])
def test_gaussian_plan_pays_for_the_rounding(sigma, sens, dim):
    """σ_int / (Δ/g + √D) ≥ σ/Δ: the integer mechanism's noise-to-sensitivity ratio is never
    below the continuous one (exact rational check), σ_int² = 2^m·w with w in [2^m, 2^(m+2)),
    and the noise actually added exceeds σ by a relative √D·σ/(Δ·2^GRID_BITS) at most (+2^-GRID_BITS)."""
    p = plan_gaussian(sigma, sens, dim)
    g = Fraction(1, 2 ** p.k) if p.k >= 0 else Fraction(2 ** -p.k)
    s_int2 = Fraction(2) ** p.m * p.w
    # σ_int / Δ_int ≥ σ/Δ with Δ_int = Δ/g + ⌈√D⌉ (an upper bound of the integer query's sensitivity)
    d_int_up = Fraction(sens) / g + Fraction(math.isqrt(dim) + (0 if math.isqrt(dim) ** 2 == dim else 1))
    assert s_int2 * Fraction(sens) ** 2 >= (Fraction(sigma) * d_int_up) ** 2
    assert p.noise_multiplier >= sigma / sens * (1 - 1e-15)
    assert 2 ** p.m <= p.w < 2 ** (p.m + 2)
    assert p.m >= GRID_BITS
    assert p.sigma_effective >= sigma
    assert p.sigma_effective <= sigma * (1 + math.sqrt(dim) * sigma / (sens * 2.0 ** GRID_BITS) * 2 + 2.0 ** (1 - GRID_BITS))
    assert p.tau <= dim * TAU_PER_COORDINATE_BOUND


def test_gaussian_mechanism_and_budget_release_on_grid():
    """gaussian_mechanism and GaussianBudget.release (SuLQ k-means, recovery, DPNMF, the
    candidate method) release on the plan's grid; the noise has the planned variance."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=500)
    from dpcore.privacy import gaussian_sigma
    sigma = gaussian_sigma(1.0, 1.0, 1e-6)
    y = gaussian_mechanism(x, 1.0, 1.0, 1e-6, rng)
    plan = plan_gaussian(sigma, 1.0, x.size)
    assert on_grid_support(y, plan.k).all()
    budget = GaussianBudget(1.0, 1e-6, 4)
    z = budget.release(x, 1.0, rng)
    bplan = plan_gaussian(budget.sigma(1.0), 1.0, x.size)      # σ for Δ·√n, rounding paid at Δ
    assert on_grid_support(z, bplan.k).all()
    # the rounding is paid at each release's own Δ: σ_int/(Δ/g + ⌈√D⌉) ≥ σ/Δ, exactly
    g = Fraction(2) ** -bplan.k
    assert Fraction(2) ** bplan.m * bplan.w >= (Fraction(bplan.sigma) * (1 / g + math.isqrt(x.size) + 1)) ** 2
    # the noise of 200 releases: sample variance within 5 standard errors of σ_eff²
    noise = np.concatenate([gaussian_release(np.zeros(1000), 2.0, 1.0, rng) for _ in range(200)])
    p = plan_gaussian(2.0, 1.0, 1000)
    se = p.sigma_effective ** 2 * math.sqrt(2 / noise.size)
    assert abs(noise.var() - p.sigma_effective ** 2) < 5 * se
    assert abs(noise.mean()) < 5 * p.sigma_effective / math.sqrt(noise.size)


def test_releases_are_the_exact_samplers_draws():
    """The noise of gaussian_release and laplace_release IS the integer samplers' draws (not a
    rounded float normal or Laplace with the same grid): the same seed gives round(x/g) + the
    sampler's integers, bit for bit."""
    from dpcore.privacy.exact_samplers import discrete_gaussian_noise, discrete_laplace_int_noise
    x = np.random.default_rng(9).normal(size=300)
    p = plan_gaussian(0.7, 1.0, x.size)
    y = gaussian_release(x, 0.7, 1.0, np.random.default_rng(11), plan=p)
    expect = np.rint(np.ldexp(x, p.k)).astype(np.int64) + discrete_gaussian_noise(p.m, p.w, x.size,
                                                                                  np.random.default_rng(11))
    assert np.array_equal(np.ldexp(y, p.k), expect.astype(float))
    q = plan_laplace(2.0, 1.0, x.size)
    y = laplace_release(x, 2.0, 1.0, np.random.default_rng(12))
    expect = np.rint(np.ldexp(x, q.k)).astype(np.int64) + discrete_laplace_int_noise(q.t, x.size,
                                                                                     np.random.default_rng(12))
    assert np.array_equal(np.ldexp(y, q.k), expect.astype(float))
    with pytest.raises(ValueError, match="plan is for"):
        gaussian_release(np.zeros(7), 0.7, 1.0, 0, plan=p)
    with pytest.raises(ValueError, match="dim"):
        plan_laplace(1.0, 1.0, 0)


def test_sulq_noisy_scatter_reachable():
    """SuLQ k-plane's released scatter matrices (d = 10, D = 100, sensitivity 2): 100 releases,
    all on the grid x′ would use."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 10))
    X /= np.maximum(1, np.linalg.norm(X, axis=1, keepdims=True))
    labels = rng.integers(0, 3, 300)
    sigma = 40.0
    plan = plan_gaussian(sigma, SULQ_SENSITIVITY, 100)
    out = np.array([noisy_scatter(X, labels, 1, sigma, rng) for _ in range(N_RELEASES)])
    assert on_grid_support(out, plan.k).all()


# ----------------------------------------------------------------------------- sample-aggregate
def _blocks(m, D, rng, spread=0.05):
    base = rng.uniform(-1, 1, D)
    return base + spread * rng.normal(size=(m, D)) / math.sqrt(D)


def test_sample_aggregate_d165_releases_reachable():
    """The Cluster page's sample-aggregate release (D = 165, m = 20, ε = 1 and 10): 100
    releases each from B; each is on the public grid fixed by S_lo (so reachable from any
    neighbour B′, whose grid is the same)."""
    rng = np.random.default_rng(3)
    for eps in (1.0, 10.0):
        B = _blocks(20, 165, rng)
        c = alg1_constants(20, eps, 1e-5, 165)
        k = None
        for _ in range(N_RELEASES):
            res = private_aggregate(B, eps, 1e-5, diameter=10.0, random_state=rng)
            from dpcore.privacy.exact import _grid_exponent
            k = _grid_exponent(smooth_sensitivity_floor(c, 10.0) / c.alpha)
            assert res.grid_exponent == k                 # from the public S_lo and α only
            assert on_grid_support(res.released, k).all()
            assert res.smooth_sensitivity >= smooth_sensitivity_floor(c, 10.0)
            assert res.discretisation_slack <= 165 * TAU_PER_COORDINATE_BOUND


@pytest.mark.parametrize("eps,delta,D,m", [(1.0, 1e-5, 165, 20), (0.1, 1e-6, 40, 50), (1000.0, 1e-5, 12, 16),
                                           (10.0, 1e-4, 1, 9)])
def test_sample_aggregate_shift_condition_holds_exactly(eps, delta, D, m):
    """The shift condition of the continuous analysis, for the rounded centres: for s-neighbours
    with ‖g(B) − g(B′)‖ ≤ min(S, S′) and S′/S within e^{±β}, the integer centres differ by at
    most α·min(σ_int(B), σ_int(B′)). Searched adversarially: centres half a grid step off in
    opposite directions, S at both ends of its range and at e^{±β} apart."""
    c = alg1_constants(m, eps, delta, D)
    lam = 3.0
    s_lo = smooth_sensitivity_floor(c, lam)
    from dpcore.privacy.exact import _grid_exponent, _plan_sigma_int, _sqrt_up
    k = _grid_exponent(s_lo / c.alpha)
    g = math.ldexp(1.0, -k)
    rng = np.random.default_rng(4)
    for S in (s_lo, s_lo * 1.0001, min(2 * lam, s_lo * 7.3), 2 * lam):
        for ratio in (math.exp(-c.beta), 1.0, math.exp(c.beta)):
            S2 = min(max(S * ratio, s_lo), 2 * lam)

            def sigma_int(s):       # σ_int as exact_smooth_gaussian draws it (its noise scale / g)
                _, scale, _, kk = exact_smooth_gaussian(np.zeros(D), s, c, lam, np.random.default_rng(0))
                assert kk == k                                         # the grid is the public one
                return scale / g
            bound = c.alpha * min(sigma_int(S), sigma_int(S2))
            for _ in range(20):
                x = rng.uniform(-1, 1, D)
                direction = rng.normal(size=D)
                direction /= np.linalg.norm(direction)
                x2 = x + direction * min(S, S2) * (1 - 1e-15)
                # push each coordinate to a rounding boundary, in opposite directions
                x = (np.floor(x / g) + 0.5 - 1e-9) * g
                x2 = x + direction * min(S, S2) * (1 - 1e-12)
                a = np.rint(x / g)
                a2 = np.rint(x2 / g)
                assert np.linalg.norm(a - a2) <= bound * (1 + 1e-12)
            # the dilation: σ_int(B′)/σ_int(B) within e^{β + BETA_SLACK}
            assert abs(math.log(sigma_int(S2) / sigma_int(S))) <= c.beta + BETA_SLACK + 1e-15


def test_exact_smooth_gaussian_noise_scale():
    """The noise added is c·S/α rounded up: at least S/α, at most S/α·(1 + √D·g/S_lo + 2^-GRID_BITS);
    an S below the public floor is refused (the shift condition needs S ≥ S_lo)."""
    c = alg1_constants(25, 1.0, 1e-5, 30)
    s_lo = smooth_sensitivity_floor(c, 2.0)
    for S in (s_lo, (s_lo + 4.0) / 2, 4.0):          # S(B) is in [S_lo, 2Λ]
        _, scale, tau, _ = exact_smooth_gaussian(np.zeros(30), S, c, 2.0, np.random.default_rng(0))
        assert scale >= S / c.alpha
        # c = 1 + ⌈√D⌉·g/S_lo with S_lo/(αg) ≥ 2^GRID_BITS, then σ² rounded up by 2^-GRID_BITS at most
        assert scale <= S / c.alpha * (1 + 6 / (c.alpha * 2.0 ** GRID_BITS)) * (1 + 2.0 ** -GRID_BITS)
        assert tau <= 30 * TAU_PER_COORDINATE_BOUND
    with pytest.raises(ValueError, match="floor"):
        exact_smooth_gaussian(np.zeros(30), s_lo * 0.99, c, 2.0, np.random.default_rng(0))


# ----------------------------------------------------------------------------- Laplace
def test_laplace_releases_reachable_and_pure_dp():
    """laplace_mechanism (k-means recovery's stage sizes): 100 releases, all on the grid; the
    exact ε delivered, (Δ₁/g + D)/t, is ≤ the ε asked. Float Laplace fails the decision."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 100, 8)
    eps, sens = 0.5, 2.0
    plan = plan_laplace(sens / eps, sens, x.size)
    out = np.array([laplace_mechanism(x, sens, eps, rng) for _ in range(N_RELEASES)])
    assert on_grid_support(out, plan.k).all()
    assert plan.epsilon_delivered <= eps
    floats = x + rng.laplace(0, sens / eps, size=(N_RELEASES, x.size))
    assert (~on_grid_support(floats, plan.k)).any(axis=1).all()
    y = laplace_release(np.arange(3.0), 1.0, 1.0, 0)
    assert y.shape == (3,)


@pytest.mark.parametrize("eps,sens,dim", [(1.0, 1.0, 1), (0.01, 3.0, 50), (50.0, 1e-3, 1000)])
def test_laplace_plan_epsilon_exact(eps, sens, dim):
    """ε delivered computed exactly with Fractions from the plan ≤ ε asked."""
    p = plan_laplace(sens / eps, sens, dim)
    g = Fraction(2) ** -p.k
    assert (Fraction(sens) / g + dim) / p.t <= Fraction(eps)


# ----------------------------------------------------------------------------- bounded-domain Laplace
def test_bounded_domain_releases_reachable_and_in_interval():
    """DP-Lloyd's bounded-domain release: 100 releases of a 20-coordinate sum, each coordinate
    on the grid and in [lo, hi] of the (public) plan, so reachable from any neighbour."""
    rng = np.random.default_rng(6)
    lower, upper, width, eps = -12.0, 12.0, 2.0, 0.3
    v = rng.uniform(-15, 15, 20)
    plan = plan_bounded_laplace(lower, upper, width, eps)
    out = np.array([bounded_domain_laplace(v, lower, upper, width, eps, rng) for _ in range(N_RELEASES)])
    assert on_grid_support(out, plan.k, plan.lo, plan.hi).all()
    assert plan.epsilon_delivered <= eps
    floats = np.clip(v + rng.laplace(0, width / eps, size=(N_RELEASES, 20)), lower, upper)
    assert (~on_grid_support(floats, plan.k, plan.lo, plan.hi)).any(axis=1).all()


def _brute_force_bounded_eps(t, delta_int, width):
    """max over v, v′ in [0, W] with |v − v′| ≤ Δ and y in [0, W] of the log ratio of the exact
    conditioned pmfs, by enumeration."""
    ys = np.arange(width + 1)
    best = 0.0
    for v in range(width + 1):
        lp = -np.abs(ys - v) / t
        lp -= np.log(np.exp(lp).sum())
        for v2 in range(max(0, v - delta_int), min(width, v + delta_int) + 1):
            lq = -np.abs(ys - v2) / t
            lq -= np.log(np.exp(lq).sum())
            best = max(best, float((lp - lq).max()))
    return best


@pytest.mark.parametrize("t,delta_int,width", [(1, 1, 1), (3, 1, 7), (5, 3, 10), (10, 4, 6), (2, 9, 5),
                                               (40, 2, 33)])
def test_bounded_domain_epsilon_formula_matches_enumeration(t, delta_int, width):
    """min(Δ, W)/t + log max Z(j)/Z(0) (the bound the plan calibrates) is never below the exact
    worst privacy loss found by enumerating every pair of neighbouring inputs and every output,
    and equals it when 2Δ ≤ W (the release grid's usual case: W ≈ 2^40 steps)."""
    formula = min(delta_int, width) / t + _log_z_ratio(-1.0 / t, delta_int, width)
    exact = _brute_force_bounded_eps(t, delta_int, width)
    assert formula >= exact * (1 - 1e-12)
    if 2 * delta_int <= width:
        assert formula == pytest.approx(exact, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("t,lo,hi,v", [(1, 0, 1, 0), (2, 0, 2, 1), (3, 0, 5, 0), (3, 0, 5, 5), (5, -4, 6, 2),
                                        (10, 0, 7, 3), (1, 0, 40, 20)])
def test_bounded_integer_laplace_law_by_enumeration(t, lo, hi, v):
    """The bounded sampler's law on small grids against the exact P(y) ∝ exp(−|y − v|/t) on
    [lo, hi] (chi-square, 60,000 draws, p > 1e-4): catches a 0 counted twice, a wrong room or
    a wrong modulus."""
    from scipy import stats
    from dpcore.privacy.exact import _bounded_integer_laplace
    n = 60_000
    y = _bounded_integer_laplace(np.full(n, v, dtype=np.int64), lo, hi, t, np.random.default_rng(100 + t + v))
    assert y.min() >= lo and y.max() <= hi
    support = np.arange(lo, hi + 1)
    p = np.exp(-np.abs(support - v) / t)
    p /= p.sum()
    counts = np.bincount(y - lo, minlength=support.size)
    assert stats.chisquare(counts, p * n).pvalue > 1e-4


def test_bounded_plan_sensitivity_covers_rounding():
    """Δ_int of the plan bounds |round(v·2^k) − round(v′·2^k)| for |v − v′| ≤ Δ, searched at
    half-step boundaries (where rounding moves most), including Δ·2^k an integer."""
    for lower, upper, sens, eps in ((-12.0, 12.0, 2.0, 0.3), (0.0, 1.0, 1.0, 1.0), (0.0, 8.0, 0.5, 4.0)):
        p = plan_bounded_laplace(lower, upper, sens, eps)
        rng = np.random.default_rng(13)
        base = (np.floor(rng.uniform(lower, upper - sens, 2000) * 2.0 ** p.k) + 0.5 - 1e-6) * 2.0 ** -p.k
        other = base + sens
        d = np.abs(np.rint(np.ldexp(other, p.k)) - np.rint(np.ldexp(base, p.k)))
        assert d.max() <= p.sensitivity_int


def test_bounded_plan_narrow_interval_is_not_oversized():
    """An interval narrower than the sensitivity: the smallest t is found (ε delivered close to
    the ε asked, not orders of magnitude below it)."""
    p = plan_bounded_laplace(0.0, 0.5, 1.0, 1.0)
    assert p.epsilon_delivered <= 1.0
    assert p.epsilon_delivered > 0.9
