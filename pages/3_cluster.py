"""Cluster: run a subspace clustering method on the current dataset and evaluate it.

Extending (private methods): add an entry to ``METHODS`` — a :class:`Method` with a label,
a function drawing the parameter widgets (called inside the form, returns a dict of
keyword parameters) and a builder ``(params, k, q, seed) -> estimator`` (seed None = fresh OS entropy). After ``fit`` the
page shows the ledger and adds it to the session budget whenever the estimator has a
``ledger_``, and lists ``private_outputs_`` / ``nonprivate_outputs_`` in the privacy box.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import json
import math
import warnings

import pandas as pd
import streamlit as st

from dpcore.metrics import clustering_accuracy, nmi, subspace_cost, wasserstein_distance
from dpcore.plots.data import projection_scatter
from dpcore.plots.private_subspace import (aggregation_map, released_subspaces_figure, smooth_sensitivity_terms,
                                           sulq_trajectory)
from dpcore.plots.subspace import affinity_heatmap, runs_comparison
from dpcore.sample_aggregate import alg1_constants
from dpcore.subspace.sample_aggregate import (SampleAggregateSubspace, default_delta, encoding_dim,
                                             subspace_set_diameter)
from dpcore.subspace.solvers import make_solver
from dpcore.subspace.sulq import SuLQKPlane, sulq_noise
from dpcore.export import estimator_snippet
from ui.common import (DEFAULT_DATASET, Timer, current_dataset, current_spec, dataset_from_spec, privacy_statement,
                       record_estimator, run_guarded, show_ledger, stop_page)
from ui.seeds import seed_caveat, seed_controls, seed_label
from ui.share import Preset, as_float, as_int, as_str, bind_url, follow_dataset, one_of, preset_picker, publish_url, snippet_expander

RESULT_KEY = "cluster_result"
HISTORY_KEY = "cluster_history"
MAX_QUADRATIC_N = 5000  # methods with an n×n affinity: memory grows like n²
QUADRATIC_SOLVERS = ("tsc", "ssc", "lrr")


@dataclass
class Method:
    label: str
    widgets: Callable[[object], dict]            # draws widgets inside the form; returns parameters
    build: Callable[[dict, int, int, int | None], object]  # (params, k, q, seed or None) -> unfitted estimator
    about: str = ""
    private: bool = False
    quadratic: bool = False                      # builds an n×n matrix (memory ~ 8·n² bytes)
    prefix: str = ""                             # private methods: widget-key prefix of ε and δ
    reference: str | None = None                 # private methods: the non-private solver shown next to them
    noise: str = ""                              # private methods: where the noise goes (markdown)
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


# log-scale ε grid 0.01 … 1000 (1-2-5 steps per decade)
EPSILON_GRID = [round(m * 10.0 ** e, 10) for e in range(-2, 3) for m in (1, 2, 5)] + [1000.0]


def _privacy_widgets(ds, prefix):
    """ε on a log-scale slider and δ as text (blank = 1/(n ln n), §5); returns (ε, δ-or-None).
    A δ that is not a number is reported with the estimator's words ("delta must be in (0, 1)")."""
    c1, c2 = st.columns(2)
    eps = c1.select_slider("privacy budget ε (log scale)", EPSILON_GRID, value=1.0, key=f"{prefix}_eps",
                           help="Total ε of the run. Smaller ε = more noise = stronger privacy. The grid is "
                                "logarithmic, 0.01 … 1000, like the x-axis of Fig. 2.")
    n = max(ds.n, 2)
    txt = c2.text_input("δ (blank = 1/(n ln n))", "", key=f"{prefix}_delta",
                        help=f"Total δ, in (0, 1). Blank uses the paper's 1/(n ln n) = {default_delta(n):.3g} "
                             "for this dataset (§5).")
    return float(eps), _parse_delta(txt)


def _parse_delta(txt):
    txt = (txt or "").strip()
    if not txt:
        return None
    try:
        return float(txt)
    except ValueError:
        return txt          # the estimator rejects it: "delta must be a number in (0, 1)"


def _sa_widgets(ds):
    c1, c2 = st.columns(2)
    solver = c1.selectbox("solver on each subset", ["tsc", "ssc", "lrr", "kplane"], key="sa_solver",
                          format_func=lambda s: {"tsc": "TSC", "ssc": "SSC", "lrr": "LRR", "kplane": "k-plane"}[s],
                          help="The non-private solver run on each of the m subsets (its default parameters; "
                               "TSC is the paper's choice).")
    m = int(c2.number_input("subsets m (0 = ⌈(ln n)²⌉)", 0, 1_000_000, 0, key="sa_m",
                            help="Number of disjoint-ish subsets of n/m points. More subsets = less noise per "
                                 "point of the aggregate but worse solutions on each subset. Each subset needs at "
                                 "least k·(q+1) points."))
    return dict(solver=solver, n_subsets=None if m == 0 else m)


