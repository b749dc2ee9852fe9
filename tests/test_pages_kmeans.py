"""AppTest runs of the k-means page (pages/6_kmeans.py): one ε with several methods, one
method at several ε side by side, the privacy box with a leaking radius, the DP-Lloyd peer
(not private as executed) in the meter and under a class budget, the odds sentences under the
ε inputs, old link values, and links whose values lie outside the widgets' limits."""
import json
import math
import re

import pytest

from apptest_helpers import by_key, link_of, open_page
from dpcore.kmeans.common import DataDerivedRadiusWarning
from ui.kmeans import DEFAULT_EPS_SERIES, DEFAULT_METHODS, EPS_MAX, K_MAX


def page(query=None):
    return open_page("6_kmeans.py", query=query)


#: the keys of the form's two submit buttons
RUN, SIDE_BY_SIDE = "km_run", "km_side_by_side"


def button(at, key):
    """One of the two submit buttons of the form ``kmeans_form``."""
    b = by_key(at, key)
    assert b.proto.form_id == "kmeans_form"
    return b


def result_table(at):
    return next(d.value for d in at.dataframe if "k-median objective ÷ k-means++'s" in d.value.columns)


def series_table(at):
    return next(d.value for d in at.dataframe if "ε" in d.value.columns)


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def info_text(at):
    return " ".join(i.value for i in at.info)


def set_small_mixture(at):
    by_key(at, "km_data").set_value("gaussians")
    at.run()
    by_key(at, "km_n").set_value(1500)
    by_key(at, "km_d").set_value(10)
    by_key(at, "km_comp").set_value(4)
    at.run()
    by_key(at, "km_k").set_value(4)


def meter_runs(at):
    return at.session_state["session_meter"].runs


def headline(at, dataset):
    """What the server's meter says of ``dataset`` (its ε is ∞ once a run that is not private used it)."""
    return at.session_state["session_meter"].meter.headline(dataset)


def odds_captions(at):
    """The odds sentences (ui.meter.epsilon_odds) on the page."""
    return [c.value for c in at.caption if c.value.startswith(":material/casino:")]


def test_page_runs_and_shows_objectives_ledger_and_statement():
    at = page()
    assert any("Not private" in i.value for i in at.info)
    set_small_mixture(at)
    button(at, RUN).click()
    at.run()
    assert not at.exception and not at.error
    table = result_table(at)
    assert list(table["method"])[0] == "k-means++ (non-private)" and len(table) == 5  # reference + 4 defaults
    assert list(table["method"])[-1] == "LSH coreset (Google 2021)"                   # today's peer, by default
    assert table["÷ k-means++"].iloc[0] == 1.0
    assert (table["ε spent"].iloc[1:] == 1.0).all()
    # numbers at 4 significant digits at most (no 468533.3054 in a student's table)
    for col in ("k-means objective", "÷ k-means++"):
        assert all(len(f"{v:.10g}".replace(".", "").replace("-", "").strip("0")) <= 4 for v in table[col]), col
    # the candidate method's ledger: 3 stages summing to ε = 1 (default split 0.4/0.1/0.5)
    ledger = next(t.value for t in at.table if "mechanism" in t.value.columns)   # a static table, ε as text
    assert len(ledger) == 3 and [float(e) for e in ledger["ε"]] == [0.4, 0.1, 0.5]
    text = info_text(at)
    assert "**Private (differentially private releases):** the centres released by each private method" in text
    assert "true classes" in text and "_" not in text          # words, no attribute names
    # every private run went into the meter, one fit each, its noise events counted: the candidate method's
    # candidate set, its T + 1 local swaps and its noisy means; SuLQ's 20 noisy Lloyd steps; one for
    # sample-aggregate; one joint release for the LSH coreset (its counts and leaf sums calibrated together);
    # all four for one row replaced
    runs = meter_runs(at)
    assert [r["relation"] for r in runs] == ["replace_one"] * 4 and all(r["private"] for r in runs)
    assert [r["method"] for r in runs] == DEFAULT_METHODS                 # one name per method: the catalogue's
    cand, sulq, sa, lsh = (r["events"] for r in runs)
    assert cand >= 1 + 3 + 1 and sulq == 20 and sa == 1 and lsh == 1
    # the LSH coreset's joint release: a +1 and a −1 count at each of its 20 levels under replacement, and the sums
    (joint,) = at.session_state["kmeans_result"]["verdicts"][3].events
    assert joint.kind == "joint" and [(p.kind, p.count) for p in joint.parts] == [("discrete_laplace", 2 * 20),
                                                                                  ("gaussian", 1)]
    meter = at.session_state["session_meter"]
    assert meter.n_fits(runs[0]["dataset"]) == 4
    assert meter.private_total(runs[0]["dataset"])[0] == pytest.approx(4.0)
    assert headline(at, runs[0]["dataset"]).epsilon == pytest.approx(4.0)


