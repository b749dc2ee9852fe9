"""The method catalogue (dpcore.lab.methods): every entry builds and fits, its fields agree with
its class, a user's own method runs in worker processes (a process pool and a Dask cluster)
without the parent's registry, the example script runs, and unknown names are refused."""
import pickle
import subprocess
import sys
import types
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import dpcore.lab.sweeps as sweeps
from dpcore.data import load_dataset
from dpcore.lab import methods as M
from dpcore.lab.compare import compare_methods
from dpcore.lab.methods import (METHODS, PRESETS, Method, build_estimator, get_method, preset, presets_for,
                                register_method, run_seed, unregister_method)
from dpcore.lab.sweeps import Sweep, run_sweep
from dpcore.privacy.accountant import RELATIONS

import own_method_helpers as helpers

ROOT = Path(__file__).resolve().parents[1]

# tiny data per family and fast settings per entry: every entry must build and fit
_DATA = {"subspace": {"kind": "subspaces", "n": 200, "d": 5, "k": 2, "q": 1, "sigma": 0.05, "random_state": 0},
         "kmeans": {"kind": "gaussians", "n": 400, "d": 5, "k": 3, "random_state": 0},
         "cocluster": {"kind": "blocks", "n_rows": 60, "n_cols": 40, "k": 2, "random_state": 0},
         "documents": {"kind": "blocks", "n_rows": 60, "n_cols": 40, "k": 2, "random_state": 0}}
_FAST = {"gibbs": {"n_iter": 5}, "sample_aggregate": {"solver": "kplane"}, "sulq_kplane": {"n_iter": 2},
         "dp_taucc": {"n_iter": 2}}
_OUTPUT = {"subspace": "subspaces_", "kmeans": "cluster_centers_", "cocluster": "row_labels_", "documents": "labels_"}
BUILT_IN = [n for n in METHODS if n in M._BUILT_IN_NAMES]


@pytest.fixture
def registered():
    """Register the helper module's method for one test, then remove it."""
    entry = register_method("own_noisy_lloyd", helpers.OneNoisyLloydStep, family="kmeans", private=True,
                            defaults=helpers.helper_defaults, label="one noisy Lloyd step",
                            presets={"own noisy Lloyd": {}})
    yield entry
    unregister_method("own_noisy_lloyd")


# ----------------------------------------------------------------------------- the entries
@pytest.mark.parametrize("name", BUILT_IN)
def test_every_entry_builds_and_fits_on_a_tiny_dataset_of_its_family(name):
    entry = METHODS[name]
    ds = load_dataset(**_DATA[entry.family])
    est = build_estimator(name, ds, _FAST.get(name), epsilon=1e3, random_state=0)
    assert type(est) is entry.cls
    est.fit(ds.X)
    assert hasattr(est, _OUTPUT[entry.family])
    if entry.private:
        assert est.epsilon == 1e3 and 0 < est.epsilon_spent_ < np.inf
    else:
        assert "epsilon" not in est.get_params()            # ε of a non-private method is ignored


@pytest.mark.parametrize("name", BUILT_IN)
def test_entry_fields_agree_with_the_class(name):
    entry = METHODS[name]
    cls = entry.cls
    params = cls().get_params()
    assert entry.family in M.FAMILIES and entry.label and entry.description
    assert entry.private == ("epsilon" in params)
    assert entry.takes_delta == (entry.private and "delta" in params)
    if entry.private:       # the relation is the estimator's own
        assert entry.relation in RELATIONS and entry.relation == cls.claimed_relation
    else:
        assert entry.relation is None
    assert set(entry.params) <= set(params)
    from dpcore.lab import audit
    known = getattr(audit, "STATISTIC_HELP", None) or audit.statistics.STATISTIC_HELP
    assert entry.audit_statistic in known


