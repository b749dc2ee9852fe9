"""The Audit page's helpers: the limits of its controls (the same numbers for the widgets and for
the link parsers), the run with its progress bar, and the drawing of a result.

Decisions
---------
- Runs per side: at least :data:`dpcore.lab.audit.MIN_TRIALS` (what ``audit_estimator`` accepts)
  and at most :data:`MAX_TRIALS` (a page limit: the audit's runs go one after the other in the
  server process). The widget, the link parser and the estimator use these constants, so a link
  with ``audit_trials=1`` is refused with a warning when it is opened, not at Run.
- A claimed ε is empty (no claim: a non-private algorithm) or at least :data:`EPS_MIN` (the
  k-means and co-clustering pages' smallest ε; dpcore wants > 0): the page checks the field
  (:func:`ui.common.number_input`), so 0 or −1 is refused under it and beside Run, before any
  run, and a link carrying one is refused in the same words (:func:`claimed_epsilon`).
- A result is drawn twice in a run that starts a new audit: first the stored previous one (so
  that Streamlit's Stop leaves it on the screen), then the new one; ``stage`` keeps the keys of
  the two drawings' chart and download buttons apart.
- **Every release charged.** The data default to the audit sets (:data:`SOURCES`: public,
  synthetic, nothing of the user's). An audit of the Data page's dataset runs the method
  2 × runs-per-side times on the user's data: every run on D and on D′ (a neighbour of D: one
  record added, removed or replaced, or one count changed — a release about the same people)
  is one fit, charged to that dataset's meter as the runs finish (:class:`AuditCharge`; a
  stopped audit has paid for the runs it finished), all in ONE meter entry per audit (its fits
  add up), or the audit is refused before it starts when the class budget would be exceeded.
  What one run spends and whether it is private is the library's verdict
  (:func:`dpcore.lab.audit.runners.audit_verdict`: the estimator's plan in the context of an
  audit, which does not check a chain's mixing); the whole audit's plan is that verdict × 2 ×
  runs per side (:func:`dpcore.lab.audit.runners.audit_plan`), and each finished piece is
  charged as the verdict × the runs it finished. The planned charge is shown beside the Run
  button (:meth:`AuditCharge.preview`). A run that is not private (a public seed, a non-private
  start, a radius read off the data, float noise, Gibbs' unchecked mixing) is listed in the
  meter as not private, with the verdict's reasons, and refused under a class budget; a method
  without a privacy claim is not charged.
- **What the charge covers.** The releases of the runs are charged; what the page shows (the
  per-run statistics, histograms and CSV exports) is computed from the raw data of D and D′
  as well (e.g. distances to the user's real first row) and is not private
  (:func:`privacy_parts`).
- On the audit sets the seed is not a privacy matter (the audit releases nothing about the
  user); a fixed seed only makes the audit repeatable (:func:`audit_seed_words`).
"""
from __future__ import annotations

import math
import uuid

import pandas as pd
import streamlit as st

from dpcore.lab.audit import ALL_NEIGHBOURS, AUDIT_SETS, MIN_TRIALS, NEIGHBOUR_RELATION, RELATIONS, STATISTIC_HELP
from dpcore.lab.audit import audit_verdict
from dpcore.lab.methods import METHODS, get_method
from dpcore.plots.audit import audit_histograms
from ui.common import show_chart
from ui.meter import format_epsilon, relation_words, reserve
from ui.seeds import MAX_SEED
from ui.share import as_int, one_of

