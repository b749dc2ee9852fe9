"""Figures of co-clustering: the matrix reordered by row and column clusters, contingency
tables side by side, the Fig. 1 leak example with the frequencies of DP-τCC's releases on
its two neighbouring matrices, and τ along the iterations.

Labels are written for students: the Goodman–Kruskal τ̂_{R|C} of the papers is
"τ (columns → rows)" (how much knowing the column cluster of a random unit of count reduces
the error of guessing its row cluster) and τ̂_{C|R} is "τ (rows → columns)"
(:data:`TAU_RC_LABEL`, :data:`TAU_CR_LABEL`).

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

__all__ = ["reordered_matrix", "contingency_heatmaps", "figure1_leak", "tau_history", "partition_label",
           "frequency_band_rows", "partition_frequency_band", "TAU_RC_LABEL", "TAU_CR_LABEL"]

#: τ̂_{R|C} and τ̂_{C|R} in words a student reads
TAU_RC_LABEL = "τ (columns → rows)"
TAU_CR_LABEL = "τ (rows → columns)"


def _titled(text, sub):
    """A title with a smaller second line (``<br><sup>``, not ``title.subtitle``, which needs
    plotly ≥ 5.23 while the project supports 5.20)."""
    return dict(text=f"{text}<br><sup>{sub}</sup>")


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
    ``"uniform"`` a uniform sample. The subtitle says what is shown (in the title itself a
    long text would be cut off on a narrow screen). Colour = log(1 + count) when
    ``log_scale``.

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
        Figure title (the subtitle says which rows and columns are shown).
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
            shapes.append(dict(type="line", x0=-0.5, x1=cols.size - 0.5, y0=y, y1=y,
                               line=dict(color="crimson", width=1.5)))
    if col_labels is not None:
        for x in _boundaries(np.asarray(col_labels)[cols]):
            shapes.append(dict(type="line", y0=-0.5, y1=rows.size - 0.5, x0=x, x1=x,
                               line=dict(color="crimson", width=1.5)))
    sub_text = f"shown: a random {rows.size} of {n} rows × {what}" if sampled else f"all {n} rows × {m} columns"
    fig.update_layout(title=_titled(title, sub_text), shapes=shapes, height=500,
                      margin=dict(l=0, r=0, t=70, b=0),
                      xaxis=dict(title="columns (grouped by column cluster)", showticklabels=False),
                      yaxis=dict(title="rows (grouped by row cluster)", showticklabels=False, autorange="reversed"))
    return fig


def contingency_heatmaps(tables, normalize=True, title="Contingency tables"):
    """Heatmaps side by side of the tables in ``tables`` (dict name -> K×L array).

    Each has its values written in the cells (3 significant digits). With ``normalize`` each
    table is divided by its total (so a released noisy table and the exact one are on the same
    scale). All panels share one colour scale (0 to the largest value of any panel), so the
    one colour bar, on the right, reads for every panel.

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
    zs = []
    for name in names:
        T = np.asarray(tables[name], dtype=np.float64)
        zs.append(T / T.sum() if normalize and T.sum() > 0 else T)
    zmax = max([float(Z.max()) for Z in zs if Z.size] + [1e-12])
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.08)
    for i, Z in enumerate(zs, start=1):
        text = np.vectorize(lambda v: f"{v:.3g}")(Z) if 0 < Z.size <= 400 else None
        fig.add_trace(go.Heatmap(z=Z, x=np.arange(1, Z.shape[1] + 1), y=np.arange(1, Z.shape[0] + 1), text=text,
                                 texttemplate="%{text}" if text is not None else None, colorscale="Blues",
                                 showscale=(i == len(names)), zmin=0, zmax=zmax,
                                 colorbar=dict(title="fraction of<br>the total" if normalize else "count"),
                                 hovertemplate="row cluster %{y}, column cluster %{x}<br>%{z:.3g}<extra></extra>"),
                      1, i)
        fig.update_xaxes(title_text="column cluster", dtick=1, row=1, col=i)
        fig.update_yaxes(title_text="row cluster", dtick=1, autorange="reversed", row=1, col=i)
    fig.update_layout(title=title + (" (fractions of the total)" if normalize else ""), height=400,
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
    counts, coloured by co-cluster, the changed cell framed in red) and the two tables (cells
    annotated with their counts). The colours only tell the co-clusters apart; the numbers
    are in the cells, so there is no colour bar.
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
        Four panels: A and T above, A′ and T′ below.
    """
    A = np.asarray(A, dtype=float)
    A_prime = np.asarray(A_prime, dtype=float)
    # A above A′ (and T above T′): the changed cell and the moved column line up for the eye;
    # side by side in one row the axis titles of four panels collide
    fig = make_subplots(rows=2, cols=2, column_widths=[0.62, 0.38], horizontal_spacing=0.14, vertical_spacing=0.22,
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
                                 hoverinfo="skip"), col + 1, 1)
        fig.update_yaxes(autorange="reversed", title_text="customer · row cluster", row=col + 1, col=1)
        fig.update_xaxes(title_text="product · column cluster", row=col + 1, col=1)
        T = np.asarray(T, dtype=float)
        fig.add_trace(go.Heatmap(z=T, x=[f"C{l + 1}" for l in range(T.shape[1])],
                                 y=[f"R{k + 1}" for k in range(T.shape[0])], text=T.astype(int).astype(str),
                                 texttemplate="%{text}", colorscale="Blues", showscale=False, hoverinfo="skip"),
                      col + 1, 2)
        fig.update_yaxes(autorange="reversed", title_text="row cluster", row=col + 1, col=2)
        fig.update_xaxes(title_text="column cluster", row=col + 1, col=2)
    for i, j in diff:
        for row in (1, 2):
            fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                          line=dict(color="crimson", width=3), row=row, col=1)
    fig.update_layout(height=640, margin=dict(l=0, r=0, t=105, b=0),
                      title=_titled("Fig. 1: one extra purchase changes the column clusters and the table",
                                    "cells: units bought; colour: co-cluster; red frame: the cell that differs"))
    return fig


def tau_history(history, title="τ of each released table"):
    """τ (columns → rows) and τ (rows → columns), the papers' τ̂_{R|C} and τ̂_{C|R}, along
    the half-steps of a run.

    The half-steps of a DP-τCC run (``DPTauCC.history_``) or the phases of Fast-τCC
    (``FastTauCC.history_``).

    Parameters
    ----------
    history : list of dict
        Entries with ``tau_rc``, ``tau_cr`` and ``iteration``/``round`` and ``after``/``mode``.
    title : str, default="τ of each released table"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Two lines against the step.
    """
    steps = [f"{h.get('iteration', h.get('round'))}·{h.get('after', h.get('mode'))}" for h in history]
    fig = go.Figure()
    for key, name, line in (("tau_rc", TAU_RC_LABEL, dict(color="#1f77b4")),
                            ("tau_cr", TAU_CR_LABEL, dict(color="#ff7f0e", dash="dash"))):
        fig.add_trace(go.Scatter(x=steps, y=[h[key] for h in history], mode="lines+markers", name=name, line=line,
                                 hovertemplate="%{x}: %{y:.3g}<extra>" + name + "</extra>"))
    # the legend sits above the plot, right of the title: τ climbs towards the top right corner
    fig.update_layout(title=title, xaxis_title="iteration · half-step (after the column or row update)",
                      yaxis=dict(title="τ (0 = no association, 1 = perfect)", rangemode="tozero"), height=340,
                      legend=dict(orientation="h", x=1, xanchor="right", y=1.02, yanchor="bottom"),
                      margin=dict(l=0, r=0, t=60, b=0))
    return fig


# ----------------------------------------------------------------------------- Fig. 1 frequencies
def partition_label(key):
    """A released column partition in words, from :func:`dpcore.cocluster.examples.partition_key`:
    ``"123|456"`` → ``"1 2 3 | 4 5 6"``, ``"12|456/3"`` → ``"1 2 | 4 5 6 (3: none)"``. Item
    numbers are single digits in those keys (Fig. 1 has 6 products).

    Parameters
    ----------
    key : str
        A partition key.

    Returns
    -------
    str
    """
    groups, _, none = key.partition("/")
    text = " | ".join(" ".join(g) for g in groups.split("|") if g)
    return text + (f" ({' '.join(none)}: none)" if none else "")


def frequency_band_rows(rows, epsilon, top=10, rest=True):
    """The ``top`` most frequent released partitions of a two-matrix simulation, plus (with
    ``rest``) one row "all other …" for the rest (the DP bound holds for any set of outputs,
    so also for their union), each with the band that ε-DP allows for the second matrix's
    frequency.

    DP says that for every set S of outputs P[S | A′] ≤ e^ε P[S | A] and
    P[S | A] ≤ e^ε P[S | A′], i.e. e^−ε P[S | A] ≤ P[S | A′] ≤ e^ε P[S | A]: the band is
    ``[e^−ε f_A, min(1, e^ε f_A)]`` around the frequency f_A on A. Simulated frequencies stay
    inside it up to sampling error.

    Parameters
    ----------
    rows : list of dict
        Keys "partition", "freq_A", "freq_A_prime", sorted by total frequency (as returned
        by :func:`dpcore.cocluster.examples.column_partition_frequencies`).
    epsilon : float
        The ε of the simulated runs.
    top : int, default=10
        Partitions shown one by one.
    rest : bool, default=True
        Add the row "all other …" (when there are more than ``top`` partitions).

    Returns
    -------
    list of dict
        Keys "label", "freq_A", "freq_A_prime", "low", "high".
    """
    shown = [dict(label=partition_label(r["partition"]), freq_A=r["freq_A"], freq_A_prime=r["freq_A_prime"])
             for r in rows[:top]]
    others = rows[top:]
    if rest and others:
        shown.append(dict(label=f"all other {len(others)}", freq_A=float(sum(r["freq_A"] for r in others)),
                          freq_A_prime=float(sum(r["freq_A_prime"] for r in others))))
    for r in shown:
        r["low"] = float(np.exp(-epsilon) * r["freq_A"])
        r["high"] = float(min(1.0, np.exp(epsilon) * r["freq_A"]))
    return shown


def partition_frequency_band(rows, epsilon, n_runs, top=10, title=None):
    """Bars of how often each column partition was released on A and on A′ (Fig. 1), with
    the band ε-DP allows for A′ around A's frequency (:func:`frequency_band_rows`): a
    student sees every A′ bar end inside its grey band, up to the whiskers (±2 binomial
    standard errors of the simulation, √(f(1−f)/runs)).

    Only the ``top`` most frequent partitions are drawn (their union with the rest, "all
    other", would dwarf them; it belongs in the table next to the figure). The y axis fits
    the bars and the bands (a band's top is capped at 1, as a frequency is; the hover shows
    both ends).

    Parameters
    ----------
    rows : list of dict
        As for :func:`frequency_band_rows`.
    epsilon : float
        The ε of the simulated runs.
    n_runs : int
        Runs on each matrix (for the whiskers).
    top : int, default=10
        Partitions drawn.
    title : str, optional
        Figure title; by default it names ε.

    Returns
    -------
    plotly.graph_objects.Figure
        Three bar traces: the band (name starts with "allowed on A′"), "frequency on A" and
        "frequency on A′".
    """
    data = frequency_band_rows(rows, epsilon, top, rest=False)
    x = np.arange(len(data), dtype=float)
    fa = np.array([r["freq_A"] for r in data])
    fb = np.array([r["freq_A_prime"] for r in data])
    low = np.array([r["low"] for r in data])
    high = np.minimum(np.array([r["high"] for r in data]), 1.0)     # a frequency is at most 1: so is its band

    def whisker(f):
        return dict(type="data", array=2 * np.sqrt(f * (1 - f) / n_runs), color="#333", thickness=1.2, width=3)

    fig = go.Figure()
    fig.add_trace(go.Bar(x=x + 0.2, y=high - low, base=low, width=0.44,
                         name="allowed on A′ by ε-DP: e<sup>−ε</sup> to e<sup>ε</sup> × the frequency on A",
                         marker=dict(color="rgba(120,120,120,0.30)", line=dict(color="rgba(80,80,80,0.8)", width=1)),
                         customdata=np.c_[low, high], hovertemplate="allowed on A′: %{customdata[0]:.3g} to "
                                                                    "%{customdata[1]:.3g}<extra></extra>"))
    fig.add_trace(go.Bar(x=x - 0.2, y=fa, width=0.36, name="frequency on A", marker_color="#1f77b4",
                         error_y=whisker(fa), hovertemplate="on A: %{y:.3g}<extra></extra>"))
    fig.add_trace(go.Bar(x=x + 0.2, y=fb, width=0.22, name="frequency on A′", marker_color="#ff7f0e",
                         error_y=whisker(fb), hovertemplate="on A′: %{y:.3g}<extra></extra>"))
    bars = np.r_[fa + 2 * np.sqrt(fa * (1 - fa) / n_runs), fb + 2 * np.sqrt(fb * (1 - fb) / n_runs)]
    top_y = min(1.0, max(1.3 * float(np.max(bars, initial=0)), 1.05 * float(np.max(high, initial=0)), 1e-3))
    fig.update_layout(
        title=_titled(title or f"How often DP-τCC releases each product grouping (ε = {epsilon:.3g})",
                      f"{n_runs} runs on each matrix; whiskers: ±2 standard errors of the simulation"),
        barmode="overlay", height=470, margin=dict(l=0, r=0, t=80, b=0),
        xaxis=dict(title="released column partition (products 1–6; | separates the groups)", tickmode="array",
                   tickvals=x, ticktext=[r["label"] for r in data], tickangle=-35),
        yaxis=dict(title="frequency (share of the runs)", range=[0, top_y]),
        legend=dict(orientation="h", x=0, y=-0.45, yanchor="top"))
    return fig
