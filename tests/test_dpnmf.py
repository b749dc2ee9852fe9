"""DPNMF (dpcore.cocluster.dpnmf): ledger totals, privacy flags of the two starts, the
sensitivity facts the guarantee rests on, refusal of bad parameters, sparse input, utility on
a planted block matrix, and the scikit-learn parameter contract."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from dpcore.cocluster.dpnmf import DPNMF, STAT_SENSITIVITY_FACTOR, h_step, project_unit_rows, w_step
from dpcore.data import make_block_matrix
from dpcore.metrics import nmi
from dpcore.privacy import GaussianBudget


@pytest.fixture(scope="module")
def block():
    return make_block_matrix(240, 150, 3, 3, signal=5.0, noise=0.5, random_state=3)


# ----------------------------------------------------------------------------- ledger and flags
@pytest.mark.parametrize("eps,delta,I", [(0.1, 1e-5, 1), (0.5, 1e-5, 4), (0.99999, 1e-6, 3), (3.0, 1e-5, 4)])
def test_ledger_totals_equal_epsilon_and_delta(block, eps, delta, I):
    m = DPNMF(n_clusters=3, epsilon=eps, delta=delta, n_iter=I, init="random", random_state=0).fit(block.X)
    assert m.ledger_.total() == (eps, delta)
    assert (m.epsilon_spent_, m.delta_spent_) == (eps, delta)
    assert len(m.ledger_) == 1 and "GDP" in m.ledger_.entries[0].note
    # the σ used is the analytic Gaussian of 2𝓘 releases of sensitivity √2/n composed exactly
    n = block.X.shape[0]
    assert m.noise_sigma_ == pytest.approx(GaussianBudget(eps, delta, 2 * I).sigma(math.sqrt(2) / n))


def test_random_start_is_private(block):
    m = DPNMF(n_clusters=3, epsilon=0.5, init="random", random_state=0).fit(block.X)
    assert m.is_private_ and m.released_private_
    assert set(m.private_outputs_) == {"components_", "initial_components_"}
    assert {"labels_", "coefficients_"} <= set(m.nonprivate_outputs_)
    assert "NOT PRIVATE" not in m.ledger_.entries[0].note
    assert m.privacy_report()["epsilon"] == 0.5


def test_default_start_is_the_private_one(block):
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no warning: nothing leaks by default
        m = DPNMF(n_clusters=3, epsilon=0.5, random_state=0).fit(block.X)
    assert m.init == "random" and m.is_private_ and m.released_private_


def test_nndsvd_start_is_flagged_not_private(block):
    """The paper's start reads the data without noise: only when asked, with a warning, and every
    place a reader looks says so (ledger note, flags, non-private outputs)."""
    with pytest.warns(UserWarning, match="NNDSVD") as caught:
        m = DPNMF(n_clusters=3, epsilon=0.5, init="nndsvd", random_state=0).fit(block.X)
    assert caught[0].filename == __file__              # the warning points at the caller's line
    assert m.is_private_ is False and m.released_private_ is False
    assert m.private_outputs_ == []
    assert {"components_", "initial_components_", "labels_", "coefficients_"} <= set(m.nonprivate_outputs_)
    assert m.ledger_.entries[0].note.startswith("NOT PRIVATE AS A RUN")
    assert m.ledger_.total() == (0.5, 1e-5)        # the noise was still spent


def test_neighbouring_relation_is_stated():
    from dpcore.lab.audit import RELATIONS
    assert DPNMF.claimed_relation == "replace_one" and DPNMF.claimed_relation in RELATIONS


# ----------------------------------------------------------------------------- the sensitivity argument
def test_statistics_sensitivity_is_sqrt2_over_n_for_nonnegative_unit_vectors():
    """‖hhᵀ − h′h′ᵀ‖_F and ‖vhᵀ − v′h′ᵀ‖_F ≤ √2 for non-negative vectors of norm ≤ 1
    (random and extreme pairs); the bound is attained by orthogonal unit vectors."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        h, hp = project_unit_rows(rng.random((2, 4)) * rng.uniform(0.1, 3))
        v, vp = project_unit_rows(rng.random((2, 6)) * rng.uniform(0.1, 3))
        worst = max(worst, np.linalg.norm(np.outer(h, h) - np.outer(hp, hp)),
                    np.linalg.norm(np.outer(v, h) - np.outer(vp, hp)))
    assert worst <= STAT_SENSITIVITY_FACTOR + 1e-12
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    assert np.linalg.norm(np.outer(e1, e1) - np.outer(e2, e2)) == pytest.approx(math.sqrt(2))


