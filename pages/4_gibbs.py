"""Gibbs: the exponential mechanism for subspace clustering (§4), sampled by Gibbs, and
whether its chains mixed (Fig. 3) - the mixing is part of the privacy story. On Fig. 3's presets
a slider answers at once from the preset's precomputed ε ladder (:func:`ui.gibbs.instant_section`)."""
from __future__ import annotations

import json

import streamlit as st

from dpcore.defaults import default_n_clusters, default_subspace_dim, subspace_dim_reason
from dpcore.subspace.gibbs import MAX_CHAINS
from dpcore.export import estimator_snippet
from ui.share import Preset, check_link, follow_dataset, preset_picker, publish_url
from dpcore.lab.verdicts import RunContext
from ui.common import (DEFAULT_DATASET, ResultSlot, cancelled_note, current_dataset, current_spec, number_input,
                       run_button, run_ended, run_started, stop_page)
from ui.gibbs import (DEFAULTS, INITS, LIVE_KEY, MAX_EPS, MAX_PAGE_ITER, PARTIAL_KEY, RELEASES, SELECTS,
                      UNMIXED_UNDER_BUDGET, URL_FIELDS, chain_plans, check_run, draw_result, instant_section,
                      judge_chains, ladder_of, live_words, odds_captions, parse_epsilons, run_all, show_error,
                      show_partial, start_live, summarise, void_reasons)
from ui.meter import budget_is_set, reserve
from ui.seeds import seed_controls

RESULT_KEY = "gibbs_result"
FIG3 = {"g_eps": "0.1, 1, 10, 100", "g_iter": 1000, "g_chains": 8, "g_k": 3, "g_q": 3, "g_release": "sample",
        "g_select": "first"}
# The abouts say what the runs showed at each preset (scripted runs of the preset, seeds 1-13;
# the page's noise is secret, so a class sees one of these outcomes, not a fixed one).
PRESETS = {
    "Paper Fig. 3 mixing (random start, 1,000 sweeps)": Preset(
        {**FIG3, "g_init": "random"}, DEFAULT_DATASET,
        "Fig. 3's setting (n = 1000, d = 10, k = 3, q = 3, σ = 0.1), 8 chains from the private random start, "
        "1,000 sweeps (the paper runs 10,000). Small ε (0.1, 1) is called mixed within 1,000 sweeps in every run "
        "we tried, but its samples are close to random (accuracy ≈ 0.35). At large ε (10, 100) a chain often gets "
        "stuck with about a third of the points in the wrong cluster — in the figure, a cost line above the others "
        "and an accuracy line below them — and the verdict says \"not yet mixed\": in 13 runs, ε = 10 and ε = 100 "
        "were each called mixed only 3 times (three stuck runs at ε = 100, continued to 10,000 sweeps, stayed "
        "stuck). Which happens depends on the secret noise: press Run again to see. Time: about 4 s of computing on "
        "an idle 2-core laptop; 8–15 s to a drawn result were measured on a busy one (4 ε × 8 chains × 1,000 "
        "sweeps, a figure of 128,000 points). The traces are drawn as they come, with the time left. The paper's "
        "10,000 sweeps: Fig. 3 on the Paper figures page, computed in advance."),
    "Paper Fig. 3 from the k-plane start (NOT private)": Preset(
        {**FIG3, "g_init": "kplane"}, DEFAULT_DATASET,
        "As in the paper's experiments: all chains start at the same non-private k-plane solution (this voids the "
        "guarantee). They agree from the first sweep, so every ε is usually called mixed (in all our runs): "
        "agreement of chains that started together is weak evidence. Compare with the random start. Time: about 6 s of "
        "computing on an idle 2-core laptop; 18–21 s to a drawn result were measured on a busy one, because every "
        "ε run first solves k-plane once per chain (32 non-private fits) before it samples. The traces are drawn "
        "as they come. The paper's 10,000 sweeps from the k-plane start: Fig. 3 on the Paper figures page, "
        "computed in advance."),
    "Quick look: ε = 1 and 10, 200 sweeps": Preset(
        {"g_eps": "1, 10", "g_iter": 200, "g_chains": 4, "g_k": 3, "g_q": 3,
         "g_init": "random", "g_release": "sample", "g_select": "first"}, DEFAULT_DATASET,
        "A run of under a second for a lecture. ε = 1 was called mixed in all 13 of our runs; ε = 10 in 7 of 13 "
        "(a stuck chain shows as a cost line above the others): press Run again to see both outcomes."),
}


