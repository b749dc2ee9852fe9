"""Co-clustering: Fast-τCC and the private DP-τCC on a count matrix (documents × terms)."""
import json

import pandas as pd
import streamlit as st

from dpcore.cocluster.dptaucc import DPTauCC, dptaucc_budget
from dpcore.cocluster.taucc import FastTauCC
from dpcore.data import CLUTO_NAMES
from dpcore.data import MAX_DENSE_CELLS
from dpcore.defaults import default_n_clusters
from dpcore.kmeans.baselines import DPLloydKMeans
from dpcore.metrics import nmi
from dpcore.plots.cocluster import contingency_heatmaps, reordered_matrix, tau_history
from dpcore.export import estimator_snippet
from ui.share import (Preset, as_bool, as_float, as_int, bind_url, follow_dataset, one_of, preset_picker, publish_url,
                      snippet_expander)
from ui.common import (Timer, current_spec, dataset_from_spec, privacy_statement, record_estimator, run_guarded,
                       show_ledger, stop_page)
from ui.cocluster import figure1_section
from ui.pickers import dataset_picker
from ui.seeds import seed_caveat, seed_controls, seed_label

RESULT_KEY = "cocluster_result"
URL_FIELDS = {"cc_matrix": one_of(["current", "blocks", *CLUTO_NAMES]), "cc_eps": as_float(), "cc_iter": as_int(),
              "cc_K0": as_int(), "cc_L0": as_int(), "cc_seed": as_int(0, 2**31 - 1), "cc_fast": as_bool,
              "cc_ninit": as_int(), "cc_km": as_bool}
PRESETS = {
    "classic3 co-clustering (ε = 1, 𝓘 = 4)": Preset(
        {"cc_matrix": "classic3", "cc_eps": 1.0, "cc_iter": 4, "cc_K0": 3, "cc_L0": 3, "cc_fast": True,
         "cc_ninit": 5, "cc_km": False}, about="The paper's CLUTO setting on classic3 (3 classes): DP-τCC reaches "
                                                "about 80 % of Fast-τCC's row NMI at ε = 1."),
    "reviews at a small budget (ε = 0.5)": Preset(
        {"cc_matrix": "reviews", "cc_eps": 0.5, "cc_iter": 4, "cc_K0": 5, "cc_L0": 5, "cc_fast": True,
         "cc_ninit": 5, "cc_km": False}, about="The largest CLUTO set; DP-τCC is already close to its cap at ε = 0.5."),
    "Synthetic blocks, 3×3 co-clusters": Preset(
        {"cc_matrix": "blocks", "cc_eps": 1.0, "cc_iter": 4, "cc_K0": 3, "cc_L0": 3, "cc_fast": True,
         "cc_ninit": 5, "cc_km": False}, about="A 200×150 Poisson block matrix with strong blocks: Fast-τCC "
                                                "recovers it exactly."),
}

st.title("Co-clustering")
st.markdown("""
A **co-clustering** groups the rows *and* the columns of a table at once: documents into
topics and words into word groups. Its summary is the **contingency table T**: t_kl is the
total count of the words of column cluster l in the documents of row cluster k.
**Fast-τCC** alternately moves every row, then every column, to the cluster that maximises
the Goodman–Kruskal association τ̂ between the two partitions. **DP-τCC** does the same a
fixed number of times 𝓘 with two private steps per move: each object *draws* its cluster
with the exponential mechanism (90 % of the step's budget) and T is released with
*discrete* Laplace noise (10 %): integer noise from an exact sampler, so the released counts
are integers and no floating-point artefact can give a count away (Mironov 2012). The budget
of each half-iteration is ε/(2𝓘). Neighbouring matrices differ by 1 in **one cell**.
""")

# ----------------------------------------------------------------------------- dataset
bind_url("cocluster", URL_FIELDS)
preset_picker("cocluster", PRESETS)
spec = current_spec()
data_spec = dataset_picker("cc_matrix", "counts", spec, prefix="cc", help=(
    "A documents × terms count matrix: the Data page's choice when it is one, a synthetic block matrix (k×l "
    "co-clusters with Poisson noise) or one of the seven CLUTO sets."))
