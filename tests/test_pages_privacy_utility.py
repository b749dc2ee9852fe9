"""AppTest runs of the Privacy–utility page (pages/7_privacy_utility.py): presets, links,
bad sweeps and results that survive them, the figure a class sees, uploads."""
import math
from collections import OrderedDict
from pathlib import Path

import pytest

from apptest_helpers import by_key as w
from apptest_helpers import limits, open_page, press

SMALL = {"kind": "subspaces", "n": 150, "d": 5, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0}
FIG2_METHODS = ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs", "k-plane"]
TWO_PLANES = Path(__file__).resolve().parents[1] / "sample_data" / "uploads" / "two_planes.csv"


def page(query=None, spec=SMALL, state=None):
    return open_page("7_privacy_utility.py", spec=spec, query=query, timeout=180, state=state)


def run_small(at, methods=("SuLQ-10", "k-plane"), metrics=("d_W",), points=2, trials=1, log_range=None):
    if log_range is not None:
        w(at, "pu_range").set_value(log_range)
    w(at, "pu_methods").set_value(list(methods))
    w(at, "pu_metrics").set_value(list(metrics))
    w(at, "pu_points").set_value(points)
    w(at, "pu_trials").set_value(trials)
    w(at, "pu_jobs").set_value(1)
    return press(at, "sweep_form")


def controls(at):
    return {x.key: x.value for kind in ("multiselect", "number_input", "select_slider", "radio")
            for x in getattr(at, kind)}


def figure(at):
    import json
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def ignored(at):
    return " ".join(x.value for x in at.warning if "Ignored link parameters" in x.value)


def test_defaults_follow_the_dataset():
    at = page()
    assert w(at, "pu_methods").value == FIG2_METHODS                  # k-plane: the dashed reference
    assert w(at, "pu_metrics").value == ["d_W", "cost"]
    assert w(at, "pu_q").value == 1                                   # SMALL plants q = 1
    counts = page(spec={"kind": "blocks", "n_rows": 40, "n_cols": 30, "random_state": 0})
    assert w(counts, "pu_methods").value == ["DP-τCC", "Fast-τCC"]
    assert "d_W" not in w(counts, "pu_metrics").options
    assert "pu_q" not in [x.key for x in counts.number_input]         # no q on count data
    mixture = page(spec={"kind": "gaussians", "n": 300, "d": 5, "k": 3, "random_state": 0})
    assert w(mixture, "pu_metrics").value == ["objective_ratio"]


def test_a_link_opens_its_controls_and_runs():
    # a link as Streamlit writes it: repeated parameters for multiselects and the range slider,
    # the metrics by their labels
    link = {"pu_methods": ["SuLQ-10", "k-plane"], "pu_metrics": ["d_W", "cost"], "pu_range": ["-1", "0"],
            "pu_points": "2", "pu_trials": "1", "pu_jobs": "1", "pu_q": "1"}
    at = page(query=link)
    assert not ignored(at), ignored(at)
    c = controls(at)
    assert c["pu_methods"] == ["SuLQ-10", "k-plane"] and c["pu_metrics"] == ["d_W", "cost"]
    assert c["pu_range"] == (-1, 0) and c["pu_points"] == 2
    press(at, "sweep_form")
    df = at.session_state["privacy_utility"]["df"]
    assert len(df) == 2 + 1 and df["d_W"].notna().all()          # SuLQ-10 at 2 ε, k-plane once
    assert sorted(df["epsilon"].dropna()) == [0.1, 1.0]
    assert len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("query, name", [
    ({"pu_methods": ["SuLQ-10", "magic"]}, "pu_methods"),
    ({"pu_methods": ["DP-τCC", "SuLQ-10"]}, "pu_methods"),       # a method for count data, on points
    ({"pu_range": ["3", "-1"]}, "pu_range"),
    ({"pu_range": "-1,3"}, "pu_range"),                          # not the slider's format (two parameters)
    ({"pu_points": "99"}, "pu_points"),                          # the widget's limit is 15
    ({"pu_trials": "0"}, "pu_trials"),
    ({"pu_q": "5"}, "pu_q"),                                     # d = 5: q ≤ 4
    ({"pu_jobs": "3"}, "pu_jobs"),
    ({"pu_metrics": ["tau_rc"]}, "pu_metrics"),                  # not a metric of point data (nor a label)
])
def test_link_values_outside_the_widgets_limits_are_refused_with_a_warning(query, name):
    at = page(query=query)
    assert name in ignored(at), [x.value for x in at.warning]
    assert not at.error
    # the widgets keep their defaults; of a list, Streamlit keeps the items the widget offers
    assert w(at, "pu_methods").value == (["SuLQ-10"] if name == "pu_methods" else FIG2_METHODS)
    assert w(at, "pu_points").value == 7 and w(at, "pu_q").value == 1


