"""Issue 23, "the smaller ones": DP-Lloyd's T from public inputs (both versions), the diffprivlib
peer seeded with full entropy, DP-τCC refusing non-integer counts, and one leak warning class
(PrivacyLeakWarning) with a warning when a k-means estimator's input looks scaled by statistics
of the data itself."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

from dpcore.lab.audit import RELATIONS
from dpcore.cocluster.dptaucc import DPTauCC, release_table
from dpcore.data import PAPER_SPECS, load_dataset, make_block_matrix, make_gaussian_mixture
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.kmeans import baselines
from dpcore.kmeans.baselines import DPLloydKMeans, diffprivlib_random_state
from dpcore.kmeans.common import DataDerivedRadiusWarning, data_scaling, resolve_radius
from dpcore.kmeans.dphd import DPHD
from dpcore.kmeans.dplloyd import (DEFAULT_ITERATIONS, SparseDPLloydKMeans, dplloyd_iterations,
                                   dplloyd_public_iterations)
from dpcore.kmeans.sample_aggregate import SampleAggregateKMeans

DPLLOYDS = [DPLloydKMeans, SparseDPLloydKMeans]


# ----------------------------------------------------------------------------- DP-Lloyd's T
@pytest.fixture(scope="module")
def mixture():
    """The k-means page's mixture shape of the issue: n = 2000, d = 10, k = 4."""
    return make_gaussian_mixture(n=2000, d=10, k=4, random_state=0).X


EPS_GAP = [10.1455, 10.147, 10.1485, 10.15]     # inside [10.1455, 10.1505)


def test_diffprivlibs_rule_separates_d_and_d_minus_a_row_in_the_issues_range():
    """The premise of the fix: at these ε diffprivlib's rule gives 3 iterations at n = 2000
    and 2 at n = 1999, so a T read off the data would tell D from D minus a row."""
    for eps in EPS_GAP:
        assert (dplloyd_iterations(eps, 2000, 10, 4), dplloyd_iterations(eps, 1999, 10, 4)) == (3, 2)


@pytest.mark.parametrize("cls", DPLLOYDS, ids=lambda c: c.__name__)
def test_d_and_d_minus_a_row_run_the_same_iterations(cls, mixture):
    for eps in EPS_GAP:
        kw = dict(n_clusters=4, epsilon=eps, radius=20.0, row_map="clip", random_state=1)
        a = cls(**kw).fit(mixture)
        b = cls(**kw).fit(mixture[1:])
        assert a.n_iter_ == b.n_iter_ == DEFAULT_ITERATIONS
        assert a.ledger_.entries == b.ledger_.entries        # the ledger shows nothing about n


@pytest.mark.parametrize("cls", DPLLOYDS, ids=lambda c: c.__name__)
def test_iterations_are_a_function_of_public_inputs_only(cls):
    """At ε = 100, d = 2, k = 2 diffprivlib's rule gives 2 at n = 10 and 7 at n = 400; the
    estimators run the public T whatever n is: the default, the rule at n_hint, or n_iter."""
    eps, d, k = 100.0, 2, 2
    assert dplloyd_iterations(eps, 10, d, k) != dplloyd_iterations(eps, 400, d, k)
    rng = np.random.default_rng(0)
    for n in (10, 50, 400):
        X = rng.uniform(-1, 1, (n, d))
        for kw, T in [({}, DEFAULT_ITERATIONS),
                      (dict(n_hint=5000), dplloyd_iterations(eps, 5000, d, k)),
                      (dict(n_hint=10), dplloyd_iterations(eps, 10, d, k)),
                      (dict(n_iter=5, n_hint=5000), 5)]:
            m = cls(n_clusters=k, epsilon=eps, radius=2.0, row_map="clip", random_state=0, **kw).fit(X)
            assert m.n_iter_ == T == dplloyd_public_iterations(eps, d, k, kw.get("n_iter"), kw.get("n_hint"))
            assert str(T) in m.ledger_.entries[0].note


