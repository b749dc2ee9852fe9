"""Benchmark of the Gibbs subspace clustering sampler (issues 10 and 17).

    python benchmarks/bench_gibbs.py [--sweeps-ref 600] [--sweeps 10000] [--sweeps-ref-yale 10]
                                     [--sweeps-yale 200] [--compile-time] [--fig3 SWEEPS]

1. ms/sweep at the Fig. 3 setting (n=1000, d=10, k=3, q=3, σ=0.1, ε=10) and at the Yale B
   setting (Extended Yale B as in §5: 5 subjects chosen with seed 0, n=320, d=50, k=5, q=9,
   ε=10) of
   - the REFERENCE: a direct numpy transcription of App. D Alg. 3-4 (null space by SVD for
     every column, Hoff's coordinate-wise vector Bingham sweep with scalar rejection
     sampling of the 1-D conditional: the paper's Case 1 / Case 2 for |a| large, Hoff's
     Beta(1/2, 1 + min(k, max(k − a, −1/2))) envelope otherwise), kept here and run for a
     few hundred sweeps;
   - OURS (dpcore.subspace.gibbs.GibbsSubspaceClustering) on each engine: "numba" (compiled
     kernels, dpcore.subspace.gibbs_kernels: ACG per column after a tridiagonalisation, or for
     D ≥ 20 first a Lanczos shift + Cholesky envelope; chains in parallel threads; G = QᵀAQ
     updated by the null-space reflections; plain IEEE arithmetic in a fixed order, no
     fast-math, BLAS, LAPACK or libm, so the same bits on every x86-64 CPU:
     tests/test_cpu_identical.py) and "numpy" (batched z-step, exact ACG column
     draws after an eigendecomposition, Householder-updated null spaces), 1 chain and 8
     chains batched;
   and the ratios per chain-sweep, summarised at the end under RATIOS (the three figures of
   issue 17). Both are timed in the same process, as CPU time (process_time) and wall
   time: the machine is shared, so wall times are noisy.
2. Draws per second of the 1-D sampler at |a| ∈ {1, 1e2, 1e4} (k = 5/2, i.e. the d' = 8
   columns of the Fig. 3 setting), for each method, and its acceptance-rate table; draws
   per second of the exact vector Bingham sampler (ACG) at the same three scales.
3. Optional (--fig3 N): the Fig. 3 experiment, 8 chains × ε ∈ {0.1, 1, 10, 100} from the
   random (private) init and from the k-plane init, N sweeps each, with split-R̂ / ESS and
   the mixing verdict (the figure in docs/benchmarks.md for "from the random init, for which ε the chains
   mixed").
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.data import make_union_of_subspaces  # noqa: E402
from dpcore.subspace import bingham as bg  # noqa: E402
from dpcore.subspace.diagnostics import diagnostics_table, mixing_verdict  # noqa: E402
from dpcore.subspace.common import single_threaded  # noqa: E402
from dpcore.subspace.gibbs import GibbsSubspaceClustering  # noqa: E402


# =============================================================================== reference
def ref_sample_theta(a, k, rng):
    """Scalar rejection sampling of f(x) ∝ x^(-1/2)(1-x)^k e^(ax) as in the paper / Hoff."""
    if a < -50:  # paper's Case 1
        while True:
            x = rng.gamma(0.5, 1.0 / abs(a))
            if x >= 1:
                continue
            if rng.random() <= (1 - x) ** k:
                return x
    if a > k + 50:  # paper's Case 2, simplified (Z -> inf)
        M = max(2 * math.sqrt(a), math.e * special.beta(0.5, k + 1))
        B = special.beta(0.5, k + 1)
        while True:
            z = rng.gamma(k + 1, 1.0 / a)
            if z >= 1:
                continue
            x = 1 - z
            beta_pdf = x ** -0.5 * z ** k / B
            if rng.random() < x ** -0.5 / (M * (1 + math.exp(-a * x) * beta_pdf)):
                return x
    # Hoff (2009) / rstiefel: Beta(1/2, bb) envelope, bb = 1 + min(k, max(k - a, -1/2));
    # f/g ∝ (1 - x)^kk e^(ax) with kk = k - bb + 1 >= 0, log-concave, maximum c below
    bb = 1 + min(k, max(k - a, -0.5))
    kk = k - bb + 1
    if a <= 0:
        c = 0.0
    elif kk == 0:
        c = a
    else:
        xs = max(0.0, 1 - kk / a)
        c = kk * math.log1p(-xs) + a * xs
    while True:
        x = rng.beta(0.5, bb)
        if math.log(rng.random()) <= kk * math.log1p(-x) + a * x - c:
            return x


def ref_vector_bingham_gibbs(A, x, rng):
    """Alg. 4, transcribed: one coordinate sweep of Hoff's sampler for exp(xᵀAx)."""
    d = A.shape[0]
    lam, E = np.linalg.eigh(A)
    y = E.T @ x
    k = (d - 3) / 2
    for i in rng.permutation(d):
        others = [j for j in range(d) if j != i]
        r2 = 1 - y[i] ** 2
        qj = y[others] ** 2 / r2
        a = lam[i] - qj @ lam[others]
        th = ref_sample_theta(a, k, rng)
        s = 1 if rng.random() < 0.5 else -1
        y[i] = s * math.sqrt(th)
        y[others] = np.sign(y[others]) * np.sqrt((1 - th) * qj)
    return E @ y


