"""Private subspace clustering by the exponential mechanism, sampled with Gibbs (§4).

The mechanism (eq. (10) of the subspace clustering paper) releases one sample of

    p(θ; X) ∝ exp(−(ε/2)·Σᵢ d²(xᵢ, S_{zᵢ})),   θ = (S₁..S_k, z₁..z_n),

which is ε-DP (Prop. 4.1) because the score Σᵢ d²(xᵢ, S_{zᵢ}) changes by at most 1 when
one point changes, *provided* ‖xᵢ‖ ≤ 1 (then every d² is in [0, 1]). Points are therefore
clipped to the public unit ball first (:func:`dpcore.preprocessing.clip_rows`) and the number
clipped is reported.

Exact sampling is replaced by a Gibbs sampler (§4.1) that alternates

- **z-step** (eq. (11)): every zᵢ independently from the categorical distribution
  ∝ exp(−(ε/2) d²(xᵢ, S_ℓ)), all points at once, drawn exactly (integer arithmetic on a public
  grid) so that no assignment ever has probability 0 whatever ε (see "Floating point" below);
- **U-step** (eq. (12)): every U_ℓ from the matrix Bingham distribution
  ∝ exp((ε/2)·tr(U_ℓᵀ A_ℓ U_ℓ)), A_ℓ = Σ_{zᵢ=ℓ} xᵢxᵢᵀ, B = (ε/2) I, by one sweep of Hoff's
  column-wise Gibbs scheme (App. D Alg. 3) with every column drawn *exactly* from its
  vector Bingham conditional (:mod:`dpcore.subspace.bingham`; ``column_sampler="hoff"``
  uses Alg. 4's coordinate sweep instead). All clusters and all chains are updated in one
  batched call.

Engines. ``engine="numba"`` (the default when numba is installed, see
:mod:`dpcore.subspace.gibbs_kernels`) runs blocks of sweeps in compiled kernels, the chains in
parallel threads (one thread when the caller wraps the fit in
:func:`dpcore.subspace.common.single_threaded`, as the reproduction's workers do), and draws
each column exactly by ACG with a Lanczos-shift + Cholesky envelope, falling back to one
after a tridiagonalisation; ``engine="numpy"`` is the batched numpy implementation (and the
fallback without numba). Both target the same law with the same
privacy accounting; for a fixed seed they give different draws (different random streams).

Chains can stick. From the random (private) start, chains at moderate-to-large ε may
settle in a wrong partition for thousands of sweeps (measured: docs/benchmarks.md, "Why
these defaults"). Several chains are the remedy offered: they make the problem visible in
R̂ and, with ``select="best_private"``, the best of them is released through another
exponential mechanism (paid for in the ledger). A data-dependent start is never passed off
as private.

Privacy, stated honestly (see the class docstring for what the ledger records):

- one sample is ε-DP only if it is an exact draw of eq. (10); a Gibbs chain gets there
  only asymptotically, which is why the mixing diagnostics matter;
- a data-dependent start (k-plane, SSC, LRR as in the paper) voids the guarantee: after
  finitely many sweeps the output still depends on a non-private computation;
- the traces, costs, R̂/ESS and verdict look at the raw data and at every sample of every
  chain: they are diagnostics for the teacher, not private releases;
- ``release="mean"`` publishes m consecutive samples of one chain (through their average),
  which costs ε + (m − 1)·(q + 3)ε/2, not m·ε and not (2m − 1)ε: see
  :func:`per_sweep_epsilon` for the bound on one sweep and its derivation.

Floating point. Eq. (10) gives every θ a positive density, and the privacy argument needs
that: an output of probability 0 on X and positive on a neighbour X′ has no finite ε. The
z-step is an exact finite exponential mechanism (:func:`_exact_z_step`,
:func:`dpcore.privacy.exact_choice.unit_range_plan`): the utilities ‖U_ℓᵀxᵢ‖² ∈ [0, 1] are
rounded to the grid 2⁻⁴² (they stay in [0, 1], so the z-step's privacy argument, which rests on
that range, costs nothing more), the scale is a dyadic η̃ ≤ ε/2, and the category is drawn with
integer arithmetic only (Canonne, Kamath & Steinke's Bernoulli(exp(−γ))): every category has a
positive probability, exactly as stated, for any ε. The U-step's acceptance tests use
exponentials of full relative precision, so each column draw is within e^(±2η_U) of the exact
draw on the same proposals (:func:`acceptance_test_error`). Together the executed chain is
within e^(±κ) of the ideal chain at scale 2η̃ for every path, and the fit lowers η̃ so that 2κ is
paid from ε (:func:`execution_plan`; the ledger's entry "float part of the sampler" holds it).
What stays float: the continuous values (float normals through float linear algebra; no exact
sampler of the Bingham law is known), see ``docs/privacy_as_executed.md``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..metrics import min_matching_cost, pairwise_subspace_distances
from ..validation import check_array, check_epsilon, check_int, check_random_state, check_subspaces, record_features
from ..preprocessing import clip_rows
from ..privacy import PrivacyLedger, PrivateEstimatorMixin, exponential_mechanism
from ..privacy.exact_choice import choice_pmf, sample_choices, unit_range_gaps, unit_range_plan
from .bingham import _complement, matrix_bingham_gibbs_sweep, random_stiefel
from .common import SubspacePredictMixin, single_threaded
from ..runtime import POLL_SECONDS, CancelToken, FitCancelled, current_token

__all__ = ["GibbsSubspaceClustering", "sample_assignments", "assignment_probabilities", "z_step_probabilities",
           "acceptance_test_error", "GibbsExecution", "execution_plan",
           "gibbs_sweep", "ENGINES", "per_sweep_epsilon", "mean_release_epsilon", "INITS", "RELEASES", "SELECTIONS",
           "MAX_CHAINS"]

INITS = ("random", "kplane", "ssc", "lrr")
PRIVATE_INITS = ("random",)
RELEASES = ("sample", "mean")
SELECTIONS = ("first", "best_private", "best")
MAX_CHAINS = 32
#: the largest ε·n the sampler takes: the Bingham conditionals' concentration grows like ε times the
#: points of a cluster, and beyond about 10¹² the float arithmetic of their rejection samplers cannot
#: represent the target any more (measured on n = 1000, d = 10: 20 sweeps took 0.01 s at ε = 10⁹, 13.5 s
#: at 3·10¹², and never finished at 10¹³). At such ε the exponential mechanism is an argmin in all but name.
MAX_EPSILON_N = 1e12
#: the smallest ε the sampler runs at: its z-step's exact grid needs the scale ε/2 ≥ 2⁻⁴²
MIN_EPSILON = 2.0 ** -41


def check_epsilon_scale(epsilon, n):
    """Refuse an ε whose ε·n exceeds :data:`MAX_EPSILON_N` (the sampler would run without end),
    or below :data:`MIN_EPSILON` (the exact z-step's scale ε/2 below its grid's 2⁻⁴²), in the
    words of the field: ValueError naming the range of ε for these n rows."""
    if epsilon < MIN_EPSILON:
        raise ValueError(f"epsilon = {epsilon:g} is too small for the Gibbs sampler: it must be at least "
                         f"{MIN_EPSILON:.2g} (2^-41), where the exact z-step's grid ends; at such ε every "
                         "partition is about equally likely anyway")
    if epsilon * n > MAX_EPSILON_N:
        raise ValueError(f"epsilon = {epsilon:g} is too large for the Gibbs sampler on {n:,} points: ε·n must be at "
                         f"most {MAX_EPSILON_N:.0e}, so epsilon at most {MAX_EPSILON_N / n:.3g} here. Beyond it the "
                         "exponential mechanism's target is numerically a single point (no privacy is left to "
                         "study) and its sampler cannot draw it: the run would not end")
_REORTHO_EVERY = 256   # QR clean-up of the bases (and their complements) every this many sweeps
_TRACE_BLOCK = 64      # sweeps whose sample-only traces are computed together


# ----------------------------------------------------------------------------- accounting
def per_sweep_epsilon(epsilon, subspace_dim):
    """Privacy loss of one Gibbs sweep's transition kernel: (q + 3)·ε/2.

    For neighbouring datasets X, X′ (one point replaced: x → x′, both clipped to ‖·‖ ≤ 1,
    n public) and any fixed path θ = (U, z) → θ′ = (U′, z′) with a fixed (data-independent)
    column order, the kernel of one sweep (z-step, then the U-step of every cluster with
    exact column draws) is a product of conditional densities, and only those involving
    the changed point differ between X and X′:

    - the z-step of that point, a softmax of utilities −(ε/2)d² with d² ∈ [0, 1]: the
      numerator moves by at most ε/2 and the normaliser by at most ε/2, so **≤ ε**;
    - the U-step of its new cluster ℓ = z′ᵢ (only A_ℓ contains the point; A − A′ = xxᵀ −
      x′x′ᵀ): column r is drawn on the unit sphere of the complement of the other q − 1
      columns with density exp((ε/2)uᵀA u)/Z, so its log-ratio is (ε/2)δ(u′_r) − log
      E_{X′}[exp((ε/2)δ(u))] with δ(u) = (xᵀu)² − (x′ᵀu)². The normaliser term is
      ≤ (ε/2)·max_u (x′ᵀu)² ≤ ε/2 for each column, and the numerator terms sum to
      (ε/2)(‖U′ᵀx‖² − ‖U′ᵀx′‖²) ≤ ε/2 *in total* because the new columns u′_r are
      orthonormal: **≤ (q + 1)ε/2**.

    Hence one sweep changes the probability of any path by at most e^((q+3)ε/2). (Bounding
    each column by ε separately gives the looser (q + 1)ε.) The bound is the supremum over
    all k: the exact worst case is ((k − 1)/k + (q + 1)/2)ε, approached as ε → 0 with many
    other points of cluster ℓ at x′ (2.67ε at k = q = 3; tests/test_gibbs_accounting.py
    computes the one-sweep log-ratio exactly and searches for its maximum). It holds for
    ``column_sampler="acg"`` (exact column draws); the ``"hoff"`` coordinate sweep draws a
    column in the eigenbasis of its data-dependent conditional and is not an exact draw, so
    no such bound is claimed for it (``release="mean"`` refuses it).

    Parameters
    ----------
    epsilon : float > 0
        The sampler's ε (the utility scale of eq. (10)).
    subspace_dim : int ≥ 1
        q, the dimension of each subspace.

    Returns
    -------
    float
        (q + 3)·ε/2.

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0 or ``subspace_dim`` < 1.
    """
    q = check_int(subspace_dim, "subspace_dim", 1)
    return 0.5 * (q + 3) * check_epsilon(epsilon)


def mean_release_epsilon(epsilon, subspace_dim, n_samples):
    """ε charged for releasing ``n_samples`` = m consecutive samples of one chain (or anything
    computed from them, e.g. their average): ε + (m − 1)·(q + 3)ε/2.

    The first sample is an exact draw of eq. (10) at stationarity (ε, Prop. 4.1); each of the
    m − 1 further sweeps multiplies the path density ratio by at most e^((q+3)ε/2)
    (:func:`per_sweep_epsilon`); the average is post-processing of the path.

    Parameters
    ----------
    epsilon : float > 0
        The sampler's ε.
    subspace_dim : int ≥ 1
        q.
    n_samples : int ≥ 1
        m, the number of consecutive samples released.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    m = check_int(n_samples, "n_samples", 1)
    return check_epsilon(epsilon) + (m - 1) * per_sweep_epsilon(epsilon, subspace_dim)