def test_diffprivlib_runs_the_public_iterations(monkeypatch):
    """diffprivlib creates one count mechanism per iteration: count them, not just n_iter_."""
    baselines._load_diffprivlib()
    import diffprivlib.models.k_means as kmm
    made = []

    class Rec(kmm.GeometricFolded):
        def __init__(self, *a, **kw):
            made.append(kw["epsilon"])
            super().__init__(*a, **kw)

    monkeypatch.setattr(kmm, "GeometricFolded", Rec)
    X = np.random.default_rng(0).uniform(0, 1, (400, 2))
    DPLloydKMeans(n_clusters=2, epsilon=100.0, radius=2.0, n_iter=6, random_state=0).fit(X)
    assert len(made) == 6


@pytest.mark.parametrize("cls", DPLLOYDS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("kw,match", [(dict(n_iter=0), "n_iter"), (dict(n_hint=0), "n_hint"),
                                      (dict(n_iter=2.5), "n_iter")])
def test_bad_iteration_inputs_are_refused(cls, kw, match):
    with pytest.raises(ValueError, match=match):
        cls(n_clusters=2, radius=1.0, **kw).fit(np.ones((10, 2)))


@pytest.mark.parametrize("cls", DPLLOYDS, ids=lambda c: c.__name__)
def test_dplloyd_claims_add_remove(cls):
    assert cls.claimed_relation == "add_remove" and "add_remove" in RELATIONS
    assert "n_iter" in cls().get_params() and "n_hint" in cls().get_params()


# ----------------------------------------------------------------------------- diffprivlib's seed
class _Bytes:
    """A stand-in Generator whose ``bytes`` returns given bytes (and records the requests)."""

    def __init__(self, data):
        self.data, self.asked = data, []

    def bytes(self, n):
        self.asked.append(n)
        return self.data[:n]


def test_diffprivlib_state_uses_every_drawn_bit():
    """256 bits are drawn, and flipping any one of them (the lowest, one in the middle, the
    highest) changes diffprivlib's stream: a 31-bit seed would ignore all but 31."""
    base = bytes(32)
    ref = _Bytes(base)
    first = diffprivlib_random_state(ref).random_sample(4)
    assert ref.asked == [32]
    for bit in (0, 31, 32, 127, 128, 255):
        flipped = bytearray(base)
        flipped[bit // 8] ^= 1 << (bit % 8)
        assert not np.array_equal(diffprivlib_random_state(_Bytes(bytes(flipped))).random_sample(4), first), bit


def test_diffprivlib_gets_a_full_entropy_random_state_and_a_public_seed_reproduces(monkeypatch):
    seen = []
    make = baselines._fixed_split_class

    def spying():
        cls = make()

        class Spy(cls):
            def fit(self, X, y=None, sample_weight=None):
                rs = self.random_state
                seen.append((type(rs), rs.get_state()[1].copy() if isinstance(rs, np.random.RandomState) else rs))
                return super().fit(X)
        return Spy

    monkeypatch.setattr(baselines, "_fixed_split_class", spying)
    X = np.random.default_rng(0).uniform(0, 1, (300, 3))
    a = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=2.0, random_state=11).fit(X)
    b = DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=2.0, random_state=11).fit(X)
    assert [t for t, _ in seen] == [np.random.RandomState] * 2          # not an integer seed
    # its MT19937 state is the one made from 256 bits of our Generator seeded with the public seed
    expected = diffprivlib_random_state(np.random.default_rng(11)).get_state()[1]
    assert np.array_equal(seen[0][1], expected) and np.array_equal(seen[1][1], expected)
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)


# ----------------------------------------------------------------------------- DP-τCC integer counts
@pytest.fixture(scope="module")
def counts():
    return make_block_matrix(60, 40, 3, 3, signal=5.0, noise=0.5, random_state=0).X