def ref_matrix_bingham_gibbs(A, B, U, rng):
    """Alg. 3, transcribed."""
    d, q = U.shape
    U = U.copy()
    for r in rng.permutation(q):
        others = np.delete(U, r, axis=1)
        N = scipy.linalg.null_space(others.T) if q > 1 else np.eye(d)
        z = N.T @ U[:, r]
        At = B[r] * (N.T @ A @ N)
        z = ref_vector_bingham_gibbs(At, z, rng)
        U[:, r] = N @ z
    return U


def ref_gibbs(X, k, q, eps, n_sweeps, rng):
    n, d = X.shape
    U = [np.linalg.qr(rng.standard_normal((d, q)))[0] for _ in range(k)]
    B = np.full(q, eps / 2)
    for _ in range(n_sweeps):
        d2 = np.stack([np.sum(X ** 2, 1) - np.sum((X @ Ul) ** 2, 1) for Ul in U], axis=1)
        logits = -eps / 2 * d2
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        z = (rng.random(n)[:, None] > np.cumsum(p, 1)[:, :-1]).sum(1)
        for ell in range(k):
            Xl = X[z == ell]
            U[ell] = ref_matrix_bingham_gibbs(Xl.T @ Xl, B, U[ell], rng)
    return U


# =============================================================================== helpers
def timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def _ours(X, y, k, q, eps, sweeps, C, engine):
    g = GibbsSubspaceClustering(n_clusters=k, subspace_dim=q, epsilon=eps, n_iter=sweeps, n_chains=C, engine=engine,
                                random_state=0)
    _, c, w = timed(lambda: g.fit(X, y))
    return c / sweeps * 1e3, w / sweeps * 1e3


