"""The compiled Gibbs engine (dpcore.subspace.gibbs_kernels) targets the same law as the numpy
engine: its draws are compared with exact densities, computed here independently of both
engines (numerical integration, grids). Every statistical check is a z-score against 4
standard errors (two-sided 6e-5 per check; about 60 checks in this file, so a false alarm
has probability ≈ 0.4 % per run) or a KS test at p > 1e-3, on fixed seeds (so the run is
reproducible; the confidence statements are about the choice of seed).
Also: fallback to numpy without numba, reproducibility, orthonormality, traces."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.data import make_union_of_subspaces
from dpcore.subspace import gibbs as gibbs_mod
from dpcore.subspace import gibbs_kernels as gk
from dpcore.subspace.bingham import random_stiefel
from dpcore.subspace.gibbs import GibbsSubspaceClustering
from test_bingham import bingham_second_moments, moment_check

needs_numba = pytest.mark.skipif(not gk.AVAILABLE, reason="numba is not installed")


# ----------------------------------------------------------------------------- vector Bingham
@needs_numba
@pytest.mark.parametrize("kappa", [-200.0, -3.0, 0.0, 2.0, 40.0, 1e4])
def test_column_sampler_d2_angle_matches_numerical_cdf(kappa):
    """d = 2: p(x) ∝ exp(xᵀAx) on the circle with A = R diag(κ, 0) Rᵀ; the angle φ of x
    relative to R's first axis has density ∝ exp(κ cos²φ) on [0, 2π), whose CDF is integrated
    on a fine grid. KS test on 4000 draws (angles folded to [0, π): the law is symmetric)."""
    rng = np.random.default_rng(int(abs(kappa)) + 1)
    th = 0.7
    R = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    A = R @ np.diag([kappa, 0.0]) @ R.T
    x = gk.sample_vector_bingham(A, 4000, rng)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert _angle_ks_pvalue(x, R, kappa) > 1e-3


def _angle_ks_pvalue(x, R, kappa):
    """KS p-value of the angles of circle draws x (relative to R's first axis, folded to [0, π):
    the law is symmetric) against the CDF of the density ∝ exp(κ cos²φ), integrated on a fine grid."""
    y = x @ R
    phi = np.mod(np.arctan2(y[:, 1], y[:, 0]), np.pi)
    grid = np.linspace(0.0, np.pi, 200_001)
    lg = kappa * np.cos(grid) ** 2
    F = integrate.cumulative_trapezoid(np.exp(lg - lg.max()), grid, initial=0.0)
    F /= F[-1]
    return stats.kstest(phi, lambda v: np.interp(v, grid, F)).pvalue


@needs_numba
@pytest.mark.parametrize("d,scale", [(3, 1.0), (3, 1e2), (3, 1e4), (3, -1e2), (5, 1e3), (10, 1e2)])
def test_column_sampler_second_moments_against_integration(d, scale):
    """E[xxᵀ] of 6000 draws against numerical integration (tests/test_bingham.py), for
    indefinite (uniform(−1, 1) spectra), positive and negative-definite scales."""
    rng = np.random.default_rng(d * 100 + int(np.log10(abs(scale))) + (50 if scale < 0 else 0))
    lam = scale * np.sort(rng.uniform(-1, 1, d))
    if scale < 0:
        lam = -np.abs(lam)                                   # negative definite
    E = np.linalg.qr(rng.standard_normal((d, d)))[0]
    A = E @ np.diag(lam) @ E.T
    truth = E @ np.diag(bingham_second_moments(lam)) @ E.T
    x = gk.sample_vector_bingham(A, 6000, rng)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert moment_check(x, truth) < 4.0


# ----------------------------------------------------------------------------- constrained column step (U-step)
@needs_numba
@pytest.mark.parametrize("scale", [1.0, 30.0, 1e3])
def test_u_step_q_equals_d_minus_1_against_integration(scale):
    """One cluster (k = 1, so the z-step is trivial) of points with XᵀX = A: the U-step
    targets exp((ε/2) tr(UᵀAU)) with q = d − 1 = 2, where UUᵀ = I − vvᵀ and v ~ Bingham(−(ε/2)A):
    E[UUᵀ] = I − E[vvᵀ] by numerical integration. 3000 chains, 30 sweeps (the compiled column
    updates, the Householder update of [U, U⊥] and of G = QᵀAQ are all exercised)."""
    rng = np.random.default_rng(int(np.log10(scale)) + 7)
    d, eps = 3, 2.0
    lam = scale * np.array([1.0, 0.3, 0.0])
    E = np.linalg.qr(rng.standard_normal((d, d)))[0]
    X = np.ascontiguousarray((E * np.sqrt(lam)).T)            # XᵀX = E diag(λ) Eᵀ
    truth = np.eye(d) - E @ np.diag(bingham_second_moments(-0.5 * eps * lam)) @ E.T
    N = 3000
    Q = gk.full_basis(random_stiefel((N, 1), d, 2, rng))
    gk.run(X, Q, 0.5 * eps, 2, 30, gk.seed_state(rng, N))
    U = Q[:, 0, :, :2]
    P = np.einsum("nij,nkj->nik", U, U)
    se = P.std(axis=0, ddof=1) / np.sqrt(N)
    assert np.max(np.abs(P.mean(axis=0) - truth) / (se + 1e-12)) < 4.0
    QQ = np.einsum("nij,nik->njk", Q[:, 0], Q[:, 0])
    assert np.allclose(QQ, np.eye(d), atol=1e-10)


# ----------------------------------------------------------------------------- full chain
# The tiny full chain (d = 2, q = 1, k = 2) against its grid density, on this engine and on the numpy
# engine: tests/test_gibbs.py::test_gibbs_sweep_targets_eq_10_exactly_on_a_tiny_problem.


@needs_numba
@pytest.mark.parametrize("eps", [0.5, 30.0, 3000.0])
def test_numba_z_step_frequencies_match_eq_11(eps):
    """The compiled z-step (k = 1 U-step skipped: q = 1 lines held fixed by comparing the first
    sweep's z only) against the exact categorical of eq. (11), including ε = 3000 where the
    log-space path draws probabilities far below 2^-53 (those cells must be ~never hit)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.1
    U = random_stiefel((1, 3), 3, 1, rng)
    expected = gibbs_mod.assignment_probabilities(X, U[0], eps)
    N = 4000
    Q = gk.full_basis(np.broadcast_to(U, (N, 3, 3, 1)).copy())
    z, _, _, _ = gk.run(np.ascontiguousarray(X), Q, 0.5 * eps, 1, 1, gk.seed_state(rng, N))
    freq = np.stack([(z == l).mean(axis=0) for l in range(3)], axis=1)
    se = np.sqrt(expected * (1 - expected) / N)
    assert np.all(np.abs(freq - expected) <= 4 * se + 1e-12)


# ----------------------------------------------------------------------------- estimator
@needs_numba
def test_engine_selection_and_reproducibility():
    ds = make_union_of_subspaces(150, 6, 2, 2, 0.1, random_state=0)
    kw = dict(n_clusters=2, subspace_dim=2, epsilon=3.0, n_iter=40, n_chains=3)
    a = GibbsSubspaceClustering(random_state=5, **kw).fit(ds.X)
    b = GibbsSubspaceClustering(random_state=5, **kw).fit(ds.X, callback=lambda i, n: None)  # other block splits
    c = GibbsSubspaceClustering(random_state=6, **kw).fit(ds.X)
    assert a.engine_ == "numba" and GibbsSubspaceClustering(column_sampler="hoff", n_iter=2).fit(ds.X).engine_ == "numpy"
    assert np.array_equal(a.chain_labels_, b.chain_labels_) and np.array_equal(a.chain_subspaces_, b.chain_subspaces_)
    assert np.array_equal(a.traces_["cost"], b.traces_["cost"])
    assert not np.array_equal(a.chain_subspaces_, c.chain_subspaces_)
    # random_state=None: fresh OS entropy, so two runs differ (secret noise)
    n1 = GibbsSubspaceClustering(**kw).fit(ds.X).chain_subspaces_
    n2 = GibbsSubspaceClustering(**kw).fit(ds.X).chain_subspaces_
    assert not np.array_equal(n1, n2)
    with pytest.raises(ValueError, match="engine must be one of"):
        GibbsSubspaceClustering(engine="cuda", **kw).fit(ds.X)
    with pytest.raises(ValueError, match="column_sampler='acg' only"):
        GibbsSubspaceClustering(engine="numba", column_sampler="hoff", **kw).fit(ds.X)


def test_fallback_to_numpy_without_numba(monkeypatch):
    """If numba is not importable, engine='auto' runs the numpy engine and engine='numba' is
    refused with a message saying so."""
    monkeypatch.setattr(gk, "AVAILABLE", False)
    ds = make_union_of_subspaces(120, 5, 2, 2, 0.1, random_state=1)
    g = GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, n_iter=20, random_state=0).fit(ds.X)
    assert g.engine_ == "numpy" and g.ledger_.epsilon == pytest.approx(1.0)
    with pytest.raises(ValueError, match="needs the numba package"):
        GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, n_iter=5, engine="numba").fit(ds.X)
    assert gibbs_mod._resolve_engine("auto") == "numpy"