ds = run_guarded(dataset_from_spec, data_spec)
if ds is None:
    stop_page()
n_classes = default_n_clusters(ds)
follow_dataset("cocluster", json.dumps(data_spec, sort_keys=True), {"cc_K0": int(n_classes), "cc_L0": int(n_classes)})
st.caption(f"{ds.description} · {ds.X.nnz:,} non-zeros · labels are used only to evaluate (NMI).")

# ----------------------------------------------------------------------------- form
c1, c2 = st.columns(2)
epsilon = c1.number_input("privacy budget ε", value=1.0, step=0.1, format="%.3f", key="cc_eps",
                          help="Total ε of one DP-τCC run (must be > 0). Neighbouring matrices differ by 1 "
                               "in one cell (one word occurrence).")
n_iter = c2.number_input("iterations 𝓘", value=4, step=1, key="cc_iter",
                         help="Full iterations (a column and a row update each); each half-iteration costs "
                              "ε/(2𝓘). The paper uses 4. Must be ≥ 1.")
if epsilon > 0 and n_iter >= 1:
    e_half, e_assign, e_table = dptaucc_budget(float(epsilon), int(n_iter))
    st.caption(f"Noise at ε = {epsilon:g}, 𝓘 = {n_iter}: each of the {2 * n_iter} half-iterations spends ε′ = "
               f"{e_half:.3g} — ε₂ = {e_assign:.3g} to draw the assignments by the exponential mechanism and "
               f"ε₁ = {e_table:.3g} for the released contingency table, whose every cell gets discrete Laplace "
               f"noise (integers, P(z) ∝ e^(−ε₁|z|)) of scale 1/ε₁ = {1 / e_table:.3g}.")

seed = seed_controls("cc")   # outside the form: ticking it shows the seed at once
with st.form("cocluster_form"):
    c1, c2, c3 = st.columns(3)
    K0 = c1.number_input("row clusters K0", value=int(n_classes), step=1, key="cc_K0",
                         help="Initial number of row clusters (≥ 2); the paper sets it to the number of classes.")
    L0 = c2.number_input("column clusters L0", value=int(n_classes), step=1, key="cc_L0",
                         help="Initial number of column clusters (≥ 2); the paper sets it equal to K0.")
    n_init = c3.number_input("Fast-τCC restarts", value=5, step=1, key="cc_ninit",
                             help="Fast-τCC runs from this many random starts and keeps the one with the largest "
                                  "τ̂_R|C + τ̂_C|R. Started at the true number of clusters, a single run often "
                                  "loses a cluster (the paper's reference runs once). Must be ≥ 1.")
    c1, c2 = st.columns(2)
    run_fast = c1.checkbox("also run Fast-τCC (non-private)", True, key="cc_fast",
                           help="The non-private reference, started from random partitions with the same K0, L0.")
    run_km = c2.checkbox("also run DP k-means (diffprivlib)", False, key="cc_km",
                         help="The paper's DP-KMeans peer on L2-normalised rows with public bounds [0, 1]. It "
                              "protects a whole row and is slow on wide matrices; refused above "
                              f"{MAX_DENSE_CELLS:,} cells.")
    submitted = st.form_submit_button("Run")
publish_url(URL_FIELDS)


