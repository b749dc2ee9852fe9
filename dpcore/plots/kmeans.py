"""Figures of private k-means: points with released and non-private centres, the same
data at several ε side by side (small multiples), objectives relative to k-means++, the
budget split over the stages, and the candidate set in the projected space (Alg. 1-3 at
work).

Decisions. The scatters draw the points in the top two principal directions of the data
(:func:`dpcore.plots.data.display_basis`, a display choice that spends no privacy) and
colour them by their true class; up to :data:`MAX_LEGEND_CLASSES` classes get one legend
entry each, more (64 Gaussians) one entry for all, so the legend never hides the plot. The
figures draw their own points instead of calling
:func:`dpcore.plots.data.projection_scatter`, so that the single scatter and every panel
of the small multiples share one look and one projection.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from ..validation import check_random_state
from .data import display_basis

__all__ = ["centres_scatter", "epsilon_panels", "objective_bars", "budget_bars", "candidate_view",
           "MAX_LEGEND_CLASSES"]

#: most classes with one legend entry each; more share one entry (their colours repeat)
MAX_LEGEND_CLASSES = 12
POINT_COLOURS = qualitative.Plotly + qualitative.D3
#: marker of the centre sets, in the order they are given: released (private), non-private
#: k-means++, a third set
CENTRE_STYLES = [dict(symbol="x", color="black", size=13, line=dict(width=1, color="white")),
                 dict(symbol="diamond", color="crimson", size=12, line=dict(width=1, color="white")),
                 dict(symbol="circle-open", color="seagreen", size=12, line=dict(width=2))]
#: the k-means++ centres in the panels of the private runs, for comparison: small and faint
REFERENCE_STYLE = dict(symbol="diamond-open", color="crimson", size=9, line=dict(width=1.5), opacity=0.7)


def _fmt(x):
    """A number at 3 significant digits (1.0000000000000002 -> "1")."""
    return f"{float(x):.3g}"


def _display_points(X, labels, max_points, random_state):
    """The drawn points: a sample of at most ``max_points`` rows of X mapped to its 2-D
    display basis. Returns (Y, labels of the sample or None, basis P (d, 2), axis titles)."""
    rng = check_random_state(random_state)
    n, d = X.shape
    idx = np.arange(n) if n <= max_points else np.sort(rng.choice(n, max_points, replace=False))
    P = display_basis(X, 2, max_rows=1000, random_state=random_state)
    if P.shape[1] < 2:
        P = np.hstack([P, np.zeros((P.shape[0], 2 - P.shape[1]))])
    Y = np.asarray(X[idx] @ P, dtype=np.float64)
    lab = None if labels is None else np.asarray(labels)[idx]
    titles = ("x1", "x2") if d <= 2 else ("principal direction 1", "principal direction 2")
    return Y, lab, P, titles


def _point_traces(Y, lab, label_name, showlegend=True, size=5):
    """Scatter traces of the points: one per class (with a legend entry each) for at most
    :data:`MAX_LEGEND_CLASSES` classes, else one trace coloured by class with one entry."""
    if lab is None:
        return [go.Scatter(x=Y[:, 0], y=Y[:, 1], mode="markers", name="points", legendgroup="points",
                           showlegend=showlegend, marker=dict(size=size, color="grey", opacity=0.6))]
    classes = np.unique(lab)
    code = np.searchsorted(classes, lab)
    if classes.size > MAX_LEGEND_CLASSES:
        colours = [POINT_COLOURS[c % len(POINT_COLOURS)] for c in code]
        return [go.Scatter(x=Y[:, 0], y=Y[:, 1], mode="markers", legendgroup="points", showlegend=showlegend,
                           name=f"points (colour: {label_name}, {classes.size} classes)",
                           text=[f"{label_name} {c}" for c in lab], hoverinfo="text",
                           marker=dict(size=size, color=colours, opacity=0.7))]
    return [go.Scatter(x=Y[code == j, 0], y=Y[code == j, 1], mode="markers", name=f"{label_name} {c}",
                       legendgroup=f"class {c}", showlegend=showlegend,
                       marker=dict(size=size, color=POINT_COLOURS[j % len(POINT_COLOURS)], opacity=0.7))
            for j, c in enumerate(classes)]


def _centre_trace(Z, name, style, showlegend=True):
    kw = {k: v for k, v in style.items() if k != "opacity"}
    return go.Scatter(x=Z[:, 0], y=Z[:, 1], mode="markers", name=name, legendgroup=name, showlegend=showlegend,
                      opacity=style.get("opacity", 1.0), marker=kw)


def centres_scatter(X, labels=None, center_sets=None, title="", label_name="true class", max_points=3000,
                    random_state=0):
    """Points coloured by ``labels`` in the 2-D display basis, with centre sets as markers.

    Points are a sample of at most ``max_points``; every centre set of ``center_sets``
    (name -> (k, d)) is drawn as large markers, in the styles of :data:`CENTRE_STYLES` in
    the order given, e.g. ``{"released (private)": C, "k-means++ (not private)": C0}``.
    Works for sparse X (documents): points and centres are mapped to the display basis.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n, d)
        The points as rows.
    labels : array_like, shape (n,), optional
        Colour of every point (its true class).
    center_sets : dict of str to array_like, shape (k, d), optional
        Centre sets by legend name.
    title : str, default=""
        Figure title (default: says what the axes are).
    label_name : str, default="true class"
        What the colours are, in the legend.
    max_points : int, default=3000
        Most points drawn.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the point sample and of the display basis's row subset.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    Y, lab, P, (tx, ty) = _display_points(X, labels, max_points, random_state)
    fig = go.Figure(_point_traces(Y, lab, label_name))
    for s, (name, C) in enumerate((center_sets or {}).items()):
        if C is not None:
            Z = np.atleast_2d(np.asarray(C, dtype=np.float64)) @ P
            fig.add_trace(_centre_trace(Z, name, CENTRE_STYLES[s % len(CENTRE_STYLES)]))
    where = "its coordinates" if X.shape[1] <= 2 else "the top two principal directions (display only)"
    fig.update_layout(title=title or f"Points and centres in {where}", height=520,
                      margin=dict(l=0, r=0, t=40, b=0), legend=dict(itemsizing="constant"),
                      xaxis=dict(title=tx, zeroline=False), yaxis=dict(title=ty, zeroline=False))
    return fig


