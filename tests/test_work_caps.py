"""Work bounded before it starts (issue 33, item 1): every fit estimates its work and memory from
its parameters and the shape of its input (:mod:`dpcore.work`) and refuses, with a ValueError and
before it reads any value, what is past :data:`dpcore.work.MAX_WORK` or :data:`dpcore.work.MAX_MEMORY`;
the papers' full settings and the app's presets pass. No timing is asserted: the estimates are
checked against the caps and against themselves, never against a clock."""
from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from sklearn.base import BaseEstimator, ClusterMixin

from dpcore.data import PAPER_SPECS, load_dataset
from dpcore.lab.figures import SETTINGS
from dpcore.lab.methods import METHODS, PRESETS, get_method, preset
from dpcore.lab.verdicts import plan_run
from dpcore.privacy import PrivacyAccountant
from dpcore.work import (CAPS, MAX_MEMORY, MAX_WORK, BoundedWorkMixin, Work, WorkCapError, check_work, input_size,
                         planned_work, register_work_model, work_model_of)

REFUSED = r"would take too long|would need too much memory"


def build(name, params=None, epsilon=1.0, delta=None):
    """The catalogue's estimator of ``name`` with ``params`` (those its class takes), seeded."""
    accepted = inspect.signature(get_method(name).cls.__init__).parameters
    kw = {k: v for k, v in (params or {}).items() if k in accepted}
    return get_method(name).build(params=kw, epsilon=epsilon, delta=delta, random_state=0)


def nan_matrix(n, d, sparse=False):
    """A matrix whose values fail every check that reads them (NaN): a refusal that comes with the
    work message, not a NaN message, was decided before any value was read."""
    if sparse:
        rng = np.random.default_rng(0)
        rows, cols = rng.integers(0, n, size=4 * n), rng.integers(0, d, size=4 * n)
        return sp.csr_matrix((np.full(4 * n, np.nan), (rows, cols)), shape=(n, d))
    return np.full((n, d), np.nan)


# ----------------------------------------------------------------------------- every method refuses past its cap
#: per catalogue method: parameters and an input shape whose estimate is past a cap (sparse: counts)
PAST_THE_CAP = {
    "kplane": ({"n_clusters": 3, "subspace_dim": 2, "n_init": 10 ** 6}, (400, 6), False),
    "tsc": ({"n_clusters": 3, "subspace_dim": 2}, (40_000, 5), False),                 # n² inner products: memory
    "ssc": ({"n_clusters": 3, "subspace_dim": 2, "max_iter": 10 ** 9, "tol": 1e-300}, (400, 6), False),
    "lrr": ({"n_clusters": 3, "subspace_dim": 2, "max_iter": 10 ** 9, "tol": 1e-300}, (400, 6), False),
    "sulq_kplane": ({"n_clusters": 3, "subspace_dim": 2, "n_iter": 10 ** 8}, (400, 6), False),
    "sample_aggregate": ({"n_clusters": 3, "subspace_dim": 2, "solver": "ssc", "solver_params": {"max_iter": 10 ** 9}},
                         (2000, 6), False),
    "gibbs": ({"n_clusters": 3, "subspace_dim": 2, "n_iter": 10 ** 9}, (400, 6), False),
    "fast_taucc": ({"n_row_clusters": 3, "n_col_clusters": 3, "n_init": 10 ** 6}, (300, 200), True),
    "dp_taucc": ({"n_row_clusters": 3, "n_col_clusters": 3, "n_iter": 10 ** 7}, (300, 200), True),
    "kmeanspp": ({"n_clusters": 3, "n_init": 10 ** 6}, (400, 6), False),
    "candidate_kmeans": ({"n_clusters": 8, "radius": 1.0, "n_swaps": 100_000}, (20_000, 50), False),
    "candidate_sparse": ({"n_clusters": 8, "radius": 1.0, "n_swaps": 100_000, "sparsity": 10}, (20_000, 50), False),
    "candidate_kmedian": ({"n_clusters": 8, "radius": 1.0, "n_swaps": 100_000}, (20_000, 50), False),
    "sulq_kmeans": ({"n_clusters": 5000, "radius": 1.0, "n_iter": 1000}, (20_000, 100), False),
    "sa_kmeans": ({"n_clusters": 2, "radius": 1.0, "n_subsets": 20_000}, (40_000, 5), False),
    "dplloyd": ({"n_clusters": 3, "radius": 1.0, "n_iter": 10 ** 9}, (400, 6), False),
    "lsh_coreset": ({"n_clusters": 8, "radius": 1.0, "max_depth": 64, "min_points_in_node": 1, "n_init": 1000},
                    (20_000, 50), False),
    "dphd": ({"n_clusters": 8, "n_swaps": 100_000}, (20_000, 50), True),
    "dp_kmeans": ({"n_clusters": 3, "radius": 1.0, "nonnegative": True, "n_iter": 10 ** 9}, (400, 60), True),
    "dpnmf": ({"n_clusters": 3, "n_iter": 10 ** 7}, (300, 200), True),
}


