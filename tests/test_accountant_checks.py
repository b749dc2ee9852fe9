"""The accountant checks what it is told: a PrivacyEvent's stated (ε, δ) must follow from its noise
(dpcore.privacy.accountant.PrivacyEvent.check_stated), against the exact Gaussian privacy profile
(gaussian_delta, checked here against 60-digit arithmetic), the pure ε of Laplace, discrete
Laplace (exact, in Fractions) and the exponential mechanism; group privacy keeps a true statement
true."""
import itertools
import math
import random
from fractions import Fraction

import pytest

from dpcore.privacy import (GaussianBudget, PrivacyAccountant, PrivacyEvent, analytic_gaussian_delta, convert_event,
                            gaussian_sigma_analytic)
from dpcore.privacy.accountant import STATED_RTOL, gaussian_delta, gaussian_epsilon


def tight_gaussian(z, count, epsilon):
    """A Gaussian event whose stated δ is exactly what its noise gives at ``epsilon``."""
    return PrivacyEvent.gaussian(z, count, stated=(epsilon, gaussian_delta(math.sqrt(count) / z, epsilon)))


# ----------------------------------------------------------------------------- acceptance
def test_an_understated_gaussian_is_refused_with_both_numbers():
    with pytest.raises(ValueError) as info:
        PrivacyEvent.gaussian(0.05, stated=(1, 1e-6))
    msg = str(info.value)
    # μ = 20: at ε = 1 the noise gives δ ≈ 1 − 2e-23 (prints as 1), at δ = 1e-6 it gives ε ≈ 294.17
    true_eps = gaussian_epsilon(20.0, 1e-6)
    assert 294 < true_eps < 295
    assert "(1, 1e-06)" in msg and f"{true_eps:.10g}" in msg and "delta = 1" in msg


def test_a_correct_statement_is_accepted_and_a_slightly_wrong_one_is_not():
    z = gaussian_sigma_analytic(1.0, 1.0, 1e-6)          # σ/Δ of the analytic Gaussian at (1, 1e-6)
    PrivacyEvent.gaussian(z, stated=(1.0, 1e-6))
    PrivacyEvent.gaussian(z * (1 - 1e-13), stated=(1.0, 1e-6))      # within the 1e-9 tolerance on δ
    # 1e-7 less noise: d log δ / d log z ≈ x² ≈ 21 here, so δ grows by ≈ 2e-6 relative > 1e-9
    with pytest.raises(ValueError, match="understates"):
        PrivacyEvent.gaussian(z * (1 - 1e-7), stated=(1.0, 1e-6))
    with pytest.raises(ValueError, match="understates"):
        PrivacyEvent.gaussian(z, stated=(1.0 - 1e-6, 1e-6))


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 100.0, 1000.0])
@pytest.mark.parametrize("delta", [0.1, 1e-3, 1e-6, 1e-10])
@pytest.mark.parametrize("n", [1, 20, 1000])
def test_gaussian_budget_events_pass_the_check(epsilon, delta, n):
    (ev,) = GaussianBudget(epsilon, delta, n).events("replace_one")
    assert ev.stated == (epsilon, delta)
    # what the check compares: the exact δ at the stated ε is the budget's δ, up to the root finder
    mu = math.sqrt(n) / ev.noise_multiplier
    assert gaussian_delta(mu, epsilon) == pytest.approx(delta, rel=1e-9)


def test_a_gaussian_is_never_pure():
    with pytest.raises(ValueError, match="no Gaussian is pure"):
        PrivacyEvent.gaussian(100.0, stated=(1e6, 0.0))


def test_the_accountant_records_checked_events_and_totals_stay():
    acc = PrivacyAccountant()
    acc.record(GaussianBudget(1.0, 1e-6, 20).events(), relation="replace_one")
    acc.record(PrivacyEvent.laplace(2.0, count=3, stated=(1.5, 0.0)), relation="add_remove")
    assert acc.basic_total() == pytest.approx((4.0, 1e-6))


