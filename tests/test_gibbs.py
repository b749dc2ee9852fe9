"""Gibbs subspace clustering (exponential mechanism, §4) and the mixing diagnostics."""
import itertools
import math

import numpy as np
import pytest

from dpcore.data import make_union_of_subspaces
from dpcore.privacy import exponential_mechanism_probabilities
from dpcore.metrics import squared_distances_to_subspaces
from dpcore.subspace.bingham import random_stiefel
from dpcore.subspace.diagnostics import (diagnostics_table, effective_sample_size, mixing_verdict, split_rhat,
                                         section5_statistic_trace)
from dpcore.subspace.gibbs import (MAX_CHAINS, GibbsSubspaceClustering, _projection_norms, assignment_probabilities,
                                   gibbs_sweep, sample_assignments, z_step_probabilities)
from dpcore.subspace.kplane import KPlane


@pytest.fixture(scope="module")
def fig3_data():
    return make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=0)


@pytest.fixture(scope="module")
def small_data():
    return make_union_of_subspaces(300, 10, 3, 3, 0.1, random_state=1)


# ----------------------------------------------------------------------------- z-step
@pytest.mark.parametrize("eps", [0.5, 3.0, 30.0])
def test_z_step_frequencies_match_eq_11(eps):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.2
    U = random_stiefel(3, 5, 2, rng)
    # expected: the exponential mechanism's textbook probabilities (privacy.py) with utility −d²
    # and sensitivity 1, i.e. ∝ exp(−(ε/2) d²): eq. (11), computed by a different code path
    ideal = exponential_mechanism_probabilities(-squared_distances_to_subspaces(X, U), eps, 1.0, executed=False)
    assert np.allclose(assignment_probabilities(X, U, eps), ideal)
    # the sampler draws the exact law of its grid and dyadic scale (z_step_probabilities), within a
    # relative 2^-18·ε of eq. (11) (the scale rounded down to 20 bits: η − η̃ ≤ 2^-19·ε/2, each log-probability
    # off by at most 2(η − η̃); the grid 2^-42 adds nothing visible)
    expected = z_step_probabilities(np.moveaxis(_projection_norms(X, U), -1, 0), eps).T
    assert np.allclose(expected, ideal, rtol=2.0 ** -18 * eps, atol=0)
    N = 20_000
    z = sample_assignments(np.repeat(X, N, axis=0), U, eps, random_state=rng).reshape(6, N)
    freq = np.stack([(z == l).mean(axis=1) for l in range(3)], axis=1)
    se = np.sqrt(expected * (1 - expected) / N)
    # 18 binomial proportions, each within 4 standard errors (two-sided 6e-5 each);
    # the 1e-12 covers cells whose probability is exactly 0 or 1 in floating point
    assert np.all(np.abs(freq - expected) <= 4 * se + 1e-12)


def test_z_step_is_stable_for_huge_epsilon_and_batched_chains():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 4)) * 0.3
    U = random_stiefel((5, 3), 4, 1, rng)
    z = sample_assignments(X, U, 1e12, random_state=rng)
    assert z.shape == (5, 50)
    d2 = np.stack([squared_distances_to_subspaces(X, Uc) for Uc in U])
    assert np.array_equal(z, d2.argmin(axis=2))  # ε → ∞: the nearest subspace, no overflow


# ----------------------------------------------------------------------------- stationarity
def _tiny_problem_law(X, eps, k):
    """Eq. (10) on n = 3 points in R² with k lines, integrated on a grid of line angles (its
    marginal over lines factorises over clusters): P(two points share a cluster) for every pair,
    and E‖projection of x₀ on its own line‖²."""
    phi = np.linspace(0, np.pi, 4001)[:-1]  # periodic integrand: the grid mean is spectrally accurate
    proj2 = (X @ np.stack([np.cos(phi), np.sin(phi)]))** 2
    d2 = (X ** 2).sum(1)[:, None] - proj2
    weight, eproj = {}, {}
    for z in itertools.product(range(k), repeat=3):
        z = np.array(z)
        f = [np.exp(-eps / 2 * d2[z == l].sum(0)) for l in range(k)]
        weight[tuple(z)] = np.prod([fl.mean() for fl in f])
        eproj[tuple(z)] = (f[z[0]] * proj2[0]).mean() / f[z[0]].mean()
    tot = sum(weight.values())
    pairs = [(0, 1), (0, 2), (1, 2)]
    p_same = {p: sum(w for z, w in weight.items() if z[p[0]] == z[p[1]]) / tot for p in pairs}
    return p_same, sum(weight[z] * eproj[z] for z in weight) / tot


