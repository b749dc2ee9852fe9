"""The Gibbs page's run helpers: its input checks (bounds that keep a run from freezing the
app), one fit per ε with a progress bar, and the tables and verdicts kept in the session."""
from __future__ import annotations

from dpcore.validation import check_epsilon, check_int
from dpcore.metrics import clustering_accuracy, wasserstein_distance
from dpcore.subspace.diagnostics import diagnostics_table, mixing_verdict
from dpcore.subspace.gibbs import MAX_CHAINS, GibbsSubspaceClustering
from ui.common import Timer

MAX_PAGE_ITER = 10_000          # the paper's run length; the page refuses more
MAX_EPS = 6                     # ε values per submission
MAX_WORK = 320_000_000          # n × sweeps × chains × ε values (= the full Fig. 3 run at n = 1000)


def parse_epsilons(text):
    """'0.1, 1, 10' -> [0.1, 1.0, 10.0]; ValueError in the words of dpcore otherwise."""
    parts = [p for p in text.replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("epsilon must be given: one or more numbers > 0, separated by commas")
    if len(parts) > MAX_EPS:
        raise ValueError(f"give at most {MAX_EPS} values of epsilon at once; got {len(parts)}")
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise ValueError(f"epsilon must be a number > 0; got {p.strip()!r}") from None
        out.append(check_epsilon(v, "epsilon"))
    return out


def check_run(n, n_iter, n_chains, eps_list):
    """The page's bounds (so that a run cannot freeze the app for long)."""
    n_iter = check_int(n_iter, "n_iter (sweeps per chain)", 1, MAX_PAGE_ITER)
    n_chains = check_int(n_chains, "n_chains", 1, MAX_CHAINS)
    work = n * n_iter * n_chains * len(eps_list)
    if work > MAX_WORK:
        raise ValueError(f"this run is too long for the page: n × sweeps × chains × ε values = {work:,} > {MAX_WORK:,}; "
                         "use fewer sweeps, chains or ε values (or run benchmarks/bench_gibbs.py --fig3)")
    return n_iter, n_chains


def run_all(ds, eps_list, params, bar):
    """Fit one estimator per ε (same seed), moving the progress bar; returns the result dict."""
    runs, models, seconds = {}, {}, {}
    n_runs = len(eps_list)
    for j, eps in enumerate(eps_list):
        def cb(i, n, j=j, eps=eps):
            bar.progress(min(1.0, (j + i / n) / n_runs), text=f"ε = {eps:g}: sweep {i} of {n}")
        model = GibbsSubspaceClustering(epsilon=eps, **params)
        with Timer() as t:
            model.fit(ds.X, ds.labels, ds.subspaces if ds.subspaces is not None and
                      ds.subspaces.shape == (params["n_clusters"], ds.d, params["subspace_dim"]) else None,
                      callback=cb)
        runs[eps], models[eps], seconds[eps] = model.traces_, model, t.seconds
    return runs, models, seconds


def summarise(ds, models, seconds):
    """Tables and verdicts kept in the session (numbers only, no estimators)."""
    table, summary, verdicts = [], [], {}
    for eps, m in models.items():
        v = mixing_verdict(m.traces_, m.burn_in_)
        verdicts[eps] = {"mixed": v["mixed"], "text": v["text"], "rule": v["rule"]}
        for r in diagnostics_table(m.traces_, m.burn_in_):
            table.append({"ε": eps, "trace": r["description"], "split-R̂": r["split_rhat"], "ESS": r["ess"],
                          "mean after burn-in": r["mean"], "sd": r["sd"], "note": r["note"]})
        row = {"ε": eps, "verdict": "mixed" if v["mixed"] else "not yet",
               "released chain": m.selected_chain_, "cost of released sample": m.cost_,
               "mean cost, last samples": m.cost_mean_}
        if ds.subspaces is not None and ds.subspaces.shape == m.subspaces_.shape:
            row["d_W of released sample"] = wasserstein_distance(m.subspaces_, ds.subspaces)
            row["mean d_W, last samples"] = m.dw_mean_
        if ds.labels is not None:
            row["accuracy of released z"] = clustering_accuracy(ds.labels, m.labels_)
        row["rows clipped"] = m.n_clipped_
        row["ms per sweep (all chains)"] = 1e3 * m.seconds_per_sweep_
        row["seconds"] = seconds[eps]
        summary.append(row)
    return table, summary, verdicts
