"""The Gibbs page's helpers: its controls' limits (the same numbers for the widgets and for the
link parsers), its input checks (bounds that keep a run from freezing the app), one fit per ε
with a progress bar, the tables and verdicts kept in the session, and the drawing of a result.

Decisions
---------
- Every limit is defined once here and used by the widget, by the link parser (``URL_FIELDS``
  of the page) and by :func:`check_run`: a link cannot carry a value that the form would
  refuse at Run (``g_chains=99999`` is refused when the link is opened, with a warning).
- The number of clusters k and the subspace dimension q depend on the dataset (1 ≤ k ≤ n,
  1 ≤ q < d, as :class:`dpcore.subspace.gibbs.GibbsSubspaceClustering` checks them); their link
  parsers read the dataset of the link (``check_link`` handles ``data`` first).
- A result is drawn by :func:`draw_result` twice in a run that re-runs the chains: first the
  stored previous result (so that Streamlit's Stop leaves it on the screen), then the new one.
  ``stage`` keeps the two drawings' element keys apart; the "Reproduce in Python" expander (its
  download button has no key) is drawn only in the final drawing.
- While the chains run (:class:`LiveRun`), the bar says which ε run and sweep it is at and the
  time left (from the time per sweep so far), and the traces so far are redrawn in one
  ``st.empty`` every block of 64 sweeps at most once a second, titled PARTIAL, with no verdict.
  They are also kept in the session (:data:`PARTIAL_KEY`): a run that is cancelled (Stop, or
  the student left the page) leaves them there, and the page offers them, labelled partial,
  beside the cancelled-run notice. Its last figure, once every ε has run, is the result's.
- Privacy is the library's decision (:mod:`dpcore.lab.verdicts`), never this module's: every ε
  run is built through the catalogue and planned with ``plan_run`` (:func:`chain_plans`; the
  page reserves all the plans against the class budget before any chain runs), and judged after
  it with ``judge_run`` and the page's mixing verdict (:func:`judge_chains`): a chain not mixed,
  a public seed, a non-private start or choice of chain, or a q read off the data makes the run
  not private, with the library's reason. The meter is charged with those verdicts, and the
  privacy box and the ledgers' totals follow the same stored verdicts; the result's "Not
  private" flag names the reasons of the library's plan of the same run with secret noise
  (:func:`void_reasons`: what the settings void, whatever the chains do).
- Instant ε (issue 33): on a Fig. 3 preset (:data:`dpcore.lab.ladders.LADDERS`: the random
  start, the k-plane start, the quick look), while the form's committed settings are still the
  preset's (:func:`ui.ladder.on_preset`), :func:`instant_section` shows a slider over the
  preset's precomputed ε ladder (0.1 … 1000) in a fragment: the chosen ε's verdict (computed on
  its full traces when the ladder was built) and its traces (one column, thinned to at most 200
  sweeps per chain, SVG). Those runs have a public seed: a demonstration, not a private release,
  charged to nobody. "Run live" stores the ε under :data:`LIVE_KEY`; the page then runs its
  chains at that one ε (planned, reserved, judged on their mixing and charged as every Run
  chains).
"""
from __future__ import annotations

import math
import time
from dataclasses import replace

import pandas as pd
import streamlit as st

from dpcore.metrics import clustering_accuracy, wasserstein_distance
from dpcore.plots.gibbs import TRACE_LABELS, traces_grid
from dpcore.subspace.diagnostics import MIN_ESS, RHAT_THRESHOLD, diagnostics_table, mixing_verdict
from dpcore.lab.ladders import GIBBS_TRACES, find_ladder
from dpcore.lab.methods import build_estimator
from dpcore.lab.verdicts import RunContext, judge_run, plan_run
from dpcore.subspace.gibbs import MAX_CHAINS
from dpcore.validation import check_epsilon, check_int
from ui.common import (DRAW_FACTOR, MIN_REDRAW_S, Timer, current_dataset, privacy_statement, redraw_due, show_chart,
                       show_ledger)
from ui.eta import TimeLeft
from ui.ladder import instant_epsilon, on_preset
from ui.meter import epsilon_odds, format_epsilon
from ui.seeds import MAX_SEED, seed_caveat, seed_label
from ui.share import as_int, one_of, snippet_expander

MAX_PAGE_ITER = 10_000          # the paper's run length; the page refuses more
MAX_EPS = 6                     # ε values per submission
MAX_WORK = 320_000_000          # n × sweeps × chains × ε values (= the full Fig. 3 run at n = 1000)

INITS = {"random": "random (private)", "kplane": "k-plane (NOT private)", "ssc": "SSC (NOT private)",
         "lrr": "LRR (NOT private)"}
