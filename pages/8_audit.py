"""Privacy audit: run a release many times on D and on a neighbour D′ and measure the leak."""
import time

import pandas as pd
import streamlit as st

from dpcore.audit import (ALL_NEIGHBOURS, AUDIT_SETS, MIN_TRIALS, NEIGHBOUR_RELATION, NEIGHBOURS, RELATIONS,
                          STATISTIC_HELP, STATISTICS, audit_dataset, audit_estimator, claimed_relation,
                          default_neighbour)
from dpcore.experiments import ALGORITHMS, FAMILY_KINDS
from dpcore.plots.audit import audit_histograms
from ui.common import current_dataset, privacy_statement, run_guarded, stop_page
from ui.seeds import master_seed, seed_controls, seed_label
from ui.share import Preset, as_float, as_int, bind_url, one_of, preset_picker, publish_url

KEY = "audit"
PAGE = "audit"
DATA_PAGE = "data_page"
INITS = {"random": "random (private)", "kplane": "k-plane (NOT private)"}
CONFIDENCES = [0.9, 0.95, 0.99]
#: the widgets whose values travel in the page's link (ε has one widget per algorithm)
URL_FIELDS = {"audit_data": one_of([DATA_PAGE, *AUDIT_SETS]), "audit_algorithm": one_of(list(ALGORITHMS)),
              **{f"audit_eps_{n}": as_float(1e-9, None) for n, a in ALGORITHMS.items() if a.private},
              "audit_neighbour": one_of(list(ALL_NEIGHBOURS)), "audit_trials": as_int(1, 20_000),
              "audit_sweeps": as_int(1, 5000), "audit_init": one_of(list(INITS)),
              "audit_confidence": one_of(CONFIDENCES), "audit_seed": as_int(0, 2**31 - 1)}
PRESETS = {
    "Gibbs start leak: k-plane start, 1 sweep, ε = 0.5": Preset(
        {"audit_data": "three_axes", "audit_algorithm": "gibbs", "audit_eps_gibbs": 0.5, "audit_sweeps": 1,
         "audit_init": "kplane", "audit_trials": 200, "audit_neighbour": "replace_outlier",
         "audit_repro": True, "audit_seed": 0},
        about="One Gibbs sweep from the non-private k-plane start on the three-axes set, one point replaced by the "
              "far outlier (the relation Gibbs claims). Measured (200 runs per side, seed 0): ε̂ = 1.45 > 0.5 — "
              "the release leaks more than its ε. About 5 s."),
    "Gibbs start leak fades: 10 sweeps": Preset(
        {"audit_data": "three_axes", "audit_algorithm": "gibbs", "audit_eps_gibbs": 0.5, "audit_sweeps": 10,
         "audit_init": "kplane", "audit_trials": 200, "audit_neighbour": "replace_outlier",
         "audit_repro": True, "audit_seed": 0},
        about="The same start, 10 sweeps: measured ε̂ = 0 (2 sweeps: 0.77, 3: 0.23, 5: 0)."),
    "Gibbs from the private random start, 1 sweep": Preset(
        {"audit_data": "three_axes", "audit_algorithm": "gibbs", "audit_eps_gibbs": 0.5, "audit_sweeps": 1,
         "audit_init": "random", "audit_trials": 200, "audit_neighbour": "replace_outlier",
         "audit_repro": True, "audit_seed": 0},
        about="One sweep from a start that does not look at the data: measured ε̂ = 0."),
    "DP-τCC on a small count matrix, ε = 1": Preset(
        {"audit_data": "blocks", "audit_algorithm": "dp_taucc", "audit_eps_dp_taucc": 1.0, "audit_trials": 200,
         "audit_neighbour": "change_cell"},
        about="D′ adds 1 to one cell; the statistic is the released contingency-table cell that holds it."),
    "Non-private k-plane: no claim, how much it leaks": Preset(
        {"audit_data": "subspaces", "audit_algorithm": "kplane", "audit_trials": 100, "audit_neighbour": "add_outlier"},
        about="k-plane makes no privacy claim; the audit measures a lower bound on what it leaks."),
}