@needs_numba
def test_numba_traces_orthonormality_and_ledger_past_a_reorthonormalisation():
    ds = make_union_of_subspaces(200, 8, 3, 2, 0.1, random_state=2)
    g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=2, epsilon=20.0, n_iter=300, n_chains=2, random_state=1,
                                release="mean", n_average=20, engine="numba").fit(ds.X, ds.labels, ds.subspaces)
    from dpcore.metrics import subspace_cost, wasserstein_distance
    U = g.chain_subspaces_
    assert np.allclose(np.einsum("ckdi,ckdj->ckij", U, U), np.eye(2), atol=1e-10)
    for c in range(2):
        assert g.traces_["cost"][c, -1] == pytest.approx(subspace_cost(ds.X, U[c]), rel=1e-9)
        assert g.traces_["dw"][c, -1] == pytest.approx(wasserstein_distance(U[c], ds.subspaces), abs=1e-9)
    assert g.ledger_.epsilon == pytest.approx(gibbs_mod.mean_release_epsilon(20.0, 2, 20))
    assert np.allclose(g.traces_["statistic"][:, 0], 1.0)
    assert g.traces_["accuracy"].shape == (2, 300)


@needs_numba
def test_compiled_contingency_equals_numpy():
    rng = np.random.default_rng(0)
    z = rng.integers(0, 3, size=(4, 50))
    y = rng.integers(0, 3, size=50)
    assert np.array_equal(gk.contingency(z, y, 3, 3), gibbs_mod._accuracy_counts(z, y, 3, 3))


