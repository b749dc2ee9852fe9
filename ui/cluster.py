"""The Cluster page's methods: the parameter widgets of every solver, "where the noise goes"
texts and diagnostic figures, and the helpers that run a method and describe its result.

The methods are the catalogue's (:mod:`dpcore.lab.methods`), by their catalogue names: every
subspace method of the catalogue is offered. What makes a run private, what it spends and its
public constants come from the library (:mod:`dpcore.lab.verdicts`, the estimator's
``public_constants()``); this module draws.

Your own method: register it in the catalogue (``register_method(..., family="subspace")``),
then, for parameters of its own, :func:`add_method` with a function drawing its widgets
(called inside the form, returns a dict of keyword parameters). See ``docs/own_method.md``.
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
from dpcore.lab.methods import METHODS as CATALOGUE, build_estimator, get_method
from dpcore.lab.verdicts import RunContext, judge_run, plan_run
from dpcore.subspace.sample_aggregate import default_delta, encoding_dim, subspace_set_diameter
from dpcore.plots.data import projection_scatter
from dpcore.plots.private_subspace import (aggregation_map, released_subspaces_figure, smooth_sensitivity_terms,
                                           sulq_trajectory)
from dpcore.plots.subspace import affinity_heatmap, runs_comparison
from dpcore.subspace.sulq import sulq_noise
from ui.common import Timer, dataset_from_spec, number_input, privacy_statement, run_guarded, show_chart, show_ledger
from ui.meter import charge, epsilon_odds, reserve
from ui.seeds import MAX_SEED, seed_caveat, seed_label
from ui.share import as_float, as_int, one_of, snippet_expander

MAX_QUADRATIC_N = 5000  # methods with an n×n affinity: memory grows like n²
QUADRATIC_SOLVERS = ("tsc", "ssc", "lrr")
BIND = "query-params"    # every widget of the page whose key is in URL_FIELDS writes its value into the link

#: (min, max) of every number widget of the page: the widgets and the link parsers (URL_FIELDS) use these
#: same numbers, so that a link never carries a value the widget would not show
LIMITS = {"cl_k": (1, 100_000), "cl_q": (1, 100_000), "kp_n_init": (1, 200), "kp_max_iter": (1, 10_000),
          "tsc_s": (0, 100_000), "ssc_alpha": (0.01, 1e6), "ssc_max_iter": (1, 100_000), "lrr_lam": (0.01, 1e6),
          "lrr_max_iter": (1, 100_000), "sa_m": (0, 1_000_000), "sulq_T": (1, 1000)}
KPLANE_INITS = ["random", "points"]
TSC_VARIANTS = ["full", "simplified"]
SA_SOLVERS = {"tsc": "TSC", "ssc": "SSC", "lrr": "LRR", "kplane": "k-plane"}
COMPOSITIONS = ["advanced", "basic", "best"]


def _number(container, label, key, default, **kw):
    """A number input bound to the link, with the limits of ``LIMITS[key]``."""
    lo, hi = LIMITS[key]
    return number_input(container, label, lo, hi, default, key=key, bind=BIND, **kw)


@dataclass
class Method:
    """How the Cluster page shows one catalogue method (display only; whether it is private,
    what it spends and its relation are the catalogue's and the estimator's)."""
    label: str
    widgets: Callable[[object], dict]            # draws widgets inside the form; returns parameters
    name: str                                    # the method in the catalogue (dpcore.lab.methods.METHODS)
    about: str = ""
    quadratic: bool = False                      # builds an n×n matrix (memory ~ 8·n² bytes)
    prefix: str = ""                             # private methods: widget-key prefix of ε and δ (default: name)
    reference: str | None = None                 # private methods: the non-private solver shown next to them
    noise: str = ""                              # private methods: where the noise goes (markdown)
    figures: Callable | None = None              # private methods: (ds, model) -> diagnostic figures
    preview: Callable | None = None              # private methods: (ds, eps, delta) -> noise sentence
    extras: dict = field(default_factory=dict)

    def __post_init__(self):
        self.prefix = self.prefix or self.name

    @property
    def private(self):
        """Whether the catalogue calls the method private."""
        return get_method(self.name).private

    def build(self, params, k, q, seed):
        """The unfitted estimator (through the catalogue) with k subspaces of dimension q,
        the form's ``params`` and ``random_state=seed`` (None: fresh OS entropy)."""
        return build_subspace(self.name, params, k, q, seed)


