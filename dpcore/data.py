"""Datasets: synthetic generators of the papers and loaders of the shipped real data.

Every generator/loader returns a :class:`Dataset`. Points are rows (``X`` is n×d); count
matrices are ``scipy.sparse`` CSR (documents × terms).

Norm bounds and privacy. The subspace algorithms assume ‖x‖ ≤ 1 and the k-means ones a
public radius Λ. Rescaling by a maximum *computed from the data* leaks privacy, so the
loaders only use public constants or per-record maps (normalising each row by its own
norm touches one record at a time and so reveals nothing about the others).
:func:`dpcore.preprocessing.clip_rows` enforces a public radius and reports how many rows it changed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
import math
import numbers

import numpy as np
import scipy.sparse as sp

from .validation import check_array, check_int, check_random_state, check_real
from .preprocessing import clip_rows, normalize_rows

__all__ = ["Dataset", "DATASETS", "CLUTO_NAMES", "make_union_of_subspaces", "make_gaussian_mixture",
           "make_block_matrix", "make_circle", "load_yaleb", "load_cluto", "load_digits", "DIGITS_RADIUS", "PAPER_SPECS", "random_subspaces", "data_rng", "DATA_STREAM",
           "orthonormal_basis", "load_dataset", "DATASET_KINDS", "register_dataset_kind",
           "MAX_DENSE_CELLS", "MAX_GENERATED_CELLS", "check_generated_size", "GENERATOR_LIMITS", "MAX_DATA_SEED",
           "check_spec_limits", "clipping_explanation"]

#: The real data shipped inside the package (``dpcore/datasets/``: ``cluto/<name>.npz`` and
#: ``yaleb.npz``), as an :mod:`importlib.resources` traversable: it reads the same from a source
#: tree, an installed wheel or a zip archive.
DATASETS = resources.files("dpcore.datasets")

#: Largest dense (numpy) matrix, in cells, that dpcore accepts or builds: 30 million cells =
#: 240 MB of float64. τCC refuses larger dense input (pass ``scipy.sparse``: every co-clustering
#: algorithm works on CSR); diffprivlib's KMeans only takes dense input and makes about 4 copies
#: at the peak (~1 GB): CLUTO classic3 (16.7 M), k1b (24.4 M) and hitech (23.2 M) fit, reviews
#: (75.2 M) does not.
MAX_DENSE_CELLS = 30_000_000
#: Largest generated dataset, in cells (n × d, or rows × columns): 10 million cells = 80 MB of
#: float64. The generators make a few temporary copies and every method at least one more, so
#: a request at the cap peaks below 1 GB; the papers' settings are far below it (Fig. 2:
#: 10 000 cells; the largest block matrix of the co-clustering paper: 4 million). The app's
#: links and forms are refused above it (a link could otherwise ask for 10⁷ × 2000 points).
MAX_GENERATED_CELLS = 10_000_000
#: Largest data seed (``random_state``) of a dataset spec: the Data page's seed inputs go this far.
MAX_DATA_SEED = 2**31 - 1
#: Limits (inclusive) of a generated dataset's parameters as a form or a link may ask for them:
#: the Data page's inputs use these numbers and :func:`load_dataset` refuses a spec outside
#: them, so that a link can never carry a value the form cannot show. Each is far above the
#: papers' settings; the product n × d (rows × columns) is further capped by
#: :data:`MAX_GENERATED_CELLS`. The generators called directly check only their natural
#: ranges and that cap.
GENERATOR_LIMITS = {
    "subspaces": {"n": (1, 1_000_000), "d": (1, 10_000), "k": (1, 50), "q": (1, 9_999), "sigma": (0.0, 10.0)},
    "gaussians": {"n": (1, 1_000_000), "d": (1, 10_000), "k": (1, 200), "sigma": (0.0, 10.0),
                  "center_box": (0.01, 100.0)},
    "circle": {"n": (2, 1_000_000), "sigma": (0.0, 10.0)},
    "blocks": {"n_rows": (2, 1_000_000), "n_cols": (2, 1_000_000), "k": (1, 50), "l": (1, 50),
               "signal": (0.0, 100.0), "noise": (0.0, 100.0)},
}
CLUTO_NAMES = ("classic3", "cstr", "tr11", "tr41", "k1b", "hitech", "reviews")

#: small specs (``load_dataset(**spec)``) of the papers' settings, shared by pages, presets and tests
PAPER_SPECS = {
    # subspace paper, Fig. 2 middle column and Fig. 3
    "fig2_middle": {"kind": "subspaces", "n": 1000, "d": 10, "k": 3, "q": 3, "sigma": 0.1, "random_state": 0},
    # subspace paper, §5: 5 random subjects of Extended Yale B, per-subject 9-D PCA, projected to d = 50
    "yaleb_5": {"kind": "yaleb", "subjects": 5, "n_per_subject": 64, "pca_dim": 9, "d": 50, "normalize": "rows",
                "random_state": 0},
    # for the classroom: subspaces students can see without a projection (d = 3); the points
    # fill each line / disc (spread="ball"): on the paper's unit sphere a line's points would be
    # two blobs at its ends and a plane's a ring. Data seed 10 draws subspaces far apart (lines
    # at 66°, 66° and 88° to each other, planes at 84°), so that they are told apart by eye;
    # seed 0 would put two lines and the two planes about 42° apart
    "lines_r3": {"kind": "subspaces", "n": 300, "d": 3, "k": 3, "q": 1, "sigma": 0.03, "spread": "ball",
                 "random_state": 10},
    "planes_r3": {"kind": "subspaces", "n": 400, "d": 3, "k": 2, "q": 2, "sigma": 0.03, "spread": "ball",
                  "random_state": 10},
    # subspace paper, Fig. 1 (d = 2, k = 2, q = 1): points evenly spaced on the unit circle, which no two lines
    # fit (n = 1000: enough for sample-aggregate's subsets); and for contrast two well-separated lines of R²
    # (data seed 6 draws them 83° apart; σ = 0.005 meets the paper's well-separation condition, Def. 3.2)
    "circle": {"kind": "circle", "n": 1000},
    "lines_r2": {"kind": "subspaces", "n": 1000, "d": 2, "k": 2, "q": 1, "sigma": 0.005, "spread": "ball",
                 "random_state": 6},
    # a strong synthetic co-clustering: 200 documents × 150 terms, 3×3 blocks
    "blocks": {"kind": "blocks", "n_rows": 200, "n_cols": 150, "k": 3, "l": 3, "signal": 5.0, "noise": 0.5,
               "random_state": 0},
    # a Gaussian mixture for k-means (the high-dimensional paper's synthetic data is 64 Gaussians in R^100)
    "gaussians": {"kind": "gaussians", "n": 5000, "d": 50, "k": 8, "sigma": 0.1, "center_box": 1.0, "random_state": 0},
    # real handwritten digits for k-means (the high-dimensional paper's Fig. 2(d) uses MNIST, not shipped here)
    "digits": {"kind": "digits"},
}


@dataclass
class Dataset:
    """One dataset as every page and estimator sees it.

    Attributes
    ----------
    name, description : short name and a one-line description for the UI.
    X : ndarray (n, d) of points as rows, or a scipy.sparse CSR count matrix.
    labels : ground-truth labels (n,) or None.  They are used for evaluation only.
    subspaces : true bases, shape (k, d, q), when known (synthetic data).
    centers : true centres, shape (k, d), when known (Gaussian mixture).
    kind : ``"points"`` or ``"counts"``.
    privacy_note : how the norm bound was obtained (public constant / per-record / none).
    extras : anything else (face images for display, intermediate stages, column labels).
    params : the small parameters that regenerate the dataset with :func:`load_dataset`.
    """
    name: str
    description: str
    X: object
    labels: np.ndarray | None = None
    subspaces: np.ndarray | None = None
    centers: np.ndarray | None = None
    kind: str = "points"
    privacy_note: str = ""
    extras: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of rows n."""
        return self.X.shape[0]

    @property
    def d(self) -> int:
        """Number of columns d."""
        return self.X.shape[1]

    @property
    def n_classes(self) -> int | None:
        """Number of distinct labels, or None without labels."""
        return None if self.labels is None else int(np.unique(self.labels).size)

    def summary(self) -> dict:
        """Facts for the UI: size, classes, sparsity or norms.

        Returns
        -------
        dict
            Label -> value: name, kind, rows, columns, classes; non-zeros, density and total
            count for sparse X, else the max and mean row norms; q when the subspaces are known.
        """
        s = {"name": self.name, "kind": self.kind, "rows (n)": self.n, "columns (d)": self.d,
             "classes": self.n_classes}
        if sp.issparse(self.X):
            s["non-zeros"] = int(self.X.nnz)
            s["density"] = float(self.X.nnz / (self.n * self.d))
            s["total count"] = float(self.X.sum())
        else:
            norms = np.linalg.norm(self.X, axis=1)
            s["max row norm"] = float(norms.max())
            s["mean row norm"] = float(norms.mean())
        if self.subspaces is not None:
            s["subspace dim (q)"] = int(self.subspaces.shape[2])
        return s


