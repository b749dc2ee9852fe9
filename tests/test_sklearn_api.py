"""The scikit-learn API of every dpcore estimator (issue 24): ``score`` everywhere, ``predict``
where a model assigns new points, ``fit_predict``, ``clone``, a legacy ``RandomState``, float32
and DataFrame input, public imports from each subpackage, and ``GridSearchCV`` with default
scoring.

The estimators are found by walking dpcore's algorithm subpackages (kmeans, subspace,
cocluster), so a new estimator is covered without editing this file: it must have ``score``,
``fit_predict`` and ``predict``, or be listed in :data:`NO_PREDICT` with the reason.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV

import dpcore.cocluster
import dpcore.kmeans
import dpcore.subspace
from dpcore.metrics import kmeans_objective, kmedian_objective, squared_distances_to_subspaces
from dpcore.preprocessing import normalize_rows
from dpcore.validation import check_random_state

FAMILIES = {"kmeans": dpcore.kmeans, "subspace": dpcore.subspace, "cocluster": dpcore.cocluster}


def _walk():
    found = {}
    for family, package in FAMILIES.items():
        for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
            module = importlib.import_module(info.name)
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if (issubclass(obj, BaseEstimator) and obj.__module__ == module.__name__
                        and not obj.__name__.startswith("_")):
                    found[obj.__name__] = (family, obj)
    return dict(sorted(found.items()))


ESTIMATORS = _walk()
NAMES = list(ESTIMATORS)

#: The walk must find at least these.
KNOWN = {"CandidateKMeans", "CandidateKMedian", "DPHD", "SuLQKMeans", "SampleAggregateKMeans", "DPLloydKMeans",
         "SparseDPLloydKMeans", "KMeansPlusPlus", "SampleAggregateSubspace", "SuLQKPlane", "GibbsSubspaceClustering",
         "KPlane", "TSC", "SSC", "LRR", "FastTauCC", "DPTauCC", "DPNMF"}

_SPECTRAL = "transductive spectral method: its labels come from an affinity between the training points"
_COCLUSTER = ("co-clustering: the model is a pair of partitions of the fit's rows and columns, with no rule for "
              "a new row")
#: Estimators without ``predict``, and why. A new estimator without predict fails until listed.
NO_PREDICT = {
    "TSC": _SPECTRAL, "SSC": _SPECTRAL, "LRR": _SPECTRAL,
    "FastTauCC": _COCLUSTER, "DPTauCC": _COCLUSTER,
    "DPNMF": "its labels are read off the coefficients the run iterated for each training document",
}
#: ``predict`` on the training rows need not give ``labels_``.
PREDICT_IS_NOT_LABELS = {"GibbsSubspaceClustering": "labels_ is the sampled assignment z of eq. (10)"}
#: ``score`` is defined on a matrix of the fitted shape only (the model labels the fit's rows).
SCORE_ON_FITTED_SHAPE = {"FastTauCC", "DPTauCC", "DPNMF"}

#: Small, fast settings; everything else comes from BY_NAME, so a new estimator needs no entry.
FAST = {
    "KPlane": dict(n_init=1, max_iter=20),
    "SSC": dict(max_iter=50),
    "LRR": dict(max_iter=100),
    "SampleAggregateSubspace": dict(solver="kplane", solver_params={"n_init": 1}),
    "SuLQKPlane": dict(n_iter=3),
    "GibbsSubspaceClustering": dict(n_iter=5, n_average=2, engine="numpy"),
    "DPTauCC": dict(n_iter=1),
    "DPNMF": dict(n_iter=1, h_steps=10, w_steps=10),
    "SuLQKMeans": dict(n_iter=3),
    "KMeansPlusPlus": dict(n_init=1),
}
BY_NAME = dict(subspace_dim=1, n_row_clusters=2, n_col_clusters=2, epsilon=1e4, radius=2.0, random_state=0)
K = {"kmeans": 3, "subspace": 2, "cocluster": 2}


def _data(family):
    rng = np.random.default_rng(7)
    if family == "kmeans":                 # three tight blobs inside B(0, 2)
        centres = np.array([[0.8, 0.0, 0.2], [-0.6, 0.5, 0.0], [0.0, -0.7, 0.5]])
        return np.vstack([c + 0.05 * rng.standard_normal((20, 3)) for c in centres])
    if family == "subspace":               # two lines through 0 in R^3, inside the unit ball
        U = np.linalg.qr(rng.standard_normal((3, 2)))[0].T
        X = np.vstack([np.outer(rng.uniform(-0.9, 0.9, 30), u) for u in U])
        return X + 0.005 * rng.standard_normal(X.shape)
    A = rng.poisson(0.2, (30, 20)).astype(np.float64)     # counts with a 2 × 2 block structure
    A[:15, :10] += rng.poisson(5, (15, 10))
    A[15:, 10:] += rng.poisson(5, (15, 10))
    return A


DATA = {f: _data(f) for f in FAMILIES}


def make(name, **extra):
    family, cls = ESTIMATORS[name]
    params = inspect.signature(cls.__init__).parameters
    kw = {k: v for k, v in BY_NAME.items() if k in params}
    if "n_clusters" in params:
        kw["n_clusters"] = K[family]
    kw.update(FAST.get(name, {}))
    kw.update(extra)
    return cls(**kw)


def labels_of(est):
    return est.row_labels_ if hasattr(est, "row_labels_") else est.labels_


def fitted_output(est):
    for name in ("cluster_centers_", "subspaces_", "components_", "T_"):
        if hasattr(est, name):
            return np.asarray(getattr(est, name))
    raise AssertionError(f"{type(est).__name__}: no fitted output known to this test")


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ----------------------------------------------------------------------------- discovery and imports
def test_walk_finds_every_known_estimator():
    assert KNOWN <= set(ESTIMATORS), f"missing: {sorted(KNOWN - set(ESTIMATORS))}"


@pytest.mark.parametrize("name", NAMES)
def test_public_import_from_its_subpackage(name):
    family, cls = ESTIMATORS[name]
    package = FAMILIES[family]
    assert name in package.__all__ and getattr(package, name) is cls


def test_subpackage_imports_are_light():
    """Importing the three subpackages compiles nothing (numba), loads no peer library
    (diffprivlib: on first fit) and never the lab."""
    code = ("import sys, dpcore.kmeans, dpcore.subspace, dpcore.cocluster; "
            "print('numba' in sys.modules, 'diffprivlib' in sys.modules, 'dpcore.lab' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False"] * 3, out


# ----------------------------------------------------------------------------- which methods
@pytest.mark.parametrize("name", NAMES)
def test_score_fit_predict_and_predict_where_they_apply(name):
    _, cls = ESTIMATORS[name]
    assert callable(getattr(cls, "score", None)), f"{name} has no score"
    assert list(inspect.signature(cls.score).parameters)[:3] == ["self", "X", "y"]
    assert callable(getattr(cls, "fit_predict", None)), f"{name} has no fit_predict"
    if name in NO_PREDICT:
        assert not hasattr(cls, "predict"), f"{name} has predict now: take it off NO_PREDICT"
    else:
        assert callable(getattr(cls, "predict", None)), f"{name} has no predict: add it or list it in NO_PREDICT"


@pytest.mark.parametrize("name", NAMES)
def test_fit_predict_predict_and_score_on_the_training_data(name):
    family, _ = ESTIMATORS[name]
    X = DATA[family]
    est = make(name)
    with pytest.raises(NotFittedError):
        est.score(X)
    labels = quiet(est.fit_predict, X)
    assert labels.shape == (X.shape[0],) and np.issubdtype(labels.dtype, np.integer)
    np.testing.assert_array_equal(labels, labels_of(est))
    score = est.score(X)
    assert isinstance(score, float) and np.isfinite(score)
    if hasattr(est, "predict"):
        pred = est.predict(X)
        assert pred.shape == (X.shape[0],) and np.issubdtype(pred.dtype, np.integer)
        assert pred.min() >= 0 and pred.max() < fitted_output(est).shape[0]
        if name not in PREDICT_IS_NOT_LABELS:
            np.testing.assert_array_equal(pred, labels)
        np.testing.assert_array_equal(est.predict(X[::3]), pred[::3])      # row by row
        assert est.score(X[::3]) >= score                                  # a sum over fewer rows
    if name in SCORE_ON_FITTED_SHAPE:
        with pytest.raises(ValueError, match="fitted shape"):
            est.score(X[:-1])


def test_kmeans_scores_are_minus_the_objective_of_the_mapped_rows():
    X = DATA["kmeans"]
    for name, objective in (("CandidateKMeans", kmeans_objective), ("CandidateKMedian", kmedian_objective),
                            ("SuLQKMeans", kmeans_objective)):
        est = quiet(make(name, radius=5.0).fit, X)                # no row is clipped
        assert est.score(X) == pytest.approx(-objective(X, est.cluster_centers_), rel=1e-12)
    est = quiet(make("DPHD").fit, X)                               # documents: scored normalised
    assert est.score(X) == pytest.approx(-kmeans_objective(normalize_rows(X), est.cluster_centers_), rel=1e-12)
    est = quiet(make("CandidateKMeans", radius=0.5).fit, X)        # clipped as in fit
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    assert est.score(X) > -kmeans_objective(X, est.cluster_centers_)


def test_subspace_score_is_minus_the_summed_subspace_cost():
    X = DATA["subspace"]
    for name in ("KPlane", "SuLQKPlane", "TSC"):
        est = quiet(make(name).fit, X)
        assert est.score(X) == pytest.approx(-X.shape[0] * est.cost_, rel=1e-10)
    gibbs = quiet(make("GibbsSubspaceClustering").fit, X)
    d2 = squared_distances_to_subspaces(X, gibbs.subspaces_)
    assert gibbs.score(X) == pytest.approx(-d2.min(axis=1).sum())
    np.testing.assert_array_equal(gibbs.predict(X), d2.argmin(axis=1))


def test_cocluster_scores_are_their_objectives():
    A = DATA["cocluster"]
    fast = make("FastTauCC").fit(A)
    assert fast.score(A) == pytest.approx(fast.tau_rc_ + fast.tau_cr_)
    assert fast.score(A) > make("FastTauCC", random_state=1, max_iter=1, max_iter_per_mode=1).fit(A).score(A) - 1e-12
    nmf = quiet(make("DPNMF").fit, A)
    V = normalize_rows(A)
    direct = -0.5 * np.sum((V - nmf.coefficients_ @ nmf.components_) ** 2)
    assert nmf.score(A) == pytest.approx(direct, rel=1e-9)
    import scipy.sparse as sp
    assert nmf.score(sp.csr_matrix(A)) == pytest.approx(direct, rel=1e-9)


# ----------------------------------------------------------------------------- clone and random_state
@pytest.mark.parametrize("name", NAMES)
def test_clone_of_a_fitted_estimator_is_unfitted_with_the_same_parameters(name):
    family, _ = ESTIMATORS[name]
    est = quiet(make(name, random_state=np.random.RandomState(3)).fit, DATA[family])
    twin = clone(est)
    assert type(twin) is type(est) and not hasattr(twin, "n_features_in_")
    assert twin.get_params().keys() == est.get_params().keys()
    assert isinstance(twin.random_state, np.random.RandomState)


@pytest.mark.parametrize("name", NAMES)
def test_a_legacy_random_state_is_accepted_and_reproducible(name):
    family, _ = ESTIMATORS[name]
    X = DATA[family]
    a = quiet(make(name, random_state=np.random.RandomState(5)).fit, X)
    b = quiet(make(name, random_state=np.random.RandomState(5)).fit, X)
    np.testing.assert_array_equal(labels_of(a), labels_of(b))
    np.testing.assert_array_equal(fitted_output(a), fitted_output(b))


def test_check_random_state_seeds_a_generator_from_a_random_state():
    a, b = check_random_state(np.random.RandomState(0)), check_random_state(np.random.RandomState(0))
    assert isinstance(a, np.random.Generator) and a.integers(2 ** 62) == b.integers(2 ** 62)
    shared = np.random.RandomState(0)
    first, second = check_random_state(shared), check_random_state(shared)      # the RandomState advances
    assert first.integers(2 ** 62) != second.integers(2 ** 62)
    with pytest.raises(ValueError, match="RandomState"):
        check_random_state("seed")


# ----------------------------------------------------------------------------- dtype and feature names
#: The output that keeps float32 like scikit-learn's KMeans / NMF; the others stay float64.
FLOAT32_OUTPUT = {"cluster_centers_", "components_"}


@pytest.mark.parametrize("name", NAMES)
def test_float32_input(name):
    family, _ = ESTIMATORS[name]
    X = DATA[family]
    est32 = quiet(make(name).fit, X.astype(np.float32))
    est64 = quiet(make(name).fit, X.astype(np.float32).astype(np.float64))
    kept = [a for a in FLOAT32_OUTPUT if hasattr(est32, a)]
    for attr in kept:              # computed in float64, rounded to float32 at the end (post-processing)
        assert getattr(est32, attr).dtype == np.float32
        np.testing.assert_array_equal(getattr(est32, attr), getattr(est64, attr).astype(np.float32))
    if family == "subspace":
        assert est32.subspaces_.dtype == np.float64                  # orthonormal to 1e-6 (documented)
    np.testing.assert_array_equal(labels_of(est32), labels_of(est64))
    if hasattr(est32, "predict") and name not in PREDICT_IS_NOT_LABELS:
        np.testing.assert_array_equal(est32.predict(X.astype(np.float32)), labels_of(est32))
    assert np.isfinite(est32.score(X.astype(np.float32)))


@pytest.mark.parametrize("name", NAMES)
def test_dataframe_feature_names(name):
    family, _ = ESTIMATORS[name]
    X = DATA[family]
    columns = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=columns)
    est = quiet(make(name).fit, df)
    assert est.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(est.feature_names_in_, columns)
    assert est.feature_names_in_.dtype == object
    methods = ["score"] + (["predict"] if hasattr(est, "predict") else [])
    renamed = df.rename(columns={"f0": "other"})
    for method in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            getattr(est, method)(df)                                   # same names: no warning
        with pytest.raises(ValueError, match="feature names should match"):
            getattr(est, method)(renamed)
        with pytest.warns(UserWarning, match="does not have valid feature names"):
            getattr(est, method)(X)
        with pytest.raises(ValueError, match=f"is expecting {X.shape[1]} features"):
            quiet(getattr(est, method), df.iloc[:, :-1].to_numpy())
    quiet(est.fit, X)                                                  # refit without names
    assert not hasattr(est, "feature_names_in_")


# ----------------------------------------------------------------------------- model selection
def test_gridsearchcv_with_default_scoring():
    """Acceptance: GridSearchCV over ε with the estimator's own score (minus the k-means objective)."""
    X = DATA["kmeans"]
    search = GridSearchCV(dpcore.kmeans.CandidateKMeans(radius=1, n_clusters=3, random_state=0), {"epsilon": [1, 5]},
                          cv=2).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (2,) and np.all(np.isfinite(scores)) and np.all(scores <= 0)
    assert search.best_params_["epsilon"] in (1, 5)
    assert search.predict(X).shape == (X.shape[0],)


def test_gridsearchcv_fits_are_charged_to_the_active_accountant():
    from dpcore.privacy.accountant import PrivacyAccountant
    X = DATA["kmeans"]
    with PrivacyAccountant() as acc:
        search = GridSearchCV(dpcore.kmeans.CandidateKMeans(radius=1, n_clusters=3, random_state=0),
                              {"epsilon": [1, 5]}, cv=2).fit(X)
    assert len(acc.runs) == 2 * 2 + 1                           # 2 values × 2 folds + the refit
    best = search.best_params_["epsilon"]
    assert acc.basic_total()[0] == pytest.approx(2 * 1 + 2 * 5 + best)
    with PrivacyAccountant(budget_epsilon=3.0), pytest.raises(ValueError):
        GridSearchCV(dpcore.kmeans.CandidateKMeans(radius=1, n_clusters=3, random_state=0), {"epsilon": [1, 5]},
                     cv=2, error_score="raise").fit(X)
