"""RDP totals (PrivacyAccountant.rdp_total, dpcore.privacy.rdp): Gaussian and Laplace equal to
dp-accounting's RdpAccountant on the same orders, exact discrete Laplace and pure-DP curves against
direct sums, and the order of the three totals: tight (PLD) ≤ RDP, and RDP ≤ basic for many pure
releases."""
import itertools
import math
from fractions import Fraction

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
import numpy as np
import pytest

from dpcore.privacy import GaussianBudget, PrivacyAccountant, PrivacyEvent, RdpTotal
from dpcore.privacy.accountant import gaussian_epsilon
from dpcore.privacy.rdp import (RDP_ORDERS, discrete_laplace_rdp, event_rdp, gaussian_rdp, laplace_rdp, pure_dp_rdp,
                                rdp_to_dp)


def gaussian(z, count=1):
    """A Gaussian event with a true statement at δ = 1e-6 (the RDP total reads its noise only)."""
    mu = math.sqrt(count) / z
    return PrivacyEvent.gaussian(z, count, stated=(gaussian_epsilon(mu, 1e-6), 1e-6))


def reference(events, delta):
    """dp-accounting's RdpAccountant on the Gaussian and Laplace events."""
    ref = dp_accounting.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    for e in events:
        ev = dp_event.GaussianDpEvent(e.noise_multiplier) if e.kind == "gaussian" else \
            dp_event.LaplaceDpEvent(e.noise_multiplier)
        ref.compose(dp_event.SelfComposedDpEvent(ev, e.count))
    return ref.get_epsilon_and_optimal_order(delta)


# ----------------------------------------------------------------------------- against dp-accounting
def test_the_orders_are_dp_accountings_default_grid():
    assert list(RDP_ORDERS) == list(dp_rdp.DEFAULT_RDP_ORDERS)


@pytest.mark.parametrize("mix", [
    [("gaussian", 3.0, 10)],
    [("gaussian", 0.8, 1)],
    [("laplace", 10.0, 30)],
    [("laplace", 0.5, 1)],
    [("gaussian", 3.0, 10), ("laplace", 10.0, 30)],
    [("gaussian", 50.0, 400), ("laplace", 20.0, 100), ("gaussian", 5.0, 2)],
])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_gaussian_and_laplace_equal_dp_accountings_rdp(mix, delta):
    events = [gaussian(z, n) if kind == "gaussian" else PrivacyEvent.laplace(z, n) for kind, z, n in mix]
    acc = PrivacyAccountant()
    acc.record(events, relation="add_remove")
    eps_ref, order_ref = reference(events, delta)
    total = acc.rdp_total(delta)
    if any(e.kind == "gaussian" for e in events) or total.order != math.inf:
        assert total.epsilon == pytest.approx(eps_ref, rel=1e-9) and total.order == order_ref
    else:        # Laplace only: the limit α = ∞ (the sum of the pure ε) may be better than every order
        assert total.epsilon == sum(e.count / e.noise_multiplier for e in events) < eps_ref
    assert isinstance(total, RdpTotal) and total.delta == delta and total.relation == "add_remove"


def test_laplace_curve_is_dp_accountings():
    for eps, a in itertools.product([1e-4, 0.05, 1.0, 7.0, 300.0], list(RDP_ORDERS) + [1.01, 1.05]):
        assert laplace_rdp(eps, a) == pytest.approx(dp_rdp._laplace_rdp(eps, a), rel=1e-12, abs=1e-300)


def test_gaussian_curve_is_alpha_mu_squared_over_two():
    assert gaussian_rdp(2.0, 3.5) == 7.0
    rdp, pure, approx = event_rdp(gaussian(4.0, 9))
    assert rdp == pytest.approx([a * 9 / 32 for a in RDP_ORDERS], rel=1e-15)
    assert pure == math.inf and approx == (0.0, 0.0)


def test_relation_conversion_halves_the_gaussian_multiplier():
    acc = PrivacyAccountant()
    acc.record([gaussian(6.0, 5)], relation="add_remove")
    acc.record(PrivacyEvent.approx_dp(0.0), relation="replace_one")
    assert acc.rdp_epsilon(1e-6) == pytest.approx(reference([gaussian(3.0, 5)], 1e-6)[0], rel=1e-12)