def test_warmup_reports_seconds_and_auto_does_not_wait_for_a_compiling_thread(monkeypatch):
    assert gk.warmup() >= 0.0
    if gk.AVAILABLE:
        assert gk.ready() and gk.warmup() == 0.0 and gibbs_mod._resolve_engine("auto") == "numba"
        monkeypatch.setitem(gk._status, "ready", False)
        monkeypatch.setitem(gk._status, "compiling", True)        # as while the app's warm-up thread compiles
        assert gibbs_mod._resolve_engine("auto") == "numpy" and gibbs_mod._resolve_engine("numba") == "numba"


# ----------------------------------------------------------------------------- numerical building blocks
def _ulps(a, b):
    return np.abs(np.asarray(a, dtype=np.float64).view(np.int64) - np.asarray(b, dtype=np.float64).view(np.int64))


@needs_numba
def test_plain_arithmetic_log_and_exp_are_within_one_ulp_of_libm():
    """gibbs_kernels._log, _exp (fdlibm's algorithms in plain IEEE arithmetic, so the same bits on
    every CPU) and _log1p against libm (< 0.52 ulp): at most 1 ulp apart (2 for log1p) over the
    normal range, subnormals and the special values."""
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(0.0, 1.0, 3000), np.exp(rng.uniform(-700.0, 700.0, 3000)),
                        rng.uniform(0.99, 1.01, 1000), [5e-324, 1e-310, 0.5, 1.0, 2.0, 1.7e308]])
    assert _ulps([gk._log(v) for v in x], [math.log(v) for v in x]).max() <= 1
    y = np.concatenate([rng.uniform(-745.0, 709.0, 3000), rng.uniform(-40.0, 0.0, 3000), rng.uniform(-1e-3, 1e-3, 500),
                        [-745.0, -708.5, 709.7, 1e-300, -1e-300]])
    assert _ulps([gk._exp(v) for v in y], [math.exp(v) for v in y]).max() <= 1
    u = np.concatenate([rng.uniform(0.0, 10.0, 2000), np.exp(rng.uniform(-60.0, 3.0, 2000))])
    assert _ulps([gk._log1p(v) for v in u], [math.log1p(v) for v in u]).max() <= 2
    assert gk._exp(0.0) == 1.0 and gk._exp(-np.inf) == 0.0 and gk._exp(np.inf) == np.inf and gk._exp(-800.0) == 0.0
    assert gk._log(1.0) == 0.0 and gk._log(0.0) == -np.inf and math.isnan(gk._log(-1.0)) and gk._log(np.inf) == np.inf