#: runs per side, the page's limit: the runs go one after the other in the server process (measured
#: here: DP-τCC on the blocks set 17 ms a run, so 2 × 5,000 runs ≈ 3 min; SuLQ k-plane on the
#: subspaces set 4 ms a run)
MAX_TRIALS = 5_000
DEFAULT_TRIALS = 200
MAX_SWEEPS = 1_000              # Gibbs sweeps per audited run (the start leak is gone after ~5)
#: runs per side × Gibbs sweeps (a sweep-run on the three-axes set takes ~0.14 ms, so at most ≈ 1 min)
MAX_GIBBS_SWEEP_RUNS = 200_000
DATA_PAGE = "data_page"
INITS = {"random": "random (private)", "kplane": "k-plane (NOT private)"}
CONFIDENCES = [0.9, 0.95, 0.99]
#: the methods whose audit is a chain's: the page draws their sweeps and start, bounds their length
#: (:func:`check_audit_size`) and explains what ε̂ means for a chain that may not have mixed (whether
#: their runs are private is the library's verdict, not this list's)
CHAINS = ("gibbs",)
#: the smallest claimed ε the page takes (as the k-means and co-clustering pages; dpcore wants > 0)
EPS_MIN = 0.001
#: the audit sets first (the default: public data, nothing of the user's is released), the Data page's dataset last
SOURCES = [*AUDIT_SETS, DATA_PAGE]


#: the x-axis title of the histograms per statistic (the full description is in the caption)
AXIS_TITLES = {"outlier_distance": "distance from the audited point to the nearest released subspace",
               "table_cell": "the released contingency-table cell that holds the changed cell",
               "cell_unreachable": "1 = the released cell could not come from D′, 0 = it could",
               "nearest_centre": "distance from the audited point to the nearest released centre",
               "likelihood_ratio": "likelihood-ratio score of the release (fitted on the first half of the runs)"}


def source_label(s):
    return "the Data page's dataset (every run charged to its meter)" if s == DATA_PAGE else AUDIT_SETS[s].label


def algorithm_label(n):
    return get_method(n).description or n


def claimed_epsilon(text):
    """Link parser of a claimed ε: a finite number ≥ :data:`EPS_MIN`, the field's limit."""
    v = float(text)
    if not math.isfinite(v) or v < EPS_MIN:
        raise ValueError(f"claimed ε must be at least {EPS_MIN:g}, not {text}")
    return v


#: the widgets whose values travel in the page's link, and their parsers (the widgets' limits)
URL_FIELDS = {"audit_data": one_of(SOURCES, source_label), "audit_algorithm": one_of(list(METHODS), algorithm_label),
              **{f"audit_eps_{n}": claimed_epsilon for n, m in METHODS.items() if m.private},
              "audit_neighbour": one_of(list(ALL_NEIGHBOURS), ALL_NEIGHBOURS.get),
              "audit_trials": as_int(MIN_TRIALS, MAX_TRIALS), "audit_sweeps": as_int(1, MAX_SWEEPS),
              "audit_init": one_of(list(INITS), INITS.get), "audit_confidence": one_of(CONFIDENCES),
              "audit_seed": as_int(0, MAX_SEED)}


def check_audit_size(name, trials, params):
    """The page's bound on a Gibbs audit's length (runs per side × sweeps); ValueError naming both."""
    if name not in CHAINS:
        return
    sweeps = int(params.get("n_iter", 1))
    if int(trials) * sweeps > MAX_GIBBS_SWEEP_RUNS:
        raise ValueError(f"trials (runs per side) × n_iter (Gibbs sweeps) = {int(trials) * sweeps:,} > "
                         f"{MAX_GIBBS_SWEEP_RUNS:,}: this audit would run for many minutes; use fewer runs or sweeps")


def audit_seed_words(seed, own_data=False) -> str:
    """How an audit's seed is shown: on the audit sets a seed is no privacy matter (nothing of the
    user's is released); on the user's data a public seed makes every run not private."""
    if seed is None:
        return "fresh random (another run of the same audit gives slightly different numbers)"
    return f"{seed} (fixed: the same audit gives the same numbers again" + (
        "; on your data its runs are NOT private, and the meter lists them so)" if own_data else ")")


def run_label(name):
    """The meter's label of an audit's runs."""
    return f"audit of {algorithm_label(name)}: runs on D and on D′ (a neighbour of D)"


def verdict_or_none(name, ds, params, epsilon, seed):
    """The library's verdict of one run of an audit with these controls
    (:func:`dpcore.lab.audit.runners.audit_verdict`), or None when they cannot run (no claimed
    ε ≥ :data:`EPS_MIN` for a private algorithm, or a parameter dpcore refuses: Run says why)."""
    if get_method(name).private and (epsilon is None or not epsilon >= EPS_MIN):
        return None
    try:
        return audit_verdict(name, ds, epsilon, params, seed, label=run_label(name))
    except ValueError:
        return None


