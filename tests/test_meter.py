"""The session meter is the library's accountant (ui/common.py): per dataset, in the weakest
relation common to the runs, counting fits (one run of a method on the data = one release),
non-private fits apart with their reasons, an optional class budget that refuses a run before it
runs; and the pages that charge it (the Co-clustering run in one cell ±1, a sweep of 140 fits, an
audit of the user's data as one entry, Gibbs in sweeps and audits listed as not private)."""
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import by_key as w
from apptest_helpers import open_page, press
from dpcore.privacy import GaussianBudget, PrivacyEvent, PrivacyLedger
from ui.common import CLASS_BUDGET_KEY, SessionMeter

SMALL = {"kind": "subspaces", "n": 150, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}


def _sidebar_script():
    from ui.common import sidebar
    sidebar()


def sidebar_of(meter, spec, budget=None):
    """The shared sidebar drawn with ``meter`` and ``spec`` as the current dataset."""
    at = AppTest.from_function(_sidebar_script, default_timeout=300)
    at.session_state["session_meter"] = meter
    at.session_state["dataset"] = {"spec": spec}
    if budget is not None:
        at.session_state["class_budget"] = budget
    at.run()
    assert not at.exception, at.exception
    return at


def captions(at):
    return " ".join(c.value for c in at.sidebar.caption)


def meter_of(at):
    return at.session_state["session_meter"]


def fits(text, n, private=True):
    """Whether the sidebar's ``text`` counts ``n`` private (or non-private) fits."""
    return re.search(rf"\b{n:,} {'private' if private else 'non-private'} fit", text) is not None


# ----------------------------------------------------------------------------- the meter itself
def test_meter_totals_in_the_weakest_common_relation_with_releases_and_tight_total():
    meter = SessionMeter()
    for _ in range(20):
        ledger = PrivacyLedger()
        ledger.record("noisy means", "Gaussian", 1.0, 1e-6,
                      events=[PrivacyEvent.gaussian(76.9, count=20, stated=(1.0, 1e-6))])
        meter.record(ledger, "SuLQ", "D", True, relation="replace_one")
    meter.record(PrivacyEvent.approx_dp(1.0), "DP-Lloyd", "D", True, relation="add_remove")
    assert meter.relation("D") == "replace_one" and meter.private_total("D")[0] == pytest.approx(22.0)
    assert meter.n_fits("D") == 21 and meter.n_events("D") == 401     # 21 fits (releases), 401 noise events
    assert [r["fits"] for r in meter.runs] == [1] * 21 and meter.runs[0]["events"] == 20
    assert meter.tight_total("D").epsilon < 10                   # far below 22: 400 Gaussian releases compose tightly
    at = sidebar_of(meter, SMALL)                                # another dataset is current: the last run is named
    assert "D" in captions(at) and "replace-one" in captions(at)


def test_sidebar_names_the_relation_releases_tight_total_and_lists_nonprivate_runs_apart():
    meter = SessionMeter()
    assert [m.value for m in sidebar_of(meter, SMALL).sidebar.metric] == ["0"]
    ds_name = _dataset_name(SMALL)
    for _ in range(10):
        meter.record(GaussianBudget(1.0, 1e-6, 10).events(), "SuLQ", ds_name, True)
    meter.record(PrivacyEvent.approx_dp(3.0), "Gibbs (ε = 3)", ds_name, False,
                 "the chain has not mixed (the page's verdict: not yet mixed)")
    at = sidebar_of(meter, SMALL, budget=12.0)
    assert [m.value for m in at.sidebar.metric] == ["10"]
    text = captions(at)
    # ten fits of ten Gaussian steps each: ten fits, not 100 "releases"
    assert "replace-one" in text and fits(text, 10)                       # the relation and the fits
    assert "100 private" not in text and "run(s)" not in text
    assert "Tight total" in text                                         # beside the total by adding up
    assert re.search(r"\b12\b", text) and re.search(r"\b2 left\b", text)      # the class budget and what is left
    assert fits(text, 1, private=False) and "not yet mixed" in text       # the non-private fit with its reason


