"""The Privacy–utility page's helpers (pages/7_privacy_utility.py): its controls' limits and
link parsers, presets, the sweep it builds, and how a result is shown and explained.

Decisions:

- **One limit, two users.** Every widget limit below (``MAX_POINTS``, ``MAX_TRIALS``,
  :func:`q_limits`, the options of :func:`method_options`) is also the limit of its link
  parser, so a link cannot carry a value the widget would refuse. The parsers of the
  methods, metrics and q read the dataset: :func:`ui.share.check_link` loads the link's
  dataset (parameter ``data``) before it parses the widget parameters.
- **q for every point dataset**, uploads included: the subspace dimension of the subspace
  methods (default :func:`dpcore.defaults.default_subspace_dim`). With true subspaces a q
  other than the planted one leaves d_W empty (it compares sets of the same shape).
- **Captions from the run.** What the figure shows is described from the result itself
  (which methods, which metrics, which method is best at the smallest and the largest ε),
  so a caption cannot contradict the figure beside it; a paper's finding is quoted only
  next to the methods it is about.
- **Warnings once.** :func:`dpcore.lab.sweeps.warning_summary` groups a warning that
  repeats per ε or trial (Theorem 3.1's) into one line listing the ε values.
- **A running sweep is drawn as it grows** (:class:`LiveSweep`): the runs go ε by ε, and each
  *cell* (a method at one ε, all its trials) is drawn once finished, in a figure titled
  *partial*, at most once a second (and never more often than five times its own drawing
  time). A cell is charged to the meter right before it is first drawn (released = shown), so a
  stopped sweep has paid for what it showed and nothing else; the finished sweep charges the same
  runs as a sweep drawn only at its end. The cells of a sweep that did not finish stay in the
  session, shown apart and labelled partial (:func:`show_partial`), never as a finished sweep.
- **Private means what the library says.** Whether a sweep's runs are private, and what they
  spend, is decided by :mod:`dpcore.lab.verdicts` (:func:`dpcore.lab.sweeps.plan_sweep` before
  the run, :func:`dpcore.lab.verdicts.judge_row` for each finished run); this module shows the
  verdicts. A method is called private (in the caption's ranking and the box) only where its
  runs' verdicts are: Gibbs in a sweep (mixing not checked), a public seed, a q read off the
  data, a radius read off the data, float noise, a non-private start each name the method apart,
  with the reason.
- **Downloads built when asked.** The figure's HTML (plotly.js inline, ≈ 4.6 MB) and the CSV
  are produced by callables when their button is pressed, not on every drawing of the page.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.lab.methods import PRESETS as METHODS, get_method, preset, presets_for
from dpcore.lab.sweeps import Sweep, plan_sweep, run_sweep, warning_summary
from dpcore.lab.verdicts import RunContext, judge_row
from dpcore.plots.experiments import METRIC_TITLES, log_ticks, privacy_utility_figure
from dpcore.work import WorkCapError
from ui.common import (DEFAULT_DATASET, DRAW_FACTOR, MIN_REDRAW_S, current_dataset, privacy_statement, redraw_due,
                       show_chart)
from ui.eta import TimeLeft
from ui.seeds import seed_caveat
from ui.share import Preset, as_int, list_of, one_of

KEY = "privacy_utility"
#: session key: the drawn (and charged) cells of a sweep that has not finished (see :class:`LiveSweep`)
PARTIAL_KEY = "privacy_utility_partial"
PAGE = "privacy_utility"
LOG_EPS = [-2, -1, 0, 1, 2, 3, 4, 5]          # the ε range slider: powers of ten
DEFAULT_RANGE = (-1, 3)
MAX_POINTS, MAX_TRIALS = 15, 50
WORKERS = [1, 2]
METRICS_FOR = {"points": ["d_W", "d_W_class", "cost", "nmi", "accuracy", "objective", "objective_ratio"],
               "counts": ["nmi", "accuracy", "tau_rc"]}
#: the metrics' names in the multiselect (and so in a link)
METRIC_LABELS = {"d_W": "d_W", "d_W_class": "d_W to classes", "cost": "cost", "nmi": "NMI", "accuracy": "accuracy",
                 "objective": "objective", "objective_ratio": "objective ratio", "tau_rc": "τ of the table"}
METRIC_HELP = ("d_W: distance of the released subspaces to the true ones (eq. 2; synthetic subspaces only). "
               "d_W to classes: to each class's best q-dimensional subspace (labelled data such as Yale B). "
               "cost: k-means subspace cost (eq. 3). NMI / accuracy: agreement of the (non-private) labels with "
               "the true classes. objective: k-means objective of the released centres; objective ratio: that ÷ "
               "the true centres' objective (Gaussian mixtures). τ of the table: Goodman–Kruskal τ (rows given "
               "columns) of the released contingency table.")
LOWER_IS_BETTER = {"d_W", "d_W_class", "cost", "objective", "objective_ratio"}
#: the non-private method that gives each family's dashed reference line
REFERENCE = {"subspace": "k-plane", "kmeans": "k-means++", "cocluster": "Fast-τCC", "documents": "Fast-τCC"}


def metric_label(m):
    return METRIC_LABELS.get(m, m)


def family(method):
    return get_method(METHODS[method]["name"]).family


def defaults_for(ds):
    """(methods, metrics) a user of the field would start with on this dataset: the private
    methods of its family and the non-private one that draws the dashed reference line."""
    if ds.kind == "counts":
        return ["DP-τCC", "Fast-τCC"], ["nmi"]
    if ds.centers is not None:                          # a Gaussian mixture: the k-means methods
        return ["candidate set", "SuLQ k-means", "DP-Lloyd", "k-means++"], ["objective_ratio"]
    if ds.subspaces is not None:                        # the paper's Fig. 2 methods
        return ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs", "k-plane"], ["d_W", "cost"]
    return ["SuLQ-10", "Gibbs", "k-plane"], (["d_W_class", "cost"] if ds.labels is not None else ["cost"])


def q_limits(ds):
    """(lowest, highest) subspace dimension q on ``ds``: 1 … d − 1."""
    return 1, max(1, ds.d - 1)


# ----------------------------------------------------------------------------- link parsers
def _link_dataset():
    return current_dataset()     # check_link has already made the link's dataset current


def _methods(texts):
    return list_of(presets_for(_link_dataset().kind))(texts)


def _metrics(texts):
    return list_of(METRICS_FOR[_link_dataset().kind], metric_label)(texts)


def _q(text):
    ds = _link_dataset()
    if ds.kind != "points":
        raise ValueError("q applies to point datasets only")
    return as_int(*q_limits(ds))(text)


def _range(texts):
    """The ε range slider in a link: two repeated parameters, e.g. ``pu_range=-1&pu_range=3``."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    if len(texts) != 2:
        raise ValueError("needs two values (low and high)")
    lo, hi = (one_of(LOG_EPS)(t) for t in texts)
    if lo > hi:
        raise ValueError(f"{lo} > {hi}")
    return lo, hi