def test_every_built_in_method_has_a_case_past_its_cap():
    built_in = {name for name, m in METHODS.items() if m.target.startswith("dpcore.")}
    assert built_in <= set(PAST_THE_CAP), f"add a case to PAST_THE_CAP for {sorted(built_in - set(PAST_THE_CAP))}"
    for name in built_in:
        assert work_model_of(get_method(name).cls) is not None, f"{name} has no work model"


@pytest.mark.parametrize("name", sorted(PAST_THE_CAP))
def test_past_the_cap_is_refused_before_any_value_is_read(name):
    params, (n, d), sparse = PAST_THE_CAP[name]
    X = nan_matrix(n, d, sparse)
    est = build(name, params, delta=1e-6 if get_method(name).takes_delta else None)
    plan = est.planned_work(X)
    assert plan is not None and not plan.within_caps
    with PrivacyAccountant() as acc, pytest.raises(WorkCapError, match=REFUSED) as err:
        est.fit(X)
    msg = str(err.value)
    assert "Nothing was run or spent" in msg and "cap" in msg
    assert f"{n:,} rows" in msg                       # the estimate is stated for this input
    assert not hasattr(est, "ledger_") and acc.events() == []
    with pytest.raises(ValueError, match=REFUSED):    # the planning the pages show beside Run says the same
        plan_run(name, est, X)


@pytest.mark.parametrize("name", sorted(PAST_THE_CAP))
def test_the_refusal_names_what_to_lower_and_its_advice_fits(name):
    params, (n, d), sparse = PAST_THE_CAP[name]
    X = nan_matrix(n, d, sparse)
    est = build(name, params, delta=1e-6 if get_method(name).takes_delta else None)
    with pytest.raises(ValueError, match=REFUSED) as err:
        check_work(est, X)
    msg = str(err.value)
    plan = planned_work(est, X)
    levers = plan.largest.levers if plan.work > MAX_WORK else plan.memory_levers
    for lever in levers:
        assert lever in msg
    for lever in levers:        # "lever at most N": N fits, N + 1 does not (what the page tells the user is true)
        found = re.search(rf"\b{lever} at most ([\d,]+)", msg)
        if found:
            value = int(found.group(1).rstrip(",").replace(",", ""))
            est_ok = est.__class__(**{**est.get_params(), lever: value})
            assert planned_work(est_ok, X).within_caps
            est_over = est.__class__(**{**est.get_params(), lever: value + 1})
            assert not planned_work(est_over, X).within_caps


# ----------------------------------------------------------------------------- the inputs that never ended
#: inputs measured to run for minutes or never end before the caps (n = 400 points of R^6, 2 cores): each is
#: refused now, before it starts
NEVER_ENDED = [
    ("kplane", {"n_clusters": 3, "subspace_dim": 2, "n_init": 10 ** 6}),
    ("ssc", {"n_clusters": 3, "subspace_dim": 2, "max_iter": 10 ** 9, "tol": 1e-300}),
    ("lrr", {"n_clusters": 3, "subspace_dim": 2, "max_iter": 10 ** 9, "tol": 1e-300}),
    ("sulq_kplane", {"n_clusters": 3, "subspace_dim": 2, "n_iter": 10 ** 8}),
    ("gibbs", {"n_clusters": 3, "subspace_dim": 2, "n_iter": 10 ** 9}),
    ("kmeanspp", {"n_clusters": 3, "n_init": 10 ** 6}),
    ("dplloyd", {"n_clusters": 3, "radius": 1.0, "n_iter": 10 ** 9}),
    ("dp_kmeans", {"n_clusters": 3, "radius": 1.0, "n_iter": 10 ** 9}),
    ("candidate_kmeans", {"n_clusters": 3, "radius": 1.0, "gamma": 1.0, "epsilon": 1e6, "max_depth": 60,
                          "n_repeats": 1000}),
]


