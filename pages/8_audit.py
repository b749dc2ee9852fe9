"""Privacy audit: run a release many times on D and on a neighbour D′ and measure the leak."""
import contextlib
import math
import time

import streamlit as st

from dpcore.lab.audit import (AUDIT_SETS, MIN_TRIALS, NEIGHBOUR_RELATION, NEIGHBOURS, RELATIONS, audit_dataset,
                              audit_estimator, default_neighbour)
from dpcore.lab.audit import audit_verdict
from dpcore.lab.methods import FAMILY_KINDS, METHODS, get_method
from ui.audit import (CHAINS, CONFIDENCES, DATA_PAGE, DEFAULT_TRIALS, EPS_MIN, INITS, MAX_SWEEPS, MAX_TRIALS,
                      SOURCES, URL_FIELDS, AuditCharge, algorithm_label, charge_preview, check_audit_size, draw_result,
                      privacy_parts, progress_text, run_label, source_label, verdict_or_none)
from ui.common import (ResultSlot, cancelled_note, current_dataset, in_user_words, number_input, privacy_statement,
                       run_button, run_ended, run_started, stop_page)
from ui.meter import epsilon_odds
from ui.seeds import master_seed, seed_controls
from ui.share import Preset, check_link, preset_picker, publish_url

KEY = "audit"
PAGE = "audit"
PRESETS = {
    "Gibbs start leak: k-plane start, 1 sweep, ε = 0.5": Preset(
        {"audit_data": "three_axes", "audit_algorithm": "gibbs", "audit_eps_gibbs": 0.5, "audit_sweeps": 1,
         "audit_init": "kplane", "audit_trials": 200, "audit_neighbour": "replace_outlier",
         "audit_repro": True, "audit_seed": 0},
        about="One Gibbs sweep from the non-private k-plane start on the three-axes set, one point replaced by the "
              "far outlier (the relation Gibbs claims). Measured (200 runs per side, seed 0): ε̂ = 1.26 > 0.5 — "
              "the release leaks more than its ε. About 5 s."),
    "Gibbs start leak fades: 10 sweeps": Preset(
        {"audit_data": "three_axes", "audit_algorithm": "gibbs", "audit_eps_gibbs": 0.5, "audit_sweeps": 10,
         "audit_init": "kplane", "audit_trials": 200, "audit_neighbour": "replace_outlier",
         "audit_repro": True, "audit_seed": 0},
        about="The same start, 10 sweeps: measured ε̂ = 0 (2 sweeps: 0.58, 3: 0.05, 5: 0)."),
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

check_link(PAGE, URL_FIELDS)
preset_picker(PAGE, PRESETS)
src = st.selectbox("data", SOURCES, key="audit_data", format_func=source_label, bind="query-params",
                   help="Audits need hundreds of runs: the small audit sets keep them to seconds, and they are public "
                        "data, so nothing of yours is released. The Data page's dataset is your data: every run of "
                        "its audit, on D and on D′, is a fit (a release) charged to its privacy meter.")
own_data = src == DATA_PAGE
if own_data:
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

names = [n for n, m in METHODS.items() if kind in FAMILY_KINDS[m.family]]
if not names:
    st.error(f"No algorithm runs on data of kind {kind!r}: choose another dataset.")
    stop_page()
if st.session_state.get("audit_algorithm") not in names:
    st.session_state["audit_algorithm"] = names[0]
name = st.selectbox("algorithm", names, key="audit_algorithm", format_func=algorithm_label, bind="query-params",
                    help="Private algorithms are audited against their ε; non-private ones have no claim "
                         "and show how much they leak.")
method = get_method(name)
private, family, chain = method.private, method.family, name in CHAINS
# the claimed relation's construction is the default each time the algorithm changes (a link or a
# preset that sets both keeps its own choice on the first run of a session)
_last = st.session_state.get("_audit_neighbour_for")
if (_last is not None and _last != name) or st.session_state.get("audit_neighbour") not in neighbours:
    st.session_state["audit_neighbour"] = default_neighbour(name, kind) or next(iter(neighbours))
st.session_state["_audit_neighbour_for"] = name

if chain:
    st.info("**What ε̂ means for the Gibbs sampler.** Its ε (Prop. 4.1) is the ε of an *exact* draw from the "
            "exponential mechanism; a Gibbs chain gets there only asymptotically, once it has mixed. Stopped "
            "after a few sweeps, its release still depends on where it started. From the private random start "
            "that costs little; from a data-dependent start (k-plane, as in the paper's experiments) the start "
            "itself is a non-private function of D and can leak far more than ε. On the three-axes set replacing "
            "one point by the far outlier flips the k-plane start, and one sweep at ε = 0.5 gives a measured "
            "ε̂ = 1.26 (200 runs per side, seed 0): the release **leaks more than claimed**. After 2, 3, 5 and "
            "10 sweeps ε̂ drops to 0.58, 0.05, 0, 0: the chain forgets its start — but ε̂ = 0 is not a proof "
            "that it has.")

seed = seed_controls("audit", releases=own_data)   # outside the form: ticking it shows the seed at once
st.caption("On your data (the Data page's dataset) every run is a fit, a release: the runs on D and on D′ — a neighbour "
           "of D, a release about the same people — are all charged to its privacy meter at the claimed ε (2 × runs "
           "per side fits, one meter entry), or the audit is refused when the class budget would be exceeded; with a "
           "public seed (or a method that is not private as run) they are listed as not private, and a class budget "
           "refuses them." if own_data else
           "The audit sets are public synthetic data: an audit on them releases nothing about yours and is not "
           "charged to any meter; a fixed seed only makes the audit repeatable — the same runs, the same numbers.")
# outside the form, so that the planned charge beside the Run button follows them at once
eps_col, c2 = st.columns(2)
# empty (None) = no claim: a non-private algorithm's only value; a typed ε below EPS_MIN is refused under the field
eps = number_input(eps_col, "claimed ε", EPS_MIN, None, 1.0 if private else None, format="%.3g", key=f"audit_eps_{name}",
                   placeholder="none (not private)", bind="query-params" if private else None,
                   help=f"The ε the algorithm is run with and audited against, at least {EPS_MIN:g}. Leave empty "
                        "for a non-private algorithm.")
trials = number_input(c2, "runs per side", MIN_TRIALS, MAX_TRIALS, DEFAULT_TRIALS, step=50, key="audit_trials",
                         bind="query-params",
                         help=f"{MIN_TRIALS} to {MAX_TRIALS:,} (the estimator needs at least {MIN_TRIALS}: half "
                              "of them choose the test, half measure it). More runs give a tighter (larger) "
                              "lower bound." + (" On your data each run is a fit charged to its meter." if own_data
                                                else ""))
with st.form("audit_form"):
    neighbour = st.selectbox("neighbour D′", list(neighbours), key="audit_neighbour", format_func=neighbours.get,
                             bind="query-params",
                             help="How D′ differs from D by one record. Points: add a far outlier, replace the "
                                  "first point by it (n unchanged), or remove a point; count matrices: add 1 to one "
                                  "cell, or replace or remove one document (row). The default is the relation the "
                                  "algorithm's ε is claimed for.")
    params = dict(set_params.get(family, {}))
    if chain:
        c1, c2 = st.columns(2)
        params["n_iter"] = int(number_input(c1, "Gibbs sweeps", 1, MAX_SWEEPS, 20, key="audit_sweeps", bind="query-params",
                                               help="Few sweeps from a data-dependent start: the chain has not "
                                                    "mixed, so the release is not the exponential mechanism's."))
        params["init"] = c2.selectbox("start", list(INITS), key="audit_init", format_func=INITS.get,
                                      bind="query-params",
                                      help="random: private start. k-plane: a non-private, data-dependent start.")
    confidence = st.select_slider("confidence", CONFIDENCES, 0.95, key="audit_confidence", bind="query-params",
                                  help="The bound ε̂ holds with this probability.")
    c1, c2 = st.columns([1, 3], vertical_alignment="center")
    go = run_button(c1, "Run audit", type="primary")
    # the library's verdict of one run with these controls (None: they cannot run, Run says why)
    verdict = verdict_or_none(name, ds, params, eps, seed)
    preview = charge_preview(verdict, ds, trials) if own_data else None
    if preview:                                      # the planned charge on the user's data, beside the button
        c2.caption(preview)
publish_url()
claimed = verdict.relation if verdict is not None else None      # the relation the method's ε is stated for
epsilon_odds(eps_col, math.inf if eps is None else eps, relation=claimed)      # empty: no claim, no bound
if claimed is not None and NEIGHBOUR_RELATION[neighbour] != claimed:
    st.warning(f"**Not the claimed relation.** {algorithm_label(name)} states its ε for "
               f"{RELATIONS[claimed]}; this neighbour is {RELATIONS[NEIGHBOUR_RELATION[neighbour]]}. The audit then "
               "tests another claim than the method's: ε̂ > ε on it is not a violation of the stated guarantee.")

# Stop (top right) ends a run at its next Streamlit call and the browser keeps only what the run
# drew so far: so the previous result is drawn first and replaced only after a successful audit.
progress_slot, result_slot = st.empty(), ResultSlot()
previous = st.session_state.get(KEY)
if go:
    run_started("audit")
    if previous is not None:
        with result_slot.previous():
            draw_result(previous, "previous")
    bar = progress_slot.progress(0.0, text=progress_text(0, 2 * int(trials), previous is not None))
    t0 = time.perf_counter()
    charge = None

    def progress(done, total):
        if charge is not None:        # charged as the runs finish: a stopped audit has paid for what it ran
            charge.charge(done)
        bar.progress(done / total, text=progress_text(done, total, previous is not None))

    try:
        check_audit_size(name, trials, params)
        run_verdict = audit_verdict(name, ds, eps, params, seed, label=run_label(name))   # one run, by the library
        charge = AuditCharge(run_verdict, ds, trials) if own_data else None
        with charge if charge is not None else contextlib.nullcontext():    # reserved: refused before any run
            res = audit_estimator(name, ds, neighbour, int(trials), epsilon=eps, params=params,
                                  confidence=confidence, seed=master_seed(seed), progress=progress)
    except ValueError as exc:
        said = in_user_words(exc, {"epsilon": "claimed ε"}).rstrip(".")
        progress_slot.error(said + (". The result below is the previous audit's." if previous is not None else "."))
    else:
        progress_slot.empty()
        st.session_state[KEY] = {"res": res, "name": name, "dataset": ds.name, "neighbour": neighbour, "seed": seed,
                                 "statistic": res.statistic, "params": params,
                                 "seconds": time.perf_counter() - t0, "own_data": own_data,
                                 "verdict": run_verdict, "relation": run_verdict.relation}
    run_ended("audit")

cancelled_note("audit", kept=st.session_state.get(KEY) is not None)
out = st.session_state.get(KEY)
if out:
    with result_slot.latest():
        draw_result(out, "final")

# the box is about the audit on screen (its verdict), not the controls; with none, about the controls' audit
if out:
    v = out["verdict"]
    parts = privacy_parts(out["own_data"], v.private, v.reason, out["dataset"], claim=v.claim)
elif verdict is not None:
    parts = privacy_parts(own_data, verdict.private, verdict.reason, ds.name, planned=True, claim=verdict.claim)
else:
    parts = privacy_parts(own_data, False, "these settings cannot run: Run says why", ds.name, planned=True)
boxed = out["name"] if out else name
privacy_statement(
    private=parts[0], not_private=parts[1],
    caveats=parts[2] + ["An audit gives a lower bound: it can catch a leak, not certify privacy."]
    + (["The Gibbs sampler's ε is asymptotic, and void from a data-dependent start."]
       if boxed in CHAINS else []),
    execution=[get_method(boxed).target.rsplit(":", 1)[-1]])
