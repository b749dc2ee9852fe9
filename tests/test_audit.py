"""The empirical privacy audit: bounds, their honesty on a private mechanism, their power on
a non-private one."""
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

from dpcore.data import make_block_matrix, make_gaussian_mixture, make_union_of_subspaces
from dpcore.lab.audit import (CLAIMED_RELATION, MIN_TRIALS, NEIGHBOUR_RELATION, NEIGHBOURS, RELATIONS,
                              EstimatorStatistic, add_point, audit_dataset, audit_delta, audit_estimator,
                              audit_from_statistics, change_cell, claimed_relation, default_neighbour,
                              epsilon_lower_bound, far_outlier, fit_lr_score, gdp_audit_from_statistics, gdp_delta,
                              gdp_epsilon, laplace_llr, make_neighbour, remove_point, run_audit, three_axes)
from dpcore.lab.methods import FAMILY_KINDS, METHODS, register_method, unregister_method
from dpcore.metrics import squared_distances_to_subspaces
from dpcore.plots.audit import audit_histograms
from dpcore.privacy import analytic_gaussian_delta, gaussian_sigma_analytic, laplace_mechanism
from dpcore.subspace.kplane import KPlane


def laplace_count(count, rng):
    """A counting query released by the Laplace mechanism at ε = 1."""
    return float(laplace_mechanism(count, 1.0, 1.0, rng))


@pytest.mark.slow
def test_laplace_audit_never_exceeds_nominal_epsilon():
    # 20 audit seeds at 95 % confidence: each bound exceeds ε = 1 with probability ≤ 5 %,
    # and the bound is typically well below ε with 2 × 2000 runs, so all 20 stay ≤ 1.
    for seed in range(20):
        res = run_audit(laplace_count, 10.0, 11.0, 2000, confidence=0.95, nominal_epsilon=1.0, seed=seed)
        assert res.epsilon_lower <= 1.0, (seed, res.epsilon_lower)
        assert res.verdict == "consistent with the claim"
    # ... while the point estimate sits near the true privacy loss log-ratio (≤ 1), not at 0
    assert 0.5 < res.epsilon_point < 1.3


def test_bound_is_monotone_in_runs_for_fixed_rates():
    bounds = [epsilon_lower_bound(int(0.9 * n), n, int(0.1 * n), n) for n in (40, 80, 160, 320, 640, 1280)]
    assert all(b2 >= b1 for b1, b2 in zip(bounds, bounds[1:]))
    assert bounds[-1] < np.log(0.9 / 0.1)  # never above the plug-in value log(TPR/FPR)


def test_perfect_separation_gives_a_large_bound_and_delta_lowers_it():
    a, b = np.zeros(2000), np.ones(2000)
    res = audit_from_statistics(a, b, confidence=0.95)
    # 1000 held-out runs per side, TPR = 1 and FPR = 0: FPR_hi = 1 − (α/4)^{1/1000} ≈ 0.0055
    assert res.epsilon_lower > 5.0
    assert audit_from_statistics(a, b, confidence=0.95, delta=0.5).epsilon_lower < res.epsilon_lower


def test_nonprivate_kplane_with_far_outlier_leaks_without_bound():
    ds = make_union_of_subspaces(40, 4, 2, 1, 0.01, random_state=0)
    outlier = far_outlier(ds.X, ds.subspaces)
    X_b = add_point(ds.X, outlier)

    def statistic(X, rng):  # distance from the outlier to the nearest fitted subspace
        U = KPlane(n_clusters=2, subspace_dim=1, n_init=1, max_iter=20, random_state=rng).fit(X).subspaces_
        return float(np.sqrt(squared_distances_to_subspaces(outlier[None], U).min()))

    res = run_audit(statistic, ds.X, X_b, 2000, confidence=0.95, seed=1)
    assert res.epsilon_lower > 3.0
    assert res.verdict == "no bound: not private"


def test_audit_is_the_same_through_an_executor():
    with ThreadPoolExecutor(2) as ex:
        r1 = run_audit(laplace_count, 3.0, 4.0, 200, seed=5, executor=ex)
    r2 = run_audit(laplace_count, 3.0, 4.0, 200, seed=5)
    assert np.array_equal(r1.stats_a, r2.stats_a) and np.array_equal(r1.stats_b, r2.stats_b)
    assert r1.epsilon_lower == r2.epsilon_lower


