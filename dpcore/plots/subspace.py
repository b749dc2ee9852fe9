"""Figures of subspace clustering results (no Streamlit): the affinity matrix of the
spectral solvers (TSC, SSC, LRR) and a comparison of runs."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import scipy.sparse as sp

from ..validation import check_random_state

__all__ = ["affinity_heatmap", "runs_comparison"]


def affinity_heatmap(W, labels, max_points=400, random_state=0, title="Affinity matrix"):
    """Heatmap of an n×n affinity (dense or sparse) with the points sorted by ``labels``.

    With points sorted by the true classes, a good subspace clustering affinity is block
    diagonal: strong weights inside a class, (near) zero across classes. At most
    ``max_points`` points are shown (a fixed random subset, then sorted); weights are shown
    on a square-root scale so that weak cross-class edges stay visible.

    Parameters
    ----------
    W : array_like or scipy.sparse matrix, shape (n, n)
        The affinity (absolute values are shown).
    labels : array_like, shape (n,)
        Class or cluster of every point (sort key; boundaries drawn between classes).
    max_points : int, default=400
        Most points shown.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the displayed subset.
    title : str, default="Affinity matrix"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The heatmap.
    """
    n = W.shape[0]
    labels = np.asarray(labels)
    idx = np.arange(n)
    if n > max_points:
        idx = np.sort(check_random_state(random_state).choice(n, max_points, replace=False))
    idx = idx[np.argsort(labels[idx], kind="stable")]
    M = W[idx][:, idx]
    M = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=np.float64)
    M = np.abs(M)
    top = M.max()
    Z = np.sqrt(M / top) if top > 0 else M
    fig = go.Figure(go.Heatmap(z=Z, colorscale="Viridis", colorbar=dict(title="√(w / max w)"),
                               hovertemplate="i=%{y}, j=%{x}: %{z:.3f}<extra></extra>"))
    # class boundaries
    lab_sorted = labels[idx]
    cuts = np.flatnonzero(np.diff(lab_sorted)) + 0.5
    for c in cuts:
        fig.add_shape(type="line", x0=c, x1=c, y0=-0.5, y1=len(idx) - 0.5, line=dict(color="white", width=1))
        fig.add_shape(type="line", y0=c, y1=c, x0=-0.5, x1=len(idx) - 0.5, line=dict(color="white", width=1))
    fig.update_layout(title=title, height=480, margin=dict(l=0, r=0, t=40, b=0),
                      xaxis=dict(title="point j (sorted by class)", showticklabels=False, showgrid=False,
                                 zeroline=False, constrain="domain"),
                      yaxis=dict(title="point i (sorted by class)", autorange="reversed", showticklabels=False,
                                 showgrid=False, zeroline=False, scaleanchor="x", constrain="domain"))
    return fig


def runs_comparison(records, metric="accuracy", title=""):
    """Bar chart of one metric over a list of run records (dicts with ``run`` and the metric).

    Parameters
    ----------
    records : list of dict
        One dict per run, with key ``run`` (bar label) and the metric (records without it,
        or with None, are skipped).
    metric : str, default="accuracy"
        Key of the metric.
    title : str, default=""
        Figure title (default: the metric).

    Returns
    -------
    plotly.graph_objects.Figure
        The bar chart.
    """
    xs = [r["run"] for r in records if r.get(metric) is not None]
    ys = [r[metric] for r in records if r.get(metric) is not None]
    fig = go.Figure(go.Bar(x=xs, y=ys, text=[f"{v:.3g}" for v in ys], textposition="auto"))
    fig.update_layout(title=title or metric, height=320, margin=dict(l=0, r=0, t=40, b=0), yaxis_title=metric,
                      xaxis=dict(title="run", type="category"))
    return fig
