"""The Paper figures page: the papers' figures drawn from shipped results, and a live quick rerun.

Decisions
---------
- **Where the results come from.** ``python -m dpcore.reproduce ... --ship DIR`` writes compact
  CSVs and a manifest (:mod:`dpcore.lab.gallery`); the app reads :data:`dpcore.lab.gallery.GALLERY_DIR`
  (``sample_data/paper_figures``), or the folder named by ``$DPCLUST_GALLERY_DIR`` (tests and
  the browser suite point it at a folder of their own). Every function here takes the folder
  as a parameter.
- **Instant.** The folder is read once per server and change of its files
  (``st.cache_data`` keyed by the folder and the newest modification time of its
  ``manifest.json`` and ``panels.json`` files, so re-shipping shows at once); each panel's
  plotly figure is built once per server too (``st.cache_resource``: one figure object shared
  by all sessions, never changed by drawing it).
- **The picker** lists every figure of :data:`dpcore.lab.reproduce.FIGURES`, shipped or not, so
  that a link (``?pf_figure=…``, bound with ``bind="query-params"``) means the same thing
  whatever is shipped; a figure that is not shipped says which command writes it and still
  offers the quick rerun. The default is the first shipped figure.
- **Fig. 3** (subspace) has 8 chains × 4 ε × 3 traces per panel: one panel (random start or
  k-plane start) is drawn at a time, chosen with a radio (``pf_panel``, also in the link); its
  diagnostics table (split-R̂, ESS, mixing verdict) below, with the rows of the random and
  k-plane chains pooled (``init`` "random+kplane") under both panels.
- **Provenance** under each shipped figure: the command, the commit (short) and whether the
  tree had uncommitted changes, the date, the wall time and the level (taken from the
  figure's own manifest entry where it has these keys, else from the manifest).
- **Live quick rerun**: a form per figure whose button states the expected time (the quick
  timings of :mod:`dpcore.lab.reproduce`, 2 workers). It runs
  :func:`dpcore.lab.reproduce.run_figure` at :data:`RERUN_LEVEL` in a temporary folder, read back
  with :func:`dpcore.lab.gallery.load_gallery`; the progress bar follows the runner's log lines
  (one every ~10 s and at the end of every panel). The previous quick result is drawn before
  the run (:class:`ui.common.ResultSlot`), so Stop keeps it; results live in
  ``st.session_state[QUICK_KEY][figure]``. The quick result is drawn below the shipped one,
  labelled as such, with a word that it uses fewer runs so its checks may differ.
- **Checks** as a static table (``st.table``: long details wrap), "✅ yes" / "❌ no": the words
  stay readable where no emoji font is installed (the headless test browser has none). Each row
  shows our check (thresholds that are ours named so), the paper's own words beside it (the
  ``paper`` column of ``checks.csv``), the verdict and the numbers. Results shipped before that
  column existed are shown without it, with a line saying how to write them again.
- **Privacy.** These are reproductions with fixed public seeds on public data: not private
  releases, and nothing is recorded in the session privacy meter.
"""
from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from dpcore.lab.gallery import GALLERY_DIR, load_gallery
from dpcore.lab.reproduce import FIGURES, SETTINGS, run_figure
from ui.common import ResultSlot, in_user_words, show_chart

GALLERY_ENV = "DPCLUST_GALLERY_DIR"
PAGE = "paper_figures"
FIGURE_KEY, PANEL_KEY, QUICK_KEY = "pf_figure", "pf_panel", "paper_figures_quick"
FIG3, FIG3_PANELS = "subspace-fig3", ("random-init", "kplane-init")
#: the level and the workers of the live rerun (tests set "tiny" and 1)
RERUN_LEVEL = "quick"
RERUN_JOBS = min(2, os.cpu_count() or 1)
SHIP_COMMAND = "python -m dpcore.reproduce all --jobs 2 --ship sample_data/paper_figures"


