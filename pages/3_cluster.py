"""Cluster: run a subspace clustering method on the current dataset and evaluate it.

The methods, their parameter widgets, the run helpers and the result view live in
:mod:`ui.cluster` (add a method there); the "Compare ε" small multiples in
:mod:`ui.cluster_eps`. After ``fit`` the page shows the ledger and adds the run to the
privacy meter whenever the estimator has a ``ledger_``, and says in words which outputs are
private (the estimators' ``private_outputs_`` / ``nonprivate_outputs_``).

On the private presets, "Compare ε" opens with an instant-ε slider over the preset's precomputed
ε ladder (public seed, not charged; "Run live" reruns it privately): :mod:`ui.cluster_eps`.

The presets' texts were checked against runs with secret noise (several per preset); where a
result varies with the noise they say so and give the range seen.
"""
from __future__ import annotations

import json

import streamlit as st

from dpcore.data import PAPER_SPECS
from dpcore.defaults import default_n_clusters, default_subspace_dim, subspace_dim_reason
from ui import cluster_eps
from ui.cluster import (BIND, LIMITS, METHODS, RESULT_KEY, URL_FIELDS as METHOD_FIELDS, method_label, noise_preview,
                        privacy_widgets, run_and_store, show_history, show_result)
from ui.common import (DEFAULT_DATASET, cancelled_note, current_dataset, current_spec, number_input, run_button,
                       run_ended, run_guarded, run_started, stop_page)
from ui.seeds import seed_controls
from ui.share import Preset, check_link, follow_dataset, preset_picker, publish_url

LINES, PLANES = PAPER_SPECS["lines_r3"], PAPER_SPECS["planes_r3"]
CIRCLE, LINES_R2 = PAPER_SPECS["circle"], PAPER_SPECS["lines_r2"]
SA_DEFAULTS = {"sa_solver": "tsc", "sa_m": 0, "sa_delta": ""}
SULQ_DEFAULTS = {"sulq_T": 10, "sulq_comp": "advanced", "sulq_delta": ""}
PRESETS = {
    "Paper Fig. 2 (n=1000, d=10): SSC": Preset(
        {"cl_method": "ssc", "cl_k": 3, "cl_q": 3}, DEFAULT_DATASET,
        "The middle panel of Fig. 2 with the non-private SSC reference: it puts 997 of the 1000 points in the right "
        "cluster. The picture shows R¹⁰ through its top three principal directions, where three 3-D subspaces "
        "overlap and the colours look mixed: judge by the numbers here, or see the R³ presets."),
    "Paper Fig. 2: SuLQ-10 at ε = 10": Preset(
        {"cl_method": "sulq_kplane", "cl_k": 3, "cl_q": 3, "sulq_eps": 10.0, **SULQ_DEFAULTS}, DEFAULT_DATASET,
        "SuLQ k-plane with 10 iterations at ε = 10: here the noise wins. Each of the k·T = 30 noisy queries gets "
        "ε ≈ 0.27, and the noise per matrix entry (σ ≈ 37) is larger than nearly all the entries (all but 8 of 300; "
        "the largest is 72): the released subspaces are about as far from the truth as random ones (accuracy "
        "0.36–0.54 in 20 runs, as random subspaces score; d_W 2.9–3.6). Press **Compare ε** below: at ε = 100 and "
        "at ε = 1000 about 3 runs in 5 find the subspaces (12 and 13 of 20 runs); the others stop in a wrong "
        "partition (accuracy 0.46–0.81), as one start of k-plane also can."),
    "Paper Fig. 2: sample-aggregate (TSC) at ε = 1000": Preset(
        {"cl_method": "sample_aggregate", "cl_k": 3, "cl_q": 3, "sa_eps": 1000.0, **SA_DEFAULTS}, DEFAULT_DATASET,
        "Sample-aggregate needs a large ε at n = 1000: Thm 3.1's utility bound needs ε > 2D/√m ≈ 48. At ε = 1000 "
        "the paper's constants would not be private (their δ would be almost 1), so α and β are calibrated down "
        "and the noise is larger than the paper's. Most points are still assigned right (accuracy 0.65–1.0 in "
        "100 runs, most 0.8–0.98) although the released subspaces stay far from the true ones (d_W 1.4–2.5); it "
        "varies with the secret noise."),
    "Yale B, 5 faces: LRR": Preset(
        {"cl_method": "lrr", "cl_k": 5, "cl_q": 9}, PAPER_SPECS["yaleb_5"],
        "Five subjects of Extended Yale B, d = 50 (§5): LRR puts 319 of the 320 faces with the right subject "
        "(accuracy 0.997)."),
    "Three lines in R³: k-plane (not private)": Preset(
        {"cl_method": "kplane", "cl_k": 3, "cl_q": 1}, LINES,
        "300 points on three lines through the origin, drawn as they are (no projection: drag to turn them). "
        "k-plane finds the three lines (d_W ≈ 0.02). Accuracy is about 0.96, not 1: points near the origin lie "
        "close to all three lines and cannot be told apart."),
    "Three lines in R³: sample-aggregate at ε = 100 (private)": Preset(
        {"cl_method": "sample_aggregate", "cl_k": 3, "cl_q": 1, "sa_eps": 100.0, **SA_DEFAULTS, "sa_solver": "kplane"}, LINES,
        "Sample-aggregate (k-plane on each of 33 subsets of 9 points) at ε = 100 on the three lines: the released "
        "lines lie near the true ones, not on them (d_W mostly 0.2–0.9 in our runs; random lines score 1.1–1.9), "
        "and in about one run in ten the noise throws a line off (d_W above 1). Accuracy stays about 0.95 even "
        "for lines a little off (it can drop to 0.65): judge by d_W and the picture. The noise is secret: press "
        "Run again, or **Compare ε** below."),
    "Two planes in R³: k-plane (not private)": Preset(
        {"cl_method": "kplane", "cl_k": 2, "cl_q": 2}, PLANES,
        "400 points on two planes through the origin, drawn as discs (drag to turn them). k-plane finds both "
        "planes (d_W ≈ 0.01); accuracy is about 0.97, not 1: points near the line where the planes cross belong "
        "to both."),
    "Two planes in R³: SuLQ k-plane at ε = 100 (private)": Preset(
        {"cl_method": "sulq_kplane", "cl_k": 2, "cl_q": 2, "sulq_eps": 100.0, **SULQ_DEFAULTS}, PLANES,
        "SuLQ k-plane (10 iterations) at ε = 100 on the two planes: the released planes lie close to the true "
        "ones (d_W 0.07–0.6 and accuracy 0.8–0.97 in our runs; it varies with the secret noise). Press **Compare "
        "ε** below to see them drift apart as ε shrinks."),
    "Points on a circle (Fig. 1): sample-aggregate at ε = 100 (private)": Preset(
        {"cl_method": "sample_aggregate", "cl_k": 2, "cl_q": 1, "sa_eps": 100.0, **SA_DEFAULTS, "sa_solver": "kplane"}, CIRCLE,
        "The paper's Fig. 1: 1000 points evenly spaced on the unit circle, which no two lines fit. Sample-aggregate "
        "runs k-plane on each of 48 random subsets of 20 points: on a circle their best lines point every which way "
        "(the map of subset solutions below has no tight cluster), so the smooth sensitivity is large (S(B) 1.6–2.1 "
        "and noise sd 0.36–0.46 per coordinate in 60 runs). The released lines turn to another angle on every run "
        "(press Run again); most cost 0.18–0.28, about what the non-private k-plane's 0.182 costs, since every pair of "
        "perpendicular lines fits a circle about as well: no answer is stable. In about one run in six the noise "
        "brings the two lines together and the cost nears 0.5, that of one line. Compare the two lines in R²."),
    "Two lines in R² (Fig. 1's contrast): sample-aggregate at ε = 100 (private)": Preset(
        {"cl_method": "sample_aggregate", "cl_k": 2, "cl_q": 1, "sa_eps": 100.0, **SA_DEFAULTS, "sa_solver": "kplane"}, LINES_R2,
        "1000 points on two lines 83° apart (σ = 0.005): well separated, as sample-aggregate's guarantee needs "
        "(Def. 3.2). The 48 subsets' best lines agree, so S(B) = 0.258 and the noise sd 0.056 per coordinate, 6–8× "
        "less than on the circle, and the released lines lie close to the true ones (d_W 0.01–0.19, median 0.06, and "
        "accuracy 0.998–0.999 in 100 runs)."),
}
#: the widgets whose values travel in the page's link (bound to it), parsed with the widgets' own limits
URL_FIELDS = {**METHOD_FIELDS, **cluster_eps.URL_FIELDS}


