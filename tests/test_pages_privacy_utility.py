"""AppTest runs of the Privacy–utility page (pages/7_privacy_utility.py): presets, links,
bad sweeps and results that survive them."""
import json

import pytest

from apptest_helpers import open_page
from apptest_helpers import widget as w

SMALL = {"kind": "subspaces", "n": 150, "d": 5, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0}


def page(query=None, spec=SMALL):
    return open_page("7_privacy_utility.py", spec=spec, query=query, timeout=180)


def run_small(at, methods=("SuLQ-10", "k-plane"), metrics=("d_W",)):
    w(at, "multiselect", "methods").set_value(list(methods))
    w(at, "multiselect", "metrics").set_value(list(metrics))
    w(at, "number_input", "ε points").set_value(2)
    w(at, "number_input", "trials").set_value(1)
    w(at, "radio", "workers").set_value(1)
    next(b for b in at.button if b.label == "Run sweep").click()
    at.run()
    assert not at.exception, at.exception
    return at


def controls(at):
    return {(kind, x.label): x.value for kind in ("multiselect", "number_input", "select_slider", "radio")
            for x in getattr(at, kind)}


def test_defaults_follow_the_dataset():
    at = page()
    assert w(at, "multiselect", "methods").value == ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs"]
    assert w(at, "multiselect", "metrics").value == ["d_W", "cost"]
    counts = page(spec={"kind": "blocks", "n_rows": 40, "n_cols": 30, "random_state": 0})
    assert w(counts, "multiselect", "methods").value == ["DP-τCC", "Fast-τCC"]
    assert "d_W" not in w(counts, "multiselect", "metrics").options
    mixture = page(spec={"kind": "gaussians", "n": 300, "d": 5, "k": 3, "random_state": 0})
    assert w(mixture, "multiselect", "metrics").value == ["objective_ratio"]


def test_sweep_runs_and_the_link_reopens_the_same_controls():
    at = run_small(page())
    assert not at.error, [e.value for e in at.error]
    df = at.session_state["privacy_utility"]["df"]
    assert len(df) == 2 + 1 and df["d_W"].notna().all()          # SuLQ-10 at 2 ε, k-plane once
    assert len(at.get("plotly_chart")) == 1
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["pu_methods"] == "SuLQ-10,k-plane" and link["pu_points"] == "2" and json.loads(link["data"]) == SMALL
    again = page(query=link, spec=None)                           # a new session from the link
    assert controls(again) == controls(at)
    assert again.session_state["dataset"]["spec"] == SMALL


@pytest.mark.parametrize("query, name", [
    ({"pu_methods": "SuLQ-10,magic"}, "pu_methods"),
    ({"pu_range": "3,-1"}, "pu_range"),
    ({"pu_points": "99"}, "pu_points"),
])
def test_bad_link_parameters_are_ignored_with_a_warning(query, name):
    at = page(query=query)
    assert any(name in x.value and "Ignored link parameters" in x.value for x in at.warning)
    assert w(at, "multiselect", "methods").value == ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs"]


def test_link_methods_for_another_kind_of_data_are_dropped():
    # DP-τCC runs on count matrices only: on points it cannot be offered
    at = page(query={"pu_methods": "DP-τCC,SuLQ-10"})
    assert w(at, "multiselect", "methods").value == ["SuLQ-10"]


def test_presets_set_methods_metrics_grid_and_dataset():
    at = page()
    preset = w(at, "selectbox", "Preset")
    for option in preset.options[1:]:
        w(at, "selectbox", "Preset").set_value(option)
        at.run()
        assert not at.exception and not at.error, option
    # the last preset changed the dataset; the one before set metrics that differ from the
    # defaults of its dataset (["nmi"]) and must win over them
    assert at.session_state["dataset"]["spec"]["kind"] == "gaussians"
    w(at, "selectbox", "Preset").set_value("Co-clustering Fig. 2 on classic3 (DP-τCC against Fast-τCC)")
    at.run()
    assert at.session_state["dataset"]["spec"] == {"kind": "cluto", "name": "classic3"}
    assert w(at, "multiselect", "metrics").value == ["nmi", "tau_rc"]
    assert w(at, "select_slider", "ε range (log10)").value == (-1, 1)


@pytest.mark.parametrize("methods, metrics, message", [
    ([], ["d_W"], "algorithms must name at least one algorithm"),
    (["SuLQ-10"], [], "metrics must name at least one metric"),
])
def test_bad_sweep_shows_the_message_and_keeps_the_last_result(methods, metrics, message):
    at = run_small(page())
    before = at.session_state["privacy_utility"]["df"]
    run_small(at, methods, metrics)
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["privacy_utility"]["df"] is before
    assert len(at.get("plotly_chart")) == 1                       # the last figure is still shown
