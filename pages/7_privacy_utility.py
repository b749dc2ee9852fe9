"""Privacy–utility: how much utility does ε buy? Sweep ε on the current dataset."""
import json
import time

import numpy as np
import streamlit as st

from dpcore.defaults import default_subspace_dim, subspace_dim_reason
from dpcore.lab.methods import presets_for
from ui.common import (ResultSlot, cancelled_note, current_dataset, current_spec, in_process_loadable, is_upload_spec,
                       in_user_words, number_input, run_button, run_ended, run_guarded, run_started)
from ui.meter import epsilon_odds, reserve
from ui.seeds import master_seed, seed_controls
from ui.share import check_link, follow_dataset, preset_picker, publish_url
from ui.sweep import (DEFAULT_RANGE, KEY, LOG_EPS, MAX_POINTS, MAX_TRIALS, METRIC_HELP, METRICS_FOR, PAGE, PRESETS,
                      URL_FIELDS, WORKERS, LiveSweep, build_sweep, charge_rows, defaults_for, fmt, judged, metric_label,
                      apart_in_plan, plan_note, plans_of, q_limits, show_partial, show_privacy, show_result)
from ui.sweep import PARTIAL_KEY as SWEEP_PARTIAL

st.title("Privacy–utility curves")
st.markdown("How much utility does ε buy? Each private method is run several times at every ε of a "
            "log-spaced grid on the current dataset; the curves show the median and the inter-quartile "
            "band, with non-private methods as dashed reference lines.")

check_link(PAGE, URL_FIELDS)
preset_picker(PAGE, PRESETS)
ds = current_dataset()
kind = ds.kind
spec = current_spec()
st.caption(f"Dataset: **{ds.name}** (change it on the Data page, or choose a preset).")
if kind == "points" and ds.subspaces is None and ds.centers is None:
    st.caption("No true subspaces are known for this dataset: d_W is not available (NaN); use d_W to classes, "
               "cost or NMI.")
methods_ok, metrics_ok = presets_for(kind), METRICS_FOR[kind]
default_methods, default_metrics = defaults_for(ds)
q_lo, q_hi = q_limits(ds)
default_q = default_subspace_dim(ds)
data_id = json.dumps(spec, sort_keys=True, default=str)
new_data = st.session_state.get(f"_{PAGE}_data_id") not in (None, data_id)    # read before follow_dataset sets it
follow_dataset(PAGE, data_id, {"pu_methods": default_methods, "pu_metrics": default_metrics, "pu_q": default_q})
# a preset may name methods or metrics this dataset cannot use, or a q beyond its dimension: keep what it can use
for key, allowed in (("pu_methods", methods_ok), ("pu_metrics", metrics_ok)):
    chosen = st.session_state.get(key)
    if chosen is not None and any(v not in allowed for v in chosen):
        st.session_state[key] = [v for v in chosen if v in allowed]
# a q the new dataset cannot take (a preset's dataset, after follow_dataset kept the preset's values) follows its
# default; a q typed out of range on the same dataset is refused under the field and beside Run, never replaced
if new_data and not q_lo <= st.session_state.get("pu_q", default_q) <= q_hi:
    st.session_state["pu_q"] = default_q
uploaded = is_upload_spec(spec)    # uploads live in this session only: worker processes cannot load them
if uploaded and st.session_state.get("pu_jobs", 1) != 1:
    st.session_state["pu_jobs"] = 1