def _grid(n):
    """(rows, columns) of ``n`` panels: one row up to 3, 2×2 for 4, rows of 3 beyond."""
    if n <= 3:
        return 1, n
    cols = 2 if n == 4 else 3
    return math.ceil(n / cols), cols


def epsilon_panels(X, labels, panels, reference=None, title="", label_name="true class", max_points=1500,
                   random_state=0):
    """Small multiples: the same points in every panel with one centre set per panel.

    One panel per entry of ``panels`` (e.g. one private run per ε, then the non-private
    k-means++ result), all with the same display basis and the same axis ranges, so that
    the panels compare at a glance. In every panel marked private the ``reference``
    centres (k-means++) are drawn too, small and open, to show how far the noise moved the
    released centres.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n, d)
        The points as rows.
    labels : array_like, shape (n,) or None
        True class of every point (the colours).
    panels : sequence of dict
        One per panel: "title" (str; ``<br>`` breaks a line), "centres" (array (k, d)) and
        "private" (bool: the released centres of a private run, drawn as black crosses; else
        the non-private centres, red diamonds).
    reference : array_like, shape (k, d), optional
        Non-private centres drawn faintly in the private panels.
    title : str, default=""
        Figure title.
    label_name : str, default="true class"
        What the colours are, in the legend.
    max_points : int, default=1500
        Most points drawn (in every panel).
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the point sample and of the display basis.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If ``panels`` is empty.

    Notes
    -----
    The axis ranges cover the drawn points and every centre, but at most three times the
    points' own extent: a centre that noise threw further away is drawn on the frame's edge
    as an open cross (legend: "beyond the frame"), so that one far centre cannot squash
    the points of every panel into a dot.
    """
    panels = list(panels)
    if not panels:
        raise ValueError("panels must contain at least one panel")
    Y, lab, P, (tx, ty) = _display_points(X, labels, max_points, random_state)
    sets = [np.atleast_2d(np.asarray(p["centres"], dtype=np.float64)) @ P for p in panels]
    ref = None if reference is None else np.atleast_2d(np.asarray(reference, dtype=np.float64)) @ P
    lo, hi = Y.min(axis=0), Y.max(axis=0)
    span = np.maximum(hi - lo, 1e-12)
    mid = (lo + hi) / 2
    allc = np.vstack(sets + ([ref] if ref is not None else []))
    frame_lo = np.maximum(np.minimum(lo, allc.min(axis=0)), mid - 1.5 * span)
    frame_hi = np.minimum(np.maximum(hi, allc.max(axis=0)), mid + 1.5 * span)
    pad = 0.06 * (frame_hi - frame_lo)
    frame_lo, frame_hi = frame_lo - pad, frame_hi + pad
    rows, cols = _grid(len(panels))
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes="all", shared_yaxes="all",
                        subplot_titles=[p["title"] for p in panels], horizontal_spacing=0.03,
                        vertical_spacing=0.16 if rows > 1 else 0.0, x_title=tx, y_title=ty)
    shown = set()

    def add(trace, r, c):
        trace.showlegend = trace.name not in shown and trace.showlegend is not False
        shown.add(trace.name)
        fig.add_trace(trace, row=r, col=c)

    for i, (p, Z) in enumerate(zip(panels, sets)):
        r, c = i // cols + 1, i % cols + 1
        for tr in _point_traces(Y, lab, label_name, size=4):
            add(tr, r, c)
        if p.get("private", True) and ref is not None:
            add(_centre_trace(ref, "k-means++ centres (not private)", REFERENCE_STYLE), r, c)
        inside = np.all((Z >= frame_lo) & (Z <= frame_hi), axis=1)
        # the non-private panel's centres look as they do faintly in the private panels: one legend entry
        style = CENTRE_STYLES[0] if p.get("private", True) else REFERENCE_STYLE
        name = "released centres (private run)" if p.get("private", True) else "k-means++ centres (not private)"
        add(_centre_trace(Z[inside], name, style), r, c)
        if not inside.all():
            out = np.clip(Z[~inside], frame_lo, frame_hi)
            add(_centre_trace(out, "released centre beyond the frame (drawn on its edge)",
                              dict(symbol="x-open", color="black", size=13, line=dict(width=1.5))), r, c)
    fig.update_xaxes(range=[frame_lo[0], frame_hi[0]], zeroline=False)
    fig.update_yaxes(range=[frame_lo[1], frame_hi[1]], zeroline=False)
    height = 340 * rows + 150
    legend = dict(orientation="h", yanchor="top", y=-70 / height, x=0.0, itemsizing="constant")
    if rows * cols > len(panels):               # an empty cell (5 panels in 2 × 3): the legend goes there
        left = (len(panels) % cols) / cols + 0.03
        legend = dict(orientation="v", x=left, xanchor="left", y=0.45 / rows, yanchor="middle",
                      itemsizing="constant")
    fig.update_layout(title=title, height=height, legend=legend,
                      margin=dict(l=60, r=10, t=110, b=60 if rows * cols > len(panels) else 120))
    fig.update_annotations(font_size=13)
    return fig


