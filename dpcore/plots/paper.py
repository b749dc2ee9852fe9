"""The papers' figures drawn from their result tables (``python -m dpcore.reproduce`` and the
Paper figures page share this one path, so a shipped CSV gives the figure the command drew).

A panel's *plot spec* is a JSON-able dict written next to its CSV (``panels.json``):

- ``{"kind": "privacy_utility", "metrics": [...], "title": ...}`` -
  :func:`dpcore.plots.experiments.privacy_utility_figure`;
- ``{"kind": "curves", "x": ..., "metrics": [...], "group": ..., "title": ..., plus the optional
  keywords of :func:`dpcore.plots.experiments.curves_figure`}``;
- ``{"kind": "traces", "metrics": [...], "burn_in": {ε: sweeps}, "title": ...}`` -
  :func:`dpcore.plots.gibbs.traces_grid` from rows (epsilon, chain, sweep, trace columns).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["PLOT_KINDS", "panel_figure", "traces_from_rows"]

PLOT_KINDS = ("privacy_utility", "curves", "traces")
_CURVES_KEYS = ("group", "title", "x_title", "group_name", "log_x", "log_y")


def traces_from_rows(df: pd.DataFrame, metrics):
    """Fig. 3 traces from tidy rows: (runs, sweeps) for :func:`~dpcore.plots.gibbs.traces_grid`.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``epsilon``, ``chain``, ``sweep`` and the trace columns.
    metrics : sequence of str
        Trace columns to collect (absent ones are skipped).

    Returns
    -------
    runs : dict float -> dict str -> ndarray (n_chains, n_points)
        Traces per ε (in order of appearance).
    sweeps : dict float -> ndarray (n_points,)
        The sweep number of each column.
    """
    runs, sweeps = {}, {}
    for eps, part in df.groupby("epsilon", sort=False):
        wide = {m: part.pivot(index="chain", columns="sweep", values=m) for m in metrics if m in part}
        key = float(eps)
        runs[key] = {m: w.to_numpy(dtype=float) for m, w in wide.items()}
        sweeps[key] = next(iter(wide.values())).columns.to_numpy()
    return runs, sweeps


def panel_figure(plot: dict, df: pd.DataFrame):
    """The figure of one panel from its plot spec and its result rows.

    Parameters
    ----------
    plot : dict
        The plot spec (see the module docstring).
    df : pandas.DataFrame
        The panel's rows (as written to its CSV).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    ValueError
        If the spec's ``kind`` is not one of :data:`PLOT_KINDS`.
    """
    from .experiments import curves_figure, privacy_utility_figure
    from .gibbs import traces_grid
    kind = plot.get("kind")
    if kind == "privacy_utility":
        return privacy_utility_figure(df, list(plot["metrics"]), title=plot.get("title", ""))
    if kind == "curves":
        kw = {k: plot[k] for k in _CURVES_KEYS if k in plot}
        return curves_figure(df, plot["x"], list(plot["metrics"]), **kw)
    if kind == "traces":
        runs, sweeps = traces_from_rows(df, plot["metrics"])
        burn = {float(k): int(v) for k, v in (plot.get("burn_in") or {}).items()}
        return traces_grid(runs, metrics=tuple(plot["metrics"]), burn_in=burn or None, title=plot.get("title", ""),
                           sweeps=sweeps)
    raise ValueError(f"plot kind must be one of {', '.join(PLOT_KINDS)}; got {kind!r}")


def _jsonable(v):
    """Plot-spec values as JSON likes them (numpy scalars to Python)."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v