def _sulq_widgets(ds):
    c1, c2 = st.columns(2)
    T = int(c1.number_input("iterations T", 1, 1000, 10, key="sulq_T",
                            help="k·T noisy queries share the total budget (Fig. 2 uses T = 10 and 50). "
                                 "More iterations = more noise per query."))
    comp = c2.selectbox("composition", ["advanced", "basic", "best"], key="sulq_comp",
                        help="How the total (ε, δ) is split over the k·T queries: advanced = Prop. E.2, basic = "
                             "even split, best = whichever gives each query the larger ε.")
    return dict(n_iter=T, composition=comp)


def _sa_build(params, k, q, seed):
    return SampleAggregateSubspace(n_clusters=k, subspace_dim=q, random_state=seed, **params)


def _sulq_build(params, k, q, seed):
    return SuLQKPlane(n_clusters=k, subspace_dim=q, random_state=seed, **params)


NOISE_SA = (
    "**Where the noise goes.** The data are split into m random subsets and the solver runs on each (no noise). "
    "Each output (k subspaces) becomes a vector of R^D (stacked projection matrices, D = k·d(d+1)/2). The "
    "aggregation picks the subset output with the smallest distance to its t₀-th nearest neighbour — a point in "
    "a dense cluster of outputs — and adds Gaussian-like noise S(B)/α·u to that **one vector**: S(B) is the smooth "
    "sensitivity, small when many subset outputs agree. The noisy vector is turned back into k subspaces "
    "(post-processing, free). Noise grows with D and shrinks with ε and with agreement between subsets.")
NOISE_SULQ = (
    "**Where the noise goes.** Starting from random subspaces (no data), every iteration assigns the points to "
    "the current subspaces and asks, for each cluster ℓ, the query A_ℓA_ℓᵀ (sum of xxᵀ over its points, "
    "points clipped to the unit ball). Gaussian noise N(0, σ²) is added to **every entry of each of the k·T "
    "d×d matrices**; the new subspace is the top-q singular vectors of the noisy matrix. The total (ε, δ) is "
    "split over the k·T queries by composition, so more iterations mean more noise per query.")


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
    "sa": Method("Sample-aggregate (private, (ε, δ)-DP)", _sa_widgets, _sa_build, private=True, reference="solver", prefix="sa",
                 about="Alg. 1 of the paper: solve on m random subsets, privately aggregate the subset outputs "
                       "with smooth-sensitivity noise (§3).", noise=NOISE_SA),
    "sulq": Method("SuLQ k-plane (private, (ε, δ)-DP)", _sulq_widgets, _sulq_build, private=True,
                   reference="kplane", prefix="sulq",
                   about="k-plane whose subspace updates are answered by noisy queries (App. E, Alg. 5).",
                   noise=NOISE_SULQ),
}


YALEB_5 = {"kind": "yaleb", "subjects": 5, "n_per_subject": 64, "pca_dim": 9, "d": 50, "normalize": "rows",
           "random_state": 0}
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
        {"cl_method": "lrr", "cl_k": 5, "cl_q": 9}, YALEB_5,
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
    """Build and fit (ValueError propagates to run_guarded). Returns (model, seconds,
    estimator warnings, non-private reference model or None)."""
    method = METHODS[key]
    model = method.build(params, k, q, seed)
    with Timer() as t, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X)
    msgs = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UserWarning)))
    reference = None
    if method.reference is not None:
        name = params["solver"] if method.reference == "solver" else method.reference
        if not (name in QUADRATIC_SOLVERS and X.shape[0] > MAX_QUADRATIC_N):
            reference = make_solver(name, k, q, random_state=seed).fit(X)
    return model, t.seconds, msgs, reference


def private_details(model):
    """The public constants of a private run, as (name, value, meaning) rows."""
    if isinstance(model, SampleAggregateSubspace):
        th = model.theorem31_
        return [
            ("D", model.encoding_dim_, "length of the encoded output k·d(d+1)/2"),
            ("m", model.n_subsets_, "number of subsets"),
            ("n/m", model.subset_size_, "points per subset"),
            ("s", model.max_multiplicity_, "no point is in more than s = ⌊√m⌋ subsets"),
            ("α", f"{model.alpha_:.4g}", "noise divisor: the paper's ε/(5√(2 ln(2/δ)))" + (
                "" if model.alpha_ == model.constants_.alpha_paper else f" = {model.constants_.alpha_paper:.4g}, reduced")),
            ("β", f"{model.beta_:.4g}", "smoothness: the paper's ε/(4(D + ln(2/δ)))" + (
                "" if model.beta_ == model.constants_.beta_paper else f" = {model.constants_.beta_paper:.4g}, reduced")),
            ("exact δ", f"{model.constants_.exact_delta:.3g}", "δ of the Gaussian step at these α, β, computed exactly "
             "(worst neighbouring pair); must be ≤ δ" + ("" if model.constants_.paper_constants_kept else
                                                         " — the paper's constants would give "
                                                         f"{model.constants_.paper_delta:.3g}")),
            ("t₀", model.t0_, "⌈(m+s)/2⌉+1: the aggregation looks at each output's t₀-th nearest neighbour"),
            ("2D/√m", f"{th['eps_threshold']:.4g}", "Thm 3.1's utility bound needs ε above this (privacy does not)"
             + (" ✓" if th["eps_ok"] else " ✗")),
            ("(ln n)²", f"{th['m_threshold']:.4g}", "Thm 3.1's utility bound needs m ≥ this" + (" ✓" if th["m_ok"] else " ✗")),
            ("δ", f"{model.delta_spent_:.3g}", "total δ"),
        ]
    return [
        ("k·T", model.n_queries_, "number of noisy queries"),
        ("per-query ε", f"{model.per_query_epsilon_:.4g}", f"from the total ε by {model.composition_used_} composition"),
        ("per-query δ", f"{model.per_query_delta_:.3g}", "per-query δ"),
        ("σ", f"{model.noise_sigma_:.4g}", f"noise per matrix entry ({model.noise_mechanism_} Gaussian mechanism)"),
        ("δ", f"{model.delta_spent_:.3g}", "total δ"),
        ("clipped rows", model.n_clipped_, "rows with norm > 1 scaled onto the unit ball (count is NOT private)"),
    ]


