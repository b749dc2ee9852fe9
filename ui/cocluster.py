"""The Co-clustering page's pieces: the limits of its controls (one home for the widgets and
the link parsers), its presets, the run behind its Run button, the result view, and the
Fig. 1 section (why co-clustering leaks more than clustering, with a simulation of DP-τCC's
released column partitions on the paper's two public matrices).

Limits of the controls, and why (each used by the widget AND by the page's link parser, so a
link never carries a value that the form or the estimator would refuse at Run):

- K0, L0 in [2, :data:`MAX_CLUSTERS`]: DP-τCC and Fast-τCC need ≥ 2; at 100 × 100 clusters on
  the largest CLUTO set (reviews, 4069 × 18483) one run takes about 2 s and a few MB (the
  utilities are m × L0). The estimators also need K0 ≤ rows and L0 ≤ columns: that depends
  on the matrix and is checked at Run, with the estimator's message.
- 𝓘 in [1, :data:`MAX_ITER`]: 100 iterations take about 3 s on reviews.
- Fast-τCC restarts in [1, :data:`MAX_RESTARTS`]: one start takes up to 2 s on reviews.
- ε in [:data:`EPS_MIN`, :data:`EPS_MAX`]: ε must be > 0; 0.001 is the smallest the
  three-decimal input shows, and above 1000 nothing changes any more (at ε = 1000 the noise of
  a table cell is already below one count).

Privacy is the library's decision (:mod:`dpcore.lab.verdicts`), never this module's: DP-τCC and
the peers are built through the catalogue (the peers as its presets, with their own parameters:
DPNMF from the NNDSVD start is built as the paper ran it, and its plan says it is not private),
planned with ``plan_run`` and reserved together before the run, judged with ``judge_run`` after
it and charged; the privacy box and the ledgers follow the stored verdicts.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.cocluster.examples import column_partition_frequencies, figure1_solutions
from dpcore.lab.figures.cocluster import DPNMF_AS_PUBLISHED, fig2_relations
from dpcore.lab.methods import DPNMF_PAPER, PRESETS as METHOD_PRESETS, build_estimator, run_seed
from dpcore.lab.verdicts import RunContext, judge_run, plan_run
from dpcore.export import estimator_snippet
from dpcore.metrics import nmi
from dpcore.plots.cocluster import (TAU_CR_LABEL, TAU_RC_LABEL, contingency_heatmaps, figure1_leak,
                                    frequency_band_rows, partition_frequency_band, reordered_matrix, tau_history)
from dpcore.validation import check_int, check_random_state
from ui.common import (ResultSlot, Timer, dataset_from_spec, number_input, privacy_statement, run_button, run_guarded,
                       show_chart, show_ledger)
from ui.meter import epsilon_odds, reserve
from ui.seeds import seed_caveat, seed_label
from ui.share import Preset, as_int, snippet_expander

RESULT_KEY = "cocluster_result"
FIG1_KEY = "cocluster_fig1"

MAX_CLUSTERS = 100
MAX_ITER = 100
MAX_RESTARTS = 20
EPS_MIN, EPS_MAX = 0.001, 1000.0
#: the Fig. 1 simulation: ε of each simulated run, and runs on each matrix (about 5 ms a run)
FIG1_EPS_MIN, FIG1_EPS_MAX = 0.05, 10.0
FIG1_RUNS_MIN, FIG1_RUNS_MAX = 20, 2000

STOP_NOTE = " (Stop, top right, cancels; the last result stays below)"

#: The co-clustering paper's peers (its Fig. 2) the page can run beside DP-τCC: keys of
#: dpcore.lab.methods.PRESETS (the page builds them through the catalogue as a sweep does: k = K0,
#: the same ε, δ = 1e-5 where they take one). They cluster the documents (rows) only. Measured per run at ε = 1 on
#: the CLUTO sets: ≤ 0.1 s (DPHD, DP-KMeans), ≤ 0.22 s (DPNMF; reviews).
PEERS = ("DPHD", "DP-KMeans", DPNMF_PAPER, "DPNMF (private start)")
PEER_HELP = {
    "DPHD": "the high-dimensional paper's candidate-set k-means on L2-normalised documents (public radius 1): "
            "private centres; protects one whole document, replaced.",
    "DP-KMeans": "DP-Lloyd with diffprivlib's mechanism and budget split on L2-normalised documents (our sparse "
                 "version: runs on every set): private centres; protects one document added or removed.",
    DPNMF_PAPER: "private NMF (δ = 1e-5, 𝓘 = 4) from the paper's NNDSVD start, which reads the raw data: NOT private. "
                 "Its basis moves by our 1/L steps; the paper's own run moved it by 1e-4 and so kept the start "
                 "(see 'The paper's peers' above).",
    "DPNMF (private start)": "the same private NMF from a blind random start: the basis is (ε, δ)-DP; protects one "
                             "document, replaced.",
}
#: the catalogue's methods of the page (dpcore.lab.methods.METHODS) and DP-τCC's name in the catalogue's presets
DP_METHOD, FAST_METHOD = "dp_taucc", "fast_taucc"
DP_LABEL = "DP-τCC"
#: a neighbouring relation (a verdict's, keys of dpcore.privacy.RELATIONS) in the words of documents × terms
RELATION_DOCUMENT_WORDS = {"replace_one": "one document replaced", "add_remove": "one document added/removed",
                           "cell_pm1": "one cell ±1"}
#: what each peer releases (the privacy box: private or not, as its verdict says)
PEER_RELEASES = {"DPHD": "DPHD's centres (and its candidates)", "DP-KMeans": "DP-KMeans' centres",
                 DPNMF_PAPER: "the basis of DPNMF from the NNDSVD start",
                 "DPNMF (private start)": "the basis of DPNMF (private start)"}

#: The page's text on the paper's peers: the relation each runs under here (from the catalogue), how the paper
#: ran them, and what the paper's DPNMF released and how it was evaluated (facts of the authors' code,
#: github.com/rupensa/dptaucc: src/dpkmeans/k_means.py divides the per-coordinate sensitivity by d,
#: src/dpnmf/dpnmf.py steps W by alpha_W = 1e-4 and its curve uses the farthest basis vector).
_REL = fig2_relations()
PEERS_NOTE = f"""
**The paper's peers and their neighbouring relations.** Here each method protects what its own
guarantee states: DP-τCC {_REL["DP-τCC"]} (one word occurrence), DPHD and DPNMF
{_REL["DPHD"]}, DP-KMeans {_REL["DP-KMeans"]}. The paper ran every peer under its
one-cell relation instead, with the per-coordinate sensitivity divided by d (the number of
terms, 1,000 to 18,483 on the CLUTO sets): far less noise, and not a valid bound - one extra
word can move a whole document to another cluster. So its peers' curves are not comparable with
ours, and DP-KMeans stays at NMI 0 here at every ε of the paper (a blind start from a random
partition does too). **The paper's DPNMF** (its authors' code) starts from an SVD of the raw
documents (not private) and moves the basis by steps of 10⁻⁴, so the basis never leaves that
start; its plotted curve also put every document in its *farthest* topic. The Paper figures
page shows that run as "{DPNMF_AS_PUBLISHED}".
"""

TAU_HELP = ("Goodman–Kruskal τ of the table T: how much knowing the {given} cluster of a random word occurrence "
            "(one unit of count) reduces the error of guessing its {guessed} cluster; 0 = not at all, "
            "1 = no error left.")
TAU_RC_HELP = TAU_HELP.format(given="column", guessed="row")
TAU_CR_HELP = TAU_HELP.format(given="row", guessed="column")

# The presets' texts were checked against runs (scripts in the issue-16 report): classic3 at ε = 1,
# K0 = L0 = 3: DP-τCC row NMI 0.48–0.71 (5–95 % of 100 runs, median 0.68), Fast-τCC (5 starts)
# 0.91–0.93 in 17 of 20 runs and 0.71 in 3; reviews at ε = 0.5, K0 = L0 = 5: DP-τCC 0.34–0.37
# (40 runs), Fast-τCC 0.37–0.42 (6 runs); blocks from K0 = L0 = 6: Fast-τCC ended at the 3 × 3
# blocks (NMI 1) in 199 of 200 runs, DP-τCC at ε = 1 in 166 of 200, otherwise two blocks merged
# (NMI ≈ 0.73). From K0 = L0 = 3 both lose a block about every other run (a merged 2 × 2 is a
# fixed point), which is why the blocks preset starts from more clusters than there are.
PRESETS = {
    "classic3 co-clustering (ε = 1, 𝓘 = 4)": Preset(
        {"cc_matrix": "classic3", "cc_eps": 1.0, "cc_iter": 4, "cc_K0": 3, "cc_L0": 3, "cc_fast": True,
         "cc_ninit": 5, "cc_peers": []},
        about="The paper's CLUTO setting on classic3 (3 classes). In our runs DP-τCC's row NMI was mostly "
              "between 0.5 and 0.7, Fast-τCC's about 0.92 (0.71 when it loses a cluster): roughly three quarters "
              "of the non-private result. Every run differs: the noise is fresh and secret."),
    "reviews at a small budget (ε = 0.5)": Preset(
        {"cc_matrix": "reviews", "cc_eps": 0.5, "cc_iter": 4, "cc_K0": 5, "cc_L0": 5, "cc_fast": True,
         "cc_ninit": 5, "cc_peers": []},
        about="The largest CLUTO set (a few seconds with Fast-τCC's 5 starts). Its documents are long, so hiding one "
              "word occurrence costs little: at ε = 0.5 DP-τCC's row NMI was 0.34–0.37 in our runs, close to "
              "Fast-τCC's 0.37–0.42."),
    "Synthetic blocks, 3×3 co-clusters": Preset(
        {"cc_matrix": "blocks", "cc_eps": 1.0, "cc_iter": 4, "cc_K0": 6, "cc_L0": 6, "cc_fast": True,
         "cc_ninit": 5, "cc_peers": []},
        about="A 200×150 Poisson block matrix with 3×3 strong blocks, started from 6×6 clusters: clusters that "
              "nobody chooses disappear. In 200 of our runs Fast-τCC ended at the 3×3 blocks (NMI 1) 199 times, "
              "DP-τCC at ε = 1 about 4 times in 5; otherwise it merged two blocks (NMI ≈ 0.73). Which one you "
              "get depends on the secret noise: press Run again to see."),
}


# ----------------------------------------------------------------------------- link
def whole_number(lo, hi):
    """``ui.share.as_int(lo, hi)`` that also refuses "inf" with a ValueError (``int(float("inf"))``
    raises OverflowError, which the link check does not catch: a traceback instead of a warning)."""
    parse = as_int(lo, hi)

    def parse_finite(text):
        try:
            return parse(text)
        except OverflowError:
            raise ValueError(f"{text!r} is not a whole number") from None
    return parse_finite


# ----------------------------------------------------------------------------- run
def build_dp(p):
    """DP-τCC with the run's parameters ``p`` (epsilon, I, K0, L0, seed), built through the
    catalogue, not fitted."""
    return build_estimator(DP_METHOD, None, {"n_row_clusters": p["K0"], "n_col_clusters": p["L0"], "n_iter": p["I"]},
                           epsilon=p["epsilon"], random_state=p["seed"])


def build_peer(ds, p, label):
    """The peer ``label`` (a key of :data:`PEERS`, a preset of the catalogue) with k = K0, the run's
    ε and the preset's own parameters, built through the catalogue, not fitted; its seed comes
    from the one seed recipe (:func:`dpcore.lab.methods.run_seed` of the run's seed, the label and
    ε; fresh entropy when the seed is secret). Returns (catalogue name, estimator)."""
    preset = METHOD_PRESETS[label]
    rng = np.random.default_rng(run_seed(p["seed"], label, float(p["epsilon"]), 0))
    params = {**preset.get("params", {}), "n_clusters": int(p["K0"])}
    return preset["name"], build_estimator(preset["name"], ds, params, float(p["epsilon"]), None, rng)


def build_runs(ds, p):
    """The releases of one Run, unfitted: {label: (catalogue name, estimator)}, DP-τCC first, then
    the chosen peers (``p["peers"]``, labels of :data:`PEERS`) in their order."""
    unknown = [lab for lab in p.get("peers", []) if lab not in PEERS]
    if unknown:
        raise ValueError(f"peers must be among {', '.join(PEERS)}; got {unknown}")
    return {DP_LABEL: (DP_METHOD, build_dp(p)), **{lab: build_peer(ds, p, lab) for lab in p.get("peers", [])}}


def run_label(label, relation):
    """The meter's label of one release: the method and the relation its verdict states."""
    return f"{label} ({RELATION_DOCUMENT_WORDS.get(relation, relation)})"


