"""The LSH-coreset peer (Google's learning/clustering; issue 25, point 6): the tree follows
Google's rules, the noise is calibrated by dp-accounting to exactly the budget and drawn by
dpcore.privacy, the quality holds at large ε, bad input is refused, labels are not private,
and the catalogue runs it."""
import numpy as np
import pytest
import scipy.sparse as sp

import dpcore.kmeans.lsh_coreset as L
from dpcore.data import make_gaussian_mixture
from dpcore.kmeans import KMeansPlusPlus, LSHCoresetKMeans
from dpcore.kmeans.common import DataDerivedRadiusWarning
from dpcore.lab.methods import METHODS, build_estimator, preset
from dpcore.metrics import kmeans_objective
from dpcore.privacy import PrivacyAccountant, analytic_gaussian_delta


@pytest.fixture(scope="module")
def mixture():
    """Four well separated blobs inside B(0, 1) (Λ = 1 public)."""
    rng = np.random.default_rng(3)
    centres = np.array([[0.7, 0, 0, 0, 0], [0, 0.7, 0, 0, 0], [-0.7, 0, 0, 0, 0], [0, 0, 0, -0.7, 0]])
    X = np.vstack([c + 0.03 * rng.standard_normal((1500, 5)) for c in centres])
    return X, np.repeat(np.arange(4), 1500)