#: Safety factor of :func:`acceptance_test_error`: 2⁻⁴⁵ per unit of magnitude (about 2⁸ times
#: the few roundings and the one-ulp logarithms the test evaluates).
_TEST_ERROR_UNIT = 2.0 ** -45


def acceptance_test_error(epsilon, n, d):
    """η_U: a bound on how far one acceptance test of the U-step, as executed in float, is from the
    exact test on the same computed proposal (absolute, in the exponent).

    Each column draw of the U-step (ACG rejection, both engines) accepts a proposal when a
    standard exponential E is ≥ L = t − ½D·log(b + 2t) − ½(D − b) + ½D·log D, t = yᵀΛy ∈
    [0, t_max]. Executed, E is −log U for a uniform U of full relative precision (a 53-bit
    uniform would cap E at ≈ 36.7; ``gibbs_kernels._exponential``,
    ``bingham._full_exponentials``) and L is evaluated in float64. With ‖xᵢ‖ ≤ 1 the column
    conditional's matrix has λ_max ≤ (ε/2)·n, so t ≤ t_max = 1.01·εn/2 + 1 (the envelope's
    shift exceeds λ_max by at most 10⁻³ relative), D ≤ d, b ∈ (0, D]; every term of L and E
    has magnitude at most t_max, D·(1 + log(D + 2t_max)) or 64·ln 2 + E, and each is computed
    with a few correctly rounded operations and logarithms within one ulp. Hence
    |L̂ − L| + |Ê − E| ≤ 2⁻⁴⁵·(2 + 2t_max + d·(2 + log(d + 2t_max + 1))) =: η_U, with a
    factor of about 2⁸ to spare over the roundings counted.

    Parameters
    ----------
    epsilon : float > 0
    n, d : int
        Rows and columns of X.

    Returns
    -------
    float
    """
    t_max = 1.01 * 0.5 * float(epsilon) * n + 1.0
    return _TEST_ERROR_UNIT * (2.0 + 2.0 * t_max + d * (2.0 + math.log(d + 2.0 * t_max + 1.0)))


@dataclass(frozen=True)
class GibbsExecution:
    """How a Gibbs fit runs, and what its float part costs (:func:`execution_plan`).

    Attributes
    ----------
    scale : float
        η̃, the chain's scale (the z-step's and the U-step's B = η̃I): ε/2 lowered by the float
        part's slack and rounded down to 20 significant bits.
    zstep : UnitRangePlan
        The z-step's grid and integer scale.
    factor : float
        f: the released sample(s) of one chain cost ε·f (1 for ``release="sample"``,
        1 + (m − 1)(q + 3)/2 for the m samples of ``release="mean"``).
    kappa_z : float
        The z-step's part of κ: n·n_iter draws, each within e^(±η̃h) of the ideal (unrounded)
        conditional.
    kappa_u : float or None
        The U-step's part: n_iter·k·q column draws, each within e^(±2η_U) of the exact draw on
        the same computed proposals (:func:`acceptance_test_error`); None for
        ``column_sampler="hoff"`` (its 1-D samplers' float tests are not bounded).
    acceptance_error : float
        η_U.
    """
    scale: float
    zstep: object
    factor: float
    kappa_z: float
    kappa_u: object
    acceptance_error: float

    @property
    def kappa(self):
        """κ = κ_z + κ_U: one chain's executed law is within e^(±κ) of the ideal chain's (per path)."""
        return self.kappa_z + (self.kappa_u or 0.0)

    @property
    def ideal_epsilon(self):
        """2η̃·f: what the released sample(s) of one chain cost for the ideal chain at scale 2η̃."""
        return 2.0 * self.scale * self.factor


