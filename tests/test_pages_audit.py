"""AppTest runs of the Audit page (pages/8_audit.py) with few runs per side."""
import pytest

from apptest_helpers import open_page, widget
from dpcore.audit import NEIGHBOURS


def page(query=None):
    at = open_page("8_audit.py", query=query, timeout=180)
    assert not at.error, [e.value for e in at.error]
    return at


def choose(at, label, value):
    """Set a selectbox outside the form (it reruns the page)."""
    widget(at, "selectbox", label).set_value(value)
    at.run()
    assert not at.exception, at.exception
    return at


def run(at, trials=50, **numbers):
    widget(at, "number_input", "runs per side").set_value(trials)
    for label, value in numbers.items():
        widget(at, "number_input", label).set_value(value)
    next(b for b in at.button if b.label == "Run audit").click()
    at.run()
    assert not at.exception, at.exception
    return at


def small_sulq_run():
    at = choose(page(), "data", "subspaces")
    choose(at, "algorithm", "sulq_kplane")
    return run(at, 50)


def test_page_runs_an_audit_and_shows_bound_verdict_rates_figure_and_exports():
    at = small_sulq_run()
    assert not at.error, [e.value for e in at.error]
    out = at.session_state["audit"]                       # results kept in the session
    res = out["res"]
    assert res.stats_a.size == 50 and res.stats_b.size == 50 and res.nominal_epsilon == 1.0
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["claimed ε"] == "1" and metrics["verdict"] == res.verdict
    assert metrics["ε̂ (lower bound)"] == f"{res.epsilon_lower:.3g}"            # ε̂ next to the claim
    assert "largest ε̂ these runs can show" in metrics
    assert len(at.get("plotly_chart")) == 1                                     # histograms + threshold
    rates = at.dataframe[0].value
    assert list(rates.columns) == ["rate", "CI low", "CI high"]
    assert (rates["CI low"] <= rates["rate"]).all() and (rates["rate"] <= rates["CI high"]).all()
    assert len(at.get("download_button")) == 2                                  # runs + summary CSV
    # a rerun without submitting keeps the result
    at.run()
    assert at.session_state["audit"]["res"] is res


@pytest.mark.parametrize("setup,message", [
    ({"trials": 10}, "trials must be an integer >= 50"),
    ({"algorithm": "kplane", "eps": 1.0}, "epsilon must be empty for kplane"),
    ({"eps": -1.0}, "epsilon must be > 0"),
])
def test_bad_input_shows_error_and_keeps_previous_result(setup, message):
    at = small_sulq_run()
    before = at.session_state["audit"]["res"]
    if "algorithm" in setup:
        choose(at, "algorithm", setup["algorithm"])
    if "eps" in setup:
        widget(at, "number_input", "claimed ε").set_value(setup["eps"])
    run(at, setup.get("trials", 50))
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["audit"]["res"] is before


def test_neighbour_choices_follow_the_data_kind():
    # only the constructions that exist for the data are offered (dpcore's message for the
    # others is tested in test_audit.py); switching the kind moves to a valid one
    at = choose(page(), "data", "subspaces")
    box = widget(at, "selectbox", "neighbour D′")
    assert list(box.options) == list(NEIGHBOURS["points"].values())       # no count-matrix construction
    box.set_value("remove_point")
    at.run()
    choose(at, "data", "blocks")
    box = widget(at, "selectbox", "neighbour D′")
    assert box.value == "change_cell" and list(box.options) == list(NEIGHBOURS["counts"].values())
    choose(at, "data", "gaussians")
    assert widget(at, "selectbox", "neighbour D′").value == "add_outlier"


def test_counts_data_audits_dp_taucc_with_change_cell():
    at = choose(page(), "data", "blocks")
    assert widget(at, "selectbox", "neighbour D′").value == "change_cell"    # follows the data kind
    assert widget(at, "selectbox", "algorithm").value in ("fast_taucc", "dp_taucc")
    choose(at, "algorithm", "dp_taucc")
    run(at, 50)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["audit"]["statistic"] == "table_cell"


def test_gibbs_start_leak_preset_shows_leak_and_explains_it():
    at = page()
    choose(at, "Preset", "Gibbs start leak: k-plane start, 1 sweep, ε = 0.5")
    assert widget(at, "selectbox", "algorithm").value == "gibbs"
    assert widget(at, "number_input", "Gibbs sweeps").value == 1
    assert widget(at, "selectbox", "start").value == "kplane"
    assert any("only asymptotically" in i.value for i in at.info)           # explained before any run
    run(at, 200)                                                               # the preset's runs (≈ 5 s)
    res = at.session_state["audit"]["res"]
    assert res.nominal_epsilon == 0.5 and res.epsilon_lower > 0.5           # measured 1.38
    assert res.verdict == "leaks more than claimed"
    assert any("Leaks more than claimed" in w.value for w in at.warning)
    assert any("non-private kplane solution" in i.value for i in at.info)


def test_nonprivate_algorithm_gets_no_bound_verdict():
    at = choose(page(), "data", "subspaces")
    choose(at, "algorithm", "kplane")
    run(at, 50)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["audit"]["res"].verdict == "no bound: not private"
    assert any("No bound: not private" in i.value for i in at.info)


def test_link_reopens_the_same_audit_controls():
    at = small_sulq_run()
    widget(at, "number_input", "claimed ε").set_value(2.0)
    run(at, 60)
    link = {k: at.query_params[k] for k in at.query_params}
    assert "audit_seed" not in link                 # secret noise by default: no seed in the link
    next(c for c in at.checkbox if c.label == "reproducible (noise public)").check()
    at.run()
    widget(at, "number_input", "seed").set_value(4)
    run(at, 60)
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["audit_data"] == "subspaces" and link["audit_algorithm"] == "sulq_kplane"
    assert link["audit_eps_sulq_kplane"] == "2.0" and link["audit_trials"] == "60" and link["audit_seed"] == "4"
    assert link["audit_repro"] == "true"
    again = page(query=link)
    assert not again.warning, [x.value for x in again.warning]
    shown = lambda a: {(x.label, x.value) for kind in ("selectbox", "number_input", "select_slider")
                       for x in getattr(a, kind)}
    assert shown(again) == shown(at)


def test_bad_link_parameter_is_ignored_with_a_warning():
    again = page(query={"audit_algorithm": "magic"})
    assert any("audit_algorithm" in x.value and "Ignored link parameters" in x.value for x in again.warning)