def run_cocluster(ds, data_spec, p, bar):
    """The run behind the Run button, with a progress bar ``bar`` (an ``st.empty``); returns the
    result dict or raises ValueError (shown by ``run_guarded``). ``p``: epsilon, I, K0, L0,
    seed, n_init, fast, peers (labels of :data:`PEERS`).

    Privacy is the library's: DP-τCC and every peer are planned with
    :func:`dpcore.lab.verdicts.plan_run` and the plans reserved together against the class
    budget (:func:`ui.meter.reserve`; a refusal raises its ValueError before anything runs);
    after the fits each is judged (:func:`dpcore.lab.verdicts.judge_run`) and charged, and the
    verdicts are kept with the result for its privacy box.

    Fast-τCC's starts run one by one with one shared generator (``n_init=1`` each, the best
    sum of the two τ kept, ties to the first): the same result as Fast-τCC with ``n_init`` starts
    (see tests/test_cocluster.py), with a progress step per start - on reviews a start takes
    seconds."""
    n_init = check_int(p["n_init"], "n_init (Fast-τCC restarts)", 1, MAX_RESTARTS)
    runs = build_runs(ds, p)
    context = RunContext(seed=p["seed"], dataset=ds)
    plans = {lab: plan_run(method, est, ds.X, context) for lab, (method, est) in runs.items()}
    plans = {lab: replace(plan, label=run_label(lab, plan.relation)) for lab, plan in plans.items()}
    with reserve(plans.values(), ds) as reservation:
        res = _fit_all(ds, data_spec, p, runs, n_init, bar)
        res["verdicts"] = {lab: judge_run(method, est, context, label=plans[lab].label)
                           for lab, (method, est) in runs.items()}
        for verdict in res["verdicts"].values():      # charged before the result is drawn
            reservation.charge(verdict)
    return res


