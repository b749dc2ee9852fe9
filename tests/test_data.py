"""Datasets: the §5 generator, Yale B preprocessing, the shipped CLUTO matrices, clipping."""
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import dpcore
from dpcore.data import (CLUTO_NAMES, DATASETS, PAPER_SPECS, load_cluto, load_dataset, load_yaleb, make_block_matrix,
                         make_gaussian_mixture, make_union_of_subspaces)
from dpcore.metrics import squared_distances_to_subspaces
from dpcore.preprocessing import clip_rows


@pytest.mark.parametrize("model", ["paper", "stochastic"])
def test_points_lie_within_sigma_noise_of_their_subspace(model):
    n, d, k, q, sigma = 3000, 10, 3, 3, 0.1
    ds = make_union_of_subspaces(n, d, k, q, sigma, random_state=0, model=model, clip=False)
    var = sigma ** 2 if model == "paper" else sigma ** 2 / d
    r2 = squared_distances_to_subspaces(ds.X, ds.subspaces)[np.arange(n), ds.labels]
    # residual orthogonal to the subspace is Gaussian noise in d−q dims: r²/var ~ χ²_{d−q}
    dof = d - q
    assert abs(r2.mean() / var - dof) < 5 * np.sqrt(2 * dof / n)  # 5 standard errors of the mean
    # no point further than the (1 − 1e−6/n) quantile (union bound over the n points)
    assert r2.max() / var < stats.chi2.ppf(1 - 1e-6 / n, dof)
    # the in-subspace part has unit norm (y on the unit sphere): ‖proj‖² = 1 + χ²_q·var
    proj2 = np.sum(ds.X ** 2, axis=1) - r2
    assert abs(proj2.mean() - (1 + q * var)) < 5 * np.sqrt(2 * q / n) * var + 5 * 2 * np.sqrt(var / n)


def test_labels_are_uniform_over_clusters():
    n, k = 6000, 4
    ds = make_union_of_subspaces(n, 8, k, 2, 0.05, random_state=1)
    counts = np.bincount(ds.labels, minlength=k)
    # χ² goodness of fit to the uniform distribution; a 0.1 % level
    assert stats.chisquare(counts).pvalue > 1e-3
    assert ds.subspaces.shape == (k, 8, 2)
    assert np.allclose(np.einsum("kdi,kdj->kij", ds.subspaces, ds.subspaces), np.eye(2))


def test_clipping_to_the_unit_ball_is_reported():
    ds = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=0)
    assert np.linalg.norm(ds.X, axis=1).max() <= 1.0  # exactly, not up to rounding
    raw = make_union_of_subspaces(1000, 10, 3, 3, 0.1, random_state=0, clip=False)
    assert ds.extras["n_clipped"] == int((np.linalg.norm(raw.X, axis=1) > 1).sum()) > 0
    Xc, m = clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)
    assert m == 1 and np.allclose(Xc, [[0.6, 0.8], [0.3, 0.4]])


def test_same_seed_same_data():
    a = load_dataset("subspaces", n=50, d=5, k=2, q=2, sigma=0.1, random_state=3)
    b = make_union_of_subspaces(50, 5, 2, 2, 0.1, random_state=3)
    assert np.array_equal(a.X, b.X)


def test_gaussian_mixture_and_public_radius():
    ds = make_gaussian_mixture(4000, 20, 5, sigma=0.1, random_state=0)
    assert ds.X.shape == (4000, 20) and ds.centers.shape == (5, 20)
    resid = ds.X - ds.centers[ds.labels]
    assert abs(resid.std() - 0.1) < 0.005  # 80 000 N(0, 0.01) draws: SE of the sd ≈ 0.00025
    # the radius comes from the parameters: √d(box + 4σ)
    assert ds.extras["public_radius"] == pytest.approx(np.sqrt(20) * 1.4)