def expect_refused(at, key, words, before, n_runs):
    """Press the button ``key``: one error with ``words``, the previous result kept, nothing released."""
    button(at, key).click()
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and words in errors[0], (words, errors)
    assert "previous result" in errors[0]
    assert result_table(at).equals(before)      # ... and it is
    assert len(meter_runs(at)) == n_runs        # nothing was released


def test_bad_input_shows_error_once_and_keeps_previous_result():
    at = page()
    set_small_mixture(at)
    button(at, RUN).click()
    at.run()
    before, n_runs = result_table(at), len(meter_runs(at))
    # values each widget allows but the run refuses
    by_key(at, "km_share_candidate").set_value(0.6)
    by_key(at, "km_share_localswap").set_value(0.5)
    expect_refused(at, RUN, "candidate share + local-swap share must be < 1", before, n_runs)
    expect_refused(at, SIDE_BY_SIDE, "candidate share + local-swap share must be < 1", before, n_runs)
    by_key(at, "km_share_candidate").set_value(0.4)
    by_key(at, "km_share_localswap").set_value(0.1)
    by_key(at, "km_methods").set_value([])
    expect_refused(at, RUN, "methods must contain", before, n_runs)
    by_key(at, "km_methods").set_value(["candidate_kmeans"])
    by_key(at, "km_eps_list").set_value([])
    expect_refused(at, SIDE_BY_SIDE, "choose 1 to 4 values", before, n_runs)


def test_projection_dimension_follows_the_dataset_and_the_tuning_stays_out_of_the_link():
    from dpcore.kmeans.partition import default_projection_dim
    at = page()                                              # the Data page's default: n = 1000
    assert by_key(at, "km_p").value == default_projection_dim(1000) == 4
    by_key(at, "km_p").set_value(7)
    by_key(at, "km_methods").set_value([])                   # a quick refusal commits the form
    button(at, RUN).click()
    at.run()
    assert ["methods must contain" in e.value for e in at.error] == [True] and by_key(at, "km_p").value == 7
    at.run()
    assert by_key(at, "km_p").value == 7                     # the user's p stays while the data do
    by_key(at, "km_data").set_value("gaussians")             # n = 5000
    at.run()
    assert by_key(at, "km_p").value == default_projection_dim(5000) == 5    # ... and follows new data
    tuning = {"km_p", "km_refine", "km_share_candidate", "km_share_localswap", "km_sparsity"}
    assert not tuning & set(link_of(at))                     # not bound to the URL


def test_epsilon_side_by_side_one_panel_per_epsilon_and_one_meter_entry_each():
    at = page()
    set_small_mixture(at)
    assert by_key(at, "km_eps_list").value == DEFAULT_EPS_SERIES
    by_key(at, "km_eps_list").set_value([0.1, 1.0, 10.0])
    button(at, SIDE_BY_SIDE).click()
    at.run()
    assert not at.exception and not at.error
    # one figure of four panels (3 ε and the non-private k-means++) on shared axes
    (fig,) = [f for f in charts(at) if sum(k.startswith("xaxis") for k in f["layout"]) == 4]
    axes = [k for k in fig["layout"] if k.startswith("xaxis")]
    assert len({tuple(fig["layout"][k]["range"]) for k in axes}) == 1                        # shared axes
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    panels = [next(i for i, t in enumerate(titles) if re.search(rf"ε = {e}\b", t)) for e in ("0.1", "1", "10")]
    assert panels == sorted(panels) and any("k-means++" in t for t in titles[panels[-1] + 1:]), titles
    table = series_table(at)
    assert list(table["ε"]) == [0.1, 1.0, 10.0]
    # one meter entry per ε, each private, with its own ε
    runs = [r for r in meter_runs(at) if "side by side" in r["label"]]
    assert [r["epsilon"] for r in runs] == [0.1, 1.0, 10.0] and all(r["private"] for r in runs)
    assert any("ε = 11.1" in m.value for m in at.markdown)             # what these 3 runs spent
    assert "the centres released by each of the 3 runs" in info_text(at)     # the privacy box