def _fit_all(ds, data_spec, p, runs, n_init, bar):
    bar.progress(0.0, text="DP-τCC: starting" + STOP_NOTE)
    dp = runs[DP_LABEL][1]
    with Timer() as t_dp:
        dp.fit(ds.X, callback=lambda t, total: bar.progress(0.6 * t / total,
                                                            text=f"DP-τCC: iteration {t} of {total}{STOP_NOTE}"))
    code = None if data_spec.get("kind") == "upload" else estimator_snippet(data_spec, dp, prints=[
        ("row NMI:", "nmi(ds.labels, model.row_assignment_)"),
        ("privacy spent (epsilon, delta):", "model.ledger_.total()")], imports=["from dpcore.metrics import nmi"])
    res = dict(spec=data_spec, params=dict(p), dp=dp, code=code, t_dp=t_dp.seconds, fast=None, peers={}, notes=[])
    if p["fast"]:
        rng = check_random_state(p["seed"])
        with Timer() as t_f:
            for i in range(n_init):
                bar.progress(0.6 + 0.25 * i / n_init, text=f"Fast-τCC: start {i + 1} of {n_init}{STOP_NOTE}")
                f = build_estimator(FAST_METHOD, None, {"n_row_clusters": p["K0"], "n_col_clusters": p["L0"],
                                                        "n_init": 1}, random_state=rng).fit(ds.X)
                best = res["fast"]
                if best is None or f.tau_rc_ + f.tau_cr_ > best.tau_rc_ + best.tau_cr_ + 1e-12:
                    res["fast"] = f
        res["t_fast"] = t_f.seconds
    peers = [lab for lab in runs if lab != DP_LABEL]
    for i, lab in enumerate(peers):
        bar.progress(0.85 + 0.15 * i / len(peers), text=f"{lab}{STOP_NOTE}")
        est = runs[lab][1]
        with Timer() as t:
            est.fit(ds.X)
        res["peers"][lab] = (est, t.seconds)
    return res