@pytest.mark.slow
def test_yaleb_preprocessing_matches_the_paper():
    ds = load_yaleb(subjects=5, random_state=0)
    assert ds.X.shape == (320, 50)
    assert np.array_equal(np.bincount(ds.labels), [64] * 5)
    Xa = ds.extras["X_affine"]
    for c in range(5):
        Z = Xa[ds.labels == c]
        s = np.linalg.svd(Z - Z.mean(0), compute_uv=False)
        # 9 non-zero singular values, the 10th at round-off level
        assert s[8] > 1e-3 and s[9] < 1e-10 * s[0]
    assert np.allclose(np.linalg.norm(ds.X, axis=1), 1.0)  # rows normalised (per-record)
    assert ds.extras["images"].shape == (320, 48, 42)


def test_yaleb_pixels_normalisation_uses_public_bound():
    ds = load_yaleb(subjects=[0, 1], n_per_subject=10, pca_dim=0, d=0, normalize="pixels")
    assert ds.X.shape == (20, 2016)
    assert np.linalg.norm(ds.X, axis=1).max() <= 1.0


# shapes, non-zeros and classes from shared/datasets/README.md (Table 1 of the co-clustering paper)
CLUTO_TABLE = {
    "classic3": (3891, 4303, 176347, 3), "cstr": (475, 1000, 15989, 4), "tr11": (414, 6429, 116613, 9),
    "tr41": (878, 7454, 171509, 10), "k1b": (2340, 10431, 334936, 6), "hitech": (2301, 10080, 331373, 6),
    "reviews": (4069, 18483, 758635, 5),
}


@pytest.mark.parametrize("name", CLUTO_NAMES)
def test_cluto_matrices_match_the_table(name):
    ds = load_cluto(name)
    n, m, nnz, classes = CLUTO_TABLE[name]
    assert ds.X.shape == (n, m)
    assert ds.X.nnz == nnz
    assert np.unique(ds.labels).size == classes and ds.labels.min() == 0 and ds.labels.size == n
    assert ds.X.data.min() >= 1 and np.all(ds.X.data == np.round(ds.X.data))  # positive integer counts


def test_the_real_data_ships_inside_the_package():
    """The loaders read package data (importlib.resources), never the repository's sample_data/:
    every file they read is in dpcore/datasets/, and no library module names sample_data."""
    pkg = Path(dpcore.__file__).parent
    assert Path(str(DATASETS)) == pkg / "datasets"
    shipped = sorted(p.relative_to(pkg / "datasets").as_posix() for p in (pkg / "datasets").rglob("*.npz"))
    assert shipped == sorted([f"cluto/{name}.npz" for name in CLUTO_NAMES] + ["yaleb.npz"])
    library = [p for p in pkg.rglob("*.py") if p.relative_to(pkg).parts[0] not in ("lab", "plots")]
    assert [p for p in library if "sample_data" in p.read_text(encoding="utf-8")] == []


def test_block_matrix_has_its_blocks():
    ds = make_block_matrix(60, 40, 2, 2, signal=5, noise=0.5, random_state=0)
    A = ds.X.toarray()
    r, c = ds.labels, ds.extras["column_labels"]
    inside = A[(r[:, None] % 2) == c[None, :]].mean()
    outside = A[(r[:, None] % 2) != c[None, :]].mean()
    assert abs(inside - 5.5) < 0.2 and abs(outside - 0.5) < 0.1  # Poisson means, ≥ 1200 cells each


