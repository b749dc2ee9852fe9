"""Exact reachability audit of one released count (Mironov 2012's attack, decided exactly).

A mechanism adds noise to a count whose true value is v on D and v + 1 on a neighbour D′.
If a released value y *cannot* be produced from v + 1 at all, seeing y proves that the data
are D: no ε bounds the privacy loss of such a release. For an ε-DP mechanism over the reals
every y has positive density from both sides, but a floating-point implementation produces
only finitely many floats from each input, and the two sets differ.

:func:`reachable` decides exactly, for each release, whether it can come from a given value:

- ``"float_laplace"`` - numpy's ``Generator.laplace(0.0, scale)`` added in float64 to the
  value, as :func:`dpcore.privacy.laplace_mechanism` did before releases were made exact
  (``value + rng.laplace(0.0, sensitivity / epsilon, size)``; now it releases on a grid,
  :mod:`dpcore.privacy.exact`). numpy's C sampler (``random_laplace`` in
  numpy/random/src/distributions/distributions.c) draws U = next_double() = k·2⁻⁵³ for a
  uniform integer k in [0, 2⁵³) and returns, with loc = 0,

      U ≥ 0.5:      0.0 − scale·log((2.0 − U) − U)     (noise ≥ 0)
      0 < U < 0.5:  0.0 + scale·log(U + U)             (noise < 0)
      U = 0:        draw again,

  every operation in float64 and ``log`` from the C library. The release is
  y = fl(v + noise). So y is reachable from v iff some k in [1, 2⁵³) gives F(k) = y, where F
  is that chain of float operations. This module evaluates F with exactly the same float
  operations (Python floats are IEEE binary64 with round-to-nearest-even, and ``math.log`` is
  the same C-library ``log`` numpy's C code calls; numpy's own vectorised ``np.log`` is NOT
  bit-identical to it and is not used). tests/test_reachability.py checks the model against
  ``Generator.laplace`` bit for bit on millions of draws from known generator states.
- ``"discrete_laplace"`` - :func:`dpcore.privacy.discrete_laplace_mechanism`: the noise takes
  every integer value with positive probability, so every integer is reachable from every
  integer and the test never fires (a non-integer release is invalid input).

Why the search is exact (float Laplace)
---------------------------------------
On each branch F is non-decreasing in k: k ↦ U = k·2⁻⁵³ and U ↦ U + U are exact; U ↦
(2.0 − U) − U is non-increasing (each IEEE subtraction with round-to-nearest is monotone in
each argument); ``log`` is increasing; multiplying by scale > 0 and adding v are monotone.
So a binary search over k finds k₀ = the smallest k of the branch with F(k) ≥ y (53 steps;
the invariant F(lo) < y ≤ F(hi) holds with virtual ends F(first − 1) = −∞, F(last + 1) = +∞
whether or not F is monotone), and if F is monotone, y is reachable on that branch iff
F(k₀) = y. The one operation whose monotonicity is not guaranteed by IEEE 754 is the C
library's ``log``, which is not correctly rounded, only faithfully rounded (glibc ≥ 2.28:
< 0.52 ulp). A faithfully rounded log can only invert the order of two arguments whose exact
logarithms lie between the same two adjacent doubles; on the grid of arguments used here
(x = 2U a multiple of 2⁻⁵², or (2 − U) − U a multiple of 2⁻⁵³ hit by at most two k) at most
a couple of consecutive k share such an interval (|ln x| ∈ [2ʲ, 2ʲ⁺¹) has ulp 2ʲ⁻⁵², which
holds x·2ʲ < 1 grid points of spacing 2⁻⁵²). So beyond D = 4 steps F is monotone, and any
k with F(k) = y lies within D of k₀ (if k < k₀ − D then F(k) ≤ F(k₀ − 1) < y; if k > k₀ + D
then F(k₀) ≤ F(k) = y ≤ F(k₀), so k₀ itself hits). The search checks every k in
[k₀ − 16, k₀ + 16] on both branches: a margin of four times D.

An audit's lower bound ε̂ is valid for any fixed test, so even a wrong reachability decision
could not make ε̂ overstate the privacy loss; exactness is what makes the test "the release
is unreachable from the other side's value" fire *never* on the other side (checked in the
tests) and so gives it its power.
"""
from __future__ import annotations

import math

import numpy as np

from ..validation import check_real

__all__ = ["MECHANISMS", "check_mechanism", "float_laplace_release", "reachable"]

#: Mechanisms whose reachability is decided here.
MECHANISMS = ("float_laplace", "discrete_laplace")

_TWO53 = 1 << 53
_TWO52 = 1 << 52
_INV53 = 1.0 / 9007199254740992.0          # 2⁻⁵³, as numpy's next_double
_WINDOW = 16                              # k checked each side of the binary-search boundary


def _log(x):
    """The C library's log, elementwise (``math.log``), on a float64 array (x > 0)."""
    return np.fromiter(map(math.log, x.tolist()), dtype=np.float64, count=x.size)


