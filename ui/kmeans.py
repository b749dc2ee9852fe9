"""The k-means page's helpers (pages/6_kmeans.py): the limits its widgets and its link share,
its presets, the "ε side by side" run, and the drawing of both results with their privacy
boxes.

Decisions
---------
- Every limit is defined once here and used by the widget and by the link's parser, so a
  link cannot carry a value the widget or the estimator would refuse (``km_eps=inf`` is
  refused with a warning at load).
- Methods are named by their catalogue names (:data:`dpcore.lab.compare.METHODS`), in the
  widgets, the presets and the links; a link made with the comparison's old keys ("candidate",
  "sulq", "sample_aggregate", "lsh") still opens (:data:`dpcore.lab.compare.OLD_KEYS`).
- "ε side by side" runs ONE private method at 1-4 values of ε taken from a fixed ladder
  (:data:`EPS_LADDER`, inside the ε widget's limits: a choice from a list cannot be out of
  range or unparsable), each run with every other setting of the form. Each run is a
  release on the same data: each is charged to the meter and the box adds them up
  (sequential composition). The panels' ratios all use ONE k-means++ reference (the first
  run's), so that their denominators agree.
- Nothing here decides whether a run is private or what it spends. Before a run, the library
  plans it (:func:`dpcore.lab.compare.plan_comparison`: one verdict per release); the plans are
  reserved against the class budget (:func:`ui.meter.reserve`, which refuses a run that would
  not be private under a budget); after it every fitted run is judged
  (:func:`dpcore.lab.verdicts.judge_run`) and its verdict charged. A radius read off the data,
  a public seed and the DP-Lloyd peer's floating-point noise all come out of the verdicts; the
  privacy boxes, tables and headings follow the stored verdicts.
- Results are drawn newest first into slots created before the run starts, and drawn there
  before the run too: Streamlit's Stop then leaves the previous results on screen.
- Instant ε (issue 33): on a preset with a precomputed ε ladder
  (:data:`dpcore.lab.ladders.LADDERS`: the "ε side by side" preset, the §7 Gaussians and Yale B,
  with the candidate set side by side), while the form's committed settings are still the
  preset's (:func:`ui.ladder.on_preset`), :func:`instant_section` shows a slider over the ladder
  (0.01 … 100, the values offered side by side) in a fragment: the chosen ε's released centres
  over the points (one 2-D panel, k-means++'s centres faint in it) beside the objective ÷
  k-means++ at every rung (a curve that does not change as ε moves). Those runs have a public
  seed: a demonstration, not a private release, charged to nobody. "Run live" stores the ε under
  :data:`LIVE_KEY`; the page then runs "ε side by side" at that one ε (planned, reserved, judged
  and charged as any side-by-side run).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from dpcore.kmeans.candidate import stage_explanations
from dpcore.lab.compare import METHODS, OLD_KEYS, MethodResult, compare_methods, method_name, plan_comparison
from dpcore.lab.ladders import find_ladder
from dpcore.lab.verdicts import judge_run
from dpcore.plots.kmeans import budget_bars, candidate_view, centres_scatter, epsilon_panels, objective_bars
from dpcore.plots.ladders import ladder_curve
from dpcore.preprocessing import normalize_rows
from dpcore.privacy import basic_composition
from ui.common import dataset_from_spec, privacy_statement, show_chart, show_ledger
from ui.ladder import MAX_POINTS, instant_epsilon, on_preset
from ui.meter import reserve
from ui.pickers import PICKERS, picker_url_fields
from ui.seeds import MAX_SEED, seed_caveat, seed_label
from ui.share import Preset, as_bool, as_float, as_int, list_of, one_of, snippet_expander

# ----------------------------------------------------------------------------- limits (widget = link)
EPS_MIN, EPS_MAX = 0.001, 1000.0
#: the ε values offered side by side (log-spaced, inside [EPS_MIN, EPS_MAX])
EPS_LADDER = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
MAX_SIDE_BY_SIDE = 4
#: "noise wins" at 0.1, close to non-private at 100 on the presets' data (the candidate method on the
#: "ε side by side" preset, objective ÷ k-means++, median of 200 runs: 52 / 16 / 4.5 / 1.02; see there)
DEFAULT_EPS_SERIES = [0.1, 1.0, 10.0, 100.0]
DELTA_MIN, DELTA_MAX = 1e-12, 0.1
RADIUS_MIN, RADIUS_MAX = 1e-6, 1e6
K_MAX = 200
assert all(EPS_MIN <= e <= EPS_MAX for e in EPS_LADDER) and set(DEFAULT_EPS_SERIES) <= set(EPS_LADDER)


def method_label(name):
    """A method's name as the widgets show it (and the link carries it)."""
    return METHODS[name][0]


def eps_label(eps):
    """An ε of the ladder as the multiselect shows it (and the link carries it): "0.1", "10"."""
    return f"{eps:g}"


