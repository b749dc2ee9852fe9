"""Correctness of the Bingham samplers (dpcore.subspace.bingham).

References computed here independently of the samplers:
- the 1-D density of eq. (25) integrated numerically on a fine grid (KS tests);
- second moments of the vector Bingham distribution by numerical integration: for
  Θ ≻ 0, the Bingham law exp(−yᵀΘy) on the sphere is the law of g/‖g‖ given ‖g‖ = 1 with
  g ~ N(0, (2Θ)⁻¹) (Kume & Wood 2005), so E[y_j²] = σ_j²·f_j(1)/f(1) where f is the density
  of Σ σᵢ²χ²₁ and f_j that of the same sum with the j-th term replaced by σ_j²χ²₃; both
  densities are computed by Fourier inversion of their characteristic functions.
"""
import numpy as np
import pytest
from scipy import integrate, special, stats

from dpcore.subspace import bingham as bg

# ----------------------------------------------------------------------------- references


def bingham_1d_cdf(a, k, n_grid=400_001):
    """CDF of f(x) ∝ x^(-1/2)(1-x)^k e^(ax) on (0, 1). With x = sin²φ the density of φ on
    (0, π/2) is ∝ cos^(2k+1)φ · e^(a sin²φ), smooth for k ≥ −1/2, integrated by the
    trapezoidal rule (error ~1e-9, far below the KS resolution ~1/√n)."""
    phi = np.linspace(0.0, np.pi / 2, n_grid)
    with np.errstate(divide="ignore"):
        lg = (2 * k + 1) * np.log(np.cos(phi)) + a * np.sin(phi) ** 2
    if 2 * k + 1 > 0:
        lg[-1] = -np.inf
    lg -= lg[np.isfinite(lg)].max()
    F = integrate.cumulative_trapezoid(np.exp(lg), phi, initial=0.0)
    F /= F[-1]

    def cdf(x):
        x = np.asarray(x, dtype=float)
        return np.interp(np.arctan2(np.sqrt(x), np.sqrt(1.0 - x)), phi, F)
    return cdf


def bingham_second_moments(lam):
    """E[y_j²] under p(y) ∝ exp(Σ λ_j y_j²) on the unit sphere, by numerical integration."""
    lam = np.asarray(lam, dtype=float)
    Lam = lam.max() - lam
    D = lam.size
    lo, hi = 1e-12, float(D)  # shift so that Σσ² = 1 (keeps the density at 1 well inside its support)
    for _ in range(200):
        b = 0.5 * (lo + hi)
        lo, hi = (b, hi) if np.sum(1 / (b + 2 * Lam)) > 1 else (lo, b)
    s2 = 1.0 / (b + 2 * Lam)

    def density_at_one(extra):
        def phi(t):
            v = np.prod((1 - 2j * s2 * t) ** -0.5)
            return v if extra is None else v / (1 - 2j * s2[extra] * t)
        re = integrate.quad(lambda t: phi(t).real, 0, np.inf, weight="cos", wvar=1, limlst=200)[0]
        im = integrate.quad(lambda t: phi(t).imag, 0, np.inf, weight="sin", wvar=1, limlst=200)[0]
        return (re + im) / np.pi

    f0 = density_at_one(None)
    return np.array([s2[j] * density_at_one(j) / f0 for j in range(D)])


def test_numerical_reference_matches_closed_forms():
    # uniform on the sphere: E[y_j²] = 1/D; on the circle the Bingham law of the angle is a
    # von Mises law of 2φ: E[cos²φ] = (1 + I₁(κ/2)/I₀(κ/2))/2 for exp(κ cos²φ).
    assert np.allclose(bingham_second_moments(np.zeros(4)), 0.25, atol=1e-8)
    kappa = 3.0
    expected = 0.5 * (1 + special.i1(kappa / 2) / special.i0(kappa / 2))
    assert bingham_second_moments([kappa, 0.0])[0] == pytest.approx(expected, abs=1e-8)


def moment_check(samples, truth):
    """Max over entries of |mean(x xᵀ) − truth| / standard error. Entries are sample means of
    i.i.d. draws, so each ratio is ≈ N(0, 1); 4 standard errors is exceeded with probability
    6e-5 per entry (≈ 0.06 expected exceedances over all the entries of this file)."""
    P = np.einsum("ni,nj->nij", samples, samples)
    se = P.std(axis=0, ddof=1) / np.sqrt(len(samples))
    return np.max(np.abs(P.mean(axis=0) - truth) / (se + 1e-12))


# ----------------------------------------------------------------------------- 1-D conditional
A_VALUES = (-1e4, -30.0, 0.0, 30.0, 1e4)


