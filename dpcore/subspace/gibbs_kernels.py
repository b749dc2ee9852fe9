"""Compiled Gibbs engine (numba) for :class:`dpcore.subspace.gibbs.GibbsSubspaceClustering`.

Runs whole blocks of sweeps of every chain in one compiled call (:func:`run_block`, chains
split over threads that release the GIL) and draws every column of the U-step exactly from
its vector Bingham conditional without an eigendecomposition: ACG rejection with a cheap
Lanczos/Cholesky envelope first and the Householder tridiagonal path as the fallback. The
z-step (exact: integer draws on a public grid, the same integers as the numpy engine's) and the
scatter-matrix updates follow the numpy engine; the law of the chain is the numpy engine's, but
not its draws for one seed. The random streams are xoshiro256**
generators, one per chain, seeded from the Generator passed as ``random_state``
(:func:`seed_state`). Without numba ``AVAILABLE`` is False and the numpy engine runs; kernels
are cached by numba after the first compile (:func:`warmup`).

Bit-identical on every x86-64 CPU for one seed: no fast-math flag, no BLAS/LAPACK and no libm
transcendental on the chain's path (the random start, the sweeps, the re-orthonormalisation;
see "arithmetic that is the same on every CPU" below and ``docs/gibbs_engine.md``).

The design and why every draw stays exact: ``docs/gibbs_engine.md``; measured cost against the
numpy engine and the paper's Alg. 3-4: ``docs/benchmarks.md``.
"""
from __future__ import annotations

import math
import threading
import time

import numpy as np

from ..privacy.exact_choice import unit_range_plan

try:  # pragma: no cover - exercised by the fallback test through AVAILABLE
    import numba
    from llvmlite import ir as _llvm_ir
    from numba import njit, types as _nbtypes
    from numba.extending import intrinsic as _intrinsic
    AVAILABLE = True
except Exception:  # noqa: BLE001 - any failure to import numba means: use the numpy engine
    numba = None
    AVAILABLE = False

    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

__all__ = ["AVAILABLE", "seed_state", "run_block", "run", "new_state", "prepare", "n_threads", "ready", "compiling",
           "contingency", "sample_vector_bingham", "sample_vector_bingham_two_envelopes", "warmup",
           "full_basis", "reorthonormalize", "random_stiefel", "mean_sq_norm"]

_U53 = 1.0 / 9007199254740992.0
_LANCZOS_MIN_D = 2            # columns with D = d − q + 1 ≥ this try the Lanczos/Cholesky envelope first (all)
_LANCZOS_STEPS = 14           # Lanczos steps for its shift c: min(this, D // 2 + 1)
_FAST_MAX_PROPOSALS = 12      # proposals from it before falling back to the tridiagonal path


# ============================================================================ arithmetic that is the same on every CPU
# No kernel of this module has a fast-math flag, so LLVM neither contracts a·b + c into an FMA
# nor reorders a sum: every +, −, ×, ÷ and √ is one IEEE-754 operation, correctly rounded, in the
# order the source gives, whatever the target (SSE2, AVX2, AVX-512; vectorised loops run the
# same operations lane by lane). Nothing on the chain's path calls a library whose result depends
# on the CPU: no BLAS or LAPACK (matrix products, QR, Cholesky: the loops below), no libm
# transcendental (glibc picks FMA variants of exp and log at load time, which round differently
# in rare cases): _log and _exp are fdlibm's algorithms (Sun's, those of Java's StrictMath) in
# plain arithmetic. math.sqrt and math.floor compile to exact operations.
if AVAILABLE:
    @_intrinsic
    def _bits(typingctx, x):
        """The IEEE-754 bits of a float64 as an int64 (a bit cast, no conversion)."""
        if x != _nbtypes.float64:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], _llvm_ir.IntType(64))
        return _nbtypes.int64(x), codegen

    @_intrinsic
    def _from_bits(typingctx, i):
        """The float64 whose IEEE-754 bits are the 64-bit integer i."""
        if not (isinstance(i, _nbtypes.Integer) and i.bitwidth == 64):
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], _llvm_ir.DoubleType())
        return _nbtypes.float64(i), codegen
else:  # pragma: no cover - the pure-Python module without numba
    import struct as _struct

    def _bits(x):
        return _struct.unpack("<q", _struct.pack("<d", x))[0]

    def _from_bits(i):
        return _struct.unpack("<d", _struct.pack("<q", int(i)))[0]


_LN2_HI = 6.93147180369123816490e-01                  # ln 2 in two parts (Cody & Waite): _LN2_HI has
_LN2_LO = 1.90821492927058770002e-10                  # trailing zero bits, so k·_LN2_HI is exact for |k| < 2¹¹
_TWO54 = 1.80143985094819840000e+16
_LG1, _LG2, _LG3, _LG4 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, \
    2.222219843214978396e-01
_LG5, _LG6, _LG7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01
_INVLN2 = 1.44269504088896338700e+00
_P1, _P2, _P3, _P4, _P5 = 1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05, \
    -1.65339022054652515390e-06, 4.13813679705723846039e-08
_TWOM1000 = 9.33263618503218878990e-302               # 2⁻¹⁰⁰⁰


@njit(cache=True)
def _log(x):
    """Natural logarithm, fdlibm's __ieee754_log (error < 1 ulp) in plain IEEE arithmetic: the
    same bits on every CPU (unlike libm's log, whose FMA variant rounds differently in rare cases)."""
    bits = _bits(x)
    hx = bits >> 32                                   # high word, signed
    k = 0
    if hx < 0x00100000:                               # x < 2⁻¹⁰²² (or negative, zero)
        if ((hx & 0x7FFFFFFF) | (bits & 0xFFFFFFFF)) == 0:
            return -np.inf
        if hx < 0:
            return np.nan
        k -= 54
        x *= _TWO54                                   # subnormal: scale up
        bits = _bits(x)
        hx = bits >> 32
    if hx >= 0x7FF00000:
        return x + x
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    x = _from_bits(((hx | (i ^ 0x3FF00000)) << 32) | (bits & 0xFFFFFFFF))   # x or x/2 in [√2/2, √2)
    k += i >> 20
    f = x - 1.0
    dk = float(k)
    if (0x000FFFFF & (2 + hx)) < 3:                   # |f| < 2⁻²⁰
        if f == 0.0:
            return dk * _LN2_HI + dk * _LN2_LO
        R = f * f * (0.5 - 0.33333333333333333 * f)
        return dk * _LN2_HI - ((R - dk * _LN2_LO) - f)
    s = f / (2.0 + f)
    z = s * s
    i = hx - 0x6147A
    w = z * z
    j = 0x6B851 - hx
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    i |= j
    R = t2 + t1
    if i > 0:
        hfsq = 0.5 * f * f
        return dk * _LN2_HI - ((hfsq - (s * (hfsq + R) + dk * _LN2_LO)) - f)
    return dk * _LN2_HI - ((s * (f - R) - dk * _LN2_LO) - f)


@njit(cache=True)
def _exp(x):
    """e^x, fdlibm's __ieee754_exp (error < 1 ulp) in plain IEEE arithmetic (see :func:`_log`);
    e^−∞ = 0, e^0 = 1."""
    bits = _bits(x)
    hx = (bits >> 32) & 0x7FFFFFFF                    # high word of |x|
    neg = bits < 0
    if hx >= 0x4086232B:                              # |x| ≥ 708.39…, inf or NaN
        if x != x:
            return x
        if x > 709.782712893383973096:
            return np.inf
        if x < -745.13321910194110842:
            return 0.0
    if hx > 0x3FD62E42:                               # |x| > ln 2 / 2: x = k ln 2 + r
        if hx >= 0x3FF0A2B2:                          # |x| ≥ 1.5 ln 2
            k = int(_INVLN2 * x + (-0.5 if neg else 0.5))
        else:
            k = -1 if neg else 1
        dk = float(k)
        hi = x - dk * _LN2_HI                         # exact
        lo = dk * _LN2_LO
        x = hi - lo
    elif hx > 0x3E300000:                             # 2⁻²⁸ < |x|
        k = 0
        hi = x
        lo = 0.0
    else:
        return 1.0 + x
    xx = x * x
    c = x - xx * (_P1 + xx * (_P2 + xx * (_P3 + xx * (_P4 + xx * _P5))))
    y = 1.0 + (x * c / (2.0 - c) - lo + hi)
    if k == 0:
        return y
    if k > 1023:
        return y * _from_bits(np.int64(1023 + 1023) << 52) * 2.0
    if k >= -1022:
        return y * _from_bits(np.int64(k + 1023) << 52)                      # exact (or one rounding into subnormals)
    return y * _from_bits(np.int64(k + 1000 + 1023) << 52) * _TWOM1000    # exact, then one rounding


@njit(cache=True)
def _log1p(u):
    """log(1 + u) for u ≥ 0 from :func:`_log` (Goldberg's correction: a few ulp)."""
    w = 1.0 + u
    if w == 1.0:
        return u
    return _log(w) * (u / (w - 1.0))