URL_FIELDS = {
    **picker_url_fields("km_data", "points", "km"),     # the dataset picker's inputs, with its own limits
    "km_k": as_int(1, K_MAX), "km_eps": as_float(EPS_MIN, EPS_MAX), "km_delta": as_float(DELTA_MIN, DELTA_MAX),
    "km_radius": as_float(RADIUS_MIN, RADIUS_MAX), "km_methods": list_of(METHODS, method_label, OLD_KEYS),
    "km_leak": as_bool, "km_seed": as_int(0, MAX_SEED),
    "km_eps_list": list_of(EPS_LADDER, eps_label), "km_eps_method": one_of(METHODS, method_label, OLD_KEYS),
}
#: the methods a Run uses by default (DP-Lloyd is a peer that is not private as executed: chosen, not default)
DEFAULT_METHODS = ["candidate_kmeans", "sulq_kmeans", "sa_kmeans", "lsh_coreset"]

PRESETS = {
    "64 Gaussians in R^100 (§7: n = 20,000, k = 16, ε = 1)": Preset(
        {"km_data": "gaussians", "km_n": 20_000, "km_d": 100, "km_comp": 64, "km_sigma": 0.1, "km_dseed": 0,
         "km_k": 16, "km_eps": 1.0, "km_delta": 1e-6, "km_radius": 14.0, "km_leak": False,
         "km_methods": ["candidate_kmeans", "sulq_kmeans", "sa_kmeans", "dplloyd", "lsh_coreset"],
         "km_eps_list": [0.01, 0.1, 1.0, 10.0], "km_eps_method": "candidate_kmeans"},
        # The numbers below: dpcore.lab.compare.compare_methods (Run) and ui.kmeans.epsilon_series (side by
        # side) on this preset's data and form, root seeds 0-29 (the run_seed recipe), min-max over the 30 runs.
        # Time of Run in headless Chromium (tests/browser/stdriver.py press_timed, click until drawn): 5.9 s in a
        # fresh session at load 3 on 2 cores (3.6 s after the lesson's two k-means steps), 15-24 s at load 8-17,
        # 28-38 s after the lesson's steps at load 9-12; 3-5 s of server CPU and 3.5-7 s of browser CPU; the page's
        # run alone (AppTest) 2.1 s at load 0.3, sample and aggregate 40 % of it.
        about="The paper's synthetic data (scaled to seconds). Objective ÷ k-means++ in 30 of our runs: 1.24–1.34 "
              "for the candidate set, 1.35–1.45 for SuLQ, 8.4–8.9 for sample-and-aggregate, 2.8–6 for DP-Lloyd, and "
              "1.13–1.23 for the LSH coreset, today's practical peer (not in the paper): here it beats the paper's "
              "method. DP-Lloyd (diffprivlib) is private on paper only: its floating-point noise is not private as "
              "executed, so the meter lists its run as not private (the dataset's ε becomes ∞) and a class budget "
              "refuses it (deselect it there). Λ = 14 comes from the generator. Side by side: the candidate set from "
              "ε = 0.01 (noise wins, 6.7–8.9) to ε = 10 (1.06–1.15). Run fits five methods on 20,000 points in R^100: "
              "about 6 s on a quiet 2-core laptop, 15–40 s on a busy one (a class on one server). The paper's Fig. 2 "
              "(objective against k and ε, every method) is precomputed on the Paper figures page."),
    "ε side by side: 8 Gaussians in R^50, ε = 0.1 to 100": Preset(
        {"km_data": "gaussians", "km_n": 5000, "km_d": 50, "km_comp": 8, "km_sigma": 0.1, "km_dseed": 0,
         "km_k": 8, "km_eps": 1.0, "km_delta": 1e-6, "km_radius": 10.0, "km_leak": False,
         "km_methods": ["candidate_kmeans", "sulq_kmeans"], "km_eps_list": DEFAULT_EPS_SERIES,
         "km_eps_method": "candidate_kmeans"},
        # The numbers below: ui.kmeans.epsilon_series on this preset's data and form (default projection
        # dimension and budget split), root seeds 0-199 through the one seed recipe (dpcore.lab.methods.run_seed),
        # objective ÷ the first run's k-means++; 10th-90th percentile, then min-max over the 200 runs:
        # ε = 0.1: 37-98 (23-159); ε = 1: 12.9-19.7 (4.4-24.2); ε = 10: 1.10-8.5 (1.09-13.0);
        # ε = 100: 1.00-4.6 (0.29-8.4), ≤ 1.05 in 57 % of the runs. Below 1: the one-start k-means++
        # reference itself merged two clusters.
        about="Press \"Compare ε values side by side\": the candidate set at ε = 0.1, 1, 10, 100 on eight well "
              "separated clusters. Objective ÷ k-means++ in 8 of 10 of our runs (in brackets: all of 200 runs): "
              "37–98 at ε = 0.1 (23–160; noise wins), 13–20 at 1 (4–24), 1.1–8.5 at 10 (1.1–13), 1.0–4.6 at 100 "
              "(0.3–8.4; 1.0 in more than half). The numbers move with the secret noise; the trend does not. A ratio "
              "below 1 (rare) means the one-start k-means++ reference itself merged two clusters. Λ = 10 bounds the "
              "generator's points (its own bound is 9.9), so it is public."),
    "The leaking radius (Λ read off the data)": Preset(
        {"km_data": "gaussians", "km_n": 5000, "km_d": 50, "km_comp": 8, "km_sigma": 0.1, "km_dseed": 0,
         "km_k": 8, "km_eps": 1.0, "km_delta": 1e-6, "km_leak": True,
         "km_methods": ["candidate_kmeans", "sulq_kmeans"], "km_eps_list": DEFAULT_EPS_SERIES,
         "km_eps_method": "candidate_kmeans"},
        about="What a careless user does: Λ = max ‖x‖. The runs are then not private, at any ε; the page says so."),
    "Yale B faces, 5 subjects": Preset(
        {"km_data": "yaleb", "km_k": 5, "km_eps": 1.0, "km_delta": 1e-6, "km_radius": 1.0, "km_leak": False,
         "km_methods": ["candidate_kmeans", "sulq_kmeans", "sa_kmeans"], "km_eps_list": DEFAULT_EPS_SERIES,
         "km_eps_method": "candidate_kmeans"},
        about="Rows of unit norm, so Λ = 1 is public. Faces are not well separated clusters: every private method "
              "stays well above k-means++ at ε = 1."),
}
# Offered once the shared dataset picker (ui/pickers.py) lists scikit-learn's digits (PAPER_SPECS["digits"]):
# a preset whose dataset the picker does not offer would silently fall back to another dataset.
# Measured with dpcore.lab.compare.compare_methods, seeds 0-4: objective ÷ k-means++ median
# (range) candidate 2.23 (2.03-2.92), SuLQ 2.56 (2.51-2.59), s.a. 26.2 (25-27), DP-Lloyd 149 (144-154),
# LSH coreset 4.06 (2.99-5.14).
DIGITS_PRESET = {
    "Handwritten digits (real data, k = 10, ε = 1)": Preset(
        {"km_data": "digits", "km_k": 10, "km_eps": 1.0, "km_delta": 1e-6, "km_radius": 8.0, "km_leak": False,
         "km_methods": ["candidate_kmeans", "sulq_kmeans", "sa_kmeans", "dplloyd", "lsh_coreset"],
         "km_eps_list": DEFAULT_EPS_SERIES, "km_eps_method": "candidate_kmeans"},
        about="1797 scanned digits of 8 × 8 pixels (scikit-learn), our stand-in for the real-data panel of the "
              "paper's Fig. 2(d) (which uses MNIST, 70,000 × 784). Pixels scaled to [0, 1], so Λ = √64 = 8 is "
              "public. Objective ÷ k-means++ in our runs: about 2.2 for the candidate set, 2.6 for SuLQ, 4 for the "
              "LSH coreset (3 to 5: 1,797 points leave few per tree leaf), 26 for sample-and-aggregate, 150 for "
              "DP-Lloyd (its start, uniform in the box [−8, 8]^64, lies far from the digits; and it is not private as "
              "executed: the meter lists it so)."),
}
if "digits" in PICKERS["points"][1]:
    PRESETS.update(DIGITS_PRESET)

