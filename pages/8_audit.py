"""Privacy audit: run a release many times on D and on a neighbour D′ and measure the leak."""
import time

import pandas as pd
import streamlit as st

from dpcore.audit import MIN_TRIALS, NEIGHBOURS, STATISTIC_HELP, STATISTICS, audit_estimator
from dpcore.experiments import ALGORITHMS, FAMILY_KINDS
from dpcore.plots.audit import audit_histograms
from ui.common import current_dataset, privacy_statement, run_guarded

KEY = "audit"

st.title("Privacy audit")
st.markdown("""
An ε on the screen is a promise. An **audit** turns it into an experiment: run the algorithm many
times on the dataset **D** and on a neighbour **D′** (one record added, removed or changed), reduce
each release to one number, and let a threshold test guess which dataset produced it. For an
ε-DP release no test can do much better than **TPR ≤ e^ε · FPR** (plus δ), so the test's rates,
with Clopper–Pearson confidence bounds, give a **lower bound ε̂ on the ε really spent**. The
threshold is chosen on half the runs and ε̂ measured on the other half.

An audit can show a leak, never prove privacy: ε̂ ≤ ε means "no violation found with these runs".
""")

ds = current_dataset()
kind = ds.kind
names = [n for n, a in ALGORITHMS.items() if kind in FAMILY_KINDS[a.family]]
st.caption(f"Dataset: **{ds.name}** (change it on the Data page; audits are quickest on small data).")
name = st.selectbox("algorithm", names, format_func=lambda n: ALGORITHMS[n].description or n,
                    help="Private algorithms are audited against their ε; non-private ones have no claim "
                         "and show how much they leak.")
private = ALGORITHMS[name].private

with st.form("audit_form"):
    c1, c2, c3 = st.columns(3)
    eps = c1.number_input("claimed ε", min_value=None, value=1.0 if private else None, format="%.3g",
                          placeholder="none (not private)",
                          help="The ε the algorithm is run with and audited against. Leave empty for a "
                               "non-private algorithm.")
    neighbour = c2.selectbox("neighbour D′", list(NEIGHBOURS.get(kind, {})) or ["(none)"],
                             format_func=lambda k: NEIGHBOURS.get(kind, {}).get(k, "no construction for this data"),
                             help="How D′ differs from D by one record.")
    trials = c3.number_input("runs per side", 1, 20_000, 200,
                             help=f"At least {MIN_TRIALS}. More runs give a tighter (larger) lower bound.")
    params = {}
    if name == "gibbs":
        c1, c2 = st.columns(2)
        params["n_iter"] = int(c1.number_input("Gibbs sweeps", 1, 5000, 20,
                                               help="Few sweeps from a data-dependent start: the chain has not "
                                                    "mixed, so the release is not the exponential mechanism's."))
        params["init"] = c2.selectbox("start", ["random", "kplane"],
                                      help="random: private start. kplane: a non-private, data-dependent start.")
    confidence = st.select_slider("confidence", [0.9, 0.95, 0.99], 0.95,
                                  help="The bound ε̂ holds with this probability.")
    seed = st.number_input("seed", 0, 2**31 - 1, 0, help="Master seed of the runs.")
    go = st.form_submit_button("Run audit", type="primary")

if go:
    if private and eps is None:
        st.error(f"epsilon must be given (> 0) for the private algorithm {name}")
    else:
        bar = st.progress(0.0, text="auditing…")
        t0 = time.perf_counter()
        res = run_guarded(audit_estimator, name, ds, neighbour, int(trials), epsilon=eps, params=params,
                          confidence=confidence, seed=int(seed),
                          progress=lambda d, t: bar.progress(d / t, text=f"{d}/{t} runs"))
        if res is not None:
            st.session_state[KEY] = {"res": res, "name": name, "dataset": ds.name,
                                     "statistic": STATISTICS[ALGORITHMS[name].family],
                                     "seconds": time.perf_counter() - t0}

out = st.session_state.get(KEY)
if out:
    res = out["res"]
    st.subheader(f"{ALGORITHMS[out['name']].description} on {out['dataset']}")
    c1, c2, c3 = st.columns(3)
    c1.metric("ε̂ (lower bound)", f"{res.epsilon_lower:.3g}", help=f"holds with {res.confidence:.0%} confidence")
    c2.metric("claimed ε", "none" if res.nominal_epsilon is None else f"{res.nominal_epsilon:.3g}")
    c3.metric("verdict", res.verdict)
    st.plotly_chart(audit_histograms(res, STATISTIC_HELP[out["statistic"]]), width="stretch")
    table = pd.DataFrame({
        "rate": [res.tpr, res.fpr],
        "CI low": [res.tpr_ci[0], res.fpr_ci[0]], "CI high": [res.tpr_ci[1], res.fpr_ci[1]],
    }, index=["TPR: said D on D", "FPR: said D on D′"])
    st.dataframe(table, width="stretch")
    st.caption(f"{res.n_runs} runs ({res.n_heldout} held out for the bound), {out['seconds']:.1f} s; "
               f"point estimate {res.epsilon_point:.3g}; δ used in the bound {res.delta:.2g}. "
               f"Statistic: {STATISTIC_HELP[out['statistic']]}.")
    if out["name"] == "gibbs":
        st.info("The Gibbs sampler's ε holds only when the chain has mixed: its release is then a draw from "
                "the exponential mechanism. Stopped after a few sweeps, and above all from a data-dependent "
                "start, the release still depends on where the chain started, and ε̂ can exceed ε.")
    st.download_button("Download runs (CSV)", pd.DataFrame({"side": ["D"] * res.stats_a.size + ["D′"] * res.stats_b.size,
                                                           "statistic": list(res.stats_a) + list(res.stats_b)}
                                                          ).to_csv(index=False), "audit_runs.csv", "text/csv")

privacy_statement(
    private=["each audited release is produced by the algorithm at the claimed ε"],
    not_private=["the audit itself: it looks at D, D′ and the outlier or cell it planted (it is a test of the "
                 "algorithm, not a release)"],
    caveats=["An audit gives a lower bound: it can catch a leak, not certify privacy."])