@pytest.mark.parametrize("name,params", NEVER_ENDED, ids=[f"{n}-{sorted(p)[-1]}" for n, p in NEVER_ENDED])
def test_inputs_that_never_ended_are_refused(name, params):
    eps = params.pop("epsilon", 1.0) if "epsilon" in params else 1.0
    est = build(name, params, epsilon=eps, delta=1e-6 if get_method(name).takes_delta else None)
    with pytest.raises(ValueError, match=REFUSED):
        est.fit(nan_matrix(400, 6))


@pytest.mark.parametrize("name", ["dp_kmeans", "candidate_kmeans", "sulq_kmeans", "lsh_coreset", "dplloyd"])
@pytest.mark.parametrize("radius", [1e300, 1e-300])
def test_a_radius_whose_squares_overflow_is_refused(name, radius):
    """Λ = 1e300 made the row maps of DP-Lloyd loop for ever (every norm was inf); Λ = 1e-300 raised a
    RuntimeError from its start. Both are now refused by name."""
    X = np.random.default_rng(0).normal(size=(60, 4))
    est = build(name, {"n_clusters": 3, "radius": radius}, delta=1e-6 if get_method(name).takes_delta else None)
    with pytest.raises(ValueError, match="radius must be between 1e-100 and 1e[+]100"):
        est.fit(X)


@pytest.mark.parametrize("eps", [1e-3, 1e100])
def test_the_lsh_calibration_refuses_an_epsilon_it_cannot_handle_in_words(eps):
    """dp-accounting raised its own NoBracketIntervalFoundError at ε = 0.001 (the k-means page's
    smallest ε) and an OverflowError at ε = 1e100."""
    from dpcore.kmeans.lsh_coreset import calibrate_lsh_noise
    with pytest.raises(ValueError, match=re.escape(f"epsilon = {eps:g} is too ") + "(small|large) for the LSH coreset"):
        calibrate_lsh_noise(eps, 1e-6)


# ----------------------------------------------------------------------------- the papers' and the app's settings
def _paper_runs():
    """(label, method, params, X or shape, ε, δ) of every fit of the papers' full reproductions."""
    runs = []
    S2 = SETTINGS["subspace-fig2"]["full"]
    panels = [(p, P["dataset"], P["gibbs_iter"]) for p, P in S2["panels"].items()]
    panels += [(f"d={d}", {**S2["d_scaling"]["dataset"], "d": d}, S2["d_scaling"]["gibbs_iter"])
               for d in S2["d_scaling"]["ds"]]
    for pname, spec, gibbs_iter in panels:
        shape = (spec["n"], spec["d"]) if spec["kind"] == "subspaces" else \
            (spec["subjects"] * spec["n_per_subject"], spec["d"])
        k, q = spec.get("k", spec.get("subjects")), spec.get("q", spec.get("pca_dim"))
        for lab in ("SuLQ-10", "SuLQ-50", "s.a. TSC", "s.a. SSC", "k-plane", "SSC"):
            p = preset(lab)
            runs.append((f"fig2 {pname} {lab}", p["name"], {**p["params"], "n_clusters": k, "subspace_dim": q}, shape,
                         1000.0, None))
        for init in ("random", "kplane"):
            runs.append((f"fig2 {pname} Gibbs {init}", "gibbs",
                         {"n_iter": gibbs_iter, "init": init, "n_clusters": k, "subspace_dim": q}, shape, 1000.0, None))
    S3 = SETTINGS["subspace-fig3"]["full"]
    for init in S3["inits"]:
        runs.append((f"fig3 Gibbs {init}", "gibbs", {"n_iter": S3["n_iter"], "n_chains": S3["n_chains"], "init": init,
                                                     "n_clusters": 3, "subspace_dim": 3},
                     (S3["dataset"]["n"], S3["dataset"]["d"]), 100.0, None))
    H = SETTINGS["highdim-fig2"]["full"]
    shape = (H["dataset"]["n"], H["dataset"]["d"])
    for k in H["ks"]:
        for lab in ("k-means++", "candidate set", "SuLQ k-means", "s.a. k-means", "DP-Lloyd", "LSH coreset"):
            p = preset(lab)
            runs.append((f"highdim k={k} {lab}", p["name"], {**p["params"], "n_clusters": k, "radius": 2.0}, shape,
                         H["k_eps"], H["delta"]))
    for eps in H["epsilons"]:
        for lab in ("candidate set", "candidate set + 8 SuLQ", "LSH coreset", "s.a. k-means"):
            p = preset(lab)
            for where, sh in (("mixture", shape), ("digits", (1797, 64))):
                runs.append((f"highdim {where} ε={eps} {lab}", p["name"],
                             {**p["params"], "n_clusters": H["eps_k"], "radius": 2.0}, sh, eps, H["delta"]))
    C2, C3 = SETTINGS["cocluster-fig2"]["full"], SETTINGS["cocluster-fig3"]["full"]
    from dpcore.lab.figures.cocluster import PEERS_FIG2, dpnmf_as_published
    for name in C2["datasets"]:
        ds = load_dataset(kind="cluto", name=name)
        k = len(np.unique(ds.labels))
        runs.append((f"co-clustering {name} DP-τCC", "dp_taucc", {"n_iter": max(C2["n_iter"], *C3["iterations"]),
                                                                  "n_row_clusters": k, "n_col_clusters": k},
                     ds.X, 1.0, None))
        runs.append((f"co-clustering {name} Fast-τCC", "fast_taucc", {"n_row_clusters": k, "n_col_clusters": k},
                     ds.X, 1.0, None))
        for lab in PEERS_FIG2:
            p = preset(lab)
            runs.append((f"co-clustering {name} {lab}", p["name"],
                         {**p["params"], "n_clusters": k, "radius": 1.0, "nonnegative": True}, ds.X, 1.0, 1e-5))
        a = dpnmf_as_published()
        runs.append((f"co-clustering {name} {a['label']}", a["name"], {**a["params"], "n_clusters": k}, ds.X, 1.0,
                     1e-5))
    return runs