# ----------------------------------------------------------------------------- exact curves
def direct_rdp(p, q, a):
    """log Σ p^a q^(1−a) / (a − 1), in log space."""
    logs = a * np.log(p) + (1 - a) * np.log(q)
    m = logs.max()
    return (m + math.log(math.fsum(np.exp(logs - m)))) / (a - 1)


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(10), Fraction(40)])
@pytest.mark.parametrize("sensitivity", [1, 2, 3, 5])
@pytest.mark.parametrize("order", [1.1, 1.5, 2.0, 5.0, 32.0, 256.0])
def test_discrete_laplace_curve_is_the_exact_divergence(scale, sensitivity, order):
    s = float(scale)
    z = np.arange(-int(80 * s) - 80, int(80 * s) + 80 + sensitivity + 1)     # tails below 1e-34 of the mass
    r = math.exp(-1 / s)
    p = (1 - r) / (1 + r) * r ** np.abs(z)
    q = (1 - r) / (1 + r) * r ** np.abs(z - sensitivity)
    assert discrete_laplace_rdp(scale, sensitivity, order) == pytest.approx(direct_rdp(p, q, order), rel=1e-9)


def test_discrete_laplace_at_sensitivity_one_is_randomized_response():
    for s, a in itertools.product([0.2, 1.0, 7.0], [1.1, 3.0, 1024.0]):
        assert discrete_laplace_rdp(s, 1, a) == pure_dp_rdp(1 / s, a)


@pytest.mark.parametrize("eps", [1e-6, 1e-3, 0.1, 1.0, 5.0, 60.0, 1000.0])
@pytest.mark.parametrize("order", [1.1, 1.5, 2.0, 10.0, 63.0, 1024.0])
def test_pure_dp_curve_is_randomized_response_and_below_bun_steinke(eps, order):
    r = pure_dp_rdp(eps, order)
    assert 0.0 <= r <= min(eps, order * eps * eps / 2) * (1 + 1e-12)
    if eps <= 5:                       # randomized response, summed directly
        p = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
        assert r == pytest.approx(direct_rdp(p, p[::-1], order), rel=1e-9)
    assert laplace_rdp(eps, order) <= r * (1 + 1e-9)           # Laplace is one ε-DP mechanism


def test_rdp_to_dp_is_dp_accountings_conversion():
    for rho, delta in itertools.product([1e-4, 0.01, 0.5, 3.0], [1e-2, 1e-6, 1e-12]):
        curve = [a * rho for a in RDP_ORDERS]
        ours = rdp_to_dp(RDP_ORDERS, curve, delta)
        theirs = dp_rdp.compute_epsilon(RDP_ORDERS, curve, delta)
        assert ours[0] == pytest.approx(theirs[0], rel=1e-12, abs=1e-300) and ours[1] == theirs[1]
    assert rdp_to_dp(RDP_ORDERS, [0.0] * len(RDP_ORDERS), 0.0) == (0.0, None)
    assert rdp_to_dp(RDP_ORDERS, [1.0] * len(RDP_ORDERS), 0.0) == (math.inf, None)


# ----------------------------------------------------------------------------- against the other totals
def mixture():
    """A run of each kind, with δ > 0 releases and a slack."""
    return [gaussian(8.0, 20), PrivacyEvent.laplace(20.0, count=10), PrivacyEvent.exponential(0.05, count=8),
            PrivacyEvent.discrete_laplace(Fraction(25), 1, count=12),
            PrivacyEvent.approx_dp(0.2, 1e-7, count=2), PrivacyEvent.approx_dp(0.1)]


@pytest.mark.parametrize("delta", [1e-5, 1e-6, 1e-9 + 2e-7])
def test_rdp_is_above_the_tight_total_and_below_basic_for_a_mixture(delta):
    acc = PrivacyAccountant()
    acc.record(mixture(), relation="replace_one")
    tight = acc.tight_total(delta)
    rdp = acc.rdp_total(delta)
    # the PLD total is an upper bound up to its pessimistic grid: at most one grid step per composition
    allowance = 10 * tight.value_discretization_interval
    assert tight.epsilon - allowance <= rdp.epsilon <= acc.basic_total()[0]
    assert rdp.epsilon < 1.5 * tight.epsilon             # and not absurdly loose
    assert 1 < rdp.order < 1025


