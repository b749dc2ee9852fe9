"""Sample-aggregate (Alg. 1): constants, the hand-computed aggregation and noise scale, the
subset-sampling rule, the subspace encoding, the ε → ∞ limit and bad input."""
import math
import warnings

import numpy as np
import pytest

from dpcore.lab.audit import bucket_counts, frequency_check
from dpcore.data import make_union_of_subspaces, random_subspaces
from dpcore.metrics import pairwise_subspace_distances, wasserstein_distance
from dpcore.privacy.sample_aggregate import (alg1_constants, draw_subsets, matching_distances, nearest_neighbour_radii,
                                     private_aggregate, sample_aggregate, smooth_sensitivity, theorem31_conditions)
from dpcore.subspace.sample_aggregate import (SampleAggregateSubspace, decode_subspaces, encode_subspaces,
                                              encoding_dim, subspace_set_diameter)

# δ = 2/e makes ln(2/δ) = 1, so the constants of Alg. 1 are round numbers by hand.
DELTA_E = 2.0 / math.e


# --------------------------------------------------------------------------- constants
def test_alg1_constants_by_hand():
    # m = 16, ε = 16, ln(2/δ) = 1, D = 1:
    # s = √16 = 4; α = 16/(5√(2·1)) = 16/(5√2) = 2.2627417; β = 16/(4(1 + 1)) = 2;
    # t0 = (16 + 4)/2 + 1 = 11. δ = 2/e ≈ 0.74 is so large that the exact δ of the Gaussian
    # step at the paper's constants (≈ 0.42) is within it: the paper's constants are kept.
    c = alg1_constants(16, 16.0, DELTA_E, 1)
    assert (c.s, c.t0) == (4, 11)
    assert c.alpha == pytest.approx(16 / (5 * math.sqrt(2)), rel=1e-12)
    assert c.beta == pytest.approx(2.0, rel=1e-12)
    assert c.paper_constants_kept and c.calibration == "paper"
    assert c.exact_delta == c.paper_delta <= DELTA_E


def test_alg1_constants_non_square_m_and_small_eps_keeps_the_paper():
    # m = 50: s = ⌊√50⌋ = 7 (the integer number of subsets one point may be in);
    # t0 = ⌈57/2⌉ + 1 = 30; with ε = 1, δ = 1e-3, D = 165 the paper's α, β are (ε, δ)-DP
    # by the exact computation, so they are used unchanged.
    c = alg1_constants(50, 1.0, 1e-3, 165)
    assert (c.s, c.t0) == (7, 30)
    assert c.alpha == pytest.approx(1 / (5 * math.sqrt(2 * math.log(2000))), rel=1e-12)
    assert c.beta == pytest.approx(1 / (4 * (165 + math.log(2000))), rel=1e-12)
    assert c.paper_constants_kept and c.exact_delta <= 1e-3
    # huge ε: the paper's constants are not private; the calibrated ones are smaller
    big = alg1_constants(50, 1e6, 1e-3, 165)
    assert not big.paper_constants_kept and big.alpha < big.alpha_paper and big.beta < big.beta_paper
    assert big.exact_delta <= 1e-3


# --------------------------------------------------------------------------- steps 5-7 by hand
# 16 one-dimensional outputs: a group G of 12 at 0, 0.1, ..., 1.0 and 1.05, and 4 far ones.
HAND_B = np.r_[np.arange(11) / 10, 1.05, 10.0, 20.0, 30.0, 40.0][:, None]


def test_center_of_attention_and_smooth_sensitivity_by_hand():
    c = alg1_constants(16, 16.0, DELTA_E, 1)
    R = nearest_neighbour_radii(np.abs(HAND_B - HAND_B.T))
    # r_i(11) for a point v of G: its 11 nearest others are the rest of G, so
    # r_i(11) = max(v, 1.05 − v): 0.55 at v = 0.5 (index 5), 0.6 at v = 0.6, 0.65 at 0.4, ...
    # the far points have r_i(11) >= 9. So i* = 5 and g(B) = 0.5.
    res = private_aggregate(HAND_B, 16.0, DELTA_E, diameter=100.0, random_state=0)
    assert res.chosen_index == 5
    assert res.center[0] == 0.5
    assert res.radii_t0[5] == pytest.approx(0.55)
    # Step 6. k = 0: t = t0 + s = 15 = m − 1, the farthest other output, j = s + 1 = 5:
    #   G: 40 − v = 38.95, 39.0, 39.1, ...; 10 -> 30; 20 -> 20; 30 -> 30; 40 -> 40.
    #   sorted: 20, 30, 30, 38.95, 39.0, ... so ρ_5(15) = 39.0.
    # k = 1: t = 19 > m − 1, so r = Λ = 100 and the term is 100·e^{−2} = 13.53.
    # S(B) = 2·max(39, 13.53) = 78; noise sd = S/α = 78·5√2/16 = 34.47.
    S, terms = smooth_sensitivity(R, c.t0, c.s, c.beta, 100.0)
    assert [t[:2] for t in terms] == [(0, 15), (1, 19)]
    assert terms[0][2] == pytest.approx(39.0)
    assert terms[1][3] == pytest.approx(100 * math.exp(-2))
    assert S == pytest.approx(78.0)
    assert res.smooth_sensitivity == pytest.approx(78.0)
    assert res.noise_scale == pytest.approx(78 * 5 * math.sqrt(2) / 16)