def test_h_step_row_depends_only_on_its_own_document(block):
    """Replacing one document changes only its own coefficients (given the public basis):
    what makes the W-step statistics have sensitivity √2/n."""
    rng = np.random.default_rng(1)
    from dpcore.preprocessing import normalize_rows
    V = normalize_rows(block.X)
    W = project_unit_rows(rng.random((V.shape[1], 3)).T).T
    H0 = project_unit_rows(rng.random((V.shape[0], 3)))
    V2 = V.tolil(copy=True)
    V2[7, :] = 0.0
    V2[7, 3] = 1.0
    Ha, Hb = h_step(V, W, H0, 30), h_step(V2.tocsr(), W, H0, 30)
    changed = np.flatnonzero(np.any(Ha != Hb, axis=1))
    assert changed.tolist() == [7]
    assert np.all(Ha >= 0) and np.all(np.linalg.norm(Ha, axis=1) <= 1 + 1e-12)


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("params,match", [
    (dict(n_clusters=0), "n_clusters"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(n_iter=0), "n_iter"),
    (dict(init="svd"), "init must be one of"),
    (dict(h_steps=0), "h_steps"),
    (dict(w_steps=0), "w_steps"),
    (dict(w_step_size=0.0), "w_step_size"),
    (dict(w_step_size=-1e-4), "w_step_size"),
    (dict(w_step_size=float("nan")), "w_step_size"),
    (dict(w_step_size="1e-4"), "w_step_size"),
    (dict(w_step_size=True), "w_step_size"),
])
def test_bad_parameters_are_refused_by_name(block, params, match):
    with pytest.raises(ValueError, match=match):
        DPNMF(**params).fit(block.X)


def test_bad_input_is_refused(block):
    with pytest.raises(ValueError, match="Negative values"):
        DPNMF(n_clusters=2).fit(-block.X)
    with pytest.raises(ValueError, match="n_clusters must be <= min"):
        DPNMF(n_clusters=5).fit(np.ones((4, 10)))
    with pytest.raises(ValueError, match="finite"):
        DPNMF(n_clusters=2).fit(np.array([[1.0, np.nan], [0.0, 1.0]]))


# ----------------------------------------------------------------------------- input, utility, determinism
def test_sparse_and_dense_input_give_the_same_fit(block):
    assert sp.issparse(block.X)
    a = DPNMF(n_clusters=3, epsilon=0.5, init="random", random_state=5).fit(block.X)
    b = DPNMF(n_clusters=3, epsilon=0.5, init="random", random_state=5).fit(block.X.toarray())
    c = DPNMF(n_clusters=3, epsilon=0.5, init="random", random_state=5).fit(sp.csc_matrix(block.X))
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-10)
    np.testing.assert_allclose(a.components_, c.components_, atol=1e-10)
    assert a.components_.shape == (3, block.X.shape[1]) and a.labels_.shape == (block.X.shape[0],)
    assert a.n_features_in_ == block.X.shape[1]


@pytest.mark.parametrize("init", ["random", "nndsvd"])
def test_nmi_well_above_chance_with_large_epsilon(block, init):
    # chance NMI of 3 balanced clusters on 240 rows is ~0.01; the planted blocks are clear
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # the NNDSVD start's warning (tested above)
        m = DPNMF(n_clusters=3, epsilon=1e4, init=init, random_state=0).fit(block.X)
    assert nmi(block.labels, m.labels_) > 0.8


