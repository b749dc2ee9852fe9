"""Figures of the Gibbs sampler's mixing diagnostics (Fig. 3 of the subspace paper).

- :func:`traces_grid` - rows = traces (test statistic, cost, d_W, ...), columns = ε
  (small multiples); the chains of one panel are overlaid; the burn-in is shaded; the
  statistic panels carry the 1/√T line expected under exact sampling.

Layout decisions (figures are projected in class and exported as slides): every row's
quantity is the y-axis title of its first panel (in words; row titles on the right were cut
off), every panel's x axis says "sweep", the legend sits below the panels (above them it ran
into the ε column titles), and the log axis of the statistic has one tick per power of ten
(its minor ticks were labelled "5, 2" without their power).
- :func:`trace_figure` - one trace, one panel per ε.
- :func:`diagnostics_table_figure` - the R̂/ESS table as a plotly table.

Few plotly traces, so that the browser redraws in a second (a classroom report: 8 chains × 4 ε × 4
traces as one plotly trace per chain = 133 WebGL traces, 15-22 s of browser CPU on every
return to the page): the chains of one panel are ONE plotly trace, joined with NaN gaps (the
line breaks between chains; hovering names the chain), and the released chain, when given, is
a second trace drawn on top in its own colour. Long traces are thinned to at most
``max_points`` points per chain (every m-th sweep, the last one always kept). Figures up to
:data:`SVG_MAX_POINTS` points are drawn in SVG (``go.Scatter``), larger ones in WebGL.
"""
from __future__ import annotations

import math
from numbers import Integral

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

__all__ = ["traces_grid", "trace_figure", "diagnostics_table_figure", "TRACE_LABELS", "SVG_MAX_POINTS"]

CHAIN_COLOURS = qualitative.Plotly + qualitative.D3
#: the traces in words (y-axis titles; ``<br>`` breaks a long title in two lines)
TRACE_LABELS = {"statistic": "§5 test statistic", "cost": "k-means cost (eq. 3)",
                "dw": "distance to the<br>true subspaces (d_W)", "accuracy": "accuracy of<br>the labels"}
#: the colour of the chains (one colour, translucent: where chains overlap the line is darker) and of the
#: released chain, drawn on top
CHAINS_COLOUR = "rgba(31, 119, 180, 0.55)"
RELEASED_COLOUR = "#ff7f0e"
#: most points (all panels) drawn in SVG; above, WebGL. Measured in headless Chromium (software WebGL,
#: as on a laptop without a usable GPU; 2 busy cores, 4 metrics × 4 ε × 8 chains, released chain on
#: its own trace = 37 traces): redraw SVG 0.39 s / WebGL 5.2 s at 1,000 points per chain (132 k
#: points), 0.48 / 9.8 s at 2,000, 0.67 / 24.8 s at 5,000 (660 k points). The page's largest figure
#: (32 chains × 6 ε × 4 traces × 1,000 points = 768 k) stays in SVG.
SVG_MAX_POINTS = 1_000_000


def _thin(T, max_points):
    step = max(1, math.ceil(T / max_points))
    idx = np.arange(0, T, step)
    if idx[-1] != T - 1:
        idx = np.append(idx, T - 1)
    return idx


def _run_label(key):
    return f"ε = {key:g}" if isinstance(key, (int, float)) else str(key)


def _joined(xs, values, chains):
    """x, y and chain number of ``chains`` (rows of ``values``) as one line: NaN between chains."""
    n, L = len(chains), len(xs)
    x = np.full((n, L + 1), np.nan)
    y = np.full((n, L + 1), np.nan)
    cd = np.full((n, L + 1), np.nan)
    x[:, :L] = xs
    y[:, :L] = values[chains]
    cd[:, :L] = np.asarray(chains, dtype=float)[:, None]
    return x.ravel()[:-1], y.ravel()[:-1], cd.ravel()[:-1]


def _released_of(released, key, n_chains):
    """The released chain of run ``key`` (None: none highlighted); ValueError when out of range."""
    r = released.get(key) if isinstance(released, dict) else released
    if r is None:
        return None
    if isinstance(r, bool) or not isinstance(r, Integral) or not 0 <= int(r) < n_chains:
        raise ValueError(f"released chain of {_run_label(key)} must be a chain index in 0..{n_chains - 1}; got {r!r}")
    return int(r)