PAPER_RUNS = _paper_runs()


def test_the_reproduction_covers_every_figure_with_runs():
    assert len(PAPER_RUNS) > 100
    assert {r[1] for r in PAPER_RUNS} >= {"gibbs", "ssc", "kplane", "sulq_kplane", "sample_aggregate", "kmeanspp",
                                          "candidate_kmeans", "sulq_kmeans", "sa_kmeans", "dplloyd", "lsh_coreset",
                                          "dp_taucc", "fast_taucc", "dphd", "dp_kmeans", "dpnmf"}


@pytest.mark.parametrize("run", PAPER_RUNS, ids=[r[0] for r in PAPER_RUNS])
def test_the_papers_full_settings_pass(run):
    label, name, params, X, eps, delta = run
    est = build(name, params, epsilon=eps, delta=delta)
    plan = est.planned_work(X)
    assert plan is not None and plan.within_caps, f"{label}: {plan and plan.as_rows()}"
    check_work(est, X)


def _app_runs():
    """Every catalogue preset with its dataset defaults on the datasets the app offers by default, and the
    Gibbs page's largest run on its default data (10,000 sweeps × 8 chains)."""
    runs = []
    points = {name: load_dataset(**PAPER_SPECS[name]) for name in ("fig2_middle", "yaleb_5", "gaussians", "digits",
                                                                  "lines_r3", "planes_r3", "circle")}
    counts = {"blocks": load_dataset(**PAPER_SPECS["blocks"]), "classic3": load_dataset(kind="cluto", name="classic3")}
    for lab in PRESETS:
        p = preset(lab)
        m = get_method(p["name"])
        pool = counts if m.family in ("cocluster", "documents") else points
        for dname, ds in pool.items():
            runs.append((f"{lab} on {dname}", m.build(ds, params=p["params"], epsilon=1.0, random_state=0), ds.X))
    ds = points["fig2_middle"]
    runs.append(("Gibbs page, 10,000 sweeps × 8 chains", build("gibbs", {"n_iter": 10_000, "n_chains": 8,
                                                                         "n_average": 100}), ds.X))
    return runs


APP_RUNS = _app_runs()


@pytest.mark.parametrize("run", APP_RUNS, ids=[r[0] for r in APP_RUNS])
def test_the_apps_presets_pass(run):
    label, est, X = run
    plan = est.planned_work(X)
    if plan is None:                 # the estimator itself refuses these data (e.g. too few rows for its subsets)
        return
    assert plan.within_caps, f"{label}: {plan.as_rows()}"