@pytest.mark.parametrize("sampler,engine,seed", [("acg", "numpy", 42), ("hoff", "numpy", 43), ("acg", "numba", 142),
                                                 ("acg", "numpy", 142)])
def test_gibbs_sweep_targets_eq_10_exactly_on_a_tiny_problem(sampler, engine, seed):
    """n = 3 points in R², k = 2 lines (d = 2, q = 1): the law of z and of the assigned line is
    known (:func:`_tiny_problem_law`). 3000 independent chains run 40 sweeps (mixing here takes a
    handful); their final states are i.i.d. draws, compared within 4 standard errors. Both column
    samplers on the numpy engine and the compiled engine (issue 17: the law must not change)."""
    from dpcore.subspace import gibbs_kernels as gk
    if engine == "numba" and not gk.AVAILABLE:
        pytest.skip("numba is not installed")
    X = 0.95 * np.array([[1.0, 0.05], [0.8, -0.3], [0.1, 0.9]])
    eps, k = 20.0, 2
    p_same, e_proj = _tiny_problem_law(X, eps, k)
    C = 3000
    rng = np.random.default_rng(seed)
    U = random_stiefel((C, k), 2, 1, rng)
    for _ in range(40):
        z, U = gibbs_sweep(X, U, eps, rng, column_sampler=sampler, engine=engine)
    for p, expected in p_same.items():  # label-switching invariant: do two points share a cluster?
        freq = np.mean(z[:, p[0]] == z[:, p[1]])
        assert abs(freq - expected) <= 4 * math.sqrt(expected * (1 - expected) / C), (sampler, engine, p)
    proj = (U[np.arange(C), z[:, 0], :, 0] @ X[0]) ** 2  # ‖projection of x₀ on its own line‖²
    assert abs(proj.mean() - e_proj) <= 4 * proj.std() / math.sqrt(C), (sampler, engine)


# ----------------------------------------------------------------------------- estimator
def test_huge_epsilon_from_kplane_stays_at_the_kplane_optimum(small_data):
    X = small_data.X
    ref = KPlane(n_clusters=3, subspace_dim=3, random_state=0).fit(X).cost_
    g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=1e6, n_iter=60, n_chains=2, init="kplane", random_state=0).fit(X)
    # At ε = 1e6 the subspace conditional has concentration ≈ (ε/2)·(eigen-gap ≈ n_ℓ/q) ≈ 5e7,
    # i.e. angles of ~1e-4 and cost changes of ~1e-8: far inside the 1 % of the acceptance list.
    assert np.all(np.abs(g.traces_["cost"] / ref - 1) < 0.01)
    assert not g.is_private_


def test_fig3_setting_kplane_init_eps10_rhat_below_1_1(fig3_data):
    """Acceptance: 8 chains from the k-plane init at ε = 10 reach split-R̂ < 1.1 on the cost
    after the burn-in (first half). The benchmark runs the full 10,000 sweeps; the unit test
    uses 600 (the chains start at an optimum, so burn-in is short)."""
    ds = fig3_data
    g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=10.0, n_iter=600, n_chains=8, init="kplane",
                                random_state=3).fit(ds.X, ds.labels, ds.subspaces)
    assert split_rhat(g.traces_["cost"], g.burn_in_) < 1.1
    assert set(g.traces_) == {"cost", "statistic", "dw", "accuracy", "moves"}
    assert g.traces_["cost"].shape == (8, 600)