def build_subspace(name, params, k, q, seed):
    """The catalogue's method ``name`` with ``n_clusters=k``, ``subspace_dim=q``, ``params`` and
    ``random_state=seed``, unfitted."""
    return build_estimator(name, None, {"n_clusters": k, "subspace_dim": q, **params}, random_state=seed)


# ----------------------------------------------------------------------------- parameter widgets
def _kplane_widgets(ds):
    c1, c2, c3 = st.columns(3)
    return dict(
        n_init=int(_number(c1, "restarts", "kp_n_init", 10,
                           help="Number of random starts; the run with the lowest k-means subspace cost "
                                "(eq. 3) is kept. More restarts = fewer bad local optima, slower.")),
        max_iter=int(_number(c2, "max iterations", "kp_max_iter", 100,
                             help="Cap on assign/refit iterations per start; a start stops earlier when the "
                                  "assignment no longer changes.")),
        init=c3.selectbox("initialisation", KPLANE_INITS, key="kp_init", bind=BIND,
                          help="random: uniformly random subspaces. points: each subspace spanned by q random "
                               "data points (often better when d is large)."),
    )


def _tsc_widgets(ds):
    c1, c2 = st.columns(2)
    s = int(_number(c1, "neighbours s (0 = automatic)", "tsc_s", 0,
                    help="Each point is linked to the s points with the largest |cosine| to it. "
                         "0 = max(3, ⌈n/(10k)⌉). Must be below n. Too small: a cluster breaks into "
                         "pieces; too large: links across subspaces."))
    variant = c2.selectbox("variant", TSC_VARIANTS, key="tsc_variant", bind=BIND,
                           help="full: weighted graph + spectral clustering (Heckel & Bölcskei). simplified: the "
                                "paper's Alg. 2 — connected components, each subspace spanned by q random points "
                                "of its component (falls back to spectral clustering if there are not k components).")
    return dict(n_neighbors=None if s == 0 else s, variant=variant)


def _ssc_widgets(ds):
    c1, c2 = st.columns(2)
    return dict(
        alpha=float(_number(c1, "alpha", "ssc_alpha", 20.0, step=5.0,
                            help="Regularisation λ = alpha/μ, μ = min over i of max over j≠i of |⟨xᵢ,xⱼ⟩| "
                                 "(Elhamifar & Vidal). Larger alpha fits each point more exactly with more "
                                 "coefficients; smaller alpha = sparser, more robust to noise.")),
        max_iter=int(_number(c2, "ADMM iterations (max)", "ssc_max_iter", 200,
                             help="Cap on ADMM iterations (the authors' default is 200).")),
    )


def _lrr_widgets(ds):
    c1, c2 = st.columns(2)
    return dict(
        lam=float(_number(c1, "λ (error weight)", "lrr_lam", 4.0, step=0.5,
                          help="Weight of the ℓ2,1 error term. Small λ lets the error absorb whole points "
                               "(robust to outliers, may lose structure); large λ forces X ≈ XZ.")),
        max_iter=int(_number(c2, "ALM iterations (max)", "lrr_max_iter", 1000,
                             help="Cap on the inexact augmented-Lagrangian iterations.")),
    )


# log-scale ε grid 0.01 … 1000 (1-2-5 steps per decade)
EPSILON_GRID = [round(m * 10.0 ** e, 10) for e in range(-2, 3) for m in (1, 2, 5)] + [1000.0]