@pytest.mark.parametrize("k", [-0.5, 0.0, 2.5])
@pytest.mark.parametrize("a", A_VALUES)
def test_1d_sampler_auto_matches_density_ks(a, k):
    rng = np.random.default_rng(1000 + A_VALUES.index(a) * 10 + int(2 * k + 1))
    x = bg.sample_bingham_1d(a, k, size=2000, random_state=rng)
    assert np.all((x > 0) & (x < 1))
    assert stats.kstest(x, bingham_1d_cdf(a, k)).pvalue > 0.01


@pytest.mark.parametrize("method,a,k", [
    ("case1", -1e4, 2.5), ("case1", -30.0, 0.0), ("case1", -30.0, 10.0),
    ("case2", 30.0, 2.5), ("case2", 1e4, -0.5), ("case2", 1e4, 10.0),
    ("acg", -1e4, 2.5), ("acg", -30.0, 2.5), ("acg", 0.0, 2.5), ("acg", 30.0, 2.5), ("acg", 1e4, 2.5),
    ("acg", 1e5, 10.0), ("acg", -3.0, -0.5),
])
def test_1d_sampler_each_method_matches_density_ks(method, a, k):
    rng = np.random.default_rng(7)
    x = bg.sample_bingham_1d(a, k, size=2000, random_state=rng, method=method)
    assert stats.kstest(x, bingham_1d_cdf(a, k)).pvalue > 0.01


def test_1d_paper_simplified_case2_is_biased_at_moderate_a():
    # The paper's Case 2 with Z → ∞ reweights f by 1/(1 + e^(−ax)·Beta(x; 1/2, k+1)): at a = 3
    # that removes most of the mass near 0, which a KS test with 20,000 draws sees clearly.
    x = bg.sample_bingham_1d(3.0, 2.5, size=20_000, random_state=0, method="case2_paper")
    assert stats.kstest(x, bingham_1d_cdf(3.0, 2.5)).pvalue < 1e-6


def test_1d_sampler_vectorised_over_mixed_parameters():
    a = np.array([-1e5, -50.0, -1.0, 0.0, 2.0, 40.0, 1e5] * 300)
    k = np.tile([0.0, 2.5, 10.0], 700)[: a.size]
    x = bg.sample_bingham_1d(a, k, random_state=3)
    assert x.shape == a.shape and np.all((x > 0) & (x < 1))
    # concentration: a = −1e5 puts x at ≈ 1/(2|a|) = 5e-6, a = 1e5 puts 1 − x at ≈ (k+1)/a
    assert np.all(x[a == -1e5] < 1e-3) and np.all(1 - x[a == 1e5] < 1e-3)


@pytest.mark.parametrize("kwargs,match", [
    (dict(a=1.0, k=-1.0), "k must be > -1"),
    (dict(a=1.0, k=1.0, method="case1"), "case1"),
    (dict(a=0.5, k=1.0, method="case2"), "case2"),
    (dict(a=1.0, k=1.0, method="beta"), "method must be one of"),
    (dict(a=np.nan, k=1.0), "finite"),
])
def test_1d_sampler_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bg.sample_bingham_1d(random_state=0, **kwargs)


def test_acg_b_newton_is_monotone_and_converges():
    rng = np.random.default_rng(0)
    lam = np.vstack([np.zeros(8), rng.standard_normal((5, 8)) ** 2 * 10, np.linspace(0, 1e4, 8)])
    b_prev = np.zeros(len(lam))
    for it in range(1, 8):
        b = bg.acg_b(lam, n_newton=it)
        assert np.all(b >= b_prev - 1e-12) and np.all((b >= 1 - 1e-12) & (b <= 8 + 1e-12))
        b_prev = b
    Lam = lam.max(axis=1, keepdims=True) - lam
    assert np.allclose(np.sum(1 / (b[:, None] + 2 * Lam), axis=1), 1.0, atol=1e-6)


# ----------------------------------------------------------------------------- vector Bingham
CASES = [(d, s) for d in (3, 5, 10) for s in (1.0, 1e2, 1e4)]


@pytest.mark.parametrize("d,scale", CASES)
def test_vector_bingham_second_moments_gibbs_exact_and_integration_agree(d, scale):
    rng = np.random.default_rng(d * 100 + int(np.log10(scale)))
    lam = scale * np.sort(rng.uniform(-1, 1, d))
    lam[-1] = scale
    E = np.linalg.qr(rng.standard_normal((d, d)))[0]
    A = E @ np.diag(lam) @ E.T
    truth = E @ np.diag(bingham_second_moments(lam)) @ E.T
    exact = bg.sample_vector_bingham(A, size=4000, random_state=rng)
    assert np.allclose(np.linalg.norm(exact, axis=1), 1.0)
    assert moment_check(exact, truth) < 4.0
    # Hoff's Gibbs (Alg. 4): 2000 independent chains, 30 sweeps each from a uniform start;
    # their final states are i.i.d. and (after 30 sweeps) stationary to far below one SE.
    gibbs = bg.vector_bingham_gibbs(np.broadcast_to(A, (2000, d, d)), 30, random_state=rng)
    assert moment_check(gibbs, truth) < 4.0