def test_traces_match_direct_computation(small_data):
    X = small_data.X
    g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=5.0, n_iter=30, n_chains=3, random_state=5, n_average=10)
    g.fit(X, small_data.labels, small_data.subspaces)
    from dpcore.metrics import subspace_cost, wasserstein_distance
    for c in range(3):
        assert g.traces_["cost"][c, -1] == pytest.approx(subspace_cost(X, g.chain_subspaces_[c]), rel=1e-9)
        assert g.traces_["dw"][c, -1] == pytest.approx(wasserstein_distance(g.chain_subspaces_[c], small_data.subspaces),
                                                       abs=1e-9)
    assert g.cost_ == pytest.approx(subspace_cost(X, g.subspaces_), rel=1e-9)
    assert np.allclose(g.subspaces_, g.chain_subspaces_[0]) and np.array_equal(g.labels_, g.chain_labels_[0])
    assert np.allclose(np.einsum("kdi,kdj->kij", g.subspaces_mean_, g.subspaces_mean_), np.eye(3))
    # the §5 statistic after t sweeps is 1/√(kq)·‖running mean of the bases‖: at t = 1 it is ‖U‖_F/√(kq) = 1
    assert np.allclose(g.traces_["statistic"][:, 0], 1.0)


def test_ledger_sample_mean_and_selection():
    ds = make_union_of_subspaces(200, 6, 2, 2, 0.1, random_state=2)
    base = dict(n_clusters=2, subspace_dim=2, epsilon=0.7, n_iter=20, random_state=0)
    g = GibbsSubspaceClustering(**base).fit(ds.X)
    # the ideal chain's entry (2η̃ ≤ ε) and the float part's (the rest of ε, at least 2κ): ε in all, δ = 0
    assert g.ledger_.total() == (pytest.approx(0.7, rel=1e-12), 0.0) and len(g.ledger_) == 2
    from dpcore.subspace.gibbs import execution_plan
    ex = execution_plan(0.7, 200, 6, 2, 2, 20)
    assert g.ledger_.entries[0].epsilon == ex.ideal_epsilon and g.ledger_.entries[1].epsilon >= 2 * ex.kappa > 0
    assert "float part" in g.ledger_.entries[1].what and "Not covered" in g.ledger_.entries[1].note
    assert g.is_private_ and set(g.private_outputs_) == {"subspaces_", "labels_"}
    assert "asymptotically" in g.ledger_.entries[0].note and "traces_" in g.nonprivate_outputs_
    g = GibbsSubspaceClustering(release="mean", n_average=10, **base).fit(ds.X)
    # m = 10 consecutive samples at q = 2: ε + (m − 1)·(q + 3)ε/2 (one sweep's kernel loses at most
    # (q + 3)ε/2, see per_sweep_epsilon; the old (2m − 1)ε assumed 2ε per sweep, too little for q > 1)
    assert g.ledger_.epsilon == pytest.approx(0.7 + 9 * 2.5 * 0.7)
    assert "(q+3)ε/2" in g.ledger_.entries[0].note
    assert "subspaces_mean_" in g.private_outputs_
    g = GibbsSubspaceClustering(n_chains=3, select="best_private", **base).fit(ds.X)
    assert g.ledger_.epsilon == pytest.approx(3 * 0.7 + 0.7) and g.is_private_
    g = GibbsSubspaceClustering(n_chains=3, select="best", **base).fit(ds.X)
    assert not g.is_private_ and g.private_outputs_ == []
    assert g.selected_chain_ == int(np.argmin(g.traces_["cost"][:, -1]))


def test_nonprivate_init_voids_the_guarantee(small_data):
    g = GibbsSubspaceClustering(n_clusters=3, subspace_dim=3, epsilon=1.0, n_iter=5, init="kplane", random_state=0).fit(small_data.X)
    assert not g.is_private_ and g.private_outputs_ == []
    assert "VOID" in g.ledger_.entries[0].note
    assert "non-private kplane" in g.nonprivate_outputs_["subspaces_"]
    assert any("non-private" in c for c in g.caveats_)


