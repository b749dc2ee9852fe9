"""Privacy of sample-aggregate (Alg. 1): the exact privacy profile of the Gaussian step and
its calibration, and the β-smoothness of S(B) (docs/sample_aggregate.md).

Neighbouring datasets give output sets B, B′ that differ in at most s = ⌊√m⌋ outputs.
Normalising B's noise sd to 1, the two releases are P = N(0, I_D) and Q = N(μe₁, e^{2b}I_D)
with |b| ≤ β and |μ| ≤ α·min(1, e^b); the release is (ε, δ)-DP iff the sup of H_ε(P‖Q) over
that set is ≤ δ. "Construction 1" of the issue is the realisable pair with the same centre
and S(B′) = e^β·S(B): μ = 0, b = ±β.
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.privacy import analytic_gaussian_delta
from dpcore.privacy.sample_aggregate import (alg1_constants, calibrate_gaussian_step, center_of_attention,
                                     gaussian_hockey_stick,
                                     gaussian_step_delta, nearest_neighbour_radii, paper_constants, radii_at,
                                     smooth_sensitivity)

# (D, m, δ): a one-dimensional f, and the Fig. 2 middle setting (D = 165, m = 48, δ = 1/(n ln n), n = 1000)
SETTINGS = [(1, 100, 1e-5), (165, 48, 1.45e-4)]
EPSILONS = [1.0, 10.0, 50.0, 100.0, 1000.0]
# the quadrature's relative tolerance is 1e-10; 1e-9 leaves a 10× margin
REL = 1e-9


def _hockey_stick_difference(mu, b, eps, D):
    """An independent evaluation of H_ε(P‖Q) = P(A) − e^ε Q(A), A = {L > ε}, with scipy's
    ncx2 (for moderate ε only: the difference cancels and e^ε overflows at large ε)."""
    tau2 = math.exp(2 * b)
    c = 0.5 * math.expm1(-2 * b)
    a = mu / -math.expm1(2 * b)
    lam = a * a
    K = mu * mu / (2 * tau2) + D * b
    wstar = lam + (eps - K) / c
    lq = (a - mu) ** 2 / tau2          # under Q, ‖x − x₀‖²/τ² is ncχ²_D(((a − μ)/τ)²)
    P = stats.ncx2(D, lam) if lam > 0 else stats.chi2(D)
    Q = stats.ncx2(D, lq) if lq > 0 else stats.chi2(D)
    if c > 0:
        return P.sf(wstar) - math.exp(eps) * Q.sf(wstar / tau2)
    return P.cdf(wstar) - math.exp(eps) * Q.cdf(wstar / tau2)


# --------------------------------------------------------------------------- (a) exact δ
@pytest.mark.parametrize("D, m, delta", SETTINGS)
@pytest.mark.parametrize("eps", EPSILONS)
def test_worst_realisable_pair_is_within_delta_at_the_constants_used(D, m, delta, eps):
    c = alg1_constants(m, eps, delta, D)
    assert c.exact_delta <= delta
    # construction 1 (same centre, S(B′) = e^β S(B)) in both orders
    for b in (c.beta, -c.beta):
        assert gaussian_hockey_stick(0.0, b, eps, D) <= delta * (1 + REL)
    # random admissible (μ, b), off the calibration grid (fixed seed)
    rng = np.random.default_rng(int(eps) * 1000 + D)
    for _ in range(12):
        b = rng.uniform(-c.beta, c.beta)
        mu = rng.uniform(0, c.alpha * min(1.0, math.exp(b)))
        assert gaussian_hockey_stick(mu, b, eps, D) <= delta * (1 + REL)
    # and the extreme ones: the shift at its maximum, b at the endpoints
    for b in (c.beta, -c.beta):
        assert gaussian_hockey_stick(c.alpha * min(1.0, math.exp(b)), b, eps, D) <= delta * (1 + REL)


@pytest.mark.parametrize("D, m, delta, eps, expected", [
    (1, 100, 1e-5, 50.0, 1.8e-5),
    (1, 100, 1e-5, 100.0, 0.029),
    (165, 48, 1.45e-4, 1000.0, 0.80),
])
def test_the_paper_constants_fail_at_large_eps(D, m, delta, eps, expected):
    """The same check at the OLD paper constants fails: the test can fail."""
    alpha, beta = paper_constants(eps, delta, D)
    d = gaussian_hockey_stick(0.0, -beta, eps, D)       # construction 1, μ = 0
    assert d == pytest.approx(expected, rel=0.02)       # the numbers, to 2 digits
    assert d > delta
    c = alg1_constants(m, eps, delta, D)
    assert not c.paper_constants_kept and c.paper_delta > delta


@pytest.mark.parametrize("D, m, delta", SETTINGS)
def test_small_eps_keeps_the_paper_constants(D, m, delta):
    for eps in (0.1, 1.0, 10.0):
        c = alg1_constants(m, eps, delta, D)
        a, b = paper_constants(eps, delta, D)
        assert c.paper_constants_kept and (c.alpha, c.beta) == (a, b)
    # D = 165: the paper's constants hold up to ε = 100 here
    if D == 165:
        assert alg1_constants(m, 100.0, delta, D).paper_constants_kept


def test_hockey_stick_matches_monte_carlo():
    """E_P[(1 − e^{ε−L})_+] by Monte Carlo: N = 400 000 draws, the estimate is within 5
    standard errors of the quadrature (two-sided p ≈ 6e-7 for a correct value)."""
    rng = np.random.default_rng(2024)
    N = 400_000
    for mu, b, eps, D in [(1.0, -0.5, 1.0, 1), (2.0, 0.3, 1.0, 3), (1.5, -0.2, 0.5, 10), (3.0, -0.6, 2.0, 4)]:
        x = rng.standard_normal((N, D))
        shift = np.zeros(D)
        shift[0] = mu
        L = -0.5 * (x ** 2).sum(1) + 0.5 * ((x - shift) ** 2).sum(1) / math.exp(2 * b) + D * b
        v = np.maximum(0.0, -np.expm1(eps - L))
        se = v.std() / math.sqrt(N)
        assert abs(gaussian_hockey_stick(mu, b, eps, D) - v.mean()) < 5 * se


def test_hockey_stick_matches_the_difference_formula_and_the_analytic_gaussian():
    # moderate ε, where P(A) − e^ε Q(A) with scipy's ncx2 is accurate to ~1e-12
    for mu, b, eps, D in [(0.7, -0.3, 1.0, 2), (1.2, 0.25, 0.3, 5), (0.0, -0.4, 0.5, 30), (2.0, -1.0, 3.0, 1)]:
        assert gaussian_hockey_stick(mu, b, eps, D) == pytest.approx(_hockey_stick_difference(mu, b, eps, D),
                                                                   rel=1e-7, abs=1e-12)
    # b → 0 on the quadrature path tends to the analytic Gaussian formula used at b = 0:
    # |H(b) − H(0)| = O(b·D) here, so at b = 1e-7 the relative gap is well below 1e-4
    for mu, eps, D in [(0.5, 1.0, 1), (2.0, 3.0, 4), (4.0, 10.0, 165)]:
        ref = analytic_gaussian_delta(1.0, mu, eps)
        assert gaussian_hockey_stick(mu, 0.0, eps, D) == pytest.approx(ref, rel=1e-12)
        for b in (1e-7, -1e-7):
            assert gaussian_hockey_stick(mu, b, eps, D) == pytest.approx(ref, rel=1e-4)


def test_no_overflow_or_cancellation_at_huge_eps():
    # ε = 1000 and 1e10: finite values in [0, 1]; the latter checked against Monte Carlo
    # (N = 200 000, 5 standard errors as above)
    for D in (1, 165):
        v = gaussian_hockey_stick(40.0, -1.0, 1000.0, D)
        assert 0.0 <= v <= 1.0 and math.isfinite(v)
    eps, mu, b, D = 1e10, 141418.0 * math.exp(-1.5), -1.5, 2
    rng = np.random.default_rng(7)
    N = 200_000
    x = rng.standard_normal((N, D))
    L = -0.5 * (x ** 2).sum(1) + 0.5 * ((x[:, 0] - mu) ** 2 + x[:, 1] ** 2) / math.exp(2 * b) + D * b
    v = np.maximum(0.0, -np.expm1(np.minimum(eps - L, 50.0)))
    assert abs(gaussian_hockey_stick(mu, b, eps, D) - v.mean()) < 5 * v.std() / math.sqrt(N)


def test_delta_does_not_decrease_in_the_shift():
    """The calibration puts μ at its maximum α·min(1, e^b): valid because H_ε does not
    decrease in |μ| (checked on a grid; 1e-9 relative slack for the quadrature)."""
    for D, delta in [(1, 1e-5), (4, 1e-5), (30, 1e-5), (165, 1.45e-4)]:
        for eps in (0.5, 5.0, 50.0, 300.0):
            a, be = paper_constants(eps, delta, D)
            for b in np.linspace(-be, be, 5):
                mus = np.linspace(0.0, a * min(1.0, math.exp(b)), 9)
                v = np.array([gaussian_hockey_stick(mu, b, eps, D) for mu in mus])
                assert np.all(np.diff(v) >= -REL * v[1:] - 1e-300), (D, eps, b, v)


def test_calibrated_beta_is_the_largest_within_delta():
    c = calibrate_gaussian_step(100.0, 1e-5, 1)
    assert c.rule == "beta reduced" and c.alpha == c.alpha_paper and c.beta < c.beta_paper
    # the bisection stops at a relative width 1e-4: a 1e-3 larger β is over the budget
    assert gaussian_step_delta(c.alpha, c.beta * 1.001, 100.0, 1)[0] > 1e-5 >= c.exact_delta
    # ε = 1000, D = 165: even β → 0 is not enough with the paper's α: both are reduced
    c = calibrate_gaussian_step(1000.0, 1.45e-4, 165)
    assert c.rule == "alpha and beta reduced" and c.alpha < c.alpha_paper
    assert c.exact_delta <= 1.45e-4


# --------------------------------------------------------------------------- (b) β-smoothness
LAM = 1.0   # outputs in [0, 1]: Λ = 1 bounds every distance


def _S_new(B, c):
    R = nearest_neighbour_radii(np.abs(B[:, None] - B[None, :]))
    return smooth_sensitivity(R, c.t0, c.s, c.beta, LAM)[0], R


def _S_old(B, c):
    """The previous formula: ρ(t) = mean of the ⌊s/β⌋ (clipped to [1, m]) smallest r_i(t),
    S(B) = 2·max_k ρ(t₀ + (k+1)s)·e^{−βk}."""
    R = nearest_neighbour_radii(np.abs(B[:, None] - B[None, :]))
    m = len(B)
    n_top = int(min(max(math.floor(c.s / c.beta), 1), m))
    best, k = 0.0, 0
    while True:
        t = c.t0 + (k + 1) * c.s
        best = max(best, float(np.mean(np.sort(radii_at(R, t, LAM))[:n_top])) * math.exp(-c.beta * k))
        if t > m - 1:
            break
        k += 1
    return 2.0 * best, R


def _search(S_fun, m, eps, rng, restarts, steps):
    """Random starts + hill climbing over s-neighbouring B, B′ ⊂ [0, 1] (D = 1), maximising
    max(S(B′)/S(B), S(B)/S(B′)). Returns (worst ratio / e^β, worst ‖g(B) − g(B′)‖ / min(S(B), S(B′)),
    number of pairs evaluated)."""
    c = alg1_constants(m, eps, 1e-5, 1)
    s = c.s
    worst, ls_worst, n_pairs = 0.0, 0.0, 0

    def score(B, Bp):
        SB, RB = S_fun(B, c)
        SBp, RBp = S_fun(Bp, c)
        iB, _ = center_of_attention(RB, c.t0, LAM)
        iBp, _ = center_of_attention(RBp, c.t0, LAM)
        return max(SBp / SB, SB / SBp), abs(B[iB] - Bp[iBp]) / min(SB, SBp)

    for _ in range(restarts):
        kind = rng.integers(3)
        if kind == 0:
            B = rng.uniform(0, 1, m)
        elif kind == 1:
            B = np.sort(rng.uniform(0, 1, m)) ** rng.uniform(1, 4)
        else:
            B = rng.choice(rng.uniform(0, 1, rng.integers(2, 6)), m) + 1e-3 * rng.standard_normal(m)
        B = np.clip(B, 0, 1)
        changed = set(rng.choice(m, s, replace=False).tolist())
        Bp = B.copy()
        Bp[list(changed)] = rng.uniform(0, 1, s)
        cur, ls = score(B, Bp)
        n_pairs += 1
        ls_worst = max(ls_worst, ls)
        for _ in range(steps):
            B2, Bp2 = B.copy(), Bp.copy()
            j = int(rng.integers(m))
            u = rng.random()
            if u < 0.4:
                v = rng.uniform(0, 1)
            elif u < 0.8:
                v = B2[rng.integers(m)] + 10 ** rng.uniform(-4, -1) * rng.standard_normal()
            else:
                v = B2[j] + 10 ** rng.uniform(-4, -1) * rng.standard_normal()
            v = min(max(v, 0.0), 1.0)
            if j in changed:            # one of the ≤ s outputs that differ: move it in B or in B′
                if rng.random() < 0.5:
                    Bp2[j] = v
                else:
                    B2[j] = v
            else:                       # a shared output: move it in both
                B2[j] = Bp2[j] = v
            new, ls = score(B2, Bp2)
            n_pairs += 1
            ls_worst = max(ls_worst, ls)
            if new >= cur:
                cur, B, Bp = new, B2, Bp2
        worst = max(worst, cur / math.exp(c.beta))
    return worst, ls_worst, n_pairs


def test_smooth_sensitivity_is_beta_smooth_and_bounds_the_local_sensitivity():
    """No s-neighbouring pair found with S(B′) > e^β S(B)(1 + 1e-9) (1e-9: float rounding
    of the radii and of e^{−βk}); and ‖g(B) − g(B′)‖ ≤ min(S(B), S(B′)) on every searched pair.
    9 configurations × 4 restarts × 90 steps ≈ 3 300 pairs."""
    rng = np.random.default_rng(12345)
    total = 0
    for m in (36, 64, 100):
        for eps in (10.0, 20.0, 40.0):
            worst, ls_worst, n = _search(_S_new, m, eps, rng, restarts=4, steps=90)
            total += n
            assert worst <= 1 + 1e-9, (m, eps, worst)
            assert ls_worst <= 1 + 1e-9, (m, eps, ls_worst)
    assert total > 3000


def test_the_same_search_breaks_the_old_formula():
    """Power: the search finds S(B′) > e^β S(B) for the old ρ = mean of the ⌊s/β⌋ smallest
    radii (m = 36, ε = 40; fixed seed: it reaches ≈ 1.2·e^β)."""
    rng = np.random.default_rng(5)
    worst, _, _ = _search(_S_old, 36, 40.0, rng, restarts=8, steps=300)
    assert worst > 1.01