STAGE_WORDS = {"candidate": "Candidate set", "localswap": "Local swaps", "recovery": "Recovery"}
RESULT_KEY, SERIES_KEY, ORDER_KEY = "kmeans_result", "kmeans_series", "kmeans_order"
#: the instant-ε slider's key, and the session key of its "Run live" (the ε to run side by side, read once)
LADDER_KEY, LIVE_KEY = "km_ladder_eps", "km_ladder_live"


def sig(x, digits=4):
    """``x`` rounded to ``digits`` significant digits (for tables: 468533.3054 -> 468500)."""
    x = float(x)
    return x if not np.isfinite(x) or x == 0 else float(f"{x:.{digits}g}")


def points_of(ds):
    """The points the page clusters: CLUTO counts with rows scaled to norm 1."""
    return normalize_rows(ds.X) if ds.kind == "counts" else ds.X


# ----------------------------------------------------------------------------- ε side by side (pure)
@dataclass
class EpsilonSeries:
    """One method at several ε on the same data (:func:`epsilon_series`).

    Attributes
    ----------
    method, label : str
        The method's catalogue name and label.
    epsilons : list of float
        The ε of every run, in order.
    runs : list of MethodResult
        One per ε; ``ratio`` is the objective ÷ ``reference``'s.
    reference : MethodResult
        The non-private k-means++ run.
    radius : float
        The Λ used.
    radius_from_data : bool
        True when Λ was read off the data (the runs' verdicts then say they are not private).
    n_clipped : int
        Rows changed by clipping to Λ.
    """
    method: str
    label: str
    epsilons: list
    runs: list
    reference: MethodResult
    radius: float
    radius_from_data: bool
    n_clipped: int


def check_epsilons(epsilons):
    """The ε values of a side-by-side run as floats; ValueError for none, too many, or one
    outside [EPS_MIN, EPS_MAX]."""
    eps = [float(e) for e in epsilons]
    if not 1 <= len(eps) <= MAX_SIDE_BY_SIDE:
        raise ValueError(f"ε values side by side: choose 1 to {MAX_SIDE_BY_SIDE} values; got {len(eps)}")
    for e in eps:
        if not EPS_MIN <= e <= EPS_MAX:
            raise ValueError(f"epsilon must be in [{EPS_MIN:g}, {EPS_MAX:g}]; got {e!r}")
    return eps


