"""Privacy–utility: how much utility does ε buy? Sweep ε on the current dataset."""
import json
import time

import numpy as np
import streamlit as st

from dpcore.experiments import Sweep, preset, presets_for, run_sweep
from dpcore.plots.experiments import METRIC_TITLES, privacy_utility_figure
from dpcore.privacy import PrivacyLedger
from ui.common import (DEFAULT_DATASET, current_dataset, current_spec, in_process_loadable, is_upload_spec,
                       privacy_statement, record_run)
from ui.seeds import master_seed, seed_caveat, seed_controls
from ui.share import Preset, as_int, bind_url, follow_dataset, list_of, one_of, preset_picker, publish_url

KEY = "privacy_utility"
PAGE = "privacy_utility"
LOG_EPS = [-2, -1, 0, 1, 2, 3, 4, 5]          # the ε range slider: powers of ten
METRICS_FOR = {"points": ["d_W", "d_W_class", "cost", "nmi", "accuracy", "objective", "objective_ratio"],
               "counts": ["nmi", "accuracy", "tau_rc"]}
METRIC_HELP = ("d_W: distance of the released subspaces to the true ones (eq. 2; synthetic subspaces only); "
               "d_W_class: to each class's top-q subspace (labelled data such as Yale B); cost: k-means subspace "
               "cost (eq. 3); nmi / accuracy: agreement of the (non-private) labels with the true classes; "
               "objective: k-means objective of the released centres; objective_ratio: that ÷ the true centres' "
               "objective (Gaussian mixtures); tau_rc: τ̂_R|C of the released contingency table.")


def defaults_for(ds):
    """(methods, metrics) a user of the field would start with on this dataset."""
    if ds.kind == "counts":
        return ["DP-τCC", "Fast-τCC"], ["nmi"]
    if ds.centers is not None:                          # a Gaussian mixture: the k-means methods
        return ["candidate set", "SuLQ k-means", "DP-Lloyd", "k-means++"], ["objective_ratio"]
    if ds.subspaces is not None:                        # the paper's Fig. 2 methods
        return ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs"], ["d_W", "cost"]
    return ["SuLQ-10", "Gibbs", "k-plane"], (["d_W_class", "cost"] if ds.labels is not None else ["cost"])


def log_range(text):
    """'-1,3' -> (-1, 3): the ε range slider in a link."""
    lo, hi = (one_of(LOG_EPS)(t) for t in text.split(","))
    if lo > hi:
        raise ValueError(f"{lo} > {hi}")
    return lo, hi


URL_FIELDS = {"pu_methods": list_of(presets_for("points") + presets_for("counts")),
              "pu_metrics": list_of(METRICS_FOR["points"] + METRICS_FOR["counts"]), "pu_range": log_range,
              "pu_points": as_int(1, 15), "pu_trials": as_int(1, 50), "pu_seed": as_int(0, 2**31 - 1),
              "pu_jobs": one_of([1, 2])}
MIXTURE = {"kind": "gaussians", "n": 5000, "d": 50, "k": 8, "sigma": 0.1, "center_box": 1.0, "random_state": 0}
PRESETS = {
    "Paper Fig. 2 middle (4 methods × 7 ε × 5 trials)": Preset(
        {"pu_methods": ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs"], "pu_metrics": ["d_W", "cost"],
         "pu_range": (-1, 3), "pu_points": 7, "pu_trials": 5, "pu_jobs": 2}, DEFAULT_DATASET,
        "The subspace paper's Fig. 2 (middle): n = 1000, d = 10, k = 3, q = 3, σ = 0.1. About 30 s."),
    "Quick look: SuLQ-10 against Gibbs": Preset(
        {"pu_methods": ["SuLQ-10", "Gibbs", "k-plane"], "pu_metrics": ["d_W"], "pu_range": (-1, 3),
         "pu_points": 5, "pu_trials": 2, "pu_jobs": 2}, DEFAULT_DATASET,
        "Two private methods and the non-private k-plane as the dashed line. About 15 s."),
    "Co-clustering Fig. 2 on classic3 (DP-τCC against Fast-τCC)": Preset(
        {"pu_methods": ["DP-τCC", "Fast-τCC"], "pu_metrics": ["nmi", "tau_rc"], "pu_range": (-1, 1), "pu_points": 5,
         "pu_trials": 3, "pu_jobs": 2}, {"kind": "cluto", "name": "classic3"},
        "Row NMI of DP-τCC (4 iterations) rises steeply up to ε ≈ 1, then flattens (the paper's Fig. 2); "
        "τ̂_R|C of the released table beside it (its Fig. 3). About 10 s."),
    "k-means on 8 Gaussians in R^50 (objective ratio)": Preset(
        {"pu_methods": ["candidate set", "SuLQ k-means", "DP-Lloyd", "k-means++"], "pu_metrics": ["objective_ratio"],
         "pu_range": (-1, 2), "pu_points": 4, "pu_trials": 3, "pu_jobs": 2}, MIXTURE,
        "The high-dimensional paper's comparison on a smaller mixture (public radius from the generator). "
        "About 30 s."),
}

st.title("Privacy–utility curves")
st.markdown("How much utility does ε buy? Each private method is run several times at every ε of a "
            "log-spaced grid on the current dataset; the curves show the median and the inter-quartile "
            "band, with non-private methods as dashed reference lines.")