def test_presets_name_catalogue_methods_in_a_stable_order():
    assert all(p["name"] in METHODS for p in PRESETS.values())
    assert list(PRESETS)[:4] == ["k-plane", "SSC", "LRR", "TSC"]
    assert preset("SuLQ-50") == {"name": "sulq_kplane", "label": "SuLQ-50", "params": {"n_iter": 50}}
    assert {"Gibbs", "k-means++", "candidate set"} <= set(presets_for("points"))
    assert {"DP-τCC", "Fast-τCC", "DPHD"} <= set(presets_for("counts"))
    assert presets_for("nope") == []


def test_the_catalogue_is_the_only_registry():
    """sweeps keeps no registry of its own: the old names are gone."""
    assert not hasattr(sweeps, "ALGORITHMS") and not hasattr(sweeps, "make_estimator")


def test_build_layers_dataset_defaults_fixed_params_caller_params_and_privacy():
    ds = load_dataset(**_DATA["kmeans"])
    est = build_estimator("candidate_sparse", ds, {"n_clusters": 2}, epsilon=3.0, delta=1e-7)
    p = est.get_params()
    # k from the caller over the classes, s = min(100, d) from the entry's defaults, sparse recovery fixed
    assert (p["n_clusters"], p["sparsity"], p["recovery"], p["epsilon"], p["delta"]) == (2, 5, "sparse", 3.0, 1e-7)
    assert p["radius"] == ds.extras["public_radius"]
    assert "delta" not in build_estimator("dplloyd", ds, epsilon=1.0, delta=1e-5).get_params()    # ε-DP: no δ
    assert "epsilon" not in build_estimator("kmeanspp", ds, epsilon=1.0).get_params()              # not private


def test_a_method_pickles_as_its_spec():
    entry = METHODS["sample_aggregate"]
    back = pickle.loads(pickle.dumps(entry))
    assert back == entry and back.cls is entry.cls
    spec = entry.spec()
    assert spec["target"] == "dpcore.subspace.sample_aggregate:SampleAggregateSubspace"
    assert Method.from_spec(spec) == entry
    assert METHODS["candidate_sparse"].spec()["defaults"] == "dpcore.lab.methods:sparse_kmeans_defaults"


# ----------------------------------------------------------------------------- one seed recipe
def test_comparison_runs_through_the_catalogue_and_the_one_seed_recipe():
    ds = load_dataset(**_DATA["kmeans"])
    lam = ds.extras["public_radius"]
    cmp = compare_methods(ds.X, 3, 2.0, lam, ["sulq_kmeans", "dplloyd"], 1e-6, random_state=11, trial=2)
    for r in cmp.results:
        name = r.key                                     # one name per method: the catalogue's
        params = {"n_clusters": 3, "radius": lam} | ({"row_map": "clip"} if r.key == "dplloyd" else {})
        again = build_estimator(name, None, params, 2.0, 1e-6,
                                np.random.default_rng(run_seed(11, name, 2.0, 2))).fit(ds.X)
        assert np.array_equal(again.cluster_centers_, r.centres), r.key
        assert r.label == get_method(name).label
    other = compare_methods(ds.X, 3, 2.0, lam, ["sulq_kmeans"], 1e-6, random_state=11, trial=3)
    assert not np.array_equal(other.results[0].centres, cmp.results[0].centres)


# ----------------------------------------------------------------------------- your own method
def test_a_registered_method_runs_in_a_sweep_on_two_worker_processes(registered):
    assert get_method("own_noisy_lloyd").target == "own_method_helpers:OneNoisyLloydStep"
    assert PRESETS["own noisy Lloyd"] == {"name": "own_noisy_lloyd"}
    sweep = Sweep(dataset=_DATA["kmeans"], algorithms=["own_noisy_lloyd", preset("SuLQ k-means")],
                  epsilons=[1.0, 100.0], trials=2, metrics=["objective_ratio", "nmi"], seed=3)
    two = run_sweep(sweep, n_jobs=2)
    ours = two[two["name"] == "own_noisy_lloyd"]
    assert len(ours) == 4 and ours["released_private"].all()
    assert np.allclose(ours["epsilon_spent"], ours["epsilon"]) and np.isfinite(ours["objective_ratio"]).all()
    one = run_sweep(sweep, n_jobs=1)       # workers give what the parent gives, run for run
    assert two.drop(columns="seconds").equals(one.drop(columns="seconds"))