def test_q_in_a_link_on_count_data_is_refused():
    at = page(query={"pu_q": "2"}, spec={"kind": "blocks", "n_rows": 40, "n_cols": 30, "random_state": 0})
    assert "pu_q" in ignored(at)


def test_presets_set_methods_metrics_grid_and_dataset():
    at = page()
    preset = w(at, "privacy_utility_preset")
    for option in preset.options[1:]:
        w(at, "privacy_utility_preset").set_value(option)
        at.run()
        assert not at.exception and not at.error, option
    # the last preset changed the dataset; the one before set metrics that differ from the
    # defaults of its dataset (["nmi"]) and must win over them
    assert at.session_state["dataset"]["spec"]["kind"] == "gaussians"
    w(at, "privacy_utility_preset").set_value("Co-clustering Fig. 2 on classic3 (DP-τCC against Fast-τCC)")
    at.run()
    assert at.session_state["dataset"]["spec"] == {"kind": "cluto", "name": "classic3"}
    assert w(at, "pu_metrics").value == ["nmi", "tau_rc"]
    assert w(at, "pu_range").value == (-1, 1)
    w(at, "privacy_utility_preset").set_value("Paper Fig. 2 middle (4 private methods and k-plane, 7 ε × 5 trials)")
    at.run()
    assert w(at, "pu_methods").value == FIG2_METHODS              # with its dashed reference (issue 16)
    assert w(at, "pu_q").value == 3


def _is_125(v):
    """v is 1, 2 or 5 times a power of ten."""
    m = v / 10 ** math.floor(math.log10(v) + 1e-9)
    return any(math.isclose(m, c, rel_tol=1e-6) for c in (1, 2, 5))


def test_figure_has_axis_titles_round_log_ticks_and_a_dashed_reference():
    at = run_small(page(), methods=("SuLQ-10", "k-plane"), metrics=("d_W", "cost"), points=3)
    layout = figure(at)["layout"]
    axes = {k: v for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))}
    assert len(axes) == 4
    for name, ax in axes.items():
        assert ax.get("title", {}).get("text"), f"{name} has no title"
        if ax.get("type") == "log":          # labels only at 1-2-5 values: no plotly minor labels "2, 3, …, 9"
            assert ax.get("tickmode") == "array" and ax["tickvals"], name
            assert all(_is_125(v) for v in ax["tickvals"]), (name, ax["tickvals"])
    assert layout["xaxis"]["type"] == "log" and layout["xaxis"]["tickvals"] == [0.1, 1, 10, 100, 1000]
    dashed = [t for t in figure(at)["data"] if t.get("line", {}).get("dash") == "dash"]
    assert {t["name"] for t in dashed} == {"k-plane (non-private)"} and len(dashed) == 2   # one per panel
    captions = " ".join(c.value for c in at.caption)
    assert "k-plane" in captions and "sample-aggregate" not in captions      # the caption names the dashed method


def test_a_sweep_without_a_non_private_method_says_there_is_no_dashed_line():
    at = run_small(page(), methods=("SuLQ-10",), metrics=("d_W",))
    assert not [t for t in figure(at)["data"] if t.get("line", {}).get("dash") == "dash"]
    assert "no dashed" in " ".join(c.value for c in at.caption)                # ... and the caption says so


def test_theorem_31_warning_is_shown_once_for_all_its_epsilons():
    # sample-aggregate on n = 150: Theorem 3.1's ε condition (ε > 2D/√m) fails at both ε of the
    # grid, 0.01 and 0.1; its message names the run's ε, and was shown once per ε before issue 16
    at = run_small(page(), methods=("s.a. TSC",), metrics=("d_W",), points=2, trials=2, log_range=(-2, -1))
    theorem = [x.value for x in at.warning if "3.1" in x.value]
    assert len(theorem) == 1, theorem                                           # once, for both ε and all runs
    assert "0.01, 0.1" in theorem[0] and "4 of 4" in theorem[0], theorem
    captions = " ".join(c.value for c in at.caption)
    assert "Gibbs" not in captions                                # no finding about methods not shown


def _upload_state():
    from dpcore.upload import load_upload, upload_key
    ds = load_upload(TWO_PLANES.name, TWO_PLANES.read_bytes(), kind="points", labels="last_column")
    return ds, {"uploaded_datasets": OrderedDict({upload_key(ds.params): ds})}