def execution_plan(epsilon, n, d, n_clusters, subspace_dim, n_iter, release="sample", n_average=1,
                   column_sampler="acg"):
    """The scale a Gibbs fit runs at so that its float part is paid from ε.

    The ideal chain (exact conditionals at scale 2η̃, exact arithmetic) is what the privacy
    analysis is about: the released sample(s) of one chain cost 2η̃·f (Prop. 4.1,
    :func:`mean_release_epsilon`). As executed, the z-step is an exact integer draw of the
    conditional with utilities rounded to a grid h (each draw's probabilities within e^(±η̃h)
    of the ideal conditional's) and each column draw of the U-step accepts a proposal with a
    probability within e^(±η_U) of the exact one, so the accepted law is within e^(±2η_U) of the
    exact draw on the same computed proposals. For any path of one chain (n_iter sweeps) the
    executed probability is within e^(±κ) of the ideal one, κ = n·n_iter·η̃h +
    n_iter·k·q·2η_U, and for neighbouring datasets the ratio of the executed laws is at most
    e^(2κ) times the ideal ratio. The scale is lowered so that 2η̃·f + 2κ ≤ ε·f: the ledger's ε
    is unchanged and covers the float part. (The continuous values themselves - normals
    through float linear algebra - are not covered: see ``docs/privacy_as_executed.md``.)

    Parameters
    ----------
    epsilon : float > 0
    n, d : int
        Rows and columns of X (public).
    n_clusters, subspace_dim, n_iter : int
        k, q and the sweeps per chain.
    release : {"sample", "mean"}, default "sample"
    n_average : int, default 1
        m for ``release="mean"`` (already capped by ``n_iter``).
    column_sampler : {"acg", "hoff"}, default "acg"

    Returns
    -------
    GibbsExecution

    Raises
    ------
    ValueError
        If the float part's slack would take all of ε (a run far too long for its ε).
    """
    eps = check_epsilon(epsilon)
    f = 1.0 if release == "sample" else 1.0 + (int(n_average) - 1) * (subspace_dim + 3) / 2.0
    eta_u = acceptance_test_error(eps, n, d)
    kappa_u = 2.0 * eta_u * n_iter * n_clusters * subspace_dim if column_sampler == "acg" else None

    def kappa(plan):
        return n * n_iter * plan.step + (kappa_u or 0.0)

    target = 0.5 * eps - kappa(unit_range_plan(0.5 * eps)) / f
    for _ in range(64):
        if not target > 0.0:
            break
        plan = unit_range_plan(target)
        if 2.0 * plan.scale * f + 2.0 * kappa(plan) <= eps * f:
            return GibbsExecution(plan.scale, plan, f, n * n_iter * plan.step, kappa_u, eta_u)
        target = plan.scale * (1.0 - 2.0 ** -15)
    raise ValueError(f"epsilon = {eps:g} is too small for {n_iter} sweeps on {n} points: the floating-point part of "
                     "the sampler would take all of it")


# ----------------------------------------------------------------------------- building blocks
def _exact_z_step(pn, plan, rng):
    """One exact z-step draw for every entry of pn (k, ...) = ‖U_ℓᵀxᵢ‖² (categories on the FIRST
    axis, see :func:`_projection_norms_lead`): P(zᵢ = ℓ) ∝ exp(η̃·h·round(pn_ℓᵢ/h)), the finite
    exponential mechanism of :func:`dpcore.privacy.exact_choice.unit_range_plan` (``plan``): the
    utilities rounded to the grid h = 2^−b and clamped to [0, 1], the weights exp(−Nℓ/2^s) with
    integer Nℓ, drawn by uniform proposals accepted with Canonne, Kamath & Steinke's exact
    Bernoulli(exp(−γ)) (:func:`dpcore.privacy.exact_choice.sample_choices`: ``Generator.integers``
    draws only). No assignment ever has probability 0, whatever ε. The numba engine
    (``gibbs_kernels._z_step``) computes the same integers Nℓ, so it samples the same law."""
    k = pn.shape[0]
    shape = pn.shape[1:]
    if k == 1:
        return np.zeros(shape, dtype=np.intp)
    N = unit_range_gaps(pn.reshape(k, -1), plan, axis=0)
    z = sample_choices(np.ascontiguousarray(N.T), plan.scale_shift, rng)
    return z.astype(np.intp).reshape(shape)


def z_step_probabilities(pn, epsilon):
    """The exact law of the z-step as executed, for (k, ...) projection norms pn = ‖U_ℓᵀxᵢ‖²
    (categories first): P(zᵢ = ℓ) ∝ exp(−Nℓ/2^s) (see :func:`_exact_z_step`), in float64.

    Parameters
    ----------
    pn : array_like of shape (k, ...)
        ‖U_ℓᵀxᵢ‖² in [0, 1].
    epsilon : float > 0
        The sampler's ε (the scale is ε/2 rounded down to 20 significant bits).

    Returns
    -------
    ndarray of float64 of shape (k, ...)
        Sums to 1 along the first axis.
    """
    plan = unit_range_plan(0.5 * check_epsilon(epsilon))
    pn = np.asarray(pn, dtype=np.float64)
    return np.moveaxis(choice_pmf(np.moveaxis(unit_range_gaps(pn, plan, axis=0), 0, -1), plan.scale_shift), -1, 0)


def _projection_norms(X, U):
    """‖U_ℓᵀ xᵢ‖² for a stack U (..., k, d, q): array (n, ..., k)."""
    return np.moveaxis(_projection_norms_lead(X, U), -1, 0)


def _projection_norms_lead(X, U, XT=None):
    """‖U_ℓᵀ xᵢ‖² with the points on the LAST axis: (..., k, n). Small axes lead so that
    the sums over q are additions of contiguous slices (numpy reduces a short trailing
    axis of a big array much more slowly; docs/benchmarks.md)."""
    lead = U.shape[:-2]
    d, q = U.shape[-2:]
    XT = X.T if XT is None else XT
    P = np.swapaxes(U, -1, -2).reshape(-1, d) @ XT            # (prod(lead)·q, n)
    P *= P
    P = P.reshape((-1, q, P.shape[-1]))
    S = P[:, 0].copy()
    for j in range(1, q):
        S += P[:, j]
    return S.reshape(lead + (P.shape[-1],))


def assignment_probabilities(X, subspaces, epsilon):
    """The z-step distribution of eq. (11): an (n, k) matrix of
    P(zᵢ = ℓ) ∝ exp(−(ε/2)·d²(xᵢ, S_ℓ)).

    For display and tests: as float64 numbers, probabilities below ~1e-308 (ε above ≈ 1400
    with ‖x‖ ≤ 1) print as 0. The sampler (:func:`sample_assignments`) does not use this
    function and never gives an assignment probability exactly 0; the law it draws exactly
    (the utilities on its grid, the scale rounded down) is :func:`z_step_probabilities`, within a
    relative 2⁻¹⁸·ε of this one.

    Parameters
    ----------
    X : array_like of shape (n, d)
        The points as rows.
    subspaces : array_like of shape (k, d, q)
        Orthonormal bases of the current subspaces.
    epsilon : float > 0

    Returns
    -------
    ndarray of shape (n, k)
        Rows sum to 1.

    Raises
    ------
    ValueError
        If X is not a finite 2-D array, ``subspaces`` are not orthonormal bases in R^d, or
        ``epsilon`` ≤ 0.
    """
    X = check_array(X)
    U = check_subspaces(subspaces, d=X.shape[1])
    epsilon = check_epsilon(epsilon)
    logits = 0.5 * epsilon * _projection_norms(X, U)           # −(ε/2)d² up to a per-row constant
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


def sample_assignments(X, subspaces, epsilon, random_state=None):
    """One z-step (eq. (11)) for all points at once; ``subspaces`` (k, d, q) or a stack of
    chains (C, k, d, q) (then the result is (C, n)).

    Parameters
    ----------
    X : array_like of shape (n, d)
        The points as rows.
    subspaces : array_like of shape (k, d, q) or (C, k, d, q)
        Orthonormal bases (not checked).
    epsilon : float > 0
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    ndarray of int of shape (n,) or (C, n)
        Cluster indices in [0, k).

    Raises
    ------
    ValueError
        If X is not a finite 2-D array or ``epsilon`` ≤ 0.
    """
    rng = check_random_state(random_state)
    X = check_array(X)
    epsilon = check_epsilon(epsilon)
    U = np.asarray(subspaces, dtype=np.float64)
    pn = _projection_norms_lead(X, U)                          # (k, n) or (C, k, n)
    return _exact_z_step(np.moveaxis(pn, -2, 0), unit_range_plan(0.5 * epsilon), rng)


def _sym_pack(d):
    """Indices of the upper triangle of a d×d matrix and the map back to the full matrix."""
    iu = np.triu_indices(d)
    full = np.empty((d, d), dtype=np.intp)
    full[iu] = np.arange(iu[0].size)
    full[iu[1], iu[0]] = np.arange(iu[0].size)
    return iu, full


