"""Cluster: run a subspace clustering method on the current dataset and evaluate it.

The methods, their parameter widgets and the run helpers live in :mod:`ui.cluster` (add a
method there). After ``fit`` the page shows the ledger and adds the run to the privacy meter
whenever the estimator has a ``ledger_``, and lists ``private_outputs_`` /
``nonprivate_outputs_`` in the privacy box.
"""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dpcore.data import PAPER_SPECS
from dpcore.defaults import default_n_clusters, default_subspace_dim
from dpcore.plots.data import projection_scatter
from dpcore.plots.private_subspace import aggregation_map, released_subspaces_figure, smooth_sensitivity_terms, sulq_trajectory
from dpcore.plots.subspace import affinity_heatmap, runs_comparison
from dpcore.subspace.sample_aggregate import SampleAggregateSubspace
from ui.cluster import (EPSILON_GRID, MAX_QUADRATIC_N, METHODS, evaluate, noise_preview, private_details, privacy_widgets,
                        reproduce_code, run_method)
from ui.common import (DEFAULT_DATASET, current_dataset, current_spec, dataset_from_spec, privacy_statement,
                       record_estimator, run_guarded, show_ledger, stop_page)
from ui.seeds import seed_caveat, seed_controls, seed_label
from ui.share import Preset, as_float, as_int, as_str, bind_url, follow_dataset, one_of, preset_picker, publish_url, snippet_expander

RESULT_KEY = "cluster_result"
HISTORY_KEY = "cluster_history"
PRESETS = {
    "Paper Fig. 2 (n=1000, d=10): SSC": Preset(
        {"cl_method": "ssc", "cl_k": 3, "cl_q": 3}, DEFAULT_DATASET,
        "The middle panel of Fig. 2 with the non-private SSC reference."),
    "Paper Fig. 2: SuLQ-10 at ε = 10": Preset(
        {"cl_method": "sulq", "cl_k": 3, "cl_q": 3, "sulq_eps": 10.0, "sulq_T": 10,
         "sulq_comp": "advanced", "sulq_delta": ""}, DEFAULT_DATASET,
        "SuLQ k-plane with 10 iterations at ε = 10: the paper finds it better than sample-aggregate here."),
    "Paper Fig. 2: sample-aggregate (TSC) at ε = 1000": Preset(
        {"cl_method": "sa", "cl_k": 3, "cl_q": 3, "sa_eps": 1000.0, "sa_solver": "tsc", "sa_m": 0,
         "sa_delta": ""}, DEFAULT_DATASET,
        "Sample-aggregate needs a large ε at n = 1000: Thm 3.1's utility bound needs ε > 2D/√m ≈ 48. At ε = 1000 "
        "the paper's constants would not be private (δ ≈ 0.8), so α and β are calibrated down and the noise is "
        "larger than the paper's; most points are still assigned right."),
    "Yale B, 5 faces: LRR": Preset(
        {"cl_method": "lrr", "cl_k": 5, "cl_q": 9}, PAPER_SPECS["yaleb_5"],
        "Five subjects of Extended Yale B, d = 50 (§5): LRR separates them exactly."),
}
#: the widgets whose values travel in the page's link
URL_FIELDS = {"cl_method": one_of(list(METHODS)), "cl_k": as_int(1, 100_000), "cl_q": as_int(1, 100_000),
              "cl_seed": as_int(0, 2**31 - 1), "kp_n_init": as_int(1, 200), "kp_max_iter": as_int(1, 10_000),
              "kp_init": one_of(["random", "points"]), "tsc_s": as_int(0, 100_000),
              "tsc_variant": one_of(["full", "simplified"]), "ssc_max_iter": as_int(1, 100_000), "ssc_alpha": as_float(), "lrr_lam": as_float(),
              "lrr_max_iter": as_int(1, 100_000), "sa_eps": one_of(EPSILON_GRID),
              "sa_delta": as_str, "sa_solver": one_of(["tsc", "ssc", "lrr", "kplane"]), "sa_m": as_int(0, 1_000_000),
              "sulq_eps": one_of(EPSILON_GRID), "sulq_delta": as_str, "sulq_T": as_int(1, 1000),
              "sulq_comp": one_of(["advanced", "basic", "best"])}


# ----------------------------------------------------------------------------- page
st.title("Cluster")
st.markdown("Run a subspace clustering method on the dataset chosen on the **Data** page and compare "
            "what it finds with the truth.")
bind_url("cluster", URL_FIELDS)
preset_picker("cluster", PRESETS)