# ----------------------------------------------------------------------------- the Gaussian profile
def test_gaussian_delta_against_sixty_digit_arithmetic():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    rng = random.Random(7)
    cases = [(20.0, 1.0), (0.2367, 1.0), (40.0, 1000.0), (1.0, 3000.0 / 100), (300.0, 5000.0), (1e-3, 0.0)]
    for _ in range(300):
        mu = 10 ** rng.uniform(-4, 2.5)
        x = rng.uniform(-6.0, 38.0)                        # δ from ~1 down to ~1e-300
        cases.append((mu, max(0.0, (x + mu / 2) * mu)))
    for mu, eps in cases:
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        ref = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
        if ref < mpmath.mpf("1e-300"):
            continue
        assert gaussian_delta(mu, eps) == pytest.approx(float(ref), rel=1e-9), (mu, eps)


def test_gaussian_delta_agrees_with_the_mechanisms_formula_where_it_is_accurate():
    for z, eps in itertools.product([0.5, 1.0, 4.0, 20.0], [0.0, 0.1, 1.0, 5.0]):
        assert gaussian_delta(1 / z, eps) == pytest.approx(analytic_gaussian_delta(z, 1.0, eps), rel=1e-10, abs=1e-300)


def test_gaussian_delta_handles_huge_epsilon_and_mu():
    assert gaussian_delta(40.0, 1000.0) > 0 and math.isfinite(gaussian_delta(40.0, 1000.0))
    assert gaussian_delta(1.0, 1e4) == 0.0                      # e^(−5e7): below every double
    assert gaussian_delta(1e6, 1.0) == pytest.approx(1.0)
    assert gaussian_delta(0.5, 0.0) == pytest.approx(math.erf(0.25 / math.sqrt(2)), rel=1e-12)   # 2Φ(μ/2) − 1


@pytest.mark.parametrize("mu", [1e-3, 0.1, 1.0, 7.0, 60.0])
@pytest.mark.parametrize("delta", [0.3, 1e-6, 1e-30, 1e-250])
def test_gaussian_epsilon_inverts_gaussian_delta(mu, delta):
    eps = gaussian_epsilon(mu, delta)
    if eps == 0.0:
        assert gaussian_delta(mu, 0.0) <= delta
    else:
        assert gaussian_delta(mu, eps) == pytest.approx(delta, rel=1e-9)
    assert gaussian_epsilon(mu, 0.0) == math.inf


# ----------------------------------------------------------------------------- the pure kinds
def test_laplace_statement_must_cover_count_over_multiplier():
    PrivacyEvent.laplace(2.0, count=3, stated=(1.5, 0.0))
    PrivacyEvent.laplace(2.0, count=3, stated=(1.5 * (1 - 1e-10), 0.0))          # rounding
    with pytest.raises(ValueError, match=r"epsilon = 1\.5-DP"):
        PrivacyEvent.laplace(2.0, count=3, stated=(1.5 * (1 - 1e-8), 0.0))
    with pytest.raises(ValueError, match="whatever its delta"):
        PrivacyEvent.laplace(2.0, count=3, stated=(1.4, 0.1))                    # δ > 0 buys nothing here


def test_discrete_laplace_statement_is_checked_exactly():
    need = Fraction(3 * 2) / Fraction(7, 3)                  # count·Δ/scale = 18/7
    PrivacyEvent.discrete_laplace(Fraction(7, 3), 2, count=3, stated=(float(need), 0.0))
    PrivacyEvent.discrete_laplace(Fraction(7, 3), 2, count=3, stated=(float(need) * (1 - 5e-10), 0.0))
    with pytest.raises(ValueError, match="sensitivity 2"):
        PrivacyEvent.discrete_laplace(Fraction(7, 3), 2, count=3, stated=(float(need) * (1 - 2e-9), 0.0))
    PrivacyEvent.discrete_laplace(2.5, 1, stated=(0.4, 0.0))          # a float scale


