"""The Gibbs page draws its traces as they come: the sampler hands over every block of traces
(``fit(..., trace_callback=...)``) without changing a draw, the page's live view
(:class:`ui.gibbs.LiveRun`) sees every block, says how far the run is and how long is left, and
its last figure is the finished result's; a run stopped mid-way leaves its traces labelled
partial, with no verdict, beside the cancelled-run notice."""
import json

import numpy as np
import plotly.io as pio
import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

import ui.gibbs as gibbs_ui
from apptest_helpers import by_key, open_page, press
from dpcore.data import make_union_of_subspaces
from dpcore.subspace import gibbs as gibbs_mod
from dpcore.subspace.gibbs import GibbsSubspaceClustering

SMALL = {"kind": "subspaces", "n": 300, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}
CANCELLED = "Your last run did not finish"


@pytest.fixture(scope="module")
def ds():
    return make_union_of_subspaces(200, 6, 2, 2, 0.05, random_state=1)


def blocks_of(n_iter):
    B = min(gibbs_mod._TRACE_BLOCK, n_iter)
    return sorted(set(range(B, n_iter + 1, B)) | {n_iter})


@pytest.mark.parametrize("engine", ["numpy", "auto"])
def test_trace_callback_sees_every_block_and_changes_no_draw(ds, engine):
    kw = dict(n_clusters=2, subspace_dim=2, epsilon=5.0, n_iter=150, n_chains=3, engine=engine, random_state=4)
    seen = []

    def keep(t, n, traces):
        assert n == 150 and all(v.shape == (3, t) and not v.flags.writeable for v in traces.values())
        seen.append((t, {k: v.copy() for k, v in traces.items()}))

    a = GibbsSubspaceClustering(**kw).fit(ds.X, ds.labels, ds.subspaces, trace_callback=keep)
    b = GibbsSubspaceClustering(**kw).fit(ds.X, ds.labels, ds.subspaces)
    assert [t for t, _ in seen] == blocks_of(150) == [64, 128, 150]
    for t, traces in seen:
        assert list(traces) == list(a.traces_) == ["cost", "statistic", "dw", "accuracy", "moves"]
        for name, v in traces.items():                        # the final values, never revised
            np.testing.assert_array_equal(v, a.traces_[name][:, :t])
    # the same draws with and without it (bit for bit)
    assert np.array_equal(a.chain_labels_, b.chain_labels_) and np.array_equal(a.chain_subspaces_, b.chain_subspaces_)
    for name in a.traces_:
        np.testing.assert_array_equal(a.traces_[name], b.traces_[name])
    with pytest.raises(ValueError, match="trace_callback must be callable"):
        GibbsSubspaceClustering(**kw).fit(ds.X, trace_callback="draw")


class Recorder:
    """A progress bar and a drawing place that remember what they were given."""

    def __init__(self):
        self.bars, self.draws = [], []

    def progress(self, value, text=""):
        self.bars.append((value, text))

    def draw(self, fig, caption):
        self.draws.append((fig, caption))


def small_params(seed, n_iter=150):
    return dict(n_clusters=2, subspace_dim=2, n_iter=n_iter, n_chains=3, init="random", release="sample",
                n_average=min(100, n_iter), select="best_private", random_state=seed)


def x_max(fig, eps):
    """The last sweep drawn in the chain lines of ε = ``eps``."""
    return max(np.nanmax(np.asarray(t.x, dtype=float)) for t in fig.data
               if t.customdata is not None and f"<extra>ε = {eps:g}</extra>" in t.hovertemplate)