@pytest.mark.slow
def test_runs_in_worker_processes_are_charged_to_the_callers_accountant(registered):
    """A sweep on worker processes inside ``with acc:`` charges every private run, as the same
    sweep in this process does through the estimators' fit wrapper; a budget the sweep would
    pass refuses it before any run."""
    from dpcore.privacy import PrivacyAccountant
    sweep = Sweep(dataset=_DATA["kmeans"], algorithms=["own_noisy_lloyd", preset("SuLQ k-means"), "kmeanspp"],
                  epsilons=[0.5, 2.0], trials=2, metrics=["nmi"], seed=3)
    totals = {}
    for n_jobs in (1, 2):
        with PrivacyAccountant() as acc:
            df = run_sweep(sweep, n_jobs=n_jobs)
        assert len(acc.runs) == int(df["private"].sum()) == 8 and not acc.nonprivate_runs
        totals[n_jobs] = acc.basic_total()
    assert totals[2] == pytest.approx(totals[1]) and totals[2][0] == pytest.approx(2 * 2 * (0.5 + 2.0))
    acc = PrivacyAccountant(budget_epsilon=9.0)
    with acc, pytest.raises(ValueError, match="privacy budget exceeded"):
        run_sweep(sweep, n_jobs=2)
    assert acc.runs == [] and acc.basic_total() == (0.0, 0.0)


def test_a_worker_runs_a_task_without_the_parents_registry(registered):
    task = Sweep(dataset=_DATA["kmeans"], algorithms=["own_noisy_lloyd"], epsilons=[5.0], trials=1,
                 metrics=["nmi"]).validated().tasks()[0]
    with ProcessPoolExecutor(1, mp_context=sweeps.worker_context()) as pool:
        assert pool.submit(helpers.is_registered, "own_noisy_lloyd").result() is False
        row = pool.submit(sweeps.run_task, task).result()
    assert row["name"] == "own_noisy_lloyd" and row["epsilon_spent"] == 5.0


