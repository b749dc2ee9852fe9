"""Figures of an ε ladder (:mod:`dpcore.lab.ladders`): one number of every rung against ε.

:func:`ladder_curve` draws a ladder's whole range at a glance (e.g. the k-means objective ÷
k-means++ at every ε), beside the figure of the rung a page's slider chose. It does not depend
on the chosen ε, so that the page never redraws it when the slider moves.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

__all__ = ["ladder_curve"]


def ladder_curve(epsilons, values, y_title, title="", log_y=False, level=None, level_name="", height=420):
    """One number per rung of a ladder against ε (log axis), as a line with markers.

    Parameters
    ----------
    epsilons : sequence of float
        The ladder, increasing.
    values : sequence of float
        One value per ε (NaN: not drawn).
    y_title : str
        What the values are.
    title : str, default=""
        Figure title.
    log_y : bool, default=False
        A log y axis (for ratios spanning decades).
    level : float, optional
        A horizontal dashed line (e.g. 1 for "as good as the non-private reference").
    level_name : str, default=""
        The legend's name of that line.
    height : int, default=420
        Figure height in pixels.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    ValueError
        If the lengths differ or the ladder is empty.
    """
    eps = np.asarray(epsilons, dtype=float)
    y = np.asarray(values, dtype=float)
    if eps.size == 0 or eps.shape != y.shape:
        raise ValueError(f"epsilons and values must be non-empty and of the same length; got {eps.size} and {y.size}")
    fig = go.Figure(go.Scatter(x=eps, y=y, mode="lines+markers", name="one run per ε (public seed)",
                               line=dict(color="#1f77b4"), hovertemplate="ε = %{x:g}<br>%{y:.3g}<extra></extra>"))
    if level is not None:
        fig.add_trace(go.Scatter(x=[eps[0], eps[-1]], y=[level, level], mode="lines", name=level_name or str(level),
                                 line=dict(color="#d62728", dash="dash", width=1), hoverinfo="skip"))
    ticks = [e for e in eps if abs(np.log10(e) - round(np.log10(e))) < 1e-9] or list(eps)
    fig.update_xaxes(type="log", title_text="ε (log scale)", tickvals=ticks, ticktext=[f"{e:g}" for e in ticks],
                     tickangle=0)
    # a log axis: one labelled tick per power of ten (plotly labels its minor ticks "2, 5" without their power)
    fig.update_yaxes(type="log" if log_y else "linear", title_text=y_title, **({"dtick": 1} if log_y else {}))
    fig.update_layout(title=title or None, height=height, margin=dict(l=0, r=0, t=60 if title else 30, b=0),
                      legend=dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0))
    return fig