ds = current_dataset()
spec = current_spec()
if ds.kind != "points":
    st.info(f"The current dataset ({ds.name}) is a count matrix. Subspace clustering works on points: "
            "choose a union of subspaces, a Gaussian mixture or Yale B faces on the Data page.")
    stop_page()
st.caption(f"Dataset: **{ds.name}** — n = {ds.n}, d = {ds.d}"
           + (f", {ds.n_classes} classes" if ds.n_classes else ""))

follow_dataset("cluster", json.dumps(spec, sort_keys=True),
               {"cl_k": default_n_clusters(ds), "cl_q": default_subspace_dim(ds)})
key = st.selectbox("Method", list(METHODS), format_func=lambda m: METHODS[m].label, key="cl_method",
                   help="The non-private solvers are the reference every private method is compared with.")
method = METHODS[key]
st.caption(method.about)

privacy_params = {}
if method.private:
    eps, delta = privacy_widgets(ds, method.prefix)
    privacy_params = dict(epsilon=eps, delta=delta)
    preview = run_guarded(noise_preview, method.prefix, ds, eps, delta)
    if preview:
        st.caption(preview)

seed = seed_controls("cl")   # outside the form: ticking it shows the seed at once
with st.form("cluster_form"):
    c1, c2, c3 = st.columns(3)
    k = int(c1.number_input("clusters k", 1, 100_000, default_n_clusters(ds), key="cl_k",
                            help="Number of subspaces to find (default: the number of classes). Must be ≤ n."))
    q = int(c2.number_input("subspace dimension q", 1, 100_000, default_subspace_dim(ds), key="cl_q",
                            help="Dimension of every subspace (default: the true one when known, 9 for Yale B, "
                                 "else 3). Must be < d."))
    params = {**privacy_params, **method.widgets(ds)}
    submitted = st.form_submit_button("Run", type="primary")
publish_url(URL_FIELDS)

if submitted:
    if method.quadratic and ds.n > MAX_QUADRATIC_N:
        st.error(f"n = {ds.n} is too large for {method.label}: it builds an n×n matrix; use at most "
                 f"{MAX_QUADRATIC_N} points (or k-plane).")
    else:
        bar = st.progress(0, text=f"Running {method.label}…")
        out = run_guarded(run_method, key, params, k, q, seed, ds.X)
        bar.progress(100, text="Done" if out is not None else "Failed: the previous result is kept")
        if out is not None:
            model, seconds, msgs, reference = out
            metrics = evaluate(ds, model, seconds)
            fig_aff = None
            if getattr(model, "affinity_", None) is not None and ds.labels is not None:
                fig_aff = affinity_heatmap(model.affinity_, ds.labels, title="Affinity, points sorted by true class")
            ledger = getattr(model, "ledger_", None)
            if ledger is not None:
                record_estimator(model, method.label, seed)
            figs = []
            if method.private:
                figs.append(released_subspaces_figure(
                    ds.X, model.subspaces_, true=ds.subspaces, labels=model.labels_,
                    nonprivate=None if reference is None else reference.subspaces_, title=method.label))
                if isinstance(model, SampleAggregateSubspace):
                    figs += [aggregation_map(model, true_subspaces=ds.subspaces), smooth_sensitivity_terms(model)]
                else:
                    figs.append(sulq_trajectory(model, X=ds.X, true_subspaces=ds.subspaces))
            result = dict(method=key, label=method.label, params=params, k=k, q=q, seed=seed, spec=spec,
                          dataset=ds.name, labels=model.labels_, subspaces=model.subspaces_, metrics=metrics,
                          fig_aff=fig_aff, ledger=ledger, private=method.private, warnings=msgs, figs=figs,
                          details=private_details(model) if method.private else None,
                          reference=None if reference is None else evaluate(ds, reference, None),
                          code=reproduce_code(spec, ds, model, method.private) if spec.get("kind") != "upload" else None,
                          private_outputs=list(getattr(model, "private_outputs_", [])),
                          nonprivate_outputs=dict(getattr(model, "nonprivate_outputs_", {})))
            st.session_state[RESULT_KEY] = result
            history = st.session_state.setdefault(HISTORY_KEY, [])
            history.append({"run": len(history) + 1, "method": method.label, "dataset": ds.name, "k": k, "q": q,
                            "seed": seed, **{m: v for m, v in metrics.items()}})
            del history[:-20]

res = st.session_state.get(RESULT_KEY)
if res is None:
    st.info("Choose a method and press **Run**.")
    privacy_statement(private=[], not_private=["nothing has been computed yet"])
    stop_page()

