"""Private recovery of centres in the original space R^d, given a partition of the points
(Alg. 4's noisy means, Alg. 5 for sparse data, a private 1-median for k-median) and the
private Lloyd (SuLQ) iteration built on the noisy means.

Parallel composition (Lemma 1, McSherry 2009). Each routine releases one statistic per
cluster of a partition that is itself fixed by earlier private releases. Replacing one
point changes at most two clusters (one loses x, one gains x′) or one cluster (x → x′);
every sensitivity below is the maximum over these cases *jointly over all clusters*, so
one release of all k clusters costs the budget once.

Gaussian releases are composed exactly with Gaussian differential privacy (Dong, Roth &
Su 2019): a Gaussian release of L2 sensitivity Δ and noise σ is (Δ/σ)-GDP, T adaptive
releases of μ₀-GDP each are √T·μ₀-GDP, and μ-GDP is (ε, δ)-DP exactly when
δ = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), the analytic Gaussian curve of
:func:`dpcore.privacy.gaussian_sigma_analytic`. So each of T releases of sensitivity Δ
uses the σ of one analytic Gaussian mechanism of sensitivity Δ·√T at the stage's (ε, δ):
every routine here calls :func:`dpcore.privacy.gaussian_mechanism` with
``sensitivity = Δ·√n_releases`` (:class:`dpcore.privacy.GaussianBudget`).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..validation import check_epsilon, check_delta, check_int, check_random_state, check_real
from ..privacy import exponential_mechanism, laplace_mechanism
from ..preprocessing import clip_rows, row_sq_norms
from .common import cluster_sums, nearest_centres

__all__ = ["MEANS_SENSITIVITY_FACTOR", "noisy_means", "private_lloyd",
           "sparse_noisy_means", "private_medians", "min_count"]

# L2 sensitivity of the joint release (Σ_{i∈S_j} xᵢ, Λ·|S_j|)_{j=1..k}, in units of Λ:
# x → x′ in the same cluster: ‖x − x′‖ ≤ 2Λ; in different clusters:
# √(‖x‖² + ‖x′‖² + Λ² + Λ²) ≤ 2Λ; adding/removing a point: √2·Λ.
MEANS_SENSITIVITY_FACTOR = 2.0


def min_count(count_sigma):
    """Noisy counts below max(1, 3σ_count) are treated as empty clusters (the released mean
    would be mostly noise); a public rule, so post-processing.

    Parameters
    ----------
    count_sigma : float
        Standard deviation of the noisy counts.

    Returns
    -------
    float
    """
    return max(1.0, 3.0 * count_sigma)


def noisy_means(X, labels, k, radius, budget, random_state=None, previous=None):
    """Noisy cluster means: one Gaussian release of (Σ_{i∈S_j} xᵢ, Λ·|S_j|)_{j=1..k}, of
    L2 sensitivity 2Λ (:data:`MEANS_SENSITIVITY_FACTOR`), from the :class:`~dpcore.privacy.GaussianBudget`
    ``budget``. So sums get N(0, σ²) per coordinate and counts N(0, σ²/Λ²).
    centre_j = noisy sum / noisy count, moved into B(0, Λ). Where the noisy count is below
    :func:`min_count` the centre is ``previous[j]`` if given (post-processing), else the
    noisy sum divided by max(noisy count, 1). Returns ``(centres, noisy_counts)``.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n, d)
        Points in B(0, Λ).
    labels : ndarray of int of shape (n,)
        Cluster of every point, in [0, k).
    k : int
    radius : float > 0
        Λ.
    budget : GaussianBudget
        Pays for this release (one of its ``n_releases``).
    random_state : None, int or numpy.random.Generator, optional
    previous : array_like of shape (k, d), optional
        Centres kept for near-empty clusters.

    Returns
    -------
    centres : ndarray of shape (k, d)
        In B(0, Λ).
    noisy_counts : ndarray of shape (k,)

    Raises
    ------
    ValueError
        If ``budget`` has no release left.
    """
    rng = check_random_state(random_state)
    sums, counts = cluster_sums(X, labels, k)
    sens = MEANS_SENSITIVITY_FACTOR * radius
    noisy = budget.release(np.hstack([sums, radius * counts[:, None]]), sens, rng)
    noisy_sums, noisy_counts = noisy[:, :-1], noisy[:, -1] / radius
    centres = noisy_sums / np.maximum(noisy_counts, 1.0)[:, None]
    if previous is not None:
        small = noisy_counts < min_count(budget.sigma(sens) / radius)
        centres[small] = np.asarray(previous, dtype=np.float64)[small]
    return clip_rows(centres, radius)[0], noisy_counts


def private_lloyd(X, centres, radius, n_iter, budget, random_state=None, sq_norms=None):
    """``n_iter`` private Lloyd (SuLQ) iterations from ``centres``: assign every point to
    its nearest centre, then :func:`noisy_means` (one release of ``budget`` each). Returns
    ``(centres, history)`` with ``history`` the list of released centre sets.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n, d)
        Points in B(0, Λ).
    centres : ndarray of shape (k, d)
        Start (public).
    radius : float > 0
        Λ.
    n_iter : int
    budget : GaussianBudget
        Must cover ``n_iter`` releases.
    random_state : None, int or numpy.random.Generator, optional
    sq_norms : ndarray of shape (n,), optional
        Precomputed ‖xᵢ‖².

    Returns
    -------
    centres : ndarray of shape (k, d)
    history : list of ndarray
        The centres released at every iteration.

    Raises
    ------
    ValueError
        If ``budget`` runs out of releases.
    """
    rng = check_random_state(random_state)
    k = centres.shape[0]
    sq = row_sq_norms(X) if sq_norms is None else sq_norms
    history = []
    for _ in range(n_iter):
        labels, _ = nearest_centres(X, centres, sq_norms=sq)
        centres, _ = noisy_means(X, labels, k, radius, budget, rng, previous=centres)
        history.append(centres.copy())
    return centres, history


def sparse_noisy_means(X, labels, k, radius, sparsity, eta, epsilon, random_state=None, previous=None):
    """Algorithm 5 for every cluster at once (parallel composition); ε-DP.

    Per cluster j with sum S_j = Σ_{i∈S_j} xᵢ: m = min(d, ⌈2s/η⌉) coordinates are chosen one
    after the other by the exponential mechanism with utility |S_j[r]| over the coordinates
    not yet chosen (each round ε/(2m); sensitivity 2Λ since |x[r]| ≤ ‖x‖ ≤ Λ), then
    (S_j[chosen], |S_j|) get Laplace noise with ε/2 and L1 sensitivity 2(√s·Λ + 1) (an
    s-sparse x with ‖x‖ ≤ Λ has ‖x‖₁ ≤ √s·Λ). The centre is the noisy sum on the chosen
    coordinates over the noisy count, zero elsewhere.

    Versus the paper: it scales utilities by the cluster size n (private here), so we use
    sums; its budget is not split between the two mechanisms, ours is (½, ½). Rows must be
    s-sparse (see :func:`dpcore.preprocessing.truncate_rows_to_sparsity`).

    Returns ``(centres, noisy_counts, chosen)`` with ``chosen`` (k, m) coordinate indices.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n, d)
        s-sparse points in B(0, Λ).
    labels : ndarray of int of shape (n,)
    k : int
    radius : float > 0
        Λ.
    sparsity : int ≥ 1
        s.
    eta : float in (0, 1]
        η.
    epsilon : float > 0
    random_state : None, int or numpy.random.Generator, optional
    previous : array_like of shape (k, d), optional
        Centres kept for near-empty clusters.

    Returns
    -------
    centres : ndarray of shape (k, d)
    noisy_counts : ndarray of shape (k,)
    chosen : ndarray of int64 of shape (k, m)

    Raises
    ------
    ValueError
        If ``epsilon``, ``sparsity`` or ``eta`` is out of range.
    """
    rng = check_random_state(random_state)
    epsilon = check_epsilon(epsilon)
    s = check_int(sparsity, "sparsity", 1)
    eta = check_real(eta, "eta", 0.0, 1.0, low_inclusive=False)
    sums, counts = cluster_sums(X, labels, k)
    d = sums.shape[1]
    m = min(d, math.ceil(2 * s / eta))
    eps_round = (epsilon / 2.0) / m
    chosen = np.empty((k, m), dtype=np.int64)
    for j in range(k):
        remaining = np.arange(d)
        util = np.abs(sums[j])
        for t in range(m):
            r = int(exponential_mechanism(util[remaining], eps_round, 2.0 * radius, rng))
            chosen[j, t] = remaining[r]
            remaining = np.delete(remaining, r)
    vals = np.hstack([np.take_along_axis(sums, chosen, axis=1), counts[:, None]])
    l1 = 2.0 * (math.sqrt(min(s, m)) * radius + 1.0)
    noisy = laplace_mechanism(vals, l1, epsilon / 2.0, rng)
    noisy_counts = noisy[:, -1]
    centres = np.zeros((k, d))
    np.put_along_axis(centres, chosen, noisy[:, :-1] / np.maximum(noisy_counts, 1.0)[:, None], axis=1)
    if previous is not None:
        small = noisy_counts < min_count(math.sqrt(2.0) * l1 / (epsilon / 2.0))
        centres[small] = np.asarray(previous, dtype=np.float64)[small]
    return clip_rows(centres, radius)[0], noisy_counts, chosen


MEDIAN_STEP_SENSITIVITY_FACTOR = math.sqrt(5.0)


def private_medians(X, labels, k, radius, budget, n_steps=5, random_state=None, previous=None):
    """Private 1-median of every cluster (the recovery step of the k-median variant, §6.2).

    Choice: instead of the log-concave sampling of Lemma 2 (an exponential mechanism over the
    continuous ball, which can only be sampled approximately, by MCMC, so its privacy would
    not be exact) or an exponential mechanism over a finite net of R^d (exponentially many
    points), noisy gradient descent on Σ_{i∈S_j} ‖z − xᵢ‖ — Bassily et al. (2014)'s other
    private ERM algorithm, whose error grows as √d rather than d. All releases are Gaussian
    and come from ``budget``, which must cover ``n_steps + 1`` releases.

    1. :func:`noisy_means` (sensitivity 2Λ) gives the start z⁰_j and the noisy counts ñ_j.
    2. ``n_steps`` times: release (Λ·g_j, s_j/2)_j with g_j = Σ (z_j − xᵢ)/‖z_j − xᵢ‖ (a sum
       of unit vectors) and s_j = Σ ‖z_j − xᵢ‖ (each term ≤ 2Λ): L2 sensitivity √5·Λ (x → x′
       in one cluster: √(4Λ² + Λ²); across clusters: √(2(Λ² + Λ²)) = 2Λ). Step
       z_j ← z_j − (s̃_j/ñ_j) ĝ_j /(2√(t+1)) with ĝ_j = g̃_j/ñ_j clipped to norm 1: the mean
       distance sets the scale of the step, the mean unit vector its direction.

    ``previous``: centres kept for clusters whose noisy count is too small (refinement).
    Returns ``(centres, noisy_counts)``.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n, d)
        Points in B(0, Λ).
    labels : ndarray of int of shape (n,)
    k : int
    radius : float > 0
        Λ.
    budget : GaussianBudget
        Must cover ``n_steps + 1`` releases.
    n_steps : int, default 5
    random_state : None, int or numpy.random.Generator, optional
    previous : array_like of shape (k, d), optional

    Returns
    -------
    centres : ndarray of shape (k, d)
    noisy_counts : ndarray of shape (k,)

    Raises
    ------
    ValueError
        If ``budget`` runs out of releases.
    """
    rng = check_random_state(random_state)
    labels = np.asarray(labels, dtype=np.int64)
    centres, ncount = noisy_means(X, labels, k, radius, budget, rng, previous=previous)
    n_eff = np.maximum(ncount, min_count(budget.sigma(MEANS_SENSITIVITY_FACTOR * radius) / radius))
    sens = MEDIAN_STEP_SENSITIVITY_FACTOR * radius
    dense = X.toarray() if sp.issparse(X) else X
    for t in range(n_steps):
        diff = centres[labels] - dense
        dist = np.sqrt(np.maximum(np.einsum("ij,ij->i", diff, diff), 0.0))
        unit = np.divide(diff, dist[:, None], out=np.zeros_like(diff), where=dist[:, None] > 0)
        g, _ = cluster_sums(unit, labels, k)
        s = np.bincount(labels, weights=dist, minlength=k)
        noisy = budget.release(np.hstack([radius * g, 0.5 * s[:, None]]), sens, rng)
        g_hat = noisy[:, :-1] / radius / n_eff[:, None]
        norms = np.linalg.norm(g_hat, axis=1)
        g_hat[norms > 1] /= norms[norms > 1][:, None]
        mean_dist = np.clip(2.0 * noisy[:, -1] / n_eff, 0.0, 2.0 * radius)
        centres = clip_rows(centres - 0.5 * mean_dist[:, None] * g_hat / math.sqrt(t + 1), radius)[0]
    return centres, ncount