# ----------------------------------------------------------------------------- page
st.title("Gibbs sampler: private subspace clustering that must mix")
st.markdown(r"""
The exponential mechanism of the subspace clustering paper (§4) releases **one sample** of

$p(\theta;X) \propto \exp\!\big(-\tfrac{\varepsilon}{2}\sum_i d^2(x_i, S_{z_i})\big)$, θ = (subspaces, labels z),

which is ε-differentially private **if the sample is exact** (Prop. 4.1, with ‖x‖ ≤ 1). Exact
sampling is out of reach, so a Gibbs sampler alternates the labels z (eq. 11) and the
subspaces (matrix Bingham, eq. 12). Its output is private only **once the chain has mixed**:
run several chains and check that they agree.
""")

check_link("gibbs", URL_FIELDS)
preset_picker("gibbs", PRESETS)
ds = current_dataset()
spec = current_spec()
if ds.kind != "points":
    st.info(f"The current dataset ({ds.name}) is a count matrix. This page works on points: choose a union "
            "of subspaces, a Gaussian mixture or Yale B faces on the Data page.")
    stop_page()
st.caption(f"Dataset: **{ds.name}** — n = {ds.n}, d = {ds.d}" + (f", {ds.n_classes} classes" if ds.n_classes else ""))

default_k, default_q = default_n_clusters(ds), default_subspace_dim(ds)
follow_dataset("gibbs", json.dumps(spec, sort_keys=True), {"g_k": default_k, "g_q": default_q})
D = DEFAULTS   # each widget's own default is the page's: Streamlit leaves a default value out of the link

seed = seed_controls("g")   # outside the form: ticking it shows the seed at once
with st.form("gibbs_form"):
    c1, c2, c3 = st.columns(3)
    eps_text = c1.text_input("ε values (comma-separated)", D["g_eps"], key="g_eps", bind="query-params",
                             help="Privacy parameter of eq. (10), one run per value (Fig. 3 uses 0.1, 1, 10, 100). "
                                  f"Each must be > 0; at most {MAX_EPS} values. Each run is a separate release "
                                  "and adds to the privacy meter.")
    n_iter = number_input(c2, "sweeps per chain (n_iter)", 1, MAX_PAGE_ITER, D["g_iter"], step=500, key="g_iter",
                             bind="query-params",
                             help=f"Gibbs sweeps (z-step + subspace step) per chain, 1 to {MAX_PAGE_ITER:,} "
                                  "(the paper runs 10,000). Long runs show a progress bar; the page refuses runs "
                                  "longer than the full Fig. 3 experiment.")
    n_chains = number_input(c3, "chains", 1, MAX_CHAINS, D["g_chains"], step=1, key="g_chains", bind="query-params",
                               help=f"Independent chains run side by side, 1 to {MAX_CHAINS} (Fig. 3 uses 8). "
                                    "Chains that disagree have not mixed. R̂ compares chains, so it needs at least 2.")
    c4, c5, c6 = st.columns(3)
    k = number_input(c4, "clusters k", 1, ds.n, default_k, step=1, key="g_k", bind="query-params",
                        help=f"Number of subspaces (default: the number of classes), 1 to n = {ds.n}.")
    q = number_input(c5, "subspace dimension q", 1, max(ds.d - 1, 1), default_q, step=1, key="g_q", bind="query-params",
                        help=f"Dimension of every subspace, 1 to d − 1 = {ds.d - 1}; {subspace_dim_reason(ds)}")
    c7, c8, c9 = st.columns(3)
    init = c7.selectbox("start (init)", list(INITS), format_func=INITS.get, key="g_init", bind="query-params",
                        help="random: uniform random subspaces, independent of the data (private). k-plane, SSC, "
                             "LRR: non-private solutions, as in the paper's experiments — they void the privacy "
                             "guarantee, however long the chain runs afterwards.")
    release = c8.selectbox("release", list(RELEASES), key="g_release", format_func=RELEASES.get, bind="query-params",
                           help="What is published. The last sample costs ε. The average of the last m = 100 "
                                "consecutive samples (as reported in the paper) costs ε + (m − 1)(q + 3)ε/2 "
                                "(298·ε at q = 3): one more sweep can change the path's probability by up to "
                                "e^((q+3)ε/2) — ε through the changed point's assignment, ε/2 through each of the q "
                                "column normalisers and ε/2 through the column densities together (exact "
                                "computations reach 2.67ε per sweep at k = q = 3).")
    select = c9.selectbox("released chain", list(SELECTS), key="g_select", format_func=SELECTS.get, bind="query-params",
                          help="chain 0: fixed before seeing the data. Lowest cost, chosen privately: the "
                               "exponential mechanism picks a chain (costs ε plus ε for every chain it looks at). "
                               "Lowest cost: picked on the raw data — not private.")
    form = dict(n_clusters=k, subspace_dim=q, n_iter=n_iter, n_chains=n_chains, init=init, release=release,
                n_average=min(100, n_iter), select=select, random_state=seed)
    odds_captions(c1, ds, eps_text, form)        # what each ε means, in odds
    submitted = run_button(st, "Run chains", type="primary")
    if budget_is_set():
        st.caption(UNMIXED_UNDER_BUDGET)