def _outer_packed(X):
    """Upper triangles of xᵢxᵢᵀ, (n, d(d+1)/2), and the unpacking index (d, d)."""
    iu, full = _sym_pack(X.shape[1])
    return X[:, iu[0]] * X[:, iu[1]], full


def _cluster_scatter(XXp, full, z, k):
    """A_ℓ = Σ_{zᵢ=ℓ} xᵢxᵢᵀ for every chain: XXp (n, d(d+1)/2) packed outer products,
    z (C, n) -> (C·k, d, d) (one BLAS product with the one-hot matrix)."""
    C, n = z.shape
    onehot = (z[:, None, :] == np.arange(k)[:, None]).reshape(C * k, n).astype(np.float64)
    return (onehot @ XXp)[:, full]


def gibbs_sweep(X, U, epsilon, random_state=None, column_sampler="acg", engine="numpy"):
    """One full Gibbs sweep (z-step then U-step) for a stack of chains U (C, k, d, q).

    Returns ``(z, U)`` with z (C, n). Mostly for tests and teaching; the estimator runs the
    same steps with cached intermediate results.

    Parameters
    ----------
    X : array_like of shape (n, d)
        The points as rows (not checked; the estimator clips them to the unit ball).
    U : array_like of shape (C, k, d, q)
        Current orthonormal bases of every chain.
    epsilon : float
        The sampler's ε (not checked here).
    random_state : None, int or numpy.random.Generator, optional
    column_sampler : {"acg", "hoff"}, default "acg"
        How each column of the U-step is drawn (see
        :func:`dpcore.subspace.bingham.matrix_bingham_gibbs_sweep`).
    engine : {"numpy", "numba", "auto"}, default "numpy"
        As the estimator's ``engine`` (``"numba"`` needs numba and ``column_sampler="acg"``).

    Returns
    -------
    z : ndarray of int of shape (C, n)
        The new assignments.
    U : ndarray of shape (C, k, d, q)
        The new bases.
    """
    rng = check_random_state(random_state)
    X = np.asarray(X, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    C, k, d, q = U.shape
    if _resolve_engine(engine, column_sampler) == "numba":
        if column_sampler != "acg":
            raise ValueError("engine='numba' implements column_sampler='acg' only")
        Q = _kernels.full_basis(U)
        z, _, _, _ = _kernels.run(np.ascontiguousarray(X), Q, 0.5 * float(epsilon), q, 1, _kernels.seed_state(rng, C))
        return z, np.ascontiguousarray(Q[..., :q])
    plan = unit_range_plan(0.5 * float(epsilon))                 # the chain runs at η̃ = ε/2 rounded down
    z = _exact_z_step(np.moveaxis(_projection_norms_lead(X, U), 1, 0), plan, rng)   # (C, n)
    XXp, full = _outer_packed(X)
    A = _cluster_scatter(XXp, full, z, k)
    Unew = matrix_bingham_gibbs_sweep(A, U.reshape(C * k, d, q), plan.scale, rng, column_sampler)
    return z, Unew.reshape(C, k, d, q)


def _aligned_mean(samples, ref):
    """Average of subspace samples (m, k, d, q) after relabelling each to best match ``ref``
    (k, d, q): mean projection matrices, then their top-q eigenvectors. Returns (k, d, q)."""
    m, k, d, q = samples.shape
    _, pis = min_matching_cost(pairwise_subspace_distances(ref[None], samples, squared=True),
                               return_matching=True)                        # (m, k): ref ℓ ↔ sample π(ℓ)
    aligned = np.take_along_axis(samples, pis[:, :, None, None], axis=1)
    P = np.einsum("mkdi,mkei->kde", aligned, aligned) / m
    _, vecs = np.linalg.eigh(P)
    return np.ascontiguousarray(vecs[:, :, ::-1][:, :, :q])


def _accuracy_counts(z, y, k, n_classes):
    """Contingency tables (C, k, n_classes) of z (C, n) against the true labels y (n,)."""
    C, n = z.shape
    idx = (np.arange(C)[:, None] * (k * n_classes) + z * n_classes + y[None, :]).ravel()
    return np.bincount(idx, minlength=C * k * n_classes).reshape(C, k, n_classes)


# ----------------------------------------------------------------------------- engines
ENGINES = ("auto", "numba", "numpy")


class _KernelsProxy:
    """dpcore.subspace.gibbs_kernels, imported on first use (importing numba takes ~0.3 s)."""

    def __getattr__(self, name):
        from . import gibbs_kernels
        return getattr(gibbs_kernels, name)


_kernels = _KernelsProxy()


def _resolve_engine(engine, column_sampler="acg"):
    """The engine that runs: "numba" or "numpy" (see GibbsSubspaceClustering's ``engine``)."""
    if engine == "auto":
        if not (_kernels.AVAILABLE and column_sampler == "acg"):
            return "numpy"
        if _kernels.compiling() and not _kernels.ready():
            return "numpy"          # the app's warm-up thread is compiling the kernels: do not wait for it
        return "numba"
    return engine


def _run_numba(Xc, Uflat, Ucomp, C, k, sqn_mean, half, n_iter, rng, callback, report_every, B, cost, U_blk, z_blk,
               ring, m, flush, token=None):
    """The estimator's sweep loop on the compiled engine: blocks of sweeps (ending at every
    trace flush, progress report and re-orthonormalisation) run in one kernel call each.
    The kernels' random stream is seeded once from ``rng`` (see gibbs_kernels.seed_state).
    Chains run on gibbs_kernels.n_threads(C, outer_contexts=1) threads: fit's own
    single_threaded() is one context; a caller's around fit makes it one thread.
    With a cancel ``token`` (dpcore.runtime) the kernels read its flag at every sweep and each
    block is cut into calls of about POLL_SECONDS, between which the token is checked (the
    result does not depend on how the sweeps are split into calls: run_block).
    Returns (start time, Uflat (C·k, d, q), z (C, n))."""
    _kernels.warmup()                                                      # no-op once done in this process
    d, q = Uflat.shape[1:]
    Q = _kernels.full_basis(Uflat.reshape(C, k, d, q))                     # U⊥ the same on every CPU (not LAPACK's)
    X = np.ascontiguousarray(Xc, dtype=np.float64)
    state = _kernels.seed_state(rng, C)
    A, zprev, env, stats = _kernels.new_state(Q, X.shape[0], q)
    threads = _kernels.n_threads(C, outer_contexts=1)                      # fit's own single_threaded() is one
    prep = _kernels.prepare(X)
    store_z = z_blk is not None
    ends = set(range(B, n_iter + 1, B)) | set(range(_REORTHO_EVERY, n_iter + 1, _REORTHO_EVERY)) | {n_iter}
    if callback is not None:
        ends |= set(range(report_every, n_iter + 1, report_every))
    t0 = time.perf_counter()
    t = 0
    z = None
    flag = token.flag if token is not None else np.zeros(1, dtype=np.uint8)
    piece = 1                                                               # sweeps per call under a token
    for end in sorted(ends):
        while t < end:
            stop = end if token is None else min(end, t + piece)
            b = stop - t
            t_call = time.perf_counter()
            z, cst, Uh, zh = _kernels.run_block(X, float(sqn_mean), Q, A, zprev, env, stats, int(t), float(half),
                                                int(q), int(b), state, store_z, threads, prep, cancel=flag)
            if token is not None:
                if token.cancelled:
                    raise FitCancelled(done=t)
                per_sweep = (time.perf_counter() - t_call) / b
                piece = max(1, int(POLL_SECONDS / max(per_sweep, 1e-9)))
                token.check(done=stop)
            cost[:, t:stop] = cst
            j0 = t % B                                                      # blocks never cross a flush
            U_blk[j0:j0 + b] = Uh
            if store_z:
                z_blk[j0:j0 + b] = zh
            last = np.arange(max(t, stop - m), stop)                        # at most m: distinct slots
            ring[last % m] = Uh[last - t]
            t = stop
        if end % B == 0 or end == n_iter:
            flush(end, (end - 1) % B + 1)
        if end % _REORTHO_EVERY == 0:
            Q = _kernels.reorthonormalize(Q, q)                             # Householder QR, the same on every CPU
        if callback is not None and (end % report_every == 0 or end == n_iter):
            callback(end, n_iter)
    return t0, np.ascontiguousarray(Q[..., :q]).reshape(C * k, d, q), z


def _partial_traces(t, **traces):
    """The first t sweeps of the traces being filled (read-only views; cost clipped at 0, a
    copy, as ``traces_["cost"]``), for ``fit``'s ``trace_callback``."""
    out = {}
    for name, arr in traces.items():
        if arr is None:
            continue
        view = np.maximum(arr[:, :t], 0.0) if name == "cost" else arr[:, :t]
        view.flags.writeable = False
        out[name] = view
    return out


# ----------------------------------------------------------------------------- the estimator
class GibbsSubspaceClustering(SubspacePredictMixin, PrivateEstimatorMixin, ClusterMixin, BaseEstimator):
    """ε-DP subspace clustering by the exponential mechanism of eq. (10), sampled by Gibbs.

    ``predict`` assigns points to the nearest of the released sample's ``subspaces_`` (the
    private output, with either ``release``; NOT private as labels: it reads the raw points),
    so on the training rows it need not equal ``labels_``, the sampled assignment z.
    ``score`` is minus the subspace cost against ``subspaces_``.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of subspaces k (1 ≤ k ≤ n).
    subspace_dim : int, default=3
        Dimension q of every subspace (1 ≤ q < d).
    epsilon : float, default=1.0
        The ε > 0 of eq. (10): one exact sample is ε-DP.
    n_iter : int, default=1000
        Gibbs sweeps per chain (≥ 1; the paper runs 10,000).
    n_chains : int, default=1
        Independent chains run side by side, in [1, MAX_CHAINS] (= 32) (Fig. 3
        uses 8); more than one chain is what makes R̂ meaningful.
    init : {"random", "kplane", "ssc", "lrr"}, default="random"
        ``"random"`` (default, private: uniform random subspaces, independent of the
        data), or ``"kplane"``, ``"ssc"``, ``"lrr"`` - the non-private solutions the paper
        starts from. A non-private start voids the privacy guarantee (``is_private_`` is
        False and ``caveats_`` says why). k-plane runs once per chain with its own seed
        (so chains start apart); SSC/LRR run once and every chain starts there.
    release : {"sample", "mean"}, default="sample"
        ``"sample"`` (default) releases the last sample (subspaces and labels) of the
        selected chain; ``"mean"`` also releases ``subspaces_mean_``, the average of its
        last ``n_average`` samples (as reported in the paper's Fig. 2). Cost: see below.
        ``"mean"`` needs ``column_sampler="acg"``.
    n_average : int, default=100
        Number (≥ 1) of last samples averaged (at most ``n_iter`` are used).
    select : {"first", "best_private", "best"}, default="first"
        Which chain's sample is released when ``n_chains > 1``:
        ``"first"`` (default; chain 0, chosen before seeing the data: costs ε);
        ``"best_private"`` (the exponential mechanism picks a chain with utility
        −Σᵢ minℓ d²(xᵢ, S_ℓ), sensitivity 1: costs ε for the choice plus ε for *every*
        chain's sample it looked at); ``"best"`` (lowest raw cost: NOT private, flagged).
    column_sampler : {"acg", "hoff"}, default="acg"
        See :mod:`dpcore.subspace.bingham`.
        ``"hoff"`` is refused with ``release="mean"`` (ValueError): its column update is one
        coordinate sweep in the eigenbasis of the column's data-dependent conditional, not
        an exact draw from it, so the per-sweep bound of :func:`per_sweep_epsilon` (which
        multiplies exact conditionals along a fixed path) does not apply and no other bound
        is established.
    burn_in : int or None, default=None
        Sweeps discarded by the diagnostics, in [0, n_iter − 1]; None for n_iter // 2.
    engine : {"auto", "numba", "numpy"}, default="auto"
        How the sweeps are computed; all target the same law (eq. (10)) with the same
        privacy accounting. ``"numba"``: compiled kernels
        (:mod:`dpcore.subspace.gibbs_kernels`: blocks of sweeps in one call, chains in
        parallel threads, each column drawn exactly by ACG without an eigendecomposition),
        ``column_sampler="acg"`` only; ValueError if numba is not installed. ``"numpy"``:
        the batched numpy engine. ``"auto"``: ``"numba"`` when numba is importable and
        ``column_sampler="acg"``, else ``"numpy"`` (also while another thread, e.g. the app's
        warm-up, is compiling the kernels for the first time). For a fixed ``random_state`` each engine
        gives identical results from run to run, but the two engines give different draws
        (the numba kernels use their own xoshiro256** stream, seeded from the Generator).
        ``"numba"`` gives the same bits on every x86-64 CPU (with ``init="random"``; see
        docs/gibbs_engine.md, "The same bits on every CPU"); ``"numpy"`` calls BLAS and LAPACK,
        whose last bits depend on the CPU.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator for the initial subspaces, the sampler and the chain selection.

    Attributes
    ----------
    subspaces_ : ndarray of shape (k, d, q)
        The released sample's subspaces.
    labels_ : ndarray of int of shape (n,)
        The released sample's assignment z (part of the same sample θ of
        eq. (10), so under the same asymptotic guarantee; labels obtained by assigning the
        raw points to the released subspaces would not be private).
    subspaces_mean_ : ndarray of shape (k, d, q)
        Aligned average of the last ``n_average`` samples of the
        selected chain (released only when ``release="mean"``).
    traces_ : dict of str to ndarray of shape (n_chains, n_iter)
        ``"cost"`` (eq. (3) k-means subspace
        cost of each sample), ``"statistic"`` (§5 test statistic of the running mean of the
        bases), ``"dw"`` (d_W to the true subspaces, if given), ``"accuracy"`` (of z against
        true labels, if given), ``"moves"`` (how many points changed cluster in each sweep;
        the first sweep counts every point).
    chain_subspaces_ : ndarray of shape (n_chains, k, d, q)
        Final sample of every chain (diagnostics only).
    chain_labels_ : ndarray of int of shape (n_chains, n)
        Final assignment of every chain (diagnostics only).
    selected_chain_ : int
        Index of the released chain.
    cost_ : float
        Eq. (3) cost of ``subspaces_`` on the clipped data.
    cost_mean_ : float
        Mean over the last ``n_average`` samples of the released chain
        of the cost (the paper's reported number).
    dw_mean_ : float or None
        Mean over the last ``n_average`` samples of the released chain of d_W
        (the paper's reported number); None without ``true_subspaces``.
    n_clipped_ : int
        Number of rows clipped to the unit ball.
    n_iter_ : int
        Sweeps run per chain (= ``n_iter``).
    burn_in_ : int
        Sweeps discarded by the diagnostics.
    is_private_ : bool
        False with a non-private init or ``select="best"``.
    caveats_ : list of str
        Plain-words caveats for the UI.
    seconds_per_sweep_ : float
        Wall-clock time of one sweep (all chains together).
    engine_ : str
        The engine that ran, ``"numba"`` or ``"numpy"`` (see ``engine``).
    n_features_in_ : int
        d.
    feature_names_in_ : ndarray of str of shape (d,)
        Column names, when X is a DataFrame with string column names.
    ledger_ : PrivacyLedger
        See :class:`PrivateEstimatorMixin`.
    private_outputs_ : list of str
        See :class:`PrivateEstimatorMixin`.
    nonprivate_outputs_ : dict
        See :class:`PrivateEstimatorMixin`.

    Notes
    -----
    Vocabulary (as every dpcore estimator): ``n_iter`` is an *exact* number of iterations
    (every sweep runs, no early stopping; ``max_iter`` would be a cap with early stopping).
    A progress callback is an argument of :meth:`fit` (``fit(X, callback=f)``), never a
    constructor parameter, so that ``sklearn.base.clone`` and ``get_params`` see only data.

    **Privacy.** What the ledger records (documented decision):

    - ``release="sample"``, ``select="first"``: one entry of ε (Prop. 4.1).
    - ``release="mean"``: one entry of ε + (m − 1)·(q + 3)ε/2 for the m = ``n_average``
      consecutive samples (:func:`mean_release_epsilon`): the first is ε-DP at
      stationarity, and each later sweep's transition kernel changes the probability of a
      path by at most e^((q+3)ε/2) between neighbouring datasets (:func:`per_sweep_epsilon`:
      ε for the z-step of the changed point, ε/2 for each of the q column normalisers of
      its cluster's U-step and ε/2 for all the column numerators together, since the new
      columns are orthonormal), so the path - and its average - costs that much. The
      previous figure, (2m − 1)ε (an assumed e^(2ε) per sweep), was wrong for q > 1: the
      exact one-sweep loss reaches 2.67ε at k = q = 3. (m samples from m *independent*
      chains would cost m·ε by basic composition; consecutive samples of one chain are not
      independent mechanisms, so that cheaper figure would not be honest either.)
    - ``select="best_private"``: the above for every one of the C chains (all are looked
      at) plus ε for the choice (drawn exactly on a public grid).
    - The float part (:func:`execution_plan`): the chain runs at 2η̃ ≤ ε, so the entries above
      record 2η̃·f (f the factor of ``release``), and one more entry, "float part of the sampler
      (as executed)", records the rest of ε·f per released chain, at least 2κ: the executed
      chain's law is within e^(±κ) of the ideal chain's for every path (z-step grid, U-step
      acceptance tests). The totals are those of the bullets above; δ = 0.

    Every entry is an asymptotic guarantee (exact sampling of eq. (10)); with a non-private
    init the entries are kept but marked VOID.
    """

    MAX_CHAINS = MAX_CHAINS

    def __init__(self, *, n_clusters=3, subspace_dim=3, epsilon=1.0, n_iter=1000, n_chains=1, init="random",
                 release="sample", n_average=100, select="first", column_sampler="acg", burn_in=None,
                 engine="auto", random_state=None):
        self.n_clusters = n_clusters
        self.subspace_dim = subspace_dim
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.n_chains = n_chains
        self.init = init
        self.release = release
        self.n_average = n_average
        self.select = select
        self.column_sampler = column_sampler
        self.burn_in = burn_in
        self.engine = engine
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _validate(self, X, y, true_subspaces, callback):
        X = check_array(X, "X")
        n, d = X.shape
        if d < 2:
            raise ValueError(f"X must have at least 2 columns so that a proper subspace exists; got {d}")
        k = check_int(self.n_clusters, "n_clusters", 1, n)
        q = check_int(self.subspace_dim, "subspace_dim", 1, d - 1)
        eps = check_epsilon(self.epsilon, "epsilon")
        check_epsilon_scale(eps, n)
        n_iter = check_int(self.n_iter, "n_iter", 1)
        C = check_int(self.n_chains, "n_chains", 1, MAX_CHAINS)
        if self.init not in INITS:
            raise ValueError(f"init must be one of {', '.join(INITS)}; got {self.init!r}")
        if self.release not in RELEASES:
            raise ValueError(f"release must be one of {', '.join(RELEASES)}; got {self.release!r}")
        m = min(check_int(self.n_average, "n_average", 1), n_iter)
        if self.select not in SELECTIONS:
            raise ValueError(f"select must be one of {', '.join(SELECTIONS)}; got {self.select!r}")
        if self.column_sampler not in ("acg", "hoff"):
            raise ValueError(f"column_sampler must be 'acg' or 'hoff'; got {self.column_sampler!r}")
        if self.release == "mean" and self.column_sampler != "acg":
            raise ValueError("release='mean' needs column_sampler='acg': the privacy cost of consecutive samples is "
                             "bounded only for exact column draws, and 'hoff' makes one coordinate sweep per column "
                             "instead (use release='sample' with 'hoff')")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {self.engine!r}")
        if self.engine == "numba" and not _kernels.AVAILABLE:
            raise ValueError("engine='numba' needs the numba package, which is not importable here "
                             "(pip install 'dpcore[fast]', or use engine='auto' to fall back to numpy)")
        if self.engine == "numba" and self.column_sampler != "acg":
            raise ValueError("engine='numba' implements column_sampler='acg' only (use engine='numpy' for 'hoff')")
        burn = n_iter // 2 if self.burn_in is None else check_int(self.burn_in, "burn_in", 0, n_iter - 1)
        if callback is not None and not callable(callback):
            raise ValueError("callback must be callable as callback(iteration, n_iter) or None")
        T = None
        if true_subspaces is not None:
            T = check_subspaces(true_subspaces, "true_subspaces", d=d)
            if T.shape != (k, d, q):
                raise ValueError(f"true_subspaces must have shape (n_clusters, d, subspace_dim) = {(k, d, q)}; "
                                 f"got {T.shape}")
        if y is not None:
            y = np.asarray(y).ravel()
            if y.shape[0] != n:
                raise ValueError(f"y must have one label per row of X ({n}); got {y.shape[0]}")
            y = np.unique(y, return_inverse=True)[1]
        return X, n, d, k, q, eps, n_iter, C, m, burn, T, y

    # ------------------------------------------------------------------ init
    def _initial_subspaces(self, X, C, k, d, q, rng, engine="numpy"):
        if self.init == "random":                    # numba: the same bits on every CPU (gibbs_kernels.random_stiefel)
            return (_kernels.random_stiefel if engine == "numba" else random_stiefel)((C, k), d, q, rng)
        from .solvers import make_solver  # the non-private solvers (imported lazily)
        if self.init == "kplane":
            seeds = rng.integers(0, 2**31 - 1, size=C)
            return np.stack([make_solver("kplane", k, q, random_state=int(s)).fit(X).subspaces_ for s in seeds])
        U0 = make_solver(self.init, k, q, random_state=int(rng.integers(0, 2**31 - 1))).fit(X).subspaces_
        return np.broadcast_to(U0, (C, k, d, q)).copy()

    # ------------------------------------------------------------------ fit
    def _planned_spend(self, shape):
        """(ε, 0) the ledger will record: ε for ``release="sample"``, ε + (m − 1)(q + 3)ε/2 with
        m = ``n_average`` (an upper bound: m is capped by the sweeps) for ``release="mean"``, and
        C times that plus ε for ``select="best_private"``."""
        eps, _ = super()._planned_spend(shape)
        if shape is not None:
            check_epsilon_scale(eps, shape[0])        # refused before anything runs, as the fit would
        per = eps if self.release == "sample" else mean_release_epsilon(eps, self.subspace_dim, self.n_average)
        chains = check_int(self.n_chains, "n_chains", 1)
        if self.select == "best_private" and chains > 1:
            return chains * per + eps, 0.0
        return per, 0.0

    def _plan_reasons(self):
        why = []
        if self.init not in PRIVATE_INITS:
            why.append(f"non-private start: the chains start from the {self.init} solution of the raw data")
        if self.select == "best" and int(self.n_chains) > 1:
            why.append("non-private choice of chain: the released chain is picked by its cost on the raw data")
        return why

    def fit(self, X, y=None, true_subspaces=None, *, callback=None, trace_callback=None, cancel=None):
        """Run the chains on X (rows are points).

        Parameters
        ----------
        X : array_like or pandas.DataFrame of shape (n, d)
            The points as rows (clipped to the unit ball).
        y : array_like of shape (n,), optional
            True labels; only feed the ``"accuracy"`` trace.
        true_subspaces : array_like of shape (k, d, q), optional
            Only feed the ``"dw"`` trace (never the sampler).
        callback : callable, optional
            ``callback(iteration, n_iter)``, called about 100 times per run (e.g. to move a
            progress bar).
        trace_callback : callable, optional
            ``trace_callback(iteration, n_iter, traces)``, called each time the traces of a
            block of sweeps are complete (every 64 sweeps and at the last one, e.g. to draw
            the traces as they come): ``traces`` maps each name of ``traces_`` to its first
            ``iteration`` sweeps, shape (n_chains, iteration), read-only, values final. It
            only reads: the draws are the same with or without it.
        cancel : dpcore.runtime.CancelToken, optional
            Polled during the sweeps (default: the token of an enclosing
            :func:`dpcore.runtime.cancellable`, if any): once cancelled, the fit stops within
            one sweep and raises :class:`dpcore.runtime.FitCancelled`; its heartbeat ``poll``
            is called at least every :data:`dpcore.runtime.POLL_SECONDS`. The draws are the
            same with or without it.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        dpcore.runtime.FitCancelled
            If ``cancel`` was cancelled (nothing of the run is kept).
        """
        token = current_token() if cancel is None else cancel
        if token is not None and not isinstance(token, CancelToken):
            raise ValueError(f"cancel must be a dpcore.runtime.CancelToken or None; got {cancel!r}")
        with single_threaded():
            return self._fit(X, y, true_subspaces, callback, trace_callback, token)

    def _fit(self, X, y, true_subspaces, callback, trace_callback=None, token=None):
        record_features(self, X)
        X, n, d, k, q, eps, n_iter, C, m, burn, T, y = self._validate(X, y, true_subspaces, callback)
        if trace_callback is not None and not callable(trace_callback):
            raise ValueError("trace_callback must be callable as trace_callback(iteration, n_iter, traces) or None")
        engine = _resolve_engine(self.engine, self.column_sampler)
        self.engine_ = engine
        rng = check_random_state(self.random_state)
        Xc, n_clipped = clip_rows(X, 1.0)

        U = self._initial_subspaces(Xc, C, k, d, q, rng, engine)
        Uflat = U.reshape(C * k, d, q).copy()
        Ucomp = _complement(Uflat) if engine == "numpy" else None
        XXp, full = _outer_packed(Xc)
        XT = np.ascontiguousarray(Xc.T)
        sqn_mean = _kernels.mean_sq_norm(Xc) if engine == "numba" else float(np.einsum("nd,nd->", Xc, Xc)) / n
        execution = execution_plan(eps, n, d, k, q, n_iter, self.release, m, self.column_sampler)
        half = execution.scale                          # η̃ ≤ ε/2: the float part is paid from ε (execution_plan)
        zplan = execution.zstep
        track_acc = y is not None and int(y.max()) + 1 == k

        cost = np.empty((C, n_iter))
        stat = np.empty((C, n_iter))
        dw = np.empty((C, n_iter)) if T is not None else None
        acc = np.empty((C, n_iter)) if track_acc else None
        moves = np.empty((C, n_iter))                   # points whose cluster changed in each sweep
        z_last = [None]                                 # the previous sweep's labels, across blocks
        U_sum = np.zeros((C, k, d, q))
        ring = np.empty((m, C, k, d, q))
        norm_stat = 1.0 / math.sqrt(k * q)
        report_every = -(-n_iter // 100)                                     # ≤ 100 progress reports
        # the traces that need only the samples (statistic, d_W, accuracy) are computed for
        # _TRACE_BLOCK sweeps at once: the same numbers, a few numpy calls per block instead
        # of per sweep (what a single chain's sweep time was spent on)
        B = min(_TRACE_BLOCK, n_iter)
        U_blk = np.empty((B, C, k, d, q))
        z_blk = np.empty((B, C, n), dtype=np.intp)        # labels of the block (accuracy and moves)
        steps = np.arange(1, n_iter + 1, dtype=np.float64)

        def flush(t_end, b):
            """Traces of the b sweeps that end at sweep t_end (exclusive)."""
            nonlocal U_sum
            Ub = U_blk[:b]
            run = np.cumsum(Ub, axis=0)
            run += U_sum
            U_sum = run[-1].copy()
            sl = slice(t_end - b, t_end)
            stat[:, sl] = (np.sqrt(np.einsum("bckdq,bckdq->cb", run, run)) * norm_stat) / steps[sl]
            if T is not None:
                dw[:, sl] = np.sqrt(min_matching_cost(pairwise_subspace_distances(Ub, T[None, None], squared=True))).T
            zb = z_blk[:b]
            if z_last[0] is None:                       # the first sweep places every point
                moves[:, 0] = n
                if b > 1:
                    moves[:, sl.start + 1:t_end] = np.count_nonzero(zb[1:] != zb[:-1], axis=2).T
            else:
                moves[:, sl] = np.count_nonzero(zb != np.concatenate([z_last[0][None], zb[:-1]]), axis=2).T
            z_last[0] = zb[-1].copy()
            if track_acc:
                counts = _kernels.contingency if engine == "numba" else _accuracy_counts    # same integers
                cont = counts(z_blk[:b].reshape(b * C, n), y, k, k).reshape(b, C, k, k)
                acc[:, sl] = (min_matching_cost(-cont) / (-n)).T
            if trace_callback is not None:
                trace_callback(t_end, n_iter, _partial_traces(t_end, cost=cost, statistic=stat, dw=dw, accuracy=acc,
                                                              moves=moves))

        # utilities of eq. (11) with the categories first: (k, C, n); −(ε/2)d² = (ε/2)‖Uᵀx‖² − (ε/2)‖x‖²
        # and the per-point constant (ε/2)‖x‖² cancels in the normalisation: the z-step draws from ‖Uᵀx‖².
        t0 = time.perf_counter()
        z = None
        if engine == "numba":
            t0, Uflat, z = _run_numba(Xc, Uflat, Ucomp, C, k, sqn_mean, half, n_iter, rng, callback, report_every,
                                      B, cost, U_blk, z_blk, ring, m, flush, token)
        else:
            pn = _projection_norms_lead(Xc, U, XT).transpose(1, 0, 2)
            for t in range(n_iter):
                if token is not None:
                    token.check(done=t)                                           # heartbeat throttled by the token
                z = _exact_z_step(pn, zplan, rng)                                 # z-step, eq. (11): (C, n)
                A = _cluster_scatter(XXp, full, z, k)                             # A_ℓ = Σ_{zᵢ=ℓ} xᵢxᵢᵀ
                Uflat, Ucomp = matrix_bingham_gibbs_sweep(A, Uflat, half, rng, self.column_sampler,
                                                          complement=Ucomp)        # U-step, eq. (12), B = (ε/2)I
                if (t + 1) % _REORTHO_EVERY == 0:
                    Qr, Rr = np.linalg.qr(Uflat)
                    Uflat = Qr * np.where(np.einsum("mii->mi", Rr) < 0, -1.0, 1.0)[:, None, :]
                    Ucomp = _complement(Uflat)
                Ut = Uflat.reshape(C, k, d, q)
                # traces (eq. (3) cost = mean of ‖x‖² − max_ℓ ‖U_ℓᵀx‖²; the projections are the next z-step's)
                pn = _projection_norms_lead(Xc, Ut, XT).transpose(1, 0, 2)       # (k, C, n)
                best = pn[0].copy()
                for j in range(1, k):
                    np.maximum(best, pn[j], out=best)
                cost[:, t] = sqn_mean - np.add.reduce(best, 1) / n
                U_blk[t % B] = Ut
                z_blk[t % B] = z
                if (t + 1) % B == 0 or t + 1 == n_iter:
                    flush(t + 1, t % B + 1)
                ring[t % m] = Ut
                if callback is not None and ((t + 1) % report_every == 0 or t + 1 == n_iter):
                    callback(t + 1, n_iter)
        self.seconds_per_sweep_ = (time.perf_counter() - t0) / n_iter

        U_final = Uflat.reshape(C, k, d, q)
        cost = np.maximum(cost, 0.0)
        self.traces_ = {"cost": cost, "statistic": stat}
        if dw is not None:
            self.traces_["dw"] = dw
        if acc is not None:
            self.traces_["accuracy"] = acc
        self.traces_["moves"] = moves
        self.chain_subspaces_ = U_final
        self.chain_labels_ = z.copy()
        self.n_clipped_ = n_clipped
        self.n_iter_ = n_iter
        self.burn_in_ = burn
        self.n_features_in_ = d

        # ---------------------------------------------------------- selection of the released chain
        ledger = PrivacyLedger()
        is_private = self.init in PRIVATE_INITS
        caveats = []
        per_chain_eps = eps if self.release == "sample" else mean_release_epsilon(eps, q, m)
        what = ("the released subspaces and labels (one sample θ = (S, z) of eq. (10))" if self.release == "sample" else
                f"the released subspaces, labels and mean subspaces (the last {m} consecutive samples of one chain)")
        asym = ("ε-DP only asymptotically: Prop. 4.1 needs an exact draw of eq. (10), which the Gibbs chain "
                "reaches only in the limit (check the mixing diagnostics); score sensitivity 1 relies on ‖x‖ ≤ 1 "
                f"({n_clipped} of {n} rows clipped to the unit ball)")
        if self.release == "mean":
            asym += (f"; {m} consecutive samples: ε + ({m}−1)·(q+3)ε/2 = {per_chain_eps:g} with q = {q}, since one "
                     "sweep's kernel changes a path's probability by at most e^((q+3)ε/2) (the changed point's z-step "
                     "by e^ε; its cluster's U-step by e^(ε/2) per column normaliser and e^(ε/2) for all column "
                     "densities together, the new columns being orthonormal)")
        void = "" if is_private else f"VOID: the chains started from the non-private {self.init} solution. "
        ideal = execution.ideal_epsilon
        asym += (f"; the chain runs at 2η̃ = {2.0 * execution.scale:.10g} (ε/2 lowered by the float part's slack, next "
                 "entry, and rounded down to 20 significant bits), so this entry is 2η̃" +
                 ("" if self.release == "sample" else f"·(1 + ({m}−1)(q+3)/2)"))
        if self.select == "first" or C == 1:
            sel = 0
            chains = 1
            ledger.record(what + (f", chain {sel}" if C > 1 else ""), "exponential mechanism (Gibbs sampler, eq. (10))",
                          ideal, 0.0, void + asym)
            self._record_float_part(ledger, execution, chains, per_chain_eps, n, k, q, n_iter)
        elif self.select == "best_private":
            chains = C
            ledger.record(f"{what}, for each of the {C} chains (all inputs of the selection)",
                          "exponential mechanism (Gibbs sampler, eq. (10)) × chains, basic composition",
                          C * ideal, 0.0, void + asym)
            self._record_float_part(ledger, execution, chains, per_chain_eps, n, k, q, n_iter)
            util = -n * cost[:, -1]
            sel = int(exponential_mechanism(util, eps, 1.0, rng))
            ledger.record("choice of the released chain", "exponential mechanism on −Σᵢ min_ℓ d²(xᵢ, S_ℓ)", eps, 0.0,
                          "utility sensitivity 1 because every d² is in [0, 1] (‖x‖ ≤ 1); drawn exactly on a public "
                          "grid (dpcore.privacy.exact_choice)")
        else:  # "best"
            sel = int(np.argmin(cost[:, -1]))
            is_private = False
            ledger.record(what + f", chain {sel}", "exponential mechanism (Gibbs sampler, eq. (10))", ideal, 0.0,
                          "VOID: the chain was chosen by its raw-data cost (a non-private selection). " + asym)
            self._record_float_part(ledger, execution, 1, per_chain_eps, n, k, q, n_iter)
            caveats.append("The released chain was picked by its cost on the raw data: this choice is not private "
                           "(use select='best_private' to pick it with the exponential mechanism).")
        if self.init not in PRIVATE_INITS:
            caveats.append(f"The chains started from the non-private {self.init} solution (as in the paper): "
                           "after finitely many sweeps the output still depends on that computation, so the "
                           "privacy guarantee is void.")
        caveats.append("Private only asymptotically: the guarantee of Prop. 4.1 holds for an exact sample of "
                       "eq. (10); a Gibbs chain that has not mixed does not give it.")
        self.selected_chain_ = sel

        self.subspaces_ = U_final[sel].copy()
        self.labels_ = z[sel].copy()
        sqn = np.einsum("nd,nd->n", Xc, Xc)
        self.cost_ = float(np.mean(np.maximum(sqn - _projection_norms(Xc, self.subspaces_).max(axis=1), 0.0)))
        order = np.arange(n_iter - m, n_iter) % m
        self.subspaces_mean_ = _aligned_mean(ring[order, sel], self.subspaces_)
        self.cost_mean_ = float(cost[sel, -m:].mean())
        self.dw_mean_ = float(dw[sel, -m:].mean()) if dw is not None else None

        self.ledger_ = ledger
        self.is_private_ = is_private
        self.caveats_ = caveats
        released = ["subspaces_", "labels_"] + (["subspaces_mean_"] if self.release == "mean" else [])
        self.private_outputs_ = released if is_private else []
        nonpriv = {
            "traces_": "diagnostics computed from the raw data and from every sample of every chain",
            "cost_": "eq. (3) cost evaluated on the raw (clipped) data",
            "cost_mean_": "mean cost over the last samples, evaluated on the raw data",
            "dw_mean_": "uses the true subspaces",
            "chain_subspaces_": "samples of the chains that were not released (releasing them costs ε each)",
            "chain_labels_": "samples of the chains that were not released (releasing them costs ε each)",
            "n_clipped_": "a count computed from the raw data",
        }
        if self.release == "sample":
            nonpriv["subspaces_mean_"] = "not released with release='sample' (averaging the last samples costs more ε)"
        if not is_private:
            reason = (f"chains started from the non-private {self.init} solution" if self.init not in PRIVATE_INITS
                      else "the released chain was selected by its raw-data cost")
            for name in released:
                nonpriv[name] = reason
        self.nonprivate_outputs_ = nonpriv
        return self

    def _record_float_part(self, ledger, execution, chains, per_chain_eps, n, k, q, n_iter):
        """The ledger entry of the sampler's float part: the rest of ``chains`` × ``per_chain_eps``
        after the ideal chain's entry, at least 2κ per released chain (:func:`execution_plan`)."""
        ex = execution
        u_part = (f"U-step acceptance tests ≤ 2η_U = {2.0 * ex.acceptance_error:.3g} per column draw × {n_iter * k * q:,} "
                  f"draws = {ex.kappa_u:.3g} (full-precision exponentials, :func:`acceptance_test_error`)"
                  if ex.kappa_u is not None else
                  "U-step: NOT bounded - column_sampler='hoff' draws with the 1-D samplers' float tests")
        ledger.record("float part of the sampler (as executed)",
                      "exact z-step on a public grid; U-step ACG acceptance tests in float (paid from ε)",
                      ledger.rest_of(chains * per_chain_eps), 0.0,
                      f"the executed chain's law is within e^(±κ) of the ideal chain's at scale 2η̃ for every path, "
                      f"κ = {ex.kappa:.3g} per chain: z-step utilities on the grid 2^−{ex.zstep.grid_bits} "
                      f"(≤ η̃h = {ex.zstep.step:.3g} per draw × {n * n_iter:,} draws = {ex.kappa_z:.3g}; the draw "
                      f"itself exact, integer arithmetic); {u_part}. This entry is ≥ 2κ per released chain "
                      f"({chains}). Not covered: the continuous values (float normals through float linear algebra; "
                      "no exact sampler of the Bingham law is known), as docs/privacy_as_executed.md says")

    def fit_predict(self, X, y=None, true_subspaces=None, *, callback=None):
        """Fit, then return ``labels_`` (the released sample's assignment).

        Kept although ``ClusterMixin`` provides ``fit_predict``: the inherited one calls
        ``self.fit(X, **kwargs)`` and drops ``y``, which here is not ignored (it feeds the
        ``"accuracy"`` trace), and it does not take ``true_subspaces`` positionally as
        :meth:`fit` does.

        Parameters
        ----------
        X : array_like, shape (n, d)
            The points as rows (see :meth:`fit`).
        y : array_like of shape (n,), optional
            True labels; only feed the ``"accuracy"`` trace.
        true_subspaces : array_like of shape (k, d, q), optional
            Only feed the ``"dw"`` trace.
        callback : callable, optional
            ``callback(iteration, n_iter)``, as in :meth:`fit`.

        Returns
        -------
        ndarray of int, shape (n,)
            ``labels_``, cluster indices in [0, k).
        """
        return self.fit(X, y, true_subspaces, callback=callback).labels_
