"""AppTest runs of the Audit page (pages/8_audit.py) with few runs per side."""
import pytest

from apptest_helpers import link_of, open_page, widget
from dpcore.lab.audit import MIN_TRIALS, NEIGHBOURS
from ui.audit import MAX_SWEEPS, MAX_TRIALS


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


def run(at, trials=MIN_TRIALS, **numbers):
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
    return run(at)


def test_page_runs_an_audit_and_shows_bound_verdict_rates_figure_and_exports():
    at = small_sulq_run()
    assert not at.error, [e.value for e in at.error]
    out = at.session_state["audit"]                       # results kept in the session
    res = out["res"]
    assert res.stats_a.size == MIN_TRIALS and res.stats_b.size == MIN_TRIALS and res.nominal_epsilon == 1.0
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["claimed ε"] == "1"
    boxes = [m.value for m in list(at.success) + list(at.warning) + list(at.info)]
    assert sum(res.verdict.split(":")[0].lower() in b.lower() for b in boxes) == 1          # the verdict, once
    assert metrics["ε̂ (lower bound)"] == f"{res.epsilon_lower:.3g}"            # ε̂ next to the claim
    assert "largest ε̂ these runs can show" in metrics
    assert len(at.get("plotly_chart")) == 1                                     # histograms + threshold
    rates = at.dataframe[0].value
    assert list(rates.columns) == ["rate", "lower end", "upper end"]
    rate, low, high = (rates[c].astype(float) for c in rates.columns)          # shown at 3 significant digits
    assert (low <= rate).all() and (rate <= high).all()
    assert all(len(v.replace(".", "").lstrip("0")) <= 3 for v in rates.to_numpy().ravel())
    assert len(at.get("download_button")) == 2                                  # runs + summary CSV
    # a rerun without submitting keeps the result
    at.run()
    assert at.session_state["audit"]["res"] is res


def test_runs_per_side_allows_exactly_what_the_estimator_accepts():
    at = page()
    box = widget(at, "number_input", "runs per side")
    assert (box.min, box.max) == (MIN_TRIALS, MAX_TRIALS)


@pytest.mark.parametrize("value", [str(MIN_TRIALS - 1), "1", str(MAX_TRIALS + 1)])
def test_a_link_with_runs_per_side_out_of_range_is_refused_with_a_warning(value):
    at = open_page("8_audit.py", query={"audit_trials": value})
    warnings = [w.value for w in at.warning]
    assert any("Ignored link parameters" in w and "audit_trials" in w and str(MIN_TRIALS) in w for w in warnings), \
        warnings
    assert widget(at, "number_input", "runs per side").value == 200       # the form's own default


@pytest.mark.parametrize("setup,message", [
    ({"algorithm": "kplane", "eps": 1.0}, "epsilon must be empty for kplane"),
    ({"eps": -1.0}, "epsilon must be > 0"),
])
def test_bad_input_is_shown_once_and_the_previous_result_is_kept(setup, message):
    at = small_sulq_run()
    before = at.session_state["audit"]["res"]
    if "algorithm" in setup:
        choose(at, "algorithm", setup["algorithm"])
    widget(at, "number_input", "claimed ε").set_value(setup["eps"])
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0], errors
    assert "previous audit" in errors[0]
    assert at.session_state["audit"]["res"] is before
    assert len(at.get("plotly_chart")) == 1                                  # still drawn


