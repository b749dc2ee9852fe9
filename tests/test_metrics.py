"""Metrics: subspace distances, d_W, the subspace cost, agreement scores, objectives."""
import numpy as np
import pytest

from dpcore.data import random_subspaces
from dpcore.metrics import (ari, clustering_accuracy, kmeans_objective, kmedian_objective, nearest_centres, nmi,
                            principal_angles, subspace_cost, subspace_distance, wasserstein_distance)


def test_distance_to_itself_is_zero_and_orthogonal_lines_are_sqrt2():
    U = random_subspaces(1, 6, 3, 0)[0]
    assert subspace_distance(U, U) == pytest.approx(0.0, abs=1e-7)
    e1, e2 = np.eye(3)[:, :1], np.eye(3)[:, 1:2]
    assert subspace_distance(e1, e2) == pytest.approx(np.sqrt(2))


def test_distance_is_frobenius_of_projector_difference_and_sqrt2_sin():
    rng = np.random.default_rng(0)
    U, V = random_subspaces(2, 7, 3, rng)
    direct = np.linalg.norm(U @ U.T - V @ V.T)
    assert subspace_distance(U, V) == pytest.approx(direct, rel=1e-10)
    assert subspace_distance(U, V) == pytest.approx(np.sqrt(2) * np.linalg.norm(np.sin(principal_angles(U, V))))


def test_principal_angles_of_a_known_pair():
    t = 0.3
    U = np.array([[1.0, 0], [0, 1], [0, 0]])
    V = np.array([[1.0, 0], [0, np.cos(t)], [0, np.sin(t)]])
    assert np.allclose(principal_angles(U, V), [0.0, t])


def test_wasserstein_is_permutation_invariant_and_zero_on_itself():
    Us = random_subspaces(4, 8, 2, 1)
    Vs = random_subspaces(4, 8, 2, 2)
    perm = [2, 0, 3, 1]
    assert wasserstein_distance(Us, Us[perm]) == pytest.approx(0.0, abs=1e-7)
    assert wasserstein_distance(Us, Vs) == pytest.approx(wasserstein_distance(Us[perm], Vs))
    assert wasserstein_distance(Us, Vs) == pytest.approx(wasserstein_distance(Vs, Us))
    # best matching is no worse than the identity matching
    ident = np.sqrt(sum(subspace_distance(a, b) ** 2 for a, b in zip(Us, Vs)))
    assert wasserstein_distance(Us, Vs) <= ident + 1e-12


def test_subspace_cost_zero_on_noiseless_data_and_positive_otherwise():
    Us = random_subspaces(2, 5, 2, 3)
    rng = np.random.default_rng(3)
    X = np.vstack([rng.standard_normal((20, 2)) @ U.T for U in Us])
    assert subspace_cost(X, Us) == pytest.approx(0.0, abs=1e-12)
    assert subspace_cost(X, random_subspaces(2, 5, 2, 4)) > 0.01


def test_accuracy_nmi_ari_under_relabelling():
    y = np.array([0, 0, 1, 1, 2, 2, 2])
    z = np.array([5, 5, 3, 3, 9, 9, 3])  # one point wrong, ids permuted
    assert clustering_accuracy(y, z) == pytest.approx(6 / 7)
    assert clustering_accuracy(y, (y + 1) % 3) == 1.0
    assert nmi(y, (y + 1) % 3) == pytest.approx(1.0) and ari(y, (y + 1) % 3) == pytest.approx(1.0)
    assert nmi(y, z) < 1.0


def test_kmeans_and_kmedian_objectives():
    X = np.array([[0.0, 0], [2, 0], [10, 0]])
    C = np.array([[1.0, 0], [10, 0]])
    assert kmeans_objective(X, C) == pytest.approx(2.0)
    assert kmedian_objective(X, C) == pytest.approx(2.0)


def test_nearest_centres_dense_and_sparse_ties_to_the_lowest_index():
    import scipy.sparse as sp
    X = np.array([[0.0, 0], [2, 0], [10, 0], [1, 0]])
    C = np.array([[1.0, 0], [10, 0], [1.0, 0]])                  # centre 2 duplicates centre 0
    labels, d2 = nearest_centres(X, C)
    np.testing.assert_array_equal(labels, [0, 0, 1, 0])
    np.testing.assert_allclose(d2, [1, 1, 0, 0])
    for chunk in (1, 3):
        sl, sd = nearest_centres(sp.csr_matrix(X), C, chunk=chunk)
        np.testing.assert_array_equal(sl, labels)
        np.testing.assert_allclose(sd, d2)


