"""AppTest runs of the Audit page (pages/8_audit.py) with few runs per side; on the user's data
its charge follows the library's verdict of one run (dpcore.lab.audit.runners.audit_verdict)."""
import math
import re

import pytest

from apptest_helpers import by_key, link_of, open_page, press
from dpcore.lab.audit import MIN_TRIALS, NEIGHBOURS
from dpcore.lab.audit.runners import audit_plan, audit_verdict
from ui.audit import MAX_SWEEPS, MAX_TRIALS, algorithm_label, source_label


def page(query=None):
    at = open_page("8_audit.py", query=query, timeout=180)
    assert not at.error, [e.value for e in at.error]
    return at


def choose(at, key, value):
    """Set a selectbox outside the form (it reruns the page)."""
    by_key(at, key).set_value(value)
    at.run()
    assert not at.exception, at.exception
    return at


def claimed(at):
    """The "claimed ε" input (one per algorithm: its key ends with the algorithm's name)."""
    return by_key(at, "audit_eps_" + at.session_state["audit_algorithm"])


def run(at, trials=MIN_TRIALS, **numbers):
    """Set the runs per side and the number inputs named by key in ``numbers``, press Run audit."""
    by_key(at, "audit_trials").set_value(trials)
    for key, value in numbers.items():
        by_key(at, key).set_value(value)
    return press(at, "audit_form")


def small_sulq_run():
    at = choose(page(), "audit_data", "subspaces")
    choose(at, "audit_algorithm", "sulq_kplane")
    return run(at)


GIBBS_LEAK = "Gibbs start leak: k-plane start, 1 sweep, ε = 0.5"      # a preset of the page (its name)


def planned_charge(at):
    """The captions that plan the fits an audit of the user's data makes (beside Run audit)."""
    return [c.value for c in at.caption if re.search(r"2 × [\d,]+ = [\d,]+ fits", c.value)]


def test_page_runs_an_audit_and_shows_bound_verdict_rates_figure_and_exports():
    at = small_sulq_run()
    assert not at.error, [e.value for e in at.error]
    out = at.session_state["audit"]                       # results kept in the session
    res = out["res"]
    assert res.stats_a.size == MIN_TRIALS and res.stats_b.size == MIN_TRIALS and res.nominal_epsilon == 1.0
    metrics = [m.value for m in at.metric]
    # the claim, ε̂ next to it, and the largest ε̂ these runs can show
    assert len(metrics) == 3 and {"1", f"{res.epsilon_lower:.3g}"} <= set(metrics), metrics
    boxes = [m.value for m in list(at.success) + list(at.warning) + list(at.info)]
    assert sum(res.verdict.split(":")[0].lower() in b.lower() for b in boxes) == 1          # the verdict, once
    assert len(at.get("plotly_chart")) == 1                                     # histograms + threshold
    rates = at.dataframe[0].value
    assert rates.shape[1] == 3                                                  # a rate and its two ends
    rate, low, high = (rates[c].astype(float) for c in rates.columns)          # shown at 3 significant digits
    assert (low <= rate).all() and (rate <= high).all()
    assert all(len(v.replace(".", "").lstrip("0")) <= 3 for v in rates.to_numpy().ravel())
    assert len(at.get("download_button")) == 2                                  # runs + summary CSV
    # a rerun without submitting keeps the result
    at.run()
    assert at.session_state["audit"]["res"] is res


def test_runs_per_side_allows_exactly_what_the_estimator_accepts():
    at = page()
    box = by_key(at, "audit_trials")
    for value, refused in [(MIN_TRIALS - 1, True), (MIN_TRIALS, False), (MAX_TRIALS, False), (MAX_TRIALS + 1, True)]:
        box.set_value(value)
        at.run()
        said = [e.value for e in at.error if "runs per side must be between" in e.value]
        assert bool(said) == refused, (value, said)
        box = by_key(at, "audit_trials")


@pytest.mark.parametrize("value", [str(MIN_TRIALS - 1), "1", str(MAX_TRIALS + 1)])
def test_a_link_with_runs_per_side_out_of_range_is_refused_with_a_warning(value):
    at = open_page("8_audit.py", query={"audit_trials": value})
    warnings = [w.value for w in at.warning]
    assert any("Ignored link parameters" in w and "audit_trials" in w and str(MIN_TRIALS) in w for w in warnings), \
        warnings
    assert by_key(at, "audit_trials").value == 200                         # the form's own default