def test_the_metric_help_says_what_a_fit_is_and_when_a_run_is_charged():
    at = sidebar_of(SessionMeter(), SMALL)
    help_text = at.sidebar.metric[0].proto.help
    # what a fit is (one release), when it is charged, and what a stopped audit or run has paid
    assert "fit" in help_text and "release" in help_text and "charged" in help_text
    assert help_text.count("stopped") >= 2


def test_records_of_one_entry_add_up_in_one_row():
    meter = SessionMeter()
    for n in (10, 20):                                            # an audit charged in two pieces
        meter.record([PrivacyEvent.approx_dp(1.0, count=n)], "audit", "D", True, fits=n, entry="a1")
    meter.record(PrivacyEvent.approx_dp(2.0), "SuLQ", "D", True)
    for n in (4, 6):
        meter.record([PrivacyEvent.approx_dp(1.0, count=n)], "audit, seeded", "D", False, "public seed 0", fits=n,
                     entry="a2")
    assert [(r["label"], r["fits"]) for r in meter.runs] == [("audit", 30), ("SuLQ", 1), ("audit, seeded", 10)]
    assert meter.runs[0]["epsilon"] == pytest.approx(30.0) and meter.runs[0]["events"] == 30
    assert meter.private_total("D")[0] == pytest.approx(32.0)
    assert meter.n_fits("D") == 31 and meter.n_fits("D", private=False) == 10
    with pytest.raises(ValueError, match="privacy and relation"):
        meter.record(PrivacyEvent.approx_dp(1.0), "audit", "D", False, "x", entry="a1")
    with pytest.raises(ValueError, match="fits"):
        meter.record(PrivacyEvent.approx_dp(1.0), "x", "D", True, fits=0)


def test_sidebar_shows_a_second_metric_for_the_dataset_of_the_last_run():
    """A page that chose its own data (Co-clustering: four methods in one Run, 5 under one cell ±1):
    the sidebar's big number stays the Data page's dataset, and a second one shows the run's."""
    meter = SessionMeter()
    for label, rel in (("DP-τCC", "cell_pm1"), ("DPHD", "replace_one"), ("DP-KMeans", "add_remove"),
                       ("DPNMF", "replace_one")):
        meter.record(PrivacyEvent.approx_dp(1.0), label, "blocks B", True, relation=rel)
    at = sidebar_of(meter, SMALL)
    metrics = at.sidebar.metric
    assert [m.value for m in metrics] == ["0", "5"] and "blocks B" in metrics[1].label   # the run's dataset, named
    text = captions(at)
    assert "one cell ±1" in text and fits(text, 4)
    assert all(label in text for label in ("DP-τCC", "DPHD", "DP-KMeans", "DPNMF"))     # all four, not the last
    meter.record(PrivacyEvent.approx_dp(1.0), "SuLQ", _dataset_name(SMALL), True)     # the last run: this dataset
    assert [m.value for m in sidebar_of(meter, SMALL).sidebar.metric] == ["1"]


def _dataset_name(spec):
    from dpcore.data import load_dataset
    return load_dataset(**spec).name


def test_app_sidebar_has_the_class_budget_and_the_reload_caption():
    from pathlib import Path
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=300)
    at.run()
    assert not at.exception
    assert w(at, CLASS_BUDGET_KEY).value is None                         # no class budget until one is set
    assert "reload" in captions(at)                                      # a reload starts a new meter: said