@dataclass(frozen=True)
class FigureInfo:
    label: str           # the picker's text (also the link's)
    paper: str
    shows: str           # what the paper's figure shows and says
    ours: str            # what we run, and where it differs
    quick_seconds: int   # the quick level with 2 workers (measured, dpcore.lab.reproduce)
    quick: str           # what the quick level runs (dpcore.lab.reproduce.SETTINGS)


SUBSPACE = "Wang, Wang & Singh, *Differentially private subspace clustering*"
COCLUSTER = "Battaglia & Pensa, *Differentially private associative co-clustering*"
HIGHDIM = "Balcan et al., *Differentially private clustering in high-dimensional Euclidean spaces*"
INFO = {
    "subspace-fig1": FigureInfo(
        "Subspace clustering, Fig. 1: why k-means subspace solutions are unstable", SUBSPACE,
        "Evenly spaced points on the unit circle (d = 2, k = 2, q = 1), one additional point (a cross) and the optimal "
        "two lines. Paper: the global sensitivity of k-means subspace clustering \"could be as high as O(1)\", and "
        "\"no two straight lines could well approximate data uniformly distributed on a circle\": the reason "
        "sample-aggregate needs well-separated data, on which the solutions of random subsets agree.",
        "The optimal two lines computed exactly (every split of the points into two arcs of directions), on the circle "
        "and, for contrast, on two well-separated lines: with one more point here or there (24 points); how far the "
        "optimum moves as that point goes round (24 and 96 points); and the optimum of each of sample-aggregate's "
        "m = 48 random subsets of 1000 points, with eq. (5)'s r and Def. 3.2's φ².", 1,
        "angles every 1°, 5 draws of the 48 subsets"),
    "subspace-fig2": FigureInfo(
        "Subspace clustering, Fig. 2: utility against ε", SUBSPACE,
        "k-means cost and d_W to the true subspaces against ε for SuLQ, sample-aggregate and the Gibbs sampler, on "
        "two synthetic sets and Extended Yale B. Paper: sample-aggregate is poor unless ε is very large; Gibbs and "
        "SuLQ do well; SuLQ scales poorly with the dimension d, Gibbs is robust.",
        "The same three panels. The paper starts Gibbs from the non-private SSC/LRR solution; we run it from the "
        "private random start and from the (non-private) k-plane start, and release the last sample, not the mean "
        "of the last 100. On Yale B, d_W is to each subject's top-9 subspace and sample-aggregate is left out "
        "(n = 320 is too small for its subsets). A dotted line marks the median d_W (and cost) of random subspaces, "
        "the level of a release that is noise only. A fourth panel changes d alone (5, 10, 20; the left panel's n, k, "
        "q, σ; ε = 10) for SuLQ-10 and Gibbs, since the paper's two synthetic panels also differ in n and σ.", 70,
        "ε ∈ {0.1, 1, 10, 100, 1000}, 3 trials, Gibbs 200 sweeps (Yale B: 100, no k-plane start)"),
    FIG3: FigureInfo(
        "Subspace clustering, Fig. 3: Gibbs mixing", SUBSPACE,
        "The test statistic, the k-means cost and d_W of 8 Gibbs chains against the sweep (n = 1000, d = 10, "
        "k = q = 3, σ = 0.1). Paper: the sampler mixes quite well after 10,000 iterations at every ε.",
        "8 chains × 10,000 sweeps at ε = 0.1, 1, 10, 100 (the paper does not list its ε), from the private random "
        "start and from the k-plane start; split-R̂ and ESS decide whether the chains mixed. The paper starts every "
        "chain at one SSC/LRR solution: from a common start R̂ cannot see chains that do not mix, so we check "
        "dispersed starts — the random starts, and the random and k-plane chains pooled (16 chains).", 9,
        "500 sweeps × 8 chains"),
    # written from dpcore/lab/figures/cocluster.py by the subspace-figures helper: its owner reviews the words
    "cocluster-fig1": FigureInfo(
        "Co-clustering, Fig. 1: one changed cell and the released co-clustering", COCLUSTER,
        "Two 4 × 6 purchase matrices A and A′ that differ in one cell (a₃₃ = 0 or 1) and their co-clusterings. Paper "
        "(§3.3): that one cell changes the column clustering and the contingency table, so \"publishing the "
        "contingency matrix reveals whether the dataset is A or A′\".",
        "The exact best 2 × 2 co-clusterings of A and A′ (exhaustive search) beside Fast-τCC's; then DP-τCC (𝓘 = 1) "
        "run many times on each matrix at ε from 0.25 to 8: how often it releases each matrix's best column "
        "partition, and the observed privacy loss ln(P_A / P_A′) against the ε-DP bound.", 15,
        "ε ∈ {0.5, 2, 8}, 3 batches of 400 runs per matrix"),
    "cocluster-fig2": FigureInfo(
        "Co-clustering, Fig. 2: NMI against ε", COCLUSTER,
        "Row NMI of DP-τCC and its peers against ε on eight CLUTO document sets. Paper: an ascending curve; DP-τCC "
        "approaches its best for 0.5 ≤ ε ≤ 1 and is competitive with the non-private Fast-τCC with 4 iterations; "
        "DP-KMeans and DPHD struggle to reach DP-τCC and DPNMF; DPNMF beats DP-τCC only at small ε (its start "
        "reads the data).",
        "DP-τCC (𝓘 = 4); DP-KMeans (our sparse DP-Lloyd), DPHD (candidate-set k-means on L2-normalised documents), "
        "our (ε, δ)-DP DPNMF (blind start, δ = 1e-5, 4 iterations), and, labelled not private, DPNMF as published: "
        "the authors' code starts from an SVD (NNDSVD) of the raw data and steps the basis by 1e-4, so the basis "
        "never leaves that start and its NMI is the start's at every ε; their plotted curve put each document in "
        "its farthest topic, ours in its nearest. Fast-τCC is the reference; seven sets (sports is in no source we "
        "have). Relations: DP-τCC one cell ±1; DPHD and DPNMF one document replaced; DP-KMeans one document "
        "added/removed. The paper ran every peer under one cell with the per-coordinate sensitivity divided by d "
        "(far less noise, not a valid bound: one cell can move a whole document to another cluster), which is why "
        "DP-KMeans stays at NMI 0 here. The peer statements are checked on the DPNMF the paper ran.", 45,
        "ε ∈ {0.1, 0.5, 1, 3}, 3 runs, 7 sets, six methods"),
    "cocluster-fig3": FigureInfo(
        "Co-clustering, Fig. 3: τ̂ against iterations and ε", COCLUSTER,
        "τ̂_R|C of the released table against the number of iterations 𝓘 (2-10) and ε (0.1-10) on classic3, cstr, "
        "hitech and reviews. Paper: higher ε and 𝓘 give higher quality; good trade-offs for 3 ≤ 𝓘 ≤ 5.",
        "All seven sets (the paper shows four and says the observation holds for all); 𝓘 = 2…10, ε = 10^-1 … 10^1 "
        "in half decades, 5 runs; NMI in the CSV too. The trade-off is tested at ε = 1: runs with 3 ≤ 𝓘 ≤ 5 "
        "against 𝓘 = 10 (one-sided Mann–Whitney).", 25,
        "𝓘 ∈ {2, 3, 4, 5, 10}, ε ∈ {0.1, 1, 10}, 3 runs, 7 sets"),
    "highdim-fig2": FigureInfo(
        "High-dimensional k-means, Fig. 2: objective against k and ε", HIGHDIM,
        "The k-means objective against k (MNIST, CIFAR-10 and a mixture of 64 Gaussians in R^100, 100k points) and "
        "against ε at k = 10 on MNIST. Paper (§7): the candidate-set algorithm is \"competitive with non-private "
        "k-means++\" across all k and \"always outperforms SuLQ k-means\"; on MNIST it stays competitive \"even for "
        "small ε, while the SuLQ algorithm objective deteriorates quickly\"; 8 SuLQ refinement iterations \"gave "
        "improved empirical performance\".",
        "Panel (c) on the paper's synthetic mixture (n = 100,000, k up to 64); (d) on the same mixture and on "
        "scikit-learn's digits (1797 × 64, public radius 8; not MNIST, so the checks on them are ours, by analogy). "
        "SuLQ k-means starts in the public box [−Λ/√d, Λ/√d]^d (the paper: the data's box). The candidate set runs "
        "without (our default) and with the 8 refinement iterations. Beside them: sample-and-aggregate, DP-Lloyd "
        "and the LSH coreset, Google's open-source private k-means (today's practical peer, not in the paper; on "
        "Google's own k = 64 set it gives ≈ 4.7× k-means++ under Google's accounting, 12.6× under our replace-one: "
        "docs/benchmarks.md). Objectives ÷ the median k-means++; \"competitive\" (≤ 1.2×) is our threshold.", 40,
        "n = 20,000, k ∈ {2, 8, 32}, ε ∈ {0.1, 1, 10}, 2 runs; the digits in full"),
}
assert tuple(INFO) == FIGURES


