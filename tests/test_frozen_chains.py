"""Chains that do not move are not called mixed (a classroom report: at ε = 10¹² every chain sat
in one partition and the verdict said "mixed", from an ESS above the number of draws)."""
import numpy as np
import pytest

from dpcore.data import load_dataset
from dpcore.lab.methods import get_method
from dpcore.subspace.diagnostics import FROZEN_RTOL, frozen_chains, mixing_verdict


@pytest.fixture(scope="module")
def frozen_fit():
    # σ = 0.02: every chain ends in the same partition, so R̂ and ESS of the jitter look fine (with
    # σ = 0.1 the frozen chains sit in different partitions and R̂ alone already says "not mixed")
    # seed 10: one whose four chains freeze in the same partition (most seeds freeze them apart;
    # chosen again when the z-step became exact and its draws changed)
    ds = load_dataset(kind="subspaces", n=300, d=10, k=3, q=3, sigma=0.02, random_state=0)
    est = get_method("gibbs").build(ds, params={"n_clusters": 3, "subspace_dim": 3, "n_iter": 300, "n_chains": 4,
                                                "init": "random"}, epsilon=1e12, random_state=np.random.default_rng(10))
    return est.fit(ds.X, y=ds.labels, true_subspaces=ds.subspaces)


def test_a_frozen_run_is_not_called_mixed(frozen_fit):
    m = frozen_fit
    v = mixing_verdict(m.traces_, m.burn_in_)
    # what fooled the old rule: R̂ of the jitter is fine and its ESS exceeds the draws
    assert all(r["split_rhat"] < 1.1 for r in v["rows"])
    assert not v["mixed"] and v["frozen"]
    assert "did not move" in v["text"] and "same partition" in v["text"]


def test_a_moving_chain_is_judged_by_rhat_and_ess():
    rng = np.random.default_rng(0)
    cost = 1.0 + 0.01 * rng.standard_normal((4, 400))          # white noise: mixed by any rule
    v = mixing_verdict({"cost": cost}, burn_in=100)
    assert v["mixed"] and not v["frozen"]
    cost[:, 100:] = 1.0 + 1e-3 * FROZEN_RTOL * rng.standard_normal((4, 300))   # jitter far below the tolerance
    f = frozen_chains({"cost": cost}, burn_in=100)
    assert f["all_frozen"] and f["same_state"]
    cost[0, 100:] += 0.5                                         # one chain frozen elsewhere
    f = frozen_chains({"cost": cost}, burn_in=100)
    assert f["all_frozen"] and not f["same_state"]
    v = mixing_verdict({"cost": cost}, burn_in=100)
    assert not v["mixed"] and "different partitions" in v["text"]
    cost[1, 300] += 1e-6                                         # one point moved once in chain 1
    assert not frozen_chains({"cost": cost}, burn_in=100)["all_frozen"]
