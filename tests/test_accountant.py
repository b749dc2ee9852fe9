"""The privacy accountant (dpcore.privacy.accountant): typed events, relation conversions, basic
and tight totals against dp-accounting's own computation, the budget that refuses a fit before it
releases, and the ledger's events."""
import inspect
import math
import threading
import warnings
from fractions import Fraction

import dp_accounting
from dp_accounting import dp_event
import numpy as np
import pytest

from dpcore.lab.audit import RELATIONS as AUDIT_RELATIONS
from dpcore.cocluster.dpnmf import DPNMF
from dpcore.kmeans.candidate import CandidateKMeans
from dpcore.kmeans.dphd import DPHD
from dpcore.kmeans.sulq import SuLQKMeans
from dpcore.privacy import (RELATIONS, GaussianBudget, PrivacyAccountant, PrivacyEvent, PrivacyLedger,
                            conversion_factor, convert_event, gaussian_sigma_analytic, weakest_common_relation)

X = np.random.default_rng(0).normal(size=(200, 4))


def fitted_attributes(est):
    return [k for k in vars(est) if k.endswith("_") and not k.startswith("_")]


# ----------------------------------------------------------------------------- acceptance
def test_twenty_sulq_fits_basic_twenty_and_tight_within_one_percent_of_dp_accounting():
    acc = PrivacyAccountant()
    with acc:
        for i in range(20):
            SuLQKMeans(n_clusters=3, epsilon=1.0, delta=1e-6, radius=3.0, random_state=i).fit(X)
    assert acc.basic_total()[0] == 20.0                       # exactly: the ledgers' stated ε add up
    assert acc.basic_total()[1] == pytest.approx(20e-6, rel=1e-12)
    assert len(acc.runs) == 20 and acc.n_releases == 20 * 20   # 20 noisy Lloyd steps per fit
    assert acc.target_relation() == "replace_one"
    # dp-accounting on the same events, built here from first principles: each of the 20 releases
    # of a fit has σ = analytic σ of sensitivity Δ·√20 at (1, 1e-6), so noise multiplier σ/Δ
    z = gaussian_sigma_analytic(math.sqrt(20), 1.0, 1e-6)
    ref = dp_accounting.pld.PLDAccountant()
    for _ in range(20):
        ref.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z), 20))
    delta = 20 * 1e-6                                          # the δ of the basic total
    expected = ref.get_epsilon(delta)
    tight = acc.tight_total(delta)
    assert tight.epsilon == pytest.approx(expected, rel=0.01)
    assert 4.0 < tight.epsilon < 5.0                            # the 4.50, far below 20 (and 57.9)
    assert tight.value_discretization_interval == 1e-4 and tight.relation == "replace_one"


def test_a_fit_past_the_budget_raises_before_any_release():
    acc = PrivacyAccountant(budget_epsilon=1.5)
    with acc:
        SuLQKMeans(n_clusters=3, epsilon=1.0, radius=3.0).fit(X)
        before = (list(acc.runs), acc.basic_total(), acc.n_releases)
        model = SuLQKMeans(n_clusters=3, epsilon=1.0, radius=3.0)
        with pytest.raises(ValueError, match="budget") as info:
            model.fit(X)
    assert "1.5" in str(info.value) and "2" in str(info.value)          # the budget and the total
    assert fitted_attributes(model) == []                                 # nothing was fitted
    assert (list(acc.runs), acc.basic_total(), acc.n_releases) == before


def test_a_fit_within_the_budget_runs_and_remaining_shrinks():
    acc = PrivacyAccountant(budget_epsilon=2.0, budget_delta=1e-5)
    with acc:
        CandidateKMeans(n_clusters=2, epsilon=0.75, radius=3.0).fit(X)
    assert acc.remaining() == pytest.approx((1.25, 1e-5 - 1e-6))
    assert PrivacyAccountant().remaining() == (math.inf, math.inf)


def test_the_check_also_refuses_delta_and_converts_the_planned_relation():
    acc = PrivacyAccountant(budget_epsilon=3.0, budget_delta=1e-6)
    acc.check(1.0, 1e-6, "replace_one")
    with pytest.raises(ValueError, match="delta"):
        acc.check(0.1, 2e-6, "replace_one")
    acc.record(PrivacyEvent.approx_dp(1.0, relation="replace_one"))
    acc.check(0.9, relation="add_remove")        # 1 + 2·0.9 = 2.8
    with pytest.raises(ValueError, match="3.2"):   # 1 + 2·1.1 in replace-one
        acc.check(1.1, relation="add_remove")