def test_bad_input_without_a_previous_result_does_not_claim_one():
    at = choose(page(), "data", "subspaces")
    choose(at, "algorithm", "sulq_kplane")
    widget(at, "number_input", "claimed ε").set_value(-1.0)
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "epsilon must be > 0" in errors[0] and "previous" not in errors[0], errors


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
    run(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["audit"]["statistic"] == "table_cell"


@pytest.mark.slow
def test_gibbs_start_leak_preset_shows_leak_and_explains_it():
    at = page()
    choose(at, "Preset", "Gibbs start leak: k-plane start, 1 sweep, ε = 0.5")
    assert widget(at, "selectbox", "algorithm").value == "gibbs"
    assert widget(at, "number_input", "Gibbs sweeps").value == 1
    assert widget(at, "selectbox", "start").value == "kplane"
    assert any("only asymptotically" in i.value for i in at.info)           # explained before any run
    run(at, 200)                                                               # the preset's runs (≈ 5 s)
    res = at.session_state["audit"]["res"]
    assert res.nominal_epsilon == 0.5 and res.epsilon_lower > 0.5           # the preset's seed 0: 1.45
    assert res.verdict == "leaks more than claimed"
    assert any("Leaks more than claimed" in w.value for w in at.warning)
    assert any("non-private k-plane solution" in i.value for i in at.info)
    # the preset's seed is public: the audit says it is repeatable, not "not private" (it releases nothing)
    seed_line = next(c.value for c in at.caption if "Seed:" in c.value)
    assert "0 (fixed: the same audit gives the same numbers again)" in seed_line and "not private" not in seed_line


def test_nonprivate_algorithm_gets_no_bound_verdict():
    at = choose(page(), "data", "subspaces")
    choose(at, "algorithm", "kplane")
    run(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["audit"]["res"].verdict == "no bound: not private"
    assert any("No bound: not private" in i.value for i in at.info)


def test_link_reopens_the_same_audit_controls():
    at = small_sulq_run()
    widget(at, "number_input", "claimed ε").set_value(2.0)
    run(at, 60)
    assert "audit_seed" not in link_of(at)          # secret noise by default: no seed in the link
    next(c for c in at.checkbox if c.label == "reproducible (noise public)").check()
    at.run()
    widget(at, "number_input", "seed").set_value(4)
    run(at, 60)
    link = link_of(at)
    assert link["audit_data"] == "2 lines in R^5, n = 200 (subspace methods)"
    assert link["audit_algorithm"] == "SuLQ k-plane (App. E)"
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


def test_a_gibbs_audit_too_long_for_the_page_is_refused_at_run_in_one_error():
    at = page()
    choose(at, "Preset", "Gibbs start leak: k-plane start, 1 sweep, ε = 0.5")
    run(at, MAX_TRIALS, **{"Gibbs sweeps": MAX_SWEEPS})
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "runs per side" in errors[0] and "Gibbs sweeps" in errors[0], errors
    assert "previous" not in errors[0] and "audit" not in at.session_state


def test_a_link_with_a_claimed_epsilon_below_zero_is_refused_with_a_warning():
    at = open_page("8_audit.py", query={"audit_algorithm": "SuLQ k-plane (App. E)", "audit_eps_sulq_kplane": "-1"})
    assert any("audit_eps_sulq_kplane" in w.value and "epsilon must be > 0" in w.value for w in at.warning)
    assert widget(at, "number_input", "claimed ε").value == 1.0


def test_the_planned_charge_beside_run_follows_the_controls_on_the_users_data_only():
    at = page()
    assert not [c for c in at.caption if c.value.startswith("Running this audit on")]      # audit sets: no charge
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "everything this page shows" in box and "meter is not charged" in box
    choose(at, "data", "data_page")
    choose(at, "algorithm", "sulq_kplane")
    widget(at, "number_input", "runs per side").set_value(100)
    widget(at, "number_input", "claimed ε").set_value(0.5)
    at.run()                                     # outside the form: the planned charge follows at once
    preview = [c.value for c in at.caption if c.value.startswith("Running this audit on")]
    assert len(preview) == 1 and "charges 2 × 100 = 200 fits at ε = 0.5 each" in preview[0], preview
    assert "(ε = 100 in all for replace-one" in preview[0]
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "charged to" in box and "computed from the raw data of D and D′" in box
    assert "everything this page shows" not in box
    meter = at.session_state["session_meter"] if "session_meter" in at.session_state else None
    assert meter is None or not meter.runs                                                   # nothing charged yet
    choose(at, "algorithm", "kplane")                                                       # no claim: not private
    preview = [c.value for c in at.caption if c.value.startswith("Running this audit on")]
    assert len(preview) == 1 and "200 fits on your data; the meter lists them as not private" in preview[0]
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "listed in" in box and "makes no privacy claim" in box and "**Private" not in box
