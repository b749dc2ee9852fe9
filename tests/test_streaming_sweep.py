"""Long live actions drawn as they run: the privacy–utility sweep grows cell by cell (a method at
one ε), the Cluster page's Compare ε panel by panel, each with a bar giving the time left. What
is drawn is charged first; a run that did not finish leaves its drawn part labelled partial,
never as the finished result; the finished result is the one a run without streaming gives."""
import math
from unittest import mock

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import by_key, open_page, press, submit
from dpcore.lab.sweeps import Sweep, run_sweep

DATA = {"kind": "subspaces", "n": 120, "d": 4, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0}
ALGS = [{"name": "sulq_kplane", "label": "SuLQ", "params": {"subspace_dim": 1}},
        {"name": "kplane", "label": "k-plane", "params": {"subspace_dim": 1}}]
TINY = {"kind": "subspaces", "n": 120, "d": 3, "k": 2, "q": 1, "sigma": 0.01, "random_state": 0}
CANCELLED = "Your last run did not finish"


def sweep(**kw):
    return Sweep(**{"dataset": DATA, "algorithms": ALGS, "epsilons": [0.5, 5.0, 50.0], "trials": 2,
                    "metrics": ["d_W", "cost"], "seed": 7, **kw})


def comparable(df):
    return df.drop(columns=["seconds"]).reset_index(drop=True)


# ----------------------------------------------------------------------------- the library's callback
def test_each_cell_is_reported_once_eps_by_eps_and_the_frame_is_unchanged():
    cells, runs = [], []
    df = run_sweep(sweep(), on_cell=lambda label, eps, rows: cells.append((label, eps, rows)),
                   progress=lambda done, total: runs.append(done))
    # the non-private reference first, then the grid from the smallest ε: a figure grows left to right
    assert [(label, None if math.isnan(eps) else eps) for label, eps, _ in cells] == [
        ("k-plane", None), ("SuLQ", 0.5), ("SuLQ", 5.0), ("SuLQ", 50.0)]
    assert all([r["trial"] for r in rows] == [0, 1] and {r["algorithm"] for r in rows} == {label}
               for label, _, rows in cells)
    assert runs == list(range(len(df) + 1))
    assert comparable(df).equals(comparable(run_sweep(sweep())))          # same runs, same order of rows
    streamed = pd.DataFrame([r for _, _, rows in cells for r in rows])
    assert len(streamed) == len(df) and set(streamed["seed"]) == set(df["seed"])


def test_two_workers_report_every_cell_and_give_the_same_frame():
    cells = []
    df = run_sweep(sweep(), n_jobs=2, on_cell=lambda label, eps, rows: cells.append((label, eps, len(rows))))
    assert sorted((label, -1 if math.isnan(eps) else eps, n) for label, eps, n in cells) == [
        ("SuLQ", 0.5, 2), ("SuLQ", 5.0, 2), ("SuLQ", 50.0, 2), ("k-plane", -1, 2)]
    assert comparable(df).equals(comparable(run_sweep(sweep())))


def test_cells_loaded_from_a_store_are_reported_at_the_start(tmp_path):
    run_sweep(sweep(), store=tmp_path)
    cells = []
    df = run_sweep(sweep(), store=tmp_path, on_cell=lambda label, eps, rows: cells.append(label))
    assert len(cells) == 4 and len(df) == 8


def test_an_exception_from_the_callback_stops_the_sweep():
    class Stop(Exception):
        pass

    done = []

    def stop_after_first(label, eps, rows):
        raise Stop

    with pytest.raises(Stop):
        run_sweep(sweep(), on_cell=stop_after_first, progress=lambda d, t: done.append(d))
    assert done[-1] == 2                                # the first cell (2 trials), nothing after it


