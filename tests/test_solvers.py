"""Tests of the non-private subspace clustering solvers (issue 3).

Acceptance settings: the synthetic data of Fig. 2 (middle) of the subspace paper,
n=1000, d=10, k=3, q=3, σ=0.1, clipped to the unit ball, 5 data seeds; and σ=0.01.
Solver seeds differ from data seeds (a solver seeded like the generator would draw the
true subspaces as its first random initialisation).
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from dpcore.data import make_union_of_subspaces, random_subspaces
from dpcore.metrics import (clustering_accuracy, subspace_cost,
                            wasserstein_distance)
from dpcore.subspace.common import (affinity_from_coefficients, assign_to_subspaces, fit_subspaces,
                                    spectral_clustering)
from dpcore.subspace.kplane import KPlane, kplane_step
from dpcore.subspace.lrr import LRR, lrr_inexact_alm
from dpcore.subspace.solvers import SOLVERS, make_solver
from dpcore.subspace.ssc import SSC, mutual_coherence_lambda, ssc_admm
from dpcore.subspace.tsc import TSC, thresholding_graph

SEEDS = range(5)


@pytest.fixture(scope="module")
def fig2_data():
    return [make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=s) for s in SEEDS]


@pytest.fixture(scope="module")
def low_noise_data():
    return [make_union_of_subspaces(1000, 10, 3, 3, 0.01, random_state=s) for s in SEEDS]


def _check_result(model, n, k, d, q):
    assert model.labels_.shape == (n,)
    assert set(np.unique(model.labels_)) <= set(range(k))
    U = model.subspaces_
    assert U.shape == (k, d, q)
    # orthonormal columns to machine precision (eigh/SVD/QR outputs)
    assert np.allclose(np.einsum("kdi,kdj->kij", U, U), np.eye(q)[None], atol=1e-10)
    assert np.isfinite(model.cost_) and model.cost_ >= 0


# ----------------------------------------------------------------------------- acceptance
@pytest.mark.slow   # 2.6-4.3 s: keeps the quick run under 2 minutes
def test_fig2_middle_accuracy_and_dw(fig2_data):
    """k-plane (best of 10 inits), SSC and LRR: accuracy ≥ 0.95 and d_W ≤ 0.3 for ≥ 4 of 5
    seeds (the issue's thresholds). TSC's figures are printed (run with -s) and it is held
    to the same bar, which it meets by a wide margin on this setting."""
    ok = {name: 0 for name in SOLVERS}
    for s, ds in zip(SEEDS, fig2_data):
        for name in SOLVERS:
            m = make_solver(name, 3, 3, random_state=100 + s).fit(ds.X)
            _check_result(m, 1000, 3, 10, 3)
            acc = clustering_accuracy(ds.labels, m.labels_)
            dw = wasserstein_distance(m.subspaces_, ds.subspaces)
            print(f"sigma=0.1 seed={s} {name:6s} accuracy={acc:.4f} d_W={dw:.3f} cost={m.cost_:.5f}")
            ok[name] += (acc >= 0.95) and (dw <= 0.3)
    assert all(v >= 4 for v in ok.values()), ok


@pytest.mark.slow   # 2.6-4.3 s: keeps the quick run under 2 minutes
def test_low_noise_exact_recovery(low_noise_data):
    """σ = 0.01: SSC and LRR recover the clusters exactly (accuracy 1.0) for all 5 seeds."""
    for s, ds in zip(SEEDS, low_noise_data):
        for cls in (SSC, LRR):
            m = cls(n_clusters=3, subspace_dim=3, random_state=200 + s).fit(ds.X)
            assert clustering_accuracy(ds.labels, m.labels_) == 1.0, (cls.__name__, s)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name", list(SOLVERS))
def test_bad_input_names_parameter(name):
    X = make_union_of_subspaces(30, 5, 2, 2, 0.05, random_state=0).X
    with pytest.raises(ValueError, match="n_clusters"):
        make_solver(name, 31, 2).fit(X)          # k > n
    with pytest.raises(ValueError, match="subspace_dim"):
        make_solver(name, 2, 5).fit(X)           # q ≥ d
    Xbad = X.copy()
    Xbad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X must contain only finite"):
        make_solver(name, 2, 2).fit(Xbad)
    Xbad[3, 1] = np.inf
    with pytest.raises(ValueError, match="X must contain only finite"):
        make_solver(name, 2, 2).fit(Xbad)


def test_bad_solver_specific_parameters():
    X = make_union_of_subspaces(30, 5, 2, 2, 0.05, random_state=0).X
    with pytest.raises(ValueError, match="n_neighbors"):
        TSC(n_clusters=2, subspace_dim=2, n_neighbors=30).fit(X)         # s ≥ n
    with pytest.raises(ValueError, match="variant"):
        TSC(n_clusters=2, subspace_dim=2, variant="fast").fit(X)
    with pytest.raises(ValueError, match="alpha"):
        SSC(n_clusters=2, subspace_dim=2, alpha=0).fit(X)
    with pytest.raises(ValueError, match="lam"):
        LRR(n_clusters=2, subspace_dim=2, lam=-1).fit(X)
    with pytest.raises(ValueError, match="n_init"):
        KPlane(n_clusters=2, subspace_dim=2, n_init=0).fit(X)
    with pytest.raises(ValueError, match="init"):
        KPlane(n_clusters=2, subspace_dim=2, init=np.zeros((2, 5, 2))).fit(X)   # not orthonormal
    with pytest.raises(ValueError, match="solver must be one of"):
        make_solver("kmeans", 2, 2)
    with pytest.raises(ValueError, match="bad parameter"):
        make_solver("ssc", 2, 2, n_neighbors=3)


# ----------------------------------------------------------------------------- shared steps
def test_fit_subspaces_recovers_noiseless_subspaces_and_fallbacks():
    ds = make_union_of_subspaces(300, 8, 3, 2, 0.0, random_state=1)
    U = fit_subspaces(ds.X, ds.labels, 3, 2, random_state=0)
    # noiseless points of a 2-D subspace: the top-2 singular vectors span it exactly, so
    # the true basis is reproduced by projecting onto the fit (float rounding ~1e-15; the
    # scatter-matrix eigh squares the condition number, hence 1e-10)
    for ell in range(3):
        V = ds.subspaces[ell]
        assert np.linalg.norm(V - U[ell] @ (U[ell].T @ V)) < 1e-10
    # cluster 3 is empty -> random orthonormal basis; cluster 4 has a single point ->
    # its span is contained in the fitted 2-D subspace
    labels = ds.labels.copy()
    labels[0] = 4
    U5 = fit_subspaces(ds.X, labels, 5, 2, random_state=0)
    assert np.allclose(np.einsum("kdi,kdj->kij", U5, U5), np.eye(2)[None], atol=1e-10)
    x = ds.X[0]
    assert np.linalg.norm(x - U5[4] @ (U5[4].T @ x)) < 1e-10 * np.linalg.norm(x)


def test_assign_to_subspaces_is_nearest():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 6))
    U = random_subspaces(4, 6, 2, rng)
    lab = assign_to_subspaces(X, U)
    # brute force with explicit projections
    D = np.stack([np.linalg.norm(X - X @ B @ B.T, axis=1) for B in U], axis=1)
    assert np.array_equal(lab, D.argmin(axis=1))


def test_spectral_clustering_recovers_blocks():
    # block-diagonal affinity with weak random cross-block noise: exact recovery expected
    rng = np.random.default_rng(0)
    truth = np.repeat(np.arange(3), [40, 25, 35])
    W = (truth[:, None] == truth[None, :]) * rng.uniform(0.5, 1.0, (100, 100))
    W = W + 0.01 * rng.uniform(size=(100, 100))
    lab = spectral_clustering(W, 3, random_state=0)
    assert clustering_accuracy(truth, lab) == 1.0
    import scipy.sparse as sp
    lab_sparse = spectral_clustering(sp.csr_matrix(np.where(W > 0.1, W, 0.0)), 3, random_state=0)
    assert clustering_accuracy(truth, lab_sparse) == 1.0


# ----------------------------------------------------------------------------- k-plane
def test_kplane_cost_is_monotone_and_matches_eq3():
    ds = make_union_of_subspaces(400, 10, 3, 3, 0.1, random_state=7)
    m = KPlane(n_clusters=3, subspace_dim=3, n_init=3, random_state=1).fit(ds.X)
    h = np.array(m.cost_history_)
    # each assign/refit iteration can only lower eq. (3); allow rounding (1e-12)
    assert np.all(np.diff(h) <= 1e-12)
    assert m.cost_ == pytest.approx(subspace_cost(ds.X, m.subspaces_), rel=1e-12)
    assert np.array_equal(m.labels_, assign_to_subspaces(ds.X, m.subspaces_))


def test_kplane_from_given_bases_and_step():
    ds = make_union_of_subspaces(500, 10, 3, 3, 0.05, random_state=2)
    # started at the truth, k-plane stays there (no restarts when init is an array)
    m = KPlane(n_clusters=3, subspace_dim=3, init=ds.subspaces, random_state=0).fit(ds.X)
    assert clustering_accuracy(ds.labels, m.labels_) >= 0.99
    assert wasserstein_distance(m.subspaces_, ds.subspaces) < 0.2
    # one kplane_step from random bases does not increase the cost
    U0 = random_subspaces(3, 10, 3, np.random.default_rng(5))
    labels, U1 = kplane_step(ds.X, U0, random_state=0)
    assert subspace_cost(ds.X, U1) <= subspace_cost(ds.X, U0) + 1e-12
    assert labels.shape == (500,)


def test_kplane_reseeds_empty_clusters():
    # one starting subspace orthogonal to all the data gets no point; it must be re-seeded
    rng = np.random.default_rng(0)
    X = np.zeros((60, 4))
    X[:, :2] = rng.standard_normal((60, 2))
    U0 = np.stack([np.eye(4)[:, [0, 1]], np.eye(4)[:, [2, 3]]])
    labels, U1 = kplane_step(X, U0, random_state=0)
    assert np.bincount(labels, minlength=2).min() >= 2   # every cluster has ≥ q points
    assert np.allclose(np.einsum("kdi,kdj->kij", U1, U1), np.eye(2)[None], atol=1e-10)


# ----------------------------------------------------------------------------- SSC
def test_ssc_admm_matches_lasso_objective():
    """Each column of C solves min ‖c‖₁ + λ/2‖xᵢ − X₋ᵢc‖² (c_i = 0). Compare the objective
    reached by our ADMM (run to a tight tolerance) with scikit-learn's coordinate descent:
    the objective is unique even where the minimiser is not, so both must agree to within
    the solvers' tolerances (relative 1e-4)."""
    ds = make_union_of_subspaces(60, 5, 2, 2, 0.05, random_state=4)
    X = ds.X
    lam, _ = mutual_coherence_lambda(X, 20.0)
    C, _, err = ssc_admm(X, lam, rho=20.0, max_iter=20000, tol=1e-8)
    assert err <= 1e-8
    assert np.all(np.diag(C) == 0)
    d = X.shape[1]
    for i in (0, 17, 42):
        others = np.delete(np.arange(60), i)
        c_ours = C[others, i]
        obj = lambda c: np.abs(c).sum() + lam / 2 * np.sum((X[i] - X[others].T @ c) ** 2)
        # sklearn: (1/(2d))‖y − Ac‖² + a‖c‖₁; multiply by d·λ → λ/2‖·‖² + a·d·λ‖c‖₁
        las = Lasso(alpha=1.0 / (lam * d), fit_intercept=False, tol=1e-10, max_iter=100000)
        las.fit(X[others].T, X[i])
        assert obj(c_ours) == pytest.approx(obj(las.coef_), rel=1e-4)


def test_ssc_attributes_and_affinity():
    ds = make_union_of_subspaces(150, 6, 2, 2, 0.02, random_state=0)
    m = SSC(n_clusters=2, subspace_dim=2, random_state=0).fit(ds.X)
    _check_result(m, 150, 2, 6, 2)
    assert m.coherence_ > 0 and m.lambda_ == pytest.approx(20.0 / m.coherence_)
    assert np.allclose(m.affinity_, m.affinity_.T)
    assert np.all(np.diag(m.coef_) == 0)
    # the ADMM stopped on the authors' rule or at max_iter
    assert m.admm_error_ <= 2e-4 or m.n_iter_ == 200
    # reproducible
    m2 = SSC(n_clusters=2, subspace_dim=2, random_state=0).fit(ds.X)
    assert np.array_equal(m.labels_, m2.labels_)


# ----------------------------------------------------------------------------- LRR
def _lrr_naive(Y, lam, tol=1e-8, max_iter=3000):
    """Inexact ALM with the full n×n Z (no row-space reduction), for comparison."""
    d, n = Y.shape
    Z = np.zeros((n, n)); J = Z.copy(); E = np.zeros((d, n)); Y1 = E.copy(); Y2 = Z.copy()
    mu, rho, mu_max = 1e-6, 1.1, 1e10
    inv_a = np.linalg.inv(Y.T @ Y + np.eye(n))
    for _ in range(max_iter):
        U, s, Vt = np.linalg.svd(Z + Y2 / mu, full_matrices=False)
        J = (U * np.maximum(s - 1 / mu, 0)) @ Vt
        Z = inv_a @ (Y.T @ Y - Y.T @ E + J + (Y.T @ Y1 - Y2) / mu)
        R = Y - Y @ Z
        M = R + Y1 / mu
        nrm = np.linalg.norm(M, axis=0)
        E = M * np.where(nrm > lam / mu, 1 - lam / mu / np.maximum(nrm, 1e-300), 0)[None]
        l1, l2 = R - E, Z - J
        if max(np.abs(l1).max(), np.abs(l2).max()) < tol:
            break
        Y1 += mu * l1; Y2 += mu * l2; mu = min(rho * mu, mu_max)
    return Z, E


def test_lrr_row_space_reduction_matches_full_problem():
    """Liu et al.'s Thm. 3 (Z* in the row space of Y) makes the d×d-sized solve exact: the
    LRR objective ‖Z‖_* + λ‖E‖_{2,1} must equal that of the full n×n solve (relative 1e-5,
    both run to tol 1e-8), and both must satisfy Y = YZ + E."""
    ds = make_union_of_subspaces(40, 6, 2, 2, 0.1, random_state=0)
    Y = ds.X.T
    lam = 0.5
    Z1, E1, _, err = lrr_inexact_alm(ds.X, lam, max_iter=5000, tol=1e-8)
    Z2, E2 = _lrr_naive(Y, lam)
    obj = lambda Z, E: np.linalg.svd(Z, compute_uv=False).sum() + lam * np.linalg.norm(E, axis=0).sum()
    assert err < 1e-8
    assert np.abs(Y - Y @ Z1 - E1).max() < 1e-6
    assert obj(Z1, E1) == pytest.approx(obj(Z2, E2), rel=1e-5)


def test_lrr_noiseless_gives_shape_interaction_matrix():
    """Noiseless independent subspaces, large λ: E = 0 and Z* = V Vᵀ (the shape interaction
    matrix, Liu et al. Thm. 4), which is block diagonal in the true clusters."""
    ds = make_union_of_subspaces(90, 8, 3, 2, 0.0, random_state=3)   # 3·2 = 6 ≤ 8: independent
    m = LRR(n_clusters=3, subspace_dim=2, lam=100.0, random_state=0).fit(ds.X)
    _, s, Vt = np.linalg.svd(ds.X.T, full_matrices=False)
    r = int(np.sum(s > 1e-10 * s[0]))
    VVt = Vt[:r].T @ Vt[:r]
    assert np.abs(m.coef_ - VVt).max() < 1e-4
    off_block = ds.labels[:, None] != ds.labels[None, :]
    assert np.abs(m.coef_[off_block]).max() < 1e-4
    assert clustering_accuracy(ds.labels, m.labels_) == 1.0
    assert np.linalg.norm(m.error_, axis=0).max() < 1e-4


# ----------------------------------------------------------------------------- TSC
def test_tsc_graph_and_variants():
    ds = make_union_of_subspaces(300, 10, 3, 3, 0.01, random_state=0)
    W = thresholding_graph(ds.X, 5)
    assert (W != W.T).nnz == 0 and W.diagonal().max() == 0
    assert np.all(np.diff(W.indptr) >= 5)            # every point keeps its s neighbours
    assert W.data.max() <= 2.0 and W.data.min() > 0  # exp(−2 arccos) ≤ 1, mutual edges add
    for variant in ("full", "simplified"):
        m = TSC(n_clusters=3, subspace_dim=3, n_neighbors=8, variant=variant, random_state=0).fit(ds.X)
        _check_result(m, 300, 3, 10, 3)
        assert clustering_accuracy(ds.labels, m.labels_) == 1.0
        if variant == "simplified" and not m.used_fallback_:
            # connected components were used: exactly k of them
            assert m.n_components_ == 3


def test_tsc_low_noise_accuracy(low_noise_data):
    for s, ds in zip(SEEDS, low_noise_data):
        m = TSC(n_clusters=3, subspace_dim=3, random_state=s).fit(ds.X)
        assert clustering_accuracy(ds.labels, m.labels_) == 1.0, s


def test_affinity_from_coefficients():
    C = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, -4.0], [0.0, 1.0, 0.0]])
    W = affinity_from_coefficients(C, normalize_columns=False)
    assert np.allclose(W, np.abs(C) + np.abs(C).T)
    Wn = affinity_from_coefficients(C, normalize_columns=True)
    A = np.abs(C) / np.abs(C).max(axis=0)
    assert np.allclose(Wn, A + A.T)