def test_neighbour_constructions():
    X = np.arange(6.0).reshape(3, 2)
    assert add_point(X, [9, 9]).shape == (4, 2) and remove_point(X, 1).shape == (2, 2)
    A = np.array([[0, 2], [1, 0]])
    assert change_cell(A, 0, 0)[0, 0] == 1
    with pytest.raises(ValueError, match="negative"):
        change_cell(A, 0, 0, by=-1)
    with pytest.raises(ValueError, match="index"):
        remove_point(X, 3)
    with pytest.raises(ValueError, match="trials"):
        run_audit(laplace_count, 1.0, 2.0, 2)


def test_point_estimate_is_finite_and_ceiling_is_perfect_separation():
    res = audit_from_statistics(np.zeros(200), np.ones(200))
    assert np.isfinite(res.epsilon_point) and res.epsilon_point > 4
    # perfect separation of the 100 held-out runs per side reaches the ceiling exactly:
    # TPR_lo = c and FPR_hi = 1 − c with c = (α/4)^(1/100), α = 0.05, so ε̂ = log(c/(1 − c)) = 3.106
    c = 0.0125 ** 0.01
    assert res.epsilon_lower == pytest.approx(res.epsilon_ceiling)
    assert res.epsilon_ceiling == pytest.approx(np.log(c / (1 - c)), rel=1e-9)


def test_verdicts():
    a, b = np.zeros(200), np.ones(200)
    assert audit_from_statistics(a, b, nominal_epsilon=1.0).verdict == "leaks more than claimed"
    assert audit_from_statistics(a, b, nominal_epsilon=10.0).verdict == "consistent with the claim"
    # a non-private algorithm has no bound to compare with, whatever the audit found
    assert audit_from_statistics(a, a).verdict == "no bound: not private"
    assert audit_from_statistics(a, b).verdict == "no bound: not private"


def test_make_neighbour_checks_the_kind_and_uses_the_public_radius():
    pts = make_gaussian_mixture(100, 4, 2, random_state=0)
    Xb, target = make_neighbour(pts, "add_outlier")
    assert Xb.shape == (101, 4) and np.linalg.norm(target["point"]) == pytest.approx(pts.extras["public_radius"])
    assert target["replaced"] is None
    # replace-one: the same n, the first row overwritten by the same outlier
    Xr, tr = make_neighbour(pts, "replace_outlier")
    assert Xr.shape == pts.X.shape and np.array_equal(Xr[0], target["point"]) and np.array_equal(Xr[1:], pts.X[1:])
    assert np.array_equal(tr["replaced"], pts.X[0])
    with pytest.raises(ValueError, match="neighbour must be one of add_outlier, replace_outlier, remove_point .*"
                                         "'change_cell' is a construction for data of kind 'counts'"):
        make_neighbour(pts, "change_cell")
    counts = make_block_matrix(20, 10, random_state=0)
    with pytest.raises(ValueError, match="neighbour must be one of change_cell"):
        make_neighbour(counts, "add_outlier")
    pts.kind = "graph"
    with pytest.raises(ValueError, match="no neighbour construction for data of kind 'graph'"):
        make_neighbour(pts, "add_outlier")


@pytest.mark.parametrize("kwargs,message", [
    (dict(name="sulq_kplane", trials=MIN_TRIALS - 1, epsilon=1.0), "trials must be an integer >= 50"),
    (dict(name="kplane", trials=50, epsilon=1.0), "epsilon must be empty for kplane"),
    (dict(name="sulq_kplane", trials=50, epsilon=None), "epsilon must be given"),
    (dict(name="dp_taucc", trials=50, epsilon=1.0), "algorithm dp_taucc runs on data of kind counts"),
    (dict(name="sulq_kplane", trials=50, epsilon=1.0, neighbour="change_cell"), "neighbour must be one of"),
])
def test_audit_estimator_rejects_bad_input(kwargs, message):
    ds = make_union_of_subspaces(60, 4, 2, 1, 0.05, random_state=0)
    kwargs = {"neighbour": "add_outlier", **kwargs}
    with pytest.raises(ValueError, match=message):
        audit_estimator(kwargs.pop("name"), ds, kwargs.pop("neighbour"), kwargs.pop("trials"), **kwargs)


