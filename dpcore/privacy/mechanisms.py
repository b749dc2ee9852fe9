"""Privacy mechanisms: the one home of DP randomness.

Everything that adds noise for privacy in :mod:`dpcore` calls a function of this module
(Laplace, exact discrete Laplace, bounded-domain Laplace, Gaussian with classic or analytic
σ, the exponential mechanism; additive releases are exact, :mod:`dpcore.privacy.exact`). What is
released is recorded in a :class:`~dpcore.privacy.accounting.PrivacyLedger`; mechanisms
and accounting are kept apart from the models, as in diffprivlib.

Neighbouring datasets differ in one record (a point, a row, or - for count matrices - one
cell changed by 1); each caller states the sensitivity it relies on.

Floating point is part of the mechanism
---------------------------------------
The textbook mechanisms are stated over the reals; a program releases floats. Mironov (2012)
showed that float Laplace or Gaussian noise added in floating point leaves holes: many
released floats can come from x but not from a neighbour x′, so an observer tells them apart
with certainty (numpy's ziggurat normal is a multiple of one of 256 layer constants; on the
Cluster page's sample-aggregate run 100 of 100 releases ruled the neighbour out).

- **Every additive release is exact** (:mod:`dpcore.privacy.exact`): the value is rounded to
  a public grid of powers of two, integer noise is drawn exactly (discrete Gaussian or
  discrete Laplace, Canonne, Kamath & Steinke 2020, :mod:`dpcore.privacy.exact_samplers`:
  integer arithmetic only), and the rounding is paid for in the sensitivity. Every grid point
  is a possible output whatever the input. :func:`laplace_mechanism`,
  :func:`gaussian_mechanism`, :func:`bounded_domain_laplace` and counts
  (:func:`discrete_laplace_mechanism`) all release this way; so do SuLQ's noisy scatter
  matrices and sample-aggregate's smooth-sensitivity step.
- **Every exponential-mechanism choice over a finite set is exact**
  (:mod:`dpcore.privacy.exact_choice`): :func:`exponential_mechanism` rounds the utilities to a
  public power-of-two grid (the rounding paid for in the sensitivity), rounds the scale down to
  a dyadic rational and draws the candidate with integer arithmetic only (uniform proposals
  accepted by Canonne, Kamath & Steinke's exact Bernoulli(exp(−γ))), so every candidate keeps a
  positive probability and the ε delivered is at most the ε claimed, exactly: DP-τCC's
  partitions, the candidate method's local swaps and Alg. 5's coordinates, the Gibbs sampler's
  private choice of chain. The Gibbs z-step is drawn the same way in both engines
  (:func:`dpcore.privacy.exact_choice.unit_range_plan`), and the candidate partition's coins
  and binomial counts are exact (:func:`dpcore.kmeans.partition.subdivision_coins`).
- **What stays float, and why.** The Gibbs / matrix-Bingham samplers' continuous draws (float
  normals through float linear algebra: an exact sampler of the matrix Bingham law is an open
  problem); their random decisions are exact (z-step) or within a multiplicative bound that
  the Gibbs ledger pays from ε (:func:`dpcore.subspace.gibbs.execution_plan`). The diffprivlib
  DP-Lloyd peer adds diffprivlib's own float noise (a peer run as published).
  :func:`bernoulli_draws` and :func:`binomial_draws` are float draws kept for callers outside
  dpcore's mechanisms (no estimator uses them).
"""
from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction

import numpy as np

# scipy.optimize and scipy.special are imported inside the few functions that need them: at
# module level they cost ~0.3 s of the app's first page (the sidebar only needs the ledger).
from ..validation import check_delta, check_epsilon, check_int, check_random_state, check_real
from .exact import bounded_laplace_release, gaussian_release, laplace_release
from .exact_choice import choice_gaps, choice_plan, choice_pmf, exact_exponential_mechanism

__all__ = [
    "laplace_mechanism", "discrete_laplace_mechanism", "discrete_laplace_scale", "discrete_laplace_noise",
    "bernoulli_exp", "bernoulli_draws", "binomial_draws", "gaussian_mechanism", "gaussian_sigma", "gaussian_sigma_classic",
    "gaussian_sigma_analytic", "analytic_gaussian_delta", "exponential_mechanism",
    "exponential_mechanism_probabilities", "bounded_domain_scale", "bounded_domain_laplace",
]


