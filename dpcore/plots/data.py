"""Figures of datasets: projection scatter with subspaces, face grid, count-matrix overview."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import scipy.sparse as sp
from plotly.subplots import make_subplots
from plotly.colors import qualitative

from ..validation import check_random_state

__all__ = ["display_basis", "projection_scatter", "projection_note", "face_grid", "sparse_overview"]

PALETTE = qualitative.Plotly + qualitative.D3
#: line styles of subspace sets: a set whose name starts with "true" gets the first (solid
#: black, the reference), the others the rest in order; the words go into the legend
SUBSPACE_STYLES = [dict(color="black", dash="solid"), dict(color="crimson", dash="dash"),
                   dict(color="darkorange", dash="dot"), dict(color="seagreen", dash="dashdot")]
STYLE_WORDS = ["solid black", "dashed red", "dotted orange", "dash-dot green"]
#: opacity of the discs of 2-D subspaces: the true ones a little stronger than the others
DISC_OPACITY = {True: 0.18, False: 0.10}
#: most classes with one legend entry each; above it the points get one colour bar
MAX_LEGEND_CLASSES = 12
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


def _set_styles(names):
    """Style index of every subspace set: a set named "true…" gets style 0 (solid black),
    the others styles 1, 2, … in order (the first set too when no set is named "true")."""
    styles, nxt = {}, 1
    has_true = any(str(n).lower().startswith("true") for n in names)
    for name in names:
        if str(name).lower().startswith("true"):
            styles[name] = 0
        elif not has_true and not styles:
            styles[name] = 0
        else:
            styles[name] = nxt % len(SUBSPACE_STYLES) or 1
            nxt += 1
    return styles


def _subspace_traces(U, P, name, style, dims, showlegend, disc_opacity=DISC_OPACITY[True]):
    """Lines through 0 (q = 1, or any q in 2-D) or discs (q ≥ 2 in 3-D: the unit disc of the two
    basis directions most visible in the view, a rim line and a semi-transparent mesh) of each
    subspace of ``U`` (k, d, q), mapped by the display projection P (d×dims). The first rim or
    line carries the legend entry ``name``; the others share its legend group."""
    traces = []
    t = np.linspace(-1.0, 1.0, 2)
    for i, B in enumerate(U):
        B2 = B @ (np.linalg.svd(P.T @ B, full_matrices=False)[2].T)  # directions most visible in the view
        if B.shape[1] == 1 or dims == 2:
            seg = (B2[:, :1] @ t[None]).T @ P
            kw = dict(x=seg[:, 0], y=seg[:, 1], mode="lines", line=dict(width=5, **style), hoverinfo="name",
                      name=name, legendgroup=name, showlegend=showlegend and i == 0)
            traces.append(go.Scatter3d(z=seg[:, 2], **kw) if dims == 3 else go.Scatter(**kw))
        else:
            ang = np.linspace(0, 2 * np.pi, 61)
            ring = (B2[:, :2] @ np.vstack([np.cos(ang), np.sin(ang)])).T @ P
            traces.append(go.Scatter3d(x=ring[:, 0], y=ring[:, 1], z=ring[:, 2], mode="lines", hoverinfo="name",
                                       line=dict(width=5, **style), name=name, legendgroup=name,
                                       showlegend=showlegend and i == 0))
            verts = np.vstack([np.zeros((1, 3)), ring[:-1]])  # centre + rim: a fan of triangles
            m = len(verts) - 1
            traces.append(go.Mesh3d(x=verts[:, 0], y=verts[:, 1], z=verts[:, 2],
                                    i=np.zeros(m, int), j=np.arange(1, m + 1), k=np.r_[np.arange(2, m + 1), 1],
                                    color=style["color"], opacity=disc_opacity, hoverinfo="skip", name=name,
                                    legendgroup=name, showlegend=False, flatshading=True,
                                    lighting=dict(ambient=1.0, diffuse=0.0, specular=0.0)))
    return traces


def _camera(U, length=2.7, tilt=20.0):
    """A view of raw 3-D data that shows the subspaces ``U`` (k, 3, q) apart.

    Lines: from the direction most orthogonal to all of them (they appear at full length).
    Planes: ``tilt`` degrees off the direction closest to lying in all of them (for two
    planes their common line, from which they look like an X), tilted within the plane of
    their normals away from both (the middle eigenvector of Σ nᵢnᵢᵀ): the discs are then
    thin crossing ellipses, apart except near the common line, and still read as discs.
    Chosen by looking at the pictures; the eye is put above the x1–x2 plane (positive x3)."""
    U = np.asarray(U, dtype=np.float64)
    if U.shape[2] == 1:
        M = np.einsum("kd,ke->de", U[:, :, 0], U[:, :, 0])
        w, V = np.linalg.eigh(M)
        eye = V[:, 0]
    else:
        N = np.stack([np.cross(B[:, 0], B[:, 1]) for B in U])
        w, V = np.linalg.eigh(N.T @ N)
        a = np.deg2rad(tilt)
        eye = np.cos(a) * V[:, 0] + np.sin(a) * V[:, 1]
    eye = eye / np.linalg.norm(eye)
    if eye[2] < 0:
        eye = -eye
    if eye[2] < 0.2:                       # not from exactly the side: lift the eye a little
        eye = eye + np.array([0.0, 0.0, 0.3])
        eye /= np.linalg.norm(eye)
    return dict(eye=dict(zip("xyz", (length * eye).tolist())), up=dict(x=0, y=0, z=1))


def projection_scatter(X, labels=None, subspace_sets=None, center_sets=None, dims=None, title="",
                       label_name="cluster", max_points=3000, random_state=0, axis_titles=None, camera="auto"):
    """2-D or 3-D scatter of the points coloured by label, with subspaces and centres.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The points as rows.
    labels : array_like, shape (n,), optional
        Colour of every point (default: one colour). Up to :data:`MAX_LEGEND_CLASSES`
        classes get one legend entry each; more get one colour bar (no 64-entry legend).
    subspace_sets : dict name -> array (k, d, q), optional
        Subspaces drawn through 0 as line segments (q = 1, or any q in 2-D) or as
        semi-transparent discs with a rim (q ≥ 2 in 3-D: the unit disc of the two basis
        directions most visible in the view), e.g. ``{"true": U, "found": V}``. A set whose
        name starts with "true" is drawn solid black; the others dashed red, dotted orange,
        dash-dot green, in order, with fainter discs. The legend names the style of each.
    center_sets : dict name -> array (k, d), optional
        Centres drawn as large markers.
    dims : 2 or 3 (default: 3 unless d ≤ 2).
    title : str, default=""
        Figure title (default: says what the axes are).
    label_name : str, default="cluster"
        Legend name of the labels.
    max_points : int, default=3000
        Most points drawn.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the drawn subset.
    axis_titles : sequence of str, optional
        Titles of the axes. Default: "x1", "x2", "x3" when the data are shown in their own
        coordinates (d ≤ dims), else "principal direction 1", … Pass them when ``X`` is
        already a projection (its coordinates then are not the data's).
    camera : "auto", dict or None, default="auto"
        The 3-D view. "auto": for data in their own 3 coordinates, a view that shows the
        subspaces apart (see :func:`_camera`; from the set named "true…", else the first);
        otherwise plotly's direction from a little further away. A dict is used as the
        scene's camera; None: plotly's own.

    Decisions. When d ≤ dims the points are drawn in their own coordinates, every axis on
    the same scale (a cube from −r to r, r the largest coordinate): in R³ lines look like
    lines and planes like planes, and what is apart looks apart. When d > dims, points are
    shown in the top principal directions of X (a display choice that spends no privacy);
    a projection can make well separated subspaces overlap (three 3-D subspaces of R^10
    overlap in every 3-D view), which the calling page should say. At most ``max_points``
    points are drawn (a fixed random subset).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    dims = dims or (2 if d <= 2 else 3)
    raw = d <= dims
    P = display_basis(X, dims)
    if P.shape[1] < dims:  # d == 1
        P = np.hstack([P, np.zeros((d, dims - P.shape[1]))])
    idx = np.arange(n)
    if n > max_points:
        idx = np.sort(check_random_state(random_state).choice(n, max_points, replace=False))
    Y = X[idx] @ P
    lab = np.zeros(n, int) if labels is None else np.asarray(labels)
    classes = np.unique(lab)
    fig = go.Figure()
    size = 3 if dims == 3 else 5
    if classes.size > MAX_LEGEND_CLASSES:          # one trace, a colour bar instead of a long legend
        code = np.searchsorted(classes, lab[idx])
        kw = dict(x=Y[:, 0], y=Y[:, 1], mode="markers", name=f"points (colour = {label_name}, {classes.size} values)",
                  text=[f"{label_name} {c}" for c in lab[idx]], hoverinfo="text",
                  marker=dict(size=size, color=code, colorscale="Turbo", cmin=0, cmax=classes.size - 1,
                              opacity=0.75, colorbar=dict(title=dict(text=label_name, side="right"), len=0.55,
                                                          y=0.0, yanchor="bottom", thickness=14)))
        fig.add_trace(go.Scatter3d(z=Y[:, 2], **kw) if dims == 3 else go.Scatter(**kw))
    else:
        for j, c in enumerate(classes):
            sel = lab[idx] == c
            kw = dict(x=Y[sel, 0], y=Y[sel, 1], mode="markers",
                      name=f"{label_name} {c}" if labels is not None else "points",
                      marker=dict(size=size, color=PALETTE[j % len(PALETTE)], opacity=0.75))
            fig.add_trace(go.Scatter3d(z=Y[sel, 2], **kw) if dims == 3 else go.Scatter(**kw))
    sets = {name: np.asarray(U, dtype=np.float64) for name, U in (subspace_sets or {}).items() if U is not None}
    styles = _set_styles(list(sets))
    extent = [np.abs(Y).max(initial=0.0)]
    for name, U in sets.items():
        s = styles[name]
        shape = "lines" if U.shape[2] == 1 or dims == 2 else "discs"
        legend = f"{name}: {STYLE_WORDS[s]} {shape}"
        for tr in _subspace_traces(U, P, legend, SUBSPACE_STYLES[s], dims, True, DISC_OPACITY[s == 0]):
            fig.add_trace(tr)
        extent.append(1.0)
    # in 3-D plotly draws markers as text glyphs, and a browser without "✖" shows an "x" as an
    # empty box: diamonds there
    symbols = ["x", "diamond", "cross", "square"] if dims == 2 else ["diamond", "square", "circle-open", "diamond-open"]
    for s, (name, C) in enumerate((center_sets or {}).items()):
        if C is None:
            continue
        Z = np.atleast_2d(C) @ P
        extent.append(np.abs(Z).max(initial=0.0))
        kw = dict(x=Z[:, 0], y=Z[:, 1], mode="markers", name=name,
                  marker=dict(size=5 if dims == 3 else 14, symbol=symbols[s % 4], color=SUBSPACE_STYLES[s % 4]["color"],
                              line=dict(width=0 if dims == 3 else 1, color="white")))
        fig.add_trace(go.Scatter3d(z=Z[:, 2], **kw) if dims == 3 else go.Scatter(**kw))
    if axis_titles is None:
        axis_titles = [f"x{i + 1}" for i in range(dims)] if raw else [f"principal direction {i + 1}"
                                                                      for i in range(dims)]
    where = (f"R{'²' if dims == 2 else '³'} (their own coordinates)" if raw and d == dims
             else "their own coordinates" if raw else f"their top {dims} principal directions (display only)")
    fig.update_layout(title=title or f"Points in {where}", height=560, margin=dict(l=0, r=0, t=40, b=0),
                      legend=dict(itemsizing="constant"))
    r = 1.05 * max(max(extent), 1e-9)
    if dims == 3:
        axes = {f"{a}axis": dict(title=dict(text=t), range=[-r, r]) for a, t in zip("xyz", axis_titles)}
        # the scene leaves the right quarter to the legend (top) and the colour bar (bottom)
        scene = dict(aspectmode="cube", **axes, domain=dict(x=[0.0, 0.74]))
        fig.update_layout(legend=dict(x=1.0, xanchor="right", y=1.0, yanchor="top"))
        for tr in fig.data:
            if getattr(tr, "marker", None) is not None and tr.marker.colorbar.len is not None:
                tr.marker.colorbar.update(x=1.0, xanchor="right")
        if camera == "auto":
            first = next((name for name in sets if styles[name] == 0), None)
            camera = (_camera(sets[first]) if raw and first is not None and sets[first].shape[1] == 3
                      else dict(eye=dict(x=1.8, y=1.8, z=1.35)))   # plotly's direction, a little further:
            # its default cuts the axis titles off in a page column
        if camera is not None:
            scene["camera"] = camera
        fig.update_layout(scene=scene)
    else:
        fig.update_xaxes(title_text=axis_titles[0], zeroline=True)
        fig.update_yaxes(title_text=axis_titles[1], zeroline=True, scaleanchor="x", scaleratio=1)
    return fig


def projection_note(d, subspaces=False, centres=False, dims=None, colours="each colour is a true class"):
    """The caption of a :func:`projection_scatter` of points in R^d, in words a student follows:
    what the picture shows and, when d > dims, what a projection cannot show (groups that are
    apart in R^d can overlap in a 3-D view: three 3-D subspaces of R^10 look fully mixed even
    when a method separates them almost perfectly), pointing to the R³ presets.

    Parameters
    ----------
    d : int
        Dimension of the data.
    subspaces, centres : bool, default False
        Whether the figure draws true subspaces / true centres.
    dims : 2 or 3, optional
        Dimensions of the picture (default as :func:`projection_scatter`: 3 unless d ≤ 2).
    colours : str, default "each colour is a true class"
        What the colours are.

    Returns
    -------
    str
    """
    dims = dims or (2 if d <= 2 else 3)
    drawn = "drawn" if d <= dims else "projected too and drawn"
    what = colours
    if subspaces:
        what += f"; the true subspaces are {drawn} through 0 in solid black (a line for a 1-D subspace, a disc otherwise)"
    if centres:
        what += f"; the true centres as black {'diamonds' if dims == 3 else 'crosses'}"
    what += "."
    if d <= dims:
        text = f"What to look for: the points in their own {d} coordinates, nothing projected — {what}"
        if subspaces:
            text += " Points of one class lie along one subspace."
        return text + (" Drag the picture to turn it." if dims == 3 else "")
    return (f"What this picture can and cannot show: the points live in R^{d}, a picture has {dims} directions, "
            f"so they are shown along the {dims} in which they spread most (a projection, for display only) — "
            f"{what} Groups that are well apart in R^{d} can lie on top of each other in a {dims}-D view: "
            f"mixed colours here do not mean that the groups are mixed in R^{d} (a method working in all {d} "
            "dimensions can still separate them). To see subspaces as they are, load the Data page's preset "
            "“Three lines in R³” or “Two planes in R³”.")


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
    """Spy plot of a sampled submatrix (colour = count, with a colour bar), and histograms of
    the row sums and the column sums (log scale).

    Rows are sorted by label when given, with a thin line between two classes. Never
    densifies the whole matrix.

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
        The figure. Every axis has a title; the colour bar reads counts (its scale is
        log(1 + count), ticks labelled with counts).
    """
    A = sp.csr_matrix(A)
    n, m = A.shape
    rng = check_random_state(random_state)
    rows = np.sort(rng.choice(n, min(n, max_rows), replace=False))
    colsum = np.asarray(A.sum(axis=0)).ravel()
    cols = np.sort(np.argsort(-colsum)[:min(m, max_cols)])  # the most frequent columns, in file order
    sorted_rows = row_labels is not None
    if sorted_rows:
        rows = rows[np.argsort(np.asarray(row_labels)[rows], kind="stable")]
    sub = A[rows][:, cols].tocoo()
    # the spy plot on top (full width, its colour bar at the right), the two histograms below:
    # side by side, three panels and a colour bar do not fit a page column
    fig = make_subplots(rows=2, cols=2, specs=[[{"colspan": 2}, None], [{}, {}]], row_heights=[0.62, 0.38],
                        vertical_spacing=0.2, horizontal_spacing=0.14,
                        subplot_titles=(f"{rows.size} sampled rows × {cols.size} most frequent columns",
                                        "row sums", "column sums"))
    top = float(sub.data.max()) if sub.nnz else 1.0
    ticks = [c for c in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if c <= top] or [1]
    y0, y1 = fig.layout.yaxis.domain
    fig.add_trace(go.Scattergl(
        x=sub.col, y=sub.row, mode="markers", showlegend=False, name="count",
        text=sub.data, hovertemplate="row %{y}, column %{x}: count %{text}<extra></extra>",
        marker=dict(size=3, color=np.log1p(sub.data), colorscale="Viridis", cmin=0.0, cmax=np.log1p(top),
                    colorbar=dict(title=dict(text="count", side="right"), tickvals=np.log1p(ticks).tolist(),
                                  ticktext=[str(t) for t in ticks], x=1.0, xanchor="left", y=(y0 + y1) / 2,
                                  len=y1 - y0, thickness=12))), 1, 1)
    fig.update_xaxes(title_text=f"column (the {cols.size} most frequent, in file order)", row=1, col=1)
    fig.update_yaxes(title_text="row, by true class" if sorted_rows else "row (a random sample)",
                     autorange="reversed", row=1, col=1)
    if sorted_rows:
        sorted_labels = np.asarray(row_labels)[rows]
        for b in np.flatnonzero(sorted_labels[1:] != sorted_labels[:-1]):
            fig.add_hline(y=b + 0.5, line=dict(color="crimson", width=1), row=1, col=1)
    fig.add_trace(go.Histogram(x=np.asarray(A.sum(axis=1)).ravel(), showlegend=False, name="rows",
                               marker_color="slategray"), 2, 1)
    fig.add_trace(go.Histogram(x=np.log10(colsum[colsum > 0]), showlegend=False, name="columns",
                               marker_color="slategray"), 2, 2)
    fig.update_xaxes(title_text="total count of a row", row=2, col=1)
    fig.update_yaxes(title_text="number of rows", row=2, col=1)
    fig.update_xaxes(title_text="log10 total count of a column", row=2, col=2)
    fig.update_yaxes(title_text="number of columns", row=2, col=2)
    fig.update_annotations(font_size=12)
    fig.update_layout(title=title, height=720, margin=dict(l=0, r=40, t=70, b=0))
    return fig
