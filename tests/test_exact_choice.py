"""Exact exponential-mechanism choices over finite sets (dpcore.privacy.exact_choice) and where
they are used: the general exponential mechanism (DP-τCC, local swaps, recovery, the Gibbs chain
choice), the Gibbs z-step in both engines, the candidate partition's coins.

Every sampler is G-tested against its exact pmf with at least 10⁶ draws. The G statistic
2·Σ O·ln(O/E) of a multinomial sample is asymptotically χ² with (cells − 1) degrees of freedom;
cells with an expected count below 10 are pooled so the approximation holds; each test rejects
at the χ² quantile 1 − 10⁻⁴ (a false alarm has probability ≈ 10⁻⁴ per test; fixed seeds make
the run reproducible). Privacy as executed is checked with exact log-ratios of the executed pmfs
(60-digit Decimal arithmetic on the integer gaps) over neighbouring utility vectors, including
adversarial ones at the grid's rounding boundaries.
"""
from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcore.privacy import exponential_mechanism, exponential_mechanism_probabilities
from dpcore.privacy.exact_choice import (bernoulli_exp_dyadic, choice_gaps, choice_plan, choice_pmf, sample_choices,
                                         unit_range_gaps, unit_range_plan, _bernoulli_e1)

ALPHA = 1e-4
D60 = decimal.Context(prec=60)


