"""The empirical privacy audit: bounds, their honesty on a private mechanism, their power on
a non-private one."""
import numpy as np
import pytest
from concurrent.futures import ThreadPoolExecutor

from dpcore.audit import (add_point, audit_from_statistics, change_cell, epsilon_lower_bound, far_outlier,
                          remove_point, run_audit)
from dpcore.data import make_union_of_subspaces
from dpcore.metrics import squared_distances_to_subspaces
from dpcore.privacy import laplace_mechanism
from dpcore.subspace.kplane import KPlane


def laplace_count(count, rng):
    """A counting query released by the Laplace mechanism at ε = 1."""
    return float(laplace_mechanism(count, 1.0, 1.0, rng))


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
        U = KPlane(2, 1, n_init=1, max_iter=20, random_state=rng).fit(X).subspaces_
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