def test_the_lsh_peer_from_a_link_side_by_side_through_the_catalogue():
    at = page(query={"km_eps_method": "LSH coreset (Google 2021)", "km_eps_list": ["1", "100"]})
    assert not at.warning and by_key(at, "km_eps_method").value == "lsh_coreset"
    set_small_mixture(at)
    button(at, SIDE_BY_SIDE).click()
    at.run()
    assert not at.exception and not at.error
    assert list(series_table(at)["ε"]) == [1.0, 100.0]
    runs = [r for r in meter_runs(at) if "side by side" in r["label"]]
    assert [r["epsilon"] for r in runs] == [1.0, 100.0] and all("LSH coreset" in r["label"] for r in runs)
    assert all(r["relation"] == "replace_one" and r["private"] for r in runs)
    assert any("LSH coreset" in m.value for m in at.markdown)                 # the page introduces the peer


def test_leaking_radius_privacy_box_has_no_private_line():
    at = page()
    set_small_mixture(at)
    by_key(at, "km_leak").check()
    by_key(at, "km_eps_list").set_value([1.0, 10.0])
    button(at, RUN).click()
    with pytest.warns(DataDerivedRadiusWarning):
        at.run()
    assert not at.exception
    assert any("private" in w.value for w in at.warning)                       # the runs are said not private
    text = info_text(at)
    assert "Private" not in text.replace("Not private", "") and "nothing this run released is private" in text
    assert "this page" not in text                              # the box speaks of its own run only
    assert not any(r["private"] for r in meter_runs(at))
    totals = [c.value for c in at.caption if c.value.startswith(("Total spent", "Nominal total"))]
    assert totals and all(t.startswith("Nominal total") and "NOT private" in t for t in totals), totals
    button(at, SIDE_BY_SIDE).click()
    with pytest.warns(DataDerivedRadiusWarning):
        at.run()
    assert not at.exception
    for box in at.info:                          # both results' boxes: nothing private
        assert "Private" not in box.value.replace("Not private", ""), box.value
    assert any(re.search(r"ε = 11\b", m.value) for m in at.markdown)          # the nominal total of the 2 runs
    assert not any(r["private"] for r in meter_runs(at))


def test_leaking_radius_box_before_any_run():
    """With the leaking box committed (here: from a link), the box before Run says so too."""
    at = page(query={"km_leak": "true"})
    text = info_text(at)
    assert "Private" not in text.replace("Not private", "") and "NOTHING" in text


@pytest.mark.parametrize("key, value, default", [
    ("km_eps", "inf", 1.0),
    ("km_eps", str(EPS_MAX * 10), 1.0),
    ("km_eps", "nan", 1.0),
    ("km_k", str(K_MAX + 1), None),
    ("km_delta", "2", 1e-6),
    ("km_radius", "-1", None),
])
def test_out_of_limit_link_values_warn_and_keep_the_default(key, value, default):
    plain = page()
    at = page(query={key: value})
    warnings = [w.value for w in at.warning]
    assert any(key in w and "Ignored link parameters" in w for w in warnings), warnings
    expected = by_key(plain, key).value if default is None else default
    assert by_key(at, key).value == expected


def test_bad_list_values_in_a_link_warn():
    at = page(query={"km_eps_list": ["0.3", "1e9"], "km_methods": ["no such method"]})
    warnings = " ".join(w.value for w in at.warning)
    assert "km_eps_list" in warnings and "km_methods" in warnings
    assert by_key(at, "km_eps_list").value == DEFAULT_EPS_SERIES
    assert by_key(at, "km_methods").value == DEFAULT_METHODS
    # a list with one good value: Streamlit's binding keeps the good one (it seeds from the link as
    # loaded, whatever check_link removed), the warning names the parameter; 0.3 is never used
    at = page(query={"km_eps_list": ["0.3", "1"]})
    assert "km_eps_list" in " ".join(w.value for w in at.warning)
    assert 0.3 not in by_key(at, "km_eps_list").value


def test_link_values_inside_the_limits_are_used():
    at = page(query={"km_eps": "0.5", "km_eps_list": ["0.01", "100"], "km_eps_method": "SuLQ k-means"})
    assert not at.warning
    assert by_key(at, "km_eps").value == 0.5
    assert by_key(at, "km_eps_list").value == [0.01, 100.0]
    assert by_key(at, "km_eps_method").value == "sulq_kmeans"