for _parse in (_methods, _metrics, _range):
    _parse.is_list = True

URL_FIELDS = {"pu_methods": _methods, "pu_metrics": _metrics, "pu_range": _range, "pu_q": _q,
              "pu_points": as_int(1, MAX_POINTS), "pu_trials": as_int(1, MAX_TRIALS), "pu_seed": as_int(0, 2**31 - 1),
              "pu_jobs": one_of(WORKERS)}

# ----------------------------------------------------------------------------- presets
MIXTURE = {"kind": "gaussians", "n": 5000, "d": 50, "k": 8, "sigma": 0.1, "center_box": 1.0, "random_state": 0}
CLASSIC3 = {"kind": "cluto", "name": "classic3"}
PRESETS = {
    "Paper Fig. 2 middle (4 private methods and k-plane, 7 ε × 5 trials)": Preset(
        {"pu_methods": ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs", "k-plane"], "pu_metrics": ["d_W", "cost"],
         "pu_range": (-1, 3), "pu_points": 7, "pu_trials": 5, "pu_q": 3, "pu_jobs": 2}, DEFAULT_DATASET,
        "The subspace paper's Fig. 2 (middle): n = 1000, d = 10, k = 3, q = 3, σ = 0.1; the non-private k-plane "
        "as the dashed reference. 145 runs: 10–15 s with 2 workers on an idle 2-core laptop, up to a minute on a "
        "busy one. Most of it is sample-aggregate (35 runs, each clustering every one of its data blocks with TSC); "
        "the figure grows ε by ε while it runs. The same figure at the paper's full settings is drawn at once from "
        "shipped results on the **Paper figures** page (Subspace clustering, Fig. 2); the *Quick look* preset "
        "answers in a few seconds."),
    "Quick look: SuLQ-10 against Gibbs": Preset(
        {"pu_methods": ["SuLQ-10", "Gibbs", "k-plane"], "pu_metrics": ["d_W"], "pu_range": (-1, 3),
         "pu_points": 5, "pu_trials": 2, "pu_q": 3, "pu_jobs": 2}, DEFAULT_DATASET,
        "Two private methods and the non-private k-plane as the dashed line. A few seconds."),
    "Co-clustering Fig. 2 on classic3 (DP-τCC against Fast-τCC)": Preset(
        {"pu_methods": ["DP-τCC", "Fast-τCC"], "pu_metrics": ["nmi", "tau_rc"], "pu_range": (-1, 1), "pu_points": 5,
         "pu_trials": 3, "pu_jobs": 2}, CLASSIC3,
        "Row NMI of DP-τCC (4 iterations) against ε, with the non-private Fast-τCC dashed (the co-clustering "
        "paper's Fig. 2), and τ of the released table beside it (its Fig. 3). A few seconds."),
    "k-means on 8 Gaussians in R^50 (objective ratio)": Preset(
        {"pu_methods": ["candidate set", "SuLQ k-means", "DP-Lloyd", "k-means++"], "pu_metrics": ["objective_ratio"],
         "pu_range": (-1, 2), "pu_points": 4, "pu_trials": 3, "pu_q": 3, "pu_jobs": 2}, MIXTURE,
        "The high-dimensional k-means paper's comparison on a smaller mixture (public radius from the generator), "
        "k-means++ dashed. About 5–10 s."),
}


