"""Mechanisms, composition and the ledger of dpcore.privacy.

Each mechanism gets a neighbouring-input frequency test (dpcore.lab.audit.frequency_check):
N runs on D and on D′, outputs bucketed, and every bucket must satisfy
p_D ≤ e^ε p_D′ + δ (and the reverse) within Clopper–Pearson bounds at 99 % family-wise
confidence. Each test also runs a negative control - the same samples judged against a
claim of ε/2 - which must be rejected, so the check has the power to fail.
"""
import math

import numpy as np
import pytest
from scipy import special

from dpcore.lab.audit import bucket_counts, frequency_check
from dpcore.privacy import (PrivacyLedger, advanced_composition, advanced_composition_inverse,
                            analytic_gaussian_delta, basic_composition, exponential_mechanism,
                            exponential_mechanism_probabilities, gaussian_mechanism, gaussian_sigma_analytic,
                            gaussian_sigma_classic, laplace_mechanism)

N = 200_000
CONF = 0.99


def test_laplace_neighbouring_frequencies():
    rng = np.random.default_rng(1)
    eps = 1.0
    # counting query: D has count 10, D' = D plus one record -> 11 (sensitivity 1)
    out_d = laplace_mechanism(np.full(N, 10.0), 1.0, eps, rng)
    out_dp = laplace_mechanism(np.full(N, 11.0), 1.0, eps, rng)
    edges = np.arange(6.0, 15.01, 0.5)
    ca, cb = bucket_counts(out_d, out_dp, edges)
    assert frequency_check(ca, cb, eps, confidence=CONF).passed
    assert not frequency_check(ca, cb, eps / 2, confidence=CONF).passed  # power: ε/2 is violated


def test_laplace_scale_is_sensitivity_over_epsilon():
    rng = np.random.default_rng(2)
    x = laplace_mechanism(np.zeros(N), 2.0, 0.5, rng)
    # Var Lap(b) = 2b², b = 4 -> 32; sample variance SE ≈ 32·√(5/N) (kurtosis 6): 5 SE allowance
    assert abs(x.var() - 32.0) < 5 * 32.0 * math.sqrt(5 / N)


def test_gaussian_neighbouring_frequencies():
    rng = np.random.default_rng(3)
    eps, delta = 0.5, 1e-5
    out_d = gaussian_mechanism(np.zeros(N), 1.0, eps, delta, rng, method="classic")
    out_dp = gaussian_mechanism(np.ones(N), 1.0, eps, delta, rng, method="classic")
    sigma = gaussian_sigma_classic(1.0, eps, delta)
    edges = np.linspace(-3 * sigma, 3 * sigma + 1, 25)
    ca, cb = bucket_counts(out_d, out_dp, edges)
    assert frequency_check(ca, cb, eps, delta, confidence=CONF).passed


def test_analytic_gaussian_neighbouring_frequencies_and_power():
    rng = np.random.default_rng(4)
    eps, delta = 1.0, 1e-3
    sigma = gaussian_sigma_analytic(1.0, eps, delta)
    out_d = gaussian_mechanism(np.zeros(N), 1.0, eps, delta, rng)
    out_dp = gaussian_mechanism(np.ones(N), 1.0, eps, delta, rng)
    edges = np.linspace(-2.5 * sigma, 2.5 * sigma + 1, 21)
    ca, cb = bucket_counts(out_d, out_dp, edges)
    assert frequency_check(ca, cb, eps, delta, confidence=CONF).passed
    # the analytic σ is tight: the tail buckets' ratio exceeds e^{ε/4}, detected
    assert not frequency_check(ca, cb, eps / 4, delta, confidence=CONF).passed


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (0.5, 1e-6), (0.9, 1e-3)])
def test_analytic_sigma_smaller_than_classic_and_solves_balle_wang(eps, delta):
    s_a = gaussian_sigma_analytic(1.0, eps, delta)
    assert s_a < gaussian_sigma_classic(1.0, eps, delta)
    a, b = 1 / (2 * s_a), eps * s_a
    lhs = special.ndtr(a - b) - math.exp(eps) * special.ndtr(-a - b)  # Balle & Wang Thm 8, written plainly
    assert abs(lhs - delta) < 1e-9


