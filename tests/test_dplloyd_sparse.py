"""Sparse DP-Lloyd (dpcore.kmeans.dplloyd): the same iterations, budget split and bounded-domain
scale as diffprivlib's KMeans, a comparable objective on a set both run, a sparse matrix the
dense (diffprivlib) path refuses, the ledger, refusals and the parameter contract."""
import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs

from dpcore.data import make_block_matrix
from dpcore.kmeans.baselines import DPLloydKMeans, _fixed_split_class, _load_diffprivlib
from dpcore.kmeans.common import DataDerivedRadiusWarning, nearest_centres
from dpcore.kmeans.dplloyd import SparseDPLloydKMeans, dplloyd_iterations, dplloyd_split
from dpcore.privacy import bounded_domain_laplace, bounded_domain_scale
from dpcore.metrics import nmi
from dpcore.preprocessing import normalize_rows


@pytest.fixture(scope="module")
def block():
    return make_block_matrix(600, 40, 3, 3, signal=5.0, noise=0.5, random_state=0)


# ----------------------------------------------------------------------------- same mechanism parameters
@pytest.mark.parametrize("eps,n,d,k", [(0.1, 600, 40, 3), (1.0, 3891, 4303, 3), (3.0, 4069, 18483, 5),
                                       (1e6, 100, 2, 2), (10.0, 600, 40, 3)])
def test_iterations_and_split_are_diffprivlibs(eps, n, d, k):
    dpk = _fixed_split_class()(n_clusters=k, epsilon=eps)
    T = dpk._calc_iters(d, n)
    assert dplloyd_iterations(eps, n, d, k) == T
    count, coord = dplloyd_split(eps, d, T)
    assert (count, coord) == pytest.approx(dpk._split_epsilon(d, T), rel=1e-12)
    assert T * (count + d * coord) == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("eps,width,diam", [(0.01, 1.0, 1.0), (0.1, 1.0, 200.0), (1.0, 2.0, 30.0), (5.0, 1.0, 3.0)])
def test_bounded_domain_scale_is_diffprivlibs(eps, width, diam):
    _load_diffprivlib()
    from diffprivlib.mechanisms import LaplaceBoundedDomain
    mech = LaplaceBoundedDomain(epsilon=eps, sensitivity=width, lower=0.0, upper=diam)
    assert bounded_domain_scale(width, eps, diam) == pytest.approx(mech._find_scale(), rel=1e-9)
    assert bounded_domain_scale(width, eps, diam) >= width / eps * (1 - 1e-9)


def test_bounded_domain_draws_stay_in_the_interval_and_are_centred():
    rng = np.random.default_rng(0)
    v = np.full(20000, 5.0)
    out = bounded_domain_laplace(v, 0.0, 10.0, 1.0, 0.5, rng)
    assert out.min() >= 0.0 and out.max() <= 10.0
    assert abs(out.mean() - 5.0) < 0.1            # symmetric interval around the value: unbiased
    # a value outside the interval is clipped into it first (as diffprivlib does)
    assert np.all(bounded_domain_laplace(np.array([-3.0, 20.0]), 0.0, 1.0, 1.0, 0.01, rng) <= 1.0)


# ----------------------------------------------------------------------------- against diffprivlib
def test_objective_comparable_with_diffprivlib_on_a_set_both_run(block):
    """Same data (600 × 40 counts, rows L2-normalised, bounds [0, 1]), k = 3, ε = 10, seeds
    0..19 for each; the objective is the mean squared distance of the normalised rows to the
    released centres.

    Tolerance from the noise: with T = 2 iterations and d = 40, ε_coord = ε/T/(d + ∛(4dρ²))
    ≈ 0.119, so each coordinate sum gets Laplace noise of scale at least b₀ = Δ/ε_coord ≈ 8.4
    (the bounded-domain correction only raises it); over a cluster of ≈ n/k = 200 rows a centre
    coordinate moves by ≈ b₀/200 (variance 2(b₀/200)²), which adds at least d·2(b₀/200)² ≈ 0.14
    to the expected objective. Two implementations of the same mechanism must agree well inside
    that noise term: we allow half of it (≈ 0.07).
    The sampling error of the difference of the two 20-seed means is ≈ 0.013 (seed-to-seed
    standard deviations ≈ 0.04 and 0.05 measured), so 0.07 is ≈ 5 standard errors. A wrong
    mechanism shows: plain Laplace clamped to the interval instead of the bounded-domain draw
    gave 0.52 against diffprivlib's 0.65 here (difference 0.13 > 0.07).
    """
    X, k, eps, seeds = block.X, 3, 10.0, range(20)
    Xm = normalize_rows(X)
    n, d = X.shape
    ours, skip, theirs = [], [], []
    for s in seeds:
        a = SparseDPLloydKMeans(n_clusters=k, epsilon=eps, radius=1.0, nonnegative=True, random_state=s).fit(X)
        a2 = SparseDPLloydKMeans(n_clusters=k, epsilon=eps, radius=1.0, nonnegative=True, empty_clusters="skip",
                                 random_state=s).fit(X)
        b = DPLloydKMeans(n_clusters=k, epsilon=eps, radius=1.0, nonnegative=True, random_state=s).fit(X)
        assert a.n_iter_ == b.n_iter_ == 2
        ours.append(a.inertia_ / n)
        skip.append(a2.inertia_ / n)
        theirs.append(nearest_centres(Xm, b.cluster_centers_)[1].mean())
    T = 2
    _, eps_coord = dplloyd_split(eps, d, T)
    noise_term = d * 2 * ((1.0 / eps_coord) / (n / k)) ** 2
    assert 0.1 < noise_term < 0.2
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.5 * noise_term
    assert abs(np.mean(skip) - np.mean(theirs)) <= 0.5 * noise_term


