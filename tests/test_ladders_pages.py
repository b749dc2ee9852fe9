"""Instant ε on the pages (AppTest): on every preset that has a precomputed ε ladder the page shows
its slider; moving it redraws from the ladder without fitting anything and charges nothing;
"Run live" runs the page's own run at that ε and charges it as before; a missing ladder is
prepared in the background while the page says so.

No wall clock is asserted here: benchmarks/bench_ladders.py measures the redraw in Chromium."""
from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path

import pytest

from apptest_helpers import by_key, open_page
from dpcore.lab import ladders as L
from dpcore.lab.methods import METHODS

sys.path.insert(0, str(Path(__file__).resolve().parent / "browser"))
from stdriver import privacy_contradictions  # noqa: E402  (pure: no browser needed)

PAGE_FILE = {"cluster": "3_cluster.py", "kmeans": "6_kmeans.py", "gibbs": "4_gibbs.py"}
SLIDER = {"cluster": "cl_ladder_eps", "kmeans": "km_ladder_eps", "gibbs": "g_ladder_eps"}
#: one ladder per page for the slower tests (Gibbs: the quick look, whose live run is short)
ONE = {"cluster": "cluster-fig2-sulq10", "kmeans": "kmeans-8-gaussians", "gibbs": "gibbs-quick-look"}


def on_preset(spec):
    at = open_page(PAGE_FILE[spec.page])
    by_key(at, f"{spec.page}_preset").set_value(spec.preset)
    at.run()
    assert not at.exception, at.exception
    return at


def titles(at):
    """The panel and figure titles of every chart on the page."""
    out = []
    for chart in at.get("plotly_chart"):
        layout = json.loads(chart.proto.spec)["layout"]
        out += [a.get("text", "") for a in layout.get("annotations", [])]
        out.append((layout.get("title") or {}).get("text") or "")
    return [t for t in out if t]


def charged(at):
    """The runs this session has charged to the meter."""
    return at.session_state["session_meter"].runs if "session_meter" in at.session_state else []


def texts(at):
    return [x.value for group in (at.caption, at.markdown, at.info, at.warning, at.success) for x in group]


@pytest.fixture
def no_fit(monkeypatch):
    """Every catalogue method's fit fails: a redraw from the ladder fits nothing."""
    def boom(self, *args, **kwargs):
        raise AssertionError(f"{type(self).__name__}.fit was called")
    for method in METHODS.values():
        monkeypatch.setattr(method.cls, "fit", boom)


@pytest.mark.parametrize("name", list(L.LADDERS))
def test_every_ladder_preset_shows_its_slider_and_says_what_it_is(name):
    spec = L.LADDERS[name]
    at = on_preset(spec)
    slider = by_key(at, SLIDER[spec.page])
    assert [float(o) for o in slider.options] == list(spec.epsilons)
    eps = slider.value
    assert any(re.match(rf"ε = {eps:g}(?![\d.])", t) for t in titles(at)), titles(at)
    words = " ".join(texts(at))
    assert "Precomputed demonstration, not a private release" in words and "public seed 0" in words
    assert "nothing of them is recorded in the privacy meter" in words
    assert "measured when the ladder was built" in words
    assert by_key(at, f"{SLIDER[spec.page]}_live").label == f"Run live at ε = {eps:g}"
    assert privacy_contradictions(texts(at)) == []
    assert charged(at) == []


