"""Figures of private subspace clustering (no Streamlit).

- :func:`released_subspaces_figure` — the points with the released, true and non-private
  subspaces (a wrapper of :func:`dpcore.plots.data.projection_scatter` whose title says
  that colours from assigning raw points to released subspaces are not private);
- :func:`aggregation_map` — sample-aggregate's m subset solutions as points of a map whose
  distances are d_W (classical MDS), coloured by their t₀-th-neighbour radius r_i(t₀), with
  the chosen one, the release and the truth: where the aggregation looked and where the
  noise put the answer;
- :func:`smooth_sensitivity_terms` — the terms ρ_{(k+1)s+1}(t₀ + (k+1)s)·e^{−βk} whose max
  is S(B)/2;
- :func:`sulq_trajectory` — d_W to the truth (if known) and the eq. (3) cost of every
  SuLQ k-plane iterate.

Everything these figures show besides the released subspaces is a non-private
diagnostic computed from the data (a teaching view, not a release).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..metrics import wasserstein_distance
from .data import projection_scatter

__all__ = ["released_subspaces_figure", "classical_mds", "aggregation_map", "smooth_sensitivity_terms",
           "sulq_trajectory"]

NOT_PRIVATE_NOTE = "colours = raw points assigned to the released subspaces (NOT private)"


def released_subspaces_figure(X, released, true=None, nonprivate=None, labels=None, title="", dims=None):
    """Points with the released subspaces (and the true / non-private ones when given).

    ``labels`` are typically the estimator's ``labels_``; the title then states that these
    colours are not private.

    The sets are passed in the order true, released, non-private, so that they get the
    styles :func:`dpcore.plots.data.projection_scatter` gives in that order (the legend names
    each style). With d ≤ 3 the points and subspaces are drawn in their own coordinates
    (lines for q = 1, discs for q = 2), otherwise in the top principal directions of X.
    The note that the colours are not private goes on a second, smaller title line, so that
    the title is not cut in a narrow column.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The points as rows.
    released : array_like, shape (k, d, q)
        The released subspaces.
    true : array_like, shape (k, d, q), optional
        The true subspaces.
    nonprivate : array_like, shape (k, d, q), optional
        A non-private solver's subspaces.
    labels : array_like, shape (n,), optional
        Colour of every point.
    title : str, default=""
        Figure title (the not-private note is appended).
    dims : int, optional
        2 or 3 (see :func:`dpcore.plots.data.projection_scatter`).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    sets = {"true": true, "released (private)": released, "non-private solver": nonprivate}
    note = NOT_PRIVATE_NOTE if labels is not None else "released subspaces"
    fig = projection_scatter(X, labels=labels, subspace_sets=sets, dims=dims,
                             title=f"{title}<br><sup>{note}</sup>" if title else note)
    fig.update_layout(margin=dict(t=70 if title else 40))
    return fig


def _superscript(n) -> str:
    """``n`` in superscript digits (R¹⁸ rather than R^18)."""
    return str(n).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def classical_mds(dist, dims=2):
    """Classical (Torgerson) MDS of a distance matrix.

    Deterministic coordinates whose Euclidean distances approximate ``dist`` (exact when it
    is Euclidean).

    Parameters
    ----------
    dist : ndarray, shape (m, m)
        Symmetric distance matrix.
    dims : int, default=2
        Number of coordinates.

    Returns
    -------
    ndarray of float64, shape (m, dims)
        Coordinates, every axis's sign fixed so that the picture does not flip.
    """
    dist = np.asarray(dist, dtype=np.float64)
    m = dist.shape[0]
    J = np.eye(m) - 1.0 / m
    G = -0.5 * J @ (dist ** 2) @ J
    w, V = np.linalg.eigh(G)
    order = np.argsort(w)[::-1][:dims]
    Y = V[:, order] * np.sqrt(np.maximum(w[order], 0.0))
    # fix the sign of every axis so that the picture does not flip between reruns
    signs = np.sign(Y[np.argmax(np.abs(Y), axis=0), np.arange(Y.shape[1])])
    return Y * np.where(signs == 0, 1.0, signs)