def test_exponential_statement_covers_count_times_epsilon():
    for e, swaps in itertools.product([0.1, 0.3, 1 / 3, 0.7, 2.0, 1000.0], [1, 4, 9, 20]):
        # the candidate method's form: ε/(swaps + 1) per choice, stated ε in all
        PrivacyEvent.exponential(e / (swaps + 1), count=swaps + 1, stated=(e, 0.0))
    with pytest.raises(ValueError, match="exponential"):
        PrivacyEvent.exponential(0.5, count=4, stated=(1.9, 0.0))


def test_approx_dp_statements_are_not_checked():
    # a composition theorem may state less than count × (ε, δ): the accountant cannot tell
    ev = PrivacyEvent.approx_dp(0.1, 0.0, count=100, stated=(3.0, 1e-6))
    assert ev.basic() == (3.0, 1e-6)


def test_stated_excludes_the_slack_which_basic_adds():
    z = gaussian_sigma_analytic(1.0, 1.0, 1e-6)
    ev = PrivacyEvent.gaussian(z, count=1, stated=(1.0, 1e-6), slack=(1e-17, 1e-20))
    assert ev.basic() == (1.0 + 1e-17, 1e-6 + 1e-20)
    ev = PrivacyEvent.laplace(2.0, count=4, stated=(2.0, 0.0), slack=(0.01, 0.0))
    assert ev.basic() == pytest.approx((2.04, 0.0))


def test_the_tolerance_is_one_in_a_billion():
    assert STATED_RTOL == 1e-9


# ----------------------------------------------------------------------------- group privacy
def test_group_privacy_keeps_tight_gaussian_statements_true():
    """δ_{2μ}(2ε) ≤ (1 + e^ε)·δ_μ(ε): the restated event passes the check when built anew."""
    rng = random.Random(3)
    for _ in range(200):
        z = 10 ** rng.uniform(-1, 2.5)
        count = rng.choice([1, 2, 7, 20, 140])
        eps = 10 ** rng.uniform(-3, 2)
        if gaussian_delta(math.sqrt(count) / z, eps) < 1e-300:
            continue
        ev = tight_gaussian(z, count, eps).with_relation("add_remove")
        out = convert_event(ev, "replace_one")
        assert out.noise_multiplier == z / 2 and out.stated[0] == 2 * eps
        assert out.stated[1] == pytest.approx(min(1.0, (1 + math.exp(eps)) * ev.stated[1]))
        PrivacyEvent.gaussian(out.noise_multiplier, out.count, stated=out.stated)           # checked anew
        mu = math.sqrt(count) / z
        assert gaussian_delta(2 * mu, 2 * eps) <= out.stated[1] * (1 + 1e-9)


def test_group_privacy_keeps_pure_statements_true():
    r = "add_remove"
    for ev in (PrivacyEvent.laplace(3.0, count=7, relation=r, stated=(7 / 3, 0.0)),
               PrivacyEvent.discrete_laplace(Fraction(5, 2), 1, count=3, relation=r, stated=(1.2, 0.0)),
               PrivacyEvent.exponential(0.1, count=10, relation=r, stated=(1.0, 0.0))):
        out = convert_event(ev, "cell_pm1")
        kw = dict(count=out.count, stated=out.stated)
        if out.kind == "laplace":
            PrivacyEvent.laplace(out.noise_multiplier, **kw)
        elif out.kind == "discrete_laplace":
            PrivacyEvent.discrete_laplace(out.scale, out.sensitivity, **kw)
        else:
            PrivacyEvent.exponential(out.epsilon, **kw)


def test_converted_events_are_recorded_and_totalled():
    acc = PrivacyAccountant()
    acc.record(GaussianBudget(1.0, 1e-6, 10).events(), relation="add_remove")
    acc.record(PrivacyEvent.approx_dp(1.0), relation="replace_one")
    assert acc.basic_total() == pytest.approx((3.0, (1 + math.e) * 1e-6))