def dp_plan(ds, epsilon, n_iter, seed):
    """DP-τCC's plan at ``epsilon`` and ``n_iter`` on ``ds`` (the dataset's numbers of clusters):
    the verdict of a Run before it runs, for the words shown before any result (its relation for
    the odds of ε, whether it would be private); None when the parameters are refused."""
    try:
        est = build_estimator(DP_METHOD, ds, {"n_iter": int(n_iter)}, epsilon=float(epsilon), random_state=seed)
        return plan_run(DP_METHOD, est, ds.X, RunContext(seed=seed, dataset=ds), label=DP_LABEL)
    except ValueError:
        return None


# ----------------------------------------------------------------------------- result
def _sig(x, digits=3):
    """``x`` rounded to ``digits`` significant digits (a float, shown without a tail of digits)."""
    return float(f"{x:.{digits}g}")


def show_result(res, tag=""):
    """Draw a stored result. ``tag`` tells apart the keys of its charts and widgets when the
    previous result is drawn before a run and the new one after it in the same script run."""
    rds = run_guarded(dataset_from_spec, res["spec"])
    if rds is None:                   # e.g. an uploaded file that is no longer held by the session
        st.info("The last result's dataset is no longer available; press Run again.")
        return
    dp, fast, peers, p = res["dp"], res["fast"], res.get("peers", {}), res["params"]
    for note in res.get("notes", []):
        st.warning(note)
    st.subheader(f"Results on {rds.name} (ε = {p['epsilon']:g}, 𝓘 = {p['I']}, K0 = {p['K0']}, L0 = {p['L0']})")
    st.caption(f"Seed: {seed_label(p['seed'])}")
    cols = st.columns(4)
    if rds.labels is not None:
        cols[0].metric("DP-τCC: NMI of the private row partition", f"{nmi(rds.labels, dp.row_labels_):.3f}",
                       help="The row partition drawn by the last exponential-mechanism step: the release (private; "
                            "rows of a deleted cluster count as one extra group).")
        cols[1].metric("Row NMI after the paper's evaluation step (not private)",
                       f"{nmi(rds.labels, dp.row_assignment_):.3f}",
                       help="Rows assigned to the last private T using the raw data (the paper's evaluation step, "
                            "what its Fig. 2 plots; NOT private), compared with the true classes.")
        if fast is not None:
            cols[2].metric("Fast-τCC row NMI", f"{nmi(rds.labels, fast.row_labels_):.3f}",
                           help="Non-private reference with the same K0, L0 (best of the restarts).")
        if peers:
            pcols = st.columns(max(len(peers), 3))
            for col, (lab, (est, _)) in zip(pcols, peers.items()):
                col.metric(f"{lab} row NMI", f"{nmi(rds.labels, est.labels_):.3f}",
                           help=PEER_HELP[lab] + " Labels: each raw document against the release (NOT private).")
    cols = st.columns(4)
    cols[0].metric(f"{TAU_RC_LABEL} of released T", f"{dp.tau_rc_:.3g}", help=TAU_RC_HELP)
    cols[1].metric(f"{TAU_CR_LABEL} of released T", f"{dp.tau_cr_:.3g}", help=TAU_CR_HELP)
    cols[2].metric("released T size", f"{dp.T_.shape[0]} × {dp.T_.shape[1]}",
                   help="Row clusters × column clusters left at the end (clusters nobody chose disappear).")
    cols[3].metric("DP-τCC time", f"{res['t_dp']:.3g} s")
    if fast is not None:
        st.caption(f"Fast-τCC: {TAU_RC_LABEL} = {fast.tau_rc_:.3g}, {TAU_CR_LABEL} = {fast.tau_cr_:.3g}, "
                   f"{fast.n_row_clusters_}×{fast.n_col_clusters_} co-clusters, {fast.n_iter_} rounds "
                   f"({'converged' if fast.converged_ else 'stopped at max_iter'}), {res['t_fast']:.3g} s.")
    if peers:
        st.caption("Peers (the paper's Fig. 2), k = K0, the same ε: "
                   + "; ".join(f"{lab} {sec:.3g} s" for lab, (_, sec) in peers.items())
                   + ". They cluster the documents only (no column partition, no table).")

    tabs = st.tabs(["Reordered matrix", "Contingency tables", "τ per step", "Ledger"])
    eps_name = f"eps {p['epsilon']:g}"
    with tabs[0]:
        options = ["DP-τCC (private partitions)"] + (["Fast-τCC"] if fast is not None else [])
        view = st.radio("Order rows and columns by", options, horizontal=True, key="cc_view" + tag,
                        help="Rows and columns are grouped by cluster; red lines separate the clusters.")
        model, who = (dp, "DP-τCC") if view.startswith("DP") else (fast, "Fast-τCC")
        fig = reordered_matrix(rds.X, model.row_labels_, model.column_labels_, title=f"Matrix ordered by {who}")
        show_chart(fig, f"cocluster matrix ordered by {who}, {rds.name}, {eps_name}", key="cc_chart_matrix" + tag)
        st.caption("What to look for: dense blocks on the diagonal of the grid, one per row cluster × column "
                   "cluster; at small ε the private partitions scatter them. The picture shows the raw counts (the "
                   "data owner's view); only the partitions come from the run.")
    with tabs[1]:
        tables = {"released T (private)": dp.T_, "exact T, same partitions": dp.T_exact_}
        if fast is not None:
            tables["Fast-τCC's T"] = fast.T_
        show_chart(contingency_heatmaps(tables), f"cocluster contingency tables, {rds.name}, {eps_name}",
                   key="cc_chart_tables" + tag)
        st.caption("What to look for: the released T should show the same strong cells as the exact T of the same "
                   "partitions (not private, shown for teaching); discrete Laplace noise of scale 1/ε₁ per "
                   "cell (ε₁ = 10 % of ε/(2𝓘)) blurs the small ones. Negative cells are set to 0 and all-zero "
                   "rows or columns deleted. Fast-τCC's T is not private either.")
    with tabs[2]:
        show_chart(tau_history(dp.history_), f"cocluster tau per step, {rds.name}, {eps_name}",
                   key="cc_chart_tau" + tag)
        st.caption(f"What to look for: {TAU_RC_LABEL} says how much knowing the column cluster of a word occurrence "
                   f"helps to guess its row cluster, {TAU_CR_LABEL} the reverse (0: not at all, 1: perfectly). "
                   "Both should climb over the steps; with a small ε per step they stall near 0 - the trade-off "
                   "between ε and 𝓘 of the paper's Fig. 3.")
        with st.expander("Numbers of this plot"):
            st.dataframe(pd.DataFrame([{
                "iteration": h["iteration"], "after the update of": h["after"], "row clusters": h["K"],
                "column clusters": h["L"], "utility sensitivity Δ": _sig(h["delta_sigma"]),
                TAU_RC_LABEL: _sig(h["tau_rc"]), TAU_CR_LABEL: _sig(h["tau_cr"])} for h in dp.history_]),
                hide_index=True, width="stretch")
    with tabs[3]:
        verdicts = res.get("verdicts") or {}
        for lab, est in [(DP_LABEL, dp)] + [(lab, est) for lab, (est, _) in peers.items()]:
            v = verdicts.get(lab)
            show_ledger(est.ledger_, f"Privacy ledger of the {lab} run",
                        not_private=None if v is None or v.private else v.reason)
    _privacy_box(res)
    if res.get("code") and not tag:     # its download button has no key: drawn once, with the final result
        snippet_expander(res["code"])