# ----------------------------------------------------------------------------- helpers
def orthonormal_basis(M: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the column space of a full-column-rank M: Gram–Schmidt, each
    projection applied twice ("twice is enough", Kahan–Parlett), with correctly rounded sums.

    The same bits on every CPU: products, differences, the square root and the division are
    correctly rounded IEEE operations, and every sum is :func:`math.fsum` (exactly rounded), so
    nothing depends on the order or width of a machine's vector instructions. (LAPACK's QR, used
    before, follows the BLAS kernel OpenBLAS picks for the CPU: the planted subspaces of one seed
    differed between machines.)

    Parameters
    ----------
    M : ndarray of shape (d, q)
        Full column rank.

    Returns
    -------
    ndarray of shape (d, q)

    Raises
    ------
    ValueError
        If a column of M lies in the span of the previous ones.
    """
    M = np.asarray(M, dtype=np.float64)
    basis = []
    for j in range(M.shape[1]):
        v = M[:, j].copy()
        for _ in range(2):
            for u in basis:
                v = v - math.fsum(np.multiply(u, v)) * u
        norm = math.sqrt(math.fsum(np.multiply(v, v)))
        if not norm > 0.0:
            raise ValueError("M must have full column rank")
        basis.append(v / norm)
    return np.stack(basis, axis=1) if basis else np.zeros((M.shape[0], 0))

def _row_norms(Y):
    """Euclidean norms of the rows of Y, the squares added in column order (the same bits on every
    CPU; a reduction's order can follow the machine's vector width)."""
    s = Y[:, 0] * Y[:, 0]
    for j in range(1, Y.shape[1]):
        s = s + Y[:, j] * Y[:, j]
    return np.sqrt(s)


#: spawn key of the data generators' random stream (see :func:`data_rng`)
DATA_STREAM = 0xDA7A


def data_rng(random_state) -> np.random.Generator:
    """The Generator of a data generator: an int seed ``s`` becomes
    ``SeedSequence(s, spawn_key=(DATA_STREAM,))``, a stream independent of the plain
    ``default_rng(s)`` that estimators use for the same int. Without it, "seed 0" on the
    Data page and "seed 0" of a method drew the same numbers: SuLQ's and k-plane's random,
    data-free start (``random_subspaces`` from ``default_rng(0)``) was exactly the planted
    subspaces of ``make_union_of_subspaces(random_state=0)``. None and Generators are used
    as they are (a shared Generator advances, so its draws are never repeated).

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValueError
        For any other type (see :func:`dpcore.validation.check_random_state`).
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(np.random.SeedSequence(int(random_state), spawn_key=(DATA_STREAM,)))
    return check_random_state(random_state)