def bench_setting(title, key, X, y, k, q, eps, sweeps_ref, sweeps, engines):
    """ms/sweep of the reference and of ours (1 chain; 8 chains batched), ratios per chain-sweep."""
    print(f"== {title} ==")
    with single_threaded():   # as ours (fit runs single-threaded): multi-threaded BLAS on these tiny matrices only
        #                       spins, and its timings vary several-fold with the load of this shared machine
        _, c_ref, w_ref = timed(lambda: ref_gibbs(X, k, q, eps, sweeps_ref, np.random.default_rng(0)))
    ref_ms = (c_ref / sweeps_ref * 1e3, w_ref / sweeps_ref * 1e3)
    print(f"reference (Alg. 3-4 transcription), {sweeps_ref} sweeps: {ref_ms[0]:.3f} ms/sweep CPU, "
          f"{ref_ms[1]:.3f} ms/sweep wall -> 10,000 sweeps ≈ {ref_ms[0] * 10:.1f} s CPU")
    ratios = {}
    for engine in engines:
        for C in (1, 8):
            n_sw = sweeps if C == 1 else max(sweeps // 4, 20)
            cpu, wall = _ours(X, y, k, q, eps, n_sw, C, engine)
            per_chain = cpu / C
            r = ref_ms[0] / per_chain
            ratios[(engine, C)] = (r, ref_ms[1] / (wall / C))
            print(f"ours [{engine}], {C} chain(s), {n_sw} sweeps: {cpu:.3f} ms/sweep CPU ({per_chain:.3f} per chain-sweep), "
                  f"{wall:.3f} wall -> 10,000 sweeps of one chain ≈ {per_chain * 10:.2f} s CPU; "
                  f"ratio reference/ours per chain-sweep = {r:.1f}x (CPU), {ref_ms[1] / (wall / C):.1f}x (wall)",
                  flush=True)
    return ratios


def bench_sweeps(args):
    from dpcore.data import load_yaleb
    from dpcore.subspace import gibbs_kernels as gk
    import os
    load0 = os.getloadavg()[0]
    engines = ["numba", "numpy"] if gk.AVAILABLE else ["numpy"]
    if gk.AVAILABLE:
        print(f"numba kernels compiled or loaded from numba's cache in {gk.warmup():.2f} s (first use after install: "
              "compilation, see --compile-time; later processes: loading)")
    ds = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=0)
    fig3 = bench_setting("Gibbs sweeps at the Fig. 3 setting (n=1000, d=10, k=3, q=3, σ=0.1, ε=10)", "fig3", ds.X,
                         ds.labels, 3, 3, 10.0, args.sweeps_ref, args.sweeps, engines)
    yb = load_yaleb(random_state=0)
    yale = bench_setting("Gibbs sweeps at the Yale B setting (Extended Yale B, 5 subjects, n=320, d=50, k=5, q=9, "
                         "ε=10)", "yale", yb.X, yb.labels, 5, 9, 10.0, args.sweeps_ref_yale, args.sweeps_yale, engines)
    eng = engines[0]
    if eng == "numba":
        column_paths(yb.X, 5, 9, 10.0)
    import os
    threads = gk.n_threads(8) if eng == "numba" else 1
    print(f"\n== RATIOS (reference = the plain numpy/scipy transcription of App. D Alg. 3-4 above, same process; "
          f"time per chain-sweep, reference/ours; engine = {eng}; 8 chains on {threads} threads; load average of "
          f"this shared machine at the start / end: {load0:.2f} / {os.getloadavg()[0]:.2f}) ==")
    print("The one-chain targets refer to CPU time (process_time: independent of the other load on this shared "
          "machine; one chain runs on one thread). The 8-chain target refers to WALL time (what the user waits for: "
          "the chains run in parallel threads); its CPU figure is the work per chain-sweep. Wall ratios of one chain "
          "are noisy here (other processes share the 2 cores), and at d = 50 the reference's LAPACK calls use both "
          "cores (its wall time is below its CPU time). The 8-chain wall figure needs the second core free: with a "
          "load average near 2 from other processes it falls to about the CPU figure.")
    rows = [("Fig. 3 setting, one chain:", fig3[(eng, 1)], 40, 0), ("Yale B setting, one chain:", yale[(eng, 1)], 30, 0),
            ("Fig. 3 setting, 8 chains, per chain:", fig3[(eng, 8)], 50, 1)]
    for label, (r_cpu, r_wall), target, which in rows:
        print(f"{label:38s} {r_cpu:6.1f}x CPU, {r_wall:6.1f}x wall  (target >= {target}x, {('CPU', 'wall')[which]} time)")
    if not args.skip_hoff:
        n_h = max(50, args.sweeps // 5)
        g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=10.0, n_iter=n_h, n_chains=1,
                                    column_sampler="hoff", random_state=0)
        _, c, w = timed(lambda: g.fit(ds.X, ds.labels, ds.subspaces))
        print(f"ours with column_sampler='hoff' (numpy engine, Alg. 4 coordinate sweeps, batched), 1 chain, {n_h} "
              f"sweeps: {c / n_h * 1e3:.3f} ms/sweep CPU")