RELEASES = {"sample": "last sample (ε)", "mean": "mean of last 100 samples (ε + 99·(q+3)ε/2)"}
SELECTS = {"first": "chain 0 (ε)", "best_private": "lowest cost, chosen privately", "best": "lowest cost (NOT private)"}
#: the form's values before any preset or link (k and q follow the dataset, see the page; the
#: selectboxes' defaults are their first options)
DEFAULTS = {"g_eps": "0.1, 1, 10, 100", "g_iter": 1000, "g_chains": 8}


def parse_epsilons(text):
    """'0.1, 1, 10' -> [0.1, 1.0, 10.0]; ValueError in the words of dpcore otherwise."""
    parts = [p for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("epsilon must be given: one or more numbers > 0, separated by commas")
    if len(parts) > MAX_EPS:
        raise ValueError(f"give at most {MAX_EPS} values of epsilon at once; got {len(parts)}")
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise ValueError(f"epsilon must be a number > 0; got {p.strip()!r}") from None
        out.append(check_epsilon(v, "epsilon"))
    return out


def _k_in_link(text):
    return check_int(int(float(text)), "n_clusters (clusters k)", 1, current_dataset().n)


def _q_in_link(text):
    return check_int(int(float(text)), "subspace_dim (subspace dimension q)", 1, max(current_dataset().d - 1, 1))


#: the page's widgets bound to the URL and their parsers: the widgets' own limits
URL_FIELDS = {"g_eps": parse_epsilons, "g_iter": as_int(1, MAX_PAGE_ITER), "g_chains": as_int(1, MAX_CHAINS),
              "g_k": _k_in_link, "g_q": _q_in_link, "g_seed": as_int(0, MAX_SEED),
              "g_init": one_of(INITS, INITS.get), "g_release": one_of(RELEASES, RELEASES.get),
              "g_select": one_of(SELECTS, SELECTS.get)}


def check_run(n, n_iter, n_chains, eps_list):
    """The page's bounds (so that a run cannot freeze the app for long)."""
    n_iter = check_int(n_iter, "n_iter (sweeps per chain)", 1, MAX_PAGE_ITER)
    n_chains = check_int(n_chains, "n_chains", 1, MAX_CHAINS)
    work = n * n_iter * n_chains * len(eps_list)
    if work > MAX_WORK:
        raise ValueError(f"this run is too long for the page: n × sweeps × chains × ε values = {work:,} > {MAX_WORK:,}; "
                         "use fewer sweeps, chains or ε values (or run benchmarks/bench_gibbs.py --fig3)")
    return n_iter, n_chains


#: the page's method in the catalogue (dpcore.lab.methods.METHODS)
METHOD = "gibbs"
#: the start drawn without the data, each chain its own: the only one whose chains start apart (display only:
#: what R̂ ≈ 1 says about mixing; whether a start is private is the plan's to say)
DISPERSED_START = "random"


def build_chains(eps, params):
    """The unfitted sampler of one ε, built through the catalogue (``params``: the page's, with
    ``random_state`` the page's seed)."""
    return build_estimator(METHOD, None, {k: v for k, v in params.items() if k != "random_state"}, epsilon=eps,
                           random_state=params["random_state"])


def run_label(eps):
    """The meter's label of one ε run."""
    return f"Gibbs (ε = {eps:g})"


def chain_plans(ds, eps_list, params, context):
    """The verdicts :func:`dpcore.lab.verdicts.plan_run` gives each ε run before it runs (what the
    class budget reserves; the library decides whether each would be private and what it
    spends). ``context``: the run's :class:`~dpcore.lab.verdicts.RunContext` (the page checks
    mixing, so a private plan is reserved at its cost; a chain that turns out not mixed is then
    charged as not private)."""
    return [plan_run(METHOD, build_chains(eps, params), ds.X, context, label=run_label(eps)) for eps in eps_list]


def judge_chains(models, verdicts, context):
    """The verdict of each fitted ε run (:func:`dpcore.lab.verdicts.judge_run`) with the page's
    mixing verdict (``verdicts[ε]``: ``mixed`` and, optionally, ``frozen``): {ε: Verdict}, what
    the meter is charged and what the privacy box shows."""
    return {eps: judge_run(METHOD, m, replace(context, mixing=bool(verdicts[eps]["mixed"]),
                                              frozen=bool(verdicts[eps].get("frozen", False))), label=run_label(eps))
            for eps, m in models.items()}


#: beside Run under a class budget: the budget reserves a private plan, the meter charges what the chains gave
UNMIXED_UNDER_BUDGET = ("Under the class budget each ε run reserves its ε before the chains run, and is counted as "
                        "∞ if its chains do not mix (a sample of chains that have not mixed is not private): the "
                        "dataset's ε is then ∞.")


def odds_captions(where, ds, eps_text, params):
    """The odds sentence (:func:`ui.meter.epsilon_odds`) of the ε list typed in the form: one per
    ε when there are two at most, else for the smallest and the largest, in the relation the
    sampler's plan states (nothing while the list or the parameters are not valid)."""
    try:
        eps_list = sorted(set(parse_epsilons(eps_text)))
        relation = chain_plans(ds, eps_list[:1], params, RunContext(dataset=ds, checks_mixing=True))[0].relation
    except ValueError:
        return
    for eps in (eps_list if len(eps_list) <= 2 else [eps_list[0], eps_list[-1]]):
        epsilon_odds(where, eps, relation=relation)


def run_all(ds, eps_list, params, live):
    """Fit one estimator per ε (same seed), one after the other, telling ``live`` (a
    :class:`LiveRun`) every progress report and every block of traces; returns (traces,
    models, seconds)."""
    runs, models, seconds = {}, {}, {}
    for j, eps in enumerate(eps_list):
        model = build_chains(eps, params)
        with Timer() as t:
            model.fit(ds.X, ds.labels, ds.subspaces if ds.subspaces is not None and
                      ds.subspaces.shape == (params["n_clusters"], ds.d, params["subspace_dim"]) else None,
                      callback=lambda i, n, j=j: live.on_progress(j, i),
                      trace_callback=lambda i, n, traces, j=j: live.on_traces(j, i, traces))
        runs[eps], models[eps], seconds[eps] = model.traces_, model, t.seconds
        live.on_run_done(j, model)
    return runs, models, seconds


# ----------------------------------------------------------------------------- a run as it goes
#: the live traces are redrawn at most once per REDRAW_SECONDS, and less often when one drawing costs
#: the server more than REDRAW_SHARE of the time between two (a Fig. 3 sized figure takes about 0.13 s
#: to build; the browser's SVG redraw of the finished one about 0.4 s): the browser must not spend more
#: time drawing than the server computing
REDRAW_SECONDS = MIN_REDRAW_S
REDRAW_SHARE = 1 / DRAW_FACTOR
BAR_SECONDS = 0.25              # the progress bar's text at most this often
LIVE_MAX_POINTS = 250           # points per chain of a partial figure (Fig. 3's size: 1.2 MB, not 4.6, per drawing)
PARTIAL_KEY = "gibbs_partial"   # session key: the traces of the run going on (left there when it is cancelled)


def partial_words(part):
    """How far a run's traces go, e.g. "ε = 1: all 1,000 sweeps; ε = 10: sweeps 1–320 of 1,000;
    ε = 100: not started"."""
    n = part["n_iter"]
    done = part["sweeps"]
    return "; ".join(f"ε = {e:g}: " + ("not started" if not done.get(e) else f"all {n:,} sweeps" if done[e] == n
                                        else f"sweeps 1–{done[e]:,} of {n:,}") for e in part["eps_list"])


def is_complete(part):
    """Every ε of the run has finished (its released chain is known)."""
    return all(e in part["released"] for e in part["eps_list"])


def partial_figure(part, title=None):
    """The traces figure of a run's traces so far (``part``: :attr:`LiveRun.state`). Once every
    ε has run it is the figure of the finished result (:func:`traces_figure`); before, it says
    PARTIAL in its title (also in a saved PNG), its sweep axes span the whole run and it has at
    most :data:`LIVE_MAX_POINTS` points per chain."""
    complete = is_complete(part)
    fig = traces_figure(part["runs"], part["burn_in"], part["released"], 1000 if complete else LIVE_MAX_POINTS)
    if title is None and not complete:
        title = "PARTIAL traces, the run is not finished: " + partial_words(part)
    if title:
        fig.update_layout(title=dict(text=title, font=dict(size=14)), margin=dict(t=70))
    if not complete:
        fig.update_xaxes(range=[0, part["n_iter"]])
    return fig


class LiveRun:
    """What the page shows while its chains run: a progress bar with the time left and the
    traces so far, redrawn in place (throttled, see :data:`REDRAW_SECONDS`).

    Parameters
    ----------
    eps_list : list of float
        The run's ε values, run one after the other.
    n_iter : int
        Sweeps per chain.
    bar : object with ``progress(value, text=...)``
        The progress bar (``st.progress``).
    draw : callable, optional
        ``draw(fig, caption)`` draws the partial traces in place (the page: into one
        ``st.empty``); None: not drawn.
    stop_words : str, default=""
        What Stop does, at the end of the bar's text.
    store : dict-like, optional
        Where :attr:`state` is kept (the session state, key :data:`PARTIAL_KEY`) so that a
        cancelled run's traces can still be shown, labelled partial.
    clock : callable, default=time.perf_counter
        Seconds, for the time left and the redraw schedule.
    """

    def __init__(self, eps_list, n_iter, bar, draw=None, stop_words="", store=None, clock=time.perf_counter):
        self.eps_list, self.n_iter, self.bar, self.draw = list(eps_list), int(n_iter), bar, draw
        self.stop_words, self.clock = stop_words, clock
        #: the traces so far (ε -> name -> (chains, sweeps so far)), the sweeps done per ε, and the burn-in and
        #: released chain of every finished ε (numbers only: kept in the session)
        self.state = dict(eps_list=self.eps_list, n_iter=self.n_iter, runs={}, sweeps={}, burn_in={}, released={})
        self.blocks = {e: [] for e in self.eps_list}       # sweep counts of every block of traces received
        self.n_draws = 0
        self.t0 = self._last_draw = clock()
        self.eta, self._eta_run = None, None    # the time left of the current ε run on (ui.eta.TimeLeft)
        self._last_bar, self._draw_cost = -math.inf, 0.0
        if store is not None:
            store[PARTIAL_KEY] = self.state

    def bar_text(self, j, i):
        """The progress bar's text at sweep ``i`` of ε run ``j`` (the time left: :class:`ui.eta.TimeLeft`
        over the sweeps left from the start of ε run ``j``, shown once 10 % of them are done, from the
        time per sweep after the first 5 %: each ε run has its own start and cost per sweep)."""
        eps, m, n = self.eps_list[j], len(self.eps_list), self.n_iter
        done = j * n + i
        if i == 0:
            where, left = "starting the chains", "estimating the time left"
        else:
            where = f"sweep {i:,} of {n:,}"
            if self._eta_run != j:              # each ε run has its own start (its init) and cost per sweep:
                self._eta_run = j                   # measured afresh over the sweeps left from its start
                self.eta = TimeLeft((m - j) * n, clock=self.clock)
            left = self.eta.text(i)             # calibrated: none before 10 %, then the rate after the first 5 %
        stop = f" ({self.stop_words})" if self.stop_words else ""
        return f"ε = {eps:g} (run {j + 1} of {m}): {where} · {left}{stop}"

    def on_progress(self, j, i):
        """Sweep ``i`` of ε run ``j`` is done (``fit``'s ``callback``): move the bar."""
        now = self.clock()
        if now - self._last_bar >= BAR_SECONDS or i == self.n_iter:
            self._last_bar = now
            self.bar.progress(min(1.0, (j * self.n_iter + i) / (len(self.eps_list) * self.n_iter)),
                              text=self.bar_text(j, i))

    def on_traces(self, j, t, traces):
        """The traces of ε run ``j`` up to sweep ``t`` (``fit``'s ``trace_callback``)."""
        eps = self.eps_list[j]
        self.blocks[eps].append(t)
        self.state["runs"][eps] = traces
        self.state["sweeps"][eps] = t
        self._maybe_draw()

    def on_run_done(self, j, model):
        """ε run ``j`` has finished: its final traces, burn-in and released chain."""
        eps = self.eps_list[j]
        self.state["runs"][eps] = model.traces_
        self.state["sweeps"][eps] = model.traces_["cost"].shape[1]
        self.state["burn_in"][eps] = model.burn_in_
        self.state["released"][eps] = model.selected_chain_
        self._maybe_draw()

    def figure(self):
        """The traces so far (:func:`partial_figure`)."""
        return partial_figure(self.state)

    def caption(self):
        """The words under the live traces: partial, and why there is no verdict yet."""
        if is_complete(self.state):
            return "Every ε has run: the verdict, R̂ and the released samples are being computed."
        return ("**Partial traces, drawn as the chains run** (" + partial_words(self.state) + "). No verdict on a "
                "partial run: the verdict, R̂ and the released samples come when every ε has run. If the run is "
                "stopped, these traces are all there is of it, and they are not a result.")

    def redraw(self):
        """Draw the traces so far now (the schedule aside)."""
        t0 = time.perf_counter()
        self.draw(self.figure(), self.caption())
        self.n_draws += 1
        self._draw_cost = time.perf_counter() - t0
        self._last_draw = self.clock()

    def _maybe_draw(self):
        if self.draw is not None and self.state["runs"] and \
                redraw_due(self.clock() - self._last_draw, self._draw_cost, REDRAW_SECONDS, 1 / REDRAW_SHARE):
            self.redraw()


def start_live(bar_slot, traces_slot, eps_list, n_iter, keeps_previous):
    """A :class:`LiveRun` drawing its bar into ``bar_slot`` and its traces into ``traces_slot``
    (two ``st.empty``), keeping its traces in the session state."""
    def draw(fig, caption):
        with traces_slot.container():
            st.caption(caption)
            show_chart(fig, "gibbs partial traces", key=f"gibbs_live_{live.n_draws}")

    bar = bar_slot.progress(0.0, text="Starting the chains…")
    stop = "Stop, top right, cancels; the previous result stays below" if keeps_previous else "Stop, top right, cancels"
    live = LiveRun(eps_list, n_iter, bar, draw, stop, st.session_state)
    return live


def show_partial():
    """After a cancelled run (its traces left in the session): what it had computed, labelled
    partial, drawn on request (no verdict: a partial run is not judged)."""
    part = st.session_state.get(PARTIAL_KEY)
    if part is None or not part["runs"]:
        return
    st.caption(f"The cancelled run had computed: {partial_words(part)}. Nothing of it was released or counted in "
               "the privacy meter, and a partial run gets no verdict.")
    if st.toggle("Show the partial traces of the cancelled run", key="g_show_partial"):
        show_chart(partial_figure(part, "PARTIAL traces of a cancelled run (not a result, no verdict): "
                                  + partial_words(part)), "gibbs partial traces cancelled", key="gibbs_partial")


#: the traces in the tables' words (the figure's labels without line breaks)
TRACE_WORDS = {k: v.replace("<br>", " ") for k, v in TRACE_LABELS.items()}
ONE_CHAIN_NOTE = ("With one chain, R̂ can only compare the chain's first and second halves: comparing chains with "
                  "each other (the between-chain R̂, which catches a chain stuck in a wrong partition) needs at least "
                  "2 chains. This verdict rests on the two halves' R̂ and the effective sample size (ESS) only.")


def verdict_text(text, one_chain=False):
    """A mixing verdict's sentence without the words its heading says, with the one-chain note."""
    text = (text.removeprefix("Not yet mixed: ").removeprefix("Mixed (by this rule): ")   # the heading says it
            .removeprefix("Not judged: the chains did not move. "))
    return text[:1].upper() + text[1:] + (" " + ONE_CHAIN_NOTE if one_chain else "")


def verdict_heading(v):
    """The heading of a verdict (``mixed`` and ``frozen``)."""
    return ("mixed (by the rule below)" if v["mixed"] else "not judged: the chains did not move"
            if v.get("frozen") else "not yet mixed")


def summarise(ds, models, seconds):
    """Tables and verdicts kept in the session (numbers only, no estimators).

    Returns (table, summary, verdicts, extra): the R̂/ESS rows of the monitored traces, one row
    per ε of the released sample, the verdict per ε, and what the tables leave out (the §5
    statistic's last value, time per sweep, rows clipped), shown in captions."""
    table, summary, verdicts = [], [], {}
    extra = {"statistic": {}, "ms_per_sweep": {}, "seconds": {}, "n_clipped": 0, "n": ds.n, "n_iter": None}
    for eps, m in models.items():
        v = mixing_verdict(m.traces_, m.burn_in_)
        one_chain = m.traces_["cost"].shape[0] == 1
        text = verdict_text(v["text"], one_chain)
        verdicts[eps] = {"mixed": v["mixed"], "frozen": v["frozen"], "text": text,
                         "rule": v["rule"], "one_chain": one_chain}
        for r in diagnostics_table(m.traces_, m.burn_in_):
            if r["trace"] == "statistic":
                extra["statistic"][eps] = r["mean"]
                continue
            table.append({"ε": eps, "trace": TRACE_WORDS.get(r["trace"], r["trace"]), "split-R̂": r["split_rhat"],
                          "ESS": r["ess"], "mean after burn-in": r["mean"], "sd": r["sd"], "note": r["note"]})
        row = {"ε": eps, "verdict": "mixed" if v["mixed"] else "did not move" if v["frozen"] else "not yet",
               "released chain": m.selected_chain_, "cost of released sample": m.cost_,
               "cost, mean of last samples": m.cost_mean_}
        if ds.subspaces is not None and ds.subspaces.shape == m.subspaces_.shape:
            row["d_W, released sample"] = wasserstein_distance(m.subspaces_, ds.subspaces)
            row["d_W, mean of last samples"] = m.dw_mean_
        if ds.labels is not None:
            row["accuracy of released labels"] = clustering_accuracy(ds.labels, m.labels_)
        summary.append(row)
        extra["ms_per_sweep"][eps] = 1e3 * m.seconds_per_sweep_
        extra["seconds"][eps] = seconds[eps]
        extra["n_clipped"] = m.n_clipped_
        extra["n_iter"] = m.traces_["cost"].shape[1]
    if not any(r["note"] for r in table):
        for r in table:
            del r["note"]
    return table, summary, verdicts, extra


#: short column titles of the released-samples table (the stored rows keep the long keys)
SHORT_COLUMNS = {"released chain": "chain", "cost of released sample": "cost",
                 "cost, mean of last samples": "cost, mean of last m", "d_W, released sample": "d_W",
                 "d_W, mean of last samples": "d_W, mean of last m", "accuracy of released labels": "accuracy"}


def readable(rows):
    """A table for students: numbers at 4 significant digits (ESS as a whole number), "–" where a
    number is missing, short column titles."""
    def fmt(k, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return v
        if isinstance(v, float) and not math.isfinite(v):
            return "–"
        return f"{v:.0f}" if k == "ESS" else f"{v:.4g}"
    return pd.DataFrame([{SHORT_COLUMNS.get(k, k): fmt(k, v) for k, v in r.items()} for r in rows])


def show_error(slot, exc, has_previous):
    """The one error box of a failed Run, in ``slot`` (where the progress bar was)."""
    slot.error(str(exc).rstrip(".") + (". The result below is the previous run's." if has_previous else "."))


# ----------------------------------------------------------------------------- drawing a result
def traces_figure(runs, burn_in, released, max_points=1000):
    """The traces figure of a result (ε -> traces): every trace the runs have, burn-in shaded,
    the released chain highlighted, at most ``max_points`` points per chain."""
    metrics = [m for m in ("statistic", "cost", "dw", "accuracy") if any(m in t for t in runs.values())]
    return traces_grid(runs, metrics=metrics, burn_in=burn_in, released=released, max_points=max_points)


def draw_result(res, stage, spec=None):
    """Draw a stored result: verdicts, traces, R̂/ESS table, released samples, privacy box and
    ledgers. ``stage`` ("previous" or "final") keeps the element keys of the two drawings of one
    run apart; only the final one has the "Reproduce in Python" expander. ``spec``: the current
    dataset's spec; a result computed on another dataset is flagged."""
    p = res["params"]
    if spec is not None and "spec" in res and res["spec"] != spec:
        name = res["dataset"] + (", other settings or another draw" if res["dataset"] == current_dataset().name else "")
        st.warning(f"This result was computed on another dataset ({name}); it is shown as it was "
                   "computed there (its tables, d_W and accuracy are of that dataset). Press **Run chains** to "
                   "sample on the current one.")
    st.subheader("Verdict")
    st.caption(f"{res['dataset']} — {p['n_chains']} chain{'s' if p['n_chains'] > 1 else ''} × {p['n_iter']} sweeps, "
               f"start: {INITS[p['init']]}, "
               f"seed: {seed_label(p['random_state'])}")
    if res.get("void"):
        st.error("⚠️ **Not private.** " + "; ".join(res["void"]) + ": no ε run of this result released anything "
                 "private.")
    for eps, v in res["verdicts"].items():
        heading = verdict_heading(v)
        (st.success if v["mixed"] else st.warning)(f"**ε = {eps:g}: {heading}.** {v['text']}")
    first_rule = next(iter(res["verdicts"].values()))["rule"]
    st.caption(f"Rule: {first_rule} (R̂ threshold {RHAT_THRESHOLD}, minimum ESS {MIN_ESS}.)")
    all_mixed = all(v["mixed"] for v in res["verdicts"].values())
    if not all_mixed and p["n_chains"] > 1:
        st.caption("Chains stuck at different cost levels usually sit in different partitions (from a random "
                   "start, a chain can keep a third of the points in the wrong cluster for thousands of sweeps). "
                   "Run more sweeps or more chains; 'lowest cost, chosen privately' then releases the best chain "
                   "through a second exponential mechanism, paid for in the ledger.")
    if all_mixed and p["init"] != DISPERSED_START and p["n_chains"] > 1:
        st.caption(f"All chains started from the same {INITS[p['init']].split(' (')[0]} solution, so they agree "
                   "from the first sweep: R̂ ≈ 1 here says little about whether a chain could leave that solution. "
                   "Compare with the random start.")

    st.subheader("Traces (chains overlaid, one column per ε)")
    eps_text = ", ".join(f"{e:g}" for e in res["runs"])
    released = {r["ε"]: r["released chain"] for r in res["summary"]}
    # the previous result is shown only while a new run goes on: thinned as the live traces (less for the browser
    # to draw beside them; drawn in full again after the run)
    show_chart(traces_figure(res["runs"], res["burn_in"], released, LIVE_MAX_POINTS if stage == "previous" else 1000),
               f"gibbs traces {res['dataset']} eps {eps_text}", key=f"gibbs_traces_{stage}")
    st.caption("The orange line is the released chain, the others are blue (hover a line to see its chain). "
               "What to look for: after the shaded burn-in, the chains of one ε should overlap and wander around "
               "the same level. A chain whose cost stays above the others (and whose accuracy stays below) is "
               "stuck in another partition: not mixed. The test statistic should follow the dashed 1/√T line; "
               "because every sweep flips the basis signs at random it does so even when the subspaces are stuck, "
               "so it is a weak check.")

    st.subheader("R̂ and effective sample size")
    st.dataframe(readable(res["table"]), hide_index=True, width="stretch", height=38 + 35 * len(res["table"]))
    st.caption("split-R̂ cuts every chain after burn-in into two halves and compares all the halves, of all chains, "
               "with each other (≈ 1 when they agree; with one chain only its own two halves). ESS is the number "
               "of independent draws the correlated samples are worth. d_W: the distance between the sampled and "
               "the true subspaces (0 = the same).")
    extra = res.get("extra") or {}
    if extra.get("statistic"):
        st.caption("§5 test statistic at the last sweep: "
                   + "; ".join(f"ε = {e:g}: {v:.3g}" for e, v in extra["statistic"].items())
                   + f" (about 1/√T = {extra['n_iter'] ** -0.5:.3g} is expected under exact sampling).")

    st.subheader("Released samples")
    st.dataframe(readable(res["summary"]), hide_index=True, width="stretch")
    st.caption(f"Cost, d_W and accuracy of the released sample (chain: which chain was released); \"mean of last "
               f"m\": the released chain's last m = {p['n_average']} samples.")
    if extra.get("seconds"):
        st.caption("Time: " + "; ".join(f"ε = {e:g}: {extra['seconds'][e]:.3g} s ({extra['ms_per_sweep'][e]:.3g} ms "
                                        "per sweep of all chains)" for e in extra["seconds"]) + ".")
    if extra.get("n_clipped"):
        st.caption(f"{extra['n_clipped']} of {extra['n']:,} rows were longer than 1 and were shrunk onto the unit "
                   "sphere before sampling: the privacy proof (Prop. 4.1) needs every point to have length at most 1, "
                   "a bound fixed before the data are seen.")
    _privacy_box(res, p)
    decided = res.get("privacy_verdicts") or {}
    for eps, ledger in res["ledgers"].items():
        with st.expander(f"Privacy ledger, ε = {eps:g}"):
            v = decided.get(eps)
            show_ledger(ledger, not_private=None if v is None or v.private else v.reason)
    if res.get("code") and stage == "final":
        snippet_expander(res["code"], label="Reproduce the first ε's run in Python")


# ----------------------------------------------------------------------------- instant ε (a preset's ladder)
#: the instant-ε slider's key, and the session key of its "Run live" (the ε to run, read once)
LADDER_KEY, LIVE_KEY = "g_ladder_eps", "g_ladder_live"
#: where the slider starts: Fig. 3's ε at which a chain from the random start often gets stuck
LADDER_DEFAULT = 10.0
_LADDER_PARAMS = ("n_clusters", "subspace_dim", "n_iter", "n_chains", "init", "release", "n_average", "select")


def ladder_of(spec, form):
    """The ladder (:class:`dpcore.lab.ladders.LadderSpec`) of the form's committed settings on the
    dataset ``spec``, or None."""
    return on_preset("gibbs", find_ladder("gibbs", METHOD, spec, {k: form[k] for k in _LADDER_PARAMS}))


def instant_figure(ladder, eps):
    """The traces of one rung of a Gibbs ladder (one column; burn-in shaded, released chain on top)."""
    r = ladder.rung(eps)
    runs = {eps: {name: r[f"trace_{name}"] for name in GIBBS_TRACES if f"trace_{name}" in r}}
    return traces_grid(runs, metrics=list(runs[eps]), burn_in={eps: int(r["burn_in"])},
                       released={eps: int(r["released"])}, max_points=len(r["sweeps"]), sweeps={eps: r["sweeps"]},
                       height_per_row=170)


def live_words(ds, eps, form, seed):
    """The "Run live" caption, from the library's plan of the chains at ``eps``."""
    try:
        v = chain_plans(ds, [eps], form, RunContext(seed=seed, dataset=ds, checks_mixing=True))[0]
    except ValueError as exc:
        return f"Run live = Run chains at this one ε; these settings cannot run ({exc})."
    charged = (f"a private release of ε = {eps:g} if its chains mix, charged to the privacy meter (as ∞ if they do "
               "not)" if v.private else f"NOT private ({v.reason}): the meter lists it as not private")
    return (f"Run live = Run chains at this one ε: {form['n_chains']} chains × {form['n_iter']:,} sweeps with the "
            f"form's settings; noise: {seed_label(seed)}; {charged}.")


def instant_section(ds, ladder_spec, words, seed=None):
    """The slider over a Fig. 3 preset's ladder (:func:`ui.ladder.instant_epsilon`): the chosen ε's
    verdict and traces, and "Run live" (the chains at that ε, see :data:`LIVE_KEY`).
    ``words(epsilon)``: what a live run at that ε is and what it is charged (with the page's
    ``seed``)."""

    def draw(ladder, eps, figures):
        r = ladder.rung(eps)
        v = r["verdict"]
        (st.success if v["mixed"] else st.warning)(
            f"**ε = {eps:g}: {verdict_heading(v)}.** {verdict_text(v['text'], r['trace_cost'].shape[0] == 1)}")
        show_chart(figures[0], f"gibbs instant traces eps {eps:g}", key="g_ladder_fig")
        cost, dw, acc = r["summary"]
        n_iter, kept = ladder.meta["n_iter"], len(r["sweeps"])
        st.caption(f"The chains of this run at ε = {eps:g} (one column; the orange line is the released chain "
                   f"{int(r['released'])}, the shaded sweeps the burn-in): released sample's cost {cost:.4g}, d_W "
                   f"{dw:.3g}, accuracy {acc:.3g}. The verdict was computed on all {n_iter:,} sweeps when the ladder "
                   f"was built; the lines show {kept} of them per chain. Rule: {v['rule']} One run per ε with one "
                   "public seed: another seed can give another verdict (press Run live to see).")

    st.markdown("**Instant ε** — this preset's chains at every ε of a ladder, computed in advance: move the "
                "slider.")
    instant_epsilon(ladder_spec, key=LADDER_KEY, default=LADDER_DEFAULT,
                    figures=lambda ladder, eps: (instant_figure(ladder, eps),), draw=draw, live_key=LIVE_KEY,
                    live_words=lambda ladder, eps: words(eps), words_key=seed)


def _eps_run(eps_list):
    """'the ε = 0.1, 1 runs' (the list is not last: no item's words start another's)."""
    return f"the ε = {', '.join(f'{e:g}' for e in eps_list)} run{'s' if len(eps_list) > 1 else ''}"


def void_reasons(ds, eps_list, params, context):
    """Why the run's settings make it not private whatever its chains do and however its noise is
    drawn (a non-private start or choice of chain, a q read off the data): the reasons of the
    library's plan of the same run with secret noise (:func:`chain_plans`), shown as the result's
    "Not private" flag. The public seed is said with the seed, and a chain's mixing per ε."""
    return list(chain_plans(ds, eps_list[:1], params, replace(context, seed=None))[0].reasons)


def _privacy_box(res, p):
    """The privacy box of the run on screen, following the verdicts the meter was charged with
    (:func:`judge_chains`, stored with the result): the ε runs they call private under Private,
    the others under Not private with the verdict's reason."""
    decided = res.get("privacy_verdicts")
    if decided is None:
        st.info("This result was computed by an older version of the page, whose privacy verdicts were not kept: "
                "press **Run chains** again.")
        return
    what = ("released sample (the subspaces and the labels)" if p["release"] == "sample" else
            "released samples and their mean (the subspaces and the labels)")
    private_eps = [e for e, v in decided.items() if v.private]
    private = []
    if private_eps:
        private.append(
            f"the {what} of {_eps_run(private_eps)} — called mixed, so ε-DP, but only asymptotically (exact "
            "sampling of eq. (10)) and only from the random start"
            + ("" if p["release"] == "sample" else
               f", the last {p['n_average']} consecutive samples costing ε + {p['n_average'] - 1}·(q+3)ε/2 each")
            + " (spent: " + "; ".join(f"ε = {format_epsilon(decided[e].epsilon)} for the ε = {e:g} run"
                                      for e in private_eps) + ", see the ledgers)")
    by_reason = {}
    for e, v in decided.items():
        if not v.private:
            by_reason.setdefault(v.reason, []).append(e)
    not_private = ([f"the {what} of {_eps_run(eps)} — {why}" for why, eps in by_reason.items()]
                   + ["the traces, R̂/ESS table, verdict and costs (they read the raw data, the true subspaces and "
                      "every sample of every chain: teaching diagnostics, not releases)",
                      "the other chains' samples (each would cost ε more)",
                      "labels obtained by assigning the raw points to the released subspaces (not shown)"])
    meter = (["The privacy meter in the sidebar counts only the runs listed as private here and lists the others "
              "as not private (ε = ∞ for the dataset), with the same reasons."] if by_reason else [])
    privacy_statement(private=private, not_private=not_private,
                      caveats=seed_caveat(p["random_state"]) + meter + res["caveats"],
                      execution=["GibbsSubspaceClustering"])
