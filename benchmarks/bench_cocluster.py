"""Benchmark of Fast-τCC and DP-τCC on the seven CLUTO sets (issue 5).

    python benchmarks/bench_cocluster.py            # timings + dense reference + NMI table
    python benchmarks/bench_cocluster.py --runs 3   # fewer runs (quicker, noisier)
    python benchmarks/bench_cocluster.py --peer     # also diffprivlib DP k-means (slow)
    python benchmarks/bench_cocluster.py --skip-dense --skip-nmi   # timings only

Prints
1. seconds per run of Fast-τCC (K0 = L0 = #classes, run to convergence) and DP-τCC
   (𝓘 = 4) on every set; targets on the project machine: DP-τCC on reviews ≤ 2 s,
   Fast-τCC on reviews ≤ 15 s;
2. the cost of ONE DP-τCC iteration written plainly with a dense n×m matrix (dense
   products R^T A C, dense utilities) against our sparse iteration, and the ratio;
3. the median row NMI over ``--runs`` runs (default 10) of DP-τCC for ε in {0.1, 0.5, 1, 3}
   and of Fast-τCC, as a markdown table, with the acceptance checks (NMI grows with ε; at
   ε = 3 at least 60 % of Fast-τCC on classic3, k1b, reviews, tr41).

Timings are wall-clock medians on a shared 2-core machine: expect noise.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from dpcore.cocluster.dptaucc import DPTauCC, dp_update_part, random_matrix_init  # noqa: E402
from dpcore.cocluster.taucc import (FastTauCC, aggregate_columns, aggregate_rows, check_count_matrix,  # noqa: E402
                                    compact_labels)
from dpcore.data import CLUTO_NAMES, load_cluto  # noqa: E402
from dpcore.metrics import nmi  # noqa: E402
from dpcore.privacy import exponential_mechanism  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 3.0)
ACCEPT_SETS = ("classic3", "k1b", "reviews", "tr41")


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


# ----------------------------------------------------------------------------- dense reference
def dense_weights(T):
    """w_kl = t_kl/t_·l − t_k·/T written plainly (dense, no guards beyond 0/0 -> 0)."""
    col = T.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        first = np.where(col > 0, T / col, 0.0)
    return first - T.sum(axis=1, keepdims=True) / T.sum()


def dense_one_iteration(A, r, c, K, L, eps2, eps1, rng):
    """One DP-τCC iteration (column update, T, row update, T) with a dense A and dense 0/1
    incidence matrices, as the pseudocode reads: T = Rᵀ A C by dense products."""
    n, m = A.shape
    R = np.zeros((n, K))
    R[np.arange(n), r] = 1.0
    C = np.zeros((m, L))
    C[np.arange(m), c] = 1.0
    T = R.T @ A @ C + rng.laplace(0, 1 / eps1, (K, L))
    T = np.maximum(T, 0)
    # column update: utilities of the columns, data aggregated over row clusters (Aᵀ R)
    W = dense_weights(T.T)
    U = (A.T @ R) @ W.T
    delta = np.max(W.max(axis=0) - W.min(axis=0))
    c = exponential_mechanism(U, eps2, delta, rng, range_sensitivity=True)
    C = np.zeros((m, L))
    C[np.arange(m), c] = 1.0
    T = np.maximum(R.T @ A @ C + rng.laplace(0, 1 / eps1, (K, L)), 0)
    # row update
    W = dense_weights(T)
    U = (A @ C) @ W.T
    delta = np.max(W.max(axis=0) - W.min(axis=0))
    r = exponential_mechanism(U, eps2, delta, rng, range_sensitivity=True)
    R = np.zeros((n, K))
    R[np.arange(n), r] = 1.0
    T = np.maximum(R.T @ A @ C + rng.laplace(0, 1 / eps1, (K, L)), 0)
    return T, r, c


def sparse_one_iteration(A, At, r, c, K, L, eps2, eps1, rng):
    """The same iteration with our sparse building blocks (as DPTauCC.fit runs it)."""
    from dpcore.cocluster.dptaucc import dp_compute_t
    T, r, c, _ = dp_compute_t(A, r, c, eps1, rng)
    c, _ = dp_update_part(aggregate_rows(A, r, T.shape[0], At), T.T, eps2, rng)
    c, L = compact_labels(c)
    T, r, c, _ = dp_compute_t(A, r, c, eps1, rng)
    r, _ = dp_update_part(aggregate_columns(A, c, T.shape[1]), T, eps2, rng)
    r, K = compact_labels(r)
    T, r, c, _ = dp_compute_t(A, r, c, eps1, rng)
    return T, r, c


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10, help="runs per cell of the NMI table (default 10)")
    ap.add_argument("--timing-runs", type=int, default=3, help="repeats for the timings (median)")
    ap.add_argument("--skip-dense", action="store_true")
    ap.add_argument("--skip-nmi", action="store_true")
    ap.add_argument("--peer", action="store_true", help="also diffprivlib DP k-means NMI (slow)")
    ap.add_argument("--sets", nargs="*", default=list(CLUTO_NAMES))
    args = ap.parse_args()

    data = {name: load_cluto(name) for name in args.sets}

    print("## 1. Seconds per run (median of %d), K0 = L0 = #classes" % args.timing_runs)
    print("| dataset | n × m | nnz | Fast-τCC s | rounds | DP-τCC (𝓘=4) s |")
    print("|---|---|---|---|---|---|")
    for name, ds in data.items():
        k = ds.n_classes
        tf, f = timed(lambda: FastTauCC(k, k, random_state=0).fit(ds.X), args.timing_runs)
        td, _ = timed(lambda: DPTauCC(k, k, epsilon=1.0, n_iterations=4, random_state=0).fit(ds.X), args.timing_runs)
        print(f"| {name} | {ds.n}×{ds.d} | {ds.X.nnz:,} | {tf:.2f} | {f.n_iter_} | {td:.3f} |", flush=True)
    if "reviews" in data:
        print("targets: DP-τCC on reviews ≤ 2 s, Fast-τCC on reviews ≤ 15 s (see the reviews row)")

    if not args.skip_dense:
        print("\n## 2. One DP-τCC iteration: dense n×m reference vs sparse (median of %d)" % args.timing_runs)
        print("| dataset | dense MB | dense s | sparse s | dense / sparse |")
        print("|---|---|---|---|---|")
        for name, ds in data.items():
            k = ds.n_classes
            A = check_count_matrix(ds.X)
            At = A.T.tocsr()
            rng = np.random.default_rng(0)
            r0, c0, _ = random_matrix_init(A.shape[0], A.shape[1], k, k, 0.01, rng)
            eps1, eps2 = 0.0125, 0.1125  # ε = 1, 𝓘 = 4
            ts, _ = timed(lambda: sparse_one_iteration(A, At, r0, c0, k, k, eps2, eps1, rng), args.timing_runs)
            D = A.toarray()
            td, _ = timed(lambda: dense_one_iteration(D, r0, c0, k, k, eps2, eps1, rng), args.timing_runs)
            print(f"| {name} | {D.nbytes / 1e6:.0f} | {td:.3f} | {ts:.4f} | {td / ts:.0f}× |", flush=True)
            del D

    if not args.skip_nmi:
        R = args.runs
        print(f"\n## 3. Median row NMI over {R} runs (𝓘 = 4, K0 = L0 = #classes; DP-τCC rows assigned to the "
              "last private T, the paper's evaluation step)")
        head = "| dataset | " + " | ".join(f"DP-τCC ε={e:g}" for e in EPSILONS) + " | Fast-τCC | DP/Fast at ε=3 | grows with ε |"
        print(head)
        print("|" + "---|" * (len(EPSILONS) + 4))
        verdicts = {}
        for name, ds in data.items():
            k = ds.n_classes
            fast = np.median([nmi(ds.labels, FastTauCC(k, k, random_state=s).fit(ds.X).row_labels_) for s in range(R)])
            med = []
            for eps in EPSILONS:
                med.append(np.median([nmi(ds.labels, DPTauCC(k, k, epsilon=eps, n_iterations=4, random_state=s)
                                          .fit(ds.X).row_assignment_) for s in range(R)]))
            grows = all(b >= a for a, b in zip(med, med[1:]))
            ratio = med[-1] / fast if fast > 0 else float("nan")
            verdicts[name] = (grows, ratio)
            print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in med) + f" | {fast:.3f} | {ratio:.0%} | "
                  f"{'yes' if grows else 'NO'} |", flush=True)
        print("\nAcceptance: DP-τCC at ε = 3 ≥ 60 % of Fast-τCC on " + ", ".join(ACCEPT_SETS) + ":")
        for name in ACCEPT_SETS:
            if name in verdicts:
                print(f"  {name}: {verdicts[name][1]:.0%} -> {'PASS' if verdicts[name][1] >= 0.6 else 'FAIL'}")
        print("NMI grows with ε (non-decreasing medians over 0.1, 0.5, 1, 3): " +
              ", ".join(f"{n} {'yes' if v[0] else 'NO'}" for n, v in verdicts.items()))

    if args.peer:
        from dpcore.kmeans.baselines import MAX_DENSE_CELLS, DPLloydKMeans, KMeansPlusPlus
        R = max(1, min(args.runs, 3))
        print(f"\n## 4. Peer: diffprivlib DP k-means (rows L2-normalised, bounds [0, 1]; protects a whole row) "
              f"and k-means++ (normalised rows), median NMI over {R} runs")
        print("| dataset | " + " | ".join(f"DP k-means ε={e:g}" for e in EPSILONS) + " | k-means++ | s per DP run |")
        print("|" + "---|" * (len(EPSILONS) + 3))
        for name, ds in data.items():
            k = ds.n_classes
            if ds.n * ds.d > MAX_DENSE_CELLS:
                print(f"| {name} | " + " | ".join("—" for _ in EPSILONS) + f" | — | too large for dense diffprivlib |")
                continue
            km = np.median([nmi(ds.labels, KMeansPlusPlus(k, n_init=3, normalize_rows=True, random_state=s)
                                .fit(ds.X).labels_) for s in range(R)])
            med = []
            t0 = time.perf_counter()
            for eps in EPSILONS:
                med.append(np.median([nmi(ds.labels, DPLloydKMeans(k, eps, nonnegative=True, random_state=s)
                                          .fit(ds.X).labels_) for s in range(R)]))
            per = (time.perf_counter() - t0) / (R * len(EPSILONS))
            print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in med) + f" | {km:.3f} | {per:.1f} |", flush=True)


if __name__ == "__main__":
    main()
