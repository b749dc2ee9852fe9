"""k-means: private centres in high dimension (Balcan et al. 2017) against its baselines."""
import json

import pandas as pd
import streamlit as st

from dpcore.data import CLUTO_NAMES
from dpcore.defaults import default_n_clusters
from dpcore.preprocessing import normalize_rows
from dpcore.kmeans.candidate import DEFAULT_SPLIT, stage_explanations
from dpcore.kmeans.compare import METHODS, compare_methods
from dpcore.kmeans.partition import default_projection_dim
from dpcore.plots.kmeans import budget_bars, candidate_view, centres_scatter, objective_bars
from dpcore.export import call_snippet
from ui.share import (Preset, as_bool, as_float, as_int, bind_url, follow_dataset, list_of, one_of, preset_picker,
                      publish_url, snippet_expander)
from ui.common import (Timer, current_spec, dataset_from_spec, privacy_statement, record_estimator, run_guarded,
                       show_ledger, stop_page)
from ui.pickers import dataset_picker
from ui.seeds import seed_caveat, seed_controls, seed_label

RESULT_KEY = "kmeans_result"
URL_FIELDS = {"km_data": one_of(["current", "gaussians", "yaleb", *CLUTO_NAMES]), "km_n": as_int(10, 200_000),
              "km_d": as_int(1, 2000), "km_comp": as_int(1, 200), "km_sigma": as_float(0.0, 10.0),
              "km_dseed": as_int(0, 2**31 - 1), "km_k": as_int(), "km_eps": as_float(), "km_delta": as_float(),
              "km_radius": as_float(), "km_methods": list_of(METHODS), "km_seed": as_int(0, 2**31 - 1),
              "km_leak": as_bool}
PRESETS = {
    "64 Gaussians in R^100 (§7: n = 20,000, k = 16, ε = 1)": Preset(
        {"km_data": "gaussians", "km_n": 20_000, "km_d": 100, "km_comp": 64, "km_sigma": 0.1, "km_dseed": 0,
         "km_k": 16, "km_eps": 1.0, "km_delta": 1e-6, "km_radius": 14.0, "km_leak": False,
         "km_methods": ["candidate", "sulq", "sample_aggregate", "dplloyd"]},
        about="The paper's synthetic data (scaled to seconds): the candidate set beats SuLQ and "
              "sample-and-aggregate (objective ÷ k-means++ ≈ 1.3 / 1.4 / 8.6). Λ = 14 comes from the generator."),
    "The leaking radius (Λ read off the data)": Preset(
        {"km_data": "gaussians", "km_n": 5000, "km_d": 50, "km_comp": 8, "km_sigma": 0.1, "km_dseed": 0,
         "km_k": 8, "km_eps": 1.0, "km_delta": 1e-6, "km_leak": True,
         "km_methods": ["candidate", "sulq"]},
        about="What a careless user does: Λ = max ‖x‖. The runs are then not private; the page says so."),
    "Yale B faces, 5 subjects": Preset(
        {"km_data": "yaleb", "km_k": 5, "km_eps": 1.0, "km_delta": 1e-6, "km_radius": 1.0, "km_leak": False,
         "km_methods": ["candidate", "sulq", "sample_aggregate"]},
        about="Rows of unit norm, so Λ = 1 is public."),
}

st.title("k-means")
st.markdown("""
**k-means** looks for k centres that make the squared distances from the points to their
nearest centre small. Releasing centres leaks: one point can move a centre. The private
method of **Balcan et al. (ICML 2017)** works in four stages, each paying a share of ε:

1. **candidate set** (Alg. 1–2): project the points to a few dimensions (Johnson–Lindenstrauss),
   split a randomly shifted cube into sub-cubes again and again, and keep subdividing a cube
   only when a *noisy* count says it holds many points; the centres of the cubes are the
   candidates;
2. **local swaps** (Alg. 3): start from k candidates and swap one for another, each swap drawn
   by the exponential mechanism on the clustering loss;
3. **recovery** (Alg. 4): group the points by their nearest chosen candidate and release each
   group's **noisy mean** in the original space (groups are disjoint, so this costs ε once);
   optionally a few private Lloyd (SuLQ) iterations refine the centres (§7).

Its baselines: **SuLQ k-means** (noisy Lloyd iterations), **sample and aggregate** (k-means on
random subsets, the most central answer plus noise) and **DP-Lloyd** (diffprivlib). Every run
is compared with non-private **k-means++**.
""")