st.title("Privacy audit")
st.markdown("""
An ε on the screen is a promise. An **audit** turns it into an experiment: run the algorithm many
times on the dataset **D** and on a neighbour **D′** (one record added, removed or replaced, or one
count changed — by default the relation the method's ε is claimed for), reduce each release to one
number (a likelihood-ratio score fitted on half the runs), and let a threshold test guess which
dataset produced it. For an
ε-DP release no test can do much better than **TPR ≤ e^ε · FPR** (plus δ), so the test's rates,
with Clopper–Pearson confidence bounds, give a **lower bound ε̂ on the ε really spent**. The
threshold is chosen on half the runs and ε̂ measured on the other half.

An audit can show a leak, never prove privacy: ε̂ ≤ ε means "no violation found with these runs".
""")

bind_url(PAGE, URL_FIELDS)
preset_picker(PAGE, PRESETS)

sources = [DATA_PAGE] + list(AUDIT_SETS)
src = st.selectbox("data", sources, key="audit_data",
                   format_func=lambda s: "the Data page's dataset" if s == DATA_PAGE else AUDIT_SETS[s].label,
                   help="Audits need hundreds of runs: the small audit sets keep them to seconds.")
if src == DATA_PAGE:
    ds, set_params = current_dataset(), {}
else:
    ds, set_params = audit_dataset(src)
    st.caption(AUDIT_SETS[src].note)
kind = ds.kind
st.caption(f"Dataset: **{ds.name}** ({kind}).")
neighbours = NEIGHBOURS.get(kind, {})
if not neighbours:
    st.error(f"neighbour: there is no neighbour construction for data of kind {kind!r} (the audit knows "
             f"{', '.join(NEIGHBOURS)}): choose another dataset.")
    stop_page()
if st.session_state.get("audit_neighbour") not in neighbours:   # e.g. after switching between points and counts
    st.session_state["audit_neighbour"] = next(iter(neighbours))

names = [n for n, a in ALGORITHMS.items() if kind in FAMILY_KINDS[a.family]]
if st.session_state.get("audit_algorithm") not in names:
    st.session_state["audit_algorithm"] = names[0] if names else None
if not names:
    st.error(f"No algorithm runs on data of kind {kind!r}: choose another dataset.")
    stop_page()
name = st.selectbox("algorithm", names, key="audit_algorithm", format_func=lambda n: ALGORITHMS[n].description or n,
                    help="Private algorithms are audited against their ε; non-private ones have no claim "
                         "and show how much they leak.")
private = ALGORITHMS[name].private
family = ALGORITHMS[name].family
claimed = claimed_relation(name)
# the claimed relation's construction is the default each time the algorithm changes (a link or a
# preset that sets both keeps its own choice on the first run of a session)
_last = st.session_state.get("_audit_neighbour_for")
if (_last is not None and _last != name) or st.session_state.get("audit_neighbour") not in neighbours:
    st.session_state["audit_neighbour"] = default_neighbour(name, kind) or next(iter(neighbours))
st.session_state["_audit_neighbour_for"] = name

if name == "gibbs":
    st.info("**What ε̂ means for the Gibbs sampler.** Its ε (Prop. 4.1) is the ε of an *exact* draw from the "
            "exponential mechanism; a Gibbs chain gets there only asymptotically, once it has mixed. Stopped "
            "after a few sweeps, its release still depends on where it started. From the private random start "
            "that costs little; from a data-dependent start (k-plane, as in the paper's experiments) the start "
            "itself is a non-private function of D and can leak far more than ε. On the three-axes set replacing "
            "one point by the far outlier flips the k-plane start, and one sweep at ε = 0.5 gives a measured "
            "ε̂ = 1.45: the "
            "release **leaks more than claimed**. After 2, 3, 5 and 10 sweeps ε̂ drops to 0.77, 0.23, 0, 0 "
            "(200 runs per side): the chain forgets its start — but ε̂ = 0 is not a proof that it has.")

