"""The app's privacy meter (ui/meter.py) is the library's PrivacyMeter, one per server: per
dataset, in the weakest relation common to the runs, counting fits (one run of a method on the
data = one release), ε = ∞ once a fit that is not private used a dataset, basic / tight / RDP
totals side by side at a δ the user picks, an odds sentence, and a class budget that holds for
every session of the server and refuses a run (a private one past it, or one that would not be
private) before it runs. The Cluster page and sweeps charge through it."""
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import by_key as w
from apptest_helpers import open_page, press
from dpcore.privacy import GaussianBudget, PrivacyEvent
from dpcore.privacy.meter import Verdict

SMALL = {"kind": "subspaces", "n": 150, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}
APP = str(Path(__file__).resolve().parents[1] / "app.py")


def _sidebar_script():
    from ui.meter import sidebar
    sidebar()


def server():
    from ui.meter import class_meter
    return class_meter()


def sidebar_of(spec, budget=None):
    """The shared sidebar drawn with ``spec`` as the current dataset (the server's meter)."""
    at = AppTest.from_function(_sidebar_script, default_timeout=300)
    at.session_state["dataset"] = {"spec": spec}
    if budget is not None:
        server().set_budget(budget, "in the sidebar")
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


def _dataset_name(spec):
    from dpcore.data import load_dataset
    return load_dataset(**spec).name


def _gaussians(eps=1.0, n=10, relation="replace_one", label="SuLQ"):
    return Verdict(label, relation, tuple(GaussianBudget(eps, 1e-6, n).events()))


def _seeded(eps=3.0, label="Gibbs (ε = 3)", reason="the chain has not mixed (the page's verdict: not yet mixed)"):
    return Verdict(label, "replace_one", (PrivacyEvent.exponential(eps),), False, (reason,))


# ----------------------------------------------------------------------------- the meter in the sidebar
def test_sidebar_names_the_relation_fits_and_the_totals_side_by_side():
    assert [m.value for m in sidebar_of(SMALL).sidebar.metric] == ["0"]
    name = _dataset_name(SMALL)
    for _ in range(10):
        server().charge(name, _gaussians())
    at = sidebar_of(SMALL, budget=12.0)
    assert [m.value for m in at.sidebar.metric] == ["10"]
    text = captions(at)
    # ten fits of ten Gaussian steps each: ten fits, not 100 "releases"
    assert "replace-one" in text and fits(text, 10) and "100 private" not in text
    # basic, tight and RDP side by side, by default at the fits' own δ (10 × 1e-6)
    tight = re.search(r"at δ = 1e-05: tight \(privacy-loss distributions\) ε = ([\d.]+); RDP \(Rényi\) ε = ([\d.]+)",
                      text)
    assert tight, text
    rdp = tight
    assert float(tight.group(1)) < 10 and float(tight.group(1)) <= float(rdp.group(2)) + 1e-9
    assert re.search(r"\b12\b", text) and re.search(r"\b2 left\b", text)      # the class budget and what is left
    assert "someone 50 % sure" in text and "can become" in text               # the odds sentence of the total


def test_the_delta_of_the_tight_total_is_the_users_choice():
    name = _dataset_name(SMALL)
    for _ in range(10):
        server().charge(name, _gaussians())
    assert "at δ = 1e-05:" in captions(sidebar_of(SMALL))                 # the fits' own δ by default
    def at_delta(chosen):
        at = AppTest.from_function(_sidebar_script, default_timeout=300)
        at.session_state["dataset"] = {"spec": SMALL}
        at.session_state["meter_delta"] = chosen
        at.run()
        return captions(at)
    assert "at δ = 0.001:" in at_delta(1e-3)
    assert re.search(r"at δ = 1e-08: tight \(privacy-loss distributions\) ε = \d", at_delta(1e-8))  # Gaussians: finite
    server().charge(name, Verdict("an (ε, δ) release", "replace_one", (PrivacyEvent.approx_dp(1.0, 1e-6),)))
    text = at_delta(1e-8)                       # below the δ an (ε, δ) release spent: no ε holds, and it says why
    assert "tight (privacy-loss distributions) ε = ∞" in text and "below what fits stated only as (ε, δ)" in text


