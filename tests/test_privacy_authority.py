"""One privacy authority in the library: estimators plan in public, the verdicts are decided
in dpcore.lab.verdicts from the estimator, its catalogue entry and the run's context, and the
meter (dpcore.privacy.meter) charges them, with a budget that refuses a plan before it runs."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from dpcore.data import PAPER_SPECS, load_dataset
from dpcore.lab.methods import METHODS, preset
from dpcore.lab.verdicts import (NOT_MIXED_REASON, RunContext, context_reasons, judge_run, mixing_unchecked,
                                 plan_run)
from dpcore.privacy import PrivacyAccountant, PrivacyEvent
from dpcore.privacy.meter import PrivacyMeter, Verdict, event_from_dict, event_to_dict, events_from_json, \
    events_to_json

PRIVATE = [name for name, m in METHODS.items() if m.private]


@pytest.fixture(scope="module")
def points():
    return load_dataset(**PAPER_SPECS["lines_r3"])


@pytest.fixture(scope="module")
def counts():
    return load_dataset(**PAPER_SPECS["blocks"])


def _data(m, points, counts):
    return points if m.family in ("subspace", "kmeans") else counts


# ----------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("name", PRIVATE)
@pytest.mark.parametrize("shape", [(12, 0), (0, 5)])
def test_every_private_estimator_refuses_an_empty_input_before_charging(name, shape, points, counts):
    m = METHODS[name]
    est = m.build(_data(m, points, counts), epsilon=1.0, random_state=0)
    acc = PrivacyAccountant(budget_epsilon=100.0)
    with acc, pytest.raises(ValueError, match="no (rows|features)"):
        est.fit(np.zeros(shape))
    with pytest.raises(ValueError, match="no (rows|features)"):
        est.planned_privacy(np.zeros(shape))
    assert acc.runs == [] and acc.nonprivate_runs == [] and not hasattr(est, "ledger_")


@pytest.mark.parametrize("name", PRIVATE)
def test_the_plan_is_what_the_ledger_records(name, points, counts):
    """A plan read off the parameters and the shape, before the fit, equals the fit's ledger
    (basic composition) and its privacy; a plan may not understate."""
    m = METHODS[name]
    ds = _data(m, points, counts)
    for label, params in (m.presets or {"": {}}).items():
        params = dict(params)
        if m.family == "kmeans" and "radius" in m.cls().get_params():
            params["radius"] = 2.0
        est = m.build(ds, params=params, epsilon=1.0, random_state=0)
        plan = est.planned_privacy(ds.X.shape)
        assert plan.relation == m.relation == est.claimed_relation
        est.fit(ds.X)
        eps, dlt = est.ledger_.total()
        assert eps == pytest.approx(plan.epsilon, rel=1e-12), label
        assert dlt <= plan.delta * (1 + 1e-12) + 1e-300, label
        assert plan.private == est.released_private_, (label, plan.reasons)


def test_a_plan_names_why_a_run_will_not_be_private(points, counts):
    gibbs = METHODS["gibbs"].build(points, params={"init": "kplane"}, epsilon=1.0)
    plan = gibbs.planned_privacy(points.X)
    assert not plan.private and "kplane" in plan.reason
    dpnmf = METHODS["dpnmf"].build(counts, params=preset("DPNMF as published: basis fixed at the NNDSVD start (not "
                                                         "private)")["params"], epsilon=1.0)
    assert not dpnmf.planned_privacy(counts.X).private
    sulq = METHODS["sulq_kmeans"].build(points, params={"radius": "data"}, epsilon=1.0)
    assert "radius" in sulq.planned_privacy(points.X).reason
    lloyd = METHODS["dplloyd"].build(points, params={"radius": 1.0}, epsilon=1.0)
    assert "floating-point" in lloyd.planned_privacy(points.X).reason


def test_public_constants_read_the_parameters_then_the_fit(points):
    est = METHODS["sulq_kplane"].build(points, params={"n_clusters": 3, "subspace_dim": 1}, epsilon=2.0,
                                       random_state=0)
    before = {name: value for name, value, _ in est.public_constants()}
    assert before["ε"] == 2.0 and before["relation"] == "replace_one"
    est.fit(points.X)
    after = {name: value for name, value, _ in est.public_constants()}
    assert after["ε"] == pytest.approx(2.0) and after["δ"] > 0


# ----------------------------------------------------------------------------- verdicts
def test_verdicts_combine_estimator_entry_and_context(points):
    m = METHODS["gibbs"]
    est = m.build(points, params={"n_clusters": 3, "subspace_dim": 1, "n_iter": 4}, epsilon=1.0)
    sweep = RunContext(where="a sweep")
    assert not plan_run(m, est, points.X, sweep).private
    assert mixing_unchecked("a sweep") in plan_run(m, est, points.X, sweep).reasons
    page = RunContext(checks_mixing=True)
    planned = plan_run(m, est, points.X, page)
    assert planned.private and planned.planned and planned.epsilon == pytest.approx(1.0)
    est.fit(points.X)
    assert judge_run(m, est, RunContext(checks_mixing=True, mixing=True)).private
    unmixed = judge_run(m, est, RunContext(checks_mixing=True, mixing=False))
    assert not unmixed.private and NOT_MIXED_REASON in unmixed.reasons
    seeded = judge_run(m, est, RunContext(seed=3, checks_mixing=True, mixing=True))
    assert not seeded.private and "public seed 3" in seeded.reason


def test_a_q_read_off_the_data_makes_a_subspace_run_not_private():
    from dpcore.upload import load_upload
    ds = load_upload("x.csv", b"\n".join(b"%f,%f,%f,%f" % tuple(np.random.default_rng(i).normal(size=4))
                                          for i in range(40)))
    read = type(ds)(**{**ds.__dict__, "params": {**ds.params, "subspace_dim": 1}})
    assert context_reasons("sulq_kplane", {"subspace_dim": 1}, RunContext(dataset=read))
    assert not context_reasons("sulq_kplane", {"subspace_dim": 2}, RunContext(dataset=read))   # the public default
    assert not context_reasons("kplane", {"subspace_dim": 1}, RunContext(dataset=read))         # no claim to void


def test_a_method_without_a_claim_is_not_charged(points):
    est = METHODS["kplane"].build(points, params={"n_clusters": 3, "subspace_dim": 1}).fit(points.X)
    v = judge_run("kplane", est)
    assert not v.claim and not v.private
    meter = PrivacyMeter()
    assert meter.charge("d", v) is None and meter.rows() == []


# ----------------------------------------------------------------------------- the meter
def _lap(eps=1.0, relation="add_remove", label="count"):
    return Verdict(label, relation, (PrivacyEvent.laplace(1.0 / eps),))


def test_events_travel_as_data_exactly():
    from fractions import Fraction
    evs = [PrivacyEvent.gaussian(2.5, count=7, relation="replace_one", stated=(6.0, 1e-6)),
           PrivacyEvent.discrete_laplace(Fraction(7, 3), sensitivity=2, count=3),
           PrivacyEvent.exponential(0.3, count=2, slack=(0.0, 1e-17)), PrivacyEvent.approx_dp(0.1, 1e-9)]
    assert [event_from_dict(event_to_dict(e)) for e in evs] == evs
    assert events_from_json(events_to_json(evs)) == evs


def test_the_headline_is_infinite_once_a_run_that_is_not_private_touched_the_data():
    meter = PrivacyMeter()
    meter.charge("d", _lap(1.0))
    h = meter.headline("d", delta=1e-6)
    assert h.epsilon == pytest.approx(1.0) and not h.unbounded and h.tight is not None
    meter.charge("d", Verdict("seeded", "add_remove", (PrivacyEvent.laplace(1.0),), False, ("public seed 1",)))
    h = meter.headline("d")
    assert math.isinf(h.epsilon) and h.unbounded and h.private_epsilon == pytest.approx(1.0)
    assert meter.headline("other").epsilon == 0.0


def test_a_budget_refuses_a_plan_whole_and_a_run_that_is_not_private():
    meter = PrivacyMeter(budget_epsilon=2.0)
    with pytest.raises(ValueError, match="class budget"):
        meter.reserve("d", [_lap(1.0), _lap(1.5)])
    assert meter.rows() == []
    with pytest.raises(ValueError, match="would not be private"):
        meter.reserve("d", [Verdict("seeded", "add_remove", (PrivacyEvent.laplace(1.0),), False, ("public seed",))])
    with meter.reserve("d", [_lap(1.0)]) as r:
        r.charge(_lap(1.0))
    assert meter.headline("d").remaining == pytest.approx(1.0)


def test_reservations_hold_the_budget_between_sessions():
    """Two sessions plan at once: the second cannot pass the check with the first's plan held."""
    meter = PrivacyMeter(budget_epsilon=1.5)
    first = meter.reserve("d", [_lap(1.0)])
    with pytest.raises(ValueError, match="reserved"):
        meter.reserve("d", [_lap(1.0)])
    first.release()                    # the first run was stopped: nothing charged, the budget is back
    with meter.reserve("d", [_lap(1.0)]) as r:
        r.charge(_lap(1.0))
    with pytest.raises(ValueError, match="budget"):
        meter.check("d", [_lap(1.0)])


