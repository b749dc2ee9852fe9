"""The co-clustering paper's figures (Battaglia, Pensa et al.): Fig. 2 (NMI against ε beside its
peers on the CLUTO sets) and Fig. 3 (τ̂ against the number of iterations)."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ...data import CLUTO_NAMES
from ..methods import DPNMF_PAPER, preset
from ..sweeps import Sweep
from .common import Panel, _check, _median_at, _medians, _trend_check, half_decades

CLUTO_ALL = CLUTO_NAMES
CLUTO_FIG3 = ("classic3", "cstr", "hitech", "reviews")

#: every number each figure uses, per level (the table of docs/reproduce.md)
SETTINGS = {
    "cocluster-fig2": {
        "full": dict(datasets=CLUTO_ALL, epsilons=[0.1, 0.25, 0.5, 0.75, 1.0, 2.0, 3.0], trials=10, n_iter=4),
        "quick": dict(datasets=CLUTO_ALL, epsilons=[0.1, 0.5, 1.0, 3.0], trials=3, n_iter=4),
        "tiny": dict(datasets=("cstr",), epsilons=[0.5, 3.0], trials=1, n_iter=2),
    },
    "cocluster-fig3": {
        "full": dict(datasets=CLUTO_FIG3, iterations=list(range(2, 11)), epsilons=half_decades(-1, 1), trials=5),
        "quick": dict(datasets=CLUTO_FIG3, iterations=[2, 4, 6, 8, 10], epsilons=[0.1, 1.0, 10.0], trials=2),
        "tiny": dict(datasets=("cstr",), iterations=[2, 3], epsilons=[1.0, 10.0], trials=1),
    },
}


# ============================================================================ co-clustering Fig. 2
def _cocluster_fig2(level, R):
    S = SETTINGS["cocluster-fig2"][level]
    panels, checks = [], []
    dp = {"name": "dp_taucc", "label": "DP-τCC", "params": {"n_iter": S["n_iter"]}}
    peers = [{**preset(m), "label": m} for m in PEERS_FIG2]
    meds = {}
    for name in S["datasets"]:
        sweep = Sweep(dataset={"kind": "cluto", "name": name}, algorithms=[dp, *peers, preset("Fast-τCC")],
                      epsilons=S["epsilons"], trials=S["trials"], metrics=["nmi"], delta=DELTA_FIG2, seed=R.seed)
        df = R.sweep("cocluster-fig2", name, sweep)
        meds[name] = df[df["private"]]
        title = f"Co-clustering, Fig. 2: row NMI on CLUTO {name} (𝓘 = {S['n_iter']})"
        panels.append(Panel(name, df, {"kind": "privacy_utility", "metrics": ["nmi"], "title": title},
                            _medians(df, "nmi"), title))
        checks.append(_trend_check(df, "DP-τCC", "nmi", name, decreasing=False))
        hi = max(S["epsilons"])
        fast = float(df[df["algorithm"] == "Fast-τCC"]["nmi"].median())
        at_hi, at1 = _median_at(df, "DP-τCC", hi, "nmi"), _median_at(df, "DP-τCC", 1.0, "nmi")
        checks.append(_check(f"{name}: DP-τCC at ε = {hi:g} reaches ≥ 60 % of Fast-τCC's median NMI",
                             at_hi >= 0.6 * fast, f"{at_hi:.3f} vs {fast:.3f} ({at_hi / fast:.0%})"))
        if 1.0 in S["epsilons"] and hi > 1.0:
            checks.append(_check(f"{name}: DP-τCC is near its best by ε = 1 (median NMI at ε = 1 ≥ 80 % of ε = {hi:g})",
                                 at1 >= 0.8 * at_hi, f"{at1:.3f} vs {at_hi:.3f}"))
    return panels, checks + _peer_checks(meds, S["epsilons"]), []


#: the co-clustering paper's other peers in its Fig. 2 (presets of dpcore.lab.sweeps; DPNMF in the
#: paper's setting, whose NNDSVD start is not private, and its label says so)
PEERS_FIG2 = ("DP-KMeans", "DPHD", DPNMF_PAPER)
#: δ of the (ε, δ) peers: the paper's δ = 1e-5 for DPNMF (DPHD takes it too; DP-τCC and DP-KMeans are ε-DP)
DELTA_FIG2 = 1e-5


def _above(df, a, b, eps, alpha=0.05):
    """Are the runs of ``a`` at ``eps`` significantly above those of ``b`` (one-sided
    Mann–Whitney U, p < alpha)? Medians alone call a 0.002 gap between two methods at chance a win."""
    x = df[(df["algorithm"] == a) & np.isclose(df["epsilon"], eps)]["nmi"].dropna()
    y = df[(df["algorithm"] == b) & np.isclose(df["epsilon"], eps)]["nmi"].dropna()
    if len(x) < 2 or len(y) < 2:
        return False
    return bool(stats.mannwhitneyu(x, y, alternative="greater").pvalue < alpha)


def _peer_checks(runs, epsilons):
    """The co-clustering paper's two statements about its peers, on the private runs of every set.

    "DP-Kmeans and DPHD struggle in achieving performances that are comparable with those of
    DP-τCC and DP-NMF": holds if in at least 3/4 of the (set, ε) cells both DP-KMeans' and
    DPHD's median NMI are below both DP-τCC's and DPNMF's. "DPNMF outperforms DP-τCC only for
    small value of ε" ("with some exceptions"): holds if DPNMF's runs are significantly above
    DP-τCC's at the smallest ε (one-sided Mann–Whitney, p < 0.05) on a majority of sets and not
    significantly above them at ε = 1 (the paper runs DPNMF up to 0.99999) on a majority of sets."""
    dpnmf = DPNMF_PAPER
    cells, per_set = 0, []
    above_small, not_above_1 = [], []
    lo = min(epsilons)
    for name, df in runs.items():
        m = df.groupby(["algorithm", "epsilon"])["nmi"].median()
        get = lambda alg, e: float(m.get((alg, e), math.nan))      # noqa: E731
        ok = [max(get("DP-KMeans", e), get("DPHD", e)) < min(get("DP-τCC", e), get(dpnmf, e)) for e in epsilons]
        cells += sum(ok)
        per_set.append(f"{name} {sum(ok)}/{len(ok)}")
        if _above(df, dpnmf, "DP-τCC", lo):
            above_small.append(name)
        if 1.0 in epsilons and not _above(df, dpnmf, "DP-τCC", 1.0):
            not_above_1.append(name)
    n_cells = len(runs) * len(epsilons)
    out = [_check("DP-KMeans and DPHD struggle to reach DP-τCC and DPNMF (both below both in ≥ 3/4 of the "
                  "(set, ε) cells, medians)", cells >= 0.75 * n_cells,
                  f"{cells}/{n_cells} cells: " + ", ".join(per_set))]
    if 1.0 in epsilons and lo < 1.0:
        half = len(runs) / 2
        out.append(_check(f"DPNMF beats DP-τCC only at small ε (significantly above it at ε = {lo:g} and not at ε = 1, "
                          "on a majority of sets; one-sided Mann–Whitney, p < 0.05)",
                          len(above_small) > half and len(not_above_1) > half,
                          f"significantly above at ε = {lo:g}: {', '.join(above_small) or 'no set'}; not above at ε = 1: "
                          f"{', '.join(not_above_1) or 'no set'} (of {len(runs)} sets)"))
    return out


# ============================================================================ co-clustering Fig. 3
def _cocluster_fig3(level, R):
    S = SETTINGS["cocluster-fig3"][level]
    panels, checks = [], []
    labels = {f"DP-τCC, 𝓘 = {i}": i for i in S["iterations"]}
    algs = [{"name": "dp_taucc", "label": lab, "params": {"n_iter": i}} for lab, i in labels.items()]
    for name in S["datasets"]:
        sweep = Sweep(dataset={"kind": "cluto", "name": name}, algorithms=algs, epsilons=S["epsilons"],
                      trials=S["trials"], metrics=["tau_rc", "nmi"], seed=R.seed)
        df = R.sweep("cocluster-fig3", name, sweep)
        df.insert(df.columns.get_loc("epsilon") + 1, "n_iter", df["algorithm"].map(labels))
        title = f"Co-clustering, Fig. 3: τ̂_R|C of the released T against 𝓘, CLUTO {name}"
        plot = {"kind": "curves", "x": "n_iter", "metrics": ["tau_rc", "nmi"], "group": "epsilon", "group_name": "ε",
                "title": title, "x_title": "iterations 𝓘"}
        panels.append(Panel(name, df, plot, _medians(df, "tau_rc", index="n_iter", columns="epsilon").round(4),
                            title))
        lo, hi = min(S["epsilons"]), max(S["epsilons"])
        med = df.groupby(["n_iter", "epsilon"])["tau_rc"].median()
        up_eps = [i for i in S["iterations"] if med[(i, hi)] > med[(i, lo)]]
        checks.append(_check(f"{name}: τ̂ is higher at ε = {hi:g} than at ε = {lo:g} for every 𝓘",
                             len(up_eps) == len(S["iterations"]),
                             f"{len(up_eps)}/{len(S['iterations'])} values of 𝓘; at 𝓘 = {S['iterations'][0]}: "
                             f"{med[(S['iterations'][0], lo)]:.4f} → {med[(S['iterations'][0], hi)]:.4f}"))
        i0, i1 = S["iterations"][0], S["iterations"][-1]
        checks.append(_check(f"{name}: at ε = {hi:g}, τ̂ is higher with 𝓘 = {i1} than with 𝓘 = {i0}",
                             med[(i1, hi)] > med[(i0, hi)],
                             " → ".join(f"{med[(i, hi)]:.4f}" for i in S["iterations"]) + " over 𝓘"))
        if 1.0 in S["epsilons"] and len(S["iterations"]) > 2:   # the trade-off: ε/(2𝓘) per half-step
            curve = [med[(i, 1.0)] for i in S["iterations"]]
            best = S["iterations"][int(np.argmax(curve))]
            checks.append(_check(f"{name}: at ε = 1 more iterations stop paying (τ̂ at 𝓘 = {i1} below its best; "
                                 "paper: good trade-offs for 3 ≤ 𝓘 ≤ 5)", curve[-1] < max(curve),
                                 " → ".join(f"{v:.4f}" for v in curve) + f" over 𝓘; best 𝓘 = {best}"))
    return panels, checks, []



RUNNERS = {"cocluster-fig2": _cocluster_fig2, "cocluster-fig3": _cocluster_fig3}