def random_subspaces(k, d, q, random_state=None) -> np.ndarray:
    """k random q-dimensional subspaces of R^d as in §5 of the subspace paper: the column
    space of a d×q standard Gaussian matrix (uniform on the Grassmannian). Shape (k, d, q).

    Parameters
    ----------
    k : int
        Number of subspaces.
    d : int
        Ambient dimension.
    q : int ≤ d
        Subspace dimension.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional

    Returns
    -------
    ndarray of shape (k, d, q)
        Orthonormal bases.
    """
    rng = check_random_state(random_state)
    return np.stack([orthonormal_basis(rng.standard_normal((d, q))) for _ in range(k)])


def check_generated_size(n_rows, n_cols, names=("n", "d")):
    """Refuse a generated dataset of more than :data:`MAX_GENERATED_CELLS` cells, before any
    memory is allocated, with a ValueError naming the parameters and the cap."""
    if n_rows * n_cols > MAX_GENERATED_CELLS:
        raise ValueError(f"{names[0]} × {names[1]} must be at most {MAX_GENERATED_CELLS:,} cells (80 MB); got "
                         f"{names[0]}={n_rows:,}, {names[1]}={n_cols:,} ({n_rows * n_cols:,} cells)")


def _check_nkd(n, d, k):
    n = check_int(n, "n", 1)
    d = check_int(d, "d", 1)
    k = check_int(k, "k", 1)
    if n < k:
        raise ValueError(f"n must be >= k (at least one point per cluster); got n={n}, k={k}")
    check_generated_size(n, d)
    return n, d, k