class AuditCharge:
    """Charges an audit of the user's dataset to its meter as the runs finish, as the library's
    verdict of one run says (``verdict``: :func:`dpcore.lab.audit.runners.audit_verdict`): each
    run on D and on D′ is one fit. All of an audit's charges go to ONE meter entry (its
    ``entry`` id), whose fits add up. Use it as a context manager around the audit: entering
    reserves the whole audit's plan (the verdict × 2 × runs per side) against the class budget
    (a ValueError in the budget's words refuses it before any run), leaving gives back what was
    not charged."""

    def __init__(self, verdict, ds, trials):
        self.verdict, self.dataset, self.trials = verdict, ds, int(trials)
        self.entry = f"audit-{uuid.uuid4().hex}"
        self.charged = 0
        self._reservation = None

    @property
    def plan(self):
        """The whole audit's planned verdict: 2 × runs per side fits."""
        return self.verdict.times(2 * self.trials)

    def __enter__(self):
        self._reservation = reserve([self.plan], self.dataset)
        return self

    def __exit__(self, *exc):
        if self._reservation is not None:
            self._reservation.release()
            self._reservation = None
        return False

    def preview(self):
        """What Run will charge, in the meter's words (shown beside the button)."""
        n, v = 2 * self.trials, self.verdict
        head = f"Running this audit on **{self.dataset.name}** makes 2 × {self.trials:,} = {n:,} fits on your data"
        if not v.claim:
            return head + f"; the meter does not count them ({v.reason})."
        if not v.private:
            return (head + f"; the meter lists them as not private ({v.reason}): the dataset's ε becomes ∞, and a "
                    "class budget refuses the audit.")
        delta = f", δ = {v.delta:.3g} each" if v.delta else ""
        return (head.replace(" makes ", " charges ") + f" at ε = {format_epsilon(v.epsilon)} each{delta} (ε = "
                f"{format_epsilon(self.plan.epsilon)} in all for {relation_words(v.relation)}), to its privacy "
                "meter as the runs finish: a stopped audit has paid for the runs it finished.")

    def charge(self, done):
        """Charge the fits finished since the last call (``done``: runs so far, both sides) to the
        audit's one meter entry: the verdict of one run × the new runs."""
        new = int(done) - self.charged
        if new <= 0 or self._reservation is None:
            return
        self._reservation.charge(self.verdict.times(new), entry=self.entry)
        self.charged = int(done)


def charge_preview(verdict, ds, trials):
    """:meth:`AuditCharge.preview` for the page's current controls' verdict, or None (no verdict:
    the controls cannot run)."""
    return None if verdict is None else AuditCharge(verdict, ds, trials).preview()


def charge_words(out):
    """What an audit of the user's dataset cost, in the meter's words (its stored verdict)."""
    n, v = 2 * int(out["res"].stats_a.size), out["verdict"]
    if not v.claim:
        return f"Not counted in {out['dataset']}'s privacy meter ({n:,} fits): {v.reason}."
    if v.private:
        return (f"Charged to {out['dataset']}'s privacy meter, as one entry: {n:,} fits ({n // 2:,} runs on D and "
                f"{n // 2:,} on D′, a neighbour of D), each a release at the claimed ε = "
                f"{out['res'].nominal_epsilon:g}.")
    return (f"Listed in {out['dataset']}'s privacy meter, as one entry, as {n:,} fits that are not private: "
            f"{v.reason}.")