def privacy_widgets(ds, prefix):
    """ε on a log-scale slider and δ as text (blank = 1/(n ln n), §5); returns (ε, δ-or-None).
    A δ that is not a number is reported with the estimator's words ("delta must be in (0, 1)")."""
    c1, c2 = st.columns(2)
    eps = c1.select_slider("privacy budget ε (log scale)", EPSILON_GRID, value=1.0, key=f"{prefix}_eps", bind=BIND,
                           help="Total ε of the run. Smaller ε = more noise = stronger privacy. The grid is "
                                "logarithmic, 0.01 … 1000, like the x-axis of Fig. 2.")
    epsilon_odds(c1, eps)
    n = max(ds.n, 2)
    txt = c2.text_input("δ (blank = 1/(n ln n))", "", key=f"{prefix}_delta", bind=BIND,
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
    solver = c1.selectbox("solver on each subset", list(SA_SOLVERS), key="sa_solver", bind=BIND,
                          format_func=SA_SOLVERS.get,
                          help="The non-private solver run on each of the m subsets (its default parameters; "
                               "TSC is the paper's choice).")
    m = int(_number(c2, "subsets m (0 = ⌈(ln n)²⌉)", "sa_m", 0,
                    help="Number of disjoint-ish subsets of n/m points. More subsets = less noise per "
                         "point of the aggregate but worse solutions on each subset. Each subset needs at "
                         "least k·(q+1) points."))
    return dict(solver=solver, n_subsets=None if m == 0 else m)


def _sulq_widgets(ds):
    c1, c2 = st.columns(2)
    T = int(_number(c1, "iterations T", "sulq_T", 10,
                    help="k·T noisy queries share the total budget (Fig. 2 uses T = 10 and 50). "
                         "More iterations = more noise per query."))
    comp = c2.selectbox("composition", COMPOSITIONS, key="sulq_comp", bind=BIND,
                        help="How the total (ε, δ) is split over the k·T queries: advanced = Prop. E.2, basic = "
                             "even split, best = whichever gives each query the larger ε.")
    return dict(n_iter=T, composition=comp)


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


def _sa_figures(ds, model):
    return [aggregation_map(model, true_subspaces=ds.subspaces), smooth_sensitivity_terms(model)]


def _sulq_figures(ds, model):
    return [sulq_trajectory(model, X=ds.X, true_subspaces=ds.subspaces)]


def _form_k_q(ds):
    return (int(st.session_state.get("cl_k", default_n_clusters(ds))),
            int(st.session_state.get("cl_q", default_subspace_dim(ds))))


def _sulq_preview(ds, eps, delta):
    """One sentence: the noise this ε implies for SuLQ k-plane (public quantities only)."""
    k, _ = _form_k_q(ds)
    delta = default_delta(max(ds.n, 3)) if delta is None else delta
    T = int(st.session_state.get("sulq_T", 10))
    sigma, eps_q, _, used, mech = sulq_noise(eps, delta, k * T, st.session_state.get("sulq_comp", "advanced"))
    return (f"Noise at ε = {eps:g}: each of the k·T = {k * T} queries gets ε = {eps_q:.3g} ({used} composition), "
            f"so σ = {sigma:.3g} ({mech} Gaussian) is added to every entry of each d×d matrix A_ℓA_ℓᵀ, whose "
            f"entries are sums over about n/k = {ds.n // max(k, 1)} points of norm ≤ 1.")


def _sa_preview(ds, eps, delta):
    """One sentence: the noise this ε implies for sample-aggregate (public quantities only)."""
    k, q = _form_k_q(ds)
    delta = default_delta(max(ds.n, 3)) if delta is None else delta
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


def _no_widgets(ds):
    return {}


#: the Cluster page's methods, by catalogue name (the link's ``cl_method`` value)
METHODS: dict[str, Method] = {
    "kplane": Method("k-plane (non-private)", _kplane_widgets, "kplane",
                     about="Alternates assigning points to the nearest subspace and refitting each subspace by PCA "
                           "(App. E). Fast, but can stop at a local optimum."),
    "tsc": Method("TSC — thresholding (non-private)", _tsc_widgets, "tsc", quadratic=True,
                  about="Links each point to its most correlated neighbours, then clusters the graph (§3.3, Alg. 2). "
                        "Provably correct on the stochastic model; the solver of private sample-aggregation."),
    "ssc": Method("SSC — sparse self-expression (non-private)", _ssc_widgets, "ssc", quadratic=True,
                  about="Writes every point as a sparse combination of the others (solved by ADMM) and clusters "
                        "the resulting affinity."),
    "lrr": Method("LRR — low-rank representation (non-private)", _lrr_widgets, "lrr", quadratic=True,
                  about="Writes all points as a low-rank combination of the points, with a column-sparse error "
                        "(inexact ALM), and clusters the resulting affinity."),
    "sample_aggregate": Method("Sample-aggregate (private, (ε, δ)-DP)", _sa_widgets, "sample_aggregate",
                               reference="solver", prefix="sa",
                               about="Alg. 1 of the paper: solve on m random subsets, privately aggregate the subset "
                                     "outputs with smooth-sensitivity noise (§3).", noise=NOISE_SA,
                               figures=_sa_figures, preview=_sa_preview),
    "sulq_kplane": Method("SuLQ k-plane (private, (ε, δ)-DP)", _sulq_widgets, "sulq_kplane",
                          reference="kplane", prefix="sulq",
                          about="k-plane whose subspace updates are answered by noisy queries (App. E, Alg. 5).",
                          noise=NOISE_SULQ, figures=_sulq_figures, preview=_sulq_preview),
}
#: the page's old method keys (links made before the names were the catalogue's) -> catalogue names
OLD_NAMES = {"sa": "sample_aggregate", "sulq": "sulq_kplane"}


def add_method(name, widgets=None, *, label=None, about="", reference=None, noise="", figures=None, preview=None,
               quadratic=False):
    """Offer the catalogue's subspace method ``name`` on the Cluster page (your own method,
    registered with :func:`dpcore.lab.methods.register_method`).

    Parameters
    ----------
    name : str
        Its catalogue name (family "subspace").
    widgets : callable, optional
        ``widgets(ds) -> dict`` drawing its own parameter widgets inside the page's form (ε and δ
        are drawn by the page for a private method); None: no parameters of its own.
    label, about, reference, noise, figures, preview, quadratic
        Display: the name in the list (default: the catalogue's label), one line about it, the
        non-private solver drawn beside it, where its noise goes, its diagnostic figures
        ``(ds, model) -> [figures]`` and a noise sentence ``(ds, eps, delta) -> str``.

    Returns
    -------
    Method
    """
    entry = get_method(name)
    if entry.family != "subspace":
        raise ValueError(f"the Cluster page runs subspace methods; {name!r} is of family {entry.family!r}")
    METHODS[name] = Method(label or entry.label, widgets or _no_widgets, name, about=about or entry.description,
                           quadratic=quadratic, reference=reference, noise=noise, figures=figures, preview=preview)
    return METHODS[name]


def run_method(key, params, k, q, seed, X, with_reference=True):
    """Build and fit (ValueError propagates to run_guarded). Returns (model, seconds,
    estimator warnings, non-private reference model or None; None too when
    ``with_reference`` is False)."""
    method = METHODS[key]
    model = method.build(params, k, q, seed)
    with Timer() as t, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X)
    msgs = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UserWarning)))
    reference = run_reference(key, params, k, q, seed, X) if with_reference else None
    return model, t.seconds, msgs, reference


