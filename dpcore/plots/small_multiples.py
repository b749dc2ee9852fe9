"""Small multiples of subspace clustering results: one dataset, several runs side by side
(no Streamlit).

:func:`subspace_small_multiples` draws one panel per run — typically a private method at a
few values of ε, then the non-private solver — each with the points coloured by the run's
clusters and the run's subspaces next to the true ones, all on the same axes, so that what
ε did is seen at a glance.

Decisions:

- Every panel is :func:`dpcore.plots.data.projection_scatter` of the same points, so the
  panels share its display rules (raw coordinates when d ≤ 3, else the top principal
  directions of X — one basis for all panels, since it depends on X only), its drawn subset
  of points and its drawing of subspaces (lines for q = 1, discs for q ≥ 2 in 3-D).
- Colours follow the cluster *number*, not its rank among the labels present, so cluster 2
  keeps its colour in a panel where cluster 1 is empty. With ``reference`` labels (the
  truth) every panel's clusters are first renumbered by the matching that agrees most with
  them (:func:`match_labels`): the same colour then means the same true class in every
  panel. The renumbering is a display choice; it changes no metric.
- Every panel has the same axis ranges (a cube around all panels' points and subspaces);
  in 3-D each panel keeps its own camera (plotly cannot link scenes).
- The true subspaces and the run's are drawn with the styles projection_scatter gives them
  (the legend names each style), the same in every panel; in 3-D every panel gets the view
  projection_scatter chose for the first one. The legend shows each name once, and
  clicking it hides that element in all panels.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy.optimize import linear_sum_assignment

from .data import PALETTE, projection_scatter

__all__ = ["match_labels", "subspace_small_multiples"]

#: how much farther than a single figure's camera the small panels look from
CAMERA_ZOOM_OUT = 1.2


def match_labels(reference, labels):
    """Renumber ``labels`` so that they agree most with ``reference``.

    The cluster ids of ``labels`` are permuted by the matching of largest overlap with the
    ids of ``reference`` (Hungarian algorithm on the contingency table); ids of ``labels``
    left unmatched (more clusters than reference classes) get the next free numbers.

    Parameters
    ----------
    reference : array_like of int, shape (n,)
        Reference ids (e.g. the true classes).
    labels : array_like of int, shape (n,)
        Ids to renumber.

    Returns
    -------
    ndarray of int, shape (n,)
        ``labels`` with renumbered ids (the partition is unchanged).
    """
    reference = np.asarray(reference)
    labels = np.asarray(labels)
    if reference.shape != labels.shape:
        raise ValueError(f"reference and labels must have the same shape; got {reference.shape} and {labels.shape}")
    ref_ids, ref_inv = np.unique(reference, return_inverse=True)
    lab_ids, lab_inv = np.unique(labels, return_inverse=True)
    C = np.zeros((lab_ids.size, ref_ids.size))
    np.add.at(C, (lab_inv, ref_inv), 1.0)
    rows, cols = linear_sum_assignment(-C)
    new_id = {}
    for r, c in zip(rows, cols):
        new_id[r] = int(ref_ids[c]) if np.issubdtype(ref_ids.dtype, np.integer) else int(c)
    nxt = max(list(new_id.values()) + [-1]) + 1
    for r in range(lab_ids.size):
        if r not in new_id:
            new_id[r] = nxt
            nxt += 1
    return np.array([new_id[r] for r in range(lab_ids.size)], dtype=int)[lab_inv]


def _coords(trace):
    out = []
    for axis in ("x", "y", "z"):
        v = getattr(trace, axis, None)
        if v is not None:
            out.append(np.asarray(v, dtype=float).ravel())
    return np.concatenate(out) if out else np.zeros(0)


def subspace_small_multiples(X, panels, true=None, reference=None, dims=None, cols=3, title="",
                             label_name="cluster", found_name="found", max_points=1000,
                             random_state=0, panel_height=340):
    """One panel per run: the points coloured by the run's clusters, its subspaces and the truth.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The points as rows (the same for every panel).
    panels : list of dict
        One dict per panel with keys ``title`` (str, the panel's title: say ε and the metric
        there), ``labels`` (array (n,), the run's clusters) and ``subspaces`` (array
        (k, d, q), the run's subspaces, or None).
    true : array_like, shape (k, d, q), optional
        The true subspaces, drawn in every panel.
    reference : array_like, shape (n,), optional
        Reference labels (the truth): every panel's clusters are renumbered to agree most
        with them (:func:`match_labels`), so that a colour means the same class everywhere.
    dims : {2, 3}, optional
        Display dimensions (default as :func:`dpcore.plots.data.projection_scatter`: 3
        unless d ≤ 2).
    cols : int, default=3
        Panels per row.
    title : str, default=""
        Figure title.
    label_name : str, default="cluster"
        Legend name of the clusters.
    found_name : str, default="found"
        Legend name of the runs' subspaces.
    max_points : int, default=1000
        Most points drawn per panel (the same subset in every panel).
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the drawn subset.
    panel_height : int, default=340
        Height of one row of panels, in pixels.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    X = np.asarray(X, dtype=np.float64)
    if not panels:
        raise ValueError("panels must hold at least one panel")
    n, d = X.shape
    dims = dims or (2 if d <= 2 else 3)
    if dims not in (2, 3):
        raise ValueError(f"dims must be 2 or 3; got {dims}")
    cols = max(1, min(int(cols), len(panels)))
    rows = -(-len(panels) // cols)
    kind = "scene" if dims == 3 else "xy"
    fig = make_subplots(rows=rows, cols=cols, specs=[[{"type": kind}] * cols for _ in range(rows)],
                        subplot_titles=[p["title"] for p in panels], horizontal_spacing=0.02,
                        vertical_spacing=0.08 if dims == 3 else 0.12)
    seen, extent, camera = set(), 0.0, None
    for i, p in enumerate(panels):
        labels = np.asarray(p["labels"])
        if reference is not None:
            labels = match_labels(reference, labels)
        sets = {}
        if true is not None:
            sets["true subspaces"] = true
        sets[found_name] = p.get("subspaces")
        panel = projection_scatter(X, labels, subspace_sets=sets, dims=dims, label_name=label_name,
                                   max_points=max_points, random_state=random_state)
        if camera is None and dims == 3 and panel.layout.scene.camera.eye.x is not None:
            # the view projection_scatter chose (e.g. lines seen apart), from a little farther: in a
            # small panel the tick labels would otherwise be cut at its edges
            eye = panel.layout.scene.camera.eye
            camera = dict(eye=dict(x=eye.x * CAMERA_ZOOM_OUT, y=eye.y * CAMERA_ZOOM_OUT, z=eye.z * CAMERA_ZOOM_OUT),
                          up=panel.layout.scene.camera.up.to_plotly_json() or dict(x=0, y=0, z=1))
        row, col = divmod(i, cols)
        for tr in panel.data:
            name = tr.name or ""
            if name.startswith(label_name + " "):
                try:
                    cid = int(name[len(label_name) + 1:])
                    tr.marker.color = PALETTE[cid % len(PALETTE)]
                except ValueError:
                    pass
            if name:
                tr.legendgroup = name
                tr.showlegend = bool(tr.showlegend is not False) and name not in seen
                if tr.showlegend:
                    seen.add(name)
            c = _coords(tr)
            if c.size:
                extent = max(extent, float(np.nanmax(np.abs(c))))
            fig.add_trace(tr, row=row + 1, col=col + 1)
    r = 1.05 * (extent or 1.0)
    where = "x" if d <= dims else "PC "
    names = [f"{where}{j + 1}" for j in range(dims)]
    if dims == 3:
        scene = dict(aspectmode="cube", xaxis=dict(range=[-r, r], title=names[0]),
                     yaxis=dict(range=[-r, r], title=names[1]), zaxis=dict(range=[-r, r], title=names[2]))
        if camera is not None:
            scene["camera"] = camera
        fig.update_scenes(**scene)
    else:
        fig.update_xaxes(range=[-r, r], title_text=names[0])
        fig.update_yaxes(range=[-r, r], title_text=names[1], scaleanchor="x")
    fig.update_layout(title=title or None, height=rows * panel_height + 110,
                      margin=dict(l=0, r=0, t=70 if title else 40, b=0),
                      legend=dict(orientation="h", yanchor="top", y=-0.02, xanchor="left", x=0, itemsizing="constant"))
    return fig
