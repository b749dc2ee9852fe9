"""k-means: private centres in high dimension (Balcan et al. 2017) against its baselines, and
one method at several ε side by side (on a preset with a precomputed ε ladder, also at once from
the ladder: :func:`ui.kmeans.instant_section`)."""
import json

import streamlit as st

from dpcore.defaults import default_n_clusters
from dpcore.kmeans.candidate import DEFAULT_SPLIT
from dpcore.lab.compare import METHODS, compare_methods
from dpcore.lab.verdicts import RunContext
from dpcore.kmeans.partition import default_projection_dim
from dpcore.export import call_snippet
from ui.share import check_link, follow_dataset, preset_picker, publish_url
from ui.common import (ResultSlot, Timer, cancelled_note, current_spec, dataset_from_spec, number_input,
                       privacy_statement, run_button, run_ended, run_guarded, run_started, stop_page)
from ui.kmeans import (DEFAULT_EPS_SERIES, DEFAULT_METHODS, DELTA_MAX, DELTA_MIN, EPS_LADDER, EPS_MAX, EPS_MIN, K_MAX,
                       LIVE_KEY, MAX_SIDE_BY_SIDE, PRESETS, RADIUS_MAX, RADIUS_MIN, RESULT_KEY, SERIES_KEY, URL_FIELDS,
                       draw_results, eps_label, epsilon_series, idle_privacy, instant_section, ladder_of, live_words,
                       method_label, one_relation, plan_runs, plan_series, plan_words, plans_or_none, points_of,
                       reserved_run, run_label, store_result)
from ui.meter import epsilon_odds
from ui.pickers import dataset_picker, follow_default
from ui.seeds import seed_controls

st.title("k-means")
st.markdown("""
**k-means** looks for k centres that make the squared distances from the points to their
nearest centre small. Releasing centres leaks: one point can move a centre. The private
method of **Balcan et al. (ICML 2017)** works in three stages, each paying a share of ε:

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
random subsets, the most central answer plus noise) and **DP-Lloyd** (diffprivlib). Beside them,
what one would use today (not in the paper): the **LSH coreset**, the design of Google's
open-source private k-means (2021) — a tree of random hyperplanes with noisy counts, a private
coreset of noisy leaf means, and k-means++ on that coreset. Every run is compared with
non-private **k-means++**.
""")

# ----------------------------------------------------------------------------- dataset
check_link("kmeans", URL_FIELDS)
preset_picker("kmeans", PRESETS)
spec = current_spec()
data_spec = dataset_picker("km_data", "points", spec, prefix="km", help=(
    "Points to cluster: the Data page's choice when it is a point set, a Gaussian mixture (the paper's synthetic "
    "data is 64 Gaussians in R^100), Yale B faces, or a CLUTO document-term matrix with every row scaled to norm 1 "
    "(a per-record map: it leaks nothing)."), url_fields=URL_FIELDS)
ds = run_guarded(dataset_from_spec, data_spec)
if ds is None:
    stop_page()
X = points_of(ds)
default_radius = float(ds.extras.get("public_radius", 1.0)) if ds.kind == "points" else 1.0
follow_dataset("kmeans", json.dumps(data_spec, sort_keys=True),
               {"km_k": default_n_clusters(ds), "km_radius": default_radius})
st.caption(f"{ds.description} · n = {ds.n:,}, d = {ds.d:,}"
           + (" · rows scaled to norm 1" if ds.kind == "counts" else "")
           + f" · public radius suggested by the dataset's definition: Λ = {default_radius:.4g}")