def test_same_seed_same_fit_and_callback(block):
    calls = []
    a = DPNMF(n_clusters=3, epsilon=0.5, n_iter=3, init="random", random_state=9).fit(
        block.X, callback=lambda t, n: calls.append((t, n)))
    b = DPNMF(n_clusters=3, epsilon=0.5, n_iter=3, init="random", random_state=9).fit(block.X)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_clone_and_get_params():
    est = DPNMF(n_clusters=4, epsilon=0.3, delta=1e-6, n_iter=2, init="random", h_steps=7, w_steps=9,
                w_step_size=1e-3, random_state=3)
    params = est.get_params()
    assert params == dict(n_clusters=4, epsilon=0.3, delta=1e-6, n_iter=2, init="random", h_steps=7, w_steps=9,
                          w_step_size=1e-3, random_state=3)
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert est.set_params(**params) is est
    with pytest.raises(TypeError):
        DPNMF(3)


# ----------------------------------------------------------------------------- the W step (the paper's run: 1e-4)
def test_one_w_step_moves_w_at_most_step_times_gradient():
    """From a feasible W the projection is non-expansive: one step of size s moves W by at most
    s·‖WA − B‖_F, whatever A and B (noisy statistics can be anything)."""
    rng = np.random.default_rng(0)
    for step in (1e-4, 1e-2, 1.0):
        W = project_unit_rows(rng.random((3, 40))).T          # columns in the non-negative unit ball
        A, B = rng.normal(size=(3, 3)), rng.normal(size=(40, 3))
        moved = np.linalg.norm(w_step(W, A, B, 1, step) - W)
        assert 0 < moved <= step * np.linalg.norm(W @ ((A + A.T) / 2) - B) + 1e-15


def test_published_w_step_keeps_the_basis_at_its_start(block):
    """The co-clustering paper's run (NNDSVD start, W stepped by 1e-4 once per iteration): with the
    noise negligible (ε = 1e6), ‖∇‖_F ≤ √K + 1 (‖W‖_F ≤ √K, ‖A‖₂ ≤ 1, ‖B‖_F ≤ 1), so 𝓘 steps move W
    by at most 𝓘·1e-4·(√K + 1); our 1/L step moves it by orders of magnitude more."""
    K, I, step = 3, 4, 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # the NNDSVD start's warning (tested above)
        pub = DPNMF(n_clusters=K, epsilon=1e6, n_iter=I, init="nndsvd", w_step_size=step, w_steps=1,
                    random_state=0).fit(block.X)
        ours = DPNMF(n_clusters=K, epsilon=1e6, n_iter=I, init="nndsvd", random_state=0).fit(block.X)
    moved = np.linalg.norm(pub.components_ - pub.initial_components_)
    assert 0 < moved <= I * step * (math.sqrt(K) + 1) * (1 + 1e-6)
    np.testing.assert_array_equal(pub.initial_components_, ours.initial_components_)    # the same start
    assert np.linalg.norm(ours.components_ - ours.initial_components_) > 100 * moved
    assert pub.is_private_ is False                     # the start is not private, whatever the step


def test_fixed_w_step_keeps_the_blind_start_private(block):
    """The step size is public: from the blind start the run stays (ε, δ)-DP with the same σ."""
    a = DPNMF(n_clusters=3, epsilon=0.5, init="random", w_step_size=1e-4, random_state=0).fit(block.X)
    b = DPNMF(n_clusters=3, epsilon=0.5, init="random", random_state=0).fit(block.X)
    assert a.is_private_ and a.released_private_ and a.noise_sigma_ == b.noise_sigma_
    np.testing.assert_array_equal(a.initial_components_, b.initial_components_)
    assert not np.allclose(a.components_, b.components_)


def test_default_w_step_is_one_over_l(block):
    """``w_step_size=None`` (the default) is the 1/L step: the private DPNMF is unchanged."""
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    B = np.abs(np.random.default_rng(1).normal(size=(6, 2)))
    W = project_unit_rows(np.random.default_rng(2).random((2, 6))).T
    L = np.linalg.eigvalsh(A)[-1]
    np.testing.assert_array_equal(w_step(W, A, B, 5), w_step(W, A, B, 5, 1.0 / L))
    assert DPNMF().w_step_size is None