@pytest.mark.parametrize("setup,message", [
    ({"algorithm": "kplane", "eps": 1.0}, "claimed ε must be empty for kplane"),
])
def test_bad_input_is_shown_once_and_the_previous_result_is_kept(setup, message):
    at = small_sulq_run()
    before = at.session_state["audit"]["res"]
    if "algorithm" in setup:
        choose(at, "audit_algorithm", setup["algorithm"])
    claimed(at).set_value(setup["eps"])
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0], errors
    assert "previous audit" in errors[0]
    assert at.session_state["audit"]["res"] is before
    assert len(at.get("plotly_chart")) == 1                                  # still drawn


def test_bad_input_without_a_previous_result_does_not_claim_one():
    at = choose(page(), "audit_data", "subspaces")
    choose(at, "audit_algorithm", "kplane")
    claimed(at).set_value(1.0)                                   # a non-private algorithm has no claim
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "claimed ε must be empty" in errors[0] and "previous" not in errors[0], errors


@pytest.mark.parametrize("value", [-1.0, 0.0])
def test_a_claimed_epsilon_out_of_range_is_refused_under_the_field_and_beside_run(value):
    at = small_sulq_run()
    before = at.session_state["audit"]["res"]
    claimed(at).set_value(value)
    at.run()                                       # outside the form: the field says why at once
    said = [e.value for e in at.error]
    assert said == [f"claimed ε must be at least 0.001, not {value:g}."], said
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 2 and errors[0] == said[0], errors     # under the field, and beside the button:
    assert errors[1].startswith("**Run audit: not run.**") and "at least 0.001" in errors[1], errors
    assert at.session_state["audit"]["res"] is before and len(at.get("plotly_chart")) == 1   # nothing ran
    claimed(at).set_value(0.5)
    run(at)
    assert not at.error and at.session_state["audit"]["res"].nominal_epsilon == 0.5


def test_neighbour_choices_follow_the_data_kind():
    # only the constructions that exist for the data are offered (dpcore's message for the
    # others is tested in test_audit.py); switching the kind moves to a valid one
    at = choose(page(), "audit_data", "subspaces")
    box = by_key(at, "audit_neighbour")
    assert list(box.options) == list(NEIGHBOURS["points"].values())       # no count-matrix construction
    box.set_value("remove_point")
    at.run()
    choose(at, "audit_data", "blocks")
    box = by_key(at, "audit_neighbour")
    assert box.value == "change_cell" and list(box.options) == list(NEIGHBOURS["counts"].values())
    choose(at, "audit_data", "gaussians")
    assert by_key(at, "audit_neighbour").value == "add_outlier"