# ----------------------------------------------------------------------------- the run
def build_sweep(spec, methods, metrics, grid, trials, q, seed):
    """The :class:`~dpcore.lab.sweeps.Sweep` of the form; ``q`` (None on count data) goes to
    every subspace method."""
    algs = []
    for m in methods:
        a = preset(m)
        if q is not None and family(m) == "subspace":
            a["params"]["subspace_dim"] = int(q)
        algs.append(a)
    return Sweep(dataset=spec, algorithms=algs, epsilons=list(grid), trials=int(trials), metrics=list(metrics),
                 seed=seed).validated()


def sweep_context(ds, seed):
    """The context of the page's sweep for the verdicts: the page's seed (None: secret), the
    dataset, mixing not checked."""
    return RunContext(seed=seed, dataset=ds, where="a sweep")


def plans_of(sweep, ds, seed):
    """The planned verdict of every run of ``sweep`` (:func:`dpcore.lab.sweeps.plan_sweep`)."""
    return plan_sweep(sweep, sweep_context(ds, seed), dataset=ds)


def not_private_methods(verdicts):
    """{method label: reasons} of the planned or judged runs that are not private (a method
    without a claim is left out: it is the dashed reference). Labels are read off the verdicts'
    ("sweep: LABEL, ε = …")."""
    out = {}
    for v in verdicts:
        if v.claim and not v.private:
            label = v.label.removeprefix("sweep: ").rsplit(", ε =", 1)[0]
            out.setdefault(label, dict.fromkeys(v.reasons))
            out[label].update(dict.fromkeys(v.reasons))
    return {k: "; ".join(r) for k, r in out.items()}


def apart_in_plan(sweep, ds, seed):
    """:func:`not_private_methods` of the sweep's plan, or {} when the plan refuses the sweep (Run
    and :func:`plan_note` say why)."""
    try:
        return not_private_methods(plans_of(sweep, ds, seed))
    except ValueError:
        return {}


def plan_note(sweep, ds, seed):
    """The form's warning when methods of the sweep would run with an ε but not privately (their
    planned verdicts say why), or when one of its runs is past the work caps of :mod:`dpcore.work`
    (the library's refusal, beside Run before it is pressed), or None."""
    try:
        apart = not_private_methods(plans_of(sweep, ds, seed))
    except ValueError as exc:
        if isinstance(exc, WorkCapError):
            return f"**Run sweep will be refused:** {exc}."
        return None                      # Run says what is wrong
    if not apart:
        return None
    lines = "; ".join(f"{m} ({why})" for m, why in apart.items())
    return (f"**Not private in this sweep, though run with an ε:** {lines}. Their runs are drawn against ε, but the "
            "meter lists them as not private (the dataset's ε becomes ∞), and a class budget refuses the sweep.")