# --------------------------------------------------------------------------- mechanisms
def laplace_mechanism(value, sensitivity, epsilon, random_state=None):
    """Release ``value`` plus Laplace noise of scale sensitivity/ε, exactly on a public grid; ε-DP as executed.

    ``sensitivity`` is the L1 sensitivity of ``value`` over neighbouring datasets. The value is
    rounded to a grid g = 2^−k and exact discrete Laplace noise is added
    (:func:`dpcore.privacy.exact.laplace_release`); the rounding is paid for in the noise, so the
    ε delivered is at most ``epsilon`` exactly. For integer-valued queries use
    :func:`discrete_laplace_mechanism` (no grid needed).

    Parameters
    ----------
    value : array_like
        The exact answer of the query.
    sensitivity : float > 0
        L1 sensitivity of ``value``.
    epsilon : float > 0
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    ndarray of float64
        ``value`` plus the noise, of the shape of ``value`` (every entry a multiple of the grid).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite positive number.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    return laplace_release(value, sensitivity / epsilon, sensitivity, random_state)


# --------------------------------------------------------------------------- exact discrete Laplace
# Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy", Alg. 1
# (Bernoulli(exp(−γ)) for rational γ) and Alg. 2 (discrete Laplace of scale t/s), vectorised:
# each rejection loop runs on the entries still pending, every entry uses fresh draws only, and
# every draw is ``rng.integers`` (numpy's exact uniform integers: Lemire's rejection method),
# so no floating-point number enters any sampling decision.

#: The rational scale t/s keeps t in (2^(T_BITS−1), 2^T_BITS] whenever possible, so rounding
#: the scale up costs a relative 2^−(T_BITS−1) at most; with T_BITS = 40 every int64 product
#: of the sampler stays far below 2^63 (see :func:`discrete_laplace_scale`).
_T_BITS = 40
_S_MAX_BITS = 62
_MAX_SCALE = Fraction(2) ** _T_BITS
#: Geometric counts V above this would overflow U + t·V in int64 (P[V ≥ 2^22] = e^(−2^22)).
_V_MAX = 1 << 22
#: Rejection loops over more pending entries than this draw one step at a time; below, in
#: blocks of several steps (fewer numpy calls for the small tables of DP-τCC).
_BLOCK_ABOVE = 4096
#: Below this many pending entries the sampler makes several proposals per entry at once.
_SMALL = 128
#: Bernoulli(e^−1) trials drawn with each proposal (P[more are needed] = e^−6 ≈ 0.25 %).
_V_BLOCK = 6


def _as_int_array(x, name, low=None):
    """An int64 array from integers or integral floats (ValueError naming ``name`` otherwise)."""
    a = np.asarray(x)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"{name} must be integers{'' if low is None else f' >= {low}'}; got dtype {a.dtype}")
    if np.issubdtype(a.dtype, np.floating):
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)) or np.any(np.abs(a) > 2.0 ** 62):
            raise ValueError(f"{name} must be integers{'' if low is None else f' >= {low}'} "
                             "(finite, integral values of magnitude <= 2^62)")
    a = a.astype(np.int64)
    if low is not None and a.size and a.min() < low:
        raise ValueError(f"{name} must be integers >= {low}; got {a.min()}")
    return a


def _bernoulli_exp_unit(num, den, rng, block=4):
    """Alg. 1, case γ = num/den ∈ [0, 1]: K ← 1; while Bernoulli(γ/K) = 1: K ← K + 1; return
    [K odd]. P[K odd] = Σ_k (−γ)^k / k! = e^−γ. Bernoulli(num/(den·K)) is ``integers(0, den·K)
    < num``. ``num``: int64 array; ``den``: a positive int (scalar) or an int64 array like num.

    The loop is blocked: each pending entry draws the Bernoulli of ``block`` consecutive K at
    once and stops at its first failure; the draws after it are discarded. All draws are
    independent, so this is the sequential loop exactly (P[going past a block] ≤ 1/block!)."""
    out = np.empty(num.shape, dtype=bool)
    idx = np.arange(num.size)
    scalar_den = np.ndim(den) == 0
    k = 1
    while idx.size > _BLOCK_ABOVE:          # many entries: one K at a time (scalar bounds are faster)
        high = den * k if scalar_den else den[idx] * k
        a = rng.integers(0, high, size=idx.size) < num[idx]
        out[idx[~a]] = (k % 2 == 1)
        idx = idx[a]
        k += 1
    steps = np.arange(block, dtype=np.int64)
    while idx.size:
        ks = k + steps                                            # K = k .. k + block − 1
        high = den * ks[None, :] if scalar_den else den[idx][:, None] * ks[None, :]
        a = rng.integers(0, np.broadcast_to(high, (idx.size, block))) < num[idx][:, None]
        fail = ~a
        stopped = fail.any(axis=1)
        first = fail.argmax(axis=1)                               # index of the first failure
        out[idx[stopped]] = ((k + first[stopped]) % 2 == 1)
        idx = idx[~stopped]
        k += block
    return out


def _bernoulli_exp_minus_one(n, rng):
    """n independent Bernoulli(e^−1) (Alg. 1 with γ = 1)."""
    return _bernoulli_exp_unit(np.ones(n, dtype=np.int64), 1, rng)


def _geometric_exp_minus_one(n, rng, block=4):
    """n independent V ≥ 0 with P(V = v) = (1 − e^−1)·e^−v: the number of Bernoulli(e^−1)
    successes before the first failure (Alg. 2). Blocked like :func:`_bernoulli_exp_unit`."""
    v = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size > _BLOCK_ABOVE:
        idx = idx[_bernoulli_exp_minus_one(idx.size, rng)]
        v[idx] += 1
    while idx.size:
        b = _bernoulli_exp_minus_one(idx.size * block, rng).reshape(idx.size, block)
        fail = ~b
        stopped = fail.any(axis=1)
        v[idx] += np.where(stopped, fail.argmax(axis=1), block)
        idx = idx[~stopped]
        if idx.size and v[idx].max() >= _V_MAX:                   # probability e^(−4 194 304)
            raise RuntimeError("discrete Laplace sampler: geometric count out of int64 range")
    return v


def bernoulli_exp(numerator, denominator, random_state=None):
    """Exact Bernoulli(exp(−γ)) draws for rational γ = numerator/denominator ≥ 0.

    Canonne, Kamath & Steinke (2020), Alg. 1: for γ ≤ 1, count K while Bernoulli(γ/K) = 1
    and return [K odd]; for γ > 1, ⌊γ⌋ independent Bernoulli(e^−1) must all be 1 and then a
    Bernoulli(exp(−(γ − ⌊γ⌋))). Every Bernoulli(p/q) is ``rng.integers(0, q) < p``.

    Parameters
    ----------
    numerator : int or array of int >= 0
    denominator : int or array of int >= 1 (broadcast against ``numerator``)
    random_state : None, int or Generator

    Returns
    -------
    ndarray of bool with the broadcast shape (one independent draw per entry).
    """
    rng = check_random_state(random_state)
    num = _as_int_array(numerator, "numerator", 0)
    den = _as_int_array(denominator, "denominator", 1)
    num, den = np.broadcast_arrays(num, den)
    shape = num.shape
    num, den = num.ravel().copy(), den.ravel().copy()
    whole, frac = np.divmod(num, den)
    out = np.ones(num.size, dtype=bool)
    idx = np.flatnonzero(whole > 0)
    j = 0
    while idx.size:                               # the ⌊γ⌋ factors Bernoulli(e^−1)
        b = _bernoulli_exp_minus_one(idx.size, rng)
        out[idx[~b]] = False
        idx = idx[b]
        j += 1
        idx = idx[whole[idx] > j]
    idx = np.flatnonzero(out)                     # then Bernoulli(exp(−frac/den))
    out[idx] = _bernoulli_exp_unit(frac[idx], den[idx], rng)
    return out.reshape(shape)


def discrete_laplace_scale(sensitivity, epsilon):
    """The rational noise scale ``(s, t)`` with t/s ≥ sensitivity/epsilon, exactly.

    Δ/ε is the exact rational quotient of the two numbers given (a float ε is a dyadic
    rational, read exactly with :class:`fractions.Fraction`). ``s`` is a power of two chosen
    so that t = ⌈(Δ/ε)·s⌉ lies in (2^39, 2^40] (s between 1 and 2^62; a scale below 2^−22
    gets s = 2^62 and a smaller t), so t/s exceeds Δ/ε by a relative 2^−39 at most (by less
    than s^−1 = 2^−62 in absolute terms for tiny scales). Because t/s ≥ Δ/ε, the privacy loss
    actually delivered, Δ·s/t, is at most ε - exactly, not up to rounding.

    Raises ``ValueError`` if Δ/ε > 2^40 (≈ 1.1e12): noise that large is never useful and
    would overflow the sampler's int64 arithmetic.

    Returns ``(s, t)`` as Python ints.

    Parameters
    ----------
    sensitivity : int ≥ 1
        Integer L1 sensitivity Δ (an integral float is accepted).
    epsilon : float > 0

    Returns
    -------
    s, t : int

    Raises
    ------
    ValueError
        If ``sensitivity`` is not a positive integer, ``epsilon`` ≤ 0, or Δ/ε > 2^40.
    """
    return _discrete_laplace_scale(_check_integer_sensitivity(sensitivity), check_epsilon(epsilon))


@functools.lru_cache(maxsize=256)
def _discrete_laplace_scale(sensitivity, epsilon):
    """:func:`discrete_laplace_scale` on validated arguments (cached: DP-τCC asks for the same
    scale at every table release)."""
    scale = Fraction(sensitivity) / Fraction(epsilon)
    if scale > _MAX_SCALE:
        raise ValueError(f"epsilon must be >= sensitivity / 2^{_T_BITS} (noise scale at most 2^{_T_BITS}); "
                         f"got epsilon = {epsilon:g} for sensitivity {sensitivity}")
    # smallest power of two s with ⌈scale·s⌉ > 2^(T_BITS−1), capped at 2^62
    e = _T_BITS - 1 - math.floor(math.log2(scale.numerator) - math.log2(scale.denominator))
    e = min(max(e - 1, 0), _S_MAX_BITS)           # start a little low, then walk up exactly
    while e < _S_MAX_BITS and math.ceil(scale * (1 << e)) <= (1 << (_T_BITS - 1)):
        e += 1
    while e > 0 and math.ceil(scale * (1 << e)) > (1 << _T_BITS):
        e -= 1
    s = 1 << e
    t = math.ceil(scale * s)
    return s, t


def _check_integer_sensitivity(sensitivity):
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Integral):
        if isinstance(sensitivity, numbers.Real) and math.isfinite(sensitivity) and float(sensitivity).is_integer():
            sensitivity = int(sensitivity)
        else:
            raise ValueError(f"sensitivity must be a positive integer (an integer >= 1); got {sensitivity!r}")
    sensitivity = int(sensitivity)
    if sensitivity < 1:
        raise ValueError(f"sensitivity must be a positive integer (an integer >= 1); got {sensitivity}")
    return sensitivity


def discrete_laplace_noise(s, t, size=None, random_state=None):
    """Exact discrete Laplace noise of scale t/s: P(x) = (1−e^{−s/t})/(1+e^{−s/t})·e^{−|x|s/t}.

    Canonne, Kamath & Steinke (2020), Alg. 2, for positive integers s, t: draw U uniform in
    {0, …, t−1} and accept it with probability exp(−U/t) (Alg. 1); draw V ≥ 0 with
    P(V = v) ∝ e^{−v} (Bernoulli(e^−1) successes before the first failure); X = U + t·V has
    P(X = x) ∝ e^{−x/t}, so Y = ⌊X/s⌋ has P(Y = y) ∝ e^{−ys/t}; a fair sign B and the
    rejection of (B = 1, Y = 0) make the result two-sided without counting 0 twice.
    Vectorised: the rejection loop runs on the entries still pending, each with fresh draws.

    ``s``, ``t``: positive Python ints with t ≤ 2^40 and s ≤ 2^62 (see
    :func:`discrete_laplace_scale`). Returns an int64 array of shape ``size``.

    Parameters
    ----------
    s : int in [1, 2^62]
    t : int in [1, 2^40]
    size : int or tuple of int, optional
        Output shape; None gives a 0-d array.
    random_state : None, int or numpy.random.Generator, optional

    Returns
    -------
    ndarray of int64

    Raises
    ------
    ValueError
        If ``s`` or ``t`` is out of its range.
    """
    rng = check_random_state(random_state)
    s, t = int(s), int(t)
    if not (1 <= t <= (1 << _T_BITS)):
        raise ValueError(f"t must be an integer in [1, 2^{_T_BITS}]; got {t}")
    if not (1 <= s <= (1 << _S_MAX_BITS)):
        raise ValueError(f"s must be an integer in [1, 2^{_S_MAX_BITS}]; got {s}")
    n = int(np.prod(size, dtype=np.int64)) if size is not None else 1
    out = np.empty(n, dtype=np.int64)
    pending = np.arange(n)
    while pending.size:
        m = pending.size
        # several i.i.d. proposals per pending entry when few are pending (a small table would
        # otherwise pay numpy's per-call overhead for many rounds); the FIRST accepted proposal
        # of an entry is its sample: the first success of an i.i.d. sequence of trials has the
        # distribution of one trial given success, exactly as the sequential loop
        copies = 1 if m >= _SMALL else min(8, -(-_SMALL // m))
        q = m * copies
        w = rng.integers(0, 2 * t, size=q)            # U = w // 2 uniform on {0..t−1}, sign = w % 2
        u, sign = w >> 1, (w & 1).astype(bool)
        nv = _V_BLOCK if q <= _BLOCK_ABOVE else 0     # (large arrays: no wasted trials)
        # one call draws, per proposal, D ~ Bernoulli(exp(−U/t)) and the first nv of the
        # Bernoulli(e^−1) = Bernoulli(exp(−t/t)) trials whose leading successes are V
        num = np.empty((q, 1 + nv), dtype=np.int64)
        num[:, 0] = u
        num[:, 1:] = t
        b = _bernoulli_exp_unit(num.ravel(), t, rng).reshape(q, 1 + nv)
        acc = np.flatnonzero(b[:, 0])                 # accept U w.p. exp(−U/t)
        if nv:
            fail = ~b[acc, 1:]
            stopped = fail.any(axis=1)
            v = np.where(stopped, fail.argmax(axis=1), nv).astype(np.int64)
        else:
            stopped = np.zeros(acc.size, dtype=bool)
            v = np.zeros(acc.size, dtype=np.int64)
        more = np.flatnonzero(~stopped)               # all nv trials succeeded: keep counting
        if more.size:
            v[more] += _geometric_exp_minus_one(more.size, rng)
        y = (u[acc] + t * v) // s
        sg = sign[acc]
        good = ~(sg & (y == 0))                       # reject (B = 1, Y = 0): 0 is counted once
        value = np.zeros(q, dtype=np.int64)
        value[acc] = np.where(sg, -y, y)
        done = np.zeros(q, dtype=bool)
        done[acc[good]] = True
        done = done.reshape(copies, m)                # proposal c of entry i at [c, i]
        first = done.argmax(axis=0)
        got = done[first, np.arange(m)]
        out[pending[got]] = value.reshape(copies, m)[first[got], np.flatnonzero(got)]
        pending = pending[~got]
    return out.reshape(() if size is None else size)


def discrete_laplace_mechanism(value, sensitivity, epsilon, random_state=None):
    """Release ``value + Z`` with Z exact discrete Laplace noise (i.i.d. per coordinate); ε-DP.

    For integer-valued queries of integer L1 sensitivity Δ. The noise has
    P(Z = z) ∝ exp(−|z|/σ) with σ = t/s the rational scale of :func:`discrete_laplace_scale`:
    Δ/ε **rounded up** (s a power of two, t = ⌈(Δ/ε)·s⌉ computed exactly with
    :class:`fractions.Fraction`, relative excess ≤ 2^−39), so the noise is never smaller than
    claimed and the ε actually delivered, Δ·s/t, is ≤ ε exactly. Neighbouring inputs differ
    by an integer vector of L1 norm ≤ Δ, and for every integer output the probability ratio
    is at most exp(Δ/σ) ≤ e^ε: the mechanism is ε-DP as executed - the sampler
    (:func:`discrete_laplace_noise`, Canonne, Kamath & Steinke 2020, Alg. 1-2) uses only
    ``rng.integers`` and integer arithmetic, so there are no floating-point holes (every
    integer is a possible output whatever the input; cf. Mironov 2012).

    Parameters
    ----------
    value : int or array of integers (integer dtype, or floats with integral values)
    sensitivity : int >= 1, the L1 sensitivity of ``value``
    epsilon : float > 0 (finite)
    random_state : None, int or Generator

    Returns
    -------
    int64 ndarray of the shape of ``value``.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_integer_sensitivity(sensitivity)
    rng = check_random_state(random_state)
    v = _as_int_array(value, "value")
    if v.size and np.abs(v).max() > 2 ** 53:
        raise ValueError("value must be integers of magnitude <= 2^53")
    s, t = discrete_laplace_scale(sensitivity, epsilon)
    return v + discrete_laplace_noise(s, t, v.shape, rng)