def test_many_small_pure_releases_are_far_below_basic():
    acc = PrivacyAccountant()
    acc.record(PrivacyEvent.exponential(0.01, count=1000), relation="replace_one")
    basic = acc.basic_total()[0]
    rdp = acc.rdp_epsilon(1e-6)
    assert basic == pytest.approx(10.0) and rdp < 1.6
    assert acc.tight_epsilon(1e-6) <= rdp


def test_pure_releases_are_never_above_basic():
    for eps, count in itertools.product([0.01, 0.5, 2.0, 30.0], [1, 3, 50]):
        acc = PrivacyAccountant()
        acc.record([PrivacyEvent.exponential(eps, count=count), PrivacyEvent.laplace(1 / eps, count=count)],
                   relation="replace_one")
        assert acc.rdp_epsilon(1e-6) <= acc.basic_total()[0] * (1 + 1e-12)


def test_approx_releases_come_off_delta_and_add_their_epsilon():
    g = gaussian(5.0, 4)
    acc = PrivacyAccountant()
    acc.record([g, PrivacyEvent.approx_dp(0.3, 1e-6, count=2)], relation="add_remove")
    eps_g, _ = reference([g], 1e-5 - 2e-6)
    assert acc.rdp_epsilon(1e-5) == pytest.approx(0.6 + eps_g, rel=1e-12)
    assert acc.rdp_epsilon(1.5e-6) == math.inf                  # δ below the releases' own 2e-6
    assert acc.rdp_epsilon(2e-6) == math.inf                    # nothing left for the Gaussian


def test_a_slack_with_delta_is_basic_and_a_pure_slack_is_rdp():
    acc = PrivacyAccountant()
    z = 5.0
    base = gaussian(z, 4)
    slacked = PrivacyEvent.gaussian(z, 4, stated=base.stated, slack=(0.01, 1e-9))
    acc.record(slacked, relation="add_remove")
    eps_g, _ = reference([base], 1e-6 - 4e-9)
    assert acc.rdp_epsilon(1e-6) == pytest.approx(0.04 + eps_g, rel=1e-12)
    pure_slack = PrivacyEvent.laplace(2.0, count=3, stated=(1.5, 0.0), slack=(0.1, 0.0))
    rdp, pure, approx = event_rdp(pure_slack)
    assert pure == pytest.approx(1.8) and approx == (0.0, 0.0)
    assert rdp[10] == pytest.approx(3 * (laplace_rdp(0.5, RDP_ORDERS[10]) + pure_dp_rdp(0.1, RDP_ORDERS[10])))


def test_delta_zero_pure_is_basic_and_gaussian_is_infinite():
    acc = PrivacyAccountant()
    acc.record(PrivacyEvent.exponential(0.5, count=4), relation="replace_one")
    assert acc.rdp_total(0.0) == RdpTotal(2.0, 0.0, "replace_one", math.inf)
    acc.record(GaussianBudget(1.0, 1e-6, 3).events(), relation="replace_one")
    assert acc.rdp_epsilon(0.0) == math.inf


def test_no_runs_and_the_default_delta():
    assert PrivacyAccountant().rdp_total(1e-6) == RdpTotal(0.0, 1e-6, None, None)
    acc = PrivacyAccountant(delta=1e-5)
    acc.record(GaussianBudget(1.0, 1e-6, 20).events(), relation="replace_one")
    assert acc.rdp_total().delta == 1e-5
    assert PrivacyAccountant().rdp_total(0.0).epsilon == 0.0


def test_cached_until_the_next_record():
    acc = PrivacyAccountant()
    acc.record(GaussianBudget(1.0, 1e-6, 20).events(), relation="replace_one")
    first = acc.rdp_total(1e-5)
    assert acc.rdp_total(1e-5) is first
    acc.record(GaussianBudget(1.0, 1e-6, 20).events(), relation="replace_one")
    second = acc.rdp_total(1e-5)
    assert second is not first and second.epsilon > first.epsilon


def test_huge_epsilons_stay_finite():
    acc = PrivacyAccountant()
    for eps in (0.1, 1.0, 1000.0):
        acc.record(PrivacyEvent.approx_dp(eps, 1e-6, count=5), relation="replace_one")
        acc.record(GaussianBudget(eps, 1e-6, 10).events(), relation="replace_one")
        acc.record(PrivacyEvent.exponential(eps, count=3), relation="replace_one")
    total = acc.rdp_total(1e-3)
    assert math.isfinite(total.epsilon) and total.epsilon <= acc.basic_total()[0]