def _by_verdict(items, verdicts):
    """(private, not private) lines of ``items`` ({label: what it releases}) as their stored
    ``verdicts`` say: a release whose verdict is not private is listed with the verdict's reason."""
    private, not_private = [], []
    for lab, what in items.items():
        v = verdicts[lab]
        (private.append(what) if v.private else not_private.append(f"{what} — {v.reason}"))
    return private, not_private


def _privacy_box(res):
    """The privacy box of a result, following the verdicts its runs were charged with (kept with
    the result): nothing is listed as private that the meter lists as not private."""
    verdicts = res.get("verdicts")
    if verdicts is None:
        st.info("This result was computed by an older version of the page, whose privacy verdicts were not kept: "
                "press **Run** again.")
        return
    peers = res.get("peers", {})
    private, not_private = _by_verdict(
        {DP_LABEL: "DP-τCC's released contingency tables T (discrete Laplace), the τ values computed from them, and "
                   "its column and row partitions drawn by the exponential mechanism",
         **{lab: PEER_RELEASES[lab] for lab in peers}}, verdicts)
    not_private += ["the final row assignment used for NMI (raw rows against the last private T)",
                    "the exact T shown next to the released one", "Fast-τCC's results",
                    "the class labels (used only to compute NMI)", "the reordered matrix picture (raw counts)"]
    caveats = ["DP-τCC's neighbouring matrices differ by 1 in ONE cell (one word occurrence in one document), "
               "not by a whole document."]
    if peers:
        not_private.append("the peers' row labels (each raw document against the released centres or basis)")
        caveats.append("The peers protect a whole document: " + "; ".join(
            f"{lab}: {RELATION_DOCUMENT_WORDS.get(verdicts[lab].relation, verdicts[lab].relation)}"
            if verdicts[lab].private else f"{lab}: nothing (not private)" for lab in peers)
            + ". DPNMF's analytic Gaussian noise is (ε, δ)-DP for every ε (the paper's classic σ needs ε < 1).")
        caveats.append("The paper ran every peer under its one-cell relation with the per-coordinate sensitivity "
                       "divided by d: less noise than these runs, but not a valid bound (one extra word can move a "
                       "whole document to another cluster).")
        caveats.append("The privacy meter adds DP-τCC and the peers up for one cell ±1, the only relation they all "
                       "share: a document replaced covers a changed cell (ε), a document added or removed costs up "
                       "to 2ε for it (DP-KMeans). A release listed as not private here is listed so by the meter too, "
                       "and makes the dataset's ε ∞.")
    seed = res["params"]["seed"]
    fitted = {DP_LABEL: res["dp"], **{lab: est for lab, (est, _) in peers.items()}}
    executed = [est for lab, est in fitted.items() if verdicts[lab].private]     # how their noise was drawn
    privacy_statement(private, not_private, seed_caveat(seed) + caveats, execution=executed)