def test_audit_delta_is_public_and_the_same_on_both_sides():
    ds = make_union_of_subspaces(200, 4, 2, 1, 0.05, random_state=0)
    assert audit_delta("sulq_kplane", ds) == pytest.approx(1 / (200 * np.log(200)))   # 1/(n ln n) of D
    assert audit_delta("sulq_kmeans", ds) == 1e-6                                       # the estimator's default
    assert audit_delta("sulq_kplane", ds, {"delta": 1e-3}) == 1e-3
    assert audit_delta("gibbs", ds) == 0.0 and audit_delta("dplloyd", ds) == 0.0        # pure ε-DP


def test_three_axes_flips_the_kplane_start_with_one_record():
    ds = three_axes(50)
    X = ds.X
    assert np.linalg.norm(X, axis=1).max() <= 1.0
    Xb, target = make_neighbour(ds, "add_outlier")
    assert np.abs(target["point"]) == pytest.approx([0, 0, 1])           # the far outlier is the third axis
    axes_of = lambda U: sorted(int(np.argmax(np.abs(u[:, 0]))) for u in U)
    # the best pair of lines: {e1, e2} on D, a pair with e3 on D′ (costs 49.5 vs 50 on D)
    assert axes_of(KPlane(n_clusters=2, subspace_dim=1, random_state=0).fit(X).subspaces_) == [0, 1]
    assert 2 in axes_of(KPlane(n_clusters=2, subspace_dim=1, random_state=0).fit(Xb).subspaces_)


def test_audit_sets_build():
    for key in ("subspaces", "gaussians", "blocks", "three_axes"):
        ds, params = audit_dataset(key)
        assert ds.n > 0 and isinstance(params, dict)
    with pytest.raises(ValueError, match="audit set must be one of"):
        audit_dataset("nope")


def test_histogram_figure_shows_both_sides_threshold_and_bound():
    res = audit_from_statistics(np.r_[np.zeros(100), np.ones(100)], np.r_[np.ones(100), np.zeros(100)] + 0.5,
                                nominal_epsilon=1.0)
    fig = audit_histograms(res, "distance")
    assert [t.name for t in fig.data] == ["runs on D", "runs on D′ (neighbour)"]
    assert {s.type for s in fig.layout.shapes} == {"rect", "line"}         # "says D" region + threshold
    assert f"ε̂ = {res.epsilon_lower:.3g}" in fig.layout.title.text and "claimed ε = 1" in fig.layout.title.text


# ----------------------------------------------------------------------------- claimed relations
def test_every_private_method_has_a_claimed_relation_and_a_construction_for_it():
    # enumerates the catalogue: a new private method without a stated relation fails here
    for name, entry in METHODS.items():
        rel = claimed_relation(name)
        if not entry.private:
            assert rel is None
            continue
        assert rel in RELATIONS, name
        for kind in FAMILY_KINDS[entry.family]:
            nb = default_neighbour(name, kind)
            assert nb in NEIGHBOURS[kind] and NEIGHBOUR_RELATION[nb] == rel, (name, kind)
    assert set(CLAIMED_RELATION) == {n for n, m in METHODS.items() if m.private}
    assert set(NEIGHBOUR_RELATION) == {k for kind in NEIGHBOURS.values() for k in kind}


def test_claimed_relations_of_the_methods():
    assert {n: claimed_relation(n) for n in ("sulq_kplane", "sample_aggregate", "gibbs", "candidate_kmeans",
                                            "sulq_kmeans", "sa_kmeans")} == dict.fromkeys(
        ("sulq_kplane", "sample_aggregate", "gibbs", "candidate_kmeans", "sulq_kmeans", "sa_kmeans"), "replace_one")
    assert claimed_relation("dplloyd") == "add_remove" and claimed_relation("dp_taucc") == "cell_pm1"
    assert default_neighbour("sulq_kplane", "points") == "replace_outlier"
    assert default_neighbour("dplloyd", "points") == "add_outlier"
    assert default_neighbour("dp_taucc", "counts") == "change_cell"
    with pytest.raises(ValueError, match="method must be one of"):
        claimed_relation("nope")


def test_built_in_entries_claim_what_their_classes_declare():
    # the catalogue entry's relation is what the audit uses; a class that declares one must agree
    for name, m in METHODS.items():
        if m.private:
            assert m.relation == getattr(m.cls, "claimed_relation", m.relation), name


@pytest.fixture
def own_method():
    """A private method registered under a new name with its own relation and audit statistic."""
    m = register_method("audit_test_sulq", "own_method_helpers:AddRemoveSuLQKPlane", family="subspace",
                        private=True, relation="add_remove", audit_statistic="outlier_distance", params={"n_iter": 2})
    yield m
    unregister_method("audit_test_sulq")