# ----------------------------------------------------------------------------- relations
def test_relations_are_the_audit_ones():
    assert RELATIONS is AUDIT_RELATIONS and set(RELATIONS) == {"replace_one", "add_remove", "cell_pm1"}


@pytest.mark.parametrize("source,target,k", [
    ("add_remove", "replace_one", 2), ("replace_one", "cell_pm1", 1), ("add_remove", "cell_pm1", 2),
    ("replace_one", "replace_one", 1), ("cell_pm1", "cell_pm1", 1), ("add_remove", "add_remove", 1)])
def test_conversion_factors(source, target, k):
    assert conversion_factor(source, target) == k


@pytest.mark.parametrize("source,target", [("cell_pm1", "replace_one"), ("cell_pm1", "add_remove"),
                                           ("replace_one", "add_remove")])
def test_conversions_that_do_not_hold_are_refused_naming_both(source, target):
    with pytest.raises(ValueError) as info:
        convert_event(PrivacyEvent.exponential(1.0, relation=source), target)
    assert RELATIONS[source] in str(info.value) and RELATIONS[target] in str(info.value)


def test_add_remove_to_replace_one_doubles_sensitivity_and_applies_group_privacy():
    r = "add_remove"
    g = convert_event(PrivacyEvent.gaussian(20.0, 3, r, stated=(1.0, 1e-6)), "replace_one")
    assert g.noise_multiplier == 10.0 and g.count == 3 and g.relation == "replace_one"
    assert g.stated == pytest.approx((2.0, (1 + math.e) * 1e-6))
    assert convert_event(PrivacyEvent.laplace(2.0, relation=r), "replace_one").basic() == (1.0, 0.0)
    dl = convert_event(PrivacyEvent.discrete_laplace(Fraction(5, 2), 1, relation=r), "cell_pm1")
    assert dl.sensitivity == 2 and dl.basic() == pytest.approx((0.8, 0.0))
    assert convert_event(PrivacyEvent.exponential(0.5, 4, r), "replace_one").basic() == (4.0, 0.0)
    a = convert_event(PrivacyEvent.approx_dp(0.3, 1e-5, relation=r), "replace_one")
    assert (a.epsilon, a.delta) == pytest.approx((0.6, (1 + math.exp(0.3)) * 1e-5))
    same = convert_event(PrivacyEvent.gaussian(4.0, relation="replace_one", stated=(1, 0.1)), "cell_pm1")
    assert same.noise_multiplier == 4.0 and same.stated == (1.0, 0.1)        # one cell changes one document


@pytest.mark.parametrize("relations,common", [
    (["replace_one"], "replace_one"), (["add_remove"], "add_remove"),
    (["add_remove", "replace_one"], "replace_one"), (["replace_one", "cell_pm1"], "cell_pm1"),
    (["cell_pm1", "add_remove", "replace_one"], "cell_pm1"), ([], None)])
def test_weakest_common_relation(relations, common):
    assert weakest_common_relation(relations) == common


def test_unknown_relation_is_refused():
    with pytest.raises(ValueError, match="relation must be one of"):
        weakest_common_relation(["one row"])
    with pytest.raises(ValueError, match="relation must be one of"):
        PrivacyEvent.exponential(1.0, relation="one row")


def test_mixed_relations_add_up_in_the_weakest_common_one():
    """The co-clustering page's run at ε = 1: DP-τCC (one cell), DPHD and DPNMF (a document
    replaced), DP-KMeans (a document added or removed: 2ε under one cell ±1)."""
    acc = PrivacyAccountant()
    acc.record(PrivacyEvent.approx_dp(1.0), relation="cell_pm1", label="DP-τCC")
    acc.record(PrivacyEvent.approx_dp(1.0, 1e-5), relation="replace_one", label="DPHD")
    acc.record(PrivacyEvent.approx_dp(1.0), relation="add_remove", label="DP-KMeans")
    acc.record(PrivacyEvent.gaussian(30.0, 8, stated=(1.0, 1e-5)), relation="replace_one", label="DPNMF")
    assert acc.target_relation() == "cell_pm1"
    assert acc.basic_total() == pytest.approx((5.0, 2e-5))
    assert [r.epsilon for r in acc.runs] == [1.0, 1.0, 1.0, 1.0]         # each in its own relation
    with pytest.raises(ValueError, match="no conversion"):
        acc.basic_total("replace_one")
    fixed = PrivacyAccountant(relation="replace_one")
    with pytest.raises(ValueError, match="no conversion"):
        fixed.record(PrivacyEvent.approx_dp(1.0), relation="cell_pm1")
    assert fixed.runs == []