# ----------------------------------------------------------------------------- synthetic
def make_union_of_subspaces(n=1000, d=10, k=3, q=3, sigma=0.1, random_state=None, model="paper",
                            clip=True, spread="sphere"):
    """Union of k random q-dimensional linear subspaces of R^d (§5 of the subspace paper).

    Each subspace is the column space of a d×q Gaussian matrix; labels are i.i.d. uniform
    over the k clusters (balanced in expectation); yᵢ is uniform on the unit sphere of R^q
    (``spread="sphere"``, the paper's model) and xᵢ = U_{zᵢ} yᵢ + wᵢ with

    - ``model="paper"`` (§5): wᵢ ~ N(0, σ² I_d);
    - ``model="stochastic"`` (§3.3): wᵢ ~ N(0, σ²/d · I_d), so ‖wᵢ‖ ≈ σ whatever d.

    With ``clip=True`` (default) points are clipped to the unit ball, the public bound every
    subspace algorithm assumes (the number clipped is in ``extras['n_clipped']``).

    ``spread="ball"`` draws yᵢ uniform in the unit *ball* of R^q instead (radius u^{1/q},
    u uniform): the points then fill the subspace's unit disc (a segment for q = 1) rather
    than its rim, which is what a picture of lines and planes in R³ needs (on the sphere a
    line's points are two blobs at ±u and a plane's a ring). Decision: the radii are drawn
    after everything else, so ``spread="sphere"`` gives the same data as before the option
    existed, and the two spreads share subspaces, labels, directions and noise.

    Parameters
    ----------
    n : int ≥ k, default 1000
        Number of points.
    d : int ≥ 1, default 10
        Ambient dimension.
    k : int ≥ 1, default 3
        Number of subspaces.
    q : int in [1, d − 1], default 3
        Subspace dimension.
    sigma : float ≥ 0, default 0.1
        Noise level.
    random_state : None, int or numpy.random.Generator, optional
        Seed of the data stream (:func:`data_rng`).
    model : {"paper", "stochastic"}, default "paper"
    clip : bool, default True
    spread : {"sphere", "ball"}, default "sphere"
        Where yᵢ lies in R^q: on the unit sphere (the paper) or in the unit ball.

    Returns
    -------
    Dataset
        Kind "points", with ``labels`` and ``subspaces``.

    Raises
    ------
    ValueError
        If a parameter is out of its range, n < k, n × d is above :data:`MAX_GENERATED_CELLS`,
        ``model`` or ``spread`` is unknown, or ``clip`` is not a bool.
    """
    n, d, k = _check_nkd(n, d, k)
    q = check_int(q, "q", 1)
    if q >= d:
        raise ValueError(f"q must be < d (a proper subspace of R^d); got q={q}, d={d}")
    sigma = check_real(sigma, "sigma", 0.0, None)
    if model not in ("paper", "stochastic"):
        raise ValueError(f"model must be 'paper' or 'stochastic'; got {model!r}")
    if spread not in ("sphere", "ball"):
        raise ValueError(f"spread must be 'sphere' or 'ball'; got {spread!r}")
    if not isinstance(clip, (bool, np.bool_)):    # "no" (e.g. from a link) would be true
        raise ValueError(f"clip must be True or False; got {clip!r}")
    rng = data_rng(random_state)
    U = random_subspaces(k, d, q, rng)
    labels = rng.integers(0, k, size=n)
    Y = rng.standard_normal((n, q))
    Y /= _row_norms(Y)[:, None]
    noise_sd = sigma if model == "paper" else sigma / np.sqrt(d)
    W = noise_sd * rng.standard_normal((n, d))
    if spread == "ball":                      # drawn last: the sphere's data stay as they were
        u = rng.random(n)
        Y *= (u if q == 1 else np.sqrt(u) if q == 2 else u ** (1.0 / q))[:, None]
    # x = U_z y + w, summed over the q directions in a fixed order (einsum's and BLAS's order depends on
    # the CPU's vector instructions; elementwise products and sums do not)
    UL = U[labels]
    X = UL[:, :, 0] * Y[:, :1]
    for j in range(1, q):
        X = X + UL[:, :, j] * Y[:, j:j + 1]
    X = X + W
    n_clipped = 0
    if clip:
        X, n_clipped = clip_rows(X, 1.0)
    where = "on the unit sphere" if spread == "sphere" else "spread over the unit ball"
    kinds = {1: "lines", 2: "planes"}
    what = f"{k} random {q}-D subspaces" if d > 3 or q not in kinds else f"{k} random {kinds[q]} through 0"
    return Dataset(
        name=f"union of subspaces (n={n}, d={d}, k={k}, q={q}, σ={sigma:g})",
        description=f"{what} of R^{d}, {n} points {where} of each, Gaussian noise σ={sigma:g} ({model} model)",
        X=X, labels=labels, subspaces=U, kind="points",
        privacy_note=("points clipped to the public unit ball" if clip else "no norm bound enforced"),
        extras={"n_clipped": n_clipped},
        params=dict(kind="subspaces", n=n, d=d, k=k, q=q, sigma=sigma, model=model, clip=clip, spread=spread))


def make_gaussian_mixture(n=2000, d=10, k=4, sigma=0.1, center_box=1.0, random_state=None):
    """Mixture of k spherical Gaussians in R^d (the high-dimensional k-means paper, §7, uses
    64 Gaussians in R^100; the defaults here are small so that everything runs in seconds).

    Centres are uniform in the cube [−center_box, center_box]^d, labels uniform over k, and
    xᵢ = c_{zᵢ} + N(0, σ² I_d). ``extras['public_radius']`` is a radius derived from the
    generator's parameters only (√d·center_box + 4σ√d), never from the points.

    Parameters
    ----------
    n : int ≥ k, default 2000
    d : int ≥ 1, default 10
    k : int ≥ 1, default 4
    sigma : float ≥ 0, default 0.1
    center_box : float > 0, default 1.0
    random_state : None, int or numpy.random.Generator, optional
        Seed of the data stream (:func:`data_rng`).

    Returns
    -------
    Dataset
        Kind "points", with ``labels``, ``centers`` and ``extras['public_radius']``.

    Raises
    ------
    ValueError
        If a parameter is out of its range or n < k.
    """
    n, d, k = _check_nkd(n, d, k)
    sigma = check_real(sigma, "sigma", 0.0, None)
    center_box = check_real(center_box, "center_box", 0.0, None, low_inclusive=False)
    rng = data_rng(random_state)
    centers = rng.uniform(-center_box, center_box, size=(k, d))
    labels = rng.integers(0, k, size=n)
    X = centers[labels] + sigma * rng.standard_normal((n, d))
    radius = float(np.sqrt(d) * (center_box + 4.0 * sigma))
    return Dataset(
        name=f"Gaussian mixture (n={n}, d={d}, k={k})",
        description=f"{k} Gaussians in R^{d} with centres in [−{center_box:g}, {center_box:g}]^{d}, σ={sigma:g}",
        X=X, labels=labels, centers=centers, kind="points",
        privacy_note=f"public radius Λ = √d·(box + 4σ) = {radius:.3g} from the generator's parameters",
        extras={"public_radius": radius},
        params=dict(kind="gaussians", n=n, d=d, k=k, sigma=sigma, center_box=center_box))


