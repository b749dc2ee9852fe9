"""SuLQ k-plane (App. E: Alg. 5, Prop. E.1–E.2) and the Fig. 2 utility trend of the two
private families of issue 4."""
import math
import warnings

import numpy as np
import pytest

from dpcore.data import make_union_of_subspaces
from dpcore.metrics import wasserstein_distance
from dpcore.privacy import advanced_composition, gaussian_sigma_analytic
from dpcore.subspace.kplane import KPlane
from dpcore.privacy.sample_aggregate import private_aggregate
from dpcore.subspace.sample_aggregate import SampleAggregateSubspace, decode_subspaces
from dpcore.subspace.sulq import SuLQKPlane, noisy_scatter, sulq_per_query_budget


# --------------------------------------------------------------------------- Prop. E.2
def test_prop_E2_total_from_per_query_by_hand():
    # kT = 30 queries, each (0.1, 1e-6):
    # ε′ = √(2·30·ln 1e6)·0.1 + 30·0.1·(e^0.1 − 1) = √828.93·0.1 + 3·0.1051709 = 2.879116 + 0.315513
    eps_t, delta_t = advanced_composition(0.1, 1e-6, 30)
    assert eps_t == pytest.approx(2.879116 + 0.315513, abs=2e-6)
    assert delta_t == pytest.approx(31e-6, rel=1e-12)           # δ′ = (kT + 1)·δ


@pytest.mark.parametrize("total_eps", [0.5, 3.1946, 10.0, 1000.0, 1e6])
def test_prop_E2_inverse_recomposes_exactly(total_eps):
    eps_q, delta_q, used = sulq_per_query_budget(total_eps, 31e-6, 30)
    assert used == "advanced" and delta_q == pytest.approx(1e-6, rel=1e-12)
    assert advanced_composition(eps_q, delta_q, 30) == pytest.approx((total_eps, 31e-6), rel=1e-10)
    if total_eps == 3.1946:
        assert eps_q == pytest.approx(0.1, rel=1e-4)            # the hand example above, inverted


def test_composition_choices():
    # basic: an even split; best: whichever per-query ε is larger (Prop. E.2 wins at small ε′)
    assert sulq_per_query_budget(1000.0, 3e-5, 30, "basic") == (1000 / 30, 1e-6, "basic")
    assert sulq_per_query_budget(1000.0, 3e-5, 30, "best")[2] == "basic"
    assert sulq_per_query_budget(0.5, 3e-5, 30, "best")[2] == "advanced"
    with pytest.raises(ValueError, match="composition"):
        sulq_per_query_budget(1.0, 1e-5, 30, "fancy")


# --------------------------------------------------------------------------- Alg. 5 noise
def test_alg5_noise_is_sigma_times_standard_normal():
    X = np.array([[0.6, 0.8, 0, 0, 0], [0, 0, 1.0, 0, 0], [1.0, 0, 0, 0, 0]])
    labels = np.array([0, 0, 1])
    B = X[:2].T @ X[:2]
    rng = np.random.default_rng(0)
    E = np.stack([noisy_scatter(X, labels, 0, 3.0, rng) - B for _ in range(2000)])  # 50 000 entries
    # mean SE = 3/√5e4 = 0.013, sd SE ≈ 3/√1e5 = 0.0095: 5 SE allowances
    assert abs(E.mean()) < 5 * 0.0135 and abs(E.std() - 3.0) < 5 * 0.0095
    # W is a full (non-symmetric) d×d Gaussian matrix, as Alg. 5 says
    assert not np.allclose(E[0], E[0].T)


def test_sigma_classic_below_1_analytic_above():
    X = make_union_of_subspaces(300, 6, 2, 2, 0.05, random_state=0).X
    lo = SuLQKPlane(n_clusters=2, subspace_dim=2, n_iter=5, epsilon=1.0, random_state=0).fit(X)
    assert lo.per_query_epsilon_ < 1 and lo.noise_mechanism_ == "classic"
    # Alg. 5: σ = 2√(2 ln(1.25/δ))/ε
    assert lo.noise_sigma_ == pytest.approx(2 * math.sqrt(2 * math.log(1.25 / lo.per_query_delta_))
                                            / lo.per_query_epsilon_, rel=1e-12)
    hi = SuLQKPlane(n_clusters=2, subspace_dim=2, n_iter=5, epsilon=1000.0, random_state=0).fit(X)
    assert hi.per_query_epsilon_ >= 1 and hi.noise_mechanism_ == "analytic"
    assert hi.noise_sigma_ == pytest.approx(gaussian_sigma_analytic(2.0, hi.per_query_epsilon_,
                                                                    hi.per_query_delta_), rel=1e-12)
    assert "analytic" in hi.ledger_.entries[0].mechanism
    with pytest.raises(ValueError, match="per-query epsilon"):
        SuLQKPlane(n_clusters=2, subspace_dim=2, n_iter=5, epsilon=1000.0, gaussian="classic").fit(X)