def objective_bars(ratios, title="k-means objective ÷ k-means++'s (lower is better; 1 = as good as k-means++)"):
    """Bars of objective / k-means++ objective per method (dict name -> ratio), with a line at 1.

    Parameters
    ----------
    ratios : dict of str to float
        Ratio per method. A log axis (ticks at powers of ten only) is used when they span
        more than a factor 30.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    names = list(ratios)
    vals = [float(ratios[m]) for m in names]
    colors = [qualitative.Plotly[i % len(qualitative.Plotly)] for i in range(len(names))]
    fig = go.Figure(go.Bar(x=names, y=vals, marker_color=colors, text=[_fmt(v) for v in vals],
                           textposition="outside", cliponaxis=False, showlegend=False, name="objective ÷ k-means++"))
    fig.add_hline(y=1.0, line_dash="dash", line_color="grey")
    # the line's legend entry (an annotation on the line would sit on a bar or off the plot)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(dash="dash", color="grey"),
                             name="k-means++ (non-private) = 1"))
    log = len(vals) > 0 and max(vals) / max(min(vals), 1e-12) > 30
    yaxis = dict(title="objective ÷ k-means++'s")
    if log:
        yaxis.update(type="log", dtick=1)
    else:
        yaxis.update(rangemode="tozero")
    fig.update_layout(title=title, height=400, margin=dict(l=0, r=0, t=70, b=0), yaxis=yaxis,
                      xaxis=dict(title="method"), legend=dict(orientation="h", x=1.0, xanchor="right", y=1.02,
                                                              yanchor="bottom"))
    return fig


def budget_bars(budget, title="How ε is split over the stages"):
    """One horizontal stacked bar of the ε of each stage.

    ``budget`` is a dict stage -> ε or (ε, δ), or a :class:`dpcore.privacy.PrivacyLedger`.

    Parameters
    ----------
    budget : dict or PrivacyLedger
        The ε per stage.
    title : str, default="How ε is split over the stages"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    if hasattr(budget, "entries"):
        items = [(e.what, e.epsilon) for e in budget.entries]
    else:
        items = [(k, v[0] if isinstance(v, tuple) else v) for k, v in budget.items()]
    total = sum(v for _, v in items) or 1.0
    fig = go.Figure()
    for i, (name, eps) in enumerate(items):
        fig.add_trace(go.Bar(y=["ε"], x=[eps], orientation="h", name=f"{name}: ε = {_fmt(eps)}",
                             marker_color=qualitative.Pastel[i % len(qualitative.Pastel)],
                             text=f"{100 * eps / total:.0f} %", textposition="inside"))
    fig.update_layout(barmode="stack", title=title, height=230, margin=dict(l=0, r=0, t=40, b=0),
                      xaxis=dict(title="ε spent by the stage (stacked: the run's total ε)"),
                      yaxis=dict(showticklabels=False),
                      legend=dict(orientation="h", y=-0.55, yanchor="top", traceorder="normal"))
    return fig