def test_analytic_sigma_large_epsilon_is_finite_and_exact():
    s = gaussian_sigma_analytic(2.0, 1000.0, 1e-6)
    assert 0 < s < 2.0
    assert abs(analytic_gaussian_delta(s, 2.0, 1000.0) - 1e-6) < 1e-9


def test_exponential_mechanism_neighbouring_frequencies():
    rng = np.random.default_rng(5)
    eps = 1.0
    u_d = np.array([3.0, 5.0, 4.0, 0.0, 1.0])  # vote counts; D' adds one vote to candidate 2
    u_dp = u_d + np.array([0, 0, 1.0, 0, 0])
    out_d = exponential_mechanism(np.tile(u_d, (N, 1)), eps, 1.0, rng)
    out_dp = exponential_mechanism(np.tile(u_dp, (N, 1)), eps, 1.0, rng)
    ca, cb = np.bincount(out_d, minlength=5), np.bincount(out_dp, minlength=5)
    assert frequency_check(ca, cb, eps, confidence=CONF).passed
    # frequencies follow the softmax: each within 5 binomial SE
    p = exponential_mechanism_probabilities(u_d, eps, 1.0)
    assert np.all(np.abs(ca / N - p) < 5 * np.sqrt(p * (1 - p) / N))


def test_exponential_mechanism_range_sensitivity_power():
    rng = np.random.default_rng(6)
    eps = 1.0
    u_d = np.array([0.0, 1.0])
    u_dp = np.array([1.0, 0.0])  # range sensitivity 2 for this pair; with Δ=2, scale ε/Δ
    out_d = exponential_mechanism(np.tile(u_d, (N, 1)), eps, 2.0, rng, range_sensitivity=True)
    out_dp = exponential_mechanism(np.tile(u_dp, (N, 1)), eps, 2.0, rng, range_sensitivity=True)
    ca, cb = np.bincount(out_d, minlength=2), np.bincount(out_dp, minlength=2)
    assert frequency_check(ca, cb, eps, confidence=CONF).passed
    # here the true log-ratio is ε/Δ·1 = ε/2 (p = e^{1/2}/(1+e^{1/2}) vs 1/(1+e^{1/2})), so a
    # claim of ε/4 must be rejected
    assert not frequency_check(ca, cb, eps / 4, confidence=CONF).passed


def test_exponential_mechanism_is_stable_for_huge_utilities():
    rng = np.random.default_rng(7)
    u = np.array([1e308 / 10, 0.0, -1e300])
    assert exponential_mechanism(u, 1.0, 1.0, rng) == 0
    p = exponential_mechanism_probabilities(np.array([1e6, 1e6 - 1.0]), 2.0, 1.0)
    assert np.allclose(p, [1 / (1 + math.exp(-1)), 1 - 1 / (1 + math.exp(-1))])


def test_prop_e2_advanced_composition_and_inverse():
    eps, delta, k = 0.1, 1e-6, 30
    tot_eps, tot_delta = advanced_composition(eps, delta, k)
    assert tot_eps == pytest.approx(math.sqrt(2 * k * math.log(1 / delta)) * eps + k * eps * (math.exp(eps) - 1))
    assert tot_delta == pytest.approx((k + 1) * delta)
    e2, d2 = advanced_composition_inverse(tot_eps, tot_delta, k)
    assert e2 == pytest.approx(eps, rel=1e-10) and d2 == pytest.approx(delta, rel=1e-12)