def epsilon_series(X, n_clusters, method, epsilons, radius, delta=1e-6, options=None, random_state=None,
                   progress=None):
    """Run ``method`` once per ε of ``epsilons`` with :func:`dpcore.lab.compare.compare_methods`.

    Every ε is a separate release with its own noise: fresh OS entropy when ``random_state``
    is None, else the seed of run i from the one seed recipe
    (:func:`dpcore.lab.methods.run_seed` of ``random_state``, the method, ε and trial i; public). Ratios are taken
    against the FIRST run's k-means++ reference (all objectives are on the same clipped points).

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (n, d)
    n_clusters : int
    method : str
        A catalogue name, key of :data:`dpcore.lab.compare.METHODS` (an old key is accepted).
    epsilons : sequence of float
        1 to :data:`MAX_SIDE_BY_SIDE` values in [EPS_MIN, EPS_MAX].
    radius : float or "data"
    delta : float, default 1e-6
    options : dict, optional
        Method -> extra constructor parameters.
    random_state : None or int, optional
    progress : callable(fraction, text), optional

    Returns
    -------
    EpsilonSeries

    Raises
    ------
    ValueError
        No ε, too many, or one outside the limits; and whatever compare_methods raises.
    """
    eps = check_epsilons(epsilons)
    method = method_name(method)
    report = progress or (lambda f, t: None)
    runs, ref, first = [], None, None
    for i, e in enumerate(eps):
        def sub(f, text, i=i, e=e):
            report((i + min(f, 1.0)) / len(eps), f"run {i + 1} of {len(eps)}, ε = {e:g}: {text}")
        rs = None if random_state is None else int(random_state)
        cmp = compare_methods(X, n_clusters, e, radius, [method], delta, options, rs, progress=sub, trial=i)
        if first is None:
            first, ref = cmp, cmp.reference
        r = cmp.results[0]
        runs.append(replace(r, ratio=r.objective / ref.objective, kmedian_ratio=r.kmedian_objective
                            / ref.kmedian_objective))
    return EpsilonSeries(method, method_label(method), eps, runs, ref, first.radius, first.radius_from_data,
                         first.n_clipped)


def series_total(series):
    """(ε, δ) the runs of ``series`` spent together (sequential composition)."""
    totals = [r.estimator.ledger_.total() for r in series.runs]
    return basic_composition([t[0] for t in totals], [t[1] for t in totals])


# ----------------------------------------------------------------------------- plans, verdicts, the meter
def run_label(name, epsilon, side_by_side=False):
    """A run's label in the meter: "k-means: SuLQ k-means, ε = 1" (", … side by side")."""
    return f"k-means: {method_label(name)}, ε = {epsilon:g}" + (" side by side" if side_by_side else "")


def plan_runs(X, n_clusters, epsilon, radius, methods, delta, options, context):
    """The library's planned verdicts of a Run (:func:`dpcore.lab.compare.plan_comparison`), one
    per method; ValueError for a parameter it refuses."""
    if not methods:
        raise ValueError("methods must contain at least one private method")
    return plan_comparison(X, n_clusters, float(epsilon), radius, methods, delta, options, context,
                           labels=lambda name: run_label(name, float(epsilon)))


def plan_series(X, n_clusters, method, epsilons, radius, delta, options, context):
    """The library's planned verdicts of "ε side by side", one per ε; ValueError as
    :func:`epsilon_series` (before anything runs)."""
    return [plan_comparison(X, n_clusters, e, radius, [method], delta, options, context,
                            labels=lambda name, e=e: run_label(name, e, True))[0] for e in check_epsilons(epsilons)]


def plans_or_none(plan, *args):
    """``plan(*args)``, or None when the settings cannot be planned (the run then says why)."""
    try:
        return plan(*args)
    except ValueError:
        return None


def one_relation(verdicts):
    """The relation the verdicts share (for the odds sentence under an ε), or None."""
    relations = {v.relation for v in verdicts or () if v.claim}
    return relations.pop() if len(relations) == 1 else None


def reserved_run(plans, dataset, run, runs_of, context, labels):
    """Reserve ``plans`` on ``dataset`` against the class budget (ValueError in its words when it
    refuses: nothing runs), call ``run()``, judge every fitted run (``runs_of(result)``; labels
    ``labels(result)``) with :func:`dpcore.lab.verdicts.judge_run` and charge each verdict.

    Returns
    -------
    (result, list of Verdict)
    """
    with reserve(plans, dataset) as reservation:
        out = run()
        verdicts = [judge_run(r.key, r.estimator, context, label=label)
                    for r, label in zip(runs_of(out), labels(out))]
        for v in verdicts:
            reservation.charge(v)
    return out, verdicts