seed = seed_controls("pu")   # outside the form: ticking it shows the seed at once
with st.form("sweep_form"):
    c1, c2 = st.columns([3, 2])
    methods = c1.multiselect("methods", methods_ok, default_methods, key="pu_methods", bind="query-params",
                             help="Private methods are run at every ε; non-private ones once per trial (the "
                                  "dashed reference lines).")
    metrics = c2.multiselect("metrics", metrics_ok, default_metrics, format_func=metric_label, key="pu_metrics",
                             bind="query-params", help=METRIC_HELP)
    c1, c2, c3, c4 = st.columns(4)
    lo, hi = c1.select_slider("ε range (log10)", options=LOG_EPS, value=DEFAULT_RANGE, key="pu_range",
                              bind="query-params", help="The grid runs from 10^low to 10^high.")
    n_eps = number_input(c2, "ε points", 1, MAX_POINTS, 7, key="pu_points", bind="query-params",
                            help="Number of ε values on the log grid.")
    trials = number_input(c3, "trials", 1, MAX_TRIALS, 5, key="pu_trials", bind="query-params",
                             help="Runs per method and ε (different seeds).")
    q = None
    if kind == "points":
        q = number_input(c4, "subspace dimension q", q_lo, q_hi, default_q, key="pu_q", bind="query-params",
                            help=f"Dimension of the subspaces the subspace methods fit (1 … d − 1 = {q_hi}); "
                                 f"{subspace_dim_reason(ds)} Not used by the k-means methods.")
    workers = [1] if uploaded else WORKERS
    n_jobs = st.radio("workers", workers, index=len(workers) - 1, horizontal=True, key="pu_jobs",
                      bind="query-params",
                      help="Processes running the sweep; results are identical whatever the number."
                           + (" Uploaded data live only in this session's memory, so their sweeps run in this "
                              "process (one worker)." if uploaded else ""))
    grid = np.unique(np.logspace(lo, hi, int(n_eps)))
    epsilon_odds(st, float(grid[0]))
    epsilon_odds(st, float(grid[-1]))
    planned = run_guarded(build_sweep, spec, methods, metrics, grid[:1], 1, q, 0) if methods and metrics else None
    note = plan_note(planned, ds, seed) if planned is not None else None
    if note:
        st.warning(note)
    st.caption("ε grid: " + ", ".join(fmt(e) for e in grid) + ". A running sweep is drawn ε by ε as its runs "
               "finish, in a figure titled *partial*; Streamlit's **Stop** button (top right) stops it, and the last "
               "finished sweep stays.")
    go = run_button(st, "Run sweep", type="primary")
publish_url()

progress_slot, live_slot, kept_slot = st.empty(), st.empty(), st.empty()   # bar; figure so far; a partial one
result_slot, privacy_slot = ResultSlot(), ResultSlot()


def draw(res, after_run=False):
    with (result_slot.latest() if after_run else result_slot.previous()):
        if res is None:
            st.info("Choose methods and an ε range, then **Run sweep** (a preset sets everything at once). "
                    "Small sweeps take seconds; the Fig. 2 preset 10–15 s, drawn ε by ε as it runs.")
        else:
            show_result(res)
    with (privacy_slot.latest() if after_run else privacy_slot.previous()):
        show_privacy(res, apart_in_plan(planned, ds, seed) if planned is not None and res is None
                     else None)       # a result's box follows its own runs' verdicts; with none, the plan's


draw(st.session_state.get(KEY))     # before the run: Stop leaves the last result on screen
show_partial(kept_slot)             # the drawn cells of a sweep that did not finish, labelled partial
if go:
    run_started("sweep")
    try:
        sweep = build_sweep(spec, methods, metrics, grid, trials, q, master_seed(seed))
        plans = plans_of(sweep, ds, seed)
    except ValueError as exc:
        progress_slot.error(in_user_words(exc))
    else:
        t0 = time.perf_counter()
        try:     # the whole sweep reserved (refused before any run), given back however the run ends
            with reserve(plans, ds) as reservation, in_process_loadable(sweep.dataset):
                kept_slot.empty()
                progress_slot.progress(0.0, text="Sweep: starting…")
                # each cell (a method at one ε) is charged right before it is first drawn, the rest once finished
                live = LiveSweep(sweep, metrics, progress_slot, live_slot,
                                 lambda part: charge_rows(reservation, part, ds, seed), ds.name, secret=seed is None)
                df = live.run(n_jobs=int(n_jobs))
        except ValueError as exc:
            progress_slot.error(in_user_words(exc))
        except Exception as exc:  # noqa: BLE001 - a failure inside a worker process: a message, not a traceback
            progress_slot.error(f"The sweep failed ({type(exc).__name__}: {exc}); the last result below is kept. "
                                "Run it again; if it fails again, please report it with these words.")
        else:
            progress_slot.empty()
            if seed is None:
                df = df.drop(columns=["seed"])   # per-run seeds would give the secret noise away
            previous = st.session_state.get(KEY) or {}
            st.session_state[KEY] = res = {"df": df, "metrics": list(metrics), "dataset": ds.name, "seed": seed,
                                           "apart": judged(df, ds, seed), "seconds": time.perf_counter() - t0,
                                           "run": previous.get("run", 0) + 1}
            draw(res, after_run=True)
    run_ended("sweep")
cancelled_note("sweep", kept=st.session_state.get(KEY) is not None, partial=SWEEP_PARTIAL in st.session_state)

