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

Decisions on *empty* sub-cubes are part of the mechanism too; there are 2^p − (occupied) of
them per active cube, far too many to enumerate for large p, so their number is drawn from
the binomial distribution and their positions uniformly among the empty sub-cubes — the same
distribution as deciding each one.

As executed, every decision is exact (:class:`SubdivisionCoins`): ε′ is rounded down to a
dyadic ε̃′ and γ to a multiple of 2⁻⁸ (γ̃, public), so a cube with m ≥ 1 points is kept with
probability f̃(m) = P[m + Lap(1/ε̃′) > γ̃] exactly: ½·exp(−x) or 1 − ½·exp(−x), x = ε̃′|γ̃ − m| a
dyadic rational, drawn as a fair coin and Canonne, Kamath & Steinke's Bernoulli(exp(−x))
(integer draws only); f̃(m + 1) ≤ e^{ε̃′}f̃(m) and 1 − f̃(m) ≤ e^{ε̃′}(1 − f̃(m + 1)) hold exactly.
An empty cube is kept with probability q̃ = 1 − e^{−λ}, λ a dyadic rational chosen (and checked
with 100-digit arithmetic) so that f̃(0) ≤ q̃ ≤ f̃(1): the pair (q̃, f̃(1)) satisfies the same two
ratio bounds, so the whole partition stays ε-DP as executed, with ε̃′ ≤ ε′. The number of
kept empty cubes among N is Binomial(N, q̃), drawn exactly: it is 0 with probability
e^{−λN} (an exact Bernoulli), and otherwise the first kept cube is at 1 + (G mod N) for G
geometric with P(G = g) ∝ e^{−λg} (exact, CKS Alg. 2; by memorylessness G mod N has the law of
the first success given one in N trials), and the count continues on the cubes after it.
"""
from __future__ import annotations

import decimal
import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from ..validation import check_array, check_epsilon, check_int, check_random_state, check_real
from ..preprocessing import clip_rows
from ..privacy.exact_choice import bernoulli_exp_dyadic
from ..privacy.exact_samplers import _ref_bern_exp, _ref_dlap

__all__ = ["default_projection_dim", "max_projection_dim", "jl_matrix", "jl_project", "subdivision_probability",
           "default_gamma", "default_max_depth", "PartitionResult", "private_partition", "CandidateSetResult",
           "candidate_set", "SubdivisionCoins", "subdivision_coins"]

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


#: γ is rounded to a multiple of 2^−GAMMA_BITS (public: γ is not part of the privacy argument).
GAMMA_BITS = 8
_DEC = decimal.Context(prec=100, Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX)   # f(0) = ½e^{−ε′γ} never underflows


@dataclass(frozen=True)
class SubdivisionCoins:
    """The exact decisions of Alg. 1 (:func:`subdivision_coins`).

    Attributes
    ----------
    eps_num, eps_bits : int
        ε̃′ = eps_num / 2^eps_bits ≤ ε′.
    gamma_num : int
        γ̃ = gamma_num / 2^8.
    shift : int
        eps_bits + 8: x_m = ε̃′|γ̃ − m| = eps_num·|gamma_num − 2⁸m| / 2^shift.
    lam_num, lam_bits : int
        λ = lam_num / 2^lam_bits: an empty cube is kept with probability 1 − e^{−λ}.
    max_count : int
        Largest count m for which eps_num·|gamma_num − 2⁸m| < 2⁶² (the vectorised draw).
    """
    eps_num: int
    eps_bits: int
    gamma_num: int
    shift: int
    lam_num: int
    lam_bits: int
    max_count: int

    @property
    def epsilon_prime(self):
        """ε̃′ as a float (exact: a dyadic rational of at most 62 bits is rounded only if above 53)."""
        return self.eps_num / 2.0 ** self.eps_bits

    @property
    def gamma(self):
        """γ̃ as a float."""
        return self.gamma_num / 2.0 ** GAMMA_BITS

    def keep_probability(self, m):
        """f̃(m) for counts m ≥ 1 and q̃ = 1 − e^{−λ} for m = 0, in float64 (the executed law).

        Parameters
        ----------
        m : array_like of int

        Returns
        -------
        ndarray of float64
        """
        m = np.asarray(m, dtype=np.float64)
        x = self.epsilon_prime * np.abs(self.gamma - m)
        f = np.where(m <= self.gamma, 0.5 * np.exp(-x), 1.0 - 0.5 * np.exp(-x))
        return np.where(m == 0, -np.expm1(-math.ldexp(self.lam_num, -self.lam_bits)), f)


def _neg_log1m(f):
    """−ln(1 − f) for a Decimal f in [0, 1/2], to about 95 significant digits."""
    with decimal.localcontext(_DEC):
        if f < decimal.Decimal("1e-6"):
            total, term, i = decimal.Decimal(0), f, 1
            while term > total * decimal.Decimal("1e-98") or i == 1:
                total += term / i
                i += 1
                term *= f
            return total
        return -(1 - f).ln()


def _keep_decimal(eps, gamma, m):
    """f̃(m) = P[m + Lap(1/ε̃′) > γ̃] with 100-digit Decimal arithmetic (eps, gamma: Fractions)."""
    with decimal.localcontext(_DEC):
        x = decimal.Decimal(eps.numerator) / eps.denominator * (decimal.Decimal(abs(gamma - m).numerator) /
                                                                abs(gamma - m).denominator)
        half = decimal.Decimal(1) / 2 * (-x).exp()
        return half if m <= gamma else 1 - half


def subdivision_coins(epsilon_prime, gamma, n):
    """The exact decisions of Alg. 1 for ε′, γ and at most n points per cube.

    ε̃′ = ⌊ε′·2^a⌋/2^a with a as large as the int64 arithmetic allows (eps_num·|γ̃·2⁸ − 2⁸m| <
    2⁶² for every count m ≤ n, a ≤ 54: about 62 − log₂((γ + n)·2⁸) significant bits, a relative
    loss ≤ 2⁻³⁰ for n ≤ 10⁶); γ̃ = round(γ·2⁸)/2⁸. λ is −ln(1 − f̃(0)) rounded up to about 30
    significant bits (more if needed to stay below −ln(1 − f̃(1)); a margin of 10⁻⁶⁰ relative at
    both ends), checked with 100-digit arithmetic (no underflow: f̃(0) can be e^(−10⁸)), so that
    f̃(0) ≤ 1 − e^{−λ} ≤ f̃(1) and q̃ is f̃(0) up to a relative 2⁻²⁹.

    Parameters
    ----------
    epsilon_prime : float > 0
    gamma : float ≥ 0
    n : int ≥ 1

    Returns
    -------
    SubdivisionCoins

    Raises
    ------
    ValueError
        If ε′ is below 2⁻⁵⁰ or γ + n is beyond 2⁴⁰ (the int64 arithmetic of the decisions).
    """
    return _subdivision_coins(float(epsilon_prime), float(gamma), int(n))


@functools.lru_cache(maxsize=64)
def _subdivision_coins(epsilon_prime, gamma, n):
    G = round(Fraction(gamma) * (1 << GAMMA_BITS))
    dmax = max(G, n * (1 << GAMMA_BITS) - G, 1)
    if dmax >= 1 << 48:
        raise ValueError(f"gamma + n = {gamma + n:g} is too large for the exact subdivision decisions (at most 2^40)")
    bits = 61 - dmax.bit_length()                       # eps_num < 2^bits keeps eps_num·dmax < 2^62
    a = min(54, bits - 1 - (math.frexp(epsilon_prime)[1] - 1))
    A = math.floor(Fraction(epsilon_prime) * (1 << a)) if a >= 0 else 0
    if a < 0 or A < 1 or a + GAMMA_BITS > 62:
        raise ValueError(f"epsilon' = {epsilon_prime:g} is out of range for the exact subdivision decisions")
    eps_t, gam_t = Fraction(A, 1 << a), Fraction(G, 1 << GAMMA_BITS)
    max_count = ((1 << 62) - 1) // (A << GAMMA_BITS)               # A·|G − 2⁸m| < 2⁶² for 1 ≤ m ≤ this (A·G < 2⁶²)
    with decimal.localcontext(_DEC):
        lo = _neg_log1m(_keep_decimal(eps_t, gam_t, 0)) * (1 + decimal.Decimal("1e-60"))
        hi = _neg_log1m(_keep_decimal(eps_t, gam_t, 1)) * (1 - decimal.Decimal("1e-60"))
        if not lo < hi:
            raise ValueError("epsilon' is too small for the exact empty-cube decisions")
        b = max(0, 30 - math.floor(lo.adjusted() * math.log2(10)))   # ≈ 30 significant bits (lo ≥ 10^adjusted)
        while True:
            two_b = decimal.Decimal(2) ** b
            num = int((lo * two_b).to_integral_value(rounding=decimal.ROUND_CEILING))
            if num <= hi * two_b:
                break
            b += 1
        lam = decimal.Decimal(num) / two_b
        q = -(-lam).exp() + 1 if lam > decimal.Decimal("1e-6") else lam - lam * lam / 2 + lam ** 3 / 6 - lam ** 4 / 24
        if not _keep_decimal(eps_t, gam_t, 0) <= q <= _keep_decimal(eps_t, gam_t, 1):  # pragma: no cover - margins
            raise ValueError("internal error: the empty-cube rate is outside [f(0), f(1)]")
    return SubdivisionCoins(A, a, G, a + GAMMA_BITS, num, b, max_count)


def _keep_occupied(counts, coins, rng):
    """Exact keep/drop decisions for cubes with counts m ≥ 1: Bernoulli(f̃(m)) as a fair coin
    (``integers(0, 2) == 0``) and Bernoulli(exp(−x_m)) (:func:`bernoulli_exp_dyadic`), x_m =
    ε̃′|γ̃ − m|: kept = both (m ≤ γ̃: ½e^{−x}) or not both (m > γ̃: 1 − ½e^{−x})."""
    m = np.asarray(counts, dtype=np.int64)
    if m.size and m.max() > coins.max_count:
        raise ValueError(f"a cube holds more than {coins.max_count} points: too many for the exact decisions")
    diff = m * (1 << GAMMA_BITS) - coins.gamma_num
    both = (rng.integers(0, 2, size=m.size) == 0) & bernoulli_exp_dyadic(np.abs(diff) * coins.eps_num, coins.shift,
                                                                        rng)
    return np.where(diff <= 0, both, ~both)


def _bernoulli_dyadic_lazy(rng, num, bits):
    """Bernoulli(num/2^bits), 0 ≤ num < 2^bits, by comparing a uniform U on [0, 1) with num/2^bits
    62 bits at a time from the top (``integers(0, 2^62)`` words): U < num/2^bits iff at the first
    differing chunk U's is the smaller. One word almost always, whatever ``bits`` (λ can need
    millions of bits when f(0) = ½e^{−ε′γ} is astronomically small)."""
    pos = bits
    while pos > 0:
        take = min(62, pos)
        pos -= take
        chunk = (num >> pos) & ((1 << take) - 1)
        w = int(rng.integers(0, 1 << take))
        if w != chunk:
            return w < chunk
    return False                                      # U ≥ num/2^bits: its remaining bits are ≥ 0


def _bernoulli_exp_lazy(rng, num, bits):
    """Bernoulli(exp(−num/2^bits)) for Python ints (CKS Alg. 1; the fraction's coins Bernoulli(x/K)
    as [Bernoulli(x), lazily] and [``integers(0, K) == 0``])."""
    whole, frac = (0, num) if num.bit_length() <= bits else divmod(num, 1 << bits)
    for _ in range(whole):
        if not _ref_bern_exp(rng, Fraction(1)):
            return False
    if frac == 0:
        return True
    k = 1
    while _bernoulli_dyadic_lazy(rng, frac, bits) and (k == 1 or int(rng.integers(0, k)) == 0):
        k += 1
    return k % 2 == 1


def _count_empty_kept(n_free, coins, rng):
    """For each active cube, the number of its N empty children that are kept: Binomial(N, 1 − e^{−λ})
    exactly (N Python ints, possibly above 2⁶²). X = 0 with probability e^{−λN}; otherwise the
    first kept child is at 1 + (G mod N), G ≥ 0 with P(G = g) ∝ e^{−λg} (the first success given
    one in N trials, by memorylessness), and the count goes on over the N − T children after it."""
    L, b = coins.lam_num, coins.lam_bits
    out = np.zeros(len(n_free), dtype=np.int64)
    nums = [L * int(N) for N in n_free]
    fast = np.array([v < 1 << 62 and b <= 62 for v in nums], dtype=bool)
    zero = np.ones(len(n_free), dtype=bool)
    if fast.any():                                    # e^{−λN} with an int64 numerator: vectorised
        zero[fast] = bernoulli_exp_dyadic(np.array([v for v, f in zip(nums, fast) if f], dtype=np.int64), b, rng)
    for i in np.flatnonzero(~fast):                   # huge N or λ: Python integers
        zero[i] = _bernoulli_exp_lazy(rng, nums[i], b)
    scale = Fraction(1 << b, L)                       # P(G = g) ∝ e^{−g/scale}, scale = 1/λ
    for i in np.flatnonzero(~zero):
        N, X = int(n_free[i]), 0
        while True:
            T = 1 + _ref_dlap(rng, scale, False) % N
            X += 1
            N -= T
            if N == 0 or _bernoulli_exp_lazy(rng, L * N, b):
                break
        out[i] = X
    return out


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
    coins : SubdivisionCoins or None
        The exact decisions used (ε̃′ ≤ ε′, γ̃ = ``gamma``, λ).
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
    coins: SubdivisionCoins | None = None


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
    coins = subdivision_coins(eps_prime, gamma, n)     # exact decisions with ε̃′ ≤ ε′ (module docstring)
    gamma = coins.gamma
    log_f0 = _log_f0(coins.epsilon_prime, gamma)

    T = (Y - lower) / edge  # unit-cube coordinates
    if np.any(T < -1e-9) or np.any(T > 1 + 1e-9):
        raise ValueError("Y must lie inside the initial cube [lower, lower + edge]")
    T = np.clip(T, 0.0, 1.0)

    active = np.zeros((1, p), dtype=np.int64)  # integer coordinates of the active cubes at depth a
    alive = np.arange(n)                        # points inside an active cube
    alive_cube = np.zeros(n, dtype=np.int64)    # index of that cube in `active`
    centers, depths, per_depth, leaves = [], [], [], []
    n_empty = 0
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
        keep = _keep_occupied(counts, coins, rng)       # Bernoulli(f̃(m)), exact
        # --- empty children: Binomial(2^p − occupied, 1 − e^{−λ}) activations per active cube, exact
        occ_per_parent = np.bincount(parent_of_occ, minlength=active.shape[0])
        n_free = [(1 << p) - int(o) for o in occ_per_parent]   # empty children of each active cube (Python ints)
        if any(N * math.exp(log_f0) > 10 * MAX_ACTIVE_CUBES for N in n_free):
            raise ValueError(f"gamma is too small for this epsilon and p: far more than {MAX_ACTIVE_CUBES} empty "
                             "cubes would be activated (raise gamma or lower p)")
        n_act = _count_empty_kept(n_free, coins, rng)
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
                           max_depth, lower, float(edge), n_empty, np.concatenate(leaves), coins)


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