def plan_words(plans, button="Run"):
    """What ``button`` would release that is not private, by the library's plan (beside the
    button), or ""."""
    groups = {}
    for v in plans or ():
        if not v.private:
            groups.setdefault(v.reason, []).append(method_label(v.method))
    if not groups:
        return ""
    return (f"{button}: " + "; ".join(f"{' and '.join(dict.fromkeys(names))} would NOT be private ({reason})"
                                      for reason, names in groups.items())
            + ". The meter would list it so (the dataset's ε becomes ∞); a class budget refuses it.")


# ----------------------------------------------------------------------------- instant ε (a preset's ladder)
def ladder_of(data_spec, k, delta, radius, leak, method, options):
    """The ladder (:class:`dpcore.lab.ladders.LadderSpec`) of the form's committed side-by-side
    settings, or None (a radius read off the data has none)."""
    if leak or options is None:
        return None
    return on_preset("kmeans", find_ladder("kmeans", method_name(method), data_spec,
                                           {"n_clusters": int(k), "radius": float(radius), "delta": float(delta),
                                            "options": {method_name(method): dict(options.get(method_name(method),
                                                                                              {}))}}))


def instant_figures(RX, labels, ladder, eps):
    """The chosen ε's panel of a k-means ladder: its released centres over the points, k-means++'s faint."""
    r = ladder.rung(eps)
    fig = epsilon_panels(RX, labels, [{"title": f"ε = {eps:g}<br>objective ÷ k-means++ = {r['ratio']:.3g}",
                                       "centres": r["centres"], "private": True}], reference=r["ref_centres"],
                         max_points=MAX_POINTS)
    fig.update_layout(height=620, legend=dict(y=-0.16), margin=dict(b=150))   # one panel: room for its legend
    for trace in fig.data:            # a run with a public seed: the private method's, not a private release
        if trace.name == "released centres (private run)":
            trace.name = "released centres (this run, public seed)"
    return fig


def ladder_figure(ladder):
    """The objective ÷ k-means++ of every rung (the same whatever ε the slider shows)."""
    return ladder_curve(ladder.epsilons, ladder.arrays["ratio"], "objective ÷ k-means++ (log scale)",
                        title=f"{ladder.meta['method_label']}: every ε of the ladder", log_y=True, level=1.0,
                        level_name="as good as k-means++ (not private)")


def instant_section(ds, RX, ladder_spec, default, live_words, seed=None):
    """The slider over the preset's ladder (:func:`ui.ladder.instant_epsilon`), the chosen ε's
    panel beside the ladder's curve, and "Run live" (ε side by side at that ε, see :data:`LIVE_KEY`).
    ``live_words(epsilon)``: what a live run at that ε is and what it is charged (with the page's
    ``seed``)."""

    def draw(ladder, eps, figures):
        fig, curve = figures
        c1, c2 = st.columns(2)
        show_chart(fig, f"k-means instant eps {eps:g}, {ds.name}", container=c1, key="km_ladder_fig")
        show_chart(curve, f"k-means ladder, {ds.name}", container=c2, key="km_ladder_curve")
        drawn = f"at most {MAX_POINTS} of {ds.n:,} drawn" if ds.n > MAX_POINTS else f"all {ds.n:,}"
        where = ", through the data's top two principal directions" if ds.d > 2 else ""
        st.caption(f"Left: the centres {ladder.meta['method_label']} released at ε = {eps:g} (black crosses) over the "
                   f"points (colour: true class; {drawn}{where}), with k-means++'s non-private centres as open red "
                   "diamonds; the axes follow "
                   "the centres up to three times the points' extent. Right: the same runs' objective ÷ k-means++ at "
                   "every ε of the ladder (1 = as good as non-private). One run per ε with one public seed: another "
                   "seed moves the numbers, so judge the trend.")

    st.markdown("**Instant ε** — the side-by-side method at every ε of a ladder, computed in advance: move the "
                "slider.")
    instant_epsilon(ladder_spec, key=LADDER_KEY, default=default,
                    figures=lambda ladder, eps: (instant_figures(RX, ds.labels, ladder, eps), ladder_figure(ladder)),
                    draw=draw, live_key=LIVE_KEY, live_words=lambda ladder, eps: live_words(eps), words_key=seed)


def live_words(plans, eps, seed):
    """The "Run live" caption from the library's plan of a side-by-side run at ``eps``."""
    v = plans[0] if plans else None
    charged = ("the settings cannot run (Run live says why)" if v is None else
               f"one private run of ε = {eps:g}, charged to the privacy meter" if v.private else
               f"NOT private ({v.reason}): the meter lists it as not private")
    return f"Run live = ε side by side at this one ε, with the form's settings; noise: {seed_label(seed)}; {charged}."


# ----------------------------------------------------------------------------- privacy words (pure)
NOT_PRIVATE_COMMON = ["the points drawn and their colours (the raw data and its true classes, shown to teach)",
                      "the objectives and ratios (computed from the raw data)",
                      "the number of clipped points",
                      "k-means++ and its centres (the non-private reference)"]


def _by_reason(labels, verdicts):
    """The labels of the runs that are not private, grouped by their reasons (in order)."""
    groups = {}
    for label, v in zip(labels, verdicts):
        if not v.private:
            groups.setdefault(v.reason, []).append(label)
    return groups


