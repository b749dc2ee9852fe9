"""Exact exponential-mechanism choices over finite sets: a public grid, integer arithmetic.

The textbook exponential mechanism picks candidate j with P(j) ∝ exp(η·uⱼ). Drawn with a float
Gumbel per candidate (Gumbel-max), a 53-bit uniform bounds every Gumbel to about [−3.6, 36.7],
so a candidate whose logit is more than ~40 below the best is *impossible* instead of merely
improbable, and the mechanism as executed is not ε-DP (Mironov 2012). Here the choice is drawn
exactly, as the ledger states it:

1. **A public grid.** Utilities are rounded to multiples of h = 2^e, chosen from the sensitivity
   Δ and ε only (h ≤ Δ·2⁻²⁰ unless ε is tiny, see :func:`choice_plan`): ũⱼ = h·round(uⱼ/h),
   |ũⱼ − uⱼ| ≤ h/2, computed exactly (dividing by a power of two only moves the exponent).
   The rounding is paid for in the sensitivity: |ũⱼ(D) − ũⱼ(D′)| ≤ Δ + h for the usual
   sensitivity, and the range of ũ(D) − ũ(D′) grows by at most 2h (each difference moves by at
   most h) for the range sensitivity of the co-clustering paper.
2. **A dyadic scale, rounded down.** The scale η′ = ε/(2(Δ + h)) (or ε/(Δ + 2h) for the range
   sensitivity) times h is rounded *down* to c̃ = M/2^s (M an integer of 22 bits), so the
   ε delivered, 2(c̃/h)(Δ + h) (or (c̃/h)(Δ + 2h)), is at most the ε claimed, exactly
   (:attr:`ChoicePlan.epsilon_delivered`).
3. **Integer gaps.** With Bⱼ = round(uⱼ/h) the candidate's weight is exp(−γⱼ),
   γⱼ = c̃·min(B_max − Bⱼ, G) = Nⱼ/2^s with Nⱼ = M·min(B_max − Bⱼ, G) an integer < 2⁶². The
   clip G (public, γ_max = M·G/2^s ≥ 2¹¹) caps only gaps whose weight is below e^(−2048):
   replacing ũⱼ by max(ũⱼ, ũ_max − Gh) keeps both sensitivities (each is a max of functions
   that move by at most Δ + h, resp. keeps every difference between the smallest and largest
   difference), so it costs no privacy; it keeps every integer in int64.
4. **An exact sampler.** Uniform proposals j, accepted with probability exp(−γⱼ) drawn by
   Canonne, Kamath & Steinke's Bernoulli(exp(−γ)) (⌊γ⌋ Bernoulli(e⁻¹) and one
   Bernoulli(exp(−frac)), every coin a comparison of ``Generator.integers`` draws:
   :func:`bernoulli_exp_dyadic`). A proposal j is output with probability proportional to
   exp(−γⱼ) ≤ 1, so the output has exactly P(j) = exp(−γⱼ)/Σᵢ exp(−γᵢ); the best candidate
   (γ = 0) is accepted at once, so a draw takes at most m proposals on average
   (m/Σᵢ exp(−γᵢ)). Every candidate, however far below the best, has a positive probability
   and is reachable: it is proposed with probability 1/m and accepted when ⌊γ⌋ + 1 finite
   runs of coins come out right.

:func:`choice_pmf` is the exact law of what is sampled (computed in float64 for display and
tests). The proofs are in ``docs/privacy_as_executed.md`` ("Exact choices").
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..validation import check_epsilon, check_random_state, check_real

__all__ = ["ChoicePlan", "choice_plan", "choice_gaps", "choice_pmf", "sample_choices", "bernoulli_exp_dyadic",
           "exact_exponential_mechanism", "UnitRangePlan", "unit_range_plan", "unit_range_gaps", "GRID_BITS",
           "SCALE_BITS", "MIN_RESOLUTION_BITS", "UNIT_GRID_BITS", "UNIT_SCALE_BITS"]

#: The grid h is at most Δ·2^−GRID_BITS (the sensitivity grows by a relative 2^−GRID_BITS).
GRID_BITS = 20
#: The scale's numerator M has SCALE_BITS bits (it is rounded down by a relative 2^−(SCALE_BITS−1) at most).
SCALE_BITS = 22
#: For tiny ε the grid is coarsened until the logit step c̃ = η′h is at least 2^−MIN_RESOLUTION_BITS,
#: so that the gaps' denominator 2^s stays ≤ 2^51 and every numerator M·G ≤ 2^62.
MIN_RESOLUTION_BITS = 30
_WORD_LIMIT = (1 << 62) - 1
_BLOCK_ENTRIES = 1 << 13          # proposals drawn per round of the vectorised sampler (at most)


def _floor_log2(x):
    """⌊log₂ x⌋ of a positive Fraction, exactly."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


