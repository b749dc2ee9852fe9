"""Fast-τCC, the τ̂ objective and the contingency table (dpcore.cocluster.taucc)."""
import numpy as np
import pytest
import scipy.sparse as sp

from dpcore.data import MAX_DENSE_CELLS
from dpcore.cocluster.taucc import (FastTauCC, aggregate_columns, aggregate_rows,
                                    association_weights, best_cocluster_bruteforce, check_count_matrix,
                                    compact_labels, contingency_table, figure1_matrices, range_sensitivity,
                                    tau_scores)
from dpcore.data import make_block_matrix
from dpcore.metrics import nmi


def random_counts(n, m, density, seed):
    rng = np.random.default_rng(seed)
    A = sp.random(n, m, density=density, random_state=rng, data_rvs=lambda s: rng.integers(1, 6, s)).tocsr()
    return A


def tau_rc_direct(T):
    """eq. 3.2 with explicit loops (the reference)."""
    total = T.sum()
    s = 0.0
    for k in range(T.shape[0]):
        for l in range(T.shape[1]):
            if T[:, l].sum() > 0:
                s += T[k, l] ** 2 / (total * T[:, l].sum())
    return s - sum(T[k].sum() ** 2 for k in range(T.shape[0])) / total ** 2


def test_contingency_table_equals_dense_product_and_ignores_unassigned():
    A = random_counts(60, 40, 0.2, 0)
    rng = np.random.default_rng(1)
    r = rng.integers(0, 4, 60)
    c = rng.integers(0, 3, 40)
    R = np.eye(4)[r]
    C = np.eye(3)[c]
    # small integers: the sparse and dense sums are exact in floating point
    assert np.array_equal(contingency_table(A, r, c, 4, 3), R.T @ A.toarray() @ C)
    assert np.array_equal(aggregate_columns(A, c, 3), A.toarray() @ C)
    assert np.array_equal(aggregate_rows(A, r, 4), A.toarray().T @ R)
    r2 = r.copy()
    r2[:10] = -1  # rows in no cluster contribute nothing
    assert np.array_equal(contingency_table(A, r2, c, 4, 3), R[10:].T @ A.toarray()[10:] @ C)


def test_tau_matches_eq_3_2_and_transposes():
    rng = np.random.default_rng(2)
    T = rng.integers(0, 50, (4, 5)).astype(float)
    T[:, 2] = 0  # an empty column cluster contributes 0
    tau_rc, tau_cr = tau_scores(T)
    assert tau_rc == pytest.approx(tau_rc_direct(T), rel=1e-12)
    assert tau_cr == pytest.approx(tau_rc_direct(T.T), rel=1e-12)
    assert tau_scores(T.T) == pytest.approx((tau_cr, tau_rc), rel=1e-12)
    # a diagonal table: τ̂_{R|C} = 1 − Σ_k (t_k/T)² (every column predicts its row cluster exactly)
    D = np.diag([3.0, 5.0, 2.0])
    assert tau_scores(D)[0] == pytest.approx(1 - np.sum((np.array([3, 5, 2]) / 10) ** 2), rel=1e-12)
    # independence (rank one table): no association
    assert tau_scores(np.outer([1, 2, 3], [4, 1]))[0] == pytest.approx(0.0, abs=1e-12)


def test_sum_of_assigned_utilities_is_tau_times_total():
    """eq. 3.4/3.6 with eq. 4.9: Σ_i σ(a_i, t_k(i)) = A·τ̂_{R|C} (σ of eq. 4.9 is eq. 3.5 times A)."""
    A = random_counts(80, 50, 0.15, 3)
    rng = np.random.default_rng(4)
    r, c = rng.integers(0, 3, 80), rng.integers(0, 4, 50)
    T = contingency_table(A, r, c, 3, 4)
    U = aggregate_columns(A, c, 4) @ association_weights(T).T
    assert U[np.arange(80), r].sum() == pytest.approx(A.sum() * tau_scores(T)[0], rel=1e-10)


def test_range_sensitivity_is_the_exact_utility_change_of_one_cell():
    """eq. 4.10: adding 1 to cell (u, v) changes row u's utilities by w_{·, l(v)}; the largest
    range of that change over all cells is Δ(σ), and no other row's utilities move."""
    A = random_counts(12, 9, 0.5, 5).toarray()
    rng = np.random.default_rng(6)
    c = rng.integers(0, 3, 9)
    T = rng.integers(1, 30, (4, 3)).astype(float)  # any public table
    W = association_weights(T)
    delta = range_sensitivity(W)
    U = aggregate_columns(sp.csr_matrix(A), c, 3) @ W.T
    ranges = []
    for u in range(12):
        for v in range(9):
            A2 = A.copy()
            A2[u, v] += 1
            U2 = aggregate_columns(sp.csr_matrix(A2), c, 3) @ W.T
            diff = U2 - U
            assert np.allclose(np.delete(diff, u, axis=0), 0.0)
            ranges.append(diff[u].max() - diff[u].min())
    assert max(ranges) == pytest.approx(delta, rel=1e-12)


def test_compact_labels_drops_empty_clusters():
    lab, K = compact_labels([4, 4, -1, 7, 0])
    assert K == 3 and lab.tolist() == [1, 1, -1, 2, 0]


