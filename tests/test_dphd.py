"""DPHD (dpcore.kmeans.dphd): the candidate-set k-means on L2-normalised documents - planted
blocks recovered at large ε, an honest ledger, per-record normalisation, sparse input kept
sparse, the registry entry and the parameter contract."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from dpcore.data import make_block_matrix
from dpcore.kmeans.candidate import CandidateKMeans
from dpcore.kmeans.dphd import DPHD
from dpcore.metrics import nmi
from dpcore.preprocessing import normalize_rows


@pytest.fixture(scope="module")
def block():
    # a small CLUTO-like matrix: 600 documents × 300 terms, sparse counts, 3 × 3 planted co-clusters
    return make_block_matrix(600, 300, 3, 3, signal=5.0, noise=0.5, random_state=0)


def test_recovers_planted_blocks_at_large_epsilon(block):
    # ε = 100 leaves the private stages almost noiseless (every noise scale ∝ 1/ε); the blocks are
    # separated by construction, so every seed must find them (measured: NMI 1.0 for seeds 0-4)
    assert sp.issparse(block.X)
    for s in range(3):
        est = DPHD(n_clusters=3, epsilon=100.0, random_state=s).fit(block.X)
        assert nmi(block.labels, est.labels_) > 0.95


def test_ledger_is_honest(block):
    est = DPHD(n_clusters=3, epsilon=2.0, delta=1e-5, random_state=0).fit(block.X)
    assert est.ledger_.total() == (2.0, 1e-5)
    assert (est.epsilon_spent_, est.delta_spent_) == (2.0, 1e-5)
    # the three stages of the candidate method with the default split; δ only in the Gaussian recovery
    spent = [v for e in est.ledger_.entries for v in (e.epsilon, e.delta)]    # flat: approx() takes no nesting
    assert spent == pytest.approx([0.8, 0.0, 0.2, 0.0, 1.0, 1e-5])
    assert "L2-normalised per record" in est.ledger_.entries[0].note
    assert est.released_private_ and set(est.private_outputs_) == {"cluster_centers_", "projected_centers_",
                                                                   "candidates_"}
    assert "labels_" in est.nonprivate_outputs_
    assert est.radius_ == 1.0 and est.n_clipped_ == 0          # unit rows need no clipping at Λ = 1
    assert DPHD.claimed_relation == "replace_one"


def test_refinement_is_paid_from_the_recovery_stage(block):
    est = DPHD(n_clusters=3, epsilon=1.0, refine_iter=8, random_state=0).fit(block.X)
    assert est.ledger_.total() == pytest.approx((1.0, 1e-5))
    assert "8 SuLQ refinement" in est.ledger_.entries[-1].what


def test_rows_are_normalised_per_record(block):
    # scaling each document by its own positive factor changes nothing: DPHD sees unit rows only
    # (the same seed gives the same projection and noise, so the fits must agree exactly)
    rng = np.random.default_rng(1)
    scaled = sp.diags(rng.uniform(0.5, 20.0, block.X.shape[0])) @ block.X
    a = DPHD(n_clusters=3, epsilon=1.0, random_state=5).fit(block.X)
    b = DPHD(n_clusters=3, epsilon=1.0, random_state=5).fit(scaled)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-10)
    # and it is the candidate method on the normalised rows, nothing else
    c = CandidateKMeans(n_clusters=3, epsilon=1.0, radius=1.0, delta=1e-5, random_state=5).fit(normalize_rows(block.X))
    np.testing.assert_allclose(a.cluster_centers_, c.cluster_centers_, atol=1e-10)
    np.testing.assert_array_equal(a.predict(block.X), c.predict(normalize_rows(block.X)))


def test_sparse_and_dense_input_agree(block):
    a = DPHD(n_clusters=3, epsilon=1.0, random_state=2).fit(block.X)
    b = DPHD(n_clusters=3, epsilon=1.0, random_state=2).fit(block.X.toarray())
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-9)


def test_wide_sparse_matrix_is_not_densified():
    # 2000 documents × 200 000 terms, 20 words each: dense it would be 3.2 GB; the run's extra
    # memory is the m × p projection (200 000 × 4 floats = 6.4 MB), the k × m centres and
    # sums (a few × 1.6 MB) and chunked distance blocks - allow 60 MB
    rng = np.random.default_rng(0)
    n, m = 2000, 200_000
    rows = np.repeat(np.arange(n), 20)
    cols = rng.integers(0, m, rows.size)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, m))
    tracemalloc.start()
    est = DPHD(n_clusters=3, epsilon=1.0, random_state=0).fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert est.cluster_centers_.shape == (3, m)
    assert peak < 60e6


def test_registered_for_count_matrices():
    from dpcore.lab.audit import claimed_relation, default_neighbour
    from dpcore.lab.methods import PRESETS, get_method, presets_for
    from dpcore.lab.sweeps import Sweep, run_sweep
    assert get_method("dphd").cls is DPHD and get_method("dphd").takes_delta
    assert PRESETS["DPHD"]["name"] == "dphd"
    assert "DPHD" in presets_for("counts") and "DPHD" not in presets_for("points")
    assert claimed_relation("dphd") == "replace_one" and default_neighbour("dphd", "counts") == "replace_document"
    df = run_sweep(Sweep(dataset={"kind": "blocks", "n_rows": 300, "n_cols": 120, "k": 3, "random_state": 0},
                         algorithms=["dphd"], epsilons=[100.0], trials=1, metrics=["nmi"]))
    assert df["nmi"].iloc[0] > 0.9 and df["released_private"].iloc[0]
    assert df["delta"].iloc[0] == 1e-5 and df["epsilon_spent"].iloc[0] == 100.0


def test_bad_parameters_refused_by_name(block):
    with pytest.raises(ValueError, match="n_clusters"):
        DPHD(n_clusters=0).fit(block.X)
    with pytest.raises(ValueError, match="radius"):
        DPHD(n_clusters=3, radius=-1.0).fit(block.X)
    with pytest.raises(ValueError, match="delta"):
        DPHD(n_clusters=3, delta=0.0).fit(block.X)


def test_clone_and_get_params():
    est = DPHD(n_clusters=4, epsilon=0.5, refine_iter=8)
    c = clone(est)
    assert c.get_params() == est.get_params()
    assert est.get_params()["radius"] == 1.0 and est.get_params()["delta"] == 1e-5