# --------------------------------------------------------------------------- estimator
def test_ledger_sums_to_the_users_budget_and_privacy_statement():
    X = make_union_of_subspaces(400, 6, 3, 2, 0.05, random_state=1).X
    est = SuLQKPlane(n_clusters=3, subspace_dim=2, n_iter=7, epsilon=2.0, delta=1e-4, random_state=0).fit(X)
    assert len(est.ledger_) == 1 and est.ledger_.total() == (2.0, 1e-4)
    assert "Prop. E.2" in est.ledger_.entries[0].note
    assert est.n_queries_ == 21 and est.composition_used_ == "advanced"
    assert advanced_composition(est.per_query_epsilon_, est.per_query_delta_, 21) == pytest.approx((2.0, 1e-4),
                                                                                                 rel=1e-10)
    assert est.subspace_history_.shape == (8, 3, 6, 2) and len(est.cost_history_) == 7
    assert "subspaces_" in est.private_outputs_ and "labels_" in est.nonprivate_outputs_
    # default δ′ = 1/(n ln n) (§5)
    assert SuLQKPlane(n_clusters=3, subspace_dim=2, n_iter=1, epsilon=1.0, random_state=0).fit(X).delta_spent_ == pytest.approx(
        1 / (400 * math.log(400)))


def test_initial_subspaces_use_no_data():
    A = make_union_of_subspaces(300, 6, 2, 2, 0.05, random_state=0).X
    B = make_union_of_subspaces(500, 6, 2, 2, 0.3, random_state=9).X
    ua = SuLQKPlane(n_clusters=2, subspace_dim=2, n_iter=2, epsilon=1.0, random_state=42).fit(A).init_subspaces_
    ub = SuLQKPlane(n_clusters=2, subspace_dim=2, n_iter=2, epsilon=1.0, random_state=42).fit(B).init_subspaces_
    assert np.array_equal(ua, ub)


def test_rows_outside_unit_ball_are_clipped_with_a_warning():
    X = make_union_of_subspaces(200, 5, 2, 2, 0.05, random_state=0).X
    X[:7] *= 3.0
    with pytest.warns(UserWarning, match="unit ball"):
        est = SuLQKPlane(n_clusters=2, subspace_dim=2, n_iter=2, epsilon=1.0, random_state=0).fit(X)
    assert est.n_clipped_ == 7 and "n_clipped_" in est.nonprivate_outputs_


def test_eps_1e6_matches_kplane_cost_with_prop_E2():
    """Same random start, T = 10: SuLQ with ε′ = 1e6 vs exact k-plane.

    With Prop. E.2 the per-query ε is only 8.3 (σ ≈ 1.25 on A_ℓA_ℓᵀ). First-order
    perturbation: the top-q eigenvalues of A_ℓA_ℓᵀ are λ ≈ n_ℓ(1/q + σ_x²), the basis error is
    ‖sin Θ‖_F² ≈ σ²q(d−q)/λ², and a point's squared distance grows by ‖sin Θ‖_F²/q on average:
    relative cost excess ≈ σ²(d−q)/(λ²·cost). Fig. 2 middle (d = 10, q = 3, σ_x = 0.1, cost ≈ 0.06)
    with n = 1000 (λ ≈ 114) gives 1.3 % (measured 1.1–1.5 % on 4 seeds: over 1 %), so this test uses
    n = 3000 (λ ≈ 343): 0.15 %, well inside 1 %. The argument is about one optimum: from a start
    where k-plane itself stops in a poorer local optimum, the noise can carry SuLQ to another basin
    (seed 1 of the current data: k-plane 0.071, SuLQ 0.141). So the bound is checked on the starts
    from which k-plane reaches the best cost found (within 1 %), at least two of four."""
    ds = make_union_of_subspaces(3000, 10, 3, 3, 0.1, random_state=0)
    pairs = []
    for seed in range(1, 5):
        s = SuLQKPlane(n_clusters=3, subspace_dim=3, n_iter=10, epsilon=1e6, random_state=seed).fit(ds.X)
        kp = KPlane(n_clusters=3, subspace_dim=3, init=s.init_subspaces_, max_iter=10).fit(ds.X)
        assert s.per_query_epsilon_ == pytest.approx(8.3, abs=0.1)
        pairs.append((s.cost_, kp.cost_))
    best = min(k for _, k in pairs)
    at_best = [(c, k) for c, k in pairs if k <= 1.01 * best]
    assert len(at_best) >= 2
    assert all(abs(c - k) <= 0.01 * k for c, k in at_best), pairs