def column_paths(X, k, q, eps, sweeps=100):
    """Which envelope the Yale B setting's column draws took (gibbs_kernels._column_draw
    counters), one chain, after 20 sweeps from a random start."""
    from dpcore.subspace import gibbs_kernels as gk
    from dpcore.preprocessing import clip_rows
    Xc = np.ascontiguousarray(clip_rows(X, 1.0)[0])
    rng = np.random.default_rng(0)
    Q = gk.full_basis(bg.random_stiefel((1, k), X.shape[1], q, rng))
    A, zprev, env, st = gk.new_state(Q, X.shape[0], q)
    states = gk.seed_state(rng, 1)
    with single_threaded():
        gk.run_block(Xc, 0.0, Q, A, zprev, env, st, 0, eps / 2, q, 20, states, False, 1)
        st[:] = 0
        gk.run_block(Xc, 0.0, Q, A, zprev, env, st, 20, eps / 2, q, sweeps, states, False, 1)
    tri, fast, props, fallbacks, chol = st[0]
    print(f"Yale B column draws ({sweeps} sweeps): {fast / (tri + fast):.1%} by the Lanczos/Cholesky envelope "
          f"({(props - (fallbacks - chol) * gk._FAST_MAX_PROPOSALS) / max(fast, 1):.2f} proposals each), "
          f"{tri / (tri + fast):.1%} by the tridiagonal path (fallbacks: {chol} Cholesky failures, "
          f"{fallbacks - chol} x {gk._FAST_MAX_PROPOSALS} proposals all rejected)")


def compile_time():
    """First-use compile time of the numba kernels (empty cache in a temporary NUMBA_CACHE_DIR,
    fresh processes), then the load time from that cache."""
    import os
    import subprocess
    import tempfile
    code = ("import time; t = time.perf_counter(); from dpcore.subspace import gibbs_kernels as gk; "
            "i = time.perf_counter() - t; w = gk.warmup(); print(f'{i:.2f} {w:.2f}')")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=tmp)
        root = str(Path(__file__).resolve().parents[1])
        for label in ("empty cache (first use after install)", "warm cache (every later process)"):
            out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True,
                                 check=True).stdout.split()
            print(f"numba kernels, {label}: import {out[0]} s, compile/load {out[1]} s")


def bench_1d(args):
    print("\n== 1-D conditional sampler, k = 5/2 (draws of 100,000 at once) ==")
    rng = np.random.default_rng(1)
    N = 100_000
    for a in (1.0, 1e2, 1e4, -1.0, -1e2, -1e4):
        row = []
        for method in ("auto", "acg", "case1", "case2", "case2_paper"):
            if (method == "case1" and a >= 0) or (method.startswith("case2") and a <= 1):
                row.append(f"{method}: -")
                continue
            _, c, _ = timed(lambda: bg.sample_bingham_1d(np.full(N, a), 2.5, random_state=rng, method=method))
            row.append(f"{method}: {N / c / 1e6:.2f} M/s")
        print(f"a = {a:>8g}: " + ", ".join(row))
    # scalar reference (what the transcription does per coordinate)
    for a in (1.0, 1e2, 1e4):
        M = 2000
        _, c, _ = timed(lambda: [ref_sample_theta(a, 2.5, rng) for _ in range(M)])
        print(f"a = {a:>8g}: scalar reference sampler {M / c / 1e3:.1f} k draws/s")
    print("\nacceptance rate per proposal (k = 5/2): a, case1, case2, acg")
    for a in (-1e4, -100, -30, -10, -1, 1, 10, 20, 30, 100, 1e4):
        cells = []
        for method in ("case1", "case2", "acg"):
            if (method == "case1" and a >= 0) or (method == "case2" and a <= 1):
                cells.append("  -  ")
                continue
            _, _, acc = bg._DRAWERS[method](np.full(20000, float(a)), np.full(20000, 2.5), rng)
            cells.append(f"{acc.mean():.3f}")
        print(f"  {a:>8g}  " + "  ".join(cells))
    print("\nexact vector Bingham sampler (ACG rejection, d = 8, eigenvalues spread evenly on [0, scale]), "
          "100,000 draws at once:")
    for scale in (1.0, 1e2, 1e4):
        A = np.diag(np.linspace(0, scale, 8))
        _, c, _ = timed(lambda: bg.sample_vector_bingham(A, size=100_000, random_state=rng))
        print(f"  |a| = {scale:>6g}: {1e5 / c / 1e3:.0f} k draws/s")