@njit(cache=True, inline="always")
def _dot(x, xo, y, yo, m):
    """Σ_{t<m} x[xo + t]·y[yo + t] in a fixed order: four partial sums (t mod 4, the tail into
    the first) added as (s0 + s1) + (s2 + s3). Four independent chains instead of one (a loop
    sum without fast-math is one chain of dependent additions); the order is the source's, so
    the result is the same on every CPU however LLVM vectorises it."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    t = 0
    while t + 4 <= m:
        s0 += x[xo + t] * y[yo + t]
        s1 += x[xo + t + 1] * y[yo + t + 1]
        s2 += x[xo + t + 2] * y[yo + t + 2]
        s3 += x[xo + t + 3] * y[yo + t + 3]
        t += 4
    while t < m:
        s0 += x[xo + t] * y[yo + t]
        t += 1
    return (s0 + s1) + (s2 + s3)


# ============================================================================ random numbers
def seed_state(rng, n_streams=None):
    """xoshiro256** states derived from the numpy Generator ``rng``: uint64 (4,) for one stream,
    (n_streams, 4) for several (one per chain, so that a chain's draws do not depend on how
    the sweeps are split into kernel calls). Drawn with ``rng.integers`` and mixed by
    splitmix64, so that no state is all zero."""
    m = 1 if n_streams is None else int(n_streams)
    raw = rng.integers(0, np.iinfo(np.int64).max, size=(m, 4), dtype=np.int64, endpoint=True).astype(np.uint64)
    out = np.empty((m, 4), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(4):
            z = raw[:, i] + np.uint64(0x9E3779B97F4A7C15) * np.uint64(i + 1)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            out[:, i] = z ^ (z >> np.uint64(31))
    out[~out.any(axis=1), 0] = np.uint64(1)                   # probability 2^-256 per stream
    return out[0] if n_streams is None else out


@njit(cache=True, inline="always")
def _next(s):
    s0, s1, s2, s3 = s[0], s[1], s[2], s[3]
    x = s1 * np.uint64(5)
    result = ((x << np.uint64(7)) | (x >> np.uint64(57))) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
    s[0], s[1], s[2], s[3] = s0, s1, s2, s3
    return result


@njit(cache=True, inline="always")
def _uniform(s):
    """A double in [0, 1) with 53 random bits."""
    return float(_next(s) >> np.uint64(11)) * _U53


@njit(cache=True)
def _normals(s, out, m):
    """Fill out[:m] with standard normals (Marsaglia's polar method, both values used)."""
    i = 0
    while i < m:
        u1 = 2.0 * _uniform(s) - 1.0
        u2 = 2.0 * _uniform(s) - 1.0
        r2 = u1 * u1 + u2 * u2
        if r2 >= 1.0 or r2 == 0.0:
            continue
        f = math.sqrt(-2.0 * _log(r2) / r2)
        out[i] = u1 * f
        if i + 1 < m:
            out[i + 1] = u2 * f
        i += 2


@njit(cache=True)
def _exponential(s):
    """A standard exponential E = −log U with U uniform on (0, 1) to full relative precision, so
    that an acceptance test E ≥ L realises P = e^(−L) to a relative error ≈ 2⁻⁴⁵·(1 + L) for
    every L ≥ 0 (a 53-bit uniform would cap E at ≈ 36.7: proposals with L beyond it would be
    impossible, not improbable). U = 2^(−64(j+1))·(w + w′·2⁻⁶⁴) from 64-bit words: j leading
    zero words (probability 2⁻⁶⁴ each), then the first non-zero word w, and a second word w′
    only when w < 2⁵³ (probability 2⁻¹¹; it restores the 53 significant bits); E = 64(j+1)·ln 2
    − log(w + w′2⁻⁶⁴) with fdlibm's log (:func:`_log`): the same bits on every CPU."""
    j = 0
    w = _next(s)
    while w == np.uint64(0):                          # probability 2⁻⁶⁴
        j += 1
        w = _next(s)
    x = float(w)
    if w < np.uint64(9007199254740992):               # w < 2⁵³: 11 or more bits short
        x += float(_next(s) >> np.uint64(11)) * 1.1102230246251565e-16     # w′·2⁻⁶⁴ with 53 bits (2⁻⁵³·2⁻¹¹·2¹¹)
    return (64.0 * (j + 1)) * _LN2_HI + (64.0 * (j + 1)) * _LN2_LO - _log(x)


# ============================================================================ z-step (exact)
# The z-step is an exact finite exponential mechanism (dpcore.privacy.exact_choice.unit_range_plan):
# logits η̃·pn with pn = ‖U_ℓᵀxᵢ‖² ∈ [0, 1] rounded to the grid 2^−b, weights exp(−Nⱼ/2^shift)
# with integer Nⱼ = M·(B_max − Bⱼ), drawn by uniform proposals accepted with Canonne, Kamath &
# Steinke's Bernoulli(exp(−γ)): integer words from the chain's xoshiro256** stream only, no float
# in any decision.
_TWO32 = 4294967296


@njit(cache=True, inline="always")
def _below(s, n):
    """Uniform integer on [0, n), 1 ≤ n < 2⁶³: Lemire's multiply-and-reject on the top 32 bits
    of a word for n ≤ 2³² (exact: every value keeps ⌊2³²/n⌋ accepted words), bitmask rejection
    on 63-bit words above (never reached in practice: n is a cluster count or a CKS counter)."""
    if n <= _TWO32:
        nn = np.uint64(n)
        while True:
            m = (_next(s) >> np.uint64(32)) * nn
            lo = m & np.uint64(0xFFFFFFFF)
            if lo >= nn or lo >= np.uint64((_TWO32 - n) % n):
                return np.int64(m >> np.uint64(32))
    mask = np.uint64(1)
    while mask < np.uint64(n - 1):
        mask = (mask << np.uint64(1)) | np.uint64(1)
    while True:  # pragma: no cover - a CKS counter beyond 2³² (probability < 1/(2³²)!)
        r = _next(s) & mask
        if r < np.uint64(n):
            return np.int64(r)


_M31 = (1 << 31) - 1
_M62 = (1 << 62) - 1
_W62 = 1 << 62
_F19 = math.factorial(19)                                              # 2⁶² mod 19! is 2.4 % of 2⁶²
_F19_THR = (_W62 - _F19) % _F19                                        # Lemire's threshold for 19!
_E1T = np.array([math.factorial(19) // math.factorial(j) for j in range(20)], dtype=np.int64)   # 19!/j!


@njit(cache=True, inline="always")
def _below62(s, n, thr):
    """Uniform integer on [0, n), 1 ≤ n ≤ 2⁶², by Lemire's multiply-and-reject on the top 62 bits
    of a word (the 62×62-bit product in 31-bit limbs, as dpcore.privacy.exact_samplers._k_mul62);
    thr = (2⁶² − n) mod n (computed once by the caller): a word is kept iff its low part is ≥ thr,
    so every value keeps exactly ⌊2⁶²/n⌋ words."""
    while True:
        a = np.int64(_next(s) >> np.uint64(2))
        a1 = a >> 31
        a0 = a & _M31
        b1 = n >> 31
        b0 = n & _M31
        mid = a0 * b1 + a1 * b0
        lo = a0 * b0 + ((mid & _M31) << 31)
        hi = a1 * b1 + (mid >> 31) + (lo >> 62)
        lo &= _M62
        if lo >= thr:
            return hi


@njit(cache=True)
def _bernoulli_e1(s):
    """Bernoulli(e⁻¹) (CKS Alg. 1, γ = 1) from one uniform U on [0, 19!): Alg. 1's coins at
    K = 1..j are all 1 with probability 1/j! = (19!/j!)/19!, so K = 1 + #{j ≤ 19 : U < 19!/j!}
    has Alg. 1's law up to K = 20, where (U = 0, probability 1/19!) Alg. 1's own coins take over."""
    u = _below62(s, _F19, _F19_THR)
    kk = 2
    while kk <= 19 and u < _E1T[kk]:
        kk += 1
    if kk == 20:                                                        # pragma: no cover - 1/19!
        while _below(s, kk) == 0:
            kk += 1
    return kk % 2 == 1


@njit(cache=True)
def _bernoulli_exp_dyadic(g, shift, s):
    """True with probability exp(−g/2^shift), g ≥ 0 an int64, 0 ≤ shift ≤ 62 (CKS Alg. 1):
    ⌊γ⌋ Bernoulli(e⁻¹) (:func:`_bernoulli_e1`), then Bernoulli(exp(−frac)) with the coin
    Bernoulli(frac/K) = [the top ``shift`` bits of a word < F] and [``_below(K) == 0``]."""
    w = g >> shift
    while w > 0:
        if not _bernoulli_e1(s):
            return False
        w -= 1
    f = g & ((np.int64(1) << shift) - 1)
    if f == 0:
        return True
    sh = np.uint64(64 - shift)
    kk = 1
    while True:
        if np.int64(_next(s) >> sh) >= f:
            break
        if kk >= 2 and _below(s, kk) != 0:
            break
        kk += 1
    return kk % 2 == 1


@njit(cache=True)
def _z_step(pn, zb, zM, zshift, z, s, Bw, Nv):
    """z[i] ~ P(ℓ) ∝ exp(η̃·h·round(pn[ℓ, i]/h)) for every point, h = 2^−zb, η̃h = zM/2^zshift
    (pn: (k, n); Bw (k,) float64 and Nv (k,) int64 work arrays). The rounded value Bℓ =
    rint(pnℓ·2^zb) is clamped to [0, 2^zb]; Nℓ = zM·(B_max − Bℓ) < 2⁶²; the draw: uniform
    proposals (Lemire's multiply-and-reject on 32-bit halves of the words, two proposals per
    word) accepted with probability exp(−Nℓ/2^zshift) (:func:`_bernoulli_exp_dyadic`; the best
    category at once). The same integers Nℓ as the numpy engine
    (dpcore.subspace.gibbs._exact_z_step), so the same law."""
    k, n = pn.shape
    if k == 1:
        for i in range(n):
            z[i] = 0
        return
    kk = np.uint64(k)
    thr = np.uint64((_TWO32 - k) % k)
    m32 = np.uint64(0xFFFFFFFF)
    word = np.uint64(0)
    halves = 0
    scale = float(np.int64(1) << zb)
    for i in range(n):
        bmax = 0.0
        for j in range(k):
            v = np.rint(pn[j, i] * scale)
            v = v if v < scale else scale
            v = v if v > 0.0 else 0.0
            Bw[j] = v
            bmax = v if v > bmax else bmax
        for j in range(k):
            Nv[j] = np.int64(bmax - Bw[j]) * zM
        while True:
            if halves == 0:
                word = _next(s)
                halves = 2
            x = (word >> np.uint64(32)) if halves == 2 else (word & m32)
            halves -= 1
            m = x * kk
            if (m & m32) < thr:                                  # Lemire: reject (probability < k/2³²)
                continue
            j = np.int64(m >> np.uint64(32))
            g = Nv[j]
            if g == 0 or _bernoulli_exp_dyadic(g, zshift, s):
                z[i] = j
                break


# ============================================================================ vector Bingham (tridiagonal ACG)
@njit(cache=True)
def _tridiagonalize(M, D, V, tau, alpha, e, wk):
    """Householder tridiagonalisation of the symmetric M[:D, :D] (its lower triangle is read and
    overwritten): M = P T Pᵀ with
    P = H_0 ⋯ H_{D−3}, H_j = I − tau[j]·v vᵀ (v = V[j, j+1:D]); T has diagonal alpha, off-diagonal e."""
    p = wk[0]
    v = wk[1]
    for j in range(D - 2):
        s0 = 0.0                                      # ‖M[j+1:, j]‖² (a column: stride D), two partial sums
        s1 = 0.0
        a = j + 1
        while a + 2 <= D:
            s0 += M[a, j] * M[a, j]
            s1 += M[a + 1, j] * M[a + 1, j]
            a += 2
        if a < D:
            s0 += M[a, j] * M[a, j]
        sig = math.sqrt(s0 + s1)
        x0 = M[j + 1, j]
        if sig == 0.0:
            tau[j] = 0.0
            e[j] = 0.0
            continue
        al = -sig if x0 >= 0.0 else sig
        for a in range(j + 1, D):
            v[a] = M[a, j]
        v[j + 1] = x0 - al
        vv = _dot(v, j + 1, v, j + 1, D - j - 1)
        if vv == 0.0:
            tau[j] = 0.0
            e[j] = x0
            continue
        t = 2.0 / vv
        tau[j] = t
        e[j] = al
        for a in range(j + 1, D):
            V[j, a] = v[a]
        # p = t·A22 v ; p −= (t/2)(pᵀv) v ; A22 −= v pᵀ + p vᵀ, on the lower triangle only
        for a in range(j + 1, D):
            p[a] = 0.0
        for a in range(j + 1, D):
            row = M[a]
            va = v[a]
            for b in range(j + 1, a):
                p[b] += row[b] * va
            p[a] += row[a] * va + _dot(row, j + 1, v, j + 1, a - j - 1)
        for a in range(j + 1, D):
            p[a] *= t
        pv = _dot(p, j + 1, v, j + 1, D - j - 1)
        h = 0.5 * t * pv
        for a in range(j + 1, D):
            p[a] -= h * v[a]
        for a in range(j + 1, D):
            row = M[a]
            va = v[a]
            pa = p[a]
            for b in range(j + 1, a + 1):
                row[b] -= va * p[b] + pa * v[b]
    for a in range(D):
        alpha[a] = M[a, a]
    if D >= 2:
        e[D - 2] = M[D - 1, D - 2]


@njit(cache=True)
def _sturm_below(alpha, e, D, x):
    """Number of eigenvalues of the tridiagonal (alpha, e) below x."""
    cnt = 0
    qv = 1.0
    for i in range(D):
        off = e[i - 1] * e[i - 1] if i > 0 else 0.0
        qv = (alpha[i] - x) - (off / qv if i > 0 else 0.0)
        if qv == 0.0:
            qv = -1e-300
        if qv < 0.0:
            cnt += 1
    return cnt


@njit(cache=True)
def _laguerre_terms(alpha, e, D, x):
    """For S = xI − T (T the tridiagonal (alpha, e)): (valid, G, H) with valid = every pivot of
    S's LDLᵀ is > 0 (Sturm: x > λ_max), G = Σᵢ 1/(x − λᵢ) = Σ f′ᵢ/fᵢ and
    H = Σᵢ 1/(x − λᵢ)² = −dG/dx, from the pivots f and their first two derivatives in x."""
    G = 0.0
    H = 0.0
    f = 1.0
    fd = 0.0
    fdd = 0.0
    for i in range(D):
        if i == 0:
            qv = alpha[0] - x
            fdn = 1.0
            fddn = 0.0
        else:
            e2 = e[i - 1] * e[i - 1]
            qv = (alpha[i] - x) - e2 / (-f)           # the pivot exactly as _sturm_below computes it
            inv = 1.0 / f
            fdn = 1.0 + e2 * fd * inv * inv
            fddn = e2 * (fdd * f - 2.0 * fd * fd) * inv * inv * inv
        if not qv < 0.0:
            return False, 0.0, 0.0
        fn = -qv
        f, fd, fdd = fn, fdn, fddn
        g = fd / f
        G += g
        H += g * g - fdd / f
    return True, G, H


@njit(cache=True)
def _lambda_max_upper(alpha, e, D):
    """An upper bound c ≥ λ_max of the tridiagonal (alpha, e) with c − λ_max ≤ 1e-3 + 1e-13·scale
    ("≥" in the Sturm-sequence sense: every pivot of cI − T is positive). Laguerre's iteration
    on det(xI − T) from Gershgorin's bound: for a polynomial with real roots it decreases
    monotonically to the largest root, cubically near it (3–6 steps here, against 20–30
    bisection steps). A step that lands on or below λ_max (rounding) turns the rest into
    Sturm bisection on the bracket it gives. Any c ≥ λ_max gives an exact ACG draw (indeed
    any c keeping Ω positive definite); c − λ_max ≪ 1/2 keeps the acceptance rate of c = λ_max."""
    lo = -np.inf
    hi = -np.inf
    for i in range(D):
        r = 0.0
        if i > 0:
            r += abs(e[i - 1])
        if i < D - 1:
            r += abs(e[i])
        if alpha[i] > lo:
            lo = alpha[i]
        if alpha[i] + r > hi:
            hi = alpha[i] + r
    scale = max(abs(lo), abs(hi), 1.0)
    tol = 1e-3 + 1e-13 * scale
    x = hi + 1e-14 * scale + tol                      # strictly above λ_max
    nd = float(D)
    for _ in range(100):
        ok, G, H = _laguerre_terms(alpha, e, D, x)
        if not ok:                                     # x ≤ λ_max: bisect on (x, hi]
            lo = max(lo, x)
            break
        hi = x
        disc = (nd - 1.0) * (nd * H - G * G)
        step = nd / (G + math.sqrt(disc if disc > 0.0 else 0.0))
        if step <= 0.25 * tol or hi - lo <= tol:       # cubic convergence: λ_max is within ≪ tol of hi
            return hi
        x = hi - step
        if x <= lo:
            break
    for _ in range(200):
        if hi - lo <= tol:
            break
        mid = 0.5 * (lo + hi)
        if _sturm_below(alpha, e, D, mid) == D:
            hi = mid
        else:
            lo = mid
    return hi


@njit(cache=True)
def _acg_setup(alpha, e, D, c, diagL, offL, wk):
    """b (one Newton step from 1) and the bidiagonal Cholesky factor of Ω = I + 2Λ/b,
    Λ = cI − T. Returns b.

    The Newton step needs g = Σᵢ 1/(1 + 2Λᵢ) = tr S⁻¹ and h = Σᵢ 1/(1 + 2Λᵢ)² = tr S⁻² for the
    tridiagonal S = I + 2Λ (eigenvalues ≥ 1). In O(D): with the pivots f of S's LDLᵀ from the
    top and r of its UDUᵀ from the bottom, (S⁻¹)ᵢᵢ = 1/(fᵢ + rᵢ − Sᵢᵢ); h = −d/dx tr (S + xI)⁻¹
    at x = 0, whose derivative is carried through the same recurrences (all pivots of the
    positive definite S are positive, so nothing overflows)."""
    f = wk[2]
    fd = wk[3]
    r = wk[4]
    rd = wk[5]
    for i in range(D):
        sii = 1.0 + 2.0 * (c - alpha[i])
        if i == 0:
            f[i] = sii
            fd[i] = 1.0
        else:
            e2 = 4.0 * e[i - 1] * e[i - 1]
            f[i] = sii - e2 / f[i - 1]
            fd[i] = 1.0 + e2 * fd[i - 1] / (f[i - 1] * f[i - 1])
    for i in range(D - 1, -1, -1):
        sii = 1.0 + 2.0 * (c - alpha[i])
        if i == D - 1:
            r[i] = sii
            rd[i] = 1.0
        else:
            e2 = 4.0 * e[i] * e[i]
            r[i] = sii - e2 / r[i + 1]
            rd[i] = 1.0 + e2 * rd[i + 1] / (r[i + 1] * r[i + 1])
    g = 0.0
    h = 0.0
    for i in range(D):
        den = f[i] + r[i] - (1.0 + 2.0 * (c - alpha[i]))
        g += 1.0 / den
        h += (fd[i] + rd[i] - 1.0) / (den * den)
    b = 1.0 + g * (g - 1.0) / h
    if not (b > 0.0 and b <= D):  # pragma: no cover - rounding; any b in (0, D] is exact
        b = min(max(b, 1.0), float(D)) if b == b else 1.0
    # Ω = I + (2/b)Λ: diagonal 1 + (2/b)(c − alpha), off-diagonal −(2/b)e
    for i in range(D):
        d_i = 1.0 + (2.0 / b) * (c - alpha[i])
        if i > 0:
            d_i -= offL[i - 1] * offL[i - 1]
        diagL[i] = math.sqrt(d_i) if d_i > 0.0 else 1e-150
        if i < D - 1:
            offL[i] = -(2.0 / b) * e[i] / diagL[i]
    return b


@njit(cache=True)
def _acg_draw(alpha, e, D, c, b, diagL, offL, s, w, gbuf):
    """One exact draw y (written to w[:D], unit) of p(y) ∝ exp(−yᵀΛy), Λ = cI − T, in
    tridiagonal coordinates (ACG rejection, Kent et al. 2018)."""
    const = 0.5 * (D - b) - 0.5 * D * _log(float(D))
    halfD = 0.5 * D
    while True:
        _normals(s, gbuf, D)
        w[D - 1] = gbuf[D - 1] / diagL[D - 1]
        for i in range(D - 2, -1, -1):
            w[i] = (gbuf[i] - offL[i] * w[i + 1]) / diagL[i]
        ss = 0.0
        quad = 0.0
        for i in range(D):
            ss += w[i] * w[i]
            quad += (c - alpha[i]) * w[i] * w[i]
        for i in range(D - 1):
            quad -= 2.0 * e[i] * w[i] * w[i + 1]
        t = quad / ss
        log_ratio = halfD * _log(b + 2.0 * t) - t + const
        if _exponential(s) >= -log_ratio:
            inv = 1.0 / math.sqrt(ss)
            for i in range(D):
                w[i] *= inv
            return


@njit(cache=True)
def _apply_P(V, tau, D, y):
    """y ← P y = H_0(H_1(⋯H_{D−3} y)) in place."""
    for j in range(D - 3, -1, -1):
        t = tau[j]
        if t == 0.0:
            continue
        acc = _dot(V[j], j + 1, y, j + 1, D - j - 1) * t
        for a in range(j + 1, D):
            y[a] -= acc * V[j, a]


@njit(cache=True)
def _bingham_draw(M, D, s, V, tau, alpha, e, diagL, offL, y, gbuf, wk):
    """Exact draw y[:D] of p(y) ∝ exp(yᵀMy) on the unit sphere (M[:D, :D] is overwritten;
    wk is a (6, D) work array)."""
    _tridiagonalize(M, D, V, tau, alpha, e, wk)
    c = _lambda_max_upper(alpha, e, D)
    b = _acg_setup(alpha, e, D, c, diagL, offL, wk)
    _acg_draw(alpha, e, D, c, b, diagL, offL, s, y, gbuf)
    _apply_P(V, tau, D, y)


@njit(cache=True)
def _lanczos_top(M, D, m, Qv, la, lb, w):
    """Lanczos on M[:D, :D] (full, symmetric) from e₁: writes the tridiagonal (la, lb) of at most
    m steps and returns its size. Its largest eigenvalue θ (a Ritz value) satisfies θ ≤ λ_max(M)
    and converges to it fast when e₁ is near the top eigenvector (in the Gibbs sweep e₁ is
    the column's current value, drawn from a nearby conditional). Qv (m, D), w (D,) work."""
    for a in range(D):
        Qv[0, a] = 0.0
    Qv[0, 0] = 1.0
    scale = 0.0
    for j in range(m):
        qj = Qv[j]
        for a in range(D):
            w[a] = 0.0
        b = 0                                         # w = M qⱼ as Σ_b qⱼ[b]·(row b of M), four rows at a time:
        while b + 4 <= D:                             # loops over independent entries, which vectorise (M is
            r0 = M[b]                                 # symmetric)
            r1 = M[b + 1]
            r2 = M[b + 2]
            r3 = M[b + 3]
            q0 = qj[b]
            q1 = qj[b + 1]
            q2 = qj[b + 2]
            q3 = qj[b + 3]
            for a in range(D):
                w[a] += (r0[a] * q0 + r1[a] * q1) + (r2[a] * q2 + r3[a] * q3)
            b += 4
        while b < D:
            row = M[b]
            qb = qj[b]
            for a in range(D):
                w[a] += row[a] * qb
            b += 1
        aj = _dot(w, 0, qj, 0, D)
        la[j] = aj
        if j > 0:
            bp = lb[j - 1]
            qp = Qv[j - 1]
            for a in range(D):
                w[a] -= aj * qj[a] + bp * qp[a]
        else:
            for a in range(D):
                w[a] -= aj * qj[a]
        bj = math.sqrt(_dot(w, 0, w, 0, D))
        scale = max(scale, abs(aj), bj)
        if j == m - 1 or bj <= 1e-13 * scale:
            return j + 1
        lb[j] = bj
        qn = Qv[j + 1]
        inv = 1.0 / bj
        for a in range(D):
            qn[a] = w[a] * inv
    return m


@njit(cache=True)
def _cholesky_omega(M, D, c, b, Lc):
    """Lower Cholesky factor Lc[:D, :D] of Ω = I + (2/b)(cI − M[:D, :D]) (M's lower triangle is
    read, not written). False if a pivot is not positive (the envelope (c, b) is not valid
    for this M: Ω is not positive definite). Right-looking: after column j is scaled, it is
    copied into row j's upper part (Lc's upper triangle is scratch), so that the update of
    the trailing lower triangle runs along rows (loops that vectorise); every entry's
    subtractions in the order j = 0, 1, …, on every CPU."""
    sc = 2.0 / b
    for i in range(D):
        Li = Lc[i]
        for j in range(i + 1):
            Li[j] = -sc * M[i, j]
        Li[i] += 1.0 + sc * c
    for j in range(D):
        piv = Lc[j, j]
        if not piv > 0.0:
            return False
        piv = math.sqrt(piv)
        Lc[j, j] = piv
        Lj = Lc[j]
        for r in range(j + 1, D):
            v = Lc[r, j] / piv
            Lc[r, j] = v
            Lj[r] = v
        for r in range(j + 1, D):
            f = Lc[r, j]
            Lr = Lc[r]
            for i in range(j + 1, r + 1):
                Lr[i] -= f * Lj[i]
    return True


@njit(cache=True)
def _acg_draw_chol(Lc, D, b, s, w, gbuf, max_proposals):
    """At most ``max_proposals`` ACG proposals for p(y) ∝ exp(−yᵀΛy), Ω = I + 2Λ/b = Lc Lcᵀ:
    w ~ N(0, Ω⁻¹) by solving Lcᵀw = g, g ~ N(0, I) (O(D²)), and t = yᵀΛy for y = w/‖w‖ from
    wᵀΩw = ‖g‖²: t = (b/2)(‖g‖²/‖w‖² − 1) (O(D)). The acceptance test is :func:`_acg_draw`'s
    (b + 2t = b‖g‖²/‖w‖² > 0 always). Returns the number of proposals made (the unit y in
    w[:D]) or −1 if all were rejected (w is then garbage)."""
    const = 0.5 * (D - b) - 0.5 * D * _log(float(D))
    halfD = 0.5 * D
    for it in range(max_proposals):
        _normals(s, gbuf, D)
        for i in range(D):
            w[i] = gbuf[i]
        gg = _dot(gbuf, 0, gbuf, 0, D)
        for i in range(D - 1, -1, -1):
            Li = Lc[i]
            wi = w[i] / Li[i]
            w[i] = wi
            for j in range(i):
                w[j] -= Li[j] * wi
        ss = _dot(w, 0, w, 0, D)
        ratio = gg / ss
        t = 0.5 * b * (ratio - 1.0)
        if _exponential(s) >= -(halfD * _log(b * ratio) - t + const):
            inv = 1.0 / math.sqrt(ss)
            for i in range(D):
                w[i] *= inv
            return it + 1
    return -1


@njit(cache=True)
def _column_draw(M, D, s, V, tau, alpha, e, diagL, offL, y, gbuf, wk, Lc, Qv, la, lb, env, stats, fast, m_steps,
                 max_proposals):
    """Exact draw y[:D] of p(y) ∝ exp(yᵀMy) (M[:D, :D] full and symmetric; overwritten only on
    the tridiagonal path). If ``fast`` (the sweep: D ≥ _LANCZOS_MIN_D) and env[0] = b > 0
    (the b of this column's last tridiagonal draw), first the Lanczos/Cholesky envelope:
    c = the top Ritz value of ``m_steps`` Lanczos steps from e₁ (the sweep:
    min(_LANCZOS_STEPS, D // 2 + 1)), Ω = I + (2/b)(cI − M) by Cholesky (D³/3 flops, against
    4D³/3 for the tridiagonalisation), at most ``max_proposals`` (the sweep:
    _FAST_MAX_PROPOSALS) proposals of O(D²). If Ω is not positive definite (c < λ_max − b/2)
    or every proposal was rejected: the tridiagonal path (exact c and b; b is stored in
    env[0]). Exactness: docs/gibbs_engine.md ("Two envelopes"). stats += [tridiagonal
    draws, Lanczos draws, their proposals, fallbacks, of which Cholesky failures]."""
    if fast and env[0] > 0.0:
        b = env[0]
        m = _lanczos_top(M, D, m_steps, Qv, la, lb, y)
        c = _lambda_max_upper(la, lb, m)
        if _cholesky_omega(M, D, c, b, Lc):
            k = _acg_draw_chol(Lc, D, b, s, y, gbuf, max_proposals)
            if k > 0:
                stats[1] += 1
                stats[2] += k
                return
            stats[2] += max_proposals
        else:
            stats[4] += 1
        stats[3] += 1
    stats[0] += 1
    _tridiagonalize(M, D, V, tau, alpha, e, wk)
    c = _lambda_max_upper(alpha, e, D)
    b = _acg_setup(alpha, e, D, c, diagL, offL, wk)
    _acg_draw(alpha, e, D, c, b, diagL, offL, s, y, gbuf)
    _apply_P(V, tau, D, y)
    env[0] = b


@njit(cache=True)
def _sample_vector_bingham(A, n, s):
    D = A.shape[0]
    out = np.empty((n, D))
    M = np.empty((D, D))
    V = np.zeros((D, D))
    tau = np.zeros(D)
    alpha = np.empty(D)
    e = np.zeros(D)
    diagL = np.empty(D)
    offL = np.empty(D)
    y = np.empty(D)
    gbuf = np.empty(D + 1)
    wk = np.empty((6, D))
    for r in range(n):
        for a in range(D):
            for bb in range(D):
                M[a, bb] = A[a, bb]
        _bingham_draw(M, D, s, V, tau, alpha, e, diagL, offL, y, gbuf, wk)
        for a in range(D):
            out[r, a] = y[a]
    return out


def sample_vector_bingham(A, size, random_state=None):
    """``size`` exact draws of p(x) ∝ exp(xᵀAx) on the unit sphere by this engine's column
    sampler (tridiagonalisation + ACG; the matrix is re-tridiagonalised for every draw, as
    in the Gibbs sweep). For tests and benchmarks; needs numba (else runs as slow Python)."""
    from ..validation import check_random_state
    rng = check_random_state(random_state)
    A = np.ascontiguousarray(0.5 * (np.asarray(A, dtype=np.float64) + np.asarray(A, dtype=np.float64).T))
    return _sample_vector_bingham(A, int(size), seed_state(rng))


@njit(cache=True)
def _sample_vector_bingham_two(A, n, s, b, m_steps, max_proposals, stats):
    D = A.shape[0]
    out = np.empty((n, D))
    M = np.empty((D, D))
    V = np.zeros((D, D))
    tau = np.zeros(D)
    alpha = np.empty(D)
    e = np.zeros(D)
    diagL = np.empty(D)
    offL = np.empty(D)
    y = np.empty(D)
    gbuf = np.empty(D + 1)
    wk = np.empty((6, D))
    Lc = np.zeros((D, D))
    Qv = np.empty((m_steps, D))
    la = np.empty(m_steps)
    lb = np.zeros(m_steps)
    env = np.zeros(1)
    for r in range(n):
        for a in range(D):
            for bb in range(D):
                M[a, bb] = A[a, bb]
        env[0] = b
        _column_draw(M, D, s, V, tau, alpha, e, diagL, offL, y, gbuf, wk, Lc, Qv, la, lb, env, stats, True, m_steps,
                     max_proposals)
        for a in range(D):
            out[r, a] = y[a]
    return out


def sample_vector_bingham_two_envelopes(A, size, b, lanczos_steps, max_proposals, random_state=None):
    """``size`` draws of p(x) ∝ exp(xᵀAx) by the sweep's column sampler for large D
    (:func:`_column_draw`: the Lanczos/Cholesky envelope with the given b, Lanczos steps from
    e₁ and proposal cap, then the tridiagonal path when Ω is not positive definite or every
    proposal was rejected), for tests of both paths and of the fallback. Returns (draws,
    counters [tridiagonal draws, Lanczos draws, their proposals, fallbacks, of which Cholesky
    failures])."""
    from ..validation import check_random_state
    rng = check_random_state(random_state)
    A = np.ascontiguousarray(0.5 * (np.asarray(A, dtype=np.float64) + np.asarray(A, dtype=np.float64).T))
    stats = np.zeros(5, dtype=np.int64)
    x = _sample_vector_bingham_two(A, int(size), seed_state(rng), float(b), int(lanczos_steps), int(max_proposals),
                                   stats)
    return x, stats


# ============================================================================ one block of sweeps
@njit(cache=True)
def _projections(XT, Q, k, q, pn_c, S):
    """pn_c[ℓ, i] = ‖U_ℓᵀ xᵢ‖² for one chain (XT = Xᵀ (d, n) contiguous; Q: (k, d, d), U_ℓ =
    Q[ℓ, :, :q]; S (3, n) work), for every d in loops over the points that vectorise: three
    columns of U_ℓ and four coordinates per pass (fewer loads and stores per multiply-add).
    Every point's sums run in the order of the source whatever the vector width (no BLAS,
    whose kernels, chosen by CPU, round differently)."""
    d, n = XT.shape
    c0 = S[0]
    c1 = S[1]
    c2 = S[2]
    for l in range(k):
        pnl = pn_c[l]
        for i in range(n):
            pnl[i] = 0.0
        for r in range(0, q, 3):
            g = min(3, q - r)
            for i in range(n):
                c0[i] = 0.0
                c1[i] = 0.0
                c2[i] = 0.0
            for a in range(0, d, 4):
                m = min(4, d - a)                      # the last pass may have fewer coordinates:
                a1 = a + 1 if m > 1 else a             # the others get weight 0
                a2 = a + 2 if m > 2 else a
                a3 = a + 3 if m > 3 else a
                w1 = 1.0 if m > 1 else 0.0
                w2 = 1.0 if m > 2 else 0.0
                w3 = 1.0 if m > 3 else 0.0
                x0 = XT[a]
                x1 = XT[a1]
                x2 = XT[a2]
                x3 = XT[a3]
                u00 = Q[l, a, r]
                u10 = w1 * Q[l, a1, r]
                u20 = w2 * Q[l, a2, r]
                u30 = w3 * Q[l, a3, r]
                u01 = Q[l, a, r + 1] if g > 1 else 0.0
                u11 = w1 * Q[l, a1, r + 1] if g > 1 else 0.0
                u21 = w2 * Q[l, a2, r + 1] if g > 1 else 0.0
                u31 = w3 * Q[l, a3, r + 1] if g > 1 else 0.0
                u02 = Q[l, a, r + 2] if g > 2 else 0.0
                u12 = w1 * Q[l, a1, r + 2] if g > 2 else 0.0
                u22 = w2 * Q[l, a2, r + 2] if g > 2 else 0.0
                u32 = w3 * Q[l, a3, r + 2] if g > 2 else 0.0
                for i in range(n):
                    y0 = x0[i]
                    y1 = x1[i]
                    y2 = x2[i]
                    y3 = x3[i]
                    c0[i] += (u00 * y0 + u10 * y1) + (u20 * y2 + u30 * y3)
                    c1[i] += (u01 * y0 + u11 * y1) + (u21 * y2 + u31 * y3)
                    c2[i] += (u02 * y0 + u12 * y1) + (u22 * y2 + u32 * y3)
            for i in range(n):
                pnl[i] += c0[i] * c0[i] + c1[i] * c1[i] + c2[i] * c2[i]


@njit(cache=True)
def _qtaq(Ql, A, G, T):
    """G = Qlᵀ A Ql (A symmetric; T (d, d) work): T = A Ql row by row, then the upper triangle
    of G, mirrored, each as sums of scaled rows, four at a time (loops over independent
    entries, which vectorise; every entry's sum in the order of the source, on every CPU)."""
    d = Ql.shape[0]
    for a in range(d):
        Ta = T[a]
        Aa = A[a]
        for j in range(d):
            Ta[j] = 0.0
        b = 0
        while b + 4 <= d:
            a0 = Aa[b]
            a1 = Aa[b + 1]
            a2 = Aa[b + 2]
            a3 = Aa[b + 3]
            Q0 = Ql[b]
            Q1 = Ql[b + 1]
            Q2 = Ql[b + 2]
            Q3 = Ql[b + 3]
            for j in range(d):
                Ta[j] += (a0 * Q0[j] + a1 * Q1[j]) + (a2 * Q2[j] + a3 * Q3[j])
            b += 4
        while b < d:
            ab = Aa[b]
            Qb = Ql[b]
            for j in range(d):
                Ta[j] += ab * Qb[j]
            b += 1
    for i in range(d):
        Gi = G[i]
        for j in range(i, d):
            Gi[j] = 0.0
        a = 0
        while a + 4 <= d:
            q0 = Ql[a, i]
            q1 = Ql[a + 1, i]
            q2 = Ql[a + 2, i]
            q3 = Ql[a + 3, i]
            T0 = T[a]
            T1 = T[a + 1]
            T2 = T[a + 2]
            T3 = T[a + 3]
            for j in range(i, d):
                Gi[j] += (q0 * T0[j] + q1 * T1[j]) + (q2 * T2[j] + q3 * T3[j])
            a += 4
        while a < d:
            qa = Ql[a, i]
            Ta = T[a]
            for j in range(i, d):
                Gi[j] += qa * Ta[j]
            a += 1
        for j in range(i + 1, d):
            G[j, i] = Gi[j]


@njit(cache=True)
def _u_step_cluster(A, Ql, half, q, s, G, T, M, V, tau, alpha, e, diagL, offL, y, gbuf, perm, Nv, W, pv, wk, Lc,
                    Qv, la, lb, env, stats):
    """Hoff's column-wise sweep (App. D Alg. 3) for one cluster: Ql = [U, U⊥] (d, d) is
    updated in place; A (d, d) = Σ_{zᵢ=ℓ} xᵢxᵢᵀ; G and T (d, d) work; env (q, 1) and stats (5,)
    as in :func:`_column_draw`."""
    d = Ql.shape[0]
    D = d - q + 1
    _qtaq(Ql, A, G, T)
    # random column order (Fisher–Yates)
    for r in range(q):
        perm[r] = r
    for i in range(q - 1, 0, -1):
        j = int(_uniform(s) * (i + 1))
        if j > i:  # pragma: no cover - _uniform < 1
            j = i
        perm[i], perm[j] = perm[j], perm[i]
    # column r's coordinates are [r, q, q+1, …, d−1] (N = [u_r, U⊥]): loops over the contiguous part
    for pi in range(q):
        r = perm[pi]
        Gr = G[r]
        M[0, 0] = half * Gr[r]
        for b in range(1, D):
            M[0, b] = half * Gr[q + b - 1]
        for a in range(1, D):
            Ga = G[q + a - 1]
            Ma = M[a]
            Ma[0] = half * Ga[r]
            for b in range(1, D):
                Ma[b] = half * Ga[q + b - 1]
        _column_draw(M, D, s, V, tau, alpha, e, diagL, offL, y, gbuf, wk, Lc, Qv, la, lb, env[r], stats,
                     D >= _LANCZOS_MIN_D, min(_LANCZOS_STEPS, D // 2 + 1), _FAST_MAX_PROPOSALS)
        # R = H F with H = I − v vᵀ/c1, v = y + sgn·e₁, c1 = 1 + |y₀|, F = diag(−sgn, 1, …, 1):
        # N ← N R puts N y in column r and an orthonormal basis of its complement in U⊥
        sgn = 1.0 if y[0] >= 0.0 else -1.0
        c1 = 1.0 + abs(y[0])
        for a in range(D):
            pv[a] = y[a]
        pv[0] += sgn
        p0 = pv[0]
        # Q update
        for i in range(d):
            Qi = Ql[i]
            Nv[i] = (Qi[r] * p0 + _dot(Qi, q, pv, 1, D - 1)) / c1
        for i in range(d):
            Qi = Ql[i]
            nv = Nv[i]
            Qi[r] -= nv * p0
            for a in range(1, D):
                Qi[q + a - 1] -= nv * pv[a]
            Qi[r] *= -sgn
        # G update: G_II ← F H G_II H F, G_JI ← G_JI H F (J: the other q − 1 columns)
        for a in range(D):
            Ga = G[r if a == 0 else q + a - 1]
            W[a] = (Ga[r] * p0 + _dot(Ga, q, pv, 1, D - 1)) / c1     # W = G_II v / c1
        gam = _dot(pv, 0, W, 0, D) / c1
        w0 = W[0]
        for a in range(D):
            Ga = G[r if a == 0 else q + a - 1]
            wa = W[a]
            pa = pv[a]
            gpa = gam * pa
            Ga[r] += -wa * p0 - pa * w0 + gpa * p0
            for b in range(1, D):
                Ga[q + b - 1] += -wa * pv[b] - pa * W[b] + gpa * pv[b]
        for a in range(1, D):
            Gr[q + a - 1] *= -sgn
            G[q + a - 1, r] *= -sgn
        for jj in range(q):
            if jj == r:
                continue
            Gj = G[jj]
            acc = (Gj[r] * p0 + _dot(Gj, q, pv, 1, D - 1)) / c1
            Gj[r] -= acc * p0
            for a in range(1, D):
                Gj[q + a - 1] -= acc * pv[a]
            Gj[r] *= -sgn
            Gr[jj] = Gj[r]
            for a in range(1, D):
                G[q + a - 1, jj] = Gj[q + a - 1]


@njit(cache=True)
def _packed_outer(X):
    """Upper triangles of xᵢxᵢᵀ, row by row: (n, d(d+1)/2)."""
    n, d = X.shape
    out = np.empty((n, d * (d + 1) // 2))
    for i in range(n):
        m = 0
        for a in range(d):
            xa = X[i, a]
            for b in range(a, d):
                out[i, m] = xa * X[i, b]
                m += 1
    return out


@njit(cache=True)
def _scatter_full_rows(X, z, A, idx, start):
    """A[ℓ] = Σ_{zᵢ=ℓ} xᵢxᵢᵀ from scratch for a large d (no packed products): the points sorted
    by cluster (idx (n,), start (k + 1,) int64 work), then each cluster's upper triangle from
    four points at a time in index order (loops over a row's entries, which vectorise), mirrored."""
    n, d = X.shape
    k = A.shape[0]
    for l in range(k + 1):
        start[l] = 0
    for i in range(n):
        start[z[i] + 1] += 1
    for l in range(k):
        start[l + 1] += start[l]
    for i in range(n):                                # start[ℓ] as the cursor of cluster ℓ ...
        idx[start[z[i]]] = i
        start[z[i]] += 1
    for l in range(k, 0, -1):                         # ... then back to the first index of cluster ℓ
        start[l] = start[l - 1]
    start[0] = 0
    for l in range(k):
        Al = A[l]
        for a in range(d):
            for b in range(d):
                Al[a, b] = 0.0
        t = start[l]
        end = start[l + 1]
        while t + 4 <= end:
            x0 = X[idx[t]]
            x1 = X[idx[t + 1]]
            x2 = X[idx[t + 2]]
            x3 = X[idx[t + 3]]
            for a in range(d):
                c0 = x0[a]
                c1 = x1[a]
                c2 = x2[a]
                c3 = x3[a]
                row = Al[a]
                for b in range(a, d):
                    row[b] += (c0 * x0[b] + c1 * x1[b]) + (c2 * x2[b] + c3 * x3[b])
            t += 4
        while t < end:
            x0 = X[idx[t]]
            for a in range(d):
                c0 = x0[a]
                row = Al[a]
                for b in range(a, d):
                    row[b] += c0 * x0[b]
            t += 1
        for a in range(d):
            for b in range(a + 1, d):
                Al[b, a] = Al[a, b]


@njit(cache=True)
def _scatter_full(XXp, z, A, Ap):
    """A[ℓ] = Σ_{zᵢ=ℓ} xᵢxᵢᵀ from scratch: sums of the packed outer products (contiguous
    vector additions), unpacked into the symmetric A. Ap (k, d(d+1)/2) is a work array."""
    n, m = XXp.shape
    k, d = A.shape[0], A.shape[1]
    Ap[:] = 0.0
    for i in range(n):
        row = Ap[z[i]]
        xr = XXp[i]
        for j in range(m):
            row[j] += xr[j]
    _unpack(Ap, A)


@njit(cache=True)
def _unpack(Ap, A):
    """A[ℓ] (symmetric) from its packed upper triangle Ap[ℓ]."""
    k, d = A.shape[0], A.shape[1]
    for l in range(k):
        j = 0
        for a in range(d):
            for b in range(a, d):
                A[l, a, b] = Ap[l, j]
                A[l, b, a] = Ap[l, j]
                j += 1


@njit(cache=True)
def _pack(A, Ap):
    """Ap[ℓ] = the upper triangle of A[ℓ], row by row (exact copies)."""
    k, d = A.shape[0], A.shape[1]
    for l in range(k):
        j = 0
        for a in range(d):
            for b in range(a, d):
                Ap[l, j] = A[l, a, b]
                j += 1


@njit(cache=True)
def _scatter_moves_packed(XXp, z, zp, A, Ap):
    """Points that changed cluster (z ≠ zp): Ap[from] −= packed xxᵀ, Ap[to] += packed xxᵀ (two
    contiguous vector operations per point), then A unpacked."""
    n, m = XXp.shape
    for i in range(n):
        if z[i] != zp[i]:
            xr = XXp[i]
            rf = Ap[zp[i]]
            rt = Ap[z[i]]
            for j in range(m):
                rf[j] -= xr[j]
                rt[j] += xr[j]
    _unpack(Ap, A)


@njit(cache=True)
def _scatter_move(X, i, A_from, A_to):
    """Point i moves from one cluster to another: A_from −= xxᵀ, A_to += xxᵀ."""
    d = X.shape[1]
    for a in range(d):
        xa = X[i, a]
        for b in range(d):
            v = xa * X[i, b]
            A_from[a, b] -= v
            A_to[a, b] += v


@njit(cache=True)
def _run_chain(X, XT, XXp, sqn_mean, Qc, Ac, zp, env, stats, t_start, half, zb, zM, zshift, q, n_sweeps, s, store_z, c,
               cost, Uh, zh, zlast, cancel):
    """:func:`run_block` for chain c (writes only chain c's slices of cost, Uh, zh, zlast), with
    its own work arrays (so chains can run in parallel threads). Stops at the start of a sweep
    once cancel[0] != 0 (the outputs are then incomplete: the caller raises)."""
    n, d = X.shape
    k = Qc.shape[0]
    D = d - q + 1
    packed = XXp.shape[0] > 0
    S3 = np.empty((3, n))
    pn = np.empty((k, n))
    z = np.empty(n, dtype=np.int64)
    idx = np.empty(n, dtype=np.int64)
    start = np.empty(k + 1, dtype=np.int64)
    Bw = np.empty(k)
    Nz = np.empty(k, dtype=np.int64)
    Ap = np.empty((k, d * (d + 1) // 2))
    mxb = np.empty(n)
    G = np.empty((d, d))
    T = np.empty((d, d))
    M = np.empty((D, D))
    V = np.zeros((D, D))
    tau = np.zeros(D)
    alpha = np.empty(D)
    e = np.zeros(D)
    diagL = np.empty(D)
    offL = np.empty(D)
    y = np.empty(D)
    gbuf = np.empty(D + 1)
    perm = np.empty(q, dtype=np.int64)
    Nv = np.empty(d)
    W = np.empty(D)
    pv = np.empty(D)
    wk = np.empty((6, D))
    Lc = np.zeros((D, D))
    Qv = np.empty((_LANCZOS_STEPS, D))
    la = np.empty(_LANCZOS_STEPS)
    lb = np.zeros(_LANCZOS_STEPS)
    if packed and zp[0] >= 0:
        _pack(Ac, Ap)                                # the state between calls is A: exact copies
    _projections(XT, Qc, k, q, pn, S3)
    for t in range(n_sweeps):
        if cancel[0] != 0:
            return
        _z_step(pn, zb, zM, zshift, z, s, Bw, Nz)
        moved = 0
        if zp[0] >= 0:
            for i in range(n):
                if z[i] != zp[i]:
                    moved += 1
        if zp[0] < 0 or (t_start + t) % 64 == 0 or (4 if packed else 8) * moved > n:
            if packed:
                _scatter_full(XXp, z, Ac, Ap)
            else:
                _scatter_full_rows(X, z, Ac, idx, start)
        elif packed:
            _scatter_moves_packed(XXp, z, zp, Ac, Ap)
        else:
            for i in range(n):
                if z[i] != zp[i]:
                    _scatter_move(X, i, Ac[zp[i]], Ac[z[i]])
        for i in range(n):
            zp[i] = z[i]
        for l in range(k):
            _u_step_cluster(Ac[l], Qc[l], half, q, s, G, T, M, V, tau, alpha, e, diagL, offL, y, gbuf, perm,
                            Nv, W, pv, wk, Lc, Qv, la, lb, env[l], stats)
        _projections(XT, Qc, k, q, pn, S3)
        # eq. (3) cost: max over clusters in passes over the points (branch-free, vectorised)
        for i in range(n):
            mxb[i] = pn[0, i]
        for l in range(1, k):
            pl = pn[l]
            for i in range(n):
                mxb[i] = max(mxb[i], pl[i])
        tot = 0.0
        for i in range(n):
            tot += mxb[i]
        cost[c, t] = sqn_mean - tot / n
        for l in range(k):
            for a in range(d):
                for r in range(q):
                    Uh[t, c, l, a, r] = Qc[l, a, r]
        if store_z:
            for i in range(n):
                zh[t, c, i] = z[i]
    for i in range(n):
        zlast[c, i] = z[i]


@njit(cache=True, nogil=True)
def _run_chains(X, XT, XXp, sqn_mean, Q, A, zprev, env, stats, t_start, half, zb, zM, zshift, q, n_sweeps, states,
                store_z, c0, c1, cost, Uh, zh, zlast, cancel):
    """:func:`_run_chain` for chains c0 … c1 − 1 (without the GIL: several Python threads run
    disjoint ranges of chains at once)."""
    for c in range(c0, c1):
        _run_chain(X, XT, XXp, sqn_mean, Q[c], A[c], zprev[c], env[c], stats[c], t_start, half, zb, zM, zshift, q,
                   n_sweeps, states[c], store_z, c, cost, Uh, zh, zlast, cancel)


_pool = {"executor": None}
_pool_lock = threading.Lock()


def _executor(workers):
    """A process-wide thread pool with at least ``workers`` threads (created on first use)."""
    from concurrent.futures import ThreadPoolExecutor
    with _pool_lock:
        ex = _pool["executor"]
        if ex is None or ex._max_workers < workers:
            ex = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gibbs-chains")
            _pool["executor"] = ex
        return ex


def prepare(X):
    """What :func:`run_block` derives from the points alone, (Xᵀ contiguous, packed outer
    products or an empty array for d > 16): computed once per fit, passed as ``prep``."""
    d = X.shape[1]
    return np.ascontiguousarray(X.T), (_packed_outer(X) if d <= 16 else np.empty((0, 0)))


def run_block(X, sqn_mean, Q, A, zprev, env, stats, t_start, half, q, n_sweeps, states, store_z, n_threads=1,
              prep=None, cancel=None):
    """``n_sweeps`` Gibbs sweeps (z-step, then the U-step of every cluster) of every chain,
    chains in parallel on ``n_threads`` threads (see :func:`n_threads`).

    Parameters: X (n, d) C-contiguous clipped points; sqn_mean = mean ‖xᵢ‖²; Q (C, k, d, d)
    orthogonal [U, U⊥] per chain and cluster (updated in place); A (C, k, d, d) the scatter
    matrices Σ_{zᵢ=ℓ} xᵢxᵢᵀ of the assignment zprev (C, n) (both updated in place; zprev[c, 0]
    < 0 means "none yet"); env (C, k, q, 1) each column's b of its last tridiagonal draw (0:
    none yet) and stats (C, 5) int64 counters, both updated in place (see
    :func:`_column_draw`); t_start the index of the first sweep (A is recomputed from scratch
    at every sweep index divisible by 64, otherwise updated for the points that moved, so the
    result does not depend on how the sweeps are split into calls); half = ε/2 (the chain runs at η̃ = half
    rounded down to 20 significant bits, with the z-step's grid of
    :func:`dpcore.privacy.exact_choice.unit_range_plan`); q; states
    (C, 4) the xoshiro256** state of every chain (updated in place: chain c draws only from
    states[c], so the result does not depend on the number of threads either); store_z
    whether to return every sweep's z; prep = :func:`prepare` (X), if already computed; cancel
    a uint8 array of one element (dpcore.runtime.CancelToken.flag) read at every sweep: once it
    is non-zero the chains stop and the outputs are incomplete (the caller must raise).

    Threads: the chains are split into ``n_threads`` contiguous ranges, each run by
    :func:`_run_chains` (compiled with ``nogil=True``) in a thread of a process-wide pool.
    Decision: Python threads around a serial kernel rather than numba's ``parallel=True``,
    which made the first-use compile and the cache load much slower for the same speed-up
    (docs/benchmarks.md).

    Returns (z (C, n) of the last sweep, cost (C, n_sweeps) of eq. (3) after each sweep,
    U (n_sweeps, C, k, d, q) after each sweep, z history (n_sweeps, C, n) or (0, C, n)).
    """
    n, d = X.shape
    C, k = Q.shape[0], Q.shape[1]
    n_sweeps = int(n_sweeps)
    cost = np.empty((C, n_sweeps))
    Uh = np.empty((n_sweeps, C, k, d, q))
    zh = np.empty((n_sweeps if store_z else 0, C, n), dtype=np.int64)
    zlast = np.empty((C, n), dtype=np.int64)
    XT, XXp = prepare(X) if prep is None else prep    # small d: packed outer products; large d: none
    plan = unit_range_plan(float(half))            # the z-step's grid and the chain's scale η̃ ≤ half
    args = (X, XT, XXp, float(sqn_mean), Q, A, zprev, env, stats, int(t_start), float(plan.scale), int(plan.grid_bits),
            int(plan.scale_num), int(plan.scale_shift), int(q), n_sweeps, states, bool(store_z))
    cancel = np.zeros(1, dtype=np.uint8) if cancel is None else cancel
    T = max(1, min(int(n_threads), C))
    if T == 1:
        _run_chains(*args, 0, C, cost, Uh, zh, zlast, cancel)
    else:
        bounds = [C * j // T for j in range(T + 1)]
        futures = [_executor(T).submit(_run_chains, *args, bounds[j], bounds[j + 1], cost, Uh, zh, zlast, cancel)
                   for j in range(T)]
        for f in futures:
            f.result()
    return zlast, cost, Uh, zh


@njit(cache=True)
def _contingency(z, y, k, n_classes):
    C, n = z.shape
    out = np.zeros((C, k, n_classes), dtype=np.int64)
    for c in range(C):
        for i in range(n):
            out[c, z[c, i], y[i]] += 1
    return out


def contingency(z, y, k, n_classes):
    """Contingency tables (C, k, n_classes) of z (C, n) against labels y (n,) (the compiled twin of
    dpcore.subspace.gibbs._accuracy_counts: the same integers)."""
    return _contingency(np.ascontiguousarray(z, dtype=np.int64), np.ascontiguousarray(y, dtype=np.int64), int(k),
                        int(n_classes))


def new_state(Q, n, q):
    """Scatter matrices, "no assignment yet", "no envelope yet" and zero counters for
    :func:`run_block`: (A, zprev, env, stats)."""
    C, k, d, _ = Q.shape
    return (np.zeros((C, k, d, d)), np.full((C, n), -1, dtype=np.int64), np.zeros((C, k, q, 1)),
            np.zeros((C, 5), dtype=np.int64))


def n_threads(n_chains, outer_contexts=0):
    """Threads for :func:`run_block`: 1 inside a :func:`dpcore.subspace.common.single_threaded`
    context entered by a caller (the reproduction's workers, experiments.run_task: one
    thread per process, so that parallel worker processes do not oversubscribe the cores),
    else min(n_chains, the number of CPUs this process may use). ``outer_contexts`` is how
    many such contexts the calling code itself entered (the estimator's fit enters one, for
    BLAS)."""
    from .common import single_threaded_depth
    if not AVAILABLE or single_threaded_depth() > outer_contexts:
        return 1
    return max(1, min(int(n_chains), _cpu_count()))


def _cpu_count():
    import os
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run(X, Q, half, q, n_sweeps, states, sqn_mean=0.0, store_z=False, stats=None):
    """:func:`run_block` from a fresh state (tests, gibbs_sweep), on :func:`n_threads` threads;
    ``stats`` ((C, 5) int64), if given, receives the column-draw counters."""
    A, zprev, env, st = new_state(Q, X.shape[0], q)
    out = run_block(X, float(sqn_mean), Q, A, zprev, env, st, 0, float(half), int(q), int(n_sweeps), states, store_z,
                    n_threads(Q.shape[0]))
    if stats is not None:
        stats += st
    return out


@njit(cache=True)
def _householder_bases(U, Q, keep):
    """For every m: Q[m] (d, d) orthogonal, its last d − q columns an orthonormal basis of
    range(U[m])^⊥, its first q columns U[m] itself if ``keep``, else the Q factor of U[m]'s QR
    with R's diagonal ≥ 0 (Householder reflections H = I − τvvᵀ in plain arithmetic, so the
    same on every CPU, unlike LAPACK's, which calls BLAS kernels chosen by CPU)."""
    m_all, d, q = U.shape
    A = np.empty((d, q))
    V = np.zeros((q, d))
    tau = np.zeros(q)
    sgn = np.ones(q)
    for m in range(m_all):
        for a in range(d):
            for c in range(q):
                A[a, c] = U[m, a, c]
        for j in range(q):
            nrm2 = 0.0
            for a in range(j, d):
                nrm2 += A[a, j] * A[a, j]
            nrm = math.sqrt(nrm2)
            for a in range(d):
                V[j, a] = 0.0
            if nrm == 0.0:                             # a zero column (not a frame): H = I
                tau[j] = 0.0
                sgn[j] = 1.0
                continue
            al = A[j, j]
            beta = -nrm if al >= 0.0 else nrm          # R[j, j] (LAPACK's sign choice)
            V[j, j] = al - beta
            for a in range(j + 1, d):
                V[j, a] = A[a, j]
            vv = 0.0
            for a in range(j, d):
                vv += V[j, a] * V[j, a]
            t = 2.0 / vv
            tau[j] = t
            sgn[j] = 1.0 if beta >= 0.0 else -1.0
            for c in range(j + 1, q):                  # the remaining columns: A ← H A
                acc = 0.0
                for a in range(j, d):
                    acc += V[j, a] * A[a, c]
                acc *= t
                for a in range(j, d):
                    A[a, c] -= acc * V[j, a]
        Qm = Q[m]
        for a in range(d):                             # Q = H₀ H₁ ⋯ H_{q−1} (the identity's columns)
            for c in range(d):
                Qm[a, c] = 1.0 if a == c else 0.0
        for j in range(q - 1, -1, -1):
            t = tau[j]
            if t == 0.0:
                continue
            for c in range(j, d):
                acc = 0.0
                for a in range(j, d):
                    acc += V[j, a] * Qm[a, c]
                acc *= t
                for a in range(j, d):
                    Qm[a, c] -= acc * V[j, a]
        for c in range(q):
            if keep:
                for a in range(d):
                    Qm[a, c] = U[m, a, c]
            elif sgn[c] < 0.0:
                for a in range(d):
                    Qm[a, c] = -Qm[a, c]


def full_basis(U, Ucomp=None):
    """Q = [U, U⊥] as a C-contiguous (..., d, d) array: U exactly as given and U⊥ given or, if
    not, computed by Householder reflections in plain arithmetic (the same bits on every CPU:
    :func:`_householder_bases`)."""
    U = np.asarray(U, dtype=np.float64)
    d, q = U.shape[-2:]
    if Ucomp is not None:
        return np.ascontiguousarray(np.concatenate([U, Ucomp], axis=-1))
    Q = np.empty(U.shape[:-1] + (d,))
    _householder_bases(np.ascontiguousarray(U.reshape(-1, d, q)), Q.reshape(-1, d, d), True)
    return Q


def reorthonormalize(Q, q):
    """[U, U⊥] from the first q columns of Q (..., d, d): U = the Q factor of their QR with R's
    diagonal ≥ 0 and U⊥ its complement, by :func:`_householder_bases` (the same on every CPU).
    The numba engine's clean-up of rounding drift every few hundred sweeps."""
    d = Q.shape[-1]
    out = np.empty(Q.shape)
    _householder_bases(np.ascontiguousarray(Q[..., :q].reshape(-1, d, q)), out.reshape(-1, d, d), False)
    return out


@njit(cache=True)
def _normal_array(s, m):
    out = np.empty(m)
    _normals(s, out, m)
    return out


def random_stiefel(shape, d, q, rng):
    """Uniform random d×q orthonormal matrices (Haar), shape (*shape, d, q): the Q factor (R's
    diagonal > 0) of a Gaussian matrix, as :func:`dpcore.subspace.bingham.random_stiefel`, but
    with the normals drawn by this module's generator (one xoshiro256** stream seeded from the
    Generator ``rng``: :func:`seed_state`) and the QR by :func:`_householder_bases`, so that
    the same seed gives the same bits on every CPU (numpy's normals call libm's log1p in their
    tail, and its QR calls BLAS). The numba engine's random start."""
    shape = tuple(np.atleast_1d(shape)) if shape != () else ()
    m = int(np.prod(shape, dtype=np.int64))
    G = _normal_array(seed_state(rng), m * d * q).reshape(m, d, q)
    Q = np.empty((m, d, d))
    _householder_bases(G, Q, False)
    return np.ascontiguousarray(Q[:, :, :q]).reshape(shape + (d, q))


@njit(cache=True)
def _mean_sq_norm(X):
    n, d = X.shape
    tot = 0.0
    for i in range(n):
        acc = 0.0
        for a in range(d):
            acc += X[i, a] * X[i, a]
        tot += acc
    return tot / n


def mean_sq_norm(X):
    """mean ‖xᵢ‖² over the rows of X, summed in a fixed order (the same on every CPU)."""
    return float(_mean_sq_norm(np.ascontiguousarray(X, dtype=np.float64)))


# ============================================================================ warm-up
_status = {"ready": False, "compiling": False}
_status_lock = threading.Lock()


def ready():
    """Whether :func:`warmup` has finished in this process (kernels compiled or loaded)."""
    return _status["ready"]


def compiling():
    """Whether :func:`warmup` is running in another thread right now (the app's warm-up thread)."""
    return _status["compiling"]


def warmup(compile_in_child=False):
    """Compile (first use after an install: tens of seconds) or load from numba's cache (about
    a second) every kernel, on a tiny problem; returns the seconds it took (0.0 without numba or when
    already done).

    With ``compile_in_child`` a child Python process runs this first, so that a first compile
    (which holds the GIL while it runs) fills numba's cache without slowing this process's other
    threads - the app's pages; this process then only loads the cache. ``compiling()`` is True
    meanwhile (``engine="auto"`` runs numpy). A child that fails changes nothing: the
    in-process step compiles then."""
    if not AVAILABLE:
        return 0.0
    with _status_lock:
        if _status["ready"]:
            return 0.0
        _status["compiling"] = True
    try:
        t0 = time.perf_counter()
        if compile_in_child:
            import subprocess
            import sys
            try:
                subprocess.run([sys.executable, "-c", "from dpcore.subspace import gibbs_kernels as k; k.warmup()"],
                               capture_output=True, timeout=600, check=False)
            except (OSError, subprocess.SubprocessError):
                pass
        rng = np.random.default_rng(0)
        X = np.ascontiguousarray(rng.standard_normal((12, 3)) * 0.4)
        U = random_stiefel((1, 2), 3, 1, rng)
        Q = full_basis(U)
        states = seed_state(rng, 1)
        run(X, Q, 1.0, 1, 2, states, mean_sq_norm(X), True)
        run(X, reorthonormalize(Q, 1), 1.0, 1, 2, states, 0.1, False)
        contingency(np.zeros((1, 12), dtype=np.int64), np.zeros(12, dtype=np.int64), 2, 2)
        _sample_vector_bingham(np.eye(3), 2, seed_state(rng))
        _status["ready"] = True
        return time.perf_counter() - t0
    finally:
        _status["compiling"] = False