def privacy_parts(labels, verdicts, seed, candidate=(), high_dim=False, series=False):
    """(private, not private, caveats) of the page's privacy box, in words for students, as the
    runs' verdicts say.

    ``labels``: the names of the runs shown, one per verdict; ``candidate``: the labels of the
    runs whose candidate set is shown (the candidate-set methods); ``series``: the box of the ε
    side-by-side result (one method, several releases). A run whose verdict is not private is
    listed under "Not private" with its reasons; with none private, the box has no "Private"
    line."""
    ok = [label for label, v in zip(labels, verdicts) if v.private]
    private = []
    if ok:
        private.append(f"the centres released by each of the {len(ok)} runs of {ok[0]}, one release per ε" if series
                       else f"the centres released by each private method ({', '.join(ok)})")
        if any(label in ok for label in candidate):
            private.append("the candidate set and the chosen candidates in the projected space")
    groups = _by_reason(labels, verdicts)
    not_private = []
    for reason, names in groups.items():
        names = list(dict.fromkeys(names))
        cand = [n for n in names if n in candidate]
        not_private.append(f"the centres released by {'the runs' if series else 'each run'} of {', '.join(names)}"
                           + (f" and the candidate set of {', '.join(cand)}" if cand else "") + f" — {reason}")
    not_private += NOT_PRIVATE_COMMON
    caveats = list(seed_caveat(seed))
    if groups and not ok:
        caveats.append(f"nothing {'these runs' if series else 'this run'} released is private, whatever ε says: "
                       + "; ".join(groups))
    if high_dim:
        caveats.append("the 2-D views use the top principal directions of the data (a display choice, not a release)")
    return private, not_private, caveats


def idle_privacy(plans):
    """The box before any run, from the library's plan of a Run with the form's committed
    settings (the page draws it only while no result is on screen: each result draws its own
    box); ``plans`` None: settings that cannot run (Run says why)."""
    if not plans:
        return ["the centres each private method releases"], \
            ["the points drawn and their true classes", "the objectives and ratios (computed from the raw data)",
             "k-means++ and its centres"], ["press Run to cluster, or compare one method at several ε"]
    ok = [method_label(v.method) for v in plans if v.private]
    groups = {}
    for v in plans:
        if not v.private:
            groups.setdefault(v.reason, []).append(method_label(v.method))
    not_private = [f"the centres a run of {', '.join(names)} with these settings would release — {reason}"
                   for reason, names in groups.items()]
    caveats = ["press Run to cluster, or compare one method at several ε"]
    if groups and not ok:
        caveats.insert(0, "a run with these settings would release NOTHING private, whatever ε says")
    return ([f"the centres each private method releases ({', '.join(ok)})"] if ok else []), \
        not_private + ["the points drawn and their true classes", "the objectives and ratios (computed from the raw "
                       "data)", "k-means++ and its centres"], caveats


def privacy_status(verdicts):
    """A stored result's privacy in a few words, from its verdicts: "private", "not private: why",
    or which runs are not private."""
    bad = [v for v in verdicts if not v.private]
    if not bad:
        return "private"
    if len(bad) == len(verdicts):
        return "not private: " + "; ".join(dict.fromkeys(v.reason for v in bad))
    return "partly private: " + ", ".join(method_label(v.method) for v in bad) \
        + " not private"


# ----------------------------------------------------------------------------- drawing
def _dataset_of(res):
    try:
        return dataset_from_spec(res["spec"])
    except ValueError:                # e.g. an uploaded file no longer held by the session
        st.info("The last result's dataset is no longer available; press Run again.")
        return None


def result_summary(res, dataset_name):
    """What a stored result is, on which data, private or not (its verdicts): the heading of an
    earlier result."""
    prm, status = res["params"], privacy_status(res["verdicts"])
    if "series" in res:
        ser = res["series"]
        what = f"ε side by side, {ser.label} at ε = {', '.join(f'{e:g}' for e in ser.epsilons)}"
    else:
        n_m = len(res["cmp"].results)
        nominal = "" if status == "private" else "a nominal "
        what = f"{n_m} method{'s' if n_m > 1 else ''} at {nominal}ε = {prm['epsilon']:g}"
    return f"{what} · {dataset_name} · {status}"


def _result_header(res, rds, spec, earlier):
    """Above a result: its "Earlier result" heading when a newer one is above it, and a warning
    when it was computed on another dataset than the one chosen now (``spec``)."""
    if earlier:
        st.divider()
        st.subheader(f"Earlier result: {result_summary(res, rds.name)}")
        st.caption("Kept below the newest result for comparison; its table, charts and privacy box speak only of "
                   "this earlier run.")
    if spec is not None and res["spec"] != spec:
        st.warning(f"This result was computed on another dataset ({rds.name}); it is shown on that dataset. "
                   "Press Run (or Compare) to cluster the one chosen now.")


def _eps_col(verdicts):
    """The ε column's name: spent (every run private), nominal (none), or both."""
    if all(v.private for v in verdicts):
        return "ε spent"
    return "nominal ε (not private)" if not any(v.private for v in verdicts) else "ε (nominal where not private)"


