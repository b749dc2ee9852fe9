"""Private candidate-set k-means (Balcan et al. 2017, Alg. 1-5, §6.2): dpcore.kmeans.partition,
localswap, recovery and candidate.

Privacy checks follow tests/test_privacy.py: outputs of N runs on neighbouring inputs D, D′
(one point replaced) are bucketed and dpcore.lab.audit.frequency_check tests
p_D ≤ e^ε p_D′ (+ δ) both ways with Clopper-Pearson bounds at 99 % family-wise confidence;
a negative control at a smaller ε must be rejected, so the check has power.
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpcore.lab.audit import bucket_counts, frequency_check
from dpcore.data import make_gaussian_mixture
from dpcore.kmeans.common import DataDerivedRadiusWarning
from dpcore.preprocessing import truncate_rows_to_sparsity
from dpcore.kmeans.baselines import KMeansPlusPlus
from dpcore.kmeans.candidate import DEFAULT_SPLIT, CandidateKMeans, CandidateKMedian, resolve_budget_split
from dpcore.kmeans.localswap import localswap, seed_from_candidates, swap_losses
from dpcore.kmeans.partition import (candidate_set, default_gamma, jl_matrix, private_partition,
                                     subdivision_probability)
from dpcore.kmeans.recovery import sparse_noisy_means
from dpcore.privacy import GaussianBudget
from dpcore.metrics import kmeans_objective, kmedian_objective
from dpcore.privacy import analytic_gaussian_delta, gaussian_sigma

CONF = 0.99


@pytest.fixture(scope="module")
def mixture():
    ds = make_gaussian_mixture(n=3000, d=20, k=5, random_state=3)
    return ds.X, ds.extras["public_radius"]


# ----------------------------------------------------------------------------- Alg. 1
def test_subdivision_probability_is_a_laplace_threshold():
    eps_p, gamma = 0.3, 7.0
    m = np.arange(0, 30)
    f = subdivision_probability(m, eps_p, gamma)
    assert f[7] == pytest.approx(0.5)
    assert np.all(np.diff(f) > 0)
    # each keep/drop decision is ε′-DP in its count: both outcome ratios bounded by e^{ε′}
    # (equality in the tails; 1e-12 is floating-point slack)
    assert np.all(f[1:] / f[:-1] <= math.exp(eps_p) + 1e-12)
    assert np.all((1 - f[:-1]) / (1 - f[1:]) <= math.exp(eps_p) + 1e-12)
    assert np.max(f[1:] / f[:-1]) == pytest.approx(math.exp(eps_p))


@pytest.mark.parametrize("max_depth", [1, 3, 6])
def test_partition_never_subdivides_below_the_depth_bound(max_depth):
    rng = np.random.default_rng(max_depth)
    Y = rng.uniform(-1, 1, size=(2000, 3))
    # huge ε: every occupied cube holding more than γ = 2 points is subdivided, so the
    # bound is what stops the recursion
    res = private_partition(Y, 1e6, [-1.0] * 3, 2.0, max_depth=max_depth, gamma=2.0, random_state=0)
    assert res.depths.max() == max_depth
    assert len(res.active_per_depth) == max_depth + 1
    side = 2.0 / 2 ** res.depths
    assert np.all(side >= 2.0 / 2 ** max_depth)
    assert res.epsilon_prime == pytest.approx(1e6 / (2 * max_depth))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("eps", [0.5, 5.0, 50.0])
def test_candidate_set_is_at_most_n_log_n_on_random_data(seed, eps):
    rng = np.random.default_rng(seed)
    n, p = 1500, 4
    Y = rng.standard_normal((n, p))
    Y /= np.maximum(1.0, np.linalg.norm(Y, axis=1) / 2.0)[:, None]  # inside B(0, 2)
    res = candidate_set(Y, eps, 2.0, n_repeats=2, max_depth=math.ceil(math.log2(n)), random_state=seed)
    assert res.centers.shape[0] <= n * math.log(n)  # Theorem 1
    assert np.all(np.linalg.norm(res.centers, axis=1) <= 2.0 * (1 + 1e-12))  # moved into the ball
    for part in res.partitions:
        assert part.depths.max() <= part.max_depth


def test_default_gamma_bounds_empty_cube_activations():
    n, p, eps_p = 10_000, 6, 0.05
    g = default_gamma(n, p, eps_p)
    # each of the 2^p empty children is kept with f(0) = ½ e^{−ε′γ} = 1/(2 n 2^p)
    assert 2 ** p * subdivision_probability(0, eps_p, g) == pytest.approx(1 / (2 * n))
    assert default_gamma(n, p, 1e6, n_clusters=10) == pytest.approx(n / 100)  # computational floor


@pytest.mark.slow
def test_partition_frequency_on_neighbouring_inputs():
    # p = 1, depth 2, γ = 2, ε = 1: 6 points, one moved to the other half (D′). The output
    # (the set of cube centres) takes ~25 values; empty cubes are kept with f(0) = 0.30, so
    # the binomial sampling of empty sub-cubes is exercised too.
    Y = np.array([[-0.9], [-0.8], [-0.7], [0.2], [0.6], [0.7]])
    Y2 = Y.copy()
    Y2[0] = 0.65
    rng = np.random.default_rng(11)
    N, eps = 6000, 1.0

    def outs(D):
        return [tuple(np.round(private_partition(D, eps, [-1.0], 2.0, 2, 2.0, rng).centers.ravel(), 9))
                for _ in range(N)]

    a, b = outs(Y), outs(Y2)
    keys = {k: i for i, k in enumerate(sorted(set(a) | set(b)))}
    ca, cb = bucket_counts([keys[x] for x in a], [keys[x] for x in b])
    assert frequency_check(ca, cb, eps, confidence=CONF).passed
    # power: the realised loss here is ≈ 0.7 (a point moves two cubes at each of two
    # depths, each decision ε′ = 1/4), so a claim of ε/4 must be rejected
    assert not frequency_check(ca, cb, eps / 4, confidence=CONF).passed


def test_jl_matrix_preserves_squared_norms_in_expectation():
    A = jl_matrix(50, 8, random_state=0)
    X = np.random.default_rng(1).standard_normal((4000, 50))
    ratio = np.sum((X @ A) ** 2, 1) / np.sum(X ** 2, 1)
    # E‖xA‖² = ‖x‖² over the random A. For this fixed A the mean of the ratio over isotropic
    # x is tr(AᵀA)/50 = (1/50)·Σ of 400 squared N(0, 1/8) entries = 1 ± √(2/400) ≈ 1 ± 0.07
    # (the 4000 x add far less); allow 4 such standard errors
    assert abs(ratio.mean() - 1.0) < 4 * math.sqrt(2 / 400)


# ----------------------------------------------------------------------------- Alg. 3
def test_swap_losses_match_brute_force():
    rng = np.random.default_rng(0)
    Y, C, Z = rng.standard_normal((300, 3)), rng.standard_normal((15, 3)), np.array([1, 4, 9])
    for obj in ("kmeans", "kmedian"):
        S, total = swap_losses(Y, C, Z, obj)
        D = ((Y[:, None] - C[None]) ** 2).sum(-1)
        D = D if obj == "kmeans" else np.sqrt(D)
        brute = np.array([[D[:, [c if i == j else z for i, z in enumerate(Z)]].min(1).sum() for c in range(15)]
                          for j in range(3)])
        np.testing.assert_allclose(S, brute, rtol=1e-10)
        assert total == pytest.approx(D[:, Z].min(1).sum())


@pytest.mark.slow
def test_localswap_exponential_mechanism_frequencies_on_a_tiny_input():
    # candidates −1, +1, 0 (Λ = 1), k = 1, start Z⁽⁰⁾ = {0}; D has two points at −1, D′
    # moves one of them to +1: the loss of {−1} rises by 4Λ² and that of {+1} falls by 4Λ²
    # (the worst case of the sensitivity Δ = 4Λ²), so the first swap's log-odds move by the
    # full ε_step = ε/(T+1).
    C = np.array([[-1.0], [1.0], [0.0]])
    D = np.array([[-1.0], [-1.0]])
    D2 = np.array([[-1.0], [1.0]])
    eps, N = 4.0, 10_000
    rng = np.random.default_rng(5)

    def run(Y):
        res = [localswap(Y, C, 1, eps, 1.0, n_iter=1, random_state=rng, init=[2]) for _ in range(N)]
        return np.array([r.iterates[1][0] for r in res]), np.array([r.centers_index[0] for r in res])

    (first_a, final_a), (first_b, final_b) = run(D), run(D2)
    eps_step = eps / 2
    ca, cb = bucket_counts(first_a, first_b)
    assert frequency_check(ca, cb, eps_step, confidence=CONF).passed  # one swap: ε/(T+1)
    assert not frequency_check(ca, cb, eps_step / 2, confidence=CONF).passed  # power
    ca, cb = bucket_counts(final_a, final_b)
    assert frequency_check(ca, cb, eps, confidence=CONF).passed  # whole routine: ε


def test_seed_from_candidates_uses_leaves_and_is_distinct():
    rng = np.random.default_rng(0)
    C = rng.standard_normal((40, 3))
    leaves = np.zeros(40, bool)
    leaves[[3, 7, 11, 20, 33]] = True
    z = seed_from_candidates(C, leaves, 4, random_state=1)
    assert len(set(z)) == 4 and set(z) <= {3, 7, 11, 20, 33}
    z = seed_from_candidates(C, leaves, 8, random_state=1)  # more than the leaves
    assert len(set(z)) == 8 and {3, 7, 11, 20, 33} <= set(z)


# ----------------------------------------------------------------------------- Alg. 4 estimator
def test_ledger_matches_documented_split_and_sums_to_epsilon(mixture):
    X, lam = mixture
    eps, delta = 0.8, 1e-5
    m = CandidateKMeans(n_clusters=5, epsilon=eps, radius=lam, delta=delta, refine_iter=2, random_state=0).fit(X)
    got = [e.epsilon for e in m.ledger_.entries]
    assert got == pytest.approx([eps * DEFAULT_SPLIT[s] for s in ("candidate", "localswap", "recovery")], rel=1e-12)
    assert [e.delta for e in m.ledger_.entries] == [0.0, 0.0, delta]
    assert m.ledger_.total() == pytest.approx((eps, delta), rel=1e-12)
    split = {"candidate": 0.2, "localswap": 0.3, "recovery": 0.5}
    m = CandidateKMeans(n_clusters=5, epsilon=2.0, radius=lam, budget_split=split, random_state=0).fit(X)
    assert [e.epsilon for e in m.ledger_.entries] == pytest.approx([0.4, 0.6, 1.0], rel=1e-12)
    assert sum(resolve_budget_split(split, 0.3).values()) == 0.3  # last stage takes the remainder exactly


def test_recovery_noise_is_calibrated_by_gdp_composition():
    # T releases with σ = σ_analytic(Δ·√T, ε, δ) form √T·Δ/σ-GDP, whose (ε, δ) curve is the
    # analytic Gaussian curve at sensitivity Δ√T: that δ must be exactly the stage's δ.
    b = GaussianBudget(0.5, 1e-6, 9)
    sigma = b.sigma(2.0)
    assert sigma == pytest.approx(gaussian_sigma(6.0, 0.5, 1e-6))
    assert analytic_gaussian_delta(sigma, 2.0 * 3, 0.5) == pytest.approx(1e-6, rel=1e-6)
    for _ in range(9):
        b.release(np.zeros(2), 2.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="all are used"):
        b.release(np.zeros(2), 2.0, np.random.default_rng(0))


def test_huge_epsilon_is_within_1_5_of_kmeans_plus_plus(mixture):
    X, lam = mixture  # 5 well-separated Gaussians (σ = 0.1, centres ~2.6 apart)
    base = kmeans_objective(X, KMeansPlusPlus(n_clusters=5, random_state=0).fit(X).cluster_centers_)
    ratios = [kmeans_objective(X, CandidateKMeans(n_clusters=5, epsilon=1e6, radius=lam, n_swaps=10, random_state=s).fit(X).cluster_centers_)
              / base for s in range(3)]
    assert max(ratios) <= 1.5


def test_kmedian_variant(mixture):
    X, lam = mixture
    base = kmedian_objective(X, KMeansPlusPlus(n_clusters=5, random_state=0).fit(X).cluster_centers_)
    m = CandidateKMedian(n_clusters=5, epsilon=1e6, radius=lam, n_swaps=10, random_state=0).fit(X)
    assert kmedian_objective(X, m.cluster_centers_) <= 1.5 * base
    assert m.ledger_.total() == pytest.approx((1e6, 1e-6))
    assert "1-median" in m.ledger_.entries[-1].what


def test_bad_inputs_raise_value_errors(mixture):
    X, lam = mixture
    cases = [(dict(n_clusters=len(X) + 1), "n_clusters"), (dict(radius=0.0), "radius"), (dict(radius=-1.0), "radius"),
             (dict(projection_dim=0), "projection_dim"), (dict(epsilon=0.0), "epsilon"), (dict(epsilon=-1), "epsilon"),
             (dict(radius=None), "radius is required"), (dict(delta=0.0), "delta"),
             (dict(budget_split={"candidate": 0.5, "localswap": 0.5, "recovery": 0.5}), "sum to 1"),
             (dict(recovery="sparse"), "sparsity"), (dict(objective="kmedoids"), "objective")]
    for kw, word in cases:
        params = dict(n_clusters=3, epsilon=1.0, radius=lam) | kw
        with pytest.raises(ValueError, match=word):
            CandidateKMeans(**params).fit(X)


def test_clipping_is_counted_and_data_radius_warns(mixture):
    X, lam = mixture
    norms = np.linalg.norm(X, axis=1)
    r = float(np.quantile(norms, 0.9))
    m = CandidateKMeans(n_clusters=3, epsilon=1.0, radius=r, random_state=0).fit(X)
    assert m.n_clipped_ == int((norms > r).sum()) > 0
    assert np.all(np.linalg.norm(m.cluster_centers_, axis=1) <= r * (1 + 1e-12))
    assert "n_clipped_" in m.nonprivate_outputs_ and "labels_" in m.nonprivate_outputs_
    with pytest.warns(DataDerivedRadiusWarning, match="privacy leakage"):
        m = CandidateKMeans(n_clusters=3, epsilon=1.0, radius="data", random_state=0).fit(X)
    assert m.radius_ == pytest.approx(norms.max())
    assert "radius_" in m.nonprivate_outputs_ and m.private_outputs_ == []


# ----------------------------------------------------------------------------- Alg. 5
def test_sparse_recovery_is_pure_and_sparse():
    rng = np.random.default_rng(0)
    n, d, s = 600, 300, 5
    X = np.zeros((n, d))
    labels = rng.integers(0, 2, n)
    for i in range(n):  # cluster 0 uses coordinates 0..9, cluster 1 coordinates 10..19
        cols = rng.choice(10, size=s, replace=False) + 10 * labels[i]
        X[i, cols] = rng.uniform(0.2, 0.4, size=s)
    X = sp.csr_matrix(X)
    m = CandidateKMeans(n_clusters=2, epsilon=50.0, radius=1.0, recovery="sparse", sparsity=s, eta=1.0, delta=0.0, random_state=0).fit(X)
    assert m.ledger_.total() == (50.0, 0.0)
    assert np.all(np.count_nonzero(m.cluster_centers_, axis=1) <= 2 * s)  # m = ⌈2s/η⌉ coordinates
    centres, counts, chosen = sparse_noisy_means(X, labels, 2, 1.0, s, 1.0, 200.0, random_state=1)
    # large ε: the chosen coordinates are the cluster's own support
    assert set(chosen[0]) == set(range(10)) and set(chosen[1]) == set(range(10, 20))
    assert counts == pytest.approx(np.bincount(labels), abs=3 * math.sqrt(2) * 2 * (math.sqrt(s) + 1) / 100)


def test_truncate_rows_to_sparsity_keeps_largest_entries():
    X = np.array([[3.0, -5.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    Xs, n_trunc = truncate_rows_to_sparsity(X, 2)
    assert n_trunc == 1 and Xs[0].tolist() == [3.0, -5.0, 0.0, 0.0] and Xs[1].tolist() == X[1].tolist()
    Xsp, n_sp = truncate_rows_to_sparsity(sp.csr_matrix(X), 2)
    assert n_sp == 1 and np.array_equal(Xsp.toarray(), Xs)


def test_partition_reports_the_number_of_empty_cubes_it_activated():
    """``n_empty_activated`` is the total number of empty cubes the partition activated (an
    int), not a per-parent array of free children (a local variable once reused its name)."""
    rng = np.random.default_rng(0)
    Y = rng.random((200, 2))
    res = private_partition(Y, 1.0, np.zeros(2), 1.0, max_depth=4, random_state=1)
    assert isinstance(res.n_empty_activated, int) and res.n_empty_activated >= 0
    # every activated empty cube is a cube with no point: the count cannot exceed the cubes kept
    assert res.n_empty_activated <= len(res.depths)
