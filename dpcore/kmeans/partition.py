"""Private candidate set of centres (Algorithms 1 and 2 of Balcan et al., ICML 2017,
"Differentially private clustering in high-dimensional Euclidean spaces").

- :func:`jl_matrix` / :func:`default_projection_dim`: the Johnson–Lindenstrauss map to
  R^p (data-independent, so it costs no privacy);
- :func:`private_partition` (Alg. 1): recursive subdivision of a cube into 2^p sub-cubes,
  each kept *active* with probability f(m) of its point count m;
- :func:`candidate_set` (Alg. 2): the union of ``n_repeats`` private partitions of randomly
  shifted cubes.

Privacy of Alg. 1. f(m) is the CDF of Laplace noise: f(m) = P[m + Lap(1/ε′) > γ], so every
keep/drop decision is ε′-DP in the count of its cube, and f(m+1) ≤ e^{ε′} f(m),
1 − f(m) ≤ e^{ε′}(1 − f(m+1)). At each depth a point lies in exactly one cube, so replacing
one point changes the counts of at most two cubes per depth (adding/removing one: one
cube). With at most ``max_depth`` rounds of decisions, ε′ = ε / (2 · max_depth) makes the
whole partition ε-DP — the paper's ε′ = ε/(2 log n) with log n replaced by the depth bound
actually used. γ does not enter the privacy argument; it only sets the threshold.

Decisions on *empty* sub-cubes are part of the mechanism too (each is kept with probability
f(0) = ½e^{−ε′γ}); there are 2^p − (occupied) of them per active cube, far too many to
enumerate for large p, so their number is drawn from the exact binomial distribution and
their positions uniformly among the empty sub-cubes — the same distribution as deciding
each one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..validation import check_array, check_epsilon, check_int, check_random_state, check_real
from ..preprocessing import clip_rows
from ..privacy import bernoulli_draws, binomial_draws

__all__ = ["default_projection_dim", "max_projection_dim", "jl_matrix", "jl_project", "subdivision_probability",
           "default_gamma", "default_max_depth", "PartitionResult", "private_partition", "CandidateSetResult",
           "candidate_set"]

MAX_ACTIVE_CUBES = 200_000  # computational guard (never reached with the default γ)


# ----------------------------------------------------------------------------- JL projection
def default_projection_dim(n):
    """p = ⌈ln(n)/2⌉ (at least 1), the dimension of the paper's experiments (§7).

    Parameters
    ----------
    n : int
        Number of points (values below 2 count as 2).

    Returns
    -------
    int ≥ 1
    """
    return max(1, math.ceil(math.log(max(n, 2)) / 2.0))


def max_projection_dim(n):
    """⌈8 ln n⌉, the dimension of the paper's theory (§4); the largest p accepted.

    Parameters
    ----------
    n : int
        Number of points (values below 2 count as 2).

    Returns
    -------
    int ≥ 1
    """
    return max(1, math.ceil(8.0 * math.log(max(n, 2))))


def jl_matrix(d, p, random_state=None):
    """A d×p Gaussian JL matrix with N(0, 1/p) entries (so E‖xA‖² = ‖x‖²). It does not look
    at the data: public randomness, no privacy cost.

    Parameters
    ----------
    d : int ≥ 1
    p : int ≥ 1
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    ndarray of shape (d, p)

    Raises
    ------
    ValueError
        If ``d`` or ``p`` < 1.
    """
    d = check_int(d, "d", 1)
    p = check_int(p, "p", 1)
    rng = check_random_state(random_state)
    return rng.standard_normal((d, p)) / math.sqrt(p)


def jl_project(X, A):
    """Rows of X (dense or CSR) mapped to R^p: X @ A.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    A : ndarray of shape (d, p)

    Returns
    -------
    ndarray of float64 of shape (n, p)
    """
    Y = X @ A
    return np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=np.float64)


# ----------------------------------------------------------------------------- Algorithm 1
def subdivision_probability(m, epsilon_prime, gamma):
    """f(m) of Alg. 1: ½exp(−ε′(γ − m)) for m ≤ γ, 1 − ½exp(ε′(γ − m)) otherwise
    (the probability that a cube with m points is kept active and subdivided again).

    Parameters
    ----------
    m : float or array_like
        Numbers of points.
    epsilon_prime : float
        ε′.
    gamma : float
        γ.

    Returns
    -------
    ndarray of float64
        Probabilities in (0, 1), the shape of ``m``.
    """
    m = np.asarray(m, dtype=np.float64)
    z = epsilon_prime * (m - gamma)
    return np.where(z <= 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def default_gamma(n, p, epsilon_prime, n_clusters=None):
    """γ = max((p ln 2 + ln n)/ε′, n/(10k)) (the second term only when ``n_clusters`` = k is
    given).

    The paper's γ = 20 ln(n/δ)/ε′ is a proof constant that at practical n exceeds n itself
    (nothing would ever be subdivided). Ours keeps what γ is for: each of the 2^p empty
    sub-cubes of an active cube is kept with probability f(0) = ½e^{−ε′γ} = 1/(2n·2^p), so
    the expected number of empty cubes ever activated is below (number of active cubes)/(2n)
    and the candidate set stays far below n log n (Theorem 1). Cubes with a few times 1/ε′
    more than γ points are subdivided almost surely.

    The floor n/(10k) is computational and binds only at large ε: a cube holding less than
    a tenth of an average cluster is not refined further, which keeps the candidate set (and
    the O(n·|C|) local search) small; without it ε → ∞ would make every occupied cell of
    every depth a candidate (≈ n·depth of them).

    Parameters
    ----------
    n : int
        Number of points.
    p : int
        Projection dimension.
    epsilon_prime : float > 0
        ε′.
    n_clusters : int, optional
        k.

    Returns
    -------
    float
    """
    g = (p * math.log(2.0) + math.log(max(n, 2))) / epsilon_prime
    if n_clusters is not None:
        g = max(g, n / (10.0 * n_clusters))
    return g


def default_max_depth(n):
    """⌈log₂ n⌉: the depth at which the edge of the initial cube (4Λ) reaches 4Λ/n, the
    resolution of the paper's Theorem 3 (its loop runs while depth ≤ log n).

    Parameters
    ----------
    n : int
        Number of points (values below 2 count as 2).

    Returns
    -------
    int ≥ 1
    """
    return max(1, math.ceil(math.log2(max(n, 2))))


@dataclass
class PartitionResult:
    """Output of :func:`private_partition`. ``centers`` are the released candidates (the
    centres of every cube that was ever active, depth 0 included); ``depths`` their depths.
    ``active_per_depth[a]`` = number of active cubes at depth a (released as well: it is a
    function of the candidate set). ``epsilon_prime``/``gamma``/``max_depth`` are the
    parameters used.

    Attributes
    ----------
    centers : ndarray of shape (m, p)
    depths : ndarray of int of shape (m,)
    active_per_depth : list of int
    epsilon_prime : float
    gamma : float
    max_depth : int
    lower : ndarray of shape (p,)
        Lower corner of the initial cube.
    edge : float
        Its edge length.
    n_empty_activated : int, default 0
        Number of empty cubes that were activated.
    leaves : ndarray of bool of shape (m,) or None
        Per centre: the cube has no active child.
    """
    centers: np.ndarray
    depths: np.ndarray
    active_per_depth: list
    epsilon_prime: float
    gamma: float
    max_depth: int
    lower: np.ndarray
    edge: float
    n_empty_activated: int = 0
    leaves: np.ndarray | None = None  # bool per centre: the cube has no active child


def _log_f0(epsilon_prime, gamma):
    return math.log(0.5) - epsilon_prime * gamma


def private_partition(Y, epsilon, lower, edge, max_depth=None, gamma=None, random_state=None, n_clusters=None):
    """Algorithm 1: ε-DP recursive partition of the cube ``[lower, lower + edge]`` ⊂ R^p.

    Parameters
    ----------
    Y : (n, p) points, all inside the cube.
    epsilon : privacy budget of this call; ε′ = ε/(2·max_depth).
    lower, edge : lower corner (p,) and edge length of the initial cube Q.
    max_depth : rounds of subdivision; no cube deeper than this is ever created
        (default ⌈log₂ n⌉, :func:`default_max_depth`). At most 60.
    gamma : threshold of f(m) (default :func:`default_gamma`, with its floor n/(10k) when
        ``n_clusters`` = k is given).
    random_state : None, int or numpy.random.Generator, optional
    n_clusters : int, optional
        k, for the default γ.

    Starting from A = {Q}, each round adds the centres of the active cubes to the candidate
    set, splits every active cube in half along each axis (2^p children) and keeps each child
    active with probability f(#points in it). The centres of the cubes still active after
    the last round are added too (post-processing of decisions already paid for).

    Returns
    -------
    PartitionResult

    Raises
    ------
    ValueError
        If Y is not a finite 2-D array or lies outside the cube, ε, ``edge``, ``max_depth``
        or ``gamma`` is out of range, or γ is so small that too many cubes would be active
        (more than ``MAX_ACTIVE_CUBES``).
    """
    Y = check_array(Y, "Y")
    n, p = Y.shape
    epsilon = check_epsilon(epsilon)
    max_depth = default_max_depth(n) if max_depth is None else check_int(max_depth, "max_depth", 1, 60)
    edge = check_real(edge, "edge", 0.0, None, low_inclusive=False)
    lower = np.asarray(lower, dtype=np.float64).reshape(p)
    eps_prime = epsilon / (2.0 * max_depth)
    gamma = default_gamma(n, p, eps_prime, n_clusters) if gamma is None else check_real(gamma, "gamma", 0.0, None)
    rng = check_random_state(random_state)
    log_f0 = _log_f0(eps_prime, gamma)

    T = (Y - lower) / edge  # unit-cube coordinates
    if np.any(T < -1e-9) or np.any(T > 1 + 1e-9):
        raise ValueError("Y must lie inside the initial cube [lower, lower + edge]")
    T = np.clip(T, 0.0, 1.0)

    active = np.zeros((1, p), dtype=np.int64)  # integer coordinates of the active cubes at depth a
    alive = np.arange(n)                        # points inside an active cube
    alive_cube = np.zeros(n, dtype=np.int64)    # index of that cube in `active`
    centers, depths, per_depth, leaves = [], [], [], []
    n_empty = 0
    n_children = 2.0 ** p
    for a in range(max_depth + 1):
        per_depth.append(int(active.shape[0]))
        side = edge / 2.0 ** a
        centers.append(lower + (active + 0.5) * side)
        depths.append(np.full(active.shape[0], a))
        if a == max_depth or active.shape[0] == 0:
            leaves.append(np.ones(active.shape[0], dtype=bool))
            break
        # --- children of the active cubes that contain points
        child = np.minimum(np.floor(T[alive] * 2.0 ** (a + 1)).astype(np.int64), 2 ** (a + 1) - 1)
        occ, inv, counts = np.unique(child, axis=0, return_inverse=True, return_counts=True)
        inv = inv.ravel()
        parent_of_occ = np.empty(occ.shape[0], dtype=np.int64)
        parent_of_occ[inv] = alive_cube
        keep = bernoulli_draws(subdivision_probability(counts, eps_prime, gamma), rng)
        # --- empty children: Binomial(2^p − occupied, f(0)) activations per active cube
        occ_per_parent = np.bincount(parent_of_occ, minlength=active.shape[0]).astype(np.float64)
        n_free = n_children - occ_per_parent           # empty children of each active cube
        if np.any(n_free * math.exp(log_f0) > 10 * MAX_ACTIVE_CUBES):
            raise ValueError(f"gamma is too small for this epsilon and p: far more than {MAX_ACTIVE_CUBES} empty "
                             "cubes would be activated (raise gamma or lower p)")
        n_act = binomial_draws(n_free, log_f0, rng)
        spurious = []
        if n_act.any():
            occ_set = {tuple(r) for r in occ}
            for par in np.flatnonzero(n_act):
                got = set()
                while len(got) < n_act[par]:
                    c = tuple(2 * active[par] + rng.integers(0, 2, size=p))
                    if c not in occ_set and c not in got:
                        got.add(c)
                spurious.extend(got)
            n_empty += len(spurious)
        kept_idx = np.flatnonzero(keep)
        has_child = np.zeros(active.shape[0], dtype=bool)
        has_child[parent_of_occ[kept_idx]] = True
        if spurious:
            for c in spurious:
                has_child[_parent_index(active, np.asarray(c) // 2)] = True
        leaves.append(~has_child)
        new_active = occ[kept_idx]
        if spurious:
            new_active = np.vstack([new_active, np.array(spurious, dtype=np.int64)])
        if new_active.shape[0] > MAX_ACTIVE_CUBES:
            raise ValueError(f"gamma is too small for this epsilon and p: more than {MAX_ACTIVE_CUBES} active cubes "
                             "(raise gamma or lower p)")
        remap = np.full(occ.shape[0], -1, dtype=np.int64)
        remap[kept_idx] = np.arange(kept_idx.size)
        new_cube = remap[inv]
        stay = new_cube >= 0
        alive, alive_cube = alive[stay], new_cube[stay]
        active = new_active
    return PartitionResult(np.vstack(centers), np.concatenate(depths), per_depth, eps_prime, float(gamma),
                           max_depth, lower, float(edge), n_empty, np.concatenate(leaves))


def _parent_index(active, coords):
    return int(np.flatnonzero(np.all(active == coords, axis=1))[0])


# ----------------------------------------------------------------------------- Algorithm 2
@dataclass
class CandidateSetResult:
    """Output of :func:`candidate_set`: ``centers`` (m, p) inside B(0, Λ), their cube
    ``depths`` (padding points get depth 0), ``leaves`` (True for a cube none of whose
    children stayed active: the finest resolution reached there), and per repetition
    the :class:`PartitionResult` (``partitions``) and the shift ``shifts[t]``.

    Attributes
    ----------
    centers : ndarray of shape (m, p)
    depths : ndarray of int of shape (m,) or None
    partitions : list of PartitionResult
    shifts : ndarray of shape (n_repeats, p) or None
    n_padded : int, default 0
        Number of uniform random points added to reach ``min_size``.
    leaves : ndarray of bool of shape (m,) or None
    """
    centers: np.ndarray
    depths: np.ndarray | None = None
    partitions: list = field(default_factory=list)
    shifts: np.ndarray | None = None
    n_padded: int = 0
    leaves: np.ndarray | None = None


def candidate_set(Y, epsilon, radius, n_repeats=1, max_depth=None, gamma=None, min_size=1, random_state=None,
                  n_clusters=None):
    """Algorithm 2: union of ``n_repeats`` private partitions of randomly shifted cubes; ε-DP.

    Each repetition draws a shift v ~ U([−Λ, Λ]^p) and partitions the cube
    Q_v = [−2Λ, 2Λ]^p + v with budget ε/n_repeats (basic composition). The edge 4Λ makes
    Q_v contain B(0, Λ) for every shift (the paper's "[−Λ, Λ]^d + v" would not contain all
    points). ``Y`` must lie in B(0, Λ).

    The candidates are then moved into B(0, Λ) (post-processing), which bounds every
    point-to-candidate distance by 2Λ — the premise of the 8Λ² sensitivity of
    :func:`dpcore.kmeans.localswap.localswap`. Exact duplicates are dropped. If fewer than
    ``min_size`` candidates remain, uniform random points of B(0, Λ) (public randomness, no
    privacy cost) are added so that local search has something to swap in.

    Parameters
    ----------
    Y : array_like of shape (n, p)
        Projected points in B(0, Λ).
    epsilon : float > 0
    radius : float > 0
        Λ.
    n_repeats : int ≥ 1, default 1
    max_depth, gamma : optional
        As in :func:`private_partition`.
    min_size : int, default 1
        Smallest number of candidates returned.
    random_state : None, int or numpy.random.Generator, optional
    n_clusters : int, optional
        k, for the default γ.

    Returns
    -------
    CandidateSetResult

    Raises
    ------
    ValueError
        If a parameter is out of range, a point lies outside B(0, Λ), or
        :func:`private_partition` refuses.
    """
    Y = check_array(Y, "Y")
    n, p = Y.shape
    epsilon = check_epsilon(epsilon)
    radius = check_real(radius, "radius", 0.0, None, low_inclusive=False)
    n_repeats = check_int(n_repeats, "n_repeats", 1)
    rng = check_random_state(random_state)
    if np.any(np.linalg.norm(Y, axis=1) > radius * (1 + 1e-9)):
        raise ValueError("Y must lie in the ball B(0, radius) (clip it first)")
    parts, shifts, cands, depths, leaves = [], [], [], [], []
    for _ in range(n_repeats):
        v = rng.uniform(-radius, radius, size=p)
        part = private_partition(Y, epsilon / n_repeats, v - 2.0 * radius, 4.0 * radius, max_depth, gamma, rng,
                                 n_clusters)
        parts.append(part)
        shifts.append(v)
        cands.append(part.centers)
        depths.append(part.depths)
        leaves.append(part.leaves)
    C = clip_rows(np.vstack(cands), radius)[0]
    depth = np.concatenate(depths)
    leaf = np.concatenate(leaves)
    C, first = np.unique(C, axis=0, return_index=True)
    depth, leaf = depth[first], leaf[first]
    n_pad = max(0, min_size - C.shape[0])
    if n_pad:
        G = rng.standard_normal((n_pad, p))
        G *= (radius * rng.random(n_pad) ** (1.0 / p) / np.linalg.norm(G, axis=1))[:, None]
        C = np.vstack([C, G])
        depth = np.concatenate([depth, np.zeros(n_pad, dtype=depth.dtype)])
        leaf = np.concatenate([leaf, np.zeros(n_pad, dtype=bool)])
    return CandidateSetResult(C, depth, parts, np.array(shifts), n_pad, leaf)