def privacy_parts(own_data, private, reason, dataset, planned=False, claim=True):
    """(private, not private, caveats) of the page's privacy box: on the user's data the runs'
    releases are charged (or listed as not private) while everything shown is computed from the
    raw data of D and D′ too; on the audit sets nothing of the user's is involved.

    The box is about the audit on screen: pass what its verdict said (its stored ``own_data``,
    the verdict's ``private``, ``reason`` and ``claim``, and the dataset). ``planned``: no audit is on
    screen, the box speaks of what an audit with the current settings would do. ``claim``
    False: the method makes no privacy claim, and the meter does not count its runs."""
    would = "an audit with these settings would " if planned else ""
    if not own_data:
        what = "everything an audit with these settings would show" if planned else "everything this page shows"
        return ([], [f"{what}: the audit looks at every run's release on D and D′, the planted outlier or cell and "
                     "the raw data, and exports every run's statistic"],
                ["The audit sets are public synthetic data: nothing of yours is released, and the meter is not "
                 "charged."])
    shown = ("the statistics, histograms and CSV exports " + ("it would show" if planned else "this page shows")
             + ": computed from the raw data of D and D′ as well as the releases (e.g. distances from the released "
               "subspaces or centres to the audited point and to your real first row, or the count of the changed "
               "cell), so they are not private")
    runs = "each run's release on D and on D′ (a neighbour of D: a release about the same people)"
    if private:
        charged = f"{would}charge one fit each" if planned else "one fit each, charged"
        return ([f"{runs}: {charged} to {dataset}'s privacy meter at the claimed ε (2 × runs per side fits, in one "
                 "entry); the page never shows the releases themselves"], [shown],
                ["Audit the public audit sets instead when you can: an audit of your data spends 2 × runs per side "
                 "times the claimed ε."])
    if not claim:
        counted = "the meter would not count them" if planned else "not counted by the meter"
        return [], [f"{runs}: not private ({reason}); {counted}", shown], []
    listed = f"{would}list them in" if planned else "listed in"
    return [], [f"{runs}: {listed} {dataset}'s privacy meter as not private ({reason})", shown], []


def progress_text(done, total, keeps_previous):
    stop = "Stop, top right, cancels; the previous result stays below" if keeps_previous else "Stop, top right, cancels"
    return f"Audit: {done} of {total} runs ({stop})"


def _fmt(v):
    return "–" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.3g}"


