"""The papers' figures drawn from their result tables (``python -m dpcore.reproduce`` and the
Paper figures page share this one path, so a shipped CSV gives the figure the command drew).

A panel's *plot spec* is a JSON-able dict written next to its CSV (``panels.json``):

- ``{"kind": "privacy_utility", "metrics": [...], "title": ...}`` -
  :func:`dpcore.plots.experiments.privacy_utility_figure`;
- ``{"kind": "curves", "x": ..., "metrics": [...], "group": ..., "title": ..., plus the optional
  keywords of :func:`dpcore.plots.experiments.curves_figure`}``;
- ``{"kind": "traces", "metrics": [...], "burn_in": {ε: sweeps}, "title": ...}`` -
  :func:`dpcore.plots.gibbs.traces_grid` from rows (epsilon, chain, sweep, trace columns);
- ``{"kind": "lines2d", "row": ..., "col": ..., "title": ..., "line_opacity": ...}`` -
  :func:`lines2d_figure`: points and lines through 0 in the plane (the subspace paper's Fig. 1).

A ``privacy_utility`` or ``curves`` spec may carry ``"reference": {metric: {"y": value, "name":
text}}``: a dotted grey horizontal line in that metric's panel (e.g. the d_W of random subspaces).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["PLOT_KINDS", "lines2d_figure", "panel_figure", "traces_from_rows"]

PLOT_KINDS = ("privacy_utility", "curves", "traces", "lines2d")
_CURVES_KEYS = ("group", "title", "x_title", "group_name", "log_x", "log_y")


def traces_from_rows(df: pd.DataFrame, metrics):
    """Fig. 3 traces from tidy rows: (runs, sweeps) for :func:`~dpcore.plots.gibbs.traces_grid`.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``epsilon``, ``chain``, ``sweep`` and the trace columns.
    metrics : sequence of str
        Trace columns to collect (absent ones are skipped).

    Returns
    -------
    runs : dict float -> dict str -> ndarray (n_chains, n_points)
        Traces per ε (in order of appearance).
    sweeps : dict float -> ndarray (n_points,)
        The sweep number of each column.
    """
    runs, sweeps = {}, {}
    for eps, part in df.groupby("epsilon", sort=False):
        wide = {m: part.pivot(index="chain", columns="sweep", values=m) for m in metrics if m in part}
        key = float(eps)
        runs[key] = {m: w.to_numpy(dtype=float) for m, w in wide.items()}
        sweeps[key] = next(iter(wide.values())).columns.to_numpy()
    return runs, sweeps


def lines2d_figure(df: pd.DataFrame, row=None, col=None, title="", line_opacity=1.0, reach=1.25):
    """Points (blue dots), added points (blue crosses) and lines through 0 (red) in the plane, one
    square facet per value of ``row`` × ``col``: the subspace paper's Fig. 1.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``role`` (``"point"``, ``"added"`` or ``"line"``), ``x``, ``y`` (a point, or a
        line's unit direction) and the facet columns.
    row, col : str, optional
        Columns whose values make the rows and columns of facets (None: one).
    title : str, default=""
    line_opacity : float, default=1.0
        Opacity of the lines (below 1 when many overlap, e.g. one pair per subset).
    reach : float, default=1.25
        Half-length of the drawn lines (the points lie in the unit disc).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    ValueError
        If a needed column is missing.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    for c in ("role", "x", "y", *(c for c in (row, col) if c)):
        if c not in df.columns:
            raise ValueError(f"a lines2d panel needs the column {c!r}")
    rows = list(dict.fromkeys(df[row])) if row else [None]
    cols = list(dict.fromkeys(df[col])) if col else [None]
    # the columns' names above the first row, the rows' names as the first column's axis titles
    titles = [str(c) if (i == 0 and c is not None) else "" for i in range(len(rows)) for c in cols]
    fig = make_subplots(rows=len(rows), cols=len(cols), subplot_titles=titles, horizontal_spacing=0.03,
                        vertical_spacing=0.06 if len(rows) > 1 else 0.0)
    shown = set()
    for i, r in enumerate(rows, start=1):
        for j, c in enumerate(cols, start=1):
            mask = np.ones(len(df), dtype=bool)
            if row:
                mask &= (df[row] == r).to_numpy()
            if col:
                mask &= (df[col] == c).to_numpy()
            part = df[mask]
            pts, add, lin = (part[part["role"] == k] for k in ("point", "added", "line"))
            n_lines = len(lin)
            xs = np.column_stack([-reach * lin["x"], reach * lin["x"], np.full(n_lines, np.nan)]).ravel()
            ys = np.column_stack([-reach * lin["y"], reach * lin["y"], np.full(n_lines, np.nan)]).ravel()
            traces = [("data points", go.Scatter(x=pts["x"], y=pts["y"], mode="markers",
                                                 marker=dict(color="#1f77b4", size=6 if len(pts) < 200 else 3))),
                      ("the added point", go.Scatter(x=add["x"], y=add["y"], mode="markers",
                                                     marker=dict(color="#1f77b4", symbol="x", size=14,
                                                                 line=dict(width=1)))),
                      ("optimal lines", go.Scatter(x=xs, y=ys, mode="lines", opacity=line_opacity, hoverinfo="skip",
                                                   line=dict(color="#d62728", width=2 if n_lines <= 4 else 1.2)))]
            for name, tr in traces:
                if len(tr.x) == 0:
                    continue
                tr.update(name=name, legendgroup=name, showlegend=name not in shown)
                shown.add(name)
                fig.add_trace(tr, i, j)
            k = (i - 1) * len(cols) + j
            axis = "x" if k == 1 else f"x{k}"
            fig.update_xaxes(range=[-1.3, 1.3], showticklabels=False, zeroline=False, row=i, col=j)
            fig.update_yaxes(range=[-1.3, 1.3], showticklabels=False, zeroline=False, scaleanchor=axis, scaleratio=1,
                             title_text=str(r) if (j == 1 and r is not None) else None, row=i, col=j)
    fig.update_layout(title=title, height=max(320, 300 * len(rows) + 80), margin=dict(t=90),
                      legend=dict(orientation="h", y=-0.05))
    return fig