def test_sweep_on_the_uploaded_two_planes_with_q():
    ds, state = _upload_state()
    at = page(spec=dict(ds.params), state=state)
    q = w(at, "pu_q")
    from dpcore.defaults import default_subspace_dim
    assert (q.value, *limits(at, "pu_q")) == (default_subspace_dim(ds), 1, ds.d - 1)   # the upload's default, to d − 1
    assert w(at, "pu_jobs").options == ["1"]                      # uploads run in this process
    q.set_value(2)
    at = run_small(at, methods=("SuLQ-10", "k-plane"), metrics=("d_W_class", "cost"))
    assert not at.error, [e.value for e in at.error]
    df = at.session_state["privacy_utility"]["df"]
    assert (df["q"] == 2).all() and df["d_W_class"].notna().all() and len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("methods, metrics, message", [
    ([], ["d_W"], "algorithms must name at least one algorithm"),
    (["SuLQ-10"], [], "metrics must name at least one metric"),
])
def test_bad_sweep_shows_the_message_once_and_keeps_the_last_result(methods, metrics, message):
    at = run_small(page())
    before = at.session_state["privacy_utility"]["df"]
    run_small(at, methods, metrics)
    assert [e.value for e in at.error] == [message] or sum(message in e.value for e in at.error) == 1, \
        [e.value for e in at.error]
    assert at.session_state["privacy_utility"]["df"] is before
    assert len(at.get("plotly_chart")) == 1                       # the last figure is still shown


def test_gibbs_in_a_sweep_is_said_to_be_listed_as_not_private_before_any_run():
    at = page()
    assert "Gibbs" in w(at, "pu_methods").value
    note = [c.value for c in at.warning if "Gibbs" in c.value]
    assert len(note) == 1 and "not private" in note[0] and "budget" in note[0], note   # named, and why, before any run
    assert "once the chain has mixed, which a sweep does not check" in note[0]
    box = " ".join(i.value for i in at.info)
    assert "Gibbs's releases — its guarantee holds only once the chain has mixed" in box   # the privacy box (planned)
    run_small(at)                                                  # SuLQ-10 and k-plane: no note
    assert not [c for c in at.warning if "Gibbs" in c.value]


def test_a_q_typed_out_of_range_is_refused_beside_run_not_replaced():
    """d = 5: q in 1 … 4. A typed q = 7 used to be reset to the default and the sweep ran (and was
    charged) with q = 1, without a word."""
    at = run_small(page())
    before = at.session_state["privacy_utility"]["df"]
    n_charged = len(at.session_state["session_meter"].runs)
    w(at, "pu_q").set_value(7)
    at = run_small(at)
    errors = [e.value for e in at.error]
    assert "subspace dimension q must be between 1 and 4, not 7." in errors, errors          # under the field
    assert any(e.startswith("**Run sweep: not run.**") and "not 7" in e for e in errors), errors   # beside Run
    assert w(at, "pu_q").value == 7                                             # kept as typed, not replaced
    assert at.session_state["privacy_utility"]["df"] is before                  # nothing ran ...
    assert len(at.session_state["session_meter"].runs) == n_charged             # ... and nothing was charged
    w(at, "pu_q").set_value(2)
    at = run_small(at)
    assert not at.error and (at.session_state["privacy_utility"]["df"]["q"].dropna() == 2).all()


def test_a_new_dataset_still_resets_q_to_its_default():
    at = page()
    w(at, "pu_q").set_value(4)
    at.run()
    at.session_state["dataset"] = {"spec": {**SMALL, "d": 3}}                  # chosen on the Data page: q ≤ 2
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert w(at, "pu_q").value == 1


def test_a_q_read_off_the_data_makes_the_subspace_fits_not_private_everywhere():
    from dpcore.upload import load_upload, upload_key
    ds = load_upload(TWO_PLANES.name, TWO_PLANES.read_bytes(), kind="points", labels="last_column", subspace_dim=1)
    at = page(spec=dict(ds.params), state={"uploaded_datasets": OrderedDict({upload_key(ds.params): ds})})
    assert w(at, "pu_q").value == 1                                             # the accepted q, read off the data
    said = "q = 1 was read off the data"
    assert any(said in x.value and "SuLQ-10" in x.value for x in at.warning)  # beside Run, before any sweep
    at = run_small(at, methods=("SuLQ-10", "s.a. TSC", "k-plane"), metrics=("cost",))
    assert not at.error, [e.value for e in at.error]
    runs = at.session_state["session_meter"].runs
    assert len(runs) == 4 and not any(r["private"] for r in runs) and all(said in r["reason"] for r in runs)
    box = next(i.value for i in at.info if "**Not private:**" in i.value)
    assert "**Private" not in box and said in box and "released subspaces" in box
    caption = " ".join(c.value for c in at.caption)
    assert "best private median" not in caption and f"Not private in this sweep, though run with an ε: SuLQ-10, " \
        f"s.a. TSC ({said}" in caption
    w(at, "pu_q").set_value(2)                                                  # a q not read off the data
    at = run_small(at, methods=("SuLQ-10", "k-plane"), metrics=("cost",))
    assert [r["private"] for r in at.session_state["session_meter"].runs[4:]] == [True, True]
    assert not any(said in x.value for x in list(at.warning) + list(at.info))