# ----------------------------------------------------------------------------- recording
def test_nonprivate_runs_are_listed_apart_and_not_counted():
    acc = PrivacyAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leaky = SuLQKMeans(n_clusters=2, epsilon=1.0, radius="data").fit(X)
    run = acc.record(leaky)
    assert not run.private and "radius" in run.reason and acc.nonprivate_runs == [run]
    acc.record(PrivacyEvent.approx_dp(2.0, relation="replace_one"), private=False, reason="public seed 3")
    assert acc.runs == [] and acc.basic_total() == (0.0, 0.0) and acc.n_releases == 0
    assert [r.reason for r in acc.nonprivate_runs][-1] == "public seed 3"


def test_an_event_of_count_140_is_140_releases():
    acc = PrivacyAccountant()
    acc.record(PrivacyEvent.exponential(0.01, count=140, relation="replace_one"))
    assert acc.n_releases == 140 and acc.basic_total()[0] == pytest.approx(1.4)


def test_a_fit_inside_a_fit_is_recorded_once():
    acc = PrivacyAccountant()
    docs = np.abs(X)
    with acc:
        DPHD(n_clusters=2, epsilon=1.0).fit(docs)          # DPHD.fit calls CandidateKMeans.fit
    assert len(acc.runs) == 1 and acc.runs[0].label == "DPHD" and acc.basic_total()[0] == pytest.approx(1.0)


def test_without_an_active_accountant_nothing_is_checked_or_recorded():
    acc = PrivacyAccountant(budget_epsilon=0.1)
    SuLQKMeans(n_clusters=2, epsilon=1.0, radius=3.0).fit(X)
    with acc:
        pass
    SuLQKMeans(n_clusters=2, epsilon=1.0, radius=3.0).fit(X)
    assert acc.runs == []


def test_the_active_accountant_is_per_thread():
    acc = PrivacyAccountant()
    with acc:
        t = threading.Thread(target=lambda: SuLQKMeans(n_clusters=2, epsilon=1.0, radius=3.0).fit(X))
        t.start()
        t.join()
    assert acc.runs == []


def test_the_wrapped_fit_keeps_signature_and_docstring():
    for cls in (SuLQKMeans, CandidateKMeans, DPNMF, DPHD):
        assert "Parameters" in cls.fit.__doc__
        assert inspect.signature(cls.fit) == inspect.signature(cls.fit.__wrapped__)
    assert list(inspect.signature(DPNMF.fit).parameters) == ["self", "X", "y", "callback"]


def test_record_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="record takes"):
        PrivacyAccountant().record(3.0)
    with pytest.raises(ValueError, match="relation"):
        PrivacyAccountant().record(PrivacyEvent.approx_dp(1.0))


# ----------------------------------------------------------------------------- events
def test_event_validation_names_the_parameter():
    with pytest.raises(ValueError, match="noise_multiplier"):
        PrivacyEvent.gaussian(0.0)
    with pytest.raises(ValueError, match="count"):
        PrivacyEvent.laplace(1.0, count=0)
    with pytest.raises(ValueError, match="sensitivity"):
        PrivacyEvent.discrete_laplace(2.0, sensitivity=1.5)
    with pytest.raises(ValueError, match="state it"):
        PrivacyEvent.gaussian(2.0).basic()


def test_events_give_their_dp_accounting_forms():
    g = PrivacyEvent.gaussian(2.0, count=5).dp_event()
    assert g == dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 5)
    assert PrivacyEvent.laplace(3.0).dp_event() == dp_accounting.LaplaceDpEvent(3.0)
    assert PrivacyEvent.discrete_laplace(Fraction(4, 1), 2).dp_event() == dp_event.DiscreteLaplaceDpEvent(0.25, 2)
    assert PrivacyEvent.approx_dp(1.0, 1e-6).dp_event() is None


def test_laplace_and_discrete_laplace_tight_totals_match_dp_accounting():
    acc = PrivacyAccountant()
    acc.record([PrivacyEvent.laplace(10.0, count=30), PrivacyEvent.discrete_laplace(Fraction(20), 1, count=10)],
               relation="add_remove")
    ref = dp_accounting.pld.PLDAccountant()
    ref.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(10.0), 30))
    ref.compose(dp_accounting.SelfComposedDpEvent(dp_event.DiscreteLaplaceDpEvent(0.05, 1), 10))
    assert acc.basic_total()[0] == pytest.approx(3.5)
    assert acc.tight_epsilon(1e-6) == pytest.approx(ref.get_epsilon(1e-6), rel=0.01)
    assert acc.tight_epsilon(1e-6) < 2.5                         # composition below the sum


