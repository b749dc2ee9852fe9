"""The high-dimensional k-means paper's figure (Balcan, Dick, Liang, Mou & Zhang 2017): Fig. 2
(objective against k and against ε)."""
from __future__ import annotations

from ..methods import preset
from ..sweeps import Sweep
from .common import Panel, _check, _median_at, _medians, _trend_check, load_dataset_name

_MIXTURE = {"kind": "gaussians", "d": 100, "k": 64, "sigma": 0.1, "random_state": 0}
_DIGITS = {"kind": "digits"}

#: every number each figure uses, per level (the table of docs/reproduce.md)
SETTINGS = {
    "highdim-fig2": {
        "full": dict(dataset={**_MIXTURE, "n": 100_000}, ks=[2, 4, 8, 16, 32, 64], k_eps=1.0,
                     epsilons=[0.1, 0.3, 1.0, 3.0, 10.0], eps_k=10, trials=5, delta=1e-6, digits=_DIGITS),
        "quick": dict(dataset={**_MIXTURE, "n": 20_000}, ks=[2, 8, 32], k_eps=1.0,
                      epsilons=[0.1, 1.0, 10.0], eps_k=10, trials=2, delta=1e-6, digits=_DIGITS),
        "tiny": dict(dataset={**_MIXTURE, "n": 1500, "d": 20, "k": 8}, ks=[2, 4], k_eps=1.0,
                     epsilons=[1.0], eps_k=4, trials=1, delta=1e-6, digits=_DIGITS),
    },
}


# ============================================================================ high-dimensional k-means Fig. 2
_KMEANS = ("k-means++", "candidate set", "SuLQ k-means", "s.a. k-means", "DP-Lloyd")


def _ratio_to_kmeanspp(df, by):
    ref = df[df["method"] == "k-means++"].groupby(by)["objective"].median()
    return df["objective"] / df[by].map(ref)


def _highdim_fig2(level, R):
    S = SETTINGS["highdim-fig2"][level]
    panels, checks = [], []
    # (c) objective against k at ε = 1: one algorithm entry per (method, k)
    labels, algs = {}, []
    for k in S["ks"]:
        for m in _KMEANS:
            a = preset(m)
            a["params"]["n_clusters"] = k
            a["label"] = f"{m} (k = {k})"
            labels[a["label"]] = (m, k)
            algs.append(a)
    sweep = Sweep(dataset=S["dataset"], algorithms=algs, epsilons=[S["k_eps"]], trials=S["trials"],
                  metrics=["objective", "objective_ratio"], delta=S["delta"], seed=R.seed)
    df = R.sweep("highdim-fig2", "vs-k", sweep)
    df.insert(df.columns.get_loc("algorithm") + 1, "method", df["algorithm"].map(lambda a: labels[a][0]))
    df.insert(df.columns.get_loc("method") + 1, "k", df["algorithm"].map(lambda a: labels[a][1]))
    df["ratio_kmeanspp"] = _ratio_to_kmeanspp(df, "k")
    title = (f"High-dimensional k-means, Fig. 2 (c): objective against k at ε = {S['k_eps']:g}, "
             f"{load_dataset_name(S['dataset'])}")
    plot = {"kind": "curves", "x": "k", "metrics": ["objective", "ratio_kmeanspp"], "group": "method", "title": title,
            "log_x": True, "log_y": True}
    panels.append(Panel("vs-k", df, plot, _medians(df, "ratio_kmeanspp", index="k", columns="method").round(3), title))
    med = df.groupby(["method", "k"])["ratio_kmeanspp"].median()
    for other in ("SuLQ k-means", "s.a. k-means", "DP-Lloyd"):
        wins = [k for k in S["ks"] if med[("candidate set", k)] < med[(other, k)]]
        checks.append(_check(f"vs-k: the candidate set's objective is below {other}'s at every k",
                             len(wins) == len(S["ks"]),
                             ", ".join(f"k={k}: {med[('candidate set', k)]:.3g} vs {med[(other, k)]:.3g}"
                                       for k in S["ks"]) + " (÷ k-means++)"))
    # (d) objective against ε at k = eps_k: on the mixture, and on real data (digits; the paper's is MNIST)
    for pname, dataset, where in (("vs-eps", S["dataset"], "the mixture"),
                                  ("digits-vs-eps", S["digits"], "scikit-learn's digits (the paper: MNIST)")):
        df, pchecks = _highdim_vs_eps(R, S, pname, dataset)
        title = f"High-dimensional k-means, Fig. 2 (d) on {where}: objective against ε at k = {S['eps_k']}"
        panels.append(Panel(pname, df, {"kind": "privacy_utility", "metrics": ["objective", "ratio_kmeanspp"],
                                        "title": title}, _medians(df, "ratio_kmeanspp").round(3), title))
        checks += pchecks
    return panels, checks, []


