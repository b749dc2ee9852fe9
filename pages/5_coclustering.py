"""Co-clustering: Fast-τCC and the private DP-τCC on a count matrix (documents × terms)."""
import json

import streamlit as st

from dpcore.cocluster.dptaucc import dptaucc_budget
from dpcore.defaults import default_n_clusters
from ui.cocluster import (EPS_MAX, EPS_MIN, MAX_CLUSTERS, MAX_ITER, MAX_RESTARTS, PEER_HELP, PEERS, PEERS_NOTE,
                          PRESETS, RESULT_KEY, TAU_CR_LABEL, TAU_RC_LABEL, dp_plan, figure1_section, intro_box,
                          run_cocluster, show_result, whole_number)
from ui.share import as_bool, as_float, check_link, follow_dataset, list_of, preset_picker, publish_url
from ui.common import (ResultSlot, cancelled_note, current_spec, dataset_from_spec, number_input, run_button,
                       run_ended, run_guarded, run_started, stop_page)
from ui.meter import epsilon_odds
from ui.pickers import dataset_picker, picker_url_fields
from ui.seeds import MAX_SEED, seed_controls

#: the link's parameters, read with the same limits as the widgets below
URL_FIELDS = {**picker_url_fields("cc_matrix", "counts", "cc"), "cc_eps": as_float(EPS_MIN, EPS_MAX),
              "cc_iter": whole_number(1, MAX_ITER), "cc_K0": whole_number(2, MAX_CLUSTERS),
              "cc_L0": whole_number(2, MAX_CLUSTERS), "cc_seed": whole_number(0, MAX_SEED), "cc_fast": as_bool,
              "cc_ninit": whole_number(1, MAX_RESTARTS), "cc_peers": list_of(PEERS)}
BIND = "query-params"

st.title("Co-clustering")
st.markdown(f"""
A **co-clustering** groups the rows *and* the columns of a table at once: documents into
topics and words into word groups. Its summary is the **contingency table T**: t_kl is the
total count of the words of column cluster l in the documents of row cluster k.
**Fast-τCC** alternately moves every row, then every column, to the cluster that makes T most
informative, measured by two **Goodman–Kruskal τ**: **{TAU_RC_LABEL}**, how much knowing the column
cluster of a random word occurrence reduces the error of guessing its row cluster (0: not at all,
1: no error left), and **{TAU_CR_LABEL}**, the reverse. **DP-τCC** does the same a
fixed number of times 𝓘 with two private steps per move: each object *draws* its cluster
with the exponential mechanism (90 % of the step's budget) and T is released with
*discrete* Laplace noise (10 %): integer noise from an exact sampler, so the released counts
are integers and no floating-point artefact can give a count away (Mironov 2012). The budget
of each half-iteration is ε/(2𝓘). Neighbouring matrices differ by 1 in **one cell**.
The paper compares it with three private methods that cluster the documents only (its Fig. 2):
**DPHD** (private k-means for high dimensions), **DP-KMeans** (private Lloyd) and **DPNMF**
(private matrix factorisation, whose usual start reads the raw data and so is *not* private).
""")
with st.expander("The paper's peers: relations, and the DPNMF the paper ran"):
    st.markdown(PEERS_NOTE)

# ----------------------------------------------------------------------------- dataset
check_link("cocluster", URL_FIELDS)
preset_picker("cocluster", PRESETS)
spec = current_spec()
data_spec = dataset_picker("cc_matrix", "counts", spec, prefix="cc", help=(
    "A documents × terms count matrix: the Data page's choice when it is one, a synthetic block matrix (k×l "
    "co-clusters with Poisson noise) or one of the seven CLUTO sets."), url_fields=URL_FIELDS)
ds = run_guarded(dataset_from_spec, data_spec)
if ds is None:
    stop_page()
n_classes = int(min(max(default_n_clusters(ds), 2), MAX_CLUSTERS))
follow_dataset("cocluster", json.dumps(data_spec, sort_keys=True), {"cc_K0": n_classes, "cc_L0": n_classes})
st.caption(f"{ds.description} · {ds.X.nnz:,} non-zeros · labels are used only to evaluate (NMI).")

