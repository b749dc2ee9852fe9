"""Privacy–utility curves from a sweep DataFrame (dpcore.lab.sweeps).

Decisions (for a figure shown to a class):

- **ε on a log axis** with tick labels only at round values: decades, or 1-2-5 when the range
  spans little more than a decade (never plotly's default minor labels "2, 3, …, 9", which read
  as "0.1, 9, 8, 7, 6" on a projector). See :func:`log_ticks`.
- **Log y only where the values span decades**: for the metrics that are positive and
  unbounded (costs, objectives and their ratios), a panel gets a log y axis when its values
  span at least a factor :data:`LOG_SPAN` (otherwise a linear one; a log axis over a factor
  of two has no round tick values to show). ``log_y=True`` / ``False`` forces it.
- **Every axis has a title**; the y title says which way is better.
- **Non-private methods** (ε = NaN) are horizontal dashed lines at their median across the
  whole ε range: the utility that no privacy buys.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..lab.sweeps import summarize
from .data import PALETTE

__all__ = ["privacy_utility_figure", "curves_figure", "log_ticks", "METRIC_TITLES", "METRIC_AXIS"]

#: panel titles
METRIC_TITLES = {"d_W": "distance d_W of the released subspaces to the true ones",
                 "cost": "k-means subspace cost (eq. 3)",
                 "d_W_class": "d_W to each class's best-fitting subspace",
                 "nmi": "NMI with the true labels", "accuracy": "clustering accuracy",
                 "objective": "k-means objective", "objective_ratio": "objective ÷ objective of the true centres",
                 "ratio_kmeanspp": "objective ÷ k-means++ objective",
                 "tau_rc": "τ (rows given columns) of the released table"}
#: y-axis titles: short, with the direction that is better
METRIC_AXIS = {"d_W": "d_W (lower is better)", "cost": "cost (lower is better)",
               "d_W_class": "d_W (lower is better)", "nmi": "NMI (higher is better)",
               "accuracy": "accuracy (higher is better)", "objective": "objective (lower is better)",
               "objective_ratio": "ratio (1 = true centres)", "ratio_kmeanspp": "ratio (1 = k-means++)",
               "tau_rc": "τ of the table (higher: more structure)"}
#: metrics that are positive and unbounded: a log y axis when their values span decades
LOG_CANDIDATES = ("cost", "objective", "objective_ratio", "ratio_kmeanspp")
#: a panel of :data:`LOG_CANDIDATES` gets a log y axis when max / min of its values is at least this
LOG_SPAN = 10.0
#: at most this many labelled ticks on a log axis
MAX_LOG_TICKS = 8


def _rgba(hex_color, alpha):
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _tick_text(v):
    """A tick label: 0.1, 2, 500, 2000; beyond [10⁻⁴, 10⁵) as 10<sup>k</sup> or 2·10<sup>k</sup>."""
    if 1e-4 <= v < 1e5:
        return f"{v:g}"           # tick values are round (1-2-5 or three significant digits)
    k = math.floor(math.log10(v) + 1e-9)
    m = float(f"{v / 10.0 ** k:.3g}")
    return ("" if m == 1 else f"{m:g}·") + f"10<sup>{k}</sup>"


def log_ticks(lo, hi, max_ticks=MAX_LOG_TICKS):
    """Tick values and labels for a log axis showing the positive range [lo, hi].

    Decades (0.1, 1, 10, …) when at least three fall in the range (every second or third one
    when there are more than ``max_ticks``); otherwise 1, 2, 5 times a power of ten; when even
    those give fewer than two ticks (a range within a factor of about two), ``lo`` and ``hi``
    themselves at three significant digits.

    Parameters
    ----------
    lo, hi : float
        The range, 0 < lo ≤ hi.
    max_ticks : int, default=8

    Returns
    -------
    (list of float, list of str)
        Tick values and their labels.
    """
    lo, hi = float(lo), float(hi)
    if not (lo > 0 and hi >= lo and math.isfinite(hi)):
        raise ValueError(f"lo and hi must satisfy 0 < lo <= hi < inf; got {lo}, {hi}")
    eps = 1e-9
    k0, k1 = math.floor(math.log10(lo) + eps), math.ceil(math.log10(hi) - eps)
    decades = [10.0 ** k for k in range(k0, k1 + 1) if lo * (1 - eps) <= 10.0 ** k <= hi * (1 + eps)]
    if len(decades) >= 3:
        step = math.ceil(len(decades) / max_ticks)
        vals = decades[::step]
    else:
        vals = [m * 10.0 ** k for k in range(k0, k1 + 1) for m in (1, 2, 5)
                if lo * (1 - eps) <= m * 10.0 ** k <= hi * (1 + eps)]
        if len(vals) > max_ticks:
            vals = decades
        if len(vals) < 2:
            vals = sorted({float(f"{lo:.3g}"), float(f"{hi:.3g}")})
    return vals, [_tick_text(v) for v in vals]


def _set_log_axis(fig, axis, values, row, col, title):
    """Make ``axis`` ("x" or "y") of panel (row, col) a log axis with :func:`log_ticks` over the
    positive finite ``values``."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    update = fig.update_xaxes if axis == "x" else fig.update_yaxes
    if v.size == 0:
        update(type="log", title_text=title, row=row, col=col)
        return
    vals, text = log_ticks(v.min(), v.max())
    update(type="log", tickmode="array", tickvals=vals, ticktext=text, minor=dict(showgrid=False),
           title_text=title, row=row, col=col)