def test_a_fit_that_is_not_private_makes_the_headline_infinite_with_the_private_total_beside_it():
    name = _dataset_name(SMALL)
    server().charge(name, _gaussians())
    assert [m.value for m in sidebar_of(SMALL).sidebar.metric] == ["1"]
    server().charge(name, _seeded())
    at = sidebar_of(SMALL)
    assert [m.value for m in at.sidebar.metric] == ["∞"]
    text = captions(at)
    assert "ε = ∞" in text and "not yet mixed" in text and "private fits add up to ε = 1" in text
    assert fits(text, 1, private=False)


def test_the_metric_help_says_what_a_fit_is_and_when_a_run_is_charged():
    help_text = sidebar_of(SMALL).sidebar.metric[0].proto.help
    assert "fit" in help_text and "release" in help_text and "charged" in help_text
    assert help_text.count("stopped") >= 2 and "∞" in help_text and "every tab" in help_text


def test_sidebar_shows_a_second_metric_for_the_dataset_of_the_tabs_last_run():
    """A page that chose its own data (Co-clustering: four methods in one Run, 5 under one cell ±1):
    the sidebar's big number stays the Data page's dataset, and a second one shows the run's."""
    def script():
        import streamlit as st
        from dpcore.privacy import PrivacyEvent
        from dpcore.privacy.meter import Verdict
        from ui.meter import charge, sidebar
        if st.session_state.get("charge"):
            for label, rel in (("DP-τCC", "cell_pm1"), ("DPHD", "replace_one"), ("DP-KMeans", "add_remove"),
                               ("DPNMF", "replace_one")):
                charge(Verdict(label, rel, (PrivacyEvent.approx_dp(1.0),)), "blocks B")
            st.session_state["charge"] = False
        sidebar()

    at = AppTest.from_function(script, default_timeout=300)
    at.session_state["dataset"] = {"spec": SMALL}
    at.session_state["charge"] = True
    at.run()
    assert not at.exception
    metrics = at.sidebar.metric
    assert [m.value for m in metrics] == ["0", "5"] and "blocks B" in metrics[1].label   # the run's dataset, named
    text = captions(at)
    assert "one cell ±1" in text and fits(text, 4)
    assert all(label in text for label in ("DP-τCC", "DPHD", "DP-KMeans", "DPNMF"))     # all four, not the last


# ----------------------------------------------------------------------------- one server, many tabs
def test_app_sidebar_shows_the_budget_field_the_new_count_and_what_a_reload_keeps():
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception
    assert w(at, "class_budget").value is None                            # no class budget until one is set
    assert "reload or a new tab keeps it" in captions(at)
    assert w(at, "_reset_budget").label == "New count for this tab"