def _none_private_warning(verdicts, series=False):
    """A warning when no run of a result is private, with the verdicts' reasons."""
    if verdicts and not any(v.private for v in verdicts):
        reasons = "; ".join(dict.fromkeys(v.reason for v in verdicts))
        st.warning(f"None of these runs is differentially private{', whatever their ε' if series else ''}: {reasons}.")


def draw_comparison(res, live=True, spec=None, earlier=False):
    """The methods-at-one-ε result. ``live=False``: drawn while a new run is under way (the
    result widget gets another key, charts another key, so both draws can share one script run).
    ``spec``: the dataset chosen now (a result on another one is flagged); ``earlier``: a newer
    result is drawn above this one."""
    import pandas as pd

    rds = _dataset_of(res)
    if rds is None:
        return
    tag = "" if live else "_prev"
    RX, cmp, prm, verdicts = points_of(rds), res["cmp"], res["params"], res["verdicts"]
    n_m, n_bad = len(cmp.results), sum(not v.private for v in verdicts)
    _result_header(res, rds, spec, earlier)
    if not earlier:
        st.subheader(f"{n_m} private method{'s' if n_m > 1 else ''} at ε = {prm['epsilon']:g}" if not n_bad else
                     f"{n_m} method{'s' if n_m > 1 else ''} at a nominal ε = {prm['epsilon']:g} (not private)"
                     if n_bad == n_m else f"{n_m} methods at ε = {prm['epsilon']:g} ({n_bad} not private)")
    st.caption(f"{rds.name} · k = {prm['k']} · ε = {prm['epsilon']:g} · δ = {prm['delta']:.1e} · "
               f"Λ = {cmp.radius:.4g}{' (read off the data!)' if cmp.radius_from_data else ''} · "
               f"noise: {seed_label(prm['seed'])}")
    _none_private_warning(verdicts)
    col = _eps_col(verdicts)
    rows = [{"method": r.label, "k-means objective": sig(r.objective), "÷ k-means++": sig(r.ratio),
             "k-median objective ÷ k-means++'s": sig(r.kmedian_ratio), "seconds": sig(r.seconds, 3),
             col: sig(getattr(getattr(r.estimator, "ledger_", None), "epsilon", 0.0)),
             "private": "—" if v is None else "yes" if v.private else "NO"}
            for r, v in zip([cmp.reference] + cmp.results, [None] + list(verdicts))]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(f"{cmp.n_clipped} of {RX.shape[0]:,} points lay outside the ball of radius Λ around 0 and were moved "
               "onto its surface (clipped) before clustering; the count itself is exact, not private. Objectives "
               "are evaluated on the clipped points (evaluation only)."
               + ("" if not n_bad or n_bad == n_m else " The privacy box below says which runs are not private, "
                  "and why."))
    show_chart(objective_bars(cmp.ratios()), f"k-means objectives, {rds.name}, eps {prm['epsilon']:g}", key="km_bars" + tag)
    st.caption("What to look for: bars near 1 are as good as non-private k-means++. On well separated clusters the "
               "candidate-set method is usually below SuLQ, sample-and-aggregate and DP-Lloyd (the paper's §7); the "
               "LSH coreset (today's practical peer, not in the paper) is often lower still on large data and higher "
               "on small sets such as the digits. The bars move from run to run with the secret noise.")
    labels = {r.label: (r, v) for r, v in zip(cmp.results, verdicts)}
    shown = st.selectbox("centres to draw", list(labels), key="km_show" + tag, disabled=not live,
                         help="Whose released centres are drawn over the points.")
    r, verdict = labels[shown]
    fig = centres_scatter(RX, rds.labels, {f"{shown} (released)": r.centres, "k-means++ (not private)":
                                           cmp.reference.centres},
                          title="Points (colour: true class) with the released and the non-private centres")
    show_chart(fig, f"k-means centres, {shown}, {rds.name}, eps {prm['epsilon']:g}", key="km_scatter" + tag)
    st.caption("What to look for: a released centre (black cross) near the middle of every true class; noise "
               "shows as crosses pulled off the data or two crosses in one class.")
    est = r.estimator
    if hasattr(est, "candidates_"):
        st.markdown("**Inside the candidate-set method** — the projected space, the private candidate set and "
                    "the k candidates the local swaps chose (their groups give the noisy means).")
        show_chart(candidate_view(RX @ est.projection_, est.candidates_, est.swap_result_.centers_index,
                                  est.candidate_result_.depths), f"k-means candidate set, {rds.name}",
                   key="km_cand" + tag)
        show_chart(budget_bars(est.ledger_), f"k-means budget split, eps {prm['epsilon']:g}", key="km_budget" + tag)
        expl = stage_explanations(est.objective, est.recovery)
        st.markdown("\n".join(f"- **{STAGE_WORDS.get(s, s)}** (ε = {est.budget_split_[s][0]:.3g}"
                              + (f", δ = {est.budget_split_[s][1]:.1e}" if est.budget_split_[s][1] else "")
                              + f"): {expl[s]}" for s in expl))
    show_ledger(est.ledger_, title=f"Privacy ledger of {shown}", not_private=None if verdict.private else verdict.reason)
    privacy_statement(*privacy_parts([x.label for x in cmp.results], verdicts, prm["seed"],
                                     candidate=[x.label for x in cmp.results if hasattr(x.estimator, "candidates_")],
                                     high_dim=RX.shape[1] > 2),
                      execution=[type(x.estimator).__name__ for x, v in zip(cmp.results, verdicts) if v.private])
    if live and res.get("code"):
        snippet_expander(res["code"])


