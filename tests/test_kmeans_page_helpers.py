"""The k-means page's helpers without Streamlit running: the ε side-by-side run (ui.kmeans),
the library's plans of a run, the privacy words (which follow the runs' verdicts), and the
figures of dpcore.plots.kmeans."""
import warnings

import numpy as np
import pytest

from dpcore.data import PAPER_SPECS, load_dataset
from dpcore.lab.verdicts import RunContext
from dpcore.plots.kmeans import MAX_LEGEND_CLASSES, centres_scatter, epsilon_panels, objective_bars
from dpcore.privacy.meter import Verdict
from ui.kmeans import (EPS_LADDER, EPS_MAX, EPS_MIN, MAX_SIDE_BY_SIDE, URL_FIELDS, epsilon_series, idle_privacy,
                       one_relation, plan_runs, plan_series, plan_words, privacy_parts, privacy_status, result_summary,
                       series_total)

PRIVATE = Verdict("k-means: SuLQ k-means, ε = 1", "replace_one", (), True, method="sulq_kmeans")
SEEDED = Verdict("k-means: SuLQ k-means, ε = 1", "replace_one", (), False, ("public seed 5 (reproducible mode)",),
                 method="sulq_kmeans")
LEAKED = Verdict("k-means: SuLQ k-means, ε = 1", "replace_one", (), False, ("the radius Λ is read off the data",),
                 method="sulq_kmeans")


@pytest.fixture(scope="module")
def mixture():
    return load_dataset(**dict(PAPER_SPECS["gaussians"], n=1500, d=10, k=4))


def test_series_one_run_per_epsilon_one_reference(mixture):
    s = epsilon_series(mixture.X, 4, "candidate_kmeans", [0.1, 1.0, 100.0], 5.0, random_state=3)
    assert s.method == "candidate_kmeans" and s.label == "candidate set + local swaps"
    assert s.epsilons == [0.1, 1.0, 100.0] and len(s.runs) == 3
    for r in s.runs:                                  # ratios against the one reference shown
        assert r.ratio == pytest.approx(r.objective / s.reference.objective, rel=1e-12)
    assert [r.estimator.ledger_.epsilon for r in s.runs] == pytest.approx([0.1, 1.0, 100.0])
    eps, dlt = series_total(s)
    assert eps == pytest.approx(101.1) and dlt == pytest.approx(3e-6)
    # a public seed repeats the runs exactly; the runs at different ε have their own noise
    again = epsilon_series(mixture.X, 4, "candidate", [0.1, 1.0, 100.0], 5.0, random_state=3)   # the old key
    assert again.method == "candidate_kmeans"
    assert all(np.array_equal(a.centres, b.centres) for a, b in zip(s.runs, again.runs))
    # the story the page tells, on well separated data at a fixed seed: ε = 100 is far better than ε = 0.1
    # (seeds 0-5 on this mixture: ε = 0.1 gives 50-141; ε = 100 gives 1.0 at four seeds, 1.8 and 9.3 at two:
    # seed 3 is one of the typical ones, and the test is deterministic at it)
    assert s.runs[2].ratio < 2 < 5 < s.runs[0].ratio


@pytest.mark.parametrize("eps, words", [([], "choose 1 to"), ([1.0] * (MAX_SIDE_BY_SIDE + 1), "choose 1 to"),
                                        ([float("inf")], "epsilon must be in"), ([0.0], "epsilon must be in")])
def test_series_refuses_bad_epsilons(mixture, eps, words):
    with pytest.raises(ValueError, match=words):
        epsilon_series(mixture.X, 4, "candidate_kmeans", eps, 5.0)


def test_limits_are_shared_by_widgets_and_links():
    assert all(EPS_MIN <= e <= EPS_MAX for e in EPS_LADDER)
    for text in ("inf", "nan", str(EPS_MAX * 2), str(EPS_MIN / 2), "0"):
        with pytest.raises(ValueError):
            URL_FIELDS["km_eps"](text)
    assert URL_FIELDS["km_eps"]("0.5") == 0.5
    assert URL_FIELDS["km_eps_list"](["0.1", "100"]) == [0.1, 100.0]
    assert URL_FIELDS["km_eps_method"]("SuLQ k-means") == "sulq_kmeans"
    assert URL_FIELDS["km_data"]("Gaussian mixture") == "gaussians"


