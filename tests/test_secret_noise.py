"""Secret noise by default (issue 14, acceptance (d)).

- Two default runs of each private method on each page give different releases (the noise
  comes from OS entropy, not from a seed that defaults to 0);
- the link and the "Reproduce in Python" script carry no seed unless "reproducible (noise
  public)" is ticked, and such a run is marked not private and kept out of the meter's
  private total;
- data seeds and method seeds are independent streams: no method's random start equals the
  data's planted truth for seeds 0-20.
"""
import numpy as np
import pytest

from apptest_helpers import by_key, link_of, open_page, submit
from dpcore.data import make_union_of_subspaces, random_subspaces
from dpcore.export import FRESH_NOISE_NOTE
from dpcore.metrics import wasserstein_distance
from dpcore.subspace.sulq import SuLQKPlane

SMALL = {"kind": "subspaces", "n": 300, "d": 6, "k": 2, "q": 2, "sigma": 0.01, "random_state": 0}
BLOCKS = {"kind": "blocks", "n_rows": 60, "n_cols": 40, "k": 3, "l": 3, "signal": 5.0, "noise": 0.5, "random_state": 0}


def click(at, button):
    """Click ``button`` (a form's submit button, :func:`submit`, or a keyed one) and run the page:
    no exception, no error box."""
    button.click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def link(at):
    return link_of(at)          # what the browser's address bar would show (bound widgets included)


def assert_no_seed(at):
    keys = link(at)
    assert not any(k.endswith("_seed") for k in keys), keys
    assert all(keys.get(k) != "true" for k in keys if k.endswith("_repro"))


def meter(at):
    return at.session_state["session_meter"]


# ----------------------------------------------------------------------------- Cluster page
@pytest.mark.parametrize("method", ["sample_aggregate", "sulq_kplane"])
def test_cluster_default_runs_differ_and_share_no_seed(method):
    at = open_page("3_cluster.py", spec=SMALL)
    by_key(at, "cl_method").set_value(method)
    at.run()
    click(at, submit(at, "cluster_form"))
    first = at.session_state["cluster_result"]
    click(at, submit(at, "cluster_form"))
    second = at.session_state["cluster_result"]
    assert first["seed"] is None and second["seed"] is None
    assert not np.allclose(first["subspaces"], second["subspaces"])      # fresh noise each run
    assert_no_seed(at)
    assert FRESH_NOISE_NOTE in second["code"] and "random_state" not in second["code"].split("model = ")[1]
    runs = meter(at).runs
    assert len(runs) == 2 and all(r["private"] for r in runs)


def test_cluster_reproducible_run_is_not_private_and_not_counted():
    at = open_page("3_cluster.py", spec=SMALL)
    by_key(at, "cl_method").set_value("sulq_kplane")
    at.run()
    by_key(at, "cl_repro").check()
    at.run()
    by_key(at, "cl_seed").set_value(11)
    click(at, submit(at, "cluster_form"))
    res = at.session_state["cluster_result"]
    assert res["seed"] == 11 and link(at)["cl_seed"] == "11" and "random_state=11" in res["code"]
    assert any("NOT private" in i.value for i in at.info)                 # the privacy box says so
    (run,) = meter(at).runs
    assert not run["private"] and "public seed" in run["reason"]
    assert meter(at).private_total(run["dataset"]) == (0.0, 0.0)


# ----------------------------------------------------------------------------- other pages
@pytest.mark.slow
def test_gibbs_default_runs_differ():
    at = open_page("4_gibbs.py", spec=SMALL)
    by_key(at, "g_eps").set_value("1")
    by_key(at, "g_iter").set_value(10)
    by_key(at, "g_chains").set_value(1)
    at.run()
    click(at, submit(at, "gibbs_form"))
    a = at.session_state["gibbs_result"]["summary"][0]["cost of released sample"]
    click(at, submit(at, "gibbs_form"))
    b = at.session_state["gibbs_result"]["summary"][0]["cost of released sample"]
    assert a != b
    assert_no_seed(at)


def test_cocluster_default_runs_differ():
    at = open_page("5_coclustering.py", spec=BLOCKS)
    by_key(at, "cc_matrix").set_value("current")
    at.run()
    click(at, submit(at, "cocluster_form"))
    T1 = at.session_state["cocluster_result"]["dp"].T_
    click(at, submit(at, "cocluster_form"))
    T2 = at.session_state["cocluster_result"]["dp"].T_
    assert T1.shape != T2.shape or not np.array_equal(T1, T2)
    assert_no_seed(at)