@dataclass(frozen=True)
class ChoicePlan:
    """The public constants of one exact exponential mechanism (see the module docstring).

    Attributes
    ----------
    epsilon : float
        The ε claimed.
    sensitivity : float
        Δ (usual or range sensitivity).
    range_sensitivity : bool
        Whether Δ is the range sensitivity (scale ε/Δ instead of ε/(2Δ)).
    grid : float
        h = 2^e, the utilities' grid.
    scale_num : int
        M: the logit step c̃ = η̃·h is M/2^s.
    scale_shift : int
        s (0 ≤ s ≤ 62).
    gap_clip : int
        G, the largest gap in grid units (γ ≤ M·G/2^s).
    """
    epsilon: float
    sensitivity: float
    range_sensitivity: bool
    grid: float
    scale_num: int
    scale_shift: int
    gap_clip: int

    @property
    def step(self):
        """c̃ = M/2^s (a Fraction): γⱼ = c̃·(gap in grid units)."""
        return Fraction(self.scale_num, 1 << self.scale_shift)

    @property
    def scale(self):
        """η̃ = c̃/h (a Fraction): P(j) ∝ exp(η̃·ũⱼ)."""
        return self.step / Fraction(self.grid)

    @property
    def paid_sensitivity(self):
        """Δ + h (usual) or Δ + 2h (range), the sensitivity of the rounded utilities (a Fraction)."""
        h = Fraction(self.grid)
        return Fraction(self.sensitivity) + (2 * h if self.range_sensitivity else h)

    @property
    def epsilon_delivered(self):
        """The ε the executed mechanism delivers, 2η̃(Δ + h) or η̃(Δ + 2h), as a float rounded up
        (≤ ``epsilon``)."""
        exact = (1 if self.range_sensitivity else 2) * self.scale * self.paid_sensitivity
        v = float(exact)
        return v if Fraction(v) >= exact else math.nextafter(v, math.inf)

    @property
    def max_gap(self):
        """γ_max = M·G/2^s: gaps beyond it are clipped (their weight is below e^(−γ_max))."""
        return float(Fraction(self.scale_num * self.gap_clip, 1 << self.scale_shift))