def settle_sweep(cost, burn_in):
    """Sweep by which every chain has first entered the central 99.8 % of the pooled
    post-burn-in costs (how long the chains took to reach the region they then sample)."""
    lo, hi = np.quantile(cost[:, burn_in:], [0.001, 0.999])
    inside = (cost >= lo) & (cost <= hi)
    first = [int(np.argmax(row)) + 1 if row.any() else cost.shape[1] + 1 for row in inside]
    return max(first)


def fig3(args):
    ds = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=args.data_seed)
    print(f"\n== Fig. 3: 8 chains, {args.fig3} sweeps, burn-in = first half, data seed {args.data_seed}, "
          f"chain seed {args.seed} ==")
    for init in args.inits.split(","):
        for eps in (float(e) for e in args.eps.split(",")):
            g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=eps, n_iter=args.fig3, n_chains=8, init=init,
                                        random_state=args.seed)
            _, c, w = timed(lambda: g.fit(ds.X, ds.labels, ds.subspaces))
            tab = diagnostics_table(g.traces_, g.burn_in_)
            verdict = mixing_verdict(g.traces_, g.burn_in_)
            cells = ", ".join(f"{r['trace']}: R̂={r['split_rhat']:.3f} ESS={r['ess']:.0f}" for r in tab
                              if r["trace"] in ("cost", "dw"))
            fin = g.traces_["cost"][:, -1]
            accs = g.traces_["accuracy"][:, -1]
            print(f"init={init:6s} ε={eps:<6g} {'MIXED' if verdict['mixed'] else 'not yet'} | {cells} | "
                  f"settled by sweep {settle_sweep(g.traces_['cost'], g.burn_in_)} | "
                  f"final cost {fin.min():.4f}-{fin.max():.4f}, accuracy of z {accs.min():.2f}-{accs.max():.2f} "
                  f"| {c:.1f} s CPU, {w:.1f} s wall", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps-ref", type=int, default=600)
    ap.add_argument("--sweeps", type=int, default=10000)
    ap.add_argument("--sweeps-ref-yale", type=int, default=10)
    ap.add_argument("--sweeps-yale", type=int, default=200)
    ap.add_argument("--skip-hoff", action="store_true")
    ap.add_argument("--compile-time", action="store_true", help="measure the numba kernels' first-use compile time")
    ap.add_argument("--fig3", type=int, default=0, help="run the Fig. 3 experiment with this many sweeps")
    ap.add_argument("--eps", default="0.1,1,10,100", help="ε values of the Fig. 3 run (comma-separated)")
    ap.add_argument("--inits", default="random,kplane", help="starts of the Fig. 3 run (comma-separated)")
    ap.add_argument("--seed", type=int, default=0, help="random_state of the chains in the Fig. 3 run")
    ap.add_argument("--data-seed", type=int, default=0, help="random_state of the Fig. 3 dataset")
    ap.add_argument("--skip-sweeps", action="store_true")
    ap.add_argument("--skip-1d", action="store_true")
    args = ap.parse_args()
    if args.compile_time:
        compile_time()
    if not args.skip_sweeps:
        bench_sweeps(args)
    if not args.skip_1d:
        bench_1d(args)
    if args.fig3:
        fig3(args)


if __name__ == "__main__":
    main()