# ----------------------------------------------------------------------------- form
c1, c2 = st.columns(2)
epsilon = number_input(c1, "privacy budget ε", EPS_MIN, EPS_MAX, 1.0, step=0.1, format="%.3f", key="cc_eps",
                          bind=BIND, help=f"Total ε of one DP-τCC run, from {EPS_MIN:g} to {EPS_MAX:g}. "
                                          "Neighbouring matrices differ by 1 in one cell (one word occurrence).")
n_iter = number_input(c2, "iterations 𝓘", 1, MAX_ITER, 4, step=1, key="cc_iter", bind=BIND,
                         help="Full iterations (a column and a row update each); each half-iteration costs "
                              f"ε/(2𝓘). The paper uses 4. From 1 to {MAX_ITER}.")
e_half, e_assign, e_table = dptaucc_budget(float(epsilon), int(n_iter))
st.caption(f"Noise at ε = {epsilon:g}, 𝓘 = {n_iter}: each of the {2 * n_iter} half-iterations spends ε′ = "
           f"{e_half:.3g} — ε₂ = {e_assign:.3g} to draw the assignments by the exponential mechanism and "
           f"ε₁ = {e_table:.3g} for the released contingency table, whose every cell gets discrete Laplace "
           f"noise (integers, P(z) ∝ e^(−ε₁|z|)) of scale 1/ε₁ = {1 / e_table:.3g}.")

seed = seed_controls("cc")   # outside the form: ticking it shows the seed at once
plan = dp_plan(ds, epsilon, n_iter, seed)         # DP-τCC's plan (the library's): its relation, private or not
epsilon_odds(c1, epsilon, relation=plan.relation if plan is not None else None)     # under the ε input
with st.form("cocluster_form"):
    c1, c2, c3 = st.columns(3)
    K0 = number_input(c1, "row clusters K0", 2, MAX_CLUSTERS, n_classes, step=1, key="cc_K0", bind=BIND,
                         help=f"Initial number of row clusters, from 2 to {MAX_CLUSTERS} (and at most the number of "
                              "rows); the paper sets it to the number of classes. Clusters nobody chooses disappear.")
    L0 = number_input(c2, "column clusters L0", 2, MAX_CLUSTERS, n_classes, step=1, key="cc_L0", bind=BIND,
                         help=f"Initial number of column clusters, from 2 to {MAX_CLUSTERS} (and at most the number "
                              "of columns); the paper sets it equal to K0.")
    n_init = number_input(c3, "Fast-τCC restarts", 1, MAX_RESTARTS, 5, step=1, key="cc_ninit", bind=BIND,
                             help="Fast-τCC runs from this many random starts and keeps the one with the largest "
                                  "sum of the two τ. Started at the true number of clusters, a single run often "
                                  f"loses a cluster (the paper's reference runs once). From 1 to {MAX_RESTARTS}.")
    c1, c2 = st.columns([1, 2])
    run_fast = c1.checkbox("also run Fast-τCC (non-private)", True, key="cc_fast", bind=BIND,
                           help="The non-private reference, started from random partitions with the same K0, L0.")
    peers = c2.multiselect("also run the paper's peers (documents only)", list(PEERS), default=[], key="cc_peers",
                           bind=BIND, help="The co-clustering paper's Fig. 2 peers, with k = K0 and the same ε (each "
                                           "run spends it). " + " ".join(f"{k}: {v}" for k, v in PEER_HELP.items()))
    submitted = run_button(st, "Run")
publish_url()

# ----------------------------------------------------------------------------- run and results
# The previous result is drawn before a run starts and stays if the run is stopped (Stop, top right).
message_slot, progress_slot, result_slot = st.empty(), st.empty(), ResultSlot()
previous = st.session_state.get(RESULT_KEY)
if submitted:
    run_started("coclustering")
    if previous is not None:
        with result_slot.previous():
            show_result(previous, tag="_prev")
    params = dict(epsilon=epsilon, I=n_iter, K0=K0, L0=L0, seed=seed, n_init=n_init, fast=run_fast, peers=peers)
    with message_slot.container():      # a bad value's message stands right under the form
        result = run_guarded(run_cocluster, ds, data_spec, params, progress_slot)
    progress_slot.empty()
    if result is not None:                       # charged in run_cocluster, before it is drawn
        previous = st.session_state[RESULT_KEY] = result
    run_ended("coclustering")
cancelled_note("coclustering", kept=previous is not None)
if previous is not None:
    with result_slot.latest():
        show_result(previous)
else:
    intro_box(plan)

# ----------------------------------------------------------------------------- Fig. 1
figure1_section()
