"""Privacy–utility curves from a sweep DataFrame (dpcore.experiments)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..experiments import summarize
from .data import PALETTE

__all__ = ["privacy_utility_figure", "curves_figure"]

METRIC_TITLES = {"d_W": "Wasserstein distance d_W to the truth", "cost": "k-means subspace cost (eq. 3)",
                 "d_W_class": "d_W to the classes' top-q subspaces",
                 "nmi": "NMI with the true labels", "accuracy": "clustering accuracy",
                 "objective": "k-means objective", "objective_ratio": "objective / objective of the true centres",
                 "ratio_kmeanspp": "objective / k-means++ objective", "tau_rc": "τ̂_{R|C} of the released T"}


def _rgba(hex_color, alpha):
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _band_and_median(fig, x, part, color, name, show_legend, row, col, dash="solid", hover=""):
    """The inter-quartile band and the median line of one group (``part``: rows of
    :func:`~dpcore.experiments.summarize` sorted by ``x``) in one panel."""
    fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[part["q75"], part["q25"][::-1]], fill="toself",
                             fillcolor=_rgba(color, 0.18), line=dict(width=0), hoverinfo="skip",
                             legendgroup=name, showlegend=False), row, col)
    fig.add_trace(go.Scatter(x=x, y=part["median"], mode="lines+markers", name=name, legendgroup=name,
                             line=dict(color=color, dash=dash), showlegend=show_legend,
                             customdata=np.c_[part.iloc[:, 0], part["runs"]],
                             hovertemplate=hover + "median %{y:.4g}<br>%{customdata[1]} runs"), row, col)


def _log_axes(fig, metric, j, log_y):
    if log_y or (log_y is None and metric in ("cost", "objective")):
        fig.update_yaxes(type="log", row=1, col=j)


def privacy_utility_figure(df, metrics, title="", log_y=None):
    """One panel per metric: median and inter-quartile band against log10 ε per algorithm.

    One line for each private algorithm; non-private algorithms (ε = NaN) as horizontal
    dashed lines at their median.

    Parameters
    ----------
    df : pandas.DataFrame
        Sweep results (:mod:`dpcore.experiments`), with columns ``algorithm``, ``epsilon``
        and the metrics.
    metrics : str or sequence of str
        Metric column(s), one panel each.
    title : str, default=""
        Figure title (default: "Privacy–utility: median and inter-quartile band").
    log_y : bool or None, default=None
        Log y axes; None = log for ``cost`` and ``objective`` only.

    Returns
    -------
    plotly.graph_objects.Figure
        The panels.
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=[METRIC_TITLES.get(m, m) for m in metrics])
    algorithms = list(dict.fromkeys(df["algorithm"]))
    eps_all = df["epsilon"].dropna()
    x_span = (np.log10(eps_all.min()), np.log10(eps_all.max())) if len(eps_all) else (0.0, 1.0)
    for j, m in enumerate(metrics, start=1):
        s = summarize(df, m)
        for i, alg in enumerate(algorithms):
            color = PALETTE[i % len(PALETTE)]
            part = s[s["algorithm"] == alg]
            if part["epsilon"].isna().all():
                y = float(part["median"].iloc[0])
                fig.add_trace(go.Scatter(x=list(x_span), y=[y, y], mode="lines", name=f"{alg} (non-private)",
                                         line=dict(color=color, dash="dash"), legendgroup=alg, showlegend=j == 1),
                              1, j)
                continue
            part = part.sort_values("epsilon")[["epsilon", "median", "q25", "q75", "runs"]]
            _band_and_median(fig, np.log10(part["epsilon"].to_numpy()), part, color, alg, j == 1, 1, j,
                             hover="ε=%{customdata[0]:.3g}<br>")
        fig.update_xaxes(title_text="log10 ε", row=1, col=j)
        _log_axes(fig, m, j, log_y)
    fig.update_layout(title=title or "Privacy–utility: median and inter-quartile band", height=430,
                      margin=dict(l=0, r=0, t=70, b=0))
    return fig


def curves_figure(df, x, metrics, group="algorithm", title="", x_title=None, group_name=None, log_x=False,
                  log_y=None):
    """Median and inter-quartile band of each of ``metrics`` against the column ``x``.

    One panel per metric, one line per value of ``group`` (e.g. the objective against k per
    method, or τ̂ against the number of iterations per ε). Lines of non-private methods
    (column ``private`` False) are dashed.

    Parameters
    ----------
    df : pandas.DataFrame
        Sweep results.
    x : str
        Column on the x axis.
    metrics : str or sequence of str
        Metric column(s), one panel each.
    group : str, default="algorithm"
        Column whose values get one line each.
    title : str, default=""
        Figure title.
    x_title : str, optional
        x-axis title (default: ``x``).
    group_name : str, optional
        Name of the group in numeric line labels (default: ``group``).
    log_x : bool, default=False
        Log x axis.
    log_y : bool or None, default=None
        Log y axes; None = log for ``cost`` and ``objective`` only.

    Returns
    -------
    plotly.graph_objects.Figure
        The panels.

    Raises
    ------
    ValueError
        If ``x``, ``group`` or a metric is not a column of ``df``.
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    for col in (x, group, *metrics):
        if col not in df.columns:
            raise ValueError(f"x, metrics and group must be columns of the results; {col!r} is not")
    private = df.groupby(group, sort=False)["private"].first() if "private" in df.columns else None
    name = group_name or group
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=[METRIC_TITLES.get(m, m) for m in metrics])
    for j, m in enumerate(metrics, start=1):
        s = summarize(df, m, by=(group, x))
        for i, val in enumerate(dict.fromkeys(df[group])):
            part = s[s[group] == val].sort_values(x)[[x, "median", "q25", "q75", "runs"]]
            label = f"{name} = {val:g}" if isinstance(val, (int, float, np.number)) else str(val)
            dash = "dash" if private is not None and not bool(private[val]) else "solid"
            _band_and_median(fig, part[x].to_numpy(dtype=float), part, PALETTE[i % len(PALETTE)], label, j == 1,
                             1, j, dash=dash, hover=f"{x}=%{{customdata[0]:.3g}}<br>")
        fig.update_xaxes(title_text=x_title or x, type="log" if log_x else "linear", row=1, col=j)
        _log_axes(fig, m, j, log_y)
    fig.update_layout(title=title or None, height=430, margin=dict(l=0, r=0, t=70 if title else 40, b=0))
    return fig