def test_skipping_empty_clusters_is_diffprivlibs_and_flagged_not_private():
    """On documents in high dimension nearly every row goes to the same centre, so clusters
    are empty at every step: "skip" leaves them un-noised (diffprivlib) and says so."""
    ds = make_block_matrix(400, 3000, 3, 3, signal=0.3, noise=0.01, random_state=5)
    kw = dict(n_clusters=3, epsilon=1.0, radius=1.0, nonnegative=True, random_state=0)
    skip = SparseDPLloydKMeans(empty_clusters="skip", **kw).fit(ds.X)
    assert skip.n_skipped_ > 0
    assert skip.is_private_ is False and not skip.released_private_ and skip.private_outputs_ == []
    assert "cluster_centers_" in skip.nonprivate_outputs_ and "n_skipped_" in skip.nonprivate_outputs_
    assert skip.ledger_.entries[0].note.startswith("NOT PRIVATE AS A RUN")
    release = SparseDPLloydKMeans(**kw).fit(ds.X)
    assert release.n_skipped_ == 0 and release.released_private_ and release.is_private_


# ----------------------------------------------------------------------------- sparse input
def test_runs_sparse_where_the_dense_path_refuses():
    ds = make_block_matrix(2000, 5000, 4, 4, signal=0.05, noise=0.002, random_state=2)
    X = ds.X
    assert sp.issparse(X) and X.nnz < 200_000
    cap = 1_000_000                              # below 2000 × 5000 = 1e7 cells: the dense path refuses
    with pytest.raises(ValueError, match="too large for diffprivlib"):
        DPLloydKMeans(n_clusters=4, epsilon=1.0, radius=1.0, nonnegative=True, max_dense_cells=cap).fit(X)
    tracemalloc.start()
    try:
        m = SparseDPLloydKMeans(n_clusters=4, epsilon=1.0, radius=1.0, nonnegative=True, random_state=0).fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    dense_bytes = X.shape[0] * X.shape[1] * 8
    # the fit works in O(nnz + k·d) memory plus fixed-size blocks (≈ 28 MB measured: noise proposals
    # and the distance blocks); one dense copy of X alone would be 80 MB
    assert peak < dense_bytes / 2, f"peak {peak:,} B: the matrix must not be densified ({dense_bytes:,} B)"
    assert m.cluster_centers_.shape == (4, 5000) and m.labels_.shape == (2000,)
    assert m.ledger_.total() == (1.0, 0.0) and m.released_private_
    # the same fit from the dense array (same seed, same draws)
    small = make_block_matrix(200, 30, 3, 3, random_state=4).X
    a = SparseDPLloydKMeans(n_clusters=3, epsilon=2.0, radius=1.0, nonnegative=True, random_state=7).fit(small)
    b = SparseDPLloydKMeans(n_clusters=3, epsilon=2.0, radius=1.0, nonnegative=True,
                            random_state=7).fit(small.toarray())
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-12)
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_recovers_clear_clusters_with_large_epsilon():
    X, y = make_blobs(n_samples=600, centers=[[-5, 0], [5, 0], [0, 6]], cluster_std=0.5, random_state=0)
    m = SparseDPLloydKMeans(n_clusters=3, epsilon=1e5, radius=10.0, row_map="clip", random_state=1).fit(X)
    assert nmi(y, m.labels_) > 0.9


