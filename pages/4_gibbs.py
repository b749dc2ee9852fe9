"""Gibbs: the exponential mechanism for subspace clustering (§4), sampled by Gibbs, and
whether its chains mixed (Fig. 3) - the mixing is part of the privacy story."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dpcore.defaults import default_n_clusters, default_subspace_dim
from dpcore.plots.gibbs import traces_grid
from dpcore.subspace.diagnostics import MIN_ESS, RHAT_THRESHOLD
from dpcore.subspace.gibbs import MAX_CHAINS, mean_release_epsilon
from dpcore.export import estimator_snippet
from ui.share import Preset, as_int, as_str, bind_url, follow_dataset, one_of, preset_picker, publish_url, snippet_expander
from ui.common import (DEFAULT_DATASET, current_dataset, current_spec, privacy_statement, record_estimator, run_guarded,
                       show_ledger, stop_page)
from ui.gibbs import MAX_EPS, MAX_PAGE_ITER, check_run, parse_epsilons, run_all, summarise
from ui.seeds import seed_caveat, seed_controls, seed_label

RESULT_KEY = "gibbs_result"
INITS = {"random": "random (private)", "kplane": "k-plane (NOT private)", "ssc": "SSC (NOT private)",
         "lrr": "LRR (NOT private)"}


URL_FIELDS = {"g_eps": as_str, "g_iter": as_int(), "g_chains": as_int(), "g_k": as_int(), "g_q": as_int(),
              "g_seed": as_int(0, 2**31 - 1), "g_init": one_of(INITS), "g_release": one_of(["sample", "mean"]),
              "g_select": one_of(["first", "best_private", "best"])}
PRESETS = {
    "Paper Fig. 3 mixing (random start, 1,000 sweeps)": Preset(
        {"g_eps": "0.1, 1, 10, 100", "g_iter": 1000, "g_chains": 8, "g_k": 3, "g_q": 3,
         "g_init": "random", "g_release": "sample", "g_select": "first"}, DEFAULT_DATASET,
        "Fig. 3's setting (n = 1000, d = 10, k = 3, q = 3, σ = 0.1), 8 chains from the private random start. "
        "The paper runs 10,000 sweeps; large ε mixes slowly."),
    "Paper Fig. 3 from the k-plane start (NOT private)": Preset(
        {"g_eps": "0.1, 1, 10, 100", "g_iter": 1000, "g_chains": 8, "g_k": 3, "g_q": 3,
         "g_init": "kplane", "g_release": "sample", "g_select": "first"}, DEFAULT_DATASET,
        "As in the paper's experiments: chains start at the non-private k-plane solution (voids the guarantee)."),
    "Quick look: ε = 1 and 10, 200 sweeps": Preset(
        {"g_eps": "1, 10", "g_iter": 200, "g_chains": 4, "g_k": 3, "g_q": 3,
         "g_init": "random", "g_release": "sample", "g_select": "first"}, DEFAULT_DATASET,
        "A run of a few seconds for a lecture."),
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

bind_url("gibbs", URL_FIELDS)
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

seed = seed_controls("g")   # outside the form: ticking it shows the seed at once
with st.form("gibbs_form"):
    c1, c2, c3 = st.columns(3)
    eps_text = c1.text_input("ε values (comma-separated)", "0.1, 1, 10, 100", key="g_eps",
                             help="Privacy parameter of eq. (10), one run per value (Fig. 3 uses 0.1, 1, 10, 100). "
                                  f"Each must be > 0; at most {MAX_EPS} values. Each run is a separate release "
                                  "and adds to the session budget.")
    n_iter = c2.number_input("sweeps per chain (n_iter)", value=1000, step=500, key="g_iter",
                             help=f"Gibbs sweeps (z-step + subspace step) per chain, 1 to {MAX_PAGE_ITER:,} "
                                  "(the paper runs 10,000). Long runs show a progress bar; the page refuses runs "
                                  "longer than the full Fig. 3 experiment.")
    n_chains = c3.number_input("chains", value=8, step=1, key="g_chains",
                               help=f"Independent chains run side by side, 1 to {MAX_CHAINS} (Fig. 3 uses 8). "
                                    "Chains that disagree have not mixed.")
    c4, c5, c6 = st.columns(3)
    k = c4.number_input("clusters k", value=default_k, step=1, key="g_k",
                        help="Number of subspaces (default: the number of classes). 1 ≤ k ≤ n.")
    q = c5.number_input("subspace dimension q", value=default_q, step=1, key="g_q",
                        help="Dimension of every subspace (default: the true one). 1 ≤ q < d.")
    c7, c8, c9 = st.columns(3)
    init = c7.selectbox("start (init)", list(INITS), format_func=INITS.get, key="g_init",
                        help="random: uniform random subspaces, independent of the data (private). k-plane, SSC, "
                             "LRR: non-private solutions, as in the paper's experiments — they void the privacy "
                             "guarantee, however long the chain runs afterwards is not accounted for.")
    release = c8.selectbox("release", ["sample", "mean"], key="g_release",
                           format_func={"sample": "last sample (ε)",
                                        "mean": "mean of last 100 samples (ε + 99·(q+3)ε/2)"}.get,
                           help="What is published. The last sample costs ε. The average of the last m = 100 "
                                "consecutive samples (as reported in the paper) costs ε + (m − 1)(q + 3)ε/2 "
                                "(298·ε at q = 3): one more sweep can change the path's probability by up to "
                                "e^((q+3)ε/2) — ε through the changed point's assignment, ε/2 through each of the q "
                                "column normalisers and ε/2 through the column densities together (exact "
                                "computations reach 2.67ε per sweep at k = q = 3).")
    select = c9.selectbox("released chain", ["first", "best_private", "best"], key="g_select",
                          format_func={"first": "chain 0 (ε)", "best_private": "lowest cost, chosen privately",
                                       "best": "lowest cost (NOT private)"}.get,
                          help="chain 0: fixed before seeing the data. Lowest cost, chosen privately: the "
                               "exponential mechanism picks a chain (costs ε plus ε for every chain it looks at). "
                               "Lowest cost: picked on the raw data — not private.")
    submitted = st.form_submit_button("Run chains", type="primary")
publish_url(URL_FIELDS)

if submitted:
    eps_list = run_guarded(parse_epsilons, eps_text)
    checked = run_guarded(check_run, ds.n, n_iter, n_chains, eps_list) if eps_list is not None else None
    if checked is not None:
        n_iter_ok, n_chains_ok = checked
        params = dict(n_clusters=k, subspace_dim=q, n_iter=n_iter_ok, n_chains=n_chains_ok, init=init,
                      release=release, n_average=min(100, n_iter_ok), select=select, random_state=seed)
        bar = st.progress(0.0, text="Starting the chains…")
        out = run_guarded(run_all, ds, eps_list, params, bar)
        if out is None:
            bar.progress(1.0, text="Failed: the previous result is kept")
        else:
            runs, models, seconds = out
            bar.progress(1.0, text="Done")
            for eps, m in models.items():
                record_estimator(m, f"Gibbs (ε = {eps:g})", seed)
            table, summary, verdicts = summarise(ds, models, seconds)
            first = next(iter(models.values()))
            st.session_state[RESULT_KEY] = dict(
                dataset=ds.name, params=params, runs=runs, burn_in={e: m.burn_in_ for e, m in models.items()},
                table=table, summary=summary, verdicts=verdicts,
                ledgers={e: m.ledger_ for e, m in models.items()}, caveats=list(first.caveats_),
                is_private=first.is_private_, private_outputs=list(first.private_outputs_),
                nonprivate_outputs=dict(first.nonprivate_outputs_),
                code=None if spec.get("kind") == "upload" else estimator_snippet(spec, first, prints=[
                    ("epsilon:", "model.epsilon"), ("cost of the released sample:", "model.cost_"),
                    ("privacy spent (epsilon, delta):", "model.ledger_.total()"),
                    ("private:", "model.is_private_")]))

res = st.session_state.get(RESULT_KEY)
if res is None:
    st.info("Choose the parameters and press **Run chains**. The defaults reproduce Fig. 3 with 1,000 sweeps "
            "(the paper runs 10,000).")
else:
    p = res["params"]
    st.subheader("Verdict")
    st.caption(f"{res['dataset']} — {p['n_chains']} chain(s) × {p['n_iter']} sweeps, start: {INITS[p['init']]}, "
               f"seed: {seed_label(p['random_state'])}")
    if not res["is_private"]:
        st.error("⚠️ **Not private.** " + " ".join(c for c in res["caveats"] if "non-private" in c or "not private" in c))
    for eps, v in res["verdicts"].items():
        (st.success if v["mixed"] else st.warning)(f"**ε = {eps:g}: {'mixed' if v['mixed'] else 'not yet mixed'}.** {v['text']}")
    first_rule = next(iter(res["verdicts"].values()))["rule"]
    st.caption(f"Rule: {first_rule} (R̂ threshold {RHAT_THRESHOLD}, minimum ESS {MIN_ESS}.)")
    if not all(v["mixed"] for v in res["verdicts"].values()):
        st.caption("Chains stuck at different cost levels usually sit in different partitions (from a random "
                   "start, a chain can keep a third of the points in the wrong cluster for thousands of sweeps). "
                   "Run more sweeps or more chains; 'lowest cost, chosen privately' then releases the best chain "
                   "through a second exponential mechanism, paid for in the ledger.")

    st.subheader("Traces (chains overlaid, one column per ε)")
    metrics = [m for m in ("statistic", "cost", "dw", "accuracy") if any(m in t for t in res["runs"].values())]
    st.plotly_chart(traces_grid(res["runs"], metrics=metrics, burn_in=res["burn_in"]), width="stretch")
    st.caption("What to look for: after the shaded burn-in, the chains of one ε should overlap and wander around "
               "the same level. Chains stuck at different cost levels have not mixed (often a wrong partition). "
               "The test statistic should follow the dashed 1/√T line; because every sweep flips the basis "
               "signs at random it does so even when the subspaces are stuck, so it is a weak check.")

    st.subheader("R̂ and effective sample size")
    st.dataframe(pd.DataFrame(res["table"]), hide_index=True, width="stretch")
    st.caption("split-R̂ compares the first and second halves of every chain after burn-in (≈ 1 when they agree); "
               "ESS is the number of independent draws the correlated samples are worth.")

    st.subheader("Released samples")
    st.dataframe(pd.DataFrame(res["summary"]), hide_index=True, width="stretch")

    privacy_statement(
        private=[(f"the released sample of eq. (10) ({', '.join(res['private_outputs'])}) of each ε run — "
                  "ε-DP only asymptotically (exact sampling of eq. (10)), and only from the random start")
                 if p["release"] == "sample" else
                 (f"the released samples and their mean ({', '.join(res['private_outputs'])}) of each ε run — the "
                  f"last {p['n_average']} consecutive samples cost ε + {p['n_average'] - 1}·(q+3)ε/2 = "
                  f"{mean_release_epsilon(1.0, p['subspace_dim'], p['n_average']):g}·ε (see the ledger), only asymptotically "
                  "(exact sampling of eq. (10)), and only from the random start")]
        if res["is_private"] and p["random_state"] is None else [],
        not_private=["the traces, R̂/ESS table, verdict and costs (they read the raw data, the true subspaces and "
                     "every sample of every chain: teaching diagnostics, not releases)",
                     "the other chains' samples (each would cost ε more)",
                     "labels obtained by assigning the raw points to the released subspaces (not shown)"]
                    + ([f"the released samples ({res['nonprivate_outputs'].get('subspaces_', 'see the caveats')})"]
                       if not res["is_private"] else [])
                    + (["the released samples too: their randomness came from a public seed"]
                       if p["random_state"] is not None else []),
        caveats=seed_caveat(p["random_state"]) + res["caveats"])
    for eps, ledger in res["ledgers"].items():
        with st.expander(f"Privacy ledger, ε = {eps:g}"):
            show_ledger(ledger)
    if res.get("code"):
        snippet_expander(res["code"], label="Reproduce the first ε's run in Python")

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
  evidence is missing.
- Even an exactly mixed sampler releases **one** sample for ε. Publishing more samples (other chains, or the
  average of the last ones) costs more, and the ledger records it.
""")