@needs_numba
def test_householder_bases_random_start_and_reorthonormalisation():
    """full_basis keeps U and completes it to an orthogonal matrix; reorthonormalize returns the Q
    factor with R's diagonal > 0 (an orthonormal U comes back as itself, to rounding); the
    random start is orthonormal, a function of the seed, and Haar (E U₁₁² = 1/d)."""
    rng = np.random.default_rng(5)
    U = random_stiefel((40, 3), 7, 2, rng)
    Q = gk.full_basis(U)
    assert Q.shape == (40, 3, 7, 7) and Q.flags.c_contiguous and np.array_equal(Q[..., :2], U)
    assert np.allclose(np.einsum("...ai,...aj->...ij", Q, Q), np.eye(7), atol=1e-14)
    R = gk.reorthonormalize(Q, 2)
    assert np.allclose(R[..., :2], U, atol=1e-14) and np.allclose(np.einsum("...ai,...aj->...ij", R, R), np.eye(7),
                                                                 atol=1e-14)
    W = U + 0.01 * rng.standard_normal(U.shape)                 # drifted: R's diagonal stays positive
    R = gk.reorthonormalize(gk.full_basis(W), 2)
    assert np.all(np.einsum("...ai,...ai->...i", R[..., :2], W) > 0)
    assert np.allclose(np.einsum("...ai,...aj->...ij", R, R), np.eye(7), atol=1e-14)
    S = gk.random_stiefel((4000,), 5, 2, np.random.default_rng(6))
    assert S.shape == (4000, 5, 2) and np.allclose(np.einsum("mai,maj->mij", S, S), np.eye(2), atol=1e-14)
    assert np.array_equal(S, gk.random_stiefel((4000,), 5, 2, np.random.default_rng(6)))
    assert not np.array_equal(S, gk.random_stiefel((4000,), 5, 2, np.random.default_rng(7)))
    m = S[:, 0, :] ** 2                                          # each entry² ~ Beta(1/2, 2): mean 1/5, sd 0.2138
    assert np.all(np.abs(m.mean(axis=0) - 0.2) <= 4 * 0.2138 / math.sqrt(4000))


