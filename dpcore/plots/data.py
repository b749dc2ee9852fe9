"""Figures of datasets: projection scatter with subspaces, face grid, count-matrix overview."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import scipy.sparse as sp
from plotly.subplots import make_subplots
from plotly.colors import qualitative

from ..validation import check_random_state

__all__ = ["display_basis", "projection_scatter", "face_grid", "sparse_overview"]

PALETTE = qualitative.Plotly + qualitative.D3
SUBSPACE_STYLES = [dict(color="black", dash="solid"), dict(color="crimson", dash="dash"),
                   dict(color="darkorange", dash="dot"), dict(color="seagreen", dash="dashdot")]
#: Largest min(rows, d) for which :func:`display_basis` uses the exact SVD.
_EXACT_SVD_MAX = 500


def display_basis(X, dims=2, max_rows=None, random_state=0):
    """An orthonormal d×dims basis for the display: the one display basis of every figure.

    The identity's first columns when d ≤ dims (the data are shown as they are), otherwise
    the top principal directions of X, or of a random subset of at most ``max_rows`` rows.
    A display choice that looks at the data; it is not a release and spends no privacy.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n, d)
        The points as rows.
    dims : int, default=2
        Number of display dimensions (2 or 3).
    max_rows : int or None, default=None
        Most rows used (None: all of them).
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the row subset (and of the randomized SVD used for large inputs).

    Returns
    -------
    ndarray of float64, shape (d, min(d, dims))
        Orthonormal columns.
    """
    n, d = X.shape
    if d <= dims:
        return np.eye(d)[:, :dims]
    rng = check_random_state(random_state)
    idx = np.arange(n) if max_rows is None or n <= max_rows else np.sort(rng.choice(n, max_rows, replace=False))
    S = X[idx]
    S = S.toarray() if sp.issparse(S) else np.asarray(S, dtype=np.float64)
    S = S - S.mean(axis=0)
    if min(S.shape) <= _EXACT_SVD_MAX:
        _, _, Vt = np.linalg.svd(S, full_matrices=False)
    else:
        from sklearn.utils.extmath import randomized_svd
        _, _, Vt = randomized_svd(S, dims, random_state=int(rng.integers(2 ** 31 - 1)))
    return Vt[:dims].T


def _subspace_traces(U, P, name, style, dims, showlegend):
    """Lines (q = 1) or plane patches (first two basis vectors) of each subspace, mapped by
    the display projection P (d×dims)."""
    traces = []
    t = np.linspace(-1.0, 1.0, 2)
    for i, B in enumerate(U):
        B2 = B @ (np.linalg.svd(P.T @ B, full_matrices=False)[2].T)  # directions most visible in the view
        if B.shape[1] == 1 or dims == 2:
            seg = (B2[:, :1] @ t[None]).T @ P
            kw = dict(x=seg[:, 0], y=seg[:, 1], mode="lines", line=dict(width=4, **style),
                      name=name, legendgroup=name, showlegend=showlegend and i == 0)
            traces.append(go.Scatter3d(z=seg[:, 2], **kw) if dims == 3 else go.Scatter(**kw))
        else:
            ang = np.linspace(0, 2 * np.pi, 41)
            ring = (B2[:, :2] @ np.vstack([np.cos(ang), np.sin(ang)])).T @ P
            traces.append(go.Scatter3d(x=ring[:, 0], y=ring[:, 1], z=ring[:, 2], mode="lines",
                                       line=dict(width=4, **style), name=name, legendgroup=name,
                                       showlegend=showlegend and i == 0))
            verts = np.vstack([np.zeros((1, 3)), ring[:-1]])  # centre + rim: a fan of triangles
            m = len(verts) - 1
            traces.append(go.Mesh3d(x=verts[:, 0], y=verts[:, 1], z=verts[:, 2],
                                    i=np.zeros(m, int), j=np.arange(1, m + 1), k=np.r_[np.arange(2, m + 1), 1],
                                    color=style["color"], opacity=0.12, hoverinfo="skip",
                                    legendgroup=name, showlegend=False))
    return traces


def projection_scatter(X, labels=None, subspace_sets=None, center_sets=None, dims=None, title="",
                       label_name="cluster", max_points=3000, random_state=0):
    """2-D or 3-D scatter of the points coloured by label.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The points as rows.
    labels : array_like, shape (n,), optional
        Colour of every point (default: one colour).
    subspace_sets : dict name -> array (k, d, q), optional
        Subspaces drawn as lines (q = 1) or discs (q ≥ 2: the unit disc of the two basis
        directions most visible in the view), e.g. ``{"true": U, "found": V}``.
    center_sets : dict name -> array (k, d), optional
        Centres drawn as large markers.
    dims : 2 or 3 (default: 3 unless d == 2).
    title : str, default=""
        Figure title.
    label_name : str, default="cluster"
        Legend name of the labels.
    max_points : int, default=3000
        Most points drawn.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the drawn subset.

    When d > dims, points are shown in the top principal directions of X (a display choice).
    At most ``max_points`` points are drawn (a fixed random subset).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    dims = dims or (2 if d <= 2 else 3)
    P = display_basis(X, dims)
    if P.shape[1] < dims:  # d == 1
        P = np.hstack([P, np.zeros((d, dims - P.shape[1]))])
    idx = np.arange(n)
    if n > max_points:
        idx = np.sort(check_random_state(random_state).choice(n, max_points, replace=False))
    Y = X[idx] @ P
    lab = np.zeros(n, int) if labels is None else np.asarray(labels)
    fig = go.Figure()
    for j, c in enumerate(np.unique(lab)):
        sel = lab[idx] == c
        kw = dict(x=Y[sel, 0], y=Y[sel, 1], mode="markers", name=f"{label_name} {c}" if labels is not None else "points",
                  marker=dict(size=3 if dims == 3 else 5, color=PALETTE[j % len(PALETTE)], opacity=0.75))
        fig.add_trace(go.Scatter3d(z=Y[sel, 2], **kw) if dims == 3 else go.Scatter(**kw))
    for s, (name, U) in enumerate((subspace_sets or {}).items()):
        if U is None:
            continue
        for tr in _subspace_traces(np.asarray(U), P, name, SUBSPACE_STYLES[s % len(SUBSPACE_STYLES)], dims, True):
            fig.add_trace(tr)
    symbols = ["x", "diamond", "cross", "square"]
    for s, (name, C) in enumerate((center_sets or {}).items()):
        if C is None:
            continue
        Z = np.atleast_2d(C) @ P
        kw = dict(x=Z[:, 0], y=Z[:, 1], mode="markers", name=name,
                  marker=dict(size=9 if dims == 3 else 14, symbol=symbols[s % 4], color=SUBSPACE_STYLES[s % 4]["color"],
                              line=dict(width=1, color="white")))
        fig.add_trace(go.Scatter3d(z=Z[:, 2], **kw) if dims == 3 else go.Scatter(**kw))
    where = "coordinates" if d <= dims else "top principal directions (display only)"
    fig.update_layout(title=title or f"Points in {where}", height=560, margin=dict(l=0, r=0, t=40, b=0),
                      legend=dict(itemsizing="constant"))
    if dims == 3:
        fig.update_layout(scene=dict(aspectmode="data", xaxis_title="1", yaxis_title="2", zaxis_title="3"))
    return fig