def test_metrics_import_nothing_above_them():
    """The library's layering: metrics sits below the algorithm packages (issue 24 removed the
    one upward import, of kmeans.common); kmeans.common re-exports the moved helpers."""
    import subprocess
    import sys
    code = "import sys, dpcore.metrics; print(sorted(m for m in sys.modules if m.startswith('dpcore.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert not any(p in out for p in ("dpcore.kmeans", "dpcore.subspace", "dpcore.cocluster", "dpcore.lab")), out
    from dpcore.kmeans import common
    from dpcore import metrics, validation
    assert common.nearest_centres is metrics.nearest_centres and common.check_points is validation.check_points


def test_metric_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        wasserstein_distance(random_subspaces(2, 5, 2, 0), random_subspaces(3, 5, 2, 0))
    with pytest.raises(ValueError, match="orthonormal"):
        wasserstein_distance(np.ones((1, 3, 1)), np.ones((1, 3, 1)))
    with pytest.raises(ValueError, match="same length"):
        clustering_accuracy([0, 1], [0])


# ----------------------------------------------------------------------------- the one matching (issue 15)
def test_min_matching_cost_brute_force_and_hungarian_agree_on_both_sides_of_the_threshold():
    import itertools
    from scipy.optimize import linear_sum_assignment
    from dpcore.metrics import MATCHING_BRUTE_FORCE_MAX_K, matching_permutations, min_matching_cost

    rng = np.random.default_rng(0)
    for k in range(1, MATCHING_BRUTE_FORCE_MAX_K + 3):
        C = rng.random((4, 3, k, k))
        cost, pi = min_matching_cost(C, return_matching=True)
        assert cost.shape == (4, 3) and pi.shape == (4, 3, k)
        for a, b in itertools.product(range(4), range(3)):
            r, c = linear_sum_assignment(C[a, b])
            assert cost[a, b] == pytest.approx(C[a, b][r, c].sum(), abs=1e-12)
            assert C[a, b][np.arange(k), pi[a, b]].sum() == pytest.approx(cost[a, b], abs=1e-12)
        np.testing.assert_array_equal(min_matching_cost(C), cost)
        assert (matching_permutations(k) is None) == (k > MATCHING_BRUTE_FORCE_MAX_K)
    ints = rng.integers(0, 50, (6, 3, 3))                      # integer costs stay exact
    assert min_matching_cost(-ints).dtype.kind == "i"
    with pytest.raises(ValueError, match="square"):
        min_matching_cost(np.zeros((2, 3)))


def test_min_matching_cost_in_chunks_is_the_same(monkeypatch):
    import dpcore.metrics as M

    C = np.random.default_rng(1).random((50, 4, 4))
    whole = M.min_matching_cost(C, return_matching=True)
    monkeypatch.setattr(M, "MATCHING_GATHER_CELLS", 24 * 4 * 7)   # chunks of 7 matrices
    parts = M.min_matching_cost(C, return_matching=True)
    np.testing.assert_array_equal(whole[0], parts[0])
    np.testing.assert_array_equal(whole[1], parts[1])


def test_pairwise_subspace_distances_broadcasts_over_stacks():
    from dpcore.metrics import pairwise_subspace_distances

    Us = np.stack([random_subspaces(3, 6, 2, random_state=s) for s in range(4)])   # (4, 3, 6, 2)
    V = random_subspaces(2, 6, 2, random_state=9)
    D2 = pairwise_subspace_distances(Us, V[None], squared=True)
    assert D2.shape == (4, 3, 2)
    for i in range(4):
        np.testing.assert_allclose(np.sqrt(D2[i]), pairwise_subspace_distances(Us[i], V), atol=1e-12)
        np.testing.assert_allclose(D2[i], [[subspace_distance(u, v) ** 2 for v in V] for u in Us[i]], atol=1e-12)