bind_url(PAGE, URL_FIELDS)
preset_picker(PAGE, PRESETS)
ds = current_dataset()
kind = ds.kind
spec = current_spec()
st.caption(f"Dataset: **{ds.name}** (change it on the Data page, or choose a preset).")
if kind == "points" and ds.subspaces is None:
    st.caption("No true subspaces are known for this dataset: d_W is not available (NaN); use d_W_class, cost "
               "or NMI.")
methods_ok, metrics_ok = presets_for(kind), METRICS_FOR[kind]
default_methods, default_metrics = defaults_for(ds)
follow_dataset(PAGE, json.dumps(spec, sort_keys=True, default=str),
               {"pu_methods": default_methods, "pu_metrics": default_metrics})
# a link or a preset may name methods or metrics this dataset cannot use: keep the ones it can
for key, allowed, default in (("pu_methods", methods_ok, default_methods), ("pu_metrics", metrics_ok,
                                                                           default_metrics)):
    st.session_state[key] = [v for v in st.session_state.get(key, default) if v in allowed]
uploaded = is_upload_spec(spec)    # uploads live in this session only: worker processes cannot load them
if uploaded:
    st.session_state["pu_jobs"] = 1

seed = seed_controls("pu")   # outside the form: ticking it shows the seed at once
with st.form("sweep_form"):
    c1, c2 = st.columns(2)
    methods = c1.multiselect("methods", methods_ok, key="pu_methods",
                             help="Private methods are run at every ε; non-private ones once per trial (reference).")
    metrics = c2.multiselect("metrics", metrics_ok, key="pu_metrics", help=METRIC_HELP)
    c1, c2, c3, c4 = st.columns(4)
    lo, hi = c1.select_slider("ε range (log10)", options=LOG_EPS, value=(-1, 3), key="pu_range",
                              help="The grid runs from 10^low to 10^high.")
    n_eps = c2.number_input("ε points", 1, 15, 7, key="pu_points", help="Number of ε values on the log grid.")
    trials = c3.number_input("trials", 1, 50, 5, key="pu_trials", help="Runs per method and ε (different seeds).")
    n_jobs = st.radio("workers", [1] if uploaded else [1, 2], index=0 if uploaded else 1, horizontal=True,
                      key="pu_jobs",
                      help="Processes running the sweep; results are identical whatever the number."
                           + (" Uploaded data live only in this session's memory, so their sweeps run in this "
                              "process (one worker)." if uploaded else ""))
    grid = np.logspace(lo, hi, int(n_eps))
    st.caption("ε grid: " + ", ".join(f"{e:.3g}" for e in grid) + ". A running sweep can be stopped with "
               "Streamlit's **Stop** button (top right); the last finished result stays.")
    go = st.form_submit_button("Run sweep", type="primary")
publish_url(URL_FIELDS)

if go:
    try:
        sweep = Sweep(dataset=spec, algorithms=[preset(m) for m in methods], epsilons=list(grid),
                      trials=int(trials), metrics=metrics, seed=master_seed(seed)).validated()
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
            counted, leaked = PrivacyLedger(), PrivacyLedger()
            for _, r in df[df["private"]].iterrows():
                (counted if r["released_private"] else leaked).record(
                    f"{r['algorithm']} trial {r['trial']}", "see method", r["epsilon_spent"],
                    0.0 if np.isnan(r["delta"]) else r["delta"])
            if len(counted):
                record_run(counted, "privacy–utility sweep", private=seed is None,
                           reason="" if seed is None else f"public master seed {seed} (reproducible mode)")
            if len(leaked):
                record_run(leaked, "privacy–utility sweep", private=False,
                           reason="runs that released nothing private (e.g. a radius read off the data)")
            if seed is None:
                df = df.drop(columns=["seed"])   # per-run seeds would give the secret noise away
            st.session_state[KEY] = {"df": df, "metrics": metrics, "dataset": ds.name, "seed": seed,
                                     "seconds": time.perf_counter() - t0}

res = st.session_state.get(KEY)
if res is None:
    st.info("Choose methods and an ε range, then **Run sweep**. The default (4 methods × 7 ε × 5 trials "
            "on the paper's Fig. 2 middle setting) takes about 30 s with 2 workers, a minute with one.")
else:
    st.subheader(f"{res['dataset']} — {len(res['df'])} runs in {res['seconds']:.1f} s")
    fig = privacy_utility_figure(res["df"], res["metrics"])
    st.plotly_chart(fig, width="stretch")
    empty = [METRIC_TITLES.get(m, m) for m in res["metrics"] if res["df"][m].isna().all()]
    if empty:
        st.caption("No method gives a value for: " + "; ".join(empty) + " (the metric does not apply to these "
                   "methods or this dataset).")
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
    private=["every private run's released output (subspaces, tables, centres); each run spends its own ε"],
    not_private=["the metrics: they compare releases with the data and the true labels (evaluation only)",
                 "labels from assigning raw points to released subspaces or centres"],
    caveats=seed_caveat(res.get("seed") if res else None) + ["A sweep is many releases: the session meter adds every private run's ε. Real deployments "
             "release once; sweeps are for studying the methods on public or synthetic data.",
             "Gibbs is private only asymptotically, when its chain has mixed.",
             "k-means methods on data without a public radius (anything but a Gaussian mixture) read the radius "
             "off the data, which is not private; the run's warning says so and the meter lists those runs as "
             "non-private."])
