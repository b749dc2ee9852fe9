"""Exact reachability of one released count (Mironov 2012's attack, decided exactly).

A mechanism adds noise to a count whose true value is v on D and v + 1 on a neighbour D′. A
floating-point implementation produces only finitely many floats from each input; a release
that cannot come from v + 1 at all proves that the data are D. :func:`reachable` decides,
for each release, whether it can come from a given value:

- ``"float_laplace"``: ``value + Generator.laplace(0.0, scale)`` in float64 (what
  :func:`dpcore.privacy.laplace_mechanism` did before releases were made exact), modelled
  with numpy's own float operations (:func:`float_laplace_release`) and searched exactly;
- ``"discrete_laplace"``: :func:`dpcore.privacy.discrete_laplace_mechanism`, for which every
  integer is reachable from every integer.

The model of numpy's sampler and the proof that the search is exact are in ``docs/audit.md``
("Exact reachability"); :func:`dpcore.lab.audit.reachability_audit` turns the test into a bound.
"""
from __future__ import annotations

import math

import numpy as np


__all__ = ["MECHANISMS", "check_mechanism", "float_laplace_release", "reachable"]

#: Mechanisms whose reachability is decided here.
MECHANISMS = ("float_laplace", "discrete_laplace")

_TWO53 = 1 << 53
_TWO52 = 1 << 52
_INV53 = 1.0 / 9007199254740992.0          # 2⁻⁵³, as numpy's next_double
_WINDOW = 16                              # k checked each side of the binary-search boundary


def _log(x):
    """The C library's log, elementwise (``math.log``), on a float64 array (x > 0): the ``log``
    numpy's C sampler calls (numpy's vectorised ``np.log`` is not bit-identical to it)."""
    return np.fromiter(map(math.log, x.tolist()), dtype=np.float64, count=x.size)


def float_laplace_release(value, k, scale):
    """The float a release ``value + Generator.laplace(0.0, scale)`` takes when numpy's
    next_double() returned U = k·2⁻⁵³ (k an integer in [1, 2⁵³)), with numpy's exact float
    operations (see docs/audit.md, "The float Laplace model"). ``value``, ``k``, ``scale`` broadcast.

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