def charge_rows(reservation, df, ds, seed):
    """Charge each run of ``df`` (a batch of finished rows) with its verdict
    (:func:`dpcore.lab.verdicts.judge_row`) through the sweep's ``reservation``."""
    context = sweep_context(ds, seed)
    for row in df.to_dict("records"):
        reservation.charge(judge_row(row, context=context, label=f"sweep: {row['algorithm']}, ε = {fmt(row['epsilon'])}, "
                                                          f"trial {row['trial']}"))


def judged(df, ds, seed):
    """{method label: reasons} of a finished sweep's runs that were not private."""
    context = sweep_context(ds, seed)
    return not_private_methods(judge_row(r, context=context, label=f"sweep: {r['algorithm']}, ε = {r['epsilon']:g}, "
                                                           f"trial {r['trial']}") for r in df.to_dict("records"))


def progress_text(done, total, elapsed, cells=None, left=None):
    """The bar's text; it still reads right when Stop freezes the bar. ``left``: the time left
    in words (:class:`ui.eta.TimeLeft`, calibrated: none before 10 % of the runs), or None
    (``cells``: (finished, total) cells)."""
    eta = f", {left}" if left else ""
    drawn = f" · {cells[0]} of {cells[1]} cells finished" if cells else ""
    return (f"Sweep: {done} of {total} runs{drawn} · {elapsed:.0f} s{eta} (Stop, top right, cancels; the last "
            "finished sweep stays below)")


# ----------------------------------------------------------------------------- streaming


def n_cells(sweep):
    """Cells of a sweep: each private method at each ε, each non-private method once."""
    return sum(len(sweep.epsilons) if get_method(a["name"]).private else 1 for a in sweep.algorithms)


def partial_title(done, total):
    """The partial figure's title; it reads right when Stop freezes it."""
    return (f"PARTIAL sweep: {done} of {total} cells finished (a cell: one method at one ε, all its trials); "
            "not the finished sweep")


def partial_figure(rows, algorithms, grid, metrics, title):
    """The figure of a sweep's finished cells: every method in the legend from the start, in the
    sweep's order (so a method keeps its colour), and the x axis over the whole ε ``grid`` (the
    curves grow from left to right).

    Parameters
    ----------
    rows : list of dict
        Rows of finished cells (:func:`dpcore.lab.sweeps.run_task`).
    algorithms : list of dict
        The sweep's algorithms (label, name), in order.
    grid : sequence of float
        The sweep's ε grid.
    metrics : list of str
    title : str
    """
    df = pd.DataFrame(rows)
    have = set(df["algorithm"]) if len(df) else set()
    fill = []
    for a in algorithms:                  # a method without a finished cell yet: an empty line in the legend
        if a["label"] not in have:
            private = get_method(a["name"]).private
            fill.append({"algorithm": a["label"], "epsilon": float(min(grid)) if private else math.nan,
                         "private": private, "released_private": private, "trial": 0,
                         **{m: math.nan for m in metrics}})
    df = pd.concat([df, pd.DataFrame(fill)], ignore_index=True) if fill else df
    order = {a["label"]: i for i, a in enumerate(algorithms)}
    df = (df.assign(_o=df["algorithm"].map(order)).sort_values(["_o", "epsilon", "trial"], na_position="first")
          .drop(columns="_o").reset_index(drop=True))
    fig = privacy_utility_figure(df, metrics, title=title)
    lo, hi = float(min(grid)), float(max(grid))
    if lo == hi:                          # one ε: a short span around it, as the finished figure draws it
        lo, hi = lo / 2, hi * 2
    pad = 0.05 * max(math.log10(hi / lo), 1.0)
    vals, text = log_ticks(lo, hi)
    fig.update_xaxes(range=[math.log10(lo) - pad, math.log10(hi) + pad], tickvals=vals, ticktext=text)
    for trace in fig.data:                # the dashed references across the whole grid
        if trace.line is not None and trace.line.dash == "dash":
            trace.x = [lo, hi]
    return fig