def g_test(counts, probs, alpha=ALPHA):
    """True when the counts are consistent with the probabilities (G-test at level alpha), cells
    with an expected count below 10 pooled into one."""
    counts = np.asarray(counts, dtype=np.float64)
    expected = counts.sum() * np.asarray(probs, dtype=np.float64)
    small = expected < 10
    if small.any():
        counts = np.append(counts[~small], counts[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
        if expected[-1] == 0:
            assert counts[-1] == 0
            counts, expected = counts[:-1], expected[:-1]
    if len(counts) == 1:                                  # one cell (a certain outcome): nothing to test
        return True, 0.0
    pos = counts > 0
    g = 2.0 * np.sum(counts[pos] * np.log(counts[pos] / expected[pos]))
    return g <= stats.chi2.ppf(1 - alpha, len(counts) - 1), g


def exact_log_pmf(gaps, shift):
    """log P(j) = −Nⱼ/2^s − ln Σᵢ exp(−Nᵢ/2^s), in 60-digit Decimal arithmetic."""
    with decimal.localcontext(D60):
        den = decimal.Decimal(2) ** int(shift)
        g = [-decimal.Decimal(int(v)) / den for v in gaps]
        mx = max(g)
        lse = mx + sum((x - mx).exp() for x in g).ln()
        return [x - lse for x in g]


def max_log_ratio(gaps_a, gaps_b, shift):
    with decimal.localcontext(D60):
        return max(abs(a - b) for a, b in zip(exact_log_pmf(gaps_a, shift), exact_log_pmf(gaps_b, shift)))


# ----------------------------------------------------------------------------- the plan
@pytest.mark.parametrize("eps,delta,rng_sens", [(1.0, 1.0, False), (0.05, 3.0, False), (2.0, 0.37, True),
                                                 (1e-6, 1.0, False), (300.0, 4.0, False), (1e3, 1e-3, True)])
def test_plan_delivers_at_most_the_claimed_epsilon_exactly(eps, delta, rng_sens):
    p = choice_plan(eps, delta, rng_sens)
    h = Fraction(p.grid)
    assert h.denominator & (h.denominator - 1) == 0 and h.numerator & (h.numerator - 1) == 0   # a power of two
    kappa = 1 if rng_sens else 2
    paid = Fraction(delta) + (2 if rng_sens else 1) * h
    delivered = kappa * p.scale * paid
    assert delivered <= Fraction(eps) and p.epsilon_delivered <= eps
    assert delivered >= Fraction(eps) * (1 - Fraction(1, 2 ** 19))       # rounded down by at most 2^-(22-1) (+ grid)
    if eps >= 0.01:                                                      # the grid costs ≤ 2^-20 of Δ
        assert h <= Fraction(delta) / 2 ** 20
    assert p.scale_num * p.gap_clip < 2 ** 62 and 0 <= p.scale_shift <= 62
    assert p.max_gap >= 2047


def test_plan_refuses_bad_parameters():
    for eps in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            choice_plan(eps, 1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        choice_plan(1.0, 0.0)
    with pytest.raises(ValueError, match="finite"):
        exponential_mechanism([0.0, np.nan], 1.0, 1.0, 0)


def test_gaps_are_exact_for_utilities_of_any_magnitude():
    p = choice_plan(1.0, 1.0)
    u = np.array([1e308 / 10, 0.0, -1e300, 1e308 / 10 - 3.0, 3 * p.grid, 2.4 * p.grid])
    N = choice_gaps(u, p)
    assert N[0] == 0 and N[3] == 0                      # 1e307 − 3 is 1e307 in float64
    assert N[1] == N[2] == p.scale_num * p.gap_clip     # clipped
    small = choice_gaps(u[4:], p)
    assert list(small) == [0, p.scale_num]               # 3h and round(2.4) h = 2h: one grid step apart


# ----------------------------------------------------------------------------- G-tests of the samplers
def test_bernoulli_e1_and_the_dyadic_bernoulli_have_their_laws():
    rng = np.random.default_rng(1)
    n = 1_000_000
    b = _bernoulli_e1(n, rng)
    ok, g = g_test([b.sum(), n - b.sum()], [math.exp(-1), 1 - math.exp(-1)])
    assert ok, g
    # Bernoulli(exp(−N/2^s)) on several γ at once: integer parts, fractions, γ = 0, and a large γ
    s = 40
    gammas = [0.0, 0.3, 1.0, 1.75, 3.0 + 2 ** -40, 7.5, 45.0]
    N = np.array([round(g * 2 ** s) for g in gammas], dtype=np.int64)
    draws = bernoulli_exp_dyadic(np.repeat(N[:, None], n, axis=1), s, rng)
    for row, nn in zip(draws, N):
        p = math.exp(-nn / 2 ** s)
        ok, g = g_test([row.sum(), n - row.sum()], [p, 1 - p])
        assert ok, (nn, g)
    assert draws[0].all() and not draws[-1].any() or draws[-1].sum() <= 1     # e^-45 ≈ 3e-20


@pytest.mark.parametrize("eps,u,rng_sens", [
    (2.0, [0.0, -0.7, -1.5, -3.0, -6.0, -11.0], False),             # a gap of 11 in u: p ≈ 2e-5, still counted
    (1.0, [5.0, 4.0, 4.0, 0.5, -1.0], True),                        # the range-sensitivity scale ε/Δ
    (0.3, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], False),         # nearly uniform
])
def test_exponential_mechanism_g_test_against_its_exact_pmf(eps, u, rng_sens):
    """10⁶ draws of :func:`exponential_mechanism` (one call, a row per draw) against
    :func:`exponential_mechanism_probabilities` (the executed law)."""
    n = 1_000_000
    p = exponential_mechanism_probabilities(u, eps, 1.0, rng_sens)
    z = exponential_mechanism(np.tile(u, (n, 1)), eps, 1.0, np.random.default_rng(7), rng_sens)
    ok, g = g_test(np.bincount(z, minlength=len(u)), p)
    assert ok, g
    # the executed law is the textbook one up to the scale's rounding (η − η̃, from the paid grid and the
    # dyadic scale) and the grid (each logit within η̃h/2): |log p − log p̂| ≤ 2(η − η̃)·ptp(u) + 2η̃h
    ideal = exponential_mechanism_probabilities(u, eps, 1.0, rng_sens, executed=False)
    plan = choice_plan(eps, 1.0, rng_sens)
    eta = eps if rng_sens else eps / 2
    bound = 2 * (eta - float(plan.scale)) * np.ptp(u) + 2 * float(plan.step) + 1e-12
    assert np.all(np.abs(np.log(p) - np.log(ideal)) <= bound)
    assert bound < 1e-4


def test_one_row_with_many_candidates_g_test():
    """The local-search case: one draw over many candidates, repeated 10⁶ times in 64 calls of
    15,625 rows, against the exact pmf (a peaked utility: most candidates far below the best)."""
    rng = np.random.default_rng(3)
    u = -np.sort(rng.exponential(2.0, size=40))
    p = exponential_mechanism_probabilities(u, 1.5, 1.0)
    counts = np.zeros(u.size)
    for _ in range(64):
        counts += np.bincount(exponential_mechanism(np.tile(u, (15_625, 1)), 1.5, 1.0, rng), minlength=u.size)
    ok, g = g_test(counts, p)
    assert ok, g


# ----------------------------------------------------------------------------- reachability beyond a gap of 40
class _ScriptedRng(np.random.Generator):
    """Integer draws that make every proposal the ``target`` and accept it: Bernoulli(e⁻¹) sees
    U = 20!/3! (K = 3, odd), every other coin the top of its range (the fraction's first coin
    fails: K = 1, odd). Each scripted value has a positive probability under a real generator."""

    def __init__(self, target, m):
        super().__init__(np.random.PCG64(0))
        self.target, self.m = target, m

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        fact = math.factorial(20)
        if np.ndim(high) == 0 and high == self.m:
            return np.full(size, self.target, dtype=np.int64)
        if np.ndim(high) == 0 and high == fact:
            return np.full(size, fact // 6, dtype=np.int64)
        return (np.broadcast_to(high, np.shape(high) if size is None else size) - 1).astype(np.int64)


@pytest.mark.parametrize("gap_logits", [60.0, 700.0, 2000.0])
def test_a_candidate_far_below_the_best_is_possible_and_has_its_exact_probability(gap_logits):
    """A logit gap far beyond the ≈ 40 a float Gumbel can bridge: the executed law gives the
    candidate exactly exp(−γ)/Z (> 0; log-probability finite however large the gap), and the
    sampler's code reaches it (scripted draws, each of positive probability)."""
    eps = 2.0                                              # scale 1 per unit of utility (Δ = 1)
    u = np.array([0.0, -1.0, -gap_logits])
    plan = choice_plan(eps, 1.0)
    N = choice_gaps(u, plan)
    logp = exact_log_pmf(N, plan.scale_shift)
    with decimal.localcontext(D60):
        gamma = decimal.Decimal(int(N[2])) / decimal.Decimal(2) ** plan.scale_shift
        z = 1 + (-decimal.Decimal(int(N[1])) / decimal.Decimal(2) ** plan.scale_shift).exp() + (-gamma).exp()
        assert abs(logp[2] - (-gamma - z.ln())) < decimal.Decimal("1e-50")
        assert logp[2] > -decimal.Decimal(gap_logits) * (1 + decimal.Decimal(2) ** -18) - 1   # finite, ≈ −gap
    if gap_logits < 700:
        f = choice_pmf(N, plan.scale_shift)[2]
        assert f > 0 and f == pytest.approx(float(decimal.Decimal(logp[2]).exp()), rel=1e-12)
    assert sample_choices(N, plan.scale_shift, _ScriptedRng(2, 3)) == 2
    assert exponential_mechanism(u, eps, 1.0, _ScriptedRng(2, 3)) == 2


# ----------------------------------------------------------------------------- privacy as executed
def _neighbour(u, v, delta, range_sens):
    """Whether v is a neighbour of u, exactly: every |vⱼ − uⱼ| ≤ Δ (usual sensitivity), or the
    differences vⱼ − uⱼ span at most Δ (range sensitivity)."""
    d = [Fraction(b) - Fraction(a) for a, b in zip(u, v)]
    return (max(d) - min(d) <= Fraction(delta)) if range_sens else all(abs(x) <= Fraction(delta) for x in d)


def _adversarial_pairs(plan, delta, rng, n_random, range_sens):
    """Neighbouring utility vectors. Explicit ones first: the best candidate just below a
    rounding point moving up by Δ, the others (far below, so their probability is tiny and their
    log-ratio nearly the full shift) just above one moving down by Δ: each rounded difference is
    then Δ plus what the rounding adds. Then random ones at or next to rounding points (half grid
    steps), some with a candidate beyond the gap clip. A float pair that overshoots Δ by a
    rounding error is pulled back one ulp at a time until it is a neighbour exactly."""
    h = plan.grid
    t = h * 1e-3
    far = -round(60.0 / float(plan.scale) / h) * h               # 60 logits below the best
    pairs = []
    if not range_sens:
        u = np.array([0.5 * h - t, far + 0.5 * h + t, far + 0.5 * h + 2 * t])
        pairs.append((u, u + np.array([delta, -delta, -delta])))
    else:
        u = np.array([0.5 * h - t, far + 0.5 * h + t, far + 0.5 * h + 2 * t])
        pairs.append((u, u + np.array([delta, 0.0, 0.0])))
    for i in range(n_random):
        k = rng.integers(-50, 50, size=3)
        u = (k + 0.5) * h + rng.choice([-1, 1], size=3) * rng.choice([0.0, 1e-3, 0.49], size=3) * h
        if i % 4 == 0:
            u[0] -= rng.choice([10.0, 100.0, 1e7]) * delta              # far below, or beyond the clip
        if range_sens:
            d = rng.uniform(-2, 2) * delta + delta * rng.choice([0.0, 1.0], size=3)
        else:
            d = delta * rng.choice([-1.0, 1.0], size=3)
        pairs.append((u, u + d))
    out = []
    for u, v in pairs:
        for _ in range(64):
            if _neighbour(u, v, delta, range_sens):
                break
            if range_sens:                                  # narrow the span: the extreme differences inwards
                d = [Fraction(b) - Fraction(a) for a, b in zip(u, v)]
                v = v.copy()
                v[int(np.argmax(d))] = np.nextafter(v[int(np.argmax(d))], -np.inf)
                v[int(np.argmin(d))] = np.nextafter(v[int(np.argmin(d))], np.inf)
            else:
                v = np.nextafter(v, u)
        assert _neighbour(u, v, delta, range_sens)
        out.append((u, v))
    return out


@pytest.mark.parametrize("eps,delta,range_sens", [(1.0, 1.0 + 2.0 ** -21, False), (0.4, 3.0, True),
                                                  (5.0, 0.25, False)])
def test_delivered_epsilon_over_neighbouring_utilities(eps, delta, range_sens):
    """Exact log-ratios of the executed pmfs over adversarial neighbours never exceed the ε
    delivered (≤ ε claimed); with the half-step Δ of the first case, the rounding can add h/2
    to a difference, so some pair exceeds what the *unpaid* sensitivity 2η̃Δ would allow: the
    payment is needed, not just safe."""
    plan = choice_plan(eps, delta, range_sens)
    rng = np.random.default_rng(5)
    worst = decimal.Decimal(0)
    for u, v in _adversarial_pairs(plan, delta, rng, 400, range_sens):
        lr = max_log_ratio(choice_gaps(u, plan), choice_gaps(v, plan), plan.scale_shift)
        worst = max(worst, lr)
    with decimal.localcontext(D60):
        delivered = decimal.Decimal((1 if range_sens else 2) * plan.scale.numerator) / plan.scale.denominator * (
            decimal.Decimal(plan.paid_sensitivity.numerator) / plan.paid_sensitivity.denominator)
        assert worst <= delivered + decimal.Decimal("1e-50") and delivered <= decimal.Decimal(eps)
        if not range_sens and delta == 1.0 + 2.0 ** -21:
            unpaid = 2 * decimal.Decimal(plan.scale.numerator) / plan.scale.denominator * decimal.Decimal(delta)
            assert worst > unpaid


def test_unit_range_plan_delivers_epsilon_on_any_utilities_in_the_unit_interval():
    """The Gibbs z-step's plan: utilities in [0, 1] (rounded and clamped to the grid points of
    [0, 1]): for any two utility vectors the exact log-ratio is at most 2η̃ ≤ ε (the numerator and
    the normaliser each move by at most η̃), and nearly reaches it at the extremes."""
    for eps in (0.5, 7.0, 300.0):
        plan = unit_range_plan(eps / 2)
        assert plan.scale <= eps / 2 and plan.scale >= eps / 2 * (1 - 2.0 ** -19)
        assert plan.scale_num * 2 ** plan.grid_bits < 2 ** 62 and 0 <= plan.scale_shift <= 62
        rng = np.random.default_rng(2)
        worst = decimal.Decimal(0)
        pairs = [(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 1.0])), (np.array([1.0, 1.0]), np.array([0.0, 1.0]))]
        pairs += [(rng.choice([0.0, 1.0, 1 + 1e-15, rng.uniform()], size=3), rng.uniform(0, 1, size=3)) for _ in range(200)]
        for a, b in pairs:
            lr = max_log_ratio(unit_range_gaps(a, plan), unit_range_gaps(b, plan), plan.scale_shift)
            worst = max(worst, lr)
        assert worst <= decimal.Decimal(2 * plan.scale) + decimal.Decimal("1e-50")
        assert worst >= decimal.Decimal(2 * plan.scale) * decimal.Decimal("0.5")


# ----------------------------------------------------------------------------- the Gibbs z-step (both engines)
def test_numpy_z_step_g_test_against_its_exact_law():
    from dpcore.subspace.gibbs import _exact_z_step, z_step_probabilities
    pn = np.array([[0.9, 0.35, 0.1], [0.2, 0.25, 0.3], [1.0, 0.0, 0.999]]).T     # (k = 3, rows = 3)
    eps = 9.0
    p = z_step_probabilities(pn, eps).T
    n = 1_000_000
    z = _exact_z_step(np.repeat(pn[:, :, None], n, axis=2), unit_range_plan(eps / 2), np.random.default_rng(4))
    for r in range(3):
        ok, g = g_test(np.bincount(z[r], minlength=3), p[r])
        assert ok, (r, g)


def test_numba_z_step_g_test_against_its_exact_law():
    from dpcore.subspace import gibbs_kernels as gk
    from dpcore.subspace.gibbs import z_step_probabilities
    if not gk.AVAILABLE:
        pytest.skip("numba is not installed")
    rows = np.array([[0.9, 0.35, 0.1, 0.0], [0.2, 0.25, 0.3, 0.21], [1.0, 0.0, 0.999, 0.5]])   # (rows, k = 4)
    eps = 9.0
    plan = unit_range_plan(eps / 2)
    p = z_step_probabilities(rows.T, eps).T
    n = 1_000_000
    state = gk.seed_state(np.random.default_rng(8))
    for r in range(3):
        pn = np.ascontiguousarray(np.repeat(rows[r][:, None], n, axis=1))
        z = np.empty(n, dtype=np.int64)
        gk._z_step(pn, plan.grid_bits, plan.scale_num, plan.scale_shift, z, state, np.empty(4),
                   np.empty(4, dtype=np.int64))
        ok, g = g_test(np.bincount(z, minlength=4), p[r])
        assert ok, (r, g)


def test_the_two_engines_compute_the_same_integer_gaps():
    """Same law: the numba z-step's integers equal the numpy engine's (unit_range_gaps), including
    values just above 1 and exact grid half-steps."""
    from dpcore.subspace import gibbs_kernels as gk
    if not gk.AVAILABLE:
        pytest.skip("numba is not installed")
    plan = unit_range_plan(3.7)
    half = 2.0 ** -(plan.grid_bits + 1)
    pn = np.array([[0.0, 1.0, 1 + 1e-15, 0.5 + half, 0.25 - half, 3 * half], [0.3, 0.3, 0.0, 0.5, 0.25, half]])
    N = unit_range_gaps(pn, plan, axis=0)
    # the kernel's integers, observed through its law: a category with gap 0 ties with the best
    k = pn.shape[0]
    state = gk.seed_state(np.random.default_rng(0))
    for i in range(pn.shape[1]):
        col = np.ascontiguousarray(np.repeat(pn[:, i:i + 1], 200_000, axis=1))
        z = np.empty(col.shape[1], dtype=np.int64)
        gk._z_step(col, plan.grid_bits, plan.scale_num, plan.scale_shift, z, state, np.empty(k),
                   np.empty(k, dtype=np.int64))
        p = choice_pmf(N[:, i], plan.scale_shift)
        ok, g = g_test(np.bincount(z, minlength=k), p)
        assert ok, (i, g)


# ----------------------------------------------------------------------------- the candidate partition's coins
def test_partition_coins_g_tests_and_privacy_ratios():
    from dpcore.kmeans.partition import _count_empty_kept, _keep_occupied, subdivision_coins
    coins = subdivision_coins(0.7, 3.3, 50)
    assert coins.epsilon_prime <= 0.7 and coins.epsilon_prime >= 0.7 * (1 - 2.0 ** -30)
    rng = np.random.default_rng(16)
    n = 1_000_000
    for m in (1, 3, 4, 12):
        keep = _keep_occupied(np.full(n, m), coins, rng)
        p = float(coins.keep_probability([m])[0])
        ok, g = g_test([keep.sum(), n - keep.sum()], [p, 1 - p])
        assert ok, (m, g)
    # f̃(0) ≤ q̃ ≤ f̃(1) exactly (checked in Decimal by subdivision_coins) and the ratio bounds hold
    q = coins.keep_probability(np.arange(0, 20))
    e = math.exp(coins.epsilon_prime) * (1 + 1e-12)
    assert np.all(q[1:] <= e * q[:-1]) and np.all(q[:-1] <= e * q[1:])
    assert np.all(1 - q[:-1] <= e * (1 - q[1:])) and np.all(1 - q[1:] <= e * (1 - q[:-1]))
    # empty children: Binomial(N, q̃) exactly, N = 5 and N = 2^70 (Python integers)
    q0 = float(coins.keep_probability([0])[0])
    x = _count_empty_kept([5] * 200_000, coins, rng)
    probs = stats.binom.pmf(np.arange(6), 5, q0)
    ok, g = g_test(np.bincount(x, minlength=6), probs)
    assert ok, g
    # N = 2⁴⁰ empty children with q̃ ≈ 1.4e-12 (γ = 38): about 1.5 kept per cube, so the count takes the
    # Python path (λN's numerator beyond int64) and the geometric skips; G-test against Binomial(2⁴⁰, q̃)
    far = subdivision_coins(0.7, 38.0, 50)
    qf = float(far.keep_probability([0])[0])
    x = _count_empty_kept([2 ** 40] * 20_000, far, rng)
    probs = stats.binom.pmf(np.arange(12), 2 ** 40, qf)
    ok, g = g_test(np.bincount(x, minlength=12)[:12], probs / probs.sum())
    assert ok and x.max() < 12, g


# ----------------------------------------------------------------------------- ledgers and plans
def test_candidate_sparse_plans_what_it_spends():
    from dpcore.data import make_gaussian_mixture
    from dpcore.kmeans.candidate import CandidateKMeans
    ds = make_gaussian_mixture(n=400, d=6, k=3, random_state=0)
    for kw in (dict(recovery="sparse", sparsity=3), dict()):
        est = CandidateKMeans(n_clusters=3, epsilon=1.0, radius=ds.extras["public_radius"], random_state=0, **kw)
        plan = est.planned_privacy(ds.X.shape)
        est.fit(ds.X)
        assert est.ledger_.total() == (pytest.approx(plan.epsilon, rel=1e-12), plan.delta)
        assert plan.delta == (0.0 if kw else est.delta)


def test_gibbs_ledger_records_the_float_part_bounded_and_nonzero():
    from dpcore.subspace.gibbs import GibbsSubspaceClustering, acceptance_test_error, execution_plan
    from dpcore.data import make_union_of_subspaces
    ds = make_union_of_subspaces(150, 6, 2, 2, 0.1, random_state=0)
    for kw in (dict(), dict(release="mean", n_average=5), dict(n_chains=3, select="best_private")):
        est = GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, epsilon=3.0, n_iter=40, random_state=1, **kw)
        plan = est.planned_privacy(ds.X.shape)
        est.fit(ds.X)
        eps, dlt = est.ledger_.total()
        assert eps == pytest.approx(plan.epsilon, rel=1e-12) and dlt == plan.delta == 0.0
        ex = execution_plan(3.0, 150, 6, 2, 2, 40, est.release, min(est.n_average, 40))
        chains = 3 if kw.get("select") == "best_private" else 1
        float_entry = next(e for e in est.ledger_.entries if e.what.startswith("float part"))
        assert float_entry.epsilon >= chains * 2 * ex.kappa > 0                  # covers the slack
        assert float_entry.epsilon <= chains * ex.factor * 3.0 * 1e-3           # and is small
        assert "Not covered" in float_entry.note and "κ" in float_entry.note
        assert ex.kappa == pytest.approx(150 * 40 * ex.zstep.step + 2 * acceptance_test_error(3.0, 150, 6) * 40 * 4)
    # the bound grows with ε·n (the acceptance test's magnitudes) and with the sweeps
    assert acceptance_test_error(10.0, 1000, 6) > acceptance_test_error(1.0, 1000, 6) > 0
    assert execution_plan(1.0, 100, 5, 2, 2, 2000).kappa > execution_plan(1.0, 100, 5, 2, 2, 20).kappa