def traces_grid(runs, metrics=("statistic", "cost", "dw"), burn_in=None, max_points=1000, height_per_row=230,
                title="", sweeps=None, released=None, webgl=None):
    """Small multiples of Fig. 3, with few plotly traces.

    The chains of one panel are one line broken by NaN gaps (hover names the chain); the
    released chain (``released``), when given, is its own line on top in another colour.

    Parameters
    ----------
    runs : dict key -> traces, where key is ε (or any label) and traces is a dict
        name -> array (n_chains, n_sweeps) (e.g. ``GibbsSubspaceClustering.traces_``).
    metrics : the trace names to draw, one row each (rows absent from every run are skipped).
    burn_in : int or dict key -> int; the shaded burn-in (default: none).
    max_points : int, default=1000
        Most points per chain (longer traces are thinned, the last sweep kept).
    height_per_row : int, default=230
        Figure height per row, in pixels.
    title : str, default=""
        Figure title.
    sweeps : dict key -> array (n_sweeps,), optional
        The sweep number of every column of a run's traces (traces stored thinned, e.g. the
        shipped results of the Paper figures page); default 1, 2, ..., n_sweeps.
    released : int or dict key -> int, optional
        The released chain (e.g. ``GibbsSubspaceClustering.selected_chain_``) of every run,
        drawn as its own highlighted line; default: none highlighted.
    webgl : bool, optional
        Draw in WebGL (``go.Scattergl``) rather than SVG (``go.Scatter``); default: WebGL
        only above :data:`SVG_MAX_POINTS` points in all.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If ``runs`` is empty, none of ``metrics`` is in any run, ``max_points`` < 1 or a
        released chain is not a chain index.
    """
    keys = list(runs)
    if not keys:
        raise ValueError("runs must contain at least one run")
    rows = [m for m in metrics if any(m in runs[k] for k in keys)]
    if not rows:
        raise ValueError(f"none of the traces {metrics} is present")
    if isinstance(max_points, bool) or not isinstance(max_points, Integral) or max_points < 1:
        raise ValueError(f"max_points must be an integer >= 1; got {max_points!r}")
    panels = []                         # (row, col, name, key, xs, values (C, L) thinned, released chain)
    for c, key in enumerate(keys, start=1):
        for r, name in enumerate(rows, start=1):
            if name not in runs[key]:
                continue
            x = np.asarray(runs[key][name], dtype=float)
            if x.ndim != 2 or x.size == 0:
                raise ValueError(f"trace {name!r} of {_run_label(key)} must be a non-empty array "
                                 f"(n_chains, n_sweeps); got shape {x.shape}")
            idx = _thin(x.shape[1], max_points)
            xs = (np.asarray(sweeps[key])[idx] if sweeps is not None and key in sweeps else idx + 1)
            panels.append((r, c, name, key, xs, x[:, idx], _released_of(released, key, x.shape[0])))
    n_points = sum(v.size + (len(xs) if name == "statistic" else 0) for *_, name, _, xs, v, _ in panels)
    Line = go.Scattergl if (n_points > SVG_MAX_POINTS if webgl is None else webgl) else go.Scatter
    fig = make_subplots(rows=len(rows), cols=len(keys), shared_xaxes=True, horizontal_spacing=0.05,
                        vertical_spacing=0.06, column_titles=[_run_label(k) for k in keys])
    shown = set()                       # legend entries already shown
    lines_at = []                       # (trace, row, col): added at once (one by one cost 0.1 s at Fig. 3's size)
    for r, c, name, key, xs, values, rel in panels:
        words = TRACE_LABELS.get(name, name).replace("<br>", " ")
        C = values.shape[0]
        others = [ch for ch in range(C) if ch != rel]
        lines = []
        if others:
            label = "chains" if rel is None else "other chains"
            lines.append((others, label, dict(width=1, color=CHAINS_COLOUR)))
        if rel is not None:
            lines.append(([rel], "released chain", dict(width=1.6, color=RELEASED_COLOUR)))
        for chains, label, line in lines:
            x, y, cd = _joined(xs, values, chains)
            lines_at.append((Line(
                x=x, y=y, customdata=cd, mode="lines", line=line, connectgaps=False,
                name=(f"{label} (hover: chain number)" if label != "released chain" else label),
                legendgroup=label, showlegend=label not in shown,
                hovertemplate=f"chain %{{customdata}}<br>sweep %{{x}}<br>{words} %{{y:.4g}}"
                              f"<extra>{_run_label(key)}</extra>"), r, c))
            shown.add(label)
        if name == "statistic":
            lines_at.append((Line(x=xs, y=1.0 / np.sqrt(xs), mode="lines",
                                  line=dict(width=2, color="black", dash="dash"), name="1/√T (exact sampling)",
                                  legendgroup="ref", showlegend="ref" not in shown, hoverinfo="skip"), r, c))
            shown.add("ref")
            fig.update_yaxes(type="log", dtick=1, row=r, col=c)
    if lines_at:
        fig.add_traces([t for t, _, _ in lines_at], rows=[r for _, r, _ in lines_at], cols=[c for *_, c in lines_at])
    shades = []                         # the burn-in, as add_vrect draws it (which cost 0.3 s at Fig. 3's size)
    for c, key in enumerate(keys, start=1):
        b = burn_in.get(key) if isinstance(burn_in, dict) else burn_in
        if b:
            for r, name in enumerate(rows, start=1):
                if name in runs[key]:
                    n = (r - 1) * len(keys) + c             # make_subplots numbers the axes row by row
                    axis = "" if n == 1 else str(n)
                    shades.append(dict(type="rect", x0=0, x1=b, y0=0, y1=1, xref=f"x{axis}", yref=f"y{axis} domain",
                                       fillcolor="grey", opacity=0.12, line=dict(width=0)))
    if shades:
        fig.update_layout(shapes=shades)
    for r, name in enumerate(rows, start=1):
        fig.update_yaxes(title_text=TRACE_LABELS.get(name, name), row=r, col=1)
    for c in range(1, len(keys) + 1):
        fig.update_xaxes(title_text="sweep", row=len(rows), col=c)
    top, bottom = (70 if title else 40), 110
    height = max(300, height_per_row * len(rows) + top + bottom)
    fig.update_layout(height=height, title=title or None, margin=dict(l=80, r=20, t=top, b=bottom),
                      legend=dict(orientation="h", yanchor="top", xanchor="left", x=0,
                                  y=-60 / (height - top - bottom)))
    if any(burn_in.values() if isinstance(burn_in, dict) else [burn_in]):     # the shading, explained in the legend
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="burn-in (not used by R̂ and ESS)",
                                 marker=dict(symbol="square", size=14, color="rgba(128,128,128,0.3)"),
                                 hoverinfo="skip"), row=1, col=1)
    return fig


