"""Utility and speed of the private subspace clustering of issue 4 (Fig. 2, middle column).

Setting: n = 1000, d = 10, k = 3, q = 3, σ = 0.1 (make_union_of_subspaces, paper model),
δ = 1/(n ln n). For ε in {1, 10, 1000} and 5 seeds (data seed = algorithm seed offset) it
prints the median d_W(Ĉ, C*) and the median eq. (3) cost of

- SuLQ-10, SuLQ-50 (App. E, Prop. E.2 composition, the paper's choice),
- sample-aggregate (Alg. 1, default m = ⌈(ln n)²⌉ = 48) with TSC, SSC and k-plane,

next to the non-private reference solvers run on the same data in the same process
(k-plane, TSC, SSC on all n points), and the median seconds per fit with the ratio to
the reference solver's time. Every fit is a full, independent run (no reuse of subset
solutions across ε).

    nice -n 10 python benchmarks/bench_private_subspace.py [--seeds 5] [--lrr] [--best]

``--lrr`` adds sample-aggregate with LRR (slow), ``--best`` adds SuLQ-10 with
composition="best". Timings on a shared 2-core machine are noisy.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dpcore.data import make_union_of_subspaces  # noqa: E402
from dpcore.metrics import wasserstein_distance  # noqa: E402
from dpcore.subspace.sample_aggregate import SampleAggregateSubspace  # noqa: E402
from dpcore.subspace.solvers import make_solver  # noqa: E402
from dpcore.subspace.sulq import SuLQKPlane  # noqa: E402

N, D, K, Q, SIGMA = 1000, 10, 3, 3, 0.1
EPS = (1.0, 10.0, 1000.0)


def private_methods(args):
    m = {
        "SuLQ-10": lambda e, s: SuLQKPlane(n_clusters=K, subspace_dim=Q, n_iter=10, epsilon=e, random_state=s),
        "SuLQ-50": lambda e, s: SuLQKPlane(n_clusters=K, subspace_dim=Q, n_iter=50, epsilon=e, random_state=s),
        "SA-TSC": lambda e, s: SampleAggregateSubspace(n_clusters=K, subspace_dim=Q, solver="tsc", epsilon=e, random_state=s),
        "SA-SSC": lambda e, s: SampleAggregateSubspace(n_clusters=K, subspace_dim=Q, solver="ssc", epsilon=e, random_state=s),
        "SA-kplane": lambda e, s: SampleAggregateSubspace(n_clusters=K, subspace_dim=Q, solver="kplane", epsilon=e, random_state=s),
    }
    if args.best:
        m["SuLQ-10 best"] = lambda e, s: SuLQKPlane(n_clusters=K, subspace_dim=Q, n_iter=10, epsilon=e, composition="best", random_state=s)
    if args.lrr:
        m["SA-LRR"] = lambda e, s: SampleAggregateSubspace(n_clusters=K, subspace_dim=Q, solver="lrr", epsilon=e, random_state=s)
    return m


REFERENCE = {"SuLQ": "kplane", "SA-TSC": "tsc", "SA-SSC": "ssc", "SA-kplane": "kplane", "SA-LRR": "lrr"}


def reference_for(name):
    for prefix, solver in REFERENCE.items():
        if name.startswith(prefix):
            return solver
    raise KeyError(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--lrr", action="store_true")
    ap.add_argument("--best", action="store_true")
    args = ap.parse_args()
    methods = private_methods(args)
    ref_solvers = sorted({reference_for(name) for name in methods})
    dw, cost, secs = {}, {}, {}
    ref_dw, ref_secs = {s: [] for s in ref_solvers}, {s: [] for s in ref_solvers}
    warnings.simplefilter("ignore")  # Thm 3.1 / clipping warnings are expected at small ε
    t_all = time.perf_counter()
    for seed in range(args.seeds):
        ds = make_union_of_subspaces(N, D, K, Q, SIGMA, random_state=seed)
        for solver in ref_solvers:
            t = time.perf_counter()
            est = make_solver(solver, K, Q, random_state=100 + seed).fit(ds.X)
            ref_secs[solver].append(time.perf_counter() - t)
            ref_dw[solver].append(wasserstein_distance(est.subspaces_, ds.subspaces))
        for name, build in methods.items():
            for e in EPS:
                t = time.perf_counter()
                est = build(e, 100 + seed).fit(ds.X)
                secs.setdefault(name, []).append(time.perf_counter() - t)
                dw.setdefault((name, e), []).append(wasserstein_distance(est.subspaces_, ds.subspaces))
                cost.setdefault((name, e), []).append(est.cost_)
        print(f"seed {seed} done ({time.perf_counter() - t_all:.0f} s)", flush=True)

    print(f"\nFig. 2 middle: n={N}, d={D}, k={K}, q={Q}, sigma={SIGMA}, delta=1/(n ln n); "
          f"median over {args.seeds} seeds")
    print("\nnon-private reference solvers (all n points):")
    for s in ref_solvers:
        print(f"  {s:8s} d_W = {np.median(ref_dw[s]):.3f}   {np.median(ref_secs[s]):.3f} s/fit")
    head = "".join(f"  d_W eps={e:<6g}" for e in EPS) + "".join(f"  cost eps={e:<5g}" for e in EPS)
    print(f"\n{'method':14s}{head}   s/fit   x ref")
    for name in methods:
        row = "".join(f"  {np.median(dw[name, e]):12.3f}" for e in EPS)
        row += "".join(f"  {np.median(cost[name, e]):13.4f}" for e in EPS)
        ref = np.median(ref_secs[reference_for(name)])
        print(f"{name:14s}{row}   {np.median(secs[name]):5.3f}   {np.median(secs[name]) / ref:5.1f}")
    print("\nchecks (issue 4 acceptance):")
    for name in methods:
        a, b = np.median(dw[name, 1000.0]), np.median(dw[name, 1.0])
        print(f"  {name:14s} d_W(eps=1000) {a:.3f} < d_W(eps=1) {b:.3f}: {a < b}")
    a, b = np.median(dw["SuLQ-10", 10.0]), np.median(dw["SA-TSC", 10.0])
    print(f"  eps=10: SuLQ-10 d_W {a:.3f} < SA-TSC d_W {b:.3f}: {a < b}")
    print(f"\ntotal {time.perf_counter() - t_all:.0f} s (shared machine: timings are noisy)")


if __name__ == "__main__":
    main()
