"""Figures of private k-means: points with released and non-private centres, objectives
relative to k-means++, the budget split over the stages, and the candidate set in the
projected space R^p (Alg. 1-3 at work)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from ..validation import check_random_state
from .data import display_basis, projection_scatter

__all__ = ["centres_scatter", "objective_bars", "budget_bars", "candidate_view"]

CENTRE_STYLES = {"released": dict(symbol="x", color="black", size=14),
                 "non-private": dict(symbol="diamond-open", color="crimson", size=14),
                 "true": dict(symbol="circle-open", color="seagreen", size=12)}


def centres_scatter(X, labels=None, center_sets=None, dims=2, title="", max_points=3000, random_state=0):
    """Points coloured by ``labels`` in a 2-D/3-D display basis, with centre sets as markers.

    Points are a sample of at most ``max_points``; every centre set of ``center_sets``
    (name -> (k, d)) is drawn as large markers, e.g.
    ``{"released (private)": C, "k-means++ (not private)": C0}``. Works for sparse X
    (documents): the points and centres are mapped to the display basis first, then drawn
    with :func:`dpcore.plots.data.projection_scatter`.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n, d)
        The points as rows.
    labels : array_like, shape (n,), optional
        Colour of every point.
    center_sets : dict of str to array_like, shape (k, d), optional
        Centre sets by legend name.
    dims : int, default=2
        2 or 3.
    title : str, default=""
        Figure title.
    max_points : int, default=3000
        Most points drawn.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the point sample and of the display basis's row subset.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    rng = check_random_state(random_state)
    n = X.shape[0]
    idx = np.arange(n) if n <= max_points else np.sort(rng.choice(n, max_points, replace=False))
    P = display_basis(X, dims, max_rows=1000, random_state=random_state)
    Xs = X[idx]
    Y = np.asarray(Xs @ P)
    if Y.shape[1] < dims:
        Y = np.hstack([Y, np.zeros((Y.shape[0], dims - Y.shape[1]))])
        P = np.hstack([P, np.zeros((P.shape[0], dims - P.shape[1]))])
    lab = None if labels is None else np.asarray(labels)[idx]
    sets = {name: (None if C is None else np.atleast_2d(np.asarray(C, dtype=np.float64)) @ P)
            for name, C in (center_sets or {}).items()}
    where = "coordinates" if X.shape[1] <= dims else "top principal directions (display only)"
    fig = projection_scatter(Y, lab, center_sets=sets, dims=dims, title=title or f"Points and centres in {where}",
                             max_points=max_points)
    return fig


def objective_bars(ratios, title="k-means objective relative to k-means++ (lower is better; 1 = k-means++)"):
    """Bars of objective / k-means++ objective per method (dict name -> ratio), with a line at 1.

    Parameters
    ----------
    ratios : dict of str to float
        Ratio per method (a log axis is used when they span more than a factor 30).
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
    fig = go.Figure(go.Bar(x=names, y=vals, marker_color=colors, text=[f"{v:.3g}" for v in vals],
                           textposition="outside"))
    fig.add_hline(y=1.0, line_dash="dash", line_color="grey", annotation_text="k-means++")
    log = len(vals) > 0 and max(vals) / max(min(vals), 1e-12) > 30
    fig.update_layout(title=title, height=380, margin=dict(l=0, r=0, t=50, b=0),
                      yaxis=dict(title="objective ÷ k-means++", type="log" if log else "linear"))
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
        fig.add_trace(go.Bar(y=["ε"], x=[eps], orientation="h", name=f"{name}: {eps:.3g}",
                             marker_color=qualitative.Pastel[i % len(qualitative.Pastel)],
                             text=f"{100 * eps / total:.0f} %", textposition="inside"))
    fig.update_layout(barmode="stack", title=title, height=200, margin=dict(l=0, r=0, t=40, b=0),
                      xaxis=dict(title="ε"), legend=dict(orientation="h", y=-0.6))
    return fig


def candidate_view(Y, candidates, chosen_index=None, depths=None, max_points=3000, random_state=0,
                   title="The projected space R^p (first two coordinates): points, candidates, chosen centres"):
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
    fig.add_trace(go.Scatter(x=C[:, 0], y=C[:, 1], mode="markers", name=f"candidates ({len(C)})",
                             marker=dict(size=size, color="royalblue", opacity=0.6, symbol="square-open")))
    if chosen_index is not None:
        Z = C[np.asarray(chosen_index)]
        fig.add_trace(go.Scatter(x=Z[:, 0], y=Z[:, 1], mode="markers", name="chosen by local search",
                                 marker=dict(size=14, color="black", symbol="x")))
    fig.update_layout(title=title, height=460, margin=dict(l=0, r=0, t=40, b=0),
                      xaxis=dict(title="projected coordinate 1"),
                      yaxis=dict(title="projected coordinate 2", scaleanchor="x"))
    return fig