# ----------------------------------------------------------------------------- the page's live sweep
def _live_app(stop_after=None):
    """Run a small sweep through ui.sweep.LiveSweep, every drawing due (no throttle); with
    ``stop_after`` the sweep is interrupted after that many cells (as Stop interrupts a script)."""
    import streamlit as st

    from dpcore.lab.sweeps import Sweep
    from ui.sweep import LiveSweep

    algs = [{"name": "sulq_kplane", "label": "SuLQ", "params": {"subspace_dim": 1}},
            {"name": "kplane", "label": "k-plane", "params": {"subspace_dim": 1}}]
    sw = Sweep(dataset={"kind": "subspaces", "n": 120, "d": 4, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0},
               algorithms=algs, epsilons=[0.5, 5.0, 50.0], trials=2, metrics=["d_W", "cost"], seed=7)
    charged = st.session_state.setdefault("charged", [])

    class Interrupted(Exception):
        pass

    class Live(LiveSweep):
        def cell(self, label, epsilon, rows):
            super().cell(label, epsilon, rows)
            if stop_after is not None and self.cells == stop_after:
                raise Interrupted

    bar, fig = st.empty(), st.empty()
    live = Live(sw, ["d_W", "cost"], bar, fig, lambda part: charged.append(part), "small", secret=False,
                min_interval=0, draw_factor=0)
    try:
        st.session_state["df"] = live.run()
    except Interrupted:
        pass
    st.session_state["draws"] = live.draws


def _charged(at):
    return pd.concat(at.session_state["charged"], ignore_index=True)


def test_a_live_sweep_draws_cells_charges_each_run_once_and_ends_with_the_plain_frame():
    from dpcore.plots.experiments import privacy_utility_figure

    at = AppTest.from_function(_live_app, default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    df = at.session_state["df"]
    assert at.session_state["draws"] >= 2                       # the figure grew while the sweep ran
    assert not at.get("plotly_chart")                           # ... and its live figure is gone at the end
    assert "privacy_utility_partial" not in at.session_state    # no partial result is kept
    charged = _charged(at)                                      # every run charged once, drawn or not
    key = ["algorithm", "epsilon", "trial", "seed"]
    assert sorted(map(tuple, charged[key].fillna(-1).to_numpy())) == sorted(map(tuple, df[key].fillna(-1).to_numpy()))
    plain = run_sweep(sweep())
    assert comparable(df).equals(comparable(plain))
    streamed_fig = privacy_utility_figure(df, ["d_W", "cost"]).to_plotly_json()
    assert streamed_fig == privacy_utility_figure(plain, ["d_W", "cost"]).to_plotly_json()


def test_an_interrupted_live_sweep_leaves_its_drawn_cells_labelled_partial_and_charged():
    at = AppTest.from_function(_live_app, kwargs={"stop_after": 2}, default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    import json
    layout = json.loads(charts[0].proto.spec)["layout"]
    assert "PARTIAL" in layout["title"]["text"] and "2 of 4 cells" in layout["title"]["text"]
    assert "not the finished sweep" in layout["title"]["text"]
    assert layout["xaxis"]["range"][0] < math.log10(0.5) and layout["xaxis"]["range"][1] > math.log10(50)
    part = at.session_state["privacy_utility_partial"]
    assert part["cells"] == 2 and part["of"] == 4 and len(part["rows"]) == 4
    charged = _charged(at)
    assert len(charged) == 4                                    # what was drawn, nothing else
    assert {(r["algorithm"], r["trial"]) for _, r in charged.iterrows()} == {("k-plane", 0), ("k-plane", 1),
                                                                           ("SuLQ", 0), ("SuLQ", 1)}


SMALL = {"kind": "subspaces", "n": 150, "d": 5, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0}


def _run_page_sweep(at):
    by_key(at, "pu_methods").set_value(["SuLQ-10", "k-plane"])
    by_key(at, "pu_metrics").set_value(["d_W"])
    by_key(at, "pu_points").set_value(3)
    by_key(at, "pu_trials").set_value(2)
    by_key(at, "pu_jobs").set_value(1)
    return press(at, "sweep_form")


def test_the_page_charges_every_private_run_once_and_builds_no_html_until_asked():
    import plotly.graph_objects as go

    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300)
    with mock.patch.object(go.Figure, "to_html", autospec=True, return_value="<html></html>") as to_html:
        _run_page_sweep(at)
        at.run()                                                   # and a redraw of the page
    assert not at.exception and not at.error
    assert to_html.call_count == 0                                 # the 4.6 MB HTML is built on a click only
    assert len(at.get("download_button")) == 2
    df = at.session_state["privacy_utility"]["df"]
    runs = at.session_state["session_meter"].runs
    from ui.sweep import fmt
    expected = sorted(f"sweep: {r.algorithm}, ε = {fmt(r.epsilon)}, trial {r.trial}"
                      for r in df[df["private"]].itertuples())
    assert sorted(r["label"] for r in runs) == expected and len(expected) == 6
    assert sum(r["epsilon"] for r in runs) == pytest.approx(df.loc[df["private"], "epsilon_spent"].sum())
    assert len(at.get("plotly_chart")) == 1
    assert "privacy_utility_partial" not in at.session_state


def test_a_sweep_that_did_not_finish_is_named_and_its_cells_shown_apart_as_partial():
    at = open_page("7_privacy_utility.py", spec=SMALL, timeout=300)
    _run_page_sweep(at)
    finished = at.session_state["privacy_utility"]["df"]
    rows = finished[finished["algorithm"] == "k-plane"].drop(columns=["seed"], errors="ignore").to_dict("records")
    at.session_state["privacy_utility_partial"] = {
        "rows": rows, "metrics": ["d_W"], "dataset": "small", "cells": 1, "of": 4, "grid": [0.1, 10.0, 1000.0],
        "algorithms": [{"name": "sulq_kplane", "label": "SuLQ-10"}, {"name": "kplane", "label": "k-plane"}]}
    at.session_state["_runs_in_progress"] = {"sweep"}             # what a script stopped mid-run leaves
    at.run()
    assert not at.exception
    note = [w.value for w in at.warning if CANCELLED in w.value]
    assert len(note) == 1 and "from the run before it" in note[0]
    partial = [e for e in at.expander if "Partial result" in e.label]
    assert len(partial) == 1 and "1 of 4 cells" in partial[0].label
    import json
    titles = [json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "") for c in at.get("plotly_chart")]
    assert sum("PARTIAL" in t for t in titles) == 1 and len(titles) == 2   # the partial one apart, labelled
    _run_page_sweep(at)                                            # a finished sweep replaces it
    assert not any(CANCELLED in w.value for w in at.warning)
    assert not [e for e in at.expander if "Partial result" in e.label]
    assert "privacy_utility_partial" not in at.session_state