# ----------------------------------------------------------------------------- ledger, flags, refusals
def test_ledger_and_flags(block):
    m = SparseDPLloydKMeans(n_clusters=3, epsilon=0.7, radius=1.0, nonnegative=True, random_state=0).fit(block.X)
    assert m.ledger_.total() == (0.7, 0.0) and (m.epsilon_spent_, m.delta_spent_) == (0.7, 0.0)
    assert m.private_outputs_ == ["cluster_centers_"] and m.released_private_
    assert {"labels_", "inertia_", "n_clipped_"} <= set(m.nonprivate_outputs_)
    T = m.n_iter_
    assert T * (m.budget_split_["count"] + 40 * m.budget_split_["coordinate"]) == pytest.approx(0.7)
    from dpcore.lab.audit import RELATIONS
    assert SparseDPLloydKMeans.claimed_relation == "add_remove" and "add_remove" in RELATIONS
    with pytest.warns(DataDerivedRadiusWarning):
        leaky = SparseDPLloydKMeans(n_clusters=3, epsilon=0.7, radius="data", random_state=0).fit(block.X)
    assert leaky.private_outputs_ == [] and not leaky.released_private_
    assert "cluster_centers_" in leaky.nonprivate_outputs_


@pytest.mark.parametrize("params,match", [
    (dict(n_clusters=0), "n_clusters"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(row_map="scale"), "row_map"),
    (dict(empty_clusters="keep"), "empty_clusters must be one of"),
    (dict(radius=None), "radius is required"),
    (dict(radius=-1.0), "radius"),
    (dict(n_clusters=1000), "n_clusters must be <="),
])
def test_bad_parameters_are_refused_by_name(block, params, match):
    kw = dict(n_clusters=3, epsilon=1.0, radius=1.0)
    kw.update(params)
    with pytest.raises(ValueError, match=match):
        SparseDPLloydKMeans(**kw).fit(block.X)


def test_negative_input_refused_when_declared_nonnegative(block):
    with pytest.raises(ValueError, match="nonnegative=True"):
        SparseDPLloydKMeans(n_clusters=3, radius=1.0, nonnegative=True).fit(-block.X)


def test_clone_and_get_params():
    est = SparseDPLloydKMeans(n_clusters=4, epsilon=0.3, radius=2.0, nonnegative=True, row_map="clip",
                              empty_clusters="skip", random_state=3)
    params = est.get_params()
    assert params == dict(n_clusters=4, epsilon=0.3, radius=2.0, nonnegative=True, row_map="clip",
                          n_iter=None, n_hint=None, empty_clusters="skip", random_state=3)
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    with pytest.raises(TypeError):
        SparseDPLloydKMeans(3)


def test_bounded_domain_law_is_the_conditioned_laplace():
    """Histogram of the sampler against the density ∝ exp(−|x − v|/b) on [lower, upper]
    (b from the scale function), off-centre so both the sign choice and the folded magnitude
    matter; 200 000 draws, max CDF gap below the Kolmogorov 0.1 % critical value 1.95/√N."""
    rng = np.random.default_rng(3)
    lo, hi, v, eps = 0.0, 10.0, 2.0, 0.3
    b = bounded_domain_scale(1.0, eps, hi - lo)
    N = 200_000
    x = np.sort(bounded_domain_laplace(np.full(N, v), lo, hi, 1.0, eps, rng))

    def cdf(t):
        t = np.clip(t, lo, hi)
        left = np.where(t < v, b * (np.exp((t - v) / b) - np.exp((lo - v) / b)), b * (1 - np.exp((lo - v) / b)))
        right = np.where(t > v, b * (1 - np.exp(-(t - v) / b)), 0.0)
        total = b * (1 - np.exp((lo - v) / b)) + b * (1 - np.exp(-(hi - v) / b))
        return (left + right) / total

    gap = np.max(np.abs(cdf(x) - np.arange(1, N + 1) / N))
    assert gap < 1.95 / math.sqrt(N)


def test_bounded_domain_sampler_is_fast_when_the_scale_dwarfs_the_interval():
    """ε per coordinate 1e-7 on an interval of width 1: rejection would need ~10⁷ proposals per
    value; the sampler keeps ≥ half of its draws per round."""
    rng = np.random.default_rng(0)
    out = bounded_domain_laplace(np.linspace(0, 1, 50_000), 0.0, 1.0, 1.0, 1e-7, rng)
    assert out.min() >= 0.0 and out.max() <= 1.0
    assert abs(out.mean() - 0.5) < 0.01            # nearly uniform on [0, 1]