def face_grid(images, labels=None, per_row=8, max_images=40, title="Faces"):
    """Grid of grey-level images (n, h, w), first ``max_images`` spread over the labels.

    Parameters
    ----------
    images : array_like, shape (n, h, w)
        Grey-level images.
    labels : array_like, shape (n,), optional
        Class of every image; when given, the first images of every class are shown.
    per_row : int, default=8
        Images per row of the grid.
    max_images : int, default=40
        Most images shown.
    title : str, default="Faces"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    images = np.asarray(images)
    n = images.shape[0]
    if labels is not None:
        labels = np.asarray(labels)
        classes = np.unique(labels)
        per = max(1, max_images // classes.size)
        idx = np.concatenate([np.flatnonzero(labels == c)[:per] for c in classes])[:max_images]
    else:
        idx = np.arange(min(n, max_images))
    rows = int(np.ceil(idx.size / per_row))
    h, w = images.shape[1:]
    canvas = np.full((rows * (h + 2), per_row * (w + 2)), 255.0)
    for p, i in enumerate(idx):
        r, c = divmod(p, per_row)
        canvas[r * (h + 2): r * (h + 2) + h, c * (w + 2): c * (w + 2) + w] = images[i]
    fig = go.Figure(go.Heatmap(z=canvas[::-1], colorscale="gray", showscale=False, hoverinfo="skip"))
    fig.update_layout(title=title, height=max(200, 70 * rows + 60), margin=dict(l=0, r=0, t=40, b=0),
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"))
    return fig


def sparse_overview(A, row_labels=None, max_rows=400, max_cols=400, random_state=0, title="Count matrix"):
    """Row sums, column sums (log scale) and a spy plot of a sampled submatrix.

    Rows are sorted by label when given. Never densifies the whole matrix.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (n, m)
        The count matrix.
    row_labels : array_like, shape (n,), optional
        Row clusters (sort key of the sampled rows).
    max_rows : int, default=400
        Most rows in the spy plot.
    max_cols : int, default=400
        Most (most frequent) columns in the spy plot.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the row sample.
    title : str, default="Count matrix"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    A = sp.csr_matrix(A)
    n, m = A.shape
    rng = check_random_state(random_state)
    rows = np.sort(rng.choice(n, min(n, max_rows), replace=False))
    colsum = np.asarray(A.sum(axis=0)).ravel()
    cols = np.sort(np.argsort(-colsum)[:min(m, max_cols)])  # the most frequent columns
    if row_labels is not None:
        rows = rows[np.argsort(np.asarray(row_labels)[rows], kind="stable")]
    sub = A[rows][:, cols].tocoo()
    fig = make_subplots(rows=1, cols=3, column_widths=[0.5, 0.25, 0.25],
                        subplot_titles=(f"sample: {rows.size} rows × {cols.size} most frequent columns",
                                        "row sums", "column sums"))
    fig.add_trace(go.Scattergl(x=sub.col, y=sub.row, mode="markers", showlegend=False,
                               marker=dict(size=2, color=np.log1p(sub.data), colorscale="Viridis")), 1, 1)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.add_trace(go.Histogram(x=np.asarray(A.sum(axis=1)).ravel(), showlegend=False), 1, 2)
    fig.add_trace(go.Histogram(x=np.log10(colsum[colsum > 0]), showlegend=False), 1, 3)
    fig.update_xaxes(title_text="count per row", row=1, col=2)
    fig.update_xaxes(title_text="log10 count per column", row=1, col=3)
    fig.update_layout(title=title, height=420, margin=dict(l=0, r=0, t=60, b=0))
    return fig