def test_noise_is_gaussian_with_the_computed_scale():
    rng = np.random.default_rng(11)
    N = 4000
    out = np.array([private_aggregate(HAND_B, 16.0, DELTA_E, diameter=100.0, random_state=rng).released[0]
                    for _ in range(N)])
    sd = 78 * 5 * math.sqrt(2) / 16
    # mean: SE = sd/√N; sd: SE ≈ sd/√(2N) (Gaussian). 4 SE allowances (two-sided p < 1e-4).
    assert abs(out.mean() - 0.5) < 4 * sd / math.sqrt(N)
    assert abs(out.std() - sd) < 4 * sd / math.sqrt(2 * N)


def test_diameter_caps_missing_neighbours():
    # m = 9: s = 3, t0 = ⌈12/2⌉ + 1 = 7, t0 + s = 10 > m − 1 = 8: no such neighbour, so
    # ρ = Λ already at k = 0 and S(B) = 2Λ whatever B is.
    B = np.linspace(0, 1, 9)[:, None]
    res = private_aggregate(B, 1.0, 0.01, diameter=3.0, random_state=0)
    assert res.smooth_sensitivity == pytest.approx(6.0)
    with pytest.raises(ValueError, match="diameter"):
        private_aggregate(B, 1.0, 0.01, diameter=0.5, random_state=0)  # two outputs are 1 apart


def test_smooth_calibration_passes_a_neighbouring_frequency_check_and_local_radius_fails():
    """Neighbouring B, B′: one record in s = 4 subsets changes 4 outputs. B has 12 outputs
    near 0 and 4 near 10; in B′ four of the 0-group moved to 10 (8 and 8). The chosen
    output's own radius r_{i*}(t0) jumps from ~0.01 to ~10, but S(B) does not (it already
    looks s neighbours further, t0 + s = 15). With the smooth-sensitivity noise the two
    output distributions respect e^ε (99 % confidence); calibrating the noise to the local,
    non-smooth r_{i*}(t0) instead is caught as a violation - so the check has power."""
    jitter = np.arange(16) * 1e-3
    B = (np.r_[np.zeros(12), np.full(4, 10.0)] + jitter)[:, None]
    Bp = (np.r_[np.zeros(8), np.full(8, 10.0)] + jitter)[:, None]
    eps, delta, N = 1.0, 1e-3, 100_000
    rng = np.random.default_rng(5)
    ra = private_aggregate(B, eps, delta, diameter=20.0, random_state=0)
    rb = private_aggregate(Bp, eps, delta, diameter=20.0, random_state=0)
    assert ra.radii_t0[ra.chosen_index] < 0.02 and rb.radii_t0[rb.chosen_index] > 5
    assert ra.smooth_sensitivity == pytest.approx(rb.smooth_sensitivity, rel=0.01)
    a = ra.center[0] + ra.noise_scale * rng.standard_normal(N)
    b = rb.center[0] + rb.noise_scale * rng.standard_normal(N)
    edges = np.linspace(-1000, 1000, 41)
    assert frequency_check(*bucket_counts(a, b, edges), eps, delta, confidence=0.99).passed
    alpha = ra.constants.alpha
    a_bad = ra.center[0] + 2 * ra.radii_t0[ra.chosen_index] / alpha * rng.standard_normal(N)
    b_bad = rb.center[0] + 2 * rb.radii_t0[rb.chosen_index] / alpha * rng.standard_normal(N)
    edges = np.linspace(-200, 200, 41)
    assert not frequency_check(*bucket_counts(a_bad, b_bad, edges), eps, delta, confidence=0.99).passed