@pytest.mark.parametrize("bump", [0.5, 1e-9])
@pytest.mark.parametrize("sparse", [True, False])
def test_dptaucc_refuses_non_integer_counts_and_says_how_to_fix_it(counts, bump, sparse):
    X = counts.toarray()
    X[3, 5] += bump
    with pytest.raises(ValueError, match=r"whole counts.*1 non-integer.*row 3, column 5|whole counts.*1 non-integer"
                                         r".*index 3, 5") as info:
        DPTauCC(n_row_clusters=2, n_col_clusters=2, n_iter=1, random_state=0).fit(sp.csr_matrix(X) if sparse else X)
    assert "Round the data to whole counts" in str(info.value)


def test_dptaucc_accepts_whole_counts_stored_as_floats(counts):
    m = DPTauCC(n_row_clusters=2, n_col_clusters=2, n_iter=1, random_state=0).fit(counts.astype(np.float64))
    assert np.all(m.T_ == np.round(m.T_))


def test_dptaucc_rounds_when_asked_and_says_so_on_the_ledger(counts):
    X = counts.toarray() + 0.3                      # every cell 0.3 above a whole count
    kw = dict(n_row_clusters=2, n_col_clusters=2, n_iter=1, random_state=4)
    m = DPTauCC(round_counts=True, **kw).fit(X)
    ref = DPTauCC(**kw).fit(counts)                 # the rounded matrix is the original counts
    assert np.array_equal(m.T_, ref.T_) and np.array_equal(m.row_labels_, ref.row_labels_)
    assert m.ledger_.entries[0].note.startswith("input rounded to whole counts")
    assert not ref.ledger_.entries[0].note.startswith("input rounded")
    assert m.ledger_.total() == ref.ledger_.total()
    with pytest.raises(ValueError, match="all zero"):
        DPTauCC(round_counts=True, **kw).fit(np.full((6, 6), 0.2))
    with pytest.raises(ValueError, match="round_counts must be True or False"):
        DPTauCC(round_counts="yes", **kw).fit(counts)


def test_release_table_refuses_a_non_integer_table():
    with pytest.raises(ValueError, match="whole counts"):
        release_table(np.array([[3.0, 2.25], [1.0, 0.0]]), 1.0, 0)
    T, _, _ = release_table(np.array([[3.0, 2.0], [1.0, 0.0]]), 1e6, 0)
    assert np.all(T == np.round(T))


def test_dptaucc_claims_one_cell_pm1():
    from dpcore.lab.audit import claimed_relation
    assert DPTauCC.claimed_relation == "cell_pm1" == claimed_relation("dp_taucc")
    assert "cell_pm1" in RELATIONS


def test_the_coclustering_pages_run_gives_a_value_error_on_a_non_integer_upload():
    """The page runs ``run_cocluster`` through ``run_guarded``, which shows a ValueError's words
    with ``st.error``: a non-integer upload must end there, not in a traceback."""
    from dpcore.upload import load_upload
    from ui.cocluster import run_cocluster

    class Bar:
        def progress(self, *a, **k):
            pass

    text = "\n".join(",".join(f"{v:g}" for v in row) for row in np.full((8, 6), 1.5)).encode()
    ds = load_upload("weights.csv", text, kind="counts")
    p = dict(epsilon=1.0, I=1, K0=2, L0=2, seed=0, n_init=1, fast=False, peers=[])
    with pytest.raises(ValueError, match="Round the data to whole counts"):
        run_cocluster(ds, dict(ds.params), p, Bar())


# ----------------------------------------------------------------------------- one leak warning class
def test_one_warning_class():
    assert issubclass(DataDerivedRadiusWarning, PrivacyLeakWarning) and issubclass(PrivacyLeakWarning, UserWarning)
    with pytest.warns(PrivacyLeakWarning, match="computed from the data"):
        resolve_radius("data", np.ones((3, 2)))


