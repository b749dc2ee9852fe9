"""The subspace clustering paper's figures (Wang, Wang & Singh 2015): Fig. 2 (privacy–utility on
synthetic subspaces and Yale B) and Fig. 3 (the Gibbs sampler's mixing)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ...data import PAPER_SPECS, load_dataset
from ...subspace.common import single_threaded
from ..methods import get_method, preset, run_seed
from ..sweeps import Sweep
from .common import Panel, _check, _median_at, _medians, _trend_check, half_decades, load_dataset_name

_SUB_LEFT = {"kind": "subspaces", "n": 5000, "d": 5, "k": 3, "q": 3, "sigma": 0.01, "random_state": 0}
_SUB_MIDDLE = PAPER_SPECS["fig2_middle"]
_YALEB = PAPER_SPECS["yaleb_5"]

#: every number each figure uses, per level (the table of docs/reproduce.md)
SETTINGS = {
    "subspace-fig2": {
        "full": dict(epsilons=half_decades(-1, 3), trials=5,
                     panels={"left": dict(dataset=_SUB_LEFT, gibbs_iter=10_000, ssc=True),
                             "middle": dict(dataset=_SUB_MIDDLE, gibbs_iter=10_000, ssc=True),
                             "yaleb": dict(dataset=_YALEB, gibbs_iter=10_000, ssc=True)}),
        "quick": dict(epsilons=[0.1, 1.0, 10.0, 100.0, 1000.0], trials=3,
                      panels={"left": dict(dataset=_SUB_LEFT, gibbs_iter=200, ssc=False),
                              "middle": dict(dataset=_SUB_MIDDLE, gibbs_iter=200, ssc=True),
                              "yaleb": dict(dataset=_YALEB, gibbs_iter=100, ssc=True, gibbs_kplane=False)}),
        "tiny": dict(epsilons=[1.0, 1000.0], trials=1,
                     panels={"left": dict(dataset={**_SUB_LEFT, "n": 400}, gibbs_iter=10, ssc=False),
                             "middle": dict(dataset={**_SUB_MIDDLE, "n": 300}, gibbs_iter=10, ssc=False),
                             "yaleb": dict(dataset={**_YALEB, "n_per_subject": 12}, gibbs_iter=5, ssc=False)}),
    },
    "subspace-fig3": {
        "full": dict(dataset=_SUB_MIDDLE, epsilons=[0.1, 1.0, 10.0, 100.0], n_iter=10_000, n_chains=8,
                     inits=["random", "kplane"]),
        "quick": dict(dataset=_SUB_MIDDLE, epsilons=[0.1, 1.0, 10.0, 100.0], n_iter=500, n_chains=8,
                      inits=["random", "kplane"]),
        "tiny": dict(dataset={**_SUB_MIDDLE, "n": 200}, epsilons=[1.0, 100.0], n_iter=20, n_chains=2,
                     inits=["random"]),
    },
}


# ============================================================================ subspace Fig. 2
def _subspace_fig2(level, R):
    S = SETTINGS["subspace-fig2"][level]
    panels, checks = [], []
    for pname, P in S["panels"].items():
        ds_kind = P["dataset"]["kind"]
        dw = "d_W" if ds_kind == "subspaces" else "d_W_class"
        algs = [preset("SuLQ-10"), preset("SuLQ-50")]
        if ds_kind == "subspaces":  # Yale B: n = 320 allows ≤ 6 subsets of k(q + 1) = 50 points: Alg. 1's
            # rule "no point in more than √m subsets" is never met
            algs += [preset("s.a. TSC"), preset("s.a. SSC")]
        algs.append({"name": "gibbs", "label": "Gibbs", "params": {"n_iter": P["gibbs_iter"], "init": "random"}})
        if P.get("gibbs_kplane", True):
            algs.append({"name": "gibbs", "label": "Gibbs, k-plane start (not private)",
                         "params": {"n_iter": P["gibbs_iter"], "init": "kplane"}})
        algs.append(preset("k-plane"))
        if P["ssc"]:
            algs.append(preset("SSC"))
        sweep = Sweep(dataset=P["dataset"], algorithms=algs, epsilons=S["epsilons"], trials=S["trials"],
                      metrics=["cost", dw], seed=R.seed)
        df = R.sweep("subspace-fig2", pname, sweep)
        title = f"Subspace clustering, Fig. 2 ({pname}): {load_dataset_name(P['dataset'])}"
        panels.append(Panel(pname, df, {"kind": "privacy_utility", "metrics": ["cost", dw], "title": title},
                            _medians(df, dw), title))
        private = [a["label"] for a in algs if get_method(a["name"]).private]
        for alg in private:
            checks.append(_trend_check(df, alg, dw, pname))
        if ds_kind == "subspaces" and 10.0 in S["epsilons"]:
            at10 = df[np.isclose(df["epsilon"], 10.0)]
            sa = {a: _median_at(df, a, 10.0, dw) for a in ("s.a. TSC", "s.a. SSC")}
            sa_min = at10[at10["algorithm"].isin(list(sa))][dw].min()
            for alg in ("Gibbs", "Gibbs, k-plane start (not private)", "SuLQ-10", "SuLQ-50"):
                v = _median_at(df, alg, 10.0, dw)
                mine = at10[at10["algorithm"] == alg][dw]
                sep = bool((mine < sa_min).all())
                # below each sample-aggregate method: one-sided Mann–Whitney p < 0.05 (medians alone call a
                # difference between methods that all sit at the level of random subspaces a win)
                p = max(stats.mannwhitneyu(mine, at10[at10["algorithm"] == a][dw], alternative="less").pvalue
                        for a in sa)
                checks.append(_check(f"{pname}: at ε = 10 the {dw} of {alg} is below sample-aggregate's (TSC and SSC; "
                                     "one-sided Mann–Whitney, p < 0.05)", v < min(sa.values()) and p < 0.05,
                                     f"medians {alg} {v:.3f} vs s.a. TSC {sa['s.a. TSC']:.3f}, s.a. SSC "
                                     f"{sa['s.a. SSC']:.3f}; p = {p:.2g}; every run below every s.a. run: "
                                     f"{'yes' if sep else 'no'}"))
    # "SuLQ scales poorly with the ambient dimension d ... Gibbs sampling seems to be robust"
    dfs = {p.name: p.df for p in panels}
    if {"left", "middle"} <= set(dfs) and 10.0 in S["epsilons"]:
        r = {n: _median_at(dfs[n], "SuLQ-10", 10.0, "d_W") / _median_at(dfs[n], "Gibbs", 10.0, "d_W")
             for n in ("left", "middle")}
        checks.append(_check("SuLQ scales poorly with d: at ε = 10, SuLQ-10's median d_W ÷ Gibbs' is larger at d = 10 "
                             "(middle) than at d = 5 (left)", r["middle"] > r["left"],
                             f"left ×{r['left']:.2f}, middle ×{r['middle']:.2f}"))
    return panels, checks, []



# ============================================================================ subspace Fig. 3
def gibbs_traces(dataset, epsilon, init, n_iter, n_chains, seed):
    """One Fig. 3 run: ``n_chains`` Gibbs chains at ``epsilon``.

    Returns the traces (dict name -> (n_chains, n_iter)), the burn-in and the seconds per
    sweep. Top-level so workers can run it.

    Parameters
    ----------
    dataset : dict
        Dataset spec for :func:`dpcore.data.load_dataset` (must have true subspaces).
    epsilon : float
        Privacy parameter of the Gibbs sampler.
    init : str
        The sampler's ``init``.
    n_iter : int
        Sweeps per chain.
    n_chains : int
        Number of chains.
    seed : int
        Master seed (the run's seed is derived from it, ``init`` and ``epsilon``).

    Returns
    -------
    dict
        ``traces`` (dict name -> array (n_chains, n_iter)), ``burn_in`` (int) and
        ``seconds_per_sweep`` (float).
    """
    ds = load_dataset(**dataset)
    rng = np.random.default_rng(run_seed(seed, f"fig3 {init}", epsilon, 0))
    est = get_method("gibbs").build(ds, params={"n_clusters": int(ds.n_classes), "subspace_dim": int(ds.subspaces.shape[2]),
                                                "n_iter": n_iter, "n_chains": n_chains, "init": init},
                                    epsilon=epsilon, random_state=rng)
    with single_threaded():                         # as every sweep run (dpcore.lab.sweeps.run_task)
        est.fit(ds.X, y=ds.labels, true_subspaces=ds.subspaces)
    return {"traces": est.traces_, "burn_in": est.burn_in_, "seconds_per_sweep": est.seconds_per_sweep_}


def _thin_index(T, max_points):
    step = max(1, math.ceil(T / max_points))
    idx = np.arange(0, T, step)
    return idx if idx[-1] == T - 1 else np.append(idx, T - 1)


#: the starts of Fig. 3's chains in words
_INIT_WORDS = {"random": "random start (private)", "kplane": "k-plane start (not private)"}


def _subspace_fig3(level, R, max_points=2000):
    from ...subspace.diagnostics import diagnostics_table, mixing_verdict
    S = SETTINGS["subspace-fig3"][level]
    jobs = [dict(dataset=S["dataset"], epsilon=e, init=i, n_iter=S["n_iter"], n_chains=S["n_chains"], seed=R.seed)
            for i in S["inits"] for e in S["epsilons"]]
    R.log(f"  [subspace-fig3] {len(jobs)} runs of {S['n_chains']} chains × {S['n_iter']} sweeps")
    results = R.map(gibbs_traces, jobs)
    panels, checks, diag_rows = [], [], []
    for init in S["inits"]:
        burn, rows = {}, []
        for job, res in zip(jobs, results):
            if job["init"] != init:
                continue
            eps, tr = job["epsilon"], res["traces"]
            burn[eps] = res["burn_in"]
            C, T = tr["cost"].shape
            idx = _thin_index(T, max_points)            # the CSV keeps ≤ max_points sweeps per chain
            for ch in range(C):
                rows.append(pd.DataFrame({"init": init, "epsilon": eps, "chain": ch, "sweep": idx + 1,
                                          **{name: tr[name][ch, idx] for name in tr}}))
            verdict = mixing_verdict(tr, burn_in=res["burn_in"])
            for r in diagnostics_table(tr, burn_in=res["burn_in"]):
                diag_rows.append({"init": init, "epsilon": eps, "n_iter": T, "n_chains": C, "burn_in": res["burn_in"],
                                  "seconds_per_sweep": res["seconds_per_sweep"], "mixed": verdict["mixed"], **r})
            rhat = {r["trace"]: r["split_rhat"] for r in verdict["rows"]}
            checks.append(_check(f"{_INIT_WORDS[init]}, ε = {eps:g}: the {C} chains mixed (split-R̂ < 1.1 and ESS ≥ 100 "
                                 f"on cost and d_W after {res['burn_in']} burn-in sweeps)", verdict["mixed"],
                                 ", ".join(f"R̂({k}) = {v:.3g}" for k, v in rhat.items())
                                 + f"; final median d_W {np.median(tr['dw'][:, -1]):.3f}"))
        df = pd.concat(rows, ignore_index=True)
        df.insert(0, "figure", "subspace-fig3")
        title = (f"Gibbs sampler mixing (Fig. 3), {_INIT_WORDS[init]}: {S['n_chains']} chains, "
                 f"{load_dataset_name(S['dataset'])}")
        plot = {"kind": "traces", "metrics": ["statistic", "cost", "dw"], "title": title,
                "burn_in": {str(e): int(b) for e, b in burn.items()}}
        table = df.groupby(["epsilon", "chain"])["dw"].last().unstack("chain")
        panels.append(Panel(f"{init}-init", df, plot, table.round(4), title,
                            caption="d_W to the truth of the last sample of each chain (columns: chains):"))
    extra = {"diagnostics.csv": pd.DataFrame(diag_rows)}
    return panels, checks, extra



RUNNERS = {"subspace-fig2": _subspace_fig2, "subspace-fig3": _subspace_fig3}