def gallery_folder() -> Path:
    """The folder of shipped results: ``$DPCLUST_GALLERY_DIR`` if set, else GALLERY_DIR."""
    return Path(os.environ.get(GALLERY_ENV) or GALLERY_DIR)


def folder_stamp(folder) -> float:
    """The newest modification time of the manifest and panels.json files in ``folder`` (0 if none)."""
    folder = Path(folder)
    files = [folder / "manifest.json", *folder.glob("*/panels.json")]
    return max((f.stat().st_mtime for f in files if f.exists()), default=0.0)


@st.cache_data(max_entries=4, show_spinner=False)
def _load(folder: str, stamp: float):
    return load_gallery(folder)


def load_shipped(folder) -> tuple[dict, dict]:
    """(manifest, {figure name: ShippedFigure}) of ``folder``; ({}, {}) when nothing is there.

    Raises
    ------
    ValueError
        If the folder holds results that cannot be read (the message names the folder and
        says which command writes them again).
    """
    folder = Path(folder)
    try:
        manifest, figures = _load(str(folder), folder_stamp(folder) if folder.is_dir() else 0.0)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"the shipped results in {folder} cannot be read ({type(exc).__name__}: {exc}); write them "
                         f"again with `{SHIP_COMMAND}`") from None
    return manifest, {f.name: f for f in figures}