def make_block_matrix(n_rows=200, n_cols=150, k=3, l=3, signal=5.0, noise=0.5, random_state=None):
    """Synthetic count matrix with k×l co-clusters, for teaching and tests.

    Row and column labels are uniform; cell (i, j) ~ Poisson(noise + signal·[r_i ≡ c_j mod l])
    so row cluster r is associated with column cluster r mod l (a diagonal block structure
    when k = l). Returns CSR counts; column labels are in ``extras['column_labels']``.

    Parameters
    ----------
    n_rows : int ≥ 2, default 200
    n_cols : int ≥ 2, default 150
    k : int in [1, n_rows], default 3
        Row clusters.
    l : int in [1, n_cols], default 3
        Column clusters.
    signal : float ≥ 0, default 5.0
    noise : float ≥ 0, default 0.5
    random_state : None, int or numpy.random.Generator, optional
        Seed of the data stream (:func:`data_rng`).

    Returns
    -------
    Dataset
        Kind "counts", ``X`` a CSR matrix, ``labels`` the row clusters.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    n_rows = check_int(n_rows, "n_rows", 2)
    n_cols = check_int(n_cols, "n_cols", 2)
    check_generated_size(n_rows, n_cols, ("n_rows", "n_cols"))
    k = check_int(k, "k", 1, n_rows)
    l = check_int(l, "l", 1, n_cols)
    signal = check_real(signal, "signal", 0.0, None)
    noise = check_real(noise, "noise", 0.0, None)
    rng = data_rng(random_state)
    rows = rng.permutation(np.arange(n_rows) % k)
    cols = rng.permutation(np.arange(n_cols) % l)
    rate = noise + signal * ((rows[:, None] % l) == cols[None, :])
    A = sp.csr_matrix(rng.poisson(rate).astype(np.float64))
    return Dataset(
        name=f"block matrix ({n_rows}×{n_cols}, {k}×{l} blocks)",
        description=f"Poisson counts with {k} row and {l} column clusters (signal {signal:g}, noise {noise:g})",
        X=A, labels=rows, kind="counts",
        privacy_note="counts; neighbouring matrices differ by 1 in one cell",
        extras={"column_labels": cols},
        params=dict(kind="blocks", n_rows=n_rows, n_cols=n_cols, k=k, l=l, signal=signal, noise=noise))


def make_circle(n=24, extra_angle=None, sigma=0.0, random_state=None):
    """Points evenly spaced on the unit circle of R² (Fig. 1 of the subspace paper, d = 2).

    Point i is at angle 360°·i/n; ``extra_angle`` adds one more point on the circle at that
    angle (the figure's cross: the neighbouring dataset that moves the optimal lines). With
    ``sigma`` > 0 each point gets Gaussian noise N(0, σ² I₂) and is clipped to the unit ball.
    The data have no planted subspaces and no classes: no two lines fit a circle (§3.2).

    Parameters
    ----------
    n : int ≥ 2, default 24
        Number of evenly spaced points.
    extra_angle : float in [0, 360), optional
        Angle in degrees of one additional point (the last row); None: none.
    sigma : float ≥ 0, default 0.0
        Noise level.
    random_state : None, int or numpy.random.Generator, optional
        Seed of the noise (:func:`data_rng`); unused when ``sigma`` = 0.

    Returns
    -------
    Dataset
        Kind "points", d = 2, no labels, no subspaces.

    Raises
    ------
    ValueError
        If ``n`` < 2, ``extra_angle`` is outside [0, 360) or ``sigma`` < 0.
    """
    n = check_int(n, "n", 2)
    check_generated_size(n + 1, 2)
    sigma = check_real(sigma, "sigma", 0.0, None)
    angles = 2.0 * np.pi * np.arange(n) / n
    if extra_angle is not None:
        extra_angle = check_real(extra_angle, "extra_angle", 0.0, 360.0, high_inclusive=False)
        angles = np.append(angles, np.radians(extra_angle))
    X = np.column_stack([np.cos(angles), np.sin(angles)])
    n_clipped = 0
    if sigma > 0:
        X = X + sigma * data_rng(random_state).standard_normal(X.shape)
        X, n_clipped = clip_rows(X, 1.0)
    more = "" if extra_angle is None else f", one more at {extra_angle:g}°"
    return Dataset(
        name=f"points on a circle (n={n}{more}" + (f", σ={sigma:g})" if sigma else ")"),
        description=f"{n} points evenly spaced on the unit circle of R²{more} (subspace paper, Fig. 1)"
                    + (f", Gaussian noise σ={sigma:g}" if sigma else "") + ": no two lines fit them well",
        X=X, kind="points", privacy_note="points on (or clipped to) the public unit circle",
        extras={"n_clipped": n_clipped},
        params=dict(kind="circle", n=n, extra_angle=extra_angle, sigma=sigma))


# ----------------------------------------------------------------------------- real data
def _read_npz(resource):
    """Every array of the shipped ``.npz`` file ``resource`` (a traversable of :data:`DATASETS`)."""
    with resource.open("rb") as f, np.load(f) as z:
        return {k: z[k] for k in z.files}


def _yaleb_raw():
    return _read_npz(DATASETS / "yaleb.npz")


def load_yaleb(subjects=5, n_per_subject=64, pca_dim=9, d=50, normalize="rows", random_state=None):
    """Extended Yale B faces with the preprocessing of §5 of the subspace paper.

    Parameters
    ----------
    subjects : int or sequence of int
        An int draws that many subjects at random (from ``random_state``) among the 31
        subjects that have 64 images; a sequence picks those subject indices (0..37).
    n_per_subject : int
        Images per subject (the first ones in file order); 64 gives the paper's n = 320.
    pca_dim : int
        Each subject is projected onto its own ``pca_dim``-dimensional affine subspace
        (its mean plus the top principal directions of its centred images). 0 skips it.
    d : int
        Final dimension after a random Gaussian projection R^2016 → R^d (entries
        N(0, 1/d)); 0 keeps the 2016 pixels.
    normalize : ``"rows"`` or ``"pixels"``
        ``"rows"`` scales every point to unit norm (a per-record map, so it leaks nothing
        and keeps linear subspaces); ``"pixels"`` only divides by the public pixel range
        255·√2016 times the public operator norm of the projection, so ‖x‖ ≤ 1 holds for
        raw images (not guaranteed after the affine projection, so rows are then clipped).
    random_state : None, int or numpy.random.Generator, optional
        Seed of the subject draw and the projection (:func:`data_rng`).

    The per-subject PCA uses the labels and the images: it is part of the dataset's
    definition, as in the paper, not a private step. Pixels are scaled by the public
    constant 1/255.

    Returns
    -------
    Dataset
        Kind "points", labels 0..(subjects − 1); ``extras`` holds the images, subject ids,
        the points before projection (``X_affine``) and ``n_clipped``.

    Raises
    ------
    ValueError
        If ``n_per_subject`` is not in [2, 64], ``pca_dim`` not in [0, n_per_subject − 1],
        ``d`` not in [0, 2016], ``normalize`` unknown, or ``subjects`` not a valid count or
        list of at least 2 distinct indices with enough images.
    """
    rng = data_rng(random_state)
    raw = _yaleb_raw()
    images, all_labels = raw["images"], raw["labels"].astype(int)
    counts = np.bincount(all_labels, minlength=38)
    n_per_subject = check_int(n_per_subject, "n_per_subject", 2, 64)
    pca_dim = check_int(pca_dim, "pca_dim", 0, n_per_subject - 1)
    d = check_int(d, "d", 0, images.shape[1] * images.shape[2])
    if normalize not in ("rows", "pixels"):
        raise ValueError(f"normalize must be 'rows' or 'pixels'; got {normalize!r}")
    if np.isscalar(subjects):
        eligible = np.flatnonzero(counts >= n_per_subject)
        n_sub = check_int(subjects, "subjects", 2, eligible.size)
        chosen = np.sort(rng.choice(eligible, size=n_sub, replace=False))
    else:
        chosen = np.asarray(subjects, dtype=int)
        if chosen.size < 2 or np.any(chosen < 0) or np.any(chosen > 37) or np.unique(chosen).size != chosen.size:
            raise ValueError("subjects must be an int or a list of at least 2 distinct subject indices in [0, 37]")
        if np.any(counts[chosen] < n_per_subject):
            raise ValueError(f"subjects must each have >= n_per_subject={n_per_subject} images; "
                             f"{[int(c) for c in chosen[counts[chosen] < n_per_subject]]} have fewer")
    idx = np.concatenate([np.flatnonzero(all_labels == s)[:n_per_subject] for s in chosen])
    pixels = images[idx].reshape(idx.size, -1).astype(np.float64) / 255.0
    labels = np.searchsorted(chosen, all_labels[idx])
    X = pixels.copy()
    if pca_dim > 0:
        for c in range(chosen.size):
            rows = labels == c
            mu = X[rows].mean(axis=0)
            _, _, Vt = np.linalg.svd(X[rows] - mu, full_matrices=False)
            V = Vt[:pca_dim].T
            X[rows] = mu + (X[rows] - mu) @ V @ V.T
    X_affine = X
    if d > 0:
        G = rng.standard_normal((X.shape[1], d)) / np.sqrt(d)
        X = X @ G
        op_norm = np.linalg.norm(G, 2)
    else:
        op_norm = 1.0
    n_clipped = 0
    if normalize == "rows":
        X = normalize_rows(X, 1.0)
        note = "each row scaled to unit norm (per-record, leaks nothing)"
    else:
        X = X / (np.sqrt(pixels.shape[1]) * op_norm)
        X, n_clipped = clip_rows(X, 1.0)
        note = "divided by the public constant √2016·‖G‖₂ and clipped to the unit ball"
    ids = [str(s) for s in raw["subject_ids"][chosen]]
    return Dataset(
        name=f"Extended Yale B ({chosen.size} subjects, d={X.shape[1]})",
        description=f"faces of {', '.join(ids)}: {idx.size} images, per-subject {pca_dim}-D affine PCA, "
                    f"random projection to d={X.shape[1]}",
        X=X, labels=labels, kind="points", privacy_note=note,
        extras={"images": images[idx], "subject_ids": ids, "X_affine": X_affine, "n_clipped": n_clipped},
        params=dict(kind="yaleb", subjects=subjects if np.isscalar(subjects) else list(map(int, chosen)),
                    n_per_subject=n_per_subject, pca_dim=pca_dim, d=d, normalize=normalize))


def load_cluto(name):
    """One of the seven CLUTO document-term matrices of the co-clustering paper (Table 1).

    Returns a Dataset whose ``X`` is a CSR matrix of float64 term counts and ``labels`` the
    0-based document classes. Term vocabularies are not available (terms are indices).

    Parameters
    ----------
    name : str
        One of :data:`CLUTO_NAMES`.

    Returns
    -------
    Dataset
        Kind "counts".

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`CLUTO_NAMES`.
    """
    if name not in CLUTO_NAMES:
        raise ValueError(f"name must be one of {', '.join(CLUTO_NAMES)}; got {name!r}")
    z = _read_npz(DATASETS / "cluto" / f"{name}.npz")
    X = sp.csr_matrix((z["data"].astype(np.float64), z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    labels = z["labels"].astype(int)
    return Dataset(
        name=f"CLUTO {name}", description=f"{name}: {X.shape[0]} documents × {X.shape[1]} terms, "
                                          f"{np.unique(labels).size} classes (term counts)",
        X=X, labels=labels, kind="counts", privacy_note="counts; neighbouring matrices differ by 1 in one cell",
        params=dict(kind="cluto", name=name))


#: Public radius of the digits: pixels scaled to [0, 1] by the format's maximum 16, so no image
#: of 64 pixels can be longer than √64 = 8 (see :func:`load_digits`).
DIGITS_RADIUS = 8.0


def load_digits():
    """scikit-learn's handwritten digits (UCI optdigits test set, shipped with scikit-learn: no
    network): 1797 images of 8 × 8 pixels, 10 classes (the digits 0-9), as points in R^64.

    Norm bound. Every pixel is an integer 0..16 by the format (each is a count of set pixels
    in a 4 × 4 block of the original 32 × 32 bitmap), so pixels are divided by the public
    constant 16 and every image lies in [0, 1]^64, hence in the ball of radius √64 = 8:
    ``extras["public_radius"] = 8`` (:data:`DIGITS_RADIUS`) is a bound fixed by the format,
    never read off the images, and no row is clipped. It is loose - the longest image has
    norm 4.8, the mean is 3.9 - but a tighter one would have to come from the data (the
    k-means methods' ``radius="data"``, which leaks). Scaling is the same constant for every
    record, so it costs nothing.

    Returns
    -------
    Dataset
        Kind "points", labels 0..9, ``extras`` with "public_radius" (8.0), "images"
        (1797 × 8 × 8, scaled) and "n_clipped" (0).
    """
    from sklearn.datasets import load_digits as _sk_digits
    raw = _sk_digits()
    X = raw.data.astype(np.float64) / 16.0
    return Dataset(
        name="digits (scikit-learn, 8×8)",
        description=f"{X.shape[0]} handwritten digits, 8 × 8 pixels scaled to [0, 1], 10 classes",
        X=X, labels=raw.target.astype(int), kind="points",
        privacy_note="pixels divided by the format's maximum 16: every image lies in the public ball of radius "
                     "√64 = 8",
        extras={"public_radius": DIGITS_RADIUS, "images": raw.images / 16.0, "n_clipped": 0},
        params=dict(kind="digits"))


# ----------------------------------------------------------------------------- registry
DATASET_KINDS = {
    "subspaces": make_union_of_subspaces,
    "gaussians": make_gaussian_mixture,
    "blocks": make_block_matrix,
    "circle": make_circle,
    "yaleb": load_yaleb,
    "cluto": load_cluto,
    "digits": load_digits,
}


def register_dataset_kind(kind, loader):
    """Make ``load_dataset(kind=kind, **params)`` call ``loader(**params)``.

    Importing a module never changes :data:`DATASET_KINDS`; a kind is added by this explicit
    call (e.g. :mod:`dpcore.upload` registers ``"upload"`` when an upload is loaded or
    registered). Registering the same loader twice is a no-op; a different loader for a
    kind already taken raises ``ValueError``.

    Parameters
    ----------
    kind : str
    loader : callable
        Called with the dataset parameters; returns a :class:`Dataset`.
    """
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"kind must be a non-empty string; got {kind!r}")
    if not callable(loader):
        raise ValueError(f"loader must be callable; got {type(loader).__name__}")
    if DATASET_KINDS.get(kind, loader) is not loader:
        raise ValueError(f"dataset kind {kind!r} is already registered")
    DATASET_KINDS[kind] = loader


def check_spec_limits(kind, params):
    """Refuse a spec whose parameters are outside :data:`GENERATOR_LIMITS` (or whose int seed
    is outside [0, :data:`MAX_DATA_SEED`]) with a ValueError naming the parameter and its
    range: the limits of the Data page's inputs, so that a link carries nothing the form
    cannot show. Kinds without limits (real data, uploads) pass; missing parameters take the
    generator's defaults, which are inside the limits.

    Parameters
    ----------
    kind : str
    params : dict
        The spec without ``kind``.

    Raises
    ------
    ValueError
        On the first parameter outside its range.
    """
    limits = dict(GENERATOR_LIMITS.get(kind, {}))
    seed = params.get("random_state")
    if (kind in GENERATOR_LIMITS or kind == "yaleb") and isinstance(seed, numbers.Real):
        limits["random_state"] = (0, MAX_DATA_SEED)       # an int seed (Generators and None pass)
    for name, (lo, hi) in limits.items():
        if name not in params:
            continue
        check = check_int if isinstance(lo, int) else check_real
        try:
            check(params[name], name, lo, hi)
        except ValueError:      # the same words with the bounds written out (never 2.14748e+09)
            what, span = ("an integer", f"{lo:,} to {hi:,}") if isinstance(lo, int) else ("a number", f"{lo:g} to {hi:g}")
            raise ValueError(f"{name} must be {what} from {span}; got {params[name]!r}") from None


def clipping_explanation(ds) -> str | None:
    """Why some rows of ``ds`` were clipped, in words a student follows (None when none was).

    The private subspace methods assume every point has norm at most 1, a bound fixed before
    the data are seen (public); the generator puts points on (or in) the unit sphere of their
    subspace and then adds noise, so many land just outside the ball and are shrunk back onto
    it. This is part of how the data are made, before any method sees them: not a release.

    Parameters
    ----------
    ds : Dataset

    Returns
    -------
    str or None
    """
    m = int(ds.extras.get("n_clipped") or 0)
    if m == 0:
        return None
    share = f"{m} of {ds.n:,} points ({100 * m / ds.n:.3g} %)"
    where = "at distance 1 from 0" if ds.params.get("spread", "sphere") == "sphere" else "within distance 1 of 0"
    why = {"subspaces": f"each point is drawn on its subspace {where} and then gets Gaussian noise "
                        f"(σ = {ds.params.get('sigma', 0):.3g}), which pushes {'many' if 5 * m > ds.n else 'some'} "
                        "of them a little beyond length 1",
           "yaleb": "the faces divided by the public pixel bound can still be longer than 1 after the "
                    "per-subject projection",
           "upload": "these rows of the file were longer than 1"}.get(ds.params.get("kind"), "these rows were "
                                                                                               "longer than 1")
    upload = ds.params.get("kind") == "upload"
    model = "you chose it when uploading" if upload else "the paper's data model"
    return (f"{share} lay outside the unit ball and were shrunk onto its surface (same direction, length 1). "
            f"Why: {why}. The private methods' guarantee assumes every point has length at most 1 — a bound "
            "fixed before anyone looks at the data — so the data are clipped to it first. This clipping is part "
            f"of how the dataset is made ({model}): it happens before any method runs, releases nothing and "
            "spends no ε.")


def load_dataset(kind, **params):
    """Build a dataset from small parameters (what the app caches on and what a
    "reproduce in Python" snippet calls). ``random_state`` may be given as an int.

    Parameters
    ----------
    kind : str
        A key of :data:`DATASET_KINDS`.
    **params
        Keyword arguments of that kind's generator or loader.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If ``kind`` is not registered, a parameter is outside :data:`GENERATOR_LIMITS`
        (:func:`check_spec_limits`), or the loader refuses ``params``.
    """
    if not isinstance(kind, str) or kind not in DATASET_KINDS:
        raise ValueError(f"kind must be one of {', '.join(DATASET_KINDS)}; got {kind!r}")
    loader = DATASET_KINDS[kind]
    _check_parameter_names(kind, loader, params)
    check_spec_limits(kind, params)
    return loader(**params)


def _check_parameter_names(kind, loader, params):
    """A ValueError naming the parameters ``loader`` does not take (Python's TypeError would say
    "make_gaussian_mixture() got an unexpected keyword argument")."""
    import inspect

    try:
        sig = inspect.signature(loader)
    except (TypeError, ValueError):       # a loader without a signature: it checks its own arguments
        return
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    known = [name for name, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = [name for name in params if name not in known]
    if unknown:
        raise ValueError(f"the dataset kind {kind!r} has no parameter{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}; its parameters are {', '.join(known)}")
