"""Figures of the Gibbs sampler's mixing diagnostics (Fig. 3 of the subspace paper).

- :func:`traces_grid` - rows = traces (test statistic, cost, d_W, ...), columns = ε
  (small multiples); every chain is one line, overlaid, in the same colour in every panel;
  the burn-in is shaded; the statistic panels carry the 1/√T line expected under exact
  sampling.

Layout decisions (figures are projected in class and exported as slides): every row's
quantity is the y-axis title of its first panel (in words; row titles on the right were cut
off), every panel's x axis says "sweep", the legend sits below the panels (above them it ran
into the ε column titles), and the log axis of the statistic has one tick per power of ten
(its minor ticks were labelled "5, 2" without their power).
- :func:`trace_figure` - one trace, one panel per ε.
- :func:`diagnostics_table_figure` - the R̂/ESS table as a plotly table.

Long traces are thinned to at most ``max_points`` points per line (every m-th sweep,
the last one always kept), so that 8 chains × 10,000 sweeps × 4 ε stay responsive.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

__all__ = ["traces_grid", "trace_figure", "diagnostics_table_figure", "TRACE_LABELS"]

CHAIN_COLOURS = qualitative.Plotly + qualitative.D3
#: the traces in words (y-axis titles; ``<br>`` breaks a long title in two lines)
TRACE_LABELS = {"statistic": "§5 test statistic", "cost": "k-means cost (eq. 3)",
                "dw": "distance to the<br>true subspaces (d_W)", "accuracy": "accuracy of<br>the labels"}


def _thin(T, max_points):
    step = max(1, math.ceil(T / max_points))
    idx = np.arange(0, T, step)
    if idx[-1] != T - 1:
        idx = np.append(idx, T - 1)
    return idx


def _run_label(key):
    return f"ε = {key:g}" if isinstance(key, (int, float)) else str(key)


def traces_grid(runs, metrics=("statistic", "cost", "dw"), burn_in=None, max_points=1000, height_per_row=230,
                title="", sweeps=None):
    """Small multiples of Fig. 3.

    Parameters
    ----------
    runs : dict key -> traces, where key is ε (or any label) and traces is a dict
        name -> array (n_chains, n_sweeps) (e.g. ``GibbsSubspaceClustering.traces_``).
    metrics : the trace names to draw, one row each (rows absent from every run are skipped).
    burn_in : int or dict key -> int; the shaded burn-in (default: none).
    max_points : int, default=1000
        Most points per line (longer traces are thinned).
    height_per_row : int, default=230
        Figure height per row, in pixels.
    title : str, default=""
        Figure title.
    sweeps : dict key -> array (n_sweeps,), optional
        The sweep number of every column of a run's traces (traces stored thinned, e.g. the
        shipped results of the Paper figures page); default 1, 2, ..., n_sweeps.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If ``runs`` is empty or none of ``metrics`` is in any run.
    """
    keys = list(runs)
    if not keys:
        raise ValueError("runs must contain at least one run")
    rows = [m for m in metrics if any(m in runs[k] for k in keys)]
    if not rows:
        raise ValueError(f"none of the traces {metrics} is present")
    fig = make_subplots(rows=len(rows), cols=len(keys), shared_xaxes=True, horizontal_spacing=0.05,
                        vertical_spacing=0.06, column_titles=[_run_label(k) for k in keys])
    for c, key in enumerate(keys, start=1):
        traces = runs[key]
        b = burn_in.get(key) if isinstance(burn_in, dict) else burn_in
        for r, name in enumerate(rows, start=1):
            if name not in traces:
                continue
            x = np.asarray(traces[name])
            C, T = x.shape
            idx = _thin(T, max_points)
            xs = (np.asarray(sweeps[key])[idx] if sweeps is not None and key in sweeps else idx + 1)
            words = TRACE_LABELS.get(name, name).replace("<br>", " ")
            for ch in range(C):
                fig.add_trace(go.Scattergl(
                    x=xs, y=x[ch, idx], mode="lines", line=dict(width=1, color=CHAIN_COLOURS[ch % len(CHAIN_COLOURS)]),
                    name=f"chain {ch}", legendgroup=f"chain {ch}", showlegend=(r == 1 and c == 1),
                    hovertemplate=f"chain {ch}<br>sweep %{{x}}<br>{words} %{{y:.4g}}<extra>{_run_label(key)}</extra>"),
                    row=r, col=c)
            if name == "statistic":
                ref = 1.0 / np.sqrt(xs)
                fig.add_trace(go.Scattergl(x=xs, y=ref, mode="lines", line=dict(width=2, color="black", dash="dash"),
                                           name="1/√T (exact sampling)", legendgroup="ref",
                                           showlegend=(c == 1), hoverinfo="skip"), row=r, col=c)
                fig.update_yaxes(type="log", dtick=1, row=r, col=c)
            if b:
                fig.add_vrect(x0=0, x1=b, fillcolor="grey", opacity=0.12, line_width=0, row=r, col=c)
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


def trace_figure(runs, metric="cost", burn_in=None, max_points=1000, title=""):
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
        Most points per line.
    title : str, default=""
        Figure title.

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
                       title=title)


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
