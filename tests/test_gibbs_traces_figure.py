"""The Gibbs traces figure (dpcore.plots.gibbs.traces_grid) with few plotly traces (a classroom report, "dead time on
Gibbs": one plotly trace per chain made 133 WebGL traces, 15-22 s of browser redraw after a Fig. 3 run).

Fig. 3's size, 8 chains × 4 ε × 3 traces (statistic, cost, d_W) with burn-in: before, 8 × 4 × 3 chain lines
+ 4 lines 1/√T + 1 burn-in legend entry = 101 plotly traces; now one line for the other chains and one for
the released chain per panel: 2 × 12 + 4 + 1 = 29."""
import numpy as np
import pandas as pd
import pytest

from dpcore.plots import gibbs
from dpcore.plots.gibbs import trace_figure, traces_grid
from dpcore.plots.paper import traces_from_rows

EPS = (0.1, 1.0, 10.0, 100.0)
METRICS = ("statistic", "cost", "dw")


def fig3_runs(C=8, T=300, metrics=METRICS, seed=0):
    """Traces shaped as a Fig. 3 run: ε -> name -> (C, T), every value distinct."""
    rng = np.random.default_rng(seed)
    return {e: {m: rng.uniform(0.01, 1.0, size=(C, T)) for m in metrics} for e in EPS}


def panel_traces(fig, eps, name):
    """The data traces (not the 1/√T line) of the panel of ``eps`` and trace ``name``."""
    col, row = EPS.index(eps) + 1, METRICS.index(name) + 1
    n = (row - 1) * len(EPS) + col                       # make_subplots numbers the axes row by row
    ax = "x" if n == 1 else f"x{n}"
    return [t for t in fig.data if t.xaxis == ax and t.customdata is not None]


def segments(trace):
    """The chains of one joined trace: list of (chain, x, y), split at the NaN gaps."""
    x, y, cd = (np.asarray(v, dtype=float) for v in (trace.x, trace.y, trace.customdata))
    gaps = np.flatnonzero(np.isnan(y))
    out = []
    for part in np.split(np.arange(len(y)), gaps):
        part = part[~np.isnan(y[part])]
        chains = set(cd[part])
        assert len(chains) == 1, chains                  # a segment between two gaps is one chain
        out.append((int(chains.pop()), x[part], y[part]))
    return out


def test_a_fig3_sized_figure_has_at_most_30_traces():
    runs = fig3_runs()
    burn = {e: 100 for e in EPS}
    released = {e: i % 8 for i, e in enumerate(EPS)}
    fig = traces_grid(runs, metrics=METRICS, burn_in=burn, released=released)
    assert len(fig.data) == 29 <= 30                     # was 101: one trace per chain
    assert len(traces_grid(runs, metrics=METRICS, burn_in=burn).data) == 17     # nothing released: one per panel
    # the page's four traces (with accuracy) and 6 ε of 32 chains stay few: 2 per panel + 6 + 1
    big = {e: {m: np.zeros((32, 50)) for m in (*METRICS, "accuracy")} for e in range(6)}
    assert len(traces_grid(big, metrics=(*METRICS, "accuracy"), burn_in=10, released=0).data) == 2 * 24 + 6 + 1


def test_every_point_of_every_chain_is_in_its_panel_and_chains_are_separated_by_gaps():
    runs = fig3_runs(T=300)
    released = {1.0: 5}
    fig = traces_grid(runs, metrics=METRICS, released=released)
    for eps in EPS:
        for name in METRICS:
            traces = panel_traces(fig, eps, name)
            assert len(traces) == (2 if eps in released else 1)
            found = {}
            for t in traces:
                segs = segments(t)
                y = np.asarray(t.y, dtype=float)
                assert np.isnan(y).sum() == len(segs) - 1          # one NaN gap between consecutive chains
                assert not np.isnan(y[[0, -1]]).any()
                for ch, x, v in segs:
                    assert ch not in found                         # every chain once
                    found[ch] = (x, v)
            assert sorted(found) == list(range(8))
            for ch, (x, v) in found.items():                       # chain ch at sweep t: runs[eps][name][ch, t - 1]
                np.testing.assert_array_equal(x, np.arange(1, 301))
                np.testing.assert_array_equal(v, runs[eps][name][ch])