def intro_box(plan):
    """The privacy box before any result: what a Run of DP-τCC releases, as its plan says
    (:func:`dp_plan`; with a public seed it is listed as not private, with the reason)."""
    privacy_statement(["DP-τCC's released tables T and its column and row partitions"],
                      ["the evaluation assignment and NMI, Fast-τCC, the labels"],
                      ["Press Run to co-cluster the chosen matrix."], verdict=plan)


# ----------------------------------------------------------------------------- Fig. 1
def simulate_fig1(epsilon, n_runs, bar, chunk=100):
    """:func:`dpcore.cocluster.examples.column_partition_frequencies` in chunks of ``chunk``
    runs per matrix (one shared generator of fixed seed 0: the matrices are public, so the
    simulation needs no secret noise and gives a lecturer the same picture every time), with
    a progress step per chunk. Returns the same rows (partition, freq_A, freq_A_prime)."""
    n_runs = check_int(n_runs, "runs on each matrix", FIG1_RUNS_MIN, FIG1_RUNS_MAX)
    rng = np.random.default_rng(0)
    counts, done = {}, 0
    while done < n_runs:
        step = min(chunk, n_runs - done)
        bar.progress(done / n_runs, text=f"Simulating: {done} of {n_runs} runs on each matrix{STOP_NOTE}")
        for r in column_partition_frequencies(epsilon, step, 1, rng):
            c = counts.setdefault(r["partition"], [0, 0])
            c[0] += round(r["freq_A"] * step)
            c[1] += round(r["freq_A_prime"] * step)
        done += step
    keys = sorted(counts, key=lambda k: -(counts[k][0] + counts[k][1]))
    return [dict(partition=k, freq_A=counts[k][0] / n_runs, freq_A_prime=counts[k][1] / n_runs) for k in keys]