def test_live_run_sees_every_block_and_its_last_figure_is_the_finished_results(ds, monkeypatch):
    monkeypatch.setattr(gibbs_ui, "REDRAW_SECONDS", 0.0)          # draw at every block: nothing skipped
    monkeypatch.setattr(gibbs_ui, "REDRAW_SHARE", float("inf"))
    rec = Recorder()
    eps_list = [1.0, 10.0]
    live = gibbs_ui.LiveRun(eps_list, 150, rec, rec.draw, store={})
    runs, models, seconds = gibbs_ui.run_all(ds, eps_list, small_params(7), live)
    assert live.blocks == {1.0: [64, 128, 150], 10.0: [64, 128, 150]}
    assert len(rec.draws) == live.n_draws == 3 + 1 + 3 + 1       # every block, and every ε once finished
    # every drawing before the last is labelled partial and holds exactly the sweeps done so far
    progress = [(1.0, 64), (1.0, 128), (1.0, 150), (1.0, 150), (10.0, 64), (10.0, 128), (10.0, 150)]
    for (fig, caption), (eps, t) in zip(rec.draws[:-1], progress):
        assert fig.layout.title.text.startswith("PARTIAL") and "Partial traces" in caption
        assert "No verdict" in caption
        assert x_max(fig, eps) == t
    assert "ε = 10: not started" in rec.draws[0][0].layout.title.text
    # the last: the finished result's figure, as the page draws it after the run (no PARTIAL)
    table, summary, verdicts, extra = gibbs_ui.summarise(ds, models, seconds)
    final = gibbs_ui.traces_figure(runs, {e: m.burn_in_ for e, m in models.items()},
                          {r["ε"]: r["released chain"] for r in summary})
    last, caption = rec.draws[-1]
    assert pio.to_json(last) == pio.to_json(final)
    assert not last.layout.title.text
    # ... and the non-streamed run's (same seed, no callbacks): the same figure
    quiet = {}
    for e in eps_list:
        m = GibbsSubspaceClustering(epsilon=e, **{k: v for k, v in small_params(7).items()})
        quiet[e] = m.fit(ds.X, ds.labels, ds.subspaces)
    assert pio.to_json(gibbs_ui.traces_figure({e: m.traces_ for e, m in quiet.items()},
                                     {e: m.burn_in_ for e, m in quiet.items()},
                                     {e: m.selected_chain_ for e, m in quiet.items()})) == pio.to_json(final)
    # the bar: every ε, ending at the last sweep of the last
    assert rec.bars[-1][0] == 1.0 and "run 2 of 2" in rec.bars[-1][1] and "sweep 150 of 150" in rec.bars[-1][1]
    assert any("run 1 of 2" in text for _, text in rec.bars)


def test_the_bar_says_where_the_run_is_and_the_time_left():
    now = [0.0]
    rec = Recorder()
    live = gibbs_ui.LiveRun([1.0, 10.0], 100, rec, stop_words="Stop cancels", clock=lambda: now[0])
    assert "starting the chains" in live.bar_text(0, 0)
    now[0] = 2.0                                                  # 10 % done: the rate is measured from here
    live.on_progress(0, 20)
    assert rec.bars[-1][1] == "ε = 1 (run 1 of 2): sweep 20 of 100 · estimating the time left (Stop cancels)"
    now[0] = 5.0                                                  # 30 more sweeps in 3 s: 150 sweeps left
    live.on_progress(0, 50)
    value, text = rec.bars[-1]
    assert value == 0.25 and text == "ε = 1 (run 1 of 2): sweep 50 of 100 · about 15 s left (Stop cancels)"
    now[0] = 5.1                                                  # within BAR_SECONDS: not redrawn ...
    live.on_progress(0, 51)
    assert len(rec.bars) == 2
    now[0] = 8.0
    live.on_progress(0, 100)                                      # ... except at the end of an ε's run
    assert "run 1 of 2" in rec.bars[-1][1] and len(rec.bars) == 3
    now[0] = 300.0
    live.on_progress(1, 10)                                       # a new ε run: measured afresh from its start
    assert "estimating the time left" in rec.bars[-1][1]
    now[0] = 302.0
    live.on_progress(1, 40)                                       # 30 sweeps in 2 s: 60 left
    assert "about 4 s left" in rec.bars[-1][1]
    live.on_progress(1, 100)
    assert rec.bars[-1][0] == 1.0 and "less than a second left" in rec.bars[-1][1]


