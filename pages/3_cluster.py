"""Cluster: run a subspace clustering method on the current dataset and evaluate it.

Extending (private methods): add an entry to ``METHODS`` — a :class:`Method` with a label,
a function drawing the parameter widgets (called inside the form, returns a dict of
keyword parameters) and a builder ``(params, k, q, seed) -> estimator``. After ``fit`` the
page shows the ledger and adds it to the session budget whenever the estimator has a
``ledger_``, and lists ``private_outputs_`` / ``nonprivate_outputs_`` in the privacy box.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pandas as pd
import streamlit as st

from dpcore.metrics import clustering_accuracy, nmi, subspace_cost, wasserstein_distance
from dpcore.plots.data import projection_scatter
from dpcore.plots.subspace import affinity_heatmap, runs_comparison
from dpcore.subspace.solvers import make_solver
from ui.common import (Timer, add_to_session_budget, current_dataset, current_spec, dataset_from_spec,
                       privacy_statement, run_guarded, show_ledger)

RESULT_KEY = "cluster_result"
HISTORY_KEY = "cluster_history"
MAX_QUADRATIC_N = 5000  # methods with an n×n affinity: memory grows like n²


@dataclass
class Method:
    label: str
    widgets: Callable[[object], dict]            # draws widgets inside the form; returns parameters
    build: Callable[[dict, int, int, int], object]  # (params, k, q, seed) -> unfitted estimator
    about: str = ""
    private: bool = False
    quadratic: bool = False                      # builds an n×n matrix (memory ~ 8·n² bytes)
    extras: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------- parameter widgets
def _kplane_widgets(ds):
    c1, c2, c3 = st.columns(3)
    return dict(
        n_init=int(c1.number_input("restarts (n_init)", 1, 200, 10, key="kp_n_init",
                                   help="Number of random starts; the run with the lowest k-means subspace cost "
                                        "(eq. 3) is kept. More restarts = fewer bad local optima, slower.")),
        max_iter=int(c2.number_input("max iterations", 1, 10_000, 100, key="kp_max_iter",
                                     help="Cap on assign/refit iterations per start; a start stops earlier when the "
                                          "assignment no longer changes.")),
        init=c3.selectbox("initialisation", ["random", "points"], key="kp_init",
                          help="random: uniformly random subspaces. points: each subspace spanned by q random "
                               "data points (often better when d is large)."),
    )


def _tsc_widgets(ds):
    c1, c2 = st.columns(2)
    s = int(c1.number_input("neighbours s (0 = automatic)", 0, 100_000, 0, key="tsc_s",
                            help="Each point is linked to the s points with the largest |cosine| to it. "
                                 "0 = max(3, ⌈n/(10k)⌉). Must be below n. Too small: a cluster breaks into "
                                 "pieces; too large: links across subspaces."))
    variant = c2.selectbox("variant", ["full", "simplified"], key="tsc_variant",
                           help="full: weighted graph + spectral clustering (Heckel & Bölcskei). simplified: the "
                                "paper's Alg. 2 — connected components, each subspace spanned by q random points "
                                "of its component (falls back to spectral clustering if there are not k components).")
    return dict(n_neighbors=None if s == 0 else s, variant=variant)


def _ssc_widgets(ds):
    c1, c2 = st.columns(2)
    return dict(
        alpha=float(c1.number_input("alpha", value=20.0, step=5.0, key="ssc_alpha",
                                    help="Regularisation λ = alpha/μ, μ = min_i max_j≠i |⟨xᵢ,xⱼ⟩| (Elhamifar & Vidal). "
                                         "Larger alpha fits each point more exactly with more coefficients; "
                                         "smaller alpha = sparser, more robust to noise. Must be > 0.")),
        max_iter=int(c2.number_input("ADMM iterations (max)", 1, 100_000, 200, key="ssc_max_iter",
                                     help="Cap on ADMM iterations (the authors' default is 200).")),
    )


def _lrr_widgets(ds):
    c1, c2 = st.columns(2)
    return dict(
        lam=float(c1.number_input("λ (error weight)", value=4.0, step=0.5, key="lrr_lam",
                                  help="Weight of the ℓ2,1 error term. Small λ lets the error absorb whole points "
                                       "(robust to outliers, may lose structure); large λ forces X ≈ XZ. Must be > 0.")),
        max_iter=int(c2.number_input("ALM iterations (max)", 1, 100_000, 1000, key="lrr_max_iter",
                                     help="Cap on the inexact augmented-Lagrangian iterations.")),
    )


def _solver_builder(name):
    return lambda params, k, q, seed: make_solver(name, k, q, random_state=seed, **params)


METHODS: dict[str, Method] = {
    "kplane": Method("k-plane (non-private)", _kplane_widgets, _solver_builder("kplane"),
                     about="Alternates assigning points to the nearest subspace and refitting each subspace by PCA "
                           "(App. E). Fast, but can stop at a local optimum."),
    "tsc": Method("TSC — thresholding (non-private)", _tsc_widgets, _solver_builder("tsc"), quadratic=True,
                  about="Links each point to its most correlated neighbours, then clusters the graph (§3.3, Alg. 2). "
                        "Provably correct on the stochastic model; the solver of private sample-aggregation."),
    "ssc": Method("SSC — sparse self-expression (non-private)", _ssc_widgets, _solver_builder("ssc"), quadratic=True,
                  about="Writes every point as a sparse combination of the others (solved by ADMM) and clusters "
                        "the resulting affinity."),
    "lrr": Method("LRR — low-rank representation (non-private)", _lrr_widgets, _solver_builder("lrr"), quadratic=True,
                  about="Writes all points as a low-rank combination of the points, with a column-sparse error "
                        "(inexact ALM), and clusters the resulting affinity."),
}


def default_q(ds):
    """q from the dataset: the true subspace dimension when known, 9 for Yale B (the
    paper's per-subject 9-D PCA), otherwise 3; always below d."""
    if ds.subspaces is not None:
        q = int(ds.subspaces.shape[2])
    elif ds.params.get("kind") == "yaleb":
        q = 9
    else:
        q = 3
    return max(1, min(q, ds.d - 1))


def run_method(key, params, k, q, seed, X):
    """Build and fit (ValueError propagates to run_guarded)."""
    model = METHODS[key].build(params, k, q, seed)
    with Timer() as t:
        model.fit(X)
    return model, t.seconds


def evaluate(ds, model, seconds):
    labels = model.labels_
    U = model.subspaces_
    row = {"accuracy": None, "NMI": None, "d_W to truth": None,
           "k-means subspace cost (eq. 3)": subspace_cost(ds.X, U), "seconds": seconds}
    if ds.labels is not None:
        row["accuracy"] = clustering_accuracy(ds.labels, labels)
        row["NMI"] = nmi(ds.labels, labels)
    if ds.subspaces is not None and ds.subspaces.shape == U.shape:
        row["d_W to truth"] = wasserstein_distance(U, ds.subspaces)
    return row


# ----------------------------------------------------------------------------- page
st.title("Cluster")
st.markdown("Run a subspace clustering method on the dataset chosen on the **Data** page and compare "
            "what it finds with the truth.")

ds = current_dataset()
spec = current_spec()
if ds.kind != "points":
    st.info(f"The current dataset ({ds.name}) is a count matrix. Subspace clustering works on points: "
            "choose a union of subspaces, a Gaussian mixture or Yale B faces on the Data page.")
    st.stop()
st.caption(f"Dataset: **{ds.name}** — n = {ds.n}, d = {ds.d}"
           + (f", {ds.n_classes} classes" if ds.n_classes else ""))

key = st.selectbox("Method", list(METHODS), format_func=lambda m: METHODS[m].label,
                   help="The non-private solvers are the reference every private method is compared with.")
method = METHODS[key]
st.caption(method.about)

with st.form("cluster_form"):
    c1, c2, c3 = st.columns(3)
    k = int(c1.number_input("clusters k", 1, 100_000, int(ds.n_classes or 3),
                            help="Number of subspaces to find (default: the number of classes). Must be ≤ n."))
    q = int(c2.number_input("subspace dimension q", 1, 100_000, default_q(ds),
                            help="Dimension of every subspace (default: the true one when known, 9 for Yale B, "
                                 "else 3). Must be < d."))
    seed = int(c3.number_input("seed", 0, 2**31 - 1, 0,
                               help="Random seed of the method (initialisations, k-means of the spectral step)."))
    params = method.widgets(ds)
    submitted = st.form_submit_button("Run", type="primary")

if submitted:
    if method.quadratic and ds.n > MAX_QUADRATIC_N:
        st.error(f"n = {ds.n} is too large for {method.label}: it builds an n×n matrix; use at most "
                 f"{MAX_QUADRATIC_N} points (or k-plane).")
    else:
        bar = st.progress(0, text=f"Running {method.label}…")
        out = run_guarded(run_method, key, params, k, q, seed, ds.X)
        bar.progress(100, text="Done" if out is not None else "Failed: the previous result is kept")
        if out is not None:
            model, seconds = out
            metrics = evaluate(ds, model, seconds)
            fig_aff = None
            if getattr(model, "affinity_", None) is not None and ds.labels is not None:
                fig_aff = affinity_heatmap(model.affinity_, ds.labels, title="Affinity, points sorted by true class")
            ledger = getattr(model, "ledger_", None)
            if ledger is not None:
                add_to_session_budget(ledger, method.label)
            result = dict(method=key, label=method.label, params=params, k=k, q=q, seed=seed, spec=spec,
                          dataset=ds.name, labels=model.labels_, subspaces=model.subspaces_, metrics=metrics,
                          fig_aff=fig_aff, ledger=ledger, private=method.private,
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
    st.stop()

st.subheader(f"Result: {res['label']}")
res_ds = ds if res["spec"] == spec else dataset_from_spec(res["spec"])
if res["spec"] != spec:
    st.warning(f"This result was computed on another dataset ({res['dataset']}); it is shown on that dataset. "
               "Press Run to cluster the current one.")

if res["private"]:
    not_private = [f"{name}: {why}" for name, why in res["nonprivate_outputs"].items()]
    privacy_statement(private=res["private_outputs"] or ["see the ledger"],
                      not_private=not_private + ["the metrics, computed from the raw data and the ground truth "
                                                 "(evaluation only)"])
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
               f"Parameters: k={res['k']}, q={res['q']}, seed={res['seed']}, "
               + ", ".join(f"{a}={b}" for a, b in res["params"].items()))
    if res["ledger"] is not None:
        show_ledger(res["ledger"])
with right:
    fig = projection_scatter(res_ds.X, res["labels"],
                             subspace_sets={"true": res_ds.subspaces, "found": res["subspaces"]},
                             label_name="found cluster", title="Points coloured by found cluster")
    st.plotly_chart(fig, width="stretch")
    st.caption("What to look for: one colour per subspace; the found subspaces (dashed) lie on the true ones "
               "(solid) when d_W is small.")
if res["fig_aff"] is not None:
    st.plotly_chart(res["fig_aff"], width="stretch")
    st.caption("What to look for: a block-diagonal pattern — strong links inside each true class and none "
               "across — is what lets the spectral step find the clusters.")

history = st.session_state.get(HISTORY_KEY, [])
if len(history) > 1:
    st.markdown("**Runs this session**")
    st.dataframe(pd.DataFrame(history).set_index("run"), width="stretch")
    if any(r.get("accuracy") is not None for r in history):
        st.plotly_chart(runs_comparison(history, "accuracy", title="Accuracy of the runs of this session"),
                        width="stretch")