def test_an_audit_reads_relation_and_statistic_from_the_catalogue_entry(own_method):
    assert claimed_relation("audit_test_sulq") == "add_remove" and CLAIMED_RELATION["audit_test_sulq"] == "add_remove"
    assert default_neighbour("audit_test_sulq", "points") == "add_outlier"
    ds = make_union_of_subspaces(60, 4, 2, 1, 0.05, random_state=0)
    res = audit_estimator("audit_test_sulq", ds, None, 50, epsilon=1.0)
    assert (res.relation, res.claimed_relation, res.statistic) == ("add_remove", "add_remove", "outlier_distance")
    assert res.stats_a.ndim == 1                        # a scalar statistic, not release features


def test_estimator_statistic_carries_its_entry_to_a_worker(own_method):
    # a worker process does not have the parent's registrations: the pickled statistic brings the entry
    ds = make_union_of_subspaces(60, 4, 2, 1, 0.05, random_state=0)
    target = {"point": far_outlier(ds.X, ds.subspaces), "replaced": None}
    stat = EstimatorStatistic.for_dataset("audit_test_sulq", ds, 1.0, target)
    blob = pickle.dumps(stat)
    unregister_method("audit_test_sulq")
    try:
        again = pickle.loads(blob)
        assert again.method == own_method and again.params == stat.params
        assert again(ds.X, np.random.default_rng(3)) == stat(ds.X, np.random.default_rng(3))
    finally:
        register_method("audit_test_sulq", own_method.target, family="subspace", private=True, relation="add_remove",
                        audit_statistic="outlier_distance", params={"n_iter": 2})


def test_audit_result_names_the_audited_and_the_claimed_relation():
    ds = make_union_of_subspaces(60, 4, 2, 1, 0.05, random_state=0)
    res = audit_estimator("sulq_kplane", ds, None, 50, epsilon=1.0, params={"n_iter": 2})
    assert (res.relation, res.claimed_relation, res.relation_is_claimed) == ("replace_one", "replace_one", True)
    assert res.statistic == "likelihood_ratio" and "likelihood-ratio score" in res.score
    other = audit_estimator("sulq_kplane", ds, "add_outlier", 50, epsilon=1.0, params={"n_iter": 2})
    assert (other.relation, other.relation_is_claimed) == ("add_remove", False)
    nonprivate = audit_estimator("kplane", ds, None, 50)
    assert nonprivate.claimed_relation is None and nonprivate.relation_is_claimed is None


def test_nonprivate_kmeanspp_is_audited_and_caught_on_replace_one():
    # k-means++ takes no radius (the family default is filtered as in the sweeps); the far
    # outlier on the public radius pulls its nearest centre, so the LR score separates the
    # held-out runs perfectly: ε̂ = the ceiling of 25 runs per side, log(c/(1 − c)) with
    # c = 0.0125^(1/25) ≈ 1.61
    ds = make_gaussian_mixture(60, 3, 2, sigma=0.1, random_state=0)
    res = audit_estimator("kmeanspp", ds, "replace_outlier", 50)
    assert res.epsilon_lower == pytest.approx(res.epsilon_ceiling) and res.epsilon_lower > 1.5


# ----------------------------------------------------------------------------- LR statistics
def test_lr_statistic_nearly_reaches_epsilon_on_a_tight_laplace_mechanism():
    # Laplace at ε = 2, sensitivity 1: f(D) = 1, f(D′) = 0, release f + Lap(1/2). The exact
    # log-likelihood ratio is (|x| − |x − 1|)·2 ∈ [−2, 2]; the test "LLR ≥ 2" (x ≥ 1) has
    # TPR = ½ and FPR = ½e^(−2) = 0.068 with ratio exactly e^ε. With 1000 held-out runs per
    # side at these expected rates the one-sided CP bounds (α = 0.0125 each) are TPR ≥ 0.465
    # and FPR ≤ 0.089, so the achievable ε̂ is log(0.465/0.089) ≈ 1.65; the measured bound
    # scatters around it by about ±0.15 (the CP margin of ~68 counts). ε̂ ≥ 1.3 = 0.65ε
    # leaves > 2 standard deviations; ε̂ ≤ 2 holds with 95 % for a correct mechanism.
    eps = 2.0
    stat = lambda count, rng: float(laplace_llr(float(laplace_mechanism(count, 1.0, eps, rng)), 1.0, 0.0, 1 / eps))
    res = run_audit(stat, 1.0, 0.0, 2000, confidence=0.95, nominal_epsilon=eps, seed=0)
    assert 1.3 <= res.epsilon_lower <= eps, res.epsilon_lower
    # the old default with the same runs (the distance-style statistic) is the same test here:
    # the LLR of a Laplace count is monotone in the count, so thresholding either is optimal


