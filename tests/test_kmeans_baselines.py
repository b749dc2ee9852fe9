"""Peer baselines (dpcore.kmeans.baselines): diffprivlib DP k-means with public bounds and
k-means++ (scikit-learn)."""
import numpy as np
import pytest
import scipy.sparse as sp

from dpcore.data import make_gaussian_mixture
from dpcore.kmeans import baselines
from dpcore.kmeans.baselines import DPLloydKMeans, KMeansPlusPlus
from dpcore.preprocessing import map_rows_to_ball
from dpcore.metrics import nmi


def blobs(n=3000, d=2, seed=0):
    """Three tight, well separated clusters in the positive orthant (directions 0°, 45°, 90°
    after normalisation), so the unit-norm rows form three points with small spread."""
    rng = np.random.default_rng(seed)
    dirs = np.array([[1.0, 0.05], [1.0, 1.0], [0.05, 1.0]])
    labels = rng.integers(0, 3, n)
    X = dirs[labels] * rng.uniform(1, 5, (n, 1)) + 0.02 * rng.standard_normal((n, d))
    return np.abs(X), labels


def test_kmeanspp_recovers_separated_clusters_dense_and_sparse():
    ds = make_gaussian_mixture(n=600, d=5, k=3, sigma=0.05, random_state=1)
    km = KMeansPlusPlus(n_clusters=3, n_init=3, random_state=0).fit(ds.X)
    assert nmi(ds.labels, km.labels_) == pytest.approx(1.0)
    assert km.cluster_centers_.shape == (3, 5)
    X, y = blobs(900)
    kms = KMeansPlusPlus(n_clusters=3, n_init=3, normalize_rows=True, random_state=0).fit(sp.csr_matrix(X))
    assert nmi(y, kms.labels_) == pytest.approx(1.0)
    # normalised rows: the centres are means of unit vectors, so their norms are ≤ 1
    assert np.all(np.linalg.norm(kms.cluster_centers_, axis=1) <= 1 + 1e-12)


def test_dplloyd_centres_are_cluster_means_up_to_the_noise_at_large_epsilon():
    X, y = blobs(3000)
    Xn = map_rows_to_ball(X, 1.0)
    eps, d = 20.0, 2
    scores = []
    for seed in range(4):
        m = DPLloydKMeans(n_clusters=3, epsilon=eps, radius=1.0, nonnegative=True, random_state=seed).fit(X)
        assert m.cluster_centers_.shape == (3, 2) and m.labels_.shape == (3000,)
        assert m.ledger_.epsilon == eps and len(m.ledger_) == 1
        scores.append(nmi(y, m.labels_))
        # each coordinate sum gets Laplace noise of scale b = 1/ε_coord = iters·(d + ∛(4dρ²))/ε
        # (bound width 1); a centre is sum/count, so with ≥ 500 points its error per
        # coordinate exceeds 20·b/500 with probability e^−20: a released centre must be the
        # mean of its points to that accuracy (Lloyd has converged on these blobs)
        b = m.n_iter_ * (d + np.cbrt(4 * d * 0.225 ** 2)) / eps
        for j in range(3):
            pts = Xn[m.labels_ == j]
            if len(pts) >= 500:
                assert np.abs(m.cluster_centers_[j] - pts.mean(axis=0)).max() <= 20 * b / 500
    # DPLloyd starts from random centres and can leave one empty (a k-means local optimum, not
    # privacy noise), but from some start it recovers the three directions
    assert max(scores) == pytest.approx(1.0)
    # private on paper, not as executed (diffprivlib's float noise): the ledger keeps the nominal ε
    assert m.private_outputs_ == [] and not m.released_private_ and "labels_" in m.nonprivate_outputs_
    assert "floating-point" in m.nonprivate_outputs_["cluster_centers_"] and m.epsilon_spent_ == pytest.approx(eps)


def test_bounds_are_public_and_never_read_from_the_data():
    X, _ = blobs(500)
    a = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=1.0, nonnegative=True, random_state=0).fit(X)
    b = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=1.0, nonnegative=True, random_state=0).fit(1000.0 * X)
    assert a.bounds_ == b.bounds_ == (0.0, 1.0)
    # scaling every row leaves the normalised rows unchanged (up to rounding): same release
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-9)
    c = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=2.0, random_state=0).fit(X - 3.0)
    assert c.bounds_ == (-2.0, 2.0)


def test_map_rows_to_ball():
    X = np.array([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4]])
    assert np.allclose(map_rows_to_ball(X, 1.0, "normalize"), [[0.6, 0.8], [0, 0], [0.6, 0.8]])
    assert np.allclose(map_rows_to_ball(X, 1.0, "clip"), [[0.6, 0.8], [0, 0], [0.3, 0.4]])
    assert np.allclose(map_rows_to_ball(sp.csr_matrix(X), 2.0, "clip").toarray(), [[1.2, 1.6], [0, 0], [0.3, 0.4]])