def test_concurrent_charges_all_count():
    meter = PrivacyMeter()
    threads = [threading.Thread(target=lambda: [meter.charge("d", _lap(0.01)) for _ in range(50)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert meter.headline("d").private_fits == 400
    assert meter.headline("d").private_epsilon == pytest.approx(4.0)


def test_nothing_lowers_what_was_spent():
    meter = PrivacyMeter(budget_epsilon=3.0)
    meter.charge("d", _lap(1.0))
    mark = meter.since()
    assert meter.rows("d", since=mark) == []          # a viewer's new count starts at 0 ...
    assert meter.headline("d").remaining == pytest.approx(2.0)   # ... what remains does not rise
    meter.charge("d", _lap(0.5))
    assert [r.label for r in meter.rows("d", since=mark)] == ["count"]
    assert meter.headline("d").private_epsilon == pytest.approx(1.5)


def test_relations_compose_in_the_weakest_common_one():
    meter = PrivacyMeter()
    meter.charge("d", _lap(1.0, "add_remove"))
    meter.charge("d", _lap(1.0, "replace_one"))
    h = meter.headline("d")
    assert h.relation == "replace_one" and h.private_epsilon == pytest.approx(3.0)


def test_an_audit_entry_adds_up_in_one_row():
    meter = PrivacyMeter()
    for _ in range(3):
        meter.charge("d", _lap(0.5).times(2), entry="audit-1", label="audit")
    rows = meter.rows("d")
    assert len(rows) == 1 and rows[0].fits == 6 and rows[0].epsilon == pytest.approx(3.0)


# ----------------------------------------------------------------------------- fixes after the review
def test_under_a_budget_a_dataset_whose_epsilon_is_infinite_has_nothing_left():
    meter = PrivacyMeter()
    meter.charge("d", Verdict("seeded", "add_remove", (PrivacyEvent.laplace(1.0),), False, ("public seed 1",)))
    meter.set_budget(10.0)
    assert meter.headline("d").remaining == 0.0
    with pytest.raises(ValueError, match="already ∞"):
        meter.reserve("d", [_lap(1.0)])
    meter.reserve("other", [_lap(1.0)]).release()            # other data: the budget is whole


def test_a_plan_given_the_values_runs_the_fits_own_checks_on_them(points):
    from sklearn.preprocessing import StandardScaler
    X = StandardScaler().fit_transform(np.random.default_rng(0).normal(size=(300, 4)) * [1, 5, 9, 2])
    est = METHODS["sulq_kmeans"].build(points, params={"radius": 3.0, "n_clusters": 3}, epsilon=1.0)
    assert plan_run("sulq_kmeans", est, X.shape).private                     # the shape says nothing
    planned = plan_run("sulq_kmeans", est, X)
    assert not planned.private and "scaled by statistics of the data" in planned.reason
    est.fit(X)
    assert not judge_run("sulq_kmeans", est).private                          # as the fit itself finds
    meter = PrivacyMeter(budget_epsilon=10.0)
    with pytest.raises(ValueError, match="would not be private"):
        meter.reserve("d", [planned])


def test_the_meter_counts_every_view_of_the_same_records_as_one_dataset():
    from dpcore.lab.verdicts import dataset_key
    a = load_dataset(kind="yaleb", subjects=5, n_per_subject=64, pca_dim=9, d=50, normalize="rows")
    b = load_dataset(kind="yaleb", subjects=6, n_per_subject=64, pca_dim=9, d=49, normalize="rows")
    assert a.name != b.name and dataset_key(a) == dataset_key(b)
    from dpcore.upload import load_upload
    up = load_upload("my secret file name.csv", b"1,2\n3,4\n5,6\n7,8\n")
    assert "secret" not in dataset_key(up) and up.params["sha256"][:8] in dataset_key(up)
    assert dataset_key(load_dataset(**PAPER_SPECS["lines_r3"])) == load_dataset(**PAPER_SPECS["lines_r3"]).name


def test_a_sweeps_seed_written_in_code_is_public_whatever_the_context():
    from dpcore.lab.sweeps import Sweep, run_sweep
    data = {"kind": "gaussians", "n": 300, "d": 4, "k": 3, "sigma": 0.1, "center_box": 1.0, "random_state": 0}
    sw = Sweep(dataset=data, algorithms=[preset("SuLQ k-means")], epsilons=[1.0], trials=2, metrics=["objective"],
               seed=7)
    meter = PrivacyMeter(budget_epsilon=100.0)
    with pytest.raises(ValueError, match="would not be private"):
        run_sweep(sw, meter=meter, dataset_key="g", context=RunContext(where="a sweep"))
    run_sweep(sw, meter=meter, dataset_key="g", context=RunContext(where="a sweep"), seed_is_secret=True)
    assert [r.private for r in meter.rows("g")] == [True, True]


def test_a_metric_that_cannot_be_computed_does_not_lose_a_charged_run():
    from dpcore.lab.sweeps import METRICS, Sweep, run_sweep

    def broken(ds, est):
        raise ValueError("no truth for this metric")
    METRICS["_broken"] = (broken, METRICS["objective"][1])
    try:
        data = {"kind": "gaussians", "n": 300, "d": 4, "k": 3, "sigma": 0.1, "center_box": 1.0, "random_state": 0}
        sw = Sweep(dataset=data, algorithms=[preset("SuLQ k-means")], epsilons=[1.0], trials=1,
                   metrics=["_broken"], seed=None)
        acc = PrivacyAccountant()
        with acc:
            df = run_sweep(sw)
        assert len(df) == 1 and math.isnan(df["_broken"][0]) and "no truth" in df["warnings"][0]
        assert len(acc.runs) == 1                 # charged, and its row came back
    finally:
        del METRICS["_broken"]