# ----------------------------------------------------------------------------- dataset
bind_url("kmeans", URL_FIELDS)
preset_picker("kmeans", PRESETS)
spec = current_spec()
data_spec = dataset_picker("km_data", "points", spec, prefix="km", help=(
    "Points to cluster: the Data page's choice when it is a point set, a Gaussian mixture (the paper's synthetic "
    "data is 64 Gaussians in R^100), Yale B faces, or a CLUTO document-term matrix with every row scaled to norm 1 "
    "(a per-record map: it leaks nothing)."))
ds = run_guarded(dataset_from_spec, data_spec)
if ds is None:
    stop_page()
X = normalize_rows(ds.X) if ds.kind == "counts" else ds.X
default_radius = float(ds.extras.get("public_radius", 1.0)) if ds.kind == "points" else 1.0
follow_dataset("kmeans", json.dumps(data_spec, sort_keys=True),
               {"km_k": default_n_clusters(ds), "km_radius": default_radius})
st.caption(f"{ds.description} · n = {ds.n:,}, d = {ds.d:,}"
           + (" · rows scaled to norm 1" if ds.kind == "counts" else "")
           + f" · public radius suggested by the dataset's definition: Λ = {default_radius:.4g}")

# ----------------------------------------------------------------------------- form
seed = seed_controls("km")   # outside the form: ticking it shows the seed at once
with st.form("kmeans_form"):
    c1, c2, c3, c4 = st.columns(4)
    k = c1.number_input("clusters k", value=default_n_clusters(ds), step=1, key="km_k",
                        help="Number of centres (1 ≤ k ≤ n).")
    epsilon = c2.number_input("privacy budget ε", value=1.0, step=0.1, format="%.3f", key="km_eps",
                              help="Total ε of each private run (must be > 0). Neighbouring datasets differ in one "
                                   "point, replaced (n public); diffprivlib's DP-Lloyd states its ε for one point "
                                   "added or removed instead (for a replaced point it is 2ε).")
    delta = c3.number_input("δ", value=1e-6, format="%.1e", key="km_delta",
                            help="δ of the Gaussian noise (noisy means), in (0, 1).")
    radius = c4.number_input("public radius Λ", value=default_radius, format="%.4g", key="km_radius",
                             help="A bound on ‖x‖ chosen WITHOUT looking at the data (here: from the dataset's "
                                  "definition). Points outside are clipped onto the sphere of radius Λ. Must be > 0.")
    methods = st.multiselect("private methods", list(METHODS), default=["candidate", "sulq", "sample_aggregate"], key="km_methods",
                             format_func=lambda m: METHODS[m][0],
                             help="Each selected method runs with the same k, ε, δ and Λ (each run spends ε). "
                                  "k-means++ (non-private) always runs as the reference.")
    c1, c2, c3 = st.columns(3)
    leak = c2.checkbox("use Λ = max ‖x‖ from the data (leaks!)", False, key="km_leak",
                       help="What a careless user does: the radius is read off the data. The runs then are NOT "
                            "differentially private; shown to teach why Λ must be public.")
    with st.expander("Candidate-set method: advanced", expanded=False):
        a1, a2, a3, a4 = st.columns(4)
        p = a1.number_input("projection dimension p", value=default_projection_dim(ds.n), step=1,
                            help="Dimension of the JL projection (paper's experiments: ⌈ln(n)/2⌉; theory: 8 ln n).")
        refine = a2.number_input("SuLQ refinement iterations", value=0, min_value=0, max_value=50, step=1,
                                 help="Private Lloyd iterations after recovery (§7 uses 8). They share the "
                                      "recovery stage's budget, so each adds noise.")
        share_c = a3.number_input("candidate share", value=DEFAULT_SPLIT["candidate"], step=0.05, format="%.2f",
                                  help="Share of ε for the candidate set (Alg. 1–2).")
        share_l = a4.number_input("local-swap share", value=DEFAULT_SPLIT["localswap"], step=0.05, format="%.2f",
                                  help="Share of ε for the local swaps (Alg. 3). Recovery gets the rest.")
        sparsity = a1.number_input("sparsity s (Alg. 5)", value=100, min_value=1, step=10,
                                   help="Public bound on non-zeros per row for the sparse recovery; longer rows keep "
                                        "their s largest entries (a per-record map).")
    submitted = st.form_submit_button("Run")