# --------------------------------------------------------------------------- Bernoulli / binomial
def bernoulli_draws(probabilities, random_state=None):
    """Independent Bernoulli(p) draws, one per entry, by FLOAT comparison ``rng.random() < p``.

    Not exact: a 53-bit uniform realises p only to within 2⁻⁵³, so a probability below 2⁻⁵³ is
    0 as executed (Mironov 2012). No dpcore mechanism uses it: the candidate partition's coins
    are exact (:func:`dpcore.kmeans.partition.subdivision_coins`); for an exact Bernoulli of
    exp(−γ) use :func:`bernoulli_exp` or :func:`dpcore.privacy.exact_choice.bernoulli_exp_dyadic`.

    Parameters
    ----------
    probabilities : array_like of float in [0, 1]
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of bool, the shape of ``probabilities``
        ``rng.random(shape) < p`` (a 53-bit uniform: the floating-point caveat of the module
        docstring applies).
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.size and not (np.all(p >= 0.0) and np.all(p <= 1.0)):
        raise ValueError("probabilities must be in [0, 1]")
    rng = check_random_state(random_state)
    return rng.random(p.shape) < p


def binomial_draws(n_trials, log_prob, random_state=None):
    """FLOAT Binomial(n, e^log_prob) draws for float trial counts n (possibly above 2^62).

    Not exact: counts below 2^62 use ``Generator.binomial``, which works with the float
    probability (for p below 2⁻⁵³ it computes (1 − p)^n = 1 and never draws a success), larger
    ones count successes by float-log geometric skips (so the caller should make sure few
    successes are expected there). No dpcore mechanism uses it: the candidate partition draws
    its binomial counts exactly (:mod:`dpcore.kmeans.partition`).

    Parameters
    ----------
    n_trials : array_like of float >= 0
        Number of trials of every draw (integral values).
    log_prob : float <= 0
        Log of the success probability, shared by all draws.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (len(n_trials),)
    """
    n_trials = np.asarray(n_trials, dtype=np.float64)
    rng = check_random_state(random_state)
    out = np.zeros(len(n_trials), dtype=np.int64)
    prob = math.exp(log_prob)
    if prob == 0.0:  # < 1e-308 per trial: with n_trials < 2^1000 the chance of any success is < 1e-7
        return out
    small = n_trials < 2.0 ** 62
    if small.any():
        out[small] = rng.binomial(n_trials[small].astype(np.int64), prob)
    log1m = math.log1p(-prob)
    for i in np.flatnonzero(~small):  # geometric skips between successes
        pos, cnt = 0.0, 0
        while True:
            pos += math.floor(math.log(1.0 - rng.random()) / log1m) + 1.0
            if pos > n_trials[i]:
                break
            cnt += 1
        out[i] = cnt
    return out


def bounded_domain_scale(sensitivity, epsilon, diameter):
    """Scale b of the bounded-domain Laplace mechanism (Holohan et al. 2020; diffprivlib's
    ``LaplaceBoundedDomain``): Laplace noise conditioned on an interval of width D is ε-DP
    when b = Δ / (ε − ln Δc(b)), Δc(b) = (2 − e^(−Δ/b) − e^(−(D−Δ)/b)) / (1 − e^(−D/b)), the
    fixed point found by bisection from b₀ = Δ/ε (δ = 0).

    Parameters
    ----------
    sensitivity : float > 0
    epsilon : float > 0
    diameter : float > 0
        Width D of the output interval.

    Returns
    -------
    float
        b ≥ Δ/ε.
    """
    dq, D = float(sensitivity), float(diameter)

    def delta_c(b):
        return (2 - math.exp(-dq / b) - math.exp(-(D - dq) / b)) / (-math.expm1(-D / b))

    def f(b):
        return dq / (epsilon - math.log(delta_c(b)))

    left = dq / epsilon
    right = f(left)
    size = (right - left) * 2
    while size > right - left:
        size = right - left
        mid = (right + left) / 2
        fm = f(mid)
        if fm >= mid:
            left = mid
        if fm <= mid:
            right = mid
    return (right + left) / 2


def bounded_domain_laplace(values, lower, upper, sensitivity, epsilon, rng):
    """The bounded-domain Laplace mechanism on one vector, exactly on a public grid: each
    value clipped into [lower, upper] and released with discrete Laplace noise conditioned on
    the grid points of [lower, upper]; ε-DP per coordinate as executed (the discrete analogue
    of Holohan et al. 2020 / diffprivlib's ``LaplaceBoundedDomain``, whose continuous scale is
    :func:`bounded_domain_scale`). See :func:`dpcore.privacy.exact.bounded_laplace_release`.
    Used by DP-Lloyd on sparse input (:mod:`dpcore.kmeans.dplloyd`).

    Parameters
    ----------
    values : ndarray of shape (d,)
    lower, upper : float
        The output interval (lower < upper).
    sensitivity : float > 0
    epsilon : float > 0
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float64 of shape (d,)
    """
    return bounded_laplace_release(values, lower, upper, sensitivity, epsilon, rng)


def gaussian_sigma_classic(sensitivity, epsilon, delta):
    """Classic Gaussian mechanism σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth Thm A.1).

    The theorem only holds for ε < 1, so larger ε raises ``ValueError``; use the analytic
    calibration there.

    Parameters
    ----------
    sensitivity : float > 0
        L2 sensitivity Δ₂.
    epsilon : float in (0, 1)
    delta : float in (0, 1)

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a parameter is out of its range (in particular ε ≥ 1).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    if epsilon >= 1.0:
        raise ValueError(f"epsilon must be in (0, 1) for the classic Gaussian mechanism; got {epsilon:g} "
                         "(use method='analytic', valid for every epsilon > 0)")
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_delta(sigma, sensitivity, epsilon):
    """δ(σ) of Balle & Wang (2018), Thm 8: the smallest δ for which N(0, σ²) noise on a
    query of L2 sensitivity Δ is (ε, δ)-DP:

        δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).

    The second term is computed in log space (``log_ndtr``) so huge ε do not overflow.

    Parameters
    ----------
    sigma : float > 0
        Noise standard deviation (not checked).
    sensitivity : float > 0
        L2 sensitivity Δ (not checked).
    epsilon : float
        (not checked).

    Returns
    -------
    float
    """
    from scipy import special
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b))