def test_old_link_values_still_open_as_the_catalogue_names():
    """Links made when the comparison had its own keys ("candidate", "sulq", "sample_aggregate", "lsh")."""
    at = page(query={"km_methods": ["candidate", "sulq", "lsh"], "km_eps_method": "sample_aggregate"})
    assert not at.warning, [w.value for w in at.warning]
    assert by_key(at, "km_methods").value == ["candidate_kmeans", "sulq_kmeans", "lsh_coreset"]
    assert by_key(at, "km_eps_method").value == "sa_kmeans"
    link = link_of(at)                                       # the link now carries the labels
    assert link["km_methods"] == ["candidate set + local swaps", "SuLQ k-means", "LSH coreset (Google 2021)"]
    assert link["km_eps_method"] == "sample and aggregate"
    at = page(query={"km_methods": ["sulq_kmeans", "dplloyd"], "km_eps_method": "candidate_kmeans"})  # the names
    assert not at.warning and by_key(at, "km_methods").value == ["sulq_kmeans", "dplloyd"]


def test_an_odds_sentence_under_every_epsilon_input():
    at = page()
    odds = odds_captions(at)
    # the run's ε (1), then the smallest and largest ε side by side (0.1 and 100)
    assert len(odds) == 3, odds
    assert odds[0].startswith(":material/casino: ε = 1:") and "which of two possible records" in odds[0]
    assert odds[1].startswith(":material/casino: ε = 0.1:") and odds[2].startswith(":material/casino: ε = 100:")
    by_key(at, "km_eps").set_value(2.0)
    by_key(at, "km_eps_list").set_value([0.5])
    by_key(at, "km_methods").set_value([])          # a refused Run commits the form; nothing runs
    button(at, RUN).click()
    at.run()
    odds = odds_captions(at)
    assert len(odds) == 2, odds                      # one ε side by side: one sentence
    assert odds[0].startswith(":material/casino: ε = 2:") and odds[1].startswith(":material/casino: ε = 0.5:")


def test_side_by_side_with_a_public_seed_is_not_private_and_repeats():
    at = page()
    set_small_mixture(at)
    by_key(at, "km_repro").check()
    at.run()                                   # the box sits outside the form: ticking it shows the seed
    by_key(at, "km_eps_list").set_value([0.1, 10.0])
    button(at, SIDE_BY_SIDE).click()
    at.run()
    assert not at.exception and not at.error
    first = series_table(at)
    runs = [r for r in meter_runs(at) if "side by side" in r["label"]]
    assert len(runs) == 2 and not any(r["private"] for r in runs)
    text = info_text(at)
    assert "Private" not in text.replace("Not private", "") and "public seed" in text
    button(at, SIDE_BY_SIDE).click()
    at.run()
    assert series_table(at)["k-means objective"].equals(first["k-means objective"])   # the seed repeats the runs
    assert len([r for r in meter_runs(at) if "side by side" in r["label"]]) == 4        # ... each a new release


def test_link_round_trip_restores_dataset_and_side_by_side_controls():
    at = page()
    set_small_mixture(at)
    by_key(at, "km_eps_list").set_value([0.05, 50.0])
    by_key(at, "km_eps_method").set_value("sulq_kmeans")
    by_key(at, "km_eps").set_value(2.0)
    button(at, RUN).click()
    at.run()
    link = link_of(at)
    assert link["km_n"] == "1500" and link["km_eps_list"] == ["0.05", "50"]
    again = page(query=link)
    assert not again.warning
    assert by_key(again, "km_data").value == "gaussians"
    for key in ("km_n", "km_d", "km_comp", "km_k", "km_eps"):
        assert by_key(again, key).value == by_key(at, key).value, key
    assert by_key(again, "km_eps_list").value == [0.05, 50.0]
    assert by_key(again, "km_eps_method").value == "sulq_kmeans"


# ----------------------------------------------------------------------------- real digits
def _offer_digits(monkeypatch):
    """The shared picker (ui/pickers.py, not this page's file) lists the digits once the lead adds
    them; until then the test adds them the same way, so that the page's own path is tested."""
    from dpcore.data import PAPER_SPECS
    from ui.pickers import PICKERS
    kinds, generators, cluto = PICKERS["points"]
    if "digits" not in generators:
        monkeypatch.setitem(PICKERS, "points", (kinds | {"digits"}, {
            **generators, "digits": ("handwritten digits (scikit-learn, 8×8)", PAPER_SPECS["digits"])}, cluto))


