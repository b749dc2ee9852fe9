"""How long does the privacy-utility page's default sweep take? (target: ≤ 60 s)

    nice -n 10 python benchmarks/bench_page_sweep.py [--trials 5] [--no-reference]

The page's defaults (pages/7_privacy_utility.py, ui/common.DEFAULT_DATASET): the Fig. 2
middle setting (n = 1000, d = 10, k = 3, q = 3, σ = 0.1, data seed 0), methods SuLQ-10,
SuLQ-50, s.a. TSC and Gibbs (catalogue defaults: 1000 sweeps, 1 chain) and the non-private
k-plane (the dashed reference line, once per trial), ε = 10^{-1..3} on 7 log-spaced points,
5 trials, metrics d_W and cost, q = 3 passed to every subspace method as the page does, seed 0:
4 × 7 × 5 + 5 = 145 runs.

Prints, all run in this process one after the other:
1. the sweep with 1 worker and with 2 workers (spawned processes), wall seconds, the speed-up,
   and whether each is ≤ 60 s; the two result frames must be identical (seconds aside);
2. per method: the share of the serial sweep's run time (what dominates);
3. the reference: the serial sweep as the engine ran it before runs were made BLAS
   single-threaded (``dpcore.lab.sweeps.single_threaded`` replaced by a no-op), and the
   ratio to the current serial time (``--no-reference`` skips it: it can be slow on a
   loaded machine).

Wall-clock times on a shared 2-core machine are noisy; the load average is printed.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import dpcore.lab.sweeps as ex  # noqa: E402
from dpcore.lab.methods import preset  # noqa: E402
from dpcore.lab.sweeps import Sweep, run_sweep  # noqa: E402

PAGE_DATASET = {"kind": "subspaces", "n": 1000, "d": 10, "k": 3, "q": 3, "sigma": 0.1, "random_state": 0}
PAGE_METHODS = ["SuLQ-10", "SuLQ-50", "s.a. TSC", "Gibbs", "k-plane"]
TARGET = 60.0


def page_sweep(trials):
    algs = [preset(m) for m in PAGE_METHODS]
    for a in algs:
        a["params"]["subspace_dim"] = PAGE_DATASET["q"]      # the page's q control (ui.sweep.build_sweep)
    return Sweep(dataset=PAGE_DATASET, algorithms=algs,
                 epsilons=list(np.logspace(-1, 3, 7)), trials=trials, metrics=["d_W", "cost"], seed=0)


def _cpu():
    t = os.times()   # this process (all its threads) + reaped children (the pool's workers, after shutdown)
    return t.user + t.system + t.children_user + t.children_system


def timed(sweep, n_jobs):
    """(results, wall seconds, CPU seconds) of one sweep."""
    c0, t0 = _cpu(), time.perf_counter()
    df = run_sweep(sweep, n_jobs=n_jobs)
    return df, time.perf_counter() - t0, _cpu() - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--no-reference", action="store_true", help="skip the multi-threaded-BLAS reference run")
    args = ap.parse_args()
    sweep = page_sweep(args.trials)
    n_runs = len(sweep.validated().tasks())
    print(f"page default sweep: {len(PAGE_METHODS)} methods (one non-private) × 7 ε × {args.trials} trials = "
          f"{n_runs} runs "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")

    serial, t1, c1 = timed(sweep, 1)
    par, t2, c2 = timed(sweep, 2)
    same = serial.drop(columns="seconds").equals(par.drop(columns="seconds"))
    print(f"1. 1 worker : {t1:6.1f} s wall, {c1:6.1f} s CPU  [{'OK' if t1 <= TARGET else 'OVER'} ≤ {TARGET:g} s]")
    print(f"   2 workers: {t2:6.1f} s wall, {c2:6.1f} s CPU  [{'OK' if t2 <= TARGET else 'OVER'} ≤ {TARGET:g} s]  "
          f"speed-up ×{t1 / t2:.2f}; identical results: {same}")

    share = serial.groupby("algorithm", sort=False)["seconds"].agg(["sum", "median"])
    total = share["sum"].sum()
    print("2. where the serial time goes (sum of run seconds, median per run):")
    for alg, r in share.iterrows():
        print(f"   {alg:10s} {r['sum']:6.1f} s ({r['sum'] / total:5.1%})  median {r['median']:.3f} s per run")

    if not args.no_reference:
        real = ex.single_threaded
        ex.single_threaded = contextlib.nullcontext      # the engine before: BLAS threads as configured
        try:
            _, t0, c0 = timed(sweep, 1)
        finally:
            ex.single_threaded = real
        print(f"3. reference (multi-threaded BLAS inside each run, 1 worker): {t0:6.1f} s wall, {c0:6.1f} s CPU; "
              f"current ÷ reference: wall {t1 / t0:.2f}, CPU {c1 / c0:.2f}")
    print(f"   (load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