class LiveSweep:
    """Run a sweep and draw it as it grows (the Privacy–utility page).

    After every run the bar shows the runs and cells finished, the time spent and the time
    left (:class:`ui.eta.TimeLeft`: shown once 10 % of the runs are done, from the time per run
    measured after the first 5 %). When a cell finishes (:func:`run_sweep`'s
    ``on_cell``; runs go ε by ε) its rows are kept; the figure of the finished cells
    (:func:`partial_figure`, titled :func:`partial_title`) is redrawn in ``fig_slot`` when at
    least ``min_interval`` seconds and :data:`DRAW_FACTOR` × the last drawing's time have passed
    since the last drawing. Right before rows are first drawn they are passed to ``charge`` (the
    meter) and kept in the session under :data:`PARTIAL_KEY`; :meth:`run` charges the rest once
    the sweep has finished, so a finished sweep charges every run once.

    Parameters
    ----------
    sweep : dpcore.lab.sweeps.Sweep
    metrics : list of str
    bar_slot, fig_slot : streamlit placeholders (``st.empty()``)
    charge : callable
        ``charge(df)``: charge these runs to the meter (:func:`charge_rows`).
    dataset : str
        The dataset's name (kept with the partial result).
    secret : bool, default True
        Drop the runs' seeds from the kept partial result (secret noise).
    min_interval : float, default :data:`MIN_REDRAW_S`
    draw_factor : float, default :data:`DRAW_FACTOR`
    clock : callable, default time.perf_counter
    """

    def __init__(self, sweep, metrics, bar_slot, fig_slot, charge, dataset, secret=True, min_interval=MIN_REDRAW_S,
                 draw_factor=DRAW_FACTOR, clock=time.perf_counter):
        self.sweep, self.metrics = sweep.validated(), list(metrics)
        self.bar_slot, self.fig_slot, self.charge = bar_slot, fig_slot, charge
        self.dataset, self.secret = dataset, secret
        self.min_interval, self.draw_factor, self.clock = float(min_interval), float(draw_factor), clock
        self.total = n_cells(self.sweep)
        self.rows, self.cells, self.drawn, self.charged, self.draws = [], 0, 0, 0, 0
        self.t0, self.last, self.cost = self.clock(), -math.inf, 0.0
        self.eta = None                       # the calibrated time left (ui.eta), made at the first report

    def progress(self, done, total):
        """``run_sweep``'s ``progress``: the bar, then a drawing if one is due."""
        elapsed = self.clock() - self.t0
        if total and (self.eta is None or self.eta.total != total):
            self.eta = TimeLeft(total, clock=self.clock)
        left = self.eta.text(done) if total and done < total else None
        self.bar_slot.progress(done / total if total else 1.0,
                               text=progress_text(done, total, elapsed, (self.cells, self.total), left))
        self._maybe_draw()

    def cell(self, label, epsilon, rows):
        """``run_sweep``'s ``on_cell``: keep a finished cell, draw if a drawing is due."""
        self.rows.extend(rows)
        self.cells += 1
        self._maybe_draw()

    def _charge_new(self):
        new = self.rows[self.charged:]
        if new:
            self.charge(pd.DataFrame(new))
            self.charged = len(self.rows)

    def _maybe_draw(self):
        if self.cells == self.total or self.cells == self.drawn:
            return                                 # the finished sweep is drawn by the page; nothing new
        now = self.clock()
        if not redraw_due(now - self.last, self.cost, self.min_interval, self.draw_factor):
            return
        self._charge_new()                         # charged before shown: a stop after this has paid for it
        rows = [{k: v for k, v in r.items() if k != "seed"} for r in self.rows] if self.secret else list(self.rows)
        st.session_state[PARTIAL_KEY] = {"rows": rows, "metrics": self.metrics, "dataset": self.dataset,
                                         "cells": self.cells, "of": self.total, "grid": list(self.sweep.epsilons),
                                         "algorithms": [dict(a) for a in self.sweep.algorithms]}
        fig = partial_figure(rows, self.sweep.algorithms, self.sweep.epsilons, self.metrics,
                             partial_title(self.cells, self.total))
        self.draws += 1
        show_chart(fig, f"privacy-utility partial {self.dataset}", container=self.fig_slot,
                   key=f"pu_live_{self.draws}")
        self.drawn, self.last = self.cells, self.clock()
        self.cost = self.last - now

    def run(self, n_jobs=1):
        """Run the sweep (:func:`dpcore.lab.sweeps.run_sweep`), drawing it as it grows; charge the
        runs not yet charged and clear the live figure and the kept partial result. Returns the
        sweep's frame (the same as without streaming)."""
        st.session_state.pop(PARTIAL_KEY, None)
        df = run_sweep(self.sweep, n_jobs=n_jobs, progress=self.progress, on_cell=self.cell)
        self._charge_new()
        self.fig_slot.empty()
        st.session_state.pop(PARTIAL_KEY, None)
        return df