def test_clipping_is_reported():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 5)) * 0.2
    X[:7] *= 30  # seven rows far outside the unit ball
    g = GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, epsilon=1.0, n_iter=3, random_state=0).fit(X)
    assert g.n_clipped_ == int(np.sum(np.linalg.norm(X, axis=1) > 1))
    assert f"{g.n_clipped_} of 100 rows clipped" in g.ledger_.entries[0].note


def test_callback_and_reproducibility(small_data):
    calls = []
    kw = dict(n_clusters=3, subspace_dim=3, epsilon=2.0, n_iter=250, n_chains=2, random_state=7)
    a = GibbsSubspaceClustering(**kw).fit(small_data.X, callback=lambda i, n: calls.append((i, n)))
    b = GibbsSubspaceClustering(**kw).fit(small_data.X)
    assert calls[-1] == (250, 250) and len(calls) <= 101 and all(n == 250 for _, n in calls)
    assert [i for i, _ in calls] == sorted(i for i, _ in calls)
    assert np.array_equal(a.labels_, b.labels_) and np.allclose(a.subspaces_, b.subspaces_)


@pytest.mark.parametrize("kwargs,match", [
    (dict(epsilon=0.0), "epsilon must be > 0"),
    (dict(epsilon=-1.0), "epsilon must be > 0"),
    (dict(n_iter=0), r"n_iter must be an integer >= 1"),
    (dict(n_chains=MAX_CHAINS + 1), rf"n_chains must be an integer in \[1, {MAX_CHAINS}\]"),
    (dict(init="pca"), "init must be one of"),
    (dict(release="all"), "release must be one of"),
    (dict(select="worst"), "select must be one of"),
    (dict(subspace_dim=5), r"subspace_dim must be an integer in \[1, 4\]"),
    (dict(n_average=0), r"n_average must be an integer >= 1"),
    (dict(column_sampler="slice"), "column_sampler"),
    (dict(release="mean", column_sampler="hoff"), "release='mean' needs column_sampler='acg'"),
])
def test_bad_parameters_raise_valueerror_naming_them(kwargs, match):
    X = np.random.default_rng(0).standard_normal((30, 5)) * 0.3
    params = dict(n_clusters=2, subspace_dim=2, epsilon=1.0, n_iter=10) | kwargs
    with pytest.raises(ValueError, match=match):
        GibbsSubspaceClustering(**params).fit(X)


def test_callback_is_a_fit_argument_and_checked():
    X = np.random.default_rng(0).standard_normal((30, 5)) * 0.3
    with pytest.raises(ValueError, match="callback must be callable"):
        GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, n_iter=2).fit(X, callback=3)
    with pytest.raises(TypeError):
        GibbsSubspaceClustering(callback=print)


def test_true_subspaces_shape_is_checked():
    X = np.random.default_rng(0).standard_normal((30, 5)) * 0.3
    with pytest.raises(ValueError, match="true_subspaces must have shape"):
        GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, n_iter=2).fit(X, true_subspaces=random_stiefel(3, 5, 2, 0))