def test_fitted_lr_score_finds_a_direction_no_single_feature_shows():
    # Gaussian feature vectors in R^6 whose means differ by 0.3 in every coordinate: one
    # feature shifts by 0.3σ, the projection on the mean difference (the Neyman–Pearson test:
    # the LLR of two Gaussians with a common covariance is linear) by 0.3·√6 ≈ 0.73σ. With
    # 500 held-out runs per side the midpoint test of the projection has TPR/FPR ≈ 0.64/0.36
    # and CP margins ≈ ±0.05 (α = 0.0125), so ε̂ ≈ log(0.59/0.41) ≈ 0.38 or more; a single
    # feature (TPR/FPR ≈ 0.56/0.44) gives ≈ 0.05. Measured (seed 0): 0.49 against 0.14.
    rng = np.random.default_rng(0)
    Fa = rng.standard_normal((1000, 6)) + 0.3
    Fb = rng.standard_normal((1000, 6))
    res = audit_from_statistics(Fa, Fb, confidence=0.95)
    assert "likelihood-ratio score" in res.score and res.features_a.shape == (1000, 6)
    single = max(audit_from_statistics(Fa[:, j], Fb[:, j]).epsilon_lower for j in range(6))
    assert res.epsilon_lower > 0.25 and res.epsilon_lower > single + 0.1


def test_fitted_lr_score_never_sees_the_held_out_half():
    # the same law on both sides (true ε = 0): a score fitted on 2-D features must not
    # produce a positive bound more often than 1 − confidence. 20 fixed seeds; each bound is
    # positive with probability ≤ 5 %, so ≥ 4 positives (binomial P ≈ 1.6 %) would be a bug
    positives = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        res = audit_from_statistics(rng.standard_normal((400, 8)), rng.standard_normal((400, 8)))
        positives += res.epsilon_lower > 0
    assert positives <= 3
    with pytest.raises(ValueError, match="stats_a and stats_b must both be"):
        audit_from_statistics(np.zeros((10, 2)), np.zeros((10, 3)))
    with pytest.raises(ValueError, match="threshold must be None for feature vectors"):
        audit_from_statistics(np.zeros((10, 2)), np.zeros((10, 2)), threshold=0.0)
    with pytest.raises(ValueError, match="features_a and features_b must be 2-D"):
        fit_lr_score(np.zeros(10), np.zeros(10))


def test_fixed_threshold_uses_every_run():
    a, b = np.zeros(200), np.ones(200)
    res = audit_from_statistics(a, b, threshold=0.5, orientation="<=")
    assert res.n_heldout == 400 and not res.split and res.tpr == 1 and res.fpr == 0
    assert res.epsilon_lower == pytest.approx(res.epsilon_ceiling)
    assert res.epsilon_ceiling > audit_from_statistics(a, b).epsilon_ceiling      # twice the held-out runs
    with pytest.raises(ValueError, match="orientation must be"):
        audit_from_statistics(a, b, threshold=0.5, orientation="<")


# ----------------------------------------------------------------------------- Gaussian DP route
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_gdp_conversion_matches_the_analytic_gaussian_mechanism(eps):
    # the analytic Gaussian mechanism with σ is exactly (1/σ)-GDP, and Balle–Wang's δ(σ) is the
    # GDP δ(ε) of μ = Δ/σ: converting μ back at the same δ returns ε
    sigma = gaussian_sigma_analytic(1.0, eps, 1e-5)
    assert gdp_delta(eps, 1 / sigma) == pytest.approx(1e-5, rel=1e-6)
    assert gdp_epsilon(1 / sigma, 1e-5) == pytest.approx(eps, rel=1e-6)
    assert gdp_epsilon(0.0, 1e-5) == 0.0
    with pytest.raises(ValueError, match="delta must be"):
        gdp_epsilon(1.0, 0.0)