# ----------------------------------------------------------------------------- Compare ε
def _compare_app(stop_at=None):
    import streamlit as st

    from dpcore.data import load_dataset
    from ui.cluster_eps import run_comparison

    ds = load_dataset(kind="subspaces", n=120, d=3, k=2, q=1, sigma=0.01, random_state=0)
    shown = st.session_state.setdefault("shown", [])

    class Interrupted(Exception):
        pass

    def show(fig, done):
        shown.append((done, len(fig.layout.annotations), fig.layout.title.text))
        if done == stop_at:
            raise Interrupted

    try:
        st.session_state["out"] = run_comparison("sulq_kplane", {}, 2, 1, 3, ds, [1.0, 10.0, 100.0],
                                                 st.progress(0.0), show, min_interval=0, draw_factor=0)
    except Interrupted:
        pass


def test_compare_eps_draws_each_panel_as_it_finishes():
    at = AppTest.from_function(_compare_app, default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    shown = at.session_state["shown"]
    assert [(d, n) for d, n, _ in shown] == [(1, 1), (2, 2)]      # one more panel each time, not after the last
    assert all("PARTIAL" in t and "not the finished comparison" in t for _, _, t in shown)
    out = at.session_state["out"]
    assert len(out["fig"].layout.annotations) == 4 and not out["fig"].layout.title.text
    assert len(at.session_state["session_meter"].runs) == 3


def test_a_stopped_compare_eps_is_named_and_its_panels_shown_apart_as_partial():
    at = AppTest.from_function(_compare_app, kwargs={"stop_at": 2}, default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    part = at.session_state["cluster_eps_partial"]
    assert part["done"] == 2 and part["of"] == 3 and len(part["panels"]) == 2
    assert len(at.session_state["session_meter"].runs) == 2        # charged as each finished

    page = open_page("3_cluster.py", spec=TINY, timeout=300,
                     state={"cl_method": "sulq_kplane", "cluster_eps_partial": {**part, "dataset": _tiny_name()},
                            "_runs_in_progress": {"cluster_eps"}})
    note = [w.value for w in page.warning if CANCELLED in w.value]
    assert len(note) == 1 and "kept, labelled partial" in note[0]           # its finished panels, below
    partial = [e for e in page.expander if "Partial comparison" in e.label]
    assert len(partial) == 1 and "2 of 3 ε panels" in partial[0].label
    submit(page, "cluster_eps_form").click()                      # a finished comparison clears both
    page.run()
    assert not page.exception
    assert not any(CANCELLED in w.value for w in page.warning)
    assert not [e for e in page.expander if "Partial comparison" in e.label]
    assert "cluster_eps_partial" not in page.session_state


def _tiny_name():
    from dpcore.data import load_dataset
    return load_dataset(**TINY).name