def choice_plan(epsilon, sensitivity, range_sensitivity=False):
    """The public grid, dyadic scale and gap clip of an exact exponential mechanism.

    h = 2^e with e = ⌊log₂ Δ⌋ − 20, raised while the logit step η′h (η′ = ε/(2(Δ + h)), or
    ε/(Δ + 2h) with the range sensitivity) is below 2⁻³⁰ (only for ε below ≈ 2⁻⁹: the grid
    then costs more than a relative 2⁻²⁰ of the sensitivity). c̃ = ⌊η′h·2^s⌋/2^s with s such
    that the numerator M has 22 bits (s ≤ 51), and G = min(⌊(2⁶² − 1)/M⌋, 2⁵³), so that
    γ_max = MG/2^s ≥ 2¹¹. Everything is computed with :class:`fractions.Fraction` from the two
    floats given (each a dyadic rational), so ``epsilon_delivered`` ≤ ``epsilon`` exactly.

    Parameters
    ----------
    epsilon : float > 0
    sensitivity : float > 0
    range_sensitivity : bool, default False

    Returns
    -------
    ChoicePlan

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite positive number, or ε is beyond about
        2⁸¹ (a logit step ε·h/Δ of 2⁶¹: a scale no float utility could use).
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    return _choice_plan(float(epsilon), float(sensitivity), bool(range_sensitivity))


@functools.lru_cache(maxsize=512)
def _choice_plan(epsilon, sensitivity, range_sensitivity):
    eps, delta = Fraction(epsilon), Fraction(sensitivity)
    kappa = 1 if range_sensitivity else 2
    e = math.frexp(sensitivity)[1] - 1 - GRID_BITS                 # h = 2^e ≤ Δ·2^−20
    floor_c = Fraction(1, 1 << MIN_RESOLUTION_BITS)
    while True:
        h = Fraction(2) ** e
        c = eps * h / (kappa * delta + 2 * h)                       # η′h with the paid sensitivity
        if c >= floor_c:
            break
        e += 1
    if c >= Fraction(1 << 61):
        raise ValueError(f"epsilon / sensitivity = {epsilon / sensitivity:g} is too large for the exact exponential "
                         "mechanism (the logit step ε·h/Δ must stay below 2^61)")
    s = max(0, SCALE_BITS - 1 - _floor_log2(c))
    M = math.floor(c * (1 << s))
    G = min(_WORD_LIMIT // M, 1 << 53)
    return ChoicePlan(epsilon, sensitivity, range_sensitivity, math.ldexp(1.0, e), M, s, G)


# --------------------------------------------------------------------------- utilities in [0, 1]
#: Grid of :func:`unit_range_plan`: h = 2^−UNIT_GRID_BITS (coarser only for a scale below ≈ 2⁻¹).
UNIT_GRID_BITS = 42
#: Significant bits of its scale η̃ (rounded down by a relative 2^−(UNIT_SCALE_BITS−1) at most).
UNIT_SCALE_BITS = 20


@dataclass(frozen=True)
class UnitRangePlan:
    """An exact exponential mechanism whose utilities lie in [0, 1] (each row): P(j) ∝ exp(η̃ũⱼ).

    Attributes
    ----------
    scale : float
        η̃, a dyadic rational of 20 significant bits, ≤ the scale asked (exactly representable).
    grid_bits : int
        b: the utilities are rounded to multiples of h = 2^−b and clamped to [0, 1].
    scale_num : int
        M: η̃·h = M/2^s (M = η̃'s 20-bit mantissa).
    scale_shift : int
        s (0 ≤ s ≤ 62).
    """
    scale: float
    grid_bits: int
    scale_num: int
    scale_shift: int

    @property
    def step(self):
        """c̃ = η̃·h = M/2^s (a float, exact): each logit is off by at most c̃/2 from η̃·u."""
        return math.ldexp(self.scale_num, -self.scale_shift)


def unit_range_plan(scale):
    """The exact exponential mechanism of scale ``scale`` on utilities in [0, 1].

    Rounding and clamping a utility in [0, 1] to the grid points of [0, 1] keeps it in [0, 1], so
    the privacy argument that rests on the range (a row's utilities in an interval of length 1:
    the numerator and the normaliser of P(j) each move by at most η̃) costs nothing: no
    sensitivity is paid for the grid. η̃ = the scale rounded down to 20 significant bits,
    η̃ = M·2^e; h = 2^−b with b = min(42, 62 + e), so that Nⱼ = M·(B_max − Bⱼ) ≤ M·2^b < 2⁶²
    and s = b − e ≤ 62; η̃h = M/2^s ≤ η̃·2⁻⁴² (or 2⁻⁴² for tiny scales). The Gibbs sampler's
    z-step (:mod:`dpcore.subspace.gibbs`) uses it with the scale ε/2 and uᵢℓ = ‖U_ℓᵀxᵢ‖².

    Parameters
    ----------
    scale : float > 0
        η, at least 2⁻⁴² and below 2⁶².

    Returns
    -------
    UnitRangePlan

    Raises
    ------
    ValueError
        If ``scale`` is not a finite number in [2⁻⁴², 2⁶²).
    """
    scale = check_real(scale, "scale", 0.0, None, low_inclusive=False)
    return _unit_range_plan(float(scale))


@functools.lru_cache(maxsize=512)
def _unit_range_plan(scale):
    if not math.ldexp(1.0, -42) <= scale < math.ldexp(1.0, 62):
        raise ValueError(f"the scale of the exact z-step must be in [2^-42, 2^62); got {scale!r} "
                         "(epsilon between about 4.5e-13 and 9e18)")
    mant, ex = math.frexp(scale)                                  # scale = mant·2^ex, mant in [0.5, 1)
    M = math.floor(math.ldexp(mant, UNIT_SCALE_BITS))             # 20 bits, rounded down
    e = ex - UNIT_SCALE_BITS                                      # η̃ = M·2^e
    b = min(UNIT_GRID_BITS, 62 + e)
    shift = b - e
    if not (1 <= b and 0 <= shift <= 62):  # pragma: no cover - excluded by the range check
        raise ValueError(f"scale {scale!r} out of range")
    return UnitRangePlan(math.ldexp(M, e), b, M, shift)


def unit_range_gaps(utility, plan, axis=-1):
    """The integer gap numerators of :func:`unit_range_plan` along ``axis``: Bⱼ = rint(uⱼ·2^b)
    clamped to [0, 2^b], Nⱼ = M·(B_max − Bⱼ) (exact in float64 then int64).

    Parameters
    ----------
    utility : array_like
        Utilities in [0, 1] (a value outside, from rounding in its computation, is clamped).
    plan : UnitRangePlan
    axis : int, default -1
        The candidates' axis.

    Returns
    -------
    ndarray of int64, the shape of ``utility``.
    """
    top = math.ldexp(1.0, plan.grid_bits)
    B = np.rint(np.asarray(utility, dtype=np.float64) * top)
    np.clip(B, 0.0, top, out=B)
    N = (B.max(axis=axis, keepdims=True) - B).astype(np.int64)
    N *= plan.scale_num
    return N


def choice_gaps(utility, plan):
    """The integer numerators Nⱼ of the gaps γⱼ = Nⱼ/2^s along the last axis of ``utility``.

    ũⱼ = h·round(uⱼ/h) (exact: h is a power of two; a utility with |u| ≥ 2⁵³h is already a
    multiple of h, its float spacing being ≥ 2h, and is kept as it is), then
    Nⱼ = M·min((ũ_max − ũⱼ)/h, G). The difference of two multiples of h is exact whenever it is
    below 2⁵³h ≥ Gh, and otherwise rounds (or overflows) to a float ≥ 2⁵³h, so the clipped gap
    is exact for utilities of any magnitude.

    Parameters
    ----------
    utility : array_like
        Finite utilities; candidates along the last axis.
    plan : ChoicePlan

    Returns
    -------
    ndarray of int64
        The shape of ``utility``; 0 for the best candidate(s) of every row.

    Raises
    ------
    ValueError
        If a utility is not finite.
    """
    u = np.asarray(utility, dtype=np.float64)
    if u.ndim == 0 or u.shape[-1] == 0:
        raise ValueError("utility must have at least one candidate along its last axis")
    if not np.all(np.isfinite(u)):
        raise ValueError("utility must contain only finite values")
    h = plan.grid
    big = np.abs(u) >= math.ldexp(h, 53)
    ut = np.rint(np.where(big, 0.0, u) / h) * h
    if big.any():
        ut = np.where(big, u, ut)
    with np.errstate(over="ignore"):
        D = (ut.max(axis=-1, keepdims=True) - ut) / h
    np.minimum(D, float(plan.gap_clip), out=D)
    N = D.astype(np.int64)
    N *= plan.scale_num
    return N


def choice_pmf(gaps, shift):
    """The exact law of :func:`sample_choices`: P(j) = exp(−Nⱼ/2^s)/Σᵢ exp(−Nᵢ/2^s) along the
    last axis, evaluated in float64 (log-sum-exp, so a tiny probability is a tiny positive
    float, not 0, down to about 1e-308).

    Parameters
    ----------
    gaps : array_like of int
        Nⱼ ≥ 0.
    shift : int
        s.

    Returns
    -------
    ndarray of float64
        The shape of ``gaps``; sums to 1 along the last axis.
    """
    g = -np.asarray(gaps, dtype=np.float64) / float(1 << int(shift))
    mx = g.max(axis=-1, keepdims=True)
    w = np.exp(g - mx)
    return w / w.sum(axis=-1, keepdims=True)


# --------------------------------------------------------------------------- exact Bernoulli(exp(−N/2^s))
#: 20! < 2⁶²: P(K > j) = 1/j! = (20!/j!)/20! exactly for j ≤ 20, with one uniform integer below 20!.
_FACT = math.factorial(20)
_E1_THRESHOLDS = np.array([_FACT // math.factorial(j) for j in range(20, 0, -1)], dtype=np.int64)   # increasing


def _bernoulli_e1(n, rng):
    """n independent Bernoulli(e⁻¹) draws (CKS Alg. 1 with γ = 1).

    Alg. 1 counts K while coins Bernoulli(1/K) are 1 and returns [K odd]; the coins at K = 1..j
    are all 1 with probability 1/j!. So K = 1 + #{j ≤ 20 : U < 20!/j!} for one U uniform on
    [0, 20!) (``integers``, exact) has exactly the law of Alg. 1's K up to K = 21; an entry
    that reaches K = 21 (U = 0, probability 1/20!) continues with Alg. 1's own coins
    ``integers(0, K) == 0`` from K = 21 (independent of the past), so the result is exact."""
    u = rng.integers(0, _FACT, size=n)
    k = 21 - np.searchsorted(_E1_THRESHOLDS, u, side="right")      # 1 + #{j : U < 20!/j!}
    more = np.flatnonzero(k == 21)
    while more.size:                              # probability 1/20! per entry
        coin = rng.integers(0, k[more]) == 0
        k[more[coin]] += 1
        more = more[coin]
    return k % 2 == 1


def _bernoulli_exp_fraction(frac, shift, rng):
    """Bernoulli(exp(−F/2^s)) for 0 < F < 2^s (CKS Alg. 1, γ = F/2^s ≤ 1): K ← 1 while the coin
    Bernoulli(γ/K) is 1, result [K odd]. The coin is the AND of two independent exact coins,
    ``integers(0, 2^s) < F`` (probability F/2^s) and, for K ≥ 2, ``integers(0, K) == 0``
    (probability 1/K), so no product F·K is ever formed. One step of K for all pending entries
    at a time (each step keeps a fraction ≤ γ/K of them)."""
    out = np.ones(frac.size, dtype=bool)                       # K = 1 stops at once: K odd, True
    top = 1 << int(shift)
    idx = np.flatnonzero(rng.integers(0, top, size=frac.size) < frac)
    k = 2
    while idx.size:
        coin = rng.integers(0, top, size=idx.size) < frac[idx]
        coin &= rng.integers(0, k, size=idx.size) == 0
        out[idx[~coin]] = k % 2 == 1
        idx = idx[coin]
        k += 1
    return out


def bernoulli_exp_dyadic(numerators, shift, random_state=None):
    """Exact Bernoulli(exp(−N/2^s)) draws, one per entry, for integers 0 ≤ N < 2⁶³ and 0 ≤ s ≤ 62.

    Canonne, Kamath & Steinke (2020), Alg. 1: exp(−γ) = exp(−1)^⌊γ⌋·exp(−(γ − ⌊γ⌋)), so ⌊γ⌋
    independent Bernoulli(e⁻¹) must all be 1 (an entry stops at its first 0) and then one
    Bernoulli(exp(−frac)). Every coin is a comparison of ``Generator.integers`` draws; N = 0
    returns True without a draw.

    Parameters
    ----------
    numerators : array_like of int >= 0
    shift : int in [0, 62]
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of bool, the shape of ``numerators``.

    Raises
    ------
    ValueError
        If a numerator is negative or ``shift`` is out of range.
    """
    rng = check_random_state(random_state)
    N = np.asarray(numerators)
    if N.dtype == bool or not np.issubdtype(N.dtype, np.integer):
        raise ValueError(f"numerators must be integers; got dtype {N.dtype}")
    N = N.astype(np.int64)
    s = int(shift)
    if not 0 <= s <= 62:
        raise ValueError(f"shift must be in [0, 62]; got {shift!r}")
    if N.size and N.min() < 0:
        raise ValueError("numerators must be >= 0")
    flat = N.ravel()
    out = np.ones(flat.size, dtype=bool)
    whole = flat >> s
    idx = np.flatnonzero(whole > 0)
    done = 0
    while idx.size:                             # ⌊γ⌋ factors Bernoulli(e⁻¹): stop at the first 0
        need = whole[idx] - done                # ≥ 1; the next factor(s) of every pending entry at once:
        blk = 1 if done == 0 else 4             # one first (most entries stop there), then four
        ok = _bernoulli_e1(blk * idx.size, rng).reshape(idx.size, blk)
        ok |= np.arange(blk)[None, :] >= need[:, None]         # factors beyond ⌊γ⌋ do not count
        fail = ~ok.all(axis=1)
        out[idx[fail]] = False
        idx = idx[~fail & (need > blk)]
        done += blk
    frac = flat & ((1 << s) - 1)
    idx = np.flatnonzero(out & (frac > 0))
    if idx.size:
        out[idx] = _bernoulli_exp_fraction(frac[idx], s, rng)
    return out.reshape(N.shape)


# --------------------------------------------------------------------------- exact categorical
def sample_choices(gaps, shift, random_state=None):
    """One exact draw per row of P(j) ∝ exp(−Nⱼ/2^s) (:func:`choice_pmf`).

    Rejection from uniform proposals: j uniform on the row's m candidates
    (``integers(0, m)``), accepted with probability exp(−Nⱼ/2^s) (:func:`bernoulli_exp_dyadic`;
    N = 0 is accepted without a draw). Vectorised over rows: each round gives every pending
    row b proposals at once (b = 1 for many rows, up to m for a few) and keeps its first
    accepted one, which is the sequential rejection sampler's output exactly (all draws are
    independent; those after the first acceptance are discarded).

    Parameters
    ----------
    gaps : array_like of int, shape (m,) or (R, m)
        Nⱼ ≥ 0 with at least one 0 per row (as :func:`choice_gaps` returns), below 2⁶³.
    shift : int in [0, 62]
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.int64 (1-D ``gaps``) or ndarray of int64 of shape (R,)

    Raises
    ------
    ValueError
        If a row has no zero gap (the sampler would still be exact, but slow), or a gap is negative.
    """
    rng = check_random_state(random_state)
    N = np.asarray(gaps, dtype=np.int64)
    one = N.ndim == 1
    N2 = N.reshape(1, -1) if one else N.reshape(-1, N.shape[-1])
    R, m = N2.shape
    if m == 0:
        raise ValueError("gaps must have at least one candidate")
    if R and (N2.min() < 0 or not np.all(N2.min(axis=1) == 0)):
        raise ValueError("gaps must be >= 0 with a zero in every row (the best candidate)")
    out = np.empty(R, dtype=np.int64)
    if m == 1:
        out[:] = 0
        return np.int64(0) if one else out.reshape(N.shape[:-1])
    idx = np.arange(R)
    while idx.size:
        b = int(min(max(1, _BLOCK_ENTRIES // idx.size), 4 * m))
        j = rng.integers(0, m, size=(idx.size, b))
        g = N2[idx[:, None], j]
        acc = bernoulli_exp_dyadic(g, shift, rng)
        hit = acc.any(axis=1)
        first = acc.argmax(axis=1)
        rows = np.flatnonzero(hit)
        out[idx[rows]] = j[rows, first[rows]]
        idx = idx[~hit]
    return out[0] if one else out.reshape(N.shape[:-1])


def exact_exponential_mechanism(utility, plan, random_state=None):
    """One exact draw per row of the exponential mechanism of ``plan`` on ``utility``.

    Parameters
    ----------
    utility : array_like
        Candidates along the last axis.
    plan : ChoicePlan
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.int64 or ndarray of int64
        The chosen index (one per row for N-D input).
    """
    return sample_choices(choice_gaps(utility, plan), plan.scale_shift, random_state)
