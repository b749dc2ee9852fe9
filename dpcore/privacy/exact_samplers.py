"""Exact integer noise samplers: discrete Laplace, geometric and discrete Gaussian.

Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy",
Alg. 1 (Bernoulli(exp(-γ))), Alg. 2 (discrete Laplace), Alg. 3 (discrete Gaussian),
with integer arithmetic only: no floating-point number enters any sampling decision.

- :func:`discrete_laplace_int_noise` - P(x) ∝ exp(-|x|/t) on Z, integer t;
- :func:`geometric_noise` - P(g) ∝ exp(-g/t) on {0, 1, ...};
- :func:`discrete_gaussian_noise` - P(x) ∝ exp(-x²/(2σ²)) on Z, σ² = 2^m·w exactly;
- :func:`discrete_laplace_reference`, :func:`geometric_reference`,
  :func:`discrete_gaussian_reference` - straightforward CKS Alg. 1-3 with Python ints and
  :class:`fractions.Fraction` for any rational scale / σ² (slow; used by the tests);
- :func:`warm_up` compiles the numba kernels; :data:`VALID_RANGES` lists the argument ranges.

Same Generator state -> same draws, with or without numba, and ``f(..., size=n,
random_state=g)`` equals n calls ``f(..., random_state=g)``. Why every draw is exact (the
random words, the law each algorithm draws, overflow handed to a Python-int twin) is proved in
``docs/privacy_as_executed.md``, section "Why the samplers' draws are exact".
"""
from __future__ import annotations

import collections
import math
import numbers
import operator
import threading
import time
from fractions import Fraction

import numpy as np

from ..validation import check_int, check_random_state

__all__ = [
    "VALID_RANGES", "discrete_gaussian_noise", "discrete_gaussian_reference", "discrete_laplace_int_noise",
    "discrete_laplace_reference", "geometric_noise", "geometric_reference", "warm_up",
]

#: Inclusive ranges of the integer arguments (t: discrete Laplace / geometric scale;
#: m, w: discrete Gaussian variance σ² = 2^m·w).
VALID_RANGES = {"t": (1, 2 ** 56), "m": (0, 52), "w": (1, 2 ** 55)}

_WORD_BITS = 62
_WORD = 1 << _WORD_BITS            # randomness comes in uniform words on [0, 2^62)
_M31 = (1 << 31) - 1
_M62 = _WORD - 1
_BUF_WORDS = 256                    # words fetched from the Generator at a time
_INT64_MAX = 2 ** 63 - 1
_OVERFLOW_LIMIT = _WORD             # kernels keep every integer <= this; tests lower it
_FALLBACKS = collections.Counter()  # Python continuations by stage: 1 U-test, 2 U + tV, 3 acceptance
                                    # (at its start), 4 acceptance (mid-run)