# ----------------------------------------------------------------------------- budget refusals on the pages
def test_cluster_run_past_the_class_budget_is_refused_before_it_runs():
    at = open_page("3_cluster.py", spec=SMALL, state={"class_budget": 50.0})
    w(at, "cl_method").set_value("sulq")
    at.run()
    w(at, "sulq_eps").set_value(100.0)
    press(at, "cluster_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "100" in errors[0] and "50" in errors[0], errors
    assert "cluster_result" not in at.session_state and meter_of(at).runs == []     # nothing ran, nothing charged
    w(at, "sulq_eps").set_value(10.0)
    press(at, "cluster_form")
    assert not at.error and meter_of(at).private_total(meter_of(at).runs[0]["dataset"])[0] == pytest.approx(10.0)


def test_a_public_seed_run_is_not_refused_and_not_counted():
    at = open_page("3_cluster.py", spec=SMALL, state={"class_budget": 1.0})
    w(at, "cl_method").set_value("sulq")
    at.run()
    w(at, "cl_repro").check()
    at.run()
    press(at, "cluster_form")
    assert not at.error and [r["private"] for r in meter_of(at).runs] == [False]


def test_kmeans_side_by_side_past_the_budget_is_refused():
    at = open_page("6_kmeans.py", state={"class_budget": 5.0})
    w(at, "km_data").set_value("gaussians")
    at.run()
    w(at, "km_side_by_side").click()                            # default 0.1, 1, 10, 100: 111.1 > 5
    at.run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and meter_of(at).runs == []


# ----------------------------------------------------------------------------- what the pages charge
def test_coclustering_run_shows_at_least_five_in_one_cell():
    """DP-τCC + DPHD + DP-KMeans + DPNMF (private start) at ε = 1: the only relation all four share
    is one cell ±1, where DP-KMeans (one document added or removed) costs 2ε."""
    at = open_page("5_coclustering.py")
    w(at, "cc_peers").set_value(["DPHD", "DP-KMeans", "DPNMF (private start)"])
    press(at, "cocluster_form")
    assert not at.error, [e.value for e in at.error]
    meter = meter_of(at)
    name = meter.runs[0]["dataset"]
    assert [r["relation"] for r in meter.runs] == ["cell_pm1", "replace_one", "add_remove", "replace_one"]
    assert all(r["private"] for r in meter.runs) and all(r["epsilon"] == pytest.approx(1.0) for r in meter.runs)
    assert meter.relation(name) == "cell_pm1"
    eps, _ = meter.private_total(name)
    assert eps >= 5 - 1e-9 and eps == pytest.approx(5.0)
    side = sidebar_of(meter, at.session_state["cocluster_result"]["spec"])
    assert [m.value for m in side.sidebar.metric] == ["5"]
    assert "one cell ±1" in captions(side)
    side = sidebar_of(meter, SMALL)             # the Data page's dataset is another one: a second metric shows 5
    assert [m.value for m in side.sidebar.metric] == ["0", "5"] and name in side.sidebar.metric[1].label
    assert "one cell ±1" in captions(side) and fits(captions(side), 4)


def test_coclustering_past_the_budget_is_refused_before_dp_taucc_runs():
    at = open_page("5_coclustering.py", state={"class_budget": 4.0})
    w(at, "cc_peers").set_value(["DPHD", "DP-KMeans", "DPNMF (private start)"])
    press(at, "cocluster_form")                          # 5 in one cell ±1 > 4
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "5" in errors[0]
    assert meter_of(at).runs == [] and "cocluster_result" not in at.session_state


def test_a_sweep_of_140_fits_shows_140_releases():
    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300)
    w(at, "pu_methods").set_value(["SuLQ-10"])
    w(at, "pu_metrics").set_value(["d_W"])
    w(at, "pu_points").set_value(7)
    w(at, "pu_trials").set_value(20)
    w(at, "pu_jobs").set_value(1)
    press(at, "sweep_form")
    assert not at.error, [e.value for e in at.error]
    meter = meter_of(at)
    name = meter.runs[0]["dataset"]
    assert len(meter.runs) == 140 and all(r["private"] for r in meter.runs)
    assert meter.n_fits(name) == 140
    eps = sorted({r["epsilon"] for r in meter.runs})
    assert meter.private_total(name)[0] == pytest.approx(20 * sum(eps))
    assert fits(captions(sidebar_of(meter, SMALL)), 140)