@needs_numba
def test_lambda_max_upper_bound_is_above_and_within_tolerance():
    """The shift c of the ACG envelope (Laguerre's iteration, bisection fallback): for random
    symmetric matrices of sizes 2-44 and scales 1e-3-1e5 (indefinite, one dominant eigenvalue,
    a repeated top eigenvalue, negative definite), after the kernels' tridiagonalisation,
    every eigenvalue of the tridiagonal is below c by Sturm count and c − λ_max ≤ 1e-3 + 1e-13·|λ_max|."""
    rng = np.random.default_rng(1)
    for trial in range(400):
        D = int(rng.integers(2, 45))
        sc = 10 ** rng.uniform(-3, 5)
        kind = trial % 4
        lam = [sc * rng.uniform(-1, 1, D), np.r_[sc, sc * 1e-3 * rng.random(D - 1)],
               np.r_[sc, sc, sc * rng.random(D - 2)], -sc * rng.random(D)][kind]
        E = np.linalg.qr(rng.standard_normal((D, D)))[0]
        M = np.ascontiguousarray((E * lam) @ E.T)
        V, tau, al, e, wk = np.zeros((D, D)), np.zeros(D), np.empty(D), np.zeros(D), np.empty((6, D))
        gk._tridiagonalize(M, D, V, tau, al, e, wk)
        c = gk._lambda_max_upper(al, e, D)
        lmax = np.linalg.eigvalsh(np.diag(al) + np.diag(e[:D - 1], 1) + np.diag(e[:D - 1], -1)).max()
        assert gk._sturm_below(al, e, D, c) == D, trial
        assert c - lmax <= 1e-3 + 1e-13 * max(abs(lmax), 1.0), trial


# ----------------------------------------------------------------------------- Lanczos/Cholesky envelope (large D)
@needs_numba
@pytest.mark.parametrize("d,scale,b,steps,cap,paths", [
    (3, 30.0, 1.0, 2, 2, "mixed"),        # c from 2 Lanczos steps: some Ω not PD, some proposals all rejected
    (3, 30.0, 1e-3, 2, 4, "fallback"),    # b tiny: Ω is never positive definite -> every draw falls back
    (5, 1e2, 3.0, 5, 1, "mixed"),         # c exact but b too large: one proposal, often rejected
    (24, 1e2, 1.0, 8, 2, "mixed"),
    (24, 1e2, 1.0, 13, 12, "fast"),       # the sweep's settings at D = 24 (min(_LANCZOS_STEPS, D // 2 + 1), _FAST_MAX_PROPOSALS)
    (24, -1e2, 1.0, 13, 12, "fast"),      # negative definite
])
def test_two_envelope_column_sampler_against_integration(d, scale, b, steps, cap, paths):
    """The sweep's column sampler for large D (gibbs_kernels._column_draw: Lanczos shift +
    Cholesky envelope with a b carried over, falling back to the tridiagonal path) against
    numerical integration: E[xxᵀ] of 6000 draws within 4 standard errors (moment_check), with
    the fraction of draws taken by each path as stated (so that both the fast path and both
    kinds of fallback, Ω not positive definite and every proposal rejected, are exercised
    while the law is checked). The starting vector e₁ of Lanczos is a random direction."""
    rng = np.random.default_rng(d * 1000 + int(steps) * 10 + cap + (7 if scale < 0 else 0))
    lam = scale * np.sort(rng.uniform(-1, 1, d))
    if scale < 0:
        lam = -np.abs(lam)
    E = np.linalg.qr(rng.standard_normal((d, d)))[0]
    A = E @ np.diag(lam) @ E.T
    truth = E @ np.diag(bingham_second_moments(lam)) @ E.T
    x, st = gk.sample_vector_bingham_two_envelopes(A, 6000, b, steps, cap, rng)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    tri, fast, props, fallbacks, chol_fail = st
    assert tri + fast == 6000 and fallbacks == tri
    if paths == "mixed":
        assert fast >= 600 and tri >= 600, st
    elif paths == "fallback":
        assert chol_fail == 6000, st
    else:
        assert fast >= 0.9 * 6000, st
    assert moment_check(x, truth) < 4.0


