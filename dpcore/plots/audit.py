"""Figure of a privacy audit: the statistic's distributions on D and D′ and the threshold."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

__all__ = ["audit_histograms"]


def audit_histograms(result, statistic_name="statistic"):
    """Overlaid histograms of the test statistic on D and on D′ (all runs).

    Drawn with the chosen threshold and the side of it where the test says "D" shaded; the
    title gives ε̂ and the claimed ε.

    Parameters
    ----------
    result : AuditResult
        An audit result (:class:`dpcore.audit.AuditResult`); uses ``stats_a``, ``stats_b``,
        ``threshold``, ``orientation``, ``epsilon_lower`` and ``nominal_epsilon``.
    statistic_name : str, default="statistic"
        Title of the x axis.

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
    said_d = (result.threshold, hi + size) if ">=" in result.orientation else (lo - size, result.threshold)
    fig.add_vrect(x0=said_d[0], x1=said_d[1], fillcolor="#636EFA", opacity=0.08, line_width=0,
                  annotation_text='test says "D"', annotation_position="top left")
    fig.add_vline(x=result.threshold, line_dash="dash", line_color="black",
                  annotation_text="threshold", annotation_position="top right")
    claim = "no claim" if result.nominal_epsilon is None else f"claimed ε = {result.nominal_epsilon:.3g}"
    fig.update_layout(barmode="overlay", height=380, margin=dict(l=0, r=0, t=50, b=0),
                      xaxis_title=statistic_name, yaxis_title="runs",
                      title=f"Can a test tell D from D′ by looking at the release?  ε̂ = {result.epsilon_lower:.3g} "
                            f"({claim})")
    return fig
