"""Private discrete clustering by local swaps (Algorithm 3 of Balcan et al. 2017, after
Gupta et al. 2010 and Kanungo et al. 2002).

Starting from k distinct candidates, each of T rounds replaces one current centre x by a
candidate y ∉ Z, the pair (x, y) drawn by the exponential mechanism with probability
∝ exp(−ε_step (L(Z − x + y) − L(Z)) / (8Λ²)); a last exponential mechanism picks one of the
T iterates with probability ∝ exp(−ε_step L(Z^(t)) / (8Λ²)); ε_step = ε/(T + 1) (basic
composition of T + 1 uses), so the whole is ε-DP.

Sensitivity. Points and candidates lie in B(0, Λ), so every point's loss min_j ‖x − z_j‖²
is in [0, 4Λ²]; replacing (or adding/removing) one point changes L(Z′) by at most Δ = 4Λ²
for every Z′. The exponential mechanism over utilities u(x, y) = −L(Z − x + y) with
sensitivity Δ samples ∝ exp(ε u/(2Δ)) = exp(−ε L(Z′)/(8Λ²)); subtracting the constant L(Z)
gives the paper's form with "8Λ²" = 2Δ. (The paper's proof calls the increment's
sensitivity 8Λ²; the increment is not needed: the shift by L(Z) does not change the
distribution.) For k-median the loss is min_j ‖x − z_j‖ ∈ [0, 2Λ] and Δ = 2Λ.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np
import scipy.sparse as sp

from ..validation import check_array, check_epsilon, check_int, check_random_state, check_real
from ..privacy import exponential_mechanism

__all__ = ["loss_sensitivity", "swap_losses", "LocalSwapResult", "localswap", "default_swap_iterations",
           "seed_from_candidates"]

_CHUNK_ELEMS = 2_000_000


def loss_sensitivity(radius, objective="kmeans"):
    """Δ of the clustering loss when points and centres lie in B(0, Λ): 4Λ² (k-means) or
    2Λ (k-median).

    Parameters
    ----------
    radius : float
        Λ.
    objective : {"kmeans", "kmedian"}, default "kmeans"

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``objective`` is unknown.
    """
    if objective == "kmeans":
        return 4.0 * radius ** 2
    if objective == "kmedian":
        return 2.0 * radius
    raise ValueError(f"objective must be 'kmeans' or 'kmedian'; got {objective!r}")


def _dists(Y, C, objective):
    D = Y @ C.T
    D *= -2.0
    D += np.einsum("ij,ij->i", Y, Y)[:, None]
    D += np.einsum("ij,ij->i", C, C)[None]
    np.maximum(D, 0.0, out=D)
    return D if objective == "kmeans" else np.sqrt(D, out=D)


def swap_losses(Y, C, Z, objective="kmeans"):
    """Matrix S (k×m) with S[j, c] = L(Z − Z[j] + C[c]) for every swap pair, and L(Z).

    Computed in one pass over the points without forming all k·m configurations: with
    d1/d2 the smallest/second-smallest loss of a point to Z and a its nearest centre,
    L(Z − z_j + y) = Σᵢ min(D[i,y], d1ᵢ) + Σ_{i: aᵢ = j} [min(D[i,y], d2ᵢ) − min(D[i,y], d1ᵢ)].
    Cost O(n·m) per call, chunked over points.

    Parameters
    ----------
    Y : array_like of shape (n, p)
        The (projected) points.
    C : array_like of shape (m, p)
        The candidates.
    Z : array_like of int of shape (k,)
        Indices into C of the current centres.
    objective : {"kmeans", "kmedian"}, default "kmeans"
        Squared or plain Euclidean loss.

    Returns
    -------
    S : ndarray of shape (k, m)
    total : float
        L(Z).
    """
    Y = np.asarray(Y, float)
    C = np.asarray(C, float)
    Z = np.asarray(Z, dtype=np.int64)
    n, m, k = Y.shape[0], C.shape[0], Z.size
    base = np.zeros(m)
    corr = np.zeros((k, m))
    total = 0.0
    chunk = max(1, _CHUNK_ELEMS // max(m, 1))
    for s in range(0, n, chunk):
        D = _dists(Y[s:s + chunk], C, objective)
        DZ = D[:, Z]
        if k > 1:
            part = np.partition(DZ, 1, axis=1)
            d1, d2 = part[:, 0], part[:, 1]
        else:
            d1, d2 = DZ[:, 0], np.full(DZ.shape[0], np.inf)
        a = np.argmin(DZ, axis=1)
        total += d1.sum()
        M1 = np.minimum(D, d1[:, None])
        base += M1.sum(axis=0)
        M = np.minimum(D, d2[:, None], out=D)
        M -= M1
        onehot = sp.csr_matrix((np.ones(a.size), (a, np.arange(a.size))), shape=(k, a.size))
        corr += onehot @ M
    return base[None, :] + corr, total


def default_swap_iterations(k):
    """T = max(2, ⌈k/4⌉) swap rounds by default.

    The paper's T = 100k log(n/δ) divides the budget into so many exponential mechanisms
    that each is a uniform draw at practical n (the scale 8Λ²(T+1)/ε exceeds any loss
    difference), and each round costs O(n·|C|) time. A few rounds, each with a usable share
    of the budget, starting from a good data-independent seed
    (:func:`seed_from_candidates`), is what a practitioner would run.

    Parameters
    ----------
    k : int
        Number of centres.

    Returns
    -------
    int
    """
    return max(2, math.ceil(k / 4))


@dataclass
class LocalSwapResult:
    """``centers_index``: the k chosen candidate indices (private). ``iterates``: (T + 1, k)
    index sets Z^(0..T) (private: Z^(0) is data-independent, each later one an
    exponential-mechanism output). ``chosen``: the index t picked by the final mechanism.
    ``losses``: L(Z^(t)) on the private data, kept for teaching plots only — NOT private.

    Attributes
    ----------
    centers_index : ndarray of int of shape (k,)
        Indices into the candidates (private).
    iterates : ndarray of int of shape (T + 1, k)
        Z^(0), …, Z^(T).
    chosen : int
        t in [0, T].
    losses : ndarray of shape (T + 1,)
        L(Z^(t)) (NOT private).
    initial : ndarray of int of shape (k,)
        Z^(0).
    epsilon_step : float
        ε of each of the T + 1 exponential mechanisms.
    sensitivity : float
        Δ of the loss (:func:`loss_sensitivity`).
    """
    centers_index: np.ndarray
    iterates: np.ndarray
    chosen: int
    losses: np.ndarray
    initial: np.ndarray
    epsilon_step: float
    sensitivity: float


def seed_from_candidates(C, leaves, n_clusters, random_state=None):
    """k distinct candidate indices chosen from the released candidate set alone (no data,
    so no privacy cost), used as Z⁽⁰⁾ by default.

    k-means++-style D² sampling over the *leaf* candidates — centres of cubes none of whose
    sub-cubes stayed active, i.e. the finest resolution the partition reached, each having
    held about γ points or more — so that the seeds sit where points are and are spread out;
    the remaining candidates are used only when there are fewer than k leaves. The paper
    draws Z⁽⁰⁾ uniformly from all candidates (coarse cube centres included), which at
    practical ε leaves a nearly uniform exponential mechanism to undo a random start.

    Parameters
    ----------
    C : array_like of shape (m, p)
        The released candidates.
    leaves : array_like of bool of shape (m,)
        Which candidates are leaves.
    n_clusters : int in [1, m]
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    ndarray of int64 of shape (k,)
        Distinct indices into C.

    Raises
    ------
    ValueError
        If ``n_clusters`` is out of range.
    """
    C = np.asarray(C, dtype=np.float64)
    m = C.shape[0]
    k = check_int(n_clusters, "n_clusters", 1, m)
    rng = check_random_state(random_state)
    leaves = np.asarray(leaves, dtype=bool)
    pool = np.flatnonzero(leaves)
    chosen = []
    d2 = None
    for _ in range(k):
        if pool.size == 0:  # fewer leaves than k: continue with the other candidates
            pool = np.setdiff1d(np.arange(m), chosen)
            d2 = None if not chosen else np.min(np.sum((C[pool][:, None] - C[chosen][None]) ** 2, -1), axis=1)
        if d2 is None or d2.sum() <= 0:
            j = int(rng.integers(pool.size))
        else:
            j = int(rng.choice(pool.size, p=d2 / d2.sum()))
        nxt = int(pool[j])
        chosen.append(nxt)
        pool = np.delete(pool, j)
        dn = np.sum((C[pool] - C[nxt]) ** 2, axis=1)
        d2 = dn if d2 is None else np.minimum(np.delete(d2, j), dn)
    return np.array(chosen, dtype=np.int64)


def localswap(Y, C, n_clusters, epsilon, radius, n_iter=None, objective="kmeans", random_state=None, init=None):
    """Algorithm 3: ε-DP choice of k centres among the candidates C by local swaps.

    Parameters
    ----------
    Y : (n, p) points in B(0, Λ).   C : (m, p) candidates in B(0, Λ), m > k.
    n_clusters : k.   epsilon : budget of the whole routine (T swaps + final choice).
    n_iter : T (default :func:`default_swap_iterations`).
    init : Z⁽⁰⁾ as k distinct candidate indices chosen without looking at the data (e.g.
        :func:`seed_from_candidates`); default k distinct candidates drawn uniformly (the
        paper draws i.i.d.; duplicates would only waste centres).
    radius : float > 0
        Λ.
    objective : {"kmeans", "kmedian"}, default "kmeans"
    random_state : None, int or numpy.random.Generator, optional

    The final exponential mechanism chooses among Z⁽⁰⁾, …, Z⁽ᵀ⁾ (the paper: Z⁽¹⁾ … Z⁽ᵀ⁾;
    adding the data-independent start costs nothing and lets a good start survive swaps
    that a weak mechanism made at random).

    Returns
    -------
    LocalSwapResult

    Raises
    ------
    ValueError
        If Y or C is not a finite 2-D array, m ≤ k, ε, Λ or ``n_iter`` is out of range, a
        point or candidate lies outside B(0, Λ), ``init`` is not k distinct indices, or
        ``objective`` is unknown.
    """
    Y = check_array(Y, "Y")
    C = check_array(C, "C")
    k = check_int(n_clusters, "n_clusters", 1)
    m = C.shape[0]
    if m <= k:
        raise ValueError(f"the candidate set must have more than n_clusters={k} points; got {m}")
    epsilon = check_epsilon(epsilon)
    radius = check_real(radius, "radius", 0.0, None, low_inclusive=False)
    T = default_swap_iterations(k) if n_iter is None else check_int(n_iter, "n_iter", 1)
    rng = check_random_state(random_state)
    tol = 1 + 1e-9
    if np.any(np.linalg.norm(Y, axis=1) > radius * tol) or np.any(np.linalg.norm(C, axis=1) > radius * tol):
        raise ValueError("points and candidates must lie in the ball B(0, radius)")
    delta_u = loss_sensitivity(radius, objective)
    eps_step = epsilon / (T + 1)
    if init is None:
        Z = rng.choice(m, size=k, replace=False)
    else:
        Z = np.asarray(init, dtype=np.int64).ravel()
        if Z.size != k or np.unique(Z).size != k or Z.min() < 0 or Z.max() >= m:
            raise ValueError(f"init must be {k} distinct candidate indices in [0, {m - 1}]")
    initial = Z.copy()
    iterates = np.empty((T + 1, k), dtype=np.int64)
    losses = np.empty(T + 1)
    iterates[0] = Z
    for t in range(1, T + 1):
        S, total = swap_losses(Y, C, Z, objective)
        if t == 1:
            losses[0] = total
        in_z = np.zeros(m, dtype=bool)
        in_z[Z] = True
        outside = np.flatnonzero(~in_z)
        U = -S[:, outside]  # utility of each pair (position j of Z, candidate y ∉ Z)
        pick = int(exponential_mechanism(U.ravel(), eps_step, delta_u, rng))
        j, y = divmod(pick, outside.size)
        losses[t] = S[j, outside[y]]
        Z = Z.copy()
        Z[j] = outside[y]
        iterates[t] = Z
    chosen = int(exponential_mechanism(-losses, eps_step, delta_u, rng))
    return LocalSwapResult(iterates[chosen].copy(), iterates, chosen, losses, initial, eps_step, delta_u)
