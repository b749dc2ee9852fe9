"""Figure of a privacy audit: the statistic's distributions on D and D′ and the threshold.

Layout decisions (the figure is projected and exported for slides): the title has two lines
(the question, then ε̂ and the claim) so it is not cut on a narrow screen; the labels "test says
D" and "threshold" sit above the plot area, on opposite sides of the threshold line (inside it
they ran into each other and into tall bars); the legend is horizontal above the plot, right
aligned; a long x-axis title is broken into lines of at most :data:`AXIS_TITLE_WIDTH`
characters instead of running off both edges.
"""
from __future__ import annotations

import textwrap

import numpy as np
import plotly.graph_objects as go

__all__ = ["audit_histograms", "AXIS_TITLE_WIDTH"]

#: longest line of the x-axis title, in characters (longer titles wrap)
AXIS_TITLE_WIDTH = 90


def audit_histograms(result, statistic_name="statistic"):
    """Overlaid histograms of the test statistic on D and on D′ (all runs).

    Drawn with the chosen threshold and the side of it where the test says "D" shaded; the
    title gives ε̂ and the claimed ε.

    Parameters
    ----------
    result : AuditResult
        An audit result (:class:`dpcore.lab.audit.AuditResult`); uses ``stats_a``, ``stats_b``,
        ``threshold``, ``orientation``, ``epsilon_lower`` and ``nominal_epsilon``.
    statistic_name : str, default="statistic"
        Title of the x axis (wrapped at :data:`AXIS_TITLE_WIDTH` characters).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.
    """
    a, b = result.stats_a, result.stats_b
    lo, hi = float(np.min(np.r_[a, b])), float(np.max(np.r_[a, b]))
    size = (hi - lo) / 40 if hi > lo else 1.0
    fig = go.Figure()
    for data, name, color in ((a, "runs on D", "#636EFA"), (b, "runs on D′ (neighbour)", "#EF553B")):
        fig.add_trace(go.Histogram(x=data, name=name, opacity=0.55, marker_color=color,
                                   xbins=dict(start=lo - size, end=hi + size, size=size)))
    right = ">=" in result.orientation            # the test says "D" right of the threshold
    said_d = (result.threshold, hi + size) if right else (lo - size, result.threshold)
    fig.add_vrect(x0=said_d[0], x1=said_d[1], fillcolor="#636EFA", opacity=0.08, line_width=0)
    fig.add_vline(x=result.threshold, line_dash="dash", line_color="black")
    labels = ((' → test says "D"', "left"), ("threshold ", "right")) if right else \
        (('test says "D" ← ', "right"), (" threshold", "left"))
    for text, anchor in labels:
        fig.add_annotation(x=result.threshold, xref="x", y=1.0, yref="paper", yanchor="bottom", xanchor=anchor,
                           text=text, showarrow=False, font=dict(size=12))
    claim = "no claim" if result.nominal_epsilon is None else f"claimed ε = {result.nominal_epsilon:.3g}"
    fig.update_layout(barmode="overlay", height=430, margin=dict(l=60, r=20, t=110, b=10),
                      xaxis_title="<br>".join(textwrap.wrap(statistic_name, AXIS_TITLE_WIDTH)),
                      yaxis_title="runs",
                      legend=dict(orientation="h", yanchor="bottom", y=1.1, xanchor="right", x=1),
                      title=dict(text=f"Can a test tell D from D′ by looking at the release?<br>"
                                      f"<span style='font-size:14px'>ε̂ = {result.epsilon_lower:.3g} ({claim})</span>",
                                 y=0.97, yanchor="top"))
    return fig