# ============================================================================ Python twin
class _Words:
    """Uniform integers from 62-bit words of ``rng`` (same buffer and position as the kernels)."""

    __slots__ = ("rng", "buf", "ctl")

    def __init__(self, rng, buf, ctl):
        self.rng, self.buf, self.ctl = rng, buf, ctl

    def word(self):
        p = int(self.ctl[0])
        if p == self.buf.size:
            self.buf[:] = self.rng.integers(0, _WORD, size=self.buf.size)
            self.ctl[6] += 1
            p = 0
        self.ctl[0] = p + 1
        return int(self.buf[p])

    def below(self, n):
        """Uniform on [0, n), n >= 1: Lemire's method on one (n <= 2^62) or several words."""
        nw = 1 if n <= _WORD else -(-n.bit_length() // _WORD_BITS)
        bits = _WORD_BITS * nw
        m = self._bits(nw) * n
        lo = m & ((1 << bits) - 1)
        if lo < n:
            thr = ((1 << bits) - n) % n
            while lo < thr:
                m = self._bits(nw) * n
                lo = m & ((1 << bits) - 1)
        return m >> bits

    def _bits(self, nw):
        x = 0
        for _ in range(nw):
            x = (x << _WORD_BITS) | self.word()
        return x


def _py_laplace(W, t, signed, resume=None):
    """CKS Alg. 2 (signed) or its geometric part; resume = (stage, u, sign, K or V)."""
    while True:
        if resume is None:
            if signed:
                r = W.below(2 * t)
                b, u = r & 1, r >> 1
            else:
                b, u = 0, W.below(t)
            stage, x = 0, 1
        else:
            stage, u, b, x = resume
            resume = None
        if stage == 2:
            v = x
        else:
            if u != 0:                      # Alg. 1 with γ = u/t, from K = x
                k = x
                while W.below(t * k) < u:
                    k += 1
                if k % 2 == 0:
                    continue
            v = 0
            while True:                     # Alg. 1 with γ = 1 (the coin at K = 1 is always 1)
                k = 2
                while W.below(k) == 0:
                    k += 1
                if k % 2 == 0:
                    break
                v += 1
        X = u + t * v
        if b:
            if X == 0:
                continue
            return -X
        return X


def _py_accept(W, y, p, i1=0, i2=0, k0=1):
    """Bernoulli(exp(-B'²/(d1 d2))) as n1·n2 runs of Alg. 1, from trial (i1, i2) at K = k0."""
    _, s, c, e1, d2 = p
    d1 = 1 << e1
    bp = abs((abs(y) << s) - c)
    if bp == 0:
        return True
    n1, n2 = -(-bp // d1), -(-bp // d2)
    D1, D2 = d1 * n1, d2 * n2
    k = k0
    for _ in range(n1 * n2 - i1 * n2 - i2):
        while W.below(D2 * k) < bp and W.below(D1) < bp:
            k += 1
        if k % 2 == 0:
            return False
        k = 1
    return True


def _py_gauss(W, p, resume=None):
    """CKS Alg. 3 with the parameters of :func:`_gauss_params`; resume = kernel state."""
    while True:
        if resume is not None and resume[0] == 3:
            y, pos = resume[1], resume[2:5]
        else:
            y, pos = _py_laplace(W, p[0], True, resume and resume[:4]), (0, 0, 1)
        resume = None
        if _py_accept(W, y, p, *pos):
            return y


def _gauss_params(m, w):
    """(t, s, c, e1, d2): proposal t = 2^k with σ/t in [2^-1/2, 2^1/2); d1 = 2^e1 ≈ d2 = w·2^e2."""
    L = m + w.bit_length() - 1              # 2^L <= σ² < 2^(L+1)
    k = (L + 1) // 2
    s = max(k - m, 0)
    c = w << (m - k) if k <= m else w      # σ²·2^s/t
    E = m + 1 + 2 * s                       # 2σ²·2^(2s) = 2^E·w = d1·d2
    e2 = max((E - w.bit_length() + 1) // 2, 0)
    return 1 << k, s, c, E - e2, w << e2


# ============================================================================ numba kernel
# One state machine with a single draw site: a numba function that uses the Generator costs
# ~35 ns per call, so no helper receives it. Plain functions here; _kernels() replaces each
# module global named in _KERNEL_NAMES by numba.njit(cache=True)(f), callees first.
_S_U, _S_UK, _S_VK, _S_X, _S_ACC, _S_C2, _S_C1 = range(7)
_KIND = {"geometric": 0, "laplace": 1, "gauss": 2, "accept": 3}


def _k_mul62(a, b):
    """(a·b) // 2^62 and (a·b) % 2^62 for 0 <= a < 2^62, 1 <= b <= 2^62, in int64."""
    a1 = a >> 31
    a0 = a & _M31
    b1 = b >> 31
    b0 = b & _M31
    mid = a0 * b1 + a1 * b0                 # < 2^63
    lo = a0 * b0 + ((mid & _M31) << 31)     # < 2^63
    return a1 * b1 + (mid >> 31) + (lo >> 62), lo & _M62


def _k_fill(rng, buf, ctl, P, out, start):
    """Fill out[start:] (mirrors _py_laplace / _py_gauss / _py_accept draw for draw).

    Returns out.size, or the index of the entry stopped before a possible overflow, its
    state in ctl[1:6] (stage, then u, sign, K | u, sign, V | y, i1, i2, K). ctl[0] is the
    position in buf, ctl[6] the number of refills. P: see _kernel_params.
    """
    kind = P[0]
    t = P[1]
    kt = P[2]
    s = P[3]
    c = P[4]
    e1 = P[5]
    d2 = P[6]
    lim_a = P[7]
    lim_n1 = P[8]
    lim_n2 = P[9]
    limit = P[10]
    yfix = P[11]
    tu = t if kind == 0 else 2 * t
    nbuf = buf.size
    p = ctl[0]
    nout = out.size
    i = start
    st = _S_ACC if kind == 3 else _S_U
    u = 0
    b = 0
    k = 0
    v = 0
    y = 0
    bp = 0
    n1 = 0
    n2 = 0
    D1 = 0
    D2 = 0
    kmax = 0
    i1 = 0
    i2 = 0
    while i < nout:
        # ---- steps without a draw
        if st == _S_X:
            if v >= kt:                     # u + t·v might pass the limit
                ctl[0] = p
                ctl[1] = 2
                ctl[2] = u
                ctl[3] = b
                ctl[4] = v
                return i
            y = u + t * v
            if b == 1:
                if y == 0:
                    st = _S_U
                    continue
                y = -y
            if kind != 2:
                out[i] = y
                i += 1
                st = _S_U
                continue
            st = _S_ACC
        if st == _S_ACC:
            if kind == 3:
                y = yfix
            a = abs(y)
            if a > lim_a:
                bp = -1
            else:
                bp = abs((a << s) - c)
                if bp == 0:
                    out[i] = 1 if kind == 3 else y
                    i += 1
                    st = _S_ACC if kind == 3 else _S_U
                    continue
                n1 = ((bp - 1) >> e1) + 1
                n2 = (bp - 1) // d2 + 1
            if bp < 0 or n1 > lim_n1 or n2 > lim_n2:
                ctl[0] = p
                ctl[1] = 3
                ctl[2] = y
                ctl[3] = 0
                ctl[4] = 0
                ctl[5] = 1
                return i
            D1 = n1 << e1
            D2 = d2 * n2
            kmax = 64 if D2 <= (limit >> 6) else limit // D2
            i1 = 0
            i2 = 0
            k = 1
            st = _S_C2
        # ---- the bound of the next draw
        if st == _S_U:
            nb = tu
        elif st == _S_UK:
            if k > kt:                      # t·k might pass the limit
                ctl[0] = p
                ctl[1] = 1
                ctl[2] = u
                ctl[3] = b
                ctl[4] = k
                return i
            nb = t * k
        elif st == _S_VK:
            nb = k
        elif st == _S_C2:
            if k > kmax:                    # D2·k might pass the limit
                ctl[0] = p
                ctl[1] = 3
                ctl[2] = y
                ctl[3] = i1
                ctl[4] = i2
                ctl[5] = k
                return i
            nb = D2 * k
        else:
            nb = D1
        # ---- r uniform on [0, nb): Lemire's multiply-and-reject on 62-bit words
        while True:
            if p == nbuf:
                buf[:] = rng.integers(0, 1 << 62, size=nbuf)
                ctl[6] += 1
                p = 0
            r, lo = _k_mul62(buf[p], nb)
            p += 1
            if lo >= nb or lo >= (_WORD - nb) % nb:
                break
        # ---- use it
        if st == _S_U:
            if kind == 0:
                u = r
            else:
                b = r & 1
                u = r >> 1
            if u == 0:                      # exp(-0/t) = 1: accept U at once
                v = 0
                k = 2
                st = _S_VK
            else:
                k = 1
                st = _S_UK
        elif st == _S_UK:                   # Alg. 1, γ = u/t: coin [r < u] ~ Bernoulli(u/(t k))
            if r < u:
                k += 1
            elif k % 2 == 0:
                st = _S_U
            else:
                v = 0
                k = 2
                st = _S_VK
        elif st == _S_VK:                   # Alg. 1, γ = 1: coin [r == 0] ~ Bernoulli(1/k)
            if r == 0:
                k += 1
            elif k % 2 == 0:
                st = _S_X
            else:
                v += 1
                k = 2
        else:                               # acceptance coins [r < bp]: C2 then C1
            if r < bp:
                if st == _S_C2:
                    st = _S_C1
                    continue
                k += 1
                st = _S_C2
                continue
            if k % 2 == 0:                  # this Bernoulli(exp(-xy)) is 0: reject
                if kind == 3:
                    out[i] = 0
                    i += 1
                    st = _S_ACC
                else:
                    st = _S_U
                continue
            i2 += 1
            if i2 == n2:
                i2 = 0
                i1 += 1
                if i1 == n1:                # all n1·n2 trials were 1: accept
                    out[i] = 1 if kind == 3 else y
                    i += 1
                    st = _S_ACC if kind == 3 else _S_U
                    continue
            k = 1
            st = _S_C2
    ctl[0] = p
    return nout


def _kernel_params(kind, params, limit, y=0):
    """int64 vector P of _k_fill: kind, t, limit // t, s, c, e1, d2, their bounds, limit, y."""
    if kind in (0, 1):
        t, s, c, e1, d2 = params, 0, 0, 0, 1
    else:
        t, s, c, e1, d2 = params
    return np.array([kind, t, limit // t, s, c, e1, d2, limit >> s, limit >> e1, limit // d2, limit, y],
                    dtype=np.int64)


_KERNEL_NAMES = ("_k_mul62", "_k_fill")
_KERNELS = None                 # None: not tried yet; False: numba not importable; True: compiled
_KERNELS_LOCK = threading.Lock()


def _kernels():
    """True when the numba kernels are in use (numba imported on first call)."""
    global _KERNELS
    if _KERNELS is None:
        with _KERNELS_LOCK:
            if _KERNELS is None:
                try:
                    import numba
                except ImportError:
                    _KERNELS = False
                else:
                    g = globals()
                    for name in _KERNEL_NAMES:
                        g[name] = numba.njit(cache=True)(g[name])
                    _KERNELS = True
    return _KERNELS


# ============================================================================ drivers
def _check_size(size):
    if size is None:
        return None
    try:
        shape = (operator.index(size),) if not isinstance(size, (tuple, list)) else tuple(operator.index(s) for s in size)
    except TypeError:
        shape = None
    if shape is None or isinstance(size, bool) or any(s < 0 for s in shape):
        raise ValueError(f"size must be None, a non-negative integer or a tuple of them; got {size!r}")
    return shape


def _store(v):
    if not -_INT64_MAX <= v <= _INT64_MAX:
        raise OverflowError("an exact sample does not fit in int64 (an event of probability < 2^-180)")
    return v


def _draw(kind, params, size, random_state, y=0):
    shape = _check_size(size)
    rng = check_random_state(random_state)
    n = 1 if shape is None else math.prod(shape)
    out = np.empty(n, dtype=np.int64)
    state0 = rng.bit_generator.state if isinstance(random_state, np.random.Generator) else None
    buf = np.empty(_BUF_WORDS, dtype=np.int64)
    ctl = np.zeros(7, dtype=np.int64)
    ctl[0] = _BUF_WORDS                 # empty buffer
    W = _Words(rng, buf, ctl)
    code = _KIND[kind]

    def py_one(resume):
        if code <= 1:
            return _py_laplace(W, params, code == 1, resume and resume[:4])
        if code == 2:
            return _py_gauss(W, params, resume)
        return int(_py_accept(W, y, params, *(resume[2:5] if resume else ())))

    if n and _kernels():
        limit = int(_OVERFLOW_LIMIT)
        if not 1 <= limit <= _WORD:
            raise ValueError("_OVERFLOW_LIMIT must be in [1, 2^62]")
        P = _kernel_params(code, params, limit, y)
        i = 0
        while i < n:
            i = _k_fill(rng, buf, ctl, P, out, i)
            if i < n:
                resume = tuple(int(v) for v in ctl[1:6])
                _FALLBACKS[4 if resume[0] == 3 and resume[2:5] != (0, 0, 1) else resume[0]] += 1
                out[i] = _store(py_one(resume))
                i += 1
    else:
        for i in range(n):
            out[i] = _store(py_one(None))
    if state0 is not None and ctl[6]:
        _settle(rng, state0, int(ctl[6] - 1) * _BUF_WORDS + int(ctl[0]))
    return out[0] if shape is None else out.reshape(shape)


def _settle(rng, state0, used):
    """Leave ``rng`` as if exactly ``used`` words had been drawn since ``state0``.

    The words are ``rng.integers(0, 2**62)`` draws (one ``next_uint64`` each); the buffer's
    unused tail is given back, so a call of size n consumes what n calls of size 1 consume.
    """
    bg = rng.bit_generator
    bg.state = state0
    if type(bg) in (np.random.PCG64, np.random.PCG64DXSM):
        bg.advance(used)                    # ... which also clears the buffered 32-bit half word:
        state = bg.state
        state["has_uint32"], state["uinteger"] = state0["has_uint32"], state0["uinteger"]
        bg.state = state
    else:
        for start in range(0, used, 1 << 16):
            rng.integers(0, _WORD, size=min(1 << 16, used - start))


def discrete_laplace_int_noise(t, size=None, random_state=None):
    """Exact discrete Laplace noise, P(x) ∝ exp(-|x|/t) on the integers.

    Parameters
    ----------
    t : int
        Scale, an integer in [1, 2^56].
    size : int or tuple of ints, optional
        Output shape; ``None`` returns one ``numpy.int64``.
    random_state : None, int or numpy.random.Generator
        Source of all randomness (a Generator's state is advanced).

    Returns
    -------
    numpy.ndarray of int64 (or numpy.int64 when ``size`` is None)

    Raises
    ------
    ValueError
        If ``t``, ``size`` or ``random_state`` is invalid.
    """
    t = check_int(t, "t", *VALID_RANGES["t"])
    return _draw("laplace", t, size, random_state)


def geometric_noise(t, size=None, random_state=None):
    """Exact geometric noise, P(g) ∝ exp(-g/t) on {0, 1, 2, ...}.

    The magnitude step of :func:`discrete_laplace_int_noise` (CKS Alg. 2 before the sign).

    Parameters
    ----------
    t : int
        Scale, an integer in [1, 2^56].
    size : int or tuple of ints, optional
        Output shape; ``None`` returns one ``numpy.int64``.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray of int64 (or numpy.int64 when ``size`` is None)

    Raises
    ------
    ValueError
        If ``t``, ``size`` or ``random_state`` is invalid.
    """
    t = check_int(t, "t", *VALID_RANGES["t"])
    return _draw("geometric", t, size, random_state)


def discrete_gaussian_noise(m, w, size=None, random_state=None):
    """Exact discrete Gaussian noise, P(x) ∝ exp(-x²/(2σ²)) on the integers, σ² = 2^m·w.

    CKS Alg. 3 with a discrete Laplace proposal of scale t = 2^k, k = ⌈⌊log2 σ²⌋/2⌉ (so
    σ/t ∈ [0.71, 1.42) and at least 65 % of the proposals are accepted); k = m whenever
    2^m <= w < 2^(m+1).

    Parameters
    ----------
    m : int
        Exponent, in [0, 52].
    w : int
        Multiplier, in [1, 2^55].
    size : int or tuple of ints, optional
        Output shape; ``None`` returns one ``numpy.int64``.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray of int64 (or numpy.int64 when ``size`` is None)

    Raises
    ------
    ValueError
        If ``m``, ``w``, ``size`` or ``random_state`` is invalid.
    """
    m = check_int(m, "m", *VALID_RANGES["m"])
    w = check_int(w, "w", *VALID_RANGES["w"])
    return _draw("gauss", _gauss_params(m, w), size, random_state)


def _acceptance_draws(m, w, y, size, random_state=None):
    """Outcomes (0/1) of the Alg. 3 acceptance step for a fixed proposal y (tests)."""
    return _draw("accept", _gauss_params(m, w), size, random_state, y=y)


def warm_up():
    """Compile the numba kernels (tiny calls; the on-disk cache makes later processes fast).

    Returns
    -------
    float
        Seconds spent; 0.0 when numba is not importable (the pure-Python path is used).
    """
    t0 = time.perf_counter()
    if not _kernels():
        return 0.0
    discrete_laplace_int_noise(3, size=2, random_state=0)
    discrete_gaussian_noise(3, 9, size=2, random_state=0)
    return time.perf_counter() - t0


# ============================================================================ references
def _ref_below(rng, n):
    """Uniform on [0, n): numpy's exact bounded integers, bitmask rejection beyond int64."""
    if n <= _INT64_MAX:
        return int(rng.integers(0, n))
    k = (n - 1).bit_length()
    while True:
        x = 0
        for _ in range(-(-k // _WORD_BITS)):
            x = (x << _WORD_BITS) | int(rng.integers(0, _WORD))
        x >>= _WORD_BITS * (-(-k // _WORD_BITS)) - k
        if x < n:
            return x


def _ref_bern_exp(rng, gamma):
    """CKS Alg. 1 (and its γ > 1 extension): Bernoulli(exp(-γ)) for a Fraction γ >= 0."""
    if gamma > 1:
        for _ in range(math.floor(gamma)):
            if not _ref_bern_exp(rng, Fraction(1)):
                return False
        gamma -= math.floor(gamma)
    k = 1
    while _ref_below(rng, gamma.denominator * k) < gamma.numerator:
        k += 1
    return k % 2 == 1


def _ref_dlap(rng, scale, signed):
    """CKS Alg. 2 for the rational scale t/s (signed) or the geometric floor(X/s)."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = _ref_below(rng, t)
        if not _ref_bern_exp(rng, Fraction(u, t)):
            continue
        v = 0
        while _ref_bern_exp(rng, Fraction(1)):
            v += 1
        y = (u + t * v) // s
        if not signed:
            return y
        b = _ref_below(rng, 2)
        if b == 1 and y == 0:
            continue
        return -y if b else y


def _check_rational(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Rational) or value <= 0:
        raise ValueError(f"{name} must be a positive rational (int or fractions.Fraction); got {value!r}")
    return Fraction(value)


def _ref_many(one, size, random_state):
    shape = _check_size(size)
    rng = check_random_state(random_state)
    n = 1 if shape is None else math.prod(shape)
    out = np.array([_store(one(rng)) for _ in range(n)], dtype=np.int64)
    return out[0] if shape is None else out.reshape(shape)


def discrete_laplace_reference(scale, size=None, random_state=None):
    """Pure-Python CKS Alg. 2: P(x) ∝ exp(-|x|/scale) on Z, any positive rational scale.

    Parameters
    ----------
    scale : int or fractions.Fraction
    size : int or tuple of ints, optional
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray of int64 (or numpy.int64 when ``size`` is None)
    """
    scale = _check_rational(scale, "scale")
    return _ref_many(lambda rng: _ref_dlap(rng, scale, True), size, random_state)


def geometric_reference(scale, size=None, random_state=None):
    """Pure-Python geometric law P(g) ∝ exp(-g/scale), g >= 0, any positive rational scale.

    Parameters
    ----------
    scale : int or fractions.Fraction
    size : int or tuple of ints, optional
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray of int64 (or numpy.int64 when ``size`` is None)
    """
    scale = _check_rational(scale, "scale")
    return _ref_many(lambda rng: _ref_dlap(rng, scale, False), size, random_state)


def discrete_gaussian_reference(sigma2, size=None, random_state=None, t=None):
    """Pure-Python CKS Alg. 3: P(x) ∝ exp(-x²/(2 sigma2)) on Z, any positive rational sigma2.

    Parameters
    ----------
    sigma2 : int or fractions.Fraction
        The variance parameter σ².
    size : int or tuple of ints, optional
    random_state : None, int or numpy.random.Generator
    t : int or fractions.Fraction, optional
        Scale of the discrete Laplace proposal; default ⌊σ⌋ + 1 (as in CKS).

    Returns
    -------
    numpy.ndarray of int64 (or numpy.int64 when ``size`` is None)
    """
    sigma2 = _check_rational(sigma2, "sigma2")
    if t is None:
        t = Fraction(math.isqrt(sigma2.numerator * sigma2.denominator) // sigma2.denominator + 1)
    t = _check_rational(t, "t")
    center, two_s2 = sigma2 / t, 2 * sigma2

    def one(rng):
        while True:
            y = _ref_dlap(rng, t, True)
            if _ref_bern_exp(rng, (abs(y) - center) ** 2 / two_s2):
                return y
    return _ref_many(one, size, random_state)