@pytest.mark.parametrize("total", [709.0, 1000.0, 1e6])
def test_prop_e2_inverse_for_huge_total_epsilon_does_not_overflow(total):
    # e^ε overflows a float for ε > ~709.8; the inverse must still solve the equation exactly
    eps, delta = advanced_composition_inverse(total, 1e-4, 30)
    assert advanced_composition(eps, delta, 30)[0] == pytest.approx(total, rel=1e-10)
    assert 1.0 < eps < math.log1p(total) + 1.0


def test_basic_composition_and_ledger_totals():
    assert basic_composition([0.5, 0.25], [1e-6, 0]) == (0.75, 1e-6)
    led = PrivacyLedger(budget_epsilon=1.0)
    led.record("table", "Laplace", 0.1)
    led.record("assignment", "exponential", 0.9)
    assert led.total() == pytest.approx((1.0, 0.0))
    with pytest.raises(ValueError, match="epsilon budget"):
        led.record("one more", "Laplace", 0.01)
    assert len(led) == 2


@pytest.mark.parametrize("call,word", [
    (lambda: laplace_mechanism(0.0, 1.0, 0.0), "epsilon must be > 0"),
    (lambda: laplace_mechanism(0.0, 1.0, -1.0), "epsilon must be > 0"),
    (lambda: gaussian_mechanism(0.0, 1.0, 0.5, 0.0), r"delta must be in \(0, 1\)"),
    (lambda: gaussian_mechanism(0.0, 1.0, 0.5, 1.0), r"delta must be in \(0, 1\)"),
    (lambda: gaussian_sigma_classic(1.0, 2.0, 1e-5), r"epsilon must be in \(0, 1\) for the classic"),
    (lambda: exponential_mechanism([1.0, 2.0], 0.0, 1.0), "epsilon must be > 0"),
    (lambda: advanced_composition(0.1, 1e-5, 0), "k must be an integer >= 1"),
])
def test_bad_privacy_parameters_name_the_parameter(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_ledger_rest_of_makes_the_total_exactly_the_budget():
    # a split into shares that are not exact in binary, then "the rest": the correctly rounded
    # total never exceeds the budget and equals it except where a rounding tie makes that
    # impossible (measured: 90 of 20,000 random splits); the rest is the remaining share
    rng = np.random.default_rng(0)
    exact = 0
    for _ in range(300):
        eps = float(rng.uniform(0.01, 20))
        led = PrivacyLedger(budget_epsilon=eps)
        shares = rng.dirichlet(np.ones(int(rng.integers(2, 9))))
        for s in shares[:-1]:
            led.record("part", "Laplace", eps * float(s))
        rest = led.rest_of(eps)
        assert rest == pytest.approx(eps * shares[-1], rel=1e-9, abs=1e-15)
        led.record("rest", "Laplace", rest)
        assert led.epsilon <= eps
        assert led.epsilon >= np.nextafter(eps, 0.0)             # at most one unit in the last place below
        exact += led.epsilon == eps
    assert exact >= 290                                          # ≈ 0.5 % ties: 300 × 0.005 ≈ 1.5 expected


def test_bernoulli_and_binomial_draws():
    import math as _math
    from dpcore.privacy import bernoulli_draws, binomial_draws
    rng = np.random.default_rng(0)
    b = bernoulli_draws(np.full(20000, 0.3), rng)
    assert b.dtype == bool and abs(b.mean() - 0.3) < 0.02
    assert not bernoulli_draws(np.zeros(5), rng).any() and bernoulli_draws(np.ones(5), rng).all()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        bernoulli_draws([1.5], rng)
    small = binomial_draws(np.full(2000, 100.0), _math.log(0.2), rng)
    assert abs(small.mean() - 20.0) < 0.5
    huge = binomial_draws(np.array([2.0 ** 70]), -75 * _math.log(2.0), rng)   # expects 2^-5 successes
    assert huge.shape == (1,) and huge[0] >= 0
    assert not binomial_draws(np.array([1e6, 2.0 ** 80]), -1000.0, rng).any()