def test_eps_1e6_matches_kplane_cost_fig2_middle_with_best_composition():
    # n = 1000: with composition="best" the even split is used (per-query ε = 33 333, σ ≈ 0.008),
    # relative excess ≈ (0.008/1.25)² × 1.3 % ≈ 5e-7.
    ds = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=0)
    s = SuLQKPlane(n_clusters=3, subspace_dim=3, n_iter=10, epsilon=1e6, composition="best", random_state=1).fit(ds.X)
    assert s.composition_used_ == "basic" and "sequential" in s.ledger_.entries[0].note
    kp = KPlane(n_clusters=3, subspace_dim=3, init=s.init_subspaces_, max_iter=10).fit(ds.X)
    best = KPlane(n_clusters=3, subspace_dim=3, n_init=10, random_state=0).fit(ds.X)
    assert abs(s.cost_ - kp.cost_) <= 0.01 * kp.cost_
    # against the best of 10 k-plane starts: one random start can stop in a local optimum (3 of
    # 10 starts do here, at about twice the cost, as k-plane itself would), so over 10 starts
    # the median SuLQ cost is within 1 % of the best k-plane cost
    costs = [SuLQKPlane(n_clusters=3, subspace_dim=3, n_iter=10, epsilon=1e6, composition="best", random_state=r).fit(ds.X).cost_
             for r in range(10)]
    assert np.median(costs) <= 1.01 * best.cost_


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_iter=0), "n_iter"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-2.0), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(composition="fancy"), "composition"),
    (dict(gaussian="laplace"), "gaussian"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    X = make_union_of_subspaces(200, 5, 2, 2, 0.05, random_state=0).X
    with pytest.raises(ValueError, match=name):
        SuLQKPlane(n_clusters=2, subspace_dim=2, **kwargs).fit(X)


# --------------------------------------------------------------------------- Fig. 2 trend
def _sa_releases(X, solver, epsilons, seed):
    """Sample-aggregate releases at several ε from ONE set of subset solutions.

    The subsets and the solvers' seeds are drawn from ``random_state`` before ε is used, so
    ``fit`` at another ε recomputes exactly the same m subset solutions B and only steps 5–7
    differ; to keep the test short we fit once (at the largest ε) and re-run steps 5–7 on
    ``aggregate_.outputs`` for the other ε (the equivalence is asserted in the trend test)."""
    est = SampleAggregateSubspace(n_clusters=3, subspace_dim=3, solver=solver, epsilon=max(epsilons), random_state=seed).fit(X)
    out = {max(epsilons): est.subspaces_}
    for e in epsilons:
        if e != max(epsilons):
            res = private_aggregate(est.aggregate_.outputs, e, est.delta_spent_, diameter=est.diameter_, n_blocks=3,
                                    random_state=seed)
            out[e] = decode_subspaces(res.released, 3, X.shape[1], 3)
    return out, est


@pytest.mark.slow   # 2.6-4.3 s: keeps the quick run under 2 minutes
def test_fig2_middle_utility_trend():
    """Fig. 2 middle setting (n = 1000, d = 10, k = 3, q = 3, σ = 0.1), δ = 1/(n ln n), median
    d_W over 5 seeds: every method is better at ε = 1000 than at ε = 1, and at ε = 10 SuLQ-10
    beats sample-aggregate with TSC (the paper's finding)."""
    eps = (1, 10, 1000)
    dw = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # Thm 3.1 warnings at small ε are expected here
        ds0 = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=0)
        # the shortcut of _sa_releases: a fit at ε = 1 has the same subset solutions
        _, est = _sa_releases(ds0.X, "kplane", eps, 100)
        other = SampleAggregateSubspace(n_clusters=3, subspace_dim=3, solver="kplane", epsilon=1, random_state=100).fit(ds0.X)
        assert np.array_equal(other.subset_subspaces_, est.subset_subspaces_)
        for seed in range(5):
            ds = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=seed)
            for T in (10, 50):
                for e in eps:
                    est = SuLQKPlane(n_clusters=3, subspace_dim=3, n_iter=T, epsilon=e, random_state=100 + seed).fit(ds.X)
                    dw.setdefault((f"SuLQ-{T}", e), []).append(wasserstein_distance(est.subspaces_, ds.subspaces))
            for solver in ("tsc", "ssc", "kplane"):
                rel, _ = _sa_releases(ds.X, solver, eps, 100 + seed)
                for e in eps:
                    dw.setdefault((f"SA-{solver}", e), []).append(wasserstein_distance(rel[e], ds.subspaces))
    med = {key: float(np.median(v)) for key, v in dw.items()}
    for name in ("SuLQ-10", "SuLQ-50", "SA-tsc", "SA-ssc", "SA-kplane"):
        assert med[name, 1000] < med[name, 1], (name, med)
    assert med["SuLQ-10", 10] < med["SA-tsc", 10], med