def test_diffprivlib_mechanisms_spend_exactly_epsilon(monkeypatch):
    """Record the ε of every noise mechanism diffprivlib creates during a fit. Per iteration
    and cluster: one count (folded geometric) and d coordinate sums (bounded Laplace); the
    clusters are disjoint (parallel composition) and the iterations sequential, so the run
    costs iters × (ε_count + d·ε_coord), which must be the ε asked for. With d = 20 the
    unpatched diffprivlib 0.6.6 split would spend 1.5 ε."""
    baselines._load_diffprivlib()
    import diffprivlib.models.k_means as kmm
    used = []

    def recorder(cls, kind):
        class Rec(cls):
            def __init__(self, *a, **kw):
                used.append((kind, kw["epsilon"]))
                super().__init__(*a, **kw)
        return Rec

    monkeypatch.setattr(kmm, "GeometricFolded", recorder(kmm.GeometricFolded, "count"))
    monkeypatch.setattr(kmm, "LaplaceBoundedDomain", recorder(kmm.LaplaceBoundedDomain, "sum"))
    rng = np.random.default_rng(0)
    d, eps = 20, 1.0
    X = np.abs(rng.standard_normal((2000, d)))
    m = DPLloydKMeans(n_clusters=2, epsilon=eps, radius=1.0, nonnegative=True, random_state=0).fit(X)
    counts = [e for k, e in used if k == "count"]
    sums = [e for k, e in used if k == "sum"]
    assert len(set(counts)) == 1 and len(set(sums)) == 1  # same split every time
    # one count mechanism per iteration (created once, reused for the clusters)
    assert len(counts) == m.n_iter_
    per_iteration = counts[0] + d * sums[0]
    assert m.n_iter_ * per_iteration == pytest.approx(eps, rel=1e-9)
    assert m.ledger_.epsilon == eps


def test_same_seed_reproduces_and_seeds_differ():
    X, _ = blobs(400)
    a = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=1.0, nonnegative=True, random_state=3).fit(X)
    b = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=1.0, nonnegative=True, random_state=3).fit(X)
    c = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=1.0, nonnegative=True, random_state=4).fit(X)
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)
    assert not np.array_equal(a.cluster_centers_, c.cluster_centers_)


@pytest.mark.parametrize("X,kw,message", [
    (sp.csr_matrix((10_000, 10_000)), {}, "too large for diffprivlib's dense k-means"),
    (np.ones((50, 30)), dict(max_dense_cells=1000), "max_dense_cells = 1,000"),
    (-np.ones((20, 3)), dict(nonnegative=True), "negative entries but nonnegative=True"),
    (np.ones((2, 3)), {}, r"n_clusters must be <= the number of rows \(2\)"),
    (np.ones((20, 3)), dict(epsilon=0.0), "epsilon must be > 0"),
    (np.ones((20, 3)), dict(radius=-1.0), "radius must be > 0"),
    (np.ones((20, 3)), dict(radius=None), "radius is required: a public bound"),
    (np.ones((20, 3)), dict(row_map="scale"), "row_map must be"),
])
def test_bad_input(X, kw, message):
    with pytest.raises(ValueError, match=message):
        DPLloydKMeans(**{"n_clusters": 3, "epsilon": 1.0, "radius": 1.0, **kw}).fit(X)


def test_kmeanspp_bad_input():
    with pytest.raises(ValueError, match="n_init must be"):
        KMeansPlusPlus(n_clusters=2, n_init=0).fit(np.ones((5, 2)))
    with pytest.raises(ValueError, match="n_clusters must be <= the number of rows"):
        KMeansPlusPlus(n_clusters=6).fit(np.ones((5, 2)))


def test_dplloyd_reports_clipping_and_flags_a_data_derived_radius():
    from dpcore.kmeans.common import DataDerivedRadiusWarning
    X = np.random.default_rng(0).normal(size=(300, 4))
    n_long = int((np.linalg.norm(X, axis=1) > 2.0).sum())
    m = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=2.0, row_map="clip", random_state=0).fit(X)
    assert m.n_clipped_ == n_long > 0 and m.radius_ == 2.0
    assert m.private_outputs_ == [] and "floating-point" in m.nonprivate_outputs_["cluster_centers_"]
    assert "n_clipped_" in m.nonprivate_outputs_
    with pytest.warns(DataDerivedRadiusWarning):
        leak = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius="data", row_map="clip", random_state=0).fit(X)
    assert leak.radius_ == pytest.approx(np.linalg.norm(X, axis=1).max()) and leak.n_clipped_ == 0
    assert leak.private_outputs_ == [] and "cluster_centers_" in leak.nonprivate_outputs_
