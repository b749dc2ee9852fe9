"""Audit table: ε̂ (a 95 % lower bound on the ε really spent) for every private
method of dpclust-explorer at ε ∈ {0.5, 2}, printed as a markdown table.

    nice -n 10 python benchmarks/audit_table.py                    # 200 runs per side, 2 workers
    nice -n 10 python benchmarks/audit_table.py --trials 100 --workers 1
    python benchmarks/audit_table.py --methods dp_taucc,dplloyd --eps 1

Each row is :func:`dpcore.lab.audit.audit_estimator`: the method runs ``--trials`` times on a
small audit set D and on its neighbour D′ built for the neighbouring relation the method
claims (:data:`dpcore.lab.audit.CLAIMED_RELATION`): replace-one for the subspace methods and
the dpcore k-means methods (the first row replaced by a far outlier on the public radius
the method clips to; n is the same), add/remove-one for DP-Lloyd (the far outlier added),
+1 in one cell of a count matrix for DP-τCC. The "relation" column names the audited
relation and says whether it is the claimed one. Each release is reduced to the method's
audit statistic (its catalogue entry's ``audit_statistic``): for the subspace and k-means methods a likelihood-ratio score of release
features (distances from the outlier and from the replaced row to the nearest released
subspace / centre, the released projector or centre moments) fitted on the first half of
the runs; for DP-τCC the released contingency-table cell that holds the changed cell. The
threshold test is chosen on the first half of the runs and ε̂ computed on the other half.
Methods run with the catalogue's defaults (dpcore.lab.methods.METHODS) except Gibbs,
which runs 100 sweeps (its default 1000 sweeps would dominate the run time). (ε, δ)
methods run with an explicit public δ (the estimator's default on D), subtracted in the
bound. "ceiling" is the largest ε̂ the held-out runs could give (perfect separation): a
row whose ceiling is below ε could never report a leak.

Two extra rows (``--no-extra`` drops them) audit the Gibbs sampler stopped after one sweep
on the three-axes set, from the non-private k-plane start and from the private random start:
the first leaks more than claimed.

Run times are wall-clock on a machine shared with other jobs.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dpcore.lab.audit import AUDIT_SETS, RELATIONS, audit_dataset, audit_estimator  # noqa: E402
from dpcore.lab.methods import get_method  # noqa: E402
from tables import markdown_table  # noqa: E402

#: (label, catalogue name, audit set, neighbour (None: a construction of the claimed relation), extra parameters,
#:  statistic (None: the entry's audit_statistic; DP-τCC also runs the exact reachability test))
METHODS = [
    ("SuLQ k-plane", "sulq_kplane", "subspaces", None, {}, None),
    ("sample-aggregate", "sample_aggregate", "subspaces", None, {}, None),
    ("Gibbs (100 sweeps, random start)", "gibbs", "subspaces", None, {"n_iter": 100}, None),
    ("DP-τCC", "dp_taucc", "blocks", None, {}, None),
    ("DP-τCC (exact reachability)", "dp_taucc", "blocks", None, {}, "cell_unreachable"),
    ("candidate k-means", "candidate_kmeans", "gaussians", None, {}, None),
    ("SuLQ k-means", "sulq_kmeans", "gaussians", None, {}, None),
    ("s.a. k-means", "sa_kmeans", "gaussians", None, {}, None),
    ("DP-Lloyd", "dplloyd", "gaussians", None, {}, None),
]
EXTRA = [
    ("Gibbs, 1 sweep, k-plane start (NOT private)", "gibbs", "three_axes", None, {"n_iter": 1, "init": "kplane"}, None),
    ("Gibbs, 1 sweep, random start", "gibbs", "three_axes", None, {"n_iter": 1, "init": "random"}, None),
]
SHORT_NEIGHBOUR = {"add_outlier": "+ far outlier", "replace_outlier": "row → far outlier",
                   "remove_point": "− one point", "change_cell": "+1 in one cell"}
SHORT_RELATION = {"replace_one": "replace-one", "add_remove": "add/remove-one", "cell_pm1": "one cell ±1"}
SHORT_STATISTIC = {"likelihood_ratio": "LR score", "table_cell": "table cell", "outlier_distance": "outlier distance",
                   "nearest_centre": "nearest centre", "cell_unreachable": "cell unreachable"}
assert set(SHORT_RELATION) == set(RELATIONS)


def audit_row(label, name, set_key, neighbour, params, statistic, eps, trials, confidence, seed, executor):
    ds, set_params = audit_dataset(set_key)
    family = get_method(name).family
    p = {**set_params.get(family, {}), **params}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = audit_estimator(name, ds, neighbour, trials, epsilon=eps, params=p, confidence=confidence, seed=seed,
                              executor=executor, statistic=statistic)
    relation = SHORT_RELATION[res.relation] + ("" if res.relation_is_claimed else
                                               f" (NOT the claimed {SHORT_RELATION[res.claimed_relation]})")
    return {"method": label, "data": AUDIT_SETS[set_key].label, "ε": eps, "relation": relation,
            "statistic": SHORT_STATISTIC[res.statistic], "trials": trials, "ε̂ lower": res.epsilon_lower,
            "point": res.epsilon_point, "ceiling": res.epsilon_ceiling, "verdict": res.verdict,
            "δ": res.delta, "seconds": time.perf_counter() - t0}


def markdown(rows):
    head = ["method", "data", "claimed ε", "audited relation", "statistic", "trials/side", "ε̂ lower (95 %)",
            "point est.", "ceiling", "verdict", "seconds"]
    return markdown_table(head, [[r["method"], r["data"], f"{r['ε']:g}", r["relation"], r["statistic"], r["trials"],
                                  f"{r['ε̂ lower']:.2f}", f"{r['point']:.2f}", f"{r['ceiling']:.2f}", r["verdict"],
                                  f"{r['seconds']:.0f}"] for r in rows])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200, help="runs per side (≥ 50; default 200)")
    ap.add_argument("--eps", default="0.5,2", help="comma-separated ε values (default 0.5,2)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2; 1 = in process)")
    ap.add_argument("--methods", default="", help="comma-separated catalogue names to keep (default: all)")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-extra", action="store_true", help="skip the two Gibbs one-sweep rows")
    args = ap.parse_args(argv)
    eps_list = [float(e) for e in args.eps.split(",") if e.strip()]
    methods = METHODS + ([] if args.no_extra else EXTRA)
    if args.methods:
        keep = set(args.methods.split(","))
        methods = [m for m in methods if m[1] in keep]
    executor = ProcessPoolExecutor(args.workers) if args.workers > 1 else None
    rows = []
    t0 = time.perf_counter()
    try:
        for m in methods:
            for eps in eps_list:
                r = audit_row(*m, eps, args.trials, args.confidence, args.seed, executor)
                rows.append(r)
                print(f"  {r['method']:46s} ε = {eps:<4g} [{r['relation']}] ε̂ = {r['ε̂ lower']:.3f} (point {r['point']:.2f}, "
                      f"ceiling {r['ceiling']:.2f}) {r['verdict']:26s} {r['seconds']:6.1f} s", flush=True)
    finally:
        if executor is not None:
            executor.shutdown()
    print()
    print(markdown(rows))
    print(f"\n{args.trials} runs per side, {args.confidence:.0%} confidence, seed {args.seed}; "
          f"total {time.perf_counter() - t0:.0f} s with {args.workers} worker(s).")
    return rows


if __name__ == "__main__":
    main()