SCALED_EST = [
    ("DPLloydKMeans", lambda: DPLloydKMeans(n_clusters=3, epsilon=1.0, radius=5.0, row_map="clip", random_state=0)),
    ("SparseDPLloydKMeans", lambda: SparseDPLloydKMeans(n_clusters=3, epsilon=1.0, radius=5.0, row_map="clip",
                                                        random_state=0)),
    ("SampleAggregateKMeans", lambda: SampleAggregateKMeans(n_clusters=3, epsilon=1.0, radius=5.0, random_state=0)),
    ("DPHD", lambda: DPHD(n_clusters=3, epsilon=1.0, random_state=0)),
]


def _candidate():
    from dpcore.kmeans.candidate import CandidateKMeans
    return CandidateKMeans(n_clusters=3, epsilon=1.0, radius=5.0, random_state=0)


def _sulq():
    from dpcore.kmeans.sulq import SuLQKMeans
    return SuLQKMeans(n_clusters=3, epsilon=1.0, radius=5.0, n_iter=2, random_state=0)


SCALED_EST += [("CandidateKMeans", _candidate), ("SuLQKMeans", _sulq)]


@pytest.fixture(scope="module")
def points():
    return make_gaussian_mixture(n=600, d=4, k=3, random_state=3).X * 3.0 + 2.0


@pytest.mark.parametrize("name,make", SCALED_EST)
@pytest.mark.parametrize("scaler", [StandardScaler, MinMaxScaler], ids=lambda s: s.__name__)
def test_a_pipeline_with_a_fitted_scaler_warns(name, make, scaler, points):
    pipe = Pipeline([("scale", scaler()), ("km", make())])
    with pytest.warns(PrivacyLeakWarning, match=f"{name}: the input looks scaled by statistics of the data.*not "
                                                r"private.*public"):
        pipe.fit(points)


@pytest.mark.parametrize("name,make", SCALED_EST[:4] + [("CandidateKMeans", _candidate), ("SuLQKMeans", _sulq)])
def test_ordinary_data_does_not_warn(name, make, points):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        make().fit(points)
        make().fit(points / 10.0)           # a fixed, public transform: no warning


def test_data_scaling_patterns(points):
    assert data_scaling(points) is None
    assert data_scaling(StandardScaler().fit_transform(points)) == "standardised"
    assert data_scaling(StandardScaler().fit_transform(points.astype(np.float32)).astype(np.float64)) == "standardised"
    assert data_scaling(StandardScaler(with_mean=False).fit_transform(points)) == "unit variance"
    assert data_scaling(MinMaxScaler().fit_transform(points)) == "min-max"
    assert data_scaling(MinMaxScaler((-1, 1)).fit_transform(points)) == "min-max"
    assert data_scaling(MaxAbsScaler().fit_transform(points - 2.0)) == "max-abs"
    # a constant column (what the scalers leave as 0) does not hide the others
    Z = np.column_stack([StandardScaler().fit_transform(points), np.zeros(len(points))])
    assert data_scaling(Z) == "standardised"
    # sparse input
    assert data_scaling(sp.csr_matrix(StandardScaler(with_mean=False).fit_transform(points))) == "unit variance"


def test_data_scaling_leaves_unscaled_data_alone():
    rng = np.random.default_rng(0)
    assert data_scaling(rng.integers(0, 2, (200, 5)).astype(float)) is None         # 0/1 data
    assert data_scaling(rng.choice([-1.0, 1.0], (200, 5))) is None                   # ±1 data
    assert data_scaling(np.r_[0.0, rng.uniform(0, 1, 98), 1.0][:, None]) is None     # one column of proportions
    assert data_scaling(np.ones((5, 3))) is None and data_scaling(np.ones((1, 3))) is None
    assert data_scaling(rng.standard_normal((5000, 4))) is None      # mean ≈ 0, sd ≈ 1 only to ~1e-2
    for name in ("gaussians", "digits", "blocks", "fig2_middle", "yaleb_5"):
        assert data_scaling(load_dataset(**PAPER_SPECS[name]).X) is None, name