def float_laplace_release(value, k, scale):
    """The float a release ``value + Generator.laplace(0.0, scale)`` takes when numpy's
    next_double() returned U = k·2⁻⁵³ (k an integer in [1, 2⁵³)), with numpy's exact float
    operations (see the module docstring). ``value``, ``k``, ``scale`` broadcast.

    Parameters
    ----------
    value : float or array_like of float
        The true value.
    k : int or array_like of int in [1, 2⁵³)
        The uniform draw, as an integer multiple of 2⁻⁵³ (not checked).
    scale : float or array_like of float
        Laplace scale.

    Returns
    -------
    ndarray of float64
        The broadcast shape of the three inputs.
    """
    value, k, scale = np.broadcast_arrays(np.asarray(value, dtype=np.float64), np.asarray(k, dtype=np.int64),
                                          np.asarray(scale, dtype=np.float64))
    shape = value.shape
    value, k, scale = value.ravel(), k.ravel(), scale.ravel()
    u = k.astype(np.float64) * _INV53                          # exact: k < 2⁵³, times a power of 2
    upper = k >= _TWO52                                        # U ≥ 0.5
    x = np.where(upper, (2.0 - u) - u, u + u)
    lg = _log(x)
    noise = np.where(upper, 0.0 - scale * lg, 0.0 + scale * lg)
    return (value + noise).reshape(shape)


def _reachable_float_laplace(y, v, scale):
    """Exact decision for 1-D float64 arrays y, v, scale (same length)."""
    n = y.size
    found = np.zeros(n, dtype=bool)
    for first, last in ((1, _TWO52 - 1), (_TWO52, _TWO53 - 1)):   # U < 0.5, then U ≥ 0.5
        lo = np.full(n, first - 1, dtype=np.int64)               # F(lo) < y (virtual −∞)
        hi = np.full(n, last + 1, dtype=np.int64)                # F(hi) ≥ y (virtual +∞)
        active = np.flatnonzero(hi - lo > 1)
        while active.size:
            mid = lo[active] + (hi[active] - lo[active]) // 2
            ge = float_laplace_release(v[active], mid, scale[active]) >= y[active]
            hi[active[ge]] = mid[ge]
            lo[active[~ge]] = mid[~ge]
            active = active[hi[active] - lo[active] > 1]
        offsets = np.arange(-_WINDOW, _WINDOW + 1, dtype=np.int64)
        ks = hi[:, None] + offsets[None, :]
        inside = (ks >= first) & (ks <= last)
        rows, cols = np.nonzero(inside)
        hit = float_laplace_release(v[rows], ks[rows, cols], scale[rows]) == y[rows]
        found |= np.bincount(rows[hit], minlength=n) > 0
    return found


def check_mechanism(mechanism):
    """The mechanism name, if it is one of :data:`MECHANISMS`.

    Parameters
    ----------
    mechanism : str
        "float_laplace" or "discrete_laplace".

    Returns
    -------
    str
        ``mechanism`` unchanged.

    Raises
    ------
    ValueError
        If ``mechanism`` is not one of :data:`MECHANISMS`.
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {', '.join(repr(m) for m in MECHANISMS)}; got {mechanism!r}")
    return mechanism


def reachable(releases, value, mechanism, scale=None, clip_low=None):
    """For each release y, can the mechanism output exactly y when the true value is ``value``?

    Parameters
    ----------
    releases : array of float
        Released values (as released: float64 for ``"float_laplace"``, integers for
        ``"discrete_laplace"``).
    value : float or array broadcastable to ``releases``
        The true value tested (an integer count).
    mechanism : ``"float_laplace"`` or ``"discrete_laplace"``
        ``"float_laplace"``: ``value + Generator.laplace(0.0, scale)`` in float64, i.e.
        :func:`dpcore.privacy.laplace_mechanism` with ``scale = float(sensitivity) /
        float(epsilon)`` (pass that float exactly). ``"discrete_laplace"``:
        :func:`dpcore.privacy.discrete_laplace_mechanism` (``scale`` is ignored).
    scale : float > 0 or array, for ``"float_laplace"``
    clip_low : float or None
        If the release was ``max(y, clip_low)`` (DP-τCC clips tables at 0), a release equal to
        ``clip_low`` is reachable from every value (the float noise reaches below −37·scale
        and the discrete noise is unbounded) and is reported reachable.

    Returns
    -------
    ndarray of bool, the broadcast shape.
    """
    check_mechanism(mechanism)
    y = np.asarray(releases, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("releases must be finite numbers")
    v = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        raise ValueError("value must be finite numbers")
    if mechanism == "discrete_laplace":
        if not (np.all(y == np.round(y)) and np.all(v == np.round(v))):
            raise ValueError("releases and value must be integers for mechanism 'discrete_laplace' "
                             "(its outputs are integer counts)")
        out = np.ones(np.broadcast_shapes(y.shape, v.shape), dtype=bool)
        return out
    if scale is None:
        raise ValueError("scale must be given (a float > 0) for mechanism 'float_laplace'")
    sc = np.asarray(scale, dtype=np.float64)
    if not np.all(np.isfinite(sc) & (sc > 0)):
        raise ValueError("scale must be finite and > 0")
    y, v, sc = np.broadcast_arrays(y, v, sc)
    shape = y.shape
    y, v, sc = y.ravel(), v.ravel(), sc.ravel()
    out = np.ones(y.size, dtype=bool)
    todo = np.ones(y.size, dtype=bool)
    if clip_low is not None:
        todo &= y != float(clip_low)
    idx = np.flatnonzero(todo)
    if idx.size:
        out[idx] = _reachable_float_laplace(y[idx].copy(), v[idx].copy(), sc[idx].copy())
    return out.reshape(shape)