def draw_series(res, live=True, spec=None, earlier=False):
    """The ε side-by-side result: small multiples, a table, the total ε, the privacy box
    (``live``, ``spec``, ``earlier``: as :func:`draw_comparison`)."""
    import pandas as pd

    rds = _dataset_of(res)
    if rds is None:
        return
    tag = "" if live else "_prev"
    RX, ser, prm, verdicts = points_of(rds), res["series"], res["params"], res["verdicts"]
    private_run = all(v.private for v in verdicts)
    _result_header(res, rds, spec, earlier)
    if not earlier:
        st.subheader(f"ε side by side: {ser.label}")
    st.caption(f"{rds.name} · k = {prm['k']} · δ = {prm['delta']:.1e} · Λ = {ser.radius:.4g}"
               f"{' (read off the data!)' if ser.radius_from_data else ''} · noise: {seed_label(prm['seed'])}")
    _none_private_warning(verdicts, series=True)
    panels = [{"title": f"ε = {e:g}{'' if v.private else ' (nominal)'}<br>objective ÷ k-means++ = {r.ratio:.3g}",
               "centres": r.centres, "private": True} for e, r, v in zip(ser.epsilons, ser.runs, verdicts)]
    panels.append({"title": "k-means++, not private<br>objective ÷ k-means++ = 1", "centres": ser.reference.centres,
                   "private": False})
    fig = epsilon_panels(RX, rds.labels, panels, reference=ser.reference.centres,
                         title=f"{ser.label}: the same data at {len(ser.epsilons)} values of ε, and without privacy")
    show_chart(fig, f"k-means eps side by side, {ser.label}, {rds.name}", key="km_series" + tag)
    st.caption("What to look for: at small ε the noise usually wins — the black crosses (released centres) sit "
               "away from the open red diamonds (the non-private k-means++ centres) and the ratio in the title is well "
               "above 1; as ε grows the crosses move towards the diamonds and the ratio falls towards 1 (last panel). "
               "How far a given ε gets "
               "varies with the secret noise, and some methods stop improving as ε grows (sample and aggregate; "
               "SuLQ on some data): their error is not only noise.")
    rows = [{"ε": e, "k-means objective": sig(r.objective), "÷ k-means++": sig(r.ratio), "seconds": sig(r.seconds, 3)}
            for e, r in zip(ser.epsilons, ser.runs)]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="content")
    eps, dlt = series_total(ser)
    if private_run:
        st.markdown(f"**Privacy spent by these {len(ser.runs)} runs together: ε = {eps:.4g}, δ = {dlt:.3g}** — each "
                    "run is a release on the same data, so their ε add up (sequential composition); the sidebar's "
                    "meter counts each of them.")
    else:
        reasons = "; ".join(dict.fromkeys(v.reason for v in verdicts if not v.private))
        st.markdown(f"**Nominal total of these {len(ser.runs)} runs: ε = {eps:.4g}** — they are not private "
                    f"({reasons}); the sidebar's meter lists them as not private, and the dataset's ε is ∞ from now "
                    "on.")
    privacy_statement(*privacy_parts([ser.label] * len(ser.runs), verdicts, prm["seed"], high_dim=RX.shape[1] > 2,
                                     series=True),
                      execution=[type(r.estimator).__name__ for r, v in zip(ser.runs, verdicts) if v.private])


DRAW = {RESULT_KEY: draw_comparison, SERIES_KEY: draw_series}


def draw_results(slots, spec=None, live=True):
    """Draw the stored results into ``slots``, the newest first (an empty slot stays empty); each
    after the first under an "Earlier result" heading, each on another dataset than ``spec``
    (the one chosen now) flagged. ``live=False`` (while a run goes on, so that Stop leaves the
    last result on screen): the newest result only, which saves the browser a redraw of the
    others' charts. Returns whether a result is stored (the page then shows no box of its own:
    every privacy box on screen belongs to one result)."""
    order = [k for k in st.session_state.get(ORDER_KEY, []) if st.session_state.get(k) is not None]
    for i, slot in enumerate(slots):        # ui.common.ResultSlot: before a run (live=False), after it
        with (slot.latest() if live else slot.previous()):
            if i < (len(order) if live else min(len(order), 1)):
                DRAW[order[i]](st.session_state[order[i]], live=live, spec=spec, earlier=i > 0)
    return bool(order)


def store_result(key, result):
    """Keep ``result`` under ``key`` and make it the newest."""
    st.session_state[key] = result
    st.session_state[ORDER_KEY] = [key] + [k for k in st.session_state.get(ORDER_KEY, []) if k != key]