# ----------------------------------------------------------------------------- form
seed = seed_controls("km")   # outside the form: ticking it shows the seed at once
context = RunContext(seed=seed, dataset=ds)      # what the library's verdicts depend on besides the estimators
with st.form("kmeans_form"):
    c1, c2, c3, c4 = st.columns(4)
    k = number_input(c1, "clusters k", 1, K_MAX, value=min(default_n_clusters(ds), K_MAX), step=1, key="km_k",
                        bind="query-params", help=f"Number of centres (1 ≤ k ≤ n, at most {K_MAX}).")
    epsilon = number_input(c2, "privacy budget ε", EPS_MIN, EPS_MAX, value=1.0, step=0.1, format="%.3f", key="km_eps",
                              bind="query-params",
                              help=f"Total ε of each private run, in [{EPS_MIN:g}, {EPS_MAX:g}]. Neighbouring "
                                   "datasets differ in one point, replaced (n public); diffprivlib's DP-Lloyd states "
                                   "its ε for one point added or removed instead (for a replaced point it is 2ε).")
    delta = number_input(c3, "δ", DELTA_MIN, DELTA_MAX, value=1e-6, format="%.1e", key="km_delta", bind="query-params",
                            help=f"δ of the Gaussian noise (noisy means), in [{DELTA_MIN:g}, {DELTA_MAX:g}].")
    radius = number_input(c4, "public radius Λ", RADIUS_MIN, RADIUS_MAX, value=default_radius, format="%.4g",
                             key="km_radius", bind="query-params",
                             help="A bound on ‖x‖ chosen WITHOUT looking at the data (here: from the dataset's "
                                  "definition). Points outside are clipped onto the sphere of radius Λ.")
    methods = st.multiselect("private methods", list(METHODS), default=DEFAULT_METHODS,
                             key="km_methods", bind="query-params", format_func=method_label,
                             help="Each selected method runs with the same k, ε, δ and Λ (each run spends ε). "
                                  "k-means++ (non-private) always runs as the reference. DP-Lloyd (diffprivlib) is "
                                  "private on paper only: its floating-point noise is not private as executed.")
    leak = st.checkbox("use Λ = max ‖x‖ from the data (leaks!)", False, key="km_leak", bind="query-params",
                       help="What a careless user does: the radius is read off the data. The runs then are NOT "
                            "differentially private; shown to teach why Λ must be public.")
    lam = "data" if leak else float(radius)     # the radius parameter the estimators get
    plans = plans_or_none(plan_runs, X, int(k), epsilon, lam, methods, float(delta), None, context)
    epsilon_odds(c2, epsilon, relation=one_relation(plans))
    with st.expander("Candidate-set method: advanced", expanded=False):
        a1, a2, a3, a4 = st.columns(4)
        follow_default("km_p", default_projection_dim(ds.n))     # follows the dataset's n, as before it had a key
        p = number_input(a1, "projection dimension p", 1, 64, step=1, key="km_p",
                            help="Dimension of the JL projection (paper's experiments: ⌈ln(n)/2⌉; theory: 8 ln n).")
        refine = number_input(a2, "SuLQ refinement iterations", 0, 50, value=0, step=1, key="km_refine",
                                 help="Private Lloyd iterations after recovery (§7 uses 8). They share the "
                                      "recovery stage's budget, so each adds noise.")
        share_c = number_input(a3, "candidate share", 0.01, 0.98, value=DEFAULT_SPLIT["candidate"], step=0.05,
                                  format="%.2f", key="km_share_candidate", help="Share of ε for the candidate set (Alg. 1–2).")
        share_l = number_input(a4, "local-swap share", 0.01, 0.98, value=DEFAULT_SPLIT["localswap"], step=0.05,
                                  format="%.2f", key="km_share_localswap",
                                  help="Share of ε for the local swaps (Alg. 3). Recovery gets the rest.")
        sparsity = number_input(a1, "sparsity s (Alg. 5)", 1, 100_000, value=100, step=10, key="km_sparsity",
                                   help="Public bound on non-zeros per row for the sparse recovery; longer rows keep "
                                        "their s largest entries (a per-record map).")
    st.markdown("**ε side by side** — one method on the same data at several ε, with the non-private result "
                "beside them. Every run is a release: each spends its ε.")
    s1, s2 = st.columns([3, 2])
    eps_list = s1.multiselect(f"ε values side by side (1 to {MAX_SIDE_BY_SIDE})", list(EPS_LADDER),
                              default=DEFAULT_EPS_SERIES, max_selections=MAX_SIDE_BY_SIDE, key="km_eps_list",
                              bind="query-params", format_func=eps_label,
                              help="From \"noise wins\" to \"close to non-private\". k, δ, Λ and the options above "
                                   "are the form's; only ε changes.")
    eps_method = s2.selectbox("method side by side", list(METHODS), key="km_eps_method", bind="query-params",
                              format_func=method_label)
    series_plans = plans_or_none(plan_series, X, int(k), eps_method, eps_list, lam, float(delta), None, context)
    for e in sorted({min(eps_list), max(eps_list)}) if eps_list else ():
        epsilon_odds(s1, e, relation=one_relation(series_plans))
    b1, b2 = st.columns([1, 4])
    submitted = run_button(b1, "Run", message_to=st, key="km_run")
    side_by_side = run_button(b2, "Compare ε values side by side", message_to=st, key="km_side_by_side")
    warned = " ".join(w for w in (plan_words(plans), plan_words(series_plans, "Side by side")) if w)
    if warned:                                   # what the library's plan says is not private, beside the buttons
        st.caption(":material/warning: " + warned)