def reference_name(key, params):
    """The non-private solver shown beside the private method ``key`` (None for a non-private one)."""
    method = METHODS[key]
    if method.reference is None:
        return None
    return params["solver"] if method.reference == "solver" else method.reference


def run_reference(key, params, k, q, seed, X):
    """The fitted non-private reference of the private method ``key``, or None (none, or an n×n
    solver on more than MAX_QUADRATIC_N points)."""
    name = reference_name(key, params)
    if name is None or (name in QUADRATIC_SOLVERS and X.shape[0] > MAX_QUADRATIC_N):
        return None
    return build_subspace(name, {}, k, q, seed).fit(X)


def noise_preview(key, ds, eps, delta):
    """One sentence: the noise this ε implies (public quantities only), updated as ε moves; None
    for a method without one."""
    method = METHODS[key]
    return method.preview(ds, eps, delta) if method.preview is not None else None


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


# ----------------------------------------------------------------------------- the link
def _delta_text(text):
    """Link parser of a δ text box: blank (the default 1/(n ln n)) or a number in (0, 1), what
    the estimators accept."""
    text = str(text).strip()
    if text and not 0.0 < float(text) < 1.0:
        raise ValueError(f"delta must be in (0, 1); got {text}")
    return text


def _range(key, kind=as_int):
    return kind(*LIMITS[key])


def method_label(key):
    return METHODS[key].label


#: the link parameters of the method widgets, with the widgets' own limits and labels
URL_FIELDS = {
    "cl_method": one_of(list(METHODS), method_label, OLD_NAMES), "cl_k": _range("cl_k"), "cl_q": _range("cl_q"),
    "cl_seed": as_int(0, MAX_SEED), "kp_n_init": _range("kp_n_init"), "kp_max_iter": _range("kp_max_iter"),
    "kp_init": one_of(KPLANE_INITS), "tsc_s": _range("tsc_s"), "tsc_variant": one_of(TSC_VARIANTS),
    "ssc_alpha": _range("ssc_alpha", as_float), "ssc_max_iter": _range("ssc_max_iter"),
    "lrr_lam": _range("lrr_lam", as_float), "lrr_max_iter": _range("lrr_max_iter"),
    "sa_eps": one_of(EPSILON_GRID), "sa_delta": _delta_text, "sa_solver": one_of(list(SA_SOLVERS), SA_SOLVERS.get),
    "sa_m": _range("sa_m"), "sulq_eps": one_of(EPSILON_GRID), "sulq_delta": _delta_text,
    "sulq_T": _range("sulq_T"), "sulq_comp": one_of(COMPOSITIONS),
}