@pytest.mark.parametrize("call,word", [
    (lambda: make_union_of_subspaces(n=2, k=3), "n must be >= k"),
    (lambda: make_union_of_subspaces(d=3, q=3), "q must be < d"),
    (lambda: make_union_of_subspaces(sigma=-0.1), "sigma must be >= 0"),
    (lambda: make_union_of_subspaces(model="other"), "model must be 'paper' or 'stochastic'"),
    (lambda: make_gaussian_mixture(n=3, k=4), "n must be >= k"),
    (lambda: load_cluto("sports"), "name must be one of"),
    (lambda: load_dataset("mnist"), "kind must be one of"),
    (lambda: load_yaleb(subjects=40), r"subjects must be an integer in \[2, 31\]"),
    (lambda: load_yaleb(subjects=[10, 11]), "subjects"),  # subject 10 has only 60 images
    (lambda: clip_rows(np.ones((2, 2)), 0.0), "radius must be > 0"),
    (lambda: clip_rows(np.array([[np.nan, 1.0]]), 1.0), "finite"),
])
def test_bad_input_names_the_parameter(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_row_maps_dense_and_sparse_agree():
    import scipy.sparse as sp
    from dpcore.preprocessing import map_rows_to_ball, normalize_rows, truncate_rows_to_sparsity
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 6)) * rng.uniform(0.1, 5.0, size=(50, 1))
    X[3] = 0.0
    for radius in (1.0, 2.5):
        for row_map in ("normalize", "clip"):
            dense = map_rows_to_ball(X, radius, row_map)
            sparse = map_rows_to_ball(sp.csr_matrix(X), radius, row_map)
            assert np.allclose(dense, sparse.toarray())
            assert np.all(np.linalg.norm(dense, axis=1) <= radius)   # exactly, in floating point
        N = normalize_rows(X, radius)
        assert np.allclose(np.linalg.norm(N, axis=1)[np.arange(50) != 3], radius)
        assert not N[3].any()
    with pytest.raises(ValueError, match="row_map"):
        map_rows_to_ball(X, 1.0, "scale")
    Xs, n = truncate_rows_to_sparsity(X, 2)
    assert n == 49 and np.all(np.count_nonzero(Xs, axis=1) <= 2)