st.subheader(f"Result: {res['label']}")
res_ds = ds if res["spec"] == spec else run_guarded(dataset_from_spec, res["spec"])
if res_ds is None:                    # e.g. an uploaded file that is no longer held by the session
    st.info("The last result's dataset is no longer available; press Run to cluster the current one.")
    stop_page()
if res["spec"] != spec:
    st.warning(f"This result was computed on another dataset ({res['dataset']}); it is shown on that dataset. "
               "Press Run to cluster the current one.")

if res["private"]:
    not_private = [f"{name}: {why}" for name, why in res["nonprivate_outputs"].items()]
    released = [f"{o} (the released subspaces)" if o == "subspaces_" else o for o in res["private_outputs"]]
    public_seed = res["seed"] is not None
    privacy_statement(private=[] if public_seed else (released or ["nothing (see the ledger)"]),
                      not_private=(["the released outputs too: their noise came from a public seed"] if public_seed
                                   else []) + ["the cluster labels and colours: raw points assigned to the released subspaces"]
                      + not_private + ["the metrics and the non-private reference solver, computed from the raw "
                                       "data and the ground truth (evaluation only)"],
                      caveats=seed_caveat(res["seed"]))
    for msg in res["warnings"]:
        st.warning(msg)
else:
    privacy_statement(
        private=[],
        not_private=["everything on this page: these are the non-private reference solvers, run on the raw data "
                     "(clusters, subspaces and affinity reveal individual points)",
                     "the ground-truth labels and subspaces, used only to evaluate"],
        caveats=["No privacy budget is spent here; compare with the private methods at the same settings."])

m = res["metrics"]
table = pd.DataFrame({"value": ["—" if v is None else f"{v:.4g}" for v in m.values()]}, index=list(m.keys()))
left, right = st.columns([1, 2])
with left:
    st.markdown("**Metrics**")
    st.dataframe(table, width="stretch")
    st.caption("accuracy: share of points in the right cluster under the best matching of cluster ids; "
               "NMI: normalised mutual information; d_W: Wasserstein distance (eq. 2) between found and true "
               "subspaces (0 = identical); cost: mean squared distance to the nearest found subspace (eq. 3). "
               f"Parameters: k={res['k']}, q={res['q']}, seed: {seed_label(res['seed'])}, "
               + ", ".join(f"{a}={b}" for a, b in res["params"].items()))
    if res["reference"] is not None:
        st.markdown("**Non-private reference (same solver, all data, no noise)**")
        ref = {a: b for a, b in res["reference"].items() if a != "seconds"}
        st.dataframe(pd.DataFrame({"value": ["—" if v is None else f"{v:.4g}" for v in ref.values()]},
                                  index=list(ref)), width="stretch")
    if res["ledger"] is not None:
        show_ledger(res["ledger"])
    if res["details"]:
        st.markdown("**Constants of this private run (public)**")
        st.dataframe(pd.DataFrame(res["details"], columns=["name", "value", "meaning"]).astype(str),
                     hide_index=True, width="stretch")
with right:
    if res["private"]:
        st.plotly_chart(res["figs"][0], width="stretch")
        st.caption("Released subspaces (private) next to the true ones and the non-private solver's. The colours "
                   "come from assigning the raw points to the released subspaces: they are NOT private.")
    fig = None if res["private"] else projection_scatter(res_ds.X, res["labels"],
                             subspace_sets={"true": res_ds.subspaces, "found": res["subspaces"]},
                             label_name="found cluster", title="Points coloured by found cluster")
    if fig is not None:
        st.plotly_chart(fig, width="stretch")
        st.caption("What to look for: one colour per subspace; the found subspaces (dashed) lie on the true ones "
                   "(solid) when d_W is small.")
if res["private"]:
    st.markdown(METHODS[res["method"]].noise)
    for f in res["figs"][1:]:
        st.plotly_chart(f, width="stretch")
    st.caption("These diagnostics are computed from the raw data (teaching views, NOT private releases).")
if res["fig_aff"] is not None:
    st.plotly_chart(res["fig_aff"], width="stretch")
    st.caption("What to look for: a block-diagonal pattern — strong links inside each true class and none "
               "across — is what lets the spectral step find the clusters.")

if res.get("code"):
    snippet_expander(res["code"])

history = st.session_state.get(HISTORY_KEY, [])
if len(history) > 1:
    st.markdown("**Runs this session**")
    st.dataframe(pd.DataFrame(history).set_index("run"), width="stretch")
    if any(r.get("accuracy") is not None for r in history):
        st.plotly_chart(runs_comparison(history, "accuracy", title="Accuracy of the runs of this session"),
                        width="stretch")