def test_one_name_per_method_in_the_links_and_the_old_keys_still_parse():
    assert URL_FIELDS["km_eps_method"]("sulq_kmeans") == URL_FIELDS["km_eps_method"]("sulq") == "sulq_kmeans"
    assert URL_FIELDS["km_methods"](["candidate", "sample_aggregate", "lsh", "dplloyd", "candidate_sparse"]) == \
        ["candidate_kmeans", "sa_kmeans", "lsh_coreset", "dplloyd", "candidate_sparse"]
    assert URL_FIELDS["km_methods"](["LSH coreset (Google 2021)"]) == ["lsh_coreset"]
    assert URL_FIELDS["km_methods"].canonical(["sa_kmeans"]) == ["sample and aggregate"]   # the link's words
    with pytest.raises(ValueError, match="not one of the choices"):
        URL_FIELDS["km_methods"](["kmeans++"])


@pytest.mark.parametrize("verdict", [SEEDED, LEAKED])
def test_privacy_box_has_no_private_line_when_no_run_is_private(verdict):
    for series in (False, True):
        private, not_private, caveats = privacy_parts(["SuLQ k-means"] * 2, [verdict] * 2, None,
                                                      candidate=["SuLQ k-means"], series=series)
        assert private == []
        assert "centres released" in not_private[0] and verdict.reason in not_private[0]
        own = "these runs" if series else "this run"        # each box speaks of its own result, not of the page
        assert f"nothing {own} released is private" in " ".join(caveats) and verdict.reason in " ".join(caveats)
        assert not any("on this page" in t for t in not_private + caveats)


def test_privacy_box_lists_each_run_as_its_verdict_says():
    labels = ["candidate set + local swaps", "SuLQ k-means", "DP-Lloyd (diffprivlib)"]
    lloyd = Verdict("k-means: DP-Lloyd (diffprivlib), ε = 1", "add_remove", (), False, ("float noise",),
                    method="dplloyd")
    private, not_private, caveats = privacy_parts(labels, [PRIVATE, PRIVATE, lloyd], None,
                                                  candidate=["candidate set + local swaps"])
    assert private == ["the centres released by each private method (candidate set + local swaps, SuLQ k-means)",
                       "the candidate set and the chosen candidates in the projected space"]
    assert not_private[0] == "the centres released by each run of DP-Lloyd (diffprivlib) — float noise"
    assert not any("nothing" in c for c in caveats)               # some runs are private
    assert not any("_" in t for t in private + not_private)        # no attribute names
    _, not_private, _ = privacy_parts(labels, [LEAKED, PRIVATE, PRIVATE], None, candidate=[labels[0]])
    assert not_private[0].endswith("of candidate set + local swaps and the candidate set of candidate set + "
                                   "local swaps — the radius Λ is read off the data")


def test_earlier_result_heading_says_what_where_and_whether_private(mixture):
    assert privacy_status([PRIVATE, PRIVATE]) == "private"
    assert privacy_status([SEEDED, SEEDED]) == "not private: public seed 5 (reproducible mode)"
    lloyd = Verdict("x", "add_remove", (), False, ("float noise",), method="dplloyd")
    assert privacy_status([PRIVATE, lloyd]) == "partly private: DP-Lloyd (diffprivlib) not private"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # Λ read off the data warns
        ser = epsilon_series(mixture.X, 4, "sulq_kmeans", [0.1, 10.0], "data", random_state=0)
    words = result_summary({"series": ser, "params": {"seed": None}, "verdicts": [LEAKED, LEAKED]}, mixture.name)
    assert words.startswith("ε side by side, SuLQ k-means at ε = 0.1, 10") and mixture.name in words
    assert words.endswith("not private: the radius Λ is read off the data")