# ----------------------------------------------------------------------------- properties of the model
def _shape_estimator(draw_name, k, q, it, n, d):
    params = {"n_clusters": k, "subspace_dim": q, "n_row_clusters": max(k, 2), "n_col_clusters": max(k, 2),
              "radius": 1.0, "n_iter": it, "max_iter": it, "n_init": min(it, 1000)}
    return build(draw_name, params, delta=1e-6 if get_method(draw_name).takes_delta else None)


BUILT_IN = sorted(name for name, m in METHODS.items() if m.target.startswith("dpcore."))


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(name=st.sampled_from(BUILT_IN), n=st.integers(1, 10 ** 6), d=st.integers(1, 10 ** 4),
       k=st.integers(1, 500), q=st.integers(1, 50), it=st.integers(1, 10 ** 7))
def test_every_accepted_combination_is_under_the_caps(name, n, d, k, q, it):
    """Over the parameters that set the loops and the input's shape: whatever check_work accepts has a
    finite estimate under both caps, and whatever it refuses is past one of them."""
    est = _shape_estimator(name, min(k, n), min(q, max(d - 1, 1)), it, n, d)
    plan = planned_work(est, (n, d))
    if plan is None:
        return                       # a parameter the fit itself refuses for this shape
    assert all(math.isfinite(t.units) and t.units >= 0 for t in plan.terms)
    assert math.isfinite(plan.memory) and plan.memory > 0
    try:
        check_work(est, (n, d))
    except ValueError as exc:
        assert not plan.within_caps and "cap" in str(exc)
    else:
        assert plan.work <= MAX_WORK and plan.memory <= MAX_MEMORY


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(BUILT_IN), n=st.integers(50, 10 ** 5), d=st.integers(2, 2000), it=st.integers(1, 10 ** 4),
       more=st.integers(1, 10))
def test_more_iterations_or_rows_never_cost_less(name, n, d, it, more):
    """The estimate grows with every loop it counts: a larger iteration count or more rows is never cheaper."""
    base = planned_work(_shape_estimator(name, 3, 1, it, n, d), (n, d))
    longer = planned_work(_shape_estimator(name, 3, 1, it * (more + 1), n, d), (n, d))
    bigger = planned_work(_shape_estimator(name, 3, 1, it, n * (more + 1), d), (n * (more + 1), d))
    assume(base is not None and longer is not None and bigger is not None)
    assert longer.work >= base.work * (1 - 1e-12)
    assert bigger.work >= base.work * (1 - 1e-12) and bigger.memory >= base.memory * (1 - 1e-12)


def test_the_plan_reads_the_shape_only():
    """The same plan for the data, a NaN matrix of its shape and the shape itself (dense); a sparse
    matrix's plan also reads its number of stored entries, never a value."""
    X = load_dataset(**PAPER_SPECS["fig2_middle"]).X
    for name in ("ssc", "gibbs", "sample_aggregate", "candidate_kmeans"):
        est = build(name, {"n_clusters": 3, "subspace_dim": 3, "radius": 1.0}, delta=1e-6)
        plans = [planned_work(est, Z) for Z in (X, np.full(X.shape, np.nan), X.shape)]
        assert plans[0] == plans[1] == plans[2]
    A = load_dataset(kind="cluto", name="cstr").X
    B = A.copy()
    B.data[:] = np.nan
    est = build("dp_taucc", {"n_row_clusters": 4, "n_col_clusters": 4})
    assert planned_work(est, A) == planned_work(est, B)
    assert input_size(A) == (A.shape[0], A.shape[1], A.nnz, True)


def test_input_size_of_every_input_kind():
    import pandas as pd
    assert input_size(np.zeros((3, 4))) == (3, 4, 12, False)
    assert input_size([[1, 2], [3, 4], [5, 6]]) == (3, 2, 6, False)
    assert input_size(pd.DataFrame(np.zeros((5, 2)))) == (5, 2, 10, False)
    assert input_size((7, 8)) == (7, 8, 56, False)
    for bad in (None, np.zeros(3), np.zeros((0, 3)), np.zeros((3, 0)), (0, 4), "abc"):
        assert input_size(bad) is None