seed = seed_controls("audit")   # outside the form: ticking it shows the seed at once
with st.form("audit_form"):
    c1, c2, c3 = st.columns(3)
    eps = c1.number_input("claimed ε", min_value=None, value=1.0 if private else None, format="%.3g",
                          key=f"audit_eps_{name}", placeholder="none (not private)",
                          help="The ε the algorithm is run with and audited against. Leave empty for a "
                               "non-private algorithm.")
    neighbour = c2.selectbox("neighbour D′", list(neighbours), key="audit_neighbour", format_func=neighbours.get,
                             help="How D′ differs from D by one record. Points: add a far outlier, replace the "
                                  "first point by it (n unchanged), or remove a point; count matrices: add 1 to one "
                                  "cell. The default is the relation the algorithm's ε is claimed for.")
    trials = c3.number_input("runs per side", 1, 20_000, 200, key="audit_trials",
                             help=f"At least {MIN_TRIALS}. More runs give a tighter (larger) lower bound.")
    params = dict(set_params.get(family, {}))
    if name == "gibbs":
        c1, c2 = st.columns(2)
        params["n_iter"] = int(c1.number_input("Gibbs sweeps", 1, 5000, 20, key="audit_sweeps",
                                               help="Few sweeps from a data-dependent start: the chain has not "
                                                    "mixed, so the release is not the exponential mechanism's."))
        params["init"] = c2.selectbox("start", list(INITS), key="audit_init", format_func=INITS.get,
                                      help="random: private start. k-plane: a non-private, data-dependent start.")
    confidence = st.select_slider("confidence", CONFIDENCES, 0.95, key="audit_confidence",
                                  help="The bound ε̂ holds with this probability.")
    go = st.form_submit_button("Run audit", type="primary")
publish_url(URL_FIELDS)
if claimed is not None and NEIGHBOUR_RELATION[neighbour] != claimed:
    st.warning(f"**Not the claimed relation.** {ALGORITHMS[name].description or name} states its ε for "
               f"{RELATIONS[claimed]}; this neighbour is {RELATIONS[NEIGHBOUR_RELATION[neighbour]]}. The audit then "
               "tests another claim than the method's: ε̂ > ε on it is not a violation of the stated guarantee.")

if go:
    bar = st.progress(0.0, text="auditing…")
    t0 = time.perf_counter()
    res = run_guarded(audit_estimator, name, ds, neighbour, int(trials), epsilon=eps, params=params,
                      confidence=confidence, seed=master_seed(seed),
                      progress=lambda d, t: bar.progress(d / t, text=f"{d}/{t} runs"))
    bar.empty()
    if res is not None:
        st.session_state[KEY] = {"res": res, "name": name, "dataset": ds.name, "neighbour": neighbour, "seed": seed,
                                 "statistic": STATISTICS[family], "params": params,
                                 "seconds": time.perf_counter() - t0}

