"""dpcore.lab.compare: one name per method (the catalogue's; the old keys still run, the same
runs), and the comparison's privacy asked of dpcore.lab.verdicts (plans before, verdicts after)."""
import warnings

import numpy as np
import pytest

from dpcore.data import make_gaussian_mixture
from dpcore.lab.compare import (METHODS, OLD_KEYS, compare_methods, judge_comparison, method_name,
                                plan_comparison)
from dpcore.lab.methods import get_method
from dpcore.lab.verdicts import RunContext
from dpcore.privacy.meter import PrivacyMeter

#: the comparison's methods, by their catalogue names (the pages', presets' and links' names too)
NAMES = ["candidate_kmeans", "candidate_sparse", "candidate_kmedian", "sulq_kmeans", "sa_kmeans", "dplloyd",
         "lsh_coreset"]


@pytest.fixture(scope="module")
def mixture():
    return make_gaussian_mixture(n=600, d=8, k=3, sigma=0.1, random_state=0)


def test_the_comparisons_methods_are_named_by_the_catalogue():
    assert list(METHODS) == NAMES
    for name, (label, about) in METHODS.items():
        assert get_method(name).label == label and about
    assert OLD_KEYS == {"candidate": "candidate_kmeans", "sulq": "sulq_kmeans", "sample_aggregate": "sa_kmeans",
                        "lsh": "lsh_coreset"}
    assert [method_name(k) for k in OLD_KEYS] == list(OLD_KEYS.values())
    assert [method_name(n) for n in NAMES] == NAMES
    with pytest.raises(ValueError, match="method must be one of candidate_kmeans, .*; got 'kmeanspp'"):
        method_name("kmeanspp")


def test_an_old_key_runs_the_same_run_under_its_catalogue_name(mixture):
    """The per-method seeds come from run_seed(seed, catalogue name, ε, trial): renaming the keys
    changed no result."""
    lam = mixture.extras["public_radius"]
    new = compare_methods(mixture.X, 3, 1.0, lam, ["candidate_kmeans", "sulq_kmeans", "sa_kmeans", "dplloyd"],
                          random_state=5, trial=1,
                          options={"candidate_kmeans": {"projection_dim": 3}})
    old = compare_methods(mixture.X, 3, 1.0, lam, ["candidate", "sulq", "sample_aggregate", "dplloyd"],
                          random_state=5, trial=1, options={"candidate": {"projection_dim": 3}})
    assert [r.key for r in old.results] == [r.key for r in new.results] == \
        ["candidate_kmeans", "sulq_kmeans", "sa_kmeans", "dplloyd"]
    for a, b in zip(old.results, new.results):
        assert np.array_equal(a.centres, b.centres) and a.objective == b.objective, a.key
    assert old.results[0].estimator.projection_dim == 3                         # an old key's options apply


def test_the_comparison_is_planned_and_judged_by_the_library(mixture):
    lam = mixture.extras["public_radius"]
    plans = plan_comparison(mixture.X, 3, 2.0, lam, ["sulq_kmeans", "dplloyd"], 1e-6)
    assert [(v.method, v.private, v.relation, v.epsilon, v.planned) for v in plans] == [
        ("sulq_kmeans", True, "replace_one", 2.0, True), ("dplloyd", False, "add_remove", 2.0, True)]
    assert "floating-point" in plans[1].reason                  # the diffprivlib peer: not private as executed
    # a class budget refuses the plan before anything runs
    meter = PrivacyMeter(budget_epsilon=10.0)
    with pytest.raises(ValueError, match="DP-Lloyd .* would not be private"):
        meter.reserve("d", plans)
    meter.reserve("d", plans[:1]).release()
    cmp = compare_methods(mixture.X, 3, 2.0, lam, ["sulq_kmeans", "dplloyd"], 1e-6, random_state=0)
    verdicts = judge_comparison(cmp, labels=lambda r: f"k-means: {r.label}")
    assert [(v.private, v.relation, v.label) for v in verdicts] == [
        (True, "replace_one", "k-means: SuLQ k-means"), (False, "add_remove", "k-means: DP-Lloyd (diffprivlib)")]
    assert [r.private for r in cmp.results] == [True, False]
    assert verdicts[0].epsilon == pytest.approx(2.0) and verdicts[0].n_releases == 20     # 20 noisy Lloyd steps


def test_a_radius_read_off_the_data_or_a_public_seed_makes_every_run_not_private(mixture):
    plans = plan_comparison(mixture.X, 3, 1.0, "data", ["candidate_kmeans", "sulq_kmeans", "dplloyd"],
                            labels=lambda name: name)
    assert [v.label for v in plans] == ["candidate_kmeans", "sulq_kmeans", "dplloyd"]
    assert not any(v.private for v in plans) and all("radius" in v.reason for v in plans)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                          # the radius read off the data warns
        cmp = compare_methods(mixture.X, 3, 1.0, "data", ["sulq_kmeans", "dplloyd"], random_state=1)
    assert cmp.radius_from_data and not any(r.private for r in cmp.results)
    assert all("radius" in v.reason for v in judge_comparison(cmp))
    lam = mixture.extras["public_radius"]
    seeded = plan_comparison(mixture.X, 3, 1.0, lam, ["sulq_kmeans"], context=RunContext(seed=4))
    assert not seeded[0].private and "public seed 4" in seeded[0].reason