def test_the_plans_are_the_librarys(mixture):
    """What a Run or a side-by-side comparison would spend, and whether privately: asked of dpcore."""
    plans = plan_runs(mixture.X, 4, 1.0, 5.0, ["candidate_kmeans", "dplloyd"], 1e-6, None, RunContext())
    assert [(v.method, v.private, v.relation, v.epsilon) for v in plans] == [
        ("candidate_kmeans", True, "replace_one", 1.0), ("dplloyd", False, "add_remove", 1.0)]
    assert "floating-point" in plans[1].reason and plans[0].label == "k-means: candidate set + local swaps, ε = 1"
    assert one_relation(plans) is None and one_relation(plans[:1]) == "replace_one"
    words = plan_words(plans)
    assert words.startswith("Run: DP-Lloyd (diffprivlib) would NOT be private (") and "candidate" not in words
    assert plan_words(plans[:1]) == ""
    leak = plan_runs(mixture.X, 4, 1.0, "data", ["sulq_kmeans"], 1e-6, None, RunContext())
    assert not leak[0].private and "radius" in leak[0].reason
    seeded = plan_series(mixture.X, 4, "sulq", [0.1, 10.0], 5.0, 1e-6, None, RunContext(seed=3))
    assert [v.epsilon for v in seeded] == pytest.approx([0.1, 10.0]) and not any(v.private for v in seeded)
    assert all("public seed 3" in v.reason and v.label.endswith("side by side") for v in seeded)
    with pytest.raises(ValueError, match="methods must contain"):
        plan_runs(mixture.X, 4, 1.0, 5.0, [], 1e-6, None, RunContext())
    with pytest.raises(ValueError, match="choose 1 to"):
        plan_series(mixture.X, 4, "sulq_kmeans", [], 5.0, 1e-6, None, RunContext())
    # the box before any run follows the plan
    private, not_private, caveats = idle_privacy(leak)
    assert private == [] and "NOTHING" in caveats[0] and "radius" in not_private[0]
    private, not_private, _ = idle_privacy(plans)
    assert "candidate set + local swaps" in private[0] and "DP-Lloyd" in not_private[0]


def test_epsilon_panels_share_axes_and_clamp_far_centres(mixture):
    X, y = mixture.X, mixture.labels
    C = np.array([X[y == c].mean(axis=0) for c in range(4)])
    far = C.copy()
    far[0] = 1000.0                                    # a centre thrown far away by noise
    panels = [{"title": "ε = 0.1", "centres": far, "private": True},
              {"title": "ε = 1", "centres": C, "private": True},
              {"title": "ε = 10", "centres": C, "private": True},
              {"title": "k-means++", "centres": C, "private": False}]
    fig = epsilon_panels(X, y, panels, reference=C, title="t")
    ranges = {tuple(ax.range) for ax in (fig.layout[k] for k in fig.layout if k.startswith("xaxis"))}
    assert len(ranges) == 1                            # one range for all four panels
    lo, hi = next(iter(ranges))
    assert hi - lo < 50                                # the far centre did not squash the points
    names = [t.name for t in fig.data if t.showlegend]
    assert len(names) == len(set(names))               # one legend entry per kind
    assert "released centre beyond the frame (drawn on its edge)" in names
    assert [a.text for a in fig.layout.annotations][:4] == ["ε = 0.1", "ε = 1", "ε = 10", "k-means++"]
    with pytest.raises(ValueError, match="panels"):
        epsilon_panels(X, y, [])


def test_centres_scatter_many_classes_one_legend_entry():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(640, 5))
    y = np.arange(640) % 64
    fig = centres_scatter(X, y, {"released": X[:3]})
    assert sum(1 for t in fig.data if t.showlegend is not False) == 2
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    few = centres_scatter(X[:100], y[:100] % MAX_LEGEND_CLASSES, None)
    assert len(few.data) == MAX_LEGEND_CLASSES


def test_objective_bars_log_axis_ticks_decades_only():
    fig = objective_bars({"a": 1.3, "b": 80.0})
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1
    assert [t.text for t in fig.data if t.type == "bar"][0] == ("1.3", "80")
    assert objective_bars({"a": 1.3, "b": 2.0}).layout.yaxis.type != "log"


def test_series_with_data_radius_warns(mixture):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = epsilon_series(mixture.X, 4, "sulq_kmeans", [1.0], "data")
    assert s.radius_from_data and any("radius" in str(w.message).lower() for w in caught)
    assert not s.runs[0].private