def test_page_runs_on_the_digits_with_their_public_radius(monkeypatch):
    _offer_digits(monkeypatch)
    at = page()
    by_key(at, "km_data").set_value("digits")
    at.run()
    assert not at.exception
    assert by_key(at, "km_radius").value == 8.0 and by_key(at, "km_k").value == 10
    assert any("Λ = 8" in c.value for c in at.caption)
    by_key(at, "km_methods").set_value(["candidate_kmeans", "sulq_kmeans"])
    button(at, RUN).click()
    at.run()
    assert not at.exception and not at.error
    ratios = result_table(at)
    assert len(ratios) == 3                                       # two private methods and k-means++
    runs = meter_runs(at)
    assert len(runs) == 2 and all(r["private"] for r in runs) and all("digits" in r["dataset"] for r in runs)


# ----------------------------------------------------------------------------- the DP-Lloyd peer, the class budget
def test_a_dplloyd_run_is_listed_as_not_private_and_the_datasets_epsilon_is_infinite():
    """diffprivlib's DP-Lloyd is private on paper only (floating-point noise): its verdict says so,
    beside Run before the run, in the table, the box and the meter (the dataset's ε is ∞ after it)."""
    at = page()
    set_small_mixture(at)
    by_key(at, "km_methods").set_value(["candidate_kmeans", "dplloyd"])
    by_key(at, "km_eps_list").set_value([1.0])
    button(at, SIDE_BY_SIDE).click()         # (a refused or finished run commits the form: the plan follows)
    at.run()
    assert not at.exception and not at.error
    beside = [c.value for c in at.caption if "would NOT be private" in c.value]
    assert len(beside) == 1 and "DP-Lloyd" in beside[0] and "floating-point" in beside[0], beside
    name = meter_runs(at)[0]["dataset"]
    assert math.isfinite(headline(at, name).epsilon)                         # side by side: the candidate set only
    button(at, RUN).click()
    at.run()
    assert not at.exception and not at.error
    table = result_table(at)
    assert list(table["private"]) == ["—", "yes", "NO"]
    runs = [r for r in meter_runs(at) if "side by side" not in r["label"]]
    assert [(r["method"], r["private"], r["relation"]) for r in runs] == [
        ("candidate_kmeans", True, "replace_one"), ("dplloyd", False, "add_remove")]
    assert "floating-point" in runs[1]["reason"]
    h = headline(at, name)
    assert math.isinf(h.epsilon) and h.private_epsilon == pytest.approx(2.0) and h.nonprivate_fits == 1
    box = next(i.value for i in at.info if "**Private" in i.value)
    private_line, not_private_line = box.split("\n\n")[0], next(x for x in box.split("\n\n") if "**Not private" in x)
    assert "candidate set + local swaps" in private_line and "DP-Lloyd" not in private_line
    assert "DP-Lloyd (diffprivlib) — not private as executed" in not_private_line
    assert any("1 not private" in h.value for h in at.subheader)


@pytest.mark.parametrize("setup, words", [
    ({"km_methods": ["candidate_kmeans", "dplloyd"]}, "DP-Lloyd (diffprivlib), ε = 1 would not be private"),
    ({"km_leak": True}, "radius"),
])
def test_a_run_that_would_not_be_private_is_refused_under_a_class_budget(setup, words):
    at = open_page("6_kmeans.py", state={"class_budget": 50.0})
    set_small_mixture(at)
    for key, value in setup.items():
        by_key(at, key).set_value(value)
    button(at, RUN).click()
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and words in errors[0], errors
    assert meter_runs(at) == [] and "kmeans_result" not in at.session_state        # nothing ran, nothing charged
    by_key(at, "km_methods").set_value(["candidate_kmeans"])                       # private runs may still run
    by_key(at, "km_leak").uncheck()
    button(at, RUN).click()
    at.run()
    assert not at.error and [r["private"] for r in meter_runs(at)] == [True]


def test_a_public_seed_is_refused_under_a_class_budget():
    at = open_page("6_kmeans.py", state={"class_budget": 50.0})
    set_small_mixture(at)
    by_key(at, "km_repro").check()
    at.run()
    by_key(at, "km_eps_list").set_value([1.0])
    button(at, SIDE_BY_SIDE).click()
    at.run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "class budget" in errors[0] and "public seed" in errors[0], errors
    assert meter_runs(at) == []