def _google_pld_epsilon(events, delta):
    """ε at δ of a fit's events, composed directly with dp-accounting's PLD accountant."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_event.ComposedDpEvent([e.dp_event() for e in events]))
    return acc.get_epsilon(delta)


# ----------------------------------------------------------------------------- accounting
@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (1.0, 1e-6), (3.0, 1e-5)])
def test_ledger_is_the_budget_and_dp_accounting_composes_the_events_to_it(mixture, eps, delta):
    X, _ = mixture
    m = LSHCoresetKMeans(n_clusters=4, epsilon=eps, delta=delta, radius=1.0, random_state=0).fit(X)
    assert m.ledger_.total() == (eps, delta) and m.epsilon_spent_ == eps and m.delta_spent_ == delta
    (joint,) = m.ledger_.events()             # one joint release: the pair is (ε, δ)-DP, not each part
    assert joint.kind == "joint" and (joint.epsilon, joint.delta) == (eps, delta)
    counts, gauss = joint.parts
    cal = m.calibration_
    assert cal.method == "pld" and cal.relation == "replace_one"
    # replace-one: the root count does not move, each of the 20 levels below moves two nodes by 1
    assert (counts.kind, counts.count, counts.sensitivity) == ("discrete_laplace", 2 * 20, 1)
    assert gauss.kind == "gaussian" and gauss.noise_multiplier == pytest.approx(m.coreset_result_.sigma / 2.0)
    assert float(1 / counts.scale) <= cal.count_epsilon == pytest.approx(1 / (20 * cal.noise_multiplier))
    # the composition is (ε, δ)-DP and the calibration leaves nothing on the table
    tight = _google_pld_epsilon([counts, gauss], delta)
    assert eps * 0.999 <= tight <= eps * (1 + 1e-6)
    acc = PrivacyAccountant()
    acc.record(m)
    assert acc.basic_total() == pytest.approx((eps, delta))
    assert acc.tight_epsilon(delta) == pytest.approx(eps, rel=2e-3)


def test_googles_relation_add_remove_counts_the_root_and_halves_the_sum_sensitivity(mixture):
    X, _ = mixture

    class AddRemove(LSHCoresetKMeans):
        claimed_relation = "add_remove"

    ours = LSHCoresetKMeans(n_clusters=4, epsilon=1.0, radius=1.0, random_state=0).fit(X)
    google = AddRemove(n_clusters=4, epsilon=1.0, radius=1.0, random_state=0).fit(X)
    (joint,) = google.ledger_.events()
    counts, gauss = joint.parts
    assert counts.count == 20 + 1 and joint.relation == "add_remove"
    assert gauss.noise_multiplier == pytest.approx(google.coreset_result_.sigma / 1.0)
    # Google's own numbers at ε = 1, δ = 1e-6, max_depth 20: α ≈ 4.34 (σ = αΛ); ours needs about twice the σ
    assert google.calibration_.noise_multiplier == pytest.approx(4.338, abs=0.01)
    assert 1.9 < ours.coreset_result_.sigma / google.coreset_result_.sigma < 2.2


def test_large_epsilon_uses_basic_composition_with_honest_statements():
    cal = L.calibrate_lsh_noise(200.0, 1e-6)
    assert cal.method == "basic"
    counts, gauss = cal.events()
    eps_counts = counts.basic()[0]
    assert eps_counts == pytest.approx(40 / float(counts.scale)) and eps_counts <= 40 * cal.count_epsilon
    assert eps_counts + gauss.basic()[0] == pytest.approx(200.0)
    # the Gaussian alone is (ε_g, δ)-DP at the ε it states: its analytic δ there is at most δ
    assert analytic_gaussian_delta(gauss.noise_multiplier, 1.0, gauss.stated[0]) <= 1e-6 * (1 + 1e-6)


def test_calibration_is_cached_and_checked():
    assert L.calibrate_lsh_noise(1.0, 1e-6) is L.calibrate_lsh_noise(1.0, 1e-6)
    with pytest.raises(ValueError, match="relation"):
        L.calibrate_lsh_noise(1.0, 1e-6, relation="cell_pm1")
    with pytest.raises(ValueError, match="count_noise_multiplier"):
        L.calibrate_lsh_noise(1.0, 1e-6, count_noise_multiplier=0.0)


def test_a_budget_refuses_the_second_fit(mixture):
    X, _ = mixture
    with PrivacyAccountant(budget_epsilon=1.5, budget_delta=1e-5) as acc:
        LSHCoresetKMeans(n_clusters=4, epsilon=1.0, radius=1.0).fit(X)
        with pytest.raises(ValueError, match="budget"):
            LSHCoresetKMeans(n_clusters=4, epsilon=1.0, radius=1.0).fit(X)
    assert len(acc.runs) == 1


# ----------------------------------------------------------------------------- noise and tree
def _noiseless(monkeypatch, calls):
    def counts(value, sensitivity, epsilon, rng):
        calls.append(("discrete_laplace", np.size(value), sensitivity, epsilon))
        return np.asarray(value, dtype=np.int64)

    def sums(value, sigma, sensitivity, rng):
        calls.append(("gaussian", np.shape(value), sigma, sensitivity))
        return np.asarray(value, dtype=np.float64)

    monkeypatch.setattr(L, "discrete_laplace_mechanism", counts)
    monkeypatch.setattr(L, "gaussian_release", sums)


def _reference_leaves(bits, node_min, branch_min, max_depth):
    """Google's LshTree without noise, recursively: (size, member indices) of every leaf."""
    out = []

    def grow(idx, level):
        if len(idx) >= branch_min and level < max_depth:
            kept = [c for c in (idx[~bits[idx, level]], idx[bits[idx, level]]) if len(c) >= node_min]
            if kept:
                for c in kept:
                    grow(c, level + 1)
                return
        out.append(idx)

    grow(np.arange(bits.shape[0]), 0)
    return out