def test_vector_bingham_batched_and_degenerate_dimensions():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((2, 3, 4, 4))
    x = bg.sample_vector_bingham(A, random_state=rng)
    assert x.shape == (2, 3, 4) and np.allclose(np.linalg.norm(x, axis=-1), 1)
    one = bg.sample_vector_bingham(np.ones((1, 1)), size=50, random_state=rng)
    assert set(np.unique(one)) == {-1.0, 1.0}
    with pytest.raises(ValueError, match="square"):
        bg.sample_vector_bingham(np.ones((3, 2)))


# ----------------------------------------------------------------------------- matrix Bingham
@pytest.mark.parametrize("column_sampler", ["acg", "hoff"])
@pytest.mark.parametrize("scale", [1.0, 1e2, 1e4])
def test_matrix_bingham_q_equals_d_minus_1_against_integration(column_sampler, scale):
    # For q = d − 1, UUᵀ = I − vvᵀ with v the unit normal, and tr(UᵀAU) = tr A − vᵀAv, so
    # v ~ Bingham(−βA) and E[UUᵀ] = I − E[vvᵀ], computed by numerical integration.
    rng = np.random.default_rng(int(np.log10(scale)) + (0 if column_sampler == "acg" else 10))
    d, beta = 3, 1.0
    lam = scale * np.array([1.0, 0.3, 0.0])
    E = np.linalg.qr(rng.standard_normal((d, d)))[0]
    A = E @ np.diag(lam) @ E.T
    truth = np.eye(d) - E @ np.diag(bingham_second_moments(-beta * lam)) @ E.T
    N = 3000
    U = bg.sample_matrix_bingham(np.broadcast_to(A, (N, d, d)), beta, n_sweeps=30, q=2, random_state=rng,
                                 column_sampler=column_sampler)
    P = np.einsum("nij,nkj->nik", U, U)
    se = P.std(axis=0, ddof=1) / np.sqrt(N)
    assert np.max(np.abs(P.mean(axis=0) - truth) / (se + 1e-12)) < 4.0


def test_matrix_bingham_uniform_when_A_is_zero():
    # A = 0: the Haar measure on the Stiefel manifold, E[UUᵀ] = (q/d)·I. Each entry of UUᵀ
    # is bounded by 1, so 4 SE with SE ≤ 1/√N bounds the deviation.
    rng = np.random.default_rng(11)
    N, d, q = 4000, 6, 2
    U = bg.sample_matrix_bingham(np.zeros((N, d, d)), 1.0, n_sweeps=3, q=q, random_state=rng)
    P = np.einsum("nij,nkj->nik", U, U)
    se = P.std(axis=0, ddof=1) / np.sqrt(N)
    assert np.max(np.abs(P.mean(axis=0) - q / d * np.eye(d)) / (se + 1e-12)) < 4.0


def test_matrix_bingham_sweep_keeps_orthonormality_and_complement():
    rng = np.random.default_rng(2)
    m, d, q = 6, 10, 3
    X = rng.standard_normal((m, 200, d))
    A = np.einsum("mni,mnj->mij", X, X)
    U = bg.random_stiefel(m, d, q, rng)
    Uc = bg._complement(U)
    for _ in range(300):
        U, Uc = bg.matrix_bingham_gibbs_sweep(A, U, 50.0, rng, complement=Uc)
    Q = np.concatenate([U, Uc], axis=2)
    assert np.allclose(np.einsum("mdi,mdj->mij", Q, Q), np.eye(d), atol=1e-10)
    # β·λ-gaps of ~50·200 make the sample hug the top-q eigenspace of A
    top = np.linalg.eigh(A)[1][:, :, -q:]
    overlap = np.einsum("mdi,mdj->mij", U, top)
    assert np.all(np.linalg.norm(overlap, axis=(1, 2)) ** 2 > q - 0.05)


def test_matrix_bingham_single_matrix_and_bad_beta():
    rng = np.random.default_rng(4)
    U = bg.matrix_bingham_gibbs_sweep(np.eye(4), bg.random_stiefel((), 4, 2, rng), [1.0, 2.0], rng)
    assert U.shape == (4, 2) and np.allclose(U.T @ U, np.eye(2))
    with pytest.raises(ValueError, match="beta must be"):
        bg.matrix_bingham_gibbs_sweep(np.eye(4), np.eye(4)[:, :2], [1.0, 2.0, 3.0], rng)
    with pytest.raises(ValueError, match="column_sampler"):
        bg.matrix_bingham_gibbs_sweep(np.eye(4), np.eye(4)[:, :2], 1.0, rng, column_sampler="x")