# --------------------------------------------------------------------------- step 3
def test_subset_sampling_rule():
    n, m = 1000, 16
    draws = []
    for seed in range(20):
        S, n_draws = draw_subsets(n, m, seed)
        assert S.shape == (m, n // m)
        assert all(np.unique(row).size == row.size for row in S)      # without replacement
        assert S.min() >= 0 and S.max() < n
        assert np.bincount(S.ravel(), minlength=n).max() <= 4           # no point in > √16 subsets
        draws.append(n_draws)
    # one draw is accepted with probability ≈ 0.106 here (a point's count is ~Bin(16, 62/1000);
    # P(count > 4) ≈ 2.2e-3 per point), so P(all 20 seeds accepted at the first draw) ≈ 1e-19:
    # seeing redraws shows the rule is enforced rather than met by luck.
    assert max(draws) > 1
    # the m subsets are drawn independently (Alg. 1), not as a partition: they overlap, and
    # some points are in none: each is missed by all 16 with probability (1 − 62/1000)^16 ≈ 0.36
    # (binomial SE over 1000 points ≈ 0.015, so the window is ±4 SE)
    S, _ = draw_subsets(n, m, 0)
    counts = np.bincount(S.ravel(), minlength=n)
    assert counts.max() >= 2 and 0.3 < np.mean(counts == 0) < 0.45


def test_subset_sampling_bad_m():
    with pytest.raises(ValueError, match="n_subsets"):
        draw_subsets(1000, 4, 0)      # some point lands in 3 of 4 subsets in practically every draw
    with pytest.raises(ValueError, match="n_subsets"):
        draw_subsets(10, 11, 0)       # more subsets than points


# --------------------------------------------------------------------------- encoding / d_M
@pytest.mark.parametrize("k", [3, 6])   # 6 uses the Hungarian branch
def test_encoding_is_isometric_and_matching_distance_is_dW(k):
    rng = np.random.default_rng(k)
    d, q = 7, 2
    sets = np.stack([random_subspaces(k, d, q, rng) for _ in range(5)])
    B = encode_subspaces(sets)
    assert B.shape == (5, encoding_dim(k, d)) == (5, k * d * (d + 1) // 2)
    # svec is an isometry: ℓ2 between blocks = ‖UUᵀ − VVᵀ‖_F = subspace_distance
    blk = B.reshape(5, k, -1)
    assert np.linalg.norm(blk[0, 0] - blk[1, 2]) == pytest.approx(
        pairwise_subspace_distances(sets[0], sets[1])[0, 2], abs=1e-12)
    M = matching_distances(B, k)
    for i in range(5):
        for j in range(5):
            assert M[i, j] == pytest.approx(wasserstein_distance(sets[i], sets[j]), abs=1e-7)
    # decoding an exact encoding gives the same subspaces back (in the same order)
    back = decode_subspaces(B[0], k, d, q)
    assert np.allclose(np.einsum("kdq,keq->kde", back, back), np.einsum("kdq,keq->kde", sets[0], sets[0]))
    # the diameter bounds d_W: orthogonal planes in R^4 are √(2·2) apart
    assert subspace_set_diameter(1, 4, 2) == pytest.approx(2.0)
    e = np.eye(4)
    assert wasserstein_distance(e[None, :, :2], e[None, :, 2:]) == pytest.approx(2.0)


def test_generic_sample_aggregate_ledger_and_block_order():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    # f = the two coordinate means, as 2 unordered blocks of length 1
    # ε = 1e14: Gaussian noise needs α ≈ √(2ε) ≈ 1.4e7 at huge ε (calibrated), so the noise
    # sd is at most 2Λ/α = 200/1.4e7 ≈ 1.4e-5 and the release rounds to the chosen output
    res = sample_aggregate(X, lambda Z: Z.mean(axis=0), 25, 1e14, 1e-3, diameter=100.0, n_blocks=2,
                           random_state=1)
    assert res.noise_scale <= 200.0 / res.constants.alpha < 2e-5
    assert len(res.ledger) == 1 and res.ledger.total() == (1e14, 1e-3)
    note = res.ledger.entries[0].note
    assert "exact privacy profile" in note and "utility (Thm 3.1, not needed for privacy)" in note
    assert "conditions met" not in note
    assert sorted(res.released.round(6)) == pytest.approx(sorted(res.outputs[res.chosen_index].round(6)), abs=1e-4)
    assert res.subsets.shape == (25, 16) and res.n_draws >= 1


# --------------------------------------------------------------------------- the estimator
@pytest.mark.filterwarnings("ignore:Theorem 3.1")   # m = 25 < (ln 600)² is deliberate (speed)
def test_eps_1e10_releases_the_chosen_subset_solution():
    """ε = 1e10: the release equals, up to d_W ≤ 1e-3, the subset solution with the smallest
    t0-th-neighbour radius (fewest far neighbours), recomputed here with metrics.d_W.

    Fig. 2's left setting (d = 5, k = 3, q = 3, σ = 0.01; n = 600 to keep it fast). Noise bound:
    noise sd ≤ 2Λ/α = 2√(2·3·2)/α. At huge ε the Gaussian step is (ε, δ)-DP only with
    α ≈ √(2ε) (the paper's α = ε/(5√(2 ln(2/δ))) is not private there and is recalibrated):
    α ≈ 1.4e5, so the sd is ≤ 4.9e-5; to first order d_W² = Σ over the k·q(d−q) = 18
    rotation coordinates of (noise)², so d_W ≈ √18·4.9e-5 ≈ 2.1e-4 in the worst case; 1e-3
    leaves a 4.8× margin for the χ tail.
    """
    ds = make_union_of_subspaces(600, 5, 3, 3, 0.01, random_state=3)
    est = SampleAggregateSubspace(n_clusters=3, subspace_dim=3, solver="kplane", n_subsets=25, epsilon=1e10, random_state=4).fit(ds.X)
    assert est.alpha_ == pytest.approx(math.sqrt(2e10), rel=0.01)
    subs = est.subset_subspaces_
    m = subs.shape[0]
    dist = np.array([[wasserstein_distance(subs[i], subs[j]) for j in range(m)] for i in range(m)])
    t0 = est.t0_
    r_t0 = np.sort(dist + np.diag(np.full(m, np.inf)), axis=1)[:, t0 - 1]
    assert est.chosen_index_ == int(np.argmin(r_t0))
    far = (dist > r_t0[est.chosen_index_] + 1e-9).sum(axis=1)
    assert far[est.chosen_index_] == far.min()
    assert wasserstein_distance(est.subspaces_, subs[est.chosen_index_]) <= 1e-3
    assert est.noise_scale_ <= 2 * est.diameter_ / est.alpha_


def test_estimator_attributes_ledger_and_privacy_statement():
    ds = make_union_of_subspaces(500, 6, 2, 2, 0.05, random_state=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est = SampleAggregateSubspace(n_clusters=2, subspace_dim=2, solver="kplane", epsilon=1.0, random_state=0).fit(ds.X)
    n = 500
    assert est.delta_spent_ == pytest.approx(1 / (n * math.log(n)))          # §5 default
    assert est.n_subsets_ == math.ceil(math.log(n) ** 2) == 39
    assert est.encoding_dim_ == 2 * 6 * 7 // 2 == 42
    assert est.subspaces_.shape == (2, 6, 2)
    assert np.allclose(np.einsum("kdi,kdj->kij", est.subspaces_, est.subspaces_), np.eye(2))
    assert est.ledger_.total() == (1.0, est.delta_spent_) and len(est.ledger_) == 1
    assert "subspaces_" in est.private_outputs_ and "labels_" in est.nonprivate_outputs_
    assert "smooth_sensitivity_" in est.nonprivate_outputs_
    # ε = 1 < 2D/√m = 84/√39 = 13.45: Thm 3.1's condition is broken -> warned and listed
    assert not est.theorem31_["eps_ok"] and est.theorem31_["eps_threshold"] == pytest.approx(84 / math.sqrt(39))
    assert any("2D/√m" in msg for msg in est.warnings_)
    assert any("2D/√m" in str(x.message) for x in w)
    assert est.theorem31_["m_ok"]                                        # 39 >= (ln 500)² = 38.6


def test_theorem31_conditions_hold_quietly():
    th = theorem31_conditions(1000.0, 165, 48, 1000)
    assert th["eps_ok"] and th["m_ok"] and th["messages"] == []
    th = theorem31_conditions(10.0, 165, 25, 1000)
    assert not th["eps_ok"] and not th["m_ok"] and len(th["messages"]) == 2


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_subsets=200), "n_subsets"),     # 200 subsets of 1000/200 = 5 points < k(q+1) = 12
    (dict(n_subsets=1), "n_subsets"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(delta=1.5), "delta"),
    (dict(solver="kmeans"), "solver"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    X = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=0).X
    with pytest.raises(ValueError, match=name):
        SampleAggregateSubspace(n_clusters=3, subspace_dim=3, **kwargs).fit(X)