def test_tree_follows_googles_rules_and_every_draw_goes_through_dpcore_privacy(mixture, monkeypatch):
    X, _ = mixture
    calls = []
    _noiseless(monkeypatch, calls)
    cal = L.calibrate_lsh_noise(1.0, 1e-6, max_depth=12)
    V = np.random.default_rng(5).standard_normal((12, X.shape[1]))
    core = L.private_lsh_coreset(X, 1.0, 4, cal, np.random.default_rng(0), V, min_points_in_node=40)
    assert (core.min_points_in_node, core.min_points_to_branch) == (40, 120)
    # noise: one count release for the root and one per level built, one Gaussian release of all leaf sums
    kinds = [c[0] for c in calls]
    assert kinds == ["discrete_laplace"] * (1 + core.n_levels) + ["gaussian"]
    assert all(c[2] == 1 and c[3] == cal.count_epsilon for c in calls[:-1])
    assert calls[-1][1] == core.points.shape and calls[-1][3] == 2.0          # L2 sensitivity 2Λ, Λ = 1
    assert calls[-1][2] == pytest.approx(cal.noise_multiplier * 2.0)
    # the leaves are those of Google's rules (both children counted, kept at >= 40, branch at >= 120)
    ref = _reference_leaves(X @ V.T < 0, 40, 120, 12)
    got = sorted(zip(core.weights.tolist(), map(tuple, np.round(core.points, 12))))
    want = sorted((len(i), tuple(np.round(X[i].mean(axis=0), 12))) for i in ref)
    assert got == want and len(got) > 4


def test_default_thresholds_are_googles():
    # min(⌊10·√d·σ/Λ⌋, ⌊ñ/(2k)⌋), at least 1; branching 3×
    assert L.default_tree_thresholds(100_000, 64, 100, 8.87, 1.0) == (781, 2343)
    assert L.default_tree_thresholds(100_000, 4, 100, 0.2, 1.0) == (20, 60)
    assert L.default_tree_thresholds(-5, 4, 100, 8.0, 1.0) == (1, 3)


def test_same_seed_same_release_and_sparse_input_agrees(mixture):
    X, _ = mixture
    a = LSHCoresetKMeans(n_clusters=4, epsilon=1.0, radius=1.0, random_state=7).fit(X)
    b = LSHCoresetKMeans(n_clusters=4, epsilon=1.0, radius=1.0, random_state=7).fit(sp.csr_matrix(X))
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    c = LSHCoresetKMeans(n_clusters=4, epsilon=1.0, radius=1.0, random_state=8).fit(X)
    assert not np.array_equal(a.coreset_, c.coreset_)


# ----------------------------------------------------------------------------- quality
def test_large_epsilon_is_close_to_kmeanspp(mixture):
    """At ε = 1000 the sums' σ is ≈ 0.05Λ, so each centre moves by ≈ σ√d/n_j ≈ 1e-4 (≪ the 0.03
    spread): the only loss left is the points the tree drops (children below the node threshold,
    in the blobs' tails), which moves a blob's mean by far less than its spread. 3 % covers both."""
    X, y = mixture
    ref = kmeans_objective(X, KMeansPlusPlus(n_clusters=4, random_state=0).fit(X).cluster_centers_)
    for seed in range(3):
        m = LSHCoresetKMeans(n_clusters=4, epsilon=1000.0, radius=1.0, random_state=seed).fit(X)
        assert kmeans_objective(X, m.cluster_centers_) <= 1.03 * ref
        assert len(np.unique(m.labels_)) == 4


def test_fewer_coreset_points_than_k_repeat_the_centres(mixture):
    X, _ = mixture
    m = LSHCoresetKMeans(n_clusters=40, epsilon=0.1, radius=1.0, max_depth=2, random_state=0).fit(X)
    assert m.coreset_.shape[0] < 40 and m.cluster_centers_.shape == (40, 5)
    assert len(np.unique(m.cluster_centers_, axis=0)) == m.coreset_.shape[0]


# ----------------------------------------------------------------------------- input and outputs
@pytest.mark.parametrize("params,match", [
    (dict(radius=None), "radius is required"),
    (dict(radius=-1.0), "radius"),
    (dict(n_clusters=0), "n_clusters"),
    (dict(n_clusters=10_000), "n_clusters"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(max_depth=0), "max_depth"),
    (dict(max_depth=65), "max_depth"),
    (dict(min_points_in_node=0), "min_points_in_node"),
    (dict(min_points_in_node=50, min_points_to_branch=10), "min_points_to_branch"),
    (dict(count_noise_multiplier=-1.0), "count_noise_multiplier"),
    (dict(n_init=0), "n_init"),
])
def test_bad_input_is_refused(mixture, params, match):
    X, _ = mixture
    with pytest.raises(ValueError, match=match):
        LSHCoresetKMeans(**({"n_clusters": 4, "radius": 1.0} | params)).fit(X)