def test_fast_taucc_recovers_strong_blocks_exactly_from_an_overestimate():
    ds = make_block_matrix(200, 150, 3, 3, signal=5.0, noise=0.5, random_state=0)
    # Fast-τCC is used from an over-estimate of the number of clusters (§3.2): 30 × 30
    # clusters at start, empty ones disappear; it must end with exactly the 3 × 3 blocks.
    for seed in range(3):
        f = FastTauCC(n_row_clusters=30, n_col_clusters=30, random_state=seed).fit(ds.X)
        assert f.converged_
        assert (f.n_row_clusters_, f.n_col_clusters_) == (3, 3)
        assert nmi(ds.labels, f.row_labels_) == pytest.approx(1.0)
        assert nmi(ds.extras["column_labels"], f.column_labels_) == pytest.approx(1.0)
        assert np.allclose(f.T_, contingency_table(ds.X, f.row_labels_, f.column_labels_))


def test_fast_taucc_result_is_a_fixed_point_of_both_assignments():
    A = random_counts(150, 120, 0.1, 7)
    f = FastTauCC(n_row_clusters=4, n_col_clusters=4, random_state=1).fit(A)
    assert f.converged_
    T = f.T_
    Ur = aggregate_columns(A, f.column_labels_, T.shape[1]) @ association_weights(T).T
    Uc = aggregate_rows(A, f.row_labels_, T.shape[0]) @ association_weights(T.T).T
    tol = 1e-9 * max(np.abs(Ur).max(), np.abs(Uc).max())
    assert np.all(Ur[np.arange(150), f.row_labels_] >= Ur.max(axis=1) - tol)
    assert np.all(Uc[np.arange(120), f.column_labels_] >= Uc.max(axis=1) - tol)
    # history: the last round moved nothing
    assert f.history_[-1]["moves"] == 0 and f.history_[-2]["moves"] == 0


def test_fast_taucc_n_init_keeps_the_best_tau():
    ds = make_block_matrix(120, 90, 3, 3, signal=4.0, noise=0.5, random_state=3)
    # the n_init starts are drawn one after the other from one generator, exactly as four
    # single fits sharing that generator: n_init keeps the largest τ̂_{R|C} + τ̂_{C|R} of them
    shared = np.random.default_rng(0)
    singles = [FastTauCC(n_row_clusters=3, n_col_clusters=3, random_state=shared).fit(ds.X) for _ in range(4)]
    best = FastTauCC(n_row_clusters=3, n_col_clusters=3, n_init=4, random_state=0).fit(ds.X)
    scores = [f.tau_rc_ + f.tau_cr_ for f in singles]
    assert best.tau_rc_ + best.tau_cr_ == pytest.approx(max(scores), rel=1e-12)
    assert np.array_equal(best.row_labels_, singles[int(np.argmax(scores))].row_labels_)


def test_figure1_exhaustive_search_reproduces_the_paper():
    A, A2 = figure1_matrices()
    D = np.zeros((4, 6))
    D[2, 2] = 1.0  # a′₃₃ = a₃₃ + 1
    assert np.array_equal(A2 - A, D)
    r, c, T, _ = best_cocluster_bruteforce(A)
    assert r.tolist() == [0, 0, 1, 1] and c.tolist() == [0, 0, 0, 1, 1, 1]
    assert T.tolist() == [[10, 1], [1, 14]]
    r, c, T, _ = best_cocluster_bruteforce(A2)
    assert r.tolist() == [0, 0, 1, 1] and c.tolist() == [0, 0, 1, 1, 1, 1]  # p3 changes cluster
    assert T.tolist() == [[9, 2], [0, 16]]


def test_huge_sparse_matrix_is_never_densified():
    # 200 000 × 100 000 cells would need 160 GB dense; the sparse path touches O(nnz + (n+m)·K)
    rng = np.random.default_rng(8)
    n, m, nnz = 200_000, 100_000, 20_000
    A = sp.csr_matrix((rng.integers(1, 4, nnz).astype(float), (rng.integers(0, n, nnz), rng.integers(0, m, nnz))),
                      shape=(n, m))
    f = FastTauCC(n_row_clusters=3, n_col_clusters=3, max_iter=2, random_state=0).fit(A)
    assert f.row_labels_.shape == (n,) and f.T_.sum() == pytest.approx(A.sum())


@pytest.mark.parametrize("A,message", [
    (np.array([[1.0, -1.0], [2.0, 0.0]]), "non-negative"),
    (np.zeros((0, 4)), "non-empty"),
    (sp.csr_matrix((3, 0)), "non-empty"),
    (np.zeros((3, 4)), "at least one positive entry"),
    (np.array([[1.0, np.nan], [0.0, 1.0]]), "finite"),
    (np.ones(5), "2-D"),
    (np.broadcast_to(np.float64(1.0), (5000, MAX_DENSE_CELLS // 5000 + 1)), "pass a scipy.sparse matrix"),
])
def test_bad_matrices_raise_value_error_naming_the_problem(A, message):
    with pytest.raises(ValueError, match=message):
        check_count_matrix(A)
    with pytest.raises(ValueError, match=message):
        FastTauCC(n_row_clusters=2, n_col_clusters=2).fit(A)


@pytest.mark.parametrize("kw,message", [
    (dict(n_row_clusters=1), r"n_row_clusters \(K0\) must be an integer >= 2"),
    (dict(n_col_clusters=0), r"n_col_clusters \(L0\) must be an integer >= 2"),
    (dict(n_row_clusters=50), r"n_row_clusters \(K0\) must be <= the number of rows"),
    (dict(init="kmeans"), "init must be"),
    (dict(max_iter=0), "max_iter must be"),
])
def test_bad_parameters_raise_value_error(kw, message):
    A = random_counts(20, 10, 0.5, 9)
    with pytest.raises(ValueError, match=message):
        FastTauCC(**{"n_row_clusters": 2, "n_col_clusters": 2, **kw}).fit(A)