def show_partial(container=None):
    """The kept cells of a sweep that did not finish (stopped, the page left, or failed), in an
    expander labelled partial; nothing when there are none."""
    part = st.session_state.get(PARTIAL_KEY)
    if not part:
        return
    target = st if container is None else container
    with target.container():
        with st.expander(f"Partial result of the sweep that did not finish on {part['dataset']}: {part['cells']} of "
                         f"{part['of']} cells", expanded=False):
            st.caption("These cells were drawn while that sweep ran, and the meter has recorded their runs; the "
                       "rest was not drawn or never ran. A partial sweep: not the finished one, and not the result "
                       "below.")
            show_chart(partial_figure(part["rows"], part["algorithms"], part["grid"], part["metrics"],
                                      partial_title(part["cells"], part["of"])),
                       f"privacy-utility partial {part['dataset']}", key="pu_partial_kept")


# ----------------------------------------------------------------------------- texts
def fmt(v):
    """A number at three significant digits, without exponent below 10⁵ (1000, not 1e+03)."""
    return f"{float(f'{v:.3g}'):g}"


def _method_name(df, a):
    """The catalogue name of the method labelled ``a`` in a sweep's frame (from its preset when the
    frame has no ``name`` column)."""
    if "name" in df:
        return df.loc[df["algorithm"] == a, "name"].iloc[0]
    return METHODS[a]["name"] if a in METHODS else a


def look_for(df, metrics, apart=None):
    """The caption under the figure, from the result: how to read it, the dashed lines that are
    (or are not) there, the best method at the smallest and the largest ε, and a paper's
    finding only beside the methods it is about.

    Only the methods whose runs' verdicts are private are called private: ``apart`` ({method
    label: reasons}, :func:`judged`) names the others, with the reason (Gibbs in a sweep, a
    public seed, a q read off the data …)."""
    apart = dict(apart or {})
    algs = list(dict.fromkeys(df["algorithm"]))
    with_eps = [a for a in algs if bool(df.loc[df["algorithm"] == a, "private"].iloc[0])]
    # ranked: methods run with an ε whose runs released something (not DPNMF from its NNDSVD start, nor
    # a radius read off the data: drawn against ε, named apart)
    released = df["released_private"] if "released_private" in df else df["private"]     # older frames: no column
    ranked = [a for a in with_eps if bool(released[df["algorithm"] == a].any())]
    unranked = [a for a in with_eps if a not in ranked]
    unranked_why = {a: apart.get(a) for a in unranked}
    apart = {a: why for a, why in apart.items() if a in ranked and why}
    reference = [a for a in algs if a not in with_eps]
    shown = [m for m in metrics if df[m].notna().any()]
    words = {"d_W": "d_W falls", "d_W_class": "d_W falls", "cost": "the cost falls", "nmi": "NMI rises",
             "accuracy": "accuracy rises", "objective": "the objective falls",
             "objective_ratio": "the ratio falls towards 1", "tau_rc": "τ of the table rises"}
    parts = [("Each curve is a method run with an ε: its median over its trials, the band the middle half of "
              "its runs. Larger ε means weaker privacy, so utility should improve from left to right"
              + (" (" + ", ".join(dict.fromkeys(words[m] for m in shown)) + ")" if shown else "")
              + "; with few trials the medians wobble.")]
    if reference:
        parts.append("Dashed: " + ", ".join(reference) + " without privacy, what no privacy buys.")
    else:
        fams = dict.fromkeys(family(a) for a in algs if a in METHODS)
        parts.append("No non-private method was run, so there is no dashed reference line (add "
                     + " or ".join(REFERENCE[f] for f in fams) + " to the methods to draw one).")
    if unranked:
        parts.append(", ".join(f"{a} ({unranked_why[a]})" if unranked_why.get(a) else a for a in unranked)
                     + (" runs" if len(unranked) == 1 else " run") + " with ε but released nothing private: drawn, but "
                     "not ranked below.")
    for why in dict.fromkeys(apart.values()):
        named = [a for a in apart if apart[a] == why]
        parts.append(f"Not private in this sweep, though run with an ε: {', '.join(named)} ({why}); the meter lists "
                     + ("its" if len(named) == 1 else "their") + " fits apart.")
    if shown and ranked:
        parts += _observations(df, shown[0], ranked, reference, all_private=not apart)
    return " ".join(parts)


