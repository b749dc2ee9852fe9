"""Figures of co-clustering: the matrix reordered by row and column clusters, contingency
tables side by side, the Fig. 1 leak example, τ̂ along the iterations and NMI against ε.

Nothing here densifies a large matrix: the reordered view samples at most ``max_rows`` ×
``max_cols`` cells (the sample is a display choice drawn from a fixed seed; it is not a
release and spends no privacy).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import scipy.sparse as sp
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from ..validation import check_random_state

__all__ = ["reordered_matrix", "contingency_heatmaps", "figure1_leak", "tau_history"]


def _sample_sorted(labels, size, max_size, rng):
    """Indices of at most ``max_size`` objects (a uniform sample without replacement when
    there are more), sorted by label (−1 = in no cluster, last)."""
    labels = np.asarray(labels) if labels is not None else np.zeros(size, dtype=int)
    idx = np.arange(size) if size <= max_size else np.sort(rng.choice(size, max_size, replace=False))
    key = np.where(labels[idx] < 0, np.iinfo(np.int64).max, labels[idx])
    return idx[np.argsort(key, kind="stable")]


def _boundaries(sorted_labels):
    """Positions (between cells) where the label changes."""
    lab = np.asarray(sorted_labels)
    return np.flatnonzero(lab[1:] != lab[:-1]) + 0.5


def reordered_matrix(A, row_labels=None, col_labels=None, max_rows=300, max_cols=300, random_state=0,
                     title="Matrix reordered by co-clusters", log_scale=True, columns="frequent"):
    """Heatmap of A with rows and columns grouped by cluster, with lines between clusters.

    Large matrices are shown through at most ``max_rows`` rows (a uniform random sample) and
    ``max_cols`` columns: with ``columns="frequent"`` the most frequent columns (in a
    document-term matrix a random sample of terms is almost all zeros), with
    ``"uniform"`` a uniform sample. The title says what is shown. Colour = log(1 + count)
    when ``log_scale``.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (n, m)
        The (count) matrix.
    row_labels : array_like of int, shape (n,), optional
        Row clusters (−1 = in no cluster, shown last); None = no grouping, no lines.
    col_labels : array_like of int, shape (m,), optional
        Column clusters, as ``row_labels``.
    max_rows : int, default=300
        Most rows shown.
    max_cols : int, default=300
        Most columns shown.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the display sample (not a release; spends no privacy).
    title : str, default="Matrix reordered by co-clusters"
        Figure title (the sample size is appended when sampled).
    log_scale : bool, default=True
        Colour by log(1 + value) instead of the value.
    columns : {"frequent", "uniform"}, default="frequent"
        Which columns to show when m > ``max_cols`` (any other value acts as ``"uniform"``).

    Returns
    -------
    plotly.graph_objects.Figure
        The heatmap.
    """
    A = sp.csr_matrix(A)
    n, m = A.shape
    rng = check_random_state(random_state)
    rows = _sample_sorted(row_labels, n, max_rows, rng)
    if columns == "frequent" and m > max_cols:
        top = np.sort(np.argsort(-np.asarray(A.sum(axis=0)).ravel(), kind="stable")[:max_cols])
        cl = np.zeros(m, dtype=np.int64) if col_labels is None else np.asarray(col_labels)
        key = np.where(cl[top] < 0, np.iinfo(np.int64).max, cl[top])
        cols = top[np.argsort(key, kind="stable")]
        what = f"{cols.size} most frequent of {m} columns"
    else:
        cols = _sample_sorted(col_labels, m, max_cols, rng)
        what = f"{cols.size} of {m} columns"
    sub = A[rows][:, cols].toarray()
    z = np.log1p(sub) if log_scale else sub
    sampled = rows.size < n or cols.size < m
    fig = go.Figure(go.Heatmap(z=z, colorscale="Blues", showscale=True,
                               colorbar=dict(title="log(1+count)" if log_scale else "count"),
                               hovertemplate="row %{y}, column %{x}<br>value %{z:.2f}<extra></extra>"))
    shapes = []
    if row_labels is not None:
        for y in _boundaries(np.asarray(row_labels)[rows]):
            shapes.append(dict(type="line", x0=-0.5, x1=cols.size - 0.5, y0=y, y1=y, line=dict(color="crimson", width=1.5)))
    if col_labels is not None:
        for x in _boundaries(np.asarray(col_labels)[cols]):
            shapes.append(dict(type="line", y0=-0.5, y1=rows.size - 0.5, x0=x, x1=x, line=dict(color="crimson", width=1.5)))
    full = f"{title}" + (f" (random {rows.size} of {n} rows × {what})" if sampled else "")
    fig.update_layout(title=full, shapes=shapes, height=480, margin=dict(l=0, r=0, t=50, b=0),
                      xaxis=dict(title="columns (grouped by column cluster)", showticklabels=False),
                      yaxis=dict(title="rows (grouped by row cluster)", showticklabels=False, autorange="reversed"))
    return fig


def contingency_heatmaps(tables, normalize=True, title="Contingency tables"):
    """Heatmaps side by side of the tables in ``tables`` (dict name -> K×L array).

    Each has its values written in the cells. With ``normalize`` each table is divided by its
    total (so a released noisy table and the exact one are on the same scale).

    Parameters
    ----------
    tables : dict of str to array_like, shape (K, L)
        The tables by panel title.
    normalize : bool, default=True
        Divide every table by its total (when positive).
    title : str, default="Contingency tables"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap per table.
    """
    names = list(tables)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.08)
    for i, name in enumerate(names, start=1):
        T = np.asarray(tables[name], dtype=np.float64)
        Z = T / T.sum() if normalize and T.sum() > 0 else T
        text = np.vectorize(lambda v: f"{v:.3f}" if normalize else f"{v:.4g}")(Z) if Z.size <= 400 else None
        fig.add_trace(go.Heatmap(z=Z, text=text, texttemplate="%{text}" if text is not None else None,
                                 colorscale="Blues", showscale=(i == len(names)), zmin=0,
                                 hovertemplate="row cluster %{y}, column cluster %{x}<br>%{z:.4g}<extra></extra>"),
                      1, i)
        fig.update_xaxes(title_text="column cluster", dtick=1, row=1, col=i)
        fig.update_yaxes(title_text="row cluster", dtick=1, autorange="reversed", row=1, col=i)
    fig.update_layout(title=title + (" (fractions of the total)" if normalize else ""), height=380,
                      margin=dict(l=0, r=0, t=70, b=0))
    return fig


def _discrete_scale(n):
    """A step colour scale with n pastel colours for integer z in 0..n−1 (zmin −0.5, zmax n−0.5)."""
    colors = (qualitative.Pastel1 * (n // len(qualitative.Pastel1) + 1))[:n]
    scale = []
    for i, col in enumerate(colors):
        scale += [[i / n, col], [(i + 1) / n, col]]
    return scale


def figure1_leak(A, A_prime, labels_A, labels_A_prime, T_A, T_A_prime):
    """The Fig. 1 example: the two neighbouring matrices and the two tables.

    The matrices are shown with their best co-clusterings (cells annotated with their
    counts, the changed cell circled) and the two tables.
    ``labels_*`` are (row_labels, col_labels) pairs; rows/columns are shown in their
    original order with cluster membership written on the axes.

    Parameters
    ----------
    A : array_like, shape (n, m)
        The matrix.
    A_prime : array_like, shape (n, m)
        The neighbouring matrix (the cells that differ are circled).
    labels_A : tuple (row_labels, col_labels)
        Co-clustering of ``A`` (integer labels from 0).
    labels_A_prime : tuple (row_labels, col_labels)
        Co-clustering of ``A_prime``.
    T_A : array_like, shape (K, L)
        Contingency table of ``A``.
    T_A_prime : array_like, shape (K′, L′)
        Contingency table of ``A_prime``.

    Returns
    -------
    plotly.graph_objects.Figure
        Four panels: A, T, A′, T′.
    """
    A = np.asarray(A, dtype=float)
    A_prime = np.asarray(A_prime, dtype=float)
    fig = make_subplots(rows=1, cols=4, column_widths=[0.32, 0.18, 0.32, 0.18], horizontal_spacing=0.06,
                        subplot_titles=("A", "T (from A)", "A′ (one cell +1)", "T′ (from A′)"))
    diff = np.argwhere(A != A_prime)
    for col, (M, (r, c), T) in enumerate([(A, labels_A, T_A), (A_prime, labels_A_prime, T_A_prime)]):
        r, c = np.asarray(r), np.asarray(c)
        x = [f"p{j + 1}·C{c[j] + 1}" for j in range(M.shape[1])]
        y = [f"u{i + 1}·R{r[i] + 1}" for i in range(M.shape[0])]
        n_cc = int((r.max() + 1) * (c.max() + 1))
        z = (r[:, None] * (c.max() + 1) + c[None, :]).astype(float)  # colour = co-cluster
        fig.add_trace(go.Heatmap(z=z, x=x, y=y, text=M.astype(int).astype(str), texttemplate="%{text}",
                                 colorscale=_discrete_scale(n_cc), zmin=-0.5, zmax=n_cc - 0.5, showscale=False,
                                 hoverinfo="skip"), 1, 2 * col + 1)
        fig.update_yaxes(autorange="reversed", row=1, col=2 * col + 1)
        T = np.asarray(T, dtype=float)
        fig.add_trace(go.Heatmap(z=T, x=[f"C{l + 1}" for l in range(T.shape[1])],
                                 y=[f"R{k + 1}" for k in range(T.shape[0])], text=T.astype(int).astype(str),
                                 texttemplate="%{text}", colorscale="Blues", showscale=False, hoverinfo="skip"),
                      1, 2 * col + 2)
        fig.update_yaxes(autorange="reversed", row=1, col=2 * col + 2)
    for i, j in diff:
        for col in (1, 3):
            fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                          line=dict(color="crimson", width=3), row=1, col=col)
    fig.update_layout(height=330, margin=dict(l=0, r=0, t=40, b=0),
                      title="Fig. 1: one extra purchase (red) changes the column clusters and the table")
    return fig


def tau_history(history, title="τ̂ of each released table"):
    """τ̂_{R|C} and τ̂_{C|R} along the half-steps of a run.

    The half-steps of a DP-τCC run (``DPTauCC.history_``) or the phases of Fast-τCC
    (``FastTauCC.history_``).

    Parameters
    ----------
    history : list of dict
        Entries with ``tau_rc``, ``tau_cr`` and ``iteration``/``round`` and ``after``/``mode``.
    title : str, default="τ̂ of each released table"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Two lines against the step.
    """
    steps = [f"{h.get('iteration', h.get('round'))}·{h.get('after', h.get('mode'))}" for h in history]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps, y=[h["tau_rc"] for h in history], mode="lines+markers", name="τ̂_{R|C}"))
    fig.add_trace(go.Scatter(x=steps, y=[h["tau_cr"] for h in history], mode="lines+markers", name="τ̂_{C|R}"))
    fig.update_layout(title=title, xaxis_title="iteration · half-step", yaxis_title="τ̂", height=320,
                      margin=dict(l=0, r=0, t=50, b=0))
    return fig