@needs_numba
def test_two_envelope_column_sampler_d2_angle_ks():
    """d = 2 (as the first test of this file) through the two-envelope sampler with about a third
    of the draws falling back (one proposal allowed): KS test of the angle against the integrated CDF."""
    rng = np.random.default_rng(77)
    kappa, th = 40.0, 0.7
    R = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    A = R @ np.diag([kappa, 0.0]) @ R.T
    x, st = gk.sample_vector_bingham_two_envelopes(A, 4000, 1.0, 2, 1, rng)
    assert st[1] >= 400 and st[0] >= 400, st
    assert _angle_ks_pvalue(x, R, kappa) > 1e-3


@needs_numba
def test_u_step_with_the_lanczos_path_against_integration():
    """The compiled U-step at D = d − q + 1 ≥ _LANCZOS_MIN_D, where the sweep uses the
    Lanczos/Cholesky envelope: one cluster (k = 1, so the z-step is trivial), q = 1, d = 21,
    points with XᵀX = A; the column's law is then the vector Bingham exp((ε/2)xᵀAx), whose
    E[xxᵀ] is integrated numerically. 1500 chains × 12 sweeps (the first draw of every chain
    is tridiagonal, which stores b; the counters check that ≥ 80 % of the later ones took the
    Lanczos path); moment_check within 4 standard errors."""
    rng = np.random.default_rng(5)
    d, eps = 21, 2.0
    lam = 60.0 * np.sort(rng.random(d))
    E = np.linalg.qr(rng.standard_normal((d, d)))[0]
    X = np.ascontiguousarray((E * np.sqrt(lam)).T)
    truth = E @ np.diag(bingham_second_moments(0.5 * eps * lam)) @ E.T
    N = 1500
    Q = gk.full_basis(random_stiefel((N, 1), d, 1, rng))
    st = np.zeros((N, 5), dtype=np.int64)
    gk.run(X, Q, 0.5 * eps, 1, 12, gk.seed_state(rng, N), stats=st)
    tot = st.sum(0)
    assert tot[1] >= 0.8 * 11 * N, tot
    u = Q[:, 0, :, 0]
    assert moment_check(u, truth) < 4.0


# ----------------------------------------------------------------------------- threads
@needs_numba
def test_chains_in_parallel_threads_give_the_same_draws_and_respect_single_threaded():
    """run_block's chains draw only from their own streams, so 1 and 2 threads give identical
    results; n_threads is 1 inside a caller's single_threaded() (the reproduction's workers),
    min(chains, cores) otherwise, and the estimator's fit counts its own context."""
    from dpcore.subspace.common import single_threaded, single_threaded_depth
    ds = make_union_of_subspaces(120, 6, 2, 2, 0.1, random_state=3)
    X = np.ascontiguousarray(ds.X)
    rng = np.random.default_rng(0)
    Q0 = gk.full_basis(random_stiefel((4, 2), 6, 2, rng))
    st0 = gk.seed_state(rng, 4)
    outs = []
    for threads in (1, 2):
        Q, st = Q0.copy(), st0.copy()
        A, zprev, env, stats = gk.new_state(Q, X.shape[0], 2)
        outs.append(gk.run_block(X, 0.1, Q, A, zprev, env, stats, 0, 3.0, 2, 30, st, True, threads) + (Q,))
    assert all(np.array_equal(a, b) for a, b in zip(*outs))
    cores = gk._cpu_count()
    assert gk.n_threads(8) == min(8, cores) and gk.n_threads(1) == 1
    with single_threaded():
        assert single_threaded_depth() == 1 and gk.n_threads(8) == 1 and gk.n_threads(8, outer_contexts=1) == min(8, cores)
        with single_threaded():
            assert single_threaded_depth() == 2 and gk.n_threads(8, outer_contexts=1) == 1
    assert single_threaded_depth() == 0