def _observations(df, m, private, reference, all_private=True):
    """Sentences about what this run shows for metric ``m``: the best of the ranked methods
    ``private`` at the smallest and the largest ε (called the best *private* median only when
    the meter counts all of them, ``all_private``), a ranked method doing better than a
    non-private reference, and sample-aggregate against Gibbs and SuLQ (the subspace paper's
    comparison)."""
    better = (lambda a, b: a < b) if m in LOWER_IS_BETTER else (lambda a, b: a > b)
    rows = df[df[m].notna()]
    med = rows[rows["private"]].groupby(["algorithm", "epsilon"])[m].median()
    eps = sorted(rows.loc[rows["private"], "epsilon"].unique())
    name, out = metric_label(m), []
    if len(private) > 1:
        def best(e):
            at = {a: med[(a, e)] for a in private if (a, e) in med.index}
            a = min(at, key=at.get) if m in LOWER_IS_BETTER else max(at, key=at.get)
            return f"{a} ({fmt(at[a])})"
        among = ("the best private median" if all_private
                 else "among the methods run with an ε, private or not, the best median")
        text = f"In this run ({name}), {among} at ε = {fmt(eps[-1])} is {best(eps[-1])}"
        out.append(text + (f"; at ε = {fmt(eps[0])}, {best(eps[0])}." if len(eps) > 1 else "."))
    for ref in reference:
        level = rows.loc[rows["algorithm"] == ref, m].median()
        for a in private:
            above = [e for e in eps if (a, e) in med.index and better(med[(a, e)], level)]
            if above:
                out.append(f"{a} does better than the non-private {ref} at ε = {', '.join(fmt(e) for e in above)}: "
                           "they are different algorithms, and the non-private one is a reference, not a limit.")
    out += _falls_at_large_eps(rows, m, private, eps, better)
    sa = [a for a in private if a.startswith("s.a.")]
    others = [a for a in private if a in ("Gibbs", "SuLQ-10", "SuLQ-50")]
    for a in sa:
        if not others:
            break
        behind = [e for e in eps if (a, e) in med.index and any(
            (o, e) in med.index and better(med[(o, e)], med[(a, e)]) for o in others)]
        rest = [fmt(e) for e in eps if e not in behind]
        text = (f"{a} is behind the best of {', '.join(others)} at {len(behind)} of the {len(eps)} ε values"
                + (f" (all but {', '.join(rest)})" if rest and len(rest) <= 3 else ""))
        out.append(text + (", as in the subspace paper." if 2 * len(behind) >= len(eps) else "."))
    return out


def _falls_at_large_eps(rows, m, private, eps, better, alpha=0.05):
    """A sentence for each private method whose runs at the largest ε are significantly worse than
    its runs at its best ε (one-sided Mann–Whitney, p ≤ alpha; needs ≥ 3 runs on each side, the
    fewest for which p can reach 0.05): such a fall is the method's, not the medians' wobble."""
    from scipy import stats
    if len(eps) < 2:
        return []
    out = []
    for a in private:
        runs = {e: rows.loc[(rows["algorithm"] == a) & (rows["epsilon"] == e), m].dropna() for e in eps}
        meds = {e: r.median() for e, r in runs.items() if len(r)}
        if eps[-1] not in meds:
            continue
        best = max(meds, key=lambda e: (meds[e] if m not in LOWER_IS_BETTER else -meds[e]))
        x, y = runs[eps[-1]], runs[best]
        if best == eps[-1] or len(x) < 3 or len(y) < 3 or not better(meds[best], meds[eps[-1]]):
            continue
        alt = "greater" if m in LOWER_IS_BETTER else "less"          # the last ε's runs worse than the best's
        p = float(stats.mannwhitneyu(x, y, alternative=alt).pvalue)
        if p <= alpha:
            out.append(f"{a} is worse at ε = {fmt(eps[-1])} ({fmt(meds[eps[-1]])}) than at ε = {fmt(best)} "
                       f"({fmt(meds[best])}), and its runs agree (one-sided Mann–Whitney p = {p:.2g}): a fall of the "
                       "method at large ε, not the medians' wobble.")
    return out


def show_warnings(df):
    """Each distinct warning of the runs once (see :func:`dpcore.lab.sweeps.warning_summary`)."""
    items = warning_summary(df)
    if not items:
        return
    lines = [f"- **{', '.join(w['algorithms'])}** ({w['runs']} of {w['of']} runs): {w['message']}" for w in items]
    st.warning("Warnings from the runs, each shown once:\n" + "\n".join(lines))


