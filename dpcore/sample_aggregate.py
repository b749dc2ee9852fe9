"""The sample-aggregate framework (Nissim, Raskhodnikova & Smith 2007), Alg. 1 of the
subspace clustering paper, for any function f whose output is a vector of R^D.

Alg. 1, step by step (``m`` subsets, privacy (ε, δ), output dimension D):

2. s = √m, α = ε / (5·√(2 ln(2/δ))), β = ε / (4·(D + ln(2/δ)))           :func:`alg1_constants`
3. draw m subsets of size ⌊n/m⌋, each uniformly without replacement and independently of the
   others; redraw all of them until no record is in more than √m subsets  :func:`draw_subsets`
4. B = {s_i = f(X_{S_i})}, m vectors of R^D                                 (the caller's f)
5. g(B) = s_{i*}, i* = argmin_i r_i(t₀), t₀ = (m+s)/2 + 1                  :func:`center_of_attention`
6. S(B) = 2·max_k ρ(t₀ + (k+1)s)·e^{−βk}, ρ(t) = mean of the ⌊s/β⌋ top
   values of {r_1(t), …, r_m(t)}                                           :func:`smooth_sensitivity`
7. release g(B) + S(B)/α · u, u ~ N(0, I_D)                                 :func:`private_aggregate`

:func:`sample_aggregate` runs steps 2–7 on a dataset and records the release in a
:class:`~dpcore.privacy.PrivacyLedger`. The module knows nothing about subspaces: the
distance d_M between outputs is pluggable (``distances``: a function from the m×D array
B to the m×m matrix of d_M values), with :func:`euclidean_distances` (plain ℓ2) and
:func:`matching_distances` (the Wasserstein / matching distance between vectors made of k
unordered blocks: k subspaces, k cluster centres, ...) provided.

Conventions where Alg. 1 leaves a detail open (documented decisions)
---------------------------------------------------------------------
- **s is an integer**, s = ⌊√m⌋: the subsampling rule "no record in more than √m sets" is a
  statement about integer counts, so it is the same as "in at most ⌊√m⌋ sets", and s is the
  number of outputs that one record can change. (For a perfect square m, s = √m exactly.)
- **t₀ = ⌈(m + s)/2⌉ + 1** (an index must be an integer; rounding up keeps the "more than
  half of B" property that makes the centre of attention stable).
- **r_i(t)** is the d_M distance from s_i to its t-th nearest neighbour among the *other*
  m − 1 outputs (t = 1 is the closest other output). As in Nissim et al., when no such
  neighbour exists (t ≥ m) r_i(t) = Λ, the public **diameter** of the output space under
  d_M (e.g. √(2k·min(q, d−q)) for k q-dimensional subspaces of R^d under d_W). This is
  what makes S(B) finite: the max over k in step 6 is reached by k ≤ the first k whose
  index t₀ + (k+1)s is ≥ m, after which ρ = Λ and e^{−βk} only decreases.
- **ρ(t), "the top ⌊s/β⌋ values"** is read as the ⌊s/β⌋ *smallest* radii (the best-ranked
  candidate centres). With the largest radii, one bad subset solution would set the noise
  whatever the others do, contradicting the utility part of Thm 3.1 (noise O(r/ε) when
  3/4 of the outputs are within r of a point). The count ⌊s/β⌋ is clipped to [1, m]: it is
  0 when β > s (huge ε) and exceeds m when ε < 4·√m·(D + ln(2/δ))/m, which is essentially
  the regime ε ≲ 2D/√m where Thm 3.1's condition fails (then ρ is the mean of all m radii).
- **Ties** in argmin r_i(t₀) go to the lowest index.
- **Block order.** When d_M is a matching distance between k unordered blocks (the order
  in which a solver lists its k subspaces or centres is arbitrary), the blocks of g(B) are
  put in a uniformly random order (drawn without looking at the data) before the noise is
  added. The released vector's distribution then depends only on the *set* of blocks of
  g(B): for neighbouring B, B′ every listing of g(B) can be paired with the listing of
  g(B′) matched to it, whose ℓ2 distance is exactly d_M(g(B), g(B′)), so the Gaussian
  smooth-sensitivity argument (which is about ℓ2 in R^D) applies with d_M = d_W.

Thm 3.1 ([22] Thm 4.2) states the (ε, δ) guarantee for any f, under the conditions
ε > 2D/√m and m = ω(log² n); the utility bound needs them too. The issue asks for runs at
any ε (a teaching tool shows what happens at ε = 1), so nothing is refused: the conditions
are reported by :func:`theorem31_conditions` (for finite n, "m = ω(log² n)" is checked as
m ≥ (ln n)²), written into the ledger note, and the subspace estimator warns when one is
broken - outside them the paper's theorem does not cover the run.
Besides the released vector nothing here is private: S(B), the chosen index, the radii and
the subset outputs are data-dependent diagnostics for teaching, not releases.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from scipy.optimize import linear_sum_assignment

from ._validation import check_array, check_delta, check_epsilon, check_int, check_random_state, check_real
from .privacy import PrivacyLedger

__all__ = [
    "Alg1Constants", "alg1_constants", "draw_subsets", "subset_redraw_probability", "euclidean_distances",
    "matching_distances", "nearest_neighbour_radii", "radii_at", "center_of_attention", "smooth_sensitivity",
    "AggregateResult", "private_aggregate", "sample_aggregate", "theorem31_conditions",
]

MECHANISM_NAME = "smooth-sensitivity Gaussian (sample-aggregate, Alg. 1)"


# --------------------------------------------------------------------------- step 2
@dataclass(frozen=True)
class Alg1Constants:
    """The data-independent constants of Alg. 1 (all public)."""
    m: int          # number of subsets
    D: int          # output dimension
    epsilon: float
    delta: float
    s: int          # ⌊√m⌋: the most subsets one record may be in
    alpha: float    # ε / (5 √(2 ln(2/δ)))
    beta: float     # ε / (4 (D + ln(2/δ)))
    t0: int         # ⌈(m + s)/2⌉ + 1
    n_top: int      # ⌊s/β⌋ clipped to [1, m]: how many radii ρ(t) averages
    n_top_raw: float  # s/β before flooring and clipping


def alg1_constants(m, epsilon, delta, D):
    """Step 2 of Alg. 1 plus t₀ and ⌊s/β⌋ (see the module docstring for the conventions)."""
    m = check_int(m, "n_subsets", 2)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    D = check_int(D, "D", 1)
    s = math.isqrt(m)
    log_term = math.log(2.0 / delta)
    alpha = epsilon / (5.0 * math.sqrt(2.0 * log_term))
    beta = epsilon / (4.0 * (D + log_term))
    t0 = math.ceil((m + s) / 2) + 1
    raw = s / beta
    n_top = int(min(max(math.floor(raw), 1), m))
    return Alg1Constants(m=m, D=D, epsilon=epsilon, delta=delta, s=s, alpha=alpha, beta=beta, t0=t0,
                         n_top=n_top, n_top_raw=raw)


def theorem31_conditions(epsilon, D, m, n):
    """Thm 3.1's conditions for a useful sample-aggregate release.

    Returns a dict with ``eps_ok`` (ε > 2D/√m), ``eps_threshold`` (2D/√m), ``m_ok``
    (m ≥ (ln n)², the finite-n reading of m = ω(log² n)), ``m_threshold`` ((ln n)²) and
    ``messages`` (one sentence per broken condition, empty when both hold).
    """
    eps_thr = 2.0 * D / math.sqrt(m)
    m_thr = math.log(n) ** 2 if n > 1 else 0.0
    msgs = []
    if not epsilon > eps_thr:
        msgs.append(f"Theorem 3.1 assumes epsilon > 2D/sqrt(m) = 2*{D}/sqrt({m}) = {eps_thr:.4g}; got epsilon = "
                    f"{epsilon:g}: the theorem does not cover this run and the noise will swamp the aggregate")
    if not m >= m_thr:
        msgs.append(f"Theorem 3.1 assumes m = omega(log^2 n), checked as n_subsets >= (ln n)^2 = {m_thr:.4g} for "
                    f"n = {n}; got n_subsets = {m}: the theorem does not cover this run")
    return {"eps_ok": epsilon > eps_thr, "eps_threshold": eps_thr, "m_ok": m >= m_thr, "m_threshold": m_thr,
            "messages": msgs}


# --------------------------------------------------------------------------- step 3
def subset_redraw_probability(n, m, subset_size=None):
    """Approximate probability that one draw of step 3 is accepted.

    A record is in each subset independently with probability p = size/n, so its count is
    Binomial(m, p); treating the n records as independent (their counts are negatively
    correlated, so this slightly underestimates) P(accept) ≈ (1 − P[Bin(m, p) > ⌊√m⌋])ⁿ.
    """
    size = n // m if subset_size is None else subset_size
    tail = stats.binom.sf(math.isqrt(m), m, size / n)
    return float(np.exp(n * np.log1p(-tail))) if tail < 1 else 0.0


def draw_subsets(n, m, random_state=None, subset_size=None, max_redraws=1000):
    """Step 3 of Alg. 1: m subsets of ⌊n/m⌋ distinct indices each, drawn independently and
    uniformly; the whole draw is repeated until no index is in more than √m subsets.

    The rule only looks at indices, never at data values, so redrawing costs no privacy.
    Returns ``(subsets, n_draws)``: an (m, size) int array (each row sorted) and the number
    of draws made. Raises ``ValueError`` naming ``n_subsets`` when m > n, and when m is so
    small that the rule is practically never met (estimated acceptance probability below
    1/``max_redraws``, or ``max_redraws`` draws all rejected).
    """
    n = check_int(n, "n", 2)
    m = check_int(m, "n_subsets", 2, n)
    size = n // m if subset_size is None else check_int(subset_size, "subset_size", 1, n)
    max_redraws = check_int(max_redraws, "max_redraws", 1)
    rng = check_random_state(random_state)
    s = math.isqrt(m)
    p_accept = subset_redraw_probability(n, m, size)
    if p_accept < 1.0 / max_redraws:
        raise ValueError(
            f"n_subsets = {m} is too small for n = {n}: with subsets of {size} points, some point lands in more "
            f"than sqrt(m) = {s} subsets in almost every draw (acceptance probability ~{p_accept:.1e}); "
            f"use a larger n_subsets")
    for draw in range(1, max_redraws + 1):
        keys = rng.random((m, n))
        subsets = np.sort(np.argpartition(keys, size - 1, axis=1)[:, :size], axis=1)
        counts = np.bincount(subsets.ravel(), minlength=n)
        if counts.max() <= s:
            return subsets, draw
    raise ValueError(f"n_subsets = {m}: no draw out of {max_redraws} met the rule 'no point in more than "
                     f"sqrt(m) = {s} subsets'; use a larger n_subsets")


# --------------------------------------------------------------------------- d_M
def euclidean_distances(B):
    """m×m matrix of ℓ2 distances between the rows of B."""
    B = np.asarray(B, dtype=np.float64)
    sq = np.sum(B ** 2, axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * B @ B.T, 0.0)
    np.fill_diagonal(D2, 0.0)
    return np.sqrt(D2)


def matching_distances(B, n_blocks):
    """m×m matrix of the matching (Wasserstein) distance between rows of B seen as sets of
    ``n_blocks`` equal blocks:

        d(v, w) = √( min over permutations π of Σ_a ‖v_a − w_π(a)‖² ),

    the d_W of eq. (2) when each block is an isometric encoding of one subspace, and the
    distance Nissim et al. use between lists of k-means centres. Exact: all k! matchings
    for k ≤ 5, the Hungarian algorithm per pair otherwise.
    """
    B = np.asarray(B, dtype=np.float64)
    m, D = B.shape
    k = check_int(n_blocks, "n_blocks", 1, D)
    if D % k:
        raise ValueError(f"n_blocks must divide the vector length D = {D}; got {k}")
    if k == 1:
        return euclidean_distances(B)
    V = B.reshape(m, k, D // k)
    sq = np.sum(V ** 2, axis=2)                                     # (m, k)
    C = sq[:, None, :, None] + sq[None, :, None, :] - 2.0 * np.einsum("iab,jcb->ijac", V, V)
    C = np.maximum(C, 0.0)                                          # C[i, j, a, c] = ‖v_ia − v_jc‖²
    if k <= 5:
        perms = np.array(list(itertools.permutations(range(k))))   # (k!, k)
        tot = C[:, :, np.arange(k)[None, :], perms].sum(axis=3)     # (m, m, k!)
        D2 = tot.min(axis=2)
    else:
        D2 = np.zeros((m, m))
        for i in range(m):
            for j in range(i + 1, m):
                r, c = linear_sum_assignment(C[i, j])
                D2[i, j] = D2[j, i] = C[i, j][r, c].sum()
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.sqrt(D2)


# --------------------------------------------------------------------------- steps 5-6
def nearest_neighbour_radii(dist):
    """(m, m−1) array R with R[i, t−1] = r_i(t): the sorted distances from output i to the
    other m − 1 outputs (its own zero distance excluded)."""
    dist = np.asarray(dist, dtype=np.float64)
    m = dist.shape[0]
    if dist.shape != (m, m):
        raise ValueError(f"distances must return an m×m matrix; got shape {dist.shape}")
    off = ~np.eye(m, dtype=bool)
    return np.sort(dist[off].reshape(m, m - 1), axis=1)


def radii_at(R, t, diameter):
    """(m,) vector r_i(t); r_i(t) = Λ = ``diameter`` when t ≥ m (no t-th other output)."""
    m = R.shape[0]
    if t < 1:
        raise ValueError(f"t must be >= 1; got {t}")
    if t > m - 1:
        return np.full(m, float(diameter))
    return R[:, t - 1]


def center_of_attention(R, t0, diameter):
    """Step 5: i* = argmin_i r_i(t₀) (ties → lowest index). Returns ``(i*, r(t₀))``."""
    r = radii_at(R, t0, diameter)
    return int(np.argmin(r)), r


def smooth_sensitivity(R, t0, s, beta, n_top, diameter):
    """Step 6: S(B) = 2·max_{k ≥ 0} ρ(t₀ + (k+1)s)·e^{−βk}, ρ(t) the mean of the ``n_top``
    smallest r_i(t).

    Returns ``(S, terms)`` where ``terms`` is a list of (k, t, ρ(t), ρ(t)e^{−βk}) for every k
    examined: k runs until t ≥ m, where ρ = Λ and larger k can only give smaller terms.
    """
    m = R.shape[0]
    terms = []
    k = 0
    while True:
        t = t0 + (k + 1) * s
        r = radii_at(R, t, diameter)
        rho = float(np.mean(np.sort(r)[:n_top]))
        terms.append((k, t, rho, rho * math.exp(-beta * k)))
        if t > m - 1:
            break
        k += 1
    return 2.0 * max(term[3] for term in terms), terms


# --------------------------------------------------------------------------- step 7
@dataclass
class AggregateResult:
    """Everything one sample-aggregate run computed. Only ``released`` is differentially
    private; the rest is data-dependent diagnostics (see ``nonprivate``)."""
    released: np.ndarray            # g(B) + S(B)/α·u  (PRIVATE)
    center: np.ndarray              # g(B) = s_{i*}, blocks in released order (not private)
    chosen_index: int               # i*
    constants: Alg1Constants
    smooth_sensitivity: float       # S(B)
    noise_scale: float              # S(B)/α, the per-coordinate noise standard deviation
    radii_t0: np.ndarray            # r_i(t₀) for every i
    sensitivity_terms: list         # (k, t, ρ(t), ρ(t)e^{−βk}) of step 6
    distances: np.ndarray           # m×m d_M matrix of B
    outputs: np.ndarray             # B, m×D
    block_permutation: np.ndarray   # order in which g(B)'s blocks were released
    diameter: float
    subsets: np.ndarray | None = None
    n_draws: int | None = None
    ledger: PrivacyLedger | None = None
    nonprivate: dict = field(default_factory=lambda: {
        "center": "the exact subset output g(B) chosen from the data",
        "chosen_index": "which subset output was chosen depends on the data",
        "smooth_sensitivity": "S(B) is computed from the data; only S(B)/α·u with the noise is safe",
        "noise_scale": "S(B)/α is computed from the data",
        "radii_t0": "distances between subset outputs computed from the data",
        "outputs": "the raw (non-private) subset outputs",
    })

    @property
    def n_far_neighbours(self):
        """For every output i: how many of the other m−1 outputs are farther than the chosen
        output's radius r_{i*}(t₀) (the 'far neighbours'; the chosen output has the fewest
        up to ties)."""
        r = self.radii_t0[self.chosen_index]
        far = (self.distances > r + 1e-12).sum(axis=1)
        return far


def private_aggregate(B, epsilon, delta, *, diameter, distances=None, n_blocks=1, max_multiplicity=None,
                      random_state=None):
    """Steps 2 and 5–7 of Alg. 1 on given subset outputs B (m×D).

    Parameters
    ----------
    B : (m, D) array, the subset outputs s_i = f(X_{S_i}).
    epsilon, delta : privacy parameters, ε > 0, δ ∈ (0, 1).
    diameter : Λ > 0, a public bound on d_M between any two possible outputs (used for
        r_i(t) with t ≥ m). A computed distance above Λ raises ``ValueError``.
    distances : callable B -> m×m d_M matrix; default :func:`euclidean_distances`, or
        :func:`matching_distances` with ``n_blocks`` when ``n_blocks > 1`` and None given.
    n_blocks : the number of unordered blocks of each output (1 = an ordinary vector).
        With n_blocks > 1 the blocks of g(B) are released in a random order (module doc).
    max_multiplicity : the most outputs one record can affect; Alg. 1 guarantees ⌊√m⌋ by its
        subsampling rule, which is the default. Must equal the s of Alg. 1 (a smaller value
        would under-state the sensitivity), so only ⌊√m⌋ is accepted.
    random_state : None, int or Generator (the block order and the Gaussian noise).
    """
    B = check_array(B, "B")
    m, D = B.shape
    if m < 2:
        raise ValueError(f"n_subsets must be an integer >= 2; got {m}")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    diameter = check_real(diameter, "diameter", 0.0, None, low_inclusive=False)
    n_blocks = check_int(n_blocks, "n_blocks", 1, D)
    if D % n_blocks:
        raise ValueError(f"n_blocks must divide the output dimension D = {D}; got {n_blocks}")
    if max_multiplicity is not None and check_int(max_multiplicity, "max_multiplicity", 1) != math.isqrt(m):
        raise ValueError(f"max_multiplicity must be floor(sqrt(m)) = {math.isqrt(m)} (Alg. 1's subsampling "
                         f"rule); got {max_multiplicity}")
    rng = check_random_state(random_state)
    c = alg1_constants(m, epsilon, delta, D)
    if distances is None:
        distances = euclidean_distances if n_blocks == 1 else (lambda A: matching_distances(A, n_blocks))
    dist = np.asarray(distances(B), dtype=np.float64)
    if dist.shape != (m, m) or not np.all(np.isfinite(dist)):
        raise ValueError(f"distances must return a finite m×m matrix; got shape {dist.shape}")
    if dist.max() > diameter * (1 + 1e-9) + 1e-12:
        raise ValueError(f"diameter must bound d_M between outputs; got diameter = {diameter:g} but two outputs "
                         f"are {dist.max():g} apart")
    R = nearest_neighbour_radii(dist)
    i_star, r_t0 = center_of_attention(R, c.t0, diameter)
    S, terms = smooth_sensitivity(R, c.t0, c.s, c.beta, c.n_top, diameter)
    perm = rng.permutation(n_blocks) if n_blocks > 1 else np.zeros(1, dtype=np.int64)
    center = B[i_star].reshape(n_blocks, D // n_blocks)[perm].ravel()
    noise_scale = S / c.alpha
    released = center + noise_scale * rng.standard_normal(D)
    return AggregateResult(released=released, center=center, chosen_index=i_star, constants=c,
                           smooth_sensitivity=S, noise_scale=noise_scale, radii_t0=r_t0,
                           sensitivity_terms=terms, distances=dist, outputs=B, block_permutation=perm,
                           diameter=diameter)


def sample_aggregate(X, f, n_subsets, epsilon, delta, *, diameter, distances=None, n_blocks=1,
                     random_state=None, ledger=None, what="sample-aggregate release of f", max_redraws=1000,
                     subset_size=None):
    """Alg. 1 on a dataset: subsample (step 3), evaluate f on every subset (step 4),
    aggregate privately (steps 5–7) and record the release in ``ledger``.

    ``f`` maps an array of rows X[S_i] to a vector of R^D (the same D for every subset);
    any randomness f needs should come from a Generator the caller controls. Returns an
    :class:`AggregateResult` with ``subsets``, ``n_draws`` and ``ledger`` filled in. The
    ledger gets ONE entry (ε, δ): the release g(B) + S(B)/α·u.
    """
    X = check_array(X, "X", ensure_2d=False)
    n = X.shape[0]
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    rng = check_random_state(random_state)
    subsets, n_draws = draw_subsets(n, n_subsets, rng, subset_size=subset_size, max_redraws=max_redraws)
    outs = [np.asarray(f(X[idx]), dtype=np.float64).ravel() for idx in subsets]
    if len({o.size for o in outs}) != 1:
        raise ValueError("f must return vectors of the same length D on every subset")
    B = np.stack(outs)
    res = private_aggregate(B, epsilon, delta, diameter=diameter, distances=distances, n_blocks=n_blocks,
                            random_state=rng)
    res.subsets = subsets
    res.n_draws = n_draws
    ledger = PrivacyLedger() if ledger is None else ledger
    c = res.constants
    th = theorem31_conditions(epsilon, c.D, c.m, n)
    broken = ([] if th["eps_ok"] else [f"epsilon <= 2D/sqrt(m) = {th['eps_threshold']:.4g}"]) \
        + ([] if th["m_ok"] else [f"m < (ln n)^2 = {th['m_threshold']:.4g}"])
    cond = "conditions NOT met: " + ", ".join(broken) if broken else "conditions met"
    ledger.record(what, MECHANISM_NAME, epsilon, delta,
                  note=f"Thm 3.1 (Nissim et al. 2007, Thm 4.2), {cond}; m={c.m} subsets of {subsets.shape[1]} "
                       f"points, D={c.D}, s={c.s}, t0={c.t0}, alpha={c.alpha:.4g}, beta={c.beta:.4g}")
    res.ledger = ledger
    return res