@pytest.mark.parametrize("page", list(ONE))
def test_moving_the_slider_redraws_from_the_ladder_without_a_fit_and_charges_nothing(page, no_fit):
    spec = L.LADDERS[ONE[page]]
    ladder = L.load_ladder(spec, verify=False)
    at = on_preset(spec)
    for eps in (spec.epsilons[0], spec.epsilons[-1], spec.epsilons[len(spec.epsilons) // 2]):
        by_key(at, SLIDER[page]).set_value(eps)
        at.run()
        assert not at.exception, at.exception
        shown = titles(at)
        assert any(re.match(rf"ε = {eps:g}(?![\d.])", t) for t in shown), shown
        r = ladder.rung(eps)
        if page == "cluster":                      # the panel's title: the rung's own numbers
            assert any(t.startswith(f"ε = {eps:g}: accuracy {r['metrics'][0]:.3g}") for t in shown), shown
        elif page == "kmeans":
            assert any(f"objective ÷ k-means++ = {r['ratio']:.3g}" in t for t in shown), shown
        else:                                      # the verdict computed when the ladder was built
            heading = "mixed" if r["verdict"]["mixed"] else "not"
            assert any(m.value.startswith(f"**ε = {eps:g}: {heading}") for m in list(at.success) + list(at.warning))
        assert by_key(at, f"{SLIDER[page]}_live").label == f"Run live at ε = {eps:g}"
    assert charged(at) == []


def test_run_live_on_the_cluster_page_is_a_compare_eps_at_that_eps():
    spec = L.LADDERS[ONE["cluster"]]
    at = on_preset(spec)
    by_key(at, SLIDER["cluster"]).set_value(100.0)
    at.run()
    by_key(at, "cl_ladder_eps_live").click()
    at.run()
    assert not at.exception and not at.error
    (run,) = charged(at)
    assert run["epsilon"] == 100.0 and run["private"] and run["label"].endswith("ε = 100 (Compare ε)")
    assert at.session_state["cluster_eps_compare"]["eps"] == [100.0]
    assert any("made 1 private release" in i.value for i in at.info)        # the comparison's privacy box
    by_key(at, SLIDER["cluster"]).set_value(1.0)                            # the slider again: nothing more
    at.run()
    assert len(charged(at)) == 1


def test_run_live_on_the_kmeans_page_is_a_side_by_side_at_that_eps():
    spec = L.LADDERS[ONE["kmeans"]]
    at = on_preset(spec)
    by_key(at, SLIDER["kmeans"]).set_value(10.0)
    at.run()
    by_key(at, "km_ladder_eps_live").click()
    at.run()
    assert not at.exception and not at.error
    (run,) = charged(at)
    assert run["epsilon"] == 10.0 and run["private"] and run["label"].endswith("ε = 10 side by side")
    assert at.session_state["kmeans_series"]["series"].epsilons == [10.0]
    assert any("ε = 10" in m.value and "Privacy spent by these 1 runs" in m.value for m in at.markdown)


def test_run_live_on_the_gibbs_page_runs_the_chains_at_that_eps():
    spec = L.LADDERS[ONE["gibbs"]]
    at = on_preset(spec)
    by_key(at, SLIDER["gibbs"]).set_value(2.0)
    at.run()
    by_key(at, "g_ladder_eps_live").click()
    at.run()
    assert not at.exception and not at.error
    res = at.session_state["gibbs_result"]
    assert list(res["runs"]) == [2.0] and res["params"]["n_chains"] == 4 and res["params"]["n_iter"] == 200
    (run,) = charged(at)
    assert run["label"] == "Gibbs (ε = 2)"
    mixed = res["verdicts"][2.0]["mixed"]
    assert run["private"] == mixed                     # charged with the page's own verdict on its chains
    if not mixed:
        assert "not yet mixed" in run["reason"] or "did not move" in run["reason"]


def test_no_slider_before_a_preset_or_once_a_setting_changed():
    at = open_page("4_gibbs.py")                       # the defaults are Fig. 3's, but no preset was chosen
    assert not [w for w in at.select_slider if w.key == SLIDER["gibbs"]]
    spec = L.LADDERS["cluster-planes-sulq"]
    at = on_preset(spec)
    assert by_key(at, SLIDER["cluster"])
    by_key(at, "sulq_T").set_value(20)                 # other iterations: the ladder no longer shows this setting
    next(b for b in at.button if b.proto.form_id == "cluster_form").click()      # Run: commits the form
    at.run()
    assert not at.exception
    assert not [w for w in at.select_slider if w.key == SLIDER["cluster"]]


def test_a_missing_ladder_is_prepared_in_the_background_and_the_page_says_so(monkeypatch, tmp_path):
    import ui.ladder as ul
    go, reported = threading.Event(), threading.Event()

    def build(spec, progress):
        progress(2, 17, "ε = 0.05")
        reported.set()
        assert go.wait(120)
        return L.build_ladder(spec)

    store = ul.LadderStore(directory=tmp_path, build=build)        # no files there
    monkeypatch.setattr(ul, "store", lambda: store)
    spec = L.LADDERS["cluster-planes-sulq"]
    at = on_preset(spec)
    assert not [w for w in at.select_slider if w.key == SLIDER["cluster"]]
    assert any("being prepared" in i.value for i in at.info), [i.value for i in at.info]
    assert reported.wait(120)
    at.run()                                            # the next look says how far the build is
    assert not [w for w in at.select_slider if w.key == SLIDER["cluster"]]
    assert any("being prepared" in i.value and "2 of 17 runs done" in i.value for i in at.info), \
        [i.value for i in at.info]
    assert next(b for b in at.button if b.proto.form_id == "cluster_eps_form")      # the page works meanwhile
    go.set()
    assert store.wait(spec.name, timeout=300)
    at.run()
    assert not at.exception
    assert [float(o) for o in by_key(at, SLIDER["cluster"]).options] == list(spec.epsilons)
