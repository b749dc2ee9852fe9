"""Chains that do not move are not called mixed (a classroom report: at ε = 10¹² every chain sat
in one partition and the verdict said "mixed", from an ESS above the number of draws). Since ε·n
is capped at 10¹², the fit counts the points that change cluster (the "moves" trace): the cost
of a frozen chain still jitters with its subspace draws (relative 10⁻⁸ here), which a constant-cost
rule took for movement."""
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
    # chosen again when the z-step became exact and its draws changed); ε = 3·10⁹ is below the cap
    ds = load_dataset(kind="subspaces", n=300, d=10, k=3, q=3, sigma=0.02, random_state=0)
    est = get_method("gibbs").build(ds, params={"n_clusters": 3, "subspace_dim": 3, "n_iter": 300, "n_chains": 4,
                                                "init": "random"}, epsilon=3e9, random_state=np.random.default_rng(10))
    return est.fit(ds.X, y=ds.labels, true_subspaces=ds.subspaces)


def test_a_frozen_run_is_not_called_mixed(frozen_fit):
    m = frozen_fit
    v = mixing_verdict(m.traces_, m.burn_in_)
    # what fooled the old rule: R̂ of the jitter is fine and its ESS exceeds the draws
    assert all(r["split_rhat"] < 1.1 for r in v["rows"])
    assert not v["mixed"] and v["frozen"]
    assert "did not move" in v["text"] and "same partition" in v["text"]
    moves = m.traces_["moves"]
    assert (moves[:, 0] == 300).all() and not moves[:, m.burn_in_:].any()
    # the cost still moves: a constant-cost rule alone would not see the chains frozen
    assert not frozen_chains({"cost": m.traces_["cost"]}, m.burn_in_)["all_frozen"]


def test_moves_count_the_label_changes():
    """A chain that explores moves points; its count equals the changes between recorded labels."""
    from dpcore.subspace.gibbs import GibbsSubspaceClustering
    ds = load_dataset(kind="subspaces", n=120, d=6, k=2, q=2, sigma=0.3, random_state=1)
    seen = {}

    def keep(t, n, traces):
        seen[t] = traces["moves"].copy()

    m = GibbsSubspaceClustering(n_clusters=2, subspace_dim=2, epsilon=0.5, n_iter=70, n_chains=2,
                                random_state=3).fit(ds.X, trace_callback=keep)
    moves = m.traces_["moves"]
    assert moves.shape == (2, 70) and (moves == np.round(moves)).all() and (0 <= moves).all() and (moves <= 120).all()
    assert moves[:, 1:].sum() > 0                                   # at ε = 0.5 the partition changes
    assert not frozen_chains(m.traces_, m.burn_in_)["all_frozen"]
    np.testing.assert_array_equal(seen[64], moves[:, :64])         # counted across the block boundary the same


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