def test_gibbs_in_a_sweep_is_not_private_and_not_planned():
    from dpcore.data import load_dataset
    from ui.sweep import build_sweep, counted, planned_sweep

    ds = load_dataset(**SMALL)
    sweep = build_sweep(SMALL, ["SuLQ-10", "Gibbs", "k-plane"], ["d_W"], [0.1, 1.0], 3, 2, 0)
    assert not counted(ds, "Gibbs") and counted(ds, "SuLQ-10")
    assert [p.count for p in planned_sweep(sweep, ds, None)] == [3, 3]          # SuLQ-10 only, at each ε
    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300, state={"class_budget": 0.01})
    w(at, "pu_methods").set_value(["Gibbs"])
    w(at, "pu_metrics").set_value(["d_W"])
    w(at, "pu_points").set_value(2)
    w(at, "pu_trials").set_value(1)
    w(at, "pu_jobs").set_value(1)
    press(at, "sweep_form")                                                      # not refused by the budget 0.01
    assert not at.error, [e.value for e in at.error]
    assert any("Gibbs" in c.value for c in at.caption)                          # said in the form, beside Run
    runs = meter_of(at).runs
    assert len(runs) == 2 and not any(r["private"] for r in runs)
    assert all("mixed" in r["reason"] for r in runs)                            # the reason: mixing is not checked
    assert meter_of(at).private_total(runs[0]["dataset"]) == (0.0, 0.0)


def test_a_sweep_past_the_budget_is_refused_before_it_runs():
    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300, state={"class_budget": 10.0})
    w(at, "pu_methods").set_value(["SuLQ-10", "k-plane"])
    w(at, "pu_jobs").set_value(1)
    press(at, "sweep_form")                              # the default grid 0.1 … 1000
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0]
    assert meter_of(at).runs == [] and "privacy_utility" not in at.session_state


def test_a_kmeans_sweep_with_the_radius_read_off_the_data_says_so_visibly():
    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300)
    w(at, "pu_methods").set_value(["SuLQ k-means", "k-means++"])
    w(at, "pu_metrics").set_value(["cost"])
    w(at, "pu_points").set_value(2)
    w(at, "pu_trials").set_value(1)
    w(at, "pu_jobs").set_value(1)
    press(at, "sweep_form")
    # said twice: in the form, with the methods, and beside the result
    assert sum("radius" in x.value and "data" in x.value for x in at.warning) >= 2, [x.value for x in at.warning]
    runs = meter_of(at).runs
    assert len(runs) == 2 and not any(r["private"] for r in runs) and all("radius" in r["reason"] for r in runs)


def audit_page(state=None):
    at = open_page("8_audit.py", spec=SMALL, timeout=180, state=state)
    assert w(at, "audit_data").value != "data_page"                 # the audit sets are the default
    w(at, "audit_data").set_value("data_page")
    at.run()
    w(at, "audit_algorithm").set_value("sulq_kplane")
    at.run()
    w(at, "audit_trials").set_value(50)
    return at


def planned_charge(at):
    """The captions that plan the fits an audit of the user's data makes (beside Run audit)."""
    return [c.value for c in at.caption if re.search(r"2 × [\d,]+ = [\d,]+ fits", c.value)]


def test_an_audit_of_the_users_data_charges_every_run_on_both_sides_as_one_entry():
    at = audit_page()
    at.run()
    name = _dataset_name(SMALL)
    preview = planned_charge(at)                                                   # before Run
    assert len(preview) == 1 and name in preview[0] and "2 × 50 = 100" in preview[0], preview
    assert "ε = 1 " in preview[0] and f"δ = {_audit_delta(SMALL):.3g}" in preview[0]     # each fit's ε and δ ...
    assert "ε = 100" in preview[0] and "replace-one" in preview[0]                      # ... and the total
    press(at, "audit_form")
    assert not at.error, [e.value for e in at.error]
    meter = meter_of(at)
    assert [(r["dataset"], r["private"], r["relation"], r["fits"]) for r in meter.runs] == \
        [(name, True, "replace_one", 100)]                                # ONE entry: 50 runs on D and 50 on D′
    assert meter.n_fits(name) == 100
    assert meter.private_total(name)[0] == pytest.approx(100.0)          # each at the claimed ε = 1
    text = " ".join(c.value for c in at.caption) + " ".join(i.value for i in at.info)
    assert "100 fits" in text                                                # what the audit charged, said
    assert "spends no privacy budget" not in text and "releases nothing about yours" not in text
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "charged to" in box and "computed from the raw data of D and D′" in box
    assert "everything this page shows" not in box
    side = captions(sidebar_of(meter, SMALL))
    assert fits(side, 100) and "run(s)" not in side