def gaussian_sigma_analytic(sensitivity, epsilon, delta):
    """Smallest σ with ``analytic_gaussian_delta(σ) = δ`` (Balle & Wang 2018), any ε > 0.

    δ(σ) decreases strictly in σ, so the root is bracketed and found by Brent's method in
    log σ to machine precision.

    Relation to :func:`gaussian_sigma_classic`: where the classic σ is defined (ε < 1) the
    analytic σ is strictly smaller - checked numerically on a grid of ε in [1e-6, 1) and δ
    in [1e-30, 0.99], the ratio analytic/classic is at most 0.95 (≈ 0.77 at ε → 1, δ = 1e-5).
    The classic *formula* Δ√(2 ln(1.25/δ))/ε evaluated at ε ≥ 1 is no guarantee at all; it
    stays above the analytic σ only up to a crossover ε* that depends on δ (≈ 3.8 to 12.4
    for δ from 0.9 down to 1e-30; 8.4 at δ = 1e-5) and falls below it beyond - so the
    analytic σ is not "always at most" that formula.

    Parameters
    ----------
    sensitivity : float > 0
        L2 sensitivity Δ.
    epsilon : float > 0
    delta : float in (0, 1)

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    from scipy import optimize
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)

    def f(log_s):
        return analytic_gaussian_delta(math.exp(log_s), sensitivity, epsilon) - delta

    lo, hi = math.log(sensitivity) - 1.0, math.log(sensitivity) + 1.0
    while f(lo) < 0:  # σ too large already: go smaller
        lo -= 2.0
    while f(hi) > 0:
        hi += 2.0
    log_s = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(log_s)


def gaussian_sigma(sensitivity, epsilon, delta, method="analytic"):
    """σ of the Gaussian mechanism: ``method`` is ``"analytic"`` (default) or ``"classic"``.

    Parameters
    ----------
    sensitivity : float > 0
        L2 sensitivity.
    epsilon : float > 0
        (< 1 for ``"classic"``).
    delta : float in (0, 1)
    method : {"analytic", "classic"}, default "analytic"
        :func:`gaussian_sigma_analytic` or :func:`gaussian_sigma_classic`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``method`` is unknown or a parameter is out of its range.
    """
    if method == "analytic":
        return gaussian_sigma_analytic(sensitivity, epsilon, delta)
    if method == "classic":
        return gaussian_sigma_classic(sensitivity, epsilon, delta)
    raise ValueError(f"method must be 'analytic' or 'classic'; got {method!r}")


def gaussian_mechanism(value, sensitivity, epsilon, delta, random_state=None, method="analytic"):
    """Release ``value`` plus Gaussian noise, exactly on a public grid; (ε, δ)-DP for a query of
    L2 sensitivity ``sensitivity``.

    σ from :func:`gaussian_sigma`; the release is
    :func:`dpcore.privacy.exact.gaussian_release` (value rounded to a grid g = 2^−k, exact
    discrete Gaussian noise, the rounding paid for in the noise, slack τ ≤ D·9.3e-18).

    Parameters
    ----------
    value : array_like
        The exact answer of the query.
    sensitivity : float > 0
        L2 sensitivity of ``value`` over neighbouring datasets.
    epsilon : float > 0
    delta : float in (0, 1)
    random_state : None, int or numpy.random.Generator
    method : {"analytic", "classic"}
        Calibration of σ (:func:`gaussian_sigma`).

    Returns
    -------
    ndarray of float64
        ``value`` plus the noise (every entry a multiple of the grid).
    """
    sigma = gaussian_sigma(sensitivity, epsilon, delta, method)
    return gaussian_release(value, sigma, sensitivity, random_state)


def _exponential_scale(epsilon, sensitivity, range_sensitivity):
    epsilon = check_epsilon(epsilon)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, None, low_inclusive=False)
    # McSherry & Talwar: P ∝ exp(ε u / (2Δu)). With the range sensitivity
    # Δ = sup (max_r diff − min_r diff) (co-clustering paper, Def. 4) P ∝ exp(ε u / Δ) suffices.
    return epsilon / sensitivity if range_sensitivity else epsilon / (2.0 * sensitivity)


def exponential_mechanism_probabilities(utility, epsilon, sensitivity, range_sensitivity=False, executed=True):
    """Output probabilities of :func:`exponential_mechanism`.

    By default the exact law of what is sampled (``executed=True``): utilities rounded to the
    public grid h, the scale rounded down to the dyadic c̃/h with the rounding paid in the
    sensitivity, gaps clipped beyond γ_max ≥ 2048 (:func:`dpcore.privacy.exact_choice.choice_plan`),
    i.e. P(j) = exp(−γⱼ)/Σᵢ exp(−γᵢ), evaluated in float64. ``executed=False`` gives the
    textbook softmax of ``scale·u`` (scale ε/(2Δ), or ε/Δ with the range sensitivity), which
    the executed law approximates to a relative ≈ 2⁻²⁰·ε per unit of utility range over Δ.

    Parameters
    ----------
    utility : array_like
        Utilities of the candidates along the last axis.
    epsilon : float > 0
    sensitivity : float > 0
    range_sensitivity : bool, default False
        As in :func:`exponential_mechanism`.
    executed : bool, default True
        The law of the exact sampler (True) or the textbook softmax (False).

    Returns
    -------
    ndarray of float64
        The shape of ``utility``; sums to 1 along the last axis.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite positive number, or a utility is not
        finite (``executed=True``).
    """
    if executed:
        plan = choice_plan(epsilon, sensitivity, range_sensitivity)
        return choice_pmf(choice_gaps(utility, plan), plan.scale_shift)
    from scipy import special
    scale = _exponential_scale(epsilon, sensitivity, range_sensitivity)
    logits = scale * np.asarray(utility, dtype=np.float64)
    return np.exp(logits - special.logsumexp(logits, axis=-1, keepdims=True))


def exponential_mechanism(utility, epsilon, sensitivity, random_state=None, range_sensitivity=False):
    """Pick an index along the last axis of ``utility`` with P ∝ exp(scale · u), ε-DP as executed.

    ``scale = ε/(2Δ)`` for the usual sensitivity Δ = sup |u(D,r) − u(D',r)|, or ``ε/Δ`` with
    ``range_sensitivity=True`` (Δ is then the range sensitivity of the co-clustering paper,
    Def. 4). A 2-D ``utility`` gives one independent draw per row (each row is a separate use
    of the mechanism; the caller accounts for them).

    The draw is exact (:mod:`dpcore.privacy.exact_choice`): utilities are rounded to a public
    power-of-two grid h ≤ Δ·2⁻²⁰ (the rounding paid for in the sensitivity, Δ + h, or Δ + 2h
    for the range sensitivity), the scale is rounded down to a dyadic rational, and the
    candidate is drawn with integer arithmetic only (uniform proposals accepted by Canonne,
    Kamath & Steinke's exact Bernoulli(exp(−γ))). So the ε delivered is at most ``epsilon``
    exactly, every candidate has a positive probability whatever its utility (a gap of the
    logits beyond ≈ 40 is improbable, not impossible as with float Gumbels), and the law is
    :func:`exponential_mechanism_probabilities`. Utilities of any magnitude are safe (no
    exponential is summed); gaps beyond γ_max ≥ 2048 are clipped to it (privacy-neutral).

    Parameters
    ----------
    utility : array_like
        Utilities of the candidates along the last axis.
    epsilon : float > 0
    sensitivity : float > 0
        Δ (usual or range sensitivity, see above).
    random_state : None, int or numpy.random.Generator, optional
    range_sensitivity : bool, default False
        Whether ``sensitivity`` is the range sensitivity (scale ε/Δ instead of ε/(2Δ)).

    Returns
    -------
    int or ndarray of int
        The chosen index; one per row (the leading shape of ``utility``) for N-D input.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite positive number, or a utility is
        not finite.
    """
    plan = choice_plan(epsilon, sensitivity, range_sensitivity)
    rng = check_random_state(random_state)
    return exact_exponential_mechanism(utility, plan, rng)