def run_all():
    """Runs behind the button; returns a result dict or raises ValueError (shown by run_guarded)."""
    bar = st.progress(0.0, text="DP-τCC…")
    dp = DPTauCC(n_row_clusters=K0, n_col_clusters=L0, epsilon=epsilon, n_iter=n_iter, random_state=seed)
    with Timer() as t_dp:
        dp.fit(ds.X, callback=lambda t, total: bar.progress(0.6 * t / total, text=f"DP-τCC iteration {t}/{total}"))
    code = None if data_spec.get("kind") == "upload" else estimator_snippet(data_spec, dp, prints=[
        ("row NMI:", "nmi(ds.labels, model.row_assignment_)"),
        ("privacy spent (epsilon, delta):", "model.ledger_.total()")], imports=["from dpcore.metrics import nmi"])
    res = dict(spec=data_spec, params=dict(epsilon=epsilon, I=n_iter, K0=K0, L0=L0, seed=seed), dp=dp, code=code,
               t_dp=t_dp.seconds, fast=None, km=None)
    if run_fast:
        bar.progress(0.65, text="Fast-τCC…")
        with Timer() as t_f:
            res["fast"] = FastTauCC(n_row_clusters=K0, n_col_clusters=L0, n_init=n_init, random_state=seed).fit(ds.X)
        res["t_fast"] = t_f.seconds
    if run_km and ds.n * ds.d > MAX_DENSE_CELLS:
        st.warning(f"DP k-means skipped: diffprivlib needs a dense {ds.n}×{ds.d} array "
                   f"({ds.n * ds.d:,} cells > {MAX_DENSE_CELLS:,}).")
    elif run_km:
        bar.progress(0.8, text="DP k-means (diffprivlib)…")
        with Timer() as t_k:
            res["km"] = DPLloydKMeans(n_clusters=int(K0), epsilon=epsilon, radius=1.0, nonnegative=True,
                                      random_state=seed).fit(ds.X)
        res["t_km"] = t_k.seconds
    bar.progress(1.0, text="done")
    return res


if submitted:
    result = run_guarded(run_all)
    if result is not None:
        st.session_state[RESULT_KEY] = result
        record_estimator(result["dp"], "DP-τCC (one cell ±1)", seed, dataset=ds.name)
        if result["km"] is not None:
            record_estimator(result["km"], "DP k-means (one row added/removed)", seed, dataset=ds.name)