def test_full_precision_exponentials_reach_beyond_44():
    """The U-step's acceptance test uses E = −log U with U of full relative precision: a leading
    zero word gives E ≥ 64 ln 2 (numpy's standard_exponential never exceeds ≈ 44), and the law is
    Exp(1) (KS test on 10⁶ draws, p > 1e-4)."""
    from dpcore.subspace.bingham import _full_exponentials

    class Words(np.random.Generator):
        def __init__(self, words):
            super().__init__(np.random.PCG64(0))
            self.words = list(words)

        def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
            n = int(np.prod(size))
            out, self.words = self.words[:n], self.words[n:]
            return np.array(out, dtype=np.uint64).reshape(size)

    # entry 0: three zero words, then w = 1 < 2⁵³ and a second word w′ with w′ >> 11 = 5: U = 2⁻²⁵⁶(1 + 5·2⁻⁵³)
    e = _full_exponentials(Words([0, 2 ** 63, 0, 0, 1, 5 << 11]), (2,))
    assert e[0] == pytest.approx(256 * math.log(2) - math.log1p(5 * 2.0 ** -53), rel=1e-15)
    assert e[1] == pytest.approx(math.log(2), rel=1e-12)                  # w = 2⁶³: U = 1/2
    x = _full_exponentials(np.random.default_rng(9), (1_000_000,))
    assert stats.kstest(x, "expon").pvalue > 1e-4
