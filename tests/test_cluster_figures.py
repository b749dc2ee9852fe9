"""The Cluster page's figures (dpcore.plots.small_multiples, dpcore.plots.private_subspace),
without Streamlit."""
import numpy as np
import pytest

from dpcore.data import PAPER_SPECS, load_dataset
from dpcore.plots.private_subspace import released_subspaces_figure, sulq_trajectory
from dpcore.plots.small_multiples import match_labels, subspace_small_multiples
from dpcore.subspace.solvers import make_solver
from dpcore.subspace.sulq import SuLQKPlane


@pytest.fixture(scope="module")
def lines():
    ds = load_dataset(**PAPER_SPECS["lines_r3"])
    return ds, make_solver("kplane", 3, 1, random_state=0).fit(ds.X)


def test_match_labels_undoes_a_permutation_and_keeps_the_partition():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 4, 200)
    perm = np.array([2, 0, 3, 1])
    assert np.array_equal(match_labels(truth, perm[truth]), truth)
    noisy = perm[truth].copy()
    noisy[:20] = rng.integers(0, 4, 20)
    out = match_labels(truth, noisy)
    # the same partition (a bijection between old and new ids), renumbered to agree with the truth
    pairs = set(zip(noisy, out))
    assert len(pairs) == len(set(noisy)) == len({b for _, b in pairs})
    assert np.mean(out == truth) >= 0.85
    # more clusters than classes: the unmatched one gets a new id
    extra = np.r_[truth[:-1], 7]
    assert len(set(match_labels(truth, extra))) == len(set(extra))
    with pytest.raises(ValueError, match="same shape"):
        match_labels(truth, truth[:-1])


def test_small_multiples_one_panel_per_run_same_axes_one_legend(lines):
    ds, model = lines
    perm = np.array([1, 2, 0])
    panels = [dict(title=f"run {i}", labels=perm[model.labels_] if i else model.labels_,
                   subspaces=model.subspaces_) for i in range(4)]
    fig = subspace_small_multiples(ds.X, panels, true=ds.subspaces, reference=ds.labels, cols=3)
    assert [a.text for a in fig.layout.annotations] == ["run 0", "run 1", "run 2", "run 3"]
    assert {tr.scene for tr in fig.data} == {"scene", "scene2", "scene3", "scene4"}
    ranges = {tuple(getattr(fig.layout, s).xaxis.range) for s in ("scene", "scene2", "scene3", "scene4")}
    assert len(ranges) == 1                                   # the same axes in every panel
    names = [tr.name for tr in fig.data if tr.showlegend]
    assert len(names) == len(set(names))                      # each legend entry once
    # colours follow the class, not the panel's own numbering: panel 1's relabelled clusters get
    # the same colours as panel 0's
    colour = lambda scene: {tr.name: tr.marker.color for tr in fig.data
                            if tr.scene == scene and tr.name and tr.name.startswith("cluster")}
    assert colour("scene") == colour("scene2")
    with pytest.raises(ValueError):
        subspace_small_multiples(ds.X, [])


def test_small_multiples_in_two_dimensions_share_axes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    U = np.array([[[1.0], [0.0]], [[0.0], [1.0]]])
    fig = subspace_small_multiples(X, [dict(title="a", labels=np.arange(60) % 2, subspaces=U)] * 2, true=U)
    assert fig.layout.xaxis.range == fig.layout.xaxis2.range and fig.layout.xaxis.title.text == "x1"


def test_released_subspaces_figure_in_r3_raw_coordinates_and_a_short_title(lines):
    ds, model = lines
    fig = released_subspaces_figure(ds.X, model.subspaces_, true=ds.subspaces, labels=model.labels_,
                                    title="SuLQ k-plane")
    assert fig.layout.scene.xaxis.title.text == "x1"          # d = 3: no projection
    assert fig.layout.title.text.startswith("SuLQ k-plane<br><sup>")     # the note on its own line
    names = [tr.name for tr in fig.data if tr.showlegend is not False]
    assert any(n.startswith("true") for n in names) and any(n.startswith("released") for n in names)


def test_sulq_trajectory_has_axis_titles():
    ds = load_dataset(**PAPER_SPECS["planes_r3"])
    est = SuLQKPlane(n_clusters=2, subspace_dim=2, epsilon=100.0, n_iter=3, random_state=0).fit(ds.X)
    fig = sulq_trajectory(est, X=ds.X, true_subspaces=ds.subspaces)
    assert fig.layout.yaxis.title.text == "d_W" and fig.layout.yaxis2.title.text == "cost"
    assert fig.layout.xaxis2.title.text == "iteration"
    assert "epsilon" not in fig.layout.title.text and "ε" in fig.layout.title.text


def test_the_aggregation_map_of_a_run_with_another_k_leaves_the_truth_out():
    """k = 2 on data of 3 true subspaces: no d_W to the truth; the map is drawn without it (it raised
    'Us and Vs must have the same shape' on the Cluster page before)."""
    from dpcore.data import load_dataset
    from dpcore.plots.private_subspace import aggregation_map
    from dpcore.subspace.sample_aggregate import SampleAggregateSubspace
    ds = load_dataset(kind="subspaces", n=600, d=6, k=3, q=2, sigma=0.01, random_state=0)
    est = SampleAggregateSubspace(n_clusters=2, subspace_dim=2, epsilon=1.0, delta=1e-6, random_state=0).fit(ds.X)
    names = [t.name for t in aggregation_map(est, ds.subspaces).data]
    assert not any(n and n.startswith("true") for n in names)
    same_k = SampleAggregateSubspace(n_clusters=3, subspace_dim=2, epsilon=1.0, delta=1e-6, random_state=0).fit(ds.X)
    assert any(n and n.startswith("true") for n in (t.name for t in aggregation_map(same_k, ds.subspaces).data))