# ----------------------------------------------------------------------------- words for students
#: the estimators' output attributes (``private_outputs_``, ``nonprivate_outputs_``) in words
OUTPUT_WORDS = {
    "subspaces_": "the released subspaces",
    "released_vector_": "the noisy vector they are decoded from",
    "subspace_history_": "the subspaces after every iteration",
    "init_subspaces_": "the random starting subspaces (drawn without looking at the data)",
    "labels_": "the cluster labels",
    "cost_": "the cost",
    "cost_history_": "the cost after every iteration",
    "n_clipped_": "the number of clipped rows",
    "subset_subspaces_": "the solution on each subset",
    "chosen_index_": "which subset solution was chosen",
    "chosen_subspaces_": "the chosen subset solution before the noise",
    "radii_t0_": "each subset solution's distance to its t₀-th nearest neighbour",
    "n_far_neighbours_": "how many subset solutions lie far from each one",
    "smooth_sensitivity_": "the smooth sensitivity S(B)",
    "noise_scale_": "the noise scale S(B)/α",
    "sensitivity_terms_": "the terms of S(B)",
    "aggregate_": "the full record of the aggregation",
}
#: the estimators' parameters in words, and what their default (None) means
PARAM_WORDS = {"epsilon": "ε", "delta": "δ", "n_iter": "iterations T", "composition": "composition",
               "solver": "solver on each subset", "n_subsets": "subsets m", "n_init": "restarts",
               "max_iter": "max iterations", "init": "initialisation", "n_neighbors": "neighbours s",
               "variant": "variant", "alpha": "alpha", "lam": "λ"}
PARAM_DEFAULTS = {"delta": "1/(n ln n)", "n_subsets": "⌈(ln n)²⌉", "n_neighbors": "automatic"}


def output_words(name: str) -> str:
    """An estimator output attribute (``subset_subspaces_``) in words ("the solution on each subset")."""
    return OUTPUT_WORDS.get(name, name.rstrip("_").replace("_", " "))


def fmt(v) -> str:
    """A number as a student reads it: 4 significant digits, "—" for none."""
    if v is None:
        return "—"
    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, (int,)) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e6):
        return str(int(v))
    return f"{v:.4g}"


def params_in_words(params: dict) -> str:
    out = []
    for name, value in params.items():
        shown = PARAM_DEFAULTS.get(name, "default") if value is None else (
            SA_SOLVERS.get(value, value) if name == "solver" else fmt(value) if isinstance(value, float) else value)
        out.append(f"{PARAM_WORDS.get(name, name)} = {shown}")
    return ", ".join(out)


def privacy_box(res):
    """The privacy statement of a result, in words (no attribute names), following its verdict."""
    if not res["private"]:
        privacy_statement(
            private=[],
            not_private=["everything this run shows: it is a non-private reference solver, run on the raw "
                         "data (clusters, subspaces and affinity reveal individual points)",
                         "the ground-truth labels and subspaces, used only to evaluate"],
            caveats=["This run spends no privacy budget; compare with the private methods at the same settings."])
        return
    released = [output_words(o) for o in res["private_outputs"]] or ["the released subspaces"]
    shown = [output_words(name) for name in res["nonprivate_outputs"] if name not in ("labels_", "aggregate_")]
    privacy_statement(
        private=released,
        not_private=["the cluster labels and colours: raw points assigned to the released subspaces"]
        + ([f"the diagnostics shown here, computed from the raw data to show how the method "
            f"works: {', '.join(shown)}"] if shown else [])
        + ["the metrics and the non-private reference solver, computed from the raw data and the ground truth "
           "(evaluation only)"],
        caveats=seed_caveat(res["seed"]), verdict=res["verdict"])


# ----------------------------------------------------------------------------- one run and its view
RESULT_KEY = "cluster_result"
HISTORY_KEY = "cluster_history"
HISTORY_COLUMNS = {"accuracy": "accuracy", "NMI": "NMI", "d_W to truth": "d_W to truth",
                   "k-means subspace cost (eq. 3)": "cost (eq. 3)", "seconds": "seconds"}