# ----------------------------------------------------------------------------- results
res = st.session_state.get(RESULT_KEY)
if res is not None:
    rds = run_guarded(dataset_from_spec, res["spec"])
    if rds is None:                   # e.g. an uploaded file that is no longer held by the session
        st.info("The last result's dataset is no longer available; press Run again.")
        stop_page()
    dp, fast, km = res["dp"], res["fast"], res["km"]
    p = res["params"]
    st.subheader(f"Results on {rds.name} (ε = {p['epsilon']:g}, 𝓘 = {p['I']}, K0 = {p['K0']}, L0 = {p['L0']})")
    st.caption(f"Seed: {seed_label(p['seed'])}")
    cols = st.columns(4)
    if rds.labels is not None:
        cols[0].metric("DP-τCC row NMI", f"{nmi(rds.labels, dp.row_assignment_):.3f}",
                       help="Rows assigned to the last private T using the raw data (the paper's evaluation "
                            "step; NOT private), compared with the true classes.")
        cols[1].metric("NMI of the private row partition", f"{nmi(rds.labels, dp.row_labels_):.3f}",
                       help="The row partition drawn by the last exponential-mechanism step (private; rows of a "
                            "deleted cluster count as one extra group).")
        if fast is not None:
            cols[2].metric("Fast-τCC row NMI", f"{nmi(rds.labels, fast.row_labels_):.3f}",
                           help="Non-private reference with the same K0, L0 (best of the restarts).")
        if km is not None:
            cols[3].metric("DP k-means row NMI", f"{nmi(rds.labels, km.labels_):.3f}",
                           help="diffprivlib DPLloyd with the same ε (labels: nearest released centre, NOT private).")
    cols = st.columns(4)
    cols[0].metric("τ̂_{R|C} of released T", f"{dp.tau_rc_:.4f}")
    cols[1].metric("τ̂_{C|R} of released T", f"{dp.tau_cr_:.4f}")
    cols[2].metric("released T size", f"{dp.T_.shape[0]} × {dp.T_.shape[1]}")
    cols[3].metric("DP-τCC time", f"{res['t_dp']:.2f} s")
    if fast is not None:
        st.caption(f"Fast-τCC: τ̂_R|C = {fast.tau_rc_:.4f}, τ̂_C|R = {fast.tau_cr_:.4f}, "
                   f"{fast.n_row_clusters_}×{fast.n_col_clusters_} co-clusters, {fast.n_iter_} rounds "
                   f"({'converged' if fast.converged_ else 'stopped at max_iter'}), {res['t_fast']:.2f} s.")
    if km is not None:
        st.caption(f"DP k-means: {km.n_iter_} iterations, {res['t_km']:.1f} s.")

    tabs = st.tabs(["Reordered matrix", "Contingency tables", "τ̂ per step", "Ledger"])
    with tabs[0]:
        view = st.radio("Order rows and columns by", ["DP-τCC (private partitions)", "Fast-τCC"] if fast is not None
                        else ["DP-τCC (private partitions)"], horizontal=True,
                        help="Rows and columns are grouped by cluster; red lines separate the clusters.")
        if view.startswith("DP"):
            fig = reordered_matrix(rds.X, dp.row_labels_, dp.column_labels_, title="Matrix ordered by DP-τCC")
        else:
            fig = reordered_matrix(rds.X, fast.row_labels_, fast.column_labels_, title="Matrix ordered by Fast-τCC")
        st.plotly_chart(fig, width="stretch")
        st.caption("What to look for: dense blocks on the diagonal of the grid, one per row cluster × column "
                   "cluster; at small ε the private partitions scatter them. The picture shows the raw counts (the "
                   "data owner's view); only the partitions come from the run.")
    with tabs[1]:
        tables = {"released T (private)": dp.T_, "true T of the same partitions (not private)": dp.T_exact_}
        if fast is not None:
            tables["Fast-τCC T (not private)"] = fast.T_
        st.plotly_chart(contingency_heatmaps(tables), width="stretch")
        st.caption("What to look for: the released T should show the same strong cells as the true T of the same "
                   "partitions; discrete Laplace noise of scale 1/ε₁ per cell (ε₁ = 10 % of ε/(2𝓘)) blurs the small ones. "
                   "Negative cells are set to 0 and all-zero rows/columns deleted.")
    with tabs[2]:
        st.plotly_chart(tau_history(dp.history_), width="stretch")
        st.caption("What to look for: τ̂ (how much the released T reduces the error of predicting a row's "
                   "cluster from its column's, and back) should climb over the steps; with a small ε per step it "
                   "stalls near 0 - the trade-off between ε and 𝓘 of the paper's Fig. 3.")
        st.dataframe(pd.DataFrame(dp.history_), hide_index=True, width="stretch")
    with tabs[3]:
        show_ledger(dp.ledger_, "Privacy ledger of the DP-τCC run")
        if km is not None:
            show_ledger(km.ledger_, "Privacy ledger of the DP k-means run")

    private = ["every released contingency table T (discrete Laplace) and the τ̂ values computed from it",
               "the column partition and the row partition drawn by the exponential mechanism"]
    not_private = ["the final row assignment used for NMI (raw rows against the last private T)",
                   "the 'true T' shown next to the released one", "Fast-τCC's results",
                   "the class labels (used only to compute NMI)", "the reordered matrix picture (raw counts)"]
    caveats = ["DP-τCC's neighbouring matrices differ by 1 in ONE cell (one word occurrence in one document), "
               "not by a whole document; DP k-means protects a whole row."]
    if km is not None:
        private.append("DP k-means centres")
        not_private.append("DP k-means labels (raw rows against the released centres)")
        caveats.append("DP k-means (diffprivlib's DPLloyd) leaves a cluster that receives no row where it was, with "
                       "no noise: which clusters are empty is not protected.")
    if p["seed"] is not None:
        not_private = ["all of the above 'private' outputs too: their noise came from a public seed"] + not_private
        private = []
    privacy_statement(private, not_private, seed_caveat(p["seed"]) + caveats)
    if res.get("code"):
        snippet_expander(res["code"])
else:
    privacy_statement(["DP-τCC's released tables T and its column and row partitions"],
                      ["the evaluation assignment and NMI, Fast-τCC, the labels"],
                      ["Press Run to co-cluster the chosen matrix."])

# ----------------------------------------------------------------------------- Fig. 1
figure1_section()