publish_url(URL_FIELDS)


def run_all():
    """Everything behind the button: one call into dpcore, a progress bar."""
    bar = st.progress(0.0, text="starting…")
    split = {"candidate": share_c, "localswap": share_l, "recovery": 1.0 - share_c - share_l}
    if split["recovery"] <= 0:
        raise ValueError("candidate share + local-swap share must be < 1 (recovery gets the rest)")
    cand_opts = dict(projection_dim=int(p), refine_iter=int(refine), budget_split=split)
    options = {"candidate": cand_opts, "candidate_kmedian": dict(cand_opts),
               "candidate_sparse": dict(cand_opts, sparsity=int(sparsity))}
    with Timer() as t:
        cmp = compare_methods(X, int(k), float(epsilon), "data" if leak else float(radius), methods, float(delta),
                              options, seed, progress=lambda f, txt: bar.progress(min(f, 1.0), text=txt))
    code = None if data_spec.get("kind") == "upload" else call_snippet(
        data_spec, compare_methods,
        dict(n_clusters=int(k), epsilon=float(epsilon), radius="data" if leak else float(radius), methods=list(methods),
             delta=float(delta), options=options, random_state=seed),
        X_expr="normalize_rows(ds.X)" if ds.kind == "counts" else "ds.X",
        prints=[("objective / k-means++:", "result.ratios()")], result="result",
        imports=["from dpcore.preprocessing import normalize_rows"] if ds.kind == "counts" else [])
    return dict(spec=data_spec, params=dict(k=int(k), epsilon=float(epsilon), delta=float(delta), leak=leak,
                                            seed=seed), cmp=cmp, seconds=t.seconds, code=code)


if submitted:
    if not methods:
        st.error("methods must contain at least one private method")
    else:
        result = run_guarded(run_all)
        if result is not None:
            st.session_state[RESULT_KEY] = result
            for r in result["cmp"].results:
                relation = "one row added/removed" if r.key == "dplloyd" else "one row replaced"
                record_estimator(r.estimator, f"k-means: {r.label} ({relation})", seed, dataset=ds.name)