def test_the_released_chain_is_its_own_highlighted_trace():
    runs = fig3_runs(T=50)
    fig = traces_grid(runs, metrics=METRICS, released={e: 3 for e in EPS})
    for eps in EPS:
        for name in METRICS:
            others, rel = panel_traces(fig, eps, name)
            assert {c for c, *_ in segments(others)} == {0, 1, 2, 4, 5, 6, 7}
            assert [c for c, *_ in segments(rel)] == [3]
            assert rel.name == "released chain" and rel.line.color != others.line.color
            assert rel.line.width > others.line.width
            assert "chain %{customdata}" in others.hovertemplate      # hover names the chain
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert len(legend) == len(set(legend)) == 3                        # each entry once: chains, released, 1/√T
    with pytest.raises(ValueError, match="released chain"):
        traces_grid(runs, metrics=METRICS, released=8)
    with pytest.raises(ValueError, match="released chain"):
        traces_grid(runs, metrics=METRICS, released={1.0: -1})


def test_long_traces_are_thinned_per_chain_and_keep_the_last_sweep():
    runs = {1.0: {"cost": np.random.default_rng(1).normal(size=(8, 10_000))}}
    fig = traces_grid(runs, metrics=("cost",), max_points=1000, released=2)
    segs = [s for t in fig.data for s in segments(t)]
    assert len(segs) == 8
    for ch, x, v in segs:
        assert len(x) <= 1001 and x[-1] == 10_000 and x[0] == 1
        np.testing.assert_array_equal(v, runs[1.0]["cost"][ch, x.astype(int) - 1])
    with pytest.raises(ValueError, match="max_points"):
        traces_grid(runs, metrics=("cost",), max_points=0)


def test_svg_below_the_point_budget_webgl_above(monkeypatch):
    runs = fig3_runs(T=100)
    assert {t.type for t in traces_grid(runs, metrics=METRICS, burn_in=10).data} == {"scatter"}
    assert "scattergl" in {t.type for t in traces_grid(runs, metrics=METRICS, webgl=True).data}
    monkeypatch.setattr(gibbs, "SVG_MAX_POINTS", 9_999)
    assert {t.type for t in traces_grid(runs, metrics=("cost",)).data} == {"scatter"}      # 3,200 points
    # 9,600 chain points + 4 × 100 points of 1/√T = 10,000: one over the budget
    assert {t.type for t in traces_grid(runs, metrics=METRICS).data} == {"scattergl"}


def test_shipped_style_rows_and_one_chain_runs_still_draw():
    # the Paper figures page: tidy rows with thinned sweep numbers
    sweeps = np.array([1, 400, 800, 1000])
    df = pd.DataFrame([{"epsilon": e, "chain": c, "sweep": s, "cost": e * 10 + c + s / 1e4, "dw": 0.5}
                       for e in (1.0, 10.0) for c in range(3) for s in sweeps])
    runs, sw = traces_from_rows(df, ["cost", "dw"])
    fig = traces_grid(runs, metrics=("cost", "dw"), burn_in={1.0: 500}, sweeps=sw)
    assert len(fig.data) == 4 + 1
    segs = segments(fig.data[0])
    assert [c for c, *_ in segs] == [0, 1, 2]
    np.testing.assert_array_equal(segs[1][1], sweeps)
    np.testing.assert_allclose(segs[1][2], 10 + 1 + sweeps / 1e4)
    # one chain, released: only the released line
    one = trace_figure({2.0: {"cost": np.arange(5.0)[None]}}, released=0)
    assert [t.name for t in one.data] == ["released chain"]
    np.testing.assert_array_equal(np.asarray(one.data[0].y, dtype=float), np.arange(5.0))


def test_the_burn_in_is_shaded_in_every_panel_of_its_run():
    # drawn as one list of shapes (add_vrect, one call per panel, was 2/3 of the figure's build time)
    runs = fig3_runs(T=50)
    fig = traces_grid(runs, metrics=METRICS, burn_in={0.1: 10, 10.0: 25})
    shades = {(s.xref, s.yref): s for s in fig.layout.shapes}
    assert len(shades) == len(fig.layout.shapes) == 2 * len(METRICS)
    for eps, b in ((0.1, 10), (10.0, 25)):
        for name in METRICS:
            ax = panel_traces(fig, eps, name)[0].xaxis                  # the panel's own axes
            s = shades[(ax, ax.replace("x", "y") + " domain")]
            assert (s.x0, s.x1, s.y0, s.y1, s.type) == (0, b, 0, 1, "rect") and s.line.width == 0