def run_and_store(key, params, k, q, seed, ds, spec, slot):
    """Run method ``key`` on ``ds`` with a progress bar in ``slot`` (an ``st.empty()`` the page
    creates on every run, so that the elements below keep their places whether or not a run
    happens: a stopped run then leaves no stale copy behind). The run is planned and reserved
    against the class budget first (:mod:`dpcore.lab.verdicts` decides, :mod:`ui.meter`
    reserves), charged with its verdict after the fit, and stored (with a line of the runs
    history). A ValueError is shown once, in the slot, and the previous result is kept."""
    method = METHODS[key]
    kept = " The previous result is kept." if RESULT_KEY in st.session_state else ""
    context = RunContext(seed=seed, dataset=ds)
    with slot.container():
        if method.quadratic and ds.n > MAX_QUADRATIC_N:
            st.error(f"n = {ds.n} is too large for {method.label}: it builds an n×n matrix; use at most "
                     f"{MAX_QUADRATIC_N} points (or k-plane).{kept}")
            return
        plan = run_guarded(lambda: plan_run(key, method.build(params, k, q, seed), ds.X, context))
        reservation = run_guarded(reserve, [plan]) if plan is not None else None
        if reservation is None:
            return                                   # refused (bad parameter, class budget) before the run
        with reservation:
            bar = st.progress(0, text=f"Running {method.label}… (Stop, top right, cancels)")
            out = run_guarded(run_method, key, params, k, q, seed, ds.X)
            if out is None:
                bar.progress(100, text="Failed." + kept)
                return
            model = out[0]
            verdict = judge_run(key, model, context)
            reservation.charge(verdict)
    slot.empty()
    model, seconds, msgs, reference = out
    metrics = evaluate(ds, model, seconds)
    figs = []
    if method.private:
        figs.append(released_subspaces_figure(
            ds.X, model.subspaces_, true=ds.subspaces, labels=model.labels_,
            nonprivate=None if reference is None else reference.subspaces_, title=method.label))
        figs += method.figures(ds, model) if method.figures is not None else []
    else:      # found subspaces of dimension ≥ 3 in d > 3, with no truth to compare, would only hide the points
        drawn = ds.subspaces is not None or ds.d <= 3 or q <= 2
        figs.append(projection_scatter(ds.X, model.labels_, subspace_sets={"true": ds.subspaces,
                                                                           "found": model.subspaces_} if drawn else None,
                                       label_name="found cluster", title="Points coloured by found cluster"))
    fig_aff = None
    if getattr(model, "affinity_", None) is not None and ds.labels is not None:
        fig_aff = affinity_heatmap(model.affinity_, ds.labels, title="Affinity, points sorted by true class")
    st.session_state[RESULT_KEY] = dict(
        method=key, label=method.label, params=params, k=k, q=q, seed=seed, spec=spec, dataset=ds.name,
        labels=model.labels_, subspaces=model.subspaces_, metrics=metrics, fig_aff=fig_aff,
        ledger=getattr(model, "ledger_", None), private=method.private, warnings=msgs, figs=figs,
        details=model.public_constants() if method.private else None, verdict=verdict,
        reference=None if reference is None else evaluate(ds, reference, None),
        code=reproduce_code(spec, ds, model, method.private) if spec.get("kind") != "upload" else None,
        private_outputs=list(getattr(model, "private_outputs_", [])),
        nonprivate_outputs=dict(getattr(model, "nonprivate_outputs_", {})))
    history = st.session_state.setdefault(HISTORY_KEY, [])
    history.append({"run": len(history) + 1, "method": method.label, "dataset": ds.name, "k": k, "q": q,
                    "seed": seed, **metrics})
    del history[:-20]


def _value_table(values: dict):
    import pandas as pd

    return pd.DataFrame({"value": [fmt(v) for v in values.values()]}, index=list(values))