def _add_reference(fig, plot, df, x):
    """The spec's reference lines (dotted grey, one per metric panel)."""
    import plotly.graph_objects as go
    ref = plot.get("reference") or {}
    xs = pd.to_numeric(df[x], errors="coerce").dropna() if x in df else pd.Series(dtype=float)
    if not ref or xs.empty:
        return fig
    span = [float(xs.min()), float(xs.max())]
    for j, m in enumerate(plot["metrics"], start=1):
        if m in ref:
            y, name = float(ref[m]["y"]), str(ref[m].get("name", "reference"))
            fig.add_trace(go.Scatter(x=span, y=[y, y], mode="lines", name=name, legendgroup=name, showlegend=j == 1,
                                     line=dict(color="grey", dash="dot", width=2),
                                     hovertemplate=f"{name}: {y:.4g}<extra></extra>"), 1, j)
    return fig


def panel_figure(plot: dict, df: pd.DataFrame):
    """The figure of one panel from its plot spec and its result rows.

    Parameters
    ----------
    plot : dict
        The plot spec (see the module docstring).
    df : pandas.DataFrame
        The panel's rows (as written to its CSV).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    ValueError
        If the spec's ``kind`` is not one of :data:`PLOT_KINDS`.
    """
    from .experiments import curves_figure, privacy_utility_figure
    from .gibbs import traces_grid
    kind = plot.get("kind")
    if kind == "privacy_utility":
        return _add_reference(privacy_utility_figure(df, list(plot["metrics"]), title=plot.get("title", "")), plot, df,
                              "epsilon")
    if kind == "curves":
        kw = {k: plot[k] for k in _CURVES_KEYS if k in plot}
        return _add_reference(curves_figure(df, plot["x"], list(plot["metrics"]), **kw), plot, df, plot["x"])
    if kind == "lines2d":
        return lines2d_figure(df, row=plot.get("row"), col=plot.get("col"), title=plot.get("title", ""),
                              line_opacity=float(plot.get("line_opacity", 1.0)))
    if kind == "traces":
        runs, sweeps = traces_from_rows(df, plot["metrics"])
        burn = {float(k): int(v) for k, v in (plot.get("burn_in") or {}).items()}
        return traces_grid(runs, metrics=tuple(plot["metrics"]), burn_in=burn or None, title=plot.get("title", ""),
                           sweeps=sweeps)
    raise ValueError(f"plot kind must be one of {', '.join(PLOT_KINDS)}; got {kind!r}")


def _jsonable(v):
    """Plot-spec values as JSON likes them (numpy scalars to Python)."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v