def test_labels_are_documented_not_private_and_a_data_radius_leaks(mixture):
    X, _ = mixture
    m = LSHCoresetKMeans(n_clusters=4, radius=1.0, random_state=0).fit(X)
    report = m.privacy_report()
    assert "cluster_centers_" in report["private"] and "labels_" not in report["private"]
    assert "raw data" in report["not_private"]["labels_"] and "n_clipped_" in report["not_private"]
    assert "labels_ : " in LSHCoresetKMeans.__doc__ and "(NOT private)" in LSHCoresetKMeans.__doc__.split("labels_")[1]
    np.testing.assert_array_equal(m.predict(X), m.labels_)
    with pytest.warns(DataDerivedRadiusWarning):
        leaky = LSHCoresetKMeans(n_clusters=4, radius="data", random_state=0).fit(X)
    assert leaky.private_outputs_ == [] and not leaky.released_private_ and "radius_" in leaky.nonprivate_outputs_


# ----------------------------------------------------------------------------- catalogue
def test_catalogue_entry_and_preset():
    entry = METHODS["lsh_coreset"]
    assert entry.cls is LSHCoresetKMeans and entry.family == "kmeans" and entry.private and entry.takes_delta
    assert entry.relation == LSHCoresetKMeans.claimed_relation == "replace_one"
    assert preset("LSH coreset") == {"name": "lsh_coreset", "label": "LSH coreset", "params": {}}
    ds = make_gaussian_mixture(n=800, d=6, k=3, random_state=0)
    est = build_estimator("lsh_coreset", ds, epsilon=2.0, delta=1e-5, random_state=0)
    assert est.get_params()["radius"] == ds.extras["public_radius"] and est.n_clusters == 3
    est.fit(ds.X)
    assert est.ledger_.total() == (2.0, 1e-5)


def test_benchmark_data_is_googles_construction():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_lsh_k64.py"
    spec = importlib.util.spec_from_file_location("bench_lsh_k64", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    X, y = bench.google_synthetic(n=6400, rng=0)
    assert X.shape == (6400, 100) and np.bincount(y).tolist() == [100] * 64
    assert np.linalg.norm(X, axis=1).max() <= 1.0 + 1e-12
    spread = np.mean([X[y == j].std(axis=0).mean() for j in range(64)])
    assert spread == pytest.approx(0.0125, rel=0.05)
    centres = np.array([X[y == j].mean(axis=0) for j in range(64)])
    assert np.linalg.norm(centres, axis=1).max() <= 0.875 + 0.01



def test_group_privacy_of_a_joint_pld_statement_is_that_of_the_whole_budget():
    """With PLD calibration only the pair of releases is (ε, δ)-DP: one joint event, so restating it
    for another relation gives (2ε, (1 + e^ε)δ), as for the run, and its parts' noise exactly (the
    counts' sensitivity and the sums' multiplier scaled by 2)."""
    import math
    from dpcore.kmeans.lsh_coreset import calibrate_lsh_noise
    from dpcore.privacy import PrivacyEvent
    from dpcore.privacy.accountant import convert_event
    cal = calibrate_lsh_noise(1.0, 1e-6, relation="add_remove")
    assert cal.method == "pld"
    (joint,) = cal.events()
    counts, sums = joint.parts
    restated = convert_event(joint, "replace_one")
    assert restated.basic() == pytest.approx((2.0, (1 + math.e) * 1e-6))
    assert restated.parts[0].sensitivity == 2 * counts.sensitivity
    assert restated.parts[1].noise_multiplier == pytest.approx(sums.noise_multiplier / 2)
    # the joint statement is checked against its parts: half the ε is refused
    with pytest.raises(ValueError, match="understates its parts"):
        PrivacyEvent.joint(0.5, 1e-6, (counts, sums), relation="add_remove")