def _display_table(df):
    """The runs for the table: floats at four significant digits (the CSV keeps them all)."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].map(lambda v: float(f"{v:.4g}") if np.isfinite(v) else v)
    return out


def show_result(res):
    """The last finished sweep: figure, captions, warnings, downloads and the runs."""
    df, metrics, run = res["df"], res["metrics"], res.get("run", 0)
    st.subheader(f"{res['dataset']} — {len(df)} runs in {res['seconds']:.1f} s")
    fig = privacy_utility_figure(df, metrics)
    show_chart(fig, f"privacy-utility {res['dataset']} {' '.join(metric_label(m) for m in metrics)}",
               key=f"pu_chart_{run}")
    empty = [METRIC_TITLES.get(m, m) for m in metrics if df[m].isna().all()]
    if empty:
        st.caption("No method gives a value for: " + "; ".join(empty) + " (the metric does not apply to these "
                   "methods or this dataset, or q differs from the true subspaces' dimension).")
    st.caption(look_for(df, metrics, res.get("apart")))
    unreleased = {a: why for a, why in (res.get("apart") or {}).items()
                  if a in set(df["algorithm"]) and not bool(df.loc[df["algorithm"] == a, "released_private"].any())}
    if unreleased:
        st.warning("**Not private: " + "; ".join(f"{a} ({why})" for a, why in unreleased.items())
                   + "**: these runs released nothing private and the meter lists them as not private.")
    show_warnings(df)
    c1, c2 = st.columns(2)
    # built when pressed (callables): the HTML carries plotly.js (≈ 4.6 MB) and would be held per session
    c1.download_button("Download results (CSV)", lambda: df.to_csv(index=False), "privacy_utility.csv", "text/csv",
                       key=f"pu_csv_{run}", on_click="ignore")
    c2.download_button("Download figure (HTML)", lambda: fig.to_html(include_plotlyjs=True), "privacy_utility.html",
                       "text/html", key=f"pu_html_{run}", on_click="ignore")
    with st.expander("All runs"):
        st.dataframe(_display_table(df), hide_index=True, width="stretch")


def _shown(res):
    """(families, estimator names) of the algorithms in a result: what its privacy box is about."""
    from dpcore.lab.methods import METHODS as CATALOGUE

    if not res:
        return set(), set()
    names = {METHODS[a]["name"] for a in set(res["df"]["algorithm"]) if a in METHODS}
    return {CATALOGUE[n].family for n in names if n in CATALOGUE}, names


#: what each family's private runs release, in the privacy box
RELEASED = {"subspace": "subspaces", "cocluster": "contingency tables and partitions", "kmeans": "centres",
            "documents": "centres or NMF basis"}


def show_privacy(res, not_private_in_plan=None):
    """The page's privacy box, about the methods of the shown result: what their private runs
    release, and the methods whose runs' verdicts were not private, with the reasons
    (``res["apart"]``; with no result, the controls' planned ones, ``not_private_in_plan``)."""
    families, names = _shown(res)
    apart = (res.get("apart") if res else not_private_in_plan) or {}
    kinds = [f for f in RELEASED if f in families]
    released = [RELEASED[f] for f in kinds] or ["subspaces, tables or centres"]
    caveats = seed_caveat(res.get("seed") if res else None) + [
        "A sweep is many releases: the meter counts every private fit (one ε × trial of a method) as one "
        "release (a sweep of 140 fits shows 140) and adds up their ε; a sweep stopped midway has paid for the "
        "cells it drew (each is charged as it is first drawn). Real deployments release once; sweeps are "
        "for studying the methods on public or synthetic data.",
        "Whether a method's runs are private is decided by the library (its plan, its catalogue entry and this "
        "sweep's context): Gibbs is private only once its chain has mixed, which a sweep does not check; a public "
        "seed, a q or a radius read off the data, a non-private start or float noise make a run not private."]
    everything = bool(apart) and res is not None and all(
        a in apart for a in set(res["df"].loc[res["df"]["private"], "algorithm"]))
    privacy_statement(
        private=[] if everything else [f"every private run's released {' / '.join(released)}"
                                       + (" (of the methods not named below)" if apart else "")
                                       + "; each run spends its own ε"],
        not_private=[f"{a}'s releases — {why}" for a, why in apart.items()]
        + ["the metrics: they compare releases with the data and the true labels (evaluation only)"]
        + (["labels from assigning raw points to released subspaces or centres"] if families - {"cocluster"} or not res
           else []),
        caveats=caveats,
        execution=[get_method(n).target.rsplit(":", 1)[-1] for n in names])