def show_result(ds, spec):
    """The stored result of the last run: privacy box, metrics, figures, diagnostics, script."""
    res = st.session_state.get(RESULT_KEY)
    if res is None:
        st.info("Choose a method and press **Run**.")
        privacy_statement(private=[], not_private=["nothing has been computed yet"])
        return
    st.subheader(f"Result: {res['label']}")
    res_ds = ds if res["spec"] == spec else run_guarded(dataset_from_spec, res["spec"])
    if res_ds is None:                # e.g. an uploaded file that is no longer held by the session
        st.info("The last result's dataset is no longer available; press Run to cluster the current one.")
        return
    if res["spec"] != spec:
        st.warning(f"This result was computed on another dataset ({res['dataset']}); it is shown on that "
                   "dataset. Press Run to cluster the current one.")
    privacy_box(res)
    for msg in res["warnings"]:
        st.warning(msg)
    left, right = st.columns([1, 2])
    with left:
        st.markdown("**Metrics**")
        st.dataframe(_value_table(res["metrics"]), width="stretch")
        st.caption("accuracy: share of points in the right cluster under the best matching of cluster ids; "
                   "NMI: normalised mutual information; d_W: Wasserstein distance (eq. 2) between found and true "
                   "subspaces (0 = identical); cost: mean squared distance to the nearest found subspace (eq. 3). "
                   f"Parameters: k = {res['k']}, q = {res['q']}, seed: {seed_label(res['seed'])}"
                   + (", " + params_in_words(res["params"]) if res["params"] else "") + ".")
        if res["reference"] is not None:
            st.markdown("**Non-private reference (same solver, all data, no noise)**")
            st.dataframe(_value_table({a: b for a, b in res["reference"].items() if a != "seconds"}),
                         width="stretch")
    name = f"cluster {res['method']} {res['dataset']}" + (f" eps {res['params']['epsilon']:g}" if res["private"] else "")
    with right:
        show_chart(res["figs"][0], name)
        view = ("The points and subspaces are drawn in their own coordinates." if res_ds.d <= 2
                else "The points and subspaces are drawn in their own coordinates: drag to turn them." if res_ds.d == 3
                else f"The data (d = {res_ds.d}) are shown through their top three principal directions: subspaces "
                     "that are well apart can overlap in this view (the colours then look mixed), so judge by the "
                     "metrics.")
        truth = res_ds.subspaces is not None
        if res["private"]:
            st.caption("Released subspaces (private) next to " + ("the true ones and " if truth else "")
                       + "the non-private solver's; the legend names each line style. The colours come from "
                       "assigning the raw points to the released subspaces: they are NOT private. " + view)
        else:
            st.caption("What to look for: one colour per subspace"
                       + ("; the found subspaces lie on the true ones (solid black) when d_W is small. " if truth
                          else ". " if res_ds.d <= 3 or res["q"] <= 2 else
                          f" (the found {res['q']}-dimensional subspaces are not drawn: they have no picture in 3-D). ")
                       + view)
    if res["ledger"] is not None:
        show_ledger(res["ledger"], not_private=None if res["verdict"].private else res["verdict"].reason)
    if res["details"]:
        st.markdown("**Constants of this private run (public)**")
        import pandas as pd

        st.table(pd.DataFrame([(a, fmt(b), c) for a, b, c in res["details"]],
                              columns=["name", "value", "meaning"]).set_index("name"))
    if res["private"]:
        st.markdown(METHODS[res["method"]].noise)
        for i, f in enumerate(res["figs"][1:]):
            show_chart(f, f"{name} diagnostic {i + 1}")
        st.caption("These diagnostics are computed from the raw data (teaching views, NOT private releases).")
    if res["fig_aff"] is not None:
        show_chart(res["fig_aff"], f"cluster affinity {res['method']} {res['dataset']}")
        st.caption("What to look for: a block-diagonal pattern — strong links inside each true class and none "
                   "across — is what lets the spectral step find the clusters.")
    if res.get("code"):
        snippet_expander(res["code"])


def show_history():
    """The runs of this session (numbers at 4 significant digits) and their accuracies."""
    history = st.session_state.get(HISTORY_KEY, [])
    if len(history) < 2:
        return
    import pandas as pd

    st.markdown("**Runs this session**")
    rows = [{"run": r["run"], "method": r["method"], "dataset": r["dataset"], "k": r["k"], "q": r["q"],
             "seed": "secret" if r["seed"] is None else str(r["seed"]),
             **{short: fmt(r.get(long)) for long, short in HISTORY_COLUMNS.items()}} for r in history]
    st.table(pd.DataFrame(rows).set_index("run"))      # static: long method and dataset names wrap, no column is cut
    if any(r.get("accuracy") is not None for r in history):
        show_chart(runs_comparison(history, "accuracy", title="Accuracy of the runs of this session"),
                   "cluster runs accuracy")