def draw_result(out, stage):
    """Draw a stored audit: the bound and verdict, the histograms, the rates and the downloads.
    ``stage`` ("previous" or "final") keeps the keys of two drawings in one run apart."""
    res = out["res"]
    claimed = out.get("relation")         # the relation the method's ε is stated for (its verdict's)
    st.subheader(f"{algorithm_label(out['name'])} on {out['dataset']}")
    c1, c2, c4 = st.columns(3)          # the verdict is the box below (a metric cut it off)
    c1.metric("ε̂ (lower bound)", f"{res.epsilon_lower:.3g}", help=f"holds with {res.confidence:.0%} confidence")
    c2.metric("claimed ε", "none" if res.nominal_epsilon is None else f"{res.nominal_epsilon:.3g}")
    c4.metric("largest ε̂ these runs can show", f"{res.epsilon_ceiling:.3g}",
              help="the bound a test that separates D from D′ perfectly would give with these held-out runs")
    if res.verdict == res.LEAKS:
        st.warning(f"**Leaks more than claimed:** with {res.confidence:.0%} confidence the release spends at least "
                   f"ε̂ = {res.epsilon_lower:.3g} > ε = {res.nominal_epsilon:.3g}.")
    elif res.verdict == res.CONSISTENT:
        more = ("" if res.epsilon_ceiling > res.nominal_epsilon else
                f" These runs could not show more than ε̂ = {res.epsilon_ceiling:.3g} ≤ ε whatever the algorithm "
                "did: use more runs to make the audit able to catch a leak.")
        st.success(f"**Consistent with the claim:** ε̂ = {res.epsilon_lower:.3g} ≤ ε = {res.nominal_epsilon:.3g}. "
                   f"No violation found with these runs (not a proof of privacy).{more}")
    else:
        st.info(f"**No bound: not private.** The algorithm makes no privacy claim; the audit shows it spends at "
                f"least ε̂ = {res.epsilon_lower:.3g} on this neighbour (with {res.confidence:.0%} confidence).")
    claim = "no claim" if res.nominal_epsilon is None else f"eps {res.nominal_epsilon:.3g}"
    axis = AXIS_TITLES.get(out["statistic"], STATISTIC_HELP[out["statistic"]])
    show_chart(audit_histograms(res, axis), f"audit {out['name']} {out['dataset']} {claim}",
               key=f"audit_histograms_{stage}")
    st.caption("What to look for: for a private release the two histograms overlap, so no threshold separates "
               "them much better than e^ε allows; a non-private one (or a leaking start) puts them apart.")
    table = pd.DataFrame({"rate": [_fmt(res.tpr), _fmt(res.fpr)],
                          "lower end": [_fmt(res.tpr_ci[0]), _fmt(res.fpr_ci[0])],
                          "upper end": [_fmt(res.tpr_ci[1]), _fmt(res.fpr_ci[1])]},
                         index=["true positives: said D on runs on D", "false positives: said D on runs on D′"])
    st.dataframe(table, width="stretch")
    side = "at or above" if ">=" in res.orientation else "at or below"
    st.caption(f"{res.n_runs} runs ({res.n_heldout} held out for the bound), {out['seconds']:.3g} s. The test says "
               f"\"D\" when the statistic is {side} {res.threshold:.4g}; point estimate of ε {res.epsilon_point:.3g}; "
               f"δ used in the bound {res.delta:.2g}; rates with two-sided {res.confidence:.0%} Clopper–Pearson "
               f"intervals. Neighbour: {ALL_NEIGHBOURS[out['neighbour']]} — audited relation: "
               f"{RELATIONS[NEIGHBOUR_RELATION[out['neighbour']]]}"
               + ("." if claimed is None else " (the claimed one)." if res.relation == claimed else
                  f", NOT the claimed {RELATIONS[claimed]}.")
               + f" Statistic: {STATISTIC_HELP[out['statistic']]}. Seed: "
               f"{audit_seed_words(out.get('seed'), out.get('own_data', False))}.")
    if out.get("own_data"):
        st.caption(charge_words(out))
    if out["name"] in CHAINS:
        start = out["params"].get("init", "random")
        sweeps = out["params"].get("n_iter")
        if start != "random":
            st.info(f"This chain started from the non-private {INITS[start].split(' (')[0]} solution and ran {sweeps} "
                    "sweep(s). Its ε holds only for an exact exponential-mechanism draw; this release is not one, and "
                    "ε̂ measures what the data-dependent start still leaks. ε̂ ≤ ε here would not restore the guarantee.")
        else:
            st.info(f"This chain started from the private random start and ran {sweeps} sweep(s). Its ε is an "
                    "asymptotic guarantee (exact once the chain has mixed); ε̂ tests it on this neighbour.")
    runs = pd.DataFrame({"side": ["D"] * res.stats_a.size + ["D′"] * res.stats_b.size,
                         "run": list(range(res.stats_a.size)) + list(range(res.stats_b.size)),
                         "statistic": list(res.stats_a) + list(res.stats_b)})
    summary = pd.DataFrame([{
        "algorithm": out["name"], "dataset": out["dataset"], "neighbour": out["neighbour"],
        "audited relation": res.relation, "claimed relation": claimed,
        "statistic": out["statistic"], "params": str(out["params"]), "claimed epsilon": res.nominal_epsilon,
        "epsilon lower bound": res.epsilon_lower, "point estimate": res.epsilon_point,
        "ceiling": res.epsilon_ceiling, "verdict": res.verdict, "tpr": res.tpr, "fpr": res.fpr,
        "tpr ci": res.tpr_ci, "fpr ci": res.fpr_ci, "threshold": res.threshold, "test": res.orientation,
        "runs per side": res.stats_a.size, "confidence": res.confidence, "delta": res.delta,
        "seed": out.get("seed"), "seconds": out["seconds"]}])
    c1, c2 = st.columns(2)
    c1.download_button("Download runs (CSV)", runs.to_csv(index=False), "audit_runs.csv", "text/csv",
                       key=f"audit_runs_csv_{stage}")
    c2.download_button("Download summary (CSV)", summary.to_csv(index=False), "audit_summary.csv", "text/csv",
                       key=f"audit_summary_csv_{stage}")