def test_the_caps_are_stated():
    assert CAPS["work"][0] == MAX_WORK and CAPS["memory"][0] == MAX_MEMORY
    from dpcore.subspace.gibbs import MAX_EPSILON_N
    assert CAPS["epsilon_n"][0] == MAX_EPSILON_N


@pytest.mark.filterwarnings("ignore:Theorem 3.1")
def test_a_fit_inside_a_fit_is_not_checked_again(monkeypatch):
    """Sample-and-aggregate runs its solver on every subset inside its own (checked) fit: the subsets'
    fits are part of its estimate and are not checked (nor refused) on their own."""
    import dpcore.privacy.accounting as accounting
    import dpcore.work as work
    X = load_dataset(**{**PAPER_SPECS["fig2_middle"], "n": 400}).X
    seen, real_check = [], work.check_work

    def spy(est, X):
        seen.append(type(est).__name__)
        return real_check(est, X)
    monkeypatch.setattr(work, "check_work", spy)
    monkeypatch.setattr(accounting, "check_work", spy)
    est = build("sample_aggregate", {"n_clusters": 3, "subspace_dim": 3, "solver": "kplane"}).fit(X)
    assert len(est.subset_subspaces_) >= 2 and seen == ["SampleAggregateSubspace"]
    seen.clear()
    build("kplane", {"n_clusters": 3, "subspace_dim": 3}).fit(X)       # on its own, the solver is checked
    assert seen == ["KPlane"]


# ----------------------------------------------------------------------------- a method of your own
class _Slow(BoundedWorkMixin, ClusterMixin, BaseEstimator):
    """A method of one's own: its fit is checked as soon as it declares its estimate."""

    def __init__(self, *, n_rounds=1, random_state=None):
        self.n_rounds = n_rounds
        self.random_state = random_state

    def _planned_work(self, n, d, nnz, sparse):
        return Work(n, d, nnz, sparse).add("rounds: n_rounds × n·d", 2.0 * self.n_rounds * n * d, "n_rounds").plan(
            "_Slow")

    def fit(self, X, y=None):
        self.labels_ = np.zeros(np.shape(X)[0], dtype=int)
        return self


def test_a_new_estimator_gets_the_check_by_declaring_its_estimate():
    X = np.zeros((100, 10))
    _Slow(n_rounds=10).fit(X)
    largest = int(MAX_WORK // (2.0 * 100 * 10))
    with pytest.raises(ValueError, match=rf"n_rounds at most {largest:,}"):
        _Slow(n_rounds=10 ** 9).fit(X)
    assert _Slow.fit.__name__ == "fit" and getattr(_Slow.fit, "_dpcore_bounded", False)


def test_register_work_model_declares_an_estimate_for_a_class_one_cannot_edit():
    class Other(BoundedWorkMixin, BaseEstimator):
        def __init__(self, *, size=1):
            self.size = size

        def fit(self, X, y=None):
            return self

    register_work_model(Other, lambda est, n, d, nnz, sparse: Work(n, d, nnz, sparse).hold(
        "a table of size × n", 8.0 * est.size * n, "size").plan("Other"))
    Other(size=10).fit(np.zeros((10, 2)))
    with pytest.raises(ValueError, match=r"too much memory.*size at most"):
        Other(size=10 ** 12).fit(np.zeros((10, 2)))


# ----------------------------------------------------------------------------- the sweep page says it before Run
def test_the_sweep_form_shows_a_refusal_beside_run_and_the_page_keeps_drawing():
    """The Privacy–utility page plans its sweep on every rerun (one ε, one trial): a run past the caps
    is named in the form's warning before Run is pressed, and the privacy box's plan does not raise."""
    from ui.sweep import apart_in_plan, build_sweep, plan_note
    spec = {"kind": "subspaces", "n": 20_000, "d": 10, "k": 3, "q": 3, "sigma": 0.1, "random_state": 0}
    ds = load_dataset(**spec)
    sweep = build_sweep(spec, ["SSC"], ["accuracy"], [1.0], 1, 3, 0)
    note = plan_note(sweep, ds, None)
    assert note.startswith("**Run sweep will be refused:**") and "SSC on 20,000 rows" in note
    assert apart_in_plan(sweep, ds, None) == {}
    small = build_sweep({**spec, "n": 600}, ["SSC"], ["accuracy"], [1.0], 1, 3, 0)
    assert plan_note(small, load_dataset(**{**spec, "n": 600}), None) is None