#: Fig. 2 (d): the methods of (c) and the candidate set with the paper's 8 SuLQ refinement iterations (§7)
_KMEANS_EPS = _KMEANS + ("candidate set + 8 SuLQ",)
#: "competitive with the non-private k-means": objective ≤ this × the k-means++ median (our threshold)
COMPETITIVE_RATIO = 1.2


def _highdim_vs_eps(R, S, pname, dataset):
    """One Fig. 2 (d) panel (objective against ε at k = eps_k) and the checks of its statements:
    the trends, the candidate set below SuLQ at every ε, "our algorithm is competitive with the
    non-private k-means algorithm even for small ε, while the SuLQ algorithm objective
    deteriorates quickly" (competitive: ratio ≤ COMPETITIVE_RATIO at every ε; deteriorates:
    SuLQ's ratio at the smallest ε is above the candidate set's), and the refinement's effect
    ("gave improved empirical performance": lower median at a majority of ε)."""
    k = S["eps_k"]
    algs = []
    for m in _KMEANS_EPS:
        a = preset(m)
        a["label"] = m
        a["params"]["n_clusters"] = k
        algs.append(a)
    sweep = Sweep(dataset=dataset, algorithms=algs, epsilons=S["epsilons"], trials=S["trials"],
                  metrics=["objective", "objective_ratio"], delta=S["delta"], seed=R.seed)
    df = R.sweep("highdim-fig2", pname, sweep)
    df.insert(df.columns.get_loc("algorithm") + 1, "method", df["algorithm"])
    df.insert(df.columns.get_loc("method") + 1, "k", k)
    df["ratio_kmeanspp"] = _ratio_to_kmeanspp(df, "k")
    eps = S["epsilons"]
    med = {(m, e): _median_at(df, m, e, "ratio_kmeanspp") for m in _KMEANS_EPS for e in eps}
    checks = []
    if len(eps) > 1:
        for m in ("candidate set", "SuLQ k-means", "s.a. k-means", "DP-Lloyd"):
            checks.append(_trend_check(df, m, "ratio_kmeanspp", pname))
    pairs = ", ".join(f"ε={e:g}: {med[('candidate set', e)]:.3g} vs {med[('SuLQ k-means', e)]:.3g}" for e in eps)
    checks.append(_check(f"{pname}: the candidate set's objective is below SuLQ k-means' at every ε",
                         all(med[("candidate set", e)] < med[("SuLQ k-means", e)] for e in eps),
                         pairs + " (÷ k-means++)"))
    lo = min(eps)
    checks.append(_check(f"{pname}: the candidate set is competitive with k-means++ even for small ε (objective ≤ "
                         f"{COMPETITIVE_RATIO:g} × k-means++ at every ε) while SuLQ's is worse at ε = {lo:g}",
                         all(med[("candidate set", e)] <= COMPETITIVE_RATIO for e in eps)
                         and med[("SuLQ k-means", lo)] > med[("candidate set", lo)], pairs + " (÷ k-means++)"))
    better = [e for e in eps if med[("candidate set + 8 SuLQ", e)] < med[("candidate set", e)]]
    checks.append(_check(f"{pname}: the paper's 8 SuLQ refinement iterations improve the candidate set's objective "
                         "(lower median at a majority of ε)", len(better) > len(eps) / 2,
                         ", ".join(f"ε={e:g}: {med[('candidate set + 8 SuLQ', e)]:.3g} vs {med[('candidate set', e)]:.3g}"
                                   for e in eps) + " (refined vs not, ÷ k-means++)"))
    return df, checks



RUNNERS = {"highdim-fig2": _highdim_fig2}