def test_redraws_are_at_least_a_second_apart():
    now = [0.0]
    rec = Recorder()
    live = gibbs_ui.LiveRun([1.0], 64 * 40, rec, rec.draw, clock=lambda: now[0])
    times = []
    for b in range(1, 41):                                        # a block every 0.1 s for 4 s
        now[0] = 0.1 * b
        before = live.n_draws
        live.on_traces(0, 64 * b, {"cost": np.zeros((2, 64 * b))})
        if live.n_draws > before:
            times.append(now[0])
    assert 1 <= len(times) <= 4 and times[0] >= gibbs_ui.REDRAW_SECONDS
    assert all(b - a >= gibbs_ui.REDRAW_SECONDS - 1e-9 for a, b in zip(times, times[1:]))
    assert live.blocks[1.0] == [64 * b for b in range(1, 41)]
    # a partial figure is thinned harder than a result's (it is sent again at every redraw): 2 chains
    fig = rec.draws[-1][0]
    y = np.asarray(fig.data[0].y, dtype=float)
    assert np.isnan(y).sum() == 1 and len(y) <= 2 * (gibbs_ui.LIVE_MAX_POINTS + 1) + 1
    assert fig.layout.xaxis.range == (0, 64 * 40)                 # the sweep axis spans the whole run


def test_a_stopped_run_leaves_partial_traces_labelled_partial_and_no_verdict(monkeypatch):
    monkeypatch.setattr(gibbs_ui, "REDRAW_SECONDS", 0.0, raising=False)       # draw every block of traces
    monkeypatch.setattr(gibbs_ui, "REDRAW_SHARE", float("inf"), raising=False)
    original = GibbsSubspaceClustering.fit
    stop = {"armed": False}

    def fit_then_stop(self, *args, callback=None, **kwargs):
        def stopped(i, n):             # Stop pressed: Streamlit raises at the next call, the progress bar's
            if stop["armed"] and i >= 64:
                stop["armed"] = False
                raise StopException()
            callback(i, n)
        return original(self, *args, callback=stopped, **kwargs)

    monkeypatch.setattr(GibbsSubspaceClustering, "fit", fit_then_stop)
    at = open_page("4_gibbs.py", spec=SMALL)
    by_key(at, "g_eps").set_value("1, 10")
    by_key(at, "g_iter").set_value(200)
    by_key(at, "g_chains").set_value(2)
    press(at, "gibbs_form")                                       # a finished run: the result on the page
    before = at.session_state["gibbs_result"]
    n_meter = len(at.session_state["session_meter"].runs)
    stop["armed"] = True
    by_key(at, "g_eps").set_value("2, 20")
    press(at, "gibbs_form")                                       # stopped after sweep 64 of ε = 2
    assert not at.exception
    assert at.session_state["gibbs_result"] is before              # the result kept is the one before
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    partial = [c for c in charts if "PARTIAL" in (c["layout"].get("title") or {}).get("text", "")]
    so_far = "ε = 2: sweeps 1–64 of 200; ε = 20: not started"
    assert len(partial) == 1 and so_far in partial[0]["layout"]["title"]["text"]
    assert any("Partial traces" in c.value for c in at.caption)
    assert not any(v.value.startswith("**ε = 2:") for v in list(at.success) + list(at.warning))    # no verdict
    assert len(at.session_state["session_meter"].runs) == n_meter                                   # nothing counted
    at.run()                                                      # the next rerun (any click)
    note = [w.value for w in at.warning if CANCELLED in w.value]
    assert len(note) == 1 and "from the run before it" in note[0]
    said = [c.value for c in at.caption if "cancelled run had computed" in c.value]
    assert len(said) == 1 and so_far in said[0] and "no verdict" in said[0]
    assert not any(v.value.startswith("**ε = 2:") for v in list(at.success) + list(at.warning))
    by_key(at, "g_show_partial").set_value(True)
    at.run()
    titles = [(json.loads(c.proto.spec)["layout"].get("title") or {}).get("text", "") for c in at.get("plotly_chart")]
    assert sum(t.startswith("PARTIAL traces of a cancelled run") for t in titles) == 1
    press(at, "gibbs_form")                                       # a run that ends clears both
    assert not any(CANCELLED in w.value for w in at.warning)
    assert not any("cancelled run had computed" in c.value for c in at.caption)
    assert list(at.session_state["gibbs_result"]["runs"]) == [2.0, 20.0]
    assert gibbs_ui.PARTIAL_KEY not in at.session_state