@st.cache_resource(max_entries=64, show_spinner=False)
def _shipped_figure(folder: str, stamp: float, figure: str, panel: str):
    _, figures = load_shipped(folder)
    return next(p for p in figures[figure].panels if p.name == panel).figure()


def provenance(manifest: dict, fig) -> str:
    """One line: which command made the shipped figure, at which commit, when, how long, which level."""
    entry = next((r for r in manifest.get("figures", []) if r.get("figure") == fig.name), {})
    get = lambda k: entry.get(k, manifest.get(k))    # noqa: E731 - a figure's own entry first
    if not manifest:
        return (f"No manifest.json next to these results: the command and commit that made them are unknown "
                f"({fig.n_runs:,} runs in {fig.seconds:,.0f} s, level **{fig.level}**).")
    commit, dirty = get("commit"), get("dirty")
    parts = [f"made by `{get('command') or '(command not recorded)'}`",
             (f"at commit `{commit[:7]}`" if commit else "outside a git checkout")
             + " (uncommitted changes: " + {True: "yes", False: "no"}.get(dirty, "unknown") + ")"]
    if get("created"):
        parts.append(f"on {get('created')}")
    workers = get("workers") or get("jobs")
    parts.append(f"in {duration(fig.seconds)} wall time ({fig.n_runs:,} runs"
                 + (f", {workers} worker{'s' if workers != 1 else ''})" if workers else ")"))
    parts.append(f"level **{fig.level}**")
    text = "Shipped results " + ", ".join(parts) + "."
    mem, total = manifest.get("peak_memory") or {}, manifest.get("total_seconds")
    if total is not None and mem:
        main_mb, worker_mb = mem.get("main_mb"), mem.get("largest_worker_mb")
        text += f" The whole command took {duration(total)}"
        if main_mb is not None and main_mb == main_mb:
            text += f"; peak memory {main_mb:,.0f} MB in the main process"
        text += (f", at most {worker_mb:,.0f} MB in each worker." if worker_mb is not None and worker_mb == worker_mb
                 else ", worker memory not measured.")
    return text


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 20 s``, ``1 h 05 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def has_paper_words(checks) -> bool:
    """Whether the checks carry the paper's words (results written before the ``paper`` column
    existed have it empty, or lack it)."""
    return "paper" in checks and bool((checks["paper"].fillna("").astype(str).str.strip() != "").any())