def test_counts_data_audits_dp_taucc_with_change_cell():
    at = choose(page(), "audit_data", "blocks")
    assert by_key(at, "audit_neighbour").value == "change_cell"             # follows the data kind
    assert by_key(at, "audit_algorithm").value in ("fast_taucc", "dp_taucc")
    choose(at, "audit_algorithm", "dp_taucc")
    run(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["audit"]["statistic"] == "table_cell"


@pytest.mark.slow
def test_gibbs_start_leak_preset_shows_leak_and_explains_it():
    at = page()
    choose(at, "audit_preset", GIBBS_LEAK)
    assert by_key(at, "audit_algorithm").value == "gibbs"
    assert by_key(at, "audit_sweeps").value == 1
    assert by_key(at, "audit_init").value == "kplane"
    assert any("asymptotically" in i.value for i in at.info)                # explained before any run
    run(at, 200)                                                               # the preset's runs (≈ 5 s)
    res = at.session_state["audit"]["res"]
    assert res.nominal_epsilon == 0.5 and res.epsilon_lower > 0.5           # the preset's seed 0: 1.26
    assert res.verdict == "leaks more than claimed"
    assert any("Leaks more than claimed" in w.value for w in at.warning)     # the verdict
    # the preset's seed is public: the audit says it is repeatable, not "not private" (it releases nothing)
    seed_line = next(c.value for c in at.caption if "Seed:" in c.value)
    assert "fixed" in seed_line and "not private" not in seed_line.lower()


def test_nonprivate_algorithm_gets_no_bound_verdict():
    at = choose(page(), "audit_data", "subspaces")
    choose(at, "audit_algorithm", "kplane")
    run(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["audit"]["res"].verdict == "no bound: not private"
    assert any("No bound: not private" in i.value for i in at.info)


def test_link_reopens_the_same_audit_controls():
    at = small_sulq_run()
    claimed(at).set_value(2.0)
    run(at, 60)
    assert "audit_seed" not in link_of(at)          # secret noise by default: no seed in the link
    by_key(at, "audit_repro").check()
    at.run()
    by_key(at, "audit_seed").set_value(4)
    run(at, 60)
    link = link_of(at)
    assert link["audit_data"] == source_label("subspaces")                  # the link carries the shown labels
    assert link["audit_algorithm"] == algorithm_label("sulq_kplane")
    assert link["audit_eps_sulq_kplane"] == "2.0" and link["audit_trials"] == "60" and link["audit_seed"] == "4"
    assert link["audit_repro"] == "true"
    again = page(query=link)
    assert not again.warning, [x.value for x in again.warning]
    shown = lambda a: {(x.key, x.value) for kind in ("selectbox", "number_input", "select_slider", "checkbox")
                       for x in getattr(a, kind)}
    assert shown(again) == shown(at)


def test_bad_link_parameter_is_ignored_with_a_warning():
    again = page(query={"audit_algorithm": "magic"})
    assert any("audit_algorithm" in x.value and "Ignored link parameters" in x.value for x in again.warning)


def test_a_gibbs_audit_too_long_for_the_page_is_refused_at_run_in_one_error():
    at = page()
    choose(at, "audit_preset", GIBBS_LEAK)
    run(at, MAX_TRIALS, audit_sweeps=MAX_SWEEPS)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "runs per side" in errors[0] and "Gibbs sweeps" in errors[0], errors
    assert "previous" not in errors[0] and "audit" not in at.session_state


def test_a_link_with_a_claimed_epsilon_below_zero_is_refused_with_a_warning():
    at = open_page("8_audit.py", query={"audit_algorithm": "SuLQ k-plane (App. E)", "audit_eps_sulq_kplane": "-1"})
    assert any("audit_eps_sulq_kplane" in w.value and "claimed ε must be at least 0.001" in w.value
               for w in at.warning), [w.value for w in at.warning]
    assert claimed(at).value == 1.0


def test_the_planned_charge_beside_run_follows_the_controls_on_the_users_data_only():
    at = page()
    assert not planned_charge(at)                                                           # audit sets: no charge
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "everything an audit with these settings would show" in box and "meter is not charged" in box
    choose(at, "audit_data", "data_page")
    choose(at, "audit_algorithm", "sulq_kplane")
    by_key(at, "audit_trials").set_value(100)
    claimed(at).set_value(0.5)
    at.run()                                     # outside the form: the planned charge follows at once
    preview = planned_charge(at)
    assert len(preview) == 1 and "2 × 100 = 200" in preview[0] and "ε = 0.5" in preview[0], preview
    assert "ε = 100" in preview[0] and "replace-one" in preview[0]                 # the total, in the claimed relation
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "would charge one fit each to" in box and "computed from the raw data of D and D′" in box
    assert "everything" not in box
    meter = at.session_state["session_meter"] if "session_meter" in at.session_state else None
    assert meter is None or not meter.runs                                                   # nothing charged yet
    choose(at, "audit_algorithm", "kplane")                              # no claim: not private, and not counted
    preview = planned_charge(at)
    assert len(preview) == 1 and "200" in preview[0] and "does not count them" in preview[0], preview
    assert "makes no privacy claim" in preview[0]
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "the meter would not count them" in box and "makes no privacy claim" in box and "**Private" not in box


SMALL = {"kind": "subspaces", "n": 150, "d": 5, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0}


def privacy_box(at):
    return next(i.value for i in at.info if "**Not private:**" in i.value or "**Private" in i.value)


def test_the_privacy_box_is_about_the_audit_on_screen_not_the_controls():
    """A reproducible audit of the user's data, then the seed unticked: the box still speaks of the
    audit shown (not private: public seed 0), not of the secret-noise audit the controls would run."""
    at = open_page("8_audit.py", spec=SMALL, timeout=180)
    choose(at, "audit_data", "data_page")
    choose(at, "audit_algorithm", "sulq_kplane")
    by_key(at, "audit_repro").check()
    at.run()
    idle = privacy_box(at)
    assert "would list them in" in idle and "public seed 0" in idle and "**Private" not in idle
    run(at)
    shown = privacy_box(at)
    assert "listed in" in shown and "public seed 0" in shown and "**Private" not in shown and "would" not in shown
    by_key(at, "audit_repro").uncheck()
    at.run()
    assert privacy_box(at) == shown                              # the audit on screen is the reproducible one
    assert any("not private: public seed 0" in c.value for c in at.caption)
    run(at)                                                       # now an audit with secret noise
    box = privacy_box(at)
    assert "**Private" in box and "one fit each, charged to" in box and "public seed" not in box
    choose(at, "audit_algorithm", "kplane")                      # controls of a non-private audit, none run
    assert privacy_box(at) == box


def odds_captions(at):
    return [c.value for c in at.caption if c.value.startswith(":material/casino:")]


def test_an_odds_sentence_under_the_claimed_epsilon():
    at = choose(page(), "audit_data", "subspaces")
    choose(at, "audit_algorithm", "sulq_kplane")
    (odds,) = odds_captions(at)
    assert odds.startswith(":material/casino: ε = 1:") and "which of two possible records" in odds   # its relation
    claimed(at).set_value(0.5)
    at.run()
    (odds,) = odds_captions(at)
    assert odds.startswith(":material/casino: ε = 0.5:")
    choose(at, "audit_algorithm", "kplane")                       # no claim (no ε): no bound
    (odds,) = odds_captions(at)
    assert odds.startswith(":material/casino: ε = ∞: no bound")


def test_the_audits_verdict_is_the_librarys():
    """One run's verdict (what each run on D and D′ spends) and the whole audit's: 2 × runs per side."""
    from dpcore.data import load_dataset
    ds = load_dataset(**SMALL)
    one = audit_verdict("sulq_kplane", ds, 1.0)
    assert one.private and one.relation == "replace_one" and one.epsilon == pytest.approx(1.0)
    whole = audit_plan("sulq_kplane", ds, 50, 1.0)
    assert whole.fits == 100 and whole.epsilon == pytest.approx(100.0) and whole.delta == pytest.approx(100 * one.delta)
    assert "public seed 3" in audit_verdict("sulq_kplane", ds, 1.0, seed=3).reason
    gibbs = audit_verdict("gibbs", ds, 1.0, {"init": "random", "n_iter": 2})
    assert not gibbs.private and "an audit does not check" in gibbs.reason             # mixing is not checked
    assert not audit_verdict("sulq_kmeans", ds, 1.0).private                            # no public radius: read off
    assert not audit_verdict("kplane", ds).claim                                         # no claim: not charged
    with pytest.raises(ValueError, match="epsilon must be empty"):
        audit_verdict("kplane", ds, 1.0)
    with pytest.raises(ValueError, match="epsilon must be given"):
        audit_verdict("sulq_kplane", ds)


def _own_data(state=None, algorithm="sulq_kplane"):
    at = open_page("8_audit.py", spec=SMALL, timeout=180, state=state)
    choose(at, "audit_data", "data_page")
    choose(at, "audit_algorithm", algorithm)
    by_key(at, "audit_trials").set_value(MIN_TRIALS)
    return at


def test_a_gibbs_audit_of_the_users_data_is_listed_as_not_private_and_makes_the_datasets_epsilon_infinite():
    at = _own_data(algorithm="gibbs")
    by_key(at, "audit_sweeps").set_value(1)
    at.run()
    preview = planned_charge(at)
    assert len(preview) == 1 and "not private" in preview[0] and "an audit does not check" in preview[0], preview
    press(at, "audit_form")
    assert not at.error, [e.value for e in at.error]
    (run,) = at.session_state["session_meter"].runs                   # one entry: every run on D and on D′
    assert not run["private"] and run["fits"] == 2 * MIN_TRIALS and "an audit does not check" in run["reason"]
    assert math.isinf(at.session_state["session_meter"].meter.headline(run["dataset"]).epsilon)
    assert any("that are not private" in c.value for c in at.caption)


@pytest.mark.parametrize("algorithm, repro, words", [("gibbs", False, "an audit does not check"),
                                                      ("sulq_kplane", True, "public seed")])
def test_an_audit_of_the_users_data_that_would_not_be_private_is_refused_under_a_class_budget(algorithm, repro, words):
    at = _own_data({"class_budget": 1000.0}, algorithm)
    if repro:
        by_key(at, "audit_repro").check()
        at.run()
    if algorithm == "gibbs":
        by_key(at, "audit_sweeps").set_value(1)
    press(at, "audit_form")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "would not be private" in errors[0], errors
    assert words in errors[0] and "audit" not in at.session_state
    assert at.session_state["session_meter"].runs == []


def test_an_audit_of_the_users_data_is_charged_as_it_runs_in_one_entry_within_the_budget():
    at = _own_data({"class_budget": 1000.0})
    press(at, "audit_form")
    assert not at.error, [e.value for e in at.error]
    (run,) = at.session_state["session_meter"].runs
    assert run["private"] and run["fits"] == 2 * MIN_TRIALS and run["epsilon"] == pytest.approx(2 * MIN_TRIALS)
    assert run["relation"] == "replace_one"
