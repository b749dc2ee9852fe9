"""What every figure of :mod:`dpcore.lab.reproduce` shares: the panel, the checks of the papers'
statements, median tables and the dataset names.

A check is a dict ``{"check", "paper", "ok", "detail"}``: ``check`` says what we test, in our
words, naming every threshold that is ours; ``paper`` quotes what the paper says (with where), so a
reader sees both side by side (the Paper figures page, ``checks.csv``, ``summary.md``).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["CHECK_COLUMNS", "Panel", "half_decades", "load_dataset_name"]

#: the columns of ``checks.csv``
CHECK_COLUMNS = ["check", "paper", "ok", "detail"]


def half_decades(lo, hi):
    """10^lo, 10^(lo + 1/2), ..., 10^hi (rounded to 6 decimals)."""
    return [float(round(10.0 ** (e / 2), 6)) for e in range(2 * lo, 2 * hi + 1)]


class Panel:
    """One panel's results: tidy rows, the figure, a median table for the summary.

    Parameters
    ----------
    name : str
        Panel name (file names ``<name>.csv`` / ``<name>.html``).
    df : pandas.DataFrame
        Tidy rows of the panel's runs.
    plot : dict
        Plot spec (:mod:`dpcore.plots.paper`); the figure is ``panel_figure(plot, df)``, the
        same call the Paper figures page makes on the shipped CSV.
    table : pandas.DataFrame, optional
        Median table written to summary.md.
    title : str, default=""
        Panel title in summary.md.
    caption : str, default="Medians:"
        Caption of the table in summary.md.
    """

    def __init__(self, name, df, plot, table=None, title="", caption="Medians:"):
        from ...plots.paper import panel_figure
        self.name, self.df, self.plot, self.table, self.title, self.caption = name, df, plot, table, title, caption
        self.fig = panel_figure(plot, df)



def _check(statement, ok, detail, paper=""):
    """One check: ``statement`` (ours, thresholds named as ours), ``paper`` (the paper's words), the verdict
    ``ok`` and the numbers behind it (``detail``)."""
    return {"check": statement, "paper": paper, "ok": bool(ok), "detail": detail}


def _medians(df, metric, index="epsilon", columns="algorithm"):
    """Median of ``metric`` as a table index × columns (NaN ε of references shown as 'non-private')."""
    d = df.copy()
    d[index] = d[index].map(lambda v: "non-private" if isinstance(v, float) and math.isnan(v) else v)
    t = d.groupby([index, columns], sort=False)[metric].median().unstack(columns)
    return t[list(dict.fromkeys(df[columns]))]


def _median_at(df, alg, eps, metric):
    s = df[(df["algorithm"] == alg) & np.isclose(df["epsilon"], eps)][metric]
    return float(s.median()) if len(s) else math.nan


def _trend_check(df, alg, metric, what, decreasing=True, x="epsilon", alpha=0.05):
    """Does ``metric`` fall (or rise) with ε for one method?

    Test: Kendall's rank correlation between ε and the metric over all runs has the expected
    sign with one-sided p < ``alpha``, and the median at the largest ε is better than at the
    smallest. Strict monotonicity of the medians is reported but not required: where a method
    releases noise only (small ε) its d_W is that of random subspaces at every ε, and medians
    of a few runs of the same noise come in random order, however many runs are made."""
    part = df[df["algorithm"] == alg].dropna(subset=[x, metric])
    med = part.groupby(x)[metric].median().sort_index()
    steps = np.diff(med.to_numpy()) if decreasing else -np.diff(med.to_numpy())    # > 0: a wrong-way step
    strict = bool(np.all(steps <= 0))
    tau, p = stats.kendalltau(part[x], part[metric], alternative="less" if decreasing else "greater")
    overall = (med.iloc[-1] < med.iloc[0]) if decreasing else (med.iloc[-1] > med.iloc[0])
    ok = bool(overall and p < alpha)
    word = "decreases" if decreasing else "increases"
    detail = (" → ".join(f"{v:.3g}" for v in med) + f" over {x} = " + ", ".join(f"{e:g}" for e in med.index)
              + f"; Kendall τ = {tau:.2f} (one-sided p = {p:.2g}, {len(part)} runs); medians strictly monotone: "
              + ("yes" if strict else "no"))
    return _check(f"{what}: {metric} of {alg} {word} with {x} (Kendall τ, p < {alpha:g}; last median vs first)",
                  ok, detail)



def load_dataset_name(spec):
    """A short human name of a dataset spec (without loading it).

    Parameters
    ----------
    spec : dict
        A dataset spec (keyword arguments of :func:`dpcore.data.load_dataset`, with ``kind``).

    Returns
    -------
    str
        E.g. ``"CLUTO classic3"`` or ``"subspaces (n=1000, d=10, …)"`` (``random_state``
        omitted).
    """
    s = dict(spec)
    kind = s.pop("kind")
    s.pop("random_state", None)
    if kind == "cluto":
        return f"CLUTO {s['name']}"
    return f"{kind} (" + ", ".join(f"{k}={v}" for k, v in s.items()) + ")"