def test_dataset_kinds_change_only_by_explicit_registration():
    import subprocess
    import sys
    code = ("import dpcore.data as d, dpcore.upload\n"
            "assert 'upload' not in d.DATASET_KINDS, 'importing dpcore.upload changed DATASET_KINDS'\n"
            "dpcore.upload.register_upload_kind(); dpcore.upload.register_upload_kind()\n"
            "assert d.DATASET_KINDS['upload'] is dpcore.upload.load_registered_upload\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    from dpcore.data import DATASET_KINDS, register_dataset_kind
    with pytest.raises(ValueError, match="already registered"):
        register_dataset_kind("gaussians", lambda **p: None)
    assert "gaussians" in DATASET_KINDS


def test_spread_ball_fills_the_subspaces_and_keeps_everything_else():
    n, d, k, q = 4000, 6, 2, 2
    sphere = make_union_of_subspaces(n, d, k, q, 0.05, random_state=4, clip=False)
    ball = make_union_of_subspaces(n, d, k, q, 0.05, random_state=4, clip=False, spread="ball")
    assert np.array_equal(sphere.subspaces, ball.subspaces) and np.array_equal(sphere.labels, ball.labels)
    U = ball.subspaces[ball.labels]
    inside = lambda X: np.einsum("ndq,nd->nq", U, X)                   # coordinates in the own subspace
    off = lambda X: X - np.einsum("ndq,nq->nd", U, inside(X))
    assert np.allclose(off(sphere.X), off(ball.X))                     # the same noise off the subspace
    a, b = inside(sphere.X), inside(ball.X)
    # the same directions in the subspace, up to the noise (σ = 0.05, so a 0.3 margin is > 6σ)
    cos = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert np.median(cos) > 0.99
    # radii in the ball: r^q uniform on [0, 1] (r = |y| + noise of σ = 0.05 along the subspace: a loose KS bound)
    r = np.linalg.norm(b, axis=1)
    assert stats.kstest(np.clip(r, 0, 1) ** q, "uniform").statistic < 0.06
    assert ball.params["spread"] == "ball" and "spread over the unit ball" in ball.description
    with pytest.raises(ValueError, match="spread must be"):
        make_union_of_subspaces(10, 3, 1, 1, spread="cube")


def test_r3_presets_are_far_apart_and_separable_by_their_subspaces():
    from dpcore.metrics import squared_distances_to_subspaces
    for name, min_angle in (("lines_r3", 60), ("planes_r3", 80)):
        ds = load_dataset(**PAPER_SPECS[name])
        U = ds.subspaces
        if U.shape[2] == 1:
            dirs = U[:, :, 0]
        else:
            dirs = np.stack([np.cross(B[:, 0], B[:, 1]) for B in U])      # the planes' normals
        cos = np.abs(dirs @ dirs.T)[np.triu_indices(len(U), 1)]
        assert np.degrees(np.arccos(cos)).min() > min_angle
        # the nearest true subspace gives the class of > 95 % of the points; the rest lie near 0 / the common line
        nearest = squared_distances_to_subspaces(ds.X, U).argmin(axis=1)
        assert (nearest == ds.labels).mean() > 0.95


def test_load_dataset_enforces_the_form_limits_and_the_cell_cap():
    from dpcore.data import GENERATOR_LIMITS, MAX_DATA_SEED, MAX_GENERATED_CELLS
    hi = GENERATOR_LIMITS["subspaces"]["n"][1]
    with pytest.raises(ValueError, match=f"n must be an integer from 1 to {hi:,}; got {hi + 1}"):
        load_dataset(kind="subspaces", n=hi + 1, d=2, k=1, q=1)
    with pytest.raises(ValueError, match="sigma must be a number from 0 to 10; got inf"):
        load_dataset(kind="gaussians", sigma=float("inf"))
    with pytest.raises(ValueError, match=f"random_state must be an integer from 0 to {MAX_DATA_SEED:,}"):
        load_dataset(kind="blocks", random_state=MAX_DATA_SEED + 1)
    with pytest.raises(ValueError, match=f"at most {MAX_GENERATED_CELLS:,} cells"):
        load_dataset(kind="gaussians", n=hi, d=11)                      # each inside its limit, the product not
    # every limit lets the papers' settings through, and the generators called directly keep their own ranges
    for spec in PAPER_SPECS.values():
        load_dataset(**dict(spec, **({"n": 20} if "n" in spec else {})))
    assert make_union_of_subspaces(60, 3, 60, 1, random_state=0).n == 60   # k = 60 > the form's 50: allowed here


def test_clipping_explanation_says_why_in_words():
    from dpcore.data import clipping_explanation
    ds = load_dataset(**PAPER_SPECS["fig2_middle"])
    text = clipping_explanation(ds)
    assert text.startswith(f"{ds.extras['n_clipped']} of 1,000 points ({ds.extras['n_clipped'] / 10:.1f} %)")
    assert "σ = 0.1" in text and "length at most 1" in text and "spends no ε" in text
    assert "n_clipped" not in text
    assert clipping_explanation(make_union_of_subspaces(50, 5, 2, 2, 0.1, random_state=0, clip=False)) is None


def test_digits_are_in_the_public_ball_of_radius_8():
    from dpcore.data import DIGITS_RADIUS
    ds = load_dataset(**PAPER_SPECS["digits"])
    assert ds.X.shape == (1797, 64) and ds.kind == "points" and ds.n_classes == 10
    assert ds.X.min() == 0.0 and ds.X.max() == 1.0                      # pixels 0..16 divided by 16
    assert ds.extras["public_radius"] == DIGITS_RADIUS == 8.0          # √64, fixed by the format
    assert np.linalg.norm(ds.X, axis=1).max() <= 8.0 and ds.extras["n_clipped"] == 0
    assert ds.extras["images"].shape == (1797, 8, 8)
    assert ds.params == {"kind": "digits"} and load_dataset(**ds.params).X.tobytes() == ds.X.tobytes()