publish_url()


def options_of():
    split = {"candidate": share_c, "localswap": share_l, "recovery": 1.0 - share_c - share_l}
    if split["recovery"] <= 0:
        raise ValueError("candidate share + local-swap share must be < 1 (recovery gets the rest)")
    cand = dict(projection_dim=int(p), refine_iter=int(refine), budget_split=split)
    return {"candidate_kmeans": cand, "candidate_kmedian": dict(cand),
            "candidate_sparse": dict(cand, sparsity=int(sparsity))}


def bar(what):
    def update(f, text):
        progress_slot.progress(min(f, 1.0), text=f"{what}: {text} (Stop, top right, cancels; the last result stays "
                                                 "below)")
    return update


def params():
    return dict(k=int(k), epsilon=float(epsilon), delta=float(delta), leak=leak, seed=seed)


def run_all():
    """The Run button: every chosen method at one ε, one call into dpcore; planned and reserved
    first (a class budget may refuse it), each run judged and charged after."""
    options = options_of()
    plan = plan_runs(X, int(k), epsilon, lam, methods, float(delta), options, context)
    with Timer() as t:
        cmp, verdicts = reserved_run(plan, ds, lambda: compare_methods(
            X, int(k), float(epsilon), lam, methods, float(delta), options, seed, progress=bar("k-means")),
            lambda c: c.results, context, lambda c: [run_label(r.key, float(epsilon)) for r in c.results])
    code = None if data_spec.get("kind") == "upload" else call_snippet(
        data_spec, compare_methods,
        dict(n_clusters=int(k), epsilon=float(epsilon), radius=lam, methods=list(methods),
             delta=float(delta), options=options, random_state=seed),
        X_expr="normalize_rows(ds.X)" if ds.kind == "counts" else "ds.X",
        prints=[("objective / k-means++:", "result.ratios()")], result="result",
        imports=["from dpcore.preprocessing import normalize_rows"] if ds.kind == "counts" else [])
    return dict(spec=data_spec, params=params(), cmp=cmp, verdicts=verdicts, seconds=t.seconds, code=code)


def run_series(eps_values):
    """The side-by-side button (or "Run live" of the instant slider): one method at every ε of
    ``eps_values``, planned, reserved, judged and charged."""
    options, eps = options_of(), sorted(eps_values)
    plan = plan_series(X, int(k), eps_method, eps, lam, float(delta), options, context)
    series, verdicts = reserved_run(plan, ds, lambda: epsilon_series(
        X, int(k), eps_method, eps, lam, float(delta), options, seed, progress=bar("ε side by side")),
        lambda s: s.runs, context, lambda s: [run_label(s.method, e, True) for e in s.epsilons])
    return dict(spec=data_spec, params=params(), series=series, verdicts=verdicts)


# ----------------------------------------------------------------------------- instant ε, on a preset's ladder
ladder = ladder_of(data_spec, k, delta, radius, leak, eps_method, plans_or_none(options_of))
if ladder is not None:
    instant_section(ds, X, ladder, epsilon, lambda e: live_words(plans_or_none(
        plan_series, X, int(k), eps_method, [e], lam, float(delta), options_of(), context), e, seed), seed)
live_eps = st.session_state.pop(LIVE_KEY, None)  # "Run live" of the instant slider: ε side by side at that ε
series_eps = eps_list if side_by_side else [live_eps] if live_eps is not None and not submitted else None
progress_slot = st.empty()
slots = [ResultSlot(), ResultSlot()]

if submitted or series_eps is not None:
    run_started("kmeans")
    had_result = draw_results(slots, data_spec, live=False)   # the last results stay visible if the user presses Stop
    try:
        result = run_series(series_eps) if series_eps is not None else run_all()
    except ValueError as exc:
        progress_slot.error(str(exc) + (" (the previous result below is kept)" if had_result else ""))
        result = None
    if result is not None:
        progress_slot.empty()
        store_result(SERIES_KEY if series_eps is not None else RESULT_KEY, result)     # charged already (reserved_run)
    run_ended("kmeans")
cancelled_note("kmeans", kept=any(st.session_state.get(k) is not None for k in (RESULT_KEY, SERIES_KEY)))

# ----------------------------------------------------------------------------- results
if not draw_results(slots, data_spec):      # each result draws its own privacy box; this one only when none
    privacy_statement(*idle_privacy(plans))
