"""The Cluster page's "Compare ε" section: one click runs the chosen private method on the
current dataset at up to four values of ε and shows the results side by side (small
multiples, :func:`dpcore.plots.small_multiples.subspace_small_multiples`), the non-private
solver's result as the last panel.

Privacy: every private run is a release of its own. The comparison is planned and reserved
against the class budget before its first run (:func:`dpcore.lab.verdicts.plan_run`,
:func:`ui.meter.reserve`), and each run is charged with its verdict
(:func:`dpcore.lab.verdicts.judge_run`) as it finishes, so the comparison at ε = 1, 10, 100,
1000 spends 1111 on the dataset; the section says so. Noise is fresh and secret unless the
page's "reproducible (noise public)" box is ticked: then every panel uses the page's seed
(the same seed as a Run at that ε, so each panel can be reproduced alone) and the meter lists
the runs as not private.

Drawn as it runs: each ε panel appears as soon as its run has finished (a figure titled
*partial*, redrawn at most once a second and never more often than five times its own drawing
time), with a bar giving the runs done and the time left (ui.eta: none before a run after the
first has finished, then the time per run measured after the first). Stop (the
button top right) keeps the previous comparison below: it is drawn into its slot before the runs
start and replaced only after all of them succeeded. The panels of a comparison that did not
finish stay in the session, shown apart and labelled partial (they were charged: each ε's fit is
charged as it finishes), and the page says that the run was cancelled
(:func:`ui.common.cancelled_note`).

Instant ε (issue 33): on the page's private presets (:data:`dpcore.lab.ladders.LADDERS`;
chosen in the preset box and still the page's settings, :func:`ui.ladder.on_preset`) the
section opens with a slider over the preset's precomputed ε ladder, 0.01 … 1000
(:func:`instant_section`, drawn by :func:`ui.ladder.instant_epsilon` in a fragment): the
chosen ε's panel beside the non-private solver's, from the stored runs, in 2-D and with at
most :data:`ui.ladder.MAX_POINTS` points so that moving ε redraws at once. These runs have a
public seed: a demonstration, not a private release, and nothing is charged. Its "Run live"
button stores the ε under :data:`LIVE_KEY` and reruns the page, which then runs this section's
comparison at that one ε (:func:`run_comparison`: planned, reserved, judged and charged as a
Compare ε of one value).
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
import streamlit as st

from dpcore.lab.ladders import find_ladder
from dpcore.lab.verdicts import RunContext, judge_run, plan_run
from dpcore.plots.small_multiples import subspace_small_multiples
from dpcore.privacy import basic_composition
from ui.cluster import (BIND, EPSILON_GRID, METHODS, SA_SOLVERS, evaluate, fmt, reference_name, run_method,
                        run_reference)
from ui.common import (DRAW_FACTOR, MIN_REDRAW_S, ResultSlot, cancelled_note, privacy_statement, redraw_due,
                       run_button, run_ended, run_guarded, run_started, show_chart)
from ui.ladder import MAX_POINTS, instant_epsilon, on_preset
from ui.eta import WAITING_TEXT, TimeLeft
from ui.meter import epsilon_odds, reserve
from ui.seeds import seed_label
from ui.share import list_of

CMP_KEY = "cl_cmp_eps"
CMP_RESULT_KEY = "cluster_eps_compare"
#: session key: the panels of a comparison that did not finish (drawn, so charged), labelled partial
CMP_PARTIAL_KEY = "cluster_eps_partial"
#: the name of the comparison's run for :func:`ui.common.run_started` (a cancelled one is named)
RUN_NAME = "cluster_eps"
#: most ε values in one comparison (panels: these plus the non-private one)
MAX_EPS = 4
#: from "the noise wins" to "close to non-private" on the page's datasets (Fig. 2, lines and
#: planes in R³): measured with secret noise, see the presets' texts
DEFAULT_EPS = [1.0, 10.0, 100.0, 1000.0]
#: the instant-ε slider's key, and the session key of its "Run live" (the ε to run, read once)
LADDER_KEY, LIVE_KEY = "cl_ladder_eps", "cl_ladder_live"


def eps_label(e) -> str:
    return f"{e:g}"


def _at_most(parse, n):
    """A list parser that also refuses more than ``n`` values (the multiselect's own limit)."""
    def checked(texts):
        values = parse(texts)
        if len(values) > n:
            raise ValueError(f"at most {n} values; got {len(values)}")
        return values
    checked.is_list = True
    return checked


#: the section's link parameters, with the widget's own options, labels and limit
URL_FIELDS = {CMP_KEY: _at_most(list_of(EPSILON_GRID, eps_label), MAX_EPS)}


def _metric(m):
    """The panel title's metrics, 3 significant digits: accuracy when the classes are known and
    d_W when the true subspaces are (both: for lines in R³ random lines already score an accuracy
    of about 0.7, so accuracy alone flatters a bad release), else the cost."""
    out = []
    if m["accuracy"] is not None:
        out.append(f"accuracy {m['accuracy']:.3g}")
    if m["d_W to truth"] is not None:
        out.append(f"d_W {m['d_W to truth']:.3g}")
    return ", ".join(out) or f"cost {m['k-means subspace cost (eq. 3)']:.3g}"


def _figure(ds, panels, title=""):
    return subspace_small_multiples(ds.X, panels, true=ds.subspaces, reference=ds.labels,
                                    cols=min(len(panels), 3 if len(panels) > 4 else len(panels)),
                                    found_name="found", title=title)


def partial_title(done, total):
    """The title of a running comparison's figure; it reads right when Stop freezes it."""
    return (f"PARTIAL comparison: {done} of {total} ε panels finished (the non-private solver comes last); "
            "not the finished comparison")


def progress_text(done, total, elapsed, left=None):
    """The bar's text: ε runs done, time spent and ``left``, the time left in words
    (:class:`ui.eta.TimeLeft` over the runs and the non-private solver, counted as one more:
    none until a run after the first has finished), or None."""
    eta = f", {left}" if left and left != WAITING_TEXT else ""
    step = (f"ε run {done + 1} of {total}" if done < total else "the non-private solver")
    return (f"Compare ε: {done} of {total} ε runs done, now {step} · {elapsed:.0f} s{eta}. Stop, top right, "
            "cancels; the last finished comparison stays below.")


def run_comparison(key, params, k, q, seed, ds, eps_values, bar, show=None, clock=time.perf_counter,
                   min_interval=MIN_REDRAW_S, draw_factor=DRAW_FACTOR):
    """Fit method ``key`` at every ε of ``eps_values`` and its non-private reference; record every
    run in the meter, with its verdict, as soon as it is released. Returns the stored comparison.

    ``show(fig, done)``, when given, is called with the figure of the finished ε panels (titled
    :func:`partial_title`) after a run, at most every ``min_interval`` seconds (and
    ``draw_factor`` × the last drawing's time), never after the last ε (the finished
    comparison is drawn instead). The finished panels are kept under :data:`CMP_PARTIAL_KEY`
    until the caller has stored the finished comparison."""
    method = METHODS[key]
    context = RunContext(seed=seed, dataset=ds)
    # every panel is a release: the class budget sees them all before the first
    plans = [plan_run(key, method.build({**params, "epsilon": eps}, k, q, seed), ds.X, context) for eps in eps_values]
    with reserve(plans, ds) as reservation:
        return _run_panels(reservation, context, key, params, k, q, seed, ds, eps_values, bar, show, clock,
                           min_interval, draw_factor)


def _run_panels(reservation, context, key, params, k, q, seed, ds, eps_values, bar, show, clock, min_interval,
                draw_factor):
    method = METHODS[key]
    panels, rows, ledgers, verdicts = [], [], [], []
    drawn = ds.subspaces is not None or ds.d <= 3 or q <= 2    # else q-dimensional discs would only hide the points
    n, t0, last, cost = len(eps_values), clock(), -math.inf, 0.0
    eta = TimeLeft(n + 1, clock=clock)
    for i, eps in enumerate(eps_values):
        bar.progress(i / (n + 1), text=progress_text(i, n, clock() - t0, eta.text(i) if i else None))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the single run shows the estimator's warnings
            model, seconds, _, _ = run_method(key, {**params, "epsilon": eps}, k, q, seed, ds.X, with_reference=False)
        verdict = judge_run(key, model, context, label=f"{method.label}, ε = {eps_label(eps)} (Compare ε)")
        reservation.charge(verdict)
        verdicts.append(verdict)
        ledgers.append(model.ledger_.total())
        m = evaluate(ds, model, seconds)
        panels.append(dict(title=f"ε = {eps_label(eps)}: {_metric(m)}", labels=model.labels_,
                           subspaces=model.subspaces_ if drawn else None))
        rows.append({"run": f"ε = {eps_label(eps)} (private)", **m})
        # charged above, so kept (a stopped comparison shows what it paid for); the figure is built when shown
        st.session_state[CMP_PARTIAL_KEY] = dict(panels=list(panels), done=i + 1, of=n, dataset=ds.name,
                                                 label=method.label)
        now = clock()
        if show is not None and i + 1 < n and redraw_due(now - last, cost, min_interval, draw_factor):
            show(_figure(ds, panels, partial_title(i + 1, n)), i + 1)
            last = clock()
            cost = last - now
    bar.progress(n / (n + 1), text=progress_text(n, n, clock() - t0, eta.text(n)))
    ref_name = reference_name(key, params)
    reference = run_reference(key, params, k, q, seed, ds.X)
    if reference is not None:
        m = evaluate(ds, reference, None)
        label = SA_SOLVERS.get(ref_name, ref_name)
        panels.append(dict(title=f"non-private {label}: {_metric(m)}", labels=reference.labels_,
                           subspaces=reference.subspaces_ if drawn else None))
        rows.append({"run": f"non-private {label}", **m})
    eps_total, delta_total = basic_composition([e for e, _ in ledgers], [d for _, d in ledgers])
    fig = _figure(ds, panels)
    return dict(method=key, label=method.label, dataset=ds.name, d=ds.d, eps=list(eps_values), seed=seed, fig=fig,
                rows=rows, eps_total=eps_total, delta_total=delta_total, reference=reference is not None,
                ref_name=ref_name, classes=ds.labels is not None, truth=ds.subspaces is not None, drawn=drawn, q=q,
                verdict=next((v for v in verdicts if not v.private), verdicts[0]) if verdicts else None)


def _show_partial(container, ds):
    """The panels of a comparison that did not finish, in an expander labelled partial."""
    part = st.session_state.get(CMP_PARTIAL_KEY)
    if not part:
        return
    if part["dataset"] != ds.name:        # drawn on the data it was computed on only
        return
    if "fig" not in part:                 # built once
        part["fig"] = _figure(ds, part["panels"], partial_title(part["done"], part["of"]))
    with container.container():
        with st.expander(f"Partial comparison that did not finish ({part['label']} on {part['dataset']}): "
                         f"{part['done']} of {part['of']} ε panels"):
            st.caption("These panels were drawn while that comparison ran, and the meter has recorded their runs. "
                       "A partial comparison: not the finished one, and not the one below.")
            show_chart(part["fig"], "cluster compare eps partial", key="cl_cmp_partial_kept")


def _draw(cmp, current_dataset, current_method=None):
    """The stored comparison: small multiples, their table and the privacy box with the ε spent."""
    import pandas as pd

    if cmp["dataset"] != current_dataset:
        st.warning(f"This comparison was computed on another dataset ({cmp['dataset']}); press Compare ε to "
                   "compare on the current one.")
    if current_method is not None and cmp["method"] != current_method:
        st.warning(f"This comparison was computed with {cmp['label']}, not with the method chosen above; press "
                   "Compare ε to compare the chosen one.")
    show_chart(cmp["fig"], f"cluster compare eps {cmp['method']} {cmp['dataset']} "
               + " ".join(eps_label(e) for e in cmp["eps"]))
    public = cmp["seed"] is not None
    n = len(cmp["eps"])
    st.caption(f"{cmp['label']} at ε = {', '.join(eps_label(e) for e in cmp['eps'])}"
               + (", then the non-private solver on all the data" if cmp["reference"] else "")
               + ". Same axes in every panel; colours = clusters"
               + (", renumbered to match the true classes so that a colour means the same class in every panel"
                  if cmp["classes"] else "")
               + ("; the legend names the line styles of " + ("the true subspaces and " if cmp["truth"] else "")
                  + "each panel's own subspaces. " if cmp["drawn"] else
                  f" (the {cmp['q']}-dimensional subspaces are not drawn: they have no picture in 3-D). ")
               + "Each private panel is one run with its own noise"
               + ("" if not public else f" (public seed {cmp['seed']} in every panel)")
               + ": run it again and the panels change, so judge the trend, not a single panel."
               + ("" if cmp["d"] <= 3 else f" The data (d = {cmp['d']}) are shown through their top three principal "
                  "directions (PC 1–3), where subspaces that are apart can overlap: read the titles and the table."))
    cols = ["accuracy", "NMI", "d_W to truth", "k-means subspace cost (eq. 3)"]
    table = pd.DataFrame([{"run": r["run"], **{("cost (eq. 3)" if c.startswith("k-means") else c): fmt(r[c])
                                               for c in cols}} for r in cmp["rows"]]).set_index("run")
    st.dataframe(table, width="stretch")
    releases = "1 private release" if n == 1 else f"{n} private releases"
    total = (f"ε = {fmt(cmp['eps_total'])}" if n == 1 else
             "ε = " + " + ".join(eps_label(e) for e in cmp["eps"]) + f" = {fmt(cmp['eps_total'])}")
    verdict = cmp.get("verdict")
    spent = (f"This comparison made {releases} on {cmp['dataset']}: {total} in total (δ = {cmp['delta_total']:.3g}), "
             "by sequential composition; the privacy meter in the sidebar counts every one.")
    if verdict is not None and not verdict.private:
        spent = (f"This comparison made {n} run{'s' if n > 1 else ''} that {'are' if n > 1 else 'is'} NOT private "
                 f"({verdict.reason}): the meter lists {'them' if n > 1 else 'it'} as not private (nominal ε "
                 f"{fmt(cmp['eps_total'])}), and the dataset's ε is ∞ from now on.")
    privacy_statement(
        private=["the released subspaces of each ε panel (one release per panel" + (")" if n == 1 else f", {n} in all)")],
        not_private=["the colours: raw points assigned to each panel's subspaces", "the metrics in the titles and the "
                     "table (computed from the raw data and the truth, to evaluate)",
                     "the last panel: the non-private solver on the raw data"],
        caveats=[spent], verdict=verdict)


# ----------------------------------------------------------------------------- instant ε (a preset's ladder)
def ladder_of(spec, key, k, q, params):
    """The ladder (:class:`dpcore.lab.ladders.LadderSpec`) of the page's settings, or None: the
    dataset ``spec``, the method ``key``, k, q and the method's parameters (its ε aside; δ
    left blank)."""
    p = {name: v for name, v in params.items() if name != "epsilon" and not (name == "delta" and v is None)}
    return on_preset("cluster", find_ladder("cluster", METHODS[key].name, spec,
                                            {"n_clusters": int(k), "subspace_dim": int(q), **p}))


def _drawn(ds, q):
    """Whether subspaces are drawn (as a Compare ε does)."""
    return ds.subspaces is not None or ds.d <= 3 or q <= 2


def _metrics_of(ladder, values):
    """A stored metrics row as :func:`ui.cluster.evaluate`'s dict (None where not known)."""
    return {name: (None if v != v else float(v)) for name, v in zip(ladder.meta["metrics"], values)}


def edge_on_view(ds):
    """A 2-D view of two planes through 0 in R³ that shows both edge-on: the plane orthogonal to
    the line where the true planes meet (each plane is then seen as a line). Its orthonormal
    basis (3, 2), or None for other data (the instant figures then use the top two principal
    directions). A display choice, read off the public truth of a synthetic dataset."""
    U = ds.subspaces
    if ds.d != 3 or U is None or U.shape != (2, 3, 2):
        return None
    line = np.cross(np.cross(*U[0].T), np.cross(*U[1].T))
    if np.linalg.norm(line) < 1e-9:                 # the same plane twice: no edge-on view
        return None
    basis = np.linalg.svd(np.eye(3) - np.outer(line, line) / (line @ line))[0][:, :2]
    return basis


def instant_figures(ds, ladder, eps):
    """(the ε panel, the non-private panel) of a rung: 2-D (the top two principal directions, or
    two planes in R³ seen edge-on, :func:`edge_on_view`), at most :data:`ui.ladder.MAX_POINTS`
    points, the same axes in both (the non-private figure's, the same at every ε)."""
    r, drawn = ladder.rung(eps), _drawn(ds, ladder.spec.params["subspace_dim"])
    view = edge_on_view(ds)
    X, true = (ds.X, ds.subspaces) if view is None else (ds.X @ view, view.T @ ds.subspaces)

    def one(title, labels, subspaces):
        if view is not None and subspaces is not None:
            subspaces = view.T @ subspaces
        fig = subspace_small_multiples(X, [dict(title=title, labels=labels, subspaces=subspaces if drawn else None)],
                                       true=true, reference=ds.labels, dims=2, cols=1, found_name="found",
                                       max_points=MAX_POINTS, panel_height=360)
        fig.update_layout(height=500, margin=dict(b=70), legend=dict(y=-0.14))
        if view is not None:
            fig.update_xaxes(title_text="edge-on view 1")
            fig.update_yaxes(title_text="edge-on view 2")
        return fig

    ref_label = SA_SOLVERS.get(ladder.spec.reference, ladder.meta["reference_label"])
    ref = one(f"non-private {ref_label}: {_metric(_metrics_of(ladder, r['ref_metrics']))}", r["ref_labels"],
              r["ref_subspaces"])
    fig = one(f"ε = {eps_label(eps)}: {_metric(_metrics_of(ladder, r['metrics']))}", r["labels"], r["subspaces"])
    fig.update_xaxes(range=list(ref.layout.xaxis.range))
    fig.update_yaxes(range=list(ref.layout.yaxis.range))
    return fig, ref


def instant_section(ds, ladder_spec, key, k, q, params, seed):
    """The slider over the preset's ladder (:func:`ui.ladder.instant_epsilon`), its two panels and
    "Run live" (a Compare ε at the chosen ε, see :data:`LIVE_KEY`)."""
    method = METHODS[key]

    def draw(ladder, eps, figures):
        fig, ref = figures
        c1, c2 = st.columns(2)
        show_chart(fig, f"cluster instant eps {eps_label(eps)} {ds.name}", container=c1, key="cl_ladder_fig")
        show_chart(ref, f"cluster instant non-private {ds.name}", container=c2, key="cl_ladder_ref")
        m = _metrics_of(ladder, ladder.rung(eps)["metrics"])
        where = ("the data's own coordinates" if ds.d <= 2 else
                 "R³ seen along the line where the two true planes meet, so that both true planes show edge-on, as "
                 "lines, and so does a found plane close to one (every plane is drawn as its line in this view)"
                 if edge_on_view(ds) is not None else
                 f"the data (d = {ds.d}) through their top two principal directions (PC 1–2), where subspaces "
                 "that are apart can overlap: read the titles")
        drawn_points = f"at most {MAX_POINTS} of the {ds.n:,} points" if ds.n > MAX_POINTS else f"all {ds.n:,} points"
        cost = fmt(m["k-means subspace cost (eq. 3)"])
        st.caption(f"Left: {method.label.split(' (')[0]} at ε = {eps_label(eps)} (accuracy {fmt(m['accuracy'])}, "
                   f"NMI {fmt(m['NMI'])}, d_W {fmt(m['d_W to truth'])}, cost {cost}); "
                   "right: the non-private solver on all the data, the same at every ε. Colours = clusters"
                   + (", renumbered to match the true classes" if ds.labels is not None else "")
                   + f". Drawn in 2-D so that moving ε redraws at once: {where}; {drawn_points}. "
                   "One run per ε with one public seed: another seed moves the numbers, so "
                   "judge the trend. Compare ε below draws the same comparison live"
                   + (" in 3-D." if ds.d > 2 else "."))

    def live_words(ladder, eps):
        verdict = plan_run(key, method.build({**params, "epsilon": eps}, k, q, seed), ds.X,
                           RunContext(seed=seed, dataset=ds))
        charged = (f"one private release of ε = {eps_label(eps)}, charged to the privacy meter" if verdict.private else
                   f"NOT private ({verdict.reason}): the meter lists it as not private")
        return (f"Run live = Compare ε at this one ε: {method.label.split(' (')[0]}, then the non-private solver; "
                f"noise: {seed_label(seed)}; {charged}.")

    st.markdown("**Instant ε** — this preset's method at every ε of a ladder, computed in advance: move the "
                "slider.")
    instant_epsilon(ladder_spec, key=LADDER_KEY, default=params.get("epsilon", 1.0),
                    figures=lambda ladder, eps: instant_figures(ds, ladder, eps), draw=draw, live_key=LIVE_KEY,
                    live_words=live_words, words_key=seed)


def compare_section(ds, key, k, q, params, seed, spec=None):
    """The "Compare ε" section: its own form (the ε values), a progress bar while it runs, the
    small multiples and the ε spent. ``params`` are the method's parameters from the page's
    form (their ε is replaced by each compared value); ``seed`` is None (secret noise) or the
    page's public seed. ``spec``: the dataset's spec; on a preset with a ladder the section
    opens with its instant-ε slider (:func:`instant_section`)."""
    st.subheader("Compare ε side by side")
    method = METHODS[key]
    live = st.session_state.pop(LIVE_KEY, None)       # "Run live" of the instant slider: one ε, run below
    if not method.private:
        st.caption("Choose a private method above (sample-aggregate or SuLQ k-plane) to run it at several values "
                   "of ε with one click and see the results side by side.")
        return
    ladder_spec = ladder_of(spec, key, k, q, params) if spec is not None else None
    if ladder_spec is not None:
        instant_section(ds, ladder_spec, key, k, q, params, seed)
    with st.form("cluster_eps_form"):
        eps_values = st.multiselect(
            f"values of ε (at most {MAX_EPS})", EPSILON_GRID, default=DEFAULT_EPS, format_func=eps_label,
            max_selections=MAX_EPS, key=CMP_KEY, bind=BIND,
            help="Each value is one private run of the method chosen above, with its parameters (k, q and the "
                 "method's settings; ε replaced by this value). Each run spends its ε: the comparison spends "
                 "their sum.")
        epsilon_odds(st, min(eps_values) if eps_values else 1.0)
        if len(eps_values) > 1:
            epsilon_odds(st, max(eps_values))
        go = run_button(st, "Compare ε", type="primary")
    st.caption(f"Runs {method.label} on {ds.name} at each ε (each a private release, all added to the meter), "
               f"then the non-private solver; seed: {seed_label(seed)}.")
    progress_slot, live_slot, kept_slot, result_slot = st.empty(), st.empty(), st.empty(), ResultSlot()
    previous = st.session_state.get(CMP_RESULT_KEY)
    if previous is not None:
        with result_slot.previous():
            _draw(previous, ds.name, key)
    _show_partial(kept_slot, ds)
    if go or live is not None:
        _compare(progress_slot, live_slot, kept_slot, result_slot, previous, ds, key, k, q, params, seed,
                 eps_values if go else [live])
    cancelled_note(RUN_NAME, kept=st.session_state.get(CMP_RESULT_KEY) is not None,
                   partial=CMP_PARTIAL_KEY in st.session_state)


def _compare(progress_slot, live_slot, kept_slot, result_slot, previous, ds, key, k, q, params, seed, eps_values):
    """Run the comparison (Compare ε pressed), drawing its panels as they finish."""
    kept = " The previous comparison is kept." if previous is not None else ""
    if not eps_values:
        progress_slot.error("Choose at least one value of ε to compare." + kept)
        return
    run_started(RUN_NAME)
    draws = []

    def show(fig, done):
        draws.append(done)
        show_chart(fig, "cluster compare eps partial", container=live_slot, key=f"cl_cmp_live_{len(draws)}")

    with progress_slot.container():       # the bar and any error stay in this slot: nothing below moves
        kept_slot.empty()
        st.session_state.pop(CMP_PARTIAL_KEY, None)
        bar = st.progress(0.0, text="Compare ε: starting…")
        out = run_guarded(run_comparison, key, params, k, q, seed, ds, sorted(eps_values), bar, show)
        if out is None:
            bar.progress(1.0, text="Compare ε failed." + kept)
            run_ended(RUN_NAME)
            return
    progress_slot.empty()
    live_slot.empty()
    st.session_state.pop(CMP_PARTIAL_KEY, None)
    st.session_state[CMP_RESULT_KEY] = out
    with result_slot.latest():
        _draw(out, ds.name, key)
    run_ended(RUN_NAME)