def checks_frame(checks):
    """The checks as a table: holds (✅/❌), our check, the paper's words (when the results have
    them) and the detail."""
    import pandas as pd
    cols = {"holds": ["✅ yes" if str(ok).lower() == "true" else "❌ no" for ok in checks["ok"]],
            "our check": checks["check"].astype(str)}
    if has_paper_words(checks):
        cols["the paper says"] = checks["paper"].fillna("").astype(str).str.strip().replace("", "–")
    cols["detail"] = checks["detail"].fillna("").astype(str)
    return pd.DataFrame(cols)


def show_checks(fig, title: str):
    n_ok = sum(str(ok).lower() == "true" for ok in fig.checks["ok"])
    st.markdown(f"**{title}: {n_ok} of {len(fig.checks)} hold**")
    if not has_paper_words(fig.checks):
        st.caption("These results were written before each check carried the paper's own words beside it; "
                   f"`python -m dpcore.reproduce {fig.name} --ship …` writes them again with them.")
    st.table(checks_frame(fig.checks), hide_index=True)   # static: long details wrap


def show_figure(fig, where: str, panel: str | None = None, folder=None, stamp=0.0):
    """Draw a figure's panels (only ``panel`` if given), its extra tables and its checks.
    ``folder`` given: a shipped figure, whose plotly figures are cached per server."""
    if panel is not None and panel not in {p.name for p in fig.panels}:
        st.info(f"The panel {panel!r} is not in these results (they have: "
                + ", ".join(p.name for p in fig.panels) + ").")
    for p in fig.panels:
        if panel is not None and p.name != panel:
            continue
        try:
            plot = _shipped_figure(str(folder), stamp, fig.name, p.name) if folder is not None else p.figure()
        except (ValueError, KeyError) as exc:
            st.error(f"Panel {p.name!r} cannot be drawn ({type(exc).__name__}: {exc}).")
            continue
        show_chart(plot, f"{fig.name} {p.name} {where}", key=f"pf_{where}_{fig.name}_{p.name}")
    diag = fig.extra.get("diagnostics.csv")
    if diag is not None:
        # the pooled chains ("random+kplane") belong to both panels
        start = None if panel is None else panel.removesuffix("-init")
        part = (diag if start is None or "init" not in diag
                else diag[diag["init"].astype(str).str.split("+").map(lambda inits: start in inits)])
        st.markdown("**Mixing diagnostics** (split-R̂ < 1.1 and ESS ≥ 100 on cost and d_W after the burn-in: mixed)")
        st.dataframe(part, hide_index=True)
    show_checks(fig, "The paper's statements, checked on these runs")


# ----------------------------------------------------------------------------- live quick rerun
_LOG = re.compile(r"\[(?P<fig>[^/\]]+)(?:/(?P<panel>[^\]]+))?\] (?P<done>\d+)/(?P<total>\d+) runs, (?P<sec>\d+) s")


def sweep_panels(figure: str, level: str) -> int:
    """How many sweeps (panels logged with run counts) ``figure`` runs at ``level``; 0 if none."""
    s = SETTINGS[figure][level]
    if "panels" in s:       # subspace-fig2: its panels and the d-only comparison's sweeps
        return len(s["panels"]) + len(s.get("d_scaling", {}).get("ds", []))
    if "datasets" in s:
        return len(s["datasets"])
    return 3 if "ks" in s else 0       # highdim-fig2: vs-k, vs-eps, digits-vs-eps