def _wants_log(metric, values, log_y):
    """Whether a panel gets a log y axis (see the module docstring)."""
    if log_y is not None:
        return bool(log_y)
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return metric in LOG_CANDIDATES and v.size > 0 and v.min() > 0 and v.max() / v.min() >= LOG_SPAN


def _band_and_median(fig, x, part, color, name, show_legend, row, col, dash="solid", hover=""):
    """The inter-quartile band and the median line of one group (``part``: rows of
    :func:`~dpcore.lab.sweeps.summarize` sorted by ``x``) in one panel."""
    fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[part["q75"], part["q25"][::-1]], fill="toself",
                             mode="lines", fillcolor=_rgba(color, 0.18), line=dict(width=0), hoverinfo="skip",
                             legendgroup=name, showlegend=False), row, col)
    fig.add_trace(go.Scatter(x=x, y=part["median"], mode="lines+markers", name=name, legendgroup=name,
                             line=dict(color=color, dash=dash), showlegend=show_legend,
                             customdata=np.c_[part.iloc[:, 0], part["runs"]],
                             hovertemplate=hover + "median %{y:.4g}<br>%{customdata[1]} runs"), row, col)


def _layout(fig, title):
    """Height, margins and a legend below the panels (it never covers a curve)."""
    fig.update_layout(title=title or None, height=470, margin=dict(l=10, r=10, t=80 if title else 50, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
                      hoverlabel=dict(namelength=-1))
    fig.update_annotations(font_size=14)   # the panel titles


def privacy_utility_figure(df, metrics, title="", log_y=None):
    """One panel per metric: median and inter-quartile band against ε (log axis) per algorithm.

    One line for each private algorithm; non-private algorithms (ε = NaN) as horizontal
    dashed lines at their median across the ε range; an algorithm run with ε whose runs released
    nothing private (column ``released_private`` False: a non-private start, a radius read off
    the data) is dotted, so it does not look like the private ones.

    Parameters
    ----------
    df : pandas.DataFrame
        Sweep results (:mod:`dpcore.lab.sweeps`), with columns ``algorithm``, ``epsilon``
        and the metrics.
    metrics : str or sequence of str
        Metric column(s), one panel each.
    title : str, default=""
        Figure title (default: "Privacy–utility: median and inter-quartile band").
    log_y : bool or None, default=None
        Log y axes; None = log where the values span decades (see the module docstring).

    Returns
    -------
    plotly.graph_objects.Figure
        The panels.
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=[METRIC_TITLES.get(m, m) for m in metrics],
                        horizontal_spacing=0.12 if len(metrics) > 1 else 0.02)
    algorithms = list(dict.fromkeys(df["algorithm"]))
    eps_all = df["epsilon"].dropna().to_numpy(dtype=float)
    x_span = [eps_all.min(), eps_all.max()] if eps_all.size else [0.1, 10.0]
    if x_span[0] == x_span[1]:                   # one ε: a short line around it
        x_span = [x_span[0] / 2, x_span[0] * 2]
    for j, m in enumerate(metrics, start=1):
        s = summarize(df, m)
        for i, alg in enumerate(algorithms):
            color = PALETTE[i % len(PALETTE)]
            part = s[s["algorithm"] == alg]
            if part["epsilon"].isna().all():
                y, q25, q75 = (float(part[c].iloc[0]) for c in ("median", "q25", "q75"))
                fig.add_trace(go.Scatter(x=x_span, y=[y, y], mode="lines", name=f"{alg} (non-private)",
                                         line=dict(color=color, dash="dash", width=2.5), legendgroup=alg,
                                         showlegend=j == 1,
                                         hovertemplate=f"{alg} (non-private, no ε)<br>median {y:.4g}"
                                                       f"<br>quartiles {q25:.4g} – {q75:.4g}<extra></extra>"),
                              1, j)
                continue
            part = part.sort_values("epsilon")[["epsilon", "median", "q25", "q75", "runs"]]
            released = ("released_private" not in df.columns
                        or bool(df.loc[df["algorithm"] == alg, "released_private"].astype(bool).any()))
            _band_and_median(fig, part["epsilon"].to_numpy(dtype=float), part, color, alg, j == 1, 1, j,
                             dash="solid" if released else "dot", hover="ε=%{customdata[0]:.3g}<br>")
        _set_log_axis(fig, "x", x_span, 1, j, "ε (log scale; larger = less privacy)")
        y_vals = np.r_[s["median"], s["q25"], s["q75"]]
        if _wants_log(m, y_vals, log_y):
            _set_log_axis(fig, "y", y_vals, 1, j, METRIC_AXIS.get(m, m) + ", log scale")
        else:
            fig.update_yaxes(title_text=METRIC_AXIS.get(m, m), row=1, col=j)
    _layout(fig, title or "Privacy–utility: median and inter-quartile band")
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
        Log x axis (ticks as in :func:`log_ticks`).
    log_y : bool or None, default=None
        Log y axes; None = log where the values span decades (see the module docstring).

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
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=[METRIC_TITLES.get(m, m) for m in metrics],
                        horizontal_spacing=0.12 if len(metrics) > 1 else 0.02)
    for j, m in enumerate(metrics, start=1):
        s = summarize(df, m, by=(group, x))
        for i, val in enumerate(dict.fromkeys(df[group])):
            part = s[s[group] == val].sort_values(x)[[x, "median", "q25", "q75", "runs"]]
            label = f"{name} = {_tick_text(float(f'{val:.3g}'))}" if isinstance(val, (int, float, np.number)) else str(val)
            dash = "dash" if private is not None and not bool(private[val]) else "solid"
            _band_and_median(fig, part[x].to_numpy(dtype=float), part, PALETTE[i % len(PALETTE)], label, j == 1,
                             1, j, dash=dash, hover=f"{x}=%{{customdata[0]:.3g}}<br>")
        if log_x:
            _set_log_axis(fig, "x", df[x], 1, j, (x_title or x) + " (log scale)")
        else:
            fig.update_xaxes(title_text=x_title or x, row=1, col=j)
        y_vals = np.r_[s["median"], s["q25"], s["q75"]]
        if _wants_log(m, y_vals, log_y):
            _set_log_axis(fig, "y", y_vals, 1, j, METRIC_AXIS.get(m, m) + ", log scale")
        else:
            fig.update_yaxes(title_text=METRIC_AXIS.get(m, m), row=1, col=j)
    _layout(fig, title)
    return fig