# ----------------------------------------------------------------------------- diagnostics
def test_split_rhat_and_ess_on_known_chains():
    rng = np.random.default_rng(0)
    iid = rng.standard_normal((4, 5000))
    # i.i.d. chains: R̂ − 1 is O(1/N) (≈ 1e-4 here); 1.01 leaves a 100× margin
    assert split_rhat(iid) < 1.01 and split_rhat(iid, method="rank") < 1.01
    # ESS of 20,000 i.i.d. draws; the estimator's relative sd is ≈ √(2(2W+1)/N) ≈ 0.03 for a
    # window of a few lags, so 15 % is 5 sd
    assert abs(effective_sample_size(iid) / 20_000 - 1) < 0.15
    shifted = iid + np.arange(4)[:, None] * 0.5
    assert split_rhat(shifted) > 1.1
    # AR(1) with φ = 0.9: true ESS = N(1 − φ)/(1 + φ) = 20,000/19 ≈ 1053; the relative sd of
    # the estimate is ≈ √(2(2W+1)/N) with W ≈ 5τ = 95 lags, i.e. 0.14: allow 3 sd (42 %)
    e = rng.standard_normal((4, 5000))
    ar = np.empty_like(e)
    ar[:, 0] = e[:, 0] / math.sqrt(1 - 0.81)
    for t in range(1, 5000):
        ar[:, t] = 0.9 * ar[:, t - 1] + e[:, t]
    assert abs(effective_sample_size(ar) / (20_000 * 0.1 / 1.9) - 1) < 0.42
    with pytest.raises(ValueError, match="at least 4 draws"):
        split_rhat(iid[:, :3])


def test_section5_statistic_and_its_reference_rate():
    rng = np.random.default_rng(0)
    T, k, d, q = 400, 3, 6, 2
    U = random_stiefel((T, k), d, q, rng)
    stat = section5_statistic_trace(U)
    S = np.cumsum(U, axis=0)
    assert stat[-1] == pytest.approx(np.sqrt(np.sum(S[-1] ** 2)) / (T * math.sqrt(k * q)))
    assert stat[0] == pytest.approx(1.0)
    # independent Haar bases: E‖ΣU‖² = Tkq, so the statistic ≈ 1/√T; ‖ΣU‖²/(Tkq) is an average
    # of kqd ≈ 36 roughly independent squared normals, sd ≈ √(2/36) ≈ 0.24: allow 4 sd
    assert abs(stat[-1] ** 2 * T - 1) < 0.95


def test_mixing_verdict_rule_and_table():
    rng = np.random.default_rng(1)
    good = {"cost": rng.standard_normal((8, 2000)), "statistic": np.abs(rng.standard_normal((8, 2000)))}
    v = mixing_verdict(good, burn_in=1000)
    assert v["mixed"] and "split-R̂ < 1.1" in v["rule"] and "≥ 100" in v["rule"]
    bad = {"cost": good["cost"] + np.arange(8)[:, None]}
    v = mixing_verdict(bad, burn_in=1000)
    assert not v["mixed"] and "split-R̂" in v["text"]
    rows = diagnostics_table(good, 1000)
    assert [r["trace"] for r in rows] == ["cost", "statistic"] and math.isnan(rows[1]["split_rhat"])
    with pytest.raises(ValueError, match="at least one of"):
        mixing_verdict({"statistic": good["statistic"]})
    short = mixing_verdict({"cost": good["cost"][:, :3]}, burn_in=1)  # a 3-sweep run: reported, not mixed
    assert not short["mixed"] and "too few sweeps" in short["text"]


def test_traces_computed_in_blocks_equal_the_sweep_by_sweep_traces(monkeypatch):
    # the statistic, d_W and accuracy traces are computed every _TRACE_BLOCK sweeps from the
    # stored samples; with blocks of one sweep they are computed after every sweep. Same seed,
    # same chain: the traces must agree (to rounding in the running mean of the statistic),
    # also for a run length that is not a multiple of the block
    from dpcore.subspace import gibbs as gibbs_mod
    ds = make_union_of_subspaces(200, 6, 3, 2, 0.1, random_state=1)
    fit = lambda: GibbsSubspaceClustering(n_clusters=3, subspace_dim=2, epsilon=5.0, n_iter=150, n_chains=2, random_state=3).fit(
        ds.X, ds.labels, ds.subspaces)
    blocked = fit().traces_
    monkeypatch.setattr(gibbs_mod, "_TRACE_BLOCK", 1)
    single = fit().traces_
    assert set(blocked) == set(single) == {"cost", "statistic", "dw", "accuracy", "moves"}
    for name in blocked:
        np.testing.assert_allclose(blocked[name], single[name], rtol=1e-12, atol=1e-13, err_msg=name)