def test_pure_epsilon_events_at_delta_zero_are_not_below_their_sum():
    acc = PrivacyAccountant()
    acc.record(PrivacyEvent.exponential(0.5, count=4), relation="replace_one")
    assert 2.0 <= acc.tight_epsilon(0.0) <= 2.0 + 1e-3            # a pessimistic upper bound
    assert acc.tight_epsilon(1e-3) < 2.0


def test_gaussian_budget_events_use_the_released_sigma():
    b = GaussianBudget(0.7, 1e-5, 12)
    (ev,) = b.events("replace_one")
    assert ev.kind == "gaussian" and ev.count == 12 and ev.stated == (0.7, 1e-5)
    assert ev.noise_multiplier == pytest.approx(b.sigma(3.0) / 3.0, rel=1e-12)


# ----------------------------------------------------------------------------- the ledger
def test_ledger_record_works_as_before_and_keeps_events():
    ledger = PrivacyLedger()
    ledger.record("a", "Laplace", 0.5)
    ev = PrivacyEvent.laplace(4.0, count=2, stated=(0.5, 0.0))
    ledger.record("b", "Laplace", 0.5, events=[ev])
    assert ledger.total() == (1.0, 0.0)
    assert ledger.as_records()[0] == {"what": "a", "mechanism": "Laplace", "epsilon": 0.5, "delta": 0.0, "note": ""}
    assert ledger.events() == [PrivacyEvent.approx_dp(0.5, 0.0), ev]
    other = PrivacyLedger()
    other.extend(ledger, prefix="x ")
    assert other.events() == ledger.events()
    with pytest.raises(ValueError, match="PrivacyEvent"):
        ledger.record("c", "Laplace", 0.1, events=[(0.1, 0)])


def test_estimators_with_a_gaussian_budget_describe_their_releases():
    sulq = SuLQKMeans(n_clusters=2, epsilon=1.0, radius=3.0, n_iter=7).fit(X)
    (ev,) = sulq.ledger_.events()
    assert ev.kind == "gaussian" and ev.count == 7 and ev.stated == (1.0, 1e-6)
    cand = CandidateKMeans(n_clusters=2, epsilon=1.0, radius=3.0).fit(X)
    kinds = [e.kind for e in cand.ledger_.events()]
    assert kinds == ["approx_dp", "exponential", "gaussian"]
    assert math.fsum(e.basic()[0] for e in cand.ledger_.events()) == 1.0
    nmf = DPNMF(n_clusters=2, epsilon=1.0, n_iter=3).fit(np.abs(X))
    (ev,) = nmf.ledger_.events()
    assert ev.kind == "gaussian" and ev.count == 6 and ev.relation == "replace_one"


def test_huge_epsilons_do_not_break_the_tight_total():
    """A sweep up to ε = 1000: e^ε overflows a privacy-loss grid, so those releases are added by basic
    composition; the tight total stays finite, at most the basic one."""
    acc = PrivacyAccountant()
    for eps in (0.1, 1.0, 1000.0):
        acc.record(PrivacyEvent.approx_dp(eps, 1e-6, count=5), relation="replace_one")
        acc.record(GaussianBudget(eps, 1e-6, 10).events(), relation="replace_one")
    basic = acc.basic_total()
    tight = acc.tight_total()
    assert math.isfinite(tight.epsilon) and 5000 < tight.epsilon <= basic[0]
    assert acc.tight_epsilon(0.0) == math.inf                   # δ below the δ of the (ε, δ) releases


def test_nested_blocks_and_the_process_default_see_every_fit():
    """An inner `with a2:` does not hide a fit from the outer budget (both check and record it);
    a fit in another thread is seen by the process-wide default accountant."""
    import threading
    from dpcore.kmeans.sulq import SuLQKMeans
    X = np.random.default_rng(0).normal(size=(200, 3))
    est = lambda: SuLQKMeans(n_clusters=2, epsilon=1.0, delta=1e-6, radius=5.0, n_iter=2, random_state=0)  # noqa: E731
    outer, inner = PrivacyAccountant(budget_epsilon=1.5), PrivacyAccountant()
    with outer:
        with inner:
            est().fit(X)
            with pytest.raises(ValueError, match="budget"):
                est().fit(X)                      # the outer budget refuses the second fit
    assert len(outer.runs) == len(inner.runs) == 1
    default = PrivacyAccountant().make_default()
    try:
        t = threading.Thread(target=lambda: est().fit(X))
        t.start()
        t.join()
        assert len(default.runs) == 1
    finally:
        PrivacyAccountant.clear_default()