# ----------------------------------------------------------------------------- page
st.title("Cluster")
st.markdown("Run a subspace clustering method on the dataset chosen on the **Data** page and compare "
            "what it finds with the truth.")
check_link("cluster", URL_FIELDS)
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
key = st.selectbox("Method", list(METHODS), format_func=method_label, key="cl_method", bind=BIND,
                   help="The non-private solvers are the reference every private method is compared with.")
method = METHODS[key]
st.caption(method.about)

privacy_params = {}
if method.private:
    eps, delta = privacy_widgets(ds, method.prefix)
    privacy_params = dict(epsilon=eps, delta=delta)
    preview = run_guarded(noise_preview, key, ds, eps, delta)
    if preview:
        st.caption(preview)

seed = seed_controls("cl")   # outside the form: ticking it shows the seed at once
with st.form("cluster_form"):
    c1, c2, c3 = st.columns(3)
    k = int(number_input(c1, "clusters k", *LIMITS["cl_k"], default_n_clusters(ds), key="cl_k", bind=BIND,
                            help="Number of subspaces to find (default: the number of classes). Must be ≤ n."))
    q = int(number_input(c2, "subspace dimension q", *LIMITS["cl_q"], default_subspace_dim(ds), key="cl_q", bind=BIND,
                            help=f"Dimension of every subspace; {subspace_dim_reason(ds)} Must be < d."))
    params = {**privacy_params, **method.widgets(ds)}
    submitted = run_button(st, "Run", type="primary")
publish_url()

run_slot = st.empty()      # drawn on every run: the progress bar of Run, and its errors
if submitted:
    run_started("cluster")
    run_and_store(key, params, k, q, seed, ds, spec, run_slot)
    run_ended("cluster")
cancelled_note("cluster", kept=st.session_state.get(RESULT_KEY) is not None)
show_result(ds, spec)
cluster_eps.compare_section(ds, key, k, q, params, seed, spec)
show_history()