class Progress:
    """A log callback for :func:`run_figure` that moves a progress bar."""

    def __init__(self, bar, figure: str, level: str, expected: float):
        self.bar, self.n, self.expected = bar, sweep_panels(figure, level), expected
        self.seen: list[str] = []
        self.t0 = time.perf_counter()

    def __call__(self, message: str):
        m = _LOG.search(message)
        elapsed = time.perf_counter() - self.t0
        if m is None or not self.n:
            frac = min(0.95, elapsed / max(self.expected, 1.0))
            self.bar.progress(frac, text=f"{message.strip()} · {elapsed:.0f} s")
            return
        panel = m["panel"] or m["fig"]
        if panel not in self.seen:
            self.seen.append(panel)
        done, total = int(m["done"]), int(m["total"])
        frac = min(1.0, (len(self.seen) - 1 + done / max(total, 1)) / self.n)
        self.bar.progress(frac, text=f"panel {panel}: {done}/{total} runs · {elapsed:.0f} s "
                                     f"(expected ≈ {self.expected:.0f} s in all)")


def run_quick(figure: str, log) -> dict:
    """Run ``figure`` at :data:`RERUN_LEVEL` in a temporary folder; the result for the session.

    Returns
    -------
    dict
        ``fig`` (ShippedFigure read back from the run's files), ``seconds``, ``level``, ``when``.
    """
    with tempfile.TemporaryDirectory(prefix="dpclust-paper-figure-") as tmp:
        _, _, seconds = run_figure(figure, RERUN_LEVEL, out=tmp, jobs=RERUN_JOBS, log=log)
        _, figs = load_gallery(tmp)
    return {"fig": figs[0], "seconds": seconds, "level": RERUN_LEVEL, "when": time.strftime("%H:%M:%S")}


def show_quick(res, panel=None, shipped=None):
    if res is None:
        return
    fig = res["fig"]
    st.subheader(f"Your live rerun ({res['level']} level)")
    st.caption(f"Run at {res['when']} in {res['seconds']:.0f} s ({fig.n_runs:,} runs). The {res['level']} level uses "
               "fewer ε values, runs and sweeps than the shipped results, so its curves are noisier and its checks "
               "may differ from theirs." + ("" if shipped is None else
                                            f" Shipped: {sum(str(o).lower() == 'true' for o in shipped.checks['ok'])}"
                                            f" of {len(shipped.checks)} checks hold."))
    show_figure(fig, "quick", panel)


def quick_rerun(figure: str, panel=None, shipped=None):
    """The rerun form of ``figure`` and its result (previous one drawn first: Stop keeps it).
    ``panel``: the Fig. 3 panel to draw (None: all); ``shipped``: the shipped figure, whose
    count of holding checks is quoted next to the rerun's."""
    info, level = INFO[figure], RERUN_LEVEL
    results = st.session_state.setdefault(QUICK_KEY, {})
    with st.form(f"pf_rerun_{figure}"):
        st.markdown(f"**Rerun the {level} version live** ({info.quick}) — about {info.quick_seconds} s with 2 "
                    "workers (measured on an idle 2-core machine; longer while other runs share it). It runs here, on "
                    "this server, with the same fixed public seed.")
        go = st.form_submit_button(f"Rerun the {level} version (≈ {info.quick_seconds} s)", type="primary")
    progress_slot, slot = st.empty(), ResultSlot()
    with slot.previous():
        show_quick(results.get(figure), panel, shipped)
    if not go:
        return
    bar = progress_slot.progress(0.0, text=f"{figure} ({level}): starting the workers…")
    try:
        res = run_quick(figure, Progress(bar, figure, level, info.quick_seconds))
    except ValueError as exc:
        progress_slot.error(in_user_words(exc))
        return
    except Exception as exc:  # noqa: BLE001 - a failure inside a worker: a message, the last result stays
        progress_slot.error(f"The rerun failed ({type(exc).__name__}: {exc}); the last result is kept.")
        return
    progress_slot.empty()
    results[figure] = res
    with slot.latest():
        show_quick(res, panel, shipped)