def test_a_class_budget_set_at_launch_holds_for_every_session_and_across_reloads(monkeypatch):
    """Two sessions of one server (two AppTests in one process share its meter, as two
    browser tabs share a server) with a class budget given at launch."""
    monkeypatch.setenv("DPCLUST_CLASS_BUDGET", "15")
    from ui.meter import class_meter
    class_meter.clear()
    first = open_page("3_cluster.py", spec=SMALL)
    w(first, "cl_method").set_value("sulq_kplane")
    first.run()
    w(first, "sulq_eps").set_value(10.0)
    press(first, "cluster_form")
    assert not first.error, [e.value for e in first.error]
    second = AppTest.from_file(APP, default_timeout=300)                   # another tab, or the first reloaded
    second.session_state["dataset"] = {"spec": SMALL}
    second.run()
    text = captions(second)
    assert [m.value for m in second.sidebar.metric][0] == "10"             # sees the first session's spending
    assert "ε ≤ 15 per dataset" in text and "given at launch" in text and "5 left here" in text
    assert not [x for x in second.number_input if x.key == "class_budget"]   # fixed: no field to change it
    # a public-seed run is refused under the budget: its loss would be unbounded
    third = open_page("3_cluster.py", spec=SMALL)
    w(third, "cl_method").set_value("sulq_kplane")
    third.run()
    w(third, "cl_repro").check()
    third.run()
    press(third, "cluster_form")
    errors = [e.value for e in third.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "would not be private" in errors[0], errors
    assert "public seed" in errors[0]
    # a new count in one tab (what its button calls) does not raise what remains for anybody
    meter_of(first).new_count()
    reloaded = AppTest.from_file(APP, default_timeout=300)       # (AppTest redraws app.py's sidebar on a fresh run)
    reloaded.session_state["dataset"] = {"spec": SMALL}
    reloaded.run()
    assert meter_of(first).runs == [] and "5 left here" in captions(reloaded)
    press(first, "cluster_form")                                          # ε = 10 again: 20 > 15
    assert any("class budget" in e.value for e in first.error)


# ----------------------------------------------------------------------------- budget refusals on the Cluster page
def test_cluster_run_past_the_class_budget_is_refused_before_it_runs():
    at = open_page("3_cluster.py", spec=SMALL, state={"class_budget": 50.0})
    w(at, "cl_method").set_value("sulq_kplane")
    at.run()
    w(at, "sulq_eps").set_value(100.0)
    press(at, "cluster_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "100" in errors[0] and "50" in errors[0], errors
    assert "cluster_result" not in at.session_state and meter_of(at).runs == []     # nothing ran, nothing charged
    w(at, "sulq_eps").set_value(10.0)
    press(at, "cluster_form")
    assert not at.error and meter_of(at).private_total(meter_of(at).runs[0]["dataset"])[0] == pytest.approx(10.0)


def test_a_public_seed_run_is_refused_under_a_budget_and_makes_the_headline_infinite_without():
    at = open_page("3_cluster.py", spec=SMALL, state={"class_budget": 1.0})
    w(at, "cl_method").set_value("sulq_kplane")
    at.run()
    w(at, "cl_repro").check()
    at.run()
    press(at, "cluster_form")
    assert any("would not be private" in e.value for e in at.error) and meter_of(at).runs == []
    server().set_budget(None)                  # the budget is the server's: it holds for the next tab unless cleared
    at = open_page("3_cluster.py", spec=SMALL)
    w(at, "cl_method").set_value("sulq_kplane")
    at.run()
    w(at, "cl_repro").check()
    at.run()
    press(at, "cluster_form")
    assert not at.error and [r["private"] for r in meter_of(at).runs] == [False]
    assert "public seed" in meter_of(at).runs[0]["reason"]
    assert [m.value for m in sidebar_of(SMALL).sidebar.metric] == ["∞"]


# ----------------------------------------------------------------------------- sweeps
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
    assert fits(captions(sidebar_of(SMALL)), 140)


def test_gibbs_in_a_sweep_is_not_private_and_refused_under_a_budget():
    from dpcore.data import load_dataset
    from ui.sweep import build_sweep, not_private_methods, plans_of

    ds = load_dataset(**SMALL)
    sweep = build_sweep(SMALL, ["SuLQ-10", "Gibbs", "k-plane"], ["d_W"], [0.1, 1.0], 3, 2, 0)
    plans = plans_of(sweep, ds, None)
    assert list(not_private_methods(plans)) == ["Gibbs"]
    assert sum(v.epsilon for v in plans if v.private) == pytest.approx(3 * 1.1)   # SuLQ-10 at each ε, 3 trials
    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300, state={"class_budget": 100.0})
    w(at, "pu_methods").set_value(["Gibbs"])
    w(at, "pu_metrics").set_value(["d_W"])
    w(at, "pu_points").set_value(2)
    w(at, "pu_trials").set_value(1)
    w(at, "pu_jobs").set_value(1)
    press(at, "sweep_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "would not be private" in errors[0] and "mixed" in errors[0], errors
    assert meter_of(at).runs == []
    server().set_budget(None)
    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300)             # no budget: run, listed apart
    for key, value in (("pu_methods", ["Gibbs"]), ("pu_metrics", ["d_W"]), ("pu_points", 2), ("pu_trials", 1),
                       ("pu_jobs", 1)):
        w(at, key).set_value(value)
    press(at, "sweep_form")
    runs = meter_of(at).runs
    assert len(runs) == 2 and not any(r["private"] for r in runs) and all("mixed" in r["reason"] for r in runs)
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


# ----------------------------------------------------------------------------- the lecturer
def test_the_lecturer_sees_the_class_and_sets_the_budget_behind_the_passphrase(monkeypatch):
    monkeypatch.setenv("DPCLUST_LECTURER_PASSPHRASE", "open sesame")
    from ui.meter import class_meter
    class_meter.clear()
    student = open_page("3_cluster.py", spec=SMALL)
    w(student, "cl_method").set_value("sulq_kplane")
    student.run()
    w(student, "sulq_eps").set_value(10.0)
    press(student, "cluster_form")
    lecturer = open_page("10_lecturer.py")
    (table,) = lecturer.table
    df = table.value
    name = _dataset_name(SMALL)
    assert list(df.index) == [name] and df.loc[name, "ε"] == "10" and df.loc[name, "tabs"] == 1
    sidebar = AppTest.from_file(APP, default_timeout=300)           # the students' sidebar: no budget field
    sidebar.run()
    assert not [x for x in sidebar.number_input if x.key == "class_budget"]
    for words, ok in (("sesame", False), ("open sesame", True)):
        w(lecturer, "lecturer_passphrase").input(words)
        w(lecturer, "lecturer_budget").set_value(12.0)
        press(lecturer, "lecturer_form")
        assert bool(lecturer.success) == ok and bool(lecturer.error) == (not ok)
        assert server().budget_epsilon == (12.0 if ok else None)
    press(student, "cluster_form")                                   # 10 + 10 > 12: refused for the student
    assert any("class budget" in e.value and "12" in e.value for e in student.error)


def test_kmeans_side_by_side_past_the_budget_is_refused_whole():
    at = open_page("6_kmeans.py", state={"class_budget": 5.0})
    w(at, "km_data").set_value("gaussians")
    at.run()
    w(at, "km_side_by_side").click()                            # default 0.1, 1, 10, 100: 111.1 > 5
    at.run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and meter_of(at).runs == [], errors


def _controls_script():
    from ui.meter import sidebar_controls
    sidebar_controls()


def test_in_solo_use_a_tab_opened_earlier_does_not_write_its_old_budget_back():
    """Two tabs without a launch budget or a lecturer: the budget set in one tab holds; the other,
    whose field was never changed, follows it instead of clearing it on its next rerun."""
    def tab():
        at = AppTest.from_function(_controls_script, default_timeout=300)
        at.run()
        assert not at.exception
        return at
    a, b = tab(), tab()
    assert w(a, "class_budget").value is None and server().budget_epsilon is None
    w(b, "class_budget").set_value(3.0)
    b.run()
    assert server().budget_epsilon == 3.0
    a.run()                                              # the older tab reruns: it follows, it does not clear
    assert server().budget_epsilon == 3.0 and w(a, "class_budget").value == 3.0
    w(a, "class_budget").set_value(5.0)                  # changed in a tab on purpose: the server's now
    a.run()
    b.run()
    assert server().budget_epsilon == 5.0 and w(b, "class_budget").value == 5.0


def test_clearing_streamlits_caches_does_not_reset_the_class_meter():
    """Any browser may ask Streamlit to clear its caches (the app menu's "Clear cache"): the meter is
    the server's own, not a cache entry."""
    import streamlit as st
    server().charge(_dataset_name(SMALL), _gaussians())
    st.cache_resource.clear()
    st.cache_data.clear()
    assert server().headline(_dataset_name(SMALL)).private_fits == 1


def test_a_class_budget_below_its_minimum_is_refused_under_the_field_not_ignored():
    at = AppTest.from_function(_controls_script, default_timeout=300)
    at.run()
    w(at, "class_budget").set_value(2.0)
    at.run()
    assert server().budget_epsilon == 2.0
    w(at, "class_budget").set_value(0.0)
    at.run()
    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 1 and "at least 0.01" in errors[0] and "not 0" in errors[0] and "stays ε ≤ 2" in errors[0]
    assert server().budget_epsilon == 2.0                       # not changed, and said so