def _audit_delta(spec):
    from dpcore.lab.audit import audit_delta
    from dpcore.data import load_dataset
    return audit_delta("sulq_kplane", load_dataset(**spec), {})


def test_an_audit_of_the_users_data_past_the_budget_is_refused():
    at = press(audit_page({"class_budget": 60.0}), "audit_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "100" in errors[0]
    assert meter_of(at).runs == [] and "audit" not in at.session_state


def test_an_audit_with_a_public_seed_lists_its_runs_as_not_private():
    at = audit_page()
    w(at, "audit_repro").check()
    at.run()
    w(at, "audit_trials").set_value(50)
    press(at, "audit_form")
    preview = planned_charge(at)
    assert len(preview) == 1 and "2 × 50 = 100" in preview[0] and "not private" in preview[0], preview
    runs = meter_of(at).runs
    assert len(runs) == 1 and not runs[0]["private"] and "public seed" in runs[0]["reason"] and runs[0]["fits"] == 100
    side = captions(sidebar_of(meter_of(at), SMALL))
    assert fits(side, 100, private=False) and "(100 fits)" in side


def test_gibbs_in_an_audit_of_the_users_data_is_not_private_and_not_planned():
    from dpcore.data import load_dataset
    from ui.audit import AuditCharge, runs_private

    ds = load_dataset(**SMALL)
    private, reason = runs_private("gibbs", ds, {"init": "random"}, None)
    assert private is False and "mixed" in reason                       # not private: mixing is not checked
    assert runs_private("gibbs", ds, {"init": "kplane"}, None)[1].startswith(reason)   # ... and a k-plane start too
    assert AuditCharge("gibbs", ds, {"init": "random"}, 1.0, None, 50).plan() == []
    at = audit_page({"class_budget": 0.01})
    w(at, "audit_algorithm").set_value("gibbs")
    at.run()
    w(at, "audit_trials").set_value(50)
    w(at, "audit_sweeps").set_value(1)
    press(at, "audit_form")                                              # not refused by the budget 0.01
    assert not at.error, [e.value for e in at.error]
    (run,) = meter_of(at).runs
    assert not run["private"] and run["reason"] == reason and run["fits"] == 100


def test_an_audit_of_an_audit_set_charges_nothing():
    at = open_page("8_audit.py", timeout=180)
    w(at, "audit_algorithm").set_value("sulq_kplane")
    at.run()
    w(at, "audit_trials").set_value(50)
    press(at, "audit_form")
    assert not at.error
    assert "session_meter" not in at.session_state or not meter_of(at).runs
    assert any("releases nothing about yours" in c.value for c in at.caption)


def test_gibbs_chains_not_mixed_are_recorded_as_not_private():
    from dpcore.data import load_dataset
    from dpcore.subspace.gibbs import GibbsSubspaceClustering

    def script():
        import streamlit as st
        from ui.gibbs import record_chains
        record_chains(st.session_state["models"], st.session_state["verdicts"], None)

    ds = load_dataset(**SMALL)
    models = {e: GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, epsilon=e, n_iter=3).fit(ds.X)
              for e in (1.0, 2.0)}
    at = AppTest.from_function(script, default_timeout=300)
    at.session_state["dataset"] = {"spec": SMALL}
    at.session_state["models"] = models
    at.session_state["verdicts"] = {1.0: {"mixed": True}, 2.0: {"mixed": False}}
    at.run()
    assert not at.exception
    runs = meter_of(at).runs
    assert [r["private"] for r in runs] == [True, False] and "not yet mixed" in runs[1]["reason"]
    assert meter_of(at).private_total(runs[0]["dataset"]) == (1.0, 0.0)
    assert np.isfinite(runs[1]["epsilon"])