def kmeans_sulq_run(at):
    """On the k-means page: a small Gaussian mixture of the page's own, SuLQ k-means only."""
    by_key(at, "km_data").set_value("gaussians")
    at.run()
    by_key(at, "km_n").set_value(600)
    by_key(at, "km_methods").set_value(["sulq_kmeans"])
    click(at, by_key(at, "km_run"))


def test_kmeans_default_runs_differ():
    at = open_page("6_kmeans.py", spec=SMALL)
    kmeans_sulq_run(at)
    c1 = at.session_state["kmeans_result"]["cmp"].results[0].centres
    click(at, by_key(at, "km_run"))
    c2 = at.session_state["kmeans_result"]["cmp"].results[0].centres
    assert not np.allclose(c1, c2)
    assert_no_seed(at)


# ----------------------------------------------------------------------------- data vs method streams
@pytest.mark.parametrize("seed", range(21))
def test_no_random_start_equals_the_planted_truth(seed):
    ds = make_union_of_subspaces(n=300, d=10, k=3, q=3, sigma=0.1, random_state=seed)
    sulq = SuLQKPlane(n_clusters=3, subspace_dim=3, epsilon=1.0, n_iter=1, random_state=seed).fit(ds.X)
    kplane_start = random_subspaces(3, 10, 3, np.random.default_rng(seed))   # k-plane's first random start
    # Two independent uniformly random sets of three 3-planes in R^10 are far apart: d_W of the
    # old coincidence was 5e-8; 0.5 is far below the typical distance (≈ 3.5) of independent sets.
    assert wasserstein_distance(sulq.init_subspaces_, ds.subspaces) > 0.5
    assert wasserstein_distance(kplane_start, ds.subspaces) > 0.5


def test_the_shared_stream_coincidence_is_real():
    """Why the data stream must be separate: the same Generator state drives the planted
    subspaces and a method's random start to the same numbers (this is what an int seed
    did before the data generators got their own stream)."""
    truth = make_union_of_subspaces(n=300, d=10, k=3, q=3, random_state=np.random.default_rng(0)).subspaces
    start = random_subspaces(3, 10, 3, np.random.default_rng(0))
    assert wasserstein_distance(start, truth) < 1e-6


# ----------------------------------------------------------------------------- sweeps and the meter's datasets
PU_SMALL = {"kind": "subspaces", "n": 150, "d": 5, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0}


def test_default_sweeps_differ_hide_run_seeds_and_meter_only_private_runs():
    at = open_page("7_privacy_utility.py", spec=PU_SMALL, timeout=180)
    by_key(at, "pu_methods").set_value(["SuLQ-10", "SuLQ k-means"])   # SuLQ k-means reads its radius off this data
    by_key(at, "pu_metrics").set_value(["cost"])
    by_key(at, "pu_points").set_value(1)
    by_key(at, "pu_trials").set_value(1)
    by_key(at, "pu_jobs").set_value(1)
    click(at, submit(at, "sweep_form"))
    first = at.session_state["privacy_utility"]["df"]
    click(at, submit(at, "sweep_form"))
    second = at.session_state["privacy_utility"]["df"]
    assert "seed" not in first.columns                   # per-run seeds would give the secret noise away
    assert not first["cost"].equals(second["cost"])      # fresh noise in each sweep
    private = dict(zip(first["algorithm"], first["released_private"]))
    assert private == {"SuLQ-10": True, "SuLQ k-means": False}
    runs = meter(at).runs
    assert [r["private"] for r in runs] == [True, False, True, False]   # per sweep: SuLQ-10 counted, k-means apart
    assert all(r["fits"] == 1 for r in runs)


def test_meter_records_the_dataset_the_page_used():
    """The co-clustering and k-means pages pick their own data: the meter must charge their
    runs to it, not to the Data page's dataset (here a union of subspaces)."""
    at = open_page("5_coclustering.py", spec=SMALL)
    assert by_key(at, "cc_matrix").value == "blocks"
    click(at, submit(at, "cocluster_form"))
    assert [r["dataset"] for r in meter(at).runs] == ["block matrix (200×150, 3×3 blocks)"]
    at = open_page("6_kmeans.py", spec=SMALL)
    kmeans_sulq_run(at)
    assert [r["dataset"] for r in meter(at).runs] == ["Gaussian mixture (n=600, d=50, k=8)"]