def test_gdp_delta_is_the_analytic_gaussian_delta_and_the_exact_formula():
    # μ-GDP is the Gaussian mechanism with Δ/σ = μ: the same function, checked against the
    # closed form δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) in 50-digit arithmetic
    mpmath = pytest.importorskip("mpmath")            # installed with dp-accounting
    for eps in (0.0, 0.1, 1.0, 3.0, 10.0):
        for mu in (0.05, 0.5, 1.0, 2.0, 5.0):
            with mpmath.workdps(50):
                e, m = mpmath.mpf(eps), mpmath.mpf(mu)
                exact = float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))
            assert gdp_delta(eps, mu) == analytic_gaussian_delta(1.0, mu, eps)
            assert gdp_delta(eps, mu) == pytest.approx(exact, rel=1e-9, abs=1e-300)
    assert gdp_delta(1.0, 0.0) == 0.0 and gdp_delta(1.0, -1.0) == 0.0


def test_gdp_audit_of_the_gaussian_mechanism_is_below_and_near_its_mu():
    # Gaussian mechanism at ε = 2, δ = 1e-5: σ = 1.99, μ = 0.50. With 2000 runs per side (1000
    # held out) the CP margins on FPR and FNR near ½ cost about 2·1.96·0.016/0.40 ≈ 0.16 of μ,
    # so μ̂ ≈ 0.34 is expected; μ̂ > μ would break the bound (probability ≤ 5 %).
    sigma = gaussian_sigma_analytic(1.0, 2.0, 1e-5)
    rng = np.random.default_rng(1)
    a, b = 1.0 + sigma * rng.standard_normal(2000), sigma * rng.standard_normal(2000)
    g = gdp_audit_from_statistics(a, b, 1e-5)
    assert 0.2 < g.mu_lower <= 1 / sigma
    assert 0.6 < g.epsilon_lower <= 2.0


# ----------------------------------------------------------------------------- the co-clustering paper's peers
def test_document_peers_claim_their_relations_and_get_document_neighbours():
    assert {n: claimed_relation(n) for n in ("dphd", "dp_kmeans", "dpnmf")} == {
        "dphd": "replace_one", "dp_kmeans": "add_remove", "dpnmf": "replace_one"}
    assert default_neighbour("dphd", "counts") == "replace_document"
    assert default_neighbour("dpnmf", "counts") == "replace_document"
    assert default_neighbour("dp_kmeans", "counts") == "remove_document"
    assert default_neighbour("dp_taucc", "counts") == "change_cell"      # unchanged: the first of its relation


def test_document_neighbours_keep_sparse_input_sparse_and_change_one_row():
    ds = make_block_matrix(n_rows=30, n_cols=20, k=2, l=2, random_state=0)
    assert sp.issparse(ds.X)
    B, t = make_neighbour(ds, "replace_document")
    A = ds.X.toarray()
    rare = int(np.argmin(A.sum(axis=0)))
    assert sp.issparse(B) and B.shape == ds.X.shape
    np.testing.assert_array_equal(B.toarray()[1:], A[1:])                  # only the first document changed
    assert np.flatnonzero(B.toarray()[0]).tolist() == [rare] and B[0, rare] == A[0].sum()
    np.testing.assert_array_equal(t["replaced"], A[0]) and np.testing.assert_array_equal(t["point"], B.toarray()[0])
    C, t2 = make_neighbour(ds, "remove_document")
    assert sp.issparse(C) and C.shape == (29, 20) and t2["replaced"] is None
    np.testing.assert_array_equal(C.toarray(), A[1:])
    assert NEIGHBOUR_RELATION["replace_document"] == "replace_one"
    assert NEIGHBOUR_RELATION["remove_document"] == "add_remove"


def test_document_peers_are_audited_on_their_release():
    ds = make_block_matrix(n_rows=60, n_cols=40, k=3, l=3, random_state=0)
    res = audit_estimator("dp_kmeans", ds, None, 50, epsilon=1.0)
    assert (res.relation, res.relation_is_claimed, res.statistic) == ("add_remove", True, "likelihood_ratio")
    assert np.isfinite(res.epsilon_lower)
    # a cell change is a change of one document: the row-level methods are audited on that row
    cell = audit_estimator("dpnmf", ds, "change_cell", 50, epsilon=1.0, params={"init": "random"})
    assert (cell.relation, cell.relation_is_claimed) == ("cell_pm1", False) and np.isfinite(cell.epsilon_lower)
    # DP-τCC's statistics read one table cell: a document neighbour is refused by name
    with pytest.raises(ValueError, match="neighbour must be change_cell for dp_taucc"):
        audit_estimator("dp_taucc", ds, "remove_document", 50, epsilon=1.0)