# ----------------------------------------------------------------------------- results
res = st.session_state.get(RESULT_KEY)
if res is not None:
    rds = run_guarded(dataset_from_spec, res["spec"])
    if rds is None:                   # e.g. an uploaded file that is no longer held by the session
        st.info("The last result's dataset is no longer available; press Run again.")
        stop_page()
    RX = normalize_rows(rds.X) if rds.kind == "counts" else rds.X
    cmp, prm = res["cmp"], res["params"]
    st.subheader(f"Results on {rds.name} (k = {prm['k']}, ε = {prm['epsilon']:g}, δ = {prm['delta']:.1e}, "
                 f"Λ = {cmp.radius:.4g}, seed: {seed_label(prm['seed'])})")
    if cmp.radius_from_data:
        st.warning("Λ was computed from the data (max ‖x‖): none of these runs is differentially private.")
    rows = [{"method": r.label, "k-means objective": r.objective, "÷ k-means++": r.ratio,
             "k-median objective ÷ k-means++'s": r.kmedian_ratio, "seconds": r.seconds,
             "ε spent": r.estimator.ledger_.epsilon if hasattr(r.estimator, "ledger_") else 0.0}
            for r in [cmp.reference] + cmp.results]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(f"{cmp.n_clipped} point(s) lay outside B(0, Λ) and were clipped (an exact count: not private). "
               "Objectives are evaluated on the clipped points with the raw data (evaluation only).")
    st.plotly_chart(objective_bars(cmp.ratios()), width="stretch")
    st.caption("What to look for: bars near 1 are as good as non-private k-means++; the candidate-set method "
               "should be the lowest private bar when the clusters are well separated (the paper's §7).")

    labels = {r.label: r for r in cmp.results}
    shown = st.selectbox("centres to draw", list(labels), help="Whose released centres are drawn over the points.")
    r = labels[shown]
    fig = centres_scatter(RX, rds.labels, {f"{shown} (private)": r.centres,
                                           "k-means++ (not private)": cmp.reference.centres},
                          title="Points (coloured by true class) with released and non-private centres")
    st.plotly_chart(fig, width="stretch")
    st.caption("What to look for: a released centre near the middle of every true class; noise shows as centres "
               "pulled off the data or two centres in one class.")

    est = r.estimator
    if r.key.startswith("candidate"):
        st.markdown("**Inside the candidate-set method** — the projected space R^p, the private candidate set and "
                    "the k candidates the local search chose (their groups give the noisy means).")
        Y = (RX @ est.projection_)
        st.plotly_chart(candidate_view(Y, est.candidates_, est.swap_result_.centers_index,
                                       est.candidate_result_.depths), width="stretch")
        st.plotly_chart(budget_bars(est.ledger_), width="stretch")
        expl = stage_explanations(est.objective, est.recovery)
        st.markdown("\n".join(f"- **{s}** (ε = {est.budget_split_[s][0]:.3g}"
                              + (f", δ = {est.budget_split_[s][1]:.1e}" if est.budget_split_[s][1] else "") + f"): {expl[s]}"
                              for s in expl))
    show_ledger(est.ledger_, title=f"Privacy ledger of {shown}")
    private = [f"the centres released by each private method ({', '.join(x.label for x in cmp.results)})"]
    if any(x.key.startswith("candidate") for x in cmp.results):
        private.append("the candidate set and the chosen projected centres of the candidate-set method")
    not_private = ["labels from assigning the points to the released centres (used for the colours and the "
                   "objectives)", "the objectives and ratios (computed from the raw data)",
                   "the number of clipped points", "k-means++ and its centres (non-private reference)"]
    caveats = ["Λ = max ‖x‖ was read off the data: NOTHING on this page is private for this run"] \
        if cmp.radius_from_data else []
    caveats = seed_caveat(prm["seed"]) + caveats
    if cmp.radius_from_data or prm["seed"] is not None:
        not_private = ["the released centres and candidate set too (" + ("Λ read off the data" if cmp.radius_from_data
                       else "their noise came from a public seed") + ")"] + not_private
        private = []
    if any(x.key == "dplloyd" for x in cmp.results):
        caveats.append("DP-Lloyd (diffprivlib): a cluster that receives no point is left where it was, with no "
                       "noise added; which clusters are empty is therefore not protected by diffprivlib's noise.")
    if rds.kind == "points" and rds.d > 3:
        caveats.append("the 2-D view uses the top principal directions of the data (a display choice, not a release)")
    privacy_statement(private, not_private, caveats)
    if res.get("code"):
        snippet_expander(res["code"])
else:
    privacy_statement(["the centres released by each private method"],
                      ["labels from assigning points to the released centres", "a radius Λ read off the data"],
                      ["press Run to cluster"])
