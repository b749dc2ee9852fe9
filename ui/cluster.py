"""The Cluster page's methods: the parameter widgets of every solver, the estimator builders,
"where the noise goes" texts, and the helpers that run a method and describe its result.

Extending (private methods): add an entry to ``METHODS`` — a :class:`Method` with a label,
a function drawing the parameter widgets (called inside the form, returns a dict of keyword
parameters) and a builder ``(params, k, q, seed) -> estimator`` (seed None = fresh OS entropy).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import streamlit as st

from dpcore.defaults import default_n_clusters, default_n_subsets, default_subspace_dim
from dpcore.export import estimator_snippet
from dpcore.metrics import clustering_accuracy, nmi, subspace_cost, wasserstein_distance
from dpcore.privacy.sample_aggregate import alg1_constants
from dpcore.subspace.sample_aggregate import (SampleAggregateSubspace, default_delta, encoding_dim,
                                             subspace_set_diameter)
from dpcore.subspace.solvers import make_solver
from dpcore.subspace.sulq import SuLQKPlane, sulq_noise
from ui.common import Timer

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


def privacy_widgets(ds, prefix):
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
    k = int(st.session_state.get("cl_k", default_n_clusters(ds)))
    q = int(st.session_state.get("cl_q", default_subspace_dim(ds)))
    delta = default_delta(max(ds.n, 3)) if delta is None else delta
    if key == "sulq":
        T = int(st.session_state.get("sulq_T", 10))
        sigma, eps_q, _, used, mech = sulq_noise(eps, delta, k * T, st.session_state.get("sulq_comp", "advanced"))
        return (f"Noise at ε = {eps:g}: each of the k·T = {k * T} queries gets ε = {eps_q:.3g} ({used} composition), "
                f"so σ = {sigma:.3g} ({mech} Gaussian) is added to every entry of each d×d matrix A_ℓA_ℓᵀ, whose "
                f"entries are sums over about n/k = {ds.n // max(k, 1)} points of norm ≤ 1.")
    m_set = int(st.session_state.get("sa_m", 0))
    m = m_set or default_n_subsets(ds.n, k, q)
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