def trace_figure(runs, metric="cost", burn_in=None, max_points=1000, title="", released=None):
    """One trace (``metric``) with one panel per run (ε as small multiples), chains overlaid.

    Parameters
    ----------
    runs : dict
        As in :func:`traces_grid`.
    metric : str, default="cost"
        The trace to draw.
    burn_in : int or dict, optional
        As in :func:`traces_grid`.
    max_points : int, default=1000
        Most points per chain.
    title : str, default=""
        Figure title.
    released : int or dict, optional
        As in :func:`traces_grid`.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If ``runs`` is empty or no run has ``metric``.
    """
    return traces_grid(runs, metrics=(metric,), burn_in=burn_in, max_points=max_points, height_per_row=320,
                       title=title, released=released)


def diagnostics_table_figure(rows, title=""):
    """A plotly table of diagnostics rows.

    Rows are dicts with keys such as ε, trace, split_rhat, ess, mean, sd, verdict; numbers
    are rounded for reading.

    Parameters
    ----------
    rows : list of dict
        The rows (the columns are the first row's keys).
    title : str, default=""
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If ``rows`` is empty.
    """
    if not rows:
        raise ValueError("rows must not be empty")
    cols = list(rows[0].keys())

    def fmt(v):
        if isinstance(v, float):
            return "–" if not np.isfinite(v) else f"{v:.4g}"
        return str(v)

    fig = go.Figure(go.Table(header=dict(values=cols, align="left"),
                             cells=dict(values=[[fmt(r.get(c)) for r in rows] for c in cols], align="left")))
    fig.update_layout(title=title or None, margin=dict(l=10, r=10, t=40 if title else 10, b=10),
                      height=60 + 28 * len(rows))
    return fig