def candidate_view(Y, candidates, chosen_index=None, depths=None, max_points=3000, random_state=0,
                   title="Candidate set in the projected space (its first two of p coordinates)"):
    """Alg. 1-3 in pictures: projected points, candidate set and chosen centres.

    The projected points (grey), the private candidate set (marker size grows with the depth
    of its cube) and the k candidates chosen by the local search.

    Parameters
    ----------
    Y : array_like, shape (n, p)
        The projected points (the first two coordinates are drawn).
    candidates : array_like, shape (c, p)
        The candidate set.
    chosen_index : array_like of int, optional
        Indices of the chosen candidates.
    depths : array_like of int, shape (c,), optional
        Depth of every candidate's cube (marker size).
    max_points : int, default=3000
        Most points drawn.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the point sample.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    rng = check_random_state(random_state)
    Y = np.asarray(Y, dtype=np.float64)
    C = np.asarray(candidates, dtype=np.float64)
    if Y.shape[1] == 1:
        Y = np.hstack([Y, np.zeros_like(Y)])
        C = np.hstack([C, np.zeros_like(C)])
    idx = np.arange(Y.shape[0]) if Y.shape[0] <= max_points else rng.choice(Y.shape[0], max_points, replace=False)
    fig = go.Figure(go.Scatter(x=Y[idx, 0], y=Y[idx, 1], mode="markers", name="points (projected)",
                               marker=dict(size=3, color="lightgrey")))
    size = 6 if depths is None else 4 + 2 * np.asarray(depths, dtype=float)
    spots = len(np.unique(np.round(C[:, :2], 9), axis=0)) if len(C) else 0
    name = f"candidates ({len(C)})" if spots == len(C) else f"candidates ({len(C)}, at {spots} spots in this view)"
    fig.add_trace(go.Scatter(x=C[:, 0], y=C[:, 1], mode="markers", name=name,
                             marker=dict(size=size, color="royalblue", opacity=0.6, symbol="square-open")))
    if chosen_index is not None:
        Z = C[np.asarray(chosen_index)]
        fig.add_trace(go.Scatter(x=Z[:, 0], y=Z[:, 1], mode="markers", name="the k candidates chosen by the local swaps",
                                 marker=dict(size=14, color="black", symbol="x")))
    fig.update_layout(title=title, height=460, margin=dict(l=0, r=0, t=40, b=0), legend=dict(itemsizing="constant"),
                      xaxis=dict(title="projected coordinate 1"),
                      yaxis=dict(title="projected coordinate 2", scaleanchor="x"))
    return fig