def _show_fig1(fig1, tag=""):
    eps, n_runs = fig1["eps"], fig1["runs"]
    show_chart(partition_frequency_band(fig1["rows"], eps, n_runs), f"fig1 release frequencies, eps {eps:g}",
               key="cc_chart_fig1" + tag)
    st.caption(f"What to look for: each orange bar (how often DP-τCC released that product grouping on A′) ends "
               f"inside its grey band, between e^(−ε) = {np.exp(-eps):.3g} and e^ε = {np.exp(eps):.3g} times the "
               "blue bar (the same grouping on A), up to the whiskers of the simulation. That is ε-DP: one purchase "
               "more or less changes the probability of any release by at most a factor e^ε. Each bar is a "
               "frequency over the simulated runs, so it wobbles; more runs make the whiskers shorter. At ε = 1 the "
               "two matrices give much the same groupings; try ε = 4: A's best grouping 1 2 3 | 4 5 6 then comes "
               "out several times more often on A than on A′ - the leak of Fig. 1, now bounded by e^ε.")
    with st.expander("Numbers of this plot"):
        rows = frequency_band_rows(fig1["rows"], eps, top=10)
        st.dataframe(pd.DataFrame([{
            "released column partition": r["label"], "frequency on A": _sig(r["freq_A"]),
            "frequency on A′": _sig(r["freq_A_prime"]),
            "ratio A′/A": _sig(r["freq_A_prime"] / r["freq_A"]) if r["freq_A"] > 0 else None,
            "allowed on A′ from": _sig(r["low"]), "to": _sig(r["high"])} for r in rows]),
            hide_index=True, width="stretch", height=35 * (len(rows) + 1) + 3)   # every row, "all other" too
        st.caption("Products by number; '|' separates the groups; '(3: none)' lists products in no group. The last "
                   "row adds up all the groupings not drawn: the bound holds for any set of releases. These "
                   "simulations use the fixed public matrices of Fig. 1, so they spend no budget of your data.")


