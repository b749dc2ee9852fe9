"""The exact discrete Laplace sampler of dpcore.privacy (Canonne, Kamath & Steinke 2020,
Alg. 1 and 2): frequencies against the exact probabilities, the rounding-up of the scale
(checked with Fraction), and bad input.

Randomised tests have fixed seeds. Bernoulli frequencies get a tolerance of 5 standard errors
√(p(1−p)/N) (a two-sided normal tail of 6e−7 per check: a correct sampler fails by chance
essentially never, a wrong one by more than 5 SE is caught). The pmf is tested by a
chi-square goodness of fit at significance 0.001 per test (cells with expected count ≥ 5,
the two tails pooled), with a fixed seed, so the outcome is deterministic and was checked.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcore.privacy import (bernoulli_exp, discrete_laplace_mechanism, discrete_laplace_noise,
                            discrete_laplace_scale)

ALPHA = 1e-3


# ----------------------------------------------------------------------------- Alg. 1
@pytest.mark.parametrize("num,den", [(0, 1), (1, 3), (1, 2), (1, 1), (5, 2), (7, 3), (17, 5), (1, 1 << 40)])
def test_bernoulli_exp_frequency_matches_exp_minus_gamma(num, den):
    N = 200_000
    p = math.exp(-num / den)
    draws = bernoulli_exp(np.full(N, num), den, random_state=num * 1000 + den)
    assert draws.dtype == bool and draws.shape == (N,)
    se = math.sqrt(p * (1 - p) / N)
    assert abs(draws.mean() - p) <= 5 * se + 1e-12


def test_bernoulli_exp_mixed_gammas_in_one_call():
    # one vectorised call with different γ per entry (the ⌊γ⌋ loop runs on the pending ones)
    gam = [(0, 1), (1, 2), (3, 1), (9, 4)]
    N = 100_000
    num = np.repeat([g[0] for g in gam], N)
    den = np.repeat([g[1] for g in gam], N)
    d = bernoulli_exp(num, den, random_state=3).reshape(len(gam), N)
    for (a, b), row in zip(gam, d):
        p = math.exp(-a / b)
        assert abs(row.mean() - p) <= 5 * math.sqrt(p * (1 - p) / N) + 1e-12


# ----------------------------------------------------------------------------- Alg. 2
def _chi_square_pvalue(x, sigma):
    """Goodness of fit of integer samples x to P(k) = (1−r)/(1+r)·r^|k|, r = e^{−1/σ}: cells
    −K..K with expected counts ≥ 5 where P(|k| > K) is pooled into the two end cells."""
    r = math.exp(-1.0 / sigma)
    n = x.size
    K = 0
    while n * (1 - r) / (1 + r) * r ** (K + 1) >= 5:
        K += 1
    ks = np.arange(-K, K + 1)
    p = (1 - r) / (1 + r) * r ** np.abs(ks).astype(float)
    tail = r ** (K + 1) / (1 + r)                       # P(k > K) = P(k < −K)
    p[0] += tail
    p[-1] += tail
    obs = np.bincount(np.clip(x, -K, K) + K, minlength=2 * K + 1)
    return stats.chisquare(obs, p * n).pvalue


@pytest.mark.parametrize("s,t", [(1, 1), (2, 1), (1, 3), (3, 7), (1 << 20, 80 << 20), (1 << 33, (80 << 33) + 1)])
@pytest.mark.parametrize("n", [9, 200_000])
def test_discrete_laplace_matches_exact_pmf(s, t, n):
    # n = 9 (a DP-τCC table: the several-proposals path) repeated 2000 times, and one large call
    rng = np.random.default_rng(s % 1000 + t % 997 + n)
    N = 18_000 if n == 9 else 200_000
    x = np.concatenate([discrete_laplace_noise(s, t, n, rng) for _ in range(N // n)])
    assert x.dtype == np.int64
    assert _chi_square_pvalue(x, t / s) > ALPHA
    # mean 0 within 5 SE; variance 2r/(1−r)² of the discrete Laplace
    r = math.exp(-s / t)
    var = 2 * r / (1 - r) ** 2
    assert abs(x.mean()) <= 5 * math.sqrt(var / x.size)


def test_mechanism_pmf_and_shape():
    v = np.array([[3, 0], [-2, 7]])
    out = discrete_laplace_mechanism(v, 1, 0.5, random_state=0)
    assert out.dtype == np.int64 and out.shape == (2, 2)
    x = np.concatenate([discrete_laplace_mechanism(np.zeros(1000, dtype=np.int64), 2, 0.5, random_state=i)
                        for i in range(100)])
    s, t = discrete_laplace_scale(2, 0.5)
    assert _chi_square_pvalue(x, t / s) > ALPHA
    # an integral float array is accepted and gives the same draws as the int array
    assert np.array_equal(discrete_laplace_mechanism(v.astype(float), 1, 0.5, 4),
                          discrete_laplace_mechanism(v, 1, 0.5, 4))
    assert np.ndim(discrete_laplace_mechanism(5, 1, 1.0, 0)) == 0


def test_same_seed_same_noise_and_neighbour_ratio():
    a = discrete_laplace_mechanism(np.arange(50), 1, 1.0, 7)
    b = discrete_laplace_mechanism(np.arange(50), 1, 1.0, 7)
    assert np.array_equal(a, b)


# ----------------------------------------------------------------------------- scale rounded up
@pytest.mark.parametrize("sens,eps", [(1, 1.0), (1, 0.1), (1, 0.0125), (1, 1 / 80), (3, 0.7), (1, 1e6),
                                      (2, 1e-11), (1, 3.0), (5, 1e-10), (1, 2.0 ** 40)])
def test_scale_is_rounded_up_so_delivered_epsilon_is_at_most_epsilon(sens, eps):
    s, t = discrete_laplace_scale(sens, eps)
    assert isinstance(s, int) and isinstance(t, int) and s >= 1 and t >= 1
    exact = Fraction(sens) / Fraction(eps)              # Δ/ε exactly (ε is a dyadic rational)
    assert Fraction(t, s) >= exact                       # noise never smaller than claimed
    assert Fraction(sens * s, t) <= Fraction(eps)        # delivered ε = Δ·s/t ≤ ε, exactly
    # and not much more noise: relative excess ≤ 2^−39, or absolute ≤ 1/s for tiny scales
    assert Fraction(t, s) - exact <= max(exact * Fraction(1, 1 << 39), Fraction(1, s))


def test_scale_one_is_exact_and_t_in_range():
    s, t = discrete_laplace_scale(1, 1.0)
    assert Fraction(t, s) == 1 and (1 << 39) < t <= (1 << 40)
    s, t = discrete_laplace_scale(1, 0.1)                # 0.1 is not 1/10 in binary: rounded up
    assert Fraction(t, s) > Fraction(1, 1) / Fraction(0.1)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,message", [
    (lambda: discrete_laplace_mechanism([1.5, 2.0], 1, 1.0), "value must be integers"),
    (lambda: discrete_laplace_mechanism([np.nan], 1, 1.0), "value must be integers"),
    (lambda: discrete_laplace_mechanism(["a"], 1, 1.0), "value must be integers"),
    (lambda: discrete_laplace_mechanism([True], 1, 1.0), "value must be integers"),
    (lambda: discrete_laplace_mechanism([2 ** 60], 1, 1.0), r"magnitude <= 2\^53"),
    (lambda: discrete_laplace_mechanism([1], 0, 1.0), "sensitivity must be a positive integer"),
    (lambda: discrete_laplace_mechanism([1], 1.5, 1.0), "sensitivity must be a positive integer"),
    (lambda: discrete_laplace_mechanism([1], -2, 1.0), "sensitivity must be a positive integer"),
    (lambda: discrete_laplace_mechanism([1], 1, 0.0), "epsilon must be > 0"),
    (lambda: discrete_laplace_mechanism([1], 1, -1.0), "epsilon must be > 0"),
    (lambda: discrete_laplace_mechanism([1], 1, float("inf")), "epsilon must be a finite number > 0"),
    (lambda: discrete_laplace_mechanism([1], 1, float("nan")), "epsilon must be a finite number > 0"),
    (lambda: discrete_laplace_mechanism([1], 1, 1e-13), r"epsilon must be >= sensitivity / 2\^40"),
    (lambda: bernoulli_exp([-1], 1), "numerator must be integers >= 0"),
    (lambda: bernoulli_exp([1], 0), "denominator must be integers >= 1"),
    (lambda: discrete_laplace_noise(0, 1, 3), r"s must be an integer in \[1, 2\^62\]"),
    (lambda: discrete_laplace_noise(1, 1 << 41, 3), r"t must be an integer in \[1, 2\^40\]"),
])
def test_bad_input_raises_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