@pytest.mark.slow
def test_a_registered_method_runs_on_a_two_worker_dask_cluster(registered):
    distributed = pytest.importorskip("distributed")
    sweep = Sweep(dataset=_DATA["kmeans"], algorithms=["own_noisy_lloyd", "kmeanspp"], epsilons=[1.0, 10.0],
                  trials=2, metrics=["nmi"], seed=5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        df = run_sweep(sweep, executor=client.get_executor())
        seen = client.run(helpers.is_registered, "own_noisy_lloyd")
    assert len(seen) == 2 and not any(seen.values())     # two workers, neither has the parent's catalogue
    assert df.drop(columns="seconds").equals(run_sweep(sweep).drop(columns="seconds"))


@pytest.mark.slow
def test_the_example_script_runs_with_two_worker_processes(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "own_method.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "noisy centroid (ours)" in out.stdout and "SuLQ k-means" in out.stdout and "DP-Lloyd" in out.stdout


def test_a_class_from_a_script_is_named_by_the_scripts_module(tmp_path, monkeypatch):
    script = tmp_path / "my_study.py"
    script.write_text("")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    cls = type("MyKMeans", (helpers.OneNoisyLloydStep,), {"__module__": "__main__"})
    try:
        entry = register_method("my_kmeans", cls, family="kmeans", private=True)
        assert entry.target == "my_study:MyKMeans" and entry.cls is cls      # this process keeps its own class
        assert entry.relation == "replace_one" and entry.takes_delta
        assert pickle.loads(pickle.dumps(entry)).target == "my_study:MyKMeans"
    finally:
        unregister_method("my_kmeans")
    main.__spec__ = types.SimpleNamespace(name="studies.my_study")       # python -m studies.my_study
    try:
        assert register_method("my_kmeans", cls, family="kmeans", private=True).target == "studies.my_study:MyKMeans"
    finally:
        unregister_method("my_kmeans")


# ----------------------------------------------------------------------------- refusals
def test_unknown_names_are_refused_with_the_known_ones():
    for call in (lambda: get_method("noisy_centroid"), lambda: build_estimator("noisy_centroid")):
        with pytest.raises(ValueError, match="method must be one of .*kplane.*got 'noisy_centroid'"):
            call()
    with pytest.raises(ValueError, match="must be one of .*SuLQ-10"):
        preset("noisy centroid")
    with pytest.raises(ValueError, match="algorithm must be one of .*candidate_kmeans"):
        Sweep(dataset=_DATA["kmeans"], algorithms=["noisy_centroid"], epsilons=[1.0]).validated()
    with pytest.raises(ValueError, match="unregister|built-in|must be one of"):
        unregister_method("noisy_centroid")


@pytest.mark.parametrize("kw, words", [
    (dict(name="kplane"), "already in the catalogue"),
    (dict(family="graphs"), "family must be one of"),
    (dict(cls_or_target="own_method_helpers:Nope"), "cannot be imported"),
    (dict(cls_or_target="no colon"), "module:Name"),
    (dict(cls_or_target=42), "class or 'module:Class'"),
    (dict(relation="neighbours"), "relation must be one of"),
    (dict(defaults=lambda ds: {}), "top level of a module"),
    (dict(presets={"k-plane": {}}), "preset labels already taken"),
    (dict(cls_or_target="dpcore.metrics:nmi"), "no fit method"),
    (dict(private=False), "register it with private=True"),                     # would spend ε uncharged in workers
    (dict(relation="add_remove"), "contradicts the class's claimed_relation"),  # ledger and catalogue would disagree
])
def test_bad_registrations_are_refused(kw, words):
    args = dict(name="bad_one", cls_or_target=helpers.OneNoisyLloydStep, family="kmeans", private=True) | kw
    name, target = args.pop("name"), args.pop("cls_or_target")
    with pytest.raises(ValueError, match=words):
        register_method(name, target, **args)
    assert "bad_one" not in METHODS


def test_a_private_method_must_take_epsilon():
    with pytest.raises(ValueError, match="must take 'epsilon'"):
        register_method("no_eps", "dpcore.kmeans.baselines:KMeansPlusPlus", family="kmeans", private=True)
    entry = register_method("kpp_again", "dpcore.kmeans.baselines:KMeansPlusPlus", family="kmeans", private=False)
    try:
        assert entry.relation is None and not entry.takes_delta
        with pytest.raises(ValueError, match="bad parameter for method 'kpp_again'"):
            build_estimator("kpp_again", params={"epsilon": 1.0})
    finally:
        unregister_method("kpp_again")
    with pytest.raises(ValueError, match="built-in"):
        unregister_method("kplane")


UNGUARDED = """
from dpcore.lab.methods import register_method
from dpcore.lab.sweeps import Sweep, run_sweep
from own_method_helpers import OneNoisyLloydStep


class Mine(OneNoisyLloydStep):
    pass


register_method("mine", Mine, family="kmeans", private=True)
run_sweep(Sweep(dataset={DATA!r}, algorithms=["mine"], epsilons=[1.0, 2.0], trials=1, metrics=["nmi"]), n_jobs=2)
"""


@pytest.mark.slow
def test_a_script_without_the_main_guard_gets_a_clear_error_not_a_flood_of_workers(tmp_path):
    """A worker imports the script to load its class; the script's unguarded top level starts
    a sweep again. That sweep is refused with the fix, instead of a pool in every worker."""
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED.replace("{DATA!r}", repr(_DATA["kmeans"])))
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT / "tests")}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode != 0
    assert "inside a sweep's worker process" in out.stderr and 'if __name__ == "__main__":' in out.stderr