def aggregation_map(est, true_subspaces=None, title="Sample-aggregate: subset solutions (d_W map)"):
    """Map of the m subset solutions of a fitted :class:`SampleAggregateSubspace`.

    Each dot is one subset's solution; distances on the map approximate d_W (classical MDS
    of the d_W matrix, extended with the release and, if given, the truth). Colour = r_i(t₀),
    the distance to the t₀-th nearest other solution: Alg. 1 releases the solution with the
    smallest one (ringed), plus Gaussian noise of scale S(B)/α per coordinate.

    Parameters
    ----------
    est : SampleAggregateSubspace
        A fitted estimator.
    true_subspaces : array_like, shape (k, d, q), optional
        The truth, added to the map when it has the solutions' shape (the same k and q; a run with
        another k has no d_W to it).
    title : str, default="Sample-aggregate: subset solutions (d_W map)"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    subs = est.subset_subspaces_
    m = subs.shape[0]
    extra = [("released (private)", est.subspaces_)]
    if true_subspaces is not None and np.shape(true_subspaces) == subs.shape[1:]:
        extra.append(("true", np.asarray(true_subspaces)))     # d_W needs as many subspaces (k) of one q
    M = m + len(extra)
    dist = np.zeros((M, M))
    dist[:m, :m] = est.aggregate_.distances
    for a, (_, U) in enumerate(extra):
        row = np.array([wasserstein_distance(U, subs[i]) for i in range(m)]
                       + [wasserstein_distance(U, V) for _, V in extra])
        dist[m + a, :] = row
        dist[:, m + a] = row
    Y = classical_mds(dist, 2)
    r = est.radii_t0_
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=Y[:m, 0], y=Y[:m, 1], mode="markers", name="subset solutions (not private)",
        marker=dict(size=9, color=r, colorscale="Viridis", showscale=True,
                    colorbar=dict(title=dict(text="r<sub>i</sub>(t₀)", side="right"))),
        text=[f"subset {i}: r_i(t₀) = {r[i]:.3g}" for i in range(m)], hoverinfo="text"))
    c = est.chosen_index_
    fig.add_trace(go.Scatter(x=[Y[c, 0]], y=[Y[c, 1]], mode="markers", name=f"chosen g(B) = subset {c}",
                             marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(color="crimson", width=3))))
    styles = {"released (private)": dict(symbol="star", size=16, color="crimson"),
              "true": dict(symbol="x", size=14, color="black")}
    for a, (name, _) in enumerate(extra):
        fig.add_trace(go.Scatter(x=[Y[m + a, 0]], y=[Y[m + a, 1]], mode="markers", name=name,
                                 marker=styles[name]))
    fig.update_layout(
        title=f"{title}<br><sup>m = {m}, t₀ = {est.t0_}, S(B) = {est.smooth_sensitivity_:.3g}, "
              f"noise sd S(B)/α = {est.noise_scale_:.3g} per coordinate of R{_superscript(est.encoding_dim_)}</sup>",
        height=520, margin=dict(l=0, r=0, t=70, b=0), xaxis_title="MDS 1 (d_W scale)", yaxis_title="MDS 2",
        yaxis=dict(scaleanchor="x"),
        # the legend below the map, the colour bar on its right: neither covers the other or the dots
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0))
    return fig


def smooth_sensitivity_terms(est, title="Where S(B) comes from"):
    """Bars of ρ_j(t)·e^{−βk}, t = t₀ + (k+1)s, j = (k+1)s + 1, for k = 0, 1, ….

    ρ_j(t) is the j-th smallest t-th-neighbour radius; S(B) is twice the largest bar. The
    last bar is the diameter Λ·e^{−βk} (no t-th neighbour exists any more).

    Parameters
    ----------
    est : SampleAggregateSubspace
        A fitted estimator.
    title : str, default="Where S(B) comes from"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    terms = est.sensitivity_terms_
    s = est.max_multiplicity_
    ks = [f"k={k} (j={(k + 1) * s + 1}, t={t})" for k, t, _, _ in terms]
    vals = [v for *_, v in terms]
    best = int(np.argmax(vals))
    colors = ["crimson" if i == best else "steelblue" for i in range(len(vals))]
    fig = go.Figure(go.Bar(x=ks, y=vals, marker_color=colors, text=[f"{v:.3g}" for v in vals], textposition="auto"))
    fig.update_layout(title=f"{title}: S(B) = 2 × {max(vals):.3g} = {est.smooth_sensitivity_:.3g} (not private)",
                      height=340, margin=dict(l=0, r=0, t=40, b=0),
                      yaxis_title="ρ<sub>j</sub>(t) · e<sup>−βk</sup>",
                      xaxis_title="term k (j-th smallest distance to the t-th nearest neighbour)")
    return fig


def sulq_trajectory(est, X=None, true_subspaces=None, title="SuLQ k-plane iterations"):
    """d_W of every iterate to the truth and eq. (3) cost on the data against the iteration.

    d_W to ``true_subspaces`` (when given) and eq. (3) cost on the data (not private)
    against the iteration; iteration 0 is the random, data-free start.

    Parameters
    ----------
    est : SuLQKPlane
        A fitted estimator with ``subspace_history_``.
    X : array_like, shape (n, d), optional
        The data, for the cost panel.
    true_subspaces : array_like, shape (k, d, q), optional
        The truth, for the d_W panel.
    title : str, default="SuLQ k-plane iterations"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    hist = est.subspace_history_
    it = np.arange(hist.shape[0])
    rows = 2 if true_subspaces is not None else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True,
                        subplot_titles=(["d_W to the true subspaces"] if rows == 2 else [])
                        + ["eq. (3) cost on the data (not private)"])
    if true_subspaces is not None:
        dw = [wasserstein_distance(U, true_subspaces) for U in hist]
        fig.add_trace(go.Scatter(x=it, y=dw, mode="lines+markers", name="d_W"), row=1, col=1)
    if X is not None:
        from ..metrics import subspace_cost
        cost = [subspace_cost(X, U) for U in hist]
    else:
        cost = [np.nan] + list(est.cost_history_)
    fig.add_trace(go.Scatter(x=it, y=cost, mode="lines+markers", name="cost"), row=rows, col=1)
    fig.update_layout(title=f"{title}: {est.n_queries_} queries at per-query ε = {est.per_query_epsilon_:.3g}, "
                            f"σ = {est.noise_sigma_:.3g}", height=420, margin=dict(l=0, r=0, t=60, b=0),
                      showlegend=False)
    fig.update_xaxes(title_text="iteration", row=rows, col=1)
    if true_subspaces is not None:
        fig.update_yaxes(title_text="d_W", row=1, col=1)
    fig.update_yaxes(title_text="cost", row=rows, col=1)
    return fig