def noise_preview(key, ds, eps, delta):
    """One sentence: the noise this ε implies (public quantities only), updated as ε moves."""
    k = int(st.session_state.get("cl_k", ds.n_classes or 3))
    q = int(st.session_state.get("cl_q", default_q(ds)))
    delta = default_delta(max(ds.n, 3)) if delta is None else delta
    if key == "sulq":
        T = int(st.session_state.get("sulq_T", 10))
        sigma, eps_q, _, used, mech = sulq_noise(eps, delta, k * T, st.session_state.get("sulq_comp", "advanced"))
        return (f"Noise at ε = {eps:g}: each of the k·T = {k * T} queries gets ε = {eps_q:.3g} ({used} composition), "
                f"so σ = {sigma:.3g} ({mech} Gaussian) is added to every entry of each d×d matrix A_ℓA_ℓᵀ, whose "
                f"entries are sums over about n/k = {ds.n // max(k, 1)} points of norm ≤ 1.")
    m_set = int(st.session_state.get("sa_m", 0))
    m = m_set or max(2, min(math.ceil(math.log(ds.n) ** 2), ds.n // (k * (q + 1)) or 2))
    D = encoding_dim(k, ds.d)
    c = alg1_constants(m, eps, delta, D)
    lam = subspace_set_diameter(k, ds.d, q)
    return (f"Noise at ε = {eps:g}: the chosen subset output (a vector of R^{D}) gets S(B)/α · u with "
            f"1/α = {1 / c.alpha:.3g}; S(B) depends on how much the m = {m} subset outputs agree, between 0 and "
            f"2Λ = {2 * lam:.3g}, so the noise per coordinate is at most {2 * lam / c.alpha:.3g}. "
            + ("" if c.paper_constants_kept else
               f"At this ε the paper's constants would not be private (exact δ = {c.paper_delta:.2g} > {delta:.2g}), "
               f"so β is reduced from {c.beta_paper:.3g} to {c.beta:.3g}"
               + ("" if c.alpha == c.alpha_paper else f" and α from {c.alpha_paper:.3g} to {c.alpha:.3g}") + ". ")
            + f"Thm 3.1's utility bound needs ε > 2D/√m = {2 * D / math.sqrt(m):.3g}.")


def reproduce_code(spec, ds, model, private):
    """The "reproduce in Python" snippet of a run: same estimator, same parameters, same numbers."""
    prints = [("cost (eq. 3):", "subspace_cost(ds.X, model.subspaces_)")]
    if ds.labels is not None:
        prints.insert(0, ("accuracy:", "clustering_accuracy(ds.labels, model.labels_)"))
    if ds.subspaces is not None:
        prints.append(("d_W to truth:", "wasserstein_distance(model.subspaces_, ds.subspaces)"))
    if private:
        prints.append(("privacy spent (epsilon, delta):", "model.ledger_.total()"))
    return estimator_snippet(spec, model, prints=prints, imports=[
        "from dpcore.metrics import clustering_accuracy, subspace_cost, wasserstein_distance"])


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

follow_dataset("cluster", json.dumps(spec, sort_keys=True), {"cl_k": int(ds.n_classes or 3), "cl_q": default_q(ds)})
key = st.selectbox("Method", list(METHODS), format_func=lambda m: METHODS[m].label, key="cl_method",
                   help="The non-private solvers are the reference every private method is compared with.")
method = METHODS[key]
st.caption(method.about)

privacy_params = {}
if method.private:
    eps, delta = _privacy_widgets(ds, method.prefix)
    privacy_params = dict(epsilon=eps, delta=delta)
    preview = run_guarded(noise_preview, method.prefix, ds, eps, delta)
    if preview:
        st.caption(preview)

seed = seed_controls("cl")   # outside the form: ticking it shows the seed at once
with st.form("cluster_form"):
    c1, c2, c3 = st.columns(3)
    k = int(c1.number_input("clusters k", 1, 100_000, int(ds.n_classes or 3), key="cl_k",
                            help="Number of subspaces to find (default: the number of classes). Must be ≤ n."))
    q = int(c2.number_input("subspace dimension q", 1, 100_000, default_q(ds), key="cl_q",
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
