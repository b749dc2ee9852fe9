"""Privacy–utility: how much utility does ε buy? Sweep ε on the current dataset."""
import time

import numpy as np
import streamlit as st

from dpcore.experiments import METRICS, PRESETS, Sweep, preset, presets_for, run_sweep
from dpcore.plots.experiments import privacy_utility_figure
from ui.common import (add_to_session_budget, current_dataset, current_spec, in_process_loadable, is_upload_spec,
                       privacy_statement)
from dpcore.privacy import PrivacyLedger

KEY = "privacy_utility"
DEFAULT_METHODS = {"points": ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs"], "counts": ["Fast-τCC", "DP-τCC"]}
DEFAULT_METRICS = {"points": ["d_W", "cost"], "counts": ["nmi"]}
METRICS_FOR = {"points": ["d_W", "cost", "nmi", "accuracy"], "counts": ["nmi", "accuracy"]}

st.title("Privacy–utility curves")
st.markdown("How much utility does ε buy? Each private method is run several times at every ε of a "
            "log-spaced grid on the current dataset; the curves show the median and the inter-quartile "
            "band, with non-private methods as dashed reference lines.")

ds = current_dataset()
kind = ds.kind
st.caption(f"Dataset: **{ds.name}** (change it on the Data page).")
if kind == "points" and ds.subspaces is None:
    st.caption("No true subspaces are known for this dataset: d_W is not available, use cost or NMI.")

with st.form("sweep_form"):
    c1, c2 = st.columns(2)
    methods = c1.multiselect("methods", presets_for(kind),
                             default=[m for m in DEFAULT_METHODS[kind] if m in presets_for(kind)],
                             help="Private methods are run at every ε; non-private ones once per trial (reference).")
    metrics = c2.multiselect("metrics", METRICS_FOR[kind], default=DEFAULT_METRICS[kind],
                             help="d_W: distance to the true subspaces (eq. 2); cost: k-means subspace cost (eq. 3); "
                                  "nmi / accuracy: agreement of the (non-private) labels with the true classes.")
    c1, c2, c3, c4 = st.columns(4)
    lo, hi = c1.select_slider("ε range (log10)", options=[-2, -1, 0, 1, 2, 3, 4, 5], value=(-1, 3),
                              help="The grid runs from 10^low to 10^high.")
    n_eps = c2.number_input("ε points", 1, 15, 7, help="Number of ε values on the log grid.")
    trials = c3.number_input("trials", 1, 50, 5, help="Runs per method and ε (different seeds).")
    seed = c4.number_input("seed", 0, 2**31 - 1, 0, help="Master seed: every run's seed is derived from it, "
                                                        "the method, ε and the trial.")
    uploaded = is_upload_spec(current_spec())   # uploads live in this session only: worker processes cannot load them
    n_jobs = st.radio("workers", [1] if uploaded else [1, 2], horizontal=True,
                      help="Processes running the sweep; results are identical whatever the number."
                           + (" Uploaded data live only in this session's memory, so their sweeps run in this "
                              "process (one worker)." if uploaded else ""))
    go = st.form_submit_button("Run sweep", type="primary")

if go:
    try:
        sweep = Sweep(dataset=current_spec(), algorithms=[preset(m) for m in methods],
                      epsilons=list(np.logspace(lo, hi, int(n_eps))), trials=int(trials), metrics=metrics,
                      seed=int(seed)).validated()
    except ValueError as exc:
        st.error(str(exc))
    else:
        bar = st.progress(0.0, text="starting…")
        t0 = time.perf_counter()

        def progress(done, total):
            el = time.perf_counter() - t0
            eta = el / done * (total - done) if done else float("nan")
            bar.progress(done / total, text=f"{done}/{total} runs · {el:.0f} s elapsed · ETA {eta:.0f} s")

        try:
            with in_process_loadable(sweep.dataset):
                df = run_sweep(sweep, n_jobs=int(n_jobs), progress=progress)
        except ValueError as exc:
            st.error(str(exc))
        else:
            ledger = PrivacyLedger()
            priv = df[df["private"]]
            for _, r in priv.iterrows():
                ledger.record(f"{r['algorithm']} trial {r['trial']}", "see method", r["epsilon_spent"],
                              0.0 if np.isnan(r["delta"]) else r["delta"])
            add_to_session_budget(ledger, "privacy–utility sweep")
            st.session_state[KEY] = {"df": df, "metrics": metrics, "dataset": ds.name,
                                     "seconds": time.perf_counter() - t0}

res = st.session_state.get(KEY)
if res is None:
    st.info("Choose methods and an ε range, then **Run sweep**. The default (4 methods × 7 ε × 5 trials "
            "on the paper's Fig. 2 middle setting) takes about a minute.")
else:
    st.subheader(f"{res['dataset']} — {len(res['df'])} runs in {res['seconds']:.1f} s")
    fig = privacy_utility_figure(res["df"], res["metrics"])
    st.plotly_chart(fig, width="stretch")
    st.caption("What to look for: utility improves (d_W and cost fall, NMI rises) as ε grows, i.e. as "
               "privacy weakens; the dashed lines are what no privacy buys. The paper found Gibbs and SuLQ "
               "far better than sample-aggregate unless ε is very large.")
    for w in dict.fromkeys(m for ws in res["df"]["warnings"] for m in ws.split(" | ") if m):
        st.warning(w)
    c1, c2 = st.columns(2)
    c1.download_button("Download results (CSV)", res["df"].to_csv(index=False), "privacy_utility.csv", "text/csv")
    c2.download_button("Download figure (HTML)", fig.to_html(include_plotlyjs=True), "privacy_utility.html",
                       "text/html")
    with st.expander("All runs"):
        st.dataframe(res["df"], hide_index=True, width="stretch")

privacy_statement(
    private=["every private run's released output (subspaces, tables); each run spends its own ε"],
    not_private=["the metrics: they compare releases with the data and the true labels (evaluation only)",
                 "labels from assigning raw points to released subspaces"],
    caveats=["A sweep is many releases: the session meter adds every run's ε. Real deployments "
             "release once; sweeps are for studying the methods on public or synthetic data.",
             "Gibbs is private only asymptotically, when its chain has mixed."])