def figure1_section():
    """The paper's Fig. 1 (A and A′, their best co-clusterings) and the frequency simulation
    (form ``fig1_form``, inputs ``cc_fig1_eps`` and ``cc_fig1_runs``, not bound to the URL)."""
    st.subheader("Why co-clustering leaks more than clustering (the paper's Fig. 1)")
    sol = figure1_solutions()
    show_chart(figure1_leak(sol["A"], sol["A_prime"],
                            (sol["A_solution"]["rows"], sol["A_solution"]["cols"]),
                            (sol["A_prime_solution"]["rows"], sol["A_prime_solution"]["cols"]),
                            sol["A_solution"]["T"], sol["A_prime_solution"]["T"]), "fig1 neighbouring matrices")
    st.markdown("""
    Rows are customers u1–u4, columns products p1–p6. A′ differs from A in one cell: customer u3
    bought one unit of product p3. The best 2×2 co-clusterings (an exhaustive search for the
    largest sum of the two τ) are the paper's: the **table** changes from T to T′, and so does
    the **column partition** - p3 moves from {p1, p2, p3} to {p3, …, p6}. Publishing either the
    table or the product groups tells whether u3's purchase is in the data. DP-τCC randomises
    both: below, DP-τCC runs many times on A and on A′, and the figure shows how often each
    product grouping comes out.
    """)
    with st.form("fig1_form"):
        c1, c2 = st.columns(2)
        eps_fig = number_input(c1, "ε for the simulation", FIG1_EPS_MIN, FIG1_EPS_MAX, 1.0, step=0.5, format="%.2f",
                                  key="cc_fig1_eps",
                                  help=f"Budget of each simulated DP-τCC run (K0 = L0 = 2, 𝓘 = 1), from "
                                       f"{FIG1_EPS_MIN:g} to {FIG1_EPS_MAX:g}. The smaller ε, the narrower the "
                                       "band and the more alike the two bars.")
        if eps_fig is not None and FIG1_EPS_MIN <= eps_fig <= FIG1_EPS_MAX:
            epsilon_odds(c1, eps_fig, relation="cell_pm1")
        runs_fig = number_input(c2, "runs on each matrix", FIG1_RUNS_MIN, FIG1_RUNS_MAX, 400, step=100,
                                   key="cc_fig1_runs", help="More runs = shorter whiskers (about 5 ms per run).")
        go_fig = run_button(st, "Simulate DP-τCC on A and A′")
    bar, slot = st.empty(), ResultSlot()
    previous = st.session_state.get(FIG1_KEY)
    if go_fig:
        if previous is not None:
            with slot.previous():
                _show_fig1(previous, "_prev")
        rows = run_guarded(simulate_fig1, float(eps_fig), int(runs_fig), bar)
        bar.empty()
        if rows is not None:
            previous = st.session_state[FIG1_KEY] = dict(eps=float(eps_fig), runs=int(runs_fig), rows=rows)
    if previous is not None:
        with slot.latest():
            _show_fig1(previous)