publish_url()
ladder = ladder_of(spec, form)           # Fig. 3's presets: the instant slider over their precomputed ε ladder
if ladder is not None:
    instant_section(ds, ladder, lambda e: live_words(ds, e, form, seed), seed)
live_eps = st.session_state.pop(LIVE_KEY, None)  # its "Run live": the chains at that one ε, run below as Run chains

# Stop (top right) ends a run at its next Streamlit call and the browser keeps only what the run
# drew so far: so the previous result is drawn first and replaced only after a successful run.
# The traces so far are drawn in live_slot as the chains run, labelled partial.
progress_slot, live_slot, result_slot = st.empty(), st.empty(), ResultSlot()
previous = st.session_state.get(RESULT_KEY)
if submitted or live_eps is not None:
    run_started("gibbs")
    if previous is not None:
        with result_slot.previous():
            draw_result(previous, "previous", spec)
    try:
        eps_list = parse_epsilons(eps_text) if submitted else [live_eps]
        n_iter_ok, n_chains_ok = check_run(ds.n, n_iter, n_chains, eps_list)
        params = {**form, "n_iter": n_iter_ok, "n_chains": n_chains_ok, "n_average": min(100, n_iter_ok)}
        context = RunContext(seed=seed, dataset=ds, checks_mixing=True)
        # the library plans every ε run; the budget reserves them all (or refuses) before any chain runs
        with reserve(chain_plans(ds, eps_list, params, context), ds) as reservation:
            live = start_live(progress_slot, live_slot, eps_list, n_iter_ok, keeps_previous=previous is not None)
            runs, models, seconds = run_all(ds, eps_list, params, live)
            table, summary, verdicts, extra = summarise(ds, models, seconds)
            privacy = judge_chains(models, verdicts, context)      # a chain not mixed: not private (ε = ∞)
            for v in privacy.values():
                reservation.charge(v)
    except ValueError as exc:
        show_error(progress_slot, exc, previous is not None)
    else:
        progress_slot.empty()
        first = next(iter(models.values()))
        st.session_state[RESULT_KEY] = dict(
            dataset=ds.name, spec=spec, params=params, runs=runs, burn_in={e: m.burn_in_ for e, m in models.items()},
            table=table, summary=summary, verdicts=verdicts, extra=extra,
            ledgers={e: m.ledger_ for e, m in models.items()}, caveats=list(first.caveats_), privacy_verdicts=privacy,
            void=void_reasons(ds, eps_list, params, context),
            code=None if spec.get("kind") == "upload" else estimator_snippet(spec, first, prints=[
                ("epsilon:", "model.epsilon"), ("cost of the released sample:", "model.cost_"),
                ("privacy spent (epsilon, delta):", "model.ledger_.total()")]))
    live_slot.empty()
    st.session_state.pop(PARTIAL_KEY, None)       # kept only when the run is cancelled
    run_ended("gibbs")

cancelled_note("gibbs", kept=st.session_state.get(RESULT_KEY) is not None,
               partial=PARTIAL_KEY in st.session_state)
show_partial()                                    # a cancelled run's traces, labelled partial
res = st.session_state.get(RESULT_KEY)
if res is None:
    result_slot.latest().info("Choose the parameters and press **Run chains**. The defaults reproduce Fig. 3 with 1,000 "
                     "sweeps (the paper runs 10,000).")
else:
    with result_slot.latest():
        draw_result(res, "final", spec)

with st.expander("Why mixing matters for privacy"):
    st.markdown("""
- The guarantee of the exponential mechanism is about the **distribution** of what is released: on two
  datasets that differ in one point, every output must be almost equally likely (within a factor e^ε).
  The formula of eq. (10) has that property; a chain that has not reached it does not.
- A chain that has **not mixed** releases a sample that still depends on where it started and on the path it
  took — for example a partition it happened to get stuck in. Nothing bounds how much that reveals.
- A chain started from a **non-private** solution (k-plane, SSC, LRR, as in the paper's experiments) carries
  that solution's information forward; unless it has fully forgotten its start — which no finite run proves —
  the guarantee is void.
- Several chains from dispersed starts that agree (R̂ ≈ 1, enough effective draws) are the usual evidence
  that a sampler has reached its target. It is evidence, not proof: the page says "not yet" whenever the
  evidence is missing. With one chain there is nothing to compare it with but its own two halves.
- Even an exactly mixed sampler releases **one** sample for ε. Publishing more samples (other chains, or the
  average of the last ones) costs more, and the ledger records it.
""")