out = st.session_state.get(KEY)
if out:
    res = out["res"]
    st.subheader(f"{ALGORITHMS[out['name']].description} on {out['dataset']}")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("ε̂ (lower bound)", f"{res.epsilon_lower:.3g}", help=f"holds with {res.confidence:.0%} confidence")
    c2.metric("claimed ε", "none" if res.nominal_epsilon is None else f"{res.nominal_epsilon:.3g}")
    c3.metric("verdict", res.verdict)
    c4.metric("largest ε̂ these runs can show", f"{res.epsilon_ceiling:.3g}",
              help="the bound a test that separates D from D′ perfectly would give with these held-out runs")
    if res.verdict == res.LEAKS:
        st.warning(f"**Leaks more than claimed:** with {res.confidence:.0%} confidence the release spends at least "
                   f"ε̂ = {res.epsilon_lower:.3g} > ε = {res.nominal_epsilon:.3g}.")
    elif res.verdict == res.CONSISTENT:
        more = ("" if res.epsilon_ceiling > res.nominal_epsilon else
                f" These runs could not show more than ε̂ = {res.epsilon_ceiling:.3g} ≤ ε whatever the algorithm "
                "did: use more runs to make the audit able to catch a leak.")
        st.success(f"**Consistent with the claim:** ε̂ = {res.epsilon_lower:.3g} ≤ ε = {res.nominal_epsilon:.3g}. "
                   f"No violation found with these runs (not a proof of privacy).{more}")
    else:
        st.info(f"**No bound: not private.** The algorithm makes no privacy claim; the audit shows it spends at "
                f"least ε̂ = {res.epsilon_lower:.3g} on this neighbour (with {res.confidence:.0%} confidence).")
    st.plotly_chart(audit_histograms(res, STATISTIC_HELP[out["statistic"]]), width="stretch")
    st.caption("What to look for: for a private release the two histograms overlap, so no threshold separates "
               "them much better than e^ε allows; a non-private one (or a leaking start) puts them apart.")
    table = pd.DataFrame({
        "rate": [res.tpr, res.fpr],
        "CI low": [res.tpr_ci[0], res.fpr_ci[0]], "CI high": [res.tpr_ci[1], res.fpr_ci[1]],
    }, index=["TPR: said D on D", "FPR: said D on D′"])
    st.dataframe(table, width="stretch")
    st.caption(f"{res.n_runs} runs ({res.n_heldout} held out for the bound), {out['seconds']:.1f} s. Test: "
               f"{res.orientation} = {res.threshold:.4g}; point estimate {res.epsilon_point:.3g}; δ used in the "
               f"bound {res.delta:.2g}; confidence intervals are two-sided {res.confidence:.0%} Clopper–Pearson. "
               f"Neighbour: {ALL_NEIGHBOURS[out['neighbour']]} — audited relation: "
               f"{RELATIONS[NEIGHBOUR_RELATION[out['neighbour']]]}"
               + ("" if res.claimed_relation is None else
                  " (the claimed one)." if res.relation_is_claimed else
                  f", NOT the claimed {RELATIONS[res.claimed_relation]}.")
               + f" Statistic: {STATISTIC_HELP[out['statistic']]}. Seed: {seed_label(out.get('seed'))}.")
    if out["name"] == "gibbs":
        start = out["params"].get("init", "random")
        sweeps = out["params"].get("n_iter")
        if start != "random":
            st.info(f"This chain started from the non-private {start} solution and ran {sweeps} sweep(s). Its ε "
                    "holds only for an exact exponential-mechanism draw; this release is not one, and ε̂ measures "
                    "what the data-dependent start still leaks. ε̂ ≤ ε here would not restore the guarantee.")
        else:
            st.info(f"This chain started from the private random start and ran {sweeps} sweep(s). Its ε is an "
                    "asymptotic guarantee (exact once the chain has mixed); ε̂ tests it on this neighbour.")
    runs = pd.DataFrame({"side": ["D"] * res.stats_a.size + ["D′"] * res.stats_b.size,
                         "run": list(range(res.stats_a.size)) + list(range(res.stats_b.size)),
                         "statistic": list(res.stats_a) + list(res.stats_b)})
    summary = pd.DataFrame([{
        "algorithm": out["name"], "dataset": out["dataset"], "neighbour": out["neighbour"],
        "audited relation": res.relation, "claimed relation": res.claimed_relation,
        "statistic": out["statistic"], "params": str(out["params"]), "claimed epsilon": res.nominal_epsilon,
        "epsilon lower bound": res.epsilon_lower, "point estimate": res.epsilon_point,
        "ceiling": res.epsilon_ceiling, "verdict": res.verdict, "tpr": res.tpr, "fpr": res.fpr,
        "tpr ci": res.tpr_ci, "fpr ci": res.fpr_ci, "threshold": res.threshold, "test": res.orientation,
        "runs per side": res.stats_a.size, "confidence": res.confidence, "delta": res.delta,
        "seconds": out["seconds"]}])
    c1, c2 = st.columns(2)
    c1.download_button("Download runs (CSV)", runs.to_csv(index=False), "audit_runs.csv", "text/csv")
    c2.download_button("Download summary (CSV)", summary.to_csv(index=False), "audit_summary.csv", "text/csv")

privacy_statement(
    private=["each audited release is produced by the algorithm at the claimed ε"],
    not_private=["the audit itself: it looks at D, D′ and the outlier or cell it planted (it is a test of the "
                 "algorithm, not a release)"],
    caveats=["An audit gives a lower bound: it can catch a leak, not certify privacy.",
             "The Gibbs sampler's ε is asymptotic, and void from a data-dependent start."])
