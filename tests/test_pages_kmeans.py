"""AppTest runs of the k-means page (pages/6_kmeans.py)."""
import pytest

from apptest_helpers import open_page
from dpcore.kmeans.common import DataDerivedRadiusWarning


def page():
    return open_page("6_kmeans.py")


def number(at, label):
    return next(w for w in at.number_input if w.label == label)


def button(at, label):
    return next(b for b in at.button if b.label == label)


def result_table(at):
    return next(d.value for d in at.dataframe if "÷ k-means++" in d.value.columns)


def set_small_mixture(at):
    next(s for s in at.selectbox if s.label == "Dataset").set_value("gaussians")
    at.run()
    number(at, "points n").set_value(1500)
    number(at, "dimension d").set_value(10)
    number(at, "components").set_value(4)
    at.run()
    number(at, "clusters k").set_value(4)


def test_page_runs_and_shows_objectives_ledger_and_statement():
    at = page()
    assert any("Not private" in i.value for i in at.info)
    set_small_mixture(at)
    button(at, "Run").click()
    at.run()
    assert not at.exception and not at.error
    table = result_table(at)
    assert list(table["method"])[0] == "k-means++ (non-private)" and len(table) == 4  # reference + 3 defaults
    assert table["÷ k-means++"].iloc[0] == 1.0
    assert (table["ε spent"].iloc[1:] == 1.0).all()
    # the candidate method's ledger: 3 stages summing to ε = 1 (default split 0.4/0.1/0.5)
    ledger = next(d.value for d in at.dataframe if "mechanism" in d.value.columns)
    assert len(ledger) == 3 and abs(ledger["epsilon"].sum() - 1.0) < 1e-12
    assert list(ledger["epsilon"].round(12)) == [0.4, 0.1, 0.5]
    text = " ".join(i.value for i in at.info)
    assert "labels from assigning the points" in text
    assert any("candidate set" in m.value for m in at.markdown)
    # every private run went into the session meter: 3 candidate stages + SuLQ + sample-aggregate
    assert sum(r["releases"] for r in at.session_state["session_meter"].runs) == 3 + 1 + 1


def test_bad_input_shows_error_and_keeps_previous_result():
    at = page()
    set_small_mixture(at)
    button(at, "Run").click()
    at.run()
    before = result_table(at)
    for label, bad, word in [("privacy budget ε", 0.0, "epsilon must be > 0"), ("public radius Λ", 0.0, "radius"),
                             ("clusters k", 5000, "n_clusters"), ("projection dimension p", 0, "projection_dim")]:
        good = number(at, label).value
        number(at, label).set_value(bad)
        button(at, "Run").click()
        at.run()
        assert not at.exception
        assert any(word in e.value for e in at.error), (label, [e.value for e in at.error])
        assert result_table(at).equals(before)  # the previous result stays
        number(at, label).set_value(good)


def test_data_derived_radius_is_flagged():
    at = page()
    set_small_mixture(at)
    next(c for c in at.checkbox if c.label.startswith("use Λ = max")).check()
    button(at, "Run").click()
    with pytest.warns(DataDerivedRadiusWarning):
        at.run()
    assert not at.exception
    assert any("NOT" in w.value or "none of these runs" in w.value for w in at.warning)
    assert any("NOTHING on this page is private" in i.value for i in at.info)
